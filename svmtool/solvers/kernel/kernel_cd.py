"""Kernel SVM without an equality constraint: greedy dual coordinate descent (``-s kernel``).

The maths
---------
The dual of the kernel SVM without a bias term (problem (1) of Hsieh, Si, Dhillon, "A
divide-and-conquer solver for kernel support vector machines", ICML 2014)::

    min_alpha  f(alpha) = 1/2 alpha'Q alpha - e'alpha,   0 <= alpha_i <= C_i,
    Q_ij = y_i y_j K(x_i, x_j),

with ``C_i`` LIBSVM's C (times the class weight).  The model is
``f(x) = sum_i alpha_i y_i K(x_i, x)``; written as a LIBSVM model it has ``rho 0``.
With the kernel bias ``-B b`` the kernel is ``K + b^2`` (a regularised bias, no equality
constraint) and the LIBSVM model gets ``rho = -b^2 sum_i alpha_i y_i``.

Without the equality constraint a single variable can move alone; a step moves one or two:

    i     = argmax over active rows of PG_i^2 / Q_ii   (greedy, second-order: the exact decrease
                                                        of an unclipped single step)
    j     = argmax of the decrease of the joint unclipped Newton step on (alpha_i, alpha_j),
            computed for every active j from the row Q[:, i] (LIBSVM's second-order working-set
            choice, without its equality constraint)
    (alpha_i, alpha_j) <- exact minimiser of f over the pair's box    (alpha_i alone when no
                                                                       partner beats that)
    G     += d_i Q[:, i] + d_j Q[:, j]              (gradient maintenance, one or two kernel rows)

where ``G = Q alpha - e`` and ``PG`` is the projected gradient (``G_i`` for a free variable,
``min(G_i, 0)`` at 0, ``max(G_i, 0)`` at ``C_i``).  The pair matters when rows are strongly
correlated (narrow rbf, large C): single steps then zigzag between near-duplicate rows, and on
ijcnn1 (rbf, C 32, gamma 2) pairs take an order of magnitude fewer steps and less time.  The
update and the search for the next i share one pass over the active rows.

Stopping (``-e``, default 1e-3 as LIBSVM): ``max_i |PG_i| <= eps`` over all rows.  (LIBSVM's
measure is the maximal violating *pair* of its equality-constrained problem, about twice a single
variable's violation; with no pair to form, the single-variable violation is the natural
counterpart.)

Shrinking (LIBLINEAR's rule for its bias-free dual, every ``SHRINK_PERIOD`` = 50 steps, and at
once after a rebuild or a compaction): a variable at 0 whose gradient exceeds the largest
projected gradient, or at ``C_i`` whose gradient is below the smallest one, leaves the active
set.  When the active rows meet the stopping rule, the gradient of the shrunk rows is rebuilt
from the support vectors (BLAS / threads) and the iterations go on over all rows until the rule
holds everywhere (shrinking stays on for ``MAX_UNSHRINKS`` rebuilds).  When at most half the
rows are active, they are copied into a smaller problem (compaction) whose cache rows are
shorter, so that many more of them fit in ``-m``.

Kernel rows are kept in an LRU cache bounded by ``-m`` MB (default 100; dense rows of at most
``CHEAP_ROW_FEATURES`` features, cheap to compute again, in at most ``CHEAP_CACHE_MB``): each slot
holds the row of one variable (``y_i y_j K_ij`` for every j).  With dense rows and at least half
the rows active a row is computed whole (feature by feature over a feature-major copy); otherwise
only over the active rows, and such a row holds valid values only for the rows active then, which
stays true until the next unshrink.  Memory: the
cache plus O(n) vectors; no n x n matrix.  With ``single`` (the subproblems of DC-SVM's early
level) rbf rows of dense data are computed and kept in float32, as LIBSVM keeps its kernel values: twice the
rows in the same MB, whole rows quicker (:func:`svmtool.ops.kernels32.rbf_row32`), a relative
error below 6e-7 x max(1, gamma |x_i - x_j|^2) a value; the gradient they update stays double.

Warm start: ``init_alpha`` (clipped to the box), the gradient then computed from its nonzeros.
The step cap is LIBSVM's ``max(10^7, 100 n)``.

Returned: :class:`svmtool.solvers.common.result.SolverResult` with ``alpha``, ``dual`` (=
``f(alpha)``, the value LIBSVM prints as ``obj``), ``primal``
(``1/2 alpha'Q alpha + sum C_i max(0, 1 - y_i f(x_i))``),
``gap = primal + dual``, ``gap_kind`` "max PG violation" with ``extra["pg_violation"]``.
"""

import time

import numpy as np

from svmtool.ops.kernels import RBF, Kernel, Rows, kernel_expansion
from svmtool.ops.rows import take_rows
from svmtool.params import option
from svmtool.solvers.common.result import STOPPED_TIME, SolverResult, time_limit_warning, time_up
from svmtool.solvers.kernel.bsmo import CHEAP_ROW_FEATURES
from svmtool.solvers.kernel._kernel_cd_jit import (_COUNTER, _FRESH, _MISSES, _N_ACT, _STEPS,
                                                   _cd_run, _diag)

DEFAULT_CACHE_MB = option("kernel.cache_mb").default    # -m's

def gradient(X: Rows, y, alpha, kernel: Kernel, targets=None, threads=None, mem_mb=64.0):
    """G_j = (Q alpha)_j - 1 for the target rows (all by default), from alpha's nonzeros."""
    n = X.n_rows
    targets = np.arange(n) if targets is None else np.asarray(targets, dtype=np.int64)
    sv = np.flatnonzero(alpha > 0)
    g = -np.ones(len(targets))
    if len(sv):
        g += y[targets] * kernel_expansion(X, targets, X, sv, alpha[sv] * y[sv], kernel,
                                           threads, mem_mb)
    return g


def objectives(alpha, G, C):
    """(dual f(alpha), primal) from an exact gradient G = Q alpha - e."""
    qa = G + 1.0                               # (Q alpha)_i = y_i f(x_i)
    dual = 0.5 * float(alpha @ qa) - float(alpha.sum())
    primal = 0.5 * float(alpha @ qa) + float(C @ np.maximum(0.0, 1.0 - qa))
    return dual, primal


def solve(X: Rows, y, C, kernel: Kernel, *, eps, init_alpha=None, shrinking=True,
          cache_mb=DEFAULT_CACHE_MB, max_steps=None, threads=None, callback=None,
          chunk_steps=1000, deadline=None, arena=None, single=False, init_gradient=None):
    """Solve the bias-free kernel SVM dual on the rows of X; returns a SolverResult.

    ``y`` in {-1, +1}; ``C`` a scalar or per-row array of upper bounds; ``arena``: a
    :class:`CacheArena` to take the kernel row cache from (one per thread); ``single``: rbf
    rows of dense data computed and cached in single precision, as LIBSVM keeps its kernel
    values (the gradient stays double; the subproblems of DC-SVM's early level, whose solution
    is the early model); ``init_gradient``: Q init_alpha - e on these rows, exact, when the
    caller has it (DC-SVM's conquer rounds; None: computed from init_alpha).
    """
    t0 = time.perf_counter()
    t_grad = 0.0
    t_rebuild = 0.0
    n = X.n_rows
    y = np.ascontiguousarray(y, dtype=np.float64)
    # a writable copy: a read-only C (a broadcast view) would be another type for the jitted
    # loop, compiled and loaded apart from the writable one of compaction
    C = np.array(np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)))
    args = kernel.args()
    qd = _diag(X.indptr, X.indices, X.data, X.sq, *args)
    qd = np.where(qd > 0, qd, 1e-12)
    iqd = 1.0 / qd
    alpha, G = _start(X, y, C, kernel, init_alpha, init_gradient, threads, cache_mb)
    t_grad = time.perf_counter() - t0
    if arena is None:
        arena = CacheArena()        # (for the caches of this solve's passes)
    # the last point where G was exact for every row: a rebuild adds the change since then
    ref = (alpha.copy(), G.copy())
    max_steps = max(10_000_000, 100 * n) if max_steps is None else int(max_steps)
    stats = {"steps": 0, "misses": 0}
    converged = False
    stopped = None
    unshrinks = 0
    maxviol = 0.0
    # a warm start's gradient is already informative: shrink at the first step
    counter = 1 if np.any(alpha > 0) else min(n, SHRINK_PERIOD)
    while n > 0:
        # after MAX_UNSHRINKS rebuilds the remaining steps are few: no more shrinking
        status, active, maxviol = _iterate(
            X, y, C, qd, iqd, alpha, G, kernel, eps, bool(shrinking) and unshrinks < MAX_UNSHRINKS,
            cache_mb, max_steps, stats, callback, counter, chunk_steps, deadline, arena, single)
        if status == 1 and len(active) == n:
            converged = True
            break
        t1 = time.perf_counter()
        _rebuild(X, y, alpha, G, kernel, active, threads, cache_mb, ref)
        t_rebuild += time.perf_counter() - t1
        ref = (alpha.copy(), G.copy())
        if status != 1:
            stopped = STOPPED_TIME if status == 2 else None
            break
        unshrinks += 1
        counter = UNSHRINK_COUNTER
    if not converged and n > 0:
        maxviol = float(np.abs(_pg_numpy(G, alpha, C)).max())
    dual, primal = objectives(alpha, G, C)
    n_sv = int(np.count_nonzero(alpha > 0))
    res = SolverResult(
        w=np.zeros(0), iterations=int(stats["steps"]), primal=primal, gap=primal + dual,
        # SolverResult.dual is the dual objective -f(alpha) (<= primal), as the linear solvers
        gap_kind="max PG violation", converged=converged, dual=-dual, n_sv=n_sv, alpha=alpha,
        extra={"pg_violation": float(maxviol), "objective": dual,
               "n_bounded_sv": int(np.count_nonzero(alpha >= C)) if n else 0,
               "cache_misses": int(stats["misses"]), "unshrinks": unshrinks,
               "compactions": int(stats.get("compactions", 0)),
               "solve_time": time.perf_counter() - t0,
               "phases": {"gradient": t_grad, "rebuild": t_rebuild},
               "warning": None if converged else
               time_limit_warning("the kernel solver", int(stats["steps"])) if stopped else
               f"reaching the maximal number of steps ({max_steps}) before |PG| <= {eps:g}"})
    if stopped:
        res.extra["stopped"] = stopped
    res.extra["gradient"] = G
    return res


def _start(X, y, C, kernel, init_alpha, init_gradient, threads, cache_mb):
    """The starting (alpha, G): zero and -e, or init_alpha clipped to [0, C] and its gradient
    (``init_gradient`` if given and the clipping left init_alpha as it was, else computed)."""
    n = X.n_rows
    if init_alpha is None:
        return np.zeros(n), -np.ones(n)
    given = np.asarray(init_alpha, dtype=np.float64)
    alpha = np.clip(given, 0.0, C).copy()
    if init_gradient is not None and np.array_equal(alpha, given):
        return alpha, np.array(init_gradient, dtype=np.float64)
    return alpha, gradient(X, y, alpha, kernel, threads=threads, mem_mb=min(64.0, cache_mb))


def _pg_numpy(G, alpha, C):
    return np.where(alpha <= 0, np.minimum(G, 0), np.where(alpha >= C, np.maximum(G, 0), G))


# shrinking stays on until the gradient has been rebuilt this many times (then the remaining
# steps, few, run over all rows; with the old limit of 2 the last thousand or so steps of DC-SVM's
# conquer step on ijcnn1 ran unshrunk over all 50k rows, a visible share of the fit)
MAX_UNSHRINKS = 10
# steps between shrinking checks (a check costs one pass, as a step does); the first check after
# a rebuild comes at once (the rebuilt gradient is exact, the thresholds already informative)
SHRINK_PERIOD = 50
UNSHRINK_COUNTER = 1

# Dense rows of at most CHEAP_ROW_FEATURES features (bsmo's bound) cost about as much to compute
# again as the first touch of their cache memory: their cache holds at most this many MB, whatever
# -m allows: the same iterates, and on ijcnn1 at -m 1000 a whole command on all 49,990 rows took
# about two thirds of the time, with no loss on its first 10,000 rows or in DC-SVM's solves
CHEAP_CACHE_MB = 100.0

# When shrinking leaves at most this fraction of the rows active, the active rows are copied into
# a smaller problem (their gradient, which holds the fixed rows' contribution, carried over) with
# its own, shorter, cache rows: many more rows then fit in the same cache.
COMPACT_RATIO = 0.5
COMPACT_MIN_ROWS = 2000


def _iterate(X, y, C, qd, iqd, alpha, G, kernel, eps, shrinking, cache_mb, max_steps, stats,
             callback, counter, chunk_steps, deadline=None, arena=None, single=False):
    """CD steps on these rows (G exact for all of them) until the active rows meet eps (status
    1), the step budget is spent (0) or the deadline has passed (2, checked between chunks).
    Returns (status, rows whose G is exact, max violation).
    """
    n = len(y)
    args = kernel.args()
    n_buf = max(X.n_features, 1)
    use_dense = X.prefers_dense()
    dense = X.dense(n_buf) if use_dense else np.zeros((1, 1))
    denseT = np.ascontiguousarray(dense.T) if use_dense else dense
    single = bool(single) and use_dense and kernel.ktype == RBF
    dtype = np.float32 if single else np.float64
    mb = min(cache_mb, CHEAP_CACHE_MB) if use_dense and n_buf <= CHEAP_ROW_FEATURES else cache_mb
    slots = int(max(2, min(n, mb * (1 << 20) // (np.dtype(dtype).itemsize * max(n, 1)))))
    cache = arena.take(slots, n, dtype)
    denseT32 = denseT.astype(np.float32) if single else np.empty((0, 0), dtype=np.float32)
    slot_of = -np.ones(n, dtype=np.int64)
    slot_row = -np.ones(slots, dtype=np.int64)
    slot_stamp = np.zeros(slots, dtype=np.int64)
    slot_epoch = np.zeros(slots, dtype=np.int64)
    act = np.arange(n, dtype=np.int64)
    istate = np.zeros(8, dtype=np.int64)
    istate[_N_ACT] = n
    istate[_COUNTER] = counter
    istate[_FRESH] = 1
    fstate = np.zeros(3)
    while True:
        budget = min(chunk_steps, max_steps - stats["steps"])
        if budget <= 0:
            return 0, act[:istate[_N_ACT]].copy(), float(fstate[0])
        if istate[_STEPS] > 0 and time_up(deadline):
            return 2, act[:istate[_N_ACT]].copy(), float(fstate[0])
        before, miss_before = int(istate[_STEPS]), int(istate[_MISSES])
        # the active rows as unsigned indices: no negative-index wrap-around code in the passes
        status = _cd_run(X.indptr, X.indices, X.data, X.sq, dense, denseT, use_dense, y, C, qd,
                         iqd, *args, n_buf, alpha, G, act.view(np.uint64), istate, fstate, cache,
                         slot_of, slot_row, slot_stamp, slot_epoch, float(eps), budget, shrinking,
                         SHRINK_PERIOD, denseT32)
        stats["steps"] += int(istate[_STEPS]) - before
        stats["misses"] += int(istate[_MISSES]) - miss_before
        n_act = int(istate[_N_ACT])
        if callback is not None:
            callback(stats["steps"], {"pg_violation": float(fstate[0]), "active": n_act})
        if status == 1:
            return 1, act[:n_act].copy(), float(fstate[0])
        if shrinking and n >= COMPACT_MIN_ROWS and n_act <= COMPACT_RATIO * n:
            A = np.sort(act[:n_act])
            del cache
            stats["compactions"] = stats.get("compactions", 0) + 1
            a_sub, g_sub = alpha[A].copy(), G[A].copy()
            status, act_sub, mv = _iterate(
                take_rows(X, A), y[A], C[A], qd[A], iqd[A], a_sub, g_sub, kernel, eps, True,
                cache_mb, max_steps, stats, callback, 1, chunk_steps, deadline, arena, single)
            alpha[A] = a_sub
            G[A[act_sub]] = g_sub[act_sub]
            return status, A[act_sub], mv


class CacheArena:
    """Memory for the kernel row caches of one thread's consecutive solves (DC-SVM's cluster
    subproblems), and of one solve's passes (each unshrink and compaction starts a cache
    afresh, the first one the largest): one buffer, grown when a cache needs more, so that its
    pages are faulted in (zeroed by the kernel) once rather than once a subproblem or a pass.
    A fresh cache array of several MB is a fresh mapping each time (above glibc's 32 MB limit
    for reusing freed memory); on DC-SVM's early level of 120,000 ijcnn1 rows (64 subproblems)
    the page faults were a noticeable share of the level's solves, in system time.  The rows of
    an earlier solve left in it are never read: a slot is valid only once this solve has
    written it."""

    def __init__(self):
        self.buf = np.empty(0, dtype=np.uint8)

    def take(self, slots, n, dtype=np.float64):
        need = slots * n * np.dtype(dtype).itemsize
        if self.buf.size < need:
            self.buf = None                 # (the old buffer goes before the new one comes)
            self.buf = np.empty(need, dtype=np.uint8)
        return self.buf[:need].view(dtype).reshape(slots, n)


def _rebuild(X, y, alpha, G, kernel, exact_rows, threads, cache_mb, ref=None):
    """Recompute G for every row outside ``exact_rows``.

    With ``ref = (alpha_ref, G_ref)``, a point where G was exact for every row, only the
    variables that moved since then are summed: ``G = G_ref + y * K (y * (alpha - alpha_ref))``.
    A warm-started solve (DC-SVM's levels and conquer step) moves a fraction of its support
    vectors, so this costs a fraction of the full sum over them (used when cheaper).
    """
    n = len(y)
    mask = np.ones(n, dtype=bool)
    mask[exact_rows] = False
    others = np.flatnonzero(mask)
    if not len(others):
        return
    mem = min(64.0, cache_mb)
    if ref is not None:
        alpha_ref, g_ref = ref
        delta = alpha - alpha_ref
        moved = np.flatnonzero(delta != 0.0)
        if len(moved) < np.count_nonzero(alpha > 0):
            g = g_ref[others].copy()
            if len(moved):
                g += y[others] * kernel_expansion(X, others, X, moved, delta[moved] * y[moved],
                                                  kernel, threads, mem)
            G[others] = g
            return
    G[others] = gradient(X, y, alpha, kernel, targets=others, threads=threads, mem_mb=mem)


def fit(X: Rows, y, C, kernel: Kernel, params, init_alpha=None, callback=None, context=None):
    """Binary fit used by the one-vs-one driver: the plain exact solver."""
    return solve(X, y, C, kernel, eps=params.eps, init_alpha=init_alpha,
                 shrinking=params.shrinking, cache_mb=float(params.kernel.cache_mb),
                 max_steps=params.max_iter, threads=params.threads, callback=callback,
                 deadline=params.deadline)

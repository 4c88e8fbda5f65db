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
ijcnn1 (rbf, C 32, gamma 2) pairs take 10x fewer steps and half the time.  The update and the
search for the next i share one pass over the active rows.

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

Kernel rows are kept in an LRU cache bounded by ``-m`` MB (default 100): each slot holds the row
of one variable (``y_i y_j K_ij`` for every j).  With dense rows and at least half the rows
active a row is computed whole (feature by feature over a feature-major copy); otherwise only
over the active rows, and such a row holds valid values only for the rows active then, which
stays true until the next unshrink.  Memory: the
cache plus O(n) vectors; no n x n matrix.

Warm start: ``init_alpha`` (clipped to the box), the gradient then computed from its nonzeros.
The step cap is LIBSVM's ``max(10^7, 100 n)``.

Returned: :class:`svmtool.solvers.SolverResult` with ``alpha``, ``dual`` (= ``f(alpha)``, the
value LIBSVM prints as ``obj``), ``primal``
(``1/2 alpha'Q alpha + sum C_i max(0, 1 - y_i f(x_i))``),
``gap = primal + dual``, ``gap_kind`` "max PG violation" with ``extra["pg_violation"]``.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from svmtool._jit import njit
from svmtool.ops.kernels import (Kernel, Rows, dense_dist2, dense_kernel, exp_nonpositive,
                                 gather_dot, kernel_expansion, kernel_from_dot, n_threads,
                                 scatter, unscatter)
from svmtool.solvers import SolverResult

DEFAULT_EPS = 1e-3
DEFAULT_CACHE_MB = 100.0

# istate fields
_N_ACT, _EPOCH, _CLOCK, _STEPS, _COUNTER, _MISSES, _BEST, _FRESH = range(8)


@njit
def _get_row(i, indptr, indices, data, sq, dense, denseT, use_dense, y, ktype, gamma, coef0,
             degree, kbias, n_buf, buf, act, n_act, n, epoch, cache, slot_of, slot_row,
             slot_stamp, slot_epoch, istate, tmp, bits):
    """Slot of the cache holding the row of variable i (computed on a miss)."""
    istate[_CLOCK] += 1
    s = slot_of[i]
    if s >= 0:
        if slot_epoch[s] == epoch or slot_epoch[s] < 0:
            slot_stamp[s] = istate[_CLOCK]
            return s
    else:
        # least recently used slot
        s = 0
        best = slot_stamp[0]
        for t in range(1, slot_stamp.shape[0]):
            if slot_stamp[t] < best:
                best = slot_stamp[t]
                s = t
        old = slot_row[s]
        if old >= 0:
            slot_of[old] = -1
        slot_row[s] = i
        slot_of[i] = s
    istate[_MISSES] += 1
    yi = y[i]
    if use_dense and 2 * n_act >= n:
        # most rows active: the whole row, feature by feature over the feature-major copy
        # (contiguous loops that vectorise, about twice as fast a value as gathering the active
        # rows one by one), and the row stays valid whatever is shrunk or unshrunk later
        d = denseT.shape[0]
        for t in range(n):
            tmp[t] = 0.0
        if ktype == 2:
            for f in range(d):
                x = denseT[f, i]
                col = denseT[f]
                for t in range(n):
                    v = x - col[t]
                    tmp[t] += v * v
            for t in range(n):
                tmp[t] = -gamma * tmp[t]
            exp_nonpositive(tmp, n, bits)
            for t in range(n):
                cache[s, t] = yi * y[t] * (tmp[t] + kbias)
        else:
            for f in range(d):
                x = denseT[f, i]
                col = denseT[f]
                for t in range(n):
                    tmp[t] += x * col[t]
            for t in range(n):
                cache[s, t] = yi * y[t] * kernel_from_dot(tmp[t], 0.0, 0.0, ktype, gamma, coef0,
                                                          degree, kbias)
        slot_epoch[s] = -1
        slot_stamp[s] = istate[_CLOCK]
        return s
    if ktype == 2:
        # rbf: the exponents first, then exp over all of them in one vectorised loop
        if use_dense:
            d = dense.shape[1]
            for t in range(n_act):
                tmp[t] = -gamma * dense_dist2(dense, i, dense, act[t], d)
        else:
            scatter(indptr, indices, data, i, buf)
            sqi = sq[i]
            for t in range(n_act):
                j = act[t]
                dot = gather_dot(indptr, indices, data, j, buf, n_buf)
                tmp[t] = -gamma * (sqi + sq[j] - 2.0 * dot)
            unscatter(indptr, indices, i, buf)
        exp_nonpositive(tmp, n_act, bits)
        for t in range(n_act):
            j = act[t]
            cache[s, j] = yi * y[j] * (tmp[t] + kbias)
        slot_epoch[s] = -1 if n_act == n else epoch
        slot_stamp[s] = istate[_CLOCK]
        return s
    if use_dense:
        d = dense.shape[1]
        for t in range(n_act):
            j = act[t]
            cache[s, j] = yi * y[j] * dense_kernel(dense, i, dense, j, d, ktype, gamma, coef0,
                                                   degree, kbias)
        slot_epoch[s] = -1 if n_act == n else epoch
        slot_stamp[s] = istate[_CLOCK]
        return s
    scatter(indptr, indices, data, i, buf)
    sqi = sq[i]
    for t in range(n_act):
        j = act[t]
        dot = gather_dot(indptr, indices, data, j, buf, n_buf)
        cache[s, j] = yi * y[j] * kernel_from_dot(dot, sqi, sq[j], ktype, gamma, coef0, degree,
                                                  kbias)
    unscatter(indptr, indices, i, buf)
    slot_epoch[s] = -1 if n_act == n else epoch     # -1: every entry valid
    slot_stamp[s] = istate[_CLOCK]
    return s


@njit
def _pg(g, a, c):
    if a <= 0.0:
        return g if g < 0.0 else 0.0
    if a >= c:
        return g if g > 0.0 else 0.0
    return g


@njit
def _select(G, alpha, C, qd, act, n_act, istate, fstate):
    best = -1
    best_score = -1.0
    mv = 0.0
    pmax = -np.inf
    pmin = np.inf
    for t in range(n_act):
        j = act[t]
        pg = _pg(G[j], alpha[j], C[j])
        pmax = max(pmax, pg)
        pmin = min(pmin, pg)
        if pg != 0.0:
            v = abs(pg)
            if v > mv:
                mv = v
            sc = pg * pg / qd[j]
            if sc > best_score:
                best_score = sc
                best = np.int64(j)
    istate[_BEST] = best
    fstate[0] = mv
    fstate[1] = pmax
    fstate[2] = pmin


@njit
def _q2(gi, gj, qii, qij, qjj, di, dj):
    """Change of f when (alpha_i, alpha_j) move by (di, dj)."""
    return gi * di + gj * dj + 0.5 * (qii * di * di + 2.0 * qij * di * dj + qjj * dj * dj)


@njit
def _edge(g, q, lo, hi):
    """argmin of g x + q x^2 / 2 over [lo, hi] (q <= 0 allowed: then an end point)."""
    if q > 0.0:
        return min(max(-g / q, lo), hi)
    return lo if g * lo + 0.5 * q * lo * lo <= g * hi + 0.5 * q * hi * hi else hi


@njit
def _solve2(gi, gj, qii, qij, qjj, li, ui, lj, uj):
    """Exact minimiser (di, dj) of ``_q2`` over the box [li, ui] x [lj, uj] (which holds 0).

    The unconstrained minimiser when it exists and lies in the box; otherwise the minimum lies
    on an edge, and each edge is a one-dimensional problem solved exactly.
    """
    det = qii * qjj - qij * qij
    if qii > 0.0 and det > 1e-12 * qii * qjj:
        di = (qij * gj - qjj * gi) / det
        dj = (qij * gi - qii * gj) / det
        if li <= di <= ui and lj <= dj <= uj:
            return di, dj
    best = np.inf
    bi = 0.0
    bj = 0.0
    for e in range(4):
        if e < 2:
            di = li if e == 0 else ui
            dj = _edge(gj + qij * di, qjj, lj, uj)
        else:
            dj = lj if e == 2 else uj
            di = _edge(gi + qij * dj, qii, li, ui)
        v = _q2(gi, gj, qii, qij, qjj, di, dj)
        if v < best:
            best = v
            bi = di
            bj = dj
    return bi, bj


@njit(inline="always")
def pair_step(alpha, C, G, i, j, qii, qij, qjj):
    """The exact step of the pair (alpha_i, alpha_j) in its box (:func:`_solve2`), made;
    returns the changes (di, dj) actually made (the box is exact, the clip only takes rounding
    off), by which G must move."""
    ai = alpha[i]
    aj = alpha[j]
    di, dj = _solve2(G[i], G[j], qii, qij, qjj, -ai, C[i] - ai, -aj, C[j] - aj)
    a_new = min(max(ai + di, 0.0), C[i])
    di = a_new - ai
    alpha[i] = a_new
    a_new = min(max(aj + dj, 0.0), C[j])
    dj = a_new - aj
    alpha[j] = a_new
    return di, dj


@njit
def _cd_run(indptr, indices, data, sq, dense, denseT, use_dense, y, C, qd, iqd, ktype, gamma,
            coef0, degree, kbias, n_buf,
            alpha, G, act, istate, fstate, cache, slot_of, slot_row, slot_stamp, slot_epoch,
            eps, budget, shrinking, period):
    """CD steps until the active rows meet ``eps`` (returns 1) or ``budget`` (returns 0).

    A step: i is the next variable of the last pass (largest PG_i^2 / Q_ii); a pass over the
    active rows with Q[:, i] picks the partner j of largest decrease of the joint unclipped
    Newton step on (alpha_i, alpha_j) (rows at a bound only when that step moves them inwards);
    the pair's 2-variable box problem is solved exactly, or alpha_i alone when no partner beats
    the single step; a second pass updates G with both rows and picks the next i.
    """
    n = y.shape[0]
    buf = np.zeros(n_buf, dtype=np.float64)
    tmp = np.empty(n, dtype=np.float64)
    bits = np.empty(n, dtype=np.int64)
    if istate[_FRESH] == 1:
        _select(G, alpha, C, qd, act, istate[_N_ACT], istate, fstate)
        istate[_FRESH] = 0
    steps = 0
    while steps < budget:
        n_act = istate[_N_ACT]
        if fstate[0] <= eps or istate[_BEST] < 0:
            return 1
        if shrinking:
            istate[_COUNTER] -= 1
            if istate[_COUNTER] <= 0:
                istate[_COUNTER] = min(n, period)
                thr_hi = fstate[1] if fstate[1] > 0.0 else np.inf
                thr_lo = fstate[2] if fstate[2] < 0.0 else -np.inf
                k = 0
                for t in range(n_act):
                    j = act[t]
                    g = G[j]
                    if (alpha[j] <= 0.0 and g > thr_hi) or (alpha[j] >= C[j] and g < thr_lo):
                        continue
                    act[k] = j
                    k += 1
                n_act = k
                istate[_N_ACT] = k
        i = istate[_BEST]
        si = _get_row(i, indptr, indices, data, sq, dense, denseT, use_dense, y, ktype, gamma,
                      coef0, degree, kbias, n_buf, buf, act, n_act, n, istate[_EPOCH], cache,
                      slot_of, slot_row, slot_stamp, slot_epoch, istate, tmp, bits)
        rowi = cache[si]
        gi = G[i]
        qii = qd[i]
        ai = alpha[i]
        # partner: twice the decrease of the joint unclipped step is
        # (Q_jj G_i^2 - 2 Q_ij G_i G_j + Q_ii G_j^2) / det, det = Q_ii Q_jj - Q_ij^2 (floored
        # like LIBSVM's tau so that near-duplicate rows stay finite); the single step's is
        # G_i^2 / Q_ii.  A partner must beat it by a margin worth its second row.
        bestj = -1
        bestg = gi * gi / qii * 1.0001
        iu = np.uint64(i)
        for t in range(n_act):
            j = act[t]
            qij = rowi[j]
            gj = G[j]
            # sign of alpha_j's move in the joint step
            mj = qij * gi - qii * gj
            a = alpha[j]
            if j == iu or (a <= 0.0 and mj < 0.0) or (a >= C[j] and mj > 0.0):
                continue
            qjj = qd[j]
            det = max(qii * qjj - qij * qij, 1e-12)
            gain = (qjj * gi * gi - 2.0 * qij * gi * gj + qii * gj * gj) / det
            if gain > bestg:
                bestg = gain
                bestj = np.int64(j)
        if bestj < 0:
            a_new = min(max(ai - gi / qii, 0.0), C[i])
            di = a_new - ai
            alpha[i] = a_new
            dj = 0.0
            rowj = rowi
        else:
            j = bestj
            di, dj = pair_step(alpha, C, G, i, j, qii, rowi[j], qd[j])
            # (slots >= 2 and row i was used last: fetching row j never evicts it)
            sj = _get_row(j, indptr, indices, data, sq, dense, denseT, use_dense, y, ktype,
                          gamma, coef0, degree, kbias, n_buf, buf, act, n_act, n,
                          istate[_EPOCH], cache, slot_of, slot_row, slot_stamp, slot_epoch,
                          istate, tmp, bits)
            rowj = cache[sj]
        best = -1
        best_score = 0.0
        mv = 0.0
        pmax = -np.inf
        pmin = np.inf
        for t in range(n_act):
            k = act[t]
            g = G[k] + (di * rowi[k] + dj * rowj[k])
            G[k] = g
            a = alpha[k]
            # projected gradient, branch-free (selects): capped at 0 from above at the lower
            # bound and from below at the upper one
            cap = 0.0 if a <= 0.0 else np.inf
            floor = 0.0 if a >= C[k] else -np.inf
            pg = min(max(g, floor), cap)
            sc = pg * pg * iqd[k]
            mv = max(mv, abs(pg))
            pmax = max(pmax, pg)
            pmin = min(pmin, pg)
            better = sc > best_score
            best_score = sc if better else best_score
            best = np.int64(k) if better else best
        istate[_BEST] = best
        fstate[0] = mv
        fstate[1] = pmax
        fstate[2] = pmin
        steps += 1
        istate[_STEPS] += 1
    return 0


@njit
def _diag(indptr, indices, data, sq, ktype, gamma, coef0, degree, kbias):
    n = indptr.shape[0] - 1
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = kernel_from_dot(sq[i], sq[i], sq[i], ktype, gamma, coef0, degree, kbias)
    return out


def take_rows(X: Rows, rows) -> Rows:
    """The given rows of X as a new Rows (CSR copied, norms sliced)."""
    rows = np.asarray(rows, dtype=np.int64)
    starts = X.indptr[rows]
    lengths = X.indptr[rows + 1] - starts
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    if len(rows):
        pos = np.arange(indptr[-1], dtype=np.int64) + np.repeat(starts - indptr[:-1], lengths)
    else:
        pos = np.zeros(0, dtype=np.int64)
    out = Rows(indptr, X.indices[pos], X.data[pos], sq=X.sq[rows], n_features=X.n_features)
    parent = getattr(X, "_dense", None)
    if parent is not None:
        out._dense = parent[rows]
    return out


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


def solve(X: Rows, y, C, kernel: Kernel, *, eps=DEFAULT_EPS, init_alpha=None, shrinking=True,
          cache_mb=DEFAULT_CACHE_MB, max_steps=None, threads=None, callback=None,
          chunk_steps=1000):
    """Solve the bias-free kernel SVM dual on the rows of X; returns a SolverResult.

    ``y`` in {-1, +1}; ``C`` a scalar or per-row array of upper bounds.
    """
    t0 = time.perf_counter()
    n = X.n_rows
    y = np.ascontiguousarray(y, dtype=np.float64)
    C = np.ascontiguousarray(np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)))
    args = kernel.args()
    qd = _diag(X.indptr, X.indices, X.data, X.sq, *args)
    qd = np.where(qd > 0, qd, 1e-12)
    iqd = 1.0 / qd
    if init_alpha is None:
        alpha = np.zeros(n)
        G = -np.ones(n)
    else:
        alpha = np.clip(np.asarray(init_alpha, dtype=np.float64), 0.0, C).copy()
        G = gradient(X, y, alpha, kernel, threads=threads, mem_mb=min(64.0, cache_mb))
    # the last point where G was exact for every row: a rebuild adds the change since then
    ref = (alpha.copy(), G.copy())
    max_steps = max(10_000_000, 100 * n) if max_steps is None else int(max_steps)
    stats = {"steps": 0, "misses": 0}
    converged = False
    unshrinks = 0
    maxviol = 0.0
    # a warm start's gradient is already informative: shrink at the first step
    counter = 1 if np.any(alpha > 0) else min(n, SHRINK_PERIOD)
    while n > 0:
        # after MAX_UNSHRINKS rebuilds the remaining steps are few: no more shrinking
        status, active, maxviol = _iterate(
            X, y, C, qd, iqd, alpha, G, kernel, eps, bool(shrinking) and unshrinks < MAX_UNSHRINKS,
            cache_mb, max_steps, stats, callback, counter, chunk_steps)
        if status == 1 and len(active) == n:
            converged = True
            break
        _rebuild(X, y, alpha, G, kernel, active, threads, cache_mb, ref)
        ref = (alpha.copy(), G.copy())
        if status != 1:
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
               "warning": None if converged else
               f"reaching the maximal number of steps ({max_steps}) before |PG| <= {eps:g}"})
    res.extra["gradient"] = G
    return res


def _pg_numpy(G, alpha, C):
    return np.where(alpha <= 0, np.minimum(G, 0), np.where(alpha >= C, np.maximum(G, 0), G))


# shrinking stays on until the gradient has been rebuilt this many times (then the remaining
# steps, few, run over all rows; with the old limit of 2 the last ~1000 steps of DC-SVM's conquer
# step on ijcnn1 ran unshrunk over 50k rows, 1.75 s)
MAX_UNSHRINKS = 10
# steps between shrinking checks (a check costs one pass, as a step does); the first check after
# a rebuild comes at once (the rebuilt gradient is exact, the thresholds already informative)
SHRINK_PERIOD = 50
UNSHRINK_COUNTER = 1

# When shrinking leaves at most this fraction of the rows active, the active rows are copied into
# a smaller problem (their gradient, which holds the fixed rows' contribution, carried over) with
# its own, shorter, cache rows: many more rows then fit in the same cache.
COMPACT_RATIO = 0.5
COMPACT_MIN_ROWS = 2000


def _iterate(X, y, C, qd, iqd, alpha, G, kernel, eps, shrinking, cache_mb, max_steps, stats,
             callback, counter, chunk_steps):
    """CD steps on these rows (G exact for all of them) until the active rows meet eps (status
    1) or the step budget is spent (0).  Returns (status, rows whose G is exact, max violation).
    """
    n = len(y)
    args = kernel.args()
    n_buf = max(X.n_features, 1)
    use_dense = X.prefers_dense()
    dense = X.dense(n_buf) if use_dense else np.zeros((1, 1))
    denseT = np.ascontiguousarray(dense.T) if use_dense else dense
    slots = int(max(2, min(n, cache_mb * (1 << 20) // (8 * max(n, 1)))))
    cache = np.empty((slots, n), dtype=np.float64)
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
        before, miss_before = int(istate[_STEPS]), int(istate[_MISSES])
        # the active rows as unsigned indices: no negative-index wrap-around code in the passes
        status = _cd_run(X.indptr, X.indices, X.data, X.sq, dense, denseT, use_dense, y, C, qd,
                         iqd, *args, n_buf, alpha, G, act.view(np.uint64), istate, fstate, cache,
                         slot_of, slot_row, slot_stamp, slot_epoch, float(eps), budget, shrinking,
                         SHRINK_PERIOD)
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
                cache_mb, max_steps, stats, callback, 1, chunk_steps)
            alpha[A] = a_sub
            G[A[act_sub]] = g_sub[act_sub]
            return status, A[act_sub], mv


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


# ------------------------------------------------------------------------------------------------
# parameters shared by the kernel solvers

def kernel_of(params, n_features) -> Kernel:
    """The Kernel described by ``params.extra`` (LIBSVM's -t -g -d -r) and ``params.bias``."""
    ex = params.extra or {}
    ktype = int(ex.get("kernel_type", 2))
    gamma = ex.get("gamma")
    if gamma is None:
        gamma = 1.0 / n_features if n_features > 0 else 1.0
    b = float(params.bias)
    kbias = b * b if b >= 0 else 0.0
    return Kernel(ktype, float(gamma), float(ex.get("coef0", 0.0)), int(ex.get("degree", 3)),
                  kbias)


def check_kernel_params(params):
    ex = params.extra or {}
    t = ex.get("kernel_type", 2)
    if t not in (0, 1, 2, 3):
        return f"-t must be 0 (linear), 1 (polynomial), 2 (rbf) or 3 (sigmoid) (got {t})"
    if ex.get("gamma") is not None and ex["gamma"] < 0:
        return f"gamma (-g) must be >= 0 (got {ex['gamma']})"
    if int(ex.get("degree", 3)) < 0:
        return f"degree (-d) must be >= 0 (got {ex.get('degree')})"
    if float(ex.get("cache_mb", DEFAULT_CACHE_MB)) <= 0:
        return f"cache size (-m) must be > 0 (got {ex.get('cache_mb')})"
    return None


def fit(X: Rows, y, C, kernel: Kernel, params, init_alpha=None, callback=None, context=None):
    """Binary fit used by the one-vs-one driver: the plain exact solver."""
    ex = params.extra or {}
    return solve(X, y, C, kernel, eps=params.eps, init_alpha=init_alpha,
                 shrinking=params.shrinking, cache_mb=float(ex.get("cache_mb", DEFAULT_CACHE_MB)),
                 max_steps=params.max_iter, threads=params.threads, callback=callback)


# ------------------------------------------------------------------------------------------------
# one-vs-one driver (LIBSVM's svm_train for C-SVC), returns a KernelModel

def train_ovo(problem, params, spec, callback=None):
    """Train every pair of classes with the binary kernel solver of ``spec``; a KernelModel.

    Labels are grouped as LIBSVM groups them (first appearance; +1 first in a {-1,+1} problem).
    Pair (i, j), i < j, is trained on the rows of classes i and j with y = +1 for class i and C
    of class i / j as C_pos / C_neg (``-w`` weights apply).  Support vectors are stored class by
    class, each with its K-1 coefficients in LIBSVM's layout.
    """
    from svmtool.api import _class_weights, class_index, group_classes
    from svmtool.kernel_model import KernelModel

    t0 = time.perf_counter()
    fit_fn = spec.load()
    X = Rows(problem.indptr, problem.indices, problem.data, n_features=problem.n_features)
    kernel = kernel_of(params, problem.n_features)
    labels, perm, start, count = group_classes(problem.y)
    cls = class_index(problem.y, labels)
    K = len(labels)
    wc = _class_weights(params, labels)
    ex = params.extra or {}
    if spec.name == "dcsvm" and ex.get("early") is not None and K > 2:
        # a multi-class early model: one clustering for all pairs (svmtool.solvers.early_ovo)
        from svmtool.solvers.dcsvm import default_early_level
        from svmtool.solvers.early_ovo import train_early

        k = int(ex.get("k_clusters", 4))
        level = int(ex["early"]) or default_early_level(int(ex.get("levels", 4)), k)
        model = train_early(X, labels, cls, wc, kernel, params, spec.name, level, k ** level,
                            callback)
        if ex.get("test") is not None:
            _level_accuracy(model, model.report["levels"], None, labels, model.kernel,
                            problem.n_features, ex["test"])
        return model
    members = [np.flatnonzero(cls == c) for c in range(K)]
    nonzero = [np.zeros(len(m), dtype=bool) for m in members]
    coef_parts = {}          # (class, pair index) -> coefficients over that class's rows
    rho = []
    reports = []
    pair_models = []
    level_models = []
    p = 0
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    # pairs are independent: with more than one, they run in threads (each solver single-threaded)
    n_thr = n_threads(params.threads) if len(pairs) > 1 else 1
    pair_params = params
    if n_thr > 1:
        # the -m budget is shared by the pairs running at the same time
        ex = dict(params.extra or {})
        ex["cache_mb"] = float(ex.get("cache_mb", DEFAULT_CACHE_MB)) / n_thr
        pair_params = replace(params, threads=1, extra=ex)

    def fit_pair(q):
        i, j = pairs[q]
        rows = np.concatenate([members[i], members[j]])
        yb = np.concatenate([np.ones(len(members[i])), -np.ones(len(members[j]))])
        Cv = np.concatenate([np.full(len(members[i]), wc[i]), np.full(len(members[j]), wc[j])])
        cb = None
        if callback is not None:
            cb = (lambda it, info, _p=q: callback(_p, it, info))
        return fit_fn(take_rows(X, rows), yb, Cv, kernel, pair_params, callback=cb,
                      context={"pair": (i, j), "labels": (labels[i], labels[j])})

    if n_thr > 1:
        with ThreadPoolExecutor(n_thr) as pool:
            results = list(pool.map(fit_pair, range(len(pairs))))
    else:
        results = [fit_pair(q) for q in range(len(pairs))]
    for p, ((i, j), res) in enumerate(zip(pairs, results)):
        a = res.alpha
        ni = len(members[i])
        yb = np.concatenate([np.ones(ni), -np.ones(len(a) - ni)])
        ci = a[:ni] * 1.0
        cj = -a[ni:]
        coef_parts[(i, p)] = ci
        coef_parts[(j, p)] = cj
        nonzero[i] |= ci != 0
        nonzero[j] |= cj != 0
        rho.append(-kernel.kbias * float(np.sum(a * yb)))
        reports.append(_report_of(res, labels[i], labels[j], K))
        if res.extra.get("early_model") is not None:
            pair_models.append(res.extra["early_model"])
        if res.extra.get("level_models") is not None:
            level_models.append(res.extra["level_models"])
    p = len(pairs)
    # support vectors class by class, coefficients in LIBSVM's layout: for pair (i, j) the
    # coefficients of class i's SVs go to row j-1, those of class j's SVs to row i
    sv_rows, nr_sv = [], []
    for c in range(K):
        keep = members[c][nonzero[c]]
        sv_rows.append(keep)
        nr_sv.append(len(keep))
    total = int(sum(nr_sv))
    sv_coef = np.zeros((max(K - 1, 1), total))
    offset = np.concatenate([[0], np.cumsum(nr_sv)]).astype(np.int64)
    p = 0
    for i in range(K):
        for j in range(i + 1, K):
            sv_coef[j - 1, offset[i]:offset[i + 1]] = coef_parts[(i, p)][nonzero[i]]
            sv_coef[i, offset[j]:offset[j + 1]] = coef_parts[(j, p)][nonzero[j]]
            p += 1
    all_sv = np.concatenate(sv_rows) if sv_rows else np.zeros(0, dtype=np.int64)
    svs = take_rows(X, all_sv)
    kernel_out = Kernel(kernel.ktype, kernel.gamma, kernel.coef0, kernel.degree, 0.0)
    model = KernelModel(kernel=kernel_out, labels=labels, rho=np.array(rho), nr_sv=np.array(nr_sv),
                        sv_indptr=svs.indptr, sv_indices=svs.indices, sv_data=svs.data,
                        sv_coef=sv_coef[:K - 1] if K > 1 else sv_coef[:0],
                        nr_feature=problem.n_features)
    elapsed = time.perf_counter() - t0
    model.report = {"solver": spec.name, "train_time": elapsed, "classes": reports,
                    "params": {"C": params.C, "eps": params.eps, "bias": params.bias,
                               "kernel": kernel.name, "gamma": kernel.gamma}}
    level_stats = _aggregate_levels(reports)
    if pair_models and len(pair_models) == p:
        from svmtool.kernel_model import EarlyModel

        level = reports[0].get("early_level", 0) if reports else 0
        model = EarlyModel.from_pairs(pair_models, labels, kernel_out, problem.n_features,
                                      report=model.report, level=level)
    if level_stats:
        model.report["levels"] = level_stats
        test = (params.extra or {}).get("test")
        if test is not None:
            _level_accuracy(model, level_stats, level_models, labels, kernel_out,
                            problem.n_features, test)
    return model


def _aggregate_levels(reports):
    """Per-level stats summed over the pairs (times, #SV, objectives, clusters)."""
    if not reports or "levels" not in reports[0]:
        return []
    out = {}
    order = []
    for r in reports:
        for st in r.get("levels", []):
            key = st["level"]
            if key not in out:
                out[key] = dict(st)
                order.append(key)
            else:
                for f in ("clusters", "cluster_time", "train_time", "n_sv", "objective", "steps"):
                    out[key][f] += st[f]
    return [out[k] for k in order]


def _level_accuracy(model, level_stats, level_models, labels, kernel, n_features, test):
    from svmtool.kernel_model import EarlyModel

    for st in level_stats:
        lv = st["level"]
        if lv == "refine":
            continue
        if lv == 0 or (lv == getattr(model, "level", None) and not isinstance(lv, str)
                       and type(model).__name__ == "EarlyModel"):
            m = model
        elif level_models and all(lv in lm for lm in level_models):
            m = EarlyModel.from_pairs([lm[lv] for lm in level_models], labels, kernel,
                                      n_features, level=lv)
        else:
            continue
        pred = m.predict(m.decision_function(test))
        st["accuracy"] = 100.0 * float(np.mean(pred == test.y))


def _report_of(res, li, lj, K):
    r = {"label": float(li), "pair": (float(li), float(lj)), "iterations": int(res.iterations),
         "primal": float(res.primal), "dual": float(res.dual), "gap": float(res.extra.get(
             "pg_violation", res.gap)), "gap_kind": res.gap_kind, "converged": bool(res.converged),
         "n_sv": int(res.n_sv)}
    for k, v in res.extra.items():
        if isinstance(v, (int, float, str, bool)) or v is None:
            r[k] = v
        elif k == "levels":
            r[k] = v
    return r

"""Dual coordinate descent for L2-regularised L1- and L2-loss linear SVMs (LIBLINEAR -s 3, -s 1).

The maths
---------
Primal, with per-example costs ``C_i`` (``C_pos`` for ``y_i = +1``, ``C_neg`` for ``y_i = -1``,
times the row's instance weight ``W_i`` when the fit is given ``weights``)::

    min_w  1/2 w'w + sum_i C_i max(0, 1 - y_i w'x_i)        L1 loss (hinge),         -s 3
    min_w  1/2 w'w + sum_i C_i max(0, 1 - y_i w'x_i)^2      L2 loss (squared hinge), -s 1

Dual (Hsieh, Chang, Lin, Keerthi, Sundararajan, "A dual coordinate descent method for large-scale
linear SVM", ICML 2008)::

    min_alpha  f(alpha) = 1/2 alpha' (Q + D) alpha - e'alpha,    0 <= alpha_i <= U_i,
    Q_ij = y_i y_j x_i'x_j,
    L1 loss: U_i = C_i, D_ii = 0;      L2 loss: U_i = inf, D_ii = 1 / (2 C_i),

with ``w = sum_i y_i alpha_i x_i`` kept up to date, so that the partial derivative
``G_i = y_i w'x_i - 1 + D_ii alpha_i`` costs one sparse dot product and the one-variable minimiser
``alpha_i <- min(max(alpha_i - G_i / QD_ii, 0), U_i)`` with ``QD_ii = x_i'x_i + D_ii`` one sparse
axpy.  Each outer iteration visits the active rows in a fresh random order.

Shrinking and stopping follow LIBLINEAR (``solve_l2r_l1l2_svc`` in linear.cpp, 2.4x-2.50):

* the projected gradient ``PG_i`` is ``G_i`` for a free ``alpha_i``, ``min(G_i, 0)`` at 0 and
  ``max(G_i, 0)`` at ``U_i``;
* a row at the lower bound with ``G_i > PGmax_old`` (or at the upper bound with
  ``G_i < PGmin_old``) leaves the active set, where ``PGmax_old``/``PGmin_old`` are the extremes of
  ``PG`` over the previous outer iteration (reset to +-inf when they have the wrong sign);
* ``-e`` (``eps``, default 0.1) bounds the projected-gradient violation: the pass stops when
  ``PGmax - PGmin <= eps`` and also ``|PGmax| <= eps`` and ``|PGmin| <= eps`` (the two extra
  conditions are in recent LIBLINEAR; without them a pass whose projected gradients all have
  nearly the same nonzero value would stop early).  If rows were shrunk, the active set is
  restored and the iterations go on until the condition holds over all rows;
* at most ``max_iter`` outer iterations (LIBLINEAR's ``dual_solver_max_iter`` = 300).  When the cap
  is hit the result has ``converged=False`` and ``extra["warning"]`` holds the message for the
  caller to print (this module never prints nor calls ``warnings.warn``).  For -s 1 LIBLINEAR then
  switches to its primal Newton solver (-s 2) with ``eps * 0.1``, and so does svmtool: -s 1's
  registry entry names that fallback (:mod:`svmtool.solvers.common.train_one`).

Instance weights (``weights``: SVMlight's ``cost:``, LIBLINEAR-weights' ``-W``) make the box
per row, as LIBLINEAR-weights' ``solve_l2r_l1l2_svc`` does: ``C_i = C_class * W_i``, so
``U_i = C_i`` (L1 loss) or ``D_ii = 1 / (2 C_i)`` (L2 loss); both loops then read the bound and
the diagonal term of row ``i`` from two arrays instead of the box's two classes.  A row of weight
0 takes no part (it is left out of the loop, its ``alpha_i`` is 0), as LIBLINEAR-weights removes
such rows.  Without weights the loops take the box's values, as before.

Random order: by default a Fisher-Yates shuffle driven by splitmix64 (seeded from ``params.seed``)
with Lemire's multiply-shift bounded draw.  With ``params.liblinear_rng=True`` the permutation is
drawn exactly as LIBLINEAR draws it, ``j = i + rand() % (active_size - i)``, with an emulation of
glibc's ``rand()`` (the TYPE_3 additive feedback generator, ``r_k = r_{k-3} + r_{k-31}``, output
``r_k >> 1``) seeded as ``srand(params.seed)``.  LIBLINEAR never calls ``srand``; glibc then
behaves as after ``srand(1)``, and 1 is the default seed, so on data ordered as LIBLINEAR orders it
(the API groups the classes) the weight vector is bit-identical to LIBLINEAR's in a fresh process.

Warm start: ``params.dcd.init_alpha`` (length ``n_rows``) starts from that dual point
(clipped to ``[0, U_i]``), ``w`` being recomputed from it.  ``init_w`` is ignored, as LIBLINEAR's
dual solvers ignore ``init_sol``: a primal point does not determine a dual one.

Returned: :class:`svmtool.solvers.common.result.SolverResult` with ``w``, ``alpha``, ``primal`` (the
objective above at ``w``), ``dual`` (``-f(alpha)``, so ``dual <= primal``; LIBLINEAR prints
``f(alpha)`` as its "Objective value"), ``gap = primal - dual`` ("duality gap"), ``n_sv`` (``alpha_i
> 0``) and in ``extra``: ``pg_violation`` (``PGmax - PGmin`` of the last outer iteration),
``warning`` (or ``None``), ``solve_time`` and ``setup_time`` (seconds), ``active_size``,
``n_bounded_sv`` (``alpha_i`` at ``U_i``), ``liblinear_objective`` (``f(alpha)``), ``eps``,
``max_iter``.  ``params.dcd.w_recalc = True`` recomputes ``w`` from ``alpha`` at the end,
as LIBLINEAR 2.50's ``w_recalc`` parameter does (off by default there and here; bit-identical
to LIBLINEAR both ways).

Two engines.  The hot loop is one jitted function over raw arrays
(:func:`svmtool.solvers.dual_cd._dcd_jit._dcd_iterations`); :mod:`svmtool.solvers.dual_cd._dcd_py`
is the same loop in plain Python.  Importing numba and loading cached kernels costs a fresh process
far more than the milliseconds of solving a file such as heart_scale (numba's start-up:
BENCHMARKS.md, "Against the C programs"), so with
``params.dcd.engine = "auto"`` (the default) a problem of at most ``SMALL_NNZ`` stored
entries starts in Python when the jitted kernels are not loaded yet, and moves to the jitted loop
once the process has spent ``PY_WORK_BUDGET`` stored-entry visits in Python; the loop's whole
state lives in arrays, so the hand-over changes nothing in the result (tested bit for bit).
``"jit"`` and ``"python"`` force one engine.

The jitted loop runs outer iterations until a work budget is spent, so that the Python driver
can call ``callback`` between calls at a negligible cost (a call costs microseconds; one call per
outer iteration was a visible cost on a9a/w8a/ijcnn1, the budget of ``CALLBACK_WORK_BUDGET`` stored
entries is within noise); per-iteration numbers come back in a history buffer and the callback is
still called once per outer iteration.  Index arrays are unsigned (uint64 ``indptr``, uint32
``indices`` and permutation): numba then emits no negative-index wrap-around code.  The rows visited
next are prefetched (see ``_pf`` in _dcd_jit), the one change that makes the loop faster than
LIBLINEAR's C: a visit is dominated by cache misses on a row chosen at random.  Floating-point
operations are those of LIBLINEAR, in its order (sums left to right over a row, no fused
multiply-add), which is what makes the weights bit-identical.
"""

import sys
import time

import numpy as np

from svmtool.solvers import default_eps
from svmtool.solvers.common.batches import Batches, replay, unsigned_views
from svmtool.solvers.common.result import STOPPED_TIME, SolverResult, time_limit_warning
from svmtool.solvers.common.rng import permutation_rng
from svmtool.solvers.dual_cd._dcd_state import new_box, new_loop

LIBLINEAR_MAX_ITER = 300   # LIBLINEAR 2.50 train_one(): dual_solver_max_iter
# Work (stored entries visited) per call of the jitted loop when a callback is given: a call
# costs some microseconds, a budget of this size some milliseconds, so the calls cost a small
# fraction of the work.
CALLBACK_WORK_BUDGET = 1 << 21
_HIST_ROWS = 1024          # outer iterations recorded per call at most

# Small problems (see the module docstring, "Two engines"): a problem with at most SMALL_NNZ
# stored entries starts in plain Python (svmtool.solvers.dual_cd._dcd_py) unless the jitted kernels
# are already loaded; the Python loop may visit PY_WORK_BUDGET stored entries per training run
# (about half of what importing numba and loading the kernels costs; the fits of one run
# -- its one-vs-rest classes, the folds of -v and -C -- share it through params.dcd.python_work)
# before the rest of the work goes to the jitted loop, which resumes from the same state: the
# result is the same.
SMALL_NNZ = 200_000
PY_WORK_BUDGET = 1_500_000
_JIT_MODULE = "svmtool.solvers.dual_cd._dcd_jit"

# --------------------------------------------------------------------------------------------
# the Python driver
# --------------------------------------------------------------------------------------------

class _python_ops:
    """The three row passes of the driver in plain Python (small problems), as numpy arrays."""

    @staticmethod
    def row_sq_norms(indptr, data):
        from svmtool.solvers.dual_cd import _dcd_py
        return np.array(_dcd_py.row_sq_norms(indptr, data), dtype=np.float64)

    @staticmethod
    def csr_dot_dense(indptr, indices, data, w):
        from svmtool.solvers.dual_cd import _dcd_py
        return np.array(_dcd_py.csr_dot_dense(indptr, indices, data, w), dtype=np.float64)

    @staticmethod
    def csr_t_dot(indptr, indices, data, v, n_features):
        from svmtool.solvers.dual_cd import _dcd_py
        return np.array(_dcd_py.csr_t_dot(indptr, indices, data, v, n_features),
                        dtype=np.float64)


def _jit_ops():
    from svmtool.ops import sparse
    return sparse


class _Engine:
    """Which loop runs the outer iterations ("Two engines" in the module docstring):
    ``params.dcd.engine`` "python" or "jit" forces one; "auto" runs the pure-Python twin while
    the problem is small and the run's budget of Python work lasts (``params.dcd.python_work``,
    else a budget of this fit's own; ``params.dcd.python_budget``: a test's budget), then the
    jitted loop, which resumes from the same state."""

    def __init__(self, params, nnz):
        dp = params.dcd
        self.shared = None
        if dp.engine == "python":
            self.small, self.left = True, None              # None: no limit
        elif dp.engine == "jit":
            self.small, self.left = False, 0
        elif dp.python_budget is not None:                  # tests: hand over after this work
            self.small, self.left = True, int(dp.python_budget)
        else:
            self.small = nnz <= SMALL_NNZ and _JIT_MODULE not in sys.modules
            self.shared = dp.python_work if dp.python_work is not None else []
            if not self.shared:
                self.shared.append(PY_WORK_BUDGET)
            self.left = self.shared[0] if self.small else 0
        self.in_python = self.left is None or self.left > 0
        self.ops = _python_ops() if self.small else _jit_ops()
        self.unit = None            # every value 1.0: asked once, when the jitted loop first runs

    def run(self, indptr, indptr_u, state, options, budget, hist, rows):
        """One call of the current loop on the rows and the loop's ``state`` arrays (indices to
        the generator, as the loops take them), its ``options`` (to max_iter), the work
        ``budget``, the history buffer and ``rows``, the per-row (bounds, diagonal terms) of a
        weighted fit (two empty arrays otherwise); the iterations it did.  The jitted loop skips the
        values of binary features (every stored value 1.0: a product by 1.0 is exact)."""
        # errstate only matters with NUMBA_DISABLE_JIT=1 (uint64 wrap-around in the generator,
        # x/0 for an empty row in the L1 case, both intended)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            if not self.in_python:
                from svmtool.solvers.dual_cd._dcd_jit import _dcd_iterations

                if self.unit is None:
                    self.unit = _all_ones(state[1])
                return _dcd_iterations(indptr_u, *state, *options, budget, hist, *rows,
                                       self.unit)
            from svmtool.solvers.dual_cd._dcd_py import dcd_iterations

            step = budget if self.left is None else min(int(budget), self.left)
            done, work = dcd_iterations(indptr, *state, *options, step, hist, *rows)
        if self.left is not None:
            self.left -= work
            self.in_python = self.left > 0
            if self.shared is not None:
                self.shared[0] -= work
        return done

    def row_ops(self):
        """The row passes after the loop: the jitted ones once the jitted loop is loaded."""
        return _jit_ops() if self.small and _JIT_MODULE in sys.modules else self.ops


def _all_ones(data, chunk=1 << 20):
    """Whether every stored value is 1.0 (a pass over the values a chunk at a time: no copy of
    a mapped cache's values, and data that is not binary stops at its first chunk)."""
    for lo in range(0, data.shape[0], chunk):
        if not (data[lo:lo + chunk] == 1.0).all():
            return False
    return data.shape[0] > 0


def _problem(indptr, indices, data, y, n_features, C_pos, C_neg, loss, weights=None):
    """The checked arrays and the dual's box: (indptr, indptr_u, indices_u, data, y, box,
    upper, diag); ``box`` the ``BOX`` record of :mod:`svmtool.solvers.dual_cd._dcd_state`, ``upper``
    and ``diag`` the bound and diagonal term per row (with ``weights``, of ``C_class * W_i``)."""
    if loss not in ("l1", "l2"):
        raise ValueError(f"loss must be 'l1' or 'l2' (got {loss!r})")
    if not (C_pos > 0 and C_neg > 0):
        raise ValueError(f"C must be > 0 (got C_pos={C_pos}, C_neg={C_neg})")
    indptr, indptr_u, indices_u = unsigned_views(indptr, indices, n_features)
    data = np.ascontiguousarray(data, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    n_rows = indptr.shape[0] - 1
    if y.shape[0] != n_rows:
        raise ValueError(f"{y.shape[0]} labels for {n_rows} rows")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("labels must be -1 or +1")
    box = new_box(loss, C_pos, C_neg)
    pos = y > 0
    if weights is None:
        upper = np.where(pos, box[0]["u_pos"], box[0]["u_neg"])
        diag = np.where(pos, box[0]["d_pos"], box[0]["d_neg"])
    else:
        cost = np.where(pos, C_pos, C_neg) * weights
        if loss == "l1":
            upper, diag = cost, np.zeros(n_rows, dtype=np.float64)
        else:
            upper, diag = np.full(n_rows, np.inf), 0.5 / cost
    return indptr, indptr_u, indices_u, data, y, box, upper, diag


def _start(params, ops, indptr, indices_u, data, y, upper, n_features):
    """(alpha, w) of the first iteration: 0, or ``params.dcd.init_alpha`` clipped to the box
    with w rebuilt from it."""
    n_rows = indptr.shape[0] - 1
    init_alpha = params.dcd.init_alpha
    if init_alpha is None:
        return np.zeros(n_rows, dtype=np.float64), np.zeros(n_features, dtype=np.float64)
    alpha = np.array(init_alpha, dtype=np.float64).reshape(-1)
    if alpha.shape[0] != n_rows:
        raise ValueError(f"init_alpha has {alpha.shape[0]} entries for {n_rows} rows")
    alpha = np.minimum(np.maximum(alpha, 0.0), upper)
    alpha = np.where(np.isnan(alpha), 0.0, alpha)
    return alpha, ops.csr_t_dot(indptr, indices_u, data, y * alpha, n_features)


_HISTORY = (("pg_max", float), ("pg_min", float), ("active_size", int))
_DERIVED = (("violation", lambda row: float(row[0] - row[1])),)


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        loss="l2", weights=None):
    """Train a binary linear SVM by dual coordinate descent; see the module docstring.
    ``weights``: one instance weight (finite, 0 or more) per row, or None (every row 1)."""
    if weights is not None:
        weights = np.ascontiguousarray(weights, dtype=np.float64).reshape(-1)
        if weights.shape[0] != len(indptr) - 1:
            raise ValueError(f"{weights.shape[0]} weights for {len(indptr) - 1} rows")
        if not np.all(weights > 0):
            return _fit_without_zero_weights(indptr, indices, data, y, n_features, C_pos,
                                             C_neg, params, init_w, callback, loss, weights)
    t_start = time.perf_counter()
    C_pos, C_neg, n_features = float(C_pos), float(C_neg), int(n_features)
    indptr, indptr_u, indices_u, data, y, box, upper, diag = _problem(
        indptr, indices, data, y, n_features, C_pos, C_neg, loss, weights)
    eps = default_eps("dcd-l2") if params.eps is None else float(params.eps)
    max_iter = LIBLINEAR_MAX_ITER if params.max_iter is None else int(params.max_iter)
    n_rows = indptr.shape[0] - 1
    engine = _Engine(params, int(indptr[-1] - indptr[0]) if n_rows > 0 else 0)
    qd = diag + engine.ops.row_sq_norms(indptr, data)  # LIBLINEAR: QD = D_ii + x_i'x_i
    alpha, w = _start(params, engine.ops, indptr, indices_u, data, y, upper, n_features)
    loop = new_loop(n_rows)
    hist = np.empty((min(max_iter, _HIST_ROWS), 3), dtype=np.float64)
    state = (indices_u, data, y, qd, alpha, w, np.arange(n_rows, dtype=np.uint32), box, loop,
             permutation_rng(params))
    options = (bool(params.liblinear_rng), bool(params.shrinking), eps, max_iter)
    # a callback or a deadline needs the loop back between outer iterations now and then
    budget = np.uint64(CALLBACK_WORK_BUDGET
                       if callback is not None or params.deadline is not None else 2**63)
    last = (np.nan, np.nan, float(n_rows))
    t_loop = time.perf_counter()
    rows = ((upper, diag) if weights is not None
            else (np.empty(0, dtype=np.float64), np.empty(0, dtype=np.float64)))
    calls = Batches(lambda: engine.run(indptr, indptr_u, state, options, budget, hist, rows),
                    loop[0], "iterations", "converged", max_iter, params.deadline)
    for done in calls:
        if done:
            last = tuple(hist[done - 1])
        if callback is not None:
            replay(callback, int(loop[0]["iterations"]), done, hist, _HISTORY, t_start,
                   _DERIVED)
    ops = engine.row_ops()
    if params.dcd.w_recalc:
        # LIBLINEAR 2.50's w_recalc: w rebuilt from alpha, dropping the drift of the updates
        w = ops.csr_t_dot(indptr, indices_u, data, y * alpha, n_features)
    t_solved = time.perf_counter()
    return _result(w, alpha, y, diag, upper, C_pos, C_neg, loss, loop[0], last, calls.out_of_time,
                   eps, max_iter, ops.csr_dot_dense(indptr, indices_u, data, w),
                   {"solve_time": t_solved - t_loop, "setup_time": t_loop - t_start}, weights)


def _fit_without_zero_weights(indptr, indices, data, y, n_features, C_pos, C_neg, params,
                              init_w, callback, loss, weights):
    """The fit on the rows of positive weight (a row of weight 0 takes no part: its bound or
    its diagonal term would be 0 or infinite), its ``alpha`` put back in the rows' places with
    0 for the others."""
    from dataclasses import replace

    from svmtool.problem import take_csr_rows

    if not np.all(weights >= 0):
        raise ValueError("instance weights must be 0 or more")
    keep = np.flatnonzero(weights > 0)
    sub_indptr, sub_indices, sub_data = take_csr_rows(indptr, indices, data, keep)
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if params.dcd.init_alpha is not None:
        start = np.asarray(params.dcd.init_alpha, dtype=np.float64).reshape(-1)
        params = replace(params, dcd=replace(params.dcd, init_alpha=start[keep]))
    res = fit(sub_indptr, sub_indices, sub_data, y[keep], n_features, C_pos, C_neg, params,
              init_w=init_w, callback=callback, loss=loss, weights=weights[keep])
    alpha = np.zeros(len(weights), dtype=np.float64)
    alpha[keep] = res.alpha
    res.alpha = alpha
    return res


def _result(w, alpha, y, diag, upper, C_pos, C_neg, loss, st, last, out_of_time, eps,
            max_iter, scores, times, weights=None):
    """The SolverResult at (alpha, w): the primal objective from the scores ``X w``, the dual,
    the warning of a run stopped by its cap or its time budget; ``st`` the loop's final
    ``LOOP`` record; ``weights`` the rows' instance weights or None."""
    iterations = int(st["iterations"])
    slack = np.maximum(0.0, 1.0 - y * scores)
    cost = np.where(y > 0, C_pos, C_neg)
    if weights is not None:
        cost = cost * weights
    ww = float(w @ w)
    primal = 0.5 * ww + float(cost @ (slack if loss == "l1" else slack * slack))
    f_alpha = 0.5 * ww + 0.5 * float(alpha @ (alpha * diag)) - float(alpha.sum())
    solver = "dcd-l1 (-s 3)" if loss == "l1" else "dcd-l2 (-s 1)"
    warning = None
    if out_of_time:
        # the current point, as at the cap, but no rescue by Newton: the budget is spent
        warning = time_limit_warning(solver, iterations)
    elif not st["converged"]:
        warning = (f"{solver} reached the maximum number of iterations ({max_iter}) before "
                   f"the stopping tolerance eps={eps:g} was met (violation "
                   f"{last[0] - last[1]:.3g}); ")
        if loss == "l2":
            warning += ("LIBLINEAR switches to the primal Newton solver (-s 2) here; "
                        "use -s 2 or raise --max-iter")
        else:
            warning += "using -s 2 may be faster, or raise --max-iter"
    extra = {"pg_violation": float(last[0] - last[1]), "warning": warning, **times,
             "active_size": int(st["active"]),
             "n_bounded_sv": int(np.count_nonzero(alpha >= upper)),
             "liblinear_objective": f_alpha, "eps": eps, "max_iter": max_iter}
    if out_of_time:
        extra["stopped"] = STOPPED_TIME
    return SolverResult(w=w, iterations=iterations, primal=primal, gap=primal + f_alpha,
                        gap_kind="duality gap", converged=bool(st["converged"]), dual=-f_alpha,
                        n_sv=int(np.count_nonzero(alpha > 0)), alpha=alpha, extra=extra)


def projected_gradient(indptr, indices, data, y, w, alpha, C_pos, C_neg, loss="l2"):
    """Projected gradient of the dual over every row at (alpha, w): a KKT certificate helper."""
    box = new_box(loss, float(C_pos), float(C_neg))
    y = np.ascontiguousarray(y, dtype=np.float64)
    from svmtool.ops.sparse import csr_dot_dense
    from svmtool.solvers.dual_cd._dcd_jit import _projected_gradient

    margins = y * csr_dot_dense(indptr, indices, data, np.ascontiguousarray(w, dtype=np.float64))
    return _projected_gradient(margins, y, np.ascontiguousarray(alpha, dtype=np.float64), box)

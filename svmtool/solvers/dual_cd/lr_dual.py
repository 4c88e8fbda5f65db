"""Dual coordinate descent for L2-regularised logistic regression (LIBLINEAR -s 7, ``lr-dual``).

The maths
---------
Primal (the problem of -s 0), per-example costs ``C_i`` (``C_pos`` / ``C_neg`` by label, times
the row's instance weight ``W_i`` when the fit is given ``weights``; a row of weight 0 takes no
part, :mod:`svmtool.solvers.common.weighted`)::

    min_w  1/2 w'w + sum_i C_i log(1 + exp(-y_i w'x_i))

Dual (Yu, Huang & Lin, "Dual coordinate descent methods for logistic regression and maximum
entropy models", Machine Learning 85, 2011, Algorithm 5)::

    min_alpha  1/2 alpha'Q alpha + sum_i [alpha_i log alpha_i + (C_i - alpha_i) log(C_i - alpha_i)]
               0 < alpha_i < C_i,      Q_ij = y_i y_j x_i'x_j,      w = sum_i y_i alpha_i x_i.

Each row's variable is kept as the pair ``(alpha_i, C_i - alpha_i)`` so that neither log loses
precision near a bound.  A coordinate step minimises the one-variable function
``g(z) = z log z + (C - z) log(C - z) + a/2 (z - alpha_old)^2 + b (z - alpha_old)``
(``a = x_i'x_i``, ``b = y_i w'x_i``; written in the variable nearer its bound, which the sign of
``g'`` at the midpoint decides) by Newton's method kept inside ``(0, C)`` (a step that would leave
it multiplies ``z`` by 0.1 instead), at most 100 steps, until ``|g'(z)|`` is below an inner
tolerance that starts at 0.01 and is divided by 10 (down to ``min(1e-8, eps)``) after an outer
iteration that needed at most ``l / 10`` Newton steps.  Starting point: ``alpha_i =
min(0.001 C_i, 1e-8)``.  Every outer iteration visits all rows in a fresh random order (no
shrinking).

What ``-e`` means (LIBLINEAR's rule for -s 7, default 0.1): stop when the largest ``|g'|`` at the
start of the rows' subproblems over one outer iteration is below ``eps``; at most 300 outer
iterations (``--max-iter``).  At that cap LIBLINEAR switches to the primal Newton solver (-s 0)
from the same ``w`` with ``eps * 0.1``; so does svmtool (the registry entry's fallback,
:mod:`svmtool.solvers.common.train_one`; ``extra["notice"]`` says so).

Random order: splitmix64 from ``--seed``, or with ``--liblinear-rng`` LIBLINEAR's ``rand()``
(the glibc emulation of :mod:`svmtool.solvers.common.rng`, shared over the one-vs-rest classes
through ``params.dcd.rand_state`` as for -s 1 and 3): the model is then bit-identical to
LIBLINEAR's. Of the ``dcd`` option group only ``rand_state`` is read (no dual warm start, one
engine).

Threads: none inside a subproblem; the API may run one-vs-rest classes on threads.

Returned: :class:`svmtool.solvers.common.result.SolverResult` with ``w``, ``alpha``, ``primal`` (the
logistic objective at ``w``), ``dual`` (minus the dual objective above, plus the constant
``sum_i C_i log C_i`` so that ``dual <= primal``), ``gap = primal - dual``, and in ``extra``:
``max_gradient`` (the last iteration's), ``newton_steps``, ``warning``, ``notice``,
``solve_time``, ``eps``, ``max_iter``.
"""

import time

import numpy as np

from svmtool.labels import check_binary
from svmtool.solvers import default_eps
from svmtool.solvers.common.result import SolverResult

LIBLINEAR_MAX_ITER = 300
_ITERS_PER_CALL = 32


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        weights=None):
    """Train binary logistic regression by dual coordinate descent; see the module docstring.
    ``weights``: one instance weight a row (row i's cost ``C_class W_i``), or None."""
    from svmtool.solvers.common import weighted

    weights = weighted.checked(weights, len(indptr) - 1)
    if weighted.has_zeros(weights):
        return weighted.fit_positive(fit, indptr, indices, data, y, weights, n_features, C_pos,
                                     C_neg, params, init_w=init_w, callback=callback)
    return _fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, callback, weights)


def _fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, callback, weights):
    """:func:`fit` on rows of positive weight (or without weights)."""
    from svmtool.ops.sparse import csr_dot_dense, csr_t_dot, row_sq_norms
    from svmtool.solvers.dual_cd._lr_dual_jit import lr_dual_iterations
    from svmtool.solvers.common.batches import Batches, replay, unsigned_views
    from svmtool.solvers.common.rng import permutation_rng

    t_start = time.perf_counter()
    n_features = int(n_features)
    indices = np.ascontiguousarray(indices)
    indptr, indptr_u, indices_u = unsigned_views(indptr, indices, n_features)
    data = np.ascontiguousarray(data, dtype=np.float64)
    l = indptr.shape[0] - 1
    y, C_pos, C_neg = check_binary(l, y, C_pos, C_neg)
    eps = default_eps("lr-dual") if params.eps is None else float(params.eps)
    max_iter = LIBLINEAR_MAX_ITER if params.max_iter is None else int(params.max_iter)
    cost = np.where(y > 0, C_pos, C_neg)
    if weights is not None:
        cost = cost * weights
    xtx = row_sq_norms(indptr, data)
    alpha = np.empty(2 * l)
    alpha[0::2] = np.minimum(0.001 * cost, 1e-8)
    alpha[1::2] = cost - alpha[0::2]
    # w = sum_i y_i alpha_i x_i, added row by row as LIBLINEAR does
    w = csr_t_dot(indptr, indices, data, y * alpha[0::2], n_features)
    index = np.arange(l, dtype=np.int64)
    rng = permutation_rng(params)
    fstate = np.array([1e-2, 0.0])
    istate = np.zeros(2, dtype=np.int64)
    step = _ITERS_PER_CALL if callback is not None else max_iter
    hist = np.empty((max(step, 1), 2))
    newton_steps = 0
    last_g = np.nan
    t_loop = time.perf_counter()
    if l == 0:
        istate[1] = 1

    def run():
        return lr_dual_iterations(indptr_u, indices_u, data, y, xtx, alpha, w, index, cost, fstate,
                                  istate, rng, bool(params.liblinear_rng), eps, min(1e-8, eps),
                                  max_iter, step, hist)

    for done in Batches(run, istate, 0, 1, max_iter):
        newton_steps += int(hist[:done, 1].sum())
        if done:
            last_g = float(hist[done - 1, 0])
        if callback is not None:
            replay(callback, int(istate[0]), done, hist,
                   (("violation", float), ("newton_steps", int)), t_start)
    t_solved = time.perf_counter()
    converged = bool(istate[1])
    iterations = int(istate[0])

    a, b = alpha[0::2], alpha[1::2]
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = np.where(a > 0, a * np.log(a), 0.0) + np.where(b > 0, b * np.log(b), 0.0)
    ww = float(w @ w)
    f_alpha = 0.5 * ww + float(np.sum(ent - cost * np.log(cost)))
    margins = y * csr_dot_dense(indptr, indices, data, w)
    primal = 0.5 * ww + float(cost @ np.logaddexp(0.0, -margins))
    extra = {"max_gradient": last_g, "newton_steps": newton_steps, "warning": None,
             "notice": None, "solve_time": t_solved - t_loop, "setup_time": t_loop - t_start,
             "eps": eps, "max_iter": max_iter, "liblinear_objective": f_alpha}
    res = SolverResult(w=w, iterations=iterations, primal=primal, gap=primal + f_alpha,
                       gap_kind="duality gap", converged=converged, dual=-f_alpha,
                       n_sv=l, alpha=a.copy(), extra=extra)
    return res

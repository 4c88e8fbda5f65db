"""Dual coordinate descent for L2-regularised support vector regression (LIBLINEAR -s 12, -s 13).

The maths
---------
Primal, with real targets ``y_i``, one cost ``C`` for every row (``C_i = C W_i`` with instance
weights ``W_i``, the fit's ``weights``; a row of weight 0 takes no part) and the width ``p`` of
the insensitive tube (``-p``, default 0.1)::

    min_w  1/2 w'w + C sum_i max(0, |w'x_i - y_i| - p)^2      L2 loss, -s 12 (svr-l2-dual)
    min_w  1/2 w'w + C sum_i max(0, |w'x_i - y_i| - p)        L1 loss, -s 13 (svr-l1-dual)

Dual (Ho & Lin, "Large-scale linear support vector regression", JMLR 13, 2012), in one variable
``beta_i = alpha_i^+ - alpha_i^-`` per row::

    min_beta  f(beta) = 1/2 beta'Q beta - y'beta + p |beta|_1 + sum_i lambda_i/2 beta_i^2,
              -U_i <= beta_i <= U_i,      Q_ij = x_i'x_j,
    L2 loss: lambda_i = 1 / (2 C_i), U_i = inf;      L1 loss: lambda_i = 0, U_i = C_i,

with ``w = sum_i beta_i x_i`` kept up to date.  A coordinate step minimises the one-variable
problem ``g(d) = G d + H d^2/2 + p |beta_i + d|`` (``G = w'x_i - y_i + lambda beta_i``,
``H = x_i'x_i + lambda``) exactly, then clips to ``[-U, U]``.  The rows are visited in a fresh
random order every outer iteration; shrinking drops a row whose variable sits at 0 or at a bound
with a gradient well inside its optimality interval (LIBLINEAR's rule: beyond the largest
violation of the previous iteration), and the whole set is checked again before stopping.

What ``-e`` means (LIBLINEAR's rule for -s 12 and -s 13, default 0.1): stop when the 1-norm of the
minimum-norm subgradient has dropped to ``eps`` times its value at the first iteration,
``sum_i |grad^S f(beta)_i| <= eps sum_i |grad^S f(beta^0)_i|``; at most 300 outer iterations
(``--max-iter``).  At that cap -s 12 goes on with the primal Newton solver (-s 11) from the same
``w`` with ``eps * 0.001`` as LIBLINEAR does (its registry entry's fallback,
:mod:`svmtool.solvers.common.train_one`); -s 13 warns.

Random order: splitmix64 seeded by ``--seed``, or with ``--liblinear-rng`` LIBLINEAR's own
``rand()`` (the glibc emulation of :mod:`svmtool.solvers.common.rng`): regression rows keep the
file's order in LIBLINEAR (no class grouping), so the weights are then bit-identical to LIBLINEAR's.

Threads: none (each step depends on the previous one).  No pure-Python twin: the first run
compiles (then numba's cache loads it).

Returned: :class:`svmtool.solvers.common.result.SolverResult` with ``w``, ``alpha`` (= beta),
``primal`` (the objective above at ``w``), ``dual = -f(beta)`` (LIBLINEAR prints ``f(beta)`` as
"Objective value"), ``gap = primal - dual``, ``n_sv`` (``beta_i != 0``), and in ``extra``:
``gnorm1``, ``gnorm1_init``, ``warning``, ``solve_time``, ``eps``, ``max_iter``,
``liblinear_objective``.
"""

import time

import numpy as np

from svmtool.solvers import default_eps
from svmtool.solvers.common.result import SolverResult

LIBLINEAR_MAX_ITER = 300      # train_one()'s dual_solver_max_iter
_ITERS_PER_CALL = 64          # outer iterations per call of the jitted loop when reporting


def svr_primal(margins, y, w, C, p, loss, weights=None):
    """``1/2 w'w + C sum W_i loss_i`` from ``margins = X w`` (``weights`` None: every W_i 1)."""
    r = np.maximum(0.0, np.abs(margins - y) - p)
    r = r * r if loss == "l2" else r
    return 0.5 * float(w @ w) + C * float(np.sum(r if weights is None else weights * r))


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        loss="l2", weights=None):
    """Train a linear SVR by dual coordinate descent; see the module docstring.

    ``C_pos`` is the cost (``C_neg`` is ignored: regression has one C); ``y`` holds real targets;
    ``weights``: one instance weight a row (row i's cost ``C W_i``), or None.
    """
    from svmtool.solvers.common import weighted

    weights = weighted.checked(weights, len(indptr) - 1)
    if weighted.has_zeros(weights):
        return weighted.fit_positive(fit, indptr, indices, data, y, weights, n_features, C_pos,
                                     C_neg, params, init_w=init_w, callback=callback, loss=loss)
    return _fit(indptr, indices, data, y, n_features, C_pos, params, callback, loss, weights)


def _fit(indptr, indices, data, y, n_features, C_pos, params, callback, loss, weights):
    """:func:`fit` on rows of positive weight (or without weights)."""
    from svmtool.ops.sparse import csr_dot_dense, row_sq_norms
    from svmtool.solvers.dual_cd._svr_jit import svr_iterations
    from svmtool.solvers.common.batches import Batches, replay, unsigned_views
    from svmtool.solvers.common.rng import glibc_rand_state, splitmix_state

    t_start = time.perf_counter()
    if loss not in ("l1", "l2"):
        raise ValueError(f"loss must be 'l1' or 'l2' (got {loss!r})")
    C = float(C_pos)
    if not C > 0:
        raise ValueError(f"C must be > 0 (got {C})")
    p = float(params.svr.p)
    eps = default_eps("svr-l2-dual") if params.eps is None else float(params.eps)
    max_iter = LIBLINEAR_MAX_ITER if params.max_iter is None else int(params.max_iter)
    indices = np.ascontiguousarray(indices)
    indptr, indptr_u, indices_u = unsigned_views(indptr, indices, int(n_features))
    data = np.ascontiguousarray(data, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    l = indptr.shape[0] - 1
    if y.shape[0] != l:
        raise ValueError(f"{y.shape[0]} targets for {l} rows")
    cost = np.full(l, C) if weights is None else C * weights
    lam, ub = (0.5 / cost, np.full(l, np.inf)) if loss == "l2" else (np.zeros(l), cost)

    qd = row_sq_norms(indptr, data)
    beta = np.zeros(l)
    w = np.zeros(int(n_features))
    index = np.arange(l, dtype=np.int64)
    rng = glibc_rand_state(params.seed) if params.liblinear_rng else splitmix_state(params.seed)
    fstate = np.array([np.inf, -1.0, 0.0])
    istate = np.array([l, 0, 0], dtype=np.int64)
    step = _ITERS_PER_CALL if callback is not None else max_iter
    hist = np.empty((max(step, 1), 3))
    last = (np.nan, np.nan)
    t_loop = time.perf_counter()
    if l == 0:
        istate[2] = 1

    def run():
        return svr_iterations(indptr_u, indices_u, data, y, qd, beta, w, index, lam, ub, p, fstate,
                              istate, rng, bool(params.liblinear_rng), bool(params.shrinking),
                              eps, max_iter, step, hist)

    for done in Batches(run, istate, 1, 2, max_iter):
        if done:
            last = (float(hist[done - 1, 0]), float(hist[done - 1, 1]))
        if callback is not None:
            replay(callback, int(istate[1]), done, hist,
                   (("violation", float), ("gnorm1", float), ("active_size", int)), t_start)
    t_solved = time.perf_counter()

    converged = bool(istate[2])
    margins = csr_dot_dense(indptr, indices, data, w)
    primal = svr_primal(margins, y, w, C, p, loss, weights)
    f_beta = (0.5 * float(w @ w) + float(np.sum(p * np.abs(beta) - y * beta
                                               + 0.5 * lam * beta * beta)))
    warning = None
    if not converged:
        warning = (f"svr-{loss}-dual (-s {12 if loss == 'l2' else 13}) reached the maximum "
                   f"number of iterations ({max_iter}) before the stopping tolerance eps={eps:g} "
                   f"was met; ")
        if loss == "l2":
            warning += "LIBLINEAR switches to the primal Newton solver (-s 11) here"
        else:
            warning += "using -s 11 may be faster, or raise --max-iter"
    extra = {"gnorm1": last[1], "gnorm1_init": float(fstate[1]), "max_violation": last[0],
             "warning": warning,
             "solve_time": t_solved - t_loop, "setup_time": t_loop - t_start,
             "active_size": int(istate[0]), "liblinear_objective": f_beta, "eps": eps,
             "max_iter": max_iter}
    return SolverResult(w=w, iterations=int(istate[1]), primal=primal, gap=primal + f_beta,
                        gap_kind="duality gap", converged=converged, dual=-f_beta,
                        n_sv=int(np.count_nonzero(beta)), alpha=beta, extra=extra)

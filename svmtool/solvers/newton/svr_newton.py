"""Primal truncated Newton for L2-regularised L2-loss support vector regression (LIBLINEAR -s 11).

The maths
---------
With real targets ``y_i``, one cost ``C`` and the tube width ``p`` (``-p``, default 0.1)::

    min_w  f(w) = 1/2 w'w + C sum_i W_i max(0, |w'x_i - y_i| - p)^2

(``W_i`` the instance weights when the fit is given ``weights``, else 1; a row of weight 0 takes
no part, :mod:`svmtool.solvers.common.weighted`)

``f`` is convex and once differentiable with a piecewise-constant generalised Hessian
``H = I + 2C X_I' X_I`` over the rows outside the tube (``I = {i : |w'x_i - y_i| > p}``), the
same structure as the squared hinge of -s 2; so it is minimised by the same truncated Newton
method (:func:`svmtool.solvers.newton.newton.minimise`: preconditioned CG on ``H s = -g`` stopped by
the quadratic model's decrease, Armijo backtracking on cached ``X w`` and ``X s``), as LIBLINEAR
does with its ``NEWTON`` class (Ho & Lin, "Large-scale linear support vector regression", JMLR
2012, section 3; Galli & Lin 2021 for the line search).  The objective and its passes are
:class:`svmtool.solvers.newton.objectives.SquaredEpsObjective`.

What ``-e`` means (LIBLINEAR's rule for -s 11, default 0.0001): stop when
``|grad f(w)| <= eps |grad f(0)|`` (no class-balance factor: regression has no classes); also
after 1000 Newton iterations (``--max-iter``), a failed line search or a relative change of ``f``
below 1e-12.

-R (``params.bias_reg.regularize = False``, needs -B 1): the bias weight is left out of
``1/2 w'w``.  Warm start: ``init_w`` (the stopping rule still compares with the gradient at 0).

Threads: the row passes run on :class:`svmtool.engine.local.LocalOracle` over fixed row blocks,
so the model is the same for any ``--threads``.

Returned: :class:`svmtool.solvers.common.result.SolverResult` as
:mod:`svmtool.solvers.newton.newton` returns it (``primal = f(w)``, ``gap = |g| / |g0|``).
"""

import time

import numpy as np

from svmtool.solvers import default_eps


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        oracle=None, weights=None):
    """Train a linear L2-loss SVR; ``C_pos`` is the cost (``C_neg`` ignored), ``y`` real;
    ``oracle``: the row passes (default: a LocalOracle over the arrays); ``weights``: one
    instance weight a row (row i's cost ``C * W_i``; weight 0: the row takes no part), or
    None."""
    from svmtool.engine.local import LocalOracle
    from svmtool.solvers.common import weighted
    from svmtool.solvers.newton.objectives import make_objective

    t_start = time.perf_counter()
    if oracle is None:
        weights = weighted.checked(weights, len(indptr) - 1)
        if weighted.has_zeros(weights):
            return weighted.fit_positive(fit, indptr, indices, data, y, weights, n_features,
                                         C_pos, C_neg, params, init_w=init_w,
                                         callback=callback)
    elif weights is not None:
        raise ValueError("instance weights are taken with the arrays, not with an oracle")
    C, params, y = _setup(C_pos, params, y)
    if oracle is None:
        oracle = LocalOracle(indptr, indices, data, n_features, threads=params.threads)
    _check_targets(y, oracle.n_rows)
    cost = np.full(oracle.n_rows, C)
    if weights is not None:
        cost = cost * weights
    obj = make_objective("svr", oracle, y, cost, p=float(params.svr.p),
                         free_last=not params.bias_reg.regularize)
    return _solve(obj, params, init_w, callback, t_start)


def fit_rows(rows, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
             weights=None):
    """:func:`fit` over a row source of :mod:`svmtool.solvers.scale_out` (the blocks of a
    memory-mapped cache), which builds the objective; ``weights``: one instance weight a row
    (row i's cost ``C * W_i``; a row of weight 0 stays in the passes with cost 0), or None."""
    from svmtool.solvers.common import weighted

    t_start = time.perf_counter()
    C, params, y = _setup(C_pos, params, y)
    _check_targets(y, rows.n_rows)
    more = {}
    if weights is not None:
        more["weights"] = weighted.checked(weights, rows.n_rows)
    obj = rows.objective("svr", y, C, C, p=float(params.svr.p),
                         free_last=not params.bias_reg.regularize, **more)
    return _solve(obj, params, init_w, callback, t_start)


def _setup(C, params, y):
    from dataclasses import replace

    C = float(C)
    if not C > 0:
        raise ValueError(f"C must be > 0 (got {C})")
    if params.eps is None:
        params = replace(params, eps=default_eps("svr-l2"))
    return C, params, np.ascontiguousarray(y, dtype=np.float64).reshape(-1)


def _check_targets(y, n_rows):
    if y.shape[0] != n_rows:
        raise ValueError(f"{y.shape[0]} targets for {n_rows} rows")


def _solve(obj, params, init_w, callback, t_start):
    from svmtool.solvers.newton.newton import minimise

    eps = float(params.eps)
    res = minimise(obj, eps, params, init_w=init_w, callback=callback, t_start=t_start)
    res.extra["eps"] = eps
    res.extra["loss"] = "svr"
    return res

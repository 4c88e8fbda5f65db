"""Linear one-class SVM by two-level dual coordinate descent (LIBLINEAR -s 21, ``one-class``).

The maths
---------
Schölkopf's one-class SVM, scaled by ``nu l`` as LIBLINEAR (2.40+) solves it, with ``nu`` the
option ``-n`` (default 0.5) and the labels ignored::

    primal   min_{w, rho}  1/2 w'w - nu l rho + sum_i max(0, rho - w'x_i)
    dual     min_alpha  f(alpha) = 1/2 alpha'Q alpha,   0 <= alpha_i <= 1,  sum_i alpha_i = nu l,
             Q_ij = x_i'x_j,   w = sum_i alpha_i x_i.

With instance weights ``W_i`` (the fit's ``weights``, as LIBSVM-weights' one-class SVM takes
them) row ``i``'s hinge term is scaled by ``W_i``, ``nu l`` becomes ``nu sum_i W_i`` and the
dual's box ``0 <= alpha_i <= W_i``; the start fills the rows in order up to their bounds; a row
of weight 0 takes no part (:mod:`svmtool.solvers.common.weighted`).

A row is an outlier (predicted -1) when ``w'x - rho <= 0``.  The method is Algorithm 7 of the
supplementary material of Chou, Lin, Lin & Lin, "Dual coordinate-descent methods for linear
one-class SVM and SVDD" (SDM 2020), LIBLINEAR's ``solve_oneclass_svm``: start from the first
``floor(nu l)`` rows at 1 and the next one at the remainder; each outer iteration computes
``G_i = w'x_i`` on the active rows, stops when the maximal violation ``max_{alpha_i < 1} -G_i -
min_{alpha_i > 0} -G_i`` is below ``eps`` (over all rows), shrinks rows at a bound beyond it,
then updates up to ``max(active / 10, 1)`` pairs -- the rows of largest ``-G`` that can go up
with those of smallest ``-G`` that can go down -- each pair exactly (a two-variable step along
``e_i - e_j``, clipped to the box).  ``rho`` is the mean of ``w'x_i`` over the free rows (or the
middle of the bounds' interval if none is free).

What ``-e`` means (LIBLINEAR's rule for -s 21, default 0.01): the maximal violation above;
at most 1000 outer iterations (``--max-iter``).

Deterministic: no random numbers (the pairs are chosen by a total order on (-G_i, i)), so the
model is bit-identical to LIBLINEAR's with or without ``--liblinear-rng``.  No bias column
(``-B`` is refused, as LIBLINEAR does: ``rho`` is the offset).

Returned: :class:`svmtool.solvers.common.result.SolverResult` with ``w``, ``alpha``, ``primal`` (the
primal above at ``(w, rho)``), ``dual = -f(alpha)``, ``gap = primal - dual``, ``n_sv`` (``alpha_i >
0``) and in ``extra``: ``rho`` (what the model stores), ``violation``, ``warning``, ``solve_time``,
``eps``, ``max_iter``, ``liblinear_objective`` (``f(alpha)``).
"""

import time

import numpy as np

from svmtool.solvers import default_eps
from svmtool.solvers.common.result import SolverResult

LIBLINEAR_MAX_ITER = 1000


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        weights=None):
    """Train a linear one-class SVM (labels and C are not used); see the module docstring.
    ``weights``: one instance weight a row (row i's bound ``W_i``), or None."""
    from svmtool.solvers.common import weighted

    weights = weighted.checked(weights, len(indptr) - 1)
    if weighted.has_zeros(weights):
        return weighted.fit_positive(fit, indptr, indices, data, y, weights, n_features, C_pos,
                                     C_neg, params, init_w=init_w, callback=callback)
    return _fit(indptr, indices, data, n_features, params, callback, weights)


def _start(l, nu, weights):
    """(alpha, ub, total): the first point -- the rows in order at their bounds until
    ``total = nu sum_i W_i`` is spent (LIBLINEAR's start without weights) --, the bounds and
    that total."""
    if weights is None:
        alpha = np.zeros(l)
        top = int(nu * l)
        alpha[:top] = 1.0
        if top < l:
            alpha[top] = nu * l - top
        return alpha, np.ones(l), nu * l
    total = nu * float(weights.sum())
    before = np.concatenate(([0.0], np.cumsum(weights)[:-1]))
    alpha = np.clip(total - before, 0.0, weights)
    return alpha, weights, total


def _fit(indptr, indices, data, n_features, params, callback, weights):
    """:func:`fit` on rows of positive weight (or without weights)."""
    from svmtool.ops.sparse import csr_dot_dense, csr_t_dot, row_sq_norms
    from svmtool.solvers.dual_cd._oneclass_jit import oneclass_cd, oneclass_rho

    t_start = time.perf_counter()
    nu = float(params.oneclass.nu)
    eps = default_eps("one-class") if params.eps is None else float(params.eps)
    max_iter = LIBLINEAR_MAX_ITER if params.max_iter is None else int(params.max_iter)
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices)
    data = np.ascontiguousarray(data, dtype=np.float64)
    l = indptr.shape[0] - 1
    n = int(n_features)
    alpha, ub, total = _start(l, nu, weights)
    w = csr_t_dot(indptr, indices, data, alpha, n)
    qd = row_sq_norms(indptr, data)
    index = np.arange(l, dtype=np.int64)
    hist = np.zeros((max(max_iter, 1), 3))
    out = np.zeros(3)
    t_loop = time.perf_counter()
    if l:
        oneclass_cd(indptr, indices, data, qd, ub, alpha, w, index, eps, max_iter,
                    bool(params.shrinking), hist, out)
        rho = float(oneclass_rho(indptr, indices, data, ub, alpha, w))
    else:
        out[1] = 1.0
        rho = 0.0
    t_solved = time.perf_counter()
    iterations, converged = int(out[0]), bool(out[1])
    if callback is not None:
        for t in range(iterations):
            callback(t + 1, {"violation": float(hist[t, 0]), "active_size": int(hist[t, 1])})
    ww = float(w @ w)
    margins = csr_dot_dense(indptr, indices, data, w)
    hinge = np.maximum(0.0, rho - margins)
    primal = 0.5 * ww - total * rho + float(hinge.sum() if weights is None else weights @ hinge)
    warning = None
    if not converged:
        warning = (f"one-class (-s 21) reached the maximum number of iterations ({max_iter}) "
                   f"before the stopping tolerance eps={eps:g} was met")
    extra = {"rho": rho, "violation": float(out[2]), "warning": warning,
             "solve_time": t_solved - t_loop, "setup_time": t_loop - t_start, "eps": eps,
             "max_iter": max_iter, "liblinear_objective": 0.5 * ww, "nu": nu}
    return SolverResult(w=w, iterations=iterations, primal=primal, gap=primal + 0.5 * ww,
                        gap_kind="duality gap", converged=converged, dual=-0.5 * ww,
                        n_sv=int(np.count_nonzero(alpha > 0)), alpha=alpha, extra=extra)

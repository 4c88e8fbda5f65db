"""L1-regularised L2-loss SVM by coordinate descent (LIBLINEAR -s 5, ``l1r-l2``).

The maths
---------
With per-example costs ``C_i`` (``C_pos`` / ``C_neg`` by label, times the row's instance weight
``W_i`` when the fit is given ``weights``; a row of weight 0 takes no part,
:mod:`svmtool.solvers.common.weighted`)::

    min_w  F(w) = |w|_1 + sum_i C_i max(0, 1 - y_i w'x_i)^2

(with -R, ``params.bias_reg.regularize = False`` and -B 1, the bias weight -- the last one --
is left out of ``|w|_1``).  The method is the coordinate descent of Yuan, Chang, Hsieh & Lin,
"A comparison of optimization methods and software for large-scale L1-regularized linear
classification" (JMLR 11, 2010, section 4.1.2; LIBLINEAR's ``solve_l1r_l2_svc``): the data is
held by columns, ``b_i = 1 - y_i w'x_i`` is kept for every row, and one feature at a time

* takes the loss's first and (generalised) second derivative along ``e_j``, ``G`` and ``H``,
  over the rows with ``b_i > 0``;
* the Newton direction ``d`` minimises ``G d + H d^2/2 + |w_j + d|`` (soft thresholding);
* a backtracking line search (halving, at most 20 trials, sufficient decrease with
  ``sigma = 0.01``) accepts ``d`` first by a cheap upper bound of the loss change
  (``sum_i C_i x_ij^2 d^2 + G d``), else by the exact change over the column's rows.

Features are visited in a fresh random order each outer iteration; shrinking drops a feature at
``w_j = 0`` whose gradient is well inside ``[-1, 1]`` (by the previous iteration's largest
violation over ``l``), and the whole set is checked again before stopping.

What ``-e`` means (LIBLINEAR's rule for -s 5, default 0.01): stop when the 1-norm of the
minimum-norm subgradient has dropped to ``eps * max(min(#pos, #neg), 1) / l`` times its value at
the first iteration; at most 1000 outer iterations (``--max-iter``).

Random order: splitmix64 from ``--seed``, or with ``--liblinear-rng`` LIBLINEAR's ``rand()`` (the
glibc emulation of :mod:`svmtool.solvers.dual_cd.dcd`, shared over the one-vs-rest classes through
``params.dcd.rand_state``; only that field of the ``dcd`` group is read): the model is then
bit-identical to LIBLINEAR's, as the columns are built in LIBLINEAR's order (rows increasing).

Threads: none inside a subproblem (the API may run one-vs-rest classes on threads).  No warm
start (LIBLINEAR has none for -s 5 either).

Returned: :class:`svmtool.solvers.common.result.SolverResult` with ``w``, ``primal = F(w)``, ``gap``
= the last subgradient 1-norm over the first ("relative subgradient 1-norm"), and in ``extra``:
``nnz`` (non-zero weights), ``gnorm1``, ``gnorm1_init``, ``tolerance``, ``warning``, ``solve_time``,
``eps``, ``max_iter``.
"""

import time

import numpy as np

from svmtool.labels import check_binary
from svmtool.solvers import default_eps
from svmtool.solvers.common.result import SolverResult
from svmtool.solvers.common.batches import replay
from svmtool.solvers.common.rng import permutation_rng

LIBLINEAR_MAX_ITER = 1000


def to_columns(indptr, indices, data, n_cols):
    """CSC arrays ``(cptr, rows, vals)`` of a CSR matrix, each column's rows in increasing order
    (LIBLINEAR's ``transpose``); ``cptr`` uint64 and ``rows`` uint32, as the jitted loops take
    them (unsigned: no wrap-around code for negative indices)."""
    from svmtool.ops.sparse import csr_to_csc

    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    if indptr.shape[0] - 1 > 0xFFFFFFFF:
        raise ValueError("more than 2^32 - 1 rows are not supported by the L1 solvers")
    indices = np.ascontiguousarray(indices)
    return csr_to_csc(indptr, indices, np.ascontiguousarray(data, dtype=np.float64), int(n_cols))


def class_tolerance(eps, y):
    """LIBLINEAR's primal tolerance of the classification solvers: eps * max(min(#pos, #neg), 1)
    / l."""
    l = y.shape[0]
    pos = int(np.count_nonzero(y > 0))
    return eps * max(min(pos, l - pos), 1) / max(l, 1)


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        weights=None):
    """Train a binary L1-regularised L2-loss SVM; see the module docstring.
    ``weights``: one instance weight a row (row i's cost ``C_class W_i``), or None."""
    from svmtool.solvers.primal_cd._l1r_jit import l1r_l2_svc, weighted_column_sq
    from svmtool.solvers.common import weighted

    weights = weighted.checked(weights, len(indptr) - 1)
    if weighted.has_zeros(weights):
        return weighted.fit_positive(fit, indptr, indices, data, y, weights, n_features, C_pos,
                                     C_neg, params, init_w=init_w, callback=callback)

    t_start = time.perf_counter()
    y, C_pos, C_neg = check_binary(len(indptr) - 1, y, C_pos, C_neg)
    n = int(n_features)
    eps = default_eps("l1r-l2") if params.eps is None else float(params.eps)
    max_iter = LIBLINEAR_MAX_ITER if params.max_iter is None else int(params.max_iter)
    tol = class_tolerance(eps, y)
    cost = weighted.row_costs(y, C_pos, C_neg, weights)
    cptr, rows, vals = to_columns(indptr, indices, data, n)
    vals *= y[rows]                      # y_i x_ij, as LIBLINEAR stores them
    xj_sq = weighted_column_sq(cptr, rows, vals, cost)
    w = np.zeros(n)
    b = np.ones(y.shape[0])
    index = np.arange(n, dtype=np.int64)
    hist = np.zeros((max(max_iter, 1), 3))
    out = np.zeros(5)
    t_loop = time.perf_counter()
    l1r_l2_svc(cptr, rows, vals, y, cost, w, b, xj_sq, index, permutation_rng(params),
               bool(params.liblinear_rng), bool(params.shrinking),
               not params.bias_reg.regularize and n > 0, tol, max_iter, hist, out)
    t_solved = time.perf_counter()
    iterations, converged = int(out[0]), bool(out[1])
    if callback is not None:
        replay(callback, iterations, iterations, hist,
               (("violation", float), ("gnorm1", float), ("active_size", int)))
    reg = np.abs(w)
    if not params.bias_reg.regularize and n > 0:
        reg = reg[:-1]
    slack = np.maximum(0.0, b)
    primal = float(reg.sum()) + float(cost @ (slack * slack))
    warning = None
    if not converged:
        warning = (f"l1r-l2 (-s 5) reached the maximum number of iterations ({max_iter}) "
                   f"before the stopping tolerance eps={eps:g} was met")
    return l1r_result(w, out, primal, tol, warning, (t_start, t_loop, t_solved), eps, max_iter)


def l1r_result(w, out, primal, tol, warning, times, eps, max_iter, more=None):
    """The SolverResult of the L1-regularised solvers from their jitted loop's ``out`` (iterations,
    converged, |grad|_1 now and at the start); ``times`` = (start, loop start, loop end);
    ``more``: extras of one solver, reported after ``nnz``."""
    t_start, t_loop, t_solved = times
    rel = out[2] / out[3] if out[3] > 0 else 0.0
    extra = {"nnz": int(np.count_nonzero(w)), **(more or {}), "gnorm1": float(out[2]),
             "gnorm1_init": float(out[3]), "tolerance": tol, "warning": warning,
             "solve_time": t_solved - t_loop, "setup_time": t_loop - t_start, "eps": eps,
             "max_iter": max_iter}
    return SolverResult(w=w, iterations=int(out[0]), primal=primal, gap=float(rel),
                        gap_kind="relative subgradient 1-norm", converged=bool(out[1]),
                        extra=extra)

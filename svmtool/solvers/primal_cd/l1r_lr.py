"""L1-regularised logistic regression by newGLMNET (LIBLINEAR -s 6, ``l1r-lr``).

The maths
---------
With per-example costs ``C_i`` (``C_pos`` / ``C_neg`` by label, times the row's instance weight
``W_i`` when the fit is given ``weights``; a row of weight 0 takes no part,
:mod:`svmtool.solvers.common.weighted`)::

    min_w  F(w) = |w|_1 + sum_i C_i log(1 + exp(-y_i w'x_i))

(with -R and -B 1 the bias weight is left out of ``|w|_1``).  The method is newGLMNET (Yuan, Ho
& Lin, "An improved GLMNET for L1-regularized logistic regression", JMLR 13, 2012; LIBLINEAR's
``solve_l1r_lr``), a proximal Newton method:

* outer (Newton) iteration: at ``w`` take the loss's gradient and the diagonal of its Hessian
  (plus ``nu = 1e-12``), from ``exp(w'x_i)`` kept for every row; features at 0 whose gradient is
  well inside ``[-1, 1]`` are shrunk;
* inner problem: the quadratic model of the loss plus ``|w + d|_1``, minimised over ``d`` by
  coordinate descent (random order, each step clipped to ``[-10, 10]``, its own shrinking)
  until its subgradient 1-norm is ``inner_eps`` times the first outer one; ``inner_eps`` starts
  at 1 and is quartered whenever one CD cycle was enough; at most 1000 cycles;
* line search along the inner solution: halving until the sufficient decrease
  ``F(w + t d) - F(w) <= sigma t (grad'd + |w + d|_1 - |w|_1)`` (``sigma = 0.01``, at most 20
  trials), the loss at the trial points from ``exp(w'x_i) exp(t x_i'd)``.

What ``-e`` means (LIBLINEAR's rule for -s 6, default 0.01): stop when the minimum-norm
subgradient's 1-norm has dropped to ``eps * max(min(#pos, #neg), 1) / l`` times its value at
``w = 0``; at most 100 Newton iterations (``--max-iter``).

Random order: splitmix64 from ``--seed``, or with ``--liblinear-rng`` LIBLINEAR's ``rand()`` (the
glibc emulation, shared over the one-vs-rest classes through ``params.dcd.rand_state``; only that
field of the ``dcd`` group is read).  The order of operations is LIBLINEAR's, so the model is then
bit-identical to LIBLINEAR's wherever numba's ``exp`` and ``log`` round as the C library's do
(the tests check it on their data).

Threads: none inside a subproblem (the API may run one-vs-rest classes on threads).  No warm
start.  The model's decision values give probabilities with ``predict -b 1`` (L1R_LR).

Returned: :class:`svmtool.solvers.common.result.SolverResult` with ``w``, ``primal = F(w)``, ``gap``
= the last subgradient 1-norm over the first ("relative subgradient 1-norm"), ``iterations`` (Newton
iterations) and in ``extra``: ``nnz``, ``cd_cycles``, ``gnorm1``, ``gnorm1_init``, ``tolerance``,
``warning``, ``solve_time``, ``eps``, ``max_iter``.
"""

import time

import numpy as np

from svmtool.labels import check_binary
from svmtool.solvers import default_eps
from svmtool.solvers.common.batches import replay
from svmtool.solvers.common.rng import permutation_rng
from svmtool.solvers.primal_cd.l1r_svc import class_tolerance, l1r_result, to_columns

MAX_NEWTON_ITER = 100          # LIBLINEAR's max_newton_iter
MAX_CD_CYCLES = 1000           # LIBLINEAR's max_iter of the inner coordinate descent


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        weights=None):
    """Train binary L1-regularised logistic regression; see the module docstring.
    ``weights``: one instance weight a row (row i's cost ``C_class W_i``), or None."""
    from svmtool.ops.sparse import csr_dot_dense
    from svmtool.solvers.primal_cd._l1r_jit import l1r_lr
    from svmtool.solvers.common import weighted

    weights = weighted.checked(weights, len(indptr) - 1)
    if weighted.has_zeros(weights):
        return weighted.fit_positive(fit, indptr, indices, data, y, weights, n_features, C_pos,
                                     C_neg, params, init_w=init_w, callback=callback)

    t_start = time.perf_counter()
    y, C_pos, C_neg = check_binary(len(indptr) - 1, y, C_pos, C_neg)
    n = int(n_features)
    eps = default_eps("l1r-lr") if params.eps is None else float(params.eps)
    max_newton = MAX_NEWTON_ITER if params.max_iter is None else int(params.max_iter)
    tol = class_tolerance(eps, y)
    cost = weighted.row_costs(y, C_pos, C_neg, weights)
    cptr, rows, vals = to_columns(indptr, indices, data, n)
    w = np.zeros(n)
    index = np.arange(n, dtype=np.int64)
    hist = np.zeros((max(max_newton, 1), 3))
    out = np.zeros(6)
    free_last = not params.bias_reg.regularize and n > 0
    t_loop = time.perf_counter()
    l1r_lr(cptr, rows, vals, y, cost, w, index, permutation_rng(params), bool(params.liblinear_rng),
           bool(params.shrinking), free_last, tol, max_newton, MAX_CD_CYCLES, hist, out)
    t_solved = time.perf_counter()
    iterations, converged = int(out[0]), bool(out[1])
    if callback is not None:
        replay(callback, iterations, iterations, hist,
               (("violation", float), ("gnorm1", float), ("cd_cycles", int)))
    reg = np.abs(w[:-1] if free_last else w)
    margins = y * csr_dot_dense(np.asarray(indptr, dtype=np.int64), indices, data, w)
    primal = float(reg.sum()) + float(cost @ np.logaddexp(0.0, -margins))
    warning = None
    if not converged:
        warning = (f"l1r-lr (-s 6) reached the maximum number of Newton iterations "
                   f"({max_newton}) before the stopping tolerance eps={eps:g} was met")
    return l1r_result(w, out, primal, tol, warning, (t_start, t_loop, t_solved), eps,
                      max_newton, {"cd_cycles": int(out[4])})

"""Dual coordinate descent by block minimisation, for data that does not fit in memory.

The problem is LIBLINEAR's dual of the L2-regularised L1- or L2-loss SVM (-s 3 / -s 1)::

    min_alpha  f(alpha) = 1/2 alpha'Q alpha - e'alpha,   0 <= alpha_i <= U_i,
    Q = Qbar + D,  Qbar_ij = y_i y_j x_i'x_j,
    L1 loss: U_i = C_i, D = 0;     L2 loss: U_i = inf, D_ii = 1 / (2 C_i)

with ``w = sum_i alpha_i y_i x_i`` kept up to date, as in Hsieh et al. (ICML 2008).  ``C_i`` is
the row's class C times its instance weight ``W_i`` when the cache carries weights
(:mod:`svmtool.solvers.common.weighted`); a row of weight 0 is never visited (its alpha stays 0).

The method is the block minimisation of Yu, Hsieh, Chang and Lin, "Large linear classification
when data cannot fit in memory" (KDD 2010): the rows are split into blocks B_1..B_m (here the
blocks of :class:`svmtool.engine.blocks.BlockOracle`, sized from the memory budget and streamed
from the memory-mapped cache); an outer iteration visits the blocks in a random order, and for
each block loads its rows and solves the sub-problem in alpha_B (the other alphas fixed) by
dual coordinate descent in memory -- passes over the block's rows in random order, at most
``INNER_PASSES`` of them, until the block's projected-gradient spread is below ``eps``.  alpha is
kept for every row (8 bytes a row) and w (8 bytes a feature); one block's rows are in memory.

Stopping rule (``-e``, default 0.1 as LIBLINEAR's dual solvers): the spread ``max PG - min PG``
of the projected gradients met in the first inner pass over every block of an outer iteration
(the first pass of a block sees its gradients before the block is changed, so this is the
violation at about the current point, measured as LIBLINEAR measures it: during a pass)
is at most ``eps``; or ``max_iter`` outer iterations (default 300, as the in-memory solver).
At the cap, -s 1 goes on with the out-of-core primal Newton solver from its w (eps * 0.1), as
LIBLINEAR does in memory.

Convergence per pass is slower than the in-memory solver's: a block-wise order (blocks in random
order, rows in random order within a block) is a weaker randomisation than one permutation of
all rows: on a9a (-s 3, C 1, rows shuffled, one inner pass, 300 passes) the duality gap left
with 30 or 300 blocks was an order of magnitude above one permutation's.  The method pays off
when a pass over the data is the cost (reading from disk): each block is loaded once per outer
iteration and worked on in memory for up to ``INNER_PASSES`` passes.

Returned: ``primal`` (computed from w in one more pass), ``dual`` (= -f(alpha), LIBLINEAR's
sign), ``gap`` the PG spread of the last outer iteration, ``alpha`` for every row, ``n_sv``,
``extra``: ``blocks``, ``inner_passes``, ``passes`` (over the data), ``duality_gap``.
"""

import math
import time

import numpy as np

from svmtool._jit import njit
from svmtool.solvers import default_eps
from svmtool.solvers.common.result import STOPPED_TIME, SolverResult, time_limit_warning, time_up
from svmtool.solvers.common.weighted import checked, row_costs

DEFAULT_MAX_ITER = 300
INNER_PASSES = 5


@njit
def _block_pass(ip, ix, dv, y, qd, alpha, upper, diag, w, rows, out):
    """One DCD pass over the block rows ``rows`` (global row numbers, in that order).

    Writes (max PG, min PG) to out[0], out[1]."""
    pgmax = -np.inf
    pgmin = np.inf
    for t in range(rows.shape[0]):
        i = rows[t]
        p0 = ip[i]
        p1 = ip[i + 1]
        s = 0.0
        for k in range(p0, p1):
            s += w[ix[k]] * dv[k]
        yi = y[i]
        a = alpha[i]
        u = upper[i]
        g = yi * s - 1.0 + diag[i] * a
        if a == 0.0:
            pg = g if g < 0.0 else 0.0
        elif a >= u:
            pg = g if g > 0.0 else 0.0
        else:
            pg = g
        if pg > pgmax:
            pgmax = pg
        if pg < pgmin:
            pgmin = pg
        if pg != 0.0 and qd[i] > 0.0:
            na = a - g / qd[i]
            if na < 0.0:
                na = 0.0
            elif na > u:
                na = u
            d = (na - a) * yi
            if d != 0.0:
                alpha[i] = na
                for k in range(p0, p1):
                    w[ix[k]] += d * dv[k]
    out[0] = pgmax
    out[1] = pgmin


@njit
def _block_losses(ip, ix, dv, y, cost, w, r0, r1, squared):
    """sum over rows r0..r1 of C_i max(0, 1 - y_i w'x_i) (squared for the L2 loss)."""
    acc = 0.0
    for i in range(r0, r1):
        s = 0.0
        for k in range(ip[i], ip[i + 1]):
            s += w[ix[k]] * dv[k]
        m = 1.0 - y[i] * s
        if m > 0.0:
            acc += cost[i] * (m * m if squared else m)
    return acc


@njit
def _block_qd(ip, dv, r0, r1, diag, qd):
    for i in range(r0, r1):
        s = diag[i]
        for k in range(ip[i], ip[i + 1]):
            s += dv[k] * dv[k]
        qd[i] = s


def fit_rows(rows, y, n_features, C_pos, C_neg, params, init_w=None, callback=None, loss="l1",
             weights=None):
    """The registry's out-of-core fit of -s 1 and -s 3: :func:`fit` over the row source's
    BlockOracle (``init_w`` is ignored: the dual starts from 0)."""
    res = fit(rows.oracle, y, C_pos, C_neg, params, loss=loss, callback=callback,
              weights=weights)
    res.extra["method"] = "block minimisation of the dual"
    return res


def _costs(y, C_pos, C_neg, weights, loss):
    """(cost, upper, diag, keep): each row's C_i (the class's C times its weight), its box bound
    and diagonal term, and the rows of positive weight (None: every row, no weights).  A row of
    weight 0 keeps alpha 0: it is never visited, its bound and diagonal are 0."""
    weights = checked(weights, y.shape[0])
    cost = row_costs(y, C_pos, C_neg, weights)
    keep = None if weights is None else weights > 0
    if loss == "l2":
        upper = np.full(y.shape[0], np.inf)
        if keep is None:
            diag = 0.5 / cost
        else:
            diag = np.zeros(y.shape[0])
            np.divide(0.5, cost, out=diag, where=keep)
    else:
        upper = cost.copy()
        diag = np.zeros(y.shape[0])
    return cost, upper, diag, keep


def fit(oracle, y, C_pos, C_neg, params, loss="l1", init_w=None, callback=None, weights=None):
    """Train over a :class:`svmtool.engine.blocks.BlockOracle`; ``y`` in {-1, +1};
    ``weights``: instance weights (one a row, or None), row i's C being C_class(i) * W_i
    (:mod:`svmtool.solvers.common.weighted`)."""
    t_start = time.perf_counter()
    y = np.ascontiguousarray(y, dtype=np.float64)
    n = oracle.n_rows
    if y.shape[0] != n:
        raise ValueError(f"{y.shape[0]} labels for {n} rows")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("labels must be -1 or +1")
    eps = default_eps("dcd-l2") if params.eps is None else float(params.eps)
    max_iter = DEFAULT_MAX_ITER if params.max_iter is None else int(params.max_iter)
    cost, upper, diag, keep = _costs(y, float(C_pos), float(C_neg), weights, loss)
    alpha = np.zeros(n)
    w = np.zeros(oracle.n_features)
    qd = np.empty(n)
    rng = np.random.default_rng(params.seed)
    pg = np.empty(2)
    it = 0
    inner_total = 0
    spread = math.inf
    converged = False
    stopped = None
    warning = None
    seen_qd = np.zeros(oracle.n_blocks, dtype=bool)
    while it < max_iter:
        it += 1
        gmax, gmin = -math.inf, math.inf
        for b, r0, r1, ip, ix, dv in oracle.blocks(rng.permutation(oracle.n_blocks)):
            if not seen_qd[b]:
                _block_qd(ip, dv, r0, r1, diag, qd)
                seen_qd[b] = True
            rows = np.arange(r0, r1, dtype=np.int64)
            if keep is not None:
                rows = rows[keep[r0:r1]]
            for inner in range(INNER_PASSES):
                rng.shuffle(rows)
                _block_pass(ip, ix, dv, y, qd, alpha, upper, diag, w, rows, pg)
                inner_total += 1
                if inner == 0:
                    gmax = max(gmax, pg[0])
                    gmin = min(gmin, pg[1])
                if pg[0] - pg[1] <= eps:
                    break
        oracle.passes += 1
        spread = gmax - gmin
        if callback is not None:
            callback(it, {"pg_spread": spread, "elapsed": time.perf_counter() - t_start})
        if spread <= eps:
            converged = True
            break
        if time_up(params.deadline):
            stopped = STOPPED_TIME
            warning = time_limit_warning(params.solver or "dcd", it)
            break
    t_solved = time.perf_counter()
    ww = float(w @ w)
    losses = 0.0
    for b, r0, r1, ip, ix, dv in oracle.blocks():
        losses += _block_losses(ip, ix, dv, y, cost, w, r0, r1, loss == "l2")
    oracle.passes += 1
    primal = 0.5 * ww + losses
    dual = float(alpha.sum()) - 0.5 * ww - 0.5 * float(np.dot(diag * alpha, alpha))
    if not converged and warning is None:
        warning = (f"reached the maximum number of outer iterations ({max_iter}) before the "
                   f"stopping tolerance eps={eps:g} was met")
    extra = {"eps": eps, "loss": loss, "blocks": oracle.n_blocks, "inner_passes": inner_total,
             "passes": oracle.passes, "duality_gap": primal - dual,
             "solve_time": t_solved - t_start, "threads": 1, "warning": warning,
             "out_of_core": True}
    if stopped:
        extra["stopped"] = stopped
    return SolverResult(w=w, iterations=it, primal=primal, gap=float(spread),
                        gap_kind="max PG violation", converged=converged, dual=dual,
                        n_sv=int(np.count_nonzero(alpha)), alpha=alpha, extra=extra)

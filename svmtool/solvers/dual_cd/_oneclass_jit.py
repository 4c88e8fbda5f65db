"""The jitted loop of the one-class SVM's two-level coordinate descent (see
:mod:`svmtool.solvers.dual_cd.oneclass`).  Operations follow LIBLINEAR's ``solve_oneclass_svm`` in
its order; the pairs of an outer iteration are chosen by a total order (value, then row number), so
the result does not depend on how the selection is done and the weights are bit-identical to
LIBLINEAR's.
"""

import numpy as np

from svmtool._jit import njit


@njit
def _row_dot(indptr, indices, data, i, w):
    s = 0.0
    for k in range(indptr[i], indptr[i + 1]):
        s += w[indices[k]] * data[k]
    return s


@njit
def _sparse_dot(indptr, indices, data, i, j):
    """x_i'x_j by merging the two rows' sorted indices (LIBLINEAR's order of additions)."""
    a = indptr[i]
    a1 = indptr[i + 1]
    b = indptr[j]
    b1 = indptr[j + 1]
    s = 0.0
    while a < a1 and b < b1:
        ia = indices[a]
        ib = indices[b]
        if ia == ib:
            s += data[a] * data[b]
            a += 1
            b += 1
        elif ia > ib:
            b += 1
        else:
            a += 1
    return s


@njit
def _order(vals, rows, m):
    """Positions of the first ``m`` entries sorted by (value, row), ascending."""
    by_row = np.argsort(rows[:m], kind="mergesort")
    by_val = np.argsort(vals[:m][by_row], kind="mergesort")
    return by_row[by_val]


@njit(error_model="numpy")
def oneclass_cd(indptr, indices, data, qd, ub, alpha, w, index, eps, max_iter, shrinking, hist,
                out):
    """Run to convergence or ``max_iter``; ``ub`` float64 per row, the bound of ``alpha_i``
    (1, or the row's instance weight).  ``out`` float64[3] receives (iterations, converged,
    last violation); ``hist[t]`` = (violation, active_size, pairs updated) of iteration t."""
    l = alpha.shape[0]
    g = np.empty(l)
    up_val = np.empty(l)
    up_row = np.empty(l, dtype=np.int64)
    low_val = np.empty(l)
    low_row = np.empty(l, dtype=np.int64)
    active = l
    it = 0
    converged = False
    viol = np.inf
    while it < max_iter:
        neg_gmax = -np.inf
        neg_gmin = np.inf
        for s in range(active):
            i = index[s]
            gi = _row_dot(indptr, indices, data, i, w)
            g[i] = gi
            if alpha[i] < ub[i]:
                if -gi > neg_gmax:
                    neg_gmax = -gi
            if alpha[i] > 0.0:
                if -gi < neg_gmin:
                    neg_gmin = -gi
        viol = neg_gmax - neg_gmin
        if viol < eps:
            if active == l:
                converged = True
                break
            active = l
            continue
        if shrinking:
            s = 0
            while s < active:
                i = index[s]
                if (alpha[i] == ub[i] and -g[i] > neg_gmax) or (alpha[i] == 0.0
                                                               and -g[i] < neg_gmin):
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
                s += 1
        max_inner = max(active // 10, 1)
        n_up = 0
        n_low = 0
        for s in range(active):
            i = index[s]
            if alpha[i] < ub[i]:
                up_val[n_up] = -g[i]
                up_row[n_up] = i
                n_up += 1
            if alpha[i] > 0.0:
                low_val[n_low] = -g[i]
                low_row[n_low] = i
                n_low += 1
        max_inner = min(max_inner, min(n_up, n_low))
        up = _order(up_val, up_row, n_up)        # largest -G of I_up taken from the end
        low = _order(low_val, low_row, n_low)    # smallest -G of I_low from the start
        pairs = 0
        for s in range(max_inner):
            i = up_row[up[n_up - s - 1]]
            j = low_row[low[s]]
            if (alpha[i] == 0.0 and alpha[j] == 0.0) or (alpha[i] == ub[i]
                                                         and alpha[j] == ub[j]):
                continue
            gi = _row_dot(indptr, indices, data, i, w)
            gj = _row_dot(indptr, indices, data, j, w)
            violating = False
            if alpha[i] < ub[i] and alpha[j] > 0.0 and -gj + 1e-12 < -gi:
                violating = True
            elif alpha[i] > 0.0 and alpha[j] < ub[j] and -gi + 1e-12 < -gj:
                violating = True
            if not violating:
                continue
            qij = _sparse_dot(indptr, indices, data, i, j)
            quad = qd[i] + qd[j] - 2.0 * qij
            if quad <= 0.0:
                quad = 1e-12
            delta = (gi - gj) / quad
            old_ai = alpha[i]
            total = alpha[i] + alpha[j]
            alpha[i] = alpha[i] - delta
            alpha[j] = alpha[j] + delta
            if total > ub[i]:
                if alpha[i] > ub[i]:
                    alpha[i] = ub[i]
                    alpha[j] = total - ub[i]
            else:
                if alpha[j] < 0.0:
                    alpha[j] = 0.0
                    alpha[i] = total
            if total > ub[j]:
                if alpha[j] > ub[j]:
                    alpha[j] = ub[j]
                    alpha[i] = total - ub[j]
            else:
                if alpha[i] < 0.0:
                    alpha[i] = 0.0
                    alpha[j] = total
            delta = alpha[i] - old_ai
            for k in range(indptr[i], indptr[i + 1]):
                w[indices[k]] += delta * data[k]
            nd = -delta
            for k in range(indptr[j], indptr[j + 1]):
                w[indices[k]] += nd * data[k]
            pairs += 1
        hist[it, 0] = viol
        hist[it, 1] = float(active)
        hist[it, 2] = float(pairs)
        it += 1
    out[0] = it
    out[1] = 1.0 if converged else 0.0
    out[2] = viol
    return it


@njit
def oneclass_rho(indptr, indices, data, upper, alpha, w):
    """LIBLINEAR's rho: the mean of w'x_i over the free alpha_i, else the middle of the bounds
    (``upper`` the rows' bounds)."""
    l = alpha.shape[0]
    nr_free = 0.0
    ub = np.inf
    lb = -np.inf
    sum_free = 0.0
    for i in range(l):
        gi = _row_dot(indptr, indices, data, i, w)
        if alpha[i] == upper[i]:
            if gi > lb:
                lb = gi
        elif alpha[i] == 0.0:
            if gi < ub:
                ub = gi
        else:
            nr_free += 1.0
            sum_free += gi
    if nr_free > 0:
        return sum_free / nr_free
    return (ub + lb) / 2.0

"""Kernel rows of the SMO solver (:mod:`svmtool.solvers.kernel.smo`): K(x_d, .) of a data point into
a least-recently-used row cache, and the kernel's diagonal.

Pure array code.  A cache row holds ``K(x_d, x_e)`` (float32, as LIBSVM's ``Qfloat``) for every
data point ``e``, or only for the data points of the active variables of the current epoch (a
row computed while some variables were shrunk; it stays valid until the driver brings variables
back and bumps the epoch).  A row is computed from the dense copy of the data when there is one,
else by gathering x_d's values for every active row or, when cheaper, along x_d's columns (the
column arrays ``cp, ci, cv``); ``ktype`` 4 reads a precomputed kernel matrix.

``istate`` is the solver's integer state shared with :mod:`svmtool.solvers.kernel._smo_jit`; its
fields are named here.
"""

import numpy as np

from svmtool._jit import njit
from svmtool.ops.exp import exp_nonpositive
from svmtool.ops.kernels import (dense_dist2, dense_dot, dense_kernel_row, gather_dot,
                                 kernel_from_dot, scatter, unscatter)
from svmtool.ops.row_cache import lru_slot

# istate fields
N_ACT, COUNTER, EPOCH, CLOCK, ITERS, MISSES, UNSHRUNK, STATUS_J = range(8)


@njit
def fill_row(d, dact, nd, full, indptr, indices, data, sq, dense, denseT, use_dense, kmat,
             cp, ci, cv, ktype, gamma, coef0, degree, out, tmp, bits, buf):
    """out[e] = K(x_d, x_e) for the data points e = dact[:nd] (all of them when ``full``)."""
    l = out.shape[0]
    if ktype == 4:
        # precomputed: the kernel matrix of the training rows is given
        if full:
            for e in range(l):
                out[e] = kmat[d, e]
        else:
            for t in range(nd):
                e = dact[t]
                out[e] = kmat[d, e]
        return
    if use_dense and full:
        # the whole row, feature by feature over the feature-major copy (loops that vectorise)
        dense_kernel_row(denseT, d, l, ktype, gamma, coef0, degree, tmp, bits)
        for e in range(l):
            out[e] = tmp[e]
        return
    n_buf = buf.shape[0]
    if full and not use_dense and cp.shape[0] > 1:
        # the whole row from the feature-major (CSC) copy: for every stored value of x_d, the
        # rows that share its feature
        for e in range(l):
            tmp[e] = 0.0
        for q in range(indptr[d], indptr[d + 1]):
            f = indices[q]
            x = data[q]
            for r in range(cp[f], cp[f + 1]):
                tmp[ci[r]] += x * cv[r]
        if ktype == 2:
            sqd = sq[d]
            for e in range(l):
                tmp[e] = -gamma * (sqd + sq[e] - 2.0 * tmp[e])
            exp_nonpositive(tmp, l, bits)
            for e in range(l):
                out[e] = tmp[e]
        else:
            for e in range(l):
                out[e] = kernel_from_dot(tmp[e], 0.0, 0.0, ktype, gamma, coef0, degree, 0.0)
        return
    if use_dense:
        nf = dense.shape[1]
        for t in range(nd):
            e = dact[t]
            if ktype == 2:
                tmp[t] = -gamma * dense_dist2(dense, d, dense, e, nf)
            else:
                tmp[t] = dense_dot(dense, d, dense, e, nf)
    else:
        scatter(indptr, indices, data, d, buf)
        sqd = sq[d]
        for t in range(nd):
            e = dact[t]
            dot = gather_dot(indptr, indices, data, e, buf, n_buf)
            if ktype == 2:
                tmp[t] = -gamma * (sqd + sq[e] - 2.0 * dot)
            else:
                tmp[t] = dot
        unscatter(indptr, indices, d, buf)
    if ktype == 2:
        exp_nonpositive(tmp, nd, bits)
        for t in range(nd):
            out[dact[t]] = tmp[t]
    else:
        for t in range(nd):
            out[dact[t]] = kernel_from_dot(tmp[t], 0.0, 0.0, ktype, gamma, coef0, degree, 0.0)


@njit
def get_row(d, dact, nd, full_only, indptr, indices, data, sq, dense, denseT, use_dense, kmat,
            cp, ci, cv,
            ktype, gamma, coef0, degree, cache, slot_of, slot_row, slot_stamp, slot_epoch,
            istate, tmp, bits, buf):
    """The cache slot holding K(x_d, .) valid for the active data points (computed on a miss)."""
    istate[CLOCK] += 1
    epoch = istate[EPOCH]
    s, hit = lru_slot(d, epoch, istate[CLOCK], slot_of, slot_row, slot_stamp, slot_epoch)
    if hit:
        return s
    istate[MISSES] += 1
    l = cache.shape[1]
    full = full_only or nd == l or (use_dense and ktype != 4 and 2 * nd >= l)
    if not full and not use_dense and ktype != 4 and cp.shape[0] > 1:
        # sparse rows: by columns (work: the lengths of x_d's columns) when that beats
        # gathering x_d's values for every active row (work: their stored values)
        work = 0
        for q in range(indptr[d], indptr[d + 1]):
            f = indices[q]
            work += cp[f + 1] - cp[f]
        if work <= nd * (indptr[l] - indptr[0]) // max(l, 1):
            full = True
    fill_row(d, dact, nd, full, indptr, indices, data, sq, dense, denseT, use_dense, kmat,
             cp, ci, cv,
             ktype, gamma, coef0, degree, cache[s], tmp, bits, buf)
    slot_epoch[s] = -1 if full else epoch
    slot_stamp[s] = istate[CLOCK]
    return s


@njit
def kernel_diag(indptr, indices, data, sq, kmat, ktype, gamma, coef0, degree):
    """K(x_d, x_d) of every data point."""
    l = indptr.shape[0] - 1
    out = np.empty(l, dtype=np.float64)
    for d in range(l):
        if ktype == 4:
            out[d] = kmat[d, d]
        elif ktype == 2:
            out[d] = 1.0
        else:
            out[d] = kernel_from_dot(sq[d], sq[d], sq[d], ktype, gamma, coef0, degree, 0.0)
    return out

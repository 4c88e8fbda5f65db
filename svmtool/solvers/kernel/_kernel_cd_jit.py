"""The jitted inner loop of the kernel dual coordinate descent
(:mod:`svmtool.solvers.kernel.kernel_cd`).

Pure array code: one kernel row of a variable (into the row cache), the projected gradient, the
greedy first-order / second-order choice of the variables, the exact minimiser of the dual over a
pair's box (:func:`pair_step`, shared with the multi-class early model's cluster solver), and the
loop :func:`_cd_run` that runs a bounded number of steps over the active rows and returns to the
Python driver, which owns shrinking, rebuilds, compaction and the stopping rule.
"""

import numpy as np

from svmtool._jit import njit
from svmtool.ops.exp import exp_nonpositive
from svmtool.ops.kernels import (dense_dist2, dense_kernel, dense_kernel_row, gather_dot,
                                 kernel_from_dot, scatter, unscatter)
from svmtool.ops.kernels32 import rbf_row32
from svmtool.ops.row_cache import lru_slot

# istate fields
_N_ACT, _EPOCH, _CLOCK, _STEPS, _COUNTER, _MISSES, _BEST, _FRESH = range(8)


@njit(inline="always")
def _put_row(cache, s, vals, y, yi, kbias, n):
    """cache[s, t] = y_i y_t (vals[t] + kbias) for t < n (vals in either precision)."""
    for t in range(n):
        cache[s, t] = yi * y[t] * (vals[t] + kbias)


@njit
def _get_row(i, indptr, indices, data, sq, dense, denseT, use_dense, y, ktype, gamma, coef0,
             degree, kbias, n_buf, buf, act, n_act, n, epoch, cache, slot_of, slot_row,
             slot_stamp, slot_epoch, istate, tmp, bits, denseT32, tmp32, bits32):
    """Slot of the cache holding the row of variable i (computed on a miss).  Given a float32
    copy of the rows (``denseT32`` not empty; the cache is float32 then), whole rbf rows are
    computed from it in single precision (:func:`svmtool.ops.kernels32.rbf_row32`)."""
    istate[_CLOCK] += 1
    s, hit = lru_slot(i, epoch, istate[_CLOCK], slot_of, slot_row, slot_stamp, slot_epoch)
    if hit:
        return s
    istate[_MISSES] += 1
    yi = y[i]
    if use_dense and 2 * n_act >= n:
        # most rows active: the whole row, feature by feature over the feature-major copy
        # (contiguous loops that vectorise, about twice as fast a value as gathering the active
        # rows one by one), and the row stays valid whatever is shrunk or unshrunk later
        if ktype == 2 and denseT32.shape[0] > 0:
            rbf_row32(denseT32, i, n, gamma, tmp32, bits32)
            _put_row(cache, s, tmp32, y, yi, kbias, n)
        else:
            dense_kernel_row(denseT, i, n, ktype, gamma, coef0, degree, tmp, bits)
            _put_row(cache, s, tmp, y, yi, kbias, n)
        slot_epoch[s] = -1
        slot_stamp[s] = istate[_CLOCK]
        return s
    if ktype == 2:
        # rbf: the exponents first, then exp over all of them in one vectorised loop
        if use_dense:
            d = dense.shape[1]
            for t in range(n_act):
                tmp[t] = -gamma * dense_dist2(dense, i, dense, act[t], d)
        else:
            scatter(indptr, indices, data, i, buf)
            sqi = sq[i]
            for t in range(n_act):
                j = act[t]
                dot = gather_dot(indptr, indices, data, j, buf, n_buf)
                tmp[t] = -gamma * (sqi + sq[j] - 2.0 * dot)
            unscatter(indptr, indices, i, buf)
        exp_nonpositive(tmp, n_act, bits)
        for t in range(n_act):
            j = act[t]
            cache[s, j] = yi * y[j] * (tmp[t] + kbias)
        slot_epoch[s] = -1 if n_act == n else epoch
        slot_stamp[s] = istate[_CLOCK]
        return s
    if use_dense:
        d = dense.shape[1]
        for t in range(n_act):
            j = act[t]
            cache[s, j] = yi * y[j] * dense_kernel(dense, i, dense, j, d, ktype, gamma, coef0,
                                                   degree, kbias)
        slot_epoch[s] = -1 if n_act == n else epoch
        slot_stamp[s] = istate[_CLOCK]
        return s
    scatter(indptr, indices, data, i, buf)
    sqi = sq[i]
    for t in range(n_act):
        j = act[t]
        dot = gather_dot(indptr, indices, data, j, buf, n_buf)
        cache[s, j] = yi * y[j] * kernel_from_dot(dot, sqi, sq[j], ktype, gamma, coef0, degree,
                                                  kbias)
    unscatter(indptr, indices, i, buf)
    slot_epoch[s] = -1 if n_act == n else epoch     # -1: every entry valid
    slot_stamp[s] = istate[_CLOCK]
    return s


@njit
def proj_grad(g, a, c):
    if a <= 0.0:
        return g if g < 0.0 else 0.0
    if a >= c:
        return g if g > 0.0 else 0.0
    return g


@njit
def _select(G, alpha, C, qd, act, n_act, istate, fstate):
    best = -1
    best_score = -1.0
    mv = 0.0
    pmax = -np.inf
    pmin = np.inf
    for t in range(n_act):
        j = act[t]
        pg = proj_grad(G[j], alpha[j], C[j])
        pmax = max(pmax, pg)
        pmin = min(pmin, pg)
        if pg != 0.0:
            v = abs(pg)
            if v > mv:
                mv = v
            sc = pg * pg / qd[j]
            if sc > best_score:
                best_score = sc
                best = np.int64(j)
    istate[_BEST] = best
    fstate[0] = mv
    fstate[1] = pmax
    fstate[2] = pmin


@njit
def _q2(gi, gj, qii, qij, qjj, di, dj):
    """Change of f when (alpha_i, alpha_j) move by (di, dj)."""
    return gi * di + gj * dj + 0.5 * (qii * di * di + 2.0 * qij * di * dj + qjj * dj * dj)


@njit
def _edge(g, q, lo, hi):
    """argmin of g x + q x^2 / 2 over [lo, hi] (q <= 0 allowed: then an end point)."""
    if q > 0.0:
        return min(max(-g / q, lo), hi)
    return lo if g * lo + 0.5 * q * lo * lo <= g * hi + 0.5 * q * hi * hi else hi


@njit
def _solve2(gi, gj, qii, qij, qjj, li, ui, lj, uj):
    """Exact minimiser (di, dj) of ``_q2`` over the box [li, ui] x [lj, uj] (which holds 0).

    The unconstrained minimiser when it exists and lies in the box; otherwise the minimum lies
    on an edge, and each edge is a one-dimensional problem solved exactly.
    """
    det = qii * qjj - qij * qij
    if qii > 0.0 and det > 1e-12 * qii * qjj:
        di = (qij * gj - qjj * gi) / det
        dj = (qij * gi - qii * gj) / det
        if li <= di <= ui and lj <= dj <= uj:
            return di, dj
    best = np.inf
    bi = 0.0
    bj = 0.0
    for e in range(4):
        if e < 2:
            di = li if e == 0 else ui
            dj = _edge(gj + qij * di, qjj, lj, uj)
        else:
            dj = lj if e == 2 else uj
            di = _edge(gi + qij * dj, qii, li, ui)
        v = _q2(gi, gj, qii, qij, qjj, di, dj)
        if v < best:
            best = v
            bi = di
            bj = dj
    return bi, bj


@njit(inline="always")
def pair_step(alpha, C, G, i, j, qii, qij, qjj):
    """The exact step of the pair (alpha_i, alpha_j) in its box (:func:`_solve2`), made;
    returns the changes (di, dj) actually made (the box is exact, the clip only takes rounding
    off), by which G must move."""
    ai = alpha[i]
    aj = alpha[j]
    di, dj = _solve2(G[i], G[j], qii, qij, qjj, -ai, C[i] - ai, -aj, C[j] - aj)
    a_new = min(max(ai + di, 0.0), C[i])
    di = a_new - ai
    alpha[i] = a_new
    a_new = min(max(aj + dj, 0.0), C[j])
    dj = a_new - aj
    alpha[j] = a_new
    return di, dj


@njit
def _cd_run(indptr, indices, data, sq, dense, denseT, use_dense, y, C, qd, iqd, ktype, gamma,
            coef0, degree, kbias, n_buf,
            alpha, G, act, istate, fstate, cache, slot_of, slot_row, slot_stamp, slot_epoch,
            eps, budget, shrinking, period, denseT32):
    """CD steps until the active rows meet ``eps`` (returns 1) or ``budget`` (returns 0).

    A step: i is the next variable of the last pass (largest PG_i^2 / Q_ii); a pass over the
    active rows with Q[:, i] picks the partner j of largest decrease of the joint unclipped
    Newton step on (alpha_i, alpha_j) (rows at a bound only when that step moves them inwards);
    the pair's 2-variable box problem is solved exactly, or alpha_i alone when no partner beats
    the single step; a second pass updates G with both rows and picks the next i.

    ``denseT32``: a feature-major float32 copy of the dense rows for single precision rbf rows
    (LIBSVM's float kernel values, in a float32 ``cache``), or an empty (0, 0) array.
    """
    n = y.shape[0]
    buf = np.zeros(n_buf, dtype=np.float64)
    tmp = np.empty(n, dtype=np.float64)
    bits = np.empty(n, dtype=np.int64)
    n32 = n if denseT32.shape[0] > 0 else 0
    tmp32 = np.empty(n32, dtype=np.float32)
    bits32 = np.empty(n32, dtype=np.int32)
    if istate[_FRESH] == 1:
        _select(G, alpha, C, qd, act, istate[_N_ACT], istate, fstate)
        istate[_FRESH] = 0
    steps = 0
    while steps < budget:
        n_act = istate[_N_ACT]
        if fstate[0] <= eps or istate[_BEST] < 0:
            return 1
        if shrinking:
            istate[_COUNTER] -= 1
            if istate[_COUNTER] <= 0:
                istate[_COUNTER] = min(n, period)
                thr_hi = fstate[1] if fstate[1] > 0.0 else np.inf
                thr_lo = fstate[2] if fstate[2] < 0.0 else -np.inf
                k = 0
                for t in range(n_act):
                    j = act[t]
                    g = G[j]
                    if (alpha[j] <= 0.0 and g > thr_hi) or (alpha[j] >= C[j] and g < thr_lo):
                        continue
                    act[k] = j
                    k += 1
                n_act = k
                istate[_N_ACT] = k
        i = istate[_BEST]
        si = _get_row(i, indptr, indices, data, sq, dense, denseT, use_dense, y, ktype, gamma,
                      coef0, degree, kbias, n_buf, buf, act, n_act, n, istate[_EPOCH], cache,
                      slot_of, slot_row, slot_stamp, slot_epoch, istate, tmp, bits,
                      denseT32, tmp32, bits32)
        rowi = cache[si]
        gi = G[i]
        qii = qd[i]
        ai = alpha[i]
        # partner: twice the decrease of the joint unclipped step is
        # (Q_jj G_i^2 - 2 Q_ij G_i G_j + Q_ii G_j^2) / det, det = Q_ii Q_jj - Q_ij^2 (floored
        # like LIBSVM's tau so that near-duplicate rows stay finite); the single step's is
        # G_i^2 / Q_ii.  A partner must beat it by a margin worth its second row.
        bestj = -1
        bestg = gi * gi / qii * 1.0001
        iu = np.uint64(i)
        for t in range(n_act):
            j = act[t]
            qij = rowi[j]
            gj = G[j]
            # sign of alpha_j's move in the joint step
            mj = qij * gi - qii * gj
            a = alpha[j]
            if j == iu or (a <= 0.0 and mj < 0.0) or (a >= C[j] and mj > 0.0):
                continue
            qjj = qd[j]
            det = max(qii * qjj - qij * qij, 1e-12)
            gain = (qjj * gi * gi - 2.0 * qij * gi * gj + qii * gj * gj) / det
            if gain > bestg:
                bestg = gain
                bestj = np.int64(j)
        if bestj < 0:
            a_new = min(max(ai - gi / qii, 0.0), C[i])
            di = a_new - ai
            alpha[i] = a_new
            dj = 0.0
            rowj = rowi
        else:
            j = bestj
            di, dj = pair_step(alpha, C, G, i, j, qii, rowi[j], qd[j])
            # (slots >= 2 and row i was used last: fetching row j never evicts it)
            sj = _get_row(j, indptr, indices, data, sq, dense, denseT, use_dense, y, ktype,
                          gamma, coef0, degree, kbias, n_buf, buf, act, n_act, n,
                          istate[_EPOCH], cache, slot_of, slot_row, slot_stamp, slot_epoch,
                          istate, tmp, bits, denseT32, tmp32, bits32)
            rowj = cache[sj]
        best = -1
        best_score = 0.0
        mv = 0.0
        pmax = -np.inf
        pmin = np.inf
        for t in range(n_act):
            k = act[t]
            g = G[k] + (di * rowi[k] + dj * rowj[k])
            G[k] = g
            a = alpha[k]
            # projected gradient, branch-free (selects): capped at 0 from above at the lower
            # bound and from below at the upper one
            cap = 0.0 if a <= 0.0 else np.inf
            floor = 0.0 if a >= C[k] else -np.inf
            pg = min(max(g, floor), cap)
            sc = pg * pg * iqd[k]
            mv = max(mv, abs(pg))
            pmax = max(pmax, pg)
            pmin = min(pmin, pg)
            better = sc > best_score
            best_score = sc if better else best_score
            best = np.int64(k) if better else best
        istate[_BEST] = best
        fstate[0] = mv
        fstate[1] = pmax
        fstate[2] = pmin
        steps += 1
        istate[_STEPS] += 1
    return 0


@njit
def _diag(indptr, indices, data, sq, ktype, gamma, coef0, degree, kbias):
    n = indptr.shape[0] - 1
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = kernel_from_dot(sq[i], sq[i], sq[i], ktype, gamma, coef0, degree, kbias)
    return out

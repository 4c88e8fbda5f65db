"""The jitted loops of the L1-regularised solvers (see :mod:`svmtool.solvers.primal_cd.l1r_svc` for
-s 5 and :mod:`svmtool.solvers.primal_cd.l1r_lr` for -s 6).  Both work on the data by columns (CSC
arrays: ``cptr`` uint64, ``rows`` uint32, ``vals`` float64), run to convergence or their cap in one
call and record one row of history per outer iteration.  Floating-point operations follow
LIBLINEAR's order, so with its generator (``use_glibc``) the weights are bit-identical to
LIBLINEAR's.  The coordinate-descent loops visit the columns in random order; as the dual solvers do
with their rows (:mod:`svmtool.solvers.dual_cd._dcd_jit`), they prefetch the columns visited next
(reads only).
"""

import math

import numpy as np

from svmtool._jit import njit
from svmtool.solvers.common._prefetch_jit import _PF_FAR, _PF_NEAR, _pf, pf_row
from svmtool.solvers.common._rng_jit import shuffle as _shuffle

_FAR = int(_PF_FAR)         # as signed integers: the column positions here are int64
_NEAR = int(_PF_NEAR)


@njit(inline="always")
def _pf_column(cptr, rows, vals, index, s, active):
    """Request the start of the column visited ``_NEAR`` steps ahead and the column pointer of
    the one ``_FAR`` ahead; returns 0 (or the loaded values without a prefetch instruction)."""
    sink = 0.0
    if s + _FAR < active:
        sink += _pf(cptr, index[s + _FAR])
    if s + _NEAR < active:
        sink += pf_row(cptr, rows, vals, index[s + _NEAR])
    return sink


@njit(inline="always")
def l1_violation(g, wj, free, bound):
    """(violation, shrink) at coordinate j of |w|_1 + loss, ``g`` the loss's derivative: the
    distance of 0 from the subdifferential (|g| for the unregularised bias, ``free``); ``shrink``
    when w_j = 0 with -1 + bound < g < 1 - bound, so that it stays 0 (LIBLINEAR's shrinking;
    ``bound`` = the last pass's largest violation / l)."""
    if free:
        return abs(g), False
    gp = g + 1.0
    gn = g - 1.0
    if wj == 0.0:
        if gp < 0.0:
            return -gp, False
        if gn > 0.0:
            return gn, False
        return 0.0, gp > bound and gn < -bound
    if wj > 0.0:
        return abs(gp), False
    return abs(gn), False


@njit(inline="always")
def l1_newton_step(g, h, wj, free):
    """The Newton direction of coordinate j of |w|_1 + a quadratic model g d + h d^2 / 2 (no
    |.| term for the unregularised bias, ``free``)."""
    if free:
        return -g / h
    gp = g + 1.0
    gn = g - 1.0
    if gp < h * wj:
        return -gp / h
    if gn > h * wj:
        return -gn / h
    return -wj


@njit(error_model="numpy")
def l1r_l2_svc(cptr, rows, vals, y, cost, w, b, xj_sq, index, rng, use_glibc, shrinking,
               free_last, eps, max_iter, hist, out):
    """Coordinate descent with one-dimensional Newton directions for
    ``min_w |w|_1 + sum_i C_i max(0, 1 - y_i w'x_i)^2``.

    ``vals`` already holds ``y_i x_ij``; ``b`` = 1 - y_i w'x_i per row (ones for w = 0);
    ``xj_sq[j]`` = sum_i C_i (y_i x_ij)^2.  ``out`` float64[5] receives (iterations,
    converged, Gnorm1 of the last iteration, Gnorm1 of the first, scratch); ``hist[t]`` =
    (Gmax, Gnorm1, active_size) of iteration t.
    """
    n = w.shape[0]
    l = b.shape[0]
    sigma = 0.01
    max_ls = 20
    gmax_old = np.inf
    gnorm1_init = -1.0
    gnorm1_new = 0.0
    active = n
    it = 0
    converged = False
    sink = 0.0
    while it < max_iter:
        gmax_new = 0.0
        gnorm1_new = 0.0
        _shuffle(index, active, rng, use_glibc)
        s = 0
        while s < active:
            j = index[s]
            sink += _pf_column(cptr, rows, vals, index, s, active)
            g_loss = 0.0
            h = 0.0
            for k in range(cptr[j], cptr[j + 1]):
                ind = rows[k]
                if b[ind] > 0.0:
                    val = vals[k]
                    tmp = cost[ind] * val
                    g_loss -= tmp * b[ind]
                    h += tmp * val
            g_loss *= 2.0
            g = g_loss
            h *= 2.0
            if not (h > 1e-12):
                h = 1e-12
            free = free_last and j == n - 1
            violation, shrunk = l1_violation(g, w[j], free, gmax_old / l)
            if shrunk:
                active -= 1
                index[s] = index[active]
                index[active] = j
                continue
            if violation > gmax_new:
                gmax_new = violation
            gnorm1_new += violation
            s += 1

            d = l1_newton_step(g, h, w[j], free)
            if abs(d) < 1.0e-12:
                continue
            wj = w[j]
            if free:
                delta = g * d
            else:
                delta = abs(wj + d) - abs(wj) + g * d
            d_old = 0.0
            loss_old = 0.0
            loss_new = 0.0
            num_ls = 0
            while num_ls < max_ls:
                d_diff = d_old - d
                if free:
                    cond = -sigma * delta
                else:
                    cond = abs(wj + d) - abs(wj) - sigma * delta
                appxcond = xj_sq[j] * d * d + g_loss * d + cond
                if appxcond <= 0.0:
                    for k in range(cptr[j], cptr[j + 1]):
                        b[rows[k]] += d_diff * vals[k]
                    break
                if num_ls == 0:
                    loss_old = 0.0
                    loss_new = 0.0
                    for k in range(cptr[j], cptr[j + 1]):
                        ind = rows[k]
                        if b[ind] > 0.0:
                            loss_old += cost[ind] * b[ind] * b[ind]
                        b_new = b[ind] + d_diff * vals[k]
                        b[ind] = b_new
                        if b_new > 0.0:
                            loss_new += cost[ind] * b_new * b_new
                else:
                    loss_new = 0.0
                    for k in range(cptr[j], cptr[j + 1]):
                        ind = rows[k]
                        b_new = b[ind] + d_diff * vals[k]
                        b[ind] = b_new
                        if b_new > 0.0:
                            loss_new += cost[ind] * b_new * b_new
                cond = cond + loss_new - loss_old
                if cond <= 0.0:
                    break
                d_old = d
                d *= 0.5
                delta *= 0.5
                num_ls += 1
            w[j] += d
            if num_ls >= max_ls:
                # too many halvings: rebuild b from w
                for i in range(l):
                    b[i] = 1.0
                for i in range(n):
                    if w[i] == 0.0:
                        continue
                    for k in range(cptr[i], cptr[i + 1]):
                        b[rows[k]] += -w[i] * vals[k]

        if it == 0:
            gnorm1_init = gnorm1_new
        hist[it, 0] = gmax_new
        hist[it, 1] = gnorm1_new
        hist[it, 2] = float(active)
        it += 1
        if gnorm1_new <= eps * gnorm1_init:
            if active == n:
                converged = True
                break
            active = n
            gmax_old = np.inf
            continue
        gmax_old = gmax_new if shrinking else np.inf
    out[0] = it
    out[1] = 1.0 if converged else 0.0
    out[2] = gnorm1_new
    out[3] = gnorm1_init
    out[4] = sink           # keeps the prefetching loads alive; no meaning
    return it


@njit(error_model="numpy")
def l1r_lr(cptr, rows, vals, y, cost, w, index, rng, use_glibc, shrinking, free_last, eps,
           max_newton_iter, max_iter, hist, out):
    """newGLMNET for ``min_w |w|_1 + sum_i C_i log(1 + exp(-y_i w'x_i))`` (w starts at 0).

    ``vals`` holds the plain ``x_ij``.  ``out`` float64[6] receives (Newton iterations,
    converged, Gnorm1 of the last, Gnorm1 of the first, CD cycles in all, scratch); ``hist[t]`` =
    (Gmax, Gnorm1, CD cycles) of Newton iteration t.
    """
    n = w.shape[0]
    l = y.shape[0]
    nu = 1e-12
    inner_eps = 1.0
    sigma = 0.01
    max_ls = 20
    hdiag = np.empty(n)
    grad = np.empty(n)
    wpd = np.empty(n)
    xjneg_sum = np.zeros(n)
    xtd = np.empty(l)
    exp_wtx = np.zeros(l)
    exp_wtx_new = np.empty(l)
    tau = np.empty(l)
    dd = np.empty(l)

    w_norm = 0.0
    for j in range(n):
        w_norm += abs(w[j])
        wpd[j] = w[j]
        for k in range(cptr[j], cptr[j + 1]):
            ind = rows[k]
            val = vals[k]
            exp_wtx[ind] += w[j] * val
            if y[ind] == -1.0:
                xjneg_sum[j] += cost[ind] * val
    if free_last:
        w_norm -= abs(w[n - 1])
    for i in range(l):
        exp_wtx[i] = math.exp(exp_wtx[i])
        tau_tmp = 1.0 / (1.0 + exp_wtx[i])
        tau[i] = cost[i] * tau_tmp
        dd[i] = cost[i] * exp_wtx[i] * tau_tmp * tau_tmp

    gmax_old = np.inf
    gnorm1_init = -1.0
    gnorm1_new = 0.0
    newton_iter = 0
    cycles = 0
    converged = False
    sink = 0.0
    while newton_iter < max_newton_iter:
        gmax_new = 0.0
        gnorm1_new = 0.0
        active = n
        s = 0
        while s < active:
            j = index[s]
            sink += _pf_column(cptr, rows, vals, index, s, active)
            hdiag[j] = nu
            tmp = 0.0
            for k in range(cptr[j], cptr[j + 1]):
                ind = rows[k]
                hdiag[j] += vals[k] * vals[k] * dd[ind]
                tmp += vals[k] * tau[ind]
            grad[j] = -tmp + xjneg_sum[j]
            violation, shrunk = l1_violation(grad[j], w[j], free_last and j == n - 1,
                                             gmax_old / l)
            if shrunk:
                active -= 1
                index[s] = index[active]
                index[active] = j
                continue
            if violation > gmax_new:
                gmax_new = violation
            gnorm1_new += violation
            s += 1

        if newton_iter == 0:
            gnorm1_init = gnorm1_new
        if gnorm1_new <= eps * gnorm1_init:
            converged = True
            break

        it = 0
        qp_gmax_old = np.inf
        qp_active = active
        for i in range(l):
            xtd[i] = 0.0
        # coordinate descent on the quadratic model, over wpd
        while it < max_iter:
            qp_gmax_new = 0.0
            qp_gnorm1_new = 0.0
            _shuffle(index, qp_active, rng, use_glibc)
            s = 0
            while s < qp_active:
                j = index[s]
                sink += _pf_column(cptr, rows, vals, index, s, qp_active)
                h = hdiag[j]
                g = grad[j] + (wpd[j] - w[j]) * nu
                for k in range(cptr[j], cptr[j + 1]):
                    ind = rows[k]
                    g += vals[k] * dd[ind] * xtd[ind]
                free = free_last and j == n - 1
                violation, shrunk = l1_violation(g, wpd[j], free, qp_gmax_old / l)
                if shrunk:
                    qp_active -= 1
                    index[s] = index[qp_active]
                    index[qp_active] = j
                    continue
                z = l1_newton_step(g, h, wpd[j], free)
                if violation > qp_gmax_new:
                    qp_gmax_new = violation
                qp_gnorm1_new += violation
                s += 1
                if abs(z) < 1.0e-12:
                    continue
                if z > 10.0:
                    z = 10.0
                if z < -10.0:
                    z = -10.0
                wpd[j] += z
                for k in range(cptr[j], cptr[j + 1]):
                    xtd[rows[k]] += z * vals[k]
            it += 1
            if qp_gnorm1_new <= inner_eps * gnorm1_init:
                if qp_active == active:
                    break
                qp_active = active
                qp_gmax_old = np.inf
                continue
            qp_gmax_old = qp_gmax_new if shrinking else np.inf
        cycles += it

        delta = 0.0
        w_norm_new = 0.0
        for j in range(n):
            delta += grad[j] * (wpd[j] - w[j])
            if wpd[j] != 0.0:
                w_norm_new += abs(wpd[j])
        if free_last:
            w_norm_new -= abs(wpd[n - 1])
        delta += w_norm_new - w_norm
        negsum_xtd = 0.0
        for i in range(l):
            if y[i] == -1.0:
                negsum_xtd += cost[i] * xtd[i]
        num_ls = 0
        while num_ls < max_ls:
            cond = w_norm_new - w_norm + negsum_xtd - sigma * delta
            for i in range(l):
                exp_xtd = math.exp(xtd[i])
                exp_wtx_new[i] = exp_wtx[i] * exp_xtd
                cond += cost[i] * math.log((1.0 + exp_wtx_new[i]) / (exp_xtd + exp_wtx_new[i]))
            if cond <= 0.0:
                w_norm = w_norm_new
                for j in range(n):
                    w[j] = wpd[j]
                for i in range(l):
                    exp_wtx[i] = exp_wtx_new[i]
                    tau_tmp = 1.0 / (1.0 + exp_wtx[i])
                    tau[i] = cost[i] * tau_tmp
                    dd[i] = cost[i] * exp_wtx[i] * tau_tmp * tau_tmp
                break
            w_norm_new = 0.0
            for j in range(n):
                wpd[j] = (w[j] + wpd[j]) * 0.5
                if wpd[j] != 0.0:
                    w_norm_new += abs(wpd[j])
            if free_last:
                w_norm_new -= abs(wpd[n - 1])
            delta *= 0.5
            negsum_xtd *= 0.5
            for i in range(l):
                xtd[i] *= 0.5
            num_ls += 1
        if num_ls >= max_ls:
            # too many halvings: rebuild exp(w'x_i) from w
            for i in range(l):
                exp_wtx[i] = 0.0
            for j in range(n):
                if w[j] == 0.0:
                    continue
                for k in range(cptr[j], cptr[j + 1]):
                    exp_wtx[rows[k]] += w[j] * vals[k]
            for i in range(l):
                exp_wtx[i] = math.exp(exp_wtx[i])
        if it == 1:
            inner_eps *= 0.25
        hist[newton_iter, 0] = gmax_new
        hist[newton_iter, 1] = gnorm1_new
        hist[newton_iter, 2] = float(it)
        newton_iter += 1
        gmax_old = gmax_new if shrinking else np.inf
    out[0] = newton_iter
    out[1] = 1.0 if converged else 0.0
    out[2] = gnorm1_new
    out[3] = gnorm1_init
    out[4] = cycles
    out[5] = sink           # keeps the prefetching loads alive; no meaning
    return newton_iter


@njit
def weighted_column_sq(cptr, rows, vals, cost):
    """``sum_i C_i v_ij^2`` per column, added in row order as LIBLINEAR does."""
    n = cptr.shape[0] - 1
    out = np.zeros(n)
    for j in range(n):
        acc = 0.0
        for k in range(cptr[j], cptr[j + 1]):
            v = vals[k]
            acc += cost[rows[k]] * v * v
        out[j] = acc
    return out

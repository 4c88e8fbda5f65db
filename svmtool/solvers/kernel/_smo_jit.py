"""The jitted inner loop of the SMO solver (:mod:`svmtool.solvers.kernel.smo`).

Pure array code: the second-order working-set selection of Fan, Chen and Lin (2005) for the problem
with one equality constraint and for the nu form with two, the analytic two-variable step, the
gradient update, and shrinking.  :func:`smo_run` runs a bounded number of iterations over the
active variables and returns to the Python driver, which owns the rebuilds of the gradient of
shrunk variables, the stopping rule over all variables, progress and time limits.

Variables and data points: variable ``k`` (``n`` of them) belongs to data point ``xi[k]`` and
has sign ``y[k]``; ``Q_kl = y_k y_l K(x_xi[k], x_xi[l])``.  For classification and one-class
``xi`` is the identity; for SVR the ``2 l`` variables map onto ``l`` data points.  The kernel
rows come from the cache of :mod:`svmtool.solvers.kernel._smo_rows_jit` (no signs: K, not Q).

Return codes of :func:`smo_run`: 0 the iteration budget is spent, 1 the active variables meet
the stopping rule (the maximal violation over them is below eps, or no pair can move), 2 the
violation has fallen below 10 eps with variables shrunk for the first time: the driver rebuilds
their gradient and brings them back before the final iterations (LIBSVM's unshrink step).
"""

import numpy as np

from svmtool._jit import njit
from svmtool.solvers.kernel._smo_rows_jit import (CLOCK, COUNTER, EPOCH, ITERS, N_ACT, UNSHRUNK,
                                                  fill_row, get_row)

TAU = 1e-12
INF = np.inf


@njit(inline="always")
def cached_slot(d, slot_of, slot_epoch, slot_stamp, istate):
    """The slot of row d when it is cached and valid now (its stamp renewed as get_row renews
    it), else -1.  The loop asks this before calling get_row: a call passing get_row's 20
    arrays costs numba a reference-count increment and decrement (atomic) of each, which took
    a large share of the time of a heart_scale solve whose rows were all cached (perf: NRT_incref
    and NRT_decref); the result is the same bit for bit."""
    s = slot_of[d]
    if s >= 0:
        e = slot_epoch[s]
        if e < 0 or e == istate[EPOCH]:
            istate[CLOCK] += 1
            slot_stamp[s] = istate[CLOCK]
            return s
    return -1


@njit(inline="always")
def is_up(a, y, c):
    """In I_up: y_t a_t can grow."""
    return (y > 0.0 and a < c) or (y < 0.0 and a > 0.0)


@njit(inline="always")
def is_low(a, y, c):
    """In I_low: y_t a_t can shrink."""
    return (y > 0.0 and a > 0.0) or (y < 0.0 and a < c)


@njit(inline="always")
def second_order(diff, kii, kjj, kij):
    """The decrease -diff^2 / quad of the objective along a pair (Fan, Chen and Lin 2005,
    with quad = K_ii + K_jj - 2 K_ij, TAU where it is not positive); the smaller the better."""
    quad = kii + kjj - 2.0 * kij
    if quad <= 0.0:
        quad = TAU
    return -diff * diff / quad


@njit
def smo_run(indptr, indices, data, sq, dense, denseT, use_dense, kmat, cp, ci, cv, ktype,
            gamma, coef0,
            degree, xi, y, C, QD, alpha, G, act, dact_buf, full_only, nu, eps, shrinking,
            budget, cache, slot_of, slot_row, slot_stamp, slot_epoch, istate, buf, G_bar,
            in_gbar):
    """SMO iterations over the active variables ``act[:istate[N_ACT]]`` (see the module doc).

    ``G_bar`` holds ``sum C_k Q_tk`` over the variables k at their upper bound whose
    ``in_gbar[k]`` is set (LIBSVM's G_bar): a variable that reaches its upper bound while its
    kernel row is whole is added at once; otherwise it is left to the driver's rebuild, which
    sums the variables not in G_bar.  The rebuild of the shrunk variables' gradient then costs
    the free support vectors, not the bounded ones.
    """
    n = y.shape[0]
    l = cache.shape[1]
    rowbuf = np.empty(l, dtype=np.float32)
    tmp = np.empty(l, dtype=np.float64)
    bits = np.empty(l, dtype=np.int64)
    done = 0
    n_act = istate[N_ACT]
    nd = n_act
    if not full_only:
        for t in range(n_act):
            dact_buf[t] = xi[act[t]]
    while done < budget:
        # -- shrinking, every min(n, 1000) iterations ------------------------------------------
        istate[COUNTER] -= 1
        if istate[COUNTER] <= 0:
            istate[COUNTER] = min(n, 1000)
            if shrinking:
                code = shrink(alpha, y, C, G, act, istate, nu, eps)
                if code == 2:
                    return 2
                if istate[N_ACT] != n_act:
                    n_act = istate[N_ACT]
                    nd = n_act
                    if not full_only:
                        for t in range(n_act):
                            dact_buf[t] = xi[act[t]]
        # -- working set: i of the maximal violation, j of the largest second-order decrease ---
        if nu == 0:
            gmax = -INF
            i = -1
            for t in range(n_act):
                k = act[t]
                if is_up(alpha[k], y[k], C[k]):
                    v = -y[k] * G[k]
                    if v >= gmax:
                        gmax = v
                        i = k
            if i < 0:
                return 1
            si = cached_slot(xi[i], slot_of, slot_epoch, slot_stamp, istate)
            if si < 0:
                si = get_row(xi[i], dact_buf, nd, full_only, indptr, indices, data, sq, dense,
                             denseT, use_dense, kmat, cp, ci, cv, ktype, gamma, coef0, degree,
                             cache, slot_of, slot_row, slot_stamp, slot_epoch, istate, tmp, bits,
                             buf)
            rowi = cache[si]
            kii = QD[xi[i]]
            gmax2 = -INF
            j = -1
            best = INF
            for t in range(n_act):
                k = act[t]
                a = alpha[k]
                yk = y[k]
                if is_low(a, yk, C[k]):
                    yg = yk * G[k]
                    if yg >= gmax2:
                        gmax2 = yg
                    diff = gmax + yg
                    if diff > 0.0:
                        dk = xi[k]
                        obj = second_order(diff, kii, QD[dk], rowi[dk])
                        if obj <= best:
                            best = obj
                            j = k
            if gmax + gmax2 < eps or j < 0:
                return 1
        else:
            gmaxp = -INF
            gmaxn = -INF
            ip = -1
            inn = -1
            for t in range(n_act):
                k = act[t]
                if y[k] > 0.0:
                    if alpha[k] < C[k] and -G[k] >= gmaxp:
                        gmaxp = -G[k]
                        ip = k
                else:
                    if alpha[k] > 0.0 and G[k] >= gmaxn:
                        gmaxn = G[k]
                        inn = k
            sp = -1
            sn = -1
            if ip >= 0:
                sp = cached_slot(xi[ip], slot_of, slot_epoch, slot_stamp, istate)
                if sp < 0:
                    sp = get_row(xi[ip], dact_buf, nd, full_only, indptr, indices, data, sq, dense,
                                 denseT, use_dense, kmat, cp, ci, cv, ktype, gamma, coef0, degree,
                                 cache,
                                 slot_of, slot_row, slot_stamp, slot_epoch, istate, tmp, bits, buf)
            if inn >= 0:
                sn = cached_slot(xi[inn], slot_of, slot_epoch, slot_stamp, istate)
                if sn < 0:
                    sn = get_row(xi[inn], dact_buf, nd, full_only, indptr, indices, data, sq, dense,
                                 denseT, use_dense, kmat, cp, ci, cv, ktype, gamma, coef0, degree,
                                 cache,
                                 slot_of, slot_row, slot_stamp, slot_epoch, istate, tmp, bits, buf)
            kpp = QD[xi[ip]] if ip >= 0 else 0.0
            knn = QD[xi[inn]] if inn >= 0 else 0.0
            gmaxp2 = -INF
            gmaxn2 = -INF
            j = -1
            best = INF
            for t in range(n_act):
                k = act[t]
                a = alpha[k]
                dk = xi[k]
                if y[k] > 0.0:
                    if a > 0.0:
                        g = G[k]
                        if g >= gmaxp2:
                            gmaxp2 = g
                        diff = gmaxp + g
                        if diff > 0.0:
                            obj = second_order(diff, kpp, QD[dk], cache[sp, dk])
                            if obj <= best:
                                best = obj
                                j = k
                else:
                    if a < C[k]:
                        g = -G[k]
                        if g >= gmaxn2:
                            gmaxn2 = g
                        diff = gmaxn + g
                        if diff > 0.0:
                            obj = second_order(diff, knn, QD[dk], cache[sn, dk])
                            if obj <= best:
                                best = obj
                                j = k
            if max(gmaxp + gmaxp2, gmaxn + gmaxn2) < eps or j < 0:
                return 1
            if y[j] > 0.0:
                i = ip
                si = sp
            else:
                i = inn
                si = sn
            rowi = cache[si]
            kii = QD[xi[i]]
        # -- the step ---------------------------------------------------------------------------
        sj = cached_slot(xi[j], slot_of, slot_epoch, slot_stamp, istate)
        if sj < 0:
            sj = get_row(xi[j], dact_buf, nd, full_only, indptr, indices, data, sq, dense, denseT,
                         use_dense, kmat, cp, ci, cv, ktype, gamma, coef0, degree, cache, slot_of,
                         slot_row,
                         slot_stamp, slot_epoch, istate, tmp, bits, buf)
        rowj = cache[sj]
        rowi = cache[si]
        kjj = QD[xi[j]]
        kij = float(rowi[xi[j]])
        yi = y[i]
        yj = y[j]
        quad = kii + kjj - 2.0 * kij
        if quad <= 0.0:
            quad = TAU
        # t along alpha_i += y_i t, alpha_j -= y_j t; df/dt = y_i G_i - y_j G_j
        t_star = (yj * G[j] - yi * G[i]) / quad
        ai = alpha[i]
        aj = alpha[j]
        c_i = C[i]
        c_j = C[j]
        # feasible t: 0 <= ai + yi t <= c_i and 0 <= aj - yj t <= c_j
        if yi > 0.0:
            lo_i, hi_i = -ai, c_i - ai
        else:
            lo_i, hi_i = ai - c_i, ai
        if yj > 0.0:
            lo_j, hi_j = aj - c_j, aj
        else:
            lo_j, hi_j = -aj, c_j - aj
        lo = max(lo_i, lo_j)
        hi = min(hi_i, hi_j)
        tt = min(max(t_star, lo), hi)
        new_i = ai + yi * tt
        new_j = aj - yj * tt
        # land exactly on the bound that stopped the step
        if tt == hi:
            if hi == hi_i:
                new_i = c_i if yi > 0.0 else 0.0
                new_j = aj - yj * yi * (new_i - ai)
            else:
                new_j = 0.0 if yj > 0.0 else c_j
                new_i = ai - yi * yj * (new_j - aj)
        elif tt == lo:
            if lo == lo_i:
                new_i = 0.0 if yi > 0.0 else c_i
                new_j = aj - yj * yi * (new_i - ai)
            else:
                new_j = c_j if yj > 0.0 else 0.0
                new_i = ai - yi * yj * (new_j - aj)
        new_i = min(max(new_i, 0.0), c_i)
        new_j = min(max(new_j, 0.0), c_j)
        alpha[i] = new_i
        alpha[j] = new_j
        di = (new_i - ai) * yi
        dj = (new_j - aj) * yj
        for t in range(n_act):
            k = act[t]
            dk = xi[k]
            G[k] += y[k] * (di * rowi[dk] + dj * rowj[dk])
        for v in range(2):
            k = i if v == 0 else j
            sk = si if v == 0 else sj
            a_old = ai if v == 0 else aj
            was_up = a_old >= C[k]
            now_up = alpha[k] >= C[k]
            if was_up == now_up:
                continue
            if now_up and slot_epoch[sk] >= 0:
                in_gbar[k] = 0          # its row is not whole: the rebuild will sum it
                continue
            if not now_up and in_gbar[k] == 0:
                continue
            row = cache[sk]
            if slot_epoch[sk] >= 0:
                # leaving the upper bound with a partial row: the whole row, once
                fill_row(xi[k], dact_buf, nd, True, indptr, indices, data, sq, dense, denseT,
                         use_dense, kmat, cp, ci, cv, ktype, gamma, coef0, degree, rowbuf, tmp,
                         bits, buf)
                row = rowbuf
            w = C[k] * y[k] if now_up else -C[k] * y[k]
            for t in range(n):
                G_bar[t] += w * y[t] * row[xi[t]]
            in_gbar[k] = 1 if now_up else 0
        istate[ITERS] += 1
        done += 1
    return 0


@njit
def group_max(alpha, y, C, G, act, n_act, every):
    """The four one-sided violation bounds over the variables ``act[:n_act]`` (the first
    ``n_act`` when ``every``): g1 = max -G over y = +1 below C, g2 = max G over y = +1 above 0,
    g3 = max G over y = -1 above 0, g4 = max -G over y = -1 below C.  The nu form bounds each
    class apart (g1 + g2, g3 + g4); the form with one equality constraint joins them: max -y G
    over I_up = max(g1, g3), max y G over I_low = max(g2, g4)."""
    g1 = -INF
    g2 = -INF
    g3 = -INF
    g4 = -INF
    for t in range(n_act):
        k = t if every else act[t]
        a = alpha[k]
        g = G[k]
        if a < C[k]:
            if y[k] > 0.0:
                g1 = max(g1, -g)
            else:
                g4 = max(g4, -g)
        if a > 0.0:
            if y[k] > 0.0:
                g2 = max(g2, g)
            else:
                g3 = max(g3, g)
    return g1, g2, g3, g4


@njit
def shrink(alpha, y, C, G, act, istate, nu, eps):
    """LIBSVM's shrinking: drop bounded variables that cannot move back under the present
    violation bounds.  Returns 2 when the violation is within 10 eps for the first time and
    variables are shrunk (the driver rebuilds their gradient and brings them back first)."""
    n_act = istate[N_ACT]
    n = y.shape[0]
    g1, g2, g3, g4 = group_max(alpha, y, C, G, act, n_act, False)
    # the bound a variable at its upper (up_*) or lower (low_*) bound must beat to stay, by class
    if nu == 0:
        up_pos = max(g1, g3)
        low_pos = max(g2, g4)
        low_neg = up_pos
        up_neg = low_pos
    else:
        up_pos, low_pos, low_neg, up_neg = g1, g2, g3, g4
    if istate[UNSHRUNK] == 0 and max(up_pos + low_pos, low_neg + up_neg) <= 10.0 * eps:
        istate[UNSHRUNK] = 1
        if n_act < n:
            return 2
    m = 0
    for t in range(n_act):
        k = act[t]
        a = alpha[k]
        g = G[k]
        out = False
        if a >= C[k]:
            out = (-g > up_pos) if y[k] > 0.0 else (-g > up_neg)
        elif a <= 0.0:
            out = (g > low_pos) if y[k] > 0.0 else (g > low_neg)
        if not out:
            act[m] = k
            m += 1
    istate[N_ACT] = m
    return 0


@njit
def rho_of(alpha, y, C, G, nu):
    """LIBSVM's rho from the KKT conditions: the average of y_t G_t over the free variables,
    else the middle of the interval the bounded ones leave; the nu form returns (rho, r) from
    the two classes separately."""
    n = y.shape[0]
    if nu == 0:
        ub = INF
        lb = -INF
        s = 0.0
        nf = 0
        for k in range(n):
            yg = y[k] * G[k]
            a = alpha[k]
            if a >= C[k]:
                if y[k] < 0.0:
                    ub = min(ub, yg)
                else:
                    lb = max(lb, yg)
            elif a <= 0.0:
                if y[k] > 0.0:
                    ub = min(ub, yg)
                else:
                    lb = max(lb, yg)
            else:
                nf += 1
                s += yg
        r = s / nf if nf > 0 else (ub + lb) / 2.0
        return r, 0.0
    ub1 = INF
    ub2 = INF
    lb1 = -INF
    lb2 = -INF
    s1 = 0.0
    s2 = 0.0
    n1 = 0
    n2 = 0
    for k in range(n):
        g = G[k]
        a = alpha[k]
        if y[k] > 0.0:
            if a >= C[k]:
                lb1 = max(lb1, g)
            elif a <= 0.0:
                ub1 = min(ub1, g)
            else:
                n1 += 1
                s1 += g
        else:
            if a >= C[k]:
                lb2 = max(lb2, g)
            elif a <= 0.0:
                ub2 = min(ub2, g)
            else:
                n2 += 1
                s2 += g
    r1 = s1 / n1 if n1 > 0 else (ub1 + lb1) / 2.0
    r2 = s2 / n2 if n2 > 0 else (ub2 + lb2) / 2.0
    return (r1 - r2) / 2.0, (r1 + r2) / 2.0


@njit
def max_violation(alpha, y, C, G, nu):
    """The maximal violation over all variables (the stopping rule's measure)."""
    g1, g2, g3, g4 = group_max(alpha, y, C, G, np.empty(0, dtype=np.int64), y.shape[0], True)
    if nu == 0:
        return max(g1, g3) + max(g2, g4)
    return max(g1 + g2, g3 + g4)


@njit
def rho_and_violation(alpha, y, C, G, nu):
    """(rho, r, maximal violation) of a finished solve: :func:`rho_of` and
    :func:`max_violation` reached through one cached entry point (a command pays each entry
    point's load from numba's cache: BENCHMARKS.md, "Against the C programs")."""
    rho, r = rho_of(alpha, y, C, G, nu)
    viol = max_violation(alpha, y, C, G, nu) if y.shape[0] > 0 else 0.0
    return rho, r, viol

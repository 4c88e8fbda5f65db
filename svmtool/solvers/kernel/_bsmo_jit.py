"""The jitted local solver of the batched working-set SMO (:mod:`svmtool.solvers.kernel.bsmo`).

Pure array code.  :func:`local_smo` solves the subproblem of the ``q`` variables of one working
set, the others fixed, with the kernel block ``K`` of their data points in memory: LIBSVM's
second-order pair selection (Fan, Chen and Lin 2005; the nu form's per-sign variant) and the
analytic two-variable step, repeated until the violation inside the set falls below the local
tolerance or the iteration cap is spent.  ``G`` is the set's slice of the full gradient and is
kept exact for the set (``G_s += Q_si d_i + Q_sj d_j``); the driver updates the other variables'
gradient afterwards with one matrix product.
"""

import numpy as np

from svmtool._jit import njit
from svmtool.ops.kernels import kernel_from_dot
from svmtool.ops.exp import exp_nonpositive_to32
from svmtool.solvers.kernel._smo_jit import is_low, is_up, second_order

INF = np.inf
TAU = 1e-12


@njit(inline="always")
def _pick_i(y, C, alpha, G, want):
    """The variable of I_up with the largest -y G among the signs ``want`` (0: both)."""
    gmax = -INF
    i = -1
    for k in range(y.shape[0]):
        if want != 0 and y[k] * want < 0.0:
            continue
        if is_up(alpha[k], y[k], C[k]):
            v = -y[k] * G[k]
            if v >= gmax:
                gmax = v
                i = k
    return i, gmax


@njit(inline="always")
def _pick_j(K, y, C, alpha, G, i, gmax, want, best0, j0):
    """The variable of I_low (signs ``want``) of the largest second-order decrease with i;
    returns (j, its decrease, the largest y G over I_low)."""
    gmax2 = -INF
    j = j0
    best = best0
    for k in range(y.shape[0]):
        if want != 0 and y[k] * want < 0.0:
            continue
        if is_low(alpha[k], y[k], C[k]):
            yg = y[k] * G[k]
            if yg >= gmax2:
                gmax2 = yg
            diff = gmax + yg
            if diff > 0.0 and i >= 0:
                obj = second_order(diff, K[i, i], K[k, k], K[i, k])
                if obj <= best:
                    best = obj
                    j = k
    return j, best, gmax2


@njit
def select_pair(K, y, C, alpha, G, nu):
    """(i, j, violation) of the set: LIBSVM's second-order working set within it."""
    if nu == 0:
        i, gmax = _pick_i(y, C, alpha, G, 0)
        j, best, gmax2 = _pick_j(K, y, C, alpha, G, i, gmax, 0, INF, -1)
        return i, j, gmax + gmax2
    ip, gp = _pick_i(y, C, alpha, G, 1)
    inn, gn = _pick_i(y, C, alpha, G, -1)
    jp, bp, gp2 = _pick_j(K, y, C, alpha, G, ip, gp, 1, INF, -1)
    jn, bn, gn2 = _pick_j(K, y, C, alpha, G, inn, gn, -1, bp, jp)
    viol = max(gp + gp2, gn + gn2)
    if jn < 0:
        return -1, -1, viol
    i = ip if y[jn] > 0.0 else inn
    return i, jn, viol


@njit(inline="always")
def _clip_end(tt, lo, hi, lo_i, hi_i, ai, aj, yi, yj, c_i, c_j):
    """The pair's new values after the step t = tt, exactly on the bound that stopped it."""
    new_i = ai + yi * tt
    new_j = aj - yj * tt
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
    return min(max(new_i, 0.0), c_i), min(max(new_j, 0.0), c_j)


@njit(inline="always")
def _pair_alphas(K, y, C, alpha, G, i, j):
    """The exact minimisation along (i, j) (alpha_i += y_i t, alpha_j -= y_j t): alpha_i and
    alpha_j set; returns their changes times y (the set's gradient is not updated here)."""
    yi = y[i]
    yj = y[j]
    quad = K[i, i] + K[j, j] - 2.0 * K[i, j]
    if quad <= 0.0:
        quad = TAU
    t_star = (yj * G[j] - yi * G[i]) / quad
    ai = alpha[i]
    aj = alpha[j]
    c_i = C[i]
    c_j = C[j]
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
    new_i, new_j = _clip_end(tt, lo, hi, lo_i, hi_i, ai, aj, yi, yj, c_i, c_j)
    alpha[i] = new_i
    alpha[j] = new_j
    return (new_i - ai) * yi, (new_j - aj) * yj


@njit
def pair_step(K, y, C, alpha, G, i, j):
    """The exact minimisation along (i, j), the set's gradient updated."""
    di, dj = _pair_alphas(K, y, C, alpha, G, i, j)
    for k in range(y.shape[0]):
        G[k] += y[k] * (di * K[i, k] + dj * K[j, k])


@njit(inline="always")
def _bias(a, y, c):
    """(0 or -inf, 0 or -inf): whether the variable is in I_up, in I_low (0: it is)."""
    up = a < c if y > 0.0 else a > 0.0
    low = a > 0.0 if y > 0.0 else a < c
    return (0.0 if up else -INF), (0.0 if low else -INF)


@njit(inline="always")
def _largest(v, n, sign):
    """max(sign * v[:n]) (-inf for none; ``sign`` 1 or -1, so -_largest(v, n, -1) is the
    minimum), by four independent running maxima."""
    m0 = m1 = m2 = m3 = -INF
    k = 0
    while k + 4 <= n:
        a, b, c, d = sign * v[k], sign * v[k + 1], sign * v[k + 2], sign * v[k + 3]
        m0 = a if a > m0 else m0
        m1 = b if b > m1 else m1
        m2 = c if c > m2 else m2
        m3 = d if d > m3 else m3
        k += 4
    while k < n:
        a = sign * v[k]
        m0 = a if a > m0 else m0
        k += 1
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    return m2 if m2 > m0 else m0


@njit(inline="always")
def _last_equal(v, x):
    """The last k with v[k] == x (-1: none)."""
    at = -1
    for k in range(v.shape[0]):
        at = k if v[k] == x else at
    return at


@njit(inline="always")
def _scan(K, y, G, up_bias, low_bias, f_up, f_low, i, j, di, dj):
    """The last step's (i, j; -1: none) change added to G, then f_up = -y G over I_up and
    f_low = y G over I_low (-inf elsewhere); returns their maxima."""
    n = y.shape[0]
    if i >= 0:
        for k in range(n):
            G[k] += y[k] * (di * K[i, k] + dj * K[j, k])
    for k in range(n):
        g = y[k] * G[k]
        f_up[k] = up_bias[k] - g
        f_low[k] = low_bias[k] + g
    return _largest(f_up, n, 1.0), _largest(f_low, n, 1.0)


@njit(inline="always")
def _decreases(K, i, f_low, gmax, obj):
    """obj[k] = the second-order decrease of the pair (i, k) for k in I_low with
    gmax + y_k G_k > 0, +inf elsewhere; returns their minimum."""
    n = f_low.shape[0]
    kii = K[i, i]
    for k in range(n):
        diff = gmax + f_low[k]
        quad = kii + K[k, k] - 2.0 * K[i, k]
        quad = quad if quad > 0.0 else TAU
        obj[k] = -diff * diff / quad if diff > 0.0 else INF
    return -_largest(obj, n, -1.0)


@njit
def local_smo(K, y, C, alpha, G, nu, eps, frac, max_iter):
    """SMO over the set until its violation is below ``max(eps, frac * v0)`` (``v0`` its
    violation at the start, as ThunderSVM's local tolerance) or ``max_iter`` steps are done;
    returns (steps, v0)."""
    if nu != 0:
        return _local_smo_nu(K, y, C, alpha, G, eps, frac, max_iter)
    n = y.shape[0]
    f_up = np.empty(n)
    f_low = np.empty(n)
    obj = np.empty(n)
    up_bias = np.empty(n)
    low_bias = np.empty(n)
    for k in range(n):
        up_bias[k], low_bias[k] = _bias(alpha[k], y[k], C[k])
    steps = 0
    first = -INF
    tol = eps
    i = j = -1
    di = dj = 0.0
    while True:
        # the pair of select_pair, by whole-set passes: i the last variable of the largest
        # -y G in I_up, j the last of the smallest second-order decrease with it
        gmax, gmax2 = _scan(K, y, G, up_bias, low_bias, f_up, f_low, i, j, di, dj)
        if steps >= max_iter:
            break
        i = _last_equal(f_up, gmax) if gmax > -INF else -1
        j = -1
        if i >= 0:
            best = _decreases(K, i, f_low, gmax, obj)
            if best < INF:
                j = _last_equal(obj, best)
        viol = gmax + gmax2
        if steps == 0:
            first = viol
            tol = max(eps, frac * viol)
        if i < 0 or j < 0 or viol < tol:
            break
        di, dj = _pair_alphas(K, y, C, alpha, G, i, j)
        up_bias[i], low_bias[i] = _bias(alpha[i], y[i], C[i])
        up_bias[j], low_bias[j] = _bias(alpha[j], y[j], C[j])
        steps += 1
    return steps, first


@njit
def _local_smo_nu(K, y, C, alpha, G, eps, frac, max_iter):
    """local_smo for the nu forms (the pairs of one sign, :func:`select_pair`)."""
    steps = 0
    first = -INF
    tol = eps
    while steps < max_iter:
        i, j, viol = select_pair(K, y, C, alpha, G, 1)
        if steps == 0:
            first = viol
            tol = max(eps, frac * viol)
        if i < 0 or j < 0 or viol < tol:
            break
        pair_step(K, y, C, alpha, G, i, j)
        steps += 1
    return steps, first


@njit
def point_sums(KB, slots, d, out, lo, hi):
    """out[s] = sum_r d[r] KB[slots[r], s] for the points lo <= s < hi, over the rows with
    d[r] != 0 (the change of the kernel expansion at every data point; float32 rows, double
    sums, each in the order of r whatever the split into ranges).  Four rows a pass: the
    partial sum of a point stays in a register over them, added to in the same order.  The
    loops run over slices from 0 (an index from 0 up is known not to be negative, so no
    wrap-around test keeps LLVM from vectorising them)."""
    moved = np.empty(slots.shape[0], dtype=np.int64)
    m = 0
    for r in range(slots.shape[0]):
        if d[r] != 0.0:
            moved[m] = r
            m += 1
    o = out[lo:hi]
    n = hi - lo
    for s in range(n):
        o[s] = 0.0
    k = 0
    while k + 4 <= m:
        i0, i1, i2, i3 = moved[k], moved[k + 1], moved[k + 2], moved[k + 3]
        r0, r1 = KB[slots[i0], lo:hi], KB[slots[i1], lo:hi]
        r2, r3 = KB[slots[i2], lo:hi], KB[slots[i3], lo:hi]
        w0, w1, w2, w3 = d[i0], d[i1], d[i2], d[i3]
        for s in range(n):
            o[s] = (((o[s] + w0 * r0[s]) + w1 * r1[s]) + w2 * r2[s]) + w3 * r3[s]
        k += 4
    while k < m:
        row = KB[slots[moved[k]], lo:hi]
        dr = d[moved[k]]
        for s in range(n):
            o[s] += dr * row[s]
        k += 1


SPREAD = 2654435761      # odd: k -> k * SPREAD mod 2^32 permutes the indices below 2^32


@njit(inline="always")
def spread(k):
    """The rank by which ties go: a fixed permutation of the indices (Knuth's multiplicative
    hash) that takes tied variables from all over the data, not from its first rows (ordered
    data: a first set of the first rows of a file is a poor sample of it)."""
    return (k * SPREAD) % 4294967296


@njit
def _smallest(keys, idx, m, per, out, at):
    """out[at:at + k] = the k = min(m, per) of idx[:m] whose keys[:m] are the smallest, in
    increasing order of key, ties in increasing order of :func:`spread`; returns k."""
    if m > per:
        kth = np.partition(keys[:m].copy(), per - 1)[per - 1]
        ties = per
        for t in range(m):
            if keys[t] < kth:
                ties -= 1
        ranks = np.empty(m, dtype=np.int64)
        n_tied = 0
        for t in range(m):
            if keys[t] == kth:
                ranks[n_tied] = spread(idx[t])
                n_tied += 1
        last = np.partition(ranks[:n_tied], ties - 1)[ties - 1]
        c = 0
        for t in range(m):                  # those below the per-th key, the first at it
            if keys[t] < kth or (keys[t] == kth and spread(idx[t]) <= last):
                keys[c] = keys[t]
                idx[c] = idx[t]
                c += 1
        m = per
    ranks = np.empty(m, dtype=np.int64)
    for t in range(m):
        ranks[t] = spread(idx[t])
    by_rank = np.argsort(ranks)
    sel = np.argsort(keys[:m][by_rank], kind="mergesort")
    for t in range(m):
        out[at + t] = idx[by_rank[sel[t]]]
    return m


@njit
def select_set(alpha, y, C, G, nu, q, prev, out):
    """The next working set into out[:k], returns k: new violators first -- the variables of
    I_up of the largest -y G and those of I_low of the smallest, alternately (per sign for the
    nu form: positive up, positive low, negative up, negative low), q of them for the first set
    and q // 2 after --, then the variables of ``prev`` (the last set, in its order) not among
    them, its free ones first, up to q in all.  Ties of -y G go by :func:`spread`."""
    n = y.shape[0]
    n_new = q if prev.shape[0] == 0 else q // 2
    groups = 2 if nu != 0 else 1
    per = max(1, n_new // (2 * groups))
    keys = np.empty(n)
    idx = np.empty(n, dtype=np.int64)
    lists = np.empty(2 * groups * per, dtype=np.int64)
    lens = np.zeros(2 * groups, dtype=np.int64)
    for g in range(groups):
        want = 0.0 if groups == 1 else (1.0 if g == 0 else -1.0)
        for side in range(2):
            m = 0
            for k in range(n):
                if want != 0.0 and y[k] * want < 0.0:
                    continue
                if side == 0 and is_up(alpha[k], y[k], C[k]):
                    keys[m] = y[k] * G[k]           # the largest -y G first
                elif side == 1 and is_low(alpha[k], y[k], C[k]):
                    keys[m] = -y[k] * G[k]          # the smallest -y G first
                else:
                    continue
                idx[m] = k
                m += 1
            w = 2 * g + side
            lens[w] = _smallest(keys, idx, m, per, lists, w * per)
    chosen = np.zeros(n, dtype=np.bool_)
    k = 0
    for r in range(per):                    # the lists taken alternately, each index once
        for w in range(2 * groups):
            if k < n_new and r < lens[w]:
                v = lists[w * per + r]
                if not chosen[v]:
                    chosen[v] = True
                    out[k] = v
                    k += 1
    for free in (True, False):
        for t in range(prev.shape[0]):
            if k >= q:
                break
            v = prev[t]
            if not chosen[v] and ((alpha[v] > 0.0 and alpha[v] < C[v]) == free):
                chosen[v] = True
                out[k] = v
                k += 1
    return k


@njit
def assemble_block(KB, slots, pts, order, prev_at, Kprev, out, which, lo, hi, phase):
    """Rows a = which[lo:hi] of the set's kernel block out[a, b] = K(point of a, point of b),
    in double.  Phase 0, for variables not in the last set (``prev_at[a] < 0``): the whole row
    of the block from their kernel row (KB[slots[a]] at the positions ``pts``, read in the
    increasing order ``order``).  Phase 1, once phase 0 is done, for the variables of the last
    set: the entries with another of the last set from its block ``Kprev`` (at the positions
    ``prev_at``), those with a new one from that one's row (the kernel is symmetric).  So the
    long kernel rows are read for the new variables only."""
    q = order.shape[0]
    for t in range(lo, hi):
        a = which[t]
        if phase == 0:
            row = KB[slots[a]]
            for k in range(q):
                b = order[k]
                out[a, b] = row[pts[b]]
        else:
            pa = prev_at[a]
            for b in range(q):
                pb = prev_at[b]
                out[a, b] = Kprev[pa, pb] if pb >= 0 else out[b, a]


@njit
def rows_from_dots(D, pts, slots, sq, ktype, gamma, coef0, degree, rows, c0):
    """rows[slots[r], c0 + t] = K(x_pts[r], x_(c0 + t)) for the points c0 + t of a block from
    the dot products ``D[r, t] = x_pts[r]' x_(c0 + t)`` (one BLAS product) and the squared
    norms ``sq``, rounded to float32 (rbf: the exponents, then :func:`exp_nonpositive_to32`)."""
    n = D.shape[1]
    tmp = np.empty(n, dtype=np.float64)
    bits = np.empty(n, dtype=np.int64)
    sq_block = sq[c0:c0 + n]         # (indexed from 0: see point_sums)
    for r in range(pts.shape[0]):
        d = D[r]
        row = rows[slots[r], c0:c0 + n]
        if ktype == 2:
            sp = sq[pts[r]]
            for t in range(n):
                tmp[t] = -gamma * max(sp + sq_block[t] - 2.0 * d[t], 0.0)
            exp_nonpositive_to32(tmp, n, bits, row)
        else:
            for t in range(n):
                row[t] = kernel_from_dot(d[t], 0.0, 0.0, ktype, gamma, coef0, degree, 0.0)


@njit
def carry_rows(flat, old_m, new_m, live, keep):
    """Row j of the new layout (``new_m`` values from flat[j * new_m]) = the old row in slot
    live[j] (``old_m`` values from flat[live[j] * old_m]) at the positions ``keep``, in place:
    with live and keep increasing and new_m <= old_m, every value is read before it is
    overwritten."""
    for j in range(live.shape[0]):
        src = live[j] * old_m
        dst = j * new_m
        for i in range(new_m):
            flat[dst + i] = flat[src + keep[i]]

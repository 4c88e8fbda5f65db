"""Vector kernels of the binary hinge risk ``R = sum_i c_i max(0, 1 - y_i z_i)`` (cp, ocas, gca2,
tca), in the representation that keeps the per-row memory of these solvers small.

Labels and costs: ``lab`` is either an int8 vector of the signs ``y_i`` (one byte a row), the
costs then given by class (``c_i = c_pos`` where ``y_i > 0``, else ``c_neg``), or -- for costs
that differ within a class -- a float64 vector of the signed costs ``c_i y_i`` with ``c_pos =
c_neg = 1``.  Both give ``y_i`` and ``c_i`` exactly (:func:`_sign_cost`); numba compiles one
specialisation of each kernel per representation.  Nothing here stores a per-row cost.

Scores: OCAS keeps two score vectors only, ``zb = X w_b`` and ``zt = X w_t``; the kernels of the
line ``w_b + mu (w_t - w_b)`` take both and form ``zd_i = zt_i - zb_i`` on the fly (the same
rounding as a stored ``zd``), and the exact line search finds its breakpoints without storing
them: :func:`break_hist` counts them (and sums their slope jumps) in buckets of their bit
patterns, :func:`break_collect` copies out the few of one bucket (see
:mod:`svmtool.solvers.cutting_plane.linesearch`).  The two updates of OCAS's scores
(:func:`step_inplace`, :func:`cut_point_inplace`) compute what numpy's ``zb + mu * (zt - zb)`` and
``(1 - lam) * zb + lam * zt`` compute, in the buffer of a vector that dies there.

All kernels are pure functions of their arguments (the ``*_inplace`` ones write the buffer they
are named for); the group kernels run under :class:`svmtool.engine.local.LocalOracle` and
:class:`svmtool.engine.blocks.BlockOracle` (``bounds`` are global row limits).
"""

import numpy as np

from svmtool._jit import njit

_ONE = np.uint64(1)     # the engine hands unsigned index views (uint64 + int64 would be float)
# bit patterns of positive doubles are ordered as the doubles; from here on they are +inf / NaN
INF_BITS = 0x7FF0000000000000


@njit
def _sign_cost(lab, i, c_pos, c_neg):
    """``(y_i, c_i)`` of row ``i``: exact for int8 signs and for float64 signed costs."""
    v = lab[i]
    if v > 0:
        return 1.0, c_pos * v
    return -1.0, c_neg * -v


def signs_and_costs(y, cost, C_pos=None, C_neg=None):
    """``(lab, c_pos, c_neg)`` for labels ``y`` in {-1, +1} and costs: ``C_pos``/``C_neg``
    (``cost`` None) or a per-row ``cost`` vector -- int8 signs when that vector is constant
    within each class, else the float64 signed costs with ``c_pos = c_neg = 1``."""
    y = np.asarray(y).reshape(-1)
    if y.dtype == np.int8:
        lab = np.ascontiguousarray(y)
    else:
        lab = np.where(y > 0, 1, -1).astype(np.int8)
    if cost is None:
        return lab, float(C_pos), float(C_neg)
    cost = np.asarray(cost, dtype=np.float64).reshape(-1)
    pos = lab > 0
    cp = cost[pos][:1]
    cn = cost[~pos][:1]
    c_pos = float(cp[0]) if len(cp) else 1.0
    c_neg = float(cn[0]) if len(cn) else 1.0
    if np.all(cost == np.where(pos, c_pos, c_neg)):
        return lab, c_pos, c_neg
    return np.ascontiguousarray(cost * np.where(pos, 1.0, -1.0)), 1.0, 1.0


# --------------------------------------------------------------------------------------------
# cuts
# --------------------------------------------------------------------------------------------

@njit
def hinge_sums(z, lab, c_pos, c_neg):
    """``(risk, offset, n_violators)`` of the hinge at scores ``z``: ``risk = sum c_i max(0, 1 -
    y_i z_i)``, ``offset`` = the violators' summed cost (the cut's constant term)."""
    risk = 0.0
    off = 0.0
    nv = 0
    for i in range(z.shape[0]):
        y, c = _sign_cost(lab, i, c_pos, c_neg)
        m = 1.0 - y * z[i]
        if m > 0.0:
            risk += c * m
            off += c
            nv += 1
    return risk, off, nv


@njit
def hinge_grad_group(indptr, indices, data, bounds, b0, b1, z, lab, c_pos, c_neg, bufs):
    """``bufs[b] = sum over the violators y_i z_i < 1 of block b of c_i y_i x_i`` (a group
    kernel): ``X' v`` for the cut's coefficients ``v_i = c_i y_i``, without storing ``v``; the
    same products in the same order as ``rmatvec(v)``."""
    for b in range(b0, b1):
        buf = bufs[b]
        buf[:] = 0.0
        for i in range(bounds[b], bounds[b + 1]):
            y, c = _sign_cost(lab, i, c_pos, c_neg)
            if 1.0 - y * z[i] > 0.0:
                a = c * y
                for k in range(indptr[i], indptr[i + _ONE]):
                    buf[indices[k]] += a * data[k]
    return 0


@njit
def hinge_cut_group(indptr, indices, data, bounds, b0, b1, w, lab, c_pos, c_neg, z, bufs):
    """The hinge cut's two passes in one, over the row blocks ``b0 <= b < b1``: ``z_i = x_i . w``
    and, for the margin violators ``y_i z_i < 1``, ``bufs[b] += c_i y_i x_i``.  Each row is read
    once while it is in cache; the sums are the same, in the same order, as ``matvec`` then
    :func:`hinge_grad_group`, so the result is bit-identical to the two passes."""
    for b in range(b0, b1):
        buf = bufs[b]
        buf[:] = 0.0
        for i in range(bounds[b], bounds[b + 1]):
            s = 0.0
            for k in range(indptr[i], indptr[i + _ONE]):
                s += w[indices[k]] * data[k]
            z[i] = s
            y, c = _sign_cost(lab, i, c_pos, c_neg)
            if 1.0 - y * s > 0.0:
                a = c * y
                for k in range(indptr[i], indptr[i + _ONE]):
                    buf[indices[k]] += a * data[k]
    return 0


# --------------------------------------------------------------------------------------------
# the risk along OCAS's line (evaluated many times per line search: branch-free, fastmath)
# --------------------------------------------------------------------------------------------

@njit(fastmath=True)
def hinge_risk(z, lab, c_pos, c_neg):
    """``sum c_i max(0, 1 - y_i z_i)``."""
    r = 0.0
    for i in range(z.shape[0]):
        y, c = _sign_cost(lab, i, c_pos, c_neg)
        r += c * max(1.0 - y * z[i], 0.0)
    return r


@njit(fastmath=True)
def hinge_risk_line(zb, zt, lab, c_pos, c_neg, mu):
    """Risk at ``w_b + mu (w_t - w_b)`` from ``zb = X w_b`` and ``zt = X w_t``."""
    r = 0.0
    for i in range(zb.shape[0]):
        y, c = _sign_cost(lab, i, c_pos, c_neg)
        r += c * max(1.0 - y * (zb[i] + mu * (zt[i] - zb[i])), 0.0)
    return r


# --------------------------------------------------------------------------------------------
# breakpoints of the line: collected (sorted search, tests), counted in buckets, one bucket out
# --------------------------------------------------------------------------------------------

@njit
def _break(zb, zt, lab, c_pos, c_neg, i):
    """(t, jump, slope term) of row i: its breakpoint ``t = m / s`` (``m = 1 - y zb``, ``s = y
    (zt - zb)``), the growth ``c |s|`` of the risk's slope there and its part ``-c s`` of the
    slope at ``mu = 0``; t = 0 for a row without a breakpoint ``> 0``."""
    y, c = _sign_cost(lab, i, c_pos, c_neg)
    m = 1.0 - y * zb[i]
    s = y * (zt[i] - zb[i])
    if s == 0.0:
        return 0.0, 0.0, 0.0
    part = 0.0
    if m > 0.0 or (m == 0.0 and s < 0.0):
        part = -c * s
    t = m / s
    if not t > 0.0:
        t = 0.0
    return t, c * abs(s), part


@njit
def hinge_breakpoints(zb, zt, lab, c_pos, c_neg, keys, jumps):
    """Every breakpoint ``mu_i > 0`` of the hinge terms along the line into ``keys`` (their
    ``mu``) and ``jumps`` (by how much the risk's slope grows there, ``c_i |y_i zd_i|``).
    Returns ``(slope0, n_break)``: the risk's right derivative at ``mu = 0``, the count."""
    slope = 0.0
    nb = 0
    for i in range(zb.shape[0]):
        t, jump, part = _break(zb, zt, lab, c_pos, c_neg, i)
        slope += part
        if t > 0.0:
            keys[nb] = t
            jumps[nb] = jump
            nb += 1
    return slope, nb


@njit(error_model="numpy")
def _break_bits(zb, zt, lab, c_pos, c_neg, i, fbuf, ubuf):
    """Branch-free form of :func:`_break` for the counting passes: (t's bit pattern, whether
    row i has a breakpoint > 0, its jump, its slope term); ``fbuf``/``ubuf`` one double seen
    as float64 and as uint64 (numpy's error model: ``m / 0`` is inf or nan, not an error)."""
    y, c = _sign_cost(lab, i, c_pos, c_neg)
    m = 1.0 - y * zb[i]
    s = y * (zt[i] - zb[i])
    nz = s != 0.0
    active = nz & ((m > 0.0) | ((m == 0.0) & (s < 0.0)))      # (bitwise: no branches)
    part = -c * s if active else 0.0
    t = m / s
    fbuf[0] = t
    return ubuf[0], nz & (t > 0.0), c * abs(s), part


@njit(error_model="numpy")
def break_hist(zb, zt, lab, c_pos, c_neg, lo, shift, counts, sums):
    """Histogram of the breakpoints by bit pattern: a breakpoint whose pattern ``p`` (as uint64;
    positive doubles order as their patterns) has ``lo <= p`` and ``k = (p - lo) >> shift <
    len(counts) - 1`` adds 1 to ``counts[k]`` and its jump to ``sums[k]`` (both zeroed here;
    the last entry gathers the rest).  Returns the risk's right derivative at ``mu = 0`` (the
    same sum as :func:`hinge_breakpoints`'s).  Branch-free: twice as many rows a second as
    with the tests as branches, whose outcomes are random."""
    for k in range(counts.shape[0]):
        counts[k] = 0
        sums[k] = 0.0
    fbuf = np.empty(1, dtype=np.float64)
    ubuf = fbuf.view(np.uint64)
    lo = np.uint64(lo)
    sh = np.uint64(shift)
    rest = np.uint64(counts.shape[0] - 1)
    slope = 0.0
    for i in range(zb.shape[0]):
        p, has, jump, part = _break_bits(zb, zt, lab, c_pos, c_neg, i, fbuf, ubuf)
        slope += part
        k = (p - lo) >> sh            # p < lo wraps around to a k beyond every bucket
        k = k if has & (k < rest) else rest
        counts[k] += 1
        sums[k] += jump
    return slope


@njit(error_model="numpy")
def break_collect(zb, zt, lab, c_pos, c_neg, lo, hi, keys, jumps):
    """The breakpoints whose bit patterns lie in ``[lo, hi)`` into ``keys``/``jumps`` (as many
    as they hold but one: the last entry is scratch); returns their number."""
    fbuf = np.empty(1, dtype=np.float64)
    ubuf = fbuf.view(np.uint64)
    lo = np.uint64(lo)
    hi = np.uint64(hi)
    cap = keys.shape[0] - 1
    nb = 0
    for i in range(zb.shape[0]):
        p, has, jump, part = _break_bits(zb, zt, lab, c_pos, c_neg, i, fbuf, ubuf)
        j = min(nb, cap)
        keys[j] = fbuf[0]
        jumps[j] = jump
        nb += 1 if has & (p >= lo) & (p < hi) else 0
    return min(nb, cap)


# --------------------------------------------------------------------------------------------
# OCAS's two updates of its scores, in place (no fused multiply-add: numpy's roundings)
# --------------------------------------------------------------------------------------------

@njit
def step_inplace(zb, zt, mu):
    """``zb <- zb + mu * (zt - zb)``: the scores at the point the line search chose."""
    for i in range(zb.shape[0]):
        d = zt[i] - zb[i]
        zb[i] = zb[i] + mu * d
    return 0


@njit
def cut_point_inplace(zb, zt, lam):
    """``zt <- (1 - lam) * zb + lam * zt``: the scores at OCAS's cut point."""
    a = 1.0 - lam
    for i in range(zb.shape[0]):
        zt[i] = a * zb[i] + lam * zt[i]
    return 0


# --------------------------------------------------------------------------------------------
# the cut's passes through an engine (LocalOracle in memory, BlockOracle out of core)
# --------------------------------------------------------------------------------------------

def hinge_grad_pass(engine, z, lab, c_pos, c_neg):
    """The hinge cut's ``X' v`` over the violators at scores ``z`` (``v`` never stored), one
    ``reduce_blocks`` pass of ``engine``."""
    g = np.empty(engine.n_features, dtype=np.float64)
    engine.reduce_blocks(hinge_grad_group, g, z, lab, float(c_pos), float(c_neg))
    return g


def hinge_cut_pass(engine, w, lab, c_pos, c_neg, z=None):
    """``(z, g)``: the scores ``z = X w`` (into ``z`` when given) and :func:`hinge_grad_pass` at
    them, in one pass of ``engine``."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if z is None:
        z = np.empty(engine.n_rows, dtype=np.float64)
    g = np.empty(engine.n_features, dtype=np.float64)
    engine.reduce_blocks(hinge_cut_group, g, w, lab, float(c_pos), float(c_neg), z)
    return z, g

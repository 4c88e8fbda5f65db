"""The jitted kernels of the svmlight writer (:mod:`svmtool.io.writer`, whose docstring gives the
method): the shortest decimal digits of every value that reads back exactly, and the pass that
writes a block of rows as bytes into a preallocated buffer.
"""

import math

import numpy as np

from svmtool._jit import c_strtod, njit

FAIL = np.int32(1 << 30)          # exponent marker of a value formatted in Python

_P10 = np.array([float(10 ** k) for k in range(23)], dtype=np.float64)
_TWO53 = 9007199254740992.0
_SPLIT = 134217729.0              # 2**27 + 1: Veltkamp's split of a double into two halves

MAX_FLOAT_CHARS = 24              # "-1.2345678901234567e-308"
BLOCK_NNZ = 1 << 18               # values per block
BLOCK_ROWS = 1 << 16              # rows per block

# Helpers below take and return scalars only: a jitted helper that takes an array pays an atomic
# reference-count increment and decrement per call (numba does not prune them across branches),
# which would cost more than the formatting itself.  The byte writing is therefore written out
# inside the two kernels.


@njit
def _two_prod(a, b):
    """(p, e) with p = fl(a * b) and p + e == a * b exactly (no overflow, no underflow)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


@njit
def _nearest_int(hi, lo):
    """An integer nearest to hi + lo (ties to even when hi is an integer), 0 <= hi < 2**62."""
    f = math.floor(hi)
    r = (hi - f) + lo
    k = math.floor(r)
    d = r - k
    m = np.int64(f) + np.int64(k)
    if d > 0.5 or (d == 0.5 and (m & 1) == 1):
        m += 1
    return m


@njit
def _strip(m, e10):
    """Drop the trailing zeros of m >= 0 into the exponent (8, 4, 2 at a time, then 1s)."""
    if m == 0:
        return m, 0
    if m % 100000000 == 0:
        m //= 100000000
        e10 += 8
    if m % 10000 == 0:
        m //= 10000
        e10 += 4
    if m % 100 == 0:
        m //= 100
        e10 += 2
    while m % 10 == 0:
        m //= 10
        e10 += 1
    return m, e10


@njit
def _seventeen(a, s):
    """The 17-digit nearest decimal of a, m * 10**-s with m in [1e16, 1e17): (m, e10, ok)."""
    hi = 0.0
    lo = 0.0
    for _ in range(3):
        if s < 0 or s > 22:
            return np.int64(0), FAIL, False
        hi, lo = _two_prod(a, _P10[s])
        if hi < 1e16:
            s += 1
        elif hi >= 1e17:
            s -= 1
        else:
            break
    if not (1e16 <= hi < 1e17):
        return np.int64(0), FAIL, False
    m, e10 = _strip(_nearest_int(hi, lo), -s)
    return m, e10, True


@njit
def _shortest(a):
    """Shortest digits of a finite a > 0.

    Returns (m, e10, code): code 0 -- a == m * 10**e10 (m without trailing zeros); code 1 --
    not found here (Python fallback); code 2 -- m * 10**e10 is the 16-digit candidate with
    m >= 2**53, to be tested with strtod (m not stripped), else use :func:`_seventeen`
    with s = 1 - e10.
    """
    if a < _TWO53 and a == math.floor(a):
        m, e10 = _strip(np.int64(a), 0)
        return m, e10, 0
    e = int(math.floor(math.log10(a)))
    s = 0
    t = 0.0
    for _ in range(3):
        s = 14 - e
        if s > 22 or s < -22:
            return np.int64(0), FAIL, 1
        t = a * _P10[s] if s >= 0 else a / _P10[-s]
        if t < 1e14:
            e -= 1
        elif t >= 1e15:
            e += 1
        else:
            break
    if not (1e14 <= t < 1e15):
        return np.int64(0), FAIL, 1
    m = np.int64(t + 0.5)
    x = float(m)
    if (x / _P10[s] if s >= 0 else x * _P10[-s]) == a:
        m, e10 = _strip(m, -s)
        return m, e10, 0
    s = 15 - e
    if s < 0 or s > 22:
        return np.int64(0), FAIL, 1
    hi, lo = _two_prod(a, _P10[s])
    if 1e15 <= hi < 1e16:
        m = _nearest_int(hi, lo)
        if m >= 9007199254740992:
            return m, -s, 2
        if float(m) / _P10[s] == a:
            m, e10 = _strip(m, -s)
            return m, e10, 0
    m, e10, ok = _seventeen(a, s + 1)
    return m, e10, 0 if ok else 1


@njit
def shortest_digits(vals, m_out, e_out, tmp):
    """For each value: m_out, e_out with |v| == m * 10**e read back exactly (shortest m).

    Zeros of either sign give (0, 0).  Values left to Python get e_out == FAIL; returns how many.
    ``tmp`` is a scratch byte buffer (at least 32 bytes) for strtod.
    """
    fails = 0
    for i in range(len(vals)):
        a = abs(vals[i])
        m = np.int64(0)
        e10 = np.int32(0)
        if a == 0.0:
            pass
        elif a < np.inf:
            m, e10, code = _shortest(a)
            if code == 2:
                # write "<m>e-<s>" and let strtod decide
                s = -e10
                n = 0
                x = m
                while x > 0:
                    n += 1
                    x //= 10
                x = m
                for k in range(n - 1, -1, -1):
                    tmp[k] = 48 + x % 10
                    x //= 10
                tmp[n] = 101
                tmp[n + 1] = 45
                tmp[n + 2] = 48 + s // 10
                tmp[n + 3] = 48 + s % 10
                tmp[n + 4] = 0
                if c_strtod(tmp.ctypes.data, 0) == a:
                    m, e10 = _strip(m, e10)
                else:
                    m, e10, ok = _seventeen(a, s + 1)
                    if not ok:
                        e10 = FAIL
            elif code == 1:
                e10 = FAIL
        else:
            e10 = FAIL
        m_out[i] = m
        e_out[i] = e10
        if e10 == FAIL:
            fails += 1
    return fails


@njit
def write_rows(indptr, indices, base, vals, vm, ve, fb_blob, fb_off,
               y, ym, ye, yfb_blob, yfb_off, qid, has_qid, cblob, coff, has_comments, out):
    """Write rows as svmlight text into ``out``; return the number of bytes written.

    ``indptr`` holds the block's row pointers (absolute); ``indices``, ``vals``, ``vm``, ``ve``
    start at ``indptr[0]``.  ``base`` is added to each column (1 for one-based files).
    ``vm``/``ve`` (``ym``/``ye`` for labels) are the digits from :func:`shortest_digits`; the
    values marked FAIL take the next string of ``fb_blob`` (``yfb_blob``) in order.
    """
    pos = 0
    fk = 0
    yk = 0
    lo = indptr[0]
    for r in range(len(indptr) - 1):
        j0 = indptr[r] - lo
        j1 = indptr[r + 1] - lo
        # item -2: the label, -1: the qid, j >= 0: feature j (index, then value)
        for j in range(-2, j1 - j0):
            # ---- the integer part of the item (qid or feature index)
            if j == -2:
                v = y[r]
                m = ym[r]
                e10 = np.int64(ye[r])
            else:
                if j == -1:
                    if not has_qid:
                        continue
                    out[pos] = 32
                    out[pos + 1] = 113        # q
                    out[pos + 2] = 105        # i
                    out[pos + 3] = 100        # d
                    out[pos + 4] = 58         # :
                    pos += 5
                    iv = qid[r]
                    if iv < 0:
                        out[pos] = 45
                        pos += 1
                        iv = -iv              # qid of -2**63 is not supported
                else:
                    out[pos] = 32
                    pos += 1
                    iv = np.int64(indices[j0 + j]) + base
                n = 1
                x = iv
                while x >= 10:
                    x //= 10
                    n += 1
                for k in range(pos + n - 1, pos - 1, -1):
                    out[k] = 48 + iv % 10
                    iv //= 10
                pos += n
                if j == -1:
                    continue
                out[pos] = 58                 # :
                pos += 1
                v = vals[j0 + j]
                m = vm[j0 + j]
                e10 = np.int64(ve[j0 + j])
            # ---- the number v with digits m * 10**e10
            if e10 == FAIL:
                if j == -2:
                    for k in range(yfb_off[yk], yfb_off[yk + 1]):
                        out[pos] = yfb_blob[k]
                        pos += 1
                    yk += 1
                else:
                    for k in range(fb_off[fk], fb_off[fk + 1]):
                        out[pos] = fb_blob[k]
                        pos += 1
                    fk += 1
                continue
            if v < 0.0 or (v == 0.0 and math.copysign(1.0, v) < 0.0):
                out[pos] = 45
                pos += 1
            if m == 0:
                out[pos] = 48
                pos += 1
                continue
            nd = 1
            x = m
            while x >= 10:
                x //= 10
                nd += 1
            decpt = nd + e10
            if decpt > 16 or decpt < -3:
                # scientific: d[.ddd]e+XX; digits written from position pos + 1, then the first
                # digit moved in front of the point
                x = m
                for k in range(pos + nd, pos, -1):
                    out[k] = 48 + x % 10
                    x //= 10
                out[pos] = out[pos + 1]
                if nd > 1:
                    out[pos + 1] = 46
                    pos += nd + 1
                else:
                    pos += 1
                out[pos] = 101
                ex = decpt - 1
                if ex < 0:
                    out[pos + 1] = 45
                    ex = -ex
                else:
                    out[pos + 1] = 43
                pos += 2
                if ex < 10:
                    out[pos] = 48
                    pos += 1
                n = 1
                x = ex
                while x >= 10:
                    x //= 10
                    n += 1
                for k in range(pos + n - 1, pos - 1, -1):
                    out[k] = 48 + ex % 10
                    ex //= 10
                pos += n
            elif decpt <= 0:
                # 0.000ddd
                out[pos] = 48
                out[pos + 1] = 46
                pos += 2
                for k in range(-decpt):
                    out[pos] = 48
                    pos += 1
                x = m
                for k in range(pos + nd - 1, pos - 1, -1):
                    out[k] = 48 + x % 10
                    x //= 10
                pos += nd
            elif decpt >= nd:
                # an integer: ddd000
                x = m
                for k in range(pos + nd - 1, pos - 1, -1):
                    out[k] = 48 + x % 10
                    x //= 10
                pos += nd
                for k in range(decpt - nd):
                    out[pos] = 48
                    pos += 1
            else:
                # ddd.ddd: the point after decpt digits
                x = m
                for k in range(pos + nd, pos + decpt, -1):
                    out[k] = 48 + x % 10
                    x //= 10
                out[pos + decpt] = 46
                for k in range(pos + decpt - 1, pos - 1, -1):
                    out[k] = 48 + x % 10
                    x //= 10
                pos += nd + 1
        if has_comments:
            a = coff[r]
            b = coff[r + 1]
            if b > a:
                out[pos] = 32
                out[pos + 1] = 35             # '#'
                pos += 2
                for k in range(a, b):
                    out[pos] = cblob[k]
                    pos += 1
        out[pos] = 10
        pos += 1
    return pos

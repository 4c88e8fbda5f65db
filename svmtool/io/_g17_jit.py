"""The jitted kernels of the model writers' number text: a matrix of doubles as ``%.17g`` text,
each number followed by a space, a newline after each row -- the ``w`` section of a LIBLINEAR
model (news20's 20-class model is 1.24 million numbers, 1.3 s through Python's ``%``).

The 17 significant digits are the exact product of the value and a power of ten (an error-free
product, :mod:`svmtool.io._format_jit`'s) in [1e16, 1e17), rounded to the nearest integer, ties
to even, as C's and Python's ``%.17g`` round the exact binary value.  It covers magnitudes
from about 1e-6 to 1e16 (powers of ten up to 1e22 are exact doubles); any other value, an inf
or a NaN is formatted by Python and copied in (``FAIL`` marks it).  The layout is ``%g``'s:
fixed notation when the decimal exponent X satisfies -4 <= X < 17, else ``d.ddde+XX``; trailing
zeros dropped, and the decimal point with them.
"""

import math

import numpy as np

from svmtool._jit import njit
from svmtool.io._format_jit import _P10, FAIL, _nearest_int, _strip, _two_prod

MAX_G17_CHARS = 25                # "-1.2345678901234567e-308" and its space


@njit
def _g17(a):
    """(m, e10): finite a > 0 rounded to 17 significant digits is m * 10**e10, m without its
    trailing zeros; e10 == FAIL when the power of ten it needs is not an exact double."""
    s = 16 - int(math.floor(math.log10(a)))
    hi = 0.0
    lo = 0.0
    for _ in range(3):
        if s < 0 or s > 22:
            return np.int64(0), FAIL
        hi, lo = _two_prod(a, _P10[s])
        if hi < 1e16 or (hi == 1e16 and lo < 0.0):     # the exact product is below 1e16
            s += 1
        elif hi >= 1e17:
            s -= 1
        else:
            m, e10 = _strip(_nearest_int(hi, lo), -s)
            return m, np.int32(e10)
    return np.int64(0), FAIL


@njit
def g17_digits(vals, m_out, e_out):
    """For each value: |v| rounded to 17 significant digits as m * 10**e (m without trailing
    zeros; zeros of either sign give (0, 0)); e_out == FAIL where Python formats the value.
    Returns how many such values there are."""
    fails = 0
    for i in range(len(vals)):
        a = abs(vals[i])
        m = np.int64(0)
        e10 = np.int32(0)
        if a == 0.0:
            pass
        elif a < np.inf:
            m, e10 = _g17(a)
        else:
            e10 = FAIL
        m_out[i] = m
        e_out[i] = e10
        if e10 == FAIL:
            fails += 1
    return fails


@njit
def write_g17_matrix(vals, n_rows, n_cols, m, e, fb_blob, fb_off, out):
    """Write ``vals`` (an ``n_rows`` x ``n_cols`` matrix's values in row order) as ``%.17g`` text into
    ``out``: each number followed by a space, ``\\n`` after each row; the digits ``m``, ``e`` from
    :func:`g17_digits`, the values it left to Python as the bytes ``fb_blob[fb_off[k]:fb_off[k +
    1]]`` in order.  Returns the number of bytes written."""
    pos = 0
    fb = 0
    digits = np.empty(20, dtype=np.uint8)
    for r in range(n_rows):
        for c in range(n_cols):
            k = r * n_cols + c
            v = vals[k]
            if e[k] == FAIL:
                for b in range(fb_off[fb], fb_off[fb + 1]):
                    out[pos] = fb_blob[b]
                    pos += 1
                fb += 1
            else:
                if math.copysign(1.0, v) < 0.0:
                    out[pos] = 45                  # '-'
                    pos += 1
                x = m[k]
                if x == 0:
                    out[pos] = 48
                    pos += 1
                else:
                    nd = 0
                    while x > 0:
                        digits[nd] = 48 + x % 10
                        x //= 10
                        nd += 1
                    # digits[nd - 1] is the leading digit; the value is 0.d1d2... * 10**(X + 1)
                    X = nd - 1 + e[k]
                    if -4 <= X < 17:
                        if X < 0:
                            out[pos] = 48
                            out[pos + 1] = 46          # '0.'
                            pos += 2
                            for _ in range(-X - 1):
                                out[pos] = 48
                                pos += 1
                            for d in range(nd - 1, -1, -1):
                                out[pos] = digits[d]
                                pos += 1
                        else:
                            for j in range(max(nd, X + 1)):
                                if j == X + 1:
                                    out[pos] = 46
                                    pos += 1
                                out[pos] = digits[nd - 1 - j] if j < nd else 48
                                pos += 1
                    else:
                        out[pos] = digits[nd - 1]
                        pos += 1
                        if nd > 1:
                            out[pos] = 46
                            pos += 1
                            for d in range(nd - 2, -1, -1):
                                out[pos] = digits[d]
                                pos += 1
                        out[pos] = 101                 # 'e'
                        out[pos + 1] = 45 if X < 0 else 43
                        pos += 2
                        ax = -X if X < 0 else X
                        if ax >= 100:
                            out[pos] = 48 + ax // 100
                            pos += 1
                        out[pos] = 48 + (ax // 10) % 10
                        out[pos + 1] = 48 + ax % 10
                        pos += 2
            out[pos] = 32
            pos += 1
        out[pos] = 10
        pos += 1
    return pos

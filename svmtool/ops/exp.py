"""exp of many non-positive values at once (the rbf kernel's exponents), in loops LLVM vectorises.

numba's ``math.exp`` is a scalar call into libm a value; these loops are plain arithmetic that
becomes vector code on every CPU level the kernel extension is built for.  The method:

* Cody-Waite reduction ``x = k ln2 + r`` with ``|r| <= ln2 / 2`` (:func:`exp_reduced`), ln 2 in
  two parts so that ``k ln2`` loses no digits; inputs are clamped to [-708, 0] (the rbf kernel's
  exponents are <= 0; exp(-708) is 3e-308, below every kernel value that matters);
* k rounded by adding 1.5 * 2^52 (the sum's last bits are k) and read back from those bits by
  integer arithmetic (:func:`exp_scales`, which makes them the bits of 2^k): no floor, which
  x86-64's baseline has no instruction for, and no float-to-int64 conversion, which only AVX-512
  has in vector form;
* exp(r) by its Taylor series in Horner's form: to r^13 for double results
  (:func:`exp_nonpositive`, truncation below 1e-17), to r^9 for results stored as float32
  (:func:`exp_nonpositive_to32`, truncation below 7e-12 relative, far below float32's half ulp
  of 6e-8); both end in the same steps from the r^9 term down (:func:`exp_series_tail`).

The fast-math flags leave out reassociation, which would merge the two halves of ln 2 and lose
digits for large |x|.  The float32 exp of float32 exponents is
:func:`svmtool.ops.kernels32.exp_nonpositive32`.
"""

import numpy as np

from svmtool._jit import njit

_LOG2E = 1.4426950408889634
_LN2_HI = 0.693147180369123816490
_LN2_LO = 1.90821492927058770002e-10
_ROUND = 6755399441055744.0                 # 1.5 * 2^52: x + _ROUND rounds x to an integer
_ROUND_BITS = 4843621399236968448           # its bits as an int64
_FAST = {"nnan", "ninf", "nsz", "arcp", "contract", "afn"}     # no reassociation


@njit(fastmath=_FAST, inline="always")
def exp_reduced(x):
    """(s, r) of x clamped to [-708, 0]: x = k ln2 + r, |r| <= ln2 / 2, k held in the last bits
    of s = k + 1.5 * 2^52 (:func:`exp_scales` turns s's bits into 2^k)."""
    v = min(max(x, -708.0), 0.0)
    s = v * _LOG2E + _ROUND
    k = s - _ROUND
    return s, (v - k * _LN2_HI) - k * _LN2_LO


@njit(inline="always")
def exp_scales(bits, n):
    """bits[:n], the int64 view of the s values of :func:`exp_reduced`, made the float64
    bits of 2^k."""
    for t in range(n):
        bits[t] = (bits[t] - _ROUND_BITS + 1023) << 52


@njit(fastmath=_FAST, inline="always")
def exp_series_tail(p, r):
    """exp(r)'s Taylor series from its r^9 term down, by Horner's steps: ``p`` is the sum so far
    of the terms from r^9 on divided by r^9 (1 / 9! when the series stops at r^9)."""
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    return p * r + 1.0


@njit(fastmath=_FAST)
def exp_nonpositive(x, n, bits):
    """x[:n] = exp(x[:n]) for x <= 0, in place; ``bits``: int64 work array of at least n."""
    scale = bits.view(np.float64)
    for t in range(n):
        s, r = exp_reduced(x[t])
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        scale[t] = s
        x[t] = exp_series_tail(p, r)
    exp_scales(bits, n)
    for t in range(n):
        x[t] *= scale[t]


@njit(fastmath=_FAST)
def exp_nonpositive_to32(x, n, bits, out):
    """out[:n] = float32(exp(x[:n])) for x <= 0, x overwritten; ``bits``: int64 work array of
    at least n.  :func:`exp_nonpositive`'s reduction with the series to r^9 only, the product
    with 2^k and the rounding to float32 in one pass: for values stored as floats."""
    scale = bits.view(np.float64)
    for t in range(n):
        s, r = exp_reduced(x[t])
        scale[t] = s
        x[t] = exp_series_tail(1.0 / 362880.0, r)
    exp_scales(bits, n)
    for t in range(n):
        out[t] = np.float32(x[t] * scale[t])

"""rbf kernel values in single precision, for the values that only choose: the nearest cluster
centre of DC-SVM's clustering pass and of its early model
(:func:`svmtool.ops.centres.nearest_centres`).

LIBSVM keeps its kernel values in floats; svmtool's solvers keep theirs in doubles, but a
nearest centre compares sums of kernel values whose float32 error (about 1e-5 relative at
most) only matters for rows at a tie, and single precision halves the work: eight vector lanes
instead of four and a shorter exp polynomial.
"""

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from svmtool._jit import njit
from svmtool.ops.blas import blas_single_thread
from svmtool.ops.kernels import _PIECE_VALUES, n_threads

# exp in single precision: exponents clipped to [-87, 0] (exp(-87) = 1.6e-38, the smallest normal
# float32 is 1.2e-38), 2^k split off, exp(r) for |r| <= ln(2)/2 by its Taylor polynomial of
# degree 7 (remainder below 6e-9), ln 2 in two parts (as the double precision
# svmtool.ops.kernels.exp_nonpositive).  Measured relative error below 8e-8 (float32's half ulp
# is 6e-8); 0.9 ns a value against 2.5 ns for the double precision one.
_F32 = np.float32
_LOG2E_F = _F32(1.4426950408889634)
_LN2_HI_F = _F32(0.693359375)            # 8 significant bits: k * _LN2_HI_F is exact
_LN2_LO_F = _F32(-2.12194440e-4)
_EXP_LOW_F = _F32(-87.0)
_ZERO_F, _HALF_F = _F32(0.0), _F32(0.5)
_EXP_TAYLOR_F = tuple(_F32(1.0 / math.factorial(j)) for j in range(8))


@njit(fastmath={"nnan", "ninf", "nsz", "arcp", "contract", "afn"})   # no reassociation
def exp_nonpositive32(x, n, bits):
    """x[:n] = exp(x[:n]) for float32 x <= 0, in place; ``bits``: int32 work array of at least
    n."""
    scale = bits.view(np.float32)
    c = _EXP_TAYLOR_F
    for t in range(n):
        v = min(max(x[t], _EXP_LOW_F), _ZERO_F)
        k = np.floor(v * _LOG2E_F + _HALF_F)
        r = (v - k * _LN2_HI_F) - k * _LN2_LO_F
        p = c[7]
        p = p * r + c[6]
        p = p * r + c[5]
        p = p * r + c[4]
        p = p * r + c[3]
        p = p * r + c[2]
        p = p * r + c[1]
        p = p * r + c[0]
        bits[t] = (np.int32(k) + np.int32(127)) << np.int32(23)
        x[t] = p
    for t in range(n):
        x[t] *= scale[t]


@njit(fastmath=True)
def _segment_sums32(row, seg, out):
    """out[c] = sum of row[seg[c]:seg[c+1]] (float32 values, summed in any order: vector code)."""
    for c in range(seg.shape[0] - 1):
        s = _ZERO_F
        for u in range(seg[c], seg[c + 1]):
            s += row[u]
        out[c] = s


@njit
def rbf_segment_sums32(block, seg, out):
    """For every row r of ``block`` (float32 exponents of rbf values, -gamma |x - z|^2, any
    sign): out[r, c] = sum of exp(min(block[r, u], 0)) over the columns u in [seg[c], seg[c+1]).
    The block is overwritten with the values."""
    m = block.shape[1]
    bits = np.empty(m, dtype=np.int32)
    for r in range(block.shape[0]):
        row = block[r]
        exp_nonpositive32(row, m, bits)
        _segment_sums32(row, seg, out[r])
    return out


# rbf values in single precision (see rbf_pieces32) need float32 to hold the exponent's terms
# (squared norms, gamma, and their products) with a wide margin: float32 holds 1.2e-38 to 3.4e38
_F32_SAFE = 1e30


def rbf_pieces32(A, rows_a, P, points, seg, kernel, consume, threads=None):
    """Call ``consume(lo, hi, sums)`` with sums[r, c] = sum over the points u of segment c of
    exp(-gamma |x - p_u|^2), x = A[rows_a[lo + r]], p_u = P[points[u]] (the kernel bias not
    added), for pieces of rows covering rows_a; False (nothing done) when the values are too
    large for single precision.

    The nearest centre compares such sums; they are computed in single precision, as LIBSVM
    holds its kernel values (Qfloat): rows and points translated by the points' mean (distances
    do not change, the terms of the expansion |x|^2 + |p|^2 - 2 x'p shrink), one float32 BLAS
    product of augmented rows a piece (as :func:`svmtool.ops.kernels.dense_pieces` in double),
    then exp and the segment sums in one jitted pass.  The sums' relative error is about 1e-5
    at most where gamma |x|^2 is about 10; DC-SVM's clustering pass (120,000 rows against 1,000
    points, two threads) took 0.42-0.45 s in double precision, 0.14-0.17 s this way."""
    n_buf = max(A.n_features, P.n_features, 1)
    g = float(kernel.gamma)
    amax = float(np.abs(A.data).max()) if len(A.data) else 0.0
    pmax = float(np.abs(P.data).max()) if len(P.data) else 0.0
    span = n_buf * (amax + pmax) ** 2          # bounds |x - mu|^2 and |p - mu|^2
    if not (span < _F32_SAFE and 1.0 / _F32_SAFE < g < _F32_SAFE and g * span < _F32_SAFE):
        return False
    Da, Dp = A.dense(n_buf), P.dense(n_buf)
    rows_a = np.asarray(rows_a, dtype=np.int64)
    Z = Dp[np.asarray(points, dtype=np.int64)]
    mu = Z.mean(axis=0) if len(Z) else np.zeros(n_buf)
    Z -= mu
    m = len(Z)
    Bp = np.empty((n_buf + 2, m), dtype=np.float32)
    Bp[:n_buf] = (2.0 * g) * Z.T
    Bp[n_buf] = -g
    Bp[n_buf + 1] = -g * np.einsum("ij,ij->i", Z, Z)
    n = len(rows_a)
    kk = len(seg) - 1
    # pieces of float32 values: twice dense_pieces' count in the same bytes
    step = max(8, 2 * _PIECE_VALUES // max(m, 1))
    # the rows' augmented float32 copies are made by numpy a chunk of pieces at a time: numpy
    # holds the GIL, so few and large steps let the threads run apart, the copies stay in the
    # core's cache and their memory bounded (120,000 rows against 1,000 points on two threads:
    # 0.31 s augmenting each piece, 0.22 s all rows at once, 0.14-0.17 s by chunks)
    chunk = 32 * step
    t = min(n_threads(threads), max(1, n // (4 * step)))
    bounds = np.linspace(0, n, t + 1).astype(np.int64)

    def part(k):
        blk = np.empty((step, m), dtype=np.float32)
        sums = np.empty((step, kk))
        Ap = np.empty((chunk, n_buf + 2), dtype=np.float32)
        for c0 in range(bounds[k], bounds[k + 1], chunk):
            c1 = min(bounds[k + 1], c0 + chunk)
            Xc = Da[rows_a[c0:c1]]
            Xc -= mu
            Ap[:c1 - c0, :n_buf] = Xc
            Ap[:c1 - c0, n_buf] = np.einsum("ij,ij->i", Xc, Xc)
            Ap[:c1 - c0, n_buf + 1] = 1.0
            for lo in range(c0, c1, step):
                hi = min(c1, lo + step)
                np.dot(Ap[lo - c0:hi - c0], Bp, out=blk[:hi - lo])
                consume(lo, hi, rbf_segment_sums32(blk[:hi - lo], seg, sums[:hi - lo]))

    with blas_single_thread() as single:
        if t <= 1 or not single:        # (a BLAS that keeps its own threads: one piece at a time)
            for k in range(t):
                part(k)
        else:
            with ThreadPoolExecutor(t) as ex:
                list(ex.map(part, range(t)))
    return True

"""rbf kernel values in single precision where LIBSVM too would use floats: the nearest cluster
centre of DC-SVM's clustering pass and of its early model
(:func:`svmtool.ops.centres.nearest_centres`), the gradient expansions of DC-SVM's conquer
step (:func:`svmtool.solvers.dcsvm.dcsvm_conquer.conquer`) and the kernel rows of the
subproblems of DC-SVM's early level (:func:`rbf_row32`, the kernel CD solver's ``single``
rows).  :func:`svmtool.ops.exp.exp_nonpositive_to32` is the other way round: exponentials in
double, rounded to float32 on the way out, for the rows the batched SMO stores as floats
(LIBSVM's Qfloat).

LIBSVM keeps its kernel values in floats (Qfloat) and adds them into a double gradient;
svmtool's solvers keep theirs in doubles.  A nearest centre compares sums of kernel values
whose float32 error (about 1e-5 relative at most) only matters for rows at a tie, and the
conquer step's expansions only decide which rows join the working set (their sums are taken in
double, as LIBSVM's gradient updates, each with a bound on its error); single precision halves
the work: eight vector lanes instead of four, a shorter exp polynomial, a float32 BLAS product.
"""

import math

import numpy as np

from svmtool._jit import njit
from svmtool.ops.kernels import (_PIECE_VALUES, RBF, dense_pieces, kernel_expansion,
                                 n_threads, row_ranges_on_threads, sq_dist_row)

# exp in single precision: exponents clipped to [-87, 0] (exp(-87) = 1.6e-38, the smallest normal
# float32 is 1.2e-38), 2^k split off, exp(r) for |r| <= ln(2)/2 by its Taylor polynomial of
# degree 7 (remainder below 6e-9), ln 2 in two parts (as the double precision
# svmtool.ops.exp.exp_nonpositive).  Relative error below 8e-8 (float32's half ulp is 6e-8),
# in about a third of the double precision exp's time (eight vector lanes instead of four).
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


@njit(fastmath={"nnan", "ninf", "nsz", "arcp", "contract", "afn"}, inline="always")
def rbf_row32(denseT32, i, n, gamma, tmp, bits):
    """tmp[t] = exp(-gamma |x_i - x_t|^2) for t < n in single precision, feature by feature
    over the feature-major float32 copy ``denseT32`` (the differences, not the expansion
    |x|^2 + |z|^2 - 2 x'z: no cancellation); ``bits``: int32 work array of at least n.  The
    relative error of a value is below 6e-7 x max(1, gamma |x_i - x_t|^2) (the float32 sum of
    the squared differences), and the row is computed at twice the values per vector
    instruction of the double one (:func:`svmtool.ops.kernels.dense_kernel_row`); DC-SVM's
    early level gains by it (the whole commands' times: BENCHMARKS.md, "Suite `dcsvm-e2e`")."""
    sq_dist_row(denseT32, i, n, tmp)
    g = _F32(-gamma)
    for t in range(n):
        tmp[t] = g * tmp[t]
    exp_nonpositive32(tmp, n, bits)


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


@njit(fastmath=True)
def _narrow(src, dst):
    """dst = float32(max(src, -87)): exponents of rbf values, clipped where exp_nonpositive32
    would clip them (before the conversion, which would make -1e300 an infinity)."""
    for u in range(src.shape[0]):
        dst[u] = np.float32(max(src[u], -87.0))


# a bound on |exp32(float32(s)) - exp(s)| / exp32(float32(s)) for an exponent s <= 0 (in double):
# _EXP32_REL (exp_nonpositive32's error, measured below 8e-8, with a margin for its last
# roundings) + _ROUND_REL |s| (the exponent's rounding to float32 moves exp(s) by a factor
# exp(s delta), |delta| <= 2^-24, |s delta| <= 5.2e-6 over [-87, 0]); below exp(-87) = 1.6e-38
# the value is clipped: _EXP32_ABS
_EXP32_REL = 1.5e-7
_ROUND_REL = 6.0e-8
_EXP32_ABS = 2e-38


@njit(fastmath=True)
def _dots_bounded(row, block_row, coef, acoef, out, err, r):
    """out[r] = sum of row[u] coef[u] (float32 values widened, in double); err[r] = the bound
    of its error against exact exponentials (see _EXP32_REL)."""
    s = 0.0
    e = 0.0
    for u in range(row.shape[0]):
        kv = np.float64(row[u])
        s += kv * coef[u]
        e += (kv * (_EXP32_REL + _ROUND_REL * abs(block_row[u])) + _EXP32_ABS) * acoef[u]
    out[r] = s
    err[r] = e


@njit
def rbf_dot_exp32(block, coef, acoef, out, err):
    """For every row r of ``block`` (double exponents -gamma |x - z|^2, any sign):
    out[r] = sum over u of exp(min(block[r, u], 0)) * coef[u], the exponentials in single
    precision, the sum in double; err[r] bounds |out[r] - the sum with exact exponentials|
    (each value's error by _EXP32_REL and _ROUND_REL, 1e-7 relative where the value is near 1,
    weighted by ``acoef`` = |coef|; the double sums' own rounding, some 1e-16 relative, left
    out)."""
    m = block.shape[1]
    row = np.empty(m, dtype=np.float32)
    bits = np.empty(m, dtype=np.int32)
    for r in range(block.shape[0]):
        _narrow(block[r], row)
        exp_nonpositive32(row, m, bits)
        _dots_bounded(row, block[r], coef, acoef, out, err, r)


# rbf values in single precision need float32 to hold the exponent's terms (squared norms,
# gamma, and their products) with a wide margin: float32 holds 1.2e-38 to 3.4e38
_F32_SAFE = 1e30


def rbf_blocks32(A, rows_a, P, points, kernel, consume, threads=None):
    """Call ``consume(lo, hi, block)`` with block[r, u] = -gamma |x - p_u|^2 in float32,
    x = A[rows_a[lo + r]], p_u = P[points[u]], for pieces of rows covering rows_a, pieces
    shared among threads (``block`` is reused: consume it at once); False (nothing done) when
    the values are too large for single precision.

    Rows and points are translated by the points' mean (distances do not change, the terms of
    the expansion |x|^2 + |p|^2 - 2 x'p shrink), then one float32 BLAS product of augmented
    rows a piece (as :func:`svmtool.ops.kernels.dense_pieces` in double).  The exponent's error
    is about 1e-7 of gamma |x - mu|^2: a relative error of about 1e-6 in the kernel values of
    ijcnn1 at gamma 2."""
    n_buf = max(A.n_features, P.n_features, 1)
    g = float(kernel.gamma)
    amax = float(np.abs(A.data).max()) if len(A.data) else 0.0
    pmax = float(np.abs(P.data).max()) if len(P.data) else 0.0
    span = n_buf * (amax + pmax) ** 2          # bounds |x - mu|^2 and |p - mu|^2
    if not (span < _F32_SAFE and 1.0 / _F32_SAFE < g < _F32_SAFE and g * span < _F32_SAFE):
        return False
    Da = A.dense(n_buf)
    rows_a = np.asarray(rows_a, dtype=np.int64)
    Z, mu = _centred_points(P, points, n_buf)
    m = len(Z)
    Bp = np.empty((n_buf + 2, m), dtype=np.float32)
    Bp[:n_buf] = (2.0 * g) * Z.T
    Bp[n_buf] = -g
    Bp[n_buf + 1] = -g * np.einsum("ij,ij->i", Z, Z)
    n = len(rows_a)
    # pieces of float32 values: twice dense_pieces' count in the same bytes
    step = max(8, 2 * _PIECE_VALUES // max(m, 1))
    # the rows' augmented float32 copies are made by numpy a chunk of pieces at a time: numpy
    # holds the GIL, so few and large steps let the threads run apart, the copies stay in the
    # core's cache and their memory bounded (on DC-SVM's clustering pass this beat both
    # augmenting each piece apart and all rows at once)
    chunk = 32 * step

    def part(start, stop):
        blk = np.empty((step, m), dtype=np.float32)
        Ap = np.empty((chunk, n_buf + 2), dtype=np.float32)
        for c0 in range(start, stop, chunk):
            c1 = min(stop, c0 + chunk)
            Xc = Da[rows_a[c0:c1]]
            Xc -= mu
            Ap[:c1 - c0, :n_buf] = Xc
            Ap[:c1 - c0, n_buf] = np.einsum("ij,ij->i", Xc, Xc)
            Ap[:c1 - c0, n_buf + 1] = 1.0
            for lo in range(c0, c1, step):
                hi = min(c1, lo + step)
                np.dot(Ap[lo - c0:hi - c0], Bp, out=blk[:hi - lo])
                consume(lo, hi, blk[:hi - lo])

    row_ranges_on_threads(n, min(n_threads(threads), max(1, n // (4 * step))), part)
    return True


def _centred_points(P, points, n_buf):
    """(Z, mu): the dense rows ``points`` of P less their mean mu (rbf_blocks32's translation)."""
    Z = P.dense(n_buf)[np.asarray(points, dtype=np.int64)]
    mu = Z.mean(axis=0) if len(Z) else np.zeros(n_buf)
    Z -= mu
    return Z, mu


def rbf_pieces32(A, rows_a, P, points, seg, kernel, consume, threads=None):
    """Call ``consume(lo, hi, sums)`` with sums[r, c] = sum over the points u of segment c of
    exp(-gamma |x - p_u|^2), x = A[rows_a[lo + r]], p_u = P[points[u]] (the kernel bias not
    added), for pieces of rows covering rows_a; False (nothing done) when the values are too
    large for single precision (see :func:`rbf_blocks32`).

    The nearest centre compares such sums; exp and the segment sums are one jitted pass over
    each float32 piece.  The sums' relative error is about 1e-5 at most where gamma |x|^2 is
    about 10; DC-SVM's clustering pass is several times quicker this way than in double
    precision (its levels' times: BENCHMARKS.md, "Suite `dcsvm-levels`")."""
    kk = len(seg) - 1

    def sums(lo, hi, blk):
        consume(lo, hi, rbf_segment_sums32(blk, seg, np.empty((hi - lo, kk))))

    return rbf_blocks32(A, rows_a, P, points, kernel, sums, threads)


# the expansions' pieces: twice dense_pieces' (fewer pieces, less Python between them under the
# GIL; the exponentials' work is a third of the double ones', so that overhead shows)
_PIECE_VALUES32 = 2 * _PIECE_VALUES


# the error of an exponent of rbf_blocks32's float32 product of augmented rows, k = d + 2 terms
# a_i b_i: the inputs' roundings to float32 (two of 2^-24 relative a term) and the sum's (k 2^-24
# / (1 - k 2^-24) of sum |a_i b_i| in any order, fused or not), where sum |a_i b_i| is at most
# gamma (|x - mu| + |p - mu|)^2: in all at most (d + 5) 2^-24 gamma (|x - mu| + |p - mu|)^2
# (expansion32's ``scale``; the 3 over k covers the roundings and the denominator, d < 2^20)
_U32 = 2.0 ** -24


@njit(fastmath=True)
def rbf_dot_exp32_product(block, coef, acoef, pnorm, pnorm2, anorm, scale, floor, out, err):
    """For every row r of ``block`` (float32 exponents of rbf values from rbf_blocks32's
    product, exponentials taken in place): out[r] = sum over u of exp(min(block[r, u], 0))
    coef[u], in double; err[r] bounds |out[r] - the sum with exact exponents and exponentials|:
    each value's exponent is off by at most scale (anorm[r] + pnorm[u])^2 (|x - mu|, |p - mu|),
    which moves its exponential by the factor exp of that (bounded by 1.01 times it, below
    0.01; ``pnorm2``: pnorm squared), and the exponential's own error (_EXP32_REL; ``floor``:
    _EXP32_ABS times the sum of acoef, for the values clipped at exp(-87))."""
    m = block.shape[1]
    bits = np.empty(m, dtype=np.int32)
    for r in range(block.shape[0]):
        row = block[r]
        exp_nonpositive32(row, m, bits)
        s = 0.0
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        for u in range(m):
            kv = np.float64(row[u])
            s += kv * coef[u]
            w = kv * acoef[u]
            s0 += w
            s1 += w * pnorm[u]
            s2 += w * pnorm2[u]
        a = anorm[r]
        moved = scale * (a * a * s0 + 2.0 * a * s1 + s2)
        out[r] = s
        err[r] = _EXP32_REL * s0 + 1.01 * moved + floor


def expansion32(A, rows_a, B, rows_b, coef, kernel, threads=None, mem_mb=64.0):
    """(out, err): out = K(A[rows_a], B[rows_b]) @ coef for a vector ``coef``, err a bound on
    each out value's error from single precision (zeros where none is used).

    For the rbf kernel on dense rows the exponents come from one float32 BLAS product of
    augmented rows a piece (:func:`rbf_blocks32`: half the double product's time), the
    exponentials in single precision and their sum in double, as LIBSVM adds its float kernel
    values into a double gradient; :func:`rbf_dot_exp32_product` bounds the error of each sum
    from the product's and the exponentials' roundings (a relative error of some 1e-5 a value
    where the rows are far from the points' mean).  Where that bound could pass 1% of a value
    (rows too far from the mean, a large gamma) the exponents are computed in double
    (:func:`svmtool.ops.kernels.dense_pieces`, about 1e-7 relative error a value,
    :func:`rbf_dot_exp32`).  Other kernels and sparse rows:
    :func:`svmtool.ops.kernels.kernel_expansion` in double."""
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    if not (kernel.ktype == RBF and A.prefers_dense() and B.prefers_dense() and len(rows_a)
            and len(rows_b)):
        out = kernel_expansion(A, rows_a, B, rows_b, coef, kernel, threads, mem_mb)
        return out, np.zeros(len(out))
    out = np.empty(len(rows_a))
    err = np.empty(len(rows_a))
    acoef = np.abs(coef)
    rows_a = np.asarray(rows_a, dtype=np.int64)
    n_buf = max(A.n_features, B.n_features, 1)
    Z, mu = _centred_points(B, rows_b, n_buf)
    pnorm2 = np.einsum("ij,ij->i", Z, Z)
    pnorm = np.sqrt(pnorm2)
    anorm = np.empty(len(rows_a))
    Da = A.dense(n_buf)
    for c0 in range(0, len(rows_a), 65536):
        Xc = Da[rows_a[c0:c0 + 65536]] - mu
        anorm[c0:c0 + len(Xc)] = np.sqrt(np.einsum("ij,ij->i", Xc, Xc))
    scale = (n_buf + 5) * _U32 * float(kernel.gamma)
    floor = _EXP32_ABS * float(acoef.sum())
    if scale * (float(anorm.max()) + float(pnorm.max())) ** 2 < 0.01:
        def product(lo, hi, blk):
            rbf_dot_exp32_product(blk, coef, acoef, pnorm, pnorm2, anorm[lo:hi], scale, floor,
                                  out[lo:hi], err[lo:hi])

        done = rbf_blocks32(A, rows_a, B, rows_b, kernel, product, threads)
    else:
        done = False
    if not done:
        def dots(lo, hi, blk):
            rbf_dot_exp32(blk, coef, acoef, out[lo:hi], err[lo:hi])

        dense_pieces(A, rows_a, B, rows_b, kernel, dots, threads, finish=False,
                     piece_values=_PIECE_VALUES32)
    if kernel.kbias != 0.0:
        out += float(kernel.kbias) * coef.sum()
    return out, err

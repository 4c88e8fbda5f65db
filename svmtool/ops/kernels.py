"""Kernel values over CSR rows: LIBSVM's four kernels, blocks, expansions.

Kernels (LIBSVM's ``-t``, with its parameter names)::

    0 linear      K(u, v) = u'v
    1 polynomial  K(u, v) = (gamma u'v + coef0)^degree
    2 rbf         K(u, v) = exp(-gamma |u - v|^2) = exp(-gamma (|u|^2 + |v|^2 - 2 u'v))
    3 sigmoid     K(u, v) = tanh(gamma u'v + coef0)

plus an optional constant ``kbias`` added to every value (the regularised "kernel bias" of
``-B b``: ``kbias = b^2``, the kernel of data with one more feature of value ``b``).

A dot product ``u'v`` is computed by scattering ``u`` into a dense work vector once and gathering
over the stored values of every ``v`` (so a kernel row costs one pass over the other rows' non
zeros).  Squared row norms for the rbf kernel are computed once (:func:`row_sq_norms`).

The jitted kernels are pure and release the GIL: :func:`kernel_block_threads` and
:func:`kernel_expansion` split the rows of a block over threads of a ThreadPoolExecutor.
Memory of :func:`kernel_expansion` is bounded: it works through the target rows in chunks of at
most ``mem_mb`` megabytes of kernel block.
"""

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from svmtool._jit import njit
from svmtool.ops.blas import blas_single_thread
from svmtool.ops.cores import default_threads, run_parts
from svmtool.ops.exp import exp_nonpositive

LINEAR, POLY, RBF, SIGMOID, PRECOMPUTED = 0, 1, 2, 3, 4
KERNEL_NAMES = ("linear", "polynomial", "rbf", "sigmoid")   # the kernels computed here


@dataclass(frozen=True)
class Kernel:
    """A kernel function: type (0..3), gamma, coef0, degree, and the added constant kbias."""
    ktype: int = RBF
    gamma: float = 1.0
    coef0: float = 0.0
    degree: int = 3
    kbias: float = 0.0

    @property
    def name(self):
        # 4: LIBSVM's precomputed kernel (-t 4), whose values come with the data
        return KERNEL_NAMES[self.ktype] if self.ktype != PRECOMPUTED else "precomputed"

    def args(self):
        return (np.int64(self.ktype), float(self.gamma), float(self.coef0),
                np.int64(self.degree), float(self.kbias))


@njit
def row_sq_norms(indptr, indices, data):
    """|x_i|^2 of every row."""
    n = indptr.shape[0] - 1
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * data[p]
        out[i] = s
    return out


@njit(inline="always")
def kernel_from_dot(dot, sq_a, sq_b, ktype, gamma, coef0, degree, kbias):
    """One kernel value from the dot product (and, for rbf, the two squared norms)."""
    if ktype == 0:
        v = dot
    elif ktype == 1:
        t = gamma * dot + coef0
        v = 1.0
        for _ in range(degree):
            v *= t
    elif ktype == 2:
        d2 = sq_a + sq_b - 2.0 * dot
        v = math.exp(-gamma * d2)
    else:
        v = math.tanh(gamma * dot + coef0)
    return v + kbias


@njit(inline="always")
def scatter(indptr, indices, data, i, buf):
    for p in range(indptr[i], indptr[i + 1]):
        buf[indices[p]] = data[p]


@njit(inline="always")
def unscatter(indptr, indices, i, buf):
    for p in range(indptr[i], indptr[i + 1]):
        buf[indices[p]] = 0.0


@njit(inline="always")
def gather_dot(indptr, indices, data, j, buf, nbuf):
    s = 0.0
    for p in range(indptr[j], indptr[j + 1]):
        c = indices[p]
        if c < nbuf:
            s += data[p] * buf[c]
    return s


@njit
def kernel_block(indptr_a, indices_a, data_a, sq_a, rows_a,
                 indptr_b, indices_b, data_b, sq_b, rows_b,
                 ktype, gamma, coef0, degree, kbias, n_buf, out):
    """out[r, s] = K(a[rows_a[r]], b[rows_b[s]]).

    ``n_buf`` must exceed every column index of the ``a`` rows; columns of ``b`` at or beyond it
    meet only zeros of ``a`` (they count in ``b``'s squared norm, as they should for rbf).
    """
    buf = np.zeros(n_buf, dtype=np.float64)
    for r in range(rows_a.shape[0]):
        i = rows_a[r]
        scatter(indptr_a, indices_a, data_a, i, buf)
        for s in range(rows_b.shape[0]):
            j = rows_b[s]
            dot = gather_dot(indptr_b, indices_b, data_b, j, buf, n_buf)
            out[r, s] = kernel_from_dot(dot, sq_a[i], sq_b[j], ktype, gamma, coef0, degree, kbias)
        unscatter(indptr_a, indices_a, i, buf)
    return out


@njit(inline="always", fastmath=True)
def dense_dot(A, i, B, j, d):
    s = 0.0
    for f in range(d):
        s += A[i, f] * B[j, f]
    return s


@njit(inline="always", fastmath=True)
def dense_dist2(A, i, B, j, d):
    s = 0.0
    for f in range(d):
        t = A[i, f] - B[j, f]
        s += t * t
    return s


@njit(inline="always")
def dense_kernel(A, i, B, j, d, ktype, gamma, coef0, degree, kbias):
    """K(A[i], B[j]) over dense rows (rbf from the squared distance directly)."""
    if ktype == 2:
        return math.exp(-gamma * dense_dist2(A, i, B, j, d)) + kbias
    return kernel_from_dot(dense_dot(A, i, B, j, d), 0.0, 0.0, ktype, gamma, coef0, degree,
                           kbias)


@njit(inline="always")
def sq_dist_row(denseT, i, n, tmp):
    """tmp[t] = |x_i - x_t|^2 for t < n, feature by feature over the feature-major dense copy
    ``denseT`` (contiguous loops that vectorise), in the precision of ``denseT`` and ``tmp``
    (double here, float32 for :func:`svmtool.ops.kernels32.rbf_row32`)."""
    for t in range(n):
        tmp[t] = 0.0
    for f in range(denseT.shape[0]):
        x = denseT[f, i]
        col = denseT[f]
        for t in range(n):
            v = x - col[t]
            tmp[t] += v * v


@njit(inline="always")
def dense_kernel_row(denseT, i, n, ktype, gamma, coef0, degree, tmp, bits):
    """tmp[t] = K(x_i, x_t) for t < n, feature by feature over the feature-major dense copy
    ``denseT`` (contiguous loops that vectorise; the whole row, whatever is shrunk).  For rbf the
    exponents come first, then :func:`exp_nonpositive` over all of them; ``bits``: int64 work
    array of at least n.  Shared by the kernel-row caches of the SMO and the kernel CD solver."""
    if ktype == 2:
        sq_dist_row(denseT, i, n, tmp)
        for t in range(n):
            tmp[t] = -gamma * tmp[t]
        exp_nonpositive(tmp, n, bits)
    else:
        nf = denseT.shape[0]
        for t in range(n):
            tmp[t] = 0.0
        for f in range(nf):
            x = denseT[f, i]
            if x != 0.0:
                col = denseT[f]
                for t in range(n):
                    tmp[t] += x * col[t]
        for t in range(n):
            tmp[t] = kernel_from_dot(tmp[t], 0.0, 0.0, ktype, gamma, coef0, degree, 0.0)


@njit
def kernel_block_dense(A, rows_a, B, rows_b, ktype, gamma, coef0, degree, kbias, out):
    """out[r, s] = K(A[rows_a[r]], B[rows_b[s]]) for dense row-major A and B (same width)."""
    d = A.shape[1]
    for r in range(rows_a.shape[0]):
        i = rows_a[r]
        for s in range(rows_b.shape[0]):
            out[r, s] = dense_kernel(A, i, B, rows_b[s], d, ktype, gamma, coef0, degree, kbias)
    return out


@njit
def symmetric_block_dense(D, sq, rows, ktype, gamma, coef0, degree, kbias, out):
    """out = K(D[rows], D[rows]) for dense rows, in one call without the GIL (DC-SVM's many
    small cluster blocks without per-block Python).  The lower triangle row by row: dot
    products along the row over a feature-major copy of the rows (contiguous, so the loop is
    vector code; a dot product per value is one chain of dependent additions, several times
    slower),
    then the kernel (rbf through :func:`exp_nonpositive`), then mirrored."""
    m = rows.shape[0]
    d = D.shape[1]
    T = np.empty((d, m))
    for b in range(m):
        for f in range(d):
            T[f, b] = D[rows[b], f]
    bits = np.empty(m, dtype=np.int64)
    for a in range(m):
        row = out[a]
        n = a + 1
        for b in range(n):
            row[b] = 0.0
        for f in range(d):
            x = T[f, a]
            if x != 0.0:
                tf = T[f]
                for b in range(n):
                    row[b] += x * tf[b]
        if ktype == 2:
            sa = sq[rows[a]]
            for b in range(n):
                row[b] = -gamma * (sa + sq[rows[b]] - 2.0 * row[b])
            exp_nonpositive(row, n, bits)
            for b in range(n):
                row[b] += kbias
        else:
            for b in range(n):
                row[b] = kernel_from_dot(row[b], 0.0, 0.0, ktype, gamma, coef0, degree, kbias)
    for a in range(m):
        for b in range(a):
            out[b, a] = out[a, b]
    return out


@njit
def to_dense(indptr, indices, data, n_cols):
    n = indptr.shape[0] - 1
    out = np.zeros((n, n_cols), dtype=np.float64)
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            c = indices[p]
            if c < n_cols:
                out[i, c] = data[p]
    return out


# Rows are handled as dense row-major arrays when they have few columns compared with their
# stored values (e.g. ijcnn1: 22 columns, 13 values a row): a dense dot of d values is much
# faster than a sparse gather, and the memory, n * d doubles, stays within a small factor of CSR.
DENSE_MAX_COLS = 256
DENSE_MAX_RATIO = 3.0


def max_index(indices, lo=0, hi=None):
    seg = indices[lo:hi]
    return int(seg.max()) + 1 if len(seg) else 0


class Rows:
    """CSR arrays plus squared norms: the operand of the kernel helpers."""

    def __init__(self, indptr, indices, data, sq=None, n_features=None):
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(indices)
        if self.indices.dtype not in (np.int32, np.int64):
            self.indices = self.indices.astype(np.int64)
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.sq = row_sq_norms(self.indptr, self.indices, self.data) if sq is None else sq
        self.n_features = (max_index(self.indices, self.indptr[0], self.indptr[-1])
                           if n_features is None else int(n_features))

    @classmethod
    def of(cls, X, n_features=None):
        """From a Problem, a scipy CSR matrix or a tuple (indptr, indices, data)."""
        if isinstance(X, Rows):
            return X
        if isinstance(X, tuple):
            return cls(*X, n_features=n_features)
        nf = getattr(X, "n_features", None)
        if nf is None and hasattr(X, "shape"):
            nf = X.shape[1]
        return cls(X.indptr, X.indices, X.data,
                   n_features=nf if n_features is None else n_features)

    @property
    def n_rows(self):
        return len(self.indptr) - 1

    def prefers_dense(self):
        n = max(self.n_rows, 1)
        per_row = (self.indptr[-1] - self.indptr[0]) / n
        return self.n_features <= DENSE_MAX_COLS and \
            self.n_features <= DENSE_MAX_RATIO * per_row + 8

    def dense(self, n_cols):
        """The rows as a dense (n_rows, n_cols) array (cached per width)."""
        cached = getattr(self, "_dense", None)
        if cached is None or cached.shape[1] != n_cols:
            cached = to_dense(self.indptr, self.indices, self.data, int(n_cols))
            self._dense = cached
        return cached


def n_threads(threads=None):
    """``threads``, or (None) :func:`svmtool.ops.cores.default_threads`."""
    if threads is not None:
        return max(1, int(threads))
    return default_threads()


def kernel_block_threads(A, rows_a, B, rows_b, kernel: Kernel, threads=None, out=None):
    """The block K(A[rows_a], B[rows_b]) as an array, rows split over threads."""
    rows_a = np.ascontiguousarray(rows_a, dtype=np.int64)
    rows_b = np.ascontiguousarray(rows_b, dtype=np.int64)
    if out is None:
        out = np.empty((len(rows_a), len(rows_b)), dtype=np.float64)
    n_buf = max(A.n_features, B.n_features, 1)
    args = kernel.args()
    use_dense = A.prefers_dense() and B.prefers_dense()
    if use_dense:
        Da, Db = A.dense(n_buf), B.dense(n_buf)

    if use_dense and len(rows_a) * len(rows_b) >= BLAS_MIN_BLOCK:
        # dense rows: by pieces, each one BLAS product of augmented rows (see dense_pieces)
        def consume(lo, hi, blk):
            out[lo:hi] = blk

        dense_pieces(A, rows_a, B, rows_b, kernel, consume, threads)
        return out

    def block(ra, o):
        if use_dense:
            kernel_block_dense(Da, ra, Db, rows_b, *args, o)
        else:
            kernel_block(A.indptr, A.indices, A.data, A.sq, ra, B.indptr, B.indices, B.data,
                         B.sq, rows_b, *args, n_buf, o)

    t = min(n_threads(threads), max(1, len(rows_a) // 64))
    if t <= 1:
        block(rows_a, out)
        return out
    bounds = np.linspace(0, len(rows_a), t + 1).astype(np.int64)

    def part(k):
        lo, hi = bounds[k], bounds[k + 1]
        block(rows_a[lo:hi], out[lo:hi])

    with ThreadPoolExecutor(t - 1) as ex:
        run_parts(ex, part, t)
    return out


# Dense operands: the block of a kernel is computed in pieces of about this many values (a
# piece, its operands and the result of consuming it stay in a core's L2 cache), each piece
# by one BLAS product of *augmented* rows whose result is already the kernel's inner argument,
# so the element-wise work is one or two passes (for rbf: min(., 0) and exp).  Against a BLAS
# product of the plain rows followed by five numpy passes over the whole block, this does a
# fraction of the memory traffic in DC-SVM's gradient rebuilds and k-means assignment.
_PIECE_VALUES = 1 << 16
# blocks at least this large (in values) go that way; smaller ones by the jitted loops
BLAS_MIN_BLOCK = 4096


def augmented_rows(D, sq, side, kernel: Kernel):
    """Rows whose dot products give the kernel's inner argument.

    For rbf: ``[x, |x|^2, 1]`` (side "a") and ``[2 g z, -g, -g |z|^2]`` (side "b"), whose dot is
    ``-g |x - z|^2``; for the polynomial and sigmoid kernels ``[x, 1]`` and ``[g z, coef0]``;
    the linear kernel uses the rows as they are.
    """
    n, d = D.shape
    kt, g = kernel.ktype, kernel.gamma
    if kt == RBF:
        out = np.empty((n, d + 2))
        if side == "a":
            out[:, :d] = D
            out[:, d] = sq
            out[:, d + 1] = 1.0
        else:
            np.multiply(D, 2.0 * g, out=out[:, :d])
            out[:, d] = -g
            out[:, d + 1] = -g * np.asarray(sq)
        return out
    if kt in (POLY, SIGMOID):
        out = np.empty((n, d + 1))
        if side == "a":
            out[:, :d] = D
            out[:, d] = 1.0
        else:
            np.multiply(D, g, out=out[:, :d])
            out[:, d] = kernel.coef0
        return out
    return np.ascontiguousarray(D, dtype=np.float64)


def int_power(x, degree):
    """x = x ** degree in place for an integer degree >= 0, by squaring and multiplying.

    numpy's power with an integer exponent other than 2 calls libm's pow for every value (27 ns
    a value here, against 0.3 ns for a multiplication): it made the polynomial kernel's blocks
    the slowest part of DC-SVM.  Rounding differs from pow by a few ulps at most.
    """
    if degree == 0:
        x.fill(1.0)
        return x
    if degree == 1:
        return x
    base = x.copy()
    first = True
    d = degree
    while d:
        if d & 1:
            if first:
                np.copyto(x, base)
                first = False
            else:
                x *= base
        d >>= 1
        if d:
            base *= base
    return x


def finish_kernel(x, kernel: Kernel):
    """Turn a block of inner arguments (see :func:`augmented_rows`) into kernel values."""
    kt = kernel.ktype
    if kt == RBF:
        # (a rounding error may not give K > 1: exp_nonpositive clips at 0).  Our exp, not
        # numpy's: on a CPU without AVX-512 numpy's takes 6 ns a value, ours 3 ns
        flat = x.reshape(-1)
        if np.shares_memory(flat, x):
            exp_nonpositive(flat, flat.shape[0], np.empty(flat.shape[0], dtype=np.int64))
        else:
            np.minimum(x, 0.0, out=x)
            np.exp(x, out=x)
    elif kt == POLY:
        int_power(x, int(kernel.degree))
    elif kt == SIGMOID:
        np.tanh(x, out=x)
    if kernel.kbias != 0.0:
        x += kernel.kbias
    return x


def dense_pieces(A, rows_a, B, rows_b, kernel: Kernel, consume, threads=None, finish=True,
                 piece_values=None):
    """Call ``consume(lo, hi, block)`` with block = K(A[rows_a[lo:hi]], B[rows_b]) for pieces of
    rows covering rows_a, over dense copies of the rows, pieces shared among threads (with
    ``finish=False`` the kernel's inner arguments, see :func:`augmented_rows`), pieces of about
    ``piece_values`` values (default ``_PIECE_VALUES``).

    ``block`` is a work array reused for the next piece of the same thread: consume it at once.
    """
    n_buf = max(A.n_features, B.n_features, 1)
    Da, Db = A.dense(n_buf), B.dense(n_buf)
    sq = A.sq
    rows_a = np.asarray(rows_a, dtype=np.int64)
    rows_b = np.asarray(rows_b, dtype=np.int64)
    Bp = augmented_rows(Db[rows_b], B.sq[rows_b], "b", kernel)
    BpT = np.ascontiguousarray(Bp.T)
    n, m = len(rows_a), len(rows_b)
    step = max(8, (piece_values or _PIECE_VALUES) // max(m, 1))

    def part(start, stop):
        buf = np.empty((step, m))
        for lo in range(start, stop, step):
            hi = min(stop, lo + step)
            r = rows_a[lo:hi]
            Ap = augmented_rows(Da[r], sq[r], "a", kernel)
            blk = buf[:hi - lo]
            np.dot(Ap, BpT, out=blk)
            consume(lo, hi, finish_kernel(blk, kernel) if finish else blk)

    row_ranges_on_threads(n, min(n_threads(threads), max(1, n // (4 * step))), part)


def row_ranges_on_threads(n, t, part):
    """Run ``part(start, stop)`` over t contiguous ranges covering range(n), one thread each.

    The parts call numpy's BLAS on pieces small enough for a core's cache: BLAS is kept to one
    thread meanwhile, and ours share the cores (several solvers may be running at once in
    threads too, e.g. DC-SVM's clusters).  A BLAS with threads of its own that cannot be told
    otherwise gets the cores to itself: one range, on the calling thread.
    """
    with blas_single_thread() as single:
        if not single:
            t = 1
        bounds = np.linspace(0, n, max(1, t) + 1).astype(np.int64)
        if t <= 1:
            part(0, n)
        else:
            with ThreadPoolExecutor(t - 1) as ex:
                run_parts(ex, lambda k: part(bounds[k], bounds[k + 1]), t)


def kernel_expansion(A, rows_a, B, rows_b, coef, kernel: Kernel, threads=None, mem_mb=64.0):
    """out = K(A[rows_a], B[rows_b]) @ coef, in chunks of target rows (bounded memory).

    ``coef`` has shape (len(rows_b),) or (len(rows_b), m); the result (len(rows_a),) or
    (len(rows_a), m).
    """
    rows_a = np.ascontiguousarray(rows_a, dtype=np.int64)
    rows_b = np.ascontiguousarray(rows_b, dtype=np.int64)
    coef = np.asarray(coef, dtype=np.float64)
    vec = coef.ndim == 1
    c2 = coef.reshape(-1, 1) if vec else coef        # (no support vector: (0, 1), not -1)
    out = np.zeros((len(rows_a), c2.shape[1]), dtype=np.float64)
    if len(rows_b) == 0 or len(rows_a) == 0:
        return out[:, 0] if vec else out
    if A.prefers_dense() and B.prefers_dense():
        def consume(lo, hi, blk):
            np.dot(blk, c2, out=out[lo:hi])

        dense_pieces(A, rows_a, B, rows_b, kernel, consume, threads)
        return out[:, 0] if vec else out
    chunk = max(64, int(mem_mb * (1 << 20) / 8 / max(1, len(rows_b))))
    buf = None
    for lo in range(0, len(rows_a), chunk):
        hi = min(len(rows_a), lo + chunk)
        if buf is None or buf.shape[0] != hi - lo:
            buf = np.empty((hi - lo, len(rows_b)), dtype=np.float64)
        kernel_block_threads(A, rows_a[lo:hi], B, rows_b, kernel, threads, out=buf)
        out[lo:hi] = buf @ c2
    return out[:, 0] if vec else out

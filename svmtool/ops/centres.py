"""Nearest cluster centre in a kernel's feature space.

Centre ``c`` is the mean of the sampled points labelled ``c``; the squared distance of a row x to
it, less the row's own K(x, x), is ``const_c - 2/|S_c| sum_{s in S_c} K(x, s)`` (``const_c``
from :func:`svmtool.solvers.dcsvm.kmeans.centre_constants`).  Kernel k-means (a solver step) and the
early-prediction model (a model type) both assign rows this way, so it lives here, below both.
"""

import numpy as np

from svmtool._jit import njit
from svmtool.ops.kernels import RBF, dense_pieces, kernel_block_threads
from svmtool.ops.kernels32 import rbf_pieces32


@njit(inline="always")
def _keep_top(near, dist, r, c, d):
    """Insert cluster c at distance d into row r of the running ``top`` nearest (ties: the one
    inserted first, i.e. the lower cluster, stays ahead)."""
    top = near.shape[1]
    t = top
    while t > 0 and d < dist[r, t - 1]:
        t -= 1
    if t < top:
        for u in range(top - 1, t, -1):
            near[r, u] = near[r, u - 1]
            dist[r, u] = dist[r, u - 1]
        near[r, t] = c
        dist[r, t] = d


@njit
def nearest_by_segments_top(block, seg, inv_counts, const, near, dist):
    """The ``near.shape[1]`` nearest clusters of every row, nearest first (ties: the lower
    cluster), and their distances |phi(x) - m_c|^2 less the row's own K(x, x), which is
    ``const[c] - 2 inv_counts[c] sum(block[r, seg[c]:seg[c+1]])``.

    The block's columns are the centre points sorted by cluster (stable), so each cluster's sum
    runs over a contiguous segment, in the points' original order (the sums are those of
    :func:`cluster_sums`).  Empty clusters carry ``const = inf``."""
    kk = seg.shape[0] - 1
    for r in range(block.shape[0]):
        for t in range(near.shape[1]):
            near[r, t] = -1
            dist[r, t] = np.inf
        for c in range(kk):
            s = 0.0
            for u in range(seg[c], seg[c + 1]):
                s += block[r, u]
            _keep_top(near, dist, r, c, const[c] - 2.0 * (s * inv_counts[c]))
    return near


@njit
def nearest_by_sums_top(sums, extra, inv_counts, const, near, dist):
    """As :func:`nearest_by_segments_top` from the clusters' kernel sums already taken
    (``sums[r, c]``, to which ``extra[c]`` is added: the kernel bias of the cluster's points)."""
    for r in range(sums.shape[0]):
        for t in range(near.shape[1]):
            near[r, t] = -1
            dist[r, t] = np.inf
        for c in range(sums.shape[1]):
            _keep_top(near, dist, r, c, const[c] - 2.0 * ((sums[r, c] + extra[c]) * inv_counts[c]))
    return near


def nearest_centres(A, rows_a, P, points, labels, const, kernel, top, threads=None, mem_mb=64.0):
    """The ``top`` nearest centres of each row of A[rows_a] (nearest first; -1 where there are
    fewer clusters) and their distances less K(x, x); see :func:`nearest_centre`."""
    rows_a = np.asarray(rows_a, dtype=np.int64)
    kk = len(const)
    lab = np.ascontiguousarray(labels, dtype=np.int64)
    if len(lab) != len(points) or (len(lab) and (lab.min() < 0 or lab.max() >= kk)):
        raise ValueError(f"centre labels must be {len(points)} values in [0, {kk})")
    counts = np.bincount(lab, minlength=kk).astype(np.float64)
    inv_counts = np.where(counts > 0, 1.0 / np.maximum(counts, 1.0), 0.0)
    cmask = np.where(counts > 0, np.asarray(const, dtype=np.float64), np.inf)
    order = np.argsort(lab, kind="stable")
    seg = np.searchsorted(lab[order], np.arange(kk + 1)).astype(np.int64)
    pts = np.asarray(points, dtype=np.int64)[order]
    near = np.empty((len(rows_a), top), dtype=np.int64)
    dist = np.empty((len(rows_a), top))

    def consume(lo, hi, blk):
        nearest_by_segments_top(blk, seg, inv_counts, cmask, near[lo:hi], dist[lo:hi])

    def consume_sums(lo, hi, sums):
        nearest_by_sums_top(sums, extra, inv_counts, cmask, near[lo:hi], dist[lo:hi])

    dense = A.prefers_dense() and P.prefers_dense()
    extra = counts * float(kernel.kbias)
    if dense and kernel.ktype == RBF and rbf_pieces32(A, rows_a, P, pts, seg, kernel,
                                                      consume_sums, threads):
        return near, dist
    if dense:
        dense_pieces(A, rows_a, P, pts, kernel, consume, threads)
    else:
        chunk = max(64, int(mem_mb * (1 << 20) / 8 / max(1, len(pts))))
        for lo in range(0, len(rows_a), chunk):
            hi = min(len(rows_a), lo + chunk)
            consume(lo, hi, kernel_block_threads(A, rows_a[lo:hi], P, pts, kernel, threads))
    return near, dist


def nearest_centre(A, rows_a, P, points, labels, const, kernel, threads=None, mem_mb=64.0):
    """Nearest centre of each row of A[rows_a]; centre k is the mean of the points of label k.

    Kernel blocks against the points in pieces of bounded size, summed per cluster over the
    points sorted by cluster (O(rows x points) work, no dense weight matrix)."""
    return nearest_centres(A, rows_a, P, points, labels, const, kernel, 1, threads, mem_mb)[0][:, 0]

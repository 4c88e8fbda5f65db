"""Two-step kernel k-means (Chitta et al. 2011, as used by DC-SVM).

1. Kernel k-means on ``m`` sampled points: with the m x m kernel matrix ``K`` and clusters
   ``S_k``, the squared distance of point j to the centre (mean in feature space) of ``S_k`` is

       d(j, k) = K_jj - 2/|S_k| sum_{s in S_k} K_js + 1/|S_k|^2 sum_{s,t in S_k} K_st,

   and every iteration moves each point to its nearest centre (k-means++ seeding in feature
   space, at most ``max_iter`` iterations, empty clusters dropped).
2. Every one of the n points goes to its nearest centre by the same formula, which needs the
   kernel between it and the m sampled points only: O(n m) kernel values, O(m^2) memory for step
   1 and a bounded block for step 2 (:func:`svmtool.ops.kernels.kernel_expansion`).
"""

from dataclasses import dataclass

import numpy as np

from svmtool._jit import njit
from svmtool.ops.kernels import Kernel, Rows, dense_pieces, kernel_block_threads


@njit
def cluster_sums(block, col_label, kk, out):
    """out[r, c] = sum of block[r, s] over the columns s with col_label[s] == c (in column
    order).  One pass over the block; numpy's reduceat over sorted columns needed a reordered
    copy and ran at about a third of this speed (0.6 s of DC-SVM's clustering on ijcnn1)."""
    for r in range(block.shape[0]):
        for c in range(kk):
            out[r, c] = 0.0
        for s in range(block.shape[1]):
            out[r, col_label[s]] += block[r, s]
    return out


@njit
def nearest_by_segments_top(block, seg, inv_counts, const, near, dist):
    """The ``near.shape[1]`` nearest clusters of every row, nearest first (ties: the lower
    cluster), and their distances |phi(x) - m_c|^2 less the row's own K(x, x), which is
    ``const[c] - 2 inv_counts[c] sum(block[r, seg[c]:seg[c+1]])``.

    The block's columns are the centre points sorted by cluster (stable), so each cluster's sum
    runs over a contiguous segment, in the points' original order (the sums are those of
    :func:`cluster_sums`).  Empty clusters carry ``const = inf``."""
    kk = seg.shape[0] - 1
    top = near.shape[1]
    for r in range(block.shape[0]):
        for t in range(top):
            near[r, t] = -1
            dist[r, t] = np.inf
        for c in range(kk):
            s = 0.0
            for u in range(seg[c], seg[c + 1]):
                s += block[r, u]
            d = const[c] - 2.0 * (s * inv_counts[c])
            t = top
            while t > 0 and d < dist[r, t - 1]:
                t -= 1
            if t < top:
                for u in range(top - 1, t, -1):
                    near[r, u] = near[r, u - 1]
                    dist[r, u] = dist[r, u - 1]
                near[r, t] = c
                dist[r, t] = d
    return near


@dataclass
class Clustering:
    assign: np.ndarray          # cluster of every point (0..nr_cluster-1)
    sample_rows: np.ndarray     # rows of X that were sampled (they define the centres)
    sample_cluster: np.ndarray  # cluster of each sampled row
    const: np.ndarray           # 1/|S_k|^2 sum_{s,t in S_k} K_st per cluster
    near: np.ndarray = None     # with top > 1: (n, top) nearest clusters, nearest first
    dist: np.ndarray = None     # and their distances (less K(x, x), the same for every cluster)

    @property
    def nr_cluster(self):
        return len(self.const)


def kernel_kmeans(Kmat, k, rng, max_iter=30):
    """Labels (0..k'-1, k' <= k non-empty clusters) of kernel k-means on a kernel matrix."""
    m = Kmat.shape[0]
    k = max(1, min(k, m))
    diag = np.diag(Kmat).copy()
    # k-means++ seeding in feature space
    centres = [int(rng.integers(m))]
    d2 = np.maximum(diag + diag[centres[0]] - 2.0 * Kmat[:, centres[0]], 0.0)
    for _ in range(1, k):
        tot = d2.sum()
        if tot <= 0:
            c = int(rng.integers(m))
        else:
            c = int(rng.choice(m, p=d2 / tot))
        centres.append(c)
        d2 = np.minimum(d2, np.maximum(diag + diag[c] - 2.0 * Kmat[:, c], 0.0))
    cen = np.array(centres)
    dist = diag[:, None] + diag[cen][None, :] - 2.0 * Kmat[:, cen]
    labels = np.argmin(dist, axis=1)
    for _ in range(max_iter):
        labels = _compact(labels)
        kk = labels.max() + 1
        counts = np.bincount(labels, minlength=kk).astype(np.float64)
        # mean kernel of every point to each cluster: column sums per cluster, O(m^2)
        S = cluster_sums(Kmat, labels, kk, np.empty((m, kk))) / counts
        const = np.bincount(labels, weights=S[np.arange(m), labels], minlength=kk) / counts
        new = np.argmin(const[None, :] - 2.0 * S, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
    return _compact(labels)


def _compact(labels):
    _, inv = np.unique(labels, return_inverse=True)
    return inv.reshape(-1)


def centre_constants(Kmat, labels):
    kk = labels.max() + 1
    out = np.empty(kk)
    for k in range(kk):
        idx = np.flatnonzero(labels == k)
        out[k] = Kmat[np.ix_(idx, idx)].sum() / float(len(idx)) ** 2
    return out


def two_step(X: Rows, candidates, n_clusters, sample_size, kernel: Kernel, rng, threads=None,
             mem_mb=64.0, max_iter=30, top=1) -> Clustering:
    """Cluster all rows of X: kernel k-means on a sample of ``candidates``, then nearest centre
    (with ``top`` > 1 also the ``top`` nearest centres and their distances, in the same pass)."""
    candidates = np.asarray(candidates, dtype=np.int64)
    m = min(len(candidates), max(int(sample_size), 1))
    sample = np.sort(rng.choice(candidates, size=m, replace=False)) if m < len(candidates) \
        else candidates.copy()
    Kmat = kernel_block_threads(X, sample, X, sample, kernel, threads)
    labels = kernel_kmeans(Kmat, n_clusters, rng, max_iter)
    const = centre_constants(Kmat, labels)
    near, dist = nearest_centres(X, np.arange(X.n_rows), X, sample, labels, const, kernel,
                                 max(1, top), threads, mem_mb)
    more = top > 1
    return Clustering(assign=near[:, 0].copy(), sample_rows=sample, sample_cluster=labels,
                      const=const, near=near if more else None, dist=dist if more else None)


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

    if A.prefers_dense() and P.prefers_dense():
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

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
from svmtool.ops.centres import nearest_centres
from svmtool.ops.kernels import Kernel, Rows, kernel_block_threads


@njit
def cluster_sums(block, col_label, kk, out):
    """out[r, c] = sum of block[r, s] over the columns s with col_label[s] == c (in column
    order).  One pass over the block; numpy's reduceat over sorted columns needed a reordered
    copy and ran several times slower on DC-SVM's clustering of ijcnn1."""
    for r in range(block.shape[0]):
        for c in range(kk):
            out[r, c] = 0.0
        for s in range(block.shape[1]):
            out[r, col_label[s]] += block[r, s]
    return out


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


def _sample_centres(X, candidates, n_clusters, sample_size, kernel, rng, threads, max_iter):
    """Kernel k-means on a random sample of ``candidates`` (all of them when there are at most
    ``sample_size``): the sorted sample, its kernel matrix, its labels, the centre constants."""
    candidates = np.asarray(candidates, dtype=np.int64)
    m = min(len(candidates), max(int(sample_size), 1))
    sample = np.sort(rng.choice(candidates, size=m, replace=False)) if m < len(candidates) \
        else candidates.copy()
    Kmat = kernel_block_threads(X, sample, X, sample, kernel, threads)
    labels = kernel_kmeans(Kmat, n_clusters, rng, max_iter)
    return sample, Kmat, labels, centre_constants(Kmat, labels)


def two_step(X: Rows, candidates, n_clusters, sample_size, kernel: Kernel, rng, threads=None,
             mem_mb=64.0, max_iter=30, top=1) -> Clustering:
    """Cluster all rows of X: kernel k-means on a sample of ``candidates``, then nearest centre
    (with ``top`` > 1 also the ``top`` nearest centres and their distances, in the same pass)."""
    sample, Kmat, labels, const = _sample_centres(X, candidates, n_clusters, sample_size,
                                                  kernel, rng, threads, max_iter)
    near, dist = nearest_centres(X, np.arange(X.n_rows), X, sample, labels, const, kernel,
                                 max(1, top), threads, mem_mb)
    more = top > 1
    return Clustering(assign=near[:, 0].copy(), sample_rows=sample, sample_cluster=labels,
                      const=const, near=near if more else None, dist=dist if more else None)


def coarsen(X: Rows, fine: Clustering, candidates, n_clusters, sample_size, kernel: Kernel, rng,
            threads=None, max_iter=30) -> Clustering:
    """A coarser clustering whose clusters are unions of ``fine``'s, without a pass over the rows.

    Kernel k-means on a sample of ``candidates`` (DC-SVM's adaptive clustering: the support
    vectors of the level below) gives ``n_clusters`` centres; every fine cluster, whole, joins
    the centre nearest to its own centre in feature space,

        argmin_b  const_b - 2/(|F_a| |S_b|) sum_{s in F_a, t in S_b} K(s, t),

    (``F_a`` the fine sample points of cluster a, ``S_b`` the new sample points of centre b),
    which needs the kernel between the two samples only: O(m^2) kernel values instead of the
    O(n m) of assigning every row (the costly step of :func:`two_step`).  The coarse clusters
    that receive no fine cluster are dropped.
    """
    sample, Kmat, labels, const = _sample_centres(X, candidates, n_clusters, sample_size,
                                                  kernel, rng, threads, max_iter)
    kk = len(const)
    counts = np.bincount(labels, minlength=kk).astype(np.float64)
    Kfc = kernel_block_threads(X, fine.sample_rows, X, sample, kernel, threads)
    S = cluster_sums(Kfc, labels, kk, np.empty((Kfc.shape[0], kk))) / counts
    nf = fine.nr_cluster
    fcount = np.bincount(fine.sample_cluster, minlength=nf).astype(np.float64)
    M = np.zeros((nf, kk))
    np.add.at(M, fine.sample_cluster, S)
    M /= np.maximum(fcount, 1.0)[:, None]
    to = np.argmin(const[None, :] - 2.0 * M, axis=1)
    used = np.unique(to)
    renum = -np.ones(kk, dtype=np.int64)
    renum[used] = np.arange(len(used))
    keep = renum[labels] >= 0
    return Clustering(assign=renum[to][fine.assign], sample_rows=sample[keep],
                      sample_cluster=renum[labels[keep]], const=const[used])

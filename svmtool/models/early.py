"""EarlyModel (DC-SVM's early prediction, eq. 11 of Hsieh et al. 2014): for every pair, a level's
clustering (cluster centres in feature space, each the mean of the sampled points assigned to it)
and one local kernel expansion per cluster.  A row x goes to the nearest centre in feature space,

    c(x) = argmin_k  |phi(x) - m_k|^2 = argmin_k  const_k - 2/|S_k| sum_{s in S_k} K(x, s),
    const_k = 1/|S_k|^2 sum_{s, t in S_k} K(s, t),

and its decision value is that cluster's local model: ``sum_{i in cluster} coef_i K(x_i, x) -
rho_c``.  Pairs vote as above.

A multi-class early model has one clustering for all pairs instead (``EarlyModel.shared``, a
:class:`ClusterOvO`): the nearest centre of x picks a local one-vs-one model over all labels, in
LIBSVM's layout, whose pairs vote as above (svmtool.solvers.dcsvm.early_ovo says why and how).
"""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from svmtool.models.kernel import Scoring, as_rows
from svmtool.ops.centres import nearest_centre
from svmtool.ops.kernels import Kernel, Rows, kernel_expansion
from svmtool.ops.rows import take_rows


@dataclass(eq=False)
class _Centres:
    """A level's clustering as prediction needs it: the centres in feature space."""
    centres: Rows                  # sampled points that define the centres
    centre_cluster: np.ndarray     # cluster id of each sampled point
    centre_const: np.ndarray       # const_k per cluster

    @property
    def nr_cluster(self):
        return len(self.centre_const)

    def assign(self, A, kernel, threads=None, mem_mb=64.0):
        """Nearest centre of every row of A (eq. 11's pi(x))."""
        return nearest_centre(A, np.arange(A.n_rows), self.centres,
                              np.arange(self.centres.n_rows), self.centre_cluster,
                              self.centre_const, kernel, threads, mem_mb)


@dataclass(eq=False)
class LocalPair(_Centres):
    """One pair's level of DC-SVM: clustering and the per-cluster local models."""
    svs: Rows                      # support vectors of the local models
    sv_cluster: np.ndarray         # cluster id of each SV
    sv_coef: np.ndarray            # alpha_i y_i
    rho: np.ndarray                # per cluster (-kbias * sum of that cluster's coefficients)

    def decision(self, A, kernel, threads=None, mem_mb=64.0):
        c = self.assign(A, kernel, threads, mem_mb)
        out = np.zeros(A.n_rows)
        order = np.argsort(self.sv_cluster, kind="stable")
        sv_cl = self.sv_cluster[order]
        for k in np.unique(c):
            rows = np.flatnonzero(c == k)
            lo, hi = np.searchsorted(sv_cl, k), np.searchsorted(sv_cl, k, side="right")
            svk = order[lo:hi]
            if len(svk):
                out[rows] = kernel_expansion(A, rows, self.svs, svk, self.sv_coef[svk], kernel,
                                             threads, mem_mb)
            out[rows] -= self.rho[k]
        return out


@dataclass(eq=False)
class ClusterOvO(_Centres):
    """The multi-class early model's level: one clustering of all rows and, per cluster, a
    one-vs-one model over all K labels in LIBSVM's layout (svmtool.solvers.dcsvm.early_ovo)."""
    local: list                    # KernelModel per cluster (kernel bias folded into rho)

    def decision(self, A, kernel, threads=None, mem_mb=64.0):
        c = self.assign(A, kernel, threads, mem_mb)
        npairs = self.local[0].nr_w if self.local else 1
        out = np.zeros((A.n_rows, npairs))
        for k in np.unique(c):
            rows = np.flatnonzero(c == k)
            out[rows] = self.local[k].decision_function(take_rows(A, rows), mem_mb)
        return out


@dataclass(eq=False)
class EarlyModel(Scoring):
    kernel: Kernel
    labels: np.ndarray
    pairs: list                    # LocalPair per pair (i, j), i < j (empty with ``shared``)
    nr_feature: int = 0
    level: int = 0
    threads: Optional[int] = None
    report: dict = field(default_factory=dict, compare=False)
    shared: Optional[ClusterOvO] = None    # multi-class: one clustering for every pair

    def __post_init__(self):
        self.labels = np.asarray(self.labels, dtype=np.float64).reshape(-1)

    @classmethod
    def from_pairs(cls, pairs, labels, kernel, nr_feature, report=None, level=0):
        level = getattr(pairs[0], "level", level) if pairs else level
        return cls(kernel=kernel, labels=labels, pairs=list(pairs), nr_feature=nr_feature,
                   level=level, report=report or {})

    def decision_function(self, X, mem_mb=64.0):
        A = as_rows(X)
        if self.shared is not None:
            return self.shared.decision(A, self.kernel, self.threads, mem_mb)
        out = np.zeros((A.n_rows, max(1, len(self.pairs))))
        for p, lp in enumerate(self.pairs):
            out[:, p] = lp.decision(A, self.kernel, self.threads, mem_mb)
        return out

"""Kernel models: LIBSVM's kernel expansion (:class:`KernelModel`) and DC-SVM's early-prediction
model (:class:`EarlyModel`), with the same scoring interface as :class:`svmtool.model.LinearModel`
(``decision_function``, ``predict``, ``predict_index``, ``class_labels``, ``binary_score``).

KernelModel (LIBSVM's ``svm_model``): support vectors grouped class by class (``nr_sv`` per class,
in label order), ``sv_coef`` of shape (K-1, l), ``rho`` with one value per pair (i, j), i < j, in
the order (0,1), (0,2), ..., (1,2), ...  Decision value of pair (i, j) for a row x::

    dec_ij(x) = sum_{s in class i} sv_coef[j-1, s] K(s, x)
              + sum_{s in class j} sv_coef[i, s] K(s, x)
                - rho_ij

Prediction (C-SVC / nu-SVC): each pair votes for i when dec_ij > 0, else for j; the class with
most votes wins, the first on ties (LIBSVM's rule).  Two classes: ``label[0]`` iff dec > 0.
One-class: +1 iff dec > 0.  Regression (epsilon-SVR, nu-SVR): the decision value itself.

EarlyModel (DC-SVM's early prediction, eq. 11 of Hsieh et al. 2014): for every pair, a level's
clustering (cluster centres in feature space, each the mean of the sampled points assigned to it)
and one local kernel expansion per cluster.  A row x goes to the nearest centre in feature space,

    c(x) = argmin_k  |phi(x) - m_k|^2 = argmin_k  const_k - 2/|S_k| sum_{s in S_k} K(x, s),
    const_k = 1/|S_k|^2 sum_{s, t in S_k} K(s, t),

and its decision value is that cluster's local model: ``sum_{i in cluster} coef_i K(x_i, x) -
rho_c``.  Pairs vote as above.

A multi-class early model has one clustering for all pairs instead (``EarlyModel.shared``, a
:class:`ClusterOvO`): the nearest centre of x picks a local one-vs-one model over all labels, in
LIBSVM's layout, whose pairs vote as above (svmtool.solvers.early_ovo says why and how).
"""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from svmtool.ops.kernels import Kernel, Rows, kernel_block_threads, kernel_expansion

CLASSIFICATION_SVM = ("c_svc", "nu_svc")
SVM_TYPES = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")


def _as_rows(X):
    if isinstance(X, Rows):
        return X
    if isinstance(X, tuple):
        return Rows(*X)
    if hasattr(X, "indptr"):
        return Rows.of(X)
    import scipy.sparse as sp

    return Rows.of(sp.csr_matrix(np.asarray(X, dtype=np.float64)))


def vote(scores, nr_class):
    """LIBSVM's one-vs-one vote: index of the winning class per row (first on ties)."""
    n = scores.shape[0]
    if nr_class == 2:
        return np.where(scores[:, 0] > 0, 0, 1).astype(np.intp)
    votes = np.zeros((n, nr_class), dtype=np.int64)
    rows = np.arange(n)
    p = 0
    for i in range(nr_class):
        for j in range(i + 1, nr_class):
            pos = scores[:, p] > 0
            votes[rows, np.where(pos, i, j)] += 1
            p += 1
    return np.argmax(votes, axis=1).astype(np.intp)


class _Scoring:
    """What LinearModel-like consumers (cli/predict.py) call."""

    svm_type = "c_svc"
    report: dict

    @property
    def nr_class(self):
        return len(self.labels) if self.labels is not None else 2

    @property
    def nr_w(self):
        if not self.is_classification():
            return 1
        return max(1, self.nr_class * (self.nr_class - 1) // 2)

    @property
    def class_labels(self):
        if self.labels is not None:
            return self.labels
        return np.array([1.0, -1.0])

    def is_classification(self):
        return self.svm_type in CLASSIFICATION_SVM

    def is_regression(self):
        return self.svm_type in ("epsilon_svr", "nu_svr")

    def is_oneclass(self):
        return self.svm_type == "one_class"

    def is_probabilistic(self):
        return False

    def _scores(self, scores_or_X):
        if isinstance(scores_or_X, np.ndarray) and scores_or_X.ndim == 2 \
                and scores_or_X.shape[1] == self.nr_w and scores_or_X.dtype == np.float64:
            return scores_or_X
        return self.decision_function(scores_or_X)

    def predict_index(self, scores):
        if self.is_regression():
            raise ValueError("a regression model predicts values, not classes")
        if self.is_oneclass():
            return np.where(scores[:, 0] > 0, 0, 1).astype(np.intp)
        if self.nr_class == 1:
            return np.zeros(len(scores), dtype=np.intp)
        return vote(scores, self.nr_class)

    def predict(self, scores_or_X):
        scores = self._scores(scores_or_X)
        if self.is_regression():
            return scores[:, 0].copy()
        return self.class_labels[self.predict_index(scores)]

    def binary_score(self, scores):
        if self.is_regression() or len(self.class_labels) != 2:
            return None
        return scores[:, 0]


@dataclass(eq=False)
class KernelModel(_Scoring):
    kernel: Kernel
    labels: Optional[np.ndarray]          # float64 labels in LIBSVM's order (None: one-class/SVR)
    rho: np.ndarray                       # one per pair
    nr_sv: Optional[np.ndarray]           # SVs per class (classification)
    sv_indptr: np.ndarray
    sv_indices: np.ndarray
    sv_data: np.ndarray
    sv_coef: np.ndarray                   # (K-1, l)
    nr_feature: int = 0
    svm_type: str = "c_svc"
    threads: Optional[int] = None
    report: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        self.rho = np.atleast_1d(np.asarray(self.rho, dtype=np.float64))
        self.sv_coef = np.atleast_2d(np.asarray(self.sv_coef, dtype=np.float64))
        if self.labels is not None:
            self.labels = np.asarray(self.labels, dtype=np.float64).reshape(-1)
        if self.nr_sv is not None:
            self.nr_sv = np.asarray(self.nr_sv, dtype=np.int64)
        self._sv = Rows(self.sv_indptr, self.sv_indices, self.sv_data,
                        n_features=max(int(self.nr_feature),
                                       int(self.sv_indices.max()) + 1 if len(self.sv_indices)
                                       else 0))

    @property
    def total_sv(self):
        return len(self.sv_indptr) - 1

    @property
    def sv_rows(self):
        return self._sv

    def decision_function(self, X, mem_mb=64.0):
        """Decision values (n_rows, nr_w): one column per pair (LIBSVM's dec_values)."""
        A = _as_rows(X)
        n = A.n_rows
        l = self.total_sv
        all_a = np.arange(n)
        all_sv = np.arange(l)
        if not self.is_classification() or self.nr_class <= 2:
            coef = self.sv_coef[0] if l else np.zeros(0)
            out = np.zeros((n, 1))
            if l:
                out[:, 0] = kernel_expansion(A, all_a, self._sv, all_sv, coef, self.kernel,
                                             self.threads, mem_mb)
            out[:, 0] -= self.rho[0]
            return out
        K = self.nr_class
        start = np.concatenate([[0], np.cumsum(self.nr_sv)]).astype(np.int64)
        npairs = K * (K - 1) // 2
        out = np.empty((n, npairs))
        chunk = max(64, int(mem_mb * (1 << 20) / 8 / max(1, l)))
        for lo in range(0, n, chunk):
            hi = min(n, lo + chunk)
            kb = kernel_block_threads(A, all_a[lo:hi], self._sv, all_sv, self.kernel, self.threads)
            p = 0
            for i in range(K):
                si = slice(start[i], start[i + 1])
                for j in range(i + 1, K):
                    sj = slice(start[j], start[j + 1])
                    out[lo:hi, p] = (kb[:, si] @ self.sv_coef[j - 1, si]
                                     + kb[:, sj] @ self.sv_coef[i, sj] - self.rho[p])
                    p += 1
        return out


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
        from svmtool.solvers.kmeans import nearest_centre

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
    one-vs-one model over all K labels in LIBSVM's layout (svmtool.solvers.early_ovo)."""
    local: list                    # KernelModel per cluster (kernel bias folded into rho)

    def decision(self, A, kernel, threads=None, mem_mb=64.0):
        from svmtool.solvers.kernel_cd import take_rows

        c = self.assign(A, kernel, threads, mem_mb)
        npairs = self.local[0].nr_w if self.local else 1
        out = np.zeros((A.n_rows, npairs))
        for k in np.unique(c):
            rows = np.flatnonzero(c == k)
            out[rows] = self.local[k].decision_function(take_rows(A, rows), mem_mb)
        return out


@dataclass(eq=False)
class EarlyModel(_Scoring):
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
        A = _as_rows(X)
        if self.shared is not None:
            return self.shared.decision(A, self.kernel, self.threads, mem_mb)
        out = np.zeros((A.n_rows, max(1, len(self.pairs))))
        for p, lp in enumerate(self.pairs):
            out[:, p] = lp.decision(A, self.kernel, self.threads, mem_mb)
        return out

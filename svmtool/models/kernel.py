"""KernelModel: LIBSVM's kernel expansion, with the same scoring interface as
:class:`svmtool.models.linear.LinearModel`
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

Probability outputs (LIBSVM's ``-b 1``; the model's ``probA``/``probB``/``prob_density_marks``):
classification: pairwise Platt sigmoids ``P(i | i or j) = 1 / (1 + exp(A dec_ij + B))`` clipped
to [1e-7, 1 - 1e-7], coupled into one distribution by the second method of Wu, Lin and Weng
(JMLR 2004) for more than two classes; regression: ``probA`` is the width sigma of a Laplace
model of the error; one-class: ten density marks of the training decision values give
``P(normal)`` in steps of 0.1 (0.001 / 0.999 outside them).

The early-prediction model of DC-SVM (:mod:`svmtool.models.early`) scores rows the same way.
"""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from svmtool.ops.kernels import Kernel, Rows, kernel_block_threads, kernel_expansion

CLASSIFICATION_SVM = ("c_svc", "nu_svc")
SVM_TYPES = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")


def as_rows(X):
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


class Scoring:
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

    @property
    def solver_type(self):
        """The model's type as its file names it (svm_type), as LinearModel's solver_type."""
        return self.svm_type

    def has_probability_model(self):
        """Whether the model holds LIBSVM's -b 1 information for its type (SVR: sigma)."""
        if self.is_classification():
            return getattr(self, "probA", None) is not None and \
                getattr(self, "probB", None) is not None
        if self.is_regression():
            return getattr(self, "probA", None) is not None
        return getattr(self, "prob_density_marks", None) is not None

    def is_probabilistic(self):
        """Whether predict_proba gives class probabilities (not SVR's sigma)."""
        return self.has_probability_model() and not self.is_regression()

    def predict_proba(self, scores_or_X):
        """Class probabilities (n, nr_class) in label order (one-class: P(+1 normal),
        P(-1 outlier)), as LIBSVM's ``svm_predict_probability``."""
        return self.predict_with_probability(scores_or_X)[0]

    def predict_with_probability(self, scores_or_X):
        """LIBSVM's ``svm_predict_probability``: (probabilities (n, nr_class), labels); the
        label of classification is the most probable class, as LIBSVM's.

        Regression has no distribution here (``probA`` is the Laplace sigma).
        """
        scores = self._scores(scores_or_X)
        if self.is_oneclass():
            p = one_class_probability(scores[:, 0], self.prob_density_marks)
            return np.column_stack([p, 1.0 - p]), np.where(scores[:, 0] > 0, 1.0, -1.0)
        if not self.is_classification():
            raise ValueError("a regression model has no class probabilities")
        K = self.nr_class
        if K == 1:
            return np.ones((len(scores), 1)), self.class_labels[np.zeros(len(scores), int)]
        pair = np.clip(sigmoid_predict(scores, self.probA, self.probB), MIN_PROB, 1 - MIN_PROB)
        if K == 2:
            prob = np.column_stack([pair[:, 0], 1.0 - pair[:, 0]])
        else:
            prob = np.empty((len(scores), K))
            r = np.zeros((K, K))
            for row in range(len(scores)):
                q = 0
                for i in range(K):
                    for j in range(i + 1, K):
                        r[i, j] = pair[row, q]
                        r[j, i] = 1.0 - pair[row, q]
                        q += 1
                prob[row] = couple_pairwise(r)
        return prob, self.class_labels[np.argmax(prob, axis=1)]

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


MIN_PROB = 1e-7


def sigmoid_predict(dec, A, B):
    """1 / (1 + exp(A dec + B)), computed without overflow (per column of ``dec``)."""
    f = np.asarray(dec, dtype=np.float64) * np.asarray(A) + np.asarray(B)
    e = np.exp(-np.abs(f))
    return np.where(f >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def couple_pairwise(r, max_iter=None):
    """Class probabilities from pairwise ones r[i, j] = P(i | i or j): the second method of
    Wu, Lin and Weng (2004), min_p 1/2 p'Qp over the simplex with Q_tt = sum_{s != t} r_st^2,
    Q_st = -r_st r_ts, solved by their fixed-point iteration (stop at 0.005 / k)."""
    k = r.shape[0]
    Q = -r.T * r
    np.fill_diagonal(Q, 0.0)
    rr = r * r
    np.fill_diagonal(rr, 0.0)
    Q[np.diag_indices(k)] = rr.sum(axis=0)
    p = np.full(k, 1.0 / k)
    eps = 0.005 / k
    for _ in range(max(100, k) if max_iter is None else max_iter):
        Qp = Q @ p
        pQp = float(p @ Qp)
        if np.max(np.abs(Qp - pQp)) < eps:
            break
        for t in range(k):
            diff = (pQp - Qp[t]) / Q[t, t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t, t] + 2.0 * Qp[t])) / (1.0 + diff) / (1.0 + diff)
            Qp = (Qp + diff * Q[t]) / (1.0 + diff)
            p /= 1.0 + diff
    return p


def one_class_probability(dec, marks):
    """P(normal) from the ten density marks: 0.001 below the first, 0.999 above the last,
    else i / 10 for the first mark i the value lies below."""
    dec = np.asarray(dec, dtype=np.float64)
    marks = np.asarray(marks, dtype=np.float64)
    n = len(marks)
    out = np.empty(len(dec))
    for t, v in enumerate(dec):
        if v < marks[0]:
            out[t] = 0.001
        elif v > marks[-1]:
            out[t] = 0.999
        else:
            out[t] = 0.0            # (a value equal to the last mark: LIBSVM's 0)
            for i in range(1, n):
                if v < marks[i]:
                    out[t] = i / n
                    break
    return out


@dataclass(eq=False)
class KernelModel(Scoring):
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
    probA: Optional[np.ndarray] = None    # Platt's A per pair; SVR: the Laplace sigma
    probB: Optional[np.ndarray] = None
    prob_density_marks: Optional[np.ndarray] = None   # one-class: ten marks

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

    def _precomputed_decision(self, A):
        """-t 4: the rows (read with zero-based indices) hold K(x, sv) in the column of the
        support vector's serial number."""
        sv = self._sv
        serial = np.asarray(sv.data[sv.indptr[:-1]], dtype=np.int64) if self.total_sv else \
            np.zeros(0, dtype=np.int64)
        width = max(A.n_features, int(serial.max()) + 1 if len(serial) else 1)
        kb = A.dense(width)[:, serial]
        return self._combine(kb, A.n_rows)

    def _combine(self, kb, n):
        """Decision values from the kernel block kb (n, total_sv)."""
        if not self.is_classification() or self.nr_class <= 2:
            coef = self.sv_coef[0] if self.total_sv else np.zeros(0)
            rho = self.rho[0] if len(self.rho) else 0.0
            return (kb @ coef - rho).reshape(n, 1)
        K = self.nr_class
        start = np.concatenate([[0], np.cumsum(self.nr_sv)]).astype(np.int64)
        out = np.empty((n, K * (K - 1) // 2))
        p = 0
        for i in range(K):
            si = slice(start[i], start[i + 1])
            for j in range(i + 1, K):
                sj = slice(start[j], start[j + 1])
                out[:, p] = kb[:, si] @ self.sv_coef[j - 1, si] + kb[:, sj] @ self.sv_coef[i, sj] \
                    - self.rho[p]
                p += 1
        return out

    def decision_function(self, X, mem_mb=64.0):
        """Decision values (n_rows, nr_w): one column per pair (LIBSVM's dec_values)."""
        A = as_rows(X)
        n = A.n_rows
        l = self.total_sv
        if self.kernel.ktype == 4:
            return self._precomputed_decision(A)
        all_a = np.arange(n)
        all_sv = np.arange(l)
        if not self.is_classification() or self.nr_class <= 2:
            coef = self.sv_coef[0] if l else np.zeros(0)
            out = np.zeros((n, 1))
            if l:
                out[:, 0] = kernel_expansion(A, all_a, self._sv, all_sv, coef, self.kernel,
                                             self.threads, mem_mb)
            if len(self.rho):              # (a model of one class has no pair, no rho)
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

"""LinearModel: a LIBLINEAR-compatible linear model and how it turns rows into decisions.

A model holds one weight column per decision function, ``w`` of shape ``(n_rows_w, nr_w)``,
feature-major exactly like the ``w`` section of a LIBLINEAR model file: row ``j`` holds feature
``j + 1``'s weights for every column, and when ``bias >= 0`` one more row holds the weights of the
constant bias feature (value ``bias``, index ``nr_feature + 1``).

Decision values of a row ``x`` (what LIBLINEAR's ``predict_values`` computes)::

    dec[k] = sum_{j < nr_feature} x_j * w[j, k]  (+ bias * w[nr_feature, k] when bias >= 0)
             (- rho for a one-class model)

Features at or beyond ``nr_feature`` (0-based) are ignored, as LIBLINEAR ignores test features
the training set never had.  The terms are added in the row's column order and the bias term
last, the order LIBLINEAR uses, so decision values agree with LIBLINEAR's to the last bit.

From decision values to a prediction:

* two-class classification (``nr_w == 1``): ``label[0]`` if ``dec > 0`` else ``label[1]``;
* more classes, and MCSVM_CS even with two classes (``nr_w == nr_class``): the label of the
  largest decision value, the first one on ties;
* regression (SVR solver types): the decision value itself;
* one-class: ``+1`` if ``dec > 0`` else ``-1``.

Probabilities (``-b 1``, logistic-regression solver types only) follow LIBLINEAR: a sigmoid
``1 / (1 + exp(-dec))`` per column; with two classes ``p = (s, 1 - s)``, with more the column
sigmoids are normalised to sum to one (one-vs-rest).
"""

import sys
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

# LIBLINEAR's solver types: name -> its -s number.
SOLVER_TYPES = {
    "L2R_LR": 0,
    "L2R_L2LOSS_SVC_DUAL": 1,
    "L2R_L2LOSS_SVC": 2,
    "L2R_L1LOSS_SVC_DUAL": 3,
    "MCSVM_CS": 4,
    "L1R_L2LOSS_SVC": 5,
    "L1R_LR": 6,
    "L2R_LR_DUAL": 7,
    "L2R_L2LOSS_SVR": 11,
    "L2R_L2LOSS_SVR_DUAL": 12,
    "L2R_L1LOSS_SVR_DUAL": 13,
    "ONECLASS_SVM": 21,
}
REGRESSION_TYPES = frozenset({"L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL"})
ONECLASS_TYPES = frozenset({"ONECLASS_SVM"})
PROBABILISTIC_TYPES = frozenset({"L2R_LR", "L1R_LR", "L2R_LR_DUAL"})
CLASSIFICATION_TYPES = frozenset(SOLVER_TYPES) - REGRESSION_TYPES - ONECLASS_TYPES

# Below this many stored values, and while numba is not loaded yet, decision values are computed
# with numpy (same arithmetic, same order) instead of loading numba just for them: numba's import
# and first cached call cost far more than scoring a small file (see PERFORMANCE-NOTES.md).
_NUMPY_PATH_MAX_NNZ = 1 << 20


def nr_w_for(solver_type: str, nr_class: int) -> int:
    """Number of weight columns LIBLINEAR stores for a model of this type and class count."""
    return 1 if (nr_class == 2 and solver_type != "MCSVM_CS") else nr_class


@dataclass(eq=False)
class LinearModel:
    solver_type: str                      # LIBLINEAR's name, e.g. "L2R_L2LOSS_SVC_DUAL"
    labels: Optional[np.ndarray]          # float64 class labels; None for regression / one-class
    nr_feature: int                       # features, without the bias column
    bias: float                           # value of the bias feature; < 0: no bias column
    w: np.ndarray                         # float64 (nr_feature [+1 with bias], nr_w)
    rho: Optional[float] = None           # one-class offset, else None
    report: dict = field(default_factory=dict, compare=False)  # training report; not saved

    def __post_init__(self):
        if self.solver_type in REGRESSION_TYPES or self.solver_type in ONECLASS_TYPES:
            self.labels = None      # LIBLINEAR keeps no labels for these (nr_class is 2)
        if self.labels is not None:
            self.labels = np.ascontiguousarray(self.labels, dtype=np.float64).reshape(-1)
        w = np.asarray(self.w, dtype=np.float64)
        if w.ndim == 1:
            w = w.reshape(-1, 1)
        self.w = np.ascontiguousarray(w)
        self.nr_feature = int(self.nr_feature)
        self.bias = float(self.bias)
        if self.rho is not None:
            self.rho = float(self.rho)
        problem = self.check()
        if problem:
            raise ValueError(problem)

    def __eq__(self, other):
        """Same type, header and weights (value for value; ``report`` is not compared)."""
        if not isinstance(other, LinearModel):
            return NotImplemented

        def same(a, b):
            if a is None or b is None:
                return a is None and b is None
            return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)

        return (self.solver_type == other.solver_type and self.nr_feature == other.nr_feature
                and self.bias == other.bias and self.rho == other.rho
                and same(self.labels, other.labels) and same(self.w, other.w))

    __hash__ = None

    # ---- shape --------------------------------------------------------------------------------
    @property
    def has_bias(self) -> bool:
        return self.bias >= 0

    @property
    def nr_class(self) -> int:
        """Classes as LIBLINEAR counts them (2 for regression and one-class models)."""
        return len(self.labels) if self.labels is not None else 2

    @property
    def nr_w(self) -> int:
        return self.w.shape[1]

    @property
    def class_labels(self) -> np.ndarray:
        """Labels a prediction can take (one-class models predict +1 / -1)."""
        if self.labels is not None:
            return self.labels
        return np.array([1.0, -1.0])

    def is_regression(self) -> bool:
        return self.solver_type in REGRESSION_TYPES

    def is_oneclass(self) -> bool:
        return self.solver_type in ONECLASS_TYPES

    def is_probabilistic(self) -> bool:
        """True for logistic-regression models, the only ones LIBLINEAR gives -b 1 for."""
        return self.solver_type in PROBABILISTIC_TYPES

    def check(self) -> Optional[str]:
        """A message naming what is inconsistent, or None."""
        if self.solver_type not in SOLVER_TYPES:
            return f"unknown solver_type {self.solver_type!r}"
        if self.nr_feature < 0:
            return f"nr_feature must be >= 0 (got {self.nr_feature})"
        if self.solver_type in CLASSIFICATION_TYPES:
            if self.labels is None or len(self.labels) < 1:
                return f"a {self.solver_type} model needs class labels"
        expected_rows = self.nr_feature + (1 if self.has_bias else 0)
        if self.w.ndim != 2 or self.w.shape[0] != expected_rows:
            return (f"w has shape {self.w.shape}, expected {expected_rows} rows "
                    f"(nr_feature {self.nr_feature}{' + bias' if self.has_bias else ''})")
        expected_cols = nr_w_for(self.solver_type, self.nr_class)
        if self.w.shape[1] != expected_cols:
            return f"w has {self.w.shape[1]} columns, expected {expected_cols}"
        if self.is_oneclass() and self.rho is None:
            return "a one-class model needs rho"
        return None

    # ---- scoring ------------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """Decision values, shape ``(n_rows, nr_w)`` float64.

        ``X``: a :class:`svmtool.problem.Problem`, anything with CSR ``indptr``/``indices``/``data``
        attributes (a scipy CSR matrix), a tuple ``(indptr, indices, data)``, or a dense 2-D array.
        Column ``j`` is feature ``j + 1``.
        """
        if isinstance(X, tuple):
            indptr, indices, data = X
        elif hasattr(X, "indptr") and hasattr(X, "indices") and hasattr(X, "data"):
            if hasattr(X, "has_sorted_indices") and getattr(X, "format", "csr") != "csr":
                raise TypeError("decision_function needs CSR rows")
            indptr, indices, data = X.indptr, X.indices, X.data
        else:
            return self._decision_dense(np.asarray(X, dtype=np.float64))
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices)
        if indices.dtype != np.int32 and indices.dtype != np.int64:
            indices = indices.astype(np.int64)
        data = np.ascontiguousarray(data, dtype=np.float64)
        if len(indptr) == 0:
            raise ValueError("indptr must hold at least one entry")
        n = len(indptr) - 1
        out = np.empty((n, self.nr_w), dtype=np.float64)
        nnz = int(indptr[-1] - indptr[0])
        if "numba" not in sys.modules and nnz <= _NUMPY_PATH_MAX_NNZ:
            _decision_values_numpy(indptr, indices, data, self.w, self.nr_feature, self.bias, out)
        else:
            from svmtool.ops.predict import decision_values

            decision_values(indptr, indices, data, self.w, self.nr_feature, self.bias, out)
        if self.rho is not None and self.is_oneclass():
            out[:, 0] -= self.rho
        return out

    def _decision_dense(self, X):
        if X.ndim != 2:
            raise ValueError(f"expected a 2-D array of rows, got shape {X.shape}")
        nf = min(X.shape[1], self.nr_feature)
        out = X[:, :nf] @ self.w[:nf]
        if self.has_bias:
            out += self.bias * self.w[self.nr_feature]
        if self.rho is not None and self.is_oneclass():
            out[:, 0] -= self.rho
        return np.ascontiguousarray(out)

    def _scores(self, scores_or_X):
        """Decision values: a numpy array is taken as scores already, anything else (a Problem,
        a CSR matrix, a tuple of CSR arrays) is scored first.  Dense rows: call
        :meth:`decision_function` yourself."""
        if not isinstance(scores_or_X, np.ndarray):
            return self.decision_function(scores_or_X)
        scores = np.asarray(scores_or_X, dtype=np.float64)
        if scores.ndim == 1 and self.nr_w == 1:
            scores = scores.reshape(-1, 1)
        if scores.ndim != 2 or scores.shape[1] != self.nr_w:
            raise ValueError(f"expected decision values of shape (n, {self.nr_w}), "
                             f"got {scores_or_X.shape}")
        return scores

    def predict(self, scores_or_X) -> np.ndarray:
        """Predicted labels (float64) from decision values (or from rows, scored first)."""
        scores = self._scores(scores_or_X)
        if self.is_regression():
            return scores[:, 0].copy()
        if self.is_oneclass():
            return np.where(scores[:, 0] > 0, 1.0, -1.0)
        return self.labels[self.predict_index(scores)]

    def predict_index(self, scores) -> np.ndarray:
        """Index into :attr:`class_labels` of each prediction (classification and one-class)."""
        if self.is_regression():
            raise ValueError("a regression model predicts values, not classes")
        if len(self.class_labels) == 1:
            # a model trained on one class (nr_w 1 and nr_class 1) always predicts it
            return np.zeros(len(scores), dtype=np.intp)
        if self.nr_w == 1:
            return np.where(scores[:, 0] > 0, 0, 1).astype(np.intp)
        if len(scores) == 0:
            return np.empty(0, dtype=np.intp)
        return np.argmax(scores, axis=1)

    def binary_score(self, scores) -> Optional[np.ndarray]:
        """One score per row that ranks ``class_labels[0]`` first, for two-class models."""
        if self.is_regression() or len(self.class_labels) != 2:
            return None
        if self.nr_w == 1:
            return scores[:, 0]
        return scores[:, 0] - scores[:, 1]

    def predict_proba(self, scores_or_X) -> np.ndarray:
        """Class probabilities ``(n_rows, nr_class)`` in label order (logistic regression only)."""
        if not self.is_probabilistic():
            raise ValueError(f"probability estimates need a logistic-regression model, "
                             f"not {self.solver_type}")
        scores = self._scores(scores_or_X)
        with np.errstate(over="ignore"):
            s = 1.0 / (1.0 + np.exp(-scores))
        if self.nr_class == 2:
            p = np.empty((len(s), 2), dtype=np.float64)
            p[:, 0] = s[:, 0]
            p[:, 1] = 1.0 - s[:, 0]
            return p
        return s / s.sum(axis=1, keepdims=True)


def _decision_values_numpy(indptr, indices, data, w, nr_feature, bias, out):
    """numpy twin of :func:`svmtool.ops.predict.decision_values`, bit-identical to it.

    ``np.bincount`` with weights adds the products into their rows one after another in storage
    order, the same order the jitted kernel (and LIBLINEAR) uses.
    """
    n = len(indptr) - 1
    nr_w = w.shape[1]
    lo, hi = int(indptr[0]), int(indptr[-1])
    rows = np.repeat(np.arange(n, dtype=np.intp), np.diff(indptr))
    cols = indices[lo:hi]
    vals = data[lo:hi]
    keep = (cols >= 0) & (cols < nr_feature)
    if not keep.all():
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
    for k in range(nr_w):
        out[:, k] = np.bincount(rows, weights=w[cols, k] * vals, minlength=n)
    if bias >= 0:
        out += w[nr_feature] * bias
    return out

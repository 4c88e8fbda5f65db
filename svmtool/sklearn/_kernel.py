"""Kernel estimators: SVC, NuSVC, SVR, NuSVR and OneClassSVM over svmtool's exact SMO solvers
of LIBSVM's five problems (``c_svc``, ``nu_svc``, ``epsilon_svr``, ``nu_svr``, ``one_class``),
and DCSVC over DC-SVM (``dcsvm``, or the plain kernel CD solver ``kernel``).

Parameters follow scikit-learn's SVC family: ``kernel`` ("linear", "poly", "rbf", "sigmoid",
"precomputed"; no callables), ``gamma`` ("scale": 1 / (n_features * X.var()), "auto":
1 / n_features, or a number), ``degree``, ``coef0``, ``tol``, ``cache_size`` (MB),
``shrinking``, ``max_iter`` (-1: the solver's cap), ``class_weight`` (C-SVC, DC-SVM),
``probability`` (LIBSVM's -b 1: Platt's sigmoids from 5-fold cross validation, and
``predict_proba``), ``decision_function_shape`` and ``break_ties``, plus ``threads`` (the
one-vs-one pairs run on threads).

One-vs-one decision values come in scikit-learn's order: pair (i, j) of ``classes_``, i < j,
positive for class i; with two classes one value, positive for ``classes_[1]``.
"""


import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if

from svmtool.models.kernel import CLASSIFICATION_SVM, vote
from svmtool.params import DcsvmParams, KernelParams, LibsvmParams, OneClassParams, SvrParams
from svmtool.solvers import get_spec
from svmtool.problem import Problem
from svmtool.sklearn._base import ClassifierCodes, SvmtoolEstimator, declared_parameters, \
    declared_values, is_path, iterations, keep_params, with_labels, with_sample_weight
from svmtool.sklearn._table import solvers_of

KERNELS = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}


def gamma_of(gamma, problem):
    """A number for ``gamma`` ("scale" uses the variance of all n x d entries of X, each row
    counted as often as its instance weight says: a row of weight k as k rows)."""
    d = problem.n_features
    if gamma == "auto":
        return 1.0 / d if d else 1.0
    if gamma == "scale":
        lo, hi = int(problem.indptr[0]), int(problem.indptr[-1])
        vals = problem.data[lo:hi]
        if problem.weights is None:
            cells = float(problem.n_rows) * d
            total, squares = float(np.sum(vals)), float(np.dot(vals, vals))
        else:
            w = np.repeat(np.asarray(problem.weights, dtype=np.float64),
                          np.diff(problem.indptr))
            cells = float(np.sum(problem.weights)) * d
            total, squares = float(w @ vals), float(w @ (vals * vals))
        if cells == 0:
            return 1.0
        mean = total / cells
        var = squares / cells - mean * mean
        return 1.0 / (d * var) if var > 0 else 1.0
    if isinstance(gamma, str):
        raise ValueError(f"gamma must be 'scale', 'auto' or a number >= 0 (got {gamma!r})")
    return float(gamma)


def sparse_input(X):
    """Whether the support vectors are handed back sparse (as the training rows were)."""
    return sp.issparse(X) or is_path(X) or isinstance(X, Problem)


def pair_index(a, b, K):
    """Index of pair (a, b), a < b, among LIBSVM's pairs (0,1), (0,2), ..., (1,2), ..."""
    return a * K - a * (a + 1) // 2 + (b - a - 1)


def sorted_pairs(pos):
    """(columns, signs): the model's pair column and sign of each pair (i, j), i < j, of
    classes_, where class k is the model's label ``pos[k]``."""
    K = len(pos)
    cols, signs = [], []
    for i in range(K):
        for j in range(i + 1, K):
            a, b = pos[i], pos[j]
            cols.append(pair_index(min(a, b), max(a, b), K))
            signs.append(1.0 if a < b else -1.0)
    return np.asarray(cols, dtype=np.intp), np.asarray(signs)


def ovr_from_ovo(dec, K):
    """One-vs-rest scores from one-vs-one ones (pairs in the order of classes_): each class's
    votes plus its summed confidence squashed into (-1/3, 1/3), so that the votes decide and the
    confidences only break their ties."""
    votes = np.zeros((len(dec), K))
    conf = np.zeros((len(dec), K))
    p = 0
    for i in range(K):
        for j in range(i + 1, K):
            d = dec[:, p]
            votes[:, i] += d > 0
            votes[:, j] += d <= 0
            conf[:, i] += d
            conf[:, j] -= d
            p += 1
    return votes + conf / (3.0 * (np.abs(conf) + 1.0))


class KernelEstimator(SvmtoolEstimator):
    """The kernel options and the data transforms of ``kernel="precomputed"``."""

    _svm = "c_svc"

    def _finish_max_iter(self, problem):
        # SMO steps per subproblem; LIBSVM's own cap, max(10^7, 100 l), is for a loose tol
        return max(100_000, 50 * problem.n_rows)

    def _solver(self):
        return self._svm

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _kernel_params(self, problem):
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {', '.join(KERNELS)} (got {self.kernel!r})")
        ktype = KERNELS[self.kernel]
        gamma = 1.0 if ktype == 4 else gamma_of(self.gamma, problem)
        self._gamma = gamma
        return KernelParams(kernel_type=ktype, gamma=gamma, degree=int(self.degree),
                            coef0=float(self.coef0), cache_mb=float(self.cache_size))

    def _transform_train(self, X):
        if self.kernel != "precomputed":
            return X
        if X.shape[0] != X.shape[1]:
            raise ValueError(f"a precomputed kernel is a square matrix: X is {X.shape[0]} x "
                             f"{X.shape[1]}")
        # LIBSVM's -t 4 rows: the row's serial number in column 0, K(x_i, x_s) in column s
        serial = np.arange(1, X.shape[0] + 1, dtype=np.float64).reshape(-1, 1)
        return sp.hstack([sp.csr_matrix(serial), X], format="csr") if sp.issparse(X) \
            else np.hstack([serial, X])

    def _transform_test(self, X):
        if self.kernel != "precomputed":
            return X
        zero = np.zeros((X.shape[0], 1))
        return sp.hstack([sp.csr_matrix(zero), X], format="csr") if sp.issparse(X) \
            else np.hstack([zero, X])

    def _fit_kernel(self, problem, kwargs, init_model=None, previous=None):
        spec = get_spec(kwargs["solver"])
        start, classes = self._start_model(init_model, previous, spec)
        if hasattr(self, "_recode"):
            start = self._recode(start, classes)
        self._model = self._train(problem, kwargs, start)
        return self

    def _n_iter(self, model):
        its = iterations(model)
        return its if self._svm in CLASSIFICATION_SVM else int(its.max())

    # ---- the model's arrays, as scikit-learn names them --------------------------------------
    def _sv_matrix(self, order=None):
        m = self._model
        X = sp.csr_matrix((m.sv_data, m.sv_indices, m.sv_indptr),
                          shape=(m.total_sv, m.nr_feature))
        if self.kernel == "precomputed":
            X = X[:, 1:]
        if order is not None:
            X = X[order]
        return X if self._input_sparse else X.toarray()

    @property
    def support_vectors_(self):
        return self._sv_matrix(self._layout()[0])

    @property
    def dual_coef_(self):
        return self._layout()[1]

    @property
    def intercept_(self):
        return self._layout()[2]

    @property
    def n_support_(self):
        return self._layout()[3]

    @property
    def coef_(self):
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available with kernel='linear'")
        return np.asarray(self.dual_coef_ @ self._sv_matrix(self._layout()[0]))

    def _layout(self):
        """(support vector order, dual_coef_, intercept_, n_support_) as scikit-learn lays them
        out: one problem (regression, one-class) as the model holds it."""
        m = self._model
        return (np.arange(m.total_sv), m.sv_coef.copy(), -m.rho.copy(),
                np.array([m.total_sv], dtype=np.int32))


class KernelClassifier(ClassifierCodes, ClassifierMixin, KernelEstimator, BaseEstimator):
    """What SVC, NuSVC and DCSVC share: labels, one-vs-one decision values, probabilities."""

    def _train_kwargs(self, problem):
        raise NotImplementedError

    def fit(self, X, y=None, sample_weight=None, *, init_model=None):
        """Train on ``X`` (array, sparse matrix, path or Problem) and labels ``y`` (a path's own
        labels when None); ``sample_weight``: row i's C is multiplied by it (a path's own
        ``cost:`` weights when None); ``init_model`` (DCSVC): a model, model file or fitted
        estimator whose support vectors start the solver."""
        previous = self._previous()
        self._input_sparse = sparse_input(X)
        problem, y = self._training_problem(X, y)
        problem = with_sample_weight(problem, sample_weight)
        if problem.weights is not None and \
                len(np.unique(np.asarray(y)[problem.weights > 0])) < 2:
            raise ValueError("the rows of sample_weight > 0 hold one class: a classifier needs "
                             "two classes")
        codes = self._encode_labels(y, problem)
        problem = with_labels(problem, y if codes is None else codes)
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo' "
                             f"(got {self.decision_function_shape!r})")
        kwargs = dict(self._common_kwargs(), **self._train_kwargs(problem))
        self._fit_kernel(problem, kwargs, init_model, previous)
        self._set_positions(self._model)
        self._pairs = sorted_pairs(self._pos)
        return self

    def _ovo(self, X):
        """One-vs-one decision values, pairs of classes_ in order, positive for the first."""
        dec = self._raw_decision(X)
        cols, signs = self._pairs
        return dec[:, cols] * signs

    def decision_function(self, X):
        """Two classes: (n,), positive for classes_[1]; more: (n, classes) one-vs-rest scores
        (``decision_function_shape="ovr"``) or (n, pairs) one-vs-one values ("ovo")."""
        dec = self._ovo(X)
        K = len(self.classes_)
        if K == 2:
            return -dec[:, 0]
        if self.decision_function_shape == "ovr":
            return ovr_from_ovo(dec, K)
        return dec

    def predict(self, X):
        """LIBSVM's vote of the pairs (the first of classes_ on ties), or with ``break_ties``
        the largest one-vs-rest score."""
        dec = self._ovo(X)
        K = len(self.classes_)
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties needs decision_function_shape='ovr'")
        if self.break_ties and K > 2:
            return self.classes_[np.argmax(ovr_from_ovo(dec, K), axis=1)]
        return self.classes_[vote(dec, K)]

    def _has_probability(self):
        if not getattr(self, "probability", False):
            raise AttributeError("predict_proba needs probability=True")
        return True

    @available_if(_has_probability)
    def predict_proba(self, X):
        """LIBSVM's probabilities (pairwise Platt sigmoids, coupled), classes in order."""
        dec = self._raw_decision(X)
        return self._model.predict_proba(dec)[:, self._pos]

    @available_if(_has_probability)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def _layout(self):
        """scikit-learn's layout of the one-vs-one model: support vectors class by class in the
        order of classes_, dual_coef_ row r of a class-k vector for its pair with class
        r (+1 from k on), signed for the first class of the pair; two classes: signed for
        classes_[1], as decision_function."""
        m = self._model
        K = len(self.classes_)
        start = np.concatenate([[0], np.cumsum(m.nr_sv)]).astype(np.int64)
        order = np.concatenate([np.arange(start[p], start[p + 1]) for p in self._pos])
        coef = np.zeros((K - 1, len(order)))
        at = 0
        for k in range(K):
            a = self._pos[k]
            block = np.arange(start[a], start[a + 1])
            for mm in range(K):
                if mm == k:
                    continue
                b = self._pos[mm]
                row_model = b - 1 if b > a else b
                row = mm - 1 if mm > k else mm
                same = (k < mm) == (a < b)
                coef[row, at:at + len(block)] = m.sv_coef[row_model, block] * (1 if same else -1)
            at += len(block)
        cols, signs = self._pairs
        intercept = -m.rho[cols] * signs
        n_support = m.nr_sv[self._pos].astype(np.int32)
        if K == 2:
            coef, intercept = -coef, -intercept
        return order, coef, intercept, n_support


@declared_parameters
class SVC(KernelClassifier):
    """C-support vector classification, LIBSVM's problem solved exactly (svmtool's SMO).

    scikit-learn's SVC parameters (``probability`` is LIBSVM's -b 1 here, not deprecated), plus
    ``threads``.  ``random_state`` seeds the probability folds; None is seed 1."""

    _svm = "c_svc"

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, probability=False, tol=1e-3, cache_size=200,
                 class_weight=None, verbose=False, max_iter=-1, decision_function_shape="ovr",
                 break_ties=False, random_state=None, threads=None):
        keep_params(self, locals())

    def _train_kwargs(self, problem):
        return {"solver": self._svm, "C": float(self.C), "kernel": self._kernel_params(problem),
                "shrinking": bool(self.shrinking), "weights": self._class_weights(problem.y),
                "libsvm": LibsvmParams(probability=bool(self.probability),
                                       seed=self._common_kwargs()["seed"])}


@declared_parameters
class NuSVC(SVC):
    """nu-support vector classification (LIBSVM's nu-SVC; ``nu`` instead of C, no class
    weights)."""

    _svm = "nu_svc"

    def __init__(self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, probability=False, tol=1e-3, cache_size=200, verbose=False,
                 max_iter=-1, decision_function_shape="ovr", break_ties=False,
                 random_state=None, threads=None):
        keep_params(self, locals())

    def _train_kwargs(self, problem):
        return {"solver": self._svm, "kernel": self._kernel_params(problem),
                "shrinking": bool(self.shrinking),
                "oneclass": OneClassParams(nu=float(self.nu)),
                "libsvm": LibsvmParams(probability=bool(self.probability),
                                       seed=self._common_kwargs()["seed"])}



@declared_parameters
class DCSVC(KernelClassifier):
    """Kernel SVM by divide and conquer (DC-SVM, Hsieh et al. 2014; ``solver="kernel"``: the
    same problem by greedy dual CD alone).

    svmtool's kernel SVM regularises its bias (K + B^2, B = ``intercept_scaling``;
    ``fit_intercept=False``: no bias, the paper's problem) instead of LIBSVM's equality
    constraint, so its models are close to SVC's, not equal.  ``early=True`` returns DC-SVM's
    early-prediction model (level ``early_level``); ``levels``, ``clusters`` (k), ``sample`` as
    ``svmtool train -s dcsvm``; ``warm_start`` and ``fit(..., init_model=...)`` start from
    another model's support vectors; ``dask`` runs the levels' subproblems on a cluster."""

    # early, early_level, levels, clusters and sample: their declarations (declared_parameters)
    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3,
                 class_weight=None, fit_intercept=True, intercept_scaling=1.0, solver="dcsvm",
                 cache_size=200, max_iter=None, decision_function_shape="ovr",
                 break_ties=False, random_state=None, threads=None, warm_start=False,
                 dask=None, verbose=False):
        keep_params(self, locals())

    def _solver(self):
        return self.solver

    def _train_kwargs(self, problem):
        if self.solver not in solvers_of("DCSVC"):
            raise ValueError(f"solver must be one of {', '.join(solvers_of('DCSVC'))} (got "
                             f"{self.solver!r})")
        if self.kernel == "precomputed":
            raise ValueError("DCSVC computes its kernel from the rows: no 'precomputed'")
        kw = {"solver": self.solver, "C": float(self.C), "kernel": self._kernel_params(problem),
              "bias": float(self.intercept_scaling) if self.fit_intercept else -1.0,
              "weights": self._class_weights(problem.y)}
        if get_spec(self.solver).reads("dcsvm"):
            kw["dcsvm"] = DcsvmParams(**declared_values(self, "dcsvm"))
        elif self.early:
            raise ValueError("early=True needs solver='dcsvm'")
        return kw

    def _layout(self):
        if not hasattr(self._model, "sv_coef"):
            raise AttributeError("an early-prediction model (early=True) has no single set of "
                                 "support vectors")
        return super()._layout()


class KernelRegressor(RegressorMixin, KernelEstimator, BaseEstimator):
    def fit(self, X, y=None, sample_weight=None):
        """Train on ``X`` (array, sparse matrix, path or Problem) and real targets ``y``;
        ``sample_weight``: both bounds of row i are C times it."""
        self._input_sparse = sparse_input(X)
        problem, _ = self._training_problem(X, y, y_numeric=True)
        problem = with_sample_weight(problem, sample_weight)
        kwargs = dict(self._common_kwargs(), **self._train_kwargs(problem))
        return self._fit_kernel(problem, kwargs)

    def predict(self, X):
        return self._raw_decision(X)[:, 0]


@declared_parameters
class SVR(KernelRegressor):
    """epsilon-support vector regression (LIBSVM's epsilon-SVR)."""

    _svm = "epsilon_svr"

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0,
                 epsilon=0.1, shrinking=True, cache_size=200, verbose=False, max_iter=-1,
                 threads=None):
        keep_params(self, locals())

    def _train_kwargs(self, problem):
        return {"solver": self._svm, "C": float(self.C), "kernel": self._kernel_params(problem),
                "shrinking": bool(self.shrinking), "svr": SvrParams(p=float(self.epsilon))}


@declared_parameters
class NuSVR(KernelRegressor):
    """nu-support vector regression (LIBSVM's nu-SVR)."""

    _svm = "nu_svr"

    def __init__(self, *, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 shrinking=True, tol=1e-3, cache_size=200, verbose=False, max_iter=-1,
                 threads=None):
        keep_params(self, locals())

    def _train_kwargs(self, problem):
        return {"solver": self._svm, "C": float(self.C), "kernel": self._kernel_params(problem),
                "shrinking": bool(self.shrinking),
                "oneclass": OneClassParams(nu=float(self.nu))}


@declared_parameters
class OneClassSVM(OutlierMixin, KernelEstimator, BaseEstimator):
    """Unsupervised outlier detection, LIBSVM's one-class SVM: ``decision_function`` is
    sum_i coef_i K(x_i, x) - rho, ``score_samples`` the sum alone, ``offset_`` rho."""

    _svm = "one_class"

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5,
                 shrinking=True, cache_size=200, verbose=False, max_iter=-1, threads=None):
        keep_params(self, locals())

    def fit(self, X, y=None, sample_weight=None):
        """Train on the rows of ``X`` (``y`` is ignored); ``sample_weight``: row i's bound is
        its weight, and nu times their sum the total (LIBSVM-weights' one-class SVM)."""
        self._input_sparse = sparse_input(X)
        problem = with_sample_weight(self._unsupervised_problem(X), sample_weight)
        kwargs = dict(self._common_kwargs(), solver=self._svm,
                      kernel=self._kernel_params(problem), shrinking=bool(self.shrinking),
                      oneclass=OneClassParams(nu=float(self.nu)))
        return self._fit_kernel(problem, kwargs)

    @property
    def offset_(self):
        return float(self._model.rho[0])

    def decision_function(self, X):
        return self._raw_decision(X)[:, 0]

    def score_samples(self, X):
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """+1 (inlier) where the decision value is >= 0, else -1 (scikit-learn's rule; LIBSVM
        says -1 for a row exactly on the boundary)."""
        return np.where(self.decision_function(X) >= 0, 1, -1)

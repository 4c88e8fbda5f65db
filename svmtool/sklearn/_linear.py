"""Linear estimators over LIBLINEAR's family and the cutting-plane solvers: LinearSVC,
LogisticRegression, LinearSVR, LinearOneClassSVM.

``solver=`` takes any registry name (``svmtool.solvers``) whose problem the estimator solves;
when it is None the solver follows from scikit-learn's own parameters (``loss``, ``penalty`` or
``l1_ratio``, ``dual``, ``multi_class``).  The problem is LIBLINEAR's: 1/2 w'w + C sum(loss_i),
with the intercept a regularised weight of a constant feature of value ``intercept_scaling``
(LIBLINEAR's -B), as in scikit-learn's LinearSVC and its liblinear solver.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin

from svmtool.params import BiasRegParams, CuttingPlaneParams, OneClassParams, PERF_LOSSES, \
    SvrParams
from svmtool.solvers import get_spec
from svmtool.sklearn._base import ClassifierCodes, SvmtoolEstimator, declared_parameters, \
    keep_params, value_errors, with_labels, with_sample_weight
from svmtool.sklearn._table import solvers_of

# scikit-learn's loss names -> the registry's
SVC_LOSSES = {"hinge": "hinge", "squared_hinge": "squared hinge"}
SVR_LOSSES = {"epsilon_insensitive": "eps-insensitive",
              "squared_epsilon_insensitive": "squared eps-insensitive"}


def spec_for(solver, estimator, losses, what):
    """The registry entry of ``solver``; ValueError unless ``estimator`` (a class name) drives
    it and its loss is one of ``losses`` (registry loss names)."""
    with value_errors():
        spec = get_spec(solver)
    if spec.name not in solvers_of(estimator) or spec.loss not in losses:
        raise ValueError(f"solver={solver!r} ({spec.problem}) is not a solver of {what} "
                         f"({estimator} takes {', '.join(solvers_of(estimator))})")
    return spec


def bias_of(est):
    return float(est.intercept_scaling) if est.fit_intercept else -1.0


class LinearModelMixin(SvmtoolEstimator):
    """coef_ and intercept_ read from the model's weight columns (in the order of classes_)."""

    def _finish_max_iter(self, problem):
        return 10_000        # passes; the solvers' own caps (300, 1000) are meant for their tol

    def _columns(self):
        return self._model.w

    @property
    def coef_(self):
        w = self._columns()
        return np.ascontiguousarray(w[:self._model.nr_feature].T)

    @property
    def intercept_(self):
        w = self._columns()
        if self._model.bias < 0:
            return np.zeros(w.shape[1])
        return self._model.bias * w[self._model.nr_feature]

    def _fit_linear(self, problem, kwargs, init_model, previous):
        start, classes = self._start_model(init_model, previous, get_spec(kwargs["solver"]))
        if hasattr(self, "_recode"):
            start = self._recode(start, classes)
        self._model = self._train(problem, kwargs, start)
        return self


class LinearClassifier(ClassifierCodes, ClassifierMixin, LinearModelMixin, BaseEstimator):
    """What LinearSVC and LogisticRegression share: labels, class weights, decision values."""

    def _solver(self):
        raise NotImplementedError

    def _solver_kwargs(self, spec):
        return {}

    def fit(self, X, y=None, sample_weight=None, *, init_model=None):
        """Train on ``X`` (an array, a sparse matrix, a path to svmlight text or a binary
        cache, or an svmtool Problem; with a path ``y`` may be omitted: the file's labels).
        ``sample_weight``: row i's C is multiplied by it (None: a path's own weights, from a
        cache's weights section or ``cost:`` tokens; both at once is a ValueError); a solver
        that takes no instance weights raises ValueError.
        ``init_model``: a model, a model file or a fitted estimator to start from."""
        previous = self._previous()
        problem, y = self._training_problem(X, y)
        problem = with_sample_weight(problem, sample_weight)
        codes = self._encode_labels(y, problem)
        problem = with_labels(problem, y if codes is None else codes)
        solver = self._solver()
        spec = get_spec(solver)
        kwargs = dict(self._common_kwargs(), solver=solver, C=float(self.C),
                      bias=bias_of(self), weights=self._class_weights(problem.y))
        kwargs.update(self._solver_kwargs(spec))
        self._fit_linear(problem, kwargs, init_model, previous)
        self._set_positions(self._model)
        return self

    def _columns(self):
        """Weight columns in the order of classes_ (one column for two classes)."""
        w = self._model.w
        if w.shape[1] == 1:
            return w if self._pos[1] == 0 else -w
        if len(self.classes_) == 2:          # Crammer-Singer keeps a column per class
            return (w[:, self._pos[1]] - w[:, self._pos[0]]).reshape(-1, 1)
        return w[:, self._pos]

    def decision_function(self, X):
        """Decision values: (n,) for two classes (positive: classes_[1]), else (n, classes)."""
        dec = self._raw_decision(X)
        if dec.shape[1] == 1:
            return dec[:, 0] if self._pos[1] == 0 else -dec[:, 0]
        if len(self.classes_) == 2:
            return dec[:, self._pos[1]] - dec[:, self._pos[0]]
        return dec[:, self._pos]

    def predict(self, X):
        dec = self.decision_function(X)
        if dec.ndim == 1:
            return self.classes_[(dec > 0).astype(np.intp)]
        return self.classes_[np.argmax(dec, axis=1)]


@declared_parameters
class LinearSVC(LinearClassifier):
    """Linear support vector classification by any of svmtool's linear SVM solvers.

    Parameters as scikit-learn's LinearSVC, plus ``solver`` (a registry name: ``dcd-l2``,
    ``dcd-l1``, ``newton``, ``l1r-l2``, ``cp``, ``ocas``, ``gca2``, ``tca``, ``ocas-mc``; None:
    from ``penalty``, ``loss``, ``dual`` and ``multi_class``), SVMperf's multivariate losses as
    ``loss`` ("f1", "prbep", "prec@k", "rec@k", "rocarea", "errorrate": solver ``cp``, with
    ``k_fraction`` for prec@k / rec@k), ``threads``, ``warm_start``, ``out_of_core``,
    ``memory_budget`` (MB) and ``dask`` (a scheduler address or "local:N").

    Differences: ``tol=None`` and ``max_iter=None`` are the solver's own defaults (LIBLINEAR's:
    0.1 and 1000 for dual CD), ``dual="auto"`` is the dual solver, ``random_state=None`` is
    seed 1 (every fit is deterministic).  ``sample_weight`` multiplies each row's C, where the
    solver takes instance weights (the dual CD solvers ``dcd-l2`` / ``dcd-l1`` and those the
    registry marks so); another solver raises ValueError.
    """

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=None, C=1.0,
                 multi_class="ovr", fit_intercept=True, intercept_scaling=1.0,
                 class_weight=None, verbose=0, random_state=None, max_iter=None, solver=None,
                 threads=None, warm_start=False, out_of_core=None, memory_budget=None,
                 dask=None):                # k_fraction: its declaration (declared_parameters)
        keep_params(self, locals())

    def _solver(self):
        if self.loss in PERF_LOSSES:
            solver = self.solver or "cp"
            if not get_spec(solver).reads("loss"):
                raise ValueError(f"loss={self.loss!r} is one of SVMperf's multivariate losses: "
                                 f"solver='cp' (got {solver!r})")
            return solver
        if self.multi_class not in ("ovr", "crammer_singer"):
            raise ValueError(f"multi_class must be 'ovr' or 'crammer_singer' "
                             f"(got {self.multi_class!r})")
        if self.multi_class == "crammer_singer":
            solver = self.solver or "ocas-mc"
            spec = spec_for(solver, "LinearSVC", ("crammer-singer",),
                            "Crammer and Singer's multi-class SVM")
            return spec.name
        if self.loss not in SVC_LOSSES:
            raise ValueError(f"loss must be 'hinge', 'squared_hinge' or one of "
                             f"{', '.join(PERF_LOSSES)} (got {self.loss!r})")
        if self.penalty not in ("l1", "l2"):
            raise ValueError(f"penalty must be 'l1' or 'l2' (got {self.penalty!r})")
        if self.dual not in ("auto", True, False):
            raise ValueError(f"dual must be 'auto', True or False (got {self.dual!r})")
        solver = self.solver
        if solver is None:
            table = {("l2", "squared_hinge", True): "dcd-l2",
                     ("l2", "squared_hinge", False): "newton",
                     ("l2", "hinge", True): "dcd-l1",
                     ("l2", "hinge", False): "ocas",
                     ("l1", "squared_hinge", False): "l1r-l2"}
            dual = self.penalty == "l2" if self.dual == "auto" else bool(self.dual)
            solver = table.get((self.penalty, self.loss, dual))
            if solver is None:
                raise ValueError(f"penalty={self.penalty!r}, loss={self.loss!r} and "
                                 f"dual={self.dual!r}: no such problem (l1 takes "
                                 f"squared_hinge in the primal)")
        spec = spec_for(solver, "LinearSVC", (SVC_LOSSES[self.loss],),
                        f"the {self.loss} SVM (loss={self.loss!r})")
        if spec.regulariser.lower() != self.penalty:
            raise ValueError(f"solver={solver!r} is {spec.regulariser}-regularised, not "
                             f"penalty={self.penalty!r}")
        return spec.name

    def _solver_kwargs(self, spec):
        if self.loss in PERF_LOSSES:
            return {"cp": CuttingPlaneParams(loss=self.loss, k_fraction=float(self.k_fraction))}
        return {}


@declared_parameters
class LogisticRegression(LinearClassifier):
    """L2- or L1-regularised logistic regression by LIBLINEAR's solvers: ``lr`` (primal
    Newton, -s 0), ``lr-dual`` (dual CD, -s 7), ``l1r-lr`` (newGLMNET, -s 6).

    Parameters as scikit-learn 1.9's: ``l1_ratio`` 0 (L2) or 1 (L1; no elastic net), ``dual``
    picks ``lr-dual``.  The intercept is not regularised (as scikit-learn's lbfgs) with ``lr``
    and ``l1r-lr`` (LIBLINEAR's -R); ``lr-dual`` regularises it, as LIBLINEAR and scikit-learn's
    liblinear solver do (``intercept_scaling`` matters then only).  More than two classes are
    one-vs-rest (LIBLINEAR's), not multinomial; ``predict_proba`` normalises the classes'
    sigmoids as LIBLINEAR's ``-b 1`` does.
    """

    def __init__(self, *, C=1.0, l1_ratio=0.0, dual=False, tol=None, fit_intercept=True,
                 intercept_scaling=1.0, class_weight=None, random_state=None, solver=None,
                 max_iter=None, verbose=0, warm_start=False, threads=None, out_of_core=None,
                 memory_budget=None, dask=None):
        keep_params(self, locals())

    def _solver(self):
        if self.l1_ratio not in (0, 1):
            raise ValueError(f"l1_ratio must be 0 (L2) or 1 (L1): svmtool has no elastic net "
                             f"(got {self.l1_ratio!r})")
        solver = self.solver
        if solver is None:
            solver = "l1r-lr" if self.l1_ratio == 1 else ("lr-dual" if self.dual else "lr")
        spec = spec_for(solver, "LogisticRegression", ("logistic",), "logistic regression")
        want = "L1" if self.l1_ratio == 1 else "L2"
        if spec.regulariser != want:
            raise ValueError(f"solver={solver!r} is {spec.regulariser}-regularised, not "
                             f"l1_ratio={self.l1_ratio!r}")
        return spec.name

    def _solver_kwargs(self, spec):
        if self.fit_intercept and spec.reads("bias_reg"):
            return {"bias": 1.0, "bias_reg": BiasRegParams(regularize=False)}
        return {}

    def predict_proba(self, X):
        """Class probabilities (n, classes) in the order of classes_."""
        dec = self._raw_decision(X)
        p = self._model.predict_proba(dec)
        return p[:, self._pos]

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


@declared_parameters
class LinearSVR(RegressorMixin, LinearModelMixin, BaseEstimator):
    """Linear support vector regression: ``svr-l1-dual`` (-s 13), ``svr-l2-dual`` (-s 12) or
    ``svr-l2`` (primal Newton, -s 11).

    Parameters as scikit-learn's LinearSVR (``loss`` and ``dual`` choose the solver when
    ``solver`` is None), plus svmtool's ``solver``, ``threads``, ``warm_start`` and the
    out-of-core and dask options (``svr-l2`` only).  ``tol=None`` is the solver's default.
    """

    def __init__(self, *, epsilon=0.0, tol=None, C=1.0, loss="epsilon_insensitive",
                 fit_intercept=True, intercept_scaling=1.0, dual="auto", verbose=0,
                 random_state=None, max_iter=None, solver=None, threads=None,
                 warm_start=False, out_of_core=None, memory_budget=None, dask=None):
        keep_params(self, locals())

    def _solver(self):
        if self.loss not in SVR_LOSSES:
            raise ValueError(f"loss must be 'epsilon_insensitive' or "
                             f"'squared_epsilon_insensitive' (got {self.loss!r})")
        solver = self.solver
        if solver is None:
            if self.loss == "epsilon_insensitive":
                if self.dual is False:
                    raise ValueError("loss='epsilon_insensitive' is solved in the dual only")
                solver = "svr-l1-dual"
            else:
                solver = "svr-l2" if self.dual is False else "svr-l2-dual"
        return spec_for(solver, "LinearSVR", (SVR_LOSSES[self.loss],),
                        f"{self.loss} regression").name

    def fit(self, X, y=None, sample_weight=None, *, init_model=None):
        """Train on ``X`` (array, sparse matrix, path or Problem) and real targets ``y``;
        ``sample_weight`` as for LinearSVC (row i's C times it)."""
        previous = self._previous()
        problem, _ = self._training_problem(X, y, y_numeric=True)
        problem = with_sample_weight(problem, sample_weight)
        kwargs = dict(self._common_kwargs(), solver=self._solver(), C=float(self.C),
                      bias=bias_of(self), svr=SvrParams(p=float(self.epsilon)))
        return self._fit_linear(problem, kwargs, init_model, previous)

    @property
    def coef_(self):
        return self._model.w[:self._model.nr_feature, 0].copy()

    def predict(self, X):
        return self._raw_decision(X)[:, 0]


@declared_parameters
class LinearOneClassSVM(OutlierMixin, LinearModelMixin, BaseEstimator):
    """The linear one-class SVM of LIBLINEAR (-s 21, ``nu``): ``decision_function`` is
    w'x - rho, ``predict`` +1 (inlier) where it is positive, else -1; ``score_samples`` is
    w'x and ``offset_`` rho, as scikit-learn's OneClassSVM."""

    def __init__(self, *, nu=0.5, tol=None, max_iter=None, verbose=0, random_state=None,
                 threads=None):
        keep_params(self, locals())

    def fit(self, X, y=None, sample_weight=None):
        """Train on the rows of ``X`` (``y`` is ignored); ``sample_weight``: each row's
        instance weight, where the solver takes them (else a ValueError)."""
        problem = with_sample_weight(self._unsupervised_problem(X), sample_weight)
        kwargs = dict(self._common_kwargs(), solver=self._solver(),
                      oneclass=OneClassParams(nu=float(self.nu)))
        return self._fit_linear(problem, kwargs, None, None)

    def _solver(self):
        return "one-class"

    @property
    def intercept_(self):
        return np.array([-float(self._model.rho)])

    @property
    def offset_(self):
        return float(self._model.rho)

    def score_samples(self, X):
        return self.decision_function(X) + self._model.rho

    def decision_function(self, X):
        return self._raw_decision(X)[:, 0]

    def predict(self, X):
        """+1 (inlier) where the decision value is >= 0, else -1 (scikit-learn's rule; a row
        exactly on the boundary, such as a free support vector, is -1 for LIBLINEAR)."""
        return np.where(self.decision_function(X) >= 0, 1, -1)


__all__ = ["LinearSVC", "LogisticRegression", "LinearSVR", "LinearOneClassSVM"]

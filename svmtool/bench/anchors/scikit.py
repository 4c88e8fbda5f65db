"""scikit-learn anchors: ``LinearSVC`` (LIBLINEAR's dual CD inside scikit-learn, hinge and squared
hinge), ``SGDClassifier(hinge)`` (stochastic gradient, alpha = 1 / (n C)) and ``SVC`` (LIBSVM
inside scikit-learn) -- the tools a Python user would reach for first.  ``SVC`` as a whole
Python command, and scikit-learn-intelex's, are in :mod:`svmtool.bench.anchors.programs`.
"""

import warnings

import numpy as np

from svmtool.bench.anchors.base import Evaluation, KernelAnchor, Runner


class SklearnLinearSVC(Runner):
    cap = "max_iter"

    def __init__(self, loss):
        self.loss = loss
        self.group = "hinge" if loss == "hinge" else "squared_hinge"
        self.name = f"sklearn LinearSVC({loss})"
        self.default_eps = 0.1      # LIBLINEAR's dual default (LinearSVC's own is 1e-4)

    def prepare(self, data):
        import sklearn.svm  # noqa: F401  (the import is not part of the warm-up)

        return data

    def fit(self, state, C, eps, cap=None, callback=None):
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import LinearSVC

        clf = LinearSVC(loss=self.loss, dual=True, C=C, fit_intercept=False,
                        tol=self.tolerance(eps),
                        max_iter=int(cap) if cap is not None else 1000, random_state=0)
        return _fit_quietly(clf, state, ConvergenceWarning)

    def evaluate(self, state, raw, data):
        return _sklearn_linear_eval(raw)


class SklearnSGD(Runner):
    """SGDClassifier(hinge): alpha/2 |w|^2 + mean hinge, i.e. alpha = 1 / (n C)."""

    cap = "max_iter"
    group = "hinge"
    name = "sklearn SGDClassifier(hinge)"
    default_eps = 1e-3

    def prepare(self, data):
        import sklearn.linear_model  # noqa: F401

        return data

    def fit(self, state, C, eps, cap=None, callback=None):
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import SGDClassifier

        n = state.Xb.shape[0]
        clf = SGDClassifier(loss="hinge", alpha=1.0 / (n * C), fit_intercept=False,
                            tol=None if cap is not None else
                            self.tolerance(eps),
                            max_iter=int(cap) if cap is not None else 1000, random_state=0)
        return _fit_quietly(clf, state, ConvergenceWarning)

    def evaluate(self, state, raw, data):
        return _sklearn_linear_eval(raw)


def _fit_quietly(clf, state, warning):
    """``clf`` fitted to the bench data with its bias column, its convergence warnings kept
    quiet (the trace replays stop it early on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", warning)
        clf.fit(state.Xb, state.y)
    return clf


def _sklearn_linear_eval(clf):
    classes = np.asarray(clf.classes_, dtype=float)
    W = np.asarray(clf.coef_, dtype=float).T.copy()
    col_labels = classes[1:2] if len(classes) == 2 else classes
    its = clf.n_iter_
    its = int(np.max(its)) if np.ndim(its) else int(its)
    return Evaluation(iterations=its, W=W, col_labels=col_labels)


class SklearnSVC(KernelAnchor):
    """``sklearn.svm.SVC`` fitted to the training rows in memory (scipy CSR, as
    ``load_svmlight_file`` gives them); its kernel cache is the bench run's ``-m`` (100 MB by
    default, LIBSVM's)."""

    name = "sklearn SVC"

    def prepare(self, data):
        import sklearn.svm  # noqa: F401  (the import is not part of the warm-up)

        return data

    def fit(self, state, C, eps, cap=None, callback=None):
        from sklearn.svm import SVC

        k = self.kernel_opts
        clf = SVC(
            C=C, kernel={0: "linear", 1: "poly", 2: "rbf", 3: "sigmoid"}[k["kernel_type"]],
            gamma=k["gamma"], degree=k.get("degree", 3), coef0=k.get("coef0", 0.0),
            tol=self.tolerance(eps, cap), cache_size=float(k.get("cache_mb", 100.0)),
            shrinking=True)
        clf.fit(state.X, state.y)
        return clf

    def evaluate(self, state, raw, data):
        clf = raw
        ev = Evaluation(iterations=int(np.sum(getattr(clf, "n_iter_", 0))) or None)
        if len(clf.classes_) == 2:
            dec = clf.decision_function(data.X)
            # sklearn: positive class is classes_[1]; dual_coef_ = y_i alpha_i with that sign
            coef = clf.dual_coef_       # a sparse matrix after a fit to sparse rows
            coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef)[0]
            ev.kernel = {"dec": dec, "pos": float(clf.classes_[1]), "coef": coef,
                         "f_sv": dec[clf.support_], "offset": float(clf.intercept_[0])}
        if data.test is not None:
            ev.test_pred = clf.predict(data.Xt_raw)
        return ev

"""``load(path)``: the estimator of a model file (LIBLINEAR, LIBSVM, SVMlight/SVMperf or
svmtool's early-prediction model), fitted and ready to predict or to warm-start."""

import os

from svmtool import api
from svmtool.sklearn._base import value_errors
from svmtool.sklearn._kernel import DCSVC, KernelClassifier, NuSVC, NuSVR, OneClassSVM, SVC, SVR, \
    sorted_pairs
from svmtool.sklearn._linear import LinearOneClassSVM, LinearSVC, LinearSVR, LogisticRegression
from svmtool.sklearn._ranking import RankSVM
from svmtool.sklearn._table import solvers_of


def _liblinear_solver(solver_type):
    """(estimator class, registry name) of a LIBLINEAR model file's solver_type: the registry's
    solver that is LIBLINEAR's own for that type (it has a LIBLINEAR -s number), and the
    estimator of its task and loss."""
    from svmtool.solvers import specs

    spec = next((s for s in specs() if s.liblinear_type == solver_type and
                 s.liblinear_id is not None), None)
    if spec is None:
        raise KeyError(solver_type)
    cls = {"regression": LinearSVR, "one-class": LinearOneClassSVM}.get(spec.task) or \
        (LogisticRegression if spec.loss == "logistic" else LinearSVC)
    return cls, spec.name


LIBSVM_ESTIMATORS = {"c_svc": SVC, "nu_svc": NuSVC, "one_class": OneClassSVM,
                     "epsilon_svr": SVR, "nu_svr": NuSVR}
KERNEL_NAMES = {0: "linear", 1: "poly", 2: "rbf", 3: "sigmoid", 4: "precomputed"}


def estimator_of(model):
    """A fitted estimator holding ``model`` (its labels as the file has them)."""
    from svmtool.models.linear import LinearModel

    report = model.report if isinstance(model.report, dict) else {}
    if isinstance(model, LinearModel):
        if report.get("ranking"):
            est = RankSVM()
        else:
            cls, solver = _liblinear_solver(model.solver_type)
            est = cls()
            _linear_params(est, model, report.get("solver") or solver)
        est.n_features_in_ = model.nr_feature
        est.n_iter_ = 0
    else:
        est = _kernel_estimator(model, report)
    if getattr(model, "labels", None) is not None and hasattr(est, "_code_model"):
        model = est._code_model(model)
        est._model = model
        est._set_positions(model)
        if isinstance(est, KernelClassifier):
            est._pairs = sorted_pairs(est._pos)
    else:
        est._model = model
    return est


def _linear_params(est, model, solver):
    if hasattr(est, "solver"):
        est.solver = solver
    if model.solver_type == "MCSVM_CS":
        est.multi_class = "crammer_singer"
    if model.solver_type == "L2R_L1LOSS_SVC_DUAL":
        est.loss = "hinge"
    if model.solver_type == "L1R_L2LOSS_SVC":
        est.penalty, est.dual = "l1", False
    if model.solver_type == "L1R_LR":
        est.l1_ratio = 1
    if model.solver_type == "L2R_LR_DUAL":
        est.dual = True
    if model.solver_type == "L2R_L2LOSS_SVR":
        est.loss, est.dual = "squared_epsilon_insensitive", False
    if model.solver_type == "L2R_L2LOSS_SVR_DUAL":
        est.loss = "squared_epsilon_insensitive"
    if hasattr(est, "fit_intercept"):
        est.fit_intercept = model.bias >= 0
        if model.bias >= 0:
            est.intercept_scaling = model.bias


def _kernel_estimator(model, report):
    from svmtool.models.early import EarlyModel

    k = model.kernel
    if isinstance(model, EarlyModel):
        est = DCSVC(early=True)
    elif report.get("solver") in solvers_of("DCSVC"):
        est = DCSVC(solver=report["solver"])
    else:
        est = LIBSVM_ESTIMATORS[model.svm_type]()
    est.set_params(kernel=KERNEL_NAMES[k.ktype], gamma=float(k.gamma), degree=int(k.degree),
                   coef0=float(k.coef0))
    if isinstance(est, DCSVC):
        b = float(k.kbias) ** 0.5
        est.set_params(fit_intercept=k.kbias > 0, intercept_scaling=b if b > 0 else 1.0)
    nf = int(model.nr_feature)
    est.n_features_in_ = nf - 1 if k.ktype == 4 else nf
    est._input_sparse = True
    est.n_iter_ = 0
    return est


def load(path):
    """The fitted estimator of the model file at ``path``: LinearSVC, LogisticRegression,
    LinearSVR, LinearOneClassSVM or RankSVM for linear models (by the file's solver type),
    SVC, NuSVC, SVR, NuSVR or OneClassSVM for LIBSVM models (by svm_type), DCSVC for an
    early-prediction model.  Its parameters say what the file says (kernel, gamma, bias, solver
    type); C and tol are not in model files and keep their defaults."""
    with value_errors():
        model = api.load_model(os.fspath(path))
    return estimator_of(model)

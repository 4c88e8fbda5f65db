"""Which registry solvers each estimator drives: what its ``solver=`` accepts, and the
estimators' table of docs/python.md (``python -m svmtool.sklearn`` prints it, from here and the
estimators' defaults; a test compares the docs with it)."""

from svmtool.solvers import specs

# estimator: (what it is, which registry entries it drives)
ESTIMATOR_SOLVERS = {
    "LinearSVC": ("linear SVM, one-vs-rest or Crammer-Singer",
                  lambda s: s.model_type == "linear" and s.task == "classification"
                  and s.loss in ("hinge", "squared hinge", "crammer-singer")),
    "LogisticRegression": ("logistic regression, one-vs-rest",
                           lambda s: s.model_type == "linear" and s.loss == "logistic"),
    "LinearSVR": ("linear support vector regression",
                  lambda s: s.model_type == "linear" and s.task == "regression"),
    "LinearOneClassSVM": ("linear one-class SVM",
                          lambda s: s.model_type == "linear" and s.task == "one-class"),
    # LIBSVM's five problems by svm-train's -s number
    "SVC": ("C-SVC, one-vs-one", lambda s: s.libsvm_id == 0),
    "NuSVC": ("nu-SVC, one-vs-one", lambda s: s.libsvm_id == 1),
    "SVR": ("epsilon-SVR", lambda s: s.libsvm_id == 3),
    "NuSVR": ("nu-SVR", lambda s: s.libsvm_id == 4),
    "OneClassSVM": ("one-class SVM", lambda s: s.libsvm_id == 2),
    "DCSVC": ("kernel SVM with a regularised bias (K + B^2), one-vs-one",
              lambda s: s.kind == "kernel" and s.libsvm_id is None),
    "RankSVM": ("ranking / ordinal regression within qid", lambda s: s.task == "ranking"),
}


def solvers_of(estimator):
    """The registry names an estimator (its class name) can train with."""
    test = ESTIMATOR_SOLVERS[estimator][1]
    return [s.name for s in specs() if test(s)]

"""The checks of scikit-learn's ``check_estimator`` that an estimator here cannot pass, each with
its reason: ``expected_failed_checks(estimator)`` is what the tests hand to
``parametrize_with_checks`` / ``check_estimator`` (scikit-learn >= 1.6).

With their default parameters every estimator passes every check that runs, the two
sample-weight checks (``check_sample_weight_equivalence_on_dense_data`` and ``_on_sparse_data``:
a weight k must give the model of the row repeated k times, to rtol 1e-7) included for
LinearSVC, LogisticRegression, LinearSVR, SVC, SVR and DCSVC, which scikit-learn's own
LinearSVC and SVC fail: a problem of at most ``FINISH_ROWS`` rows is solved to ``FINISH_TOL``
(svmtool.sklearn._base), where the two fits agree to rounding.  Listed below are the
estimators and parameters that still fail them (with why), a linear solver that takes no
instance weights (fit refuses them), and the failures of parameters that change what the
estimator is, which scikit-learn's own estimators fail the same way (OVO shapes, precomputed
one-class kernels, nu-SVC probabilities) or have no such option.
"""

from svmtool.params import PERF_LOSSES

OVO_SHAPE = ("decision_function_shape='ovo' gives one column per pair of classes; with three "
             "classes the check takes the three pairs for three classes and compares their "
             "argmax with predict (scikit-learn's SVC fails it the same way)")
PRECOMPUTED_OUTLIERS = ("the outlier checks fit a 300 x 2 feature matrix, not a square kernel "
                        "matrix, whatever the pairwise tag says (scikit-learn's OneClassSVM "
                        "fails them the same way with kernel='precomputed')")
PROBABILITY_VOTES = ("predict is LIBSVM's vote on the decision values, predict_proba Platt's "
                     "sigmoids fitted by 5-fold cross validation: on a row near the boundary "
                     "they can disagree, which the check forbids (scikit-learn's "
                     "NuSVC(probability=True) fails it too)")
BOUNDARY_ROWS = ("most of the check's rows end on the one-class boundary (free support vectors: "
                 "decision value 0 in exact arithmetic); the weighted and the repeated fit, both "
                 "to tol 1e-10, leave them at +-1e-8 (the check's atol is 1e-9) or, for predict, "
                 "on either side of 0")
NU_SVR_STALLS = ("on the check's weighted rows nu-SVR's SMO stalls at a violation of about 1e-7 "
                 "(the repeated rows reach 1e-10): the exact finish is not reached, the fit at tol "
                 "is kept, and the two fits differ by about tol")
PROBABILITY_FOLDS = ("predict_proba's sigmoid (Platt) is fitted by 5-fold cross validation over "
                     "rows: a row of weight k lies in one fold, its k copies in several, so the "
                     "two sigmoids differ (scikit-learn's SVC(probability=True) fails it too)")
NU_INFEASIBLE = ("the check's 15 rows of three classes with weights 0 to 4 leave nu = 0.5 "
                 "infeasible for a pair of classes, weighted and repeated alike: LIBSVM "
                 "refuses it, and so does scikit-learn's NuSVC")
SAMPLE_WEIGHT_CHECKS = ("check_sample_weight_equivalence_on_dense_data",
                        "check_sample_weight_equivalence_on_sparse_data")
# the kernel estimators' reasons for failing the sample-weight checks with their defaults
KERNEL_WEIGHT_REASONS = {"NuSVC": NU_INFEASIBLE, "NuSVR": NU_SVR_STALLS,
                         "OneClassSVM": BOUNDARY_ROWS}
PERF_CLASS_WEIGHTS = ("class weights do not apply to SVMperf's multivariate losses (the loss is "
                      "one number of the whole prediction vector): fit refuses class_weight")


LINEAR_WEIGHT_TOLERANCE = ("sample_weight is honoured (weight k == the row repeated k times up "
                           "to tol), but out of core and on dask the exact finish is not run, "
                           "and at tol the two fits stop short of the optimum along different "
                           "paths, further apart than the check's rtol 1e-7")
LINEAR_NO_WEIGHTS = "solver {} takes no instance weights: fit(sample_weight=...) refuses them"
WEIGHT_CHECKS = SAMPLE_WEIGHT_CHECKS
# with a solver that takes no weights, every check that fits with weights other than ones
NO_WEIGHT_CHECKS = WEIGHT_CHECKS + ("check_sample_weights_list",
                                    "check_sample_weights_not_overwritten",
                                    "check_classifiers_one_label_sample_weights")
LINEAR_ESTIMATORS = ("LinearSVC", "LogisticRegression", "LinearSVR", "LinearOneClassSVM")


def linear_weight_reason(estimator):
    """Why a linear estimator fails the sample-weight checks (None: it passes them): its
    solver takes no instance weights (the registry says) or not with its loss (SVMperf's
    multivariate losses), the one-class boundary, or a fit without the exact finish."""
    from svmtool.solvers import get_spec

    if type(estimator).__name__ not in LINEAR_ESTIMATORS:
        return None
    try:
        spec = get_spec(estimator._solver())
    except ValueError:
        return None                   # parameters fit refuses anyway
    params = estimator.get_params(deep=False)
    multivariate = spec.reads("loss") and params.get("loss") in PERF_LOSSES \
        and params.get("loss") != "errorrate"       # fit refuses weights with such a loss
    if not spec.instance_weights or multivariate:
        return LINEAR_NO_WEIGHTS.format(spec.name)
    if type(estimator).__name__ == "LinearOneClassSVM":
        return BOUNDARY_ROWS
    if params.get("out_of_core") or params.get("dask"):
        return LINEAR_WEIGHT_TOLERANCE
    return None


def expected_failed_checks(estimator):
    """{check name: reason} of the checks ``estimator`` (with its parameters) cannot pass."""
    params = estimator.get_params(deep=False)
    out = {}
    if params.get("decision_function_shape") == "ovo":
        out["check_classifiers_train"] = OVO_SHAPE
    if type(estimator).__name__ == "OneClassSVM" and params.get("kernel") == "precomputed":
        out["check_outliers_train"] = PRECOMPUTED_OUTLIERS
        out["check_outliers_fit_predict"] = PRECOMPUTED_OUTLIERS
    if type(estimator).__name__ == "NuSVC" and params.get("probability"):
        out["check_classifiers_train"] = PROBABILITY_VOTES
    name = type(estimator).__name__
    if name in KERNEL_WEIGHT_REASONS:
        out.update((check, KERNEL_WEIGHT_REASONS[name]) for check in SAMPLE_WEIGHT_CHECKS)
    if name in ("SVC", "NuSVC") and params.get("probability"):
        out.update((check, PROBABILITY_FOLDS if name == "SVC" else NU_INFEASIBLE)
                   for check in SAMPLE_WEIGHT_CHECKS)
    if params.get("loss") in PERF_LOSSES and params.get("loss") != "errorrate":
        out["check_class_weight_classifiers"] = PERF_CLASS_WEIGHTS
    weight_reason = linear_weight_reason(estimator)
    if weight_reason is not None:
        no_weights = weight_reason.startswith(LINEAR_NO_WEIGHTS.split("{")[0])
        checks = NO_WEIGHT_CHECKS if no_weights else WEIGHT_CHECKS
        out.update((check, weight_reason) for check in checks)
    return out

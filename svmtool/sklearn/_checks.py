"""The checks of scikit-learn's ``check_estimator`` that an estimator here cannot pass, each with
its reason: ``expected_failed_checks(estimator)`` is what the tests hand to
``parametrize_with_checks`` / ``check_estimator`` (scikit-learn >= 1.6).

With their default parameters every estimator passes every check that runs but the two
sample-weight checks, ``check_sample_weight_equivalence_on_dense_data`` and ``_on_sparse_data``,
of the linear and the kernel estimators (scikit-learn's own LinearSVC and SVC fail them too):
their ``fit`` takes ``sample_weight``, and a weight k is the row repeated k times up to the
solver's tolerance -- with a tight ``tol`` LinearSVC (tests/test_sklearn_checks.py), SVC, SVR
and DCSVC (tests/test_weights_kernel.py) pass both checks -- but the check compares the two
fits to rtol 1e-7, and the default ``tol`` stops the two fits, which take different paths, short
of that.  A linear estimator whose solver takes no instance weights refuses them in fit.  The
other failures below come with parameters that change what the estimator is, and
scikit-learn's own estimators fail the same checks with them (OVO shapes, precomputed one-class
kernels, nu-SVC probabilities) or have no such option.
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
KERNEL_WEIGHT_TOLERANCE = ("sample_weight is honoured (weight k == the row repeated k times "
                           "up to tol: with a tight tol SVC, SVR and DCSVC pass this check), "
                           "but the check compares the two fits to rtol 1e-7, and at the "
                           "default tol both stop short of the optimum along different paths")
NU_INFEASIBLE = ("the check's 15 rows of three classes with weights 0 to 4 leave nu = 0.5 "
                 "infeasible for a pair of classes, weighted and repeated alike: LIBSVM "
                 "refuses it, and so does scikit-learn's NuSVC")
SAMPLE_WEIGHT_CHECKS = ("check_sample_weight_equivalence_on_dense_data",
                        "check_sample_weight_equivalence_on_sparse_data")
KERNEL_ESTIMATORS = ("SVC", "NuSVC", "DCSVC", "SVR", "NuSVR", "OneClassSVM")
PERF_CLASS_WEIGHTS = ("class weights do not apply to SVMperf's multivariate losses (the loss is "
                      "one number of the whole prediction vector): fit refuses class_weight")


LINEAR_WEIGHT_TOLERANCE = ("sample_weight is honoured (weight k == the row repeated k times up "
                           "to tol: with tol=1e-10 LinearSVC passes this check), but the check "
                           "compares the two fits to rtol 1e-7, and at this tol both stop short "
                           "of the optimum along different paths")
LINEAR_NO_WEIGHTS = "solver {} takes no instance weights yet: fit(sample_weight=...) refuses them"
WEIGHT_CHECKS = SAMPLE_WEIGHT_CHECKS
# with a solver that takes no weights, every check that fits with weights other than ones
NO_WEIGHT_CHECKS = WEIGHT_CHECKS + ("check_sample_weights_list",
                                    "check_sample_weights_not_overwritten",
                                    "check_classifiers_one_label_sample_weights")
LINEAR_ESTIMATORS = ("LinearSVC", "LogisticRegression", "LinearSVR", "LinearOneClassSVM")
TIGHT_TOL = 1e-8          # a tol at which the weighted and the repeated fit agree to 1e-7


def linear_weight_reason(estimator):
    """Why a linear estimator fails the sample-weight checks (None: it passes them): its
    solver takes no instance weights (the registry says) or not with its loss (SVMperf's
    multivariate losses), or its tol is too loose."""
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
    tol = params.get("tol")
    return None if tol is not None and tol <= TIGHT_TOL else LINEAR_WEIGHT_TOLERANCE


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
    if name in KERNEL_ESTIMATORS:
        for check in SAMPLE_WEIGHT_CHECKS:
            out[check] = NU_INFEASIBLE if name == "NuSVC" else KERNEL_WEIGHT_TOLERANCE
    if params.get("loss") in PERF_LOSSES and params.get("loss") != "errorrate":
        out["check_class_weight_classifiers"] = PERF_CLASS_WEIGHTS
    weight_reason = linear_weight_reason(estimator)
    if weight_reason is not None:
        checks = WEIGHT_CHECKS if weight_reason == LINEAR_WEIGHT_TOLERANCE else NO_WEIGHT_CHECKS
        out.update((check, weight_reason) for check in checks)
    return out

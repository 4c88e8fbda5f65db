"""The checks of scikit-learn's ``check_estimator`` that an estimator here cannot pass, each with
its reason: ``expected_failed_checks(estimator)`` is what the tests hand to
``parametrize_with_checks`` / ``check_estimator`` (scikit-learn >= 1.6).

With their default parameters every estimator passes every check that runs but the kernel
estimators' two sample-weight checks, ``check_sample_weight_equivalence_on_dense_data`` and
``_on_sparse_data`` (scikit-learn's own SVC fails them too): their ``fit`` takes
``sample_weight``, and a weight k is the row repeated k times up to the solver's tolerance
(with a tight ``tol`` SVC, SVR and DCSVC pass both checks: tests/test_weights_kernel.py), but
the check asks for 1e-7 and the default ``tol`` stops the two fits, which take different paths,
short of that.  The other failures below come with parameters that change what the estimator
is, and scikit-learn's own estimators fail the same checks with them
(OVO shapes, precomputed one-class kernels, nu-SVC probabilities) or have no such option.
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
    return out

"""The checks of scikit-learn's ``check_estimator`` that an estimator here cannot pass, each with
its reason: ``expected_failed_checks(estimator)`` is what the tests hand to
``parametrize_with_checks`` / ``check_estimator`` (scikit-learn >= 1.6).

With their default parameters every estimator passes every check that runs.  scikit-learn's
own LinearSVC and SVC fail two, ``check_sample_weight_equivalence_on_dense_data`` and
``_on_sparse_data``; those do not run here, since no estimator takes ``sample_weight``
(svmtool's solvers weigh classes, not rows).  The failures below come with parameters that
change what the estimator is, and scikit-learn's own estimators fail the same checks with them
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
    if params.get("loss") in PERF_LOSSES and params.get("loss") != "errorrate":
        out["check_class_weight_classifiers"] = PERF_CLASS_WEIGHTS
    return out

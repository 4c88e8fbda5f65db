"""scikit-learn's own estimator checks (``parametrize_with_checks``) on every estimator of
svmtool.sklearn, with its defaults and with the parameters that change what it is (another
solver, probabilities, a precomputed kernel, an early model).  A check an estimator cannot pass
is listed with its reason by ``svmtool.sklearn.expected_failed_checks`` and runs as an xfail,
never skipped silently."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sklearn", minversion="1.6",
                    reason="the estimators need scikit-learn >= 1.6 (pip install svmtool[sklearn])")

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import svmtool.sklearn as S  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

ESTIMATORS = [cls() for cls in S.ESTIMATORS] + [
    S.LinearSVC(tol=0.5),                        # the exact finish, whatever the tol
    S.LinearSVC(loss="hinge", tol=1e-10, max_iter=100_000),
    S.LinearSVC(solver="ocas", loss="hinge"),
    S.LinearSVC(loss="f1"),
    S.LinearSVC(penalty="l1", dual=False),
    S.LogisticRegression(l1_ratio=1),
    S.LogisticRegression(dual=True),
    S.LinearSVR(loss="squared_epsilon_insensitive", dual=False),
    S.SVC(probability=True),
    S.SVC(tol=0.1, kernel="poly"),
    S.SVC(kernel="precomputed"),
    S.NuSVC(probability=True),
    S.DCSVC(early=True),
    S.OneClassSVM(kernel="precomputed"),
]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=S.expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check, monkeypatch):
    """One of scikit-learn's own checks on one estimator: each check is a function of asserts
    that raises when the estimator breaks the contract (its assertions are scikit-learn's, the
    independent truth here); the expected failures come from expected_failed_checks."""
    # scikit-learn runs check_array_api_input (NumPy inputs under array-API dispatch must give
    # the same results) only when SCIPY_ARRAY_API is set, and its DataFrame checks only when
    # pandas is installed (the test extra has it): set for these in-process checks alone, so
    # that the rest of the suite and its child processes keep scipy's default
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    check(estimator)


def test_defaults_fail_no_check():
    """With its defaults no estimator has an expected failure but the sample-weight equivalence
    checks of NuSVC, NuSVR, OneClassSVM and LinearOneClassSVM (see svmtool.sklearn._checks)
    and of a linear solver without instance weights: LinearSVC and SVC, which scikit-learn's
    own LinearSVC and SVC fail, pass them (the exact finish), with any tol."""
    from svmtool.solvers import get_spec
    from svmtool.sklearn._checks import (KERNEL_WEIGHT_REASONS, NO_WEIGHT_CHECKS,
                                         WEIGHT_CHECKS)

    defaults = [cls() for cls in S.ESTIMATORS]
    left = {type(e).__name__: set(S.expected_failed_checks(e)) for e in defaults
            if S.expected_failed_checks(e)}
    want = {name: set(WEIGHT_CHECKS) for name in KERNEL_WEIGHT_REASONS}
    want["LinearOneClassSVM"] = set(WEIGHT_CHECKS)
    want.update((type(e).__name__, set(NO_WEIGHT_CHECKS)) for e in defaults
                if hasattr(e, "_solver") and type(e).__name__.startswith("Linear")
                and not get_spec(e._solver()).instance_weights)
    assert left == want
    for est in (S.LinearSVC(), S.SVC(), S.LinearSVC(tol=0.5), S.SVC(tol=0.1),
                S.LinearSVC(loss="hinge"), S.SVR(), S.DCSVC()):
        assert S.expected_failed_checks(est) == {}, est
    assert set(S.expected_failed_checks(S.LinearSVC(out_of_core=True))) == set(WEIGHT_CHECKS)


def test_only_the_estimators_and_bench_import_sklearn():
    """scikit-learn stays an optional extra: only svmtool.sklearn (and bench's anchors) import
    it, and ``import svmtool`` with the API and the command line never does."""
    offenders = []
    for path in (ROOT / "svmtool").rglob("*.py"):
        rel = path.relative_to(ROOT / "svmtool")
        if rel.parts[0] in ("sklearn", "bench"):
            continue
        text = path.read_text()
        if "import sklearn" in text or "from sklearn" in text:
            offenders.append(str(rel))
    assert offenders == []
    code = ("import sys, svmtool, svmtool.api, svmtool.cli; "
            "svmtool.train; print('sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr


def test_docs_table_is_the_registrys():
    """docs/python.md's table of estimators is ``python -m svmtool.sklearn``'s output."""
    docs = (ROOT / "docs" / "python.md").read_text()
    assert S.markdown_table() in docs


def test_solver_choices_come_from_the_registry():
    """``solver=`` takes exactly the registry solvers the table lists; any other name is one
    line naming the choices."""
    from svmtool.sklearn._table import solvers_of

    import numpy as np

    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    y = np.array([1, 2, 2, 1])
    for name in solvers_of("LinearSVC"):
        if name in ("cp", "ocas", "gca2", "tca", "dcd-l1"):
            S.LinearSVC(solver=name, loss="hinge").fit(X, y)
        elif name == "ocas-mc":
            S.LinearSVC(solver=name, multi_class="crammer_singer").fit(X, y)
        elif name == "l1r-l2":
            S.LinearSVC(solver=name, penalty="l1", dual=False).fit(X, y)
        else:
            S.LinearSVC(solver=name).fit(X, y)
    with pytest.raises(ValueError, match="LinearSVC takes dcd-l2"):
        S.LinearSVC(solver="lr").fit(X, y)
    with pytest.raises(ValueError, match="unknown solver"):
        S.LogisticRegression(solver="lbfgs").fit(X, y)


@pytest.mark.parametrize("estimator", [S.LinearSVC(), S.LogisticRegression(),
                                       S.LinearSVC(solver="ocas", loss="hinge")], ids=repr)
def test_balanced_class_weight_of_the_linear_classifiers(estimator):
    """The check scikit-learn runs on its LinearClassifierMixin estimators only:
    class_weight="balanced" gives the model of the weights n / (classes * count) given by
    hand."""
    from sklearn.utils.estimator_checks import check_class_weight_balanced_linear_classifier

    check_class_weight_balanced_linear_classifier(type(estimator).__name__, estimator)

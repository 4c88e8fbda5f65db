"""sample_weight on svmtool.sklearn's linear estimators.

Independent truths: the weighted primal objective 1/2 |w|^2 + C sum W_i loss_i computed here
in numpy, against scikit-learn's weighted liblinear (its LinearSVC with sample_weight) on the
same data; an integer weight k against the row repeated k times."""

import numpy as np
import pytest

from conftest import DATA
import svmtool.sklearn as S
from svmtool.io.cache import save_cache
from svmtool.io.svmlight import load_data
from svmtool.solvers import get_spec


@pytest.fixture(scope="module")
def heart():
    p = load_data(DATA / "heart_scale")
    w = np.random.default_rng(11).choice([0.0, 0.5, 1.0, 2.0, 4.0], p.n_rows)
    return p.X, p.y, w


def objective(coef, intercept, X, y, w, C, loss):
    margin = np.maximum(0.0, 1.0 - y * (X @ coef + intercept))
    return 0.5 * (coef @ coef + intercept ** 2) + C * float(
        np.sum(w * (margin if loss == "hinge" else margin ** 2)))


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_linear_svc_weighted_objective_against_sklearn(heart, loss):
    from sklearn.svm import LinearSVC

    X, y, w = heart
    C = 0.1
    ours = S.LinearSVC(loss=loss, C=C, tol=1e-8, max_iter=100_000).fit(X, y, sample_weight=w)
    ref = LinearSVC(loss=loss, C=C, dual=True, tol=1e-8, max_iter=1_000_000).fit(
        X, y, sample_weight=w)
    f_ours = objective(ours.coef_[0], ours.intercept_[0], X, y, w, C, loss)
    f_ref = objective(ref.coef_[0], ref.intercept_[0], X, y, w, C, loss)
    assert f_ours <= f_ref * (1 + 1e-4)
    unweighted = S.LinearSVC(loss=loss, C=C, tol=1e-8, max_iter=100_000).fit(X, y)
    assert objective(unweighted.coef_[0], unweighted.intercept_[0], X, y, w, C, loss) > \
        f_ours * (1 + 1e-3)


def test_integer_weights_are_repeated_rows(heart):
    X, y, _ = heart
    k = np.random.default_rng(5).integers(0, 4, len(y))
    a = S.LinearSVC(C=0.1, tol=1e-10, max_iter=100_000).fit(X, y, sample_weight=k)
    rows = np.repeat(np.arange(len(y)), k)
    b = S.LinearSVC(C=0.1, tol=1e-10, max_iter=100_000).fit(X[rows], y[rows])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)


def test_weights_from_a_cache_path(heart, tmp_path):
    X, y, w = heart
    p = load_data(DATA / "heart_scale")
    p.weights = w
    save_cache(p, tmp_path / "w.cache")
    a = S.LinearSVC(C=0.1, tol=1e-8).fit(tmp_path / "w.cache")
    b = S.LinearSVC(C=0.1, tol=1e-8).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="give them one way"):
        S.LinearSVC().fit(tmp_path / "w.cache", sample_weight=w)
    # an unweighted cache takes sample_weight
    p.weights = None
    save_cache(p, tmp_path / "p.cache")
    c = S.LinearSVC(C=0.1, tol=1e-8).fit(tmp_path / "p.cache", sample_weight=w)
    np.testing.assert_allclose(c.coef_, b.coef_, rtol=1e-12, atol=1e-14)


def test_bad_sample_weights(heart):
    X, y, w = heart
    for bad, msg in ((w[:-1], "shape"), (np.where(w > 1, -1.0, w), ">= 0"),
                     (np.where(w > 1, np.nan, w), ">= 0"), (np.zeros(len(y)), "zero")):
        with pytest.raises(ValueError, match=msg):
            S.LinearSVC().fit(X, y, sample_weight=bad)


@pytest.mark.parametrize("make", [lambda: S.LogisticRegression(tol=1e-10),
                                  lambda: S.LinearSVR(tol=1e-10, max_iter=1_000_000),
                                  lambda: S.LinearSVC(penalty="l1", dual=False, tol=1e-10)])
def test_every_linear_estimator_weighs_integer_weights_as_repeated_rows(heart, make):
    X, y, w = heart
    k = np.round(w).astype(np.int64)            # 0, 0 (0.5 rounds to even), 1, 2, 4
    rows = np.repeat(np.arange(len(y)), k)
    weighted = make().fit(X, y, sample_weight=k.astype(np.float64))
    repeated = make().fit(X[rows], y[rows])
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-3, atol=1e-4)
    plain = make().fit(X, y)
    assert np.abs(plain.coef_ - weighted.coef_).max() > 1e-2     # the weights matter
    make().fit(X, y, sample_weight=np.ones(len(y)))       # weights of 1 are no weights

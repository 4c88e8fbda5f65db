"""svmtool.ops.metrics against scikit-learn's implementations (the independent truth)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import lazy
from svmtool.ops import metrics

skm = lazy("sklearn.metrics")       # the reference: the tests that use it skip without it

# sklearn calls non-integral labels "continuous": integral class labels only
labels_st = st.lists(st.sampled_from([-1.0, 1.0, 2.0, 3.0]), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_accuracy_and_prf_match_sklearn(data):
    y_true = np.array(data.draw(labels_st))
    y_pred = np.array(data.draw(st.lists(st.sampled_from([-1.0, 1.0, 2.0, 3.0]),
                                         min_size=len(y_true), max_size=len(y_true))))
    assert metrics.accuracy(y_true, y_pred) == pytest.approx(skm.accuracy_score(y_true, y_pred))

    positive = data.draw(st.sampled_from([-1.0, 1.0, 2.0]))
    p, r, f1, tp, fp, fn = metrics.precision_recall_f1(y_true, y_pred, positive)
    # sklearn's one-class-against-the-rest view: labels=[positive], zero_division=0
    sp, sr, sf, _ = skm.precision_recall_fscore_support(
        y_true, y_pred, labels=[positive], average=None, zero_division=0)
    assert (p, r, f1) == pytest.approx((sp[0], sr[0], sf[0]))
    assert tp == int(np.sum((y_true == positive) & (y_pred == positive)))

    labels = np.array([1.0, -1.0, 2.0, 3.0])
    P, R, F, S = metrics.per_class_prf(y_true, y_pred, labels)
    sP, sR, sF, sS = skm.precision_recall_fscore_support(
        y_true, y_pred, labels=labels, average=None, zero_division=0)
    np.testing.assert_allclose(P, sP)
    np.testing.assert_allclose(R, sR)
    np.testing.assert_allclose(F, sF)
    np.testing.assert_array_equal(S, sS)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(-4, 4)), min_size=2, max_size=80))
def test_roc_auc_with_ties_matches_sklearn(pairs):
    # small integer scores: many ties between positives and negatives
    pos = np.array([p for p, _ in pairs])
    scores = np.array([s for _, s in pairs], dtype=np.float64) / 2.0
    ours = metrics.roc_auc(pos, scores)
    if pos.all() or not pos.any():
        assert np.isnan(ours)
    else:
        assert ours == pytest.approx(skm.roc_auc_score(pos, scores), rel=1e-12, abs=1e-15)


def test_roc_auc_all_tied_is_one_half_and_perfect_is_one():
    assert metrics.roc_auc([True, False, True, False], [3.0, 3.0, 3.0, 3.0]) == 0.5
    assert metrics.roc_auc([True, False, True, False], [2.0, -1.0, 5.0, 1.9]) == 1.0
    assert metrics.roc_auc([True, False], [-1.0, 1.0]) == 0.0


def test_average_ranks_match_definition():
    v = np.array([3.0, 1.0, 3.0, 2.0, 3.0, 1.0])
    # sorted: 1,1 (ranks 1,2 -> 1.5), 2 (rank 3), 3,3,3 (ranks 4,5,6 -> 5)
    np.testing.assert_array_equal(metrics.average_ranks(v), [5, 1.5, 5, 3, 5, 1.5])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(-100, 100), st.floats(-100, 100)), min_size=3, max_size=50))
def test_regression_measures_match_sklearn_and_numpy(pairs):
    t = np.array([a for a, _ in pairs])
    p = np.array([b for _, b in pairs])
    assert metrics.mean_squared_error(t, p) == pytest.approx(
        skm.mean_squared_error(t, p), rel=1e-9, abs=1e-9)
    if np.ptp(t) > 1e-3 and np.ptp(p) > 1e-3:
        r = np.corrcoef(t, p)[0, 1]
        assert metrics.squared_correlation(t, p) == pytest.approx(r * r, rel=1e-6, abs=1e-9)


def test_regression_sums_by_chunks_equal_whole():
    rng = np.random.default_rng(3)
    t, p = rng.normal(size=1000), rng.normal(size=1000)
    whole = metrics.RegressionSums().add(t, p)
    parts = metrics.RegressionSums()
    for a in range(0, 1000, 137):
        parts.add(t[a:a + 137], p[a:a + 137])
    assert parts.n == 1000
    assert parts.mse() == pytest.approx(whole.mse(), rel=1e-12)
    assert parts.squared_correlation() == pytest.approx(whole.squared_correlation(), rel=1e-9)
    assert whole.mse() == pytest.approx(skm.mean_squared_error(t, p), rel=1e-12)


def test_metrics_module_imports_neither_scipy_nor_sklearn():
    import subprocess
    import sys

    code = ("import sys; import svmtool.ops.metrics; "
            "bad = [m for m in ('scipy', 'sklearn') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

"""The estimators' exact finish (svmtool.sklearn._base): a problem of at most FINISH_ROWS rows
is solved to FINISH_TOL, so the same problem written differently -- a row of weight k or the
row k times, the rows in another order -- gives the same model to rounding, at the estimator's
default tol.  The truth is the problem itself: the repeated rows are the weighted problem."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn", minversion="1.6",
                    reason="the estimators need scikit-learn >= 1.6 (pip install svmtool[sklearn])")

from sklearn.exceptions import ConvergenceWarning  # noqa: E402

import svmtool  # noqa: E402
import svmtool.sklearn as S  # noqa: E402
from svmtool.sklearn._base import FINISH_ROWS, FINISH_TOL  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HEART = ROOT / "data" / "heart_scale"


@pytest.fixture(scope="module")
def heart():
    prob = svmtool.load_data(str(HEART))
    return prob.X.toarray(), prob.y


@pytest.mark.parametrize("make", [S.LinearSVC, S.SVC, S.DCSVC, S.SVR],
                         ids=["LinearSVC", "SVC", "DCSVC", "SVR"])
def test_weight_k_is_the_row_k_times_at_the_default_tol(make, heart):
    """heart_scale (270 rows) with weights 0-3: the weighted fit, the repeated rows and the
    weighted rows shuffled score every row alike to rtol 1e-7 (scikit-learn's check's
    tolerance) with the estimator's defaults; each fit is the exact one."""
    X, y = heart
    k = np.random.default_rng(5).integers(0, 4, len(y))
    order = np.random.default_rng(6).permutation(len(y))
    weighted = make().fit(X, y, sample_weight=k)
    repeated = make().fit(X.repeat(k, axis=0), y.repeat(k))
    shuffled = make().fit(X[order], y[order], sample_weight=k[order])
    score = "decision_function" if hasattr(weighted, "decision_function") else "predict"
    want = getattr(repeated, score)(X)
    for est in (weighted, shuffled):
        assert est.exact_finish_
        np.testing.assert_allclose(getattr(est, score)(X), want, rtol=1e-7, atol=1e-9)
    # at the default tol without the finish the two differ by far more (the finish is what
    # makes them agree): the command line's fit of the repeated rows
    loose = make(tol=0.1) if make is not S.SVC else make(tol=0.5)
    loose._exact_finish = lambda *a: None
    assert np.abs(getattr(loose.fit(X, y, sample_weight=k), score)(X) - want).max() > 1e-6


def test_a_large_problem_keeps_the_fit_at_tol(heart):
    """Past FINISH_ROWS rows the estimator's model is the solver's at tol (the command line's
    with the same options), not the exact one."""
    X, y = heart
    reps = FINISH_ROWS // len(y) + 1
    big_X, big_y = np.tile(X, (reps, 1)), np.tile(y, reps)
    est = S.LinearSVC().fit(big_X, big_y)
    assert not est.exact_finish_
    assert est._model.report["params"].get("eps") != FINISH_TOL
    small = S.LinearSVC().fit(X, y)
    assert small.exact_finish_ and small._model.report["params"]["eps"] == FINISH_TOL


def test_a_finish_not_reached_warns_once_for_the_fit_at_tol(heart):
    """With the user's max_iter too small for FINISH_TOL the finish is dropped silently: the
    one ConvergenceWarning is the fit at tol's own."""
    X, y = heart
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = S.LinearSVC(loss="hinge", max_iter=2).fit(X, y)
    assert not est.exact_finish_
    stuck = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(stuck) == 1 and "eps=0.1" in str(stuck[0].message)


def test_the_docs_state_the_code_s_numbers():
    """docs/python.md gives the finish's row limit and tolerance as the code has them."""
    text = (ROOT / "docs" / "python.md").read_text()
    rows = re.search(r"at most ([\d,]+)\s+rows is solved to tol (\S+) as well", text)
    assert rows, "docs/python.md no longer describes the exact finish"
    assert int(rows.group(1).replace(",", "")) == FINISH_ROWS
    assert float(rows.group(2)) == FINISH_TOL

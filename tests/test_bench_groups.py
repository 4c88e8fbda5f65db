"""bench knows the problems of -s 5, 6, 7, 11, 12, 13: each registry solver falls in the group of
its problem, LIBLINEAR's runner of the same number joins it, and the objective is computed from w
in one convention (L1 regulariser, SVR loss on real targets)."""

import numpy as np
import scipy.sparse as sp

from conftest import need
from svmtool.bench.anchors import build_runners, spec_group
from svmtool.bench.harness import linear_objective
from svmtool.solvers import get_spec


def test_groups_of_the_new_solvers():
    want = {"5": "l1_squared_hinge", "6": "l1_logistic", "7": "logistic", "11": "svr_squared",
            "12": "svr_squared", "13": "svr"}
    for s, g in want.items():
        assert spec_group(get_spec(s)) == g
    need("liblinear")       # the runners below are liblinear-official's
    runners, _ = build_runners([get_spec(s) for s in want], ["liblinear"], -1.0, {})
    names = {r.name for r in runners}
    for s in want:
        assert f"liblinear -s {s}" in names


def test_objectives_in_one_convention():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]))
    w = np.array([[0.5], [-1.0]])
    z = X @ w[:, 0]
    y = np.array([1.0, 2.0, -1.0])
    r = np.maximum(0.0, np.abs(z - y) - 0.1)
    assert np.isclose(linear_objective(X, y, w, np.array([np.nan]), 2.0, "svr"),
                      0.625 + 2.0 * r.sum())
    assert np.isclose(linear_objective(X, y, w, np.array([np.nan]), 2.0, "svr_squared"),
                      0.625 + 2.0 * (r * r).sum())
    yc = np.array([1.0, -1.0, 1.0])
    m = np.where(yc == 1.0, 1.0, -1.0) * z
    assert np.isclose(linear_objective(X, yc, w, np.array([1.0]), 1.0, "l1_logistic"),
                      1.5 + np.logaddexp(0.0, -m).sum())
    assert np.isclose(linear_objective(X, yc, w, np.array([1.0]), 1.0, "l1_squared_hinge"),
                      1.5 + (np.maximum(0.0, 1.0 - m) ** 2).sum())

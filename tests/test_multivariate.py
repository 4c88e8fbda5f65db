"""SVMperf's multivariate losses on the 1-slack cutting plane (``-s cp --loss``,
svmtool.solvers.cutting_plane.multivariate and its jitted sweep).

Truths used: brute force over every labeling of a tiny training set (the most violated
constraint), brute force over every ranking (ROC area), the structural QP with all its
constraints solved by scipy's SLSQP (the optimum), ``-s cp`` itself (error rate is its hinge
loss), the objective and the F1/PRBEP of a model recomputed from the definitions
(tests/perf_truth.py), and SVMperf 3.00's own programs when they are on PATH (SVMperf is in no
package registry: without them that test skips).
"""

import itertools
import re

import numpy as np
import pytest
import scipy.sparse as sp

import perf_truth
from conftest import shared_file
from svmtool.engine.passes_cp import CPOracle
from svmtool.params import CuttingPlaneParams, TrainParams, flag_name, render
from svmtool.solvers.cutting_plane import _multivariate_jit as mj
from svmtool.solvers.cutting_plane import multivariate as mv
from svmtool.solvers.cutting_plane.ordinal import PairRisk

TABLE = ("f1", "errorrate", "prbep", "prec@k", "rec@k")


labelings = perf_truth.labelings


def brute_best(y, z, loss, k):
    best = -np.inf
    for ybar in labelings(len(y)):
        r = mv.table_value(y, z, ybar, loss, k)
        if r is not None:
            best = max(best, r[0])
    return best


def k_fraction_for(loss, trial):
    if loss == "prec@k":
        return (0.0, 0.3, 1.0)[trial % 3]
    if loss == "rec@k":
        return (0.0, 1.0, 1.5)[trial % 3]
    return 0.0


@pytest.mark.parametrize("loss", TABLE)
def test_most_violated_labeling_is_the_brute_force_maximum(loss):
    rng = np.random.default_rng(11)
    for trial in range(40):
        n = int(rng.integers(1, 9))
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        if trial % 4 == 0:
            z = rng.integers(-2, 3, n).astype(float)        # ties
        else:
            z = rng.normal(size=n) * rng.uniform(0.1, 3.0)
        P = int(np.sum(y > 0))
        k = mv.k_of(loss, P, k_fraction_for(loss, trial))
        v = np.zeros(n)
        val, d, a, b = mj.threshold_cut(z, y, mv.LOSS_NUMBER[loss], k, v)
        best = brute_best(y, z, loss, k)
        assert val == pytest.approx(best, abs=1e-9)
        # the labeling it returns is allowed and has that value and that table
        ybar = np.where(v != 0, -y, y)
        got = mv.table_value(y, z, ybar, loss, k)
        assert got is not None
        assert got[0] == pytest.approx(val, abs=1e-9)
        assert got[1] == pytest.approx(d)
        assert a == int(np.sum((y > 0) & (ybar > 0)))
        assert b == int(np.sum((y < 0) & (ybar > 0)))
        assert val >= -1e-12                  # the true labeling (value 0) is always allowed


def test_losses_are_svmperfs_on_tables():
    """Delta of the sweep against SVMperf's definitions, written out per table."""
    def f1(a, b, c):
        if a == 0:
            return 1.0
        p, r = a / (a + b), a / (a + c)
        return 1 - 2 * p * r / (p + r)

    for P, N in ((3, 4), (5, 1), (1, 6)):
        for a in range(P + 1):
            for b in range(N + 1):
                c = P - a
                assert mj.delta(mj.F1, a, b, P, N) == pytest.approx(f1(a, b, c))
                assert mj.delta(mj.ERRORRATE, a, b, P, N) == pytest.approx((b + c) / (P + N))
                assert mj.delta(mj.REC_K, a, b, P, N) == pytest.approx(1 - a / P)
                if a + b:
                    assert mj.delta(mj.PREC_K, a, b, P, N) == pytest.approx(1 - a / (a + b))
                if a + b == P:      # PRBEP's labelings: precision = recall
                    assert mj.delta(mj.PRBEP, a, b, P, N) == pytest.approx(1 - a / P)


def test_rocarea_cut_is_the_maximum_over_rankings():
    """The pair counts' risk equals the largest n Delta - (n/m) sum_swapped (z_i - z_j) over
    every ranking (permutation) of the rows: the structural ROC-area constraint set."""
    rng = np.random.default_rng(5)
    for trial in range(12):
        n = int(rng.integers(2, 7))
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        y[0], y[1] = 1.0, -1.0
        X = sp.csr_matrix(rng.normal(size=(n, 3)))
        w = rng.normal(size=3)
        z = X @ w
        pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
        m = len(pos) * len(neg)
        best = -np.inf
        for perm in itertools.permutations(range(n)):
            place = np.empty(n)
            place[list(perm)] = np.arange(n)         # 0 = top
            swapped = [(i, j) for i in pos for j in neg if place[i] > place[j]]
            val = n * len(swapped) / m - (n / m) * sum(z[i] - z[j] for i, j in swapped)
            best = max(best, val)
        C = 0.7
        risk = PairRisk(CPOracle(X.indptr, X.indices, X.data, 3), y, None, C * n / m)
        g, off, R = risk.cut(z)
        assert R / C == pytest.approx(best, abs=1e-9)
        assert g @ w + off == pytest.approx(R)


# --- the optimum: scipy's SLSQP on the structural QP with every constraint --------------------

def structural_optimum(X, y, C, loss, k):
    """min 1/2 w'w + C n xi  s.t.  xi >= Delta(ybar) - 1/n sum_flipped y_i x_i'w  (every
    labeling the loss allows; ROC area: every ranking)."""
    n, d = X.shape
    rows = []
    if loss == "rocarea":
        pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
        m = len(pos) * len(neg)
        for perm in itertools.permutations(range(n)):
            place = np.empty(n)
            place[list(perm)] = np.arange(n)
            sw = [(i, j) for i in pos for j in neg if place[i] > place[j]]
            g = np.zeros(d)
            for i, j in sw:
                g += X[i] - X[j]
            rows.append((len(sw) / m, g / m))
    else:
        for ybar in labelings(n):
            r = mv.table_value(y, np.zeros(n), ybar, loss, k)
            if r is None:
                continue
            flip = ybar != y
            rows.append((r[1], (y[flip, None] * X[flip]).sum(axis=0) / n))
    return perf_truth.qp_optimum(np.array([r[0] for r in rows]), np.array([r[1] for r in rows]),
                                 C, n)


@pytest.mark.parametrize("loss", ("f1", "prbep", "prec@k", "rec@k", "rocarea", "errorrate"))
def test_cutting_plane_reaches_the_structural_optimum(loss):
    rng = np.random.default_rng(21)
    n = 6 if loss == "rocarea" else 8
    for trial in range(2):
        X = rng.normal(size=(n, 3))
        X[:, 2] = 1.0                                          # a bias column
        y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
        y[0], y[1] = 1.0, -1.0
        C = float(rng.choice([0.1, 1.0]))
        k = mv.k_of(loss, int(np.sum(y > 0)))
        truth = structural_optimum(X, y, C, loss, k)
        A = sp.csr_matrix(X)
        params = TrainParams(solver="cp", C=C, eps=1e-9, cp=CuttingPlaneParams(loss=loss))
        res = mv.fit(A.indptr, A.indices, A.data, y, 3, C, C, params)
        assert res.converged
        # truth >= optimum >= res.dual, and res.primal - res.dual <= eps C n
        assert res.dual <= truth + 1e-9
        assert res.primal == pytest.approx(truth, rel=1e-6, abs=1e-9)


def test_errorrate_is_the_hinge_loss_of_cp():
    rng = np.random.default_rng(3)
    X = sp.random(60, 8, density=0.5, format="csr", random_state=2)
    y = np.where(rng.random(60) < 0.4, 1.0, -1.0)
    base = TrainParams(solver="cp", C=0.5, eps=1e-6)
    hinge = mv.fit(X.indptr, X.indices, X.data, y, 8, 0.5, 0.5, base)
    # the same problem through the table sweep (TableRisk): same optimum
    from svmtool.solvers.cutting_plane.cutting_plane import solve_cp

    risk = mv.TableRisk(CPOracle(X.indptr, X.indices, X.data, 8), y, 0.5, "errorrate")
    table = solve_cp(risk, 1e-6, 10000)
    assert table.primal == pytest.approx(hinge.primal, rel=1e-5)
    np.testing.assert_allclose(table.w, hinge.w, atol=1e-3)


@pytest.mark.parametrize("loss", ("f1", "prbep"))
def test_xi_sweep_is_the_maximum_over_labelings(loss):
    """perf_truth's sweep (the truth of the tests below) against every labeling."""
    rng = np.random.default_rng(4)
    for trial in range(40):
        n = int(rng.integers(2, 10))
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        y[0], y[1] = 1.0, -1.0
        z = rng.integers(-2, 3, n).astype(float) if trial % 3 == 0 else rng.normal(size=n)
        assert perf_truth.xi_sweep(loss, y, z) == pytest.approx(
            perf_truth.xi_enumerated(loss, y, z), abs=1e-12)


def _rows(path, model):
    """(the data, X with the bias column, y as +1 for the model's first label, -1 the other)."""
    from svmtool.io.svmlight import load_data

    p = load_data(path)
    nf = model.w.shape[0] - 1                  # the last weight is the bias column's
    X = sp.csr_matrix((p.data, p.indices, p.indptr), shape=(p.n_rows, max(nf, p.n_features)))
    X = sp.hstack([X[:, :nf], np.ones((p.n_rows, 1))]).tocsr()
    return p, X, np.where(p.y == model.labels[0], 1.0, -1.0)


def _train(path, loss, eps):
    """``svm_perf_learn -c 20 --b 1 -l 1|3 -e 100*eps``'s problem through the API."""
    import svmtool
    from svmtool.io.svmlight import load_data

    tr = load_data(path)
    C = 20 * 100 / tr.n_rows
    model = svmtool.train(tr, TrainParams(solver="cp", C=C, bias=1.0, eps=eps,
                                          cp=CuttingPlaneParams(loss=loss)))
    return model, C


@pytest.mark.parametrize("loss", ("f1", "prbep"))
def test_f1_and_prbep_models_are_certified(loss):
    """heart_scale with SVMperf's -c 20 --b 1 -e 0.1: F(w) of the model's w, recomputed from
    the definitions (perf_truth), is the primal value svmtool reports and within eps C n of its
    lower bound; and the model's own F1 (PRBEP) on its training rows is at least 100 (1 - xi):
    the labeling it predicts is one of the labelings xi is the maximum over."""
    from conftest import DATA

    model, C = _train(DATA / "heart_scale", loss, 0.001)
    rep = model.report["classes"][0]
    _, X, y = _rows(DATA / "heart_scale", model)
    w = model.w[:, 0]
    F, xi = perf_truth.objective(loss, X, y, w, C)
    assert F == pytest.approx(rep["primal"], rel=1e-9)
    assert rep["dual"] <= F <= rep["dual"] + 0.001 * C * len(y) + 1e-9
    measure = perf_truth.f1_percent if loss == "f1" else perf_truth.prbep_percent
    assert measure(y, X @ w) >= 100 * (1 - xi) - 1e-9


@pytest.mark.shared
@pytest.mark.parametrize("loss", ("f1", "prbep"))
def test_svmlight_example1_f1_and_prbep_agree_with_svmperf(tmp_path, loss):
    """SVMLight's example 1, svm_perf_learn -c 20 -w 3 --b 1 -l 1 / -l 3 (-e 0.1) and the same
    problem through the API: the two tools' [lower bound, primal] intervals meet, and their
    test-set F1 (PRBEP) agree within half a point (three of the 600 test rows)."""
    from svmtool import predict

    perf_truth.svmperf()
    tr = shared_file("svmlight_example1", "train.dat")
    te = shared_file("svmlight_example1", "test.dat")
    model, _ = _train(tr, loss, 0.001)
    rep = model.report["classes"][0]
    out, theirs = perf_truth.svmperf_run(
        tr, te, ["-c", 20, "-w", 3, "--b", 1, "-l", 1 if loss == "f1" else 3, "-e", 0.1],
        tmp_path)
    dval = float(re.search(r"dval=([-0-9.]+)", out).group(1))
    pval = float(re.search(r"pval=([-0-9.]+)", out).group(1))
    assert max(rep["dual"], dval) <= min(rep["primal"], pval) + 1e-5
    test, X, y = _rows(te, model)
    measure = perf_truth.f1_percent if loss == "f1" else perf_truth.prbep_percent
    ours = measure(y, predict(model, test)[1][:, 0])
    assert ours == pytest.approx(measure(y, X @ model.w[:, 0]), abs=1e-9)
    assert abs(ours - measure(y, theirs)) <= 0.5, (ours, measure(y, theirs))


def test_option_checks():
    assert CuttingPlaneParams(loss="f1").check() is None
    msg = CuttingPlaneParams(loss="auc").check()       # the field's name; the CLI's flag
    assert msg.startswith("loss must be one of") and render(msg, flag_name).startswith("--loss")
    assert "only applies" in CuttingPlaneParams(loss="f1", k_fraction=0.5).check()
    assert "larger than 1" in CuttingPlaneParams(loss="prec@k", k_fraction=2).check()
    assert "smaller than 1" in CuttingPlaneParams(loss="rec@k", k_fraction=0.5).check()
    msg = TrainParams(solver="cp", weights=((1.0, 2.0),),
                      cp=CuttingPlaneParams(loss="f1")).check()
    assert "class weights" in msg
    assert mv.k_of("prec@k", 7) == 3 and mv.k_of("rec@k", 7) == 14
    assert mv.k_of("prec@k", 1) == 1 and mv.k_of("prec@k", 10, 0.25) == 2

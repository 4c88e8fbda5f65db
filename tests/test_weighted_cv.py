"""Instance weights through cross validation (-v), the -C search and svmtool grid: every fold
trains on its rows' weights.

Independent truths: a fold loop written here (the same seeded folds, each fold's problem built
from the scipy matrix and its weights, trained cold); the weighted fits themselves are checked
against scikit-learn's weighted liblinear where the solvers are tested."""

import re

import numpy as np
import pytest

from conftest import DATA, run_cli
from svmtool import api
from svmtool.io.svmlight import load_data
from svmtool.io.writer import format_svmlight
from svmtool.params import TrainParams
from svmtool.problem import Problem
from svmtool.selection.folds import libsvm_folds
from svmtool.solvers.selection.param_search import find_c, fold_split


@pytest.fixture(scope="module")
def weighted():
    p = load_data(DATA / "heart_scale")
    rng = np.random.default_rng(7)
    p.weights = rng.choice([0.0, 0.2, 1.0, 5.0], p.n_rows)
    return p


def hand_folds(prob, params, nr_fold, seed):
    """Labels predicted for each row by a model trained on the other folds (cold fits)."""
    X, y, w = prob.X, prob.y, prob.weights
    perm, bounds = fold_split(prob.n_rows, nr_fold, seed)
    pred = np.empty(prob.n_rows)
    for f in range(nr_fold):
        test = perm[bounds[f]:bounds[f + 1]]
        train = np.sort(np.concatenate([perm[:bounds[f]], perm[bounds[f + 1]:]]))
        sub = Problem.from_matrix(X[train], y[train], n_features=prob.n_features)
        sub.weights = np.array(w[train])
        model = api.train(sub, params)
        pred[test] = api.predict(model, Problem.from_matrix(X[test], y[test],
                                                            n_features=prob.n_features))[0]
    return pred


@pytest.mark.parametrize("solver", ["dcd-l2", "dcd-l1"])
def test_weighted_cv_is_the_hand_fold_loop(weighted, solver):
    params = TrainParams(solver=solver, C=0.5, eps=1e-6, threads=1)
    got = api.cross_validate(weighted, params, 5)
    assert np.array_equal(got, hand_folds(weighted, params, 5, params.seed))
    plain = load_data(DATA / "heart_scale")
    unweighted = api.cross_validate(plain, params, 5)
    assert np.count_nonzero(got != unweighted) >= 3       # the weights change predictions
    # zero weights: those rows take no part in training, but are still predicted
    zero = weighted.weights == 0
    assert zero.any() and np.all(np.isin(got[zero], [-1.0, 1.0]))


def test_cli_v5_with_weight_file_and_cost_tokens(weighted, tmp_path):
    params = TrainParams(solver="dcd-l2", C=0.5, eps=1e-6, threads=1)
    want = float(np.mean(hand_folds(weighted, params, 5, params.seed) == weighted.y))
    (tmp_path / "w.txt").write_text("".join(f"{v!r}\n" for v in weighted.weights.tolist()))
    (tmp_path / "cost.txt").write_bytes(format_svmlight(weighted))
    for args in (["-W", tmp_path / "w.txt", DATA / "heart_scale"], [tmp_path / "cost.txt"]):
        r = run_cli("train", "-s", "1", "-c", "0.5", "-e", "1e-6", "-v", "5", *args)
        assert r.returncode == 0, r.stderr
        rate = float(re.search(rb"Cross Validation Accuracy = ([\d.]+)%", r.stderr).group(1))
        assert rate == pytest.approx(100 * want, abs=1e-4)


def test_weighted_c_search_is_the_cold_fold_loop(weighted):
    params = TrainParams(solver="dcd-l2", eps=1e-6, threads=1)
    res = find_c(weighted, params, 5)
    assert len(res.path) >= 3
    n = weighted.n_rows
    # (only where the dual solver converges within its iteration cap: above that, warm and
    # cold runs stop at different points, and the Newton fallback takes no weights yet here)
    for C, rate, _ in [pt for pt in res.path if pt[0] <= 0.125][::2]:
        pred = hand_folds(weighted, TrainParams(solver="dcd-l2", C=C, eps=1e-6, threads=1),
                          5, params.seed)
        assert rate == pytest.approx(float(np.mean(pred == weighted.y)), abs=1.5 / n)
    plain = find_c(load_data(DATA / "heart_scale"), params, 5)
    assert [r for _, r, _ in plain.path] != [r for _, r, _ in res.path]


def test_weighted_grid_cells_are_the_fold_loop(weighted, tmp_path):
    (tmp_path / "cost.txt").write_bytes(format_svmlight(weighted))
    r = run_cli("grid", "-s", "dcd-l2", "-e", "1e-6", "-log2c", "-7,-3,2", "-out", "g.out",
                "-png", "null", tmp_path / "cost.txt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rates = {}
    for line in (tmp_path / "g.out").read_text().splitlines():
        m = re.fullmatch(r"log2c=(\S+) rate=(\S+)", line)
        assert m, line
        rates[float(m.group(1))] = float(m.group(2))
    assert sorted(rates) == [-7.0, -5.0, -3.0]      # C where -s 1 converges in its cap
    folds = libsvm_folds(weighted.y, 5, stratified=False, seed=1)
    X, y, w = weighted.X, weighted.y, weighted.weights
    for lc, rate in rates.items():
        pred = np.empty(weighted.n_rows)
        for test in folds:
            keep = np.ones(weighted.n_rows, dtype=bool)
            keep[test] = False
            sub = Problem.from_matrix(X[keep], y[keep], n_features=weighted.n_features)
            sub.weights = np.array(w[keep])
            m = api.train(sub, TrainParams(solver="dcd-l2", C=2.0 ** lc, eps=1e-6, threads=1))
            pred[test] = api.predict(m, Problem.from_matrix(X[test], y[test],
                                                            n_features=weighted.n_features))[0]
        assert rate == pytest.approx(100 * float(np.mean(pred == y)), abs=150 / weighted.n_rows)


def _sklearn_fold_rates(prob, folds, cells, training_rows):
    """{(log2c, log2g): rate} of scikit-learn's SVC (its libsvm carries LIBSVM-weights'
    changes: rows of weight 0 left out, C_i = C W_i) on the folds, with sample_weight."""
    from sklearn.svm import SVC

    X, y, w = prob.X, prob.y, prob.weights
    out = {}
    for lc, lg in cells:
        pred = np.empty(prob.n_rows)
        for f, test in enumerate(folds):
            train = training_rows(folds, f)
            m = SVC(C=2.0 ** lc, gamma=2.0 ** lg, tol=1e-3).fit(X[train], y[train],
                                                                 sample_weight=w[train])
            pred[test] = m.predict(X[test])
        out[(lc, lg)] = 100.0 * float(np.mean(pred == y))
    return out


def _grid_rates(path, *args):
    out = {}
    for line in path.read_text().splitlines():
        m = re.fullmatch(r"log2c=(\S+) log2g=(\S+) rate=(\S+)", line)
        assert m, line
        out[(float(m.group(1)), float(m.group(2)))] = float(m.group(3))
    return out


@pytest.mark.parametrize("seed", ["c", "fold"])
def test_weighted_kernel_grid_cells_are_libsvm_weights_folds(weighted, tmp_path, seed):
    """`svmtool grid` (C-SVC, LIBSVM's folds, alpha seeding) on a file with cost: tokens: each
    cell's rate is that of scikit-learn's weighted SVC trained on the same folds (two
    solutions within -e of one optimum may put one held-out row on either side), and not the
    unweighted grid's."""
    pytest.importorskip("sklearn", reason="scikit-learn is the independent weighted LIBSVM")
    from svmtool.selection.folds import libsvm_folds, training_rows

    (tmp_path / "cost.txt").write_bytes(format_svmlight(weighted))
    r = run_cli("grid", "-log2c", "-1,7,4", "-log2g", "-7,-1,3", "--seed-alpha", seed,
                "-out", "g.out", "-png", "null", tmp_path / "cost.txt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    got = _grid_rates(tmp_path / "g.out")
    folds = libsvm_folds(weighted.y, 5, stratified=True, seed=1)
    truth = _sklearn_fold_rates(weighted, folds, got, training_rows)
    one_row = 100.0 / weighted.n_rows + 1e-3
    off = {k: (got[k], truth[k]) for k in truth if abs(got[k] - truth[k]) > 1e-3}
    assert len(off) <= 1 and all(abs(a - b) < one_row for a, b in off.values()), off
    plain = weighted.take_rows(np.arange(weighted.n_rows))
    plain.weights = None
    (tmp_path / "plain.txt").write_bytes(format_svmlight(plain))
    r = run_cli("grid", "-log2c", "-1,7,4", "-log2g", "-7,-1,3", "-out", "p.out", "-png",
                "null", tmp_path / "plain.txt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert _grid_rates(tmp_path / "p.out") != got


def test_weighted_early_grid_runs_on_the_weights(weighted, tmp_path):
    """`svmtool grid -s dcsvm --early` on cost: tokens: a rate for every cell, other rates
    than without the tokens (the early model's own truth is DC-SVM's, tested there)."""
    (tmp_path / "cost.txt").write_bytes(format_svmlight(weighted))
    plain = weighted.take_rows(np.arange(weighted.n_rows))
    plain.weights = None
    (tmp_path / "plain.txt").write_bytes(format_svmlight(plain))
    rates = []
    for name in ("cost.txt", "plain.txt"):
        r = run_cli("grid", "-s", "dcsvm", "--early", "-log2c", "-1,7,4", "-log2g", "-5,-1,2",
                    "-out", name + ".out", "-png", "null", tmp_path / name, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        rates.append(_grid_rates(tmp_path / (name + ".out")))
    assert len(rates[0]) == 9 and set(rates[0]) == set(rates[1])
    assert rates[0] != rates[1]


def _objective(prob, w, C, loss):
    margin = np.maximum(0.0, 1.0 - prob.y * (prob.X @ w))
    return 0.5 * w @ w + C * float(np.sum(prob.weights * (margin if loss == "l1" else
                                                           margin ** 2)))


@pytest.mark.parametrize("solver,loss", [("dcd-l2", "l2"), ("dcd-l1", "l1")])
@pytest.mark.parametrize("variant", ["scaled", "margin"])
def test_init_model_warm_start_reaches_the_weighted_optimum(weighted, solver, loss, variant):
    """--init-model from the unweighted model: the start respects each row's own box
    (C * W_i, 0 for a weight of 0) and the run ends at the cold weighted run's objective."""
    from dataclasses import replace

    C = 0.05
    params = TrainParams(solver=solver, C=C, eps=1e-8, threads=1)
    params = replace(params, dcd=replace(params.dcd, warm_start=variant))
    plain = load_data(DATA / "heart_scale")
    old = api.train(plain, params)
    cold = api.train(weighted, params)
    warm = api.train(weighted, params, init_model=old)
    sign = 1.0 if cold.labels[0] == 1 else -1.0
    f_cold = _objective(weighted, sign * cold.w[:13, 0], C, loss)
    f_warm = _objective(weighted, sign * warm.w[:13, 0], C, loss)
    assert np.isfinite(f_warm)
    assert f_warm == pytest.approx(f_cold, rel=1e-5)     # both stopped by eps=1e-8
    assert cold.report["classes"][0]["converged"]
    f_old = _objective(weighted, sign * old.w[:13, 0], C, loss)
    assert f_old > f_cold * (1 + 1e-3)         # the weights moved the optimum

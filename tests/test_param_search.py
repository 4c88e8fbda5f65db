"""-C: choosing C by cross validation along a warm-started doubling path.

Independent truths: a brute-force grid over the same folds with liblinear-official's solvers
(cold starts), and the start-C formula recomputed with scipy.
"""

import math

import numpy as np
import pytest

from svmtool.io.svmlight import load_data
from svmtool.params import TrainParams
from svmtool.solvers.selection.param_search import find_c, fold_split, start_C

from conftest import DATA, run_cli

liblinear = pytest.importorskip("liblinear.liblinearutil")


@pytest.fixture(scope="module")
def heart():
    return load_data(str(DATA / "heart_scale"))


def brute_force_rates(prob, s, Cs, nr_fold, seed, eps):
    """CV accuracy at each C with liblinear-official, trained from scratch on our folds."""
    X, y = prob.X, prob.y
    perm, bounds = fold_split(prob.n_rows, nr_fold, seed)
    rates = []
    for C in Cs:
        pred = np.empty(prob.n_rows)
        for f in range(nr_fold):
            test = perm[bounds[f]:bounds[f + 1]]
            train = np.sort(np.concatenate([perm[:bounds[f]], perm[bounds[f + 1]:]]))
            m = liblinear.train(liblinear.problem(y[train], X[train]),
                                liblinear.parameter(f"-s {s} -c {C!r} -e {eps} -q"))
            lab, _, _ = liblinear.predict(y[test], X[test], m, "-q")
            pred[test] = lab
        rates.append(float(np.mean(pred == y)))
    return rates


@pytest.mark.parametrize("solver,s,eps", [("newton", 2, 1e-6), ("lr", 0, 1e-6),
                                          ("dcd-l2", 1, 1e-5)])
def test_find_c_picks_the_brute_force_best(heart, solver, s, eps):
    res = find_c(heart, TrainParams(solver=solver, eps=eps, threads=1), 5)
    Cs = [c for c, _, _ in res.path]
    assert all(b == 2 * a for a, b in zip(Cs, Cs[1:]))
    rates = brute_force_rates(heart, s, Cs, 5, 1, eps)
    np.testing.assert_allclose([r for _, r, _ in res.path], rates, atol=1.5 / heart.n_rows)
    best = Cs[int(np.argmax(rates))]
    assert res.best_C == best
    assert res.best_rate == pytest.approx(max(rates), abs=1.5 / heart.n_rows)


def test_start_c_formula(heart):
    sq = np.asarray(heart.X.multiply(heart.X).sum(axis=1)).ravel()
    l = heart.n_rows
    expect_l2 = 2.0 ** math.floor(math.log2(1.0 / (2 * l * sq.max())))
    expect_lr = 2.0 ** math.floor(math.log2(1.0 / (l * sq.max())))
    assert start_C(heart, TrainParams(solver="newton")) == expect_l2
    assert start_C(heart, TrainParams(solver="lr")) == expect_lr
    with_bias = 2.0 ** math.floor(math.log2(1.0 / (l * (sq + 1.0).max())))
    assert start_C(heart, TrainParams(solver="lr", bias=1.0)) == with_bias


def test_path_does_not_depend_on_thread_count(heart):
    a = find_c(heart, TrainParams(solver="lr", threads=1), 4)
    b = find_c(heart, TrainParams(solver="lr", threads=2), 4)
    assert [(c, r) for c, r, _ in a.path] == [(c, r) for c, r, _ in b.path]
    assert a.best_C == b.best_C


def test_cli_find_c(tmp_path):
    r = run_cli("train", "-C", "-s", "2", "-v", "3", str(DATA / "heart_scale"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "log2c=" in err and "Best C = " in err
    best = float(err.split("Best C = ")[1].split()[0])
    assert abs(math.log2(best) - round(math.log2(best))) < 1e-5    # %g, as LIBLINEAR prints
    assert not list(tmp_path.iterdir())          # -C writes no model

"""Primal Newton-CG (-s 0 lr, -s 2 newton), its objectives and the local row-pass oracle.

Independent truths: finite differences, scipy.sparse products, liblinear-official's models and
predictions, and numpy recomputations of the objectives.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from svmtool import api
from svmtool.engine.local import LocalOracle, split_rows
from svmtool.io.svmlight import load_data
from svmtool.params import TrainParams
from svmtool.problem import Problem
from svmtool.solvers import get_spec
from svmtool.solvers.newton import newton
from svmtool.solvers.newton.objectives import make_objective

from conftest import DATA, run_cli

liblinear = pytest.importorskip("liblinear.liblinearutil")


@pytest.fixture(scope="module")
def heart():
    return load_data(str(DATA / "heart_scale"))


@pytest.fixture(scope="module")
def a9a():
    return load_data(str(DATA / "a9a"))


def random_csr(n, d, density, seed):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr",
                  data_rvs=lambda k: rng.standard_normal(k))
    X.sort_indices()
    return X


def np_objective(loss, w, X, y, cost):
    z = y * (X @ w)
    if loss == "l2":
        return 0.5 * w @ w + float(cost @ np.maximum(0.0, 1.0 - z) ** 2)
    return 0.5 * w @ w + float(cost @ np.logaddexp(0.0, -z))


def liblinear_w(X, y, args):
    m = liblinear.train(liblinear.problem(y, X), liblinear.parameter(args + " -q"))
    n = X.shape[1] + (1 if m.bias >= 0 else 0)
    w = np.array([m.w[i] for i in range(n)])
    return w if int(m.label[0]) == 1 else -w


# ---- the oracle ---------------------------------------------------------------------------------

@pytest.mark.parametrize("threads,blocks", [(1, 1), (1, 4), (2, 3), (3, 8)])
def test_oracle_products_match_scipy(threads, blocks):
    X = random_csr(500, 40, 0.2, 0)
    orc = LocalOracle(X.indptr, X.indices, X.data, 40, threads=threads, n_blocks=blocks)
    assert orc.n_blocks == blocks and orc.threads == min(threads, blocks)
    rng = np.random.default_rng(1)
    w = rng.standard_normal(40)
    v = rng.standard_normal(500)
    np.testing.assert_allclose(orc.matvec(w), X @ w, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(orc.rmatvec(v), X.T @ v, rtol=1e-13, atol=1e-12)


def check_balanced(indptr, bounds, n_blocks):
    """``bounds`` cut the rows into ``n_blocks`` contiguous blocks covering every row once, each
    holding total/n_blocks stored values give or take less than the largest row: a block ends
    at the first row boundary at or past its share (a row is never split)."""
    n = len(indptr) - 1
    assert len(bounds) == n_blocks + 1 and bounds[0] == 0 and bounds[-1] == n
    assert np.all(np.diff(bounds) >= 0)
    per_block = np.diff(indptr[bounds])
    largest_row = int(np.max(np.diff(indptr)))
    share = (indptr[-1] - indptr[0]) / n_blocks
    assert np.all(np.abs(per_block - share) < largest_row), (per_block, share, largest_row)


def _ramp_rows(n=3000, seed=0):
    """Row lengths growing from 0 to 23 (empty rows at the start), shuffled within tens: an
    equal split of the rows is far from an equal split of the values."""
    lengths = (np.arange(n) * 24) // n
    rng = np.random.default_rng(seed)
    for s in range(0, n, 10):
        rng.shuffle(lengths[s:s + 10])
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


@pytest.mark.parametrize("n_blocks", [1, 2, 3, 4, 7, 8, 64])
def test_split_rows_balances_nnz_and_covers_all_rows(n_blocks):
    indptr = _ramp_rows()
    check_balanced(indptr, split_rows(indptr, n_blocks), n_blocks)
    # an offset indptr (a slice of a larger matrix) splits the same way
    check_balanced(indptr + 1000, split_rows(indptr + 1000, n_blocks), n_blocks)
    rng = np.random.default_rng(n_blocks)
    lumpy = np.concatenate([[0], np.cumsum(rng.integers(0, 60, 500))]).astype(np.int64)
    check_balanced(lumpy, split_rows(lumpy, n_blocks), n_blocks)


def test_the_balance_check_refuses_bad_splits():
    """The data above tell a bad split apart: all rows in the last block (the [0, 0, 0, n] that
    the old test let through) and equal row counts both fail the check."""
    indptr = _ramp_rows()
    n = len(indptr) - 1
    for bad in ([0, 0, 0, n], [0, n // 3, 2 * n // 3, n]):
        with pytest.raises(AssertionError):
            check_balanced(indptr, np.array(bad), 3)


def test_oracle_single_thread_sums_in_storage_order():
    """One block: X'v summed row after row, exactly as a plain serial loop does."""
    X = random_csr(300, 10, 0.5, 2)
    v = np.random.default_rng(3).standard_normal(300)
    orc = LocalOracle(X.indptr, X.indices, X.data, 10, threads=1)
    ref = np.zeros(10)
    for i in range(300):
        for k in range(X.indptr[i], X.indptr[i + 1]):
            ref[X.indices[k]] += v[i] * X.data[k]
    assert np.array_equal(orc.rmatvec(v), ref)


# ---- objectives: gradient and Hessian-vector products against finite differences ------------

@pytest.mark.parametrize("loss", ["lr", "l2"])
def test_gradient_matches_finite_differences(loss):
    X = random_csr(200, 15, 0.3, 4)
    rng = np.random.default_rng(5)
    y = np.where(rng.random(200) < 0.4, 1.0, -1.0)
    cost = np.where(y > 0, 2.0, 0.5)
    obj = make_objective(loss, LocalOracle(X.indptr, X.indices, X.data, 15, threads=2,
                                           min_block_nnz=1), y, cost)
    w = 0.3 * rng.standard_normal(15)
    g = obj.gradient_at(w)
    h = 1e-6
    fd = np.array([(np_objective(loss, w + h * e, X, y, cost)
                    - np_objective(loss, w - h * e, X, y, cost)) / (2 * h) for e in np.eye(15)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
    assert obj.value_at(w) == pytest.approx(np_objective(loss, w, X, y, cost), rel=1e-13)


@pytest.mark.parametrize("loss", ["lr", "l2"])
def test_hessian_vector_product_matches_finite_differences(loss):
    X = random_csr(200, 15, 0.3, 6)
    rng = np.random.default_rng(7)
    y = np.where(rng.random(200) < 0.5, 1.0, -1.0)
    cost = np.full(200, 1.5)
    obj = make_objective(loss, LocalOracle(X.indptr, X.indices, X.data, 15, threads=2,
                                           min_block_nnz=1), y, cost)
    w = 0.3 * rng.standard_normal(15)
    margins = y * (X @ w)
    assert np.min(np.abs(1.0 - margins)) > 1e-4      # no row switches side within +-h
    v = rng.standard_normal(15)
    hv = obj.hess_vec_at(w, v)
    h = 1e-7
    fd = (obj.gradient_at(w + h * v) - obj.gradient_at(w - h * v)) / (2 * h)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-5)
    # the preconditioner is the Hessian's diagonal
    obj.start(w)
    _, M = obj.grad()
    diag = np.array([obj.hess_vec(e)[j] for j, e in enumerate(np.eye(15))])
    np.testing.assert_allclose(M, diag, rtol=1e-12)


# ---- against liblinear-official ---------------------------------------------------------------

@pytest.mark.parametrize("s,solver,loss", [(2, "newton", "l2"), (0, "lr", "lr")])
@pytest.mark.parametrize("opts", ["", "-B 1 -w1 3 -w-1 0.5"])
def test_objective_matches_liblinear_heart_scale(heart, s, solver, loss, opts):
    bias = 1.0 if "-B" in opts else -1.0
    weights = ((1.0, 3.0), (-1.0, 0.5)) if "-w" in opts else ()
    model = api.train(heart, solver=solver, C=2.0, eps=1e-8, bias=bias, weights=weights)
    X = heart.X
    Xb = sp.hstack([X, np.ones((X.shape[0], 1))]).tocsr() if bias >= 0 else X
    wl = liblinear_w(X, heart.y, f"-s {s} -c 2 -e 1e-8 {opts}")
    y = np.where(heart.y > 0, 1.0, -1.0)
    cost = np.where(y > 0, 2.0 * (3.0 if weights else 1.0), 2.0 * (0.5 if weights else 1.0))
    ours = model.w[:, 0] * (1 if model.labels[0] == 1 else -1)
    f_ours = np_objective(loss, ours, Xb, y, cost)
    f_lib = np_objective(loss, wl, Xb, y, cost)
    assert abs(f_ours - f_lib) <= 1e-9 * f_lib
    np.testing.assert_allclose(ours, wl, atol=1e-6)
    assert model.report["classes"][0]["primal"] == pytest.approx(f_ours, rel=1e-10)


@pytest.mark.parametrize("s,solver,loss", [(2, "newton", "l2"), (0, "lr", "lr")])
def test_objective_and_accuracy_match_liblinear_a9a(a9a, s, solver, loss):
    X, y = a9a.X, np.where(a9a.y > 0, 1.0, -1.0)
    # tight tolerance: same objective
    wl = liblinear_w(X, a9a.y, f"-s {s} -c 1 -e 1e-5")
    res = newton.fit(a9a.indptr, a9a.indices, a9a.data, y, a9a.n_features, 1.0, 1.0,
                     TrainParams(eps=1e-5), loss=loss)
    f_lib = np_objective(loss, wl, X, y, np.ones(len(y)))
    assert abs(res.primal - f_lib) <= 1e-6 * f_lib
    assert res.converged and res.extra["cg_steps"] >= res.iterations > 0
    # default tolerance: same predictions on the test file (within 0.2 points)
    test = load_data(str(DATA / "a9a.t"))
    model = api.train(a9a, solver=solver)
    acc = np.mean(api.predict(model, test)[0] == test.y)
    wd = liblinear_w(X, a9a.y, f"-s {s} -c 1")
    Xt = test.X
    acc_lib = np.mean(np.where(Xt @ wd[:Xt.shape[1]] > 0, 1.0, -1.0) == test.y)
    assert abs(acc - acc_lib) <= 0.002


def test_multiclass_one_vs_rest_matches_liblinear():
    X = random_csr(600, 30, 0.2, 8)
    rng = np.random.default_rng(9)
    y = rng.integers(1, 4, 600).astype(float)
    prob = Problem.from_matrix(X, y)
    for s, solver, loss in [(2, "newton", "l2"), (0, "lr", "lr")]:
        model = api.train(prob, solver=solver, C=0.5, eps=1e-8)
        m = liblinear.train(liblinear.problem(y, X), liblinear.parameter(f"-s {s} -c 0.5 "
                                                                         f"-e 1e-8 -q"))
        labels = [int(m.label[i]) for i in range(3)]
        assert labels == [int(v) for v in model.labels]
        W = np.array([m.w[i] for i in range(30 * 3)]).reshape(30, 3)
        np.testing.assert_allclose(model.w, W, atol=1e-6)


# ---- threads, warm start, fallback ------------------------------------------------------------

def test_thread_count_does_not_change_the_model(a9a):
    """Row blocks are fixed by the data, so any thread count gives the same bits (the brief
    asks for <= 1e-10 relative; this is stronger)."""
    y = np.where(a9a.y > 0, 1.0, -1.0)
    ws = {}
    for t in (1, 2, 3):
        res = newton.fit(a9a.indptr, a9a.indices, a9a.data, y, a9a.n_features, 1.0, 1.0,
                         TrainParams(eps=1e-4, threads=t), loss="lr")
        assert res.extra["threads"] == t and res.extra["blocks"] == 8
        ws[t] = res.w
    for t in (2, 3):
        assert np.linalg.norm(ws[t] - ws[1]) <= 1e-10 * np.linalg.norm(ws[1])
        assert np.array_equal(ws[t], ws[1])


@pytest.mark.parametrize("loss", ["lr", "l2"])
def test_warm_start_from_nearby_point_takes_fewer_iterations(heart, loss):
    y = np.where(heart.y > 0, 1.0, -1.0)
    args = (heart.indptr, heart.indices, heart.data, y, heart.n_features)
    cold = newton.fit(*args, 1.0, 1.0, TrainParams(eps=1e-6), loss=loss)
    near = newton.fit(*args, 1.2, 1.2, TrainParams(eps=1e-6), loss=loss)
    warm = newton.fit(*args, 1.0, 1.0, TrainParams(eps=1e-6), init_w=near.w, loss=loss)
    assert warm.iterations < cold.iterations
    assert warm.primal == pytest.approx(cold.primal, rel=1e-9)
    done = newton.fit(*args, 1.0, 1.0, TrainParams(eps=1e-6), init_w=cold.w, loss=loss)
    assert done.iterations == 0 and np.array_equal(done.w, cold.w)


def test_dual_iteration_cap_switches_to_newton(a9a):
    """-s 1 stopped after 5 passes goes on with -s 2 (eps * 0.1) and says so in the report."""
    model = api.train(a9a, solver="dcd-l2", max_iter=5)
    rep = model.report["classes"][0]
    assert "switched to the primal Newton solver" in rep["notice"]
    assert rep["converged"] and model.solver_type == "L2R_L2LOSS_SVC_DUAL"
    X, y = a9a.X, np.where(a9a.y > 0, 1.0, -1.0)
    wl = liblinear_w(X, a9a.y, "-s 2 -c 1 -e 1e-6")
    f_lib = np_objective("l2", wl, X, y, np.ones(len(y)))
    f = np_objective("l2", model.w[:, 0], X, y, np.ones(len(y)))
    assert abs(f - f_lib) <= 1e-3 * f_lib


# ---- probabilities ------------------------------------------------------------------------------

def test_probabilities_sum_to_one_and_match_liblinear(heart, tmp_path):
    model = api.train(heart, solver="lr", C=1.0)
    p = model.predict_proba(heart)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-15)
    assert np.array_equal(model.labels[np.argmax(p, axis=1)], api.predict(model, heart)[0])
    mpath = tmp_path / "heart.model"
    api.save_model(model, str(mpath))
    m = liblinear.load_model(str(mpath))
    y, x = liblinear.svm_read_problem(str(DATA / "heart_scale"))
    _, _, pv = liblinear.predict(y, x, m, "-b 1 -q")
    np.testing.assert_allclose(p, np.array(pv), rtol=1e-12, atol=1e-15)


def test_cli_s0_and_predict_b1_end_to_end(tmp_path):
    mpath, out = tmp_path / "m", tmp_path / "out"
    r = run_cli("train", "-s", "0", "-c", "4", str(DATA / "heart_scale"), mpath)
    assert r.returncode == 0, r.stderr
    assert b"CG steps" in r.stderr
    assert mpath.read_text().startswith("solver_type L2R_LR\n")
    r = run_cli("predict", "-b", "1", str(DATA / "heart_scale"), mpath, out)
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "labels 1 -1"
    rows = np.array([[float(t) for t in ln.split()] for ln in lines[1:]])
    m = liblinear.train(*liblinear.svm_read_problem(str(DATA / "heart_scale")),
                        "-s 0 -c 4 -q")
    y, x = liblinear.svm_read_problem(str(DATA / "heart_scale"))
    lab, _, pv = liblinear.predict(y, x, m, "-b 1 -q")
    np.testing.assert_allclose(rows[:, 1:], np.array(pv), atol=1e-6)
    assert np.mean(rows[:, 0] == np.array(lab)) >= 0.99


def test_registry_names():
    assert get_spec("2").name == "newton" and get_spec("0").name == "lr"
    assert get_spec("newton").liblinear_type == "L2R_L2LOSS_SVC"
    assert get_spec("lr").liblinear_type == "L2R_LR"

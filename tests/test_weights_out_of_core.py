"""Instance weights out of core: the block minimisation of the dual (-s 1, -s 3 with
--out-of-core), the Newton solvers (-s 2, -s 0, -s 11) and the cutting planes (cp, ocas, gca2,
tca) over a weighted binary cache.

Truths: the weighted objective 0.5 |w|^2 + sum_i C W_i loss_i computed here with numpy from the
model's w; the in-memory weighted run (itself checked against LIBLINEAR-weights elsewhere) and
the unweighted in-memory run on the rows repeated W_i times (integer weights) reach the same
optimum, so the out-of-core run must reach it too (1e-6 relative at a tight -e; the cutting
planes 1e-5).  Ranking, which takes no weights, refuses in one line (exit 2, no model).
"""

import numpy as np
import pytest

from conftest import DATA, run_cli
from svmtool import api
from svmtool.io.cache import save_cache
from svmtool.io.svmlight import load_data, load_svmlight

C = 0.5


@pytest.fixture(scope="module")
def weighted(tmp_path_factory):
    """heart_scale four times over (other row orders: several blocks), integer weights 0..3,
    as an in-memory problem and as a memory-mapped cache."""
    one = load_svmlight(str(DATA / "heart_scale"))
    rng = np.random.default_rng(5)
    prob = one.take_rows(np.concatenate([rng.permutation(one.n_rows) for _ in range(4)]))
    prob.weights = rng.choice([0.0, 1.0, 2.0, 3.0], prob.n_rows)
    path = tmp_path_factory.mktemp("wooc") / "w.cache"
    save_cache(prob, str(path))
    return prob, load_data(str(path)), str(path)


def objective(prob, model, loss, weights):
    """0.5 |w|^2 + C sum_i W_i loss_i of a binary model (bias column 1), by numpy."""
    X = np.hstack([prob.X.toarray(), np.ones((prob.n_rows, 1))])
    w = model.w[:, 0] * (1.0 if model.labels[0] == 1 else -1.0)
    y = np.where(prob.y == 1, 1.0, -1.0)
    z = y * (X @ w)
    if loss == "lr":
        return 0.5 * w @ w + C * np.sum(weights * np.logaddexp(0.0, -z))
    m = np.maximum(0.0, 1.0 - z)
    return 0.5 * w @ w + C * np.sum(weights * (m * m if loss == "l2" else m))


def train(prob, solver, **more):
    return api.train(prob, solver=solver, C=C, bias=1.0, eps=1e-6, max_iter=20000, **more)


@pytest.mark.parametrize("solver,loss", [("dcd-l1", "l1"), ("dcd-l2", "l2")])
def test_out_of_core_reaches_the_weighted_optimum(weighted, solver, loss):
    prob, mapped, _ = weighted
    W = prob.weights
    assert mapped.weights is not None and np.array_equal(mapped.weights, W)
    ooc = train(mapped, solver, out_of_core=True, memory_budget=0.05)
    rep = ooc.report["classes"][0]
    assert ooc.report["streaming"] == "blocks" and rep["blocks"] >= 3, rep
    assert rep["converged"], rep
    mem = train(prob, solver)
    repeated = prob.take_rows(np.repeat(np.arange(prob.n_rows), W.astype(int)))
    repeated.weights = None
    rep_model = train(repeated, solver)
    f_ooc = objective(prob, ooc, loss, W)
    f_mem = objective(prob, mem, loss, W)
    f_rep = objective(prob, rep_model, loss, W)
    assert abs(f_ooc - f_mem) <= 1e-6 * f_mem, (f_ooc, f_mem)
    assert abs(f_ooc - f_rep) <= 1e-6 * f_rep, (f_ooc, f_rep)
    # the solver's own primal is this objective; its dual a lower bound of it
    assert abs(rep["primal"] - f_ooc) <= 1e-9 * f_ooc
    assert rep["dual"] <= f_mem * (1 + 1e-12)
    # (rows of weight 0 are absent from the repeated problem: they took no part.)  Without
    # the weights the optimum is another one
    plain = mapped.take_rows(np.arange(mapped.n_rows))
    plain.weights = None
    unweighted = train(plain, solver)
    assert abs(objective(prob, unweighted, loss, W) - f_mem) > 1e-3 * f_mem


@pytest.mark.parametrize("solver,loss", [("newton", "l2"), ("lr", "lr")])
def test_newton_out_of_core_reaches_the_weighted_optimum(weighted, solver, loss):
    """The Newton runs: out of core, in memory and on the repeated rows, the same optimum; the
    unweighted one another."""
    prob, mapped, _ = weighted
    W = prob.weights
    ooc = train(mapped, solver, out_of_core=True, memory_budget=0.05)
    rep = ooc.report["classes"][0]
    assert ooc.report["streaming"] == "blocks" and rep["blocks"] >= 3 and rep["converged"], rep
    repeated = prob.take_rows(np.repeat(np.arange(prob.n_rows), W.astype(int)))
    repeated.weights = None
    f = [objective(prob, m, loss, W) for m in (ooc, train(prob, solver), train(repeated, solver))]
    assert abs(f[0] - f[1]) <= 1e-6 * f[1] and abs(f[0] - f[2]) <= 1e-6 * f[2], f
    np.testing.assert_allclose(ooc.w, train(prob, solver).w, rtol=1e-5, atol=1e-7)
    plain = mapped.take_rows(np.arange(mapped.n_rows))
    plain.weights = None
    assert abs(objective(prob, train(plain, solver), loss, W) - f[1]) > 1e-3 * f[1]


def test_weights_of_one_change_nothing(weighted, tmp_path):
    """A cache whose weights are all 1 trains out of core to the same model bytes as one
    without weights (the same costs, rows and random draws; -s 1 at its iteration cap goes on
    with the Newton solver in both)."""
    prob, _, _ = weighted
    for name, wts in (("p", None), ("o", np.ones(prob.n_rows))):
        sub = prob.take_rows(np.arange(prob.n_rows))
        sub.weights = wts
        save_cache(sub, str(tmp_path / f"{name}.cache"))
    for s in ("3", "1", "2", "0"):
        for name in ("p", "o"):
            r = run_cli("train", "-s", s, "-B", "1", "--out-of-core", "--memory-budget",
                        "0.05", tmp_path / f"{name}.cache", tmp_path / f"{name}.model", "-q")
            assert r.returncode == 0, r.stderr
        assert (tmp_path / "p.model").read_bytes() == (tmp_path / "o.model").read_bytes(), s


@pytest.mark.parametrize("solver,eps", [("ocas", 1e-9), ("gca2", 1e-9), ("tca", 1e-9),
                                        ("cp", 1e-7)])
def test_cutting_plane_out_of_core_reaches_the_weighted_optimum(weighted, solver, eps):
    """cp and OCAS over the blocks with the rows' costs C W_i (rows of weight 0 kept in the
    passes at cost 0): the optimum of the weighted hinge problem, as in memory (where those
    rows are left out) and on the rows repeated; the unweighted optimum is another one."""
    prob, mapped, _ = weighted
    W = prob.weights
    run = dict(C=C, bias=1.0, eps=eps, max_iter=100000)
    ooc = api.train(mapped, solver=solver, out_of_core=True, memory_budget=0.05, **run)
    rep = ooc.report["classes"][0]
    assert ooc.report["streaming"] == "blocks" and rep["blocks"] >= 3 and rep["converged"], rep
    repeated = prob.take_rows(np.repeat(np.arange(prob.n_rows), W.astype(int)))
    repeated.weights = None
    f = [objective(prob, m, "l1", W) for m in
         (ooc, api.train(prob, solver=solver, **run), api.train(repeated, solver=solver, **run))]
    assert max(f) - min(f) <= 1e-5 * min(f), f
    # the solver's own primal is this objective (the weighted risk, summed over the blocks)
    assert abs(rep["primal"] - f[0]) <= 1e-9 * f[0], (rep["primal"], f[0])
    plain = mapped.take_rows(np.arange(mapped.n_rows))
    plain.weights = None
    assert objective(prob, api.train(plain, solver=solver, **run), "l1", W) > f[1] * (1 + 1e-3)


def test_svr_out_of_core_reaches_the_weighted_optimum(weighted, tmp_path):
    """-s 11 (L2-loss SVR, Newton) over the blocks: 0.5 |w|^2 + C sum_i W_i max(0, |w'x_i -
    y_i| - p)^2 as in memory and on the repeated rows."""
    prob = weighted[0]
    W = prob.weights
    # a real-valued target from the features, so that the regression has something to fit
    X = np.hstack([prob.X.toarray(), np.ones((prob.n_rows, 1))])
    target = X[:, :4].sum(axis=1) + np.where(prob.y == 1, 0.5, -0.5)
    reg = prob.take_rows(np.arange(prob.n_rows))
    reg.y, reg.weights = target, W
    save_cache(reg, str(tmp_path / "reg.cache"))
    reg_mapped = load_data(str(tmp_path / "reg.cache"))
    from svmtool.params import SvrParams

    run = dict(C=C, bias=1.0, eps=1e-8, svr=SvrParams(p=0.1))
    ooc = api.train(reg_mapped, solver="svr-l2", out_of_core=True, memory_budget=0.05, **run)
    assert ooc.report.get("streaming") == "blocks", ooc.report
    repeated = reg.take_rows(np.repeat(np.arange(reg.n_rows), W.astype(int)))
    repeated.weights = None

    def f(model):
        w = model.w.reshape(-1)
        m = np.maximum(0.0, np.abs(X @ w - target) - 0.1)
        return 0.5 * w @ w + C * np.sum(W * m * m)

    vals = [f(m) for m in (ooc, api.train(reg, solver="svr-l2", **run),
                           api.train(repeated, solver="svr-l2", **run))]
    assert max(vals) - min(vals) <= 1e-7 * min(vals), vals
    reg.weights = None
    assert f(api.train(reg, solver="svr-l2", **run)) > vals[1] * (1 + 1e-3)


def test_every_out_of_core_fit_takes_weights(weighted, tmp_path):
    """The command line on the weighted cache: every solver with an out-of-core fit trains
    there (exit 0, a model); ranking, which takes no instance weights at all, refuses in one
    line naming itself (exit 2, no model)."""
    from svmtool.solvers import specs

    _, _, path = weighted
    names = [s.name for s in specs() if s.out_of_core]
    assert {"dcd-l1", "dcd-l2", "newton", "lr", "svr-l2", "cp", "ocas"} <= set(names)
    for spec in specs():
        if spec.out_of_core and spec.kind != "ranking":
            assert spec.takes_weights("blocks"), spec.name
    r = run_cli("train", "-s", "ocas", "--out-of-core", "--memory-budget", "0.05", path,
                tmp_path / "m", "-q")
    assert r.returncode == 0 and (tmp_path / "m").exists(), r.stderr
    r = run_cli("train", "-s", "ordinal", "--out-of-core", path, tmp_path / "r", "-q")
    assert r.returncode == 2 and r.stdout == b"" and not (tmp_path / "r").exists()
    assert r.stderr.decode().count("\n") == 1 and "solver ordinal" in r.stderr.decode()


@pytest.mark.parametrize("solver,loss", [("dcd-l1", "l1"), ("newton", "l2")])
def test_shard_index_carries_the_weights(weighted, tmp_path, solver, loss):
    """A weighted cache split into shards trains out of core to the same optimum (the shards'
    weights read one after another, as their rows)."""
    from svmtool.io.shards import load_shards, write_shards

    prob, mapped, path = weighted
    write_shards(path, str(tmp_path / "w.shards"), 3)
    sharded = load_shards(str(tmp_path / "w.shards"))
    assert np.array_equal(sharded.weights, prob.weights)
    models = [train(p, solver, out_of_core=True, memory_budget=0.05) for p in (sharded, mapped)]
    assert all(m.report["streaming"] == "blocks" for m in models)
    f = [objective(prob, m, loss, prob.weights) for m in models]
    assert abs(f[0] - f[1]) <= 1e-6 * f[1], f

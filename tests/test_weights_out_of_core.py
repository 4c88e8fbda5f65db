"""Instance weights out of core: the block minimisation of the dual (-s 1, -s 3 with
--out-of-core) over a weighted binary cache.

Truths: the weighted objective 0.5 |w|^2 + sum_i C W_i loss_i computed here with numpy from the
model's w; the in-memory weighted run (itself checked against LIBLINEAR-weights elsewhere) and
the unweighted in-memory run on the rows repeated W_i times (integer weights) reach the same
optimum, so the out-of-core run must reach it too (1e-6 relative at a tight -e).  Paths that do
not carry weights yet refuse in one line (exit 2, no model).
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
    m = np.maximum(0.0, 1.0 - y * (X @ w))
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


def test_weights_of_one_change_nothing(weighted, tmp_path):
    """A cache whose weights are all 1 trains out of core to the same model bytes as one
    without weights (the same costs, rows and random draws)."""
    prob, _, _ = weighted
    for name, wts in (("p", None), ("o", np.ones(prob.n_rows))):
        sub = prob.take_rows(np.arange(prob.n_rows))
        sub.weights = wts
        save_cache(sub, str(tmp_path / f"{name}.cache"))
    for name in ("p", "o"):
        r = run_cli("train", "-s", "3", "-B", "1", "--out-of-core", "--memory-budget", "0.05",
                    tmp_path / f"{name}.cache", tmp_path / f"{name}.model", "-q")
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "p.model").read_bytes() == (tmp_path / "o.model").read_bytes()
    # -s 1 within its iteration cap (at the cap the unweighted run goes on with the Newton
    # solver, which takes no weights out of core)
    w = [api.train(load_data(str(tmp_path / f"{name}.cache")), solver="dcd-l2", bias=1.0,
                   out_of_core=True, memory_budget=0.05, max_iter=20000).w for name in "po"]
    assert w[0].tobytes() == w[1].tobytes()


def test_paths_without_weights_refuse(weighted, tmp_path):
    _, _, path = weighted
    runs = {("-s", "2", "--out-of-core"): "out-of-core training with solver newton",
            ("-s", "cp", "--out-of-core"): "out-of-core training with solver cp",
            ("-s", "2", "--dask", "local:1"): "dask training"}
    for args, what in runs.items():
        r = run_cli("train", *args, path, tmp_path / "m", "-q")
        assert r.returncode == 2 and r.stdout == b"", (args, r.stderr)
        assert r.stderr.decode() == (f"svmtool: error: {what} does not take instance weights "
                                     f"yet (cost: tokens or -W)\n"), r.stderr
        assert not (tmp_path / "m").exists()

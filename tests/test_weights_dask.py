"""Instance weights on a dask.distributed cluster (--dask): the Newton solvers and the cutting
planes over shards whose workers read the rows' weights from their own memory-mapped cache,
and DC-SVM, whose subproblems travel as tasks with their rows' costs.

Truths: the in-memory weighted run of the same solver (itself checked against LIBLINEAR-weights
and LIBSVM-weights elsewhere), and the weighted objective 0.5 |w|^2 + sum_i C W_i loss_i computed
here with numpy; the unweighted optimum is another one, so a run that dropped the weights fails.
"""

import numpy as np
import pytest

from conftest import DATA, local_cluster, run_cli

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed "
                                                        "(pip install 'svmtool[dask]')")

from svmtool import api  # noqa: E402
from svmtool.io.cache import save_cache  # noqa: E402
from svmtool.io.svmlight import load_data, load_svmlight  # noqa: E402

C = 1.0


@pytest.fixture(scope="module")
def cluster():
    c = local_cluster()
    yield c
    c.close()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Every 8th row of a9a with weights 0, 0.5, 1, 2.5 (a cache and a 3-shard index of it)."""
    from svmtool.io.shards import write_shards

    folder = tmp_path_factory.mktemp("wdask")
    prob = load_svmlight(str(DATA / "a9a"))
    sub = prob.take_rows(np.arange(0, prob.n_rows, 8))
    sub.weights = np.random.default_rng(8).choice([0.0, 0.5, 1.0, 2.5], sub.n_rows)
    save_cache(sub, str(folder / "w.cache"))
    write_shards(str(folder / "w.cache"), str(folder / "w.shards"), 3)
    return sub, str(folder / "w.cache"), str(folder / "w.shards")


def objective(prob, model, loss):
    X = np.hstack([prob.X.toarray(), np.ones((prob.n_rows, 1))])
    w = model.w[:, 0] * (1.0 if model.labels[0] == 1 else -1.0)
    z = np.where(prob.y == 1, 1.0, -1.0) * (X @ w)
    if loss == "lr":
        per_row = np.logaddexp(0.0, -z)
    else:
        m = np.maximum(0.0, 1.0 - z)
        per_row = m * m if loss == "l2" else m
    return 0.5 * w @ w + C * np.sum(prob.weights * per_row)


def _unweighted(path):
    plain = load_data(path).take_rows(np.arange(load_data(path).n_rows))
    plain.weights = None
    return plain


@pytest.mark.parametrize("solver,loss", [("newton", "l2"), ("lr", "lr")])
def test_newton_on_the_cluster_is_the_weighted_run(cluster, data, solver, loss):
    """The in-memory weighted run's optimum (there the rows of weight 0 are left out, on the
    workers they stay at cost 0: the iterates part by rounding, the objective agrees); the
    solver's primal is the numpy objective."""
    prob, path, _ = data
    run = dict(solver=solver, C=C, bias=1.0, eps=1e-4)
    local = api.train(prob, **run)
    dist = api.train(load_data(path), dask=cluster.scheduler_address, memory_budget=0.2, **run)
    assert dist.report["streaming"] == "dask" and dist.report["classes"][0]["shards"] == 2
    ra, rb = local.report["classes"][0], dist.report["classes"][0]
    assert abs(ra["primal"] - rb["primal"]) <= 1e-5 * ra["primal"], (ra, rb)   # at -e 1e-4
    f = objective(prob, dist, loss)
    assert abs(f - rb["primal"]) <= 1e-9 * f
    plain = api.train(_unweighted(path), **run)
    assert objective(prob, plain, loss) > f * (1 + 1e-2)


@pytest.mark.parametrize("solver", ["ocas", "cp"])
def test_cutting_plane_on_the_cluster_is_the_weighted_run(cluster, data, solver):
    """The scores stay on the workers with the rows' signed costs: the iterations and model
    of the out-of-core run (the same per-row costs, summed block by block there), whose primal
    is the numpy weighted objective, and the in-memory run's optimum within the tolerance.
    (The three line searches run the same risk tasks: test_dask.py covers gca2 and tca.)"""
    prob, path, _ = data
    run = dict(solver=solver, C=C, bias=1.0)
    dist = api.train(load_data(path), dask=cluster.scheduler_address, **run)
    blocks = api.train(load_data(path), out_of_core=True, memory_budget=0.2, **run)
    ra, rb = dist.report["classes"][0], blocks.report["classes"][0]
    assert dist.report["streaming"] == "dask" and ra["converged"], ra
    assert ra["iterations"] == rb["iterations"], (ra, rb)
    np.testing.assert_allclose(dist.w, blocks.w, rtol=1e-9, atol=1e-12)
    f = objective(prob, dist, "l1")
    assert abs(ra["primal"] - f) <= 1e-9 * f, (ra["primal"], f)
    mem = objective(prob, api.train(prob, **run), "l1")
    assert abs(f - mem) <= 0.01 * mem, (f, mem)             # each within its -e (default)
    # (measured: the unweighted optimum is 3% worse on the weighted objective)
    assert objective(prob, api.train(_unweighted(path), **run), "l1") > max(f, mem) * 1.02


def test_shard_index_on_the_cluster_carries_the_weights(cluster, data):
    """Each worker maps a shard of the index with its own weights section: the optimum of the
    weighted cache (out of core)."""
    prob, path, shards = data
    run = dict(solver="newton", C=C, bias=1.0, eps=1e-4)
    dist = api.train(load_data(shards), dask=cluster.scheduler_address, **run)
    assert dist.report["classes"][0]["shards"] == 3
    blocks = api.train(load_data(path), out_of_core=True, memory_budget=0.2, **run)
    ra, rb = dist.report["classes"][0], blocks.report["classes"][0]
    assert abs(ra["primal"] - rb["primal"]) <= 1e-5 * rb["primal"], (ra, rb)   # at -e 1e-4
    assert abs(objective(prob, dist, "l2") - ra["primal"]) <= 1e-9 * ra["primal"]


def test_dcsvm_tasks_carry_the_weights(cluster, data):
    """DC-SVM with --dask: the cluster subproblems travel with their rows' costs C W_i; the
    same model as the local weighted run, another than the unweighted one."""
    from svmtool.params import DcsvmParams, KernelParams, TrainParams

    prob = data[0].take_rows(np.arange(4000))
    p = TrainParams(solver="dcsvm", C=C, kernel=KernelParams(kernel_type=2, gamma=0.05),
                    dcsvm=DcsvmParams(levels=2, k_clusters=4))
    local = api.train(prob, p)
    dist = api.train(prob, p, dask=cluster.scheduler_address)
    assert dist.report["streaming"] == "dask"
    assert any(x.get("tasks") for x in dist.report["levels"]), dist.report["levels"]
    dv = dist.decision_function(prob)
    np.testing.assert_allclose(dv, local.decision_function(prob), rtol=1e-8, atol=1e-8)
    plain = prob.take_rows(np.arange(prob.n_rows))
    plain.weights = None
    assert np.max(np.abs(api.train(plain, p).decision_function(prob) - dv)) > 1e-2


def test_command_line_trains_a_weighted_cache_on_a_local_cluster(data, tmp_path):
    """`svmtool train -s 2 --dask local:2` on the weighted cache: exit 0 and the in-memory
    weighted model's predictions."""
    prob, path, _ = data
    r = run_cli("train", "-s", "2", "-B", "1", "--dask", "local:2", path, tmp_path / "d.model",
                "-q")
    assert r.returncode == 0, r.stderr
    r = run_cli("train", "-s", "2", "-B", "1", path, tmp_path / "m.model", "-q")
    assert r.returncode == 0, r.stderr
    from svmtool.api import load_model

    a, b = (load_model(str(tmp_path / n)) for n in ("d.model", "m.model"))
    np.testing.assert_allclose(a.w, b.w, rtol=1e-3, atol=1e-3)   # default -e 0.01
    assert np.array_equal(a.labels, b.labels)

"""The dask.distributed backend (--dask): newton, lr, cp and OCAS with the rows on a LocalCluster
of two worker processes on loopback.

Truth: the in-memory run of the same solver (tested against LIBLINEAR elsewhere); the objective
must agree to 1e-8 relative.  A worker killed (SIGKILL) mid-run must not change the model: its
shards and states are recomputed from their lineage.  A cluster that goes away mid-run, or a
scheduler that cannot be reached, ends the run with one line and no model.
"""

import os
import signal
import time

import numpy as np
import pytest

from conftest import DATA, local_cluster, run_cli

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed "
                                                        "(pip install 'svmtool[dask]')")

from svmtool import api  # noqa: E402
from svmtool.engine.dask_backend import ClusterError  # noqa: E402
from svmtool.io.cache import save_cache  # noqa: E402
from svmtool.io.svmlight import load_data, load_svmlight  # noqa: E402
from svmtool.problem import Problem  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    c = local_cluster()
    yield c
    c.close()


@pytest.fixture(scope="module")
def caches(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dask")
    prob = load_svmlight(str(DATA / "a9a"))
    sub = prob.take_rows(np.arange(0, prob.n_rows, 8))
    save_cache(sub, str(folder / "a9a.cache"))
    rng = np.random.default_rng(4)
    n, d = 600, 20
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.4)
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(n, 3)), axis=1).astype(float) + 1
    save_cache(Problem.from_matrix(X, y), str(folder / "three.cache"))
    from svmtool.io.shards import write_shards

    write_shards(str(folder / "a9a.cache"), str(folder / "a9a.shards"), 3)
    return {"a9a": str(folder / "a9a.cache"), "three": str(folder / "three.cache"),
            "shards": str(folder / "a9a.shards")}


def _same(a, b, rel=1e-8):
    for ra, rb in zip(a.report["classes"], b.report["classes"]):
        assert abs(ra["primal"] - rb["primal"]) <= rel * abs(ra["primal"]), (ra, rb)


@pytest.mark.parametrize("solver", ["newton", "lr"])
@pytest.mark.parametrize("data,bias", [("a9a", 1.0), ("a9a", -1.0), ("three", 1.0)])
def test_same_model_as_local(cluster, caches, solver, data, bias):
    prob = load_data(caches[data])
    local = api.train(prob, solver=solver, bias=bias, C=2.0)
    dist = api.train(prob, solver=solver, bias=bias, C=2.0, dask=cluster.scheduler_address,
                     memory_budget=0.2)                # several blocks on each worker
    assert dist.report["streaming"] == "dask"
    assert dist.report["classes"][0]["shards"] == 2
    _same(local, dist)
    np.testing.assert_allclose(dist.w, local.w, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("solver,eps", [("ocas", None), ("gca2", None), ("tca", None),
                                        ("cp", 0.01)])
def test_cutting_plane_same_model(cluster, caches, solver, eps):
    """cp and OCAS (all three line searches) run their drivers over scores kept on the workers:
    the same iterations as in memory."""
    prob = load_data(caches["a9a"])
    local = api.train(prob, solver=solver, bias=1.0, eps=eps)
    dist = api.train(prob, solver=solver, bias=1.0, eps=eps, dask=cluster.scheduler_address)
    ra, rb = local.report["classes"][0], dist.report["classes"][0]
    assert ra["iterations"] == rb["iterations"]
    _same(local, dist)
    np.testing.assert_allclose(dist.w, local.w, rtol=1e-9, atol=1e-12)


def _walk_reference(X, y, cost, wb, wt):
    """OCAS's exact line search done the plain way: every breakpoint of the hinge terms from
    the rows themselves, sorted and walked (numpy and Python, no kernel of svmtool)."""
    d = wt - wb
    A, B = float(d @ d), float(wb @ d)
    m = 1.0 - y * (X @ wb)
    s = y * (X @ d)
    active = (s != 0) & ((m > 0) | ((m == 0) & (s < 0)))
    g = B - float(cost[active] @ s[active])
    keep = s != 0
    t = m[keep] / s[keep]
    jump = (cost * np.abs(s))[keep][t > 0]
    t = t[t > 0]
    if g >= 0:
        return 0.0, A, B
    for k in np.argsort(t, kind="stable"):
        if -g / A <= t[k]:
            return -g / A, A, B
        g += jump[k]
        if A * t[k] + g >= 0:
            return float(t[k]), A, B
    return -g / A, A, B


@pytest.mark.parametrize("data", ["a9a", "dups"])
def test_exact_line_search_sends_few_breakpoints(cluster, caches, tmp_path, data):
    """The exact line search on the cluster selects among the breakpoints by rounds of
    per-shard histograms: with at most 8 breakpoints allowed to travel, the driver receives
    none in the histogram rounds and at most 8 at the end, and the step is the sorted walk's
    over every breakpoint computed from the rows here (and the local search's).  "dups":
    every row 30 times, so the minimiser's bucket holds ties down to a single bit pattern."""
    from svmtool.engine.dask_backend import Session
    from svmtool.engine.passes_cp import CPOracle
    from svmtool.solvers.cutting_plane.cutting_plane import HingeRisk
    from svmtool.solvers.scale_out.sharded import ShardedHingeRisk

    path = caches["a9a"]
    prob = load_data(path)
    if data == "dups":
        prob = prob.take_rows(np.repeat(np.arange(150), 30))
        path = str(tmp_path / "dups.cache")
        save_cache(prob, path)
    import scipy.sparse as sp

    X = sp.csr_matrix((prob.data, prob.indices, prob.indptr),
                      shape=(prob.n_rows, prob.n_features))
    y = np.asarray(prob.y, dtype=np.float64)
    c_pos, c_neg = 0.7, 1.3
    cost = np.where(y > 0, c_pos, c_neg)
    rng = np.random.default_rng(3)
    w_opt = api.train(prob, solver="ocas", C=1.0).w[:, 0]
    rounds = []
    with Session(cluster.scheduler_address) as session:
        shards, _ = session.shards(path, -1.0, 1 << 12)
        risk = ShardedHingeRisk(session, shards, prob.n_rows, prob.n_features, 1.0, c_pos,
                                c_neg, float(cost.sum()))
        local = HingeRisk(CPOracle(prob.indptr, prob.indices, prob.data, prob.n_features),
                          y, (c_pos, c_neg))
        for trial in range(6):
            # from near 0 toward (beyond) the optimum: the minimiser among many breakpoints
            wb = rng.normal(size=prob.n_features) * 0.01
            wt = w_opt * rng.uniform(1.0, 4.0) + rng.normal(size=prob.n_features) * 0.01
            ref, A, B = _walk_reference(X, y, cost, wb, wt)
            line = risk.line(risk.scores(wb), risk.scores(wt), A, B, 0.0)
            line.limit = 8
            mu = line.exact()
            got = line.received
            assert got[:-1] == [0] * (len(got) - 1) and max(got) <= 8, got
            rounds.append(got)
            assert mu == pytest.approx(ref, rel=1e-12, abs=1e-15)
            here = local.line(local.scores(wb), local.scores(wt), A, B, 0.0).exact()
            assert mu == pytest.approx(here, rel=1e-12, abs=1e-15)
    # several histogram rounds, then a few breakpoints (or one bit pattern) at the end
    assert max(len(r) for r in rounds) >= 3, rounds
    assert any(r[-1] > 0 for r in rounds) or data == "dups", rounds


def test_killed_worker_same_model(cluster, caches):
    """SIGKILL one worker process after the first Newton iteration: dask recomputes the lost
    shard and states on the survivors (or on the nanny's new worker) and the model is the one
    of an undisturbed run, bit for bit (every task is deterministic)."""
    prob = load_data(caches["a9a"])
    address = cluster.scheduler_address
    ref = api.train(prob, solver="newton", bias=1.0, dask=address)
    killed = []

    def kill(cls, it, info):
        if it == 1 and not killed:
            with distributed.Client(address) as c:
                pids = c.run(os.getpid)
            victim = sorted(pids.values())[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    model = api.train(prob, solver="newton", bias=1.0, dask=address, callback=kill)
    assert killed
    assert model.report["classes"][0]["iterations"] == ref.report["classes"][0]["iterations"]
    np.testing.assert_array_equal(model.w, ref.w)
    with distributed.Client(address) as c:           # the nanny has brought a worker back
        c.wait_for_workers(2, timeout=60)


def test_lost_cluster_is_one_clear_error(caches, tmp_path):
    prob = load_data(caches["a9a"])
    c = local_cluster(n_workers=1, quiet="CRITICAL")

    def stop(cls, it, info):
        if it == 1:
            c.close()

    import dask

    # the client waits distributed.comm.timeouts.connect (30 s) for a scheduler to come back
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        with pytest.raises(ClusterError, match="^dask: "):
            api.train(prob, solver="lr", bias=1.0, dask=c.scheduler_address, callback=stop)
    # the command line: one line, status 1, no model written
    r = run_cli("train", "-s", "lr", "--dask", "tcp://127.0.0.1:9", caches["a9a"],
                tmp_path / "m", env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"})
    assert r.returncode == 1
    lines = [x for x in r.stderr.decode().splitlines() if x.startswith("svmtool:")]
    assert len(lines) == 1 and "dask" in lines[0], r.stderr
    assert "Traceback" not in r.stderr.decode()
    assert not (tmp_path / "m").exists()


def test_command_line_local_cluster(caches, tmp_path):
    r = run_cli("train", "-s", "lr", "-B", "1", "--dask", "local:2", caches["a9a"],
                tmp_path / "d.model")
    assert r.returncode == 0, r.stderr
    r = run_cli("train", "-s", "lr", "-B", "1", caches["a9a"], tmp_path / "m.model")
    assert r.returncode == 0, r.stderr
    wd = np.loadtxt(str(tmp_path / "d.model"), skiprows=6)
    wm = np.loadtxt(str(tmp_path / "m.model"), skiprows=6)
    np.testing.assert_allclose(wd, wm, rtol=1e-6, atol=1e-9)
    for args, what in ((["-s", "dcd-l1"], "--dask is not available"),
                       (["-s", "lr", "--dask", "local:0"], "local:N"),
                       (["-s", "lr", "--dask", "nowhere"], "scheduler address")):
        extra = [] if "--dask" in args else ["--dask", "local:2"]
        r = run_cli("train", *args, *extra, caches["a9a"], tmp_path / "x")
        assert r.returncode == 2 and what.encode() in r.stderr, r.stderr
    r = run_cli("train", "-s", "lr", "--dask", "local:2", DATA / "heart_scale", tmp_path / "x")
    assert r.returncode == 2 and b"binary cache" in r.stderr


@pytest.mark.parametrize("solver", ["newton", "ocas"])
def test_shard_index_on_the_cluster(cluster, caches, solver):
    """A shard index as TRAIN: each shard file is mapped by one worker (3 shards on 2
    workers); the driver never builds the rows, and the model is the single cache's."""
    ref = api.train(load_data(caches["a9a"]), solver=solver, bias=1.0, C=2.0)
    sh = load_data(caches["shards"])
    dist = api.train(sh, solver=solver, bias=1.0, C=2.0, dask=cluster.scheduler_address)
    assert dist.report["streaming"] == "dask" and sh._csr is None
    assert dist.report["classes"][0]["shards"] == 3
    _same(ref, dist)


def test_predict_on_the_cluster(cluster, caches, tmp_path):
    """predict --dask: one task per piece (a cache cut into row ranges, or the shards of an
    index), OUTPUT in row order -- byte for byte the local predict's output."""
    model = tmp_path / "m"
    r = run_cli("train", "-s", "lr", "-B", "1", caches["a9a"], model)
    assert r.returncode == 0, r.stderr
    address = cluster.scheduler_address
    for test in (caches["a9a"], caches["shards"]):
        for opts in ([], ["--decision-values"], ["-b", "1"]):
            local, dist = tmp_path / "local", tmp_path / "dist"
            r = run_cli("predict", *opts, caches["a9a"], model, local)
            assert r.returncode == 0, r.stderr
            r2 = run_cli("predict", *opts, "--dask", address, "--chunk-bytes", "20000", test,
                         model, dist)
            assert r2.returncode == 0, r2.stderr
            assert dist.read_bytes() == local.read_bytes()
            assert r2.stderr == r.stderr                  # the same evaluation lines
            assert len(dist.read_bytes().splitlines()) >= 4071
    r = run_cli("predict", "--dask", address, DATA / "heart_scale", model, tmp_path / "x")
    assert r.returncode == 2 and b"binary cache" in r.stderr and not (tmp_path / "x").exists()


def _memory_manager_interval():
    import dask
    from dask.utils import parse_timedelta

    return parse_timedelta(dask.config.get("distributed.scheduler.active-memory-manager.interval"))


def _pid_if_holding_the_model(dask_worker):
    held = any(str(k).startswith("svmtool-model-") for k in dask_worker.data)
    return os.getpid() if held else 0


def test_predict_with_a_killed_worker_gives_the_same_values(cluster, caches):
    """SIGKILL a worker holding the model after the first piece has come back: dask computes
    the model and the lost pieces again on the survivor (or the nanny's new worker) and every
    row's decision value is the one of a local predict, in row order.  (A scattered model had
    no lineage: dask's memory manager keeps one copy of scattered data, and its loss cancelled
    the run.)"""
    prob = load_data(caches["a9a"])
    model = api.train(prob, solver="lr", bias=1.0)
    local = np.concatenate([v for _, _, v in api.iter_decision_values(model, caches["a9a"])])
    address = cluster.scheduler_address
    killed, parts = [], []
    for _, _, values in api.iter_decision_values(model, caches["shards"], dask=address,
                                                 chunk_bytes=20000):
        parts.append(values)
        if not killed:
            time.sleep(1.5 * _memory_manager_interval())   # it has dropped copies by now
            with distributed.Client(address) as c:
                holders = c.run(_pid_if_holding_the_model)
            victim = min(pid for pid in holders.values() if pid)
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)
    assert killed and len(parts) > 2
    np.testing.assert_array_equal(np.concatenate(parts), local)
    with distributed.Client(address) as c:           # the nanny has brought a worker back
        c.wait_for_workers(2, timeout=60)


def test_prediction_pieces_cover_the_rows(caches):
    from svmtool.engine.dask_backend import prediction_pieces
    from svmtool.io.shards import read_shard_index

    files = [s["path"] for s in read_shard_index(caches["shards"])["shards"]]
    pieces = prediction_pieces(files, 20000)
    assert len(pieces) > len(files)
    rows = 0
    for path, a, b in pieces:
        assert b > a and path in files
        rows += b - a
    assert rows == load_data(caches["a9a"]).n_rows


def test_dcsvm_levels_on_the_cluster(cluster, caches):
    """DC-SVM with --dask: every level's cluster subproblems run as tasks on the workers (the
    conquer step on the driver); the same levels and model as the local run, within the
    solver's tolerance (the workers' BLAS may add a kernel row in another order: last bits)."""
    from svmtool.params import DcsvmParams, KernelParams, TrainParams

    sub = load_data(caches["a9a"]).take_rows(np.arange(2600))
    p = TrainParams(solver="dcsvm", C=1.0, kernel=KernelParams(kernel_type=2, gamma=0.05),
                    dcsvm=DcsvmParams(levels=2, k_clusters=4))
    local = api.train(sub, p)
    dist = api.train(sub, p, dask=cluster.scheduler_address)
    assert dist.report["streaming"] == "dask"
    la, lb = local.report["levels"], dist.report["levels"]
    # the same levels as the local run (which ones run depends on the rows per cluster, see
    # solvers/dcsvm.py), and every clustered level's subproblems ran as tasks on the workers
    assert [x["level"] for x in lb] == [x["level"] for x in la] and lb[-1]["level"] == 0
    clustered = [x for x in lb if x["level"] not in ("refine", 0)]
    assert clustered and all(x["tasks"] == x["clusters"] > 1 for x in clustered)
    for a, b in zip(la, lb):
        assert a["n_sv"] == b["n_sv"] and a["steps"] == b["steps"]
        assert abs(a["objective"] - b["objective"]) <= 1e-8 * abs(a["objective"])
    np.testing.assert_allclose(dist.decision_function(sub), local.decision_function(sub),
                               rtol=1e-8, atol=1e-8)
    early = TrainParams(solver="dcsvm", C=1.0, kernel=KernelParams(kernel_type=2, gamma=0.05),
                        dcsvm=DcsvmParams(levels=2, k_clusters=4, early=True, early_level=1))
    ea, eb = api.train(sub, early), api.train(sub, early, dask=cluster.scheduler_address)
    np.testing.assert_allclose(eb.decision_function(sub), ea.decision_function(sub),
                               rtol=1e-8, atol=1e-8)

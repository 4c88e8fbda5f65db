"""Out-of-core training (--out-of-core, --memory-budget): the solvers stream row blocks of the
memory-mapped cache.

Truths: the pass-based solvers must reach the in-memory run's objective (itself tested against
LIBLINEAR / the C programs elsewhere) to 1e-8 relative -- they make the same iterations, only the
rounding of the passes differs; the block minimisation of the dual is checked by weak duality
against LIBLINEAR's optimum (liblinear-official at a tight tolerance): dual <= optimum <= primal,
with its own stopping rule met.  The memory test reads RssAnon from /proc/self/status in a child
process while it trains, and runs the same training in memory to show that the bound is one
that loading breaks.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import DATA, run_cli
from svmtool import api
from svmtool.engine.blocks import BlockOracle
from svmtool.engine.local import LocalOracle
from svmtool.io.cache import load_cache, save_cache
from svmtool.io.cache_stream import CacheWriter
from svmtool.io.svmlight import load_data, load_svmlight
from svmtool.problem import Problem, with_bias

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PASS_SOLVERS = ["newton", "lr", "cp", "ocas", "gca2", "tca"]


@pytest.fixture(scope="module")
def a9a_cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("ooc") / "a9a.cache"
    prob = load_svmlight(str(DATA / "a9a"))
    sub = prob.take_rows(np.arange(0, prob.n_rows, 4))         # 8k rows: seconds, not minutes
    save_cache(sub, str(path))
    return str(path)


def _three_class(tmp_path):
    rng = np.random.default_rng(4)
    n, d = 900, 30
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.3)
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(n, 3)), axis=1).astype(float) + 1
    path = tmp_path / "three.cache"
    save_cache(Problem.from_matrix(X, y), str(path))
    return str(path)


def test_block_passes_equal_local(a9a_cache):
    prob = load_cache(a9a_cache, mmap="r")
    for bias in (-1.0, 1.0):
        bo = BlockOracle(prob.indptr, prob.indices, prob.data, prob.n_features, bias=bias,
                         block_values=5000)
        assert bo.n_blocks > 10
        lo = LocalOracle(*with_bias(prob, bias))
        w = np.random.default_rng(0).normal(size=bo.n_features)
        v = np.random.default_rng(1).normal(size=prob.n_rows)
        assert np.array_equal(bo.matvec(w), lo.matvec(w))           # row sums: same order
        np.testing.assert_allclose(bo.rmatvec(v), lo.rmatvec(v), rtol=1e-12, atol=1e-9)
        norms = np.asarray(lo.rmatvec(np.ones(prob.n_rows)))
        assert norms.shape == (bo.n_features,)


@pytest.mark.parametrize("solver", PASS_SOLVERS)
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_pass_solvers_same_objective(a9a_cache, solver, bias):
    prob = load_data(a9a_cache)
    mem = api.train(prob, solver=solver, C=0.5, bias=bias, out_of_core=False)
    ooc = api.train(prob, solver=solver, C=0.5, bias=bias, out_of_core=True,
                    memory_budget=0.5)                         # blocks of ~5k values: ~20
    a, b = mem.report["classes"][0], ooc.report["classes"][0]
    assert ooc.report["streaming"] == "blocks" and "streaming" not in mem.report
    assert b["blocks"] > 10
    assert abs(a["primal"] - b["primal"]) <= 1e-8 * abs(a["primal"])
    assert a["iterations"] == b["iterations"]
    np.testing.assert_allclose(ooc.w, mem.w, rtol=1e-6, atol=1e-8)


def test_multiclass_one_vs_rest(tmp_path):
    path = _three_class(tmp_path)
    prob = load_data(path)
    mem = api.train(prob, solver="newton", bias=1.0)
    ooc = api.train(prob, solver="newton", bias=1.0, out_of_core=True, memory_budget=0.05)
    assert list(mem.labels) == list(ooc.labels)
    for a, b in zip(mem.report["classes"], ooc.report["classes"]):
        assert abs(a["primal"] - b["primal"]) <= 1e-8 * abs(a["primal"])


@pytest.mark.parametrize("solver,loss", [("dcd-l1", 3), ("dcd-l2", 1)])
def test_block_minimisation_certificate(tmp_path, solver, loss):
    """Its stopping rule met; w = sum alpha_i y_i x_i, alpha feasible, primal and dual
    recomputed here from w and alpha (weak duality: dual <= any primal value, LIBLINEAR's
    included) with a gap of at most 1e-3 relative; the primal within 1e-3 of LIBLINEAR's."""
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    from svmtool.params import TrainParams
    from svmtool.solvers import get_spec
    from svmtool.solvers.scale_out.out_of_core import fit

    one = load_svmlight(str(DATA / "heart_scale"))
    rng = np.random.default_rng(2)             # four copies in different row orders: 4 blocks
    prob = one.take_rows(np.concatenate([rng.permutation(one.n_rows) for _ in range(4)]))
    path = tmp_path / "heart.cache"
    save_cache(prob, str(path))
    C = 1.0
    yb = np.where(prob.y == 1, 1.0, -1.0)
    Xb = np.hstack([prob.X.toarray(), np.ones((prob.n_rows, 1))])
    mapped = load_data(str(path))
    params = TrainParams(solver=solver, C=C, bias=1.0, eps=0.001, max_iter=5000)
    res = fit(mapped.indptr, mapped.indices, mapped.data, yb, Xb.shape[1], C, C, params,
              spec=get_spec(solver), bias=1.0, budget_bytes=1000)
    assert res.extra["blocks"] >= 3
    assert res.converged and res.gap <= 0.001                  # its own stopping rule
    a = res.alpha
    assert np.all(a >= 0) and (loss == 1 or np.all(a <= C * (1 + 1e-12)))
    np.testing.assert_allclose(res.w, Xb.T @ (a * yb), rtol=1e-9, atol=1e-9)
    margin = np.maximum(0.0, 1.0 - yb * (Xb @ res.w))
    primal = 0.5 * res.w @ res.w + C * np.sum(margin ** 2 if loss == 1 else margin)
    dual = a.sum() - 0.5 * res.w @ res.w - (0.25 / C * a @ a if loss == 1 else 0.0)
    assert abs(primal - res.primal) <= 1e-9 * primal and abs(dual - res.dual) <= 1e-9 * primal
    assert 0 <= primal - dual <= 1e-3 * primal
    m = liblinear.train(prob.y.tolist(), prob.X, f"-s {loss} -c {C} -e 0.0001 -B 1 -q")
    w = np.array([m.w[j] for j in range(Xb.shape[1])]) * (1 if m.get_labels()[0] == 1 else -1)
    ll = np.maximum(0.0, 1.0 - yb * (Xb @ w))
    ll_primal = 0.5 * w @ w + C * np.sum(ll ** 2 if loss == 1 else ll)
    assert dual <= ll_primal * (1 + 1e-12)
    assert abs(primal - ll_primal) <= 1e-3 * ll_primal
    # and through the API: the same model
    model = api.train(mapped, solver=solver, C=C, bias=1.0, eps=0.001, max_iter=5000,
                      out_of_core=True, memory_budget=0.001)
    np.testing.assert_allclose(model.w[:, 0], res.w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_svr_same_objective(tmp_path, bias):
    """-s 11 (the single-model driver): the same Newton iterations out of core."""
    rng = np.random.default_rng(8)
    n, d = 3000, 40
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.3)
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    path = tmp_path / "reg.cache"
    save_cache(Problem.from_matrix(X, y), str(path))
    prob = load_data(str(path))
    mem = api.train(prob, solver="svr-l2", bias=bias, C=0.5)
    ooc = api.train(prob, solver="svr-l2", bias=bias, C=0.5, out_of_core=True,
                    memory_budget=0.5)
    a, b = mem.report["classes"][0], ooc.report["classes"][0]
    assert ooc.report["streaming"] == "blocks" and b["blocks"] > 3
    assert a["iterations"] == b["iterations"]
    assert abs(a["primal"] - b["primal"]) <= 1e-8 * abs(a["primal"])
    np.testing.assert_allclose(ooc.w, mem.w, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("with_qid", [True, False])
def test_ranking_same_objective(tmp_path, with_qid):
    """-s ordinal (the ranking driver, pairs within each qid) out of core."""
    rng = np.random.default_rng(11)
    n, d = 2000, 30
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.4)
    y = np.clip(np.round(X @ rng.normal(size=d) * 0.5 + 1 + 0.3 * rng.normal(size=n)), 0, 3)
    qid = np.sort(rng.integers(0, 40, size=n)) if with_qid else None
    path = tmp_path / "rank.cache"
    save_cache(Problem.from_matrix(X, y, qid=qid), str(path))
    prob = load_data(str(path))
    mem = api.train(prob, solver="ordinal", C=0.1)
    ooc = api.train(prob, solver="ordinal", C=0.1, out_of_core=True, memory_budget=0.5)
    a, b = mem.report["classes"][0], ooc.report["classes"][0]
    assert ooc.report["streaming"] == "blocks" and b["blocks"] > 3 and b["pairs"] == a["pairs"]
    # the pair cut is sensitive to the last bit of the scores (ties of z_i - 1 and z_j), so the
    # two runs may part after some iterations; both meet the stopping rule, and each one's
    # lower bound stays below the other's objective (weak duality): the same optimum
    for r in (a, b):
        assert r["converged"] and r["gap"] <= r["eps_absolute"]
    assert b["dual"] <= a["primal"] * (1 + 1e-12) and a["dual"] <= b["primal"] * (1 + 1e-12)
    assert abs(a["primal"] - b["primal"]) <= max(a["gap"], b["gap"])


def test_refusals_and_automatic_switch(tmp_path, a9a_cache):
    r = run_cli("train", "-s", "kernel", "--out-of-core", a9a_cache, tmp_path / "m")
    assert r.returncode == 2
    assert r.stderr.decode().count("\n") == 1 and b"--out-of-core" in r.stderr
    r = run_cli("train", "-s", "2", "--out-of-core", DATA / "heart_scale", tmp_path / "m")
    assert r.returncode == 2 and b"binary cache" in r.stderr
    r = run_cli("train", "-s", "2", "--memory-budget", "-5", a9a_cache, tmp_path / "m")
    assert r.returncode == 2 and b"--memory-budget" in r.stderr
    r = run_cli("train", "-s", "2", "--out-of-core", "-v", "3", a9a_cache)
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1
    # automatic: a budget below the cache's size switches to blocks, the model is the same
    prob = load_data(a9a_cache)
    with pytest.warns(UserWarning, match="training out of core"):
        auto = api.train(prob, solver="ocas", memory_budget=0.2)
    assert auto.report.get("streaming") == "blocks"
    big = api.train(prob, solver="ocas", memory_budget=1000)
    assert "streaming" not in big.report
    with pytest.warns(UserWarning, match="cannot train out of core"):
        api.train(prob, solver="l1r-lr", memory_budget=0.2)
    r = run_cli("train", "-s", "ocas", "-B", "1", "--memory-budget", "0.2", a9a_cache,
                tmp_path / "auto.model")
    assert r.returncode == 0, r.stderr
    r2 = run_cli("train", "-s", "ocas", "-B", "1", "--in-memory", a9a_cache,
                 tmp_path / "mem.model")
    assert r2.returncode == 0, r2.stderr
    wa = np.loadtxt(str(tmp_path / "auto.model"), skiprows=6)
    wm = np.loadtxt(str(tmp_path / "mem.model"), skiprows=6)
    np.testing.assert_allclose(wa, wm, rtol=1e-7, atol=1e-9)


_CHILD = r"""
import sys, threading, time
import numpy as np
from svmtool import api
from svmtool.io.svmlight import load_data

def anon():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
peak = [0]
stop = [False]
def sample():
    while not stop[0]:
        peak[0] = max(peak[0], anon())
        time.sleep(0.002)
path, mode, solver = sys.argv[1], sys.argv[2], sys.argv[3]
prob = load_data(path)
# one iteration of the same run first: the kernels it calls are loaded (from the kernel
# extension, or numba with its cache) before measuring, so only the training's memory counts
api.train(prob, solver=solver, bias=1.0, out_of_core=mode == "ooc", memory_budget=4,
          max_iter=1)
base = anon()
t = threading.Thread(target=sample, daemon=True)
t.start()
if mode == "ooc":
    m = api.train(prob, solver=solver, bias=1.0, out_of_core=True, memory_budget=4)
else:
    m = api.train(prob, solver=solver, bias=1.0, out_of_core=False)
stop[0] = True
t.join()
print(base, peak[0], m.report["classes"][0]["primal"])
"""


def test_rss_anon_stays_below_what_loading_needs(tmp_path):
    """200k rows x 60 values: a 140 MB cache; trained with a 4 MB budget, the anonymous memory
    grows by the per-row vectors (8 bytes a row each, about ten of them: 16 MB) but not by the
    data; the in-memory run copies the arrays (the bias column) and breaks the same bound."""
    rng = np.random.default_rng(9)
    n, per, d = 200_000, 60, 6000
    path = tmp_path / "big.cache"
    with CacheWriter(str(path)) as w:
        for a in range(0, n, 50_000):
            rows = min(50_000, n - a)
            cols = np.sort(rng.integers(0, d // per, size=(rows, per)) +
                           np.arange(per) * (d // per), axis=1).astype(np.int32)
            vals = rng.random((rows, per))
            wtrue = np.sin(np.arange(d))
            score = (vals * wtrue[cols]).sum(axis=1)
            y = np.where(score + 0.3 * rng.normal(size=rows) > 0, 1.0, -1.0)
            w.append(Problem(np.arange(rows + 1, dtype=np.int64) * per, cols.reshape(-1),
                             vals.reshape(-1), y, d))
        w.finish()
    size = os.path.getsize(path)
    assert size > 140e6
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = {}
    for mode in ("ooc", "mem"):
        r = subprocess.run([sys.executable, "-c", _CHILD, str(path), mode, "newton"], env=env,
                           capture_output=True, timeout=600)
        assert r.returncode == 0, r.stderr
        base, peak, primal = r.stdout.split()
        out[mode] = (int(peak) - int(base), float(primal))
    bound = 0.3 * size                 # per-row vectors: ~10 x 1.6 MB; the data: 140 MB
    assert out["ooc"][0] < bound, out
    assert out["mem"][0] > bound, out
    assert abs(out["ooc"][1] - out["mem"][1]) <= 1e-8 * abs(out["mem"][1])


def test_bench_scaling_out_of_core(tmp_path):
    """svmtool bench --scaling --scale-rows: caches of copies of heart_scale in different row
    orders, whole commands in memory and out of core, the same models, RssAnon reported."""
    r = run_cli("bench", str(DATA / "heart_scale"), "--scaling", "--scale-rows", "540,1080",
                "--scale-modes", "memory,out-of-core", "--solvers", "ocas", "--repeat", "1",
                "--out", tmp_path, "--tag", "t")
    assert r.returncode == 0, r.stderr
    import json

    res = json.loads((tmp_path / "t-scaling.json").read_text())[0]
    assert [(p["mode"], p["rows"]) for p in res["points"]] == [
        ("memory", 540), ("memory", 1080), ("out-of-core", 540), ("out-of-core", 1080)]
    assert all(p["time"] > 0 and p["rss_anon_mb"] > 0 and p["iterations"] > 0
               for p in res["points"])
    assert set(res["slopes"]) == {"memory", "out-of-core"}
    # the training time's slope splits into the cost per iteration and the iteration count
    for p in res["points"]:
        assert p["train_time"] > 0 and abs(p["per_iteration"] * p["iterations"] -
                                           p["train_time"]) <= 1e-9 + 1e-6 * p["train_time"]
    assert set(res["parts"]["memory"]) == {"train_time", "per_iteration", "iterations"}
    assert b"per iteration" in r.stdout and b"not a robust figure" in r.stdout
    big = load_cache(str(tmp_path / "scale-1080.cache"), verify=True)
    one = load_svmlight(str(DATA / "heart_scale"))
    assert big.n_rows == 1080 and np.sort(big.y).tolist() == sorted(one.y.tolist() * 4)
    assert b"slope of log time" in r.stdout
    # Joachims' C/n: every size is heart_scale's problem at C (270 rows: --perf-c 2.7): k copies
    # at C/k have heart_scale's objective (within the solver's tolerance)
    r = run_cli("bench", str(DATA / "heart_scale"), "--scaling", "--scale-rows", "540,1080",
                "--scale-modes", "memory", "--solvers", "ocas", "--repeat", "1",
                "--scale-c", "per-n", "--out", tmp_path, "--tag", "n")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "n-scaling.json").read_text())[0]
    assert res["c_rule"] == "per-n" and b"Joachims" in r.stdout
    one = api.train(load_svmlight(str(DATA / "heart_scale")), solver="ocas", C=1.0)
    ref = one.report["classes"][0]["primal"]
    for p in res["points"]:
        assert abs(p["primal"] - ref) <= 0.01 * ref, (p, ref)
    r = run_cli("bench", str(DATA / "heart_scale"), "--scale-rows", "540", "--out", tmp_path)
    assert r.returncode == 2 and b"--scaling" in r.stderr

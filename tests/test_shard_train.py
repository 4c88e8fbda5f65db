"""Training from a shard index (``svmtool convert --shards N``): the shards read one after
another as one problem -- in memory (copied into one problem), out of core (each shard's mapped
arrays streamed in blocks, never copied) -- and the CLI's refusal of a missing or corrupt shard.

Truth: the same solver on the single cache the shards were cut from (itself tested against
LIBLINEAR and the C programs elsewhere); the pass-based solvers must reach its objective to
1e-8 relative.  The oracle over several sources is checked against scipy's products.
"""

import numpy as np
import pytest

from conftest import DATA, run_cli
from svmtool import api
from svmtool.engine.blocks import BlockOracle
from svmtool.io.cache import load_cache, save_cache
from svmtool.io.shards import write_shards
from svmtool.io.svmlight import iter_data_chunks, load_data, load_svmlight
from svmtool.problem import Problem, with_bias


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shards")
    prob = load_svmlight(str(DATA / "a9a"))
    sub = prob.take_rows(np.arange(0, prob.n_rows, 8))
    save_cache(sub, str(folder / "a.cache"))
    write_shards(str(folder / "a.cache"), str(folder / "a.shards"), 3)
    rng = np.random.default_rng(5)
    n, d = 400, 15
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)
    qid = np.repeat(np.arange(n // 20), 20)
    y = np.round(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) + 2)
    save_cache(Problem.from_matrix(X, y, qid=qid), str(folder / "r.cache"))
    write_shards(str(folder / "r.cache"), str(folder / "r.shards"), 4)
    return folder


def _primal(model):
    return model.report["classes"][0]["primal"]


def test_sharded_problem_is_the_cache(data):
    whole = load_data(str(data / "a.cache"))
    sh = load_data(str(data / "a.shards"))
    assert type(sh).__name__ == "ShardedProblem" and len(sh.parts) == 3
    assert sh.n_rows == whole.n_rows and sh.nnz == whole.nnz
    assert sh._csr is None                     # sizes and labels without copying the rows
    assert np.array_equal(sh.y, whole.y)
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(sh, name), getattr(whole, name))
    chunks = list(iter_data_chunks(str(data / "a.shards"), chunk_rows=500))
    assert np.array_equal(np.concatenate([c.y for c in chunks]), whole.y)
    assert sum(c.nnz for c in chunks) == whole.nnz


@pytest.mark.parametrize("bias", [1.0, -1.0])
def test_oracle_over_sources_matches_scipy(data, bias):
    parts = [load_cache(str(p), mmap="r") for p in sorted(data.glob("a-*-of-*.cache"))]
    whole = load_data(str(data / "a.cache"))
    bo = BlockOracle(None, None, None, whole.n_features, bias=bias, block_values=3000,
                     sources=[(p.indptr, p.indices, p.data) for p in parts])
    assert bo.n_blocks > len(parts) and bo.direct == (bias < 0)
    import scipy.sparse as sp

    ip, ix, dv, nc = with_bias(whole, bias)
    X = sp.csr_matrix((dv, ix, ip), shape=(whole.n_rows, nc))
    rng = np.random.default_rng(0)
    w, v = rng.normal(size=nc), rng.normal(size=whole.n_rows)
    assert np.array_equal(bo.matvec(w), X @ w)          # row by row: the same sums
    np.testing.assert_allclose(bo.rmatvec(v), X.T @ v, rtol=1e-12, atol=1e-12)
    # twice, in another block order (the boundary rows of the sources are set per block)
    assert np.array_equal(bo.matvec(w), X @ w)


@pytest.mark.parametrize("solver", ["newton", "lr", "cp", "ocas"])
@pytest.mark.parametrize("bias", [1.0, -1.0])
def test_same_model_as_the_cache(data, solver, bias):
    cache = load_data(str(data / "a.cache"))
    ref = api.train(cache, solver=solver, bias=bias, C=2.0)
    sh = load_data(str(data / "a.shards"))
    ooc = api.train(sh, solver=solver, bias=bias, C=2.0, out_of_core=True, memory_budget=0.2)
    assert ooc.report["streaming"] == "blocks"
    assert sh._csr is None                     # the rows were streamed from the shards
    mem = api.train(sh, solver=solver, bias=bias, C=2.0)
    assert "streaming" not in mem.report
    for m in (ooc, mem):
        assert abs(_primal(m) - _primal(ref)) <= 1e-8 * abs(_primal(ref))


def test_block_dual_from_shards_brackets_the_optimum(data):
    """-s 3 by block minimisation over blocks of the shards (18 blocks, so no block spans two
    shards): weak duality against the cache's in-memory optimum, on both sides."""
    sh = load_data(str(data / "a.shards"))
    ref = api.train(load_data(str(data / "a.cache")), solver="dcd-l1", bias=1.0, eps=1e-6)
    m = api.train(sh, solver="dcd-l1", bias=1.0, out_of_core=True, memory_budget=0.2)
    r = m.report["classes"][0]
    assert r["blocks"] > 3 and sh._csr is None
    assert r["dual"] <= _primal(ref) * (1 + 1e-9) and _primal(ref) <= r["primal"] * (1 + 1e-9)


def test_ranking_from_shards(data):
    ref = api.train(load_data(str(data / "r.cache")), solver="ordinal", C=1.0)
    sh = load_data(str(data / "r.shards"))
    ooc = api.train(sh, solver="ordinal", C=1.0, out_of_core=True, memory_budget=0.1)
    assert sh._csr is None and ooc.report["streaming"] == "blocks"
    # the pair cuts may part by rounding (README): both runs meet the stopping rule and each
    # lower bound stays below the other's objective (weak duality: the same optimum)
    a, b = ref.report["classes"][0], ooc.report["classes"][0]
    assert b["pairs"] == a["pairs"]
    for r in (a, b):
        assert r["converged"] and r["gap"] <= r["eps_absolute"]
    assert b["dual"] <= a["primal"] * (1 + 1e-12) and a["dual"] <= b["primal"] * (1 + 1e-12)


def test_command_line_and_bad_shards(data, tmp_path):
    import shutil

    r = run_cli("train", "-s", "ocas", "--out-of-core", data / "a.shards", tmp_path / "s.model")
    assert r.returncode == 0, r.stderr
    r = run_cli("train", "-s", "ocas", data / "a.cache", tmp_path / "c.model")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "s.model").read_bytes() == (tmp_path / "c.model").read_bytes()
    bad = tmp_path / "bad"
    shutil.copytree(data, bad)
    victim = sorted(bad.glob("a-*-of-*.cache"))[1]
    raw = bytearray(victim.read_bytes())
    raw[-20] ^= 0xFF                                      # a bit flipped in the data
    victim.write_bytes(bytes(raw))
    r = run_cli("train", "-s", "ocas", bad / "a.shards", tmp_path / "x")
    err = r.stderr.decode().strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and victim.name in err[0], r.stderr
    victim.unlink()
    r = run_cli("train", "-s", "ocas", "--out-of-core", bad / "a.shards", tmp_path / "x")
    err = r.stderr.decode().strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and "missing" in err[0], r.stderr
    (bad / "cut.shards").write_text('{"format": "svmtool-shards", "shards": [')
    r = run_cli("train", bad / "cut.shards", tmp_path / "x")
    assert r.returncode == 2 and b"not a shard index" in r.stderr, r.stderr
    assert not (tmp_path / "x").exists()

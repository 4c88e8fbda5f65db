"""Streaming ``svmtool convert`` (text -> cache in memory O(one block)) and ``--shards``.

The truth for the arrays is the in-memory path (``load_svmlight`` + ``save_cache``, itself tested
against scikit-learn's reader in test_reader.py / test_cache.py): the streamed cache must be the
same bytes.  The memory bound is measured from outside the algorithm: the peak resident set
(VmHWM) of a fresh process converting two inputs of different sizes from a pipe.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from svmtool.errors import CacheFormatError
from svmtool.io.cache import load_cache, save_cache
from svmtool.io.cache_stream import CacheWriter
from svmtool.io.shards import read_shard_index, shard_bounds, write_shards
from svmtool.io.svmlight import iter_svmlight_chunks, load_svmlight
from svmtool.io.writer import dump_svmlight
from svmtool.problem import Problem

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _random_problem(n, d, per_row, seed, qid=False):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, per_row + 1, size=n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.concatenate([np.sort(rng.choice(d, size=c, replace=False)) for c in counts]
                             ).astype(np.int32)
    data = np.round(rng.normal(size=int(indptr[-1])), 6)
    y = rng.choice([-1.0, 1.0], size=n)
    q = np.repeat(np.arange(n // 10 + 1), 10)[:n].astype(np.int64) if qid else None
    return Problem(indptr, indices, data, y, d, qid=q)


def _write_text(path, prob, comments=False):
    dump_svmlight(prob, str(path))
    if comments:
        lines = open(path).read().splitlines()
        with open(path, "w") as f:
            for i, line in enumerate(lines):
                f.write(f"{line} # row {i}\n" if i % 3 else f"{line}\n")


def _cli(*args, stdin=None):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "svmtool", *map(str, args)], env=env,
                          stdin=stdin, capture_output=True, timeout=300)


@pytest.mark.parametrize("qid,comments", [(False, False), (True, False), (False, True)])
def test_streamed_cache_is_byte_identical(tmp_path, qid, comments):
    prob = _random_problem(3000, 500, 30, seed=3, qid=qid)
    text = tmp_path / "d.txt"
    _write_text(text, prob, comments)
    whole = load_svmlight(str(text), comments=comments)
    save_cache(whole, tmp_path / "mem.cache")
    chunks = list(iter_svmlight_chunks(str(text), chunk_bytes=1 << 16, comments=comments))
    assert len(chunks) > 3                     # really several blocks
    flags = ["--keep-comments"] if comments else []
    r = _cli("convert", "-q", "--block-size", "0.0625", *flags, text, tmp_path / "s.cache")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "s.cache").read_bytes() == (tmp_path / "mem.cache").read_bytes()
    # from a pipe too
    with open(text, "rb") as f:
        r = _cli("convert", "-q", "--block-size", "0.0625", *flags, "-", tmp_path / "p.cache",
                 stdin=f)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "p.cache").read_bytes() == (tmp_path / "mem.cache").read_bytes()
    back = load_cache(str(tmp_path / "p.cache"), verify=True)
    assert back.n_features == whole.n_features


def test_writer_in_process_and_bad_input_line(tmp_path):
    prob = _random_problem(500, 50, 5, seed=1)
    with CacheWriter(str(tmp_path / "w.cache")) as w:
        for a in range(0, 500, 70):
            b = min(500, a + 70)
            lo, hi = int(prob.indptr[a]), int(prob.indptr[b])
            w.append(Problem(prob.indptr[a:b + 1] - lo, prob.indices[lo:hi], prob.data[lo:hi],
                             prob.y[a:b], 50))
        facts = w.finish()
    save_cache(prob, str(tmp_path / "m.cache"))
    assert (tmp_path / "w.cache").read_bytes() == (tmp_path / "m.cache").read_bytes()
    assert facts["n_rows"] == 500 and facts["bytes"] == os.path.getsize(tmp_path / "w.cache")
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".svmtool")]   # sections gone
    # a bad line far into a streamed input: one line naming file and line, no cache left
    text = tmp_path / "bad.txt"
    _write_text(text, _random_problem(4000, 100, 20, seed=2))
    lines = open(text).read().splitlines()
    lines[3500] = "+1 5:1 3:2"
    open(text, "w").write("\n".join(lines) + "\n")
    r = _cli("convert", "--block-size", "0.0625", text, tmp_path / "bad.cache")
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.count("\n") == 1 and ":3501:" in err, err
    assert not (tmp_path / "bad.cache").exists()
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".svmtool")]


_PEAK = r"""
import sys
from svmtool.cli import run
code = run(sys.argv[1:])
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        sys.stderr.write("PEAK " + line.split()[1] + "\n")
sys.stderr.flush()
import os
os._exit(code)
"""


def _peak_kb(args, stdin_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    with open(stdin_path, "rb") as f:
        r = subprocess.run([sys.executable, "-c", _PEAK, *map(str, args)], env=env, stdin=f,
                           capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return int(r.stderr.decode().split("PEAK ")[1].split()[0])


def test_convert_memory_is_bounded(tmp_path):
    """Peak RSS of a piped convert grows far less than the input (the in-memory path would
    grow by about the arrays, ~1.5x the text)."""
    small = tmp_path / "small.txt"
    big = tmp_path / "big.txt"
    _write_text(small, _random_problem(25_000, 2000, 40, seed=5))
    _write_text(big, _random_problem(100_000, 2000, 40, seed=6))
    grow_in = os.path.getsize(big) - os.path.getsize(small)
    assert grow_in > 15e6
    args = ["convert", "-q", "--block-size", "0.5", "-"]
    _peak_kb(args + [tmp_path / "warm.cache"], small)          # numba's cache warm
    p_small = _peak_kb(args + [tmp_path / "s.cache"], small)
    p_big = _peak_kb(args + [tmp_path / "b.cache"], big)
    grow_rss = (p_big - p_small) * 1024
    assert grow_rss < 0.25 * grow_in, (p_small, p_big, grow_in)
    assert load_cache(str(tmp_path / "b.cache"), verify=True).n_rows == 100_000


def test_shards(tmp_path):
    prob = _random_problem(1000, 80, 12, seed=7, qid=True)
    text = tmp_path / "d.txt"
    _write_text(text, prob)
    r = _cli("convert", "-q", "--shards", "3", "--block-size", "0.0625", text,
             tmp_path / "d.shards")
    assert r.returncode == 0, r.stderr
    index = read_shard_index(str(tmp_path / "d.shards"))
    assert len(index["shards"]) == 3 and index["n_rows"] == 1000
    whole = load_svmlight(str(text))
    parts = [load_cache(s["path"], verify=True) for s in index["shards"]]
    for name in ("data", "indices", "y", "qid"):
        assert np.array_equal(np.concatenate([getattr(p, name) for p in parts]),
                              getattr(whole, name))
    assert all(p.n_features == whole.n_features for p in parts)
    nnz = [s["nnz"] for s in index["shards"]]
    assert max(nnz) - min(nnz) <= 2 * 12             # balanced by stored values
    # relative paths: the folder can move
    raw = json.loads((tmp_path / "d.shards").read_text())
    assert all(os.sep not in s["path"] for s in raw["shards"])
    os.unlink(index["shards"][1]["path"])
    with pytest.raises(CacheFormatError, match="missing"):
        read_shard_index(str(tmp_path / "d.shards"))
    # from a cache, in process
    save_cache(whole, str(tmp_path / "w.cache"))
    ix = write_shards(str(tmp_path / "w.cache"), str(tmp_path / "w.json"), 4)
    assert [s["rows"] for s in ix["shards"]][-1][1] == 1000
    r = _cli("convert", "--shards", "2", text, "-")
    assert r.returncode == 2 and b"--shards" in r.stderr


def test_shard_bounds_edge_cases():
    indptr = np.array([0, 5, 5, 5, 20, 21], dtype=np.int64)
    for k in range(1, 8):
        cuts = shard_bounds(indptr, k)
        assert cuts[0] == 0 and cuts[-1] == 5
        assert all(b > a for a, b in zip(cuts, cuts[1:]))
        assert len(cuts) - 1 == min(k, 5)

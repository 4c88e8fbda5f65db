"""Instance weights in the binary cache (format version 2), shards, convert, info and the
SVMlight writer's cost: tokens; old version-1 caches still read."""

import json
import struct
import zlib

import numpy as np
import pytest

from conftest import DATA, TESTDATA, run_cli
from svmtool.errors import CacheFormatError
from svmtool.io.cache import cache_info, load_cache, save_cache
from svmtool.io.cache_stream import stream_cache
from svmtool.io.shards import load_shards, write_shards
from svmtool.io.svmlight import load_data
from svmtool.io.writer import format_svmlight
from svmtool.problem import Problem


@pytest.fixture
def weighted():
    p = load_data(DATA / "heart_scale")
    rng = np.random.default_rng(3)
    p.weights = rng.choice([0.0, 0.2, 1.0, 5.0, 3.25, 1e-300, 0.1 + 0.2], p.n_rows)
    return p


def test_version1_fixture_written_before_weights_reads():
    # tests/data/cache/version1.cache: written by save_cache before the weights section existed
    raw = (TESTDATA / "cache" / "version1.cache").read_bytes()
    assert struct.unpack_from("<I", raw, 8)[0] == 1
    p = load_cache(TESTDATA / "cache" / "version1.cache", verify=True)
    assert p.weights is None
    assert p.indptr.tolist() == [0, 2, 3, 3, 5]
    assert p.indices.tolist() == [0, 3, 1, 2, 4]
    assert p.data.tolist() == [0.5, -1.25, 3.0, 1e-3, -7.0]
    assert p.y.tolist() == [1, -1, 1, -1] and p.qid.tolist() == [1, 1, 2, 2]
    assert p.comments == ["a", "", "b c", "d"]
    assert cache_info(TESTDATA / "cache" / "version1.cache")["weights"] is False


def test_unweighted_cache_is_still_version1_byte_for_byte(tmp_path):
    p = load_cache(TESTDATA / "cache" / "version1.cache")
    save_cache(p, tmp_path / "again.cache")
    assert (tmp_path / "again.cache").read_bytes() == \
        (TESTDATA / "cache" / "version1.cache").read_bytes()


@pytest.mark.parametrize("mmap", [True, "r", False])
def test_weights_round_trip(weighted, tmp_path, mmap):
    save_cache(weighted, tmp_path / "w.cache")
    info = cache_info(tmp_path / "w.cache")
    assert info["version"] == 2 and info["weights"]
    q = load_cache(tmp_path / "w.cache", mmap=mmap, verify=True)
    assert q.weights.tobytes() == weighted.weights.tobytes()
    assert q.data.tobytes() == weighted.data.tobytes() and np.array_equal(q.y, weighted.y)
    # and from bytes in memory
    q = load_cache((tmp_path / "w.cache").read_bytes())
    assert q.weights.tobytes() == weighted.weights.tobytes()


def test_streamed_cache_equals_saved(weighted, tmp_path):
    # the first chunk has no weights (its rows weigh 1), the second has them
    a, b = weighted.take_rows(np.arange(100)), weighted.take_rows(np.arange(100, 270))
    a.weights = None
    whole = weighted.take_rows(np.arange(270))
    whole.weights = np.concatenate([np.ones(100), b.weights])
    facts = stream_cache([a, b], tmp_path / "s.cache")
    save_cache(whole, tmp_path / "w.cache")
    assert (tmp_path / "s.cache").read_bytes() == (tmp_path / "w.cache").read_bytes()
    assert facts["version"] == 2 and facts["weights"]
    # no chunk with weights: a version-1 cache, identical to save_cache's
    a2 = weighted.take_rows(np.arange(270))
    a2.weights = None
    stream_cache([a2], tmp_path / "s1.cache")
    save_cache(a2, tmp_path / "w1.cache")
    assert (tmp_path / "s1.cache").read_bytes() == (tmp_path / "w1.cache").read_bytes()
    assert cache_info(tmp_path / "s1.cache")["version"] == 1


def test_writer_cost_tokens_read_back(weighted, tmp_path):
    text = format_svmlight(weighted)
    first = text.split(b"\n")[0].split(b" ")
    assert first[1].startswith(b"cost:") and b":" in first[2]
    (tmp_path / "w.txt").write_bytes(text)
    q = load_data(tmp_path / "w.txt")
    assert q.weights.tobytes() == weighted.weights.tobytes()
    assert q.data.tobytes() == weighted.data.tobytes()
    # with a qid the token comes after it, and a row without features keeps its cost
    p = Problem(np.array([0, 1, 1, 3], dtype=np.int64), np.array([2, 0, 4], dtype=np.int32),
                np.array([0.5, -1.0, 2.0]), np.array([1.0, -1.0, 2.0]), 5,
                qid=np.array([3, 3, 4], dtype=np.int64), weights=np.array([2.0, 0.25, 0.0]),
                comments=["x y", "", "z"])
    assert format_svmlight(p) == (b"1 qid:3 cost:2 3:0.5 #x y\n-1 qid:3 cost:0.25\n"
                                  b"2 qid:4 cost:0 1:-1 5:2 #z\n")
    (tmp_path / "q.txt").write_bytes(format_svmlight(p))
    q = load_data(tmp_path / "q.txt")
    assert q.weights.tolist() == [2.0, 0.25, 0.0] and q.qid.tolist() == [3, 3, 4]


def test_convert_keeps_weights_both_ways(weighted, tmp_path):
    (tmp_path / "w.txt").write_bytes(format_svmlight(weighted))
    r = run_cli("convert", tmp_path / "w.txt", tmp_path / "w.cache", "-q")
    assert r.returncode == 0, r.stderr
    assert load_cache(tmp_path / "w.cache").weights.tobytes() == weighted.weights.tobytes()
    r = run_cli("convert", tmp_path / "w.cache", tmp_path / "back.txt", "-q")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "back.txt").read_bytes() == (tmp_path / "w.txt").read_bytes()
    r = run_cli("info", tmp_path / "w.cache", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["weights"] is True
    assert d["weights_sum"] == pytest.approx(weighted.weights.sum(), rel=1e-12)
    assert d["weights_min"] == 0.0 and d["weights_max"] == 5.0


def test_shards_carry_weights(weighted, tmp_path):
    save_cache(weighted, tmp_path / "w.cache")
    index = write_shards(tmp_path / "w.cache", tmp_path / "w.shards", 3)
    assert index["weights"] is True
    s = load_shards(tmp_path / "w.shards")
    assert s.weights.tobytes() == weighted.weights.tobytes()
    # a shard replaced by one without weights: named, refused
    first = tmp_path / json.loads((tmp_path / "w.shards").read_text())["shards"][0]["path"]
    part = load_cache(first)
    part.weights = None
    save_cache(part, first)
    with pytest.raises(CacheFormatError, match="has no instance weights") as e:
        load_shards(tmp_path / "w.shards")
    assert str(first) in str(e.value)


def _rewrite_crc(raw):
    """raw with its version-2 header checksum recomputed (after a deliberate edit)."""
    raw = bytearray(raw)
    raw[172:176] = struct.pack("<I", zlib.crc32(bytes(raw[:172])))
    return bytes(raw)


def test_bad_weights_sections(weighted, tmp_path):
    save_cache(weighted, tmp_path / "w.cache", checksum=False)
    raw = (tmp_path / "w.cache").read_bytes()
    # truncated inside the weights section (the last array)
    (tmp_path / "t.cache").write_bytes(raw[:-8])
    with pytest.raises(CacheFormatError, match="truncated cache") as e:
        load_cache(tmp_path / "t.cache")
    assert str(tmp_path / "t.cache") in str(e.value)
    # a negative and a NaN weight
    for value, what in ((-1.0, "-1.0"), (float("nan"), "nan")):
        bad = bytearray(raw)
        bad[-8:] = struct.pack("<d", value)
        (tmp_path / "n.cache").write_bytes(bytes(bad))
        with pytest.raises(CacheFormatError, match=f"row 270 is {what}"):
            load_cache(tmp_path / "n.cache")
    # the weights flag on a version-1 header: unknown there
    bad = bytearray(raw)
    bad[8:12] = struct.pack("<I", 1)
    with pytest.raises(CacheFormatError):
        load_cache(_write(tmp_path / "v.cache", bytes(bad)))
    # the section's size does not match the row count
    bad = bytearray(raw)
    off, nb = struct.unpack_from("<qq", bad, 48 + 16 * 6)
    struct.pack_into("<qq", bad, 48 + 16 * 6, off, nb - 8)
    with pytest.raises(CacheFormatError, match="weights has"):
        load_cache(_write(tmp_path / "s.cache", _rewrite_crc(bad)))


def _write(path, raw):
    path.write_bytes(raw)
    return path


def test_cli_bad_weights_cache_one_line(weighted, tmp_path):
    save_cache(weighted, tmp_path / "w.cache")
    raw = (tmp_path / "w.cache").read_bytes()
    (tmp_path / "t.cache").write_bytes(raw[:-8])
    r = run_cli("convert", tmp_path / "t.cache", tmp_path / "out.txt", "-q")
    assert r.returncode == 2
    err = r.stderr.decode().strip()
    assert "\n" not in err and str(tmp_path / "t.cache") in err and "truncated" in err
    assert not (tmp_path / "out.txt").exists()


def test_svm_scale_keeps_cost_tokens(weighted, tmp_path):
    """svm-scale of a weighted file: the C program's output of the same rows without their
    cost: tokens (where installed), each line with its row's cost: token after the label."""
    import shutil
    import subprocess

    (tmp_path / "w.txt").write_bytes(format_svmlight(weighted))
    plain = weighted.take_rows(np.arange(weighted.n_rows))
    plain.weights = None
    (tmp_path / "p.txt").write_bytes(format_svmlight(plain))
    r = run_cli("svm-scale", "-l", "0", "-u", "1", tmp_path / "w.txt")
    assert r.returncode == 0, r.stderr
    ours = r.stdout.decode().splitlines()
    r0 = run_cli("svm-scale", "-l", "0", "-u", "1", tmp_path / "p.txt")
    assert r0.returncode == 0, r0.stderr
    exe = shutil.which("svm-scale")
    if exe is not None:
        ref = subprocess.run([exe, "-l", "0", "-u", "1", str(tmp_path / "p.txt")],
                             capture_output=True, check=True).stdout
        assert ref == r0.stdout
    for line, base, wt in zip(ours, r0.stdout.decode().splitlines(), weighted.weights):
        label, cost, rest = line.split(" ", 2)
        assert cost.startswith("cost:") and float(cost[5:]) == wt
        assert f"{label} {rest}" == base
    (tmp_path / "s.txt").write_bytes(r.stdout)
    assert load_data(tmp_path / "s.txt").weights.tobytes() == weighted.weights.tobytes()
    # convert --scale keeps them too
    r = run_cli("convert", "--scale", "0,1", tmp_path / "w.txt", tmp_path / "s.cache", "-q")
    assert r.returncode == 0, r.stderr
    assert load_cache(tmp_path / "s.cache").weights.tobytes() == weighted.weights.tobytes()


def test_out_of_core_and_dask_train_on_a_weighted_cache(weighted, tmp_path):
    """Out of core and on dask the cache's weights are honoured (their optima:
    tests/test_weights_out_of_core.py, tests/test_weights_dask.py): exit 0, and a model other
    than the one of the same rows without weights (never a silently unweighted model)."""
    save_cache(weighted, tmp_path / "w.cache")
    plain = weighted.take_rows(np.arange(weighted.n_rows))
    plain.weights = None
    save_cache(plain, tmp_path / "p.cache")
    for args in (["-s", "cp", "--out-of-core"], ["-s", "2", "--dask", "local:1"]):
        for name in ("w", "p"):
            r = run_cli("train", *args, tmp_path / f"{name}.cache", tmp_path / f"{name}.model",
                        "-q")
            assert r.returncode == 0 and r.stdout == b"", (args, r.stderr)
        assert (tmp_path / "w.model").read_bytes() != (tmp_path / "p.model").read_bytes(), args

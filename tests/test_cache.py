"""The binary cache: bit-identical round trips, every way of loading, clear errors, speed."""

import io
import mmap
import struct
import sys
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import DATA, run_cli
from svmtool.errors import CacheFormatError
from svmtool.io.cache import (CACHE_MAGIC, CACHE_VERSION, cache_info, is_cache, load_cache,
                              save_cache)
from svmtool.io.svmlight import load_data, load_svmlight
from svmtool.problem import Problem


@st.composite
def problems(draw):
    n_rows = draw(st.integers(0, 10))
    n_features = draw(st.integers(0, 30))
    idx_dtype = draw(st.sampled_from([np.int32, np.int64]))
    indptr = [0]
    indices, data = [], []
    for _ in range(n_rows):
        cols = sorted(draw(st.sets(st.integers(0, max(n_features - 1, 0)),
                                   max_size=n_features))) if n_features else []
        indices += cols
        data += draw(st.lists(st.floats(allow_nan=True), min_size=len(cols), max_size=len(cols)))
        indptr.append(len(indices))
    if idx_dtype == np.int64 and indices and draw(st.booleans()):
        # a really wide matrix: column indices beyond int32
        shift = 2**33
        indices = [i + shift for i in indices]
        n_features += shift
    y = draw(st.lists(st.floats(), min_size=n_rows, max_size=n_rows))
    qid = draw(st.none() | st.lists(st.integers(-2**63, 2**63 - 1), min_size=n_rows,
                                    max_size=n_rows))
    comments = draw(st.none() | st.lists(st.text(st.characters(blacklist_characters="\n",
                                                               blacklist_categories=("Cs",)),
                                                 max_size=8), min_size=n_rows, max_size=n_rows))
    return Problem(np.array(indptr, dtype=np.int64), np.array(indices, dtype=idx_dtype),
                   np.array(data, dtype=np.float64), np.array(y, dtype=np.float64), n_features,
                   qid=None if qid is None else np.array(qid, dtype=np.int64), comments=comments)


def assert_same(a, b):
    assert a.n_features == b.n_features
    assert a.indptr.dtype == np.int64 and b.indptr.tobytes() == a.indptr.tobytes()
    assert b.indices.dtype == a.indices.dtype
    assert b.indices.tobytes() == a.indices.tobytes()
    assert b.data.tobytes() == a.data.tobytes()          # bit-identical, NaN payloads included
    assert b.y.tobytes() == a.y.tobytes()
    if a.qid is None:
        assert b.qid is None
    else:
        assert b.qid.tobytes() == a.qid.tobytes()
    assert b.comments == a.comments


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_round_trip_every_way(tmp_path_factory, p):
    path = tmp_path_factory.mktemp("c") / "p.cache"
    save_cache(p, path)
    raw = path.read_bytes()
    assert is_cache(raw[:8])
    for mode in (True, "r", False):
        q = load_cache(path, mmap=mode, verify=True)
        assert_same(p, q)
    assert_same(p, load_cache(raw))
    assert_same(p, load_cache(io.BytesIO(raw[8:]), prefix=raw[:8]))
    info = cache_info(path)
    assert (info["n_rows"], info["nnz"], info["bytes"]) == (p.n_rows, p.nnz, len(raw))


def test_arrays_are_aligned_and_mmap_modes(tmp_path):
    p = load_svmlight(DATA / "heart_scale")
    path = tmp_path / "h.cache"
    save_cache(p, path)
    q = load_cache(path)                       # copy-on-write map: writable, file untouched
    for a in (q.indptr, q.indices, q.data, q.y):
        assert a.ctypes.data % 64 == 0
        assert a.flags.writeable and a.flags.c_contiguous
    before = path.read_bytes()
    q.data[:] = 0.0
    assert path.read_bytes() == before
    r = load_cache(path, mmap="r")
    assert not r.data.flags.writeable
    assert_same(p, r)


def test_load_data_recognises_a_cache(tmp_path):
    p = load_svmlight(DATA / "heart_scale")
    path = tmp_path / "no-suffix"
    save_cache(p, path)
    assert_same(p, load_data(path))


def test_save_to_stdout_and_load_from_stdin(tmp_path, monkeypatch):
    p = load_svmlight(DATA / "heart_scale")
    out = io.TextIOWrapper(io.BytesIO())
    monkeypatch.setattr(sys, "stdout", out)
    save_cache(p, "-")
    raw = out.buffer.getvalue()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    q = load_cache("-")
    assert q.data.flags.writeable
    assert_same(p, q)
    path = tmp_path / "h.cache"
    save_cache(p, path)
    assert path.read_bytes() == raw


# --- damaged and foreign files ------------------------------------------------------------------

@pytest.fixture
def cache_bytes(tmp_path):
    p = load_svmlight(DATA / "heart_scale")
    path = tmp_path / "h.cache"
    save_cache(p, path)
    return path, path.read_bytes()


def assert_cache_error(path, data, match, **kw):
    path.write_bytes(data)
    with pytest.raises(CacheFormatError, match=match) as e:
        load_cache(path, **kw)
    assert str(path) in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("cut", [0, 5, 8, 12, 100, 191, 192, 1000, -1])
def test_truncated(cache_bytes, cut):
    path, raw = cache_bytes
    short = raw[:cut] if cut >= 0 else raw[:len(raw) + cut]
    if len(short) < 8:
        match = "not an svmtool cache"
    elif len(short) < 192:
        match = "truncated cache"
    else:
        match = f"truncated cache: expected {len(raw)} bytes, found {len(short)}"
    assert_cache_error(path, short, match)


def test_flipped_magic_and_text(cache_bytes):
    path, raw = cache_bytes
    bad = bytearray(raw)
    bad[0] ^= 0xFF
    assert not is_cache(bytes(bad[:8]))
    assert_cache_error(path, bytes(bad), "not an svmtool cache")
    assert_cache_error(path, (DATA / "heart_scale").read_bytes(), "not an svmtool cache")
    # CR LF translated to LF (a file sent through a text-mode channel)
    assert_cache_error(path, raw.replace(b"\r\n", b"\n", 1), "not an svmtool cache")


def test_newer_version(cache_bytes):
    path, raw = cache_bytes
    newer = raw[:8] + struct.pack("<I", 3) + raw[12:]
    assert_cache_error(path, newer, f"cache format version 3 is newer than this svmtool "
                              f"\\(reads {CACHE_VERSION}\\)")


def test_corrupt_header_and_data(cache_bytes):
    path, raw = cache_bytes
    bad = bytearray(raw)
    bad[30] ^= 1                                   # inside n_rows
    assert_cache_error(path, bytes(bad), "header checksum")
    bad = bytearray(raw)
    bad[-3] ^= 1                                   # a label byte
    path.write_bytes(bytes(bad))
    load_cache(path)                               # not checked by default (no cost)
    assert_cache_error(path, bytes(bad), "array checksum", verify=True)
    assert_cache_error(path, raw + b"\0" * 64, "header says")


def test_corrupt_structure_with_a_valid_checksum(tmp_path):
    # a header that is self-consistent but describes impossible CSR arrays
    p = Problem(np.array([0, 2, 3]), np.array([1, 0, 0], dtype=np.int32),
                np.array([1.0, 2.0, 3.0]), np.array([1.0, -1.0]), 2)
    path = tmp_path / "p.cache"
    save_cache(p, path)
    load_cache(path)
    with pytest.raises(CacheFormatError, match="not increasing"):
        load_cache(path, verify=True)
    raw = bytearray(path.read_bytes())
    assert zlib.crc32(bytes(raw[:156])) == struct.unpack_from("<I", raw, 156)[0]


def mapped_object(arr):
    """What a numpy array's memory finally belongs to (through views and memoryviews)."""
    b = arr
    while isinstance(b, np.ndarray) and b.base is not None:
        b = b.base
    return b.obj if isinstance(b, memoryview) else b


def test_cache_load_maps_the_file_instead_of_reading_it(tmp_path):
    # what makes a cache load near memory speed: every array is a view into a memory map of the
    # file, so loading parses nothing and copies nothing (its speed against parsing is measured
    # side by side in `svmtool bench --suite io-all`, not here: timings on a shared machine are noise)
    src = DATA / "a9a"
    p = load_svmlight(src)
    path = tmp_path / "a9a.cache"
    save_cache(p, path)
    q = load_data(path)
    for arr in (q.indptr, q.indices, q.data, q.y):
        assert isinstance(mapped_object(arr), mmap.mmap)
    assert_same(p, q)
    # read into memory instead (mmap=False): plain arrays owning their memory, same values
    r = load_cache(path, mmap=False)
    assert not isinstance(mapped_object(r.data), mmap.mmap)
    assert_same(p, r)


def test_convert_cache_through_cli_pipes(tmp_path):
    # text on stdin -> cache on stdout -> cache on stdin -> text on stdout, real subprocesses
    src = DATA / "heart_scale"
    r1 = run_cli("convert", "-q", "--to", "cache", "-", "-", input=src.read_bytes())
    assert r1.returncode == 0, r1.stderr
    assert r1.stdout.startswith(CACHE_MAGIC)
    assert_same(load_svmlight(src), load_cache(r1.stdout))
    r2 = run_cli("convert", "-q", "-", "-", input=r1.stdout)
    assert r2.returncode == 0, r2.stderr
    out = tmp_path / "back.svm"
    out.write_bytes(r2.stdout)
    assert_same(load_svmlight(src), load_svmlight(out))

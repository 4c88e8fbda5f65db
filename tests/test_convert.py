"""svm-scale style scaling (against a brute-force numpy computation and hand-computed values),
range files, CSV input and the ``svmtool convert`` command (real subprocesses and in-process)."""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import DATA, load_svmlight_file, run_cli, shared_file
from svmtool.cli import run
from svmtool.errors import DataFormatError
from svmtool.io.cache import is_cache
from svmtool.io.csv import load_csv
from svmtool.io.scale import (compute_ranges, format_ranges, parse_ranges, restore_ranges,
                              save_ranges, scale)
from svmtool.io.svmlight import load_svmlight
from svmtool.io.writer import format_svmlight
from svmtool.problem import Problem


def brute_force_scale(D, lower, upper, fmin=None, fmax=None):
    """svm-scale on a dense matrix: min/max per column over every row (zeros included)."""
    D = np.asarray(D, dtype=np.float64)
    if fmin is None:
        fmin, fmax = D.min(axis=0), D.max(axis=0)
    out = np.zeros_like(D)
    for i in range(D.shape[0]):
        for j in range(D.shape[1]):
            v, lo, hi = D[i, j], fmin[j], fmax[j]
            if lo == hi:
                continue
            if v == lo:
                out[i, j] = lower
            elif v == hi:
                out[i, j] = upper
            else:
                out[i, j] = lower + (upper - lower) * (v - lo) / (hi - lo)
    return out


def quiet_scale(p, r):
    return scale(p, r, warn=lambda msg: None)


@st.composite
def dense_problems(draw):
    n_rows = draw(st.integers(1, 8))
    n_cols = draw(st.integers(1, 7))
    value = st.one_of(st.just(0.0), st.just(0.0), st.integers(-5, 5).map(float),
                      st.floats(-1e6, 1e6, allow_nan=False))
    D = np.array([[draw(value) for _ in range(n_cols)] for _ in range(n_rows)])
    y = np.array([draw(st.integers(-3, 3)) for _ in range(n_rows)], dtype=np.float64)
    return D, y


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dense_problems(), st.sampled_from([(-1.0, 1.0), (0.0, 1.0), (-3.5, 2.25)]))
def test_scale_equals_brute_force(case, bounds):
    D, y = case
    lower, upper = bounds
    p = Problem.from_matrix(D, y)
    r = compute_ranges(p, lower, upper)
    q = quiet_scale(p, r)
    expected = brute_force_scale(D, lower, upper)
    assert q.shape == D.shape
    assert q.X.toarray().tobytes() == expected.tobytes()
    assert not np.any(q.data == 0)                     # zeros are not stored
    assert np.all(np.diff(q.indptr) >= 0)
    # ranges list exactly the non-constant columns, one-based
    varying = np.flatnonzero(D.min(axis=0) != D.max(axis=0)) + 1
    np.testing.assert_array_equal(r.index, varying)
    # the range file reads back exactly
    r2 = parse_ranges(format_ranges(r))
    assert (r2.lower, r2.upper) == (lower, upper)
    np.testing.assert_array_equal(r2.index, r.index)
    assert r2.fmin.tobytes() == r.fmin.tobytes() and r2.fmax.tobytes() == r.fmax.tobytes()


def test_scale_labels_and_restore_on_other_data():
    train = np.array([[0.0, 2.0], [4.0, 0.0], [2.0, 1.0]])
    test = np.array([[8.0, 0.0], [1.0, 3.0]])
    ytr = np.array([1.0, 3.0, 2.0])
    p = Problem.from_matrix(train, ytr)
    r = compute_ranges(p, 0.0, 1.0, y_range=(-1.0, 1.0))
    assert r.y == (-1.0, 1.0, 1.0, 3.0)
    q = quiet_scale(p, r)
    np.testing.assert_array_equal(q.y, [-1.0, 1.0, 0.0])
    t = quiet_scale(Problem.from_matrix(test, np.array([2.0, 5.0])), parse_ranges(format_ranges(r)))
    # test data scaled with the training min/max: may fall outside [lower, upper]
    np.testing.assert_array_equal(t.X.toarray(), brute_force_scale(test, 0.0, 1.0,
                                                                   np.array([0.0, 0.0]),
                                                                   np.array([4.0, 2.0])))
    np.testing.assert_array_equal(t.y, [0.0, 3.0])      # -1 + 2 * (5 - 1) / (3 - 1)


def test_hand_written_svm_scale_range_file(tmp_path):
    # as svm-scale -s writes it (%.16g numbers, y block first), features 1 and 3 listed
    path = tmp_path / "range"
    path.write_text("y\n-1 1\n1 3\nx\n0 1\n1 -0.5000000000000000 2\n3 0 10\n")
    r = restore_ranges(path)
    assert (r.lower, r.upper, r.y) == (0.0, 1.0, (-1.0, 1.0, 1.0, 3.0))
    p = Problem.from_matrix(np.array([[0.75, 1.0, 5.0], [2.0, 3.0, 0.0], [0.0, 0.0, 10.0]]),
                            np.array([2.0, 1.0, 3.0]))
    warnings = []
    q = scale(p, r, warn=warnings.append)
    # by hand: f1 (v + 0.5) / 2.5; f2 is not in the file and varies: its own min 0 / max 3, as
    # svm-scale does (with a warning); f3 v / 10
    expected = np.array([[0.5, 1 / 3, 0.5], [1.0, 1.0, 0.0], [0.2, 0.0, 1.0]])
    np.testing.assert_allclose(q.X.toarray(), expected, rtol=1e-15)
    np.testing.assert_array_equal(q.y, [0.0, -1.0, 1.0])
    # svm-scale's two warnings: the unlisted feature, and the implicit zero of f1 that became 0.2
    assert len(warnings) == 2 and "feature 2 " in warnings[0]
    assert "original #nonzeros 6 < new #nonzeros 7" in warnings[1]
    # saving writes svm-scale's layout and exact numbers
    out = tmp_path / "again"
    save_ranges(r, out)
    assert out.read_text() == "y\n-1 1\n1 3\nx\n0 1\n1 -0.5 2\n3 0 10\n"


def test_bad_range_files(tmp_path):
    path = tmp_path / "r"
    for text, line, reason in [("", 1, "expected 'x'"), ("x\n1\n", 2, "lower upper"),
                               ("x\n0 1\n1 a 2\n", 3, "index min max"),
                               ("x\n1 0\n", 2, "not above"),
                               ("y\n0 1\nx\n0 1\n", 3, "y_min y_max"),
                               ("x\n0 1\n0 1 2\n", 3, "start at 1")]:
        path.write_text(text)
        with pytest.raises(DataFormatError, match=reason) as e:
            restore_ranges(path)
        assert e.value.line == line


def test_scale_real_file_denser_warning():
    p = load_svmlight(DATA / "a9a")
    seen = []
    q = scale(p, compute_ranges(p), warn=seen.append)     # 0/1 features to [-1, 1]
    assert q.nnz == p.n_rows * len(compute_ranges(p).index)
    assert seen and "--scale 0,1" in seen[0]
    q01 = scale(p, compute_ranges(p, 0.0, 1.0), warn=seen.append)
    assert q01.nnz == p.nnz and np.array_equal(q01.indices, p.indices)


# --- CSV ----------------------------------------------------------------------------------------

def test_csv_reader(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"label,a,b,c\r\n1,0,2.5,0\r\n-1,3,0,-0.5\r\n\r\n2,0,0,0\r\n")
    p = load_csv(path)
    np.testing.assert_array_equal(p.X.toarray(), [[0, 2.5, 0], [3, 0, -0.5], [0, 0, 0]])
    np.testing.assert_array_equal(p.y, [1, -1, 2])
    assert p.nnz == 3 and p.n_features == 3
    q = load_csv(path, label_column=-1)
    np.testing.assert_array_equal(q.y, [0, -0.5, 0])
    np.testing.assert_array_equal(q.X.toarray(), [[1, 0, 2.5], [-1, 3, 0], [2, 0, 0]])
    for text, line, reason in [(b"1,2\n3,x\n", 2, "'x' in column 2 is not a number"),
                               (b"1,2,3\n4,5\n", 2, "2 fields, expected 3"),
                               (b"1,2\n3,nan\n", 2, "not finite"),
                               (b"1,,2\n", 1, "empty field")]:
        path.write_bytes(text)
        with pytest.raises(DataFormatError, match=reason) as e:
            load_csv(path, header=False)
        assert e.value.line == line
    path.write_bytes(b"a,b\n1,2\n")
    with pytest.raises(DataFormatError, match="label column 5"):
        load_csv(path, label_column=5)


def test_csv_matches_numpy_on_a_real_matrix(tmp_path):
    p = load_svmlight(DATA / "heart_scale")
    D = p.X.toarray()
    path = tmp_path / "heart.csv"
    np.savetxt(path, np.column_stack([p.y, D]), delimiter=",", fmt="%.17g",
               header="y," + ",".join(f"f{j}" for j in range(D.shape[1])), comments="")
    q = load_csv(path, block_bytes=4096)                  # many blocks
    assert q.X.toarray().tobytes() == D.tobytes() and q.y.tobytes() == p.y.tobytes()


# --- the command --------------------------------------------------------------------------------

def one_line_error(stderr):
    text = stderr.decode() if isinstance(stderr, bytes) else stderr
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("svmtool: error: "), text
    return lines[0]


def same_data(a, b):
    Xa, ya = load_svmlight_file(str(a), zero_based=False)
    Xb, yb = load_svmlight_file(str(b), zero_based=False, n_features=Xa.shape[1])
    assert Xa.shape == Xb.shape
    assert (Xa != Xb).nnz == 0 and Xa.data.tobytes() == Xb.data.tobytes()
    assert ya.tobytes() == yb.tobytes()


def test_cli_text_cache_text_subprocess(tmp_path):
    src = DATA / "heart_scale"
    cache = tmp_path / "h.cache"
    back = tmp_path / "h.txt"
    r = run_cli("convert", src, cache)
    assert r.returncode == 0, r.stderr
    assert is_cache(cache.read_bytes()[:8])
    assert b"270 rows, 13 features, 3378 non-zeros" in r.stderr
    r = run_cli("convert", "-q", cache, back)
    assert r.returncode == 0 and r.stderr == b""
    same_data(src, back)
    assert sorted(os.listdir(tmp_path)) == ["h.cache", "h.txt"]


def test_cli_bad_input_subprocess(tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:2\n-1 2:1 2:3\n")
    out = tmp_path / "out.cache"
    r = run_cli("convert", bad, out)
    assert r.returncode == 2
    line = one_line_error(r.stderr)
    assert "bad.svm:2:" in line
    assert sorted(os.listdir(tmp_path)) == ["bad.svm"]        # no output, no temp file left


def test_cli_scale_pipes_subprocess(tmp_path):
    # training data on stdin, scaled text on stdout, ranges to a file; then test data restored
    src = DATA / "heart_scale"
    ranges = tmp_path / "r.range"
    r = run_cli("convert", "-q", "--scale", "0,1", "--save-ranges", ranges, "-", "-",
                input=src.read_bytes())
    assert r.returncode == 0, r.stderr
    p = load_svmlight(src)
    rg = compute_ranges(p, 0.0, 1.0)
    assert r.stdout == format_svmlight(quiet_scale(p, rg))
    assert ranges.read_text() == format_ranges(rg)
    test = tmp_path / "test.svm"
    test.write_text("1 1:0.2 3:-5 13:0.5\n-1 2:1\n")
    r = run_cli("convert", "-q", "--restore-ranges", ranges, test, "-")
    assert r.returncode == 0, r.stderr
    assert r.stdout == format_svmlight(quiet_scale(load_svmlight(test), restore_ranges(ranges)))


def test_cli_in_process_options(tmp_path, capsys):
    # zero-based input -> one-based output, comments dropped
    zb = tmp_path / "zb.svm"
    zb.write_text("1 0:1.5 4:2 # c\n-1 2:0.25\n")
    out = tmp_path / "ob.svm"
    assert run(["convert", "-q", "--zero-based", str(zb), str(out)]) == 0
    assert out.read_text() == "1 1:1.5 5:2\n-1 3:0.25\n"
    assert run(["convert", "-q", "--zero-based", "--keep-comments", str(zb), str(out)]) == 0
    assert out.read_text() == "1 1:1.5 5:2 # c\n-1 3:0.25\n"
    assert run(["convert", "-q", "--output-zero-based", str(out), str(tmp_path / "z2.svm")]) == 0
    assert (tmp_path / "z2.svm").read_text() == "1 0:1.5 4:2\n-1 2:0.25\n"
    # CSV in, explicit cache out, back to text
    csv = tmp_path / "d.csv"
    csv.write_text("y,a,b\n1,0,2\n-1,0.5,0\n")
    cache = tmp_path / "d.bin"
    assert run(["convert", "-q", "--to", "cache", str(csv), str(cache)]) == 0
    assert is_cache(cache.read_bytes()[:8])
    assert run(["convert", "-q", str(cache), str(out)]) == 0
    assert out.read_text() == "1 2:2\n-1 1:0.5\n"
    assert run(["convert", "-q", "--from", "csv", "--label-column", "-1", str(csv),
                str(out)]) == 0
    assert out.read_text() == "2 1:1\n0 1:-1 2:0.5\n"
    capsys.readouterr()
    # misuse: exit 2, one line, nothing written
    before = sorted(os.listdir(tmp_path))
    for args in (["--scale", "0,1", "--restore-ranges", str(out)], ["--scale", "1,0"],
                 ["--scale", "abc"], ["--from", "csv", "--label-column", "9"]):
        target = tmp_path / "never.svm"
        assert run(["convert", *args, str(csv), str(target)]) == 2, args
        one_line_error(capsys.readouterr().err)
    assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.shared
@pytest.mark.parametrize("parts", [("letor_ohsumed", "Fold1_testset.txt"),
                                   ("news20", "news20.t"), ("svmlight_example1", "test.dat"),
                                   ("w8a", "w8a.t"), ("mushrooms", "mushrooms")])
def test_shared_files_text_cache_text(tmp_path, parts):
    from svmtool.io.cache import load_cache, save_cache
    from svmtool.io.writer import dump_svmlight

    src = shared_file(*parts)
    p = load_svmlight(src, comments=True)
    save_cache(p, tmp_path / "c.cache")
    q = load_cache(tmp_path / "c.cache")
    assert q.comments == p.comments
    dump_svmlight(q, tmp_path / "back.txt", comments=False)
    same_data(src, tmp_path / "back.txt")
    if p.qid is not None:
        r = load_svmlight(tmp_path / "back.txt")
        np.testing.assert_array_equal(r.qid, p.qid)

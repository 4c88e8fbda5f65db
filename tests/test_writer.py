"""The svmlight writer: numbers read back bit for bit (by scikit-learn's reader, Python's float()
and our reader), the same digits as Python's repr, qid / comments / zero-based, and speed."""

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import DATA, load_svmlight_file
from svmtool.io.svmlight import load_svmlight
from svmtool.io.writer import dump_svmlight, format_floats, format_svmlight
from svmtool.problem import Problem

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 2 / 3, 0.5, 1e-300, 1e300, -1e300, 5e-324,
           2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308, 1e16, 1e15,
           1e22, 1e23, 2.0 ** 53, 2.0 ** 53 + 2, 9007199254740993.0, 999.9999999999999,
           0.30000000000000004, 1e-4, 1e-5, 1e-7, 1.5e-6, 12345.678, 123456789012345678.0,
           0.708333, -0.105023, 3.14159e-10, 6.02214076e23]


def repr_text(x):
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


def bits(a):
    return np.asarray(a, dtype=np.float64).view(np.int64)


def test_special_values_are_repr_and_exact():
    texts = format_floats(SPECIAL)
    assert texts == [repr_text(x) for x in SPECIAL]
    back = np.array([float(t) for t in texts])
    np.testing.assert_array_equal(bits(back), bits(SPECIAL))    # -0.0 keeps its sign
    assert format_floats([float("nan"), float("inf"), -float("inf")]) == ["nan", "inf", "-inf"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=50))
def test_any_double_is_written_like_repr(values):
    texts = format_floats(values)
    assert texts == [repr_text(x) for x in values]
    np.testing.assert_array_equal(bits([float(t) for t in texts]), bits(values))


def test_digit_paths_against_repr_in_bulk():
    # every branch of the digit search: integers, <= 15 digits, 16 digits (both sides of 2**53),
    # 17 digits, the Python fallback (tiny, huge, subnormal)
    rng = np.random.default_rng(7)
    n = 20000
    parts = [
        rng.integers(-10**6, 10**6, n).astype(np.float64),
        np.array([float(f"{x:.{k}g}") for x, k in
                  zip(rng.standard_normal(n).tolist(), rng.integers(1, 18, n).tolist())]),
        rng.random(n),
        10.0 ** rng.uniform(-9, 18, n) * rng.choice([-1.0, 1.0], n),
        rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64),
    ]
    vals = np.concatenate(parts)
    vals = vals[np.isfinite(vals)]
    texts = format_floats(vals)
    assert texts == [repr_text(x) for x in vals.tolist()]


# --- whole files --------------------------------------------------------------------------------

VALUES = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(SPECIAL),
    st.integers(-1000, 1000).map(float),
)


@st.composite
def problems(draw, min_rows=1, max_rows=8, max_features=12, with_qid=None, with_comments=False):
    n_rows = draw(st.integers(min_rows, max_rows))
    n_features = draw(st.integers(1, max_features))
    indptr = [0]
    indices, data = [], []
    for _ in range(n_rows):
        cols = sorted(draw(st.sets(st.integers(0, n_features - 1), max_size=n_features)))
        indices += cols
        data += [draw(VALUES) for _ in cols]
        indptr.append(len(indices))
    y = [draw(VALUES) for _ in range(n_rows)]
    has_qid = draw(st.booleans()) if with_qid is None else with_qid
    # qids span the whole int64 range
    qid = np.array([draw(st.integers(-2**63 + 1, 2**63 - 1)) for _ in range(n_rows)], dtype=np.int64) \
        if has_qid else None
    comments = None
    if with_comments:
        no_breaks = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
        text = st.text(st.characters(blacklist_categories=("Cs",),
                                     blacklist_characters=no_breaks), max_size=12)
        comments = [draw(text) for _ in range(n_rows)]
    idx_dtype = draw(st.sampled_from([np.int32, np.int64]))
    return Problem(np.array(indptr, dtype=np.int64), np.array(indices, dtype=idx_dtype),
                   np.array(data, dtype=np.float64), np.array(y, dtype=np.float64), n_features,
                   qid=qid, comments=comments)


def parse_with_float(text):
    """A reader written with Python's float(): (y, rows of (index, value bits), qid)."""
    ys, rows, qids = [], [], []
    for line in text.decode("utf-8").split("\n")[:-1]:
        body = line.split(" #", 1)[0]
        tokens = body.split(" ")
        ys.append(float(tokens[0]))
        row = []
        for tok in tokens[1:]:
            key, val = tok.split(":")
            if key == "qid":
                qids.append(int(val))
            else:
                row.append((int(key), float(val)))
        rows.append(row)
    return ys, rows, qids


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_round_trip_bit_identical(tmp_path_factory, p):
    path = tmp_path_factory.mktemp("w") / "out.svm"
    dump_svmlight(p, path)
    text = path.read_bytes()
    # 1. scikit-learn's reader
    if p.qid is not None:
        X, y, qid = load_svmlight_file(str(path), n_features=p.n_features, zero_based=False,
                                       query_id=True)
        np.testing.assert_array_equal(qid, p.qid)
    else:
        X, y = load_svmlight_file(str(path), n_features=p.n_features, zero_based=False)
    X.sort_indices()
    np.testing.assert_array_equal(X.indptr, p.indptr)
    np.testing.assert_array_equal(X.indices, p.indices)
    np.testing.assert_array_equal(bits(X.data), bits(p.data))
    np.testing.assert_array_equal(bits(y), bits(p.y))
    # 2. Python's float()
    ys, rows, qids = parse_with_float(text)
    np.testing.assert_array_equal(bits(ys), bits(p.y))
    flat = [v for row in rows for _, v in row]
    np.testing.assert_array_equal(bits(flat), bits(p.data))
    assert [len(r) for r in rows] == np.diff(p.indptr).tolist()
    assert [i for row in rows for i, _ in row] == (np.asarray(p.indices) + 1).tolist()
    if p.qid is not None:
        assert qids == p.qid.tolist()
    # 3. our reader
    q = load_svmlight(path, n_features=p.n_features)
    np.testing.assert_array_equal(bits(q.data), bits(p.data))
    np.testing.assert_array_equal(q.indptr, p.indptr)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(with_qid=False, with_comments=True))
def test_comments_round_trip(tmp_path_factory, p):
    path = tmp_path_factory.mktemp("w") / "c.svm"
    dump_svmlight(p, path)
    q = load_svmlight(path, comments=True, n_features=p.n_features)
    # a comment is written after " #" exactly as given; the reader returns the text after '#'
    assert q.comments == p.comments


def test_comment_text_layout():
    p = Problem(np.array([0, 1, 1]), np.array([2], dtype=np.int32), np.array([0.5]),
                np.array([1.0, -1.0]), 3, qid=np.array([7, 8]), comments=[" doc 1", ""])
    assert format_svmlight(p) == b"1 qid:7 3:0.5 # doc 1\n-1 qid:8\n"
    assert format_svmlight(p, comments=False) == b"1 qid:7 3:0.5\n-1 qid:8\n"
    assert format_svmlight(p, zero_based=True, comments=False) == b"1 qid:7 2:0.5\n-1 qid:8\n"
    with pytest.raises(ValueError):
        format_svmlight(p, comments=["a\nb", ""])


def test_matrix_input_and_file_objects():
    import scipy.sparse as sp

    X = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -0.25]])
    y = np.array([1.0, 2.0])
    expected = b"1 2:1.5\n2 1:2 3:-0.25\n"
    buf = io.BytesIO()
    dump_svmlight(X, buf, y)
    assert buf.getvalue() == expected
    assert format_svmlight(sp.csr_matrix(X), y) == expected
    assert format_svmlight(sp.csc_matrix(X), y, zero_based=True) == b"1 1:1.5\n2 0:2 2:-0.25\n"
    with pytest.raises(ValueError):
        format_svmlight(X)                      # labels are required with a matrix


def test_bundled_a9a_same_as_source(tmp_path):
    # (the writer's speed against scikit-learn's is measured in `svmtool bench --suite io-all`)
    src = DATA / "a9a"
    p = load_svmlight(src)
    X, y = load_svmlight_file(str(src))
    ours = tmp_path / "ours.svm"
    dump_svmlight(p, ours)
    X2, y2 = load_svmlight_file(str(ours), n_features=X.shape[1])
    assert (X2 != X).nnz == 0 and np.array_equal(y2, y)
    # the source writes "+1" labels and trailing spaces; the rest of each line is identical
    src_lines = [ln.rstrip().lstrip("+") for ln in src.read_text().splitlines()]
    assert ours.read_text().splitlines() == src_lines


def test_no_partial_file_on_error(tmp_path):
    p = Problem(np.array([0, 1]), np.array([0], dtype=np.int32), np.array([1.0]),
                np.array([1.0]), 1, comments=["bad\ncomment"])
    out = tmp_path / "out.svm"
    with pytest.raises(ValueError):
        dump_svmlight(p, out)
    assert list(tmp_path.iterdir()) == []

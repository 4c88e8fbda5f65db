"""The svmlight reader against scikit-learn's and Python's own float(), and its error messages."""

import bz2
import gzip
import lzma
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import DATA, TESTDATA, load_svmlight_file, shared_file
from svmtool.errors import DataFormatError
from svmtool.io import svmlight as _reader
from svmtool.io.svmlight import iter_svmlight_chunks


def load_svmlight(*args, **kw):
    """These tests are of the jitted parser (test_parse_py checks the Python one against it)."""
    kw.setdefault("engine", "jit")
    return _reader.load_svmlight(*args, **kw)


def assert_same_as_sklearn(path, **kw):
    X, y = load_svmlight_file(str(path), **kw)[:2]
    p = load_svmlight(path, n_features=X.shape[1])
    assert p.shape == X.shape
    np.testing.assert_array_equal(p.indptr, X.indptr)
    np.testing.assert_array_equal(p.indices, X.indices)
    assert p.data.tobytes() == X.data.tobytes()      # bit-identical floats
    assert p.y.tobytes() == y.tobytes()
    return p


@pytest.mark.parametrize("name", ["heart_scale", "a9a", "a9a.t"])
def test_bundled_data_equals_sklearn(name):
    assert_same_as_sklearn(DATA / name)


def test_quirks_file():
    p = load_svmlight(TESTDATA / "good" / "quirks.svm", comments=True)
    # four examples: comment line and blank line skipped, CRLF, tabs, no final newline
    assert p.n_rows == 4
    np.testing.assert_array_equal(p.y, [1.0, -1.0, 1.0, -1.0])
    np.testing.assert_array_equal(p.indptr, [0, 2, 4, 5, 6])
    np.testing.assert_array_equal(p.indices, [0, 2, 1, 3, 0, 1])
    np.testing.assert_array_equal(p.data, [0.5, -2.0, 1e-3, 7.0, 1.0, 0.1])
    np.testing.assert_array_equal(p.qid, [3, 3, 0, 0])
    assert p.comments == [" trailing comment", "", "", ""]
    assert p.n_features == 4


def test_empty_rows_are_kept(tmp_path):
    p = load_svmlight(TESTDATA / "good" / "quirks.svm")
    assert p.n_rows == 4
    path = tmp_path / "empty_rows.svm"
    path.write_text("1\n-1 3:2\n1\n")
    q = load_svmlight(path)
    np.testing.assert_array_equal(q.indptr, [0, 0, 1, 1])
    np.testing.assert_array_equal(q.y, [1, -1, 1])
    assert q.n_rows == 3 and q.n_features == 3


BAD = {
    "index_zero.svm": (2, "feature index 0 in '0:1': indices start at 1 (use --zero-based"),
    "not_increasing.svm": (2, "feature indices not increasing at '2:3'"),
    "duplicate.svm": (2, "duplicate feature index at '2:3'"),
    "nan_value.svm": (2, "feature value in '2:nan' is not finite"),
    "inf_value.svm": (2, "feature value in '2:inf' is not finite"),
    "nan_label.svm": (2, "label 'nan' is not finite"),
    "junk.svm": (2, "unexpected token 'foo'"),
    "no_label.svm": (2, "line has no label"),
    "bad_value.svm": (2, "feature value in '2:1x' is not a number"),
    "bad_label.svm": (2, "label '1,5' is not a number"),
    "bad_qid.svm": (2, "qid in 'qid:x' is not a 64-bit integer"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_files_name_file_line_and_reason(name):
    line, text = BAD[name]
    path = TESTDATA / "bad" / name
    with pytest.raises(DataFormatError) as e:
        load_svmlight(path)
    assert e.value.line == line
    assert text in e.value.reason
    assert str(e.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("name", ["empty.svm", "only_comments.svm"])
def test_empty_input_is_an_error(name):
    with pytest.raises(DataFormatError, match="empty input"):
        load_svmlight(TESTDATA / "bad" / name)


def test_zero_based_option():
    p = load_svmlight(TESTDATA / "bad" / "index_zero.svm", zero_based=True)
    np.testing.assert_array_equal(p.indices, [1, 0, 2])
    assert p.n_features == 3


def test_error_line_numbers_across_threads_and_blocks(tmp_path):
    # a bad line deep in a large file, parsed in several blocks and threads
    good = (DATA / "a9a").read_bytes()
    lines = good.split(b"\n")
    bad_at = 25000
    lines[bad_at - 1] = lines[bad_at - 1] + b" 200:abc"
    f = tmp_path / "bad.svm"
    f.write_bytes(b"\n".join(lines))
    for threads in (1, 2, 3):
        for block in (1 << 20, 64 << 20):
            with pytest.raises(DataFormatError) as e:
                load_svmlight(f, threads=threads, block_bytes=block)
            assert e.value.line == bad_at
    # the same through a compressed stream
    g = tmp_path / "bad.svm.gz"
    g.write_bytes(gzip.compress(f.read_bytes()))
    with pytest.raises(DataFormatError) as e:
        load_svmlight(g)
    assert e.value.line == bad_at


@pytest.mark.parametrize("threads,block", [(1, 64 << 20), (2, 64 << 20), (2, 300_000), (3, 1 << 20)])
def test_threads_and_blocks_give_the_same_arrays(threads, block):
    ref = load_svmlight(DATA / "a9a", threads=1)
    p = load_svmlight(DATA / "a9a", threads=threads, block_bytes=block)
    for a in ("indptr", "indices", "data", "y"):
        np.testing.assert_array_equal(getattr(p, a), getattr(ref, a))


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_inputs(tmp_path, compress):
    raw = (DATA / "heart_scale").read_bytes()
    f = tmp_path / "data.anything"      # recognised by magic bytes, not by name
    f.write_bytes(compress(raw))
    p = load_svmlight(f)
    ref = load_svmlight(DATA / "heart_scale")
    np.testing.assert_array_equal(p.data, ref.data)
    np.testing.assert_array_equal(p.indices, ref.indices)


def test_stdin_pipe_equals_file():
    code = ("import sys, numpy as np; from svmtool.io.svmlight import load_svmlight;"
            "p = load_svmlight('-'); sys.stdout.write(p.data.tobytes().hex() + ' ' +"
            " p.y.tobytes().hex() + ' ' + p.indices.tobytes().hex())")
    raw = (DATA / "heart_scale").read_bytes()
    out = subprocess.run([sys.executable, "-c", code], input=raw, capture_output=True, check=True)
    ref = load_svmlight(DATA / "heart_scale")
    assert out.stdout.decode().split() == [ref.data.tobytes().hex(), ref.y.tobytes().hex(),
                                           ref.indices.tobytes().hex()]


def test_chunks_concatenate_to_the_whole():
    ref = load_svmlight(DATA / "a9a")
    chunks = list(iter_svmlight_chunks(DATA / "a9a", chunk_bytes=200_000))
    assert len(chunks) > 5
    np.testing.assert_array_equal(np.concatenate([c.y for c in chunks]), ref.y)
    np.testing.assert_array_equal(np.concatenate([c.data for c in chunks]), ref.data)
    np.testing.assert_array_equal(
        np.concatenate([c.indptr[1:] - c.indptr[0] + ref.indptr[sum(d.n_rows for d in chunks[:i])]
                        for i, c in enumerate(chunks)]), ref.indptr[1:])


@pytest.mark.parametrize("engine", ["jit", "python"])
def test_index_beyond_a_model_is_refused_while_reading(tmp_path, engine):
    """Issue 13, defect 6: an index a model cannot hold (LIBLINEAR's int) is a read error, found
    before any array of that width exists; the largest one that fits is still read."""
    f = tmp_path / "big.svm"
    f.write_text("1 1:1 2147483647:2\n-1 2:1\n")
    p = _reader.load_svmlight(f, engine=engine)
    assert p.indices.dtype == np.int32 and p.n_features == 2**31 - 1
    np.testing.assert_array_equal(p.indices, [0, 2**31 - 2, 1])
    f.write_text("1 1:1\n-1 2:1 2147483648:2\n")
    with pytest.raises(DataFormatError) as e:
        _reader.load_svmlight(f, engine=engine)
    assert (e.value.line, e.value.reason) == (
        2, "feature index in '2147483648:2' is beyond what a model can hold "
           "(at most 2147483647 features, LIBLINEAR's int)")
    f.write_text("1 2147483647:1\n")                # the 2**31-th feature, zero-based
    with pytest.raises(DataFormatError, match="beyond what a model can hold"):
        _reader.load_svmlight(f, engine=engine, zero_based=True)
    f.write_text("1 " + "9" * 40 + ":1\n")         # far beyond int64 too
    with pytest.raises(DataFormatError, match="beyond what a model can hold"):
        _reader.load_svmlight(f, engine=engine)
    f.write_text("1 " + "0" * 40 + "3:1\n")        # leading zeros are not significant digits
    assert _reader.load_svmlight(f, engine=engine).indices.tolist() == [2]


def test_index_beyond_a_model_in_a_compressed_stream(tmp_path):
    f = tmp_path / "big.gz"
    f.write_bytes(gzip.compress(b"1 1:1\n1 4000000000:1\n"))
    with pytest.raises(DataFormatError, match=r"^.*big.gz:2: feature index in '4000000000:1'"):
        load_svmlight(f)


@pytest.mark.parametrize("engine", ["jit", "python"])
def test_qid_takes_all_of_int64(tmp_path, engine):
    """Issue 13, defect 7: qid:-9223372036854775808 fits in 64 bits."""
    f = tmp_path / "q.svm"
    f.write_text("1 qid:-9223372036854775808 1:1\n2 qid:9223372036854775807 1:1\n")
    p = _reader.load_svmlight(f, engine=engine)
    assert p.qid.tolist() == [-2**63, 2**63 - 1]
    for bad in ("-9223372036854775809", "9223372036854775808"):
        f.write_text(f"1 qid:{bad} 1:1\n")
        with pytest.raises(DataFormatError, match="is not a 64-bit integer"):
            _reader.load_svmlight(f, engine=engine)


# numbers of every shape, written as text, must read back exactly as Python's float() reads them
number_text = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: f"{v:.20e}"),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda v: f"{v:.9g}"),
    st.integers(-10**25, 10**25).map(str),
    st.tuples(st.integers(0, 10**30), st.integers(0, 10**30), st.integers(-330, 310)).map(
        lambda t: f"{t[0]}.{t[1]}e{t[2]}"),
    st.decimals(allow_nan=False, allow_infinity=False, places=12).map(str),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(number_text, min_size=1, max_size=20))
def test_numbers_bit_identical_to_python_float(tmp_path_factory, texts):
    texts = [t for t in texts if np.isfinite(float(t))]
    if not texts:
        return
    f = tmp_path_factory.mktemp("n") / "nums.svm"
    lines = [f"{t} 1:{t}" for t in texts]
    f.write_text("\n".join(lines) + "\n")
    p = load_svmlight(f, threads=1)
    want = np.array([float(t) for t in texts])
    assert p.y.tobytes() == want.tobytes()
    # explicit zeros are kept: every row has its one value
    assert p.data.tobytes() == want.tobytes()


@pytest.mark.shared
@pytest.mark.parametrize("parts", [
    ("a9a", "a9a"), ("a9a", "a9a.t"), ("w8a", "w8a"), ("w8a", "w8a.t"), ("ijcnn1", "ijcnn1"),
    ("ijcnn1", "ijcnn1.t"), ("news20", "news20"), ("news20", "news20.t"), ("letter", "letter.scale"),
    ("letter", "letter.scale.t"), ("mushrooms", "mushrooms"), ("heart", "heart_scale"),
    ("svmlight_example1", "train.dat"), ("svmlight_example1", "test.dat"),
    ("svmlight_example3", "train.dat"), ("letor_ohsumed", "Fold1_trainingset.txt"),
])
def test_shared_data_equals_sklearn(parts):
    path = shared_file(*parts)
    X, y, *rest = load_svmlight_file(str(path), zero_based=False, query_id=True)
    p = load_svmlight(path, n_features=X.shape[1])
    np.testing.assert_array_equal(p.indptr, X.indptr)
    np.testing.assert_array_equal(p.indices, X.indices)
    assert p.data.tobytes() == X.data.tobytes()
    assert p.y.tobytes() == y.tobytes()
    if p.qid is not None:
        np.testing.assert_array_equal(p.qid, rest[0])

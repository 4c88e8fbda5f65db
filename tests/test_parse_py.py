"""The pure-Python svmlight parser against the jitted one: same arrays bit for bit, same errors.

svmtool.io._parse_py.parse_bytes must behave exactly as svmtool.io.svmlight.load_svmlight (the
jitted parser) on any input.  Compared here: every bundled data file, and random inputs from two
hypothesis strategies -- structured lines mixing valid and invalid tokens, and raw byte soup from
an alphabet of the grammar's characters and keywords.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from conftest import DATA, ROOT, TESTDATA
from svmtool.errors import DataFormatError
from svmtool.io import _grammar
from svmtool.io import _parse_py
from svmtool.io._parse_py import parse_bytes
from svmtool.io.svmlight import load_svmlight

_TMPDIR = tempfile.mkdtemp(prefix="svmtool-test-parse-py-")


def _arrays(indptr, indices, data, y, qid, comments, max_col, note, weights):
    """A comparable, bit-exact summary: dtypes and raw bytes of every array (the cost: weights
    included), and the note of the first label that is not a class label."""
    def arr(a):
        return None if a is None else (a.dtype.str, a.shape, a.tobytes())
    return ("ok", arr(indptr), arr(indices), arr(data), arr(y), arr(qid), comments, int(max_col),
            note, arr(weights))


def reference(raw, zero_based, comments, name="input.svm"):
    """What the jitted reader makes of ``raw`` (read from a real file, as the CLI does)."""
    path = os.path.join(_TMPDIR, name)
    with open(path, "wb") as f:
        f.write(raw)
    try:
        p = load_svmlight(path, zero_based=zero_based, comments=comments, engine="jit")
    except DataFormatError as e:
        return ("error", e.line, e.reason)
    finally:
        os.unlink(path)
    return _arrays(p.indptr, p.indices, p.data, p.y, p.qid, p.comments, p.n_features - 1,
                   p.label_note, p.weights)


def ours(raw, zero_based, comments, name="input.svm"):
    try:
        out = parse_bytes(raw, os.path.join(_TMPDIR, name), zero_based, comments)
    except DataFormatError as e:
        return ("error", e.line, e.reason)
    return _arrays(*out)


def assert_same(raw, zero_based=False, comments=False):
    ref = reference(raw, zero_based, comments)
    got = ours(raw, zero_based, comments)
    if ref != got:
        # a readable failure: the first differing part
        if ref[0] != got[0] or ref[0] == "error":
            raise AssertionError(f"input {raw[:2000]!r}\n jitted: {ref[:3]}\n python: {got[:3]}")
        names = ["status", "indptr", "indices", "data", "y", "qid", "comments", "max_col",
                 "label_note", "weights"]
        for n, a, b in zip(names, ref, got):
            assert a == b, f"input {raw[:2000]!r}: {n} differs\n jitted: {a}\n python: {b}"
    # the exact (line by line) path must agree too, on inputs the whole-input fast path takes
    try:
        exact = _arrays(*_parse_py._parse_exact(raw, "x", bool(zero_based), bool(comments)))
    except DataFormatError as e:
        exact = ("error", e.line, e.reason)
    assert exact == ref, f"exact path differs on {raw[:2000]!r}:\n {exact[:3]}\n {ref[:3]}"
    return ref


# --- (1) the bundled files --------------------------------------------------------------------

def _data_files():
    files = sorted(TESTDATA.glob("good/*")) + sorted(TESTDATA.glob("bad/*"))
    files += sorted(TESTDATA.glob("example3_*"))
    files.append(DATA / "heart_scale")
    return files


@pytest.mark.parametrize("path", _data_files(), ids=lambda p: p.name)
@pytest.mark.parametrize("zero_based", [False, True])
@pytest.mark.parametrize("comments", [False, True])
def test_bundled_files(path, zero_based, comments):
    raw = path.read_bytes()
    ref = assert_same(raw, zero_based, comments)
    if path.parent.name == "bad":
        assert ref[0] == "error" or zero_based    # (index_zero.svm is fine when zero-based)


def test_bad_files_really_fail():
    for path in sorted(TESTDATA.glob("bad/*")):
        assert ours(path.read_bytes(), False, False)[0] == "error", path


def test_a9a_first_2000_lines():
    with open(DATA / "a9a", "rb") as f:
        raw = b"".join(f.readline() for _ in range(2000))
    ref = assert_same(raw, False, False)
    assert ref[0] == "ok" and len(np.frombuffer(ref[4][2])) == 2000
    assert_same(raw, True, True)


def test_a9a_first_2000_lines_damaged():
    """An error late in a real file, found by the line-by-line path."""
    with open(DATA / "a9a", "rb") as f:
        lines = [f.readline() for _ in range(2000)]
    for n, bad in [(1500, b"-1 3:1 3:1\n"), (1999, b"+1 5:1 7:nan\n"), (10, b"1e999 1:1\n"),
                   (700, b"+1 qid:3 1:1 sid:x cost:2 # fine\n"), (701, b"+1 0:1\n")]:
        damaged = lines[:n] + [bad] + lines[n + 1:]
        assert_same(b"".join(damaged), False, True)


def test_file_name_in_error():
    with pytest.raises(DataFormatError) as e:
        parse_bytes(b"1 1:1\n1 1:x\n", "some/file.svm", False, False)
    assert (e.value.path, e.value.line) == ("some/file.svm", 2)
    assert str(e.value) == "some/file.svm:2: feature value in '1:x' is not a number"
    with pytest.raises(DataFormatError) as e:
        parse_bytes(b"# nothing\n\n", "f", False, False)
    assert (e.value.path, e.value.line, str(e.value)) == ("f", None,
                                                           "f: empty input: no examples found")


@pytest.mark.parametrize("raw", [
    b"", b"\n", b"   \r\n\t\n", b"#\n", b"1", b"1\n", b"-1 # c\r\r\n", b"1#c", b"1 1:1#c\n",
    b"1 2147483648:1\n", b"1 2147483649:1\n", b"1 2147483649:1\n2 1:nan\n",
    b"1 1:nan\n2 2147483649:1\n", b"1 999999999999999999:1\n", b"1 1000000000000000000:1\n",
    b"1 qid:9223372036854775807\n", b"1 qid:-9223372036854775807 1:1\n",
    b"1 qid:9223372036854775808\n", b"1 qid:-9223372036854775808\n", b"1 qid:000000000000000000000007\n",
    b"1 qid:-9223372036854775809\n", b"1 qid:-09223372036854775808 1:1\n", b"1 qid:-0\n",
    b"1 2147483647:1\n", b"1 2147483646:1\n", b"1 1:1 2147483648:1 3:1\n", b"1 0000000000000000000002:1\n",
    b"1 1234567890123456789:1\n", b"1 000000000000000000000000:1\n", b"1 2:1 99999999999999999999999:1\n",
    b"1.5 1:1\n", b"# c\n\n 1 1:1\n2.25#x\n", b"1e100 1:1\n", b"2147483648 1:1\n-2147483648 1:1\n",
    b"-2147483649\n", b"1 1:1\n" + b"0.5" * 30 + b"e-90\n", b"0.5" * 300 + b"\n",
    b"1 1:1 qid:4 2:2 qid:5\n", b"1 qid:\n", b"1 qid\n", b"1 sid\n", b"1 sid:\n", b"1 cost:\n",
    b"1 cost\n", b"1 costs:1\n", b"1 sidx:1\n", b"1 qidx:1\n", b"1 1:1 cost", b"1 1:1 qid",
    b"1 cost:x:y 1:2\n", b"1 sid:#c\n", b"1 1:\n", b"1 :1\n", b"1 1:1:1\n", b"1 -1:1\n", b"1 +1:1\n",
    b"1 1 :1\n", b"1 1\n", b"1:1\n", b"x:1\n", b"x#:1\n", b"nope 1:1\n", b"-Inf\n", b"+n\n",
    b"1e\n", b"1e+\n", b".\n", b"+\n", b".5 1:5.\n", b"5. 1:.5e-3\n", b"1.e5\n", b".e5\n",
    b"1 1:1e999\n", b"1 1:-1e999\n", b"1e-400 1:1e-400\n", b"-0 1:-0.0e7\n", b"1 1:4.9e-324\n",
    b"1 1:2.4703282292062327e-324\n", b"1 1:2.4703282292062328e-324\n",
    b"1 1:1.7976931348623157e308\n", b"1 1:1.7976931348623158e308\n",
    b"1 1:1.797693134862315807e308\n", b"1 1:179769313486231580793728971405301e274\n",
    b"1 1:9007199254740993\n", b"1 1:9007199254740993e-5\n", b"1 1:12345678901234567890123\n",
    b"1 1:0.1234567890123456789012345\n", b"1\x0b1:1\n", b"1\x0c\n", b"1\xa01:1\n",
    b"1 1:1\x00\n", b"\xef\xbb\xbf1 1:1\n", b"1 1:1 # caf\xc3\xa9 \xff\r\n",
    b"1 " + "é".encode() * 30 + b"\n", b"1 " + b"x" * 39 + "é".encode() + b"\n",
    b"1 " + b"x" * 40 + b"\n", b"1 " + b"x" * 41 + b"\n", b"1 " + b"x" * 40 + b"#\n",
    b"1 1:" + b"1" * 799 + b"\n", b"1 1:" + b"1" * 800 + b"\n", b"1" * 800 + b"\n",
    b"1 1:" + b"0" * 900 + b"1\n", b"1 1:0." + b"0" * 900 + b"\n", b"1 1:1." + b"0" * 900 + b"\n",
    b"1 1:" + b"0" * 900 + b"1e99999999999\n", b"1 1:" + b"1" * 900 + b"e-99999999999\n",
    b"1 1:0.0000000000000000000000000000000001e1000000000000\n",
    b"1 1:" + b"9" * 400 + b"e-400\n", b"1 1:1e" + b"0" * 900 + b"1\n",
    b"1 qid:" + b"0" * 5000 + b"1\n", b"1 qid:" + b"1" * 5000 + b"\n",
    # the jitted parser's exponent stops growing at 100000: on numbers of 100000 digits or more
    # its fast path can disagree with float() (here 1.0 and 1e-5 where float() says inf)
    b"1 1:0." + b"0" * 100005 + b"1e1000060\n", b"1 1:-0." + b"0" * 100005 + b"1e1000010\n",
    b"0." + b"0" * 100005 + b"1e1000010 1:1\n", b"1 1:0." + b"0" * 100005 + b"1e100006\n",
    b"1 1:0." + b"0" * 12000 + b"1e12001\n", b"1 1:" + b"0" * 900 + b"9007199254740992\n",
    b"1 1:" + b"0" * 900 + b"9007199254740993\n", b"1 1:-" + b"0" * 900 + b"0.0e-99\n",
    b"1 2:1 1:1\n", b"1 2:1 2:1\n", b"1 0:1\n", b"1 00:1\n", b"1 1:1 0:1\n",
    b"1 1:1\n\n\n2 2:2", b"1 1:1\r\n2 2:2\r\n", b"1\t1:1\t\r\n", b"\r1 1:1\n",
    b"# a\n  # b\n1 1:1 # c # d\n", b"1 1:1#\n", b"1 1:1 #\r\r\n",
])
@pytest.mark.parametrize("zero_based", [False, True])
@pytest.mark.parametrize("comments", [False, True])
def test_corner_cases(raw, zero_based, comments):
    assert_same(raw, zero_based, comments)


# --- (2) random inputs: both parsers must agree exactly -----------------------------------------

_SIGN = st.sampled_from(["", "", "", "-", "+"])
_DIGITS = st.one_of(
    st.text("0123456789", min_size=1, max_size=4),
    st.text("0123456789", min_size=0, max_size=25),
    st.builds(lambda a, n, b: a + "0" * n + b, st.text("0123456789", max_size=3),
              st.integers(0, 900), st.text("0123456789", max_size=3)),
)
_EXP_DIGITS = st.one_of(
    st.text("0123456789", min_size=1, max_size=3),
    st.sampled_from(["", "308", "309", "324", "325", "400", "999", "22", "23", "99999",
                     "100000", "99999999999999999999"]),
)


@st.composite
def _numberish(draw):
    """A token that is usually a number, sometimes nearly one."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        x = draw(st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True))
        return draw(st.sampled_from([repr(x), "%.17g" % x, "%.25e" % x, "%.3g" % x, "%r" % x]))
    if kind == 1:
        return draw(st.sampled_from([
            "nan", "NaN", "-nan", "inf", "-inf", "+Inf", "Infinity", "i", "n", "nope", "N", "I",
            "1e999", "-1e400", "1e-400", "4.9e-324", "2.4703282292062327e-324",
            "1.7976931348623157e308", "1.7976931348623159e308", "9007199254740993",
            "9007199254740993e-22", "0.1", "-0", "-0.0", ".5", "5.", "+.5", "-5.e-3", ".", "+",
            "-", "e5", ".e5", "1e", "1e+", "1e-", "1,5", "1_000", "0x10", "1..2", "1e5e5",
            "1" * 800, "0" * 850 + "1", "1." + "0" * 850, "0." + "0" * 850 + "1e850",
        ]))
    if kind == 2:
        return draw(st.integers(-2**70, 2**70)).__str__()
    if kind == 3 and draw(st.booleans()):
        # about MAX_TOKEN (800) bytes long: too long exactly when strtod would be needed
        n = draw(st.integers(_grammar.MAX_TOKEN - 3, _grammar.MAX_TOKEN + 1))
        head = draw(st.sampled_from(["", "-", "0.", "1", "9007199254740992", "9007199254740993",
                                     "1234567890123456789", "12345678901234567890"]))
        tail = draw(st.sampled_from(["", "e-5", "e+780", "e-800", "E5", "1", "e",
                                     "9007199254740992", "9007199254740993", "8e-3"]))
        fill = draw(st.sampled_from("0123456789"))
        return head + fill * max(0, n - len(head) - len(tail)) + tail
    if kind == 4 and draw(st.booleans()):
        # a long number with few significant digits: the jitted parser's strtod-free cases
        n = draw(st.integers(_grammar.MAX_TOKEN - 20, _grammar.MAX_TOKEN + 20))
        mant = draw(st.sampled_from(["9007199254740992", "9007199254740993", "1", "12345", "0",
                                     "1234567890123456789", "12345678901234567890", "5e"]))
        frac = draw(st.booleans())
        shift = n + len(mant) if frac else 0
        exp = draw(st.sampled_from(["", "e5", "e-22", "e23", "e%d" % shift, "e%d" % (shift + 22),
                                    "e%d" % (shift + 23), "e%d" % (shift - 23), "E-%d" % n]))
        return draw(_SIGN) + ("0." if frac else "") + "0" * n + mant + exp
    # mostly well-formed decimals from parts (some malformed: no digits, bare exponent)
    s = draw(_SIGN) + draw(_DIGITS)
    if draw(st.booleans()):
        s += "." + draw(_DIGITS)
    if draw(st.integers(0, 3)) == 0:
        s += draw(st.sampled_from("eE")) + draw(_SIGN) + draw(_EXP_DIGITS)
    return s


def _index(draw, prev, increasing):
    if increasing and draw(st.integers(0, 9)) > 0:
        return str(prev + draw(st.integers(1, 5)))
    return draw(st.one_of(
        st.integers(0, 12).map(str),
        st.sampled_from(["0", "00", "01", "0001", "2147483647", "2147483648", "2147483649",
                         "4294967297", "999999999999999999", "1000000000000000000",
                         "0000000000000000001", "", "-1", "+1", "1a", "x", "1.5"]),
    ))


_COMMENT = st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)),
                   max_size=20)
_GARBAGE = st.one_of(
    st.text("abc:#. 1\\\x00\x0b\x0c\xa0é€", min_size=1, max_size=6),
    st.sampled_from(["foo", "qid", "QID:1", "sid", "SID:1", "cost", "qid5", ":5", "1:", "1:2:3",
                     "1::2", "x" * 45, "é" * 25, "\ufeff", "\x0b", "\x0c", "1\x001"]),
)


@st.composite
def _item(draw, state):
    kind = draw(st.integers(0, 19))
    if kind < 12:                                       # index:value
        idx = _index(draw, state["prev"], state["increasing"])
        if idx.isdigit():
            state["prev"] = int(idx)
        return idx + ":" + draw(_numberish())
    if kind < 14:
        q = draw(st.one_of(
            st.integers(-2**64, 2**64).map(str),
            st.sampled_from(["", "x", "+-1", "00012", "-0", "+7", "9" * 30, "1.5", "1e3",
                             "12ab", "1:2", "5#c", "1" * 19, "0" * 30 + "5"]),
            st.sampled_from(["9223372036854775807", "9223372036854775808",
                             "-9223372036854775807", "-9223372036854775808",
                             "+9223372036854775807", "09223372036854775807",
                             "999999999999999999", "1000000000000000000"]),
        ))
        return "qid:" + q
    if kind == 14:
        return draw(st.sampled_from(["sid:", "cost:"])) + draw(
            st.text("abc123:.-+é#", max_size=6))
    if kind == 15:
        return "#" + draw(_COMMENT)
    return draw(_GARBAGE)


_SEP = st.sampled_from([" ", " ", " ", " ", "\t", "\r", "  ", " \t ", "", "\x0b", "\x0c"])
_EOL = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r\r\n", "\n\r"])


@st.composite
def svm_text(draw):
    """A file of random lines: examples with random items, blank and comment lines."""
    state = {"prev": 0, "increasing": draw(st.booleans())}
    clean = draw(st.booleans())          # clean files: valid items in order, errors are rare
    first = draw(st.sampled_from([0, 1, 1]))     # files whose indices start at 0 or at 1
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            lines.append(draw(st.sampled_from(["", " ", "\t\r", "\r"])))
            continue
        if kind == 1:
            lines.append(draw(st.sampled_from(["", "  ", "\t"])) + "#" + draw(_COMMENT))
            continue
        state["prev"] = first - 1
        if clean and draw(st.integers(0, 19)) > 0:
            label = draw(st.sampled_from(["1", "-1", "+1", "0", "2.5", "-3e2", ".5", "7."]))
        else:
            label = draw(_numberish()) if draw(st.integers(0, 5)) else draw(_GARBAGE)
        parts = [draw(st.sampled_from(["", "", " ", "\t"])) + label]
        if draw(st.integers(0, 3)) == 0:
            q = draw(st.integers(-10, 10)) if clean else draw(st.integers(-2**64, 2**64))
            parts.append("qid:%d" % q)
        for _ in range(draw(st.integers(0, 6))):
            if clean and draw(st.integers(0, 29)) > 0:
                state["prev"] += draw(st.sampled_from([1, 1, 2, 3, 2147483000]))
                parts.append("%d:%s" % (state["prev"], draw(st.sampled_from(
                    ["1", "0.5", "-2", "1e-3", "3.25", "-0", ".5", "1E5"]))))
            else:
                parts.append(draw(_item(state)))
        line = parts[0]
        for p in parts[1:]:
            line += (draw(_SEP) if not clean else draw(st.sampled_from([" ", " ", "\t"]))) + p
        if draw(st.integers(0, 4)) == 0:
            line += draw(st.sampled_from(["", " ", "\t"])) + "#" + draw(_COMMENT)
        if draw(st.integers(0, 5)) == 0:
            line += draw(st.sampled_from([" ", "\t", "\r", " \r"]))
        lines.append(line)
    text = "".join(line + draw(_EOL) for line in lines)
    if lines and draw(st.booleans()):
        text = text.rstrip("\n")         # no final newline
    return text.encode("utf-8", "surrogatepass")


_ATOMS = [b"0", b"1", b"2", b"9", b"00", b".", b":", b"+", b"-", b"e", b"E", b"n", b"i", b"I",
          b" ", b" ", b"\t", b"\r", b"\n", b"\n", b"#", b"qid:", b"sid:", b"cost:", b"qid", b"x",
          b"\xc3\xa9", b"\xff", b"\x0b", b"\x00", b"1:1 ", b"2:0.5 ", b"3:1e5 ", b"-1 ", b"+1 ",
          b"1 ", b"\r\n", b"1e999", b"nan", b"inf", b"2147483649:", b"0:", b"x" * 41]
_SOUP_LINE = st.tuples(
    st.sampled_from([b"", b"1 ", b"-1 ", b"+1\t", b"2.5 ", b" 0 ", b"1 qid:3 "]),
    st.lists(st.sampled_from(_ATOMS), max_size=14).map(b"".join))
_SOUP = st.one_of(
    st.lists(st.sampled_from(_ATOMS), max_size=60).map(b"".join),
    st.lists(_SOUP_LINE.map(b"".join), max_size=6).map(b"\n".join),
)

_FLAGS = dict(zero_based=st.booleans(), comments=st.booleans())
_SETTINGS = settings(max_examples=1000, deadline=None, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_SETTINGS
@given(raw=svm_text(), **_FLAGS)
def test_random_lines_agree(raw, zero_based, comments):
    assert_same(raw, zero_based, comments)


@_SETTINGS
@given(raw=_SOUP, **_FLAGS)
@example(raw=b"1 1:1\n", zero_based=False, comments=False)
def test_random_bytes_agree(raw, zero_based, comments):
    assert_same(raw, zero_based, comments)


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(values=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1,
                       max_size=300),
       fmt=st.sampled_from(["%r", "%.17g", "%.6g", "%.30e", "%.40f"]))
def test_random_floats_bit_identical(values, fmt):
    """Many numbers at once (the bulk conversion of the fast path), bit for bit."""
    rows = []
    for k in range(0, len(values), 7):
        chunk = values[k:k + 7]
        rows.append((fmt % chunk[0]) + "".join(" %d:%s" % (j + 1, fmt % v)
                                               for j, v in enumerate(chunk)))
    ref = assert_same(("\n".join(rows) + "\n").encode(), False, False)
    assert ref[0] == "ok"


@settings(max_examples=80, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(lines=st.lists(svm_text(), min_size=1, max_size=40), seed=st.integers(0, 2**32 - 1))
def test_random_errors_in_a_long_valid_file(lines, seed):
    """A few random lines spliced into a valid file of hundreds of rows: the fast path declines
    and the first error (or the right arrays) must still come out."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(400):
        cols = np.flatnonzero(rng.random(30) < 0.3) + 1
        rows.append(b"%+d" % rng.choice([-1, 1]) + b"".join(
            b" %d:%s" % (c, repr(float(rng.choice([1.0, 0.5, rng.normal()]))).encode())
            for c in cols))
    for text in lines:
        rows.insert(int(rng.integers(0, len(rows) + 1)), text.rstrip(b"\n"))
    raw = b"\n".join(rows) + b"\n"
    assert_same(raw, False, bool(seed & 1))


# --- the fast paths really are taken on ordinary data ---------------------------------------

def test_fast_path_taken_on_ordinary_files():
    for path in [DATA / "heart_scale", TESTDATA / "example3_train.dat"]:
        assert _parse_py._parse_fast(path.read_bytes(), "x", False, True) is not None


# --- (3) no numba ---------------------------------------------------------------------------------

def test_import_does_not_load_numba():
    code = ("import sys\n"
            "import svmtool.io._parse_py as m\n"
            "out = m.parse_bytes(b'1 qid:2 1:1 3:0.5 # c\\n-1 2:1\\n', 'x', False, True)\n"
            "assert out[0].tolist() == [0, 2, 3], out\n"
            "try:\n"
            "    m.parse_bytes(b'1 1:1\\n1 1:nan\\n', 'x', False, False)\n"
            "except Exception as e:\n"
            "    assert str(e) == \"x:2: feature value in '1:nan' is not finite (NaN or Inf)\"\n"
            "bad = [n for n in ('numba', 'llvmlite', 'scipy', 'svmtool.io._parse', 'svmtool._jit')\n"
            "       if n in sys.modules]\n"
            "print(','.join(bad))\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=str(ROOT), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"imported: {out.stdout.strip()}"


# --- the grammar constants are the jitted parser's ----------------------------------------------

def test_grammar_constants_match_the_jitted_parser():
    from svmtool.io import _parse

    names = [n for n in dir(_grammar) if n == "OK" or n.startswith("ERR_")]
    assert len(names) == 17
    for n in names:
        assert getattr(_parse, n) == getattr(_grammar, n), n
    assert _parse.MESSAGES == _grammar.MESSAGES
    assert _parse._MAX_TOKEN == _grammar.MAX_TOKEN

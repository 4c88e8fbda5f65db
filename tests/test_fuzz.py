"""Property tests on mutated inputs: every reader returns its object or raises InputError (the
documented, exit-2 error), never another exception.  Mutations of real files: byte flips,
truncation, junk inserted, lines duplicated or dropped, numbers made huge or non-finite.

A fixed, small budget (derandomised) keeps ``make test`` fast; ``make fuzz`` (atheris, not in CI)
runs the same readers for minutes under coverage guidance.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA
import svmtool
from svmtool import api
from svmtool.errors import InputError
from svmtool.io import model_io, scale, svmlight
from svmtool.io.cache import load_cache, save_cache
from svmtool.params import KernelParams
from svmtool.problem import Problem
from svmtool.models.linear import LinearModel
from svmtool.models.kernel import KernelModel
from svmtool.models.early import EarlyModel

BUDGET = settings(max_examples=120, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.function_scoped_fixture,
                                         HealthCheck.too_slow])

JUNK = [b"nan", b"inf", b"-inf", b"1e400", b"99999999999999999999", b":", b"::", b"qid:",
        b"#", b"\x00", b"\xff", b"\r", b"\n", b" ", b"0:1", b"-1:2", b"1:1e-400", b"+", b"1_0",
        b"\xef\xbb\xbf", b"2147483648:1", b"qid:-9223372036854775809"]


@st.composite
def mutated(draw, base):
    """``base`` after one to four mutations."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "dup", "drop", "number"]))
        n = len(data)
        at = draw(st.integers(0, max(n - 1, 0)))
        if kind == "flip" and n:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.sampled_from(JUNK))
        elif kind in ("dup", "drop") and n:
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            if kind == "dup":
                lines.insert(i, lines[i])
            else:
                del lines[i]
            data = bytearray(b"\n".join(lines))
        elif kind == "number" and n:
            # replace the digit run at ``at`` (if any) by an extreme number
            j = at
            while j < n and chr(data[j]).isdigit():
                j += 1
            data[at:j] = draw(st.sampled_from([b"nan", b"inf", b"1e308", b"4294967296",
                                               b"-0", b"0"]))
    return bytes(data)


def assert_reader_contract(read, data, path, kinds):
    """Run ``read(path)`` on ``data``: it must return one of ``kinds`` or raise InputError (any
    other exception propagates and fails the test)."""
    path.write_bytes(data)
    try:
        out = read(path)
    except InputError as e:
        assert str(e)                      # the one-line message the CLI prints
        return
    assert isinstance(out, kinds), type(out)


HEART = (DATA / "heart_scale").read_bytes()[:2500]


@BUDGET
@given(data=mutated(HEART))
def test_text_reader_python_path(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("f") / "d.svm"
    assert_reader_contract(lambda p: svmlight.load_svmlight(p, engine="python", comments=True),
                       data, path, Problem)


@BUDGET
@given(data=mutated(HEART))
def test_text_reader_jit_path_agrees(tmp_path_factory, data):
    """The jitted parser accepts and refuses the same inputs as the pure-Python one, with the
    same message, and gives the same arrays."""
    path = tmp_path_factory.mktemp("f") / "d.svm"
    path.write_bytes(data)
    out = []
    for engine in ("python", "jit"):
        try:
            p = svmlight.load_svmlight(path, engine=engine, threads=1)
            out.append(("ok", p.y.tolist(), p.indices.tolist(), p.data.tolist(), p.n_features))
        except InputError as e:
            out.append(("error", str(e)))
    assert out[0] == out[1]


@pytest.fixture(scope="module")
def model_texts(tmp_path_factory):
    heart = svmtool.load_data(DATA / "heart_scale")
    small = heart.take_rows(range(40))
    d = tmp_path_factory.mktemp("models")
    out = {}
    for name, kw, fmt in (("liblinear", {}, None), ("mc", {"solver": "ocas-mc"}, None),
                          ("kernel", {"solver": "kernel", "kernel": KernelParams(gamma=0.1)},
                           None),
                          ("svmlight", {"solver": "dcd-l1"}, "svmlight")):
        p = d / name
        api.save_model(api.train(small, **kw), p, fmt)
        out[name] = p.read_bytes()
    return out


@pytest.mark.parametrize("kind", ["liblinear", "mc", "kernel", "svmlight"])
def test_model_readers(tmp_path_factory, model_texts, kind):
    @BUDGET
    @given(data=mutated(model_texts[kind]))
    def check(data):
        path = tmp_path_factory.mktemp("m") / "m.model"
        assert_reader_contract(model_io.load_model, data, path, (LinearModel, KernelModel,
                                                             EarlyModel))

    check()


RANGES = b"y\n-1 1\n-1 1\nx\n0 1\n1 0 1\n2 -3.5 7\n13 0.25 1e3\n"


@BUDGET
@given(data=mutated(RANGES))
def test_range_reader(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("r") / "ranges"
    assert_reader_contract(scale.restore_ranges, data, path, scale.Ranges)


@pytest.fixture(scope="module")
def cache_bytes(tmp_path_factory):
    p = tmp_path_factory.mktemp("c") / "h.cache"
    save_cache(svmtool.load_data(DATA / "heart_scale").take_rows(range(30)), p)
    return p.read_bytes()


def test_cache_reader(cache_bytes):
    @BUDGET
    @given(data=mutated(cache_bytes))
    def check(data):
        try:
            out = load_cache(data, mmap=False, verify=True)
        except InputError as e:
            assert str(e)
            return
        assert isinstance(out, Problem)
        assert len(out.indptr) == out.n_rows + 1

    check()

"""The input defects of the hardening issue, each run through the installed ``svmtool``: exit 2,
one line naming the file (and line) and the reason, and no output created or changed.

2. a truncated gzip/bzip2/xz input (a file or standard input) says so;
3. a model with a nan or inf number is refused, for every model format;
5. a non-integer label for a classification solver is refused and points at the regression
   solvers, which (with ranking) still take it;
6. a feature index beyond what a model can hold is refused at read time;
7. qid takes every 64-bit integer, and refuses what is beyond.
"""

import bz2
import gzip
import lzma
import re

import pytest

from conftest import DATA
from svmtool_proc import one_line, snapshot, svmtool

HEART = DATA / "heart_scale"
OLD = b"the previous model\n"


def assert_refused(tmp_path, args, want, stdin=None):
    """Run with an existing MODEL/OUTPUT path ``tmp_path/out``: exit 2, one line == want, and
    the folder as it was."""
    out = tmp_path / "out"
    out.write_bytes(OLD)
    before = snapshot(tmp_path)
    r = svmtool(*[out if a == "OUT" else a for a in args], input=stdin)
    assert r.returncode == 2, r.stderr
    assert one_line(r.stderr) == want
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("kind, compress", [("gzip", gzip.compress), ("bzip2", bz2.compress),
                                             ("xz", lzma.compress)])
def test_truncated_compressed_input(tmp_path, kind, compress):
    packed = compress((DATA / "a9a").read_bytes())[:50000]
    ext = {"gzip": "gz", "bzip2": "bz2", "xz": "xz"}[kind]
    src = tmp_path / f"t.{ext}"
    src.write_bytes(packed)
    tail = f"truncated {kind} stream after 50000 bytes (the file ends before the end of the " \
           f"compressed data)"
    assert_refused(tmp_path, ["train", "-q", src, "OUT"], f"{src}: {tail}")
    assert_refused(tmp_path, ["train", "-q", "-", "OUT"], f"<stdin>: {tail}", stdin=packed)


def _models(tmp_path):
    """A LIBLINEAR, a LIBSVM (kernel) and an SVMlight model of heart_scale."""
    paths = {}
    for name, args in (("liblinear", []), ("libsvm", ["-s", "kernel"]),
                       ("svmlight", ["--model-format", "svmlight"])):
        p = tmp_path / f"{name}.model"
        assert svmtool("train", "-q", *args, HEART, p).returncode == 0
        paths[name] = p
    return paths


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_model_with_a_non_finite_number_is_refused(tmp_path, bad):
    models = _models(tmp_path)
    cases = []
    lines = models["liblinear"].read_text().split("\n")
    w_line = lines.index("w") + 2                         # the first weight
    lines[w_line - 1] = bad
    cases.append(("liblinear", lines, w_line, f"weight: '{bad}' is not a finite number"))
    lines = models["libsvm"].read_text().split("\n")
    rho = next(i for i, l in enumerate(lines) if l.startswith("rho ")) + 1
    lines[rho - 1] = f"rho {bad}"
    cases.append(("libsvm", lines, rho, f"rho: '{bad}' is not a finite number"))
    lines = models["svmlight"].read_text().split("\n")
    b = next(i for i, l in enumerate(lines) if "# threshold b" in l) + 1
    lines[b - 1] = f"{bad} # threshold b"
    cases.append(("svmlight", lines, b, f"'threshold b': '{bad}' is not a finite number"))
    for name, lines, number, reason in cases:
        bad_model = tmp_path / f"bad-{name}.model"
        bad_model.write_text("\n".join(lines))
        assert_refused(tmp_path, ["predict", "-q", HEART, bad_model, "OUT"],
                 f"{bad_model}:{number}: {reason}")


def test_non_integer_label_refused_for_classification_only(tmp_path):
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n1.5 2:1\n-1 3:1\n2 1:0.5\n")
    assert_refused(tmp_path, ["train", "-q", data, "OUT"],
             f"{data}:2: label '1.5' is not a class label (an integer from -2147483648 to "
             f"2147483647): -s dcd-l2 is a classification solver; for real-valued targets use "
             f"a regression solver (-s svr-l2, svr-l2-dual, svr-l1-dual) or -s ordinal")
    for solver in ("svr-l2", "svr-l2-dual", "ordinal"):
        model = tmp_path / f"{solver}.model"
        r = svmtool("train", "-q", "-s", solver, data, model)
        assert r.returncode == 0, r.stderr
        assert model.exists()


def test_feature_index_beyond_a_model_refused_at_read_time(tmp_path):
    data = tmp_path / "d.svm"
    data.write_text("1 3:1\n-1 2147483648:1\n")
    assert_refused(tmp_path, ["train", "-q", data, "OUT"],
             f"{data}:2: feature index in '2147483648:1' is beyond what a model can hold "
             f"(at most 2147483647 features, LIBLINEAR's int)")
    ok = tmp_path / "ok.svm"
    ok.write_text("1 3:1\n-1 2147483647:1\n")          # the largest index: read, not refused
    r = svmtool("convert", "-q", ok, tmp_path / "ok.cache")
    assert r.returncode == 0, r.stderr


def test_qid_takes_every_64_bit_integer(tmp_path):
    data = tmp_path / "q.svm"
    data.write_text("2 qid:-9223372036854775808 1:1\n1 qid:-9223372036854775808 2:1\n"
                    "2 qid:9223372036854775807 1:1\n1 qid:9223372036854775807 2:0.5\n")
    model = tmp_path / "q.model"
    r = svmtool("train", "-q", "-s", "ordinal", data, model)
    assert r.returncode == 0, r.stderr
    beyond = tmp_path / "q2.svm"
    beyond.write_text("2 qid:9223372036854775808 1:1\n1 qid:1 2:1\n")
    assert_refused(tmp_path, ["train", "-q", "-s", "ordinal", beyond, "OUT"],
             f"{beyond}:1: qid in 'qid:9223372036854775808' is not a 64-bit integer")


# LIBLINEAR (liblinear-official: its C code in this process) on the folds of leave-one-out, each
# model trained on the other rows in file order from rand() as after srand(1): what
# `svmtool train --liblinear-rng -v N` does with N beyond the row count, fold by fold
_LIBLINEAR_LEAVE_ONE_OUT = """
import ctypes, sys
from liblinear.liblinearutil import predict, svm_read_problem, train
srand = ctypes.CDLL(None).srand
y, x = svm_read_problem(sys.argv[1])
right = 0
for i in range(len(y)):
    srand(1)
    model = train(y[:i] + y[i + 1:], x[:i] + x[i + 1:], "-q")
    right += predict(y[i:i + 1], x[i:i + 1], model, "-q")[0][0] == y[i]
print(right, len(y))
"""


def liblinear_leave_one_out_line(path):
    import subprocess
    import sys

    pytest.importorskip("liblinear.liblinearutil")
    r = subprocess.run([sys.executable, "-c", _LIBLINEAR_LEAVE_ONE_OUT, str(path)],
                       capture_output=True, text=True, check=True)
    right, n = map(int, r.stdout.split())
    return f"Cross Validation Accuracy = {100.0 * right / n:g}%\n".encode()


def test_warnings_are_one_line_and_silenced_by_q():
    """Defects 4 and 8: a library warning is one 'svmtool: warning:' line (no Python warning
    text, no source path), and -q (before or after the command name) silences every warning,
    the iteration-cap ones included.  What is left is the accuracy of leave-one-out, as
    LIBLINEAR computes it on the same folds."""
    r = svmtool("train", "-v", "1000", HEART)
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "svmtool: warning: more folds than examples: doing leave-one-out\n" in err
    assert "UserWarning" not in err and ".py" not in err
    want = liblinear_leave_one_out_line(HEART)
    for q in (["-q", "train"], ["train", "-q"]):
        r = svmtool(*q, "--liblinear-rng", "-v", "1000", HEART)
        assert r.returncode == 0
        assert r.stderr == want
    r = svmtool("train", "-s", "3", "--max-iter", "1", DATA / "a9a", "-")
    assert r.returncode == 0
    assert b"svmtool: warning:" in r.stderr
    r = svmtool("train", "-q", "-s", "3", "--max-iter", "1", DATA / "a9a", "-")
    assert r.returncode == 0 and r.stderr == b""


def _bad_field_cases(models):
    """(model name, lines, 1-based line number, that line with BAD for a number, what the message
    calls the number) for every kind of number in every model format."""
    cases = []

    def edit(kind, pick, make, what):
        lines = models[kind].read_text().split("\n")
        k = next(i for i, l in enumerate(lines) if pick(l))
        cases.append((kind, lines, k + 1, make(lines[k]), what))

    def key(word):
        return lambda l: l.split(" ", 1)[0] == word

    def first_number(l):            # the first token replaced: "BAD 1:0.5 ..." / "BAD "
        return "BAD " + l.split(" ", 1)[1]

    edit("liblinear", key("bias"), lambda l: "bias BAD", "bias")
    edit("liblinear", key("label"), lambda l: "label BAD -1", "label")
    edit("liblinear", lambda l: l.endswith(" "), first_number, "weight")
    edit("oneclass", key("rho"), lambda l: "rho BAD", "rho")
    edit("libsvm", key("gamma"), lambda l: "gamma BAD", "gamma")
    edit("libsvm", key("rho"), lambda l: "rho BAD", "rho")
    edit("libsvm", key("label"), lambda l: "label 1 BAD", "label")
    edit("libsvm", key("nr_sv"), lambda l: "probA BAD\n" + l, "probA")
    edit("libsvm", lambda l: ":" in l, first_number, "support vector")
    edit("libsvm", lambda l: " 1:" in l, lambda l: re.sub(r" 1:\S+", " 1:BAD", l, count=1),
         "feature value")
    edit("svmlight", lambda l: l.endswith("# kernel parameter -g"),
         lambda l: "BAD # kernel parameter -g", "'kernel parameter -g'")
    edit("svmlight", lambda l: "# threshold b" in l,
         lambda l: "BAD # threshold b" + l.split("# threshold b", 1)[1], "'threshold b'")
    edit("svmlight", lambda l: l.startswith("1 1:"), first_number, "alpha*y")
    edit("early", key("gamma"), lambda l: "gamma BAD", "gamma")
    edit("early", key("centre_const"), lambda l: "centre_const BAD", "centre_const")
    edit("early", key("rho"), lambda l: "rho BAD", "rho")
    return cases


@pytest.fixture(scope="module")
def all_models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    paths = {}
    for name, args in (("liblinear", []), ("oneclass", ["-s", "one-class"]),
                       ("libsvm", ["-s", "kernel"]), ("svmlight", ["--model-format", "svmlight"]),
                       ("early", ["-s", "dcsvm", "--early"])):
        p = d / f"{name}.model"
        r = svmtool("train", "-q", *args, HEART, p)
        assert r.returncode == 0, r.stderr
        paths[name] = p
    return paths


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "NaN", "-Infinity"])
def test_every_number_of_every_model_format_must_be_finite(tmp_path, all_models, bad):
    """In-process over every kind of field (fast); the subprocess tests cover the command."""
    from svmtool.errors import ModelFormatError
    from svmtool.io.model_io import load_model

    cases = _bad_field_cases(all_models)
    assert {c[0] for c in cases} == set(all_models)
    for kind, lines, number, edited, what in cases:
        p = tmp_path / f"{kind}.model"
        p.write_text("\n".join(lines[:number - 1] + [edited.replace("BAD", bad)] + lines[number:]))
        with pytest.raises(ModelFormatError) as e:
            load_model(str(p))
        assert str(e.value) == f"{p}:{number}: {what}: {bad!r} is not a finite number", kind


def test_early_model_with_nan_refused_by_predict(tmp_path, all_models):
    lines = all_models["early"].read_text().split("\n")
    k = next(i for i, l in enumerate(lines) if l.startswith("rho "))
    lines[k] = "rho nan"
    bad = tmp_path / "bad-early.model"
    bad.write_text("\n".join(lines))
    assert_refused(tmp_path, ["predict", "-q", HEART, bad, "OUT"],
             f"{bad}:{k + 1}: rho: 'nan' is not a finite number")

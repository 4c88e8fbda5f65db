"""The bad-input matrix of docs/errors.md, row by row, through the installed ``svmtool``: the exit
status, the one line on stderr, and (for errors) that nothing was created or changed.  A test also
checks that that matrix lists every row with the same message and status."""

import bz2
import gzip
import lzma
import re

import pytest

from conftest import DATA, ROOT
from svmtool_proc import one_line, snapshot, svmtool

HEART = DATA / "heart_scale"

# files written into the test's folder before the command runs (bytes, or a callable of the
# folder for files built from others)
TEXT = {
    "idx0.svm": b"1 0:1 2:1\n-1 1:1\n",
    "unsorted.svm": b"1 3:1 2:1\n",
    "dup.svm": b"1 2:1 2:3\n",
    "nan.svm": b"1 1:nan\n-1 2:1\n",
    "inf.svm": b"1 1:inf\n-1 2:1\n",
    "junk.svm": b"1 1:abc\n",
    "token.svm": b"1 1:1 junk\n",
    "label.svm": b"x 1:1\n",
    "real.svm": b"1 1:1\n1.5 2:1\n-1 3:1\n",
    "bom.svm": b"\xef\xbb\xbf1 1:1\n-1 2:1\n",
    "empty.svm": b"",
    "big.svm": b"1 2147483648:1\n",
    "qid.svm": b"1 qid:9223372036854775808 1:1\n",
    "labelonly.svm": b"1\n-1 1:1\n",
    "crlf.svm": b"1 1:1\r\n-1 2:1\r\n",
    "one.svm": b"1 1:1\n1 2:1\n",
    "heart.svm": lambda: HEART.read_bytes(),
    "cost_neg.svm": b"1 cost:2 1:1\n-1 cost:-1 2:1\n",
    "cost_nan.svm": b"1 cost:nan 1:1\n-1 2:1\n",
    "costs.svm": b"1 cost:2 1:1\n-1 cost:1 2:1\n",
    "w_ones.txt": b"1\n1\n",
    "w_short.txt": b"1\n1\n1\n",
    "w_neg.txt": lambda: b"1\n-2\n" + b"1\n" * 268,
    "w_word.txt": lambda: b"one\n" + b"1\n" * 269,
    "w_empty.txt": b"",
    "other.out": b"log2c=99 log2g=3 rate=80\n",
    "t.gz": lambda: gzip.compress((DATA / "a9a").read_bytes())[:50000],
    "t.bz2": lambda: bz2.compress((DATA / "a9a").read_bytes())[:50000],
    "t.xz": lambda: lzma.compress((DATA / "a9a").read_bytes())[:50000],
}

# id, command (IN = the folder's file, OUT = an output path that must stay untouched), status,
# the message (after "svmtool: error: "; {d} is the folder), and what the README says of it
ROWS = [
    # -- data ------------------------------------------------------------------------------------
    ("index 0", ["train", "idx0.svm", "OUT"], 2,
     "{d}/idx0.svm:1: feature index 0 in '0:1': indices start at 1 (use --zero-based for files "
     "whose indices start at 0)"),
    ("negative cost", ["train", "cost_neg.svm", "OUT"], 2,
     "{d}/cost_neg.svm:2: cost in 'cost:-1' is negative (an instance weight is 0 or more)"),
    ("NaN cost", ["train", "cost_nan.svm", "OUT"], 2,
     "{d}/cost_nan.svm:1: cost in 'cost:nan' is not finite (NaN or Inf)"),
    ("cost:, solver without weights", ["train", "-s", "ordinal", "costs.svm", "OUT"], 2,
     "solver ordinal does not take instance weights (cost: tokens or -W)"),
    ("-W: too few weights", ["train", "-W", "w_short.txt", "heart.svm", "OUT"], 2,
     "{d}/w_short.txt:3: 3 weights for 270 examples (one weight a line, one line an example)"),
    ("-W: negative weight", ["train", "-W", "w_neg.txt", "heart.svm", "OUT"], 2,
     "{d}/w_neg.txt:2: weight '-2' is negative (a weight is 0 or more)"),
    ("-W: not a number", ["svm-train", "-W", "w_word.txt", "heart.svm", "OUT"], 2,
     "{d}/w_word.txt:1: weight 'one' is not a number"),
    ("-W: empty file", ["train", "-W", "w_empty.txt", "heart.svm", "OUT"], 2,
     "{d}/w_empty.txt: empty weight file: no weights"),
    ("-W and cost:", ["train", "-W", "w_ones.txt", "costs.svm", "OUT"], 2,
     "{d}/costs.svm has cost: tokens and -W {d}/w_ones.txt gives weights too: give the "
     "instance weights one way"),
    ("unsorted indices", ["train", "unsorted.svm", "OUT"], 2,
     "{d}/unsorted.svm:1: feature indices not increasing at '2:1'"),
    ("duplicate index", ["train", "dup.svm", "OUT"], 2,
     "{d}/dup.svm:1: duplicate feature index at '2:3'"),
    ("NaN value", ["train", "nan.svm", "OUT"], 2,
     "{d}/nan.svm:1: feature value in '1:nan' is not finite (NaN or Inf)"),
    ("Inf value", ["train", "inf.svm", "OUT"], 2,
     "{d}/inf.svm:1: feature value in '1:inf' is not finite (NaN or Inf)"),
    ("junk value", ["train", "junk.svm", "OUT"], 2,
     "{d}/junk.svm:1: feature value in '1:abc' is not a number"),
    ("junk token", ["train", "token.svm", "OUT"], 2,
     "{d}/token.svm:1: unexpected token 'junk' (expected index:value)"),
    ("bad label", ["train", "label.svm", "OUT"], 2, "{d}/label.svm:1: label 'x' is not a number"),
    ("real label, classifier", ["train", "real.svm", "OUT"], 2,
     "{d}/real.svm:2: label '1.5' is not a class label (an integer from -2147483648 to "
     "2147483647): -s dcd-l2 is a classification solver; for real-valued targets use a "
     "regression solver (-s svr-l2, svr-l2-dual, svr-l1-dual) or -s ordinal"),
    ("byte-order mark", ["train", "bom.svm", "OUT"], 2,
     "{d}/bom.svm:1: the file starts with a UTF-8 byte-order mark (BOM): svmlight text has "
     "none; save it without"),
    ("empty file", ["train", "empty.svm", "OUT"], 2, "{d}/empty.svm: empty input: no examples found"),
    ("index >= 2^31", ["train", "big.svm", "OUT"], 2,
     "{d}/big.svm:1: feature index in '2147483648:1' is beyond what a model can hold (at most "
     "2147483647 features, LIBLINEAR's int)"),
    ("qid beyond int64", ["train", "-s", "ordinal", "qid.svm", "OUT"], 2,
     "{d}/qid.svm:1: qid in 'qid:9223372036854775808' is not a 64-bit integer"),
    ("truncated gzip", ["train", "t.gz", "OUT"], 2,
     "{d}/t.gz: truncated gzip stream after 50000 bytes (the file ends before the end of the "
     "compressed data)"),
    ("truncated bzip2", ["train", "t.bz2", "OUT"], 2,
     "{d}/t.bz2: truncated bzip2 stream after 50000 bytes (the file ends before the end of the "
     "compressed data)"),
    ("truncated xz", ["train", "t.xz", "OUT"], 2,
     "{d}/t.xz: truncated xz stream after 50000 bytes (the file ends before the end of the "
     "compressed data)"),
    ("truncated cache", ["train", "trunc.cache", "OUT"], 2,
     "{d}/trunc.cache: truncated cache: expected at least 192 bytes, found 100"),
    ("bit-flipped cache", ["train", "flip.cache", "OUT"], 2,
     "{d}/flip.cache: corrupt cache: array checksum does not match"),
    ("missing file", ["train", "nosuch.svm", "OUT"], 2, "nosuch.svm: no such file"),
    # accepted as LIBLINEAR accepts them
    ("label-only line", ["train", "labelonly.svm", "OUT"], 0, None),
    ("CRLF line ends", ["train", "crlf.svm", "OUT"], 0, None),
    ("one class", ["train", "one.svm", "OUT"], 0, None),
    # -- models ----------------------------------------------------------------------------------
    ("truncated model", ["predict", HEART, "trunc.model", "OUT"], 2,
     "{d}/trunc.model:4: the file ends inside the header, at 'nr_fea' (truncated file?)"),
    ("wrong count", ["predict", HEART, "count.model", "OUT"], 2,
     "{d}/count.model:19: unexpected text after the 12 weight rows"),
    ("unknown key", ["predict", HEART, "key.model", "OUT"], 2,
     "{d}/key.model:6: unknown key 'foo' in the header of a LIBLINEAR model"),
    ("NaN weight", ["predict", HEART, "nan.model", "OUT"], 2,
     "{d}/nan.model:8: weight: 'nan' is not a finite number"),
    ("data as model", ["predict", HEART, "idx0.svm", "OUT"], 2,
     "{d}/idx0.svm:1: not a model file: the first line '1 0:1 2:1' starts with none of "
     "solver_type (LIBLINEAR), svm_type (LIBSVM), 'SVM-light Version' (SVMlight)"),
    # -- options ---------------------------------------------------------------------------------
    ("-c 0", ["train", "-c", "0", HEART, "OUT"], 2, "-c must be a finite number > 0 (got 0.0)"),
    ("-c inf", ["train", "-c", "inf", HEART, "OUT"], 2,
     "-c must be a finite number > 0 (got inf)"),
    ("-e -1", ["train", "-e", "-1", HEART, "OUT"], 2,
     "-e must be a finite number > 0 (got -1.0)"),
    ("-B nan", ["train", "-B", "nan", HEART, "OUT"], 2, "-B must be a finite number (got nan)"),
    ("-v 1", ["train", "-v", "1", HEART], 2, "n-fold cross validation: n must be >= 2 (got 1)"),
    ("-B abc", ["train", "-B", "abc", HEART, "OUT"], 2,
     "Invalid value for '-B': 'abc' is not a valid float. (see 'svmtool train --help')"),
    ("--threads 0", ["train", "--threads", "0", HEART, "OUT"], 2,
     "--threads must be at least 1 (got 0)"),
    ("-s 99", ["train", "-s", "99", HEART, "OUT"], 2,
     "unknown solver '99': choose one of dcd-l2, dcd-l1, lr, newton, lr-dual, l1r-l2, l1r-lr, "
     "svr-l2, svr-l2-dual, svr-l1-dual, one-class, cp, ocas, gca2, tca, ocas-mc, ordinal, "
     "kernel, dcsvm, c_svc, nu_svc, one_class, epsilon_svr, nu_svr (or LIBLINEAR's numbers 0, 1, "
     "2, 3, 4, 5, 6, 7, 11, 12, 13, 21)"),
    ("-w1 0", ["train", "-w1", "0", HEART, "OUT"], 2,
     "weight of class 1 must be a finite number > 0 (got 0.0)"),
    ("-p -1", ["train", "-s", "11", "-p", "-1", HEART, "OUT"], 2,
     "-p must be >= 0 (got -1.0)"),
    ("-n 2", ["train", "-s", "21", "-n", "2", HEART, "OUT"], 2,
     "-n must be in (0, 1] (got 2.0)"),
    ("-p for a classifier", ["train", "-p", "0.5", HEART, "OUT"], 2,
     "-p only applies to -s svr-l2, svr-l2-dual, svr-l1-dual, epsilon_svr, not -s dcd-l2"),
    ("-w for regression", ["train", "-s", "11", "-w1", "2", HEART, "OUT"], 2,
     "class weights (-wLABEL) do not apply to regression (-s svr-l2): there are no classes"),
    ("-B for one-class", ["train", "-s", "21", "-B", "1", HEART, "OUT"], 2,
     "-s one-class takes no bias column (-B): its offset is rho, as in LIBLINEAR"),
    ("-t 9", ["train", "-s", "kernel", "-t", "9", HEART, "OUT"], 2,
     "-t must be 0 (linear), 1 (polynomial), 2 (rbf), 3 (sigmoid) or 4 (precomputed) (got 9)"),
    ("-g -1", ["train", "-s", "kernel", "-g", "-1", HEART, "OUT"], 2,
     "-g must be >= 0 (got -1.0)"),
    ("-m 0", ["train", "-s", "kernel", "-m", "0", HEART, "OUT"], 2,
     "-m must be > 0 (got 0.0)"),
    ("--time-limit 0", ["train", "--time-limit", "0", HEART, "OUT"], 2,
     "--time-limit must be > 0 seconds (got 0)"),
    ("--max-iter 0", ["train", "--max-iter", "0", HEART, "OUT"], 2,
     "--max-iter must be at least 1 (got 0)"),
    # -- svmtool grid: before any cell runs, nothing written ----------------------------------
    ("grid: step 0", ["grid", "-log2c", "1,5,0", "heart.svm"], 2,
     "-log2c 1,5,0: a step of 0 never reaches the end"),
    ("grid: step of the wrong sign", ["grid", "-log2g", "-1,-7,2", "heart.svm"], 2,
     "-log2g -1,-7,2: the step goes away from the end (a step of the wrong sign names no "
     "cell; use -1,-7,-2)"),
    ("grid: no cell", ["grid", "-log2c", "null", "-log2g", "null", "heart.svm"], 2,
     "-log2c and -log2g should not be null simultaneously"),
    ("grid: -v 1", ["grid", "-v", "1", "heart.svm"], 2,
     "-v 1: n-fold cross validation needs n >= 2"),
    ("grid: more folds than rows", ["grid", "-v", "300", "heart.svm"], 2,
     "-v 300: more folds than the 270 rows of {d}/heart.svm"),
    ("grid: -resume of another grid", ["grid", "-resume", "other.out", "heart.svm"], 2,
     "{d}/other.out:1: the cell 'log2c=99 log2g=3 rate=80' is not on this grid (-log2c -5,15,2 "
     "-log2g 3,-15,-2): the file belongs to another grid"),
    ("grid: -c", ["grid", "-c", "1", "heart.svm"], 2,
     "-c: use -log2c and -log2g (grid.py's rule: the grid sets C and gamma)"),
    ("-b 1, not LR", ["predict", "-b", "1", HEART, "m.model", "OUT"], 2,
     "-b 1 needs a logistic-regression model (L2R_LR, L1R_LR or L2R_LR_DUAL); {d}/m.model is "
     "L2R_L2LOSS_SVC_DUAL"),
    ("output a folder", ["train", HEART, "{d}"], 2, "cannot write {d}: is a directory"),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    for name, body in TEXT.items():
        (d / name).write_bytes(body() if callable(body) else body)
    model = d / "m.model"
    assert svmtool("train", "-q", HEART, model).returncode == 0
    text = model.read_text()
    (d / "trunc.model").write_text(text[:60])
    (d / "count.model").write_text(text.replace("nr_feature 13", "nr_feature 12"))
    (d / "key.model").write_text(text.replace("bias -1\n", "bias -1\nfoo 3\n"))
    lines = text.split("\n")
    lines[7] = "nan"
    (d / "nan.model").write_text("\n".join(lines))
    assert svmtool("convert", "-q", HEART, d / "h.cache").returncode == 0
    raw = (d / "h.cache").read_bytes()
    (d / "trunc.cache").write_bytes(raw[:100])
    flipped = bytearray(raw)
    flipped[len(raw) // 2] ^= 0xFF
    (d / "flip.cache").write_bytes(bytes(flipped))
    (d / "h.cache").unlink()
    return d


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_matrix_row(folder, tmp_path, row):
    _, args, status, message = row
    out = tmp_path / "out"
    out.write_bytes(b"the previous file\n")
    argv = ["-q"]
    for a in args:
        if a == "OUT":
            argv.append(out)
        elif isinstance(a, str) and (folder / a).exists() and "/" not in a:
            argv.append(folder / a)
        elif isinstance(a, str):
            argv.append(a.format(d=folder))
        else:
            argv.append(a)
    before_out, before_folder = snapshot(tmp_path), snapshot(folder)
    r = svmtool(*argv, cwd=folder)
    assert r.returncode == status, r.stderr
    if message is None:
        assert r.stderr == b""
        return
    assert one_line(r.stderr) == message.format(d=folder)
    assert snapshot(tmp_path) == before_out
    assert snapshot(folder) == before_folder


def test_docs_matrix_lists_every_row():
    """docs/errors.md's matrix has one line per row, with its status and message."""
    text = (ROOT / "docs" / "errors.md").read_text()
    section = text.split("## Bad input", 1)[1].split("\n## ", 1)[0]
    for name, _, status, message in ROWS:
        line = next((l for l in section.splitlines() if l.startswith(f"| {name} |")), None)
        assert line is not None, f"docs/errors.md's bad-input matrix has no row {name!r}"
        assert f"| {status} |" in line, line
        if message is not None:
            shown = message.replace("{d}/", "").replace("{d}", "DIR").replace("|", "\\|")
            assert shown in line, (shown, line)


def test_rows_are_unique():
    names = [r[0] for r in ROWS]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[^|]+", n) for n in names)

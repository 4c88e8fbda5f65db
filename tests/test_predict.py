"""Scoring kernels and ``svmtool predict`` against liblinear-official, scipy and scikit-learn."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from svmtool.models.linear import LinearModel, _decision_values_numpy
from svmtool.ops.predict import decision_values
from conftest import lazy
from svmtool.problem import Problem

ll = pytest.importorskip("liblinear.liblinearutil")
skm = lazy("sklearn.metrics")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
HEART = DATA / "heart_scale"
SHARED = REPO.parent / "shared" / "data"
shared = pytest.mark.skipif(not SHARED.is_dir(),
                            reason=f"real data sets not found at {SHARED} (../shared/data)")

ACCURACY_RE = re.compile(r"^Accuracy = ([0-9.e+-]+)% \((\d+)/(\d+)\)$")


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def random_csr(rng, n_rows, n_cols, density=0.3, idx_dtype=np.int32, empty_rows=()):
    dense = rng.normal(size=(n_rows, n_cols)) * (rng.random((n_rows, n_cols)) < density)
    dense[list(empty_rows)] = 0.0
    X = sp.csr_matrix(dense)
    X.indices = X.indices.astype(idx_dtype)
    X.indptr = X.indptr.astype(np.int64)
    return X


# ---- kernels ------------------------------------------------------------------------------------

@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("nr_w,bias", [(1, -1.0), (1, 1.0), (4, 0.5), (3, -1.0)])
def test_kernel_matches_scipy_and_numpy_twin(idx_dtype, nr_w, bias):
    rng = np.random.default_rng(7)
    n_cols, nr_feature = 30, 22              # the data has 8 columns the model never saw
    X = random_csr(rng, 50, n_cols, idx_dtype=idx_dtype, empty_rows=[3])
    assert X.indptr[3] == X.indptr[4]
    w = rng.normal(size=(nr_feature + (1 if bias >= 0 else 0), nr_w))

    expect = X[:, :nr_feature] @ w[:nr_feature]
    if bias >= 0:
        expect = expect + bias * w[nr_feature]

    out = np.empty((X.shape[0], nr_w))
    decision_values(X.indptr, X.indices, X.data, w, nr_feature, bias, out)
    np.testing.assert_allclose(out, expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(out[3], bias * w[nr_feature] if bias >= 0 else 0.0)

    twin = np.empty_like(out)
    _decision_values_numpy(X.indptr, X.indices, X.data, w, nr_feature, bias, twin)
    np.testing.assert_array_equal(bits(twin), bits(out))


def test_kernel_on_a_row_slice_whose_indptr_does_not_start_at_zero():
    rng = np.random.default_rng(2)
    X = random_csr(rng, 40, 10)
    w = rng.normal(size=(10, 2))
    part = slice(15, 31)
    indptr = X.indptr[part.start:part.stop + 1]          # starts at X.indptr[15] != 0
    assert indptr[0] != 0
    out = np.empty((16, 2))
    decision_values(indptr, X.indices, X.data, w, 10, -1.0, out)
    np.testing.assert_allclose(out, X[part] @ w, rtol=1e-12, atol=1e-12)
    twin = np.empty_like(out)
    _decision_values_numpy(indptr, X.indices, X.data, w, 10, -1.0, twin)
    np.testing.assert_array_equal(bits(twin), bits(out))


def test_decision_function_accepts_problem_csr_tuple_and_dense():
    rng = np.random.default_rng(4)
    X = random_csr(rng, 20, 8)
    m = LinearModel("L2R_LR", np.array([1.0, -1.0]), 6, 2.0, rng.normal(size=(7, 1)))
    expect = X[:, :6] @ m.w[:6] + 2.0 * m.w[6]
    prob = Problem(X.indptr, X.indices, X.data, np.zeros(20), 8)
    for arg in (prob, X, (X.indptr, X.indices, X.data)):
        np.testing.assert_allclose(m.decision_function(arg), expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(m.decision_function(X.toarray()), expect, rtol=1e-12, atol=1e-12)


def test_ties_pick_the_first_label_like_liblinear(tmp_path):
    from svmtool.io.model_io import save_model

    w = np.array([[1.0, 1.0, 0.5], [0.0, 2.0, 2.0]])      # ties between columns
    m = LinearModel("L2R_L2LOSS_SVC_DUAL", np.array([4.0, 9.0, 2.0]), 2, -1, w)
    rows = [{1: 1.0}, {2: 1.0}, {1: 1.0, 2: 1.0}, {}]
    X = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=float))
    ours = m.predict(m.decision_function(X))
    save_model(m, tmp_path / "m")
    theirs, _, _ = ll.predict([0] * 4, rows, ll.load_model(str(tmp_path / "m")), "-q")
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(ours, [4.0, 9.0, 9.0, 4.0])


def test_predict_proba_rows_sum_to_one_and_binary_sigmoid():
    m = LinearModel("L2R_LR", np.array([1.0, -1.0]), 1, -1, np.array([[1.0]]))
    p = m.predict_proba(np.array([[0.0], [800.0], [-800.0], [np.log(3.0)]]))
    np.testing.assert_allclose(p, [[0.5, 0.5], [1, 0], [0, 1], [0.75, 0.25]], atol=1e-15)
    m3 = LinearModel("L1R_LR", np.array([1.0, 2.0, 3.0]), 1, -1, np.array([[1.0, -1.0, 0.0]]))
    p3 = m3.predict_proba(np.array([[1.0, -1.0, 0.0]]))
    s = 1 / (1 + np.exp(-np.array([1.0, -1.0, 0.0])))
    np.testing.assert_allclose(p3[0], s / s.sum(), rtol=1e-15)
    with pytest.raises(ValueError, match="logistic"):
        LinearModel("MCSVM_CS", np.array([1.0, 2.0]), 1, -1, np.ones((1, 2))).predict_proba(
            np.zeros((1, 2)))


def test_small_scoring_loads_neither_numba_nor_scipy(tmp_path):
    """Model reading, scoring a small chunk and the metrics stay numpy-only (start-up cost)."""
    code = f"""
import sys
import numpy as np
from svmtool.io.model_io import load_model, save_model
from svmtool.models.linear import LinearModel
from svmtool.problem import Problem
from svmtool.ops import metrics
import svmtool.cli.predict
m = LinearModel("L2R_LR", np.array([1.0, -1.0]), 3, 1.0, np.ones((4, 1)))
save_model(m, {str(tmp_path / "m")!r})
m = load_model({str(tmp_path / "m")!r})
p = Problem(np.array([0, 2, 3], np.int64), np.array([0, 5, 1], np.int32), np.ones(3), np.ones(2), 6)
dec = m.decision_function(p)
assert dec.tolist() == [[2.0], [2.0]], dec   # column 5 is beyond nr_feature 3
metrics.roc_auc([True, False], dec[:, 0])
print(sorted(k for k in ("numba", "scipy", "sklearn") if k in sys.modules))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


# ---- the command, through a real subprocess ------------------------------------------------------

def run(args, **kw):
    return subprocess.run([sys.executable, "-m", "svmtool", "predict", *map(str, args)],
                          capture_output=True, cwd=REPO, timeout=300, **kw)


@pytest.fixture(scope="module")
def heart():
    return ll.svm_read_problem(str(HEART))


@pytest.fixture(scope="module")
def models(tmp_path_factory, heart):
    """liblinear models on heart_scale: SVM (-s 1), logistic regression (-s 0 -B 1), SVR (-s 11)."""
    y, x = heart
    folder = tmp_path_factory.mktemp("models")
    out = {}
    for name, opts in [("svm", "-s 1 -q"), ("lr", "-s 0 -B 1 -q"), ("svr", "-s 11 -q")]:
        m = ll.train(y, x, opts)
        path = folder / f"{name}.model"
        ll.save_model(str(path), m)
        out[name] = (m, path)
    return out


def read_labels(path_or_bytes):
    text = path_or_bytes.read_text() if isinstance(path_or_bytes, Path) \
        else path_or_bytes.decode()
    return np.array([float(t) for t in text.split()])


def test_cli_labels_and_report_match_liblinear(tmp_path, heart, models):
    y, x = heart
    m, model_path = models["svm"]
    expect, _, dec = ll.predict(y, x, m, "-q")
    out = tmp_path / "pred"
    r = run([HEART, model_path, out])
    assert r.returncode == 0, r.stderr.decode()
    np.testing.assert_array_equal(read_labels(out), expect)
    assert out.read_text().split("\n")[:3] == ["1", "-1", "-1"] or \
        set(out.read_text().split()) <= {"1", "-1"}

    lines = r.stderr.decode().splitlines()
    correct = int(np.sum(np.array(expect) == np.array(y)))
    assert lines[0] == "Accuracy = %g%% (%d/%d)" % (correct / len(y) * 100, correct, len(y))
    # the extra binary lines against scikit-learn, positive class = the model's first label
    pos = m.get_labels()[0]
    p, rc, f1, _ = skm.precision_recall_fscore_support(y, expect, labels=[pos], average=None)
    assert "Precision = %g%%" % (100 * p[0]) in lines[1]
    assert "Recall = %g%%" % (100 * rc[0]) in lines[1]
    assert "F1 = %g" % f1[0] in lines[1]
    auc = skm.roc_auc_score(np.array(y) == pos, np.array(dec)[:, 0])
    assert lines[2].startswith("ROC AUC = %g " % auc)
    assert len(lines) == 3

    # -q: nothing on stderr, same output
    out_q = tmp_path / "pred_q"
    r = run(["-q", HEART, model_path, out_q])
    assert r.returncode == 0 and r.stderr == b""
    assert out_q.read_bytes() == out.read_bytes()


def test_cli_pipes_and_small_chunks(tmp_path, models):
    _, model_path = models["svm"]
    ref = tmp_path / "ref"
    assert run(["-q", HEART, model_path, ref]).returncode == 0
    r = run(["-", model_path, "-"], input=HEART.read_bytes())
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == ref.read_bytes()
    assert r.stderr.decode().startswith("Accuracy = ")
    # many small blocks (streaming) give the same lines
    r = run(["-q", "--chunk-bytes", "700", HEART, model_path, "-"])
    assert r.returncode == 0 and r.stdout == ref.read_bytes()
    # the same data written 0-based, read with --zero-based
    zero = tmp_path / "zero"
    zero.write_text("".join(
        " ".join([t.split()[0]] + [f"{int(k) - 1}:{v}" for k, v in
                                    (p.split(":") for p in t.split()[1:])]) + "\n"
        for t in HEART.read_text().splitlines()))
    r = run(["-q", "--zero-based", zero, model_path, "-"])
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == ref.read_bytes()


def test_cli_probabilities_match_liblinear(tmp_path, heart, models):
    y, x = heart
    m, model_path = models["lr"]
    labels, _, probs = ll.predict(y, x, m, "-b 1 -q")
    r = run(["-b", "1", "-q", HEART, model_path, "-"])
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().splitlines()
    assert lines[0] == "labels " + " ".join(str(v) for v in m.get_labels())
    table = np.array([[float(t) for t in line.split()] for line in lines[1:]])
    np.testing.assert_array_equal(table[:, 0], labels)
    np.testing.assert_allclose(table[:, 1:], np.array(probs), rtol=1e-12, atol=1e-15)


def test_cli_decision_values_match_liblinear_multiclass(tmp_path):
    rng = np.random.default_rng(11)
    y = [int(c) for c in rng.integers(1, 4, size=60)]
    x = [{j + 1: float(np.round(v, 4)) for j, v in enumerate(rng.normal(size=5) + c)} for c in y]
    m = ll.train(y, x, "-s 4 -B 1 -q")
    model_path = tmp_path / "m"
    ll.save_model(str(model_path), m)
    data = tmp_path / "d.txt"
    data.write_text("".join(f"{c} " + " ".join(f"{k}:{v!r}" for k, v in r.items()) + "\n"
                            for c, r in zip(y, x)))
    _, _, dec = ll.predict(y, x, m, "-q")
    r = run(["--decision-values", "-q", data, model_path, "-"])
    assert r.returncode == 0, r.stderr.decode()
    got = np.array([[float(t) for t in line.split()] for line in r.stdout.decode().splitlines()])
    np.testing.assert_array_equal(got, np.array(dec))       # exact: shortest round-trip digits


def test_cli_regression_report(tmp_path, heart, models):
    y, x = heart
    m, model_path = models["svr"]
    pred, (_, mse, scc), _ = ll.predict(y, x, m, "-q")
    out = tmp_path / "pred"
    r = run([HEART, model_path, out])
    assert r.returncode == 0, r.stderr.decode()
    np.testing.assert_allclose(read_labels(out), pred, rtol=1e-15)
    lines = r.stderr.decode().splitlines()
    assert re.fullmatch(r"Mean squared error = \S+ \(regression\)", lines[0])
    assert re.fullmatch(r"Squared correlation coefficient = \S+ \(regression\)", lines[1])
    assert float(lines[0].split()[4]) == pytest.approx(mse, rel=1e-5)
    assert float(lines[1].split()[4]) == pytest.approx(scc, rel=1e-5)


def test_cli_ignores_features_beyond_the_model(tmp_path, heart, models):
    y, x = heart
    m, model_path = models["svm"]
    wide = tmp_path / "wide"
    # every row gets a feature 50 and label text like "+1"
    wide.write_text("".join(("+1" if c > 0 else "-1") + " "
                            + " ".join(f"{k}:{v!r}" for k, v in sorted(r.items()))
                            + " 50:7.5\n" for c, r in zip(y, x)))
    expect, _, _ = ll.predict(y, x, m, "-q")
    r = run(["-q", wide, model_path, "-"])
    assert r.returncode == 0, r.stderr.decode()
    np.testing.assert_array_equal(read_labels(r.stdout), expect)


def test_cli_bad_model_exit_2_one_line_no_output(tmp_path):
    bad = tmp_path / "bad.model"
    bad.write_text("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 13\nbias -1\nw\n0.5 \n")
    out = tmp_path / "pred"
    r = run([HEART, bad, out])
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err == f"svmtool: error: {bad}:8: expected 13 weight rows, found 1 (truncated file?)\n"
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.model"]


def test_cli_probability_on_an_svm_model_is_refused(tmp_path, models):
    _, model_path = models["svm"]
    out = tmp_path / "pred"
    r = run(["-b", "1", HEART, model_path, out])
    assert r.returncode == 2
    assert r.stderr.decode() == (f"svmtool: error: -b 1 needs a logistic-regression model "
                                 f"(L2R_LR, L1R_LR or L2R_LR_DUAL); {model_path} is "
                                 f"L2R_L2LOSS_SVC_DUAL\n")
    assert not out.exists()


def test_cli_bad_data_leaves_no_output(tmp_path, models):
    _, model_path = models["svm"]
    data = tmp_path / "d"
    data.write_text("1 1:0.5\n-1 2:x\n")
    out = tmp_path / "pred"
    r = run([data, model_path, out])
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.startswith("svmtool: error: ") and err.count("\n") == 1 and ":2" in err
    assert not out.exists() and len(list(tmp_path.iterdir())) == 1


def test_cli_a9a_accuracy_line_like_liblinear(tmp_path):
    """The bundled a9a: train with liblinear, predict a9a.t with both."""
    y, x = ll.svm_read_problem(str(DATA / "a9a"))
    m = ll.train(y, x, "-s 1 -q")
    model_path = tmp_path / "a9a.model"
    ll.save_model(str(model_path), m)
    ty, tx = ll.svm_read_problem(str(DATA / "a9a.t"))
    expect, _, _ = ll.predict(ty, tx, m, "-q")
    out = tmp_path / "pred"
    r = run([DATA / "a9a.t", model_path, out])
    assert r.returncode == 0, r.stderr.decode()
    np.testing.assert_array_equal(read_labels(out), expect)
    correct = int(np.sum(np.array(expect) == np.array(ty)))
    first = r.stderr.decode().splitlines()[0]
    assert first == "Accuracy = %g%% (%d/%d)" % (100.0 * correct / len(ty), correct, len(ty))
    assert ACCURACY_RE.match(first)


@pytest.mark.shared
@shared
def test_cli_letter_multiclass_matches_liblinear(tmp_path):
    train, test = SHARED / "letter" / "letter.scale", SHARED / "letter" / "letter.scale.t"
    if not (train.exists() and test.exists()):
        pytest.skip(f"letter.scale / letter.scale.t not in {SHARED}")
    y, x = ll.svm_read_problem(str(train))
    m = ll.train(y, x, "-s 1 -q")
    model_path = tmp_path / "letter.model"
    ll.save_model(str(model_path), m)
    ty, tx = ll.svm_read_problem(str(test))
    expect, _, _ = ll.predict(ty, tx, m, "-q")
    r = run([test, model_path, "-"])
    assert r.returncode == 0, r.stderr.decode()
    np.testing.assert_array_equal(read_labels(r.stdout), expect)
    correct = int(np.sum(np.array(expect) == np.array(ty)))
    assert r.stderr.decode().splitlines() == [
        "Accuracy = %g%% (%d/%d)" % (100.0 * correct / len(ty), correct, len(ty))]


@pytest.mark.shared
@shared
def test_cli_mushrooms_labels_1_and_2(tmp_path):
    """Binary with labels {1, 2}: label order, precision/recall of the first label, AUC."""
    path = SHARED / "mushrooms" / "mushrooms"
    if not path.exists():
        pytest.skip(f"{path} not found")
    y, x = ll.svm_read_problem(str(path))
    m = ll.train(y, x, "-s 2 -c 0.01 -q")
    model_path = tmp_path / "mushrooms.model"
    ll.save_model(str(model_path), m)
    expect, _, dec = ll.predict(y, x, m, "-q")
    r = run([path, model_path, "-"])
    assert r.returncode == 0, r.stderr.decode()
    np.testing.assert_array_equal(read_labels(r.stdout), expect)
    lines = r.stderr.decode().splitlines()
    correct = int(np.sum(np.array(expect) == np.array(y)))
    assert lines[0] == "Accuracy = %g%% (%d/%d)" % (100.0 * correct / len(y), correct, len(y))
    pos = m.get_labels()[0]
    p, rc, f1, _ = skm.precision_recall_fscore_support(y, expect, labels=[pos], average=None)
    assert lines[1] == ("Precision = %g%% (%d/%d), Recall = %g%% (%d/%d), F1 = %g (label %d)" % (
        100 * p[0], np.sum((np.array(expect) == pos) & (np.array(y) == pos)),
        np.sum(np.array(expect) == pos), 100 * rc[0],
        np.sum((np.array(expect) == pos) & (np.array(y) == pos)), np.sum(np.array(y) == pos),
        f1[0], pos))
    auc = skm.roc_auc_score(np.array(y) == pos, np.array(dec)[:, 0])
    assert lines[2] == "ROC AUC = %g (label %d ranked by decision value)" % (auc, pos)

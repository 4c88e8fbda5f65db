"""``svmtool svm_learn`` / ``svm_classify`` (SVMlight 6.02's command lines) and SVMlight's model
files (V6.02 header, kernel models, regression and ranking models).

Truths used: libsvm-official (LIBSVM's C-SVC and epsilon-SVR are SVMlight's -z c -b 1 and -z r
problems) for decision values and the threshold; the box-constrained dual of the bias-free and
ranking problems solved by scipy's L-BFGS-B on tiny data; SVMlight's kernel formulas evaluated
by hand on the written model file; SVMlight's default C recomputed from the data.  When
SVMlight's own programs are found (``svm_learn`` / ``svm_classify`` on PATH, or in the folder
``$SVMLIGHT_BIN``), models are crossed both ways and the printed estimates compared; otherwise
those tests skip.
"""

import re
import subprocess

import numpy as np
import pytest

from conftest import DATA, TESTDATA, shared_file, svmlight_programs
from svmtool.cli import run
from svmtool.io.model_io import load_model
from svmtool.io.svmlight import load_data

HEART = DATA / "heart_scale"


def cli(capsys, *args):
    code = run([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def number(out, pattern):
    m = re.search(pattern, out)
    assert m, (pattern, out)
    return float(m.group(1))


@pytest.fixture
def example1(tmp_path):
    """SVMlight's example1 layout (train.dat, test.dat) on heart_scale's rows: tiny data."""
    d = tmp_path / "example1"
    d.mkdir()
    rows = HEART.read_text().splitlines()
    (d / "train.dat").write_text("\n".join(rows[:180]) + "\n")
    (d / "test.dat").write_text("\n".join(rows[180:]) + "\n")
    return d


def libsvm_decisions(args, train, test):
    svmutil = pytest.importorskip("libsvm.svmutil")
    y, x = svmutil.svm_read_problem(str(train))
    ty, tx = svmutil.svm_read_problem(str(test))
    m = svmutil.svm_train(y, x, args + " -q")
    _, _, dec = svmutil.svm_predict(ty, tx, m, "-q")
    dec = np.array(dec)[:, 0]
    if m.get_labels()[0] < 0 and "-s 3" not in args:
        dec = -dec                 # LIBSVM's decision value > 0 means its first label
    return dec


# --- the documented argument vectors ---------------------------------------------------------

def test_doc_vectors_learn_then_classify(example1, capsys, monkeypatch):
    """svm_learn example1/train.dat example1/model; svm_classify example1/test.dat
    example1/model example1/predictions (SVMlight's documentation page)."""
    monkeypatch.chdir(example1.parent)
    code, out, err = cli(capsys, "svm_learn", "example1/train.dat", "example1/model")
    assert code == 0, err
    assert "Scanning examples...done" in out and "(180 examples read)" in out
    assert "Optimization finished (" in out and "Writing model file...done" in out
    assert re.search(r"XiAlpha-estimate of the error: error<=[0-9.]+% \(rho=1.00,depth=0\)", out)
    text = (example1 / "model").read_text().splitlines()
    assert text[0] == "SVM-light Version V6.02" and text[1].startswith("0 # kernel type")
    code, out, err = cli(capsys, "svm_classify", "example1/test.dat", "example1/model",
                         "example1/predictions")
    assert code == 0, err
    dec = np.loadtxt(example1 / "predictions")
    y = load_data(str(example1 / "test.dat")).y
    correct = int(np.sum((dec > 0) == (y > 0)))
    assert f"Accuracy on test set: {100.0 * correct / len(y):.2f}% ({correct} correct, " \
           f"{len(y) - correct} incorrect, {len(y)} total)" in out
    tp = np.sum((dec > 0) & (y > 0))
    assert "Precision/recall on test set: %.2f%%/%.2f%%" % (
        100.0 * tp / np.sum(dec > 0), 100.0 * tp / np.sum(y > 0)) in out
    # the written values are the model's decision values (%.8g)
    m = load_model(str(example1 / "model"))
    np.testing.assert_allclose(dec, m.decision_function(load_data(str(example1 / "test.dat")))
                               [:, 0], rtol=1e-7, atol=1e-7)


def test_default_C_is_svmlights(example1, capsys):
    """No -c: C = 1 / avg(|x|)^2 (the distance from the origin in the kernel's space)."""
    X = load_data(str(example1 / "train.dat"))
    sq = np.diff(X.indptr).astype(float) * 0
    for i in range(X.n_rows):
        v = X.data[X.indptr[i]:X.indptr[i + 1]]
        sq[i] = v @ v
    code, out, _ = cli(capsys, "svm_learn", example1 / "train.dat", example1 / "m")
    assert number(out, r"default regularization parameter C=([0-9.]+)") == \
        pytest.approx(1.0 / np.mean(np.sqrt(sq)) ** 2, abs=5e-5)
    # rbf: |x|_K^2 = 2 - 2 exp(-g |x|^2)
    code, out, _ = cli(capsys, "svm_learn", "-t", 2, "-g", 0.3, example1 / "train.dat",
                       example1 / "m")
    d = np.sqrt(2.0 - 2.0 * np.exp(-0.3 * sq))
    assert number(out, r"default regularization parameter C=([0-9.]+)") == \
        pytest.approx(1.0 / np.mean(d) ** 2, abs=5e-5)


@pytest.mark.parametrize("kernel", [("-t", 0), ("-t", 2, "-g", 0.5), ("-t", 1, "-d", 2, "-s",
                                                                      0.5, "-r", 1)])
def test_classification_is_libsvms_c_svc(example1, capsys, kernel):
    """-z c -b 1 -c 2 -j 3 is LIBSVM's C-SVC with C+ = 6, C- = 2: the same decision values."""
    code, _, err = cli(capsys, "svm_learn", "-c", 2, "-j", 3, "-e", 1e-6, *kernel,
                       example1 / "train.dat", example1 / "model")
    assert code == 0, err
    m = load_model(str(example1 / "model"))
    ours = m.decision_function(load_data(str(example1 / "test.dat")))[:, 0]
    t = dict(zip(kernel[::2], kernel[1::2]))
    args = f"-s 0 -c 2 -w1 3 -w-1 1 -e 1e-6 -t {t['-t']} -g {t.get('-g', t.get('-s', 1))} " \
           f"-r {t.get('-r', 0)} -d {t.get('-d', 3)}"
    ref = libsvm_decisions(args, example1 / "train.dat", example1 / "test.dat")
    np.testing.assert_allclose(ours, ref, atol=2e-4 * max(1.0, np.abs(ref).max()))


def test_regression_is_libsvms_epsilon_svr(tmp_path, capsys):
    """-z r -w 0.2 -c 3 -t 2 is LIBSVM's epsilon-SVR -p 0.2; predict on the model reports MSE
    and squared correlation, never an accuracy."""
    tr, te = tmp_path / "tr", tmp_path / "te"
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.05 * rng.normal(size=80)
    for path, rows in ((tr, range(60)), (te, range(60, 80))):
        path.write_text("".join("%.6f %s\n" % (y[i], " ".join("%d:%.6f" % (j + 1, X[i, j])
                                                               for j in range(3)))
                                for i in rows))
    model = tmp_path / "model"
    code, out, err = cli(capsys, "svm_learn", "-z", "r", "-w", 0.2, "-c", 3, "-t", 2, "-g", 0.5,
                         "-e", 1e-6, tr, model)
    assert code == 0, err
    assert "Optimization finished (maxdiff=" in out and "misclassified" not in out
    text = model.read_text().splitlines()
    assert text[1].startswith("2 # kernel type") and "svmtool task regression" in text[10]
    assert text[8].startswith("120 # number of training documents")    # SVMlight's 2n
    m = load_model(str(model))
    assert m.is_regression()
    ours = m.decision_function(load_data(str(te)))[:, 0]
    ref = libsvm_decisions("-s 3 -p 0.2 -c 3 -t 2 -g 0.5 -e 1e-6", tr, te)
    np.testing.assert_allclose(ours, ref, atol=1e-4)
    code, _, err = cli(capsys, "predict", te, model, tmp_path / "p")
    assert code == 0 and "Mean squared error" in err and "Accuracy" not in err
    mse = np.mean((ours - y[60:]) ** 2)
    assert number(err, r"Mean squared error = (\S+)") == pytest.approx(mse, rel=1e-4)
    # svm_classify: decision values, no accuracy on real targets
    code, out, _ = cli(capsys, "svm_classify", te, model, tmp_path / "d")
    assert code == 0 and "Accuracy" not in out and "Mean squared error on test set" in out
    np.testing.assert_allclose(np.loadtxt(tmp_path / "d"), ours, rtol=1e-7, atol=1e-7)


def _box_dual(Q, C):
    """min 1/2 a'Qa - e'a, 0 <= a <= C (no equality constraint): scipy's L-BFGS-B."""
    from scipy.optimize import minimize

    n = len(Q)
    r = minimize(lambda a: (0.5 * a @ Q @ a - a.sum(), Q @ a - 1.0), np.zeros(n), jac=True,
                 method="L-BFGS-B", bounds=[(0, c) for c in np.broadcast_to(C, (n,))],
                 options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
    return r.x, r.fun


def test_unbiased_is_the_box_dual(tmp_path, capsys):
    """-b 0: no threshold; the model equals the optimum of the bias-free dual (rbf)."""
    rows = HEART.read_text().splitlines()[:40]
    tr = tmp_path / "tr"
    tr.write_text("\n".join(rows) + "\n")
    prob = load_data(str(tr))
    X = prob.indptr, prob.indices, prob.data
    import scipy.sparse as sp

    D = sp.csr_matrix((X[2], X[1], X[0]), shape=(prob.n_rows, prob.n_features)).toarray()
    y = np.where(prob.y > 0, 1.0, -1.0)
    sq = (D * D).sum(1)
    K = np.exp(-0.2 * (sq[:, None] + sq[None, :] - 2 * D @ D.T))
    a, _ = _box_dual(y[:, None] * y[None, :] * K, 1.5)
    model = tmp_path / "m"
    code, out, err = cli(capsys, "svm_learn", "-b", 0, "-t", 2, "-g", 0.2, "-c", 1.5, "-e",
                         1e-7, tr, model)
    assert code == 0, err
    lines = model.read_text().splitlines()
    assert float(lines[10].split("#")[0]) == 0.0
    m = load_model(str(model))
    np.testing.assert_allclose(m.decision_function(D)[:, 0], K @ (a * y), atol=1e-5)


def test_ranking_is_the_pairwise_problem(tmp_path, capsys):
    """-z p on SVMlight's example3: the pairs of each qid; the model's w is the optimum of the
    explicit pairwise dual; predict on it reports pairwise accuracy."""
    tr, te = TESTDATA / "example3_train.dat", TESTDATA / "example3_test.dat"
    prob = load_data(str(tr))
    import scipy.sparse as sp

    D = sp.csr_matrix((prob.data, prob.indices, prob.indptr),
                      shape=(prob.n_rows, prob.n_features)).toarray()
    diffs = [D[i] - D[j] for i in range(prob.n_rows) for j in range(prob.n_rows)
             if prob.qid[i] == prob.qid[j] and prob.y[i] > prob.y[j]]
    P = np.array(diffs)
    C = 1.0 / np.mean(np.linalg.norm(P, axis=1)) ** 2          # SVMlight's default, on pairs
    a, _ = _box_dual(P @ P.T, C)
    w = P.T @ a
    model = tmp_path / "m"
    code, out, err = cli(capsys, "svm_learn", "-z", "p", "-e", 1e-6, tr, model)
    assert code == 0, err
    assert f"Constructing {len(P)} rank constraints...done." in out
    assert number(out, r"C=([0-9.]+)") == pytest.approx(C, abs=5e-5)
    m = load_model(str(model))
    assert m.report["ranking"]
    np.testing.assert_allclose(m.w[:prob.n_features, 0], w, atol=1e-3)
    code, _, err = cli(capsys, "predict", te, model, tmp_path / "p")
    assert code == 0 and "Pairwise accuracy" in err and "Accuracy =" not in err


@pytest.mark.parametrize("bias", (1, 0))
def test_leave_one_out_is_retraining_without_each_example(tmp_path, capsys, bias):
    """-x 1: the leave-one-out error equals retraining from scratch without each example in
    turn (brute force; LIBSVM's C-SVC for -b 1, the box dual for -b 0), whatever SVMlight's
    xi-alpha pruning skipped."""
    from svmtool.solvers.kernel.svmlight_train import LightParams, train

    rows = HEART.read_text().splitlines()[:36]
    tr = tmp_path / "tr"
    tr.write_text("\n".join(rows) + "\n")
    prob = load_data(str(tr))
    res = train(prob, LightParams(C=2.0, kernel_type=2, gamma=0.3, biased=bias == 1,
                                  eps=1e-6, loo=True))
    import scipy.sparse as sp

    D = sp.csr_matrix((prob.data, prob.indices, prob.indptr),
                      shape=(prob.n_rows, prob.n_features)).toarray()
    y = np.where(prob.y > 0, 1.0, -1.0)
    sq = (D * D).sum(1)
    K = np.exp(-0.3 * (sq[:, None] + sq[None, :] - 2 * D @ D.T))
    wrong = np.zeros(len(y), dtype=bool)
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        if bias:
            svmutil = pytest.importorskip("libsvm.svmutil")
            m = svmutil.svm_train(list(y[keep]), [dict(enumerate(r, 1)) for r in D[keep]],
                                  "-s 0 -t 2 -g 0.3 -c 2 -e 1e-8 -q")
            _, _, dec = svmutil.svm_predict([y[i]], [dict(enumerate(D[i], 1))], m, "-q")
            f = dec[0][0] * (1 if m.get_labels()[0] > 0 else -1)
        else:
            a, _ = _box_dual((y[keep][:, None] * y[keep][None, :]) * K[np.ix_(keep, keep)], 2.0)
            f = K[i, keep] @ (a * y[keep])
        wrong[i] = y[i] * f <= 0
    loo = res.stats["loo"]
    np.testing.assert_array_equal(loo["errors"], wrong)
    assert loo["error"] == pytest.approx(100.0 * wrong.sum() / len(y))
    assert loo["computed"] < len(y)                    # the pruning skipped some


# --- model files -------------------------------------------------------------------------------

@pytest.mark.parametrize("ktype,header,kfun", [
    (1, (2, 1.0, 0.5, 1.5), lambda u, v: (0.5 * u @ v + 1.5) ** 2),
    (2, (3, 0.7, 1.0, 1.0), lambda u, v: np.exp(-0.7 * ((u - v) @ (u - v)))),
    (3, (3, 1.0, 0.3, -0.2), lambda u, v: np.tanh(0.3 * u @ v - 0.2)),
])
def test_kernel_model_file_read_and_written(tmp_path, ktype, header, kfun):
    """A kernel model in SVMlight's layout: decision = sum alpha_y K(sv, x) - b with SVMlight's
    kernel formulas; written again, the text reads back to the same decision values."""
    d, g, s, r = header
    svs = [(0.5, {1: 1.0, 3: -2.0}), (-1.25, {2: 0.5}), (0.75, {1: -1.0, 2: 1.0, 3: 0.25})]
    text = "\n".join(["SVM-light Version V6.02", f"{ktype} # kernel type",
                      f"{d} # kernel parameter -d", f"{g} # kernel parameter -g",
                      f"{s} # kernel parameter -s", f"{r} # kernel parameter -r",
                      "empty# kernel parameter -u", "3 # highest feature index",
                      "10 # number of training documents", "4 # number of support vectors plus 1",
                      "0.3 # threshold b, each following line is a SV (starting with alpha*y)"]
                     + ["%g %s #" % (c, " ".join(f"{j}:{v}" for j, v in f.items()))
                        for c, f in svs]) + "\n"
    p = tmp_path / "m"
    p.write_text(text)
    m = load_model(str(p))
    x = np.array([[0.2, -0.4, 1.0], [1.0, 1.0, 1.0]])
    want = [sum(c * kfun(np.array([f.get(j, 0.0) for j in (1, 2, 3)]), row) for c, f in svs)
            - 0.3 for row in x]
    np.testing.assert_allclose(m.decision_function(x)[:, 0], want, rtol=1e-12)
    from svmtool import api

    again = tmp_path / "again"
    api.save_model(m, str(again))                  # its own format: SVMlight's, V6.02
    lines = again.read_text().splitlines()
    assert lines[0] == "SVM-light Version V6.02" and lines[1].startswith(f"{ktype} # kernel")
    np.testing.assert_allclose(load_model(str(again)).decision_function(x)[:, 0], want,
                               rtol=1e-12)
    api.save_model(m, str(again), "svmperf")
    assert again.read_text().startswith("SVM-light Version V6.20\n")


def test_kernel_models_refused_with_reasons(tmp_path):
    from svmtool.errors import ModelFormatError

    base = ["SVM-light Version V6.02", "4 # kernel type", "3 # kernel parameter -d",
            "1 # kernel parameter -g", "1 # kernel parameter -s", "1 # kernel parameter -r",
            "empty# kernel parameter -u", "3 # highest feature index",
            "10 # number of training documents", "2 # number of support vectors plus 1",
            "0 # threshold b", "1 1:1 #"]
    p = tmp_path / "m"
    p.write_text("\n".join(base) + "\n")
    with pytest.raises(ModelFormatError, match="user-defined kernel"):
        load_model(str(p))
    base[1] = "2 # kernel type"
    base[11] = "1 2:1 1:1 #"
    p.write_text("\n".join(base) + "\n")
    with pytest.raises(ModelFormatError, match="not increasing"):
        load_model(str(p))
    base[11] = "1 1:1 #"
    base[10] = "0 # threshold b; svmtool task dancing"
    p.write_text("\n".join(base) + "\n")
    with pytest.raises(ModelFormatError, match="svmtool task"):
        load_model(str(p))


def test_train_writes_svmlight_kernel_models(example1, capsys):
    """svmtool train -s c_svc --model-format svmlight on labels 1 / 2, 1 first (LIBSVM's
    first label): written negated, so that a decision value > 0 means the larger label (+1 in
    SVMlight's rule), the labels in the threshold line's comment; predictions unchanged."""
    rows = (example1 / "train.dat").read_text().splitlines()
    relabel = sorted(("1" if r.startswith("-1") else "2") + r[r.index(" "):] for r in rows)
    (example1 / "nf.dat").write_text("\n".join(relabel) + "\n")
    code, _, err = cli(capsys, "train", "-q", "-s", "c_svc", "-t", 2, "-g", 0.5,
                       "--model-format", "svmlight", example1 / "nf.dat", example1 / "m")
    assert code == 0, err
    code, _, err = cli(capsys, "train", "-q", "-s", "c_svc", "-t", 2, "-g", 0.5,
                       example1 / "nf.dat", example1 / "m_libsvm")
    assert code == 0, err
    te = load_data(str(example1 / "test.dat"))
    a, b = load_model(str(example1 / "m")), load_model(str(example1 / "m_libsvm"))
    assert list(b.labels) == [1.0, 2.0] and list(a.labels) == [2.0, 1.0]
    assert "svmtool labels 2 1" in (example1 / "m").read_text().splitlines()[10]
    np.testing.assert_allclose(a.decision_function(te), -b.decision_function(te), atol=1e-12)
    np.testing.assert_array_equal(a.predict(te), b.predict(te))
    # three classes do not fit SVMlight's one decision function
    (example1 / "three.dat").write_text("1 1:1\n2 1:2\n3 1:3\n")
    code, _, err = cli(capsys, "train", "-q", "-s", "c_svc", "--model-format", "svmlight",
                       example1 / "three.dat", example1 / "m3")
    assert code == 2 and err.count("\n") == 1 and "3 classes" in err and "LIBSVM" in err


# --- refusals, verbosity, standard streams -----------------------------------------------------

@pytest.mark.parametrize("args,named", [
    (("-i", 1), "-i"), (("-z", "r", "-x", 1), "-x 1"), (("-t", 4), "-t 4"), (("-z", "o"), "-z o"),
    (("-k", 2), "-k 2"), (("-p", 0.5), "-p"), (("-#", 100), "-#"), (("-q", 5), "-q"),
    (("-a", "alphas"), "-a"), (("-n", 3), "-n"), (("-f", 0), "-f"), (("-h", 10), "-h"),
    (("-y", "x"), "-y"), (("-l", "x"), "-l"), (("-z", "p", "-t", 2), "-t 2"),
    (("-z", "r", "-b", 0), "-b 0"), (("-z", "r", "-j", 2), "-j"),
])
def test_options_without_counterpart_are_refused_by_name(example1, capsys, args, named):
    code, out, err = cli(capsys, "svm_learn", *args, example1 / "train.dat", example1 / "m")
    assert code == 2 and named in err and err.count("\n") == 1, (out, err)
    assert "Traceback" not in err and not (example1 / "m").exists()


def test_bad_values_and_help(example1, capsys):
    for args in (("-c", "x"), ("-b", 2), ("-e", 0), ("-j", 0), ("-z", "q"), ("-t", 7), ()):
        code, _, err = cli(capsys, "svm_learn", *args, *([] if not args else
                                                         [example1 / "train.dat"]))
        assert code == 2 and err.count("\n") == 1, (args, err)
    code, out, _ = cli(capsys, "svm_learn", "-?")
    assert code == 0 and "usage: svmtool svm_learn" in out
    code, out, _ = cli(capsys, "svm_classify", "--help")
    assert code == 0 and "usage: svmtool svm_classify" in out
    code, _, err = cli(capsys, "svm_classify", "-f", 3, example1 / "test.dat", example1 / "m",
                       example1 / "p")
    assert code == 2 and err.count("\n") == 1
    (example1 / "bad.dat").write_text("1 1:0.5\n+1 2:x\n")
    code, _, err = cli(capsys, "svm_learn", example1 / "bad.dat", example1 / "m")
    assert code == 2 and "bad.dat:2" in err and err.count("\n") == 1


def test_quiet_verbosity_and_stdout(example1, capsys):
    code, out, err = cli(capsys, "svm_learn", "-v", 0, example1 / "train.dat", example1 / "m")
    assert code == 0 and out == "" and err == ""
    code, out, err = cli(capsys, "-q", "svm_learn", example1 / "train.dat", example1 / "m")
    assert code == 0 and out == "" and err == ""
    code, out, err = cli(capsys, "svm_learn", example1 / "train.dat", "-")
    assert code == 0 and out.startswith("SVM-light Version V6.02\n")
    assert "Writing model file...done" in err                  # the report moved to stderr
    code, out, err = cli(capsys, "svm_classify", "-v", 1, "-f", 0, example1 / "test.dat",
                         example1 / "m", "-")
    first = out.splitlines()[0]
    assert re.fullmatch(r"[0-9.e+-]+:[+-]1 [-0-9.e+]+:[+-]1", first) and "Accuracy" in err
    code, out, err = cli(capsys, "svm_classify", example1 / "test.dat", example1 / "nothere",
                         example1 / "p")
    assert code == 2 and err.count("\n") == 1


# --- against SVMlight's own programs, when they are installed ----------------------------------


@pytest.mark.parametrize("args", [(), ("-t", 2, "-g", 0.5), ("-z", "r"),
                                  ("-z", "r", "-t", 2, "-g", 1)])
def test_models_cross_with_svmlight(tmp_path, capsys, args):
    """svm_classify reads svmtool's model and svmtool reads svm_learn's: the same decision
    values; both tools' models agree (the same problem) to the solvers' tolerance."""
    learn, classify = svmlight_programs()
    tr = HEART
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    subprocess.run([learn, *map(str, args), "-e", "0.0001", str(tr), str(theirs)], check=True,
                   capture_output=True)
    code, out, err = cli(capsys, "svm_learn", *args, "-e", 0.0001, tr, ours)
    assert code == 0, err
    X = load_data(str(tr))
    for model in (theirs, ours):
        pred = tmp_path / "pred"
        subprocess.run([classify, "-v", "0", str(tr), str(model), str(pred)], check=True,
                       capture_output=True)
        mine = load_model(str(model)).decision_function(X)[:, 0]
        # svm_classify prints %.8g and keeps the features in single precision
        np.testing.assert_allclose(np.loadtxt(pred), mine, rtol=1e-6,
                                   atol=1e-6 * np.abs(mine).max())
    a = load_model(str(theirs)).decision_function(X)[:, 0]
    b = load_model(str(ours)).decision_function(X)[:, 0]
    np.testing.assert_allclose(a, b, atol=2e-3 * np.abs(a).max())


@pytest.mark.shared
def test_xi_alpha_estimates_match_svmlight(tmp_path, capsys):
    learn, _ = svmlight_programs()
    tr = shared_file("svmlight_example1", "train.dat")
    p = subprocess.run([learn, str(tr), str(tmp_path / "theirs")], check=True,
                       capture_output=True, text=True)
    code, out, err = cli(capsys, "svm_learn", tr, tmp_path / "ours")
    assert code == 0, err
    for key in ("error<=", "recall=>", "precision=>", "C="):
        pat = re.escape(key) + r"([0-9.]+)"
        assert number(out, pat) == pytest.approx(number(p.stdout, pat), abs=0.051)


def test_leave_one_out_matches_svmlight(tmp_path, capsys):
    learn, _ = svmlight_programs()
    p = subprocess.run([learn, "-x", "1", "-t", "2", "-g", "0.5", str(HEART),
                        str(tmp_path / "theirs")], check=True, capture_output=True, text=True)
    code, out, err = cli(capsys, "svm_learn", "-x", 1, "-t", 2, "-g", 0.5, HEART,
                         tmp_path / "ours")
    assert code == 0, err
    for key in ("error=", "recall=", "precision="):
        pat = "Leave-one-out estimate of the [a-z]+: " + re.escape(key) + r"([0-9.]+)"
        assert number(out, pat) == pytest.approx(number(p.stdout, pat), abs=0.4)


# --- regression models: SVMlight's files do not say their task ----------------------------------

def _real_targets(tmp_path):
    """heart_scale's rows with a real-valued target (its age feature, times 10)."""
    path = tmp_path / "reg.svm"
    lines = []
    for row in HEART.read_text().splitlines():
        feats = row.split()[1:]
        age = dict(f.split(":") for f in feats).get("1", "0")
        lines.append(" ".join([repr(10 * float(age))] + feats[1:]))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_untagged_regression_model_predicts_values(tmp_path, capsys):
    """An SVMlight regression model without svmtool's tag (as svm_learn -z r writes it): predict
    takes it as a regressor by its real-valued test labels and writes the decision values, the
    same numbers --decision-values gives; `info` says it could not know the task, and why."""
    data = _real_targets(tmp_path)
    model = tmp_path / "m"
    code, _, err = cli(capsys, "svm_learn", "-z", "r", "-t", 2, "-g", 0.5, data, model)
    assert code == 0, err
    text = model.read_text()
    assert "; svmtool task regression" in text
    code, out, _ = cli(capsys, "info", "--json", model)
    assert code == 0 and '"task": "regression"' in out and "svmtool task regression" in out
    model.write_text(text.replace("; svmtool task regression", ""))
    code, out, _ = cli(capsys, "info", model)
    assert code == 0 and "task: unknown" in out and "svm_classify" in out
    code, _, err = cli(capsys, "predict", data, model, tmp_path / "p")
    assert code == 0 and "Mean squared error" in err
    code, _, _ = cli(capsys, "predict", "--decision-values", data, model, tmp_path / "d")
    assert code == 0
    values = np.loadtxt(tmp_path / "p")
    assert len(np.unique(values)) > 100
    np.testing.assert_array_equal(values, np.loadtxt(tmp_path / "d"))
    # with +1/-1 test labels the same file is taken as a classifier: labels are written
    code, _, err = cli(capsys, "predict", HEART, model, tmp_path / "c")
    assert code == 0 and "Accuracy" in err
    assert set(np.loadtxt(tmp_path / "c")) <= {1.0, -1.0}


def test_svm_learn_regression_model_predicts_svm_classify_values(tmp_path, capsys):
    """SVMlight's own svm_learn -z r model: svmtool predict writes svm_classify's numbers."""
    learn, classify = svmlight_programs()
    data = _real_targets(tmp_path)
    model = tmp_path / "theirs"
    subprocess.run([learn, "-z", "r", str(data), str(model)], check=True, capture_output=True)
    subprocess.run([classify, str(data), str(model), str(tmp_path / "c")], check=True,
                   capture_output=True)
    code, _, err = cli(capsys, "predict", data, model, tmp_path / "p")
    assert code == 0 and "Mean squared error" in err, err
    theirs, ours = np.loadtxt(tmp_path / "c"), np.loadtxt(tmp_path / "p")
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6 * np.abs(theirs).max())

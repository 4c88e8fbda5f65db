"""`svmtool svm-train / svm-predict / svm-scale` with the argument vectors of LIBSVM's README
examples: the lines LIBSVM prints, compared number by number with libsvm-official given the same
options; models that LIBSVM reads; errors as one line with exit status 2."""

import re

import numpy as np
import pytest
from conftest import DATA, run_cli, write_svmlight

from svmtool.cli import run
from svmtool.io.svmlight import load_svmlight
from svmtool.problem import Problem

svmutil = pytest.importorskip("libsvm.svmutil")
HEART = DATA / "heart_scale"
NUM = r"(-?[0-9.]+(?:e[-+]?\d+)?|-?nan|-?inf)"


def numbers(lines, key):
    """The values of 'key = value' in LIBSVM's lines, in order."""
    out = []
    for line in lines:
        for m in re.finditer(rf"\b{re.escape(key)} = {NUM}", line):
            out.append(float(m.group(1)))
    return out


def ours(capfd, *args):
    code = run(["svm-train", *map(str, args)] if args[0] != "svm-predict" and args[0] !=
               "svm-scale" else list(map(str, args)))
    out = capfd.readouterr()
    return code, out.out.splitlines(), out.err


def theirs(capfd, prob, opts):
    capfd.readouterr()
    m = svmutil.svm_train(list(prob.y), prob.X, opts)
    lines = capfd.readouterr().out.splitlines()
    return m, lines


@pytest.fixture(scope="module")
def heart():
    return load_svmlight(HEART)


@pytest.fixture(scope="module")
def labelled(tmp_path_factory, heart):
    """heart_scale with the classes 1, -2 and 4 (README's -w1 1 -w-2 5 -w4 2 example)."""
    y = np.where(heart.y > 0, 1.0, -2.0)
    y[heart.X.toarray()[:, 0] > 0.3] = 4.0
    p = Problem(heart.indptr, heart.indices, heart.data, y, heart.n_features)
    path = tmp_path_factory.mktemp("cli") / "three"
    write_svmlight(p, path)
    return p, path


README_VECTORS = [
    "-s 0 -c 5 -t 2 -g 0.5 -e 0.1",
    "-s 3 -p 0.1 -t 0",
    "-s 0 -b 1",
    "-s 1 -n 0.4 -t 1 -d 2 -r 1",
    "-s 2 -n 0.2",
    "-s 4 -c 3 -h 0",
    "-s 0 -t 3 -g 0.01 -r -0.5 -m 1",
]


@pytest.mark.parametrize("opts", README_VECTORS)
def test_train_lines_match_libsvm(capfd, heart, tmp_path, opts):
    model = tmp_path / "m"
    code, lines, err = ours(capfd, *opts.split(), HEART, model)
    assert code == 0, err
    _, ref = theirs(capfd, heart, opts)
    for key in ("obj", "rho"):
        a, b = numbers(lines, key), numbers(ref, key)
        assert len(a) == len(b) > 0
        # -b 1 trains 5 extra folds per pair: their obj differ (other folds), the last is the model
        pairs = list(zip(a, b))[-1:] if "-b 1" in opts else list(zip(a, b))
        for x, y in pairs:
            assert abs(x - y) <= 2e-3 * max(1.0, abs(y)) + 1e-6, (key, x, y)
    for key in ("nSV", "Total nSV"):
        a, b = numbers(lines, key)[-1:], numbers(ref, key)[-1:]
        assert all(abs(x - y) <= max(1, 0.01 * y) for x, y in zip(a, b)), (key, a, b)
    assert [line.split(" =")[0] for line in lines if "=" in line][-3:] == \
        [line.split(" =")[0] for line in ref if "=" in line][-3:]
    # the stock reader takes the model and predicts as svmtool does
    m = svmutil.svm_load_model(str(model))
    pred, _, _ = svmutil.svm_predict(list(heart.y), heart.X, m, "-q")
    code, out, err = ours(capfd, "svm-predict", HEART, model, tmp_path / "out")
    assert code == 0, err
    assert np.allclose(np.loadtxt(tmp_path / "out"), pred)
    assert out[-1].endswith("(regression)") or out[-1].startswith("Accuracy = ")


def test_weights_of_three_classes(capfd, labelled, tmp_path):
    prob, path = labelled
    opts = "-c 10 -w1 1 -w-2 5 -w4 2"
    code, lines, err = ours(capfd, *opts.split(), path, tmp_path / "m")
    assert code == 0, err
    _, ref = theirs(capfd, prob, opts)
    for x, y in zip(numbers(lines, "obj"), numbers(ref, "obj")):
        assert abs(x - y) <= 1e-3 * abs(y)
    assert numbers(lines, "Total nSV") == numbers(ref, "Total nSV")


def test_default_model_name_and_cross_validation(capfd, heart, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, lines, err = ours(capfd, "-s", "0", "-c", "100", "-g", "0.1", "-v", "5", HEART)
    assert code == 0, err
    acc = numbers(lines, "Cross Validation Accuracy")
    assert lines[-1].startswith("Cross Validation Accuracy = ") and lines[-1].endswith("%")
    assert not (tmp_path / "heart_scale.model").exists()       # -v writes no model
    code, lines, err = ours(capfd, "-q", "-s", "3", "-v", "4", HEART)
    assert code == 0 and lines[0].startswith("Cross Validation Mean squared error = ")
    assert lines[1].startswith("Cross Validation Squared correlation coefficient = ")
    code, lines, err = ours(capfd, "-q", HEART)
    assert code == 0 and lines == [] and (tmp_path / "heart_scale.model").exists()
    assert len(acc) == 1 and 70 < acc[0] <= 100


def test_probability_output_and_log_loss(capfd, heart, tmp_path):
    """-b 1: svm-predict's 'labels' header and probabilities; log loss within 2% of
    libsvm-official's on heart_scale (the folds differ)."""
    model = tmp_path / "m"
    code, _, err = ours(capfd, "-q", "-b", "1", HEART, model)
    assert code == 0, err
    code, out, err = ours(capfd, "svm-predict", "-b", "1", HEART, model, tmp_path / "o")
    rows = (tmp_path / "o").read_text().splitlines()
    assert rows[0] == "labels 1 -1" and len(rows) == heart.n_rows + 1
    p = np.array([[float(v) for v in r.split()] for r in rows[1:]])
    y = heart.y
    ours_ll = -np.mean(np.log(np.where(y > 0, p[:, 1], p[:, 2])))
    ref = svmutil.svm_train(list(y), heart.X, "-b 1 -q")
    _, _, pr = svmutil.svm_predict(list(y), heart.X, ref, "-b 1 -q")
    pr = np.array(pr)
    col = {lab: k for k, lab in enumerate(ref.get_labels())}
    ref_ll = -np.mean(np.log(np.where(y > 0, pr[:, col[1]], pr[:, col[-1]])))
    assert abs(ours_ll - ref_ll) <= 0.02 * ref_ll, (ours_ll, ref_ll)


def test_scale_then_train_then_predict(capfd, tmp_path):
    """README: svm-scale -l -1 -u 1 -s range train > train.scale; svm-scale -r range test."""
    rng = tmp_path / "range"
    code, out, err = ours(capfd, "svm-scale", "-l", "-1", "-u", "1", "-s", rng, DATA / "a9a.t")
    assert code == 0, err
    assert rng.read_text().startswith("x\n-1 1\n")
    (tmp_path / "scaled").write_text("\n".join(out[:300]) + "\n")
    code, out2, err = ours(capfd, "svm-scale", "-r", rng, DATA / "a9a.t")
    assert code == 0 and out2 == out


def test_scale_prints_svm_scales_text(capfd):
    """svm-scale's own number format: the label with %.17g, each feature index:%g, every token
    followed by a space."""
    code, out, err = ours(capfd, "svm-scale", HEART)
    assert code == 0, err
    assert out[0] == ("1 1:0.708333 2:1 3:1 4:-0.320755 5:-0.105023 6:-1 7:1 8:-0.419847 9:-1 "
                      "10:-0.225806 12:1 13:-1 ")


@pytest.mark.parametrize("args", [[], ["-l", "0", "-u", "1"], ["-y", "0", "1"]])
def test_scale_output_is_svm_scales_bytes(tmp_path, args):
    """Byte for byte the output of LIBSVM's svm-scale, when that program is on PATH."""
    import shutil
    import subprocess

    prog = shutil.which("svm-scale")
    if prog is None:
        pytest.skip("LIBSVM's svm-scale is not on PATH")
    from svmtool_proc import svmtool

    ref = subprocess.run([prog, *args, str(HEART)], capture_output=True, check=True).stdout
    r = svmtool("svm-scale", *args, HEART)
    assert r.returncode == 0 and r.stdout == ref


@pytest.mark.parametrize("args, message", [
    (["svm-train", "-x", "1", HEART], "unknown option: -x"),
    (["svm-train", "-s", "7", HEART], "-s: unknown svm type"),
    (["svm-train", "-n", "2", "-s", "1", HEART], "-n: nu <= 0 or nu > 1"),
    (["svm-train", "-v", "1", HEART], "n-fold cross validation: n must >= 2"),
    (["svm-train", "-c", "abc", HEART], "-c needs a number"),
    (["svm-train"], "usage: svmtool svm-train"),
    (["svm-predict", "-b", "1", HEART, HEART, "out"], ""),
    (["svm-scale", "-l", "1", "-u", "0", HEART], "inconsistent lower/upper"),
])
def test_bad_options_one_line_exit_2(tmp_path, args, message):
    r = run_cli(*args, cwd=tmp_path)
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert message in err


def test_bad_data_names_file_and_line(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("1 1:0.5\n1 2:x\n")
    r = run_cli("svm-train", bad, tmp_path / "m")
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and f"{bad}:2:" in err, err


def test_precomputed_kernel(capfd, heart, tmp_path):
    """-t 4: LIBSVM's 0:serial format, for train and predict, as libsvm-official."""
    X = heart.X.toarray()
    K = X @ X.T
    lines = []
    for i in range(heart.n_rows):
        lines.append(f"{heart.y[i]:g} 0:{i + 1} " + " ".join(f"{j + 1}:{float(K[i, j])!r}"
                                                             for j in range(heart.n_rows)))
    path = tmp_path / "pre"
    path.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m"
    code, out, err = ours(capfd, "-t", "4", "-c", "0.5", path, model)
    assert code == 0, err
    capfd.readouterr()
    y, x = svmutil.svm_read_problem(str(path))
    ref = svmutil.svm_train(y, x, "-t 4 -c 0.5")
    ref_lines = capfd.readouterr().out.splitlines()
    for a, b in zip(numbers(out, "obj"), numbers(ref_lines, "obj")):
        assert abs(a - b) <= 1e-3 * abs(b)
    text = model.read_text()
    assert "kernel_type precomputed" in text and re.search(r"\n\S+ 0:\d+ \n", text)
    assert f"\ntotal_sv {ref.get_nr_sv()}\n" in text          # LIBSVM's support vectors
    code, pout, err = ours(capfd, "svm-predict", path, model, tmp_path / "o")
    assert code == 0, err
    pred, _, _ = svmutil.svm_predict(y, x, svmutil.svm_load_model(str(model)), "-q")
    assert np.array_equal(np.loadtxt(tmp_path / "o"), np.array(pred))


def test_one_class_of_labels_as_libsvm(capfd, tmp_path):
    """Data of one class: LIBSVM's warning, a model without pairs (a bare 'rho' line) that
    libsvm-official reads and that predicts the class."""
    data = tmp_path / "one"
    data.write_text("1 1:0.5\n1 1:0.2 2:1\n1 2:0.3\n")
    code, lines, err = ours(capfd, data, tmp_path / "m")
    assert code == 0, err
    assert lines == ["WARNING: training data in only one class. See README for details.",
                     "Total nSV = 0"]
    y, x = svmutil.svm_read_problem(str(data))
    ref = svmutil.svm_train(y, x, "-q")
    svmutil.svm_save_model(str(tmp_path / "ref"), ref)
    assert (tmp_path / "m").read_text() == (tmp_path / "ref").read_text()
    code, out, err = ours(capfd, "svm-predict", data, tmp_path / "ref", tmp_path / "o")
    assert code == 0 and (tmp_path / "o").read_text() == "1\n1\n1\n"


def test_svmtool_predict_reads_probability_models(capfd, tmp_path):
    """svmtool predict -b 1 takes a LIBSVM probability model too (LIBLINEAR's layout)."""
    model = tmp_path / "m"
    code, _, err = ours(capfd, "-q", "-b", "1", HEART, model)
    assert code == 0, err
    code = run(["predict", "-q", "-b", "1", str(HEART), str(model), str(tmp_path / "o")])
    rows = (tmp_path / "o").read_text().splitlines()
    assert code == 0 and rows[0] == "labels 1 -1"
    p = np.array([[float(v) for v in r.split()[1:]] for r in rows[1:]])
    assert np.allclose(p.sum(axis=1), 1.0)
    code = run(["svm-predict", "-q", "-b", "1", str(HEART), str(model), str(tmp_path / "o2")])
    p2 = np.array([[float(v) for v in r.split()[1:]]
                   for r in (tmp_path / "o2").read_text().splitlines()[1:]])
    assert np.allclose(p, p2, atol=1e-6)


@pytest.mark.parametrize("solver", ["c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr"])
def test_train_refuses_a_bias_column_before_reading(tmp_path, solver):
    # LIBSVM's problems carry their offset in rho: -B is refused before the (missing) data is read
    from svmtool_proc import svmtool

    r = svmtool("train", "-s", solver, "-B", "1", tmp_path / "missing.svm", tmp_path / "m")
    assert r.returncode == 2
    assert r.stderr.decode().strip() == (f"svmtool: error: -s {solver} takes no bias column (-B): "
                                         f"its offset is rho, as in LIBSVM")
    assert not (tmp_path / "m").exists()

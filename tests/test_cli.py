"""The command line through a real subprocess: exit codes, one-line errors, pipes, atomic writes."""

import os
import subprocess
import sys

import pytest

from conftest import DATA, TESTDATA, run_cli
from test_reader import BAD


def test_help_does_not_import_numba():
    code = ("import sys; from svmtool.cli import run; rc = run(['--help']);"
            "print('numba' in sys.modules, 'scipy' in sys.modules, rc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False False 0"


def test_version():
    r = run_cli("--version")
    assert r.returncode == 0
    assert b"svmtool" in r.stdout


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_data_one_line_exit_2_no_model(tmp_path, name):
    line, text = BAD[name]
    model = tmp_path / "m.model"
    src = TESTDATA / "bad" / name
    r = run_cli("train", src, model)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err == f"svmtool: error: {src}:{line}: " + err.split(f":{line}: ", 1)[1]
    assert text in err
    assert not model.exists()
    assert os.listdir(tmp_path) == []      # no temporary file left behind either


def test_missing_file_and_bad_option():
    r = run_cli("train", "no/such/file.svm", "x.model")
    assert r.returncode == 2 and r.stderr.decode().startswith("svmtool: error: ")
    assert r.stderr.decode().count("\n") == 1
    r = run_cli("train", "--bogus", DATA / "heart_scale")
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1
    r = run_cli("train", "-c", "-1", DATA / "heart_scale", "-")
    assert r.returncode == 2 and "-c must be a finite number > 0" in r.stderr.decode()
    r = run_cli("train", "-s", "99", DATA / "heart_scale", "-")
    assert r.returncode == 2 and "unknown solver" in r.stderr.decode()


def test_train_stdin_to_stdout_equals_file_to_file(tmp_path):
    raw = (DATA / "heart_scale").read_bytes()
    r = run_cli("train", "-q", "-", "-", input=raw)
    assert r.returncode == 0, r.stderr
    m = tmp_path / "heart.model"
    r2 = run_cli("train", "-q", DATA / "heart_scale", m)
    assert r2.returncode == 0
    assert r.stdout == m.read_bytes()
    assert r.stdout.startswith(b"solver_type L2R_L2LOSS_SVC_DUAL\n")


def test_default_model_name_in_current_folder(tmp_path):
    r = run_cli("train", "-q", DATA / "heart_scale", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "heart_scale.model").exists()


def test_cross_validation_prints_accuracy():
    r = run_cli("train", "-v", "5", DATA / "heart_scale")
    assert r.returncode == 0, r.stderr
    line = r.stderr.decode().strip().splitlines()[-1]
    assert line.startswith("Cross Validation Accuracy = ") and line.endswith("%")
    acc = float(line.split("=")[1].rstrip("%"))
    assert 75 < acc < 90       # heart_scale's linear-SVM CV accuracy is about 83-84%


def test_weights_liblinear_spelling_equals_long_option(tmp_path):
    a, b = tmp_path / "a.model", tmp_path / "b.model"
    r1 = run_cli("train", "-q", "-w-1", "3", DATA / "heart_scale", a)
    r2 = run_cli("train", "-q", "--weight", "-1", "3", DATA / "heart_scale", b)
    c = tmp_path / "c.model"
    r3 = run_cli("train", "-q", DATA / "heart_scale", c)
    assert r1.returncode == r2.returncode == r3.returncode == 0
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


@pytest.mark.parametrize("train, test, chunk", [("heart_scale", "heart_scale", 4096),
                                                   ("a9a", "a9a.t", 65536)])
def test_predict_with_a_linear_model_never_imports_numba(tmp_path, train, test, chunk):
    # a short job pays no JIT start-up: the pure-Python reader and numpy scoring, for a small
    # file and (a linear model's predict only) for a9a.t's 1.1 MB, above the 256 KB with which
    # train's reader turns to the jitted parser
    model = tmp_path / "m.model"
    assert run_cli("train", "-q", DATA / train, model).returncode == 0
    code = ("import sys; from svmtool.cli import run;"
            f"rc = run(['predict', '-q', {str(DATA / test)!r}, {str(model)!r}, "
            f"{str(tmp_path / 'out')!r}]); print(rc, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False"]
    ref = run_cli("predict", "-q", "--chunk-bytes", str(chunk), DATA / test, model, "-")
    assert ref.returncode == 0           # small chunks: the jitted reader, same predictions
    assert ref.stdout == (tmp_path / "out").read_bytes()

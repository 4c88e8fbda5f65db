"""`svmtool train --liblinear-rng` writes the very model file LIBLINEAR writes (same bytes).

LIBLINEAR runs in a fresh subprocess (its rand() state starts as after srand(1), as in its own
`train` program); svmtool through its real command line.  Binary and one-vs-rest multi-class,
with and without a bias column, both dual solvers.
"""

import subprocess
import sys

import pytest

from conftest import DATA, need, run_cli


def liblinear_model(data, options, out):
    need("liblinear.liblinearutil")
    code = ("import sys; from liblinear.liblinearutil import svm_read_problem, train, save_model;"
            "y, x = svm_read_problem(sys.argv[1]); m = train(y, x, sys.argv[2]);"
            "save_model(sys.argv[3], m)")
    subprocess.run([sys.executable, "-c", code, str(data), options + " -q", str(out)],
                   check=True)
    return out.read_bytes()


@pytest.fixture(scope="module")
def multiclass_file(tmp_path_factory):
    # heart_scale's rows with three labels, first appearing in the order 3, 1, 2
    lines = (DATA / "heart_scale").read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        label = [3, 1, 2][(i * 7) % 3]
        out.append(f"{label} " + line.split(" ", 1)[1])
    f = tmp_path_factory.mktemp("mc") / "three.svm"
    f.write_text("\n".join(out) + "\n")
    return f


@pytest.mark.parametrize("options", ["-s 1", "-s 3", "-s 1 -B 1", "-s 3 -c 4 -B 1",
                                     "-s 1 -w-1 2.5"])
def test_binary_model_file_identical(tmp_path, options):
    want = liblinear_model(DATA / "heart_scale", options, tmp_path / "ll.model")
    r = run_cli("train", "-q", "--liblinear-rng", *options.split(), DATA / "heart_scale",
                tmp_path / "ours.model")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ours.model").read_bytes() == want


@pytest.mark.parametrize("options", ["-s 1", "-s 3 -B 1", "-s 1 -c 0.5 -w2 3"])
def test_one_vs_rest_model_file_identical(tmp_path, multiclass_file, options):
    want = liblinear_model(multiclass_file, options, tmp_path / "ll.model")
    r = run_cli("train", "-q", "--liblinear-rng", *options.split(), multiclass_file,
                tmp_path / "ours.model")
    assert r.returncode == 0, r.stderr
    got = (tmp_path / "ours.model").read_bytes()
    assert got.splitlines()[:6] == want.splitlines()[:6]     # header: labels in LIBLINEAR's order
    assert got == want

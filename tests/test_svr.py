"""Support vector regression: -s 11 (primal Newton), -s 12 and -s 13 (dual CD), against
LIBLINEAR (liblinear-official in a subprocess).

* -s 12 / 13 with --liblinear-rng write LIBLINEAR's model file byte for byte (rows keep the
  file's order for regression, so LIBLINEAR's rand() sequence can be followed exactly);
* every solver's primal objective, computed from w here, is within 1e-3 relative of LIBLINEAR's
  at a tight tolerance (-s 11 also with -R);
* models round-trip: LIBLINEAR loads svmtool's and predicts the same values; svmtool predict
  prints LIBLINEAR's regression lines; -v reports MSE and squared correlation.
"""

import numpy as np
import pytest

from conftest import need, run_cli, shared_file
from liblinear_ref import (liblinear_predict, liblinear_train, load_xy, objective, read_model,
                           regression_file)


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    return regression_file(tmp_path_factory.mktemp("svr"))


@pytest.mark.parametrize("options", ["-s 12", "-s 13", "-s 12 -B 1 -p 0.5", "-s 13 -c 4 -B 1"])
def test_dual_svr_model_file_identical_to_liblinear(tmp_path, reg, options):
    want = liblinear_train(reg, options, tmp_path / "ll.model").read_bytes()
    r = run_cli("train", "-q", "--liblinear-rng", *options.split(), reg, tmp_path / "ours.model")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ours.model").read_bytes() == want


@pytest.mark.shared
def test_dual_svr_identical_on_abalone(tmp_path):
    data = shared_file("abalone", "abalone_scale")
    want = liblinear_train(data, "-s 12 -B 1", tmp_path / "ll.model").read_bytes()
    r = run_cli("train", "-q", "--liblinear-rng", "-s", "12", "-B", "1", data,
                tmp_path / "ours.model")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ours.model").read_bytes() == want


@pytest.mark.parametrize("solver, kind, options", [
    ("11", "svr-l2", "-e 1e-8 -c 2"),
    ("11", "svr-l2", "-e 1e-8 -B 1 -R -p 0.3"),
    ("12", "svr-l2", "-e 1e-6 -B 1"),
    ("13", "svr-l1", "-e 1e-6 -c 0.5"),
])
def test_primal_objective_matches_liblinear(tmp_path, reg, solver, kind, options):
    opts = f"-s {solver} {options}"
    liblinear_train(reg, opts, tmp_path / "ll.model")
    r = run_cli("train", "-q", *opts.split(), reg, tmp_path / "ours.model")
    assert r.returncode == 0, r.stderr
    C = float(opts.split("-c ")[1].split()[0]) if "-c " in opts else 1.0
    p = float(opts.split("-p ")[1].split()[0]) if "-p " in opts else 0.1
    bias = 1.0 if "-B 1" in opts else -1.0
    X, y = load_xy(reg, bias)
    f = {}
    for name in ("ll", "ours"):
        head, w = read_model(tmp_path / f"{name}.model")
        assert head["solver_type"][0] == {"11": "L2R_L2LOSS_SVR", "12": "L2R_L2LOSS_SVR_DUAL",
                                          "13": "L2R_L1LOSS_SVR_DUAL"}[solver]
        f[name] = objective(kind, X, y, w[:, 0], C=C, p=p, unreg_bias="-R" in opts)
    assert abs(f["ours"] - f["ll"]) <= 1e-3 * abs(f["ll"]), f


def test_model_round_trip_and_predict_output(tmp_path, reg):
    model = tmp_path / "m"
    r = run_cli("train", "-q", "-s", "11", "-B", "1", reg, model)
    assert r.returncode == 0, r.stderr
    text = model.read_text()
    assert text.startswith("solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 13\nbias 1\nw\n")
    out = tmp_path / "pred"
    r = run_cli("predict", reg, model, out)
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "Mean squared error = " in err and "(regression)" in err
    assert "Squared correlation coefficient = " in err
    ours = np.array([float(v) for v in out.read_text().split()])
    labels, _ = liblinear_predict(reg, model)
    assert np.array_equal(ours, labels)
    # and svmtool reads LIBLINEAR's regression model
    liblinear_train(reg, "-s 13", tmp_path / "ll.model")
    r = run_cli("predict", "-q", reg, tmp_path / "ll.model", out)
    assert r.returncode == 0, r.stderr
    labels, _ = liblinear_predict(reg, tmp_path / "ll.model")
    assert np.array_equal(np.array([float(v) for v in out.read_text().split()]), labels)


def test_cross_validation_reports_mse(reg):
    r = run_cli("train", "-s", "12", "-v", "3", reg)
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "Cross Validation Mean squared error = " in err
    assert "Cross Validation Squared correlation coefficient = " in err
    assert "Accuracy" not in err


def test_class_weights_are_refused(reg, tmp_path):
    r = run_cli("train", "-s", "12", "-w1", "2", reg, tmp_path / "m")
    assert r.returncode == 2
    assert "class weights" in r.stderr.decode()


def test_api_fit_directly():
    """The fit functions take raw CSR arrays with real targets (no labels mapping)."""
    import scipy.sparse as sp

    from svmtool.params import TrainParams
    from svmtool.solvers import get_spec

    rng = np.random.default_rng(0)
    X = sp.random(200, 10, density=0.5, random_state=1, format="csr")
    y = X @ rng.normal(size=10)
    for name in ("svr-l2", "svr-l2-dual", "svr-l1-dual"):
        params = TrainParams(solver=name, eps=1e-6, C=10.0, max_iter=20000)
        res = get_spec(name).load()(X.indptr.astype(np.int64), X.indices, X.data, y, 10, 10.0,
                                    10.0, params)
        assert res.converged
        assert np.mean((X @ res.w - y) ** 2) < 0.05


def _liblinear_find(data, options):
    """LIBLINEAR's (best C, best p, best score) of ``train -C`` (liblinear-official)."""
    import json
    import subprocess
    import sys

    need("liblinear.liblinearutil")
    code = ("import sys, json; from liblinear.liblinearutil import svm_read_problem, train;"
            "y, x = svm_read_problem(sys.argv[1]); print(json.dumps(train(y, x, sys.argv[2])))")
    r = subprocess.run([sys.executable, "-c", code, str(data), options + " -q"], check=True,
                       capture_output=True, text=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_start_c_of_svr_is_liblinears_formula():
    """calc_start_C for -s 11: 0.01 sum max(|y|-p,0)^2 / (8 (sum|y|)^2 max|x|^2), to a power
    of two below."""
    import math

    from svmtool.params import SvrParams, TrainParams
    from svmtool.problem import Problem
    from svmtool.solvers.selection.param_search import start_C

    prob = Problem(indptr=np.array([0, 1, 3, 4]), indices=np.array([0, 0, 1, 1]),
                   data=np.array([1.0, 2.0, 1.0, 0.5]), y=np.array([3.0, -1.0, 0.2]),
                   n_features=2)
    p = TrainParams(solver="svr-l2", svr=SvrParams(p=0.5))
    loss = 2.5 ** 2 + 0.5 ** 2
    want = 2.0 ** math.floor(math.log2(0.01 * loss / (8 * 4.2 ** 2 * 5.0)))
    assert start_C(prob, p) == want
    p0 = TrainParams(solver="svr-l2", svr=SvrParams(p=3.0))
    assert start_C(prob, p0) == math.inf      # no loss at any C: nothing to search


@pytest.mark.shared
def test_find_c_and_p_for_svr_as_liblinear(tmp_path):
    """-s 11 -C searches (C, p): on abalone svmtool and LIBLINEAR choose the same pair, with
    cross-validated MSEs within 2% (the folds are drawn differently)."""
    data = shared_file("abalone", "abalone_scale")
    r = run_cli("train", "-s", "11", "-C", data)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.decode().strip().splitlines()
    assert any(l.startswith("log2c=") and "\tp=" in l and "Mean squared error=" in l
               for l in lines)
    best = lines[-1].split()
    assert best[:3] == ["Best", "C", "="] and best[4:7] == ["Best", "p", "="], lines[-1]
    C, p, mse = float(best[3]), float(best[7]), float(best[-1])
    ll_C, ll_p, ll_mse = _liblinear_find(data, "-s 11 -C")
    assert (C, p) == (ll_C, ll_p)
    assert abs(mse - ll_mse) <= 0.02 * ll_mse
    # an explicit -p starts the p grid there: no p above it is tried
    r = run_cli("train", "-s", "11", "-C", "-p", "3", data)
    ps = {float(l.split("p=")[1].split()[0]) for l in r.stderr.decode().splitlines()
          if l.startswith("log2c=")}
    assert ps and max(ps) <= 3.0

"""-s 7 (lr-dual, dual coordinate descent for logistic regression) against LIBLINEAR
(liblinear-official in a subprocess): byte-identical model files with --liblinear-rng (binary and
one-vs-rest), the primal objective at a tight tolerance computed here from w, and the model's
round trip with probabilities (-b 1)."""

import numpy as np
import pytest

from conftest import DATA, need, run_cli
from liblinear_ref import liblinear_predict, liblinear_train, load_xy, objective, read_model

HEART = DATA / "heart_scale"


@pytest.fixture(scope="module")
def three_class(tmp_path_factory):
    lines = HEART.read_text().splitlines()
    out = [f"{[3, 1, 2][(i * 7) % 3]} " + ln.split(" ", 1)[1] for i, ln in enumerate(lines)]
    f = tmp_path_factory.mktemp("lrd") / "three.svm"
    f.write_text("\n".join(out) + "\n")
    return f


@pytest.mark.parametrize("options", ["-s 7", "-s 7 -B 1 -c 4", "-s 7 -e 0.001 -w-1 2"])
def test_model_file_identical_to_liblinear(tmp_path, options):
    want = liblinear_train(HEART, options, tmp_path / "ll.model").read_bytes()
    r = run_cli("train", "-q", "--liblinear-rng", *options.split(), HEART, tmp_path / "m")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m").read_bytes() == want


def test_one_vs_rest_identical_to_liblinear(tmp_path, three_class):
    want = liblinear_train(three_class, "-s 7 -B 1", tmp_path / "ll.model").read_bytes()
    r = run_cli("train", "-q", "--liblinear-rng", "-s", "lr-dual", "-B", "1", three_class,
                tmp_path / "m")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m").read_bytes() == want


def test_primal_objective_matches_liblinear(tmp_path):
    opts = "-s 7 -e 1e-6 -c 2"
    liblinear_train(HEART, opts, tmp_path / "ll.model")
    r = run_cli("train", "-q", *opts.split(), HEART, tmp_path / "m")   # our own generator
    assert r.returncode == 0, r.stderr
    X, y = load_xy(HEART)
    f = {}
    for name, path in (("ll", tmp_path / "ll.model"), ("ours", tmp_path / "m")):
        head, w = read_model(path)
        assert head["solver_type"] == ["L2R_LR_DUAL"]
        f[name] = objective("lr", X, y, w[:, 0], C=2.0, pos_label=float(head["label"][0]))
    assert abs(f["ours"] - f["ll"]) <= 1e-3 * abs(f["ll"]), f
    # and the same problem as -s 0
    r = run_cli("train", "-q", "-s", "0", "-e", "1e-6", "-c", "2", HEART, tmp_path / "m0")
    head, w0 = read_model(tmp_path / "m0")
    f0 = objective("lr", X, y, w0[:, 0], C=2.0, pos_label=float(head["label"][0]))
    assert abs(f["ours"] - f0) <= 1e-3 * abs(f0)


def test_round_trip_with_probabilities(tmp_path):
    model = tmp_path / "m"
    r = run_cli("train", "-q", "-s", "7", HEART, model)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "p"
    r = run_cli("predict", "-b", "1", HEART, model, out)
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert lines[0].startswith("labels ")
    ours = np.array([[float(v) for v in ln.split()] for ln in lines[1:]])
    import json
    import subprocess
    import sys

    need("liblinear.liblinearutil")
    code = ("import sys, json; from liblinear.liblinearutil import *;"
            "y, x = svm_read_problem(sys.argv[1]); m = load_model(sys.argv[2]);"
            "l, a, v = predict(y, x, m, '-b 1 -q'); print(json.dumps([l, v]))")
    res = subprocess.run([sys.executable, "-c", code, str(HEART), str(model)], check=True,
                         capture_output=True, text=True)
    labels, probs = json.loads(res.stdout)
    assert np.array_equal(ours[:, 0], labels)
    assert np.allclose(ours[:, 1:], probs, rtol=1e-12, atol=1e-15)
    ll_labels, _ = liblinear_predict(HEART, model)
    assert np.array_equal(ll_labels, labels)


def test_iteration_cap_switches_to_primal_newton():
    """At its cap -s 7 goes on with -s 0 (LIBLINEAR's rescue, the registry's fallback through
    train_one) and says so."""
    import scipy.sparse as sp

    from svmtool.params import TrainParams
    from svmtool.solvers import get_spec

    X, y = load_xy(HEART)
    X = sp.csr_matrix(X)
    y = np.where(y > 0, 1.0, -1.0)
    from svmtool.solvers.common.train_one import train_one

    params = TrainParams(solver="lr-dual", eps=1e-9, max_iter=2)

    def solve(spec, p, init_w):
        return spec.load()(X.indptr.astype(np.int64), X.indices, X.data, y, X.shape[1], 1.0,
                           1.0, p, init_w=init_w)

    alone = solve(get_spec("7"), params, None)          # the dual solver alone stops at its cap
    assert not alone.converged and alone.iterations == 2
    res = train_one(get_spec("7"), solve, params)       # LIBLINEAR's train_one goes on
    assert res.extra["dual_iterations"] == 2
    assert "switched to the primal Newton solver (-s 0)" in res.extra["notice"]
    assert res.gap_kind == "relative gradient norm"

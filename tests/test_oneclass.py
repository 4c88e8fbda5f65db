"""-s 21 (one-class SVM) against LIBLINEAR (liblinear-official in a subprocess): the method draws
no random numbers, so the model file is byte-identical to LIBLINEAR's (rho included) without
--liblinear-rng; predictions are +1/-1 and agree with LIBLINEAR's predict; -B is refused."""

import numpy as np
import pytest

from conftest import DATA, run_cli
from liblinear_ref import liblinear_predict, liblinear_train, load_xy, read_model

HEART = DATA / "heart_scale"


@pytest.mark.parametrize("options", ["-s 21", "-s 21 -n 0.1", "-s one-class -n 0.9 -e 0.0001"])
def test_model_file_identical_to_liblinear(tmp_path, options):
    want = liblinear_train(HEART, options.replace("one-class", "21"),
                           tmp_path / "ll.model").read_bytes()
    r = run_cli("train", "-q", *options.split(), HEART, tmp_path / "m")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m").read_bytes() == want


def test_predictions_and_duality(tmp_path):
    model = tmp_path / "m"
    r = run_cli("train", "-s", "21", "-n", "0.2", "-e", "1e-6", HEART, model)
    assert r.returncode == 0, r.stderr
    assert "duality gap" in r.stderr.decode()
    out = tmp_path / "p"
    r = run_cli("predict", HEART, model, out)
    assert r.returncode == 0, r.stderr
    ours = np.array([float(v) for v in out.read_text().split()])
    assert set(ours.tolist()) <= {1.0, -1.0}
    labels, _ = liblinear_predict(HEART, model)
    assert np.array_equal(ours, labels)
    # about nu of the rows are outliers (alpha at the bound), and the optimum's duality holds
    head, w = read_model(model)
    rho = float(head["rho"][0])
    X, _ = load_xy(HEART)
    m = X @ w[:, 0]
    assert 0.1 < np.mean(m - rho <= 0) < 0.3
    l = X.shape[0]
    primal = 0.5 * w[:, 0] @ w[:, 0] - 0.2 * l * rho + np.maximum(0.0, rho - m).sum()
    assert abs(primal + 0.5 * w[:, 0] @ w[:, 0]) <= 1e-3 * (0.5 * w[:, 0] @ w[:, 0])


def test_bias_and_bad_nu_are_refused(tmp_path):
    r = run_cli("train", "-s", "21", "-B", "1", HEART, tmp_path / "m")
    assert r.returncode == 2 and "-B" in r.stderr.decode()
    r = run_cli("train", "-s", "21", "-n", "1.5", HEART, tmp_path / "m")
    assert r.returncode == 2 and "-n must be in (0, 1]" in r.stderr.decode()
    r = run_cli("train", "-s", "1", "-n", "0.3", HEART, tmp_path / "m")
    assert r.returncode == 2 and "-n only applies to -s one-class" in r.stderr.decode()
    assert not (tmp_path / "m").exists()

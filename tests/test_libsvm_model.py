"""LIBSVM model files, both ways, checked with libsvm-official."""

import numpy as np
import pytest
import scipy.sparse as sp

from svmtool import api
from svmtool.io.model_io import load_model, save_model
from svmtool.models.kernel import KernelModel
from svmtool.params import KernelParams, TrainParams
from svmtool.problem import Problem

from tests.conftest import DATA, run_cli

svmutil = pytest.importorskip("libsvm.svmutil")


def three_class(seed=0, n=90):
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0, 1], [2, 0, 0], [0, 2, 0.5]], dtype=float)
    y = np.repeat([3.0, 1.0, 7.0], n // 3)
    rng.shuffle(y)
    Xd = centres[np.searchsorted([1.0, 3.0, 7.0], y)] + rng.normal(scale=0.9, size=(n, 3))
    Xd[rng.random(size=Xd.shape) < 0.2] = 0.0
    return Problem.from_matrix(sp.csr_matrix(Xd), y)


def libsvm_rows(prob):
    X = prob.X
    return [{int(j) + 1: float(v) for j, v in zip(X.indices[X.indptr[i]:X.indptr[i + 1]],
                                                  X.data[X.indptr[i]:X.indptr[i + 1]])}
            for i in range(prob.n_rows)]


KOPTS = [(0, "-t 0"), (1, "-t 1 -g 0.5 -r 1 -d 2"), (2, "-t 2 -g 0.7"), (3, "-t 3 -g 0.1 -r -0.5")]


@pytest.mark.parametrize("t,opts", KOPTS)
@pytest.mark.parametrize("data", ["binary", "three"])
def test_read_libsvm_models(tmp_path, t, opts, data):
    """Models trained and saved by libsvm-official (rho != 0): same decisions and labels."""
    if data == "binary":
        from svmtool.io.svmlight import load_data

        prob = load_data(DATA / "heart_scale")
    else:
        prob = three_class()
    rows = libsvm_rows(prob)
    m = svmutil.svm_train(prob.y.tolist(), rows, f"-s 0 -c 2 -q {opts}")
    path = tmp_path / "m.model"
    svmutil.svm_save_model(str(path), m)
    ours = load_model(str(path))
    assert isinstance(ours, KernelModel)
    # LIBSVM writes SV values with %.8g: compare with the model as read back from the file
    lab, _, dec = svmutil.svm_predict(prob.y.tolist(), rows, svmutil.svm_load_model(str(path)),
                                      "-q")
    scores = ours.decision_function(prob)
    np.testing.assert_allclose(scores, np.array(dec), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(ours.predict(scores), np.array(lab))
    assert np.any(ours.rho != 0)


@pytest.mark.parametrize("t", [0, 1, 2, 3])
def test_our_models_load_in_libsvm(tmp_path, t):
    prob = three_class(1)
    params = TrainParams(solver="kernel", C=2.0, kernel=KernelParams(kernel_type=t, gamma=0.3, coef0=0.5 if t != 3 else -0.2, degree=2))
    model = api.train(prob, params)
    path = tmp_path / "ours.model"
    save_model(model, str(path))
    m = svmutil.svm_load_model(str(path))
    rows = libsvm_rows(prob)
    lab, _, dec = svmutil.svm_predict(prob.y.tolist(), rows, m, "-q")
    scores = model.decision_function(prob)
    np.testing.assert_allclose(scores, np.array(dec), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(model.predict(scores), np.array(lab))
    first_seen = list(dict.fromkeys(prob.y.tolist()))          # LIBSVM's label order
    assert m.get_nr_class() == 3 and list(m.get_labels()) == first_seen


def test_round_trip_exact_and_bias_rho(tmp_path):
    from svmtool.io.svmlight import load_data

    prob = load_data(DATA / "heart_scale")
    model = api.train(prob, TrainParams(solver="kernel", C=1.0, bias=1.0,
                                        kernel=KernelParams(kernel_type=2, gamma=0.2)))
    # rho = -b^2 sum(alpha_i y_i) = -sum of the coefficients (b = 1)
    assert model.rho[0] == pytest.approx(-model.sv_coef[0].sum(), rel=1e-12)
    path = tmp_path / "b.model"
    save_model(model, str(path))
    back = load_model(str(path))
    np.testing.assert_array_equal(back.sv_coef, model.sv_coef)
    np.testing.assert_array_equal(back.sv_data, model.sv_data)
    np.testing.assert_array_equal(back.rho, model.rho)
    assert back.kernel.gamma == model.kernel.gamma
    m = svmutil.svm_load_model(str(path))
    rows = libsvm_rows(prob)
    lab, _, dec = svmutil.svm_predict(prob.y.tolist(), rows, m, "-q")
    np.testing.assert_allclose(model.decision_function(prob)[:, 0], np.array(dec)[:, 0],
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(model.predict(prob), np.array(lab))


def test_cli_train_and_predict_kernel(tmp_path):
    model = tmp_path / "h.model"
    out = tmp_path / "h.out"
    r = run_cli("train", "-s", "kernel", "-c", "2", "-g", "0.1", "-q", DATA / "heart_scale", model)
    assert r.returncode == 0, r.stderr
    assert model.read_text().startswith("svm_type c_svc\nkernel_type rbf\ngamma 0.1")
    r = run_cli("predict", DATA / "heart_scale", model, out)
    assert r.returncode == 0, r.stderr
    m = svmutil.svm_load_model(str(model))
    y, x = svmutil.svm_read_problem(str(DATA / "heart_scale"))
    lab, _, _ = svmutil.svm_predict(y, x, m, "-q")
    assert [float(v) for v in out.read_text().split()] == lab
    assert b"Accuracy" in r.stderr


def test_bad_libsvm_model(tmp_path):
    from svmtool.errors import ModelFormatError

    p = tmp_path / "bad.model"
    p.write_text("svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv 2\nrho 0\n"
                 "label 1 -1\nnr_sv 1 1\nSV\n1 1:0.5\n")
    with pytest.raises(ModelFormatError, match="expected 2 support vectors"):
        load_model(str(p))
    # a precomputed-kernel model's support vectors are 0:<serial number> alone
    p.write_text("svm_type c_svc\nkernel_type precomputed\nnr_class 2\ntotal_sv 2\nrho 0\n"
                 "label 1 -1\nnr_sv 1 1\nSV\n1 1:0.5\n-1 0:2\n")
    with pytest.raises(ModelFormatError, match="precomputed-kernel model"):
        load_model(str(p))


def test_cli_kernel_bias_default_is_one(tmp_path):
    """Without -B the kernel solvers use the kernel bias b = 1 (K + 1; rho = -sum alpha_i y_i in
    the model); -B -1 gives the bias-free problem (rho 0).  Both models are LIBSVM's and the
    first predicts as the API's bias=1 model."""
    from svmtool import api
    from svmtool.io.svmlight import load_data
    from svmtool.params import TrainParams

    m_def, m_none = tmp_path / "def.model", tmp_path / "none.model"
    for path, extra in ((m_def, []), (m_none, ["-B", "-1"])):
        r = run_cli("train", "-s", "kernel", "-c", "2", "-g", "0.1", "-q", *extra,
                    DATA / "heart_scale", path)
        assert r.returncode == 0, r.stderr
    rho = {p: float(next(l for l in p.read_text().splitlines() if l.startswith("rho")).split()[1])
           for p in (m_def, m_none)}
    assert rho[m_none] == 0.0 and rho[m_def] != 0.0
    prob = load_data(str(DATA / "heart_scale"))
    ref = api.train(prob, TrainParams(solver="kernel", C=2.0, bias=1.0,
                                      kernel=KernelParams(kernel_type=2, gamma=0.1)))
    np.testing.assert_allclose(load_model(str(m_def)).decision_function(prob),
                               ref.decision_function(prob), rtol=1e-9, atol=1e-9)

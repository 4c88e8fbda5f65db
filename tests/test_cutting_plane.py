"""1-slack cutting plane (svmtool.solvers.cutting_plane.cutting_plane), its reduced QP
(svmtool.solvers.cutting_plane.qp) and the row passes (svmtool.engine.passes_cp).

Truths used: scipy.optimize on the reduced QP, scipy.sparse products, the L1-loss optimum of
dual coordinate descent (svmtool.solvers.dual_cd.dcd at a tight tolerance: its primal and dual
values bracket the optimum), and liblinear-official -s 3.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import DATA, shared_file
from linear_helpers import fit, load, primal
from svmtool.engine import passes_cp
from svmtool.solvers.cutting_plane import cutting_plane
from svmtool.solvers.cutting_plane.qp import WorkingSet, simplex_qp

HEART = DATA / "heart_scale"
A9A = DATA / "a9a"




def dcd_reference(X, y, C=1.0, C_neg=None):
    r = fit("dcd-l1", X, y, C, C_neg, eps=1e-5, max_iter=100000)
    assert r.converged
    return r


# --- row passes --------------------------------------------------------------------------------

def test_passes_match_scipy():
    rng = np.random.default_rng(3)
    X = sp.random(50, 17, density=0.3, format="csr", random_state=4)
    w = rng.normal(size=17)
    v = rng.normal(size=50) * (rng.random(50) < 0.5)
    ind = X.indices.astype(np.int32)
    np.testing.assert_allclose(passes_cp.xw(X.indptr.astype(np.int64), ind, X.data, w), X @ w)
    np.testing.assert_allclose(passes_cp.xtv(X.indptr.astype(np.int64), ind, X.data, v, 17),
                               X.T @ v)
    W = rng.normal(size=(17, 4))
    V = rng.normal(size=(50, 4))
    np.testing.assert_allclose(passes_cp.xw_block(X.indptr.astype(np.int64), ind, X.data, W),
                               X @ W)
    np.testing.assert_allclose(
        passes_cp.xtv_block(X.indptr.astype(np.int64), ind, X.data, V, 17), X.T @ V)


def test_hinge_cut_is_a_subgradient_cut():
    rng = np.random.default_rng(5)
    X = sp.random(80, 10, density=0.5, format="csr", random_state=6)
    y = np.where(rng.random(80) < 0.5, 1.0, -1.0)
    cost = rng.uniform(0.5, 2.0, 80)
    o = passes_cp.CPOracle(X.indptr, X.indices, X.data, 10)
    risk = cutting_plane.HingeRisk(o, y, cost)
    w0 = rng.normal(size=10)
    a, b, R = risk.cut(X @ w0)
    assert R == pytest.approx(float(cost @ np.maximum(0, 1 - y * (X @ w0))))
    assert a @ w0 + b == pytest.approx(R)            # tight at w0
    for _ in range(20):                               # and below R everywhere
        w = rng.normal(size=10) * 3
        assert a @ w + b <= float(cost @ np.maximum(0, 1 - y * (X @ w))) + 1e-9


# --- reduced QP vs scipy -----------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_reduced_qp_matches_scipy(seed):
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    t, d = int(rng.integers(2, 12)), int(rng.integers(2, 8))
    A = rng.normal(size=(t, d)) * rng.uniform(0.1, 10)
    b = rng.uniform(0, 5, t)
    ws = WorkingSet(d, capacity=4)
    for j in range(t):
        ws.add(A[j], b[j])
    D, gap = ws.solve(tol_abs=1e-12, tol_rel=1e-14)
    # scipy: max -1/2 |A'a|^2 + b'a over a >= 0, sum a <= 1 (the zero cut is the slack)
    obj = lambda a: 0.5 * np.sum((A.T @ a) ** 2) - b @ a
    jac = lambda a: A @ (A.T @ a) - b
    best = np.inf
    for start in (np.zeros(t), np.full(t, 1.0 / t)):
        res = minimize(obj, start, jac=jac, method="SLSQP", bounds=[(0, None)] * t,
                       constraints=[{"type": "ineq", "fun": lambda a: 1 - a.sum(),
                                     "jac": lambda a: -np.ones(t)}],
                       options={"ftol": 1e-15, "maxiter": 1000})
        best = min(best, res.fun)
    assert -D <= best + 1e-7 * max(1, abs(best))
    assert -D >= best - 1e-6 * max(1, abs(best))
    # the primal of the reduced problem at w(alpha) is within the gap of D
    w = ws.w()
    Ft = 0.5 * w @ w + max(0.0, np.max(A @ w + b))
    assert Ft - D == pytest.approx(gap, abs=1e-8 * max(1, abs(D)))
    assert Ft >= D - 1e-9


def test_reduced_qp_warm_start_and_prune():
    rng = np.random.default_rng(11)
    ws = WorkingSet(5, capacity=4, inactive_limit=2)
    A = rng.normal(size=(30, 5))
    b = rng.uniform(0, 1, 30)
    prev = -np.inf
    for j in range(30):
        ws.add(A[j], b[j])
        D, _ = ws.solve(1e-12)
        assert D >= prev - 1e-9          # more cuts, larger (or equal) reduced optimum
        prev = D
        ws.prune()
    assert ws.alpha[:ws.t].sum() == pytest.approx(1.0)
    assert ws.dropped > 0


def test_simplex_qp_zero_gram():
    H = np.zeros((3, 3))
    b = np.array([0.0, 1.0, 2.0])
    alpha = np.array([1.0, 0, 0])
    g = np.zeros(3)
    it, gap, f = simplex_qp(H, b, alpha, g, 3, 1e-12, 0.0, 100)
    assert alpha[2] == pytest.approx(1.0) and f == pytest.approx(-2.0)


# --- cp vs DCD-L1 and liblinear ----------------------------------------------------------------

@pytest.mark.parametrize("C,C_neg", [(1.0, None), (0.1, None), (1.0, 3.0)])
def test_cp_within_guarantee_of_dcd_heart(C, C_neg):
    X, y = load(HEART)
    ref = dcd_reference(X, y, C, C_neg)
    eps = 0.001
    r = fit("cp", X, y, C, C_neg, eps=eps)
    cost = np.where(y > 0, C, C if C_neg is None else C_neg)
    assert r.converged
    assert r.primal == pytest.approx(primal(X, y, r.w, cost), rel=1e-10)
    bound = eps * cost.sum()                     # C n eps (weighted: eps * sum of costs)
    assert r.primal - ref.primal <= bound
    assert r.primal >= ref.dual - 1e-9           # no better than the optimum
    assert r.dual <= ref.primal + 1e-9           # its lower bound is one


def test_cp_a9a_subset_and_accuracy():
    X, y = load(A9A, rows=4000)
    ref = dcd_reference(X, y)
    r = fit("cp", X, y, eps=0.001)
    assert r.primal - ref.primal <= 0.001 * len(y)
    acc = np.mean(np.sign(X @ r.w) == y)
    acc_ref = np.mean(np.sign(X @ ref.w) == y)
    assert abs(acc - acc_ref) <= 0.005
    # one pass over the rows per iteration (scores and cut together), plus the first cut's
    assert r.extra["time_qp"] >= 0 and r.extra["passes"] == r.iterations + 1


def test_cp_vs_liblinear_official():
    ll = pytest.importorskip("liblinear.liblinearutil")
    X, y = load(HEART)
    m = ll.train(y, X, "-s 3 -c 0.5 -e 0.00001 -q")
    w_ll = np.array(m.get_decfun()[0])
    if m.get_labels()[0] != 1:
        w_ll = -w_ll
    cost = np.full(len(y), 0.5)
    F_ll = primal(X, y, w_ll, cost)
    r = fit("cp", X, y, 0.5, eps=0.0005)
    assert r.primal - F_ll <= 0.0005 * cost.sum()


def test_cp_through_api_with_bias_and_model_type():
    from svmtool import api
    from svmtool.io.svmlight import load_data

    prob = load_data(str(HEART))
    m = api.train(prob, solver="cp", C=1.0, bias=1.0, eps=0.001)
    ref = api.train(prob, solver="dcd-l1", C=1.0, bias=1.0, eps=1e-5, max_iter=100000)
    assert m.solver_type == "L2R_L1LOSS_SVC_DUAL"
    assert m.report["classes"][0]["primal"] - ref.report["classes"][0]["primal"] <= \
        0.001 * prob.n_rows
    assert abs(np.mean(m.predict(prob) == prob.y) - np.mean(ref.predict(prob) == prob.y)) <= 0.01


@pytest.mark.shared
def test_cp_shared_w8a_subset():
    X, y = load(shared_file("w8a", "w8a"), rows=8000)
    ref = dcd_reference(X, y)
    r = fit("cp", X, y, eps=0.001)
    assert r.primal - ref.primal <= 0.001 * len(y)


# --- model files -------------------------------------------------------------------------------

def test_cp_model_file_read_by_liblinear_official(tmp_path):
    ll = pytest.importorskip("liblinear.liblinearutil")
    from svmtool import api
    from svmtool.io.svmlight import load_data

    prob = load_data(str(HEART))
    m = api.train(prob, solver="ocas", C=1.0, bias=1.0)
    path = tmp_path / "m.model"
    api.save_model(m, str(path))
    lm = ll.load_model(str(path))
    X, y = load(HEART)
    pred, _, vals = ll.predict(prob.y, X, lm, "-q")
    np.testing.assert_array_equal(np.array(pred), m.predict(prob))
    np.testing.assert_allclose(np.array(vals)[:, 0], m.decision_function(prob)[:, 0],
                               rtol=1e-12, atol=1e-12)


def test_svmlight_model_roundtrip_and_decision(tmp_path):
    from svmtool import api
    from svmtool.io.model_io import load_model
    from svmtool.io.svmlight import load_data

    prob = load_data(str(HEART))
    m = api.train(prob, solver="cp", C=0.5, bias=1.0)
    path = tmp_path / "m.svmlight"
    api.save_model(m, str(path), "svmlight")
    text = path.read_text().splitlines()
    assert text[0].startswith("SVM-light Version") and text[1].startswith("0 # kernel type")
    assert text[9].startswith("2 # number of support vectors plus 1")
    back = load_model(str(path))
    # SVMlight's decision is w'x - b: the threshold line holds -bias * w_bias
    b = float(text[10].split("#")[0])
    assert b == pytest.approx(-m.w[-1, 0])
    np.testing.assert_allclose(back.decision_function(prob)[:, 0],
                               m.decision_function(prob)[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(back.predict(prob), m.predict(prob))


def test_svmlight_reader_sums_support_vectors(tmp_path):
    from svmtool.errors import ModelFormatError
    from svmtool.io.model_io import load_model

    text = "\n".join([
        "SVM-light Version V6.02", "0 # kernel type", "3 # kernel parameter -d",
        "1 # kernel parameter -g", "1 # kernel parameter -s", "1 # kernel parameter -r",
        "empty# kernel parameter -u", "4 # highest feature index",
        "10 # number of training documents", "3 # number of support vectors plus 1",
        "0.5 # threshold b, each following line is a SV (starting with alpha*y)",
        "0.25 1:2 3:4 #a", "-1.5 2:1 4:2 #b", ""])
    p = tmp_path / "svl.model"
    p.write_text(text)
    m = load_model(str(p))
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    w = 0.25 * np.array([2, 0, 4, 0]) - 1.5 * np.array([0, 1, 0, 2])
    assert m.decision_function(x)[0, 0] == pytest.approx(float(x[0] @ w) - 0.5)
    bad = text.replace("0 # kernel type", "4 # kernel type")
    p.write_text(bad)
    with pytest.raises(ModelFormatError, match="kernel type 4"):
        load_model(str(p))
    p.write_text(text.replace("3 # number of support", "4 # number of support"))
    with pytest.raises(ModelFormatError, match="announced"):
        load_model(str(p))


def cli_invoke(*args):
    """The CLI in-process (click's runner): (exit code, stderr bytes)."""
    from click.testing import CliRunner

    from svmtool.cli import cli

    r = CliRunner().invoke(cli, [str(a) for a in args])
    return r.exit_code, r.stderr_bytes or b""


def test_cli_train_options_and_predict(tmp_path):
    from conftest import run_cli

    model = tmp_path / "h.model"
    r = run_cli("train", "-s", "ocas", "--line-search", "gca2", "--perf-c", "20",
                "--model-format", "svmlight", "-q", HEART, model)
    assert r.returncode == 0, r.stderr
    assert model.read_text().startswith("SVM-light Version")
    out = tmp_path / "h.out"
    code, err = cli_invoke("predict", HEART, model, out)
    assert code == 0, err
    assert b"Accuracy" in err
    # --perf-c 20 is C = 20 * 100 / 270 in LIBLINEAR's convention: same model as -c that
    code, err = cli_invoke("train", "-s", "ocas", "--line-search", "gca2", "-c",
                           repr(20 * 100 / 270), "--model-format", "svmlight", "-q", HEART,
                           tmp_path / "h2.model")
    assert code == 0, err
    assert (tmp_path / "h2.model").read_text() == model.read_text()


def test_cli_ocas_gap_and_guard_options(tmp_path):
    from conftest import run_cli

    # a large absolute gap stops OCAS earlier than the relative gap alone (fewer iterations in
    # the report); --no-mu0-guard and --line-search sorted are accepted; on a solver that is not
    # OCAS these options are refused (exit 2, one line)
    reports = {}
    for name, extra in (("plain", []), ("gap", ["--abs-gap", "50"]),
                        ("noguard", ["--no-mu0-guard", "--line-search", "sorted"])):
        r = run_cli("train", "-s", "ocas", "-e", "0.0001", *extra, HEART, tmp_path / "m")
        assert r.returncode == 0, r.stderr
        line = [ln for ln in r.stderr.decode().splitlines() if "iterations" in ln][0]
        reports[name] = int(line.split("iterations")[1].split(",")[0])
    assert reports["gap"] < reports["plain"]
    assert reports["noguard"] >= 1
    for bad in (["--abs-gap", "1"], ["--no-mu0-guard"], ["--line-search", "tca"]):
        r = run_cli("train", "-s", "1", *bad, HEART, tmp_path / "m2")
        err = r.stderr.decode().strip()
        assert r.returncode == 2 and len(err.splitlines()) == 1, err
        assert "only appl" in err and "-s ocas" in err, err
    r = run_cli("train", "-s", "ocas", "--abs-gap", "-1", HEART, tmp_path / "m3")
    assert r.returncode == 2 and b"--abs-gap" in r.stderr


def test_working_set_sparse_equals_dense():
    rng = np.random.default_rng(9)
    d = 60
    A = rng.normal(size=(25, d)) * (rng.random((25, d)) < 0.1)
    A[3] = rng.normal(size=d)                 # one dense cut among sparse ones
    b = rng.uniform(0, 1, 25)
    wd = WorkingSet(d, inactive_limit=3)
    wsp = WorkingSet(d, inactive_limit=3, dense_limit=0)
    assert wd.dense and not wsp.dense
    for j in range(25):
        for ws in (wd, wsp):
            ws.add(A[j], b[j])
            ws.solve(1e-13)
            ws.prune()
        np.testing.assert_allclose(wd.H[:wd.t, :wd.t], wsp.H[:wsp.t, :wsp.t], rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(wd.w(), wsp.w(), rtol=1e-10, atol=1e-12)
        w = rng.normal(size=d)
        assert wd.value_at(w) == pytest.approx(wsp.value_at(w), rel=1e-12, abs=1e-12)


def test_working_set_two_threads_bit_identical(monkeypatch):
    """The sparse arena's Gram rows and w on two threads (split by cuts and by features) are
    the serial ones bit for bit, through adds, solves and prunes."""
    from svmtool.solvers.cutting_plane import qp

    monkeypatch.setattr(WorkingSet, "SPLIT_NNZ", 1)
    monkeypatch.setattr(qp, "core_free", lambda: False)
    assert not WorkingSet(10, dense_limit=0, threads=2).split     # no idle core: one thread
    monkeypatch.setattr(qp, "core_free", lambda: True)
    rng = np.random.default_rng(11)
    d = 300
    A = rng.normal(size=(40, d)) * (rng.random((40, d)) < 0.2)
    b = rng.uniform(0, 1, 40)
    one = WorkingSet(d, inactive_limit=4, dense_limit=0, threads=1)
    two = WorkingSet(d, inactive_limit=4, dense_limit=0, threads=2)
    assert two.split and not one.split
    for j in range(40):
        for ws in (one, two):
            ws.add(A[j], b[j])
            ws.solve(1e-13)
        assert np.array_equal(one.H[:one.t, :one.t], two.H[:two.t, :two.t])
        assert np.array_equal(one.w(), two.w())
        w = rng.normal(size=d)
        assert one.value_at(w) == two.value_at(w)
        for ws in (one, two):
            ws.prune()
    assert one.dropped == two.dropped > 0


def test_svmlight_model_keeps_labels_other_than_plus_minus_one(tmp_path):
    """Labels 2 / 1 (mushrooms-style): kept in the threshold line's comment, which SVMlight's
    reader skips; read back, predictions are the original labels.  A stock SVMlight model (no
    tag) still reads as +1 / -1, and a broken tag is a one-line error."""
    from svmtool import api
    from svmtool.errors import ModelFormatError
    from svmtool.io.model_io import load_model
    from svmtool.io.svmlight import load_data

    prob = load_data(str(HEART))
    prob.y[:] = np.where(prob.y > 0, 2.0, 1.0)
    m = api.train(prob, solver="ocas", C=0.5, bias=1.0)
    assert set(np.unique(m.predict(prob))) == {1.0, 2.0}
    path = tmp_path / "m.svmlight"
    api.save_model(m, str(path), "svmlight")
    lines = path.read_text().splitlines()
    # the value SVMlight reads is untouched: a number, then the comment
    assert float(lines[10].split("#")[0]) == pytest.approx(-m.w[-1, 0])
    back = load_model(str(path))
    np.testing.assert_array_equal(back.labels, m.labels)
    np.testing.assert_array_equal(back.predict(prob), m.predict(prob))
    # SVMlight's own convention without the tag
    plain = "\n".join(l.split("; svmtool labels")[0] for l in lines) + "\n"
    path.write_text(plain)
    np.testing.assert_array_equal(load_model(str(path)).labels, [1.0, -1.0])
    path.write_text(plain.replace("(starting with alpha*y)",
                                  "(starting with alpha*y); svmtool labels 3"))
    with pytest.raises(ModelFormatError, match="two labels"):
        load_model(str(path))

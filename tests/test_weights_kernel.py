"""Instance weights in the kernel solvers (issue 39): LIBSVM's five problems (``svm-train -W``),
SVMlight's ``cost:`` in ``svm_learn``, the kernel solver and DC-SVM.

Truths: scikit-learn's libsvm, which carries LIBSVM-weights' changes (``sample_weight``), at a
tight tolerance on both sides; SVMlight 6.02's own svm_learn / svm_classify on the same file
with cost: tokens (skipped, saying so, without them); an integer weight k against the row
written k times.
"""

import subprocess
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import DATA, need, svmlight_programs
from svmtool import api
from svmtool.io.model_io import load_model
from svmtool.io.svmlight import load_svmlight
from svmtool.params import DcsvmParams, KernelParams, LibsvmParams, OneClassParams, SvrParams
from svmtool.params import TrainParams
from svmtool.problem import Problem

HEART = DATA / "heart_scale"
GAMMA = 0.1


def heart_weights(n, seed=0):
    """Weights 0.2, 1 and 5 at random, the first five rows 0 (they take no part)."""
    w = np.random.default_rng(seed).choice([0.2, 1.0, 5.0], size=n)
    w[:5] = 0.0
    return w


def libsvm_params(solver, **kw):
    return TrainParams(solver=solver, C=1.0, eps=1e-6, kernel=KernelParams(
        kernel_type=2, gamma=GAMMA), **kw)


CASES = {
    "c_svc": ({}, lambda sk: sk.SVC(C=1.0, gamma=GAMMA, tol=1e-6)),
    "nu_svc": ({"oneclass": OneClassParams(nu=0.3)},
               lambda sk: sk.NuSVC(nu=0.3, gamma=GAMMA, tol=1e-6)),
    "one_class": ({"oneclass": OneClassParams(nu=0.3)},
                  lambda sk: sk.OneClassSVM(nu=0.3, gamma=GAMMA, tol=1e-6)),
    "epsilon_svr": ({"svr": SvrParams(p=0.1)},
                    lambda sk: sk.SVR(C=1.0, gamma=GAMMA, epsilon=0.1, tol=1e-6)),
    "nu_svr": ({"oneclass": OneClassParams(nu=0.3)},
               lambda sk: sk.NuSVR(C=1.0, nu=0.3, gamma=GAMMA, tol=1e-6)),
}


def sv_set(rows):
    """The support vectors as a set of row tuples (heart_scale's rows are distinct)."""
    return {tuple(np.round(r, 12)) for r in np.asarray(rows)}


@pytest.mark.parametrize("solver", list(CASES))
def test_libsvm_problems_match_scikit_learn_sample_weight(solver):
    svm = need("sklearn.svm")
    prob = load_svmlight(HEART)
    w = heart_weights(prob.n_rows)
    prob.weights = w
    extra, make = CASES[solver]
    model = api.train(prob, libsvm_params(solver, **extra))
    X = prob.X.toarray()
    est = make(svm).fit(X, prob.y, sample_weight=w)
    ours = model.decision_function(sp.csr_matrix(X))[:, 0]
    if model.labels is not None and model.labels[0] != est.classes_[1]:
        ours = -ours                    # scikit-learn's decision is for its second class
    theirs = est.decision_function(X) if hasattr(est, "decision_function") and \
        solver in ("c_svc", "nu_svc", "one_class") else est.predict(X)
    assert np.max(np.abs(ours - theirs)) <= 1e-2
    assert sv_set(model.sv_rows.dense(prob.n_features)) == sv_set(est.support_vectors_)
    assert not sv_set(X[:5]) & sv_set(model.sv_rows.dense(prob.n_features))  # weight 0 rows


def repeated(prob, k):
    """The problem with row i written k[i] times (rows in order)."""
    rows = np.repeat(np.arange(prob.n_rows), k)
    return prob.take_rows(rows)


def small_problem(n=120, seed=3, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1])) + 1.0
    return Problem.from_matrix(sp.csr_matrix(X), y), rng.integers(1, 4, size=n)


@pytest.mark.parametrize("solver,classes", [("c_svc", 3), ("nu_svc", 2), ("epsilon_svr", 0),
                                            ("one_class", 0), ("kernel", 3), ("dcsvm", 2)])
def test_integer_weight_is_the_row_repeated(solver, classes, monkeypatch):
    from svmtool.solvers.dcsvm import dcsvm

    # DC-SVM divides problems this small too (two levels of two clusters)
    monkeypatch.setattr(dcsvm, "DC_MIN_ROWS", 0)
    monkeypatch.setattr(dcsvm, "MIN_LEVEL_CLUSTERS", 1)
    monkeypatch.setattr(dcsvm, "MIN_EXACT_CLUSTER_ROWS", 0)
    prob, k = small_problem(classes=max(classes, 2))
    if classes == 0:
        prob.y = prob.X.toarray()[:, 0] + prob.X.toarray()[:, 1] ** 2
    kw = {"oneclass": OneClassParams(nu=0.3)} if solver in ("nu_svc", "one_class") else {}
    params = TrainParams(solver=solver, C=2.0, eps=1e-7, kernel=KernelParams(kernel_type=2,
                         gamma=0.5), dcsvm=DcsvmParams(levels=2, k_clusters=2, sample=60),
                         **kw)
    weighted = prob.take_rows(np.arange(prob.n_rows))
    weighted.weights = k.astype(np.float64)
    a = api.train(weighted, params).decision_function(prob.X)
    b = api.train(repeated(prob, k), params).decision_function(prob.X)
    assert np.max(np.abs(a - b)) <= 1e-4 * max(1.0, np.max(np.abs(b)))


def test_dcsvm_early_models_take_the_weights(monkeypatch):
    """--early: uniform weights c are C * c (the same clusters, the same local problems), and
    other weights change the local models; binary (pair models) and three classes (one
    clustering for all pairs)."""
    from svmtool.solvers.dcsvm import dcsvm

    monkeypatch.setattr(dcsvm, "DC_MIN_ROWS", 0)
    monkeypatch.setattr(dcsvm, "MIN_LEVEL_CLUSTERS", 1)
    monkeypatch.setattr(dcsvm, "MIN_EXACT_CLUSTER_ROWS", 0)
    for classes in (2, 3):
        prob, k = small_problem(n=200, classes=classes)

        def early(C, weights):
            p = prob.take_rows(np.arange(prob.n_rows))
            p.weights = weights
            params = TrainParams(solver="dcsvm", C=C, eps=1e-8, seed=1, kernel=KernelParams(
                kernel_type=2, gamma=0.5), dcsvm=DcsvmParams(levels=2, k_clusters=2, sample=100,
                                                             early=True, early_level=1))
            return api.train(p, params).decision_function(prob.X)

        plain = early(1.5, None)
        assert np.allclose(early(0.5, np.full(prob.n_rows, 3.0)), plain, atol=1e-6)
        assert np.max(np.abs(early(1.5, k.astype(np.float64)) - plain)) > 1e-2


def test_zero_weight_rows_leave_the_kernel_model():
    prob, k = small_problem(classes=2)
    w = k.astype(np.float64)
    w[::4] = 0.0
    for solver in ("c_svc", "kernel"):
        params = TrainParams(solver=solver, C=2.0, eps=1e-7, kernel=KernelParams(
            kernel_type=2, gamma=0.5))
        weighted = prob.take_rows(np.arange(prob.n_rows))
        weighted.weights = w
        kept = prob.take_rows(np.flatnonzero(w > 0))
        kept.weights = w[w > 0]
        a = api.train(weighted, params)
        b = api.train(kept, params)
        assert np.allclose(a.decision_function(prob.X), b.decision_function(prob.X), atol=1e-6)
        assert a.total_sv == b.total_sv


def test_cross_validation_and_probability_carry_the_weights():
    """-v folds and -b 1's internal folds train on weighted rows: with weights 2 and C 1 they
    are the unweighted runs at C 2 (same seeded folds)."""
    from svmtool.solvers import get_spec
    from svmtool.solvers.kernel.libsvm_train import cross_validation

    prob = load_svmlight(HEART)
    spec = get_spec("c_svc")
    weighted = prob.take_rows(np.arange(prob.n_rows))
    weighted.weights = np.full(prob.n_rows, 2.0)
    p1 = libsvm_params("c_svc", libsvm=LibsvmParams(probability=True))
    p2 = replace(p1, C=2.0)
    assert np.array_equal(cross_validation(weighted, p1, spec, 5),
                          cross_validation(prob, p2, spec, 5))
    a, b = api.train(weighted, p1), api.train(prob, p2)
    assert np.allclose(a.probA, b.probA, atol=1e-6) and np.allclose(a.probB, b.probB, atol=1e-6)
    plain = api.train(prob, p1)
    assert not np.allclose(a.probA, plain.probA, atol=1e-3)


def test_svm_train_weight_file_on_the_command_line(tmp_path):
    from conftest import run_cli

    w = heart_weights(270)
    (tmp_path / "w").write_text("".join(f"{float(v)!r}\n" for v in w))
    r = run_cli("svm-train", "-q", "-g", str(GAMMA), "-W", "w", HEART, "m", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    prob = load_svmlight(HEART)
    prob.weights = w
    ref = api.train(prob, TrainParams(solver="c_svc", C=1.0, eps=1e-3, kernel=KernelParams(
        kernel_type=2, gamma=GAMMA)))
    assert np.array_equal(load_model(tmp_path / "m").sv_coef, ref.sv_coef)
    r = run_cli("svm-train", "-q", "-s", "3", "-W", "w", HEART, "m2", cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "m2").exists()


# --- SVMlight's cost: -----------------------------------------------------------------------------


def cost_file(tmp_path):
    w = np.random.default_rng(1).choice([0.2, 1.0, 5.0], size=270)
    path = tmp_path / "costs.svm"
    path.write_text("".join(f"{line.split(' ', 1)[0]} cost:{v:g} {line.split(' ', 1)[1]}\n"
                            for line, v in zip(HEART.read_text().splitlines(), w)))
    return path


@pytest.mark.parametrize("args", [("-t", "0"), ("-t", "2", "-g", "0.1"), ("-t", "2", "-b", "0"),
                                  ("-z", "r", "-t", "0"), ("-z", "r", "-t", "2", "-g", "0.1")])
def test_svm_learn_cost_tokens_match_svmlight(tmp_path, args):
    from conftest import run_cli

    learn, classify = svmlight_programs()
    data = cost_file(tmp_path)
    common = (*args, "-c", "1", "-e", "0.0001")
    subprocess.run([learn, *common, str(data), str(tmp_path / "theirs")], check=True,
                   capture_output=True)
    r = run_cli("svm_learn", *common, data, tmp_path / "ours")
    assert r.returncode == 0, r.stderr
    out = {}
    for name in ("theirs", "ours"):
        subprocess.run([classify, str(data), str(tmp_path / name), str(tmp_path / f"{name}.out")],
                       check=True, capture_output=True)
        out[name] = np.loadtxt(tmp_path / f"{name}.out")
    subprocess.run([learn, *common, str(HEART), str(tmp_path / "plain")], check=True,
                   capture_output=True)
    subprocess.run([classify, str(data), str(tmp_path / "plain"), str(tmp_path / "plain.out")],
                   check=True, capture_output=True)
    plain = np.loadtxt(tmp_path / "plain.out")
    assert np.max(np.abs(out["ours"] - out["theirs"])) <= 2e-3
    assert np.max(np.abs(plain - out["theirs"])) > 0.1      # the tokens change the model


def test_svm_learn_ranking_refuses_cost_tokens(tmp_path):
    from conftest import run_cli

    r = run_cli("svm_learn", "-z", "p", cost_file(tmp_path), tmp_path / "m")
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode() == ("svmtool: error: svm_learn -z p (the ranking solver) does not "
                                 "take instance weights (cost: tokens or -W)\n")
    assert not (tmp_path / "m").exists()


# --- scikit-learn ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["SVC", "SVR", "DCSVC"])
def test_sklearn_sample_weight_equivalence_at_a_tight_tol(name):
    """scikit-learn's own checks (weight k == row repeated k times, 0 == row removed, to rtol
    1e-7) pass once tol is tight enough to reach that (the default tol stops short: see
    svmtool.sklearn._checks)."""
    checks = need("sklearn.utils.estimator_checks")
    import svmtool.sklearn as S

    est = getattr(S, name)(tol=1e-12)
    checks.check_sample_weight_equivalence_on_dense_data(name, est)
    checks.check_sample_weight_equivalence_on_sparse_data(name, est)


def test_sklearn_kernel_estimators_pass_sample_weight():
    """fit(X, y, sample_weight) is svm-train -W's model: SVC, NuSVR and OneClassSVM against
    api.train on the same weighted Problem."""
    import svmtool.sklearn as S

    prob = load_svmlight(HEART)
    w = heart_weights(prob.n_rows)
    X = prob.X.toarray()
    est = S.SVC(C=1.0, gamma=GAMMA, tol=1e-6).fit(X, prob.y, sample_weight=w)
    weighted = prob.take_rows(np.arange(prob.n_rows))
    weighted.weights = w
    ref = api.train(weighted, libsvm_params("c_svc"))
    assert est.n_support_.sum() == ref.total_sv
    sk = need("sklearn.svm").SVC(C=1.0, gamma=GAMMA, tol=1e-6).fit(X, prob.y, sample_weight=w)
    assert np.max(np.abs(est.decision_function(X) - sk.decision_function(X))) <= 1e-2
    oc = S.OneClassSVM(nu=0.3, gamma=GAMMA, tol=1e-6).fit(X, sample_weight=w)
    sk_oc = need("sklearn.svm").OneClassSVM(nu=0.3, gamma=GAMMA, tol=1e-6).fit(
        X, sample_weight=w)
    assert np.max(np.abs(oc.decision_function(X) - sk_oc.decision_function(X))) <= 1e-2
    with pytest.raises(ValueError, match="sample_weight must be finite"):
        S.SVR().fit(X, prob.y, sample_weight=-w)
    with pytest.raises(ValueError, match="sample_weight has shape"):
        S.NuSVR().fit(X, prob.y, sample_weight=w[:-1])

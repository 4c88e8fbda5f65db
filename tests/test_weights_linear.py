"""Instance weights in the linear solvers beyond dual CD (issue 39): Newton (-s 0, 2, 11), the
dual solvers of logistic regression and SVR (-s 7, 12, 13), L1-regularised CD (-s 5, 6),
Crammer-Singer (-s 4), the one-class SVM (-s 21) and the cutting-plane family (cp, ocas, gca2,
tca).

Truths that are not svmtool's: the weighted primal objective computed here with numpy at
scikit-learn's weighted liblinear solution (LinearSVC, LogisticRegression, LinearSVR with
``sample_weight``), which svmtool's must match or beat; an integer weight k against the row
written k times (weight 0: the row left out); and the unweighted optimum, which must be worse on
the weighted objective (the weights matter).  The multivariate losses of ``-s cp --loss`` refuse
weights in one line; ``svm_perf_learn`` ignores ``cost:`` as SVMperf 3.00 does, saying so.
"""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from conftest import DATA
from svmtool import api
from svmtool.errors import ParameterError
from svmtool.io.svmlight import load_svmlight
from svmtool.params import CuttingPlaneParams

HEART = DATA / "heart_scale"
P = 0.1                     # -p, the SVR tube width (the default)
CLASSIFIERS = {"lr": "logistic", "newton": "squared", "lr-dual": "logistic",
               "l1r-l2": "squared", "l1r-lr": "logistic", "ocas": "hinge", "cp": "hinge",
               "gca2": "hinge", "tca": "hinge"}
REGRESSION = {"svr-l2": "squared", "svr-l2-dual": "squared", "svr-l1-dual": "linear"}
EPS = {"lr-dual": 1e-6, "svr-l2-dual": 1e-6, "svr-l1-dual": 1e-6, "ocas": 1e-6, "cp": 1e-6,
       "gca2": 1e-6, "tca": 1e-6, "one-class": 1e-6, "ocas-mc": 1e-6}


def heart():
    return load_svmlight(HEART)


def signs(prob):
    return np.where(prob.y == prob.y[0], 1.0, -1.0)


def objective(prob, solver, w, C, weights):
    """0.5 |w|^2 (|w|_1 for the L1-regularised) + C sum W_i loss_i, with numpy."""
    z = prob.X @ w
    if solver in REGRESSION:
        r = np.maximum(0.0, np.abs(z - prob.y) - P)
        loss = r * r if REGRESSION[solver] == "squared" else r
    else:
        m = signs(prob) * z
        slack = np.maximum(0.0, 1.0 - m)
        loss = {"logistic": np.logaddexp(0.0, -m), "squared": slack * slack,
                "hinge": slack}[CLASSIFIERS[solver]]
    reg = np.abs(w).sum() if solver.startswith("l1r") else 0.5 * float(w @ w)
    return reg + C * float(weights @ loss)


def fit_w(prob, solver, C=1.0):
    model = api.train(prob, solver=solver, C=C, eps=EPS.get(solver, 1e-8), bias=-1,
                      max_iter=100000)
    return model.w[:, 0]


def sklearn_w(prob, solver, C, weights):
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC, LinearSVR

    X, tight = prob.X, dict(tol=1e-10, max_iter=1_000_000)
    if solver == "svr-l2":
        ref = LinearSVR(loss="squared_epsilon_insensitive", epsilon=P, C=C, dual=True,
                        fit_intercept=False, **tight).fit(X, prob.y, sample_weight=weights)
    elif solver in ("lr", "l1r-lr"):
        penalty = "l1" if solver == "l1r-lr" else "l2"
        # scikit-learn's liblinear logistic regression minimises 0.5|w|^2 (|w|_1) + C sum loss
        with warnings.catch_warnings():     # newer scikit-learn: penalty= is deprecated
            warnings.simplefilter("ignore")
            ref = LogisticRegression(penalty=penalty, C=C, solver="liblinear",
                                     fit_intercept=False, **tight).fit(
                X, signs(prob), sample_weight=weights)
    else:
        penalty = "l1" if solver == "l1r-l2" else "l2"
        ref = LinearSVC(penalty=penalty, loss="squared_hinge", dual=penalty == "l2", C=C,
                        fit_intercept=False, **tight).fit(X, signs(prob), sample_weight=weights)
    return ref.coef_.ravel()


@pytest.mark.parametrize("solver", ["lr", "newton", "l1r-l2", "l1r-lr", "svr-l2"])
def test_objective_at_least_as_good_as_scikit_learn_weighted(solver):
    """-s 0, 2, 5, 6, 11 (-s 1 and 3: tests/test_weights.py) on the weighted objective."""
    prob = heart()
    C = 0.5
    weights = np.random.default_rng(11).uniform(0.1, 3.0, prob.n_rows)
    theirs = objective(prob, solver, sklearn_w(prob, solver, C, weights), C, weights)
    prob.weights = weights
    ours = objective(prob, solver, fit_w(prob, solver, C), C, weights)
    assert ours <= theirs * (1 + 1e-4), (ours, theirs)
    prob.weights = None
    plain = objective(prob, solver, fit_w(prob, solver, C), C, weights)
    assert plain > ours * (1 + 1e-3), (plain, ours)


def repeated(prob, k):
    rep = prob.take_rows(np.repeat(np.arange(prob.n_rows), k))
    rep.weights = None
    return rep


@pytest.mark.parametrize("solver", sorted(CLASSIFIERS) + sorted(REGRESSION))
def test_integer_weight_is_the_row_repeated(solver):
    """Weights 0..3: the same optimum as the rows written that many times (0: left out), and
    a different one from the unweighted problem."""
    prob = heart()
    k = np.random.default_rng(5).integers(0, 4, prob.n_rows)
    prob.weights = k.astype(np.float64)
    a = objective(prob, solver, fit_w(prob, solver), 1.0, prob.weights)
    rep = repeated(prob, k)
    b = objective(rep, solver, fit_w(rep, solver), 1.0, np.ones(rep.n_rows))
    assert abs(a - b) <= 1e-4 * b, (a, b)
    weights, prob.weights = prob.weights, None
    plain = objective(prob, solver, fit_w(prob, solver), 1.0, weights)
    assert plain > a * (1 + 1e-3), (plain, a)


def one_class_primal(prob, model, weights, nu=0.5):
    w = model.w[:, 0]
    return (0.5 * float(w @ w) - nu * weights.sum() * model.rho
            + float(weights @ np.maximum(0.0, model.rho - prob.X @ w)))


def test_one_class_integer_weight_is_the_row_repeated():
    """-s 21: box 0 <= alpha_i <= W_i and sum alpha = nu sum W (as LIBSVM-weights)."""
    prob = heart()
    k = np.random.default_rng(1).integers(0, 4, prob.n_rows)
    prob.weights = k.astype(np.float64)
    kw = dict(solver="one-class", eps=1e-6, bias=-1, max_iter=100000)
    weighted = api.train(prob, **kw)
    rep = repeated(prob, k)
    plain_rep = api.train(rep, **kw)
    a = one_class_primal(prob, weighted, prob.weights)
    b = one_class_primal(rep, plain_rep, np.ones(rep.n_rows))
    assert abs(a - b) <= 1e-6 * abs(b), (a, b)
    assert abs(weighted.rho - plain_rep.rho) <= 1e-4 * abs(plain_rep.rho)
    weights, prob.weights = prob.weights, None
    assert one_class_primal(prob, api.train(prob, **kw), weights) > a + 1e-3 * abs(a)


def crammer_singer(prob, model, weights, C=1.0):
    """1/2 |W|^2 + C sum W_i max_m (1 - delta(m, y_i) + w_m'x_i - w_{y_i}'x_i)."""
    cls = np.searchsorted(model.labels, prob.y, sorter=np.argsort(model.labels))
    cls = np.argsort(model.labels)[cls]
    rows = np.arange(len(cls))
    Z = prob.X @ model.w
    margin = Z - Z[rows, cls][:, None] + 1.0
    margin[rows, cls] = 0.0
    return 0.5 * float((model.w * model.w).sum()) + C * float(weights @ margin.max(axis=1))


def test_crammer_singer_integer_weight_is_the_row_repeated():
    prob = heart()
    k = np.random.default_rng(9).integers(0, 4, prob.n_rows)
    prob.weights = k.astype(np.float64)
    kw = dict(solver="ocas-mc", C=1.0, eps=1e-6, bias=-1)
    a = crammer_singer(prob, api.train(prob, **kw), prob.weights)
    rep = repeated(prob, k)
    b = crammer_singer(rep, api.train(rep, **kw), np.ones(rep.n_rows))
    assert abs(a - b) <= 1e-4 * b, (a, b)
    weights, prob.weights = prob.weights, None
    assert crammer_singer(prob, api.train(prob, **kw), weights) > a * (1 + 1e-3)


def test_dcd_l2_falls_back_to_newton_weighted():
    """-s 1 at its iteration cap goes on with -s 2 on the weighted problem: the weighted
    optimum, as -s 2 finds it."""
    prob = heart()
    prob.weights = np.random.default_rng(4).uniform(0.1, 3.0, prob.n_rows)
    model = api.train(prob, solver="dcd-l2", C=4.0, eps=1e-3, bias=-1, max_iter=2)
    assert "switched to the primal Newton solver" in (model.report["classes"][0].get("notice")
                                                      or ""), model.report
    a = objective(prob, "newton", model.w[:, 0], 4.0, prob.weights)
    b = objective(prob, "newton", fit_w(prob, "newton", 4.0), 4.0, prob.weights)
    assert abs(a - b) <= 1e-4 * b, (a, b)


@pytest.mark.parametrize("loss", ["f1", "prbep", "rocarea"])
def test_multivariate_losses_refuse_weights(loss):
    prob = heart()
    prob.weights = np.ones(prob.n_rows)
    with pytest.raises(ParameterError, match=f"solver cp with --loss {loss} does not take "
                                             f"instance weights"):
        api.train(prob, solver="cp", cp=CuttingPlaneParams(loss=loss))


# --- the command lines ---------------------------------------------------------------------------

def svmtool(*args, cwd):
    env = dict(os.environ, SVMTOOL_AOT="0")
    return subprocess.run([sys.executable, "-m", "svmtool", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def with_costs(tmp_path, costs):
    lines = HEART.read_text().splitlines()
    path = tmp_path / "costs.svm"
    path.write_text("".join(f"{line.split(' ', 1)[0]} cost:{c:g} {line.split(' ', 1)[1]}\n"
                            for line, c in zip(lines, costs)))
    return path


def test_cli_multivariate_loss_with_cost_tokens_one_line_exit_2(tmp_path):
    data = with_costs(tmp_path, [0.5] * 270)
    r = svmtool("train", "-s", "cp", "--loss", "f1", data, "out.model", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert r.stderr.startswith("svmtool: error: solver cp with --loss f1 does not take "
                               "instance weights") and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "out.model").exists()


def test_svm_perf_learn_ignores_cost_tokens_as_svmperf_does(tmp_path):
    """SVMperf 3.00 parses cost: but never uses it: the same model as without the tokens, and
    one warning line saying so."""
    data = with_costs(tmp_path, np.random.default_rng(3).choice([0.2, 1.0, 5.0], 270))
    a = svmtool("svm_perf_learn", "-c", "1", data, "a.model", cwd=tmp_path)
    b = svmtool("svm_perf_learn", "-c", "1", HEART, "b.model", cwd=tmp_path)
    assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
    assert a.stderr == (f"svmtool: warning: {data}: cost: tokens ignored, as SVMperf 3.00 "
                        f"ignores them (its losses are of the whole labeling)\n"), a.stderr
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()

"""Instance weights (issue 39, first part): SVMlight's cost: tokens and LIBLINEAR-weights' -W.

Checked against truths that do not come from svmtool's dual CD itself: the weighted primal
objective 0.5 |w|^2 + C sum W_i loss_i computed here with numpy, against scikit-learn's weighted
liblinear; an integer weight k against the row written k times; a zero weight against the row
left out.  Every other solver of the registry refuses a weighted problem in one line, and every
bad weight is one line naming file, line and reason, exit 2, no model written.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import DATA
from svmtool import api
from svmtool.errors import DataFormatError, ParameterError
from svmtool.io.svmlight import load_svmlight
from svmtool.params import DcdParams, TrainParams
from svmtool.solvers import specs
from svmtool.solvers.dual_cd import dcd

HEART = DATA / "heart_scale"
SOLVERS = {"dcd-l2": "squared_hinge", "dcd-l1": "hinge"}


def heart():
    return load_svmlight(HEART)


def random_weights(n, seed=0):
    return np.random.default_rng(seed).uniform(0.1, 3.0, n)


def objective(prob, w, C, loss, weights):
    """0.5 |w|^2 + C sum W_i loss_i, labels as signs of the first label (LIBLINEAR's order)."""
    y = np.where(prob.y == prob.y[0], 1.0, -1.0)
    slack = np.maximum(0.0, 1.0 - y * (prob.X @ w))
    loss_i = slack if loss == "hinge" else slack * slack
    return 0.5 * float(w @ w) + C * float(weights @ loss_i)


def svmtool_w(prob, solver, C, **kw):
    model = api.train(prob, solver=solver, C=C, eps=1e-6, max_iter=100000, bias=-1, **kw)
    return model.w[:, 0]


@pytest.mark.parametrize("solver", sorted(SOLVERS))
@pytest.mark.parametrize("C", [0.5, 4.0])
def test_objective_at_least_as_good_as_scikit_learn_weighted(solver, C):
    from sklearn.svm import LinearSVC

    prob = heart()
    weights = random_weights(prob.n_rows, seed=int(C * 10))
    prob.weights = weights
    ours = objective(prob, svmtool_w(prob, solver, C), C, SOLVERS[solver], weights)
    y = np.where(prob.y == prob.y[0], 1.0, -1.0)
    ref = LinearSVC(loss=SOLVERS[solver], dual=True, C=C, fit_intercept=False, tol=1e-6,
                    max_iter=1_000_000).fit(prob.X, y, sample_weight=weights)
    theirs = objective(prob, ref.coef_.ravel(), C, SOLVERS[solver], weights)
    assert ours <= theirs * (1 + 1e-4), (ours, theirs)
    # and the weights matter: the unweighted optimum is worse on the weighted objective
    prob.weights = None
    plain = objective(prob, svmtool_w(prob, solver, C), C, SOLVERS[solver], weights)
    assert plain > ours * (1 + 1e-3)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_integer_weight_is_the_row_repeated(solver):
    prob = heart()
    k = np.random.default_rng(5).integers(1, 4, prob.n_rows)
    repeated = prob.take_rows(np.repeat(np.arange(prob.n_rows), k))
    prob.weights = k.astype(np.float64)
    w_weighted = svmtool_w(prob, solver, 1.0)
    w_repeated = svmtool_w(repeated, solver, 1.0)
    ones = np.ones(repeated.n_rows)
    a = objective(prob, w_weighted, 1.0, SOLVERS[solver], prob.weights)
    b = objective(repeated, w_repeated, 1.0, SOLVERS[solver], ones)
    assert abs(a - b) <= 1e-4 * b, (a, b)
    np.testing.assert_allclose(w_weighted, w_repeated, rtol=0, atol=1e-2)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_zero_weight_is_the_row_removed_and_ones_are_no_weights(solver):
    prob = heart()
    weights = np.ones(prob.n_rows)
    weights[::7] = 0.0
    kept = prob.take_rows(np.flatnonzero(weights > 0))
    plain = svmtool_w(kept, solver, 2.0)
    prob.weights = weights
    # the zero-weight rows are left out: the same problem, the same order, the same bits
    assert np.array_equal(svmtool_w(prob, solver, 2.0), plain)
    # all weights 1 give the unweighted model bit for bit
    kept.weights = np.ones(kept.n_rows)
    assert np.array_equal(svmtool_w(kept, solver, 2.0), plain)


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_weighted_loops_python_and_jit_bit_identical(loss):
    prob = heart()
    weights = random_weights(prob.n_rows, seed=3)
    y = np.where(prob.y > 0, 1.0, -1.0)
    out = []
    # the Python loop, the jitted loop, and the Python loop handing over to the jitted one
    for dp in (DcdParams(engine="python"), DcdParams(engine="jit"),
               DcdParams(engine="auto", python_budget=3000)):
        params = TrainParams(eps=1e-4, max_iter=2000, dcd=dp)
        out.append(dcd.fit(prob.indptr, prob.indices, prob.data, y, prob.n_features, 1.5, 0.7,
                           params, loss=loss, weights=weights))
    for other in out[1:]:
        assert np.array_equal(out[0].w, other.w) and np.array_equal(out[0].alpha, other.alpha)
        assert out[0].iterations == other.iterations > 3
    # the per-row bounds are honoured: alpha_i <= C_class * W_i for the L1 loss
    if loss == "l1":
        assert np.all(out[0].alpha <= np.where(y > 0, 1.5, 0.7) * weights)


@pytest.mark.parametrize("weights, message", [
    (np.ones(3), "3 instance weights for 270 rows"),
    (np.r_[np.ones(269), -1.0], "instance weights must be finite numbers >= 0"),
    (np.r_[np.nan, np.ones(269)], "instance weights must be finite numbers >= 0"),
])
def test_api_checks_weights_built_in_memory(weights, message):
    prob = heart()
    prob.weights = weights
    with pytest.raises(ParameterError, match=message):
        api.train(prob, solver="dcd-l1")


def test_every_other_solver_refuses_weights():
    prob = heart()
    prob.weights = random_weights(prob.n_rows)
    refusing = [s for s in specs() if not s.instance_weights]
    assert refusing and all(s.name not in refusing for s in specs() if s.name in SOLVERS)
    for spec in refusing:
        with pytest.raises(ParameterError) as e:
            api.train(prob, solver=spec.name)
        assert str(e.value) == (f"solver {spec.name} does not take instance weights "
                                f"(cost: tokens or -W)")
    # the linear solvers' own checks are in tests/test_weights_linear.py, the kernel solvers' in
    # tests/test_weights_kernel.py
    kernel = {"kernel", "dcsvm", "c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr"}
    assert {s.name for s in specs() if s.instance_weights} >= set(SOLVERS) | kernel


# --- the command lines ---------------------------------------------------------------------------

def svmtool(*args, cwd):
    env = dict(os.environ, SVMTOOL_AOT="0")
    return subprocess.run([sys.executable, "-m", "svmtool", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def write_weights(path, values):
    path.write_text("".join(f"{v}\n" for v in values))
    return path


def heart_lines():
    return HEART.read_text().splitlines()


def _bad_weight_files(tmp):
    n = len(heart_lines())
    good = ["1"] * n
    cases = {
        "short": (good[:-1], "w:269: 269 weights for 270 examples"),
        "long": (good + ["1"], "w:271: 271 weights for 270 examples"),
        "negative": (good[:4] + ["-0.5"] + good[5:], "w:5: weight '-0.5' is negative"),
        "nan": (good[:9] + ["nan"] + good[10:], "w:10: weight 'nan' is not finite"),
        "inf": (good[:9] + ["-Inf"] + good[10:], "w:10: weight '-Inf' is not finite"),
        "overflow": (good[:2] + ["1e400"] + good[3:], "w:3: weight '1e400' is not finite"),
        "word": (good[:2] + ["two"] + good[3:], "w:3: weight 'two' is not a number"),
        "two numbers": (good[:2] + ["1 2"] + good[3:], "w:3: weight '1 2' is not a number"),
        "blank line": (good[:2] + [""] + good[3:], "w:3: empty line"),
        "empty file": ([], "w: empty weight file"),
    }
    for name, (lines, message) in cases.items():
        folder = tmp / name.replace(" ", "_")
        folder.mkdir()
        (folder / "w").write_text("".join(s + "\n" for s in lines))
        yield name, folder, message


@pytest.mark.parametrize("command", ["train", "svm-train"])
def test_bad_weight_files_one_line_exit_2_no_model(tmp_path, command):
    for name, folder, message in _bad_weight_files(tmp_path):
        r = svmtool(command, "-W", "w", HEART, "out.model", cwd=folder)
        assert r.returncode == 2, (name, r.stderr)
        assert len(r.stderr.splitlines()) == 1, (name, r.stderr)
        assert r.stderr.startswith(f"svmtool: error: {message}"), (name, r.stderr)
        assert "Traceback" not in r.stderr and r.stdout == ""
        assert not (folder / "out.model").exists(), name


def test_weight_file_and_cost_tokens_together_refused(tmp_path):
    data = tmp_path / "costs.svm"
    data.write_text("".join(f"{line.split(' ', 1)[0]} cost:2 {line.split(' ', 1)[1]}\n"
                            for line in heart_lines()))
    write_weights(tmp_path / "w", [1] * 270)
    r = svmtool("train", "-W", "w", data, "out.model", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    assert "cost: tokens and -W w gives weights too" in r.stderr
    assert not (tmp_path / "out.model").exists()


@pytest.mark.parametrize("token, reason", [
    ("cost:-1", "cost in 'cost:-1' is negative (an instance weight is 0 or more)"),
    ("cost:nan", "cost in 'cost:nan' is not finite (NaN or Inf)"),
    ("cost:1e999", "cost in 'cost:1e999' is not finite (NaN or Inf)"),
    ("cost:x", "cost in 'cost:x' is not a number"),
    ("cost:", "cost in 'cost:' is not a number"),
])
def test_bad_cost_tokens_one_line_exit_2_no_model(tmp_path, token, reason):
    lines = heart_lines()
    lines[3] = lines[3].replace(" ", f" {token} ", 1)
    data = tmp_path / "bad.svm"
    data.write_text("\n".join(lines) + "\n")
    for command in ("train", "svm_learn"):
        r = svmtool(command, data, "out.model", cwd=tmp_path)
        assert r.returncode == 2 and r.stderr == f"svmtool: error: {data}:4: {reason}\n", \
            (command, r.stderr)
        assert not (tmp_path / "out.model").exists()


def test_weight_file_trains_as_cost_tokens(tmp_path):
    """-W and cost: tokens are two spellings of the same weights: the same model bytes."""
    weights = np.random.default_rng(2).choice([0.0, 0.2, 1.0, 5.0], 270)
    write_weights(tmp_path / "w", [repr(float(v)) for v in weights])
    data = tmp_path / "costs.svm"
    data.write_text("".join(f"{line.split(' ', 1)[0]} cost:{float(v)!r} {line.split(' ', 1)[1]}\n"
                            for line, v in zip(heart_lines(), weights)))
    for s in ("1", "3"):
        a = svmtool("train", "-s", s, "-W", "w", HEART, "a.model", cwd=tmp_path)
        b = svmtool("train", "-s", s, data, "b.model", cwd=tmp_path)
        c = svmtool("train", "-s", s, HEART, "c.model", cwd=tmp_path)
        assert a.returncode == b.returncode == c.returncode == 0, (a.stderr, b.stderr)
        assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()
        assert (tmp_path / "a.model").read_bytes() != (tmp_path / "c.model").read_bytes()


def test_front_ends_refuse_cost_tokens_before_any_output(tmp_path):
    data = tmp_path / "costs.svm"
    data.write_text("".join(f"{line.split(' ', 1)[0]} cost:0.5 {line.split(' ', 1)[1]}\n"
                            for line in heart_lines()))
    runs = {
        ("train", "-s", "ordinal"): "solver ordinal",
        ("svm_learn", "-z", "p"): "svm_learn -z p (the ranking solver)",
    }
    # (svmtool convert keeps them: tests/test_cache_weights.py)
    for args, what in runs.items():
        out = "out.model"
        r = svmtool(*args, data, out, cwd=tmp_path)
        assert r.returncode == 2 and r.stdout == "", (args, r.stdout, r.stderr)
        assert r.stderr == (f"svmtool: error: {what} does not take instance weights "
                            f"(cost: tokens or -W)\n"), (args, r.stderr)
        assert not (tmp_path / out).exists()
    # the -C search of a Newton solver (one shared row oracle) takes them
    r = svmtool("train", "-s", "2", "-C", data, cwd=tmp_path)
    assert r.returncode == 0 and "Best C" in r.stderr, r.stderr


def test_predict_ignores_cost_tokens(tmp_path):
    """cost: weighs a training example; predict reads the rows as they are (as svm_classify
    does)."""
    data = tmp_path / "costs.svm"
    data.write_text("".join(f"{line.split(' ', 1)[0]} cost:3 {line.split(' ', 1)[1]}\n"
                            for line in heart_lines()))
    assert svmtool("train", HEART, "m", cwd=tmp_path).returncode == 0
    a = svmtool("predict", data, "m", "a.out", cwd=tmp_path)
    b = svmtool("predict", HEART, "m", "b.out", cwd=tmp_path)
    assert a.returncode == b.returncode == 0
    assert (tmp_path / "a.out").read_bytes() == (tmp_path / "b.out").read_bytes()


# --- the two readers ----------------------------------------------------------------------------

COST_INPUTS = [
    b"1 cost:2.5 1:1\n-1 2:1 cost:0\n1 1:0.5 sid:abc\n",
    b"1 qid:3 cost:1e-300 1:1 # c\n-1 cost:0.1 cost:7 2:1\n",
    b"1 cost:" + b"1" * 900 + b" 1:1\n",
    b"1 cost:-0.0 1:1\n1 cost:00012.500e+1\n",
    b"1 1:1\n" * 50 + b"-1 cost:3 2:2\n",
    b"1 1:1\n1 cost:-2 1:1\n",
    b"1 cost:1.5x 1:1\n",
    b"1 cost:+inf 1:1\n",
]


@pytest.mark.parametrize("raw", COST_INPUTS)
def test_jitted_and_python_readers_agree_on_cost_tokens(raw, tmp_path):
    path = tmp_path / "in.svm"
    path.write_bytes(raw)
    out = []
    for engine in ("jit", "python"):
        try:
            p = load_svmlight(path, engine=engine)
            out.append(("ok", None if p.weights is None else p.weights.tobytes(),
                        p.indptr.tobytes(), p.data.tobytes()))
        except DataFormatError as e:
            out.append(("error", e.line, e.reason))
    assert out[0] == out[1]
    if out[0][0] == "ok":
        assert out[0][1] is not None

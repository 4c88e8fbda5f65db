"""Unattended retraining (issue: cron batch retraining): warm starts for every solver family,
--time-limit, the lock on MODEL, --report/--log, the validation gate, `svmtool info`, the cron
example, and a start-up that stays free of numba for a small job."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace

import numpy as np
import pytest

from conftest import DATA, ROOT, run_cli, shared_file, write_svmlight

import svmtool
from svmtool import api
from svmtool.errors import ParameterError
from svmtool.params import KernelParams, TrainParams

HEART = DATA / "heart_scale"


@pytest.fixture(scope="module")
def heart():
    return svmtool.load_data(HEART)


@pytest.fixture(scope="module")
def a9a_part():
    return svmtool.load_data(DATA / "a9a").take_rows(np.arange(4000))


def _objective(model):
    reps = model.report["classes"]
    key = "dual" if model.report["solver"] in ("kernel", "dcsvm") else "primal"
    return sum(r[key] for r in reps)


def _changed(prob, seed=3, frac=0.05):
    """The nightly scenario in small: a few rows replaced by copies of other rows, scaled."""
    rng = np.random.default_rng(seed)
    n = prob.n_rows
    rows = np.arange(n)
    swap = rng.choice(n, size=max(1, int(frac * n)), replace=False)
    rows[swap] = rng.choice(n, size=len(swap))
    return prob.take_rows(rows)


# -- 1. warm start --------------------------------------------------------------------------------

SOLVERS = [("dcd-l2", {}), ("dcd-l1", {}), ("newton", {}), ("lr", {}), ("cp", {}),
           ("ocas", {}), ("gca2", {}), ("tca", {}), ("ocas-mc", {}), ("ordinal", {}),
           ("kernel", {"kernel": KernelParams(gamma=0.05)}),
           ("dcsvm", {"kernel": KernelParams(gamma=0.05)})]


@pytest.mark.parametrize("solver,extra", SOLVERS, ids=[s for s, _ in SOLVERS])
def test_warm_start_reaches_the_cold_objective(heart, solver, extra):
    """Every family: a warm start from yesterday's model solves today's problem to the same
    objective as a cold start, within the solver's tolerance, in no more iterations."""
    bias = -1.0 if solver == "ordinal" else 1.0
    p = TrainParams(solver=solver, C=1.0, bias=bias, eps=1e-4 if solver.startswith("dcd")
                    else None, **extra)
    today = _changed(heart)
    old = api.train(heart, p)
    cold = api.train(today, p)
    warm = api.train(today, p, init_model=old)
    f_cold, f_warm = _objective(cold), _objective(warm)
    # relative tolerances of the solvers' stopping rules, with room for the cut-off point
    assert abs(f_warm - f_cold) <= 2e-3 * abs(f_cold) + 1e-6, (f_cold, f_warm)
    it_cold = sum(r["iterations"] for r in cold.report["classes"])
    it_warm = sum(r["iterations"] for r in warm.report["classes"])
    assert it_warm <= it_cold, (it_cold, it_warm)


def test_warm_start_from_the_optimum_needs_no_newton_step(heart):
    model = api.train(heart, solver="newton", bias=1.0, eps=1e-6)
    again = api.train(heart, solver="newton", bias=1.0, eps=1e-3, init_model=model)
    assert again.report["classes"][0]["iterations"] == 0
    np.testing.assert_array_equal(again.w, model.w)


@pytest.mark.shared
def test_svr_warm_start_reaches_the_cold_objective():
    """Regression (-s 11) starts from yesterday's regression model: the same objective as a cold
    start in fewer Newton steps; a classifier cannot start it."""
    prob = svmtool.load_data(shared_file("abalone", "abalone_scale"))
    p = TrainParams(solver="svr-l2", C=1.0, bias=1.0, eps=1e-4)
    today = _changed(prob)
    old = api.train(prob, p)
    cold = api.train(today, p)
    warm = api.train(today, p, init_model=old)
    f_cold, f_warm = _objective(cold), _objective(warm)
    assert abs(f_warm - f_cold) <= 1e-4 * abs(f_cold), (f_cold, f_warm)
    assert warm.report["classes"][0]["iterations"] < cold.report["classes"][0]["iterations"]
    two = replace(prob, y=np.where(prob.y > 10, 1.0, -1.0))
    clf = api.train(two, solver="newton", bias=1.0)
    with pytest.raises(ParameterError, match="cannot start"):
        api.train(today, p, init_model=clf)


def test_labels_in_another_order_are_mapped(heart):
    """The same classes, the other one first: the positive class changes, w flips sign."""
    heart = replace(heart, y=np.where(heart.y > 0, 2.0, 1.0))   # labels in order of appearance
    model = api.train(heart, solver="newton", bias=1.0, eps=1e-6)
    other_first = heart.take_rows(np.argsort(heart.y != model.labels[1], kind="stable"))
    assert other_first.y[0] == model.labels[1]
    again = api.train(other_first, solver="newton", bias=1.0, eps=1e-3, init_model=model)
    assert list(again.labels) == list(model.labels[::-1])
    assert again.report["classes"][0]["iterations"] == 0
    np.testing.assert_allclose(again.w, -model.w)


def test_three_classes_mapped_by_label(heart):
    y = heart.y.copy()
    y[::3] = 7.0
    prob = replace(heart, y=y)
    model = api.train(prob, solver="newton", bias=1.0, eps=1e-6)
    perm = np.argsort(-y, kind="stable")                  # 7 first, then +1, then -1
    again = api.train(prob.take_rows(perm), solver="newton", bias=1.0, eps=1e-3,
                      init_model=model)
    assert list(again.labels) != list(model.labels)
    assert all(r["iterations"] == 0 for r in again.report["classes"])
    cols = [list(model.labels).index(v) for v in again.labels]
    np.testing.assert_allclose(again.w, model.w[:, cols])


def test_new_features_start_at_zero_and_bias_is_rescaled(heart):
    from svmtool.solvers import get_spec
    from svmtool.solvers.common.warm import linear_start

    model = api.train(heart, solver="newton", bias=1.0)
    w = linear_start(model, get_spec("newton"), model.labels, heart.n_features + 2, 2.0)
    assert w.shape == (heart.n_features + 3, 1)
    np.testing.assert_array_equal(w[:heart.n_features, 0], model.w[:heart.n_features, 0])
    assert np.all(w[heart.n_features:heart.n_features + 2] == 0)
    assert w[-1, 0] * 2.0 == pytest.approx(model.w[-1, 0] * 1.0)      # same bias term
    no_bias = linear_start(model, get_spec("newton"), model.labels, heart.n_features, -1.0)
    assert no_bias.shape == (heart.n_features, 1)


def test_another_class_set_or_kind_is_refused(heart, tmp_path):
    model = api.train(heart, solver="newton")
    y = heart.y.copy()
    y[y < 0] = 3.0
    with pytest.raises(ParameterError, match="classes"):
        api.train(replace(heart, y=y), solver="newton", init_model=model)
    with pytest.raises(ParameterError, match="cannot start -s ocas-mc"):
        api.train(heart, solver="ocas-mc", init_model=model)
    path = tmp_path / "k.model"
    api.save_model(api.train(heart, solver="kernel"), path)
    r = run_cli("train", "-q", "--init-model", path, HEART, tmp_path / "lin.model")
    assert r.returncode == 2
    assert r.stderr.decode().strip().splitlines() == [
        f"svmtool: error: --init-model {path}: a kernel (LIBSVM) model cannot start -s dcd-l2"]
    assert not (tmp_path / "lin.model").exists()


def test_kernel_warm_start_matches_support_vectors_by_content(heart):
    from svmtool.solvers.common.warm import KernelStart
    from svmtool.ops.kernels import Rows

    model = api.train(heart, solver="kernel", kernel=KernelParams(gamma=0.05), eps=1e-5)
    alpha = model.report["classes"][0]
    labels = model.labels
    start = KernelStart(model, labels)
    X = Rows(heart.indptr, heart.indices, heart.data, n_features=heart.n_features)
    i = np.flatnonzero(heart.y == labels[0])
    j = np.flatnonzero(heart.y == labels[1])
    a = start.pair_alpha(X, i, j, 0, 1)
    assert np.count_nonzero(a) == model.total_sv == alpha["n_sv"]
    # the coefficients come back: y_i alpha_i summed per class is the model's
    assert a[:len(i)].sum() == pytest.approx(model.sv_coef[0][:model.nr_sv[0]].sum())


def test_cli_warm_start_fewer_iterations(tmp_path):
    old = tmp_path / "old.model"
    assert run_cli("train", "-q", "-s", "ocas", "-B", "1", HEART, old).returncode == 0
    cold = run_cli("train", "-s", "ocas", "-B", "1", HEART, tmp_path / "a.model")
    warm = run_cli("train", "-s", "ocas", "-B", "1", "--init-model", old, HEART,
                   tmp_path / "b.model")
    assert cold.returncode == warm.returncode == 0

    def iters(r):
        line = [ln for ln in r.stderr.decode().splitlines() if "iterations" in ln][0]
        return int(line.split("iterations ")[1].split(",")[0])

    assert iters(warm) < iters(cold)


# -- 2. --time-limit ------------------------------------------------------------------------------

@pytest.mark.parametrize("solver,extra", SOLVERS, ids=[s for s, _ in SOLVERS])
def test_a_spent_budget_stops_every_solver(heart, a9a_part, solver, extra):
    bias = -1.0 if solver == "ordinal" else 1.0
    p = TrainParams(solver=solver, bias=bias, eps=1e-8, deadline=time.monotonic() - 1.0,
                    **extra)
    # the loops that hand back control every so much work need more than heart_scale to stop
    # before they converge
    prob = a9a_part if solver in ("dcd-l1", "dcd-l2", "kernel", "dcsvm") else heart
    model = api.train(prob, p)
    for r in model.report["classes"]:
        assert r["converged"] is False and r["stopped"] == "time limit", r
        assert "time limit" in r["warning"]
    assert model.decision_function(prob).shape[0] == prob.n_rows


def test_cli_time_limit_writes_the_model_with_a_warning(tmp_path):
    model, report = tmp_path / "m.model", tmp_path / "r.json"
    r = run_cli("train", "-s", "cp", "-e", "1e-9", "--time-limit", "0.001", "--report", report,
                DATA / "a9a", model)
    assert r.returncode == 0, r.stderr
    assert "svmtool: warning: class 1: cp stopped by the time limit" in r.stderr.decode()
    assert api.load_model(model).nr_feature == 123
    rec = json.loads(report.read_text())
    assert rec["stopped"] == "time limit" and rec["status"] == "published"


def test_cli_dcsvm_time_limit_gives_an_early_model(tmp_path):
    model = tmp_path / "e.model"
    r = run_cli("train", "-s", "dcsvm", "-g", "0.05", "--levels", "2", "--time-limit", "0.001",
                DATA / "a9a.t", model)
    assert r.returncode == 0, r.stderr
    assert "early-prediction model of level 2" in r.stderr.decode()
    assert model.read_text().startswith("svmtool_early_model")


# -- 3. the lock ----------------------------------------------------------------------------------

HOLD = ("import sys, time; from svmtool.io.lock import locked\n"
        "with locked(sys.argv[1]):\n"
        "    print('locked', flush=True); time.sleep(float(sys.argv[2]))\n")


def _holder(path, seconds):
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "locked"
    return p


def test_second_writer_fails_at_once_with_75(tmp_path):
    model = tmp_path / "m.model"
    model.write_text("old\n")
    holder = _holder(model, 60)
    try:
        r = run_cli("train", "-q", HEART, model)
        assert r.returncode == 75
        assert r.stderr.decode().strip() == (f"svmtool: error: another svmtool (pid "
                                             f"{holder.pid}) is writing {model}")
        assert model.read_text() == "old\n"
    finally:
        holder.kill()
        holder.wait()


def test_wait_outlasts_a_short_holder(tmp_path):
    model = tmp_path / "m.model"
    holder = _holder(model, 1.0)
    r = run_cli("train", "-q", "--wait", "60", HEART, model)
    holder.wait()
    assert r.returncode == 0, r.stderr
    assert model.read_text().startswith("solver_type")


def test_kill_9_leaves_no_stale_lock(tmp_path):
    model = tmp_path / "m.model"
    holder = _holder(model, 60)
    holder.kill()                    # SIGKILL: no clean-up runs
    holder.wait()
    r = run_cli("train", "-q", HEART, model)
    assert r.returncode == 0, r.stderr


def test_devices_pipes_and_stdout_are_not_locked(tmp_path):
    from svmtool.io.lock import lock_path, lockable, locked

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert not lockable("-") and not lockable(fifo)
    assert lockable(tmp_path / "new.model") and not lockable(None)
    if os.path.exists(os.devnull) and not os.path.isfile(os.devnull):
        assert not lockable(os.devnull)
    with locked(fifo) as held:
        assert held is None
    assert not os.path.exists(lock_path(fifo))
    r = run_cli("train", "-q", HEART, "-")
    assert r.returncode == 0 and r.stdout.startswith(b"solver_type")


# -- 4. --report and --log ------------------------------------------------------------------------

def test_report_and_log_describe_the_run(tmp_path):
    model, report, log = tmp_path / "m.model", tmp_path / "r.json", tmp_path / "runs.jsonl"
    r = run_cli("train", "-q", "-s", "3", "-B", "1", "--report", report, "--log", log,
                "--validate", HEART, HEART, model)
    assert r.returncode == 0, r.stderr
    rec = json.loads(report.read_text())
    assert rec["status"] == "published" and rec["solver"] == "dcd-l1"
    assert rec["params"]["C"] == 1.0 and rec["params"]["bias"] == 1.0
    assert rec["data"]["sha256"] == hashlib.sha256(HEART.read_bytes()).hexdigest()
    assert rec["data"]["size"] == HEART.stat().st_size
    assert (rec["data"]["n"], rec["data"]["d"]) == (270, 13)
    assert rec["data"]["classes"] == [-1.0, 1.0]
    assert rec["model"]["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    sub = rec["subproblems"][0]
    assert {"iterations", "primal", "gap", "gap_kind"} <= set(sub)
    assert rec["stopped"] == "converged"
    assert set(rec["times"]) >= {"read", "solve", "write", "total"}
    assert rec["peak_memory_bytes"] > 0
    assert rec["validation"]["metric"] == "accuracy" and rec["validation"]["passed"]
    assert rec["argv"][-2:] == [str(HEART), str(model)]
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["model"] == rec["model"]


def test_concurrent_runs_append_whole_lines(tmp_path):
    log = tmp_path / "runs.jsonl"
    procs = [subprocess.Popen([sys.executable, "-m", "svmtool", "train", "-q", "--log", str(log),
                               str(HEART), str(tmp_path / f"m{k}.model")]) for k in range(4)]
    assert [p.wait(timeout=600) for p in procs] == [0] * 4
    recs = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(r["model"]["path"] for r in recs) == sorted(
        str(tmp_path / f"m{k}.model") for k in range(4))


# -- 5. the validation gate -----------------------------------------------------------------------

def _flipped(tmp_path):
    prob = svmtool.load_data(HEART)
    bad = tmp_path / "flipped.svm"
    write_svmlight(replace(prob, y=-prob.y), bad)
    return bad


def test_gate_refuses_a_worse_model_old_model_byte_identical(tmp_path):
    model, report = tmp_path / "m.model", tmp_path / "r.json"
    assert run_cli("train", "-q", HEART, model).returncode == 0
    before = model.read_bytes()
    r = run_cli("train", "-q", "--validate", HEART, "--max-drop", "2", "--report", report,
                _flipped(tmp_path), model)
    assert r.returncode == 3
    err = r.stderr.decode().strip().splitlines()
    assert len(err) == 1 and err[0].startswith("svmtool: error: validation gate: accuracy fell")
    assert model.read_bytes() == before
    rec = json.loads(report.read_text())
    assert rec["status"] == "refused" and "validation gate" in rec["error"]
    assert rec["validation"]["old"] > rec["validation"]["new"] + 2


def test_gate_min_accuracy(tmp_path):
    model = tmp_path / "m.model"
    r = run_cli("train", "-q", "--validate", HEART, "--min-accuracy", "99.5", HEART, model)
    assert r.returncode == 3 and not model.exists()
    assert b"below --min-accuracy 99.5%" in r.stderr
    r = run_cli("train", "-q", "--validate", HEART, "--min-accuracy", "70", HEART, model)
    assert r.returncode == 0 and model.exists()


def test_gate_options_checked_before_reading(tmp_path):
    for args, msg in ((["--max-drop", "1"], "--max-drop needs --validate FILE"),
                      (["--validate", HEART, "--min-accuracy", "120"],
                       "--min-accuracy must be between 0 and 100"),
                      (["-v", "3", "--report", "r.json"], "--report: only for training"),
                      (["--time-limit", "0"], "--time-limit must be > 0"),
                      (["-s", "kernel", "--wait", "-1"], "--wait must be >= 0")):
        r = run_cli("train", *args, tmp_path / "missing.svm", tmp_path / "m.model")
        assert r.returncode == 2, (args, r.stderr)
        assert msg in r.stderr.decode(), (args, r.stderr)


# -- 6. svmtool info ------------------------------------------------------------------------------

def test_info_linear_without_numba(tmp_path):
    model = tmp_path / "m.model"
    assert run_cli("train", "-q", "-B", "1", HEART, model).returncode == 0
    code = ("import sys, json, io, contextlib; from svmtool.cli import run\n"
            "buf = io.StringIO()\n"
            f"with contextlib.redirect_stdout(buf): rc = run(['info', '--json', {str(model)!r}])\n"
            "print(json.dumps([rc, 'numba' in sys.modules, json.loads(buf.getvalue())]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rc, numba, d = json.loads(out.stdout)
    assert (rc, numba) == (0, False)
    m = api.load_model(model)
    assert d["format"] == "LIBLINEAR" and d["solver_type"] == "L2R_L2LOSS_SVC_DUAL"
    assert d["labels"] == [float(v) for v in m.labels] and d["features"] == 13
    assert d["bias"] == 1.0 and d["size"] == model.stat().st_size
    assert d["nonzero_weights"] == int(np.count_nonzero(m.w[:13]))


def test_info_kernel_early_and_svmlight(tmp_path):
    k, e, s = tmp_path / "k.model", tmp_path / "e.model", tmp_path / "s.model"
    assert run_cli("train", "-q", "-s", "kernel", "-g", "0.05", HEART, k).returncode == 0
    assert run_cli("train", "-q", "-s", "dcsvm", "--early", HEART, e).returncode == 0
    assert run_cli("train", "-q", "-s", "3", "--model-format", "svmlight", HEART,
                   s).returncode == 0
    dk = json.loads(run_cli("info", "--json", k).stdout)
    assert dk["format"] == "LIBSVM" and dk["kernel"]["type"] == "rbf"
    assert dk["kernel"]["gamma"] == 0.05
    assert dk["support_vectors"] == api.load_model(k).total_sv
    de = json.loads(run_cli("info", "--json", e).stdout)
    assert de["format"] == "svmtool-early" and de["model"] == "early"
    ds = json.loads(run_cli("info", "--json", s).stdout)
    assert ds["format"] == "SVMlight" and ds["weight_vectors"] == 1
    assert ds["task"] == "classification"
    r = tmp_path / "r.model"
    assert run_cli("train", "-q", "-s", "ordinal", HEART, r).returncode == 0
    assert json.loads(run_cli("info", "--json", r).stdout)["task"] == "ranking"
    text = run_cli("info", k)
    assert text.returncode == 0 and b"support vectors: " in text.stdout
    bad = run_cli("info", HEART)
    assert bad.returncode == 2 and b"not a model file" in bad.stderr


# -- 7. examples/cron -----------------------------------------------------------------------------

def _cron_env():
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["SVMTOOL"] = os.path.join(os.path.dirname(sys.executable), "svmtool")
    return env


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_cron_makefile_retrains_only_when_the_data_changed(tmp_path):
    if not os.path.exists(_cron_env()["SVMTOOL"]):
        pytest.skip("the svmtool script is not installed beside this Python")
    shutil.copy(HEART, tmp_path / "today.svm")
    shutil.copy(HEART, tmp_path / "valid.svm")
    make = ["make", "-f", str(ROOT / "examples" / "cron" / "Makefile")]
    first = subprocess.run(make, cwd=tmp_path, env=_cron_env(), capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "current.model").exists() and (tmp_path / "today.svm.cache").exists()
    log = (tmp_path / "current.model.log.jsonl").read_text().splitlines()
    assert len(log) == 1
    second = subprocess.run(make, cwd=tmp_path, env=_cron_env(), capture_output=True, text=True)
    assert second.returncode == 0
    assert "retrain.sh" not in second.stdout and "Nothing to be done" in second.stdout
    assert len((tmp_path / "current.model.log.jsonl").read_text().splitlines()) == 1


def test_cron_retrain_sh_keeps_the_old_model_when_the_gate_refuses(tmp_path):
    if not os.path.exists(_cron_env()["SVMTOOL"]):
        pytest.skip("the svmtool script is not installed beside this Python")
    script = ROOT / "examples" / "cron" / "retrain.sh"
    model = tmp_path / "current.model"
    ok = subprocess.run([str(script), str(HEART), str(model), str(HEART)], env=_cron_env(),
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    before = model.read_bytes()
    bad = subprocess.run([str(script), str(_flipped(tmp_path)), str(model), str(HEART)],
                         env=_cron_env(), capture_output=True, text=True)
    assert bad.returncode == 3, bad.stderr
    assert "validation gate" in bad.stderr
    assert model.read_bytes() == before
    log = [json.loads(x) for x in (tmp_path / "current.model.log.jsonl").read_text().splitlines()]
    assert [r["status"] for r in log] == ["published", "refused"]
    assert log[1]["init_model"] == str(model)


# -- 8. start-up ----------------------------------------------------------------------------------

def test_small_retrain_with_every_option_never_imports_numba(tmp_path):
    """A cron job on a small file pays no JIT start-up, warm start and gate included."""
    model = tmp_path / "m.model"
    assert run_cli("train", "-q", HEART, model).returncode == 0
    args = ["train", "-q", "--init-model", str(model), "--time-limit", "60", "--report",
            str(tmp_path / "r.json"), "--log", str(tmp_path / "l.jsonl"), "--validate",
            str(HEART), "--max-drop", "5", str(HEART), str(model)]
    code = (f"import sys; from svmtool.cli import run; rc = run({args!r});"
            "print(rc, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False"], out.stderr

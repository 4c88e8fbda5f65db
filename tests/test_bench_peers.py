"""Issue 40's peers in `svmtool bench`: the kernel-peers suite (svmtool's exact C-SVC against
svm-train, scikit-learn's SVC and scikit-learn-intelex's, whole commands) and the multi-core
LIBLINEAR rows of the c-programs suite.  The suites build their cases (bundled data, and a data
folder laid out as the shared one), the optional peers leave their rows out with one line saying
why, the SVC command's model file is LIBSVM's (read back, the same problem's optimum), and the
multi-core child trains the problem LIBLINEAR solves.  No timing is asserted."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from svmtool.bench.anchors import build_runners, expand_against, kernel_defaults
from svmtool.bench.anchors import peers, programs
from svmtool.bench.data import bundled
from svmtool.bench.suites import SUITES, Where
from svmtool.cli import cli
from svmtool.solvers import get_spec

HEART = Path(bundled("heart_scale"))
MC = peers.LIBLINEAR_MC_ENV
SKLX = peers.SKLEARNEX_ENV


def _ijcnn1_folder(tmp_path):
    """A data folder in the shared layout whose ijcnn1 (and a9a, which marks a data folder) are
    copies of heart_scale."""
    for name in ("a9a", "ijcnn1"):
        (tmp_path / name).mkdir()
        shutil.copy(HEART, tmp_path / name / name)
        shutil.copy(HEART, tmp_path / name / f"{name}.t")
    return tmp_path


def test_the_peer_suites_are_registered_and_opt_in():
    assert "kernel-peers" in SUITES and not SUITES["kernel-peers"].default
    assert not SUITES["c-programs"].default
    assert {"sklearn-svc", "sklearn-svc-dense", "sklearnex", "sklearnex-dense",
            "liblinear-mc"} <= set(expand_against(["all"]))
    # each suite says what every row times, and where the peers in venvs of their own come from
    assert "Every row times a whole command" in SUITES["kernel-peers"].what
    assert SKLX in SUITES["kernel-peers"].what
    assert MC in SUITES["c-programs"].what


def test_kernel_peers_cases_on_the_bundled_data_and_on_ijcnn1(tmp_path):
    (quick,) = SUITES["kernel-peers"].cases(Where(quick=True))
    cfg = quick.config
    assert Path(cfg.train).resolve() == HEART.resolve()
    assert cfg.solvers == ["c_svc"] and cfg.end_to_end and cfg.split == 200
    assert set(cfg.against) == {"svm-train", "sklearn-svc", "sklearn-svc-dense", "sklearnex",
                                "sklearnex-dense"}
    cases = SUITES["kernel-peers"].cases(Where(data_dir=_ijcnn1_folder(tmp_path)))
    assert [c.config.head for c in cases] == [10000, None]
    for c in cases:
        assert Path(c.config.train).name == "ijcnn1" and Path(c.config.test).name == "ijcnn1.t"
        assert (c.config.Cs, c.config.gamma, c.config.cache_mb) == ([32.0], 2.0, 1000.0)


def test_c_programs_gain_the_multi_core_cases(tmp_path):
    cases = SUITES["c-programs"].cases(Where(quick=True))
    (mc,) = [c for c in cases if "multi-core" in c.title]
    cfg = mc.config
    assert cfg.against == ["liblinear-mc"] and cfg.end_to_end and not cfg.solvers
    runs = {(v.solver, v.options["threads"]) for v in cfg.variants}
    assert runs == {(s, t) for s in ("0", "1", "2") for t in (1, 2)}
    # the runners' names say the same: svmtool train -s N --threads T
    runners, _ = build_runners([], [], -1.0, {}, variants=cfg.variants, end_to_end=True)
    assert {r.name for r in runners} == {f"svmtool train -s {s} --threads {t}"
                                         for s in (0, 1, 2) for t in (1, 2)}
    assert all("--threads" in r.argv for r in runners)


def _notes_of(against, kernel=True):
    spec = get_spec("c_svc" if kernel else "lr")
    runners, notes = build_runners([spec], against, -1.0, kernel_defaults(13), end_to_end=True,
                                   labels=np.array([-1.0, 1.0]))
    return runners, notes


def test_sklearnex_absent_is_one_line(monkeypatch, tmp_path):
    real = peers._probe
    monkeypatch.setattr(peers, "_probe", lambda exe, module, package: (
        "does not import (ModuleNotFoundError)" if module.startswith("sklearnex")
        else real(exe, module, package)))
    monkeypatch.delenv(SKLX, raising=False)
    runners, notes = _notes_of(["sklearnex"])
    assert [r.name for r in runners] == ["svmtool train -s c_svc"]
    assert len(notes) == 1 and notes[0].startswith("sklearnex skipped: scikit-learn-intelex ")
    assert SKLX in notes[0]         # where to name a venv that has it
    monkeypatch.setenv(SKLX, str(tmp_path / "no-such-python"))
    runners, notes = _notes_of(["sklearnex"])
    assert len(runners) == 1 and len(notes) == 1 and "names no program" in notes[0]


def test_liblinear_mc_absent_is_one_line(monkeypatch, tmp_path):
    monkeypatch.delenv(MC, raising=False)
    runners, notes = _notes_of(["liblinear-mc"], kernel=False)
    assert [r.name for r in runners] == ["svmtool train -s lr"]
    assert len(notes) == 1 and notes[0].startswith(f"liblinear-mc skipped: ${MC} is not set")
    monkeypatch.setenv(MC, str(tmp_path / "no-such-python"))
    assert len(_notes_of(["liblinear-mc"], kernel=False)[1]) == 1
    # a python without liblinear-multicore (this one: liblinear-official, or no liblinear)
    monkeypatch.setenv(MC, sys.executable)
    runners, notes = _notes_of(["liblinear-mc"], kernel=False)
    assert len(runners) == 1 and len(notes) == 1
    assert notes[0].startswith(f"liblinear-mc skipped: the python of ${MC} has no multi-core")


def test_liblinear_mc_runners_pair_with_svmtool_s_0_1_2(monkeypatch):
    monkeypatch.setattr(peers, "liblinear_mc_python",
                        lambda notes=None: (sys.executable, "sklearn", "0"))
    notes = []
    runners = peers.liblinear_mc_runners({"logistic", "squared_hinge"}, notes)
    assert {r.name: r.counterpart for r in runners} == {
        "liblinear-mc -s 0 -m 2": "lr", "liblinear-mc -s 1 -m 2": "dcd-l2",
        "liblinear-mc -s 2 -m 2": "newton"}
    state = {"tmp": "/t", "train": "/d/train", "test": "", "n": 10, "bias": -1.0}
    argv = runners[0].command(state, 1.0, None)
    assert argv[1:] == [str(Path(peers.__file__).with_name("liblinear_mc_child.py")),
                        "sklearn", "-s 0 -c 1.0 -m 2 -B -1.0", "/d/train", "/t/model"]
    assert runners[0].command(state, 1.0, 0.01)[3].endswith(" -e 0.01")


@pytest.mark.parametrize("reader", ["sklearn", "liblinear"])
def test_the_multi_core_child_trains_liblinears_problem(tmp_path, reader):
    """The child process (here under this interpreter's liblinear-official, without -m): its
    model, read back by svmtool, is LIBLINEAR's -s 2 optimum, which svmtool's newton reaches."""
    pytest.importorskip("liblinear.liblinearutil", reason="the child needs a liblinear module")
    if reader == "sklearn":
        pytest.importorskip("sklearn", reason="the sklearn reader needs scikit-learn")
    from svmtool import api
    from svmtool.bench.harness import linear_objective, load_bench_data
    from svmtool.io.model_io import load_model
    from svmtool.params import TrainParams

    child = Path(peers.__file__).with_name("liblinear_mc_child.py")
    model = tmp_path / "model"
    out = subprocess.run([sys.executable, str(child), reader, "-s 2 -c 1 -e 1e-6", str(HEART),
                          str(model)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    data = load_bench_data(str(HEART))
    m = load_model(str(model))
    ours = api.train(data.train, TrainParams(solver="newton", C=1.0, eps=1e-6))
    pos = m.labels[:1]
    theirs = linear_objective(data.Xb, data.y, np.asarray(m.w), pos, 1.0, "squared_hinge")
    best = linear_objective(data.Xb, data.y, np.asarray(ours.w), ours.labels[:1], 1.0,
                            "squared_hinge")
    assert abs(theirs - best) <= 1e-6 * abs(best)
    bad = subprocess.run([sys.executable, str(child), "nosuch", "-s 2", str(HEART), str(model)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown reader" in bad.stderr


def test_kernel_peers_quick_run_skips_an_absent_sklearnex_in_one_line(tmp_path, monkeypatch):
    """The suite runs without sklearnex: one line on stderr says so.  The SVC command's model
    file, read back as LIBSVM's, solves svmtool's problem: the same objective, support vectors
    and test accuracy."""
    pytest.importorskip("sklearn", reason="the row to compare with is scikit-learn's SVC")
    from svmtool.bench import report

    monkeypatch.setenv(SKLX, str(tmp_path / "no-such-python"))
    res = CliRunner().invoke(cli, ["bench", "--suite", "kernel-peers", "--quick", "--repeat",
                                   "1", "--against", "sklearn-svc,sklearn-svc-dense,sklearnex",
                                   "--out",
                                   str(tmp_path / "out")])
    assert res.exit_code == 0, res.output + repr(res.exception)
    skipped = [ln for ln in res.stderr.splitlines() if "sklearnex" in ln]
    assert len(skipped) == 1 and skipped[0].startswith("sklearnex skipped: "), skipped
    text = res.stdout
    rows = {r["runner"]: r for r in report.parse_markdown_table(text[text.index("| data |"):])}
    assert set(rows) == {"svmtool train -s c_svc", "svmtool train -s c_svc --threads 1",
                         "*sklearn SVC command*", "*sklearn SVC command, dense*"}
    ours = rows["svmtool train -s c_svc"]
    one = rows["svmtool train -s c_svc --threads 1"]     # the same run on one thread
    assert one["primal objective"] == ours["primal objective"] and one["iters"] == ours["iters"]
    for name in ("*sklearn SVC command*", "*sklearn SVC command, dense*"):
        svc = rows[name]
        assert abs(float(ours["primal objective"]) - float(svc["primal objective"])) <= 1e-3 * abs(
            float(svc["primal objective"]))
        assert ours["test acc"] == svc["test acc"]
    line = next(ln for ln in text.splitlines() if ln.startswith("Support vectors (nSV): "))
    counts = dict(part.rsplit(" ", 1) for part in line[len("Support vectors (nSV): "):]
                  .rstrip(".").split("; "))
    assert abs(int(counts["svmtool train -s c_svc"]) - int(counts["sklearn SVC command"])) <= 2
    assert "Failed runs" not in text



def test_peers_run_without_the_benchs_omp_threads(monkeypatch, tmp_path):
    """The harness sets OMP_NUM_THREADS=1 for its in-process anchors; a peer that picks its own
    threads (oneDAL, multi-core LIBLINEAR) runs without it, the other commands keep it."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setattr(programs, "HARNESS_ENV", {"OMP_NUM_THREADS"})
    state = {"tmp": str(tmp_path), "train": "", "test": "", "n": 1, "bias": -1.0}

    def child(want):
        return [sys.executable, "-c", "import os, sys; "
                f"sys.exit(0 if os.environ.get('OMP_NUM_THREADS') == {want!r} else 3)"]

    programs.CommandRunner("own", child(None), "kernel", own_threads=True).fit(state, 1.0, None)
    programs.CommandRunner("kept", child("1"), "kernel").fit(state, 1.0, None)
    with pytest.raises(RuntimeError, match="command failed"):
        programs.CommandRunner("kept", child(None), "kernel").fit(state, 1.0, None)
    assert peers.SvcCommand("x", sys.executable, "sklearn.svm", {"gamma": 1.0}).own_threads

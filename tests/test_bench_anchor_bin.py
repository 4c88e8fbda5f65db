"""svmtool bench finds the C programs under --anchor-bin before PATH, and knows them by the names
of the C builds (liblinear-c, libsvm-c, svmperf) as well as by their program names."""

import os
import stat
import subprocess
import sys

from svmtool.bench.anchors import expand_against
from svmtool.bench.anchors.programs import find_program, set_anchor_bin


def _fake_program(folder, name):
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_c_build_names_expand_to_the_programs():
    assert expand_against(["liblinear-c", "libsvm-c", "svmocas", "svmperf"]) == [
        "liblinear-train", "svm-train", "svmocas", "svm_perf_learn"]


def test_anchor_bin_is_searched_before_path(tmp_path):
    fake = _fake_program(tmp_path, "svm_perf_learn")
    try:
        set_anchor_bin([tmp_path])
        assert find_program("svm_perf_learn") == fake
        assert find_program("no-such-program-here") is None
    finally:
        set_anchor_bin([])
    assert find_program("svm_perf_learn") != fake


def test_bench_runs_a_program_found_only_under_anchor_bin(tmp_path):
    """A stand-in liblinear-train that writes LIBLINEAR's model of w = 0 for heart_scale's 13
    features: bench runs it from --anchor-bin and lists it in the table."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "liblinear-train"
    model = ("solver_type L2R_L2LOSS_SVC_DUAL\\nnr_class 2\\nlabel 1 -1\\nnr_feature 13\\n"
             "bias -1\\nw\\n" + "0\\n" * 13)
    script.write_text('#!/bin/sh\nfor last; do :; done\nprintf "' + model + '" > "$last"\n')
    script.chmod(0o755)
    env = dict(os.environ, PATH="/usr/bin:/bin")
    data = os.path.join(os.path.dirname(__file__), "..", "data", "heart_scale")
    out = subprocess.run(
        [sys.executable, "-m", "svmtool", "bench", data, "--against", "liblinear-c",
         "--anchor-bin", str(bin_dir), "--solvers", "dcd-l2", "--repeat", "1", "--no-trace",
         "--no-memory", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "liblinear-train -s 1" in out.stdout
    assert "liblinear-train skipped" not in out.stdout + out.stderr


def test_interleaved_end_to_end_runs_each_command_once_a_round(tmp_path):
    """--interleave: one warm-up run of each command, then --repeat rounds of one run each; the
    stand-in program logs the solver of each of its runs (-s 1 and -s 2 alternate, where
    the runs one runner after another would give 1 1 1 1 2 2 2 2)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "runs.log"
    script = bin_dir / "liblinear-train"
    model = ("solver_type L2R_L2LOSS_SVC_DUAL\\nnr_class 2\\nlabel 1 -1\\nnr_feature 13\\n"
             "bias -1\\nw\\n" + "0\\n" * 13)
    script.write_text('#!/bin/sh\necho "$2" >> "' + str(log) + '"\nfor last; do :; done\n'
                      'printf "' + model + '" > "$last"\n')
    script.chmod(0o755)
    env = dict(os.environ, PATH="/usr/bin:/bin")
    data = os.path.join(os.path.dirname(__file__), "..", "data", "heart_scale")
    out = subprocess.run(
        [sys.executable, "-m", "svmtool", "bench", data, "--against", "liblinear-c",
         "--anchor-bin", str(bin_dir), "--solvers", "dcd-l2", "--end-to-end", "--interleave",
         "--repeat", "3", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "liblinear-train -s 1" in out.stdout and "svmtool train -s dcd-l2" in out.stdout
    # -s 1 and -s 2 of the stand-in: a warm-up and three timed runs each, in turn
    assert log.read_text().split() == ["1", "2"] * (1 + 3)

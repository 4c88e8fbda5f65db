"""README.md's main commands and examples/quickstart.sh, run as a user pastes them: from the
checkout, with the installed `svmtool` found on PATH."""

import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT


def _user_env():
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _block_after(heading):
    """The indented code block that follows HEADING in README.md, as its command lines."""
    text = (ROOT / "README.md").read_text()
    section = text.split(heading, 1)[1]
    block = re.search(r"\n\n((?:    .*\n)+)", section).group(1)
    return [ln[4:].split("  #", 1)[0].strip() for ln in block.splitlines()]


def test_readme_main_commands_as_written(tmp_path):
    if shutil.which("svmtool", path=os.path.dirname(sys.executable)) is None:
        pytest.skip("the svmtool script is not installed beside this Python")
    (tmp_path / "data").symlink_to(ROOT / "data")
    commands = _block_after("## The main commands")
    assert [c.split()[1] for c in commands] == ["train", "predict", "convert", "bench"]
    for command in commands:
        r = subprocess.run(["/bin/sh", "-c", command], cwd=tmp_path, env=_user_env(),
                           capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, (command, r.stderr[-2000:])
    assert (tmp_path / "a9a.model").read_text().startswith("solver_type L2R_L2LOSS_SVC_DUAL")
    assert len((tmp_path / "a9a.predict").read_text().splitlines()) == 16281
    assert (tmp_path / "a9a.cache").stat().st_size > 0


def test_quickstart_runs(tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "svmtool")
    if not os.path.exists(exe):
        pytest.skip("the svmtool script is not installed beside this Python")
    env = dict(_user_env(), SVMTOOL=exe, OUT=str(tmp_path))
    r = subprocess.run(["bash", str(ROOT / "examples" / "quickstart.sh")], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Cross Validation Accuracy" in r.stdout + r.stderr
    assert (tmp_path / "heart-rbf.model").read_text().startswith("svm_type c_svc")

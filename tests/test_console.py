"""The process entry (``svmtool`` console script, ``python -m svmtool``): it sets the collector's
young generation before the CLI's imports, and only there."""

import gc
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from svmtool import _console


def test_console_script_is_the_process_entry():
    script = Path(sys.executable).with_name("svmtool")
    if not script.exists():
        pytest.skip(f"no console script beside {sys.executable} (svmtool not installed there)")
    assert "from svmtool._console import main" in script.read_text(), script.read_text()


def test_entry_sets_the_young_generation_before_the_cli_runs(monkeypatch):
    import svmtool.cli

    seen = []
    monkeypatch.setattr(svmtool.cli, "main", lambda: seen.append(gc.get_threshold()))
    before = gc.get_threshold()
    try:
        _console.main()
    finally:
        gc.set_threshold(*before)
    assert seen == [(_console.YOUNG_THRESHOLD,) + before[1:]]


@pytest.mark.parametrize("module", ["svmtool", "svmtool.cli", "svmtool.api"])
def test_importing_svmtool_leaves_the_collector_alone(module):
    code = (f"import gc; t = gc.get_threshold(); import {module}; "
            "print(gc.get_threshold() == t, gc.isenabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == ["True", "True"], out.stderr


def test_python_m_svmtool_runs_through_the_entry():
    # svmtool/__main__.py run as `python -m svmtool` runs, with the CLI's main stubbed: the
    # threshold it sees is the entry's
    code = ("import gc, runpy, svmtool.cli as cli\n"
            "cli.main = lambda: print(gc.get_threshold()[0])\n"
            "runpy.run_module('svmtool', run_name='__main__', alter_sys=True)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == [str(_console.YOUNG_THRESHOLD)], out.stderr
    out = subprocess.run([sys.executable, "-m", "svmtool", "--version"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip().endswith(
        importlib.metadata.version("svmtool")), out

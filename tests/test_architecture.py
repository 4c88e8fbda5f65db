"""The package's shape: the import-linter contracts of pyproject.toml hold (layers flow one way,
no import circles), checked on every test run so that they stay true as solvers are added."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    pytest.importorskip("importlinter")
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    r = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_no_click_below_the_cli():
    """Only svmtool.cli knows the command line."""
    offenders = []
    for path in (ROOT / "svmtool").rglob("*.py"):
        rel = path.relative_to(ROOT / "svmtool")
        if rel.parts[0] == "cli":
            continue
        text = path.read_text()
        if "import click" in text or "from click" in text:
            offenders.append(str(rel))
    assert offenders == []

"""The benchmarks as a user who installed the wheel meets them: a wheel built from this tree by
pip (not an editable install), unpacked into a folder of its own, run from another, empty folder
with only the unpacked folder on PYTHONPATH (numpy, numba and click come from this interpreter's
site-packages).  The checkout's data/ is not copied into the build, so whatever the bench reads
must come from the package or from --data-dir."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEART = ROOT / "data" / "heart_scale"

# not part of what the wheel is built from: the checkout's data, tests and build outputs (top
# level), caches and compiled kernels (anywhere)
_TOP = {".git", "data", "tests", "bench-out", "build", "dist", "out", "fuzz-out", ".pytest_cache",
        ".hypothesis"}
_ANYWHERE = shutil.ignore_patterns(".venv*", "*.egg-info", "__pycache__", "*.so", "*.nbi", "*.nbc")


def _ignore(folder, names):
    top = _TOP.intersection(names) if Path(folder) == ROOT else set()
    return top | set(_ANYWHERE(folder, names))
# what pip says when it cannot fetch the build backend (no index reachable)
_NO_BACKEND = ("No matching distribution found", "Could not find a version that satisfies",
               "Failed to establish a new connection", "Could not fetch URL")


def _build_wheel(src, out):
    """pip's wheel of ``src`` into ``out``: with this interpreter's setuptools first (no build
    isolation: quick), else with build isolation (pip fetches the backend that pyproject.toml's
    [build-system] asks for; this one's may be older).  SVMTOOL_BUILD_KERNELS=0: no kernels
    compiled while building."""
    env = dict(os.environ, SVMTOOL_BUILD_KERNELS="0")
    env.pop("PYTHONPATH", None)
    if subprocess.run([sys.executable, "-m", "pip", "--version"], env=env,
                      capture_output=True).returncode != 0:
        pytest.skip(f"no pip in {sys.executable}: the wheel cannot be built here")
    base = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out)]
    errors = []
    for extra in (["--no-build-isolation"], []):
        r = subprocess.run(base + extra + [str(src)], env=env, capture_output=True, text=True,
                           timeout=600)
        if r.returncode == 0:
            return next(Path(out).glob("svmtool-*.whl"))
        errors.append(r.stdout[-3000:] + r.stderr[-3000:])
    if any(s in errors[-1] for s in _NO_BACKEND):
        pytest.skip("the wheel was not built: this interpreter's setuptools cannot build it and "
                    "pip could not fetch the build backend: "
                    + errors[-1].strip().splitlines()[-1])
    pytest.fail("pip wheel failed:\n" + "\n---\n".join(errors), pytrace=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(run, where): ``run(*args)`` runs ``python -m svmtool ARGS`` from the unpacked wheel in an
    empty folder ``where``."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    shutil.copytree(ROOT, src, ignore=_ignore)
    wheel = _build_wheel(src, base / "dist")
    site = base / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    where = base / "cwd"
    where.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop("SVMTOOL_ANCHOR_BIN", None)

    def run(*args, timeout=180):
        return subprocess.run([sys.executable, *map(str, args)], cwd=where, env=env,
                              capture_output=True, text=True, timeout=timeout)

    return run, where, site


def test_the_wheel_ships_heart_scale_and_runs_from_it(installed):
    run, where, site = installed
    r = run("-c", "import svmtool, svmtool.bench.data as d; print(svmtool.__file__); "
                  "print(d.bundled('heart_scale'))")
    assert r.returncode == 0, r.stderr
    mod, heart = r.stdout.split()
    assert Path(mod).is_relative_to(site), mod          # the wheel's svmtool, not the checkout's
    assert Path(heart).is_relative_to(site)
    assert Path(heart).read_bytes() == HEART.read_bytes()


def test_list_suites_from_the_wheel(installed):
    from svmtool.bench.suites import SUITES

    run, where, _ = installed
    r = run("-m", "svmtool", "bench", "--list-suites")
    assert r.returncode == 0, r.stderr
    listed = [ln[2:].split()[0] for ln in r.stdout.splitlines() if ln[:1] in ("*", " ")]
    assert listed and sorted(listed) == sorted(SUITES)
    assert r.stderr == ""


def test_a_quick_suite_from_the_wheel(installed):
    run, where, _ = installed
    r = run("-m", "svmtool", "bench", "--quick", "--suite", "dcd", "--repeat", "1",
            "--against", "none", "--out", "out")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    assert "<!-- suite: dcd -->" in r.stdout and "<!-- /suite: dcd -->" in r.stdout
    assert "Data: heart_scale (bundled; --quick)" in r.stdout
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith("| heart |")]
    assert {ln.split("|")[6].strip() for ln in rows} >= {"dcd-l1", "dcd-l2"}
    assert (where / "out" / "bench_heart.json").is_file()
    assert not (where / "BENCHMARKS.md").exists()       # markdown only where asked (--markdown)


def test_a_suite_on_a_data_dir_from_the_wheel(installed, tmp_path):
    """--data-dir: the sets found there are run (a9a here, a copy of heart_scale to stay quick);
    those the suite asks for and that are missing are named in one line."""
    run, where, _ = installed
    (tmp_path / "a9a").mkdir()
    for name in ("a9a", "a9a.t"):
        shutil.copy(HEART, tmp_path / "a9a" / name)
    r = run("-m", "svmtool", "bench", "--suite", "ocas-split", "--data-dir", tmp_path,
            "--repeat", "1", "--out", "out2", "--markdown", "B.md")
    assert r.returncode == 0, r.stderr[-3000:]
    notes = [ln for ln in r.stderr.splitlines() if " not in " in ln]
    assert notes == [f"ocas-split: not in {tmp_path}: ijcnn1 (left out)"]
    text = (where / "B.md").read_text()
    assert f"Command: `svmtool bench --suite ocas-split --data-dir {tmp_path} --repeat 1`" in text
    assert f"Data: {tmp_path}." in text
    assert "### a9a time split" in text
    r = run("-m", "svmtool", "bench", "--suite", "dcd", "--data-dir", where / "out2")
    assert r.returncode == 2 and r.stderr.startswith("svmtool: error: --data-dir: ")
    assert r.stderr.count("\n") == 1


def test_the_io_suite_from_the_wheel(installed):
    """The reading benchmark (which once looked for the checkout's data/heart_scale)."""
    pytest.importorskip("sklearn", reason="the io suite compares with scikit-learn's reader")
    run, where, _ = installed
    r = run("-m", "svmtool", "bench", "--suite", "io", "--quick", "--repeat", "1", "--out", "o")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "| heart_scale |" in r.stdout and "<!-- /suite: io -->" in r.stdout

"""The optional extras (scikit-learn: ``svmtool[sklearn]``, dask.distributed: ``svmtool[dask]``,
matplotlib: ``svmtool[plot]``) when they are not installed: a command that needs one exits 2
with one line naming the extra to install and leaves nothing behind; ``import svmtool.sklearn``
raises one ImportError that names it.

"Not installed" is simulated in a fresh interpreter by ``sys.modules[name] = None`` before
svmtool starts: Python's own way to make a module unimportable (``import`` raises
ModuleNotFoundError, ``importlib.util.find_spec`` answers None), as for a package that is absent.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEART = ROOT / "data" / "heart_scale"

_RUN = """
import runpy, sys
for name in sys.argv[1].split(","):
    if name:
        sys.modules[name] = None
sys.argv = ["svmtool"] + sys.argv[2:]
runpy.run_module("svmtool", run_name="__main__", alter_sys=True)
"""

SKLEARN = "sklearn"
DASK = "dask,distributed"
PLOT = "matplotlib"
HINT = {SKLEARN: "scikit-learn: pip install 'svmtool[sklearn]'",
        DASK: "dask.distributed: pip install 'svmtool[dask]'",
        PLOT: "matplotlib: pip install 'svmtool[plot]'"}


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                     else "")
    return env


def without(blocked, *args, cwd):
    """``svmtool ARGS`` in a fresh interpreter in which the modules ``blocked`` cannot be
    imported."""
    return subprocess.run([sys.executable, "-c", _RUN, blocked, *map(str, args)], cwd=cwd,
                          env=_env(), capture_output=True, text=True, timeout=300)


CASES = [
    (SKLEARN, ["bench", "--suite", "io", "--quick"], "bench --suite io needs "),
    (SKLEARN, ["bench", "--quick"], "bench --suite io needs "),           # the default set
    (SKLEARN, ["bench", "--suite", "sklearn", "--quick"], "bench --suite sklearn needs "),
    (SKLEARN, ["bench", HEART, "--io", "--repeat", "1"], "--io needs "),
    (DASK, ["train", "-s", "newton", "--dask", "tcp://127.0.0.1:1", HEART, "m.model"],
     "--dask needs "),
    (DASK, ["train", "-s", "dcsvm", "--dask", "tcp://127.0.0.1:1", HEART, "m.model"],
     "--dask needs "),
    (DASK, ["predict", "--dask", "tcp://127.0.0.1:1", HEART, "m.model", "p.out"],
     "--dask needs "),
    (DASK, ["grid", "--dask", "tcp://127.0.0.1:1", "-png", "null", HEART], "--dask needs "),
    (PLOT, ["grid", "-png", "grid.png", HEART], "-png needs "),
]


@pytest.mark.parametrize("blocked,args,start", CASES,
                         ids=[" ".join(map(str, a[:3])) for _, a, _ in CASES])
def test_a_missing_extra_is_one_line_and_exit_2(blocked, args, start, tmp_path):
    r = without(blocked, *args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("svmtool: error: " + start), lines[0]
    assert HINT[blocked] in lines[0], lines[0]
    assert sorted(os.listdir(tmp_path)) == []           # nothing written (no bench-out/)


def test_the_same_command_gets_past_the_check_with_the_extra(tmp_path):
    """The check is about the extra: with nothing blocked the same -png draws its plot."""
    pytest.importorskip("matplotlib", reason="the contour plot needs matplotlib (svmtool[plot])")
    r = without("", "grid", "-png", "grid.png", "-log2c", "1,3,2", "-log2g", "-1,-3,-2", HEART,
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "grid.png").read_bytes()[:4] == b"\x89PNG"


def test_without_the_extras_the_rest_works(tmp_path):
    r = without(",".join([SKLEARN, DASK, PLOT]), "bench", "--list-suites", cwd=tmp_path)
    assert r.returncode == 0 and "io" in r.stdout, r.stderr
    r = without(PLOT, "grid", "-log2c", "1,3,2", "-log2g", "-1,-3,-2", HEART, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # the default contour plot is left out with a warning, as grid.py does without gnuplot
    assert r.stderr.splitlines() == ["svmtool: warning: no contour plot: matplotlib is not "
                                     "installed (pip install 'svmtool[plot]')"]


def test_import_svmtool_sklearn_names_the_extra():
    code = ("import sys; sys.modules['sklearn'] = None\n"
            "try:\n    import svmtool.sklearn\n"
            "except ImportError as e:\n    print(repr(str(e))); sys.exit(3)\n")
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stdout.strip() == repr("svmtool.sklearn needs " + HINT[SKLEARN])


def test_require_and_installed():
    from svmtool.errors import InputError, MissingExtra, installed, require

    assert installed("numpy") and not installed("no_such_module_of_svmtool")
    assert require("numpy.linalg").__name__ == "numpy.linalg"
    with pytest.raises(MissingExtra) as e:
        require("no_such_module_of_svmtool", "--it")
    assert isinstance(e.value, InputError) and isinstance(e.value, ImportError)
    assert str(e.value) == ("--it needs no_such_module_of_svmtool: "
                            "pip install no_such_module_of_svmtool")
    assert e.value.exit_code == 2

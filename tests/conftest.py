import contextvars
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
TESTDATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared" / "data"


# the markers of the test being set up or run (fixtures of any scope included), so that
# shared_file can insist on the `shared` marker
_MARKERS = contextvars.ContextVar("markers", default=None)


def pytest_collection_modifyitems(config, items):
    """Without ../shared/data beside the clone, the tests marked `shared` are left out
    (deselected, not skipped one by one) and the run says so in one line."""
    if SHARED.is_dir():
        return
    shared = [it for it in items if it.get_closest_marker("shared")]
    if shared:
        items[:] = [it for it in items if not it.get_closest_marker("shared")]
        config.hook.pytest_deselected(items=shared)
        config._svmtool_shared_left_out = len(shared)


def pytest_report_header(config):
    if not SHARED.is_dir():
        return (f"{Path('..', 'shared', 'data')} is not beside this clone: the tests marked "
                "`shared` (the larger real data sets) are left out")
    return None


def pytest_terminal_summary(terminalreporter, config):
    n = getattr(config, "_svmtool_shared_left_out", 0)
    if n:
        terminalreporter.write_line(f"{n} tests marked `shared` left out: "
                                    f"{Path('..', 'shared', 'data')} is absent")


def pytest_runtest_setup(item):
    _MARKERS.set({m.name for m in item.iter_markers()})


def pytest_runtest_teardown(item):
    _MARKERS.set(None)


def shared_file(*parts):
    """Path of a file in ../shared/data, or skip the test with the reason.  A test that reads
    ../shared must carry the `shared` marker (so that `-m "not shared"` leaves it out): one that
    does not fails here."""
    markers = _MARKERS.get()
    if markers is not None and "shared" not in markers:
        pytest.fail("this test reads ../shared/data but has no @pytest.mark.shared", pytrace=False)
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"needs {Path('..', 'shared', 'data', *parts)} beside the clone (absent here)")
    return p


# the packages some tests compare against (the `test` extra of pyproject.toml): a test that needs
# one that is not installed is skipped, saying which
OPTIONAL = {"sklearn": "scikit-learn (pip install 'svmtool[sklearn]')",
            "liblinear": "liblinear-official (pip install 'svmtool[test]')",
            "libsvm": "libsvm-official (pip install 'svmtool[test]')",
            "distributed": "dask.distributed (pip install 'svmtool[dask]')",
            "dask": "dask (pip install 'svmtool[dask]')",
            "matplotlib": "matplotlib (pip install 'svmtool[plot]')"}


def need(module):
    """``module`` imported, or skip the test naming the package that is not installed."""
    top = module.partition(".")[0]
    return pytest.importorskip(module, reason=f"needs {OPTIONAL.get(top, top)}: not installed")


class lazy:
    """A module imported when first used, through :func:`need`: a module-level name of a test
    file whose other tests run without the package."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        if name.startswith("_"):       # what pytest's collection asks of every module global
            raise AttributeError(name)
        return getattr(need(self._module), name)


def load_svmlight_file(*args, **kw):
    """scikit-learn's reader, the reference of many tests (skipped without scikit-learn)."""
    return need("sklearn.datasets").load_svmlight_file(*args, **kw)


def program(name, what=None):
    """The path of the C program NAME on PATH, or skip the test saying which program is missing
    (``make test`` installs the anchors: tools/install-anchors.sh)."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{what or name} is not on PATH (tools/install-anchors.sh installs it)")
    return path


def run_cli(*args, input=None, cwd=None, env=None):
    """Run `python -m svmtool ARGS` in a real subprocess; returns CompletedProcess (bytes)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-m", "svmtool", *map(str, args)], input=input,
                          capture_output=True, cwd=cwd, env=e, timeout=600)


def write_svmlight(prob, path):
    """A Problem as a svmlight text file (values by repr: they read back exactly)."""
    with open(path, "w") as f:
        for i in range(prob.n_rows):
            lo, hi = prob.indptr[i], prob.indptr[i + 1]
            feats = " ".join(f"{j + 1}:{v!r}" for j, v in zip(prob.indices[lo:hi].tolist(),
                                                              prob.data[lo:hi].tolist()))
            f.write(f"{prob.y[i]:g} {feats}\n")


def svmlight_programs():
    """Paths of SVMlight's svm_learn and svm_classify ($SVMLIGHT_BIN, else PATH); the test
    skips, printing why, when they are not there (tools/install-anchors.sh builds them)."""
    folder = os.environ.get("SVMLIGHT_BIN")
    found = []
    for name in ("svm_learn", "svm_classify"):
        path = os.path.join(folder, name) if folder else shutil.which(name)
        if not path or not os.access(path, os.X_OK):
            why = "SVMlight's svm_learn / svm_classify are not on PATH nor in $SVMLIGHT_BIN"
            print(f"skipped: {why} (tools/install-anchors.sh builds them)")
            pytest.skip(why)
        found.append(path)
    return found


def local_cluster(n_workers=2, quiet="ERROR", **config):
    """A dask.distributed LocalCluster of ``n_workers`` one-thread worker processes on
    loopback, logging at ``quiet`` and above, with the dask ``config`` set while it starts (the
    dask tests' cluster; the caller closes it)."""
    import logging

    import dask
    import distributed

    with dask.config.set(config):
        return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                        processes=True, host="127.0.0.1", dashboard_address=":0",
                                        silence_logs=getattr(logging, quiet))

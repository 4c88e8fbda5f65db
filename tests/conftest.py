import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
TESTDATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared" / "data"


def shared_file(*parts):
    """Path of a file in ../shared/data, or skip the test with the reason."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"needs {Path('..', 'shared', 'data', *parts)} beside the clone (absent here)")
    return p


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

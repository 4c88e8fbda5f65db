"""No command imports a module it does not use: the modules loaded by a whole `svmtool train
-s 1` and `svmtool svm-train` on heart_scale, each in a fresh interpreter (start-up cost is
what a cron job or grid.py pays per call)."""

import subprocess
import sys

_LIST = ("import sys\n"
         "from svmtool.cli import run\n"
         "code = run(sys.argv[1:])\n"
         "print(' '.join(sorted(sys.modules)) if code == 0 else code)\n")


def _modules_after(tmp_path, *args):
    out = subprocess.run([sys.executable, "-c", _LIST, *args, "data/heart_scale",
                          str(tmp_path / "model")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.strip().splitlines()[-1].split())


def _loaded(modules, names):
    return sorted(m for m in modules for n in names if m == n or m.startswith(n + "."))


# nothing of these is needed to read text, train one solver and write its model
_NEVER = ("yaml", "numpy.ma", "scipy.sparse", "scipy.linalg", "tqdm", "dask", "distributed",
          "sklearn", "svmtool.bench", "svmtool.sklearn", "svmtool.io.cache", "svmtool.io.shards",
          "svmtool.io.writer", "svmtool.engine.local", "svmtool.solvers.dcsvm",
          "svmtool.solvers.cutting_plane", "svmtool.solvers.scale_out")


def test_train_s1_small_text_never_loads_numba(tmp_path):
    mods = _modules_after(tmp_path, "train", "-q", "-s", "1")
    assert "svmtool.solvers.dual_cd.dcd" in mods         # the run did train
    assert _loaded(mods, _NEVER + (
        "numba", "llvmlite", "scipy", "svmtool._jit", "svmtool.io._parse", "svmtool.ops",
        "svmtool.solvers.dual_cd._dcd_jit", "svmtool.solvers.kernel", "svmtool.models.kernel",
        "svmtool.solvers.newton", "concurrent.futures", "json", "subprocess")) == []


def test_svm_train_loads_its_solver_only_and_no_numba(tmp_path):
    # SMO's kernels come from the kernel extension (make test builds it): numba is not loaded
    from svmtool import _aot

    assert _aot.state() == "used", _aot.state()
    mods = _modules_after(tmp_path, "svm-train", "-q")
    assert "svmtool.solvers.kernel.smo" in mods
    assert [m for m in mods if m.startswith("svmtool._kernels_aot")] == [
        "svmtool." + _aot._MODULE.__name__.rsplit(".", 1)[-1]]      # one CPU level's module
    assert _loaded(mods, _NEVER + ("numba", "llvmlite", "scipy",
        "svmtool.io._parse",            # small text: the pure-Python parser
        "svmtool.models.early", "svmtool.io.early_model", "svmtool.ops.centres",
        "svmtool.solvers.dual_cd", "svmtool.solvers.newton", "svmtool.solvers.kernel.ovo",
        "svmtool.solvers.kernel.kernel_cd", "svmtool.io.liblinear_model")) == []

"""svmtool's build: the pure-Python package (pyproject.toml says what it is) and its kernel
extension, compiled while the wheel is built.

The extension (``svmtool/_kernels_aot*.so``: one module per CPU level, and its manifest
``_kernels_aot.json``) is made by
``python -m svmtool._aot_build`` run in a child process of this build, from the sources being
built, with the build environment's numba (pyproject.toml's ``[build-system]``): see
svmtool/_aot_build.py for what it compiles and svmtool/_startup.py for what it buys.  It is an
optional part: without a C compiler, or with a numba that cannot compile it, the build says so in
one line and the wheel holds the package alone, which runs every kernel on numba's JIT.
``SVMTOOL_BUILD_KERNELS=0`` leaves it out on purpose (``make`` does, for its editable install,
and builds the extension in the checkout with ``make aot``).
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = "_kernels_aot.json"


def _say(line):
    print(f"svmtool: {line}", file=sys.stderr, flush=True)


def _remove(paths):
    for path in paths:
        if os.path.exists(path):
            os.unlink(path)


def _extension_files(folder):
    """The extension's modules and manifest in ``folder`` (the levels' modules share its name's
    start)."""
    return sorted(glob.glob(os.path.join(folder, MANIFEST.split(".")[0] + "*")))


def kernel_build_command(out):
    """The child process that compiles the extension into ``out``: ``svmtool._aot_build`` of the
    sources being built, with the build environment's interpreter.  The source folder goes to
    the front of the child's own ``sys.path`` in its first statement rather than through
    PYTHONPATH: pip's isolated build drops from ``sys.path`` every folder that the outer
    environment's ``.pth`` files name, and a venv with this checkout installed editable names
    this very folder."""
    start = ("import runpy, sys; sys.path.insert(0, sys.argv[1]); del sys.argv[1]; "
             "runpy.run_module('svmtool._aot_build', run_name='__main__', alter_sys=True)")
    return [sys.executable, "-c", start, HERE, "--out", out]


class BuildKernels(build_ext):
    """build_ext for the one extension there is: its file is made by svmtool._aot_build."""

    def build_extension(self, ext):
        target = self.get_ext_fullpath(ext.name)
        out = os.path.dirname(os.path.abspath(target))
        stale = _extension_files(out)                    # an earlier build's, in build/
        if os.environ.get("SVMTOOL_BUILD_KERNELS", "1").strip() == "0":
            _say("SVMTOOL_BUILD_KERNELS=0: building without the kernel extension "
                 "(kernels run on numba's JIT)")
            _remove(stale)
            return
        work = tempfile.mkdtemp(prefix="svmtool-build-")
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(work, "numba-cache"))
        try:
            done = subprocess.run(kernel_build_command(out), cwd=work, env=env, check=False)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if done.returncode != 0 or not os.path.exists(target):
            _say(f"the kernel extension was not built (its build exited with status "
                 f"{done.returncode}): the wheel runs every kernel on numba's JIT")
            _remove(_extension_files(out))

    def copy_extensions_to_source(self):
        # an editable install: the other levels' modules and the manifest go beside the
        # extension they belong to
        super().copy_extensions_to_source()
        for regular, inplace in self.get_output_mapping().items():
            if not os.path.exists(inplace):
                continue
            for made in _extension_files(os.path.dirname(regular)):
                if os.path.basename(made) != os.path.basename(regular):
                    self.copy_file(made, os.path.join(os.path.dirname(inplace),
                                                      os.path.basename(made)))


if __name__ == "__main__":        # (setuptools runs this file as __main__; a test imports it)
    setup(
        ext_modules=[Extension("svmtool._kernels_aot", sources=[], optional=True)],
        cmdclass={"build_ext": BuildKernels},
    )

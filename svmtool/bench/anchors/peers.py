"""The Python peers timed as whole commands (see :mod:`svmtool.bench.anchors.programs`):
multi-core LIBLINEAR (PyPI's ``liblinear-multicore``) and the SVCs of scikit-learn and
scikit-learn-intelex, each a Python process (``liblinear_mc_child.py``, ``svc_child.py``) that
reads the same text file, trains and writes its model, which is read back here.  Each may run
under the interpreter of a venv of its own (named by an environment variable); a peer that is
not there is left out with one line saying why.
"""

import os
import re
import shutil
import subprocess
import sys

import numpy as np

from svmtool.bench.anchors.base import spec_group
from svmtool.bench.anchors.programs import CommandRunner


# multi-core LIBLINEAR: the interpreter that has it, its threads, the -s numbers it runs in parallel
LIBLINEAR_MC_ENV = "SVMTOOL_BENCH_LIBLINEAR_MC_PYTHON"
LIBLINEAR_MC_THREADS = 2
LIBLINEAR_MC_SOLVERS = (0, 1, 2, 3, 5, 6, 11)
# the probe: multi-core LIBLINEAR imports and takes -m (liblinear-official's parser refuses it);
# prints the reader of the child and the package's version
_PROBE = ("import importlib.util as u, importlib.metadata as m, liblinear.liblinearutil as l; "
          "l.parameter('-s 0 -m 2'); "
          "print('sklearn' if u.find_spec('sklearn') else 'liblinear', "
          "m.version('liblinear-multicore'))")


def liblinear_mc_python(notes=None):
    """(interpreter, reader, version) of multi-core LIBLINEAR: the python named by
    ``$SVMTOOL_BENCH_LIBLINEAR_MC_PYTHON`` if its ``liblinear`` takes ``-m``, with the reader its
    child uses (scikit-learn's where that venv has it, else LIBLINEAR's own) and the version of
    liblinear-multicore; None, with one line in ``notes`` saying why, otherwise."""
    notes = notes if notes is not None else []
    py = os.environ.get(LIBLINEAR_MC_ENV, "").strip()
    if not py:
        notes.append(f"liblinear-mc skipped: ${LIBLINEAR_MC_ENV} is not set (the python of a "
                     f"venv of its own with `pip install liblinear-multicore scikit-learn`: its "
                     f"module `liblinear` clashes with liblinear-official's)")
        return None
    exe = shutil.which(py)
    if exe is None:
        notes.append(f"liblinear-mc skipped: ${LIBLINEAR_MC_ENV} names no program")
        return None
    try:
        out = subprocess.run([exe, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        notes.append(f"liblinear-mc skipped: ${LIBLINEAR_MC_ENV} does not run ({e})")
        return None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        notes.append(f"liblinear-mc skipped: the python of ${LIBLINEAR_MC_ENV} has no "
                     f"multi-core LIBLINEAR ({last}; pip install liblinear-multicore there)")
        return None
    reader, version = (out.stdout.split() + ["liblinear", "?"])[:2]
    return exe, reader, version


def liblinear_mc_runners(groups, notes, threads=LIBLINEAR_MC_THREADS):
    """One ``liblinear-mc -s N -m threads`` runner per parallel LIBLINEAR solver whose problem is
    one of ``groups`` (none, with a note, when the interpreter is not there)."""
    from svmtool.solvers import REGISTRY

    found = liblinear_mc_python(notes)
    if found is None:
        return []
    exe, reader, version = found
    notes.append(f"liblinear-mc: liblinear-multicore {version} under "
                 f"${LIBLINEAR_MC_ENV}, reading with "
                 + ("scikit-learn's load_svmlight_file" if reader == "sklearn"
                    else "its own svm_read_problem"))
    child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "liblinear_mc_child.py")
    out = []
    for s in LIBLINEAR_MC_SOLVERS:
        spec = REGISTRY.get(str(s))
        if spec is None or spec_group(spec) not in groups:
            continue
        # LIBLINEAR's options as one word; -e only when the bench run sets eps
        opts = f"-s {s} -c {{c}} -m {int(threads)} -B {{bias}}"
        out.append(CommandRunner(
            f"liblinear-mc -s {s} -m {int(threads)}",
            [exe, child, reader, opts + "{eps_opt}", "{train}", "{model}"],
            spec_group(spec), model_kind="svmtool", default_eps=spec.default_eps,
            counterpart=spec.name, own_threads=True))
    return out


# scikit-learn's SVC and scikit-learn-intelex's as whole Python commands (svc_child.py);
# sklearnex may live in a venv of its own (it brings TBB, which numba could pick up as its
# threading layer in svmtool's venv)
SKLEARNEX_ENV = "SVMTOOL_BENCH_SKLEARNEX_PYTHON"
_SVC_KERNELS = {0: "linear", 1: "poly", 2: "rbf", 3: "sigmoid"}


class SvcCommand(CommandRunner):
    """``python svc_child.py [--dense] MODULE PARAMS TRAIN MODEL``: read the text file with
    ``load_svmlight_file``, fit ``MODULE.SVC`` (to a dense copy with ``dense``), write a LIBSVM
    model (read back here for the objective, nSV and the test accuracy), timed from outside,
    start to exit."""

    def __init__(self, name, exe, module, kernel_opts, dense=False):
        child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "svc_child.py")
        super().__init__(name, [exe, child] + (["--dense"] if dense else [])
                         + [module, "{svc_params}", "{train}", "{model}"],
                         "kernel", model_kind="svmtool", default_eps=1e-3,
                         iterations=_child_iterations, own_threads=True)
        self.kernel_opts = dict(kernel_opts)

    def describe(self):
        k = self.kernel_opts
        return (super().describe().replace("{svc_params}", "'{SVC arguments}'")
                + f" (SVC(C={{c}}, kernel={_SVC_KERNELS[k.get('kernel_type', 2)]!r}, "
                f"gamma={float(k['gamma']):g}, tol={{eps}}, cache_size="
                f"{float(k.get('cache_mb', 100.0)):g}))")

    def _fields(self, state, C, eps):
        import json

        f = super()._fields(state, C, eps)
        k = self.kernel_opts
        f["svc_params"] = json.dumps({
            "C": float(C), "kernel": _SVC_KERNELS[k.get("kernel_type", 2)],
            "gamma": float(k["gamma"]), "degree": int(k.get("degree", 3)),
            "coef0": float(k.get("coef0", 0.0)),
            "tol": float(eps if eps is not None else self.default_eps),
            "cache_size": float(k.get("cache_mb", 100.0)), "shrinking": True})
        return f


def _child_iterations(text):
    m = re.findall(r"^iterations (\d+)", text, flags=re.M)
    return int(m[-1]) if m else None


SVC_ANCHORS = ("sklearn-svc", "sklearn-svc-dense", "sklearnex", "sklearnex-dense")


def svc_runners(against, groups, kernel_opts, data_labels, notes):
    """``sklearn-svc`` (this interpreter) and ``sklearnex`` ($SVMTOOL_BENCH_SKLEARNEX_PYTHON, else
    this interpreter when sklearnex imports here) as whole commands, for a binary kernel problem,
    on the reader's CSR matrix or (``-dense``) a dense copy; a peer that is not there is left
    out with one line saying why."""
    if "kernel" not in groups:
        return []
    wanted = [a for a in SVC_ANCHORS if a in against]
    if wanted and len(np.unique(data_labels)) != 2:
        notes.append(f"{', '.join(wanted)} skipped: the SVC commands train two classes")
        return []
    out = []
    if "sklearn-svc" in against or "sklearn-svc-dense" in against:
        found = _probe(sys.executable, "sklearn.svm", "scikit-learn")
        if isinstance(found, str):
            notes.append(f"sklearn-svc skipped: scikit-learn {found}")
        else:
            for dense in (False, True):
                if "sklearn-svc" + ("-dense" if dense else "") in against:
                    out.append(SvcCommand("sklearn SVC command" + (", dense" if dense else ""),
                                          sys.executable, "sklearn.svm", kernel_opts, dense))
    if "sklearnex" in against or "sklearnex-dense" in against:
        py = os.environ.get(SKLEARNEX_ENV, "").strip()
        exe = shutil.which(py) if py else sys.executable
        where = f"under ${SKLEARNEX_ENV}" if py else "here"
        found = (_probe(exe, "sklearnex.svm", "scikit-learn-intelex") if exe
                 else "names no program")
        if isinstance(found, str):
            hint = "" if py else (f"; pip install scikit-learn-intelex, or name the python of "
                                  f"a venv that has it in ${SKLEARNEX_ENV}")
            notes.append(f"sklearnex skipped: scikit-learn-intelex {found} {where}{hint}")
        else:
            notes.append(f"sklearnex: scikit-learn-intelex {found[0]} {where}, oneDAL's "
                         f"threads (all cores by default)")
            for dense in (False, True):
                if "sklearnex" + ("-dense" if dense else "") in against:
                    out.append(SvcCommand("sklearnex SVC command" + (", dense" if dense else ""),
                                          exe, "sklearnex.svm", kernel_opts, dense))
    return out


def _probe(exe, module, package):
    """(version,) of ``package`` if ``module`` imports under the python ``exe``, else why not."""
    code = (f"import importlib.metadata as m, {module}; print(m.version({package!r}))")
    try:
        out = subprocess.run([exe, "-c", code], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
        return f"does not run ({e})"
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return f"does not import ({last})"
    return (out.stdout.strip() or "?",)

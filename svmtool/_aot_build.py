"""Build svmtool's ahead-of-time compiled kernels (the kernel extension).

Run by the wheel's build (``setup.py``'s ``build_ext``: ``pip install .``, ``pip wheel .``) and
by ``make aot`` in a checkout, as ``python -m svmtool._aot_build [--out DIR]``:

1. Runs svmtool's commands in this process on generated data large enough to take the jitted
   paths (a 1.5 MB text file each for binary, multi-class and regression labels, the first
   3,000 rows for the kernel solvers, and a wide sparse one of 8,000 features): ``train`` with
   every solver of the registry, and out of core from a binary cache with every solver whose
   entry says it can; ``predict``; ``convert``; the LIBSVM, SVMlight and SVMperf command lines;
   cross validation and a small ``grid`` -- as on an idle machine (:func:`svmtool.engine.local.assume_idle`), so the
   two-thread paths run too.  Every kernel call from Python is recorded with its argument types
   (:data:`svmtool._jit._RECORDING`).
2. Compiles, with numba's ahead-of-time compiler (``numba.pycc``, its public ``CC`` API), one
   exported function per recorded (kernel, argument types): a call of the kernel's own numba
   dispatcher, so each kernel keeps its options (fastmath, error model, inlining).  The code is
   generic for the machine's architecture (pycc's default CPU) in the first variant, so a
   wheel runs on any CPU its platform tag admits.  pycc's exports hold the GIL; each export here releases it around the
   kernel itself through CPython's ``PyEval_SaveThread``/``PyEval_RestoreThread`` (external C
   functions declared with numba's public types), as numba's ``nogil`` does, so threads share
   work as they do on the JIT.  A kernel that raises inside an export raises one RuntimeError
   naming it.  The same exports are compiled once per CPU level of :data:`svmtool._aot.VARIANTS`
   (on x86-64: generic, and x86-64-v3, whose vector loops are twice as wide); each is its own
   module, chosen when svmtool starts.
3. Writes the extension's modules and then its manifest (:mod:`svmtool._aot`) into ``--out``
   (default: beside the sources), each by atomic rename; a failed build leaves no manifest, and
   svmtool then runs on numba's JIT alone.

Needs a C compiler (numba's runtime is compiled into the extension).
"""

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

from svmtool import _aot, _jit


def make_data(folder, rows=12000, features=40, per_row=12, seed=7):
    """Three text files of ``rows`` rows: binary, 3-class and regression labels (a noisy linear
    rule, so the solvers have something to learn)."""
    from svmtool.io.writer import dump_svmlight
    from svmtool.problem import Problem

    rng = np.random.default_rng(seed)
    X = np.zeros((rows, features))
    for i in range(rows):
        cols = rng.choice(features, per_row, replace=False)
        X[i, cols] = np.round(rng.uniform(-1, 1, per_row), 3)
    score = X @ rng.normal(size=features) + 0.3 * rng.normal(size=rows)
    out = {}
    for name, labels in (("binary", np.where(score > 0, 1, -1)),
                         ("multi", 1 + np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))),
                         ("regression", np.round(score, 4))):
        out[name] = os.path.join(folder, f"{name}.svm")
        dump_svmlight(X, out[name], labels)
    # wide and sparse (text-like: more features than the dense limit of the cutting-plane
    # solvers' cut store, 4096, and enough values for two blocks of passes): the sparse cut
    # arena's kernels
    n, per, d = 6000, 30, 8000
    truth = rng.normal(size=d)
    cols = np.sort(np.array([rng.choice(d, per, replace=False) for _ in range(n)]))
    vals = np.round(rng.uniform(0, 1, cols.shape), 3)
    score = (vals * truth[cols]).sum(axis=1)
    out["wide"] = os.path.join(folder, "wide.svm")
    dump_svmlight(Problem(np.arange(n + 1, dtype=np.int64) * per, cols.reshape(-1).astype(np.int32),
                          vals.reshape(-1), np.where(score > np.median(score), 1.0, -1.0), d),
                  out["wide"])
    # the first rows of each: for the kernel solvers (whose work grows with the square of the
    # rows, and whose kernels take the same argument types at any size) and the grid
    for name, keep in (("binary", 3000), ("multi", 3000), ("regression", 3000), ("binary", 600),
                       ("wide", 2000)):
        part = os.path.join(folder, f"{name}-{keep}.svm")
        with open(out[name], encoding="ascii") as fh, open(part, "w", encoding="ascii") as to:
            to.writelines(fh.readlines()[:keep])
        out[f"{name}-{keep}"] = part
    return out


def workloads(data, folder):
    """The command lines run to find the kernels and their argument types."""
    from svmtool.solvers import specs

    m = os.path.join(folder, "model")
    cache = {k: os.path.join(folder, f"{k}.cache") for k in ("binary", "multi", "regression")}
    runs = [["convert", data[k], cache[k]] for k in cache]
    for spec in specs():
        size = "-3000" if spec.kind == "kernel" or spec.task == "ranking" else ""
        extra = ["-g", "0.5", "-m", "200"] if spec.kind == "kernel" else []
        if spec.task == "regression":
            kind = "regression"
        elif spec.kind == "multiclass" or spec.task == "ranking":
            kind = "multi"
        else:
            kind = "binary"
        runs.append(["train", "-s", spec.name, *extra, data[kind + size], m])
        runs.append(["predict", data[kind + size], m, os.path.join(folder, "out")])
        if spec.out_of_core:
            runs.append(["train", "-s", spec.name, "--out-of-core", "--memory-budget", "1",
                         cache[kind], m])
    b = data["binary"]
    runs += [
        ["train", "-c", "1000", "-e", "0.001", b, m],
        ["train", data["multi"], m],
        # Newton's one-vs-rest classes on threads, and -s 0's paired Hessian passes: with one
        # thread one group, whose first two classes start together and, at this tolerance,
        # run long enough to share their passes
        ["train", "-s", "lr", data["multi"], m],
        ["train", "-s", "lr", "--threads", "1", "-e", "0.0001", data["multi"], m],
        ["train", "-s", "newton", data["multi"], m],
        ["train", "-s", "dcsvm", "--early", "-g", "0.5", b, m],
        ["predict", b, m, os.path.join(folder, "out")],
        # more than two classes: one clustering for all pairs, each cluster's pairs at once
        ["train", "-s", "dcsvm", "--early", "-g", "0.5", data["multi"], m],
        ["predict", data["multi"], m, os.path.join(folder, "out")],
        ["train", cache["binary"], m],
        ["train", "-v", "5", b],
        ["svm-train", "-c", "32", "-g", "2", "-m", "1000", b, m],
        ["svm-predict", b, m, os.path.join(folder, "out")],
        ["svm-train", "-c", "4", "-g", "0.5", data["multi-3000"], m],
        ["svm-train", "-s", "3", "-g", "0.5", data["regression-3000"], m],
        ["svm-train", "-v", "5", "-g", "0.5", data["binary-3000"]],
        # the cutting-plane solvers' sparse cut store, its passes split and not
        *(["train", *s, "-c", "10", "-e", "0.001", *t, data["wide"], m]
          for s in [[]] + [["-s", x.name] for x in specs() if x.kind == "binary"
                           and x.fit.startswith("svmtool.solvers.cutting_plane.")]
          for t in ([], ["--threads", "1"])),
        ["svm_perf_learn", "-c", "325.61", "-e", "0.1", "--b", "0", b, m],
        ["svm_perf_classify", b, m, os.path.join(folder, "out")],
        ["svm_learn", "-c", "1", b, m],
        ["svm_learn", "-c", "1", data["wide-2000"], m],          # sparse rows: kernel blocks
        ["svm_classify", b, m, os.path.join(folder, "out")],
        ["grid", "-log2c", "-1,3,2", "-log2g", "-3,1,2", "-v", "3", data["binary-600"]],
    ]
    return runs


def record(runs, say):
    """Run the command lines with recording on; {(kernel, key): numba argument types}."""
    from svmtool.cli import run

    from svmtool.engine.local import assume_idle
    from svmtool.solvers.cutting_plane.qp import WorkingSet

    _jit._RECORDING = recorded = {}
    # the cutting-plane cut store splits its passes from the first non-zero (on large problems
    # only, otherwise: the same kernels, the same argument types)
    split_nnz, WorkingSet.SPLIT_NNZ = WorkingSet.SPLIT_NNZ, 0
    try:
        with assume_idle():
            _run_all(runs, run, say)
    finally:
        _jit._RECORDING = None
        WorkingSet.SPLIT_NNZ = split_nnz
    return recorded


def _run_all(runs, run, say):
    """Each command line in this process, its output kept from the screen, one line of time."""
    for args in runs:
        t = time.perf_counter()
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            code = run(["-q", *args])
        # a command that fails records less: said, not fatal
        note = f"  (failed, exit {code}: {sink.getvalue().strip()[:200]})" if code else ""
        shown = " ".join(os.path.basename(a) if os.sep in a else a for a in map(str, args))
        say(f"  {time.perf_counter() - t:6.1f} s  svmtool {shown}{note}")


def _gil_functions():
    """CPython's calls that release and take back the GIL, as external functions numba code can
    call: ``PyEval_SaveThread() -> state`` and ``PyEval_RestoreThread(state)``."""
    from numba import types

    return (types.ExternalFunction("PyEval_SaveThread", types.voidptr()),
            types.ExternalFunction("PyEval_RestoreThread", types.void(types.voidptr)))


# (the call sits in a closure: Python writes a call of more than 30 arguments with an opcode
# numba types only outside a try block)
_TWIN = """
def twin({names}):
    def call():
        return _kernel({names})
    state = _release()
    failed = False
    try:
        out = call()
    except Exception:
        failed = True
    _reacquire(state)
    if failed:
        raise RuntimeError("{name} failed in svmtool's kernel extension (SVMTOOL_AOT=0 runs "
                           "it on numba's JIT, with numba's message)")
    return out
"""


def _twin_of(kernel, n_args):
    """A plain function calling the kernel's dispatcher with ``n_args`` arguments, the GIL
    released around the call (the kernel takes no Python object: it is numba ``nogil`` code)
    and taken back before anything is returned or raised."""
    release, reacquire = _gil_functions()
    ns = {"_kernel": kernel.dispatcher, "_release": release, "_reacquire": reacquire}
    code = _TWIN.format(names=", ".join(f"a{i}" for i in range(n_args)), name=kernel.name)
    exec(code, ns)  # noqa: S102
    return ns["twin"]


def exports(recorded):
    """[(symbol, kernel name, key, signature, twin)] of the recorded calls numba compiled."""
    out = []
    for (name, key), argtypes in sorted(recorded.items()):
        kernel = _jit._KERNELS[name]
        cres = kernel.dispatcher.overloads.get(argtypes)
        if cres is None:
            continue
        sig = cres.signature.return_type(*argtypes)
        out.append((f"k{len(out):04d}", name, key, sig, _twin_of(kernel, len(argtypes))))
    return out


def compile_extension(entries, build_dir, cpu="", module=_aot.NAME):
    """The file of the extension module ``module``, compiled into ``build_dir`` for ``cpu``
    (numba's CPU names; empty: generic code for this architecture)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # numba.pycc's deprecation notice
        from numba.pycc import CC

        cc = CC(module, source_module=__name__)
    cc.output_dir = build_dir
    cc.target_cpu = cpu
    for symbol, _name, _key, sig, twin in entries:
        cc.export(symbol, sig)(twin)
    cc.compile()
    return os.path.join(build_dir, cc.output_file)


def _sources():
    sources = {}
    for kernel in _jit._KERNELS.values():
        module = sys.modules.get(kernel.__module__)
        path = getattr(module, "__file__", None)
        if path and os.path.abspath(path).startswith(_aot.HERE + os.sep):
            rel = os.path.relpath(os.path.abspath(path), _aot.HERE)
            sources[rel] = _aot.source_digest(rel)
    return dict(sorted(sources.items()))


def missing_compilers():
    """The C and C++ compilers the extension's build would call (``CC``/``CXX`` as given, else
    the ones this Python was built with) that are not there: checked before the minutes of
    recording, so a machine without them hears it at once."""
    import shlex
    import sysconfig

    missing = []
    for var in ("CC", "CXX"):
        command = os.environ.get(var) or sysconfig.get_config_var(var) or ""
        words = shlex.split(command)
        if not words or shutil.which(words[0]) is None:
            missing.append(f"{var}={command or '(none)'}")
    return missing


def build(out=None, cpu="", say=print):
    """Record, compile, write the extension and its manifest into ``out`` (default: beside the
    sources); returns the manifest written."""
    missing = missing_compilers()
    if missing:
        raise RuntimeError(f"no C/C++ compiler to compile it with ({', '.join(missing)} not "
                           "found)")
    t0 = time.perf_counter()
    out = os.path.abspath(out or _aot.HERE)
    os.makedirs(out, exist_ok=True)
    manifest_path = os.path.join(out, os.path.basename(_aot.MANIFEST))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(manifest_path)             # the old extension is not used meanwhile
    work = tempfile.mkdtemp(prefix="svmtool-aot-")
    here = os.getcwd()
    try:
        os.chdir(work)                       # what the commands write beside them (grid) too
        say("svmtool: compiling kernels ahead of time -- the commands that find them:")
        data = make_data(work)
        recorded = record(workloads(data, work), say)
        entries = exports(recorded)
        say(f"svmtool: {len(entries)} exports of {len({e[1] for e in entries})} kernels; "
            "compiling the extension")
        variants = []
        for suffix, level, needs in (_aot.build_variants() if not cpu else (("", cpu, ()),)):
            t = time.perf_counter()
            built = compile_extension(entries, os.path.join(work, "build" + suffix), level,
                                      _aot.NAME + suffix)
            target = os.path.join(out, os.path.basename(built))
            shutil.copyfile(built, target + ".tmp")
            os.replace(target + ".tmp", target)
            variants.append({"module": _aot.NAME + suffix, "cpu": level, "needs": list(needs)})
            say(f"svmtool: {os.path.basename(target)} ({level or 'generic'}) compiled in "
                f"{time.perf_counter() - t:.0f} s")
        kernels = {}
        for symbol, name, key, _sig, _twin in entries:
            kernels.setdefault(name, {})[key] = symbol
        manifest = {"format": _aot.FORMAT, "runtime": _aot.runtime_tag(),
                    "built_with": {"numba": _jit._load_numba().__version__,
                                   "numpy": np.__version__},
                    "variants": variants, "sources": _sources(), "kernels": kernels}
        with open(manifest_path + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=1, sort_keys=True)
        os.replace(manifest_path + ".tmp", manifest_path)
    finally:
        os.chdir(here)
        shutil.rmtree(work, ignore_errors=True)
    say(f"svmtool: kernel extension ({len(variants)} CPU levels) built in "
        f"{time.perf_counter() - t0:.0f} s")
    return manifest


def main(argv=None):
    """``python -m svmtool._aot_build [--out DIR] [--cpu NAME]``: exit 0 when built, 1 (with
    one line saying why) when not."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m svmtool._aot_build",
                                     description="compile svmtool's kernel extension")
    parser.add_argument("--out", help="folder for the extension and its manifest "
                        "(default: beside the sources)")
    parser.add_argument("--cpu", default="", help="one numba CPU name to compile for, instead "
                        "of the architecture's levels (generic code, x86-64-v3); 'host' tunes it "
                        "to this machine")
    args = parser.parse_args(argv)
    try:
        build(args.out, args.cpu, lambda line: print(line, file=sys.stderr, flush=True))
    except Exception as exc:  # noqa: BLE001 -- any failure: say it, leave the JIT in charge
        print(f"svmtool: the kernel extension was not built ({type(exc).__name__}: {exc}); "
              "svmtool runs on numba's JIT", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

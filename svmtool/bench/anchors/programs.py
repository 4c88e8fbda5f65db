"""Programs end to end: whole command lines timed from outside, each reading the same svmlight
text file and writing its model file, which is then read back here to compute the objective in
the harness's one convention and the test accuracy.

* the C programs, found on PATH (Debian/Ubuntu: ``apt install liblinear-tools libsvm-tools``;
  svmocas from the libocas sources; SVMperf from Joachims' site): ``liblinear-train`` (one runner
  per LIBLINEAR ``-s`` number whose problem a selected solver solves), ``svm-train`` (the kernel
  solvers' problem), ``svmocas`` (OCAS, the hinge loss, two classes) and ``svm_perf_learn``
  (1-slack cutting plane, SVMperf's C = C n / 100);
* ``svmtool train`` itself, as a user runs it (process start, imports, reading the text,
  training, writing the model).  Its warm-up run starts with an empty numba cache of its own
  (``NUMBA_CACHE_DIR``), so the table's ``jit/warm-up`` column is the compile cost a first run
  pays; the timed runs then load that cache, as every later run does (and Python's bytecode
  of svmtool's modules, which the warm-up writes if missing, even under
  ``PYTHONDONTWRITEBYTECODE``);
* multi-core LIBLINEAR (PyPI's ``liblinear-multicore``, ``-m`` threads) as one Python
  process that reads the text file and trains (:mod:`svmtool.bench.anchors.liblinear_mc_child`),
  under the interpreter named by ``SVMTOOL_BENCH_LIBLINEAR_MC_PYTHON`` (a venv of its own: its
  top-level module ``liblinear`` is also liblinear-official's);
* scikit-learn's ``SVC`` and scikit-learn-intelex's as one Python process each that reads the
  text file, fits and writes a LIBSVM model (:mod:`svmtool.bench.anchors.svc_child`); the
  latter under ``SVMTOOL_BENCH_SKLEARNEX_PYTHON`` when set (a venv of its own), else here;
* any command given as a template (``svmtool bench --external``).

Wall time is the child's, start to exit.  Peak memory is not measured for commands: a child's
``ru_maxrss`` includes the resident set of the Python process that forked it.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from svmtool.bench.anchors.base import (HARNESS_ENV, REGRESSION_GROUPS, Evaluation, Runner,
                                        kernel_terms, linear_evaluation, spec_group)

PROGRAMS = ("liblinear-train", "svm-train", "svmocas", "svm_perf_learn")


# folders searched before PATH for the C programs (``svmtool bench --anchor-bin DIR``)
ANCHOR_BIN = []


def set_anchor_bin(folders):
    """Search ``folders`` (in order) before PATH for the anchor programs."""
    ANCHOR_BIN[:] = [os.fspath(f) for f in folders or ()]


def find_program(*names):
    """The first of ``names`` found in the --anchor-bin folders, else on PATH; None if absent."""
    for name in names:
        for folder in ANCHOR_BIN:
            exe = shutil.which(name, path=folder)
            if exe:
                return exe
    for name in names:
        exe = shutil.which(name)
        if exe:
            return exe
    return None


def count_liblinear_iterations(text):
    """Iterations in LIBLINEAR's (or LIBSVM's) messages: the dual solvers' ``#iter = N`` lines
    summed, plus one per Newton iteration line."""
    found = [int(x) for x in re.findall(r"#iter = (\d+)", text)]
    newton = len(re.findall(r"^(?:iter|newton iter)\s*\d+", text, flags=re.M))
    return (sum(found) + newton) if (found or newton) else None


def svmtool_command():
    """argv of the svmtool beside this interpreter (a venv's bin/svmtool), else python -m."""
    exe = shutil.which("svmtool", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "svmtool"]


def run_timed(argv, env=None):
    """(seconds, exit status, stdout text, stderr text) of one child process, start to exit;
    the seconds carry the child's CPU seconds (``.cpu``, :class:`svmtool.bench.timing.Seconds`:
    user + system time of the child and its own children, from the kernel's accounting)."""
    from svmtool.bench.timing import children_cpu_now, with_cpu

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        c0 = children_cpu_now()
        t0 = time.perf_counter()
        rc = subprocess.run(argv, stdout=out, stderr=err, env=env).returncode
        dt = with_cpu(time.perf_counter() - t0, children_cpu_now() - c0)
        out.seek(0)
        err.seek(0)
        return dt, rc, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def _align(W, rows_w, has_bias, n_cols, data_bias):
    """Model weights (features [+ bias row]) as rows matching the data's columns (Xb)."""
    nf = n_cols - (1 if data_bias >= 0 else 0)
    feat = W[:rows_w - (1 if has_bias else 0)]
    out = np.zeros((n_cols, W.shape[1]))
    k = min(nf, feat.shape[0])
    out[:k] = feat[:k]
    if data_bias >= 0 and has_bias:
        out[nf] = W[-1]
    return out


class CommandRunner(Runner):
    """One command line per run; ``argv`` items are formatted with the fields below.

    Fields: {train} {test} {model} {predictions} {c} (C as here) {perf_c} (SVMperf's C =
    C * n / 100) {eps} {eps_percent} (100 eps) {n} {bias} {ocas_bias} (max(0, bias)).  An item that
    is a tuple ``("-e", "{eps}")`` is passed only when the bench run sets eps, else the
    program's own default holds.  ``model_kind`` says how the model file is read back:
    ``"svmtool"`` (any format svmtool reads: LIBLINEAR, LIBSVM, SVMlight), ``"ocas"`` (w one
    value a line, then w0), None (not read: no objective)."""

    cap = None
    time_from_outside = True

    def __init__(self, name, argv, group, model_kind=None, default_eps=None, counterpart=None,
                 env=None, fresh_numba_cache=False, source="anchor", iterations=None,
                 own_threads=False):
        self.name = name
        self.argv = list(argv)
        self.group = group
        self.model_kind = model_kind
        self.default_eps = default_eps
        self.counterpart = counterpart
        self.env = env
        self.fresh_numba_cache = fresh_numba_cache
        self.source = source
        self.iterations = iterations or count_liblinear_iterations
        # own_threads: without the variables the harness set (OMP_NUM_THREADS=1 for its
        # in-process anchors), so that a peer runs with its own default threads; svmtool's own
        # commands always (a user's svmtool has its BLAS threads: the bulk kernel rows use them)
        self.own_threads = own_threads or source == "svmtool"
        self.solver = counterpart if source == "svmtool" else None

    def describe(self):
        """The command with its placeholders, the program by its name only (no local paths)."""
        words = [a if isinstance(a, str) else "[" + " ".join(a) + "]" for a in self.argv]
        # every absolute path by its last part, also inside a word (an `sh -c` command line)
        words = [" ".join(os.path.basename(t) if os.path.isabs(t) else t for t in w.split(" "))
                 for w in words]
        if words and words[0].startswith("python") and words[1:3] == ["-m", "svmtool"]:
            words[:3] = ["svmtool"]
        return " ".join(words).replace("{eps_opt}", " [-e {eps}]")

    def prepare(self, data):
        tmp = tempfile.mkdtemp(prefix="svmtool-bench-")
        train = data.train_text(os.path.join(tmp, "train.txt"))
        test = data.test_text(os.path.join(tmp, "test.txt")) if data.test is not None else ""
        return {"tmp": tmp, "train": train, "test": test, "n": data.n, "bias": data.bias}

    def close(self, state):
        shutil.rmtree(state["tmp"], ignore_errors=True)

    def _fields(self, state, C, eps):
        e = eps if eps is not None else self.default_eps
        b = state["bias"]
        return {"train": state["train"], "test": state["test"],
                "model": os.path.join(state["tmp"], "model"),
                "predictions": os.path.join(state["tmp"], "predictions"),
                "c": repr(float(C)), "perf_c": repr(float(C) * state["n"] / 100.0),
                "eps": repr(float(e)) if e is not None else "",
                "eps_percent": repr(100.0 * float(e)) if e is not None else "",
                "n": str(state["n"]), "bias": repr(float(b)), "ocas_bias": repr(max(0.0, b)),
                "eps_opt": f" -e {float(eps)!r}" if eps is not None else ""}

    def command(self, state, C, eps):
        f = self._fields(state, C, eps)
        argv = []
        for a in self.argv:
            if isinstance(a, tuple):
                if eps is not None:
                    argv += [x.format(**f) for x in a]
            else:
                argv.append(a.format(**f))
        return argv

    def fit(self, state, C, eps, cap=None, callback=None):
        argv = self.command(state, C, eps)
        env = None
        if self.env or self.fresh_numba_cache or self.own_threads:
            env = dict(os.environ, **(self.env or {}))
            if self.own_threads:
                for key in HARNESS_ENV:
                    env.pop(key, None)
            if self.fresh_numba_cache:
                # the first run (the harness's warm-up) compiles into an empty cache of its own
                env["NUMBA_CACHE_DIR"] = os.path.join(state["tmp"], "numba-cache")
                # and writes svmtool's bytecode if it is missing (an editable install under
                # PYTHONDONTWRITEBYTECODE would compile every module's source on every run,
                # 0.1-0.2 s of CPU an installed svmtool never pays)
                env.pop("PYTHONDONTWRITEBYTECODE", None)
        dt, rc, out, err = run_timed(argv, env=env)
        if rc != 0:
            raise RuntimeError(f"command failed ({rc}): {shlex.join(argv)}\n{err.strip()[-500:]}")
        return (C, eps, out + err)

    def evaluate(self, state, raw, data):
        C, eps, text = raw
        ev = Evaluation(iterations=self.iterations(text))
        path = self._fields(state, C, eps)["model"]
        if self.model_kind == "ocas" and os.path.exists(path):
            v = np.loadtxt(path, ndmin=1)
            W = v.reshape(-1, 1)
            ev.W = _align(W, len(v), True, data.Xb.shape[1], data.bias)
            ev.col_labels = np.array([1.0])
        elif self.model_kind == "svmtool" and os.path.exists(path):
            from svmtool import api
            from svmtool.io.model_io import load_model

            model = load_model(path)
            if hasattr(model, "w") and self.group != "own":
                lin = linear_evaluation(model, self.group)
                ev.W = _align(np.asarray(lin.W, dtype=float), lin.W.shape[0], model.bias >= 0,
                              data.Xb.shape[1], data.bias)
                ev.col_labels = lin.col_labels
            elif self.group == "kernel":
                ev.kernel = kernel_terms(model, data)
                if data.test is not None:
                    ev.test_pred = api.predict(model, data.test)[0]
            elif data.test is not None:
                ev.test_pred = api.predict(model, data.test)[0]
        return ev


def _ocas_iterations(text):
    m = re.findall(r"^\s*(\d+): tim=", text, flags=re.M)
    return int(m[-1]) if m else None


class SvmtoolCommand(CommandRunner):
    """``svmtool train`` of one registry solver (or Variant) on the text file, end to end; the
    iterations come from its ``--report`` JSON."""

    def __init__(self, spec, bias, kernel_opts, variant=None):
        name = variant.label if variant is not None and variant.label else spec.name
        argv = svmtool_command() + ["train", "-s", spec.name, "-c", "{c}", ("-e", "{eps}"),
                                    "--report", "{model}.json"]
        opts = dict(variant.options) if variant is not None else {}
        if spec.kind == "kernel":
            # -B -1 (the problem of the DC-SVM paper) unless the variant names a kernel bias
            argv += ["-B", repr(float(opts.pop("bias", -1.0))), "-t",
                     str(kernel_opts.get("kernel_type", 2)),
                     "-g", repr(float(kernel_opts["gamma"])), "-m", _cache_mb(kernel_opts)]
        else:
            argv += ["-B", "{bias}"]
        if variant is not None:
            argv += variant_flags(variant, opts)
        argv += ["{train}", "{model}"]
        super().__init__(f"svmtool train -s {name}", argv, spec_group(spec),
                         model_kind="svmtool", default_eps=spec.default_eps,
                         fresh_numba_cache=True, source="svmtool", iterations=lambda t: None)
        self.solver = spec.name

    def _report(self, state, C, eps):
        import json

        path = self._fields(state, C, eps)["model"] + ".json"
        try:
            with open(path) as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return None

    def fit(self, state, C, eps, cap=None, callback=None):
        raw = super().fit(state, C, eps, cap=cap, callback=callback)
        rep = self._report(state, C, eps)
        if rep is not None and rep.get("startup"):
            # every run's start-up block (the warm-up's compiles into an empty cache: left out)
            state.setdefault("startups", {}).setdefault((C, eps), []).append(rep["startup"])
        return raw

    def evaluate(self, state, raw, data):
        ev = super().evaluate(state, raw, data)
        blocks = state.get("startups", {}).get((raw[0], raw[1]), [])[1:]
        if blocks:
            ev.extra["startup"] = median_startup(blocks)
        rep = self._report(state, raw[0], raw[1])
        if rep is None:
            return ev
        subs = rep.get("subproblems") or []
        ev.iterations = sum(int(s.get("iterations") or 0) + int(s.get("dual_iterations") or 0)
                            for s in subs) or None
        ev.extra["times"] = rep.get("times")
        return ev


def median_startup(blocks):
    """The part-by-part medians of several runs' --report ``startup`` blocks (svmtool._startup):
    wall and CPU seconds, the count of kernels loaded by numba and of those the kernel extension
    held."""
    import statistics

    out = {}
    for part in dict.fromkeys(k for b in blocks for k in b):
        have = [b[part] for b in blocks if part in b]
        entry = {k: statistics.median(float(h[k]) for h in have)
                 for k in ("wall", "cpu") if all(k in h for h in have)}
        for key in ("count", "kernels"):
            if not all(key in h for h in have):
                continue
            values = [h[key] for h in have]
            if all(isinstance(v, list) for v in values):     # names (numba's loads, compiles)
                entry[key] = sorted({name for v in values for name in v})
            else:                                           # a count (the extension's)
                entry[key] = int(statistics.median(values))
        out[part] = entry
    return out


# the CLI flags of the Variant options a command can take
_FLAGS = {"liblinear_rng": ("--liblinear-rng", None), "threads": ("--threads", str),
          "cp.line_search": ("--line-search", str), "dcsvm.early": ("--early", None),
          "max_iter": ("--max-iter", str), "seed": ("--seed", str),
          "cp.perf_eps": ("--perf-e", repr)}


def _cache_mb(kernel_opts):
    """The -m of the kernel commands (svmtool train and svm-train alike): 100 MB by default."""
    return "%g" % float(kernel_opts.get("cache_mb", 100.0))


def variant_flags(variant, options=None):
    out = []
    for key, value in (variant.options if options is None else options).items():
        if key not in _FLAGS:
            raise ValueError(f"variant option {key!r} has no svmtool train flag")
        flag, conv = _FLAGS[key]
        if conv is None:
            if value:
                out.append(flag)
        else:
            out += [flag, conv(value)]
    return out


def program_runners(against, groups, kernel_opts, data_labels, notes):
    """The C programs of ``against`` found on PATH whose problem is one of ``groups``."""
    from svmtool.solvers import REGISTRY

    out = []
    if "liblinear-train" in against:
        exe = find_program("liblinear-train", "train")
        if exe is None:
            notes.append("liblinear-train skipped: not on PATH (apt install liblinear-tools)")
        else:
            for s in (1, 2, 3, 0, 5, 6, 7, 11, 12, 13):
                spec = REGISTRY.get(str(s))
                if spec is None or spec_group(spec) not in groups:
                    continue
                out.append(CommandRunner(
                    f"liblinear-train -s {s}",
                    [exe, "-s", str(s), "-c", "{c}", ("-e", "{eps}"), "-B", "{bias}", "{train}",
                     "{model}"],
                    spec_group(spec), model_kind="svmtool", default_eps=spec.default_eps,
                    counterpart=spec.name))
    if "svm-train" in against and "kernel" in groups:
        exe = find_program("svm-train")
        if exe is None:
            notes.append("svm-train skipped: not on PATH (apt install libsvm-tools)")
        else:
            out.append(CommandRunner(
                "svm-train",
                [exe, "-s", "0", "-t", str(kernel_opts.get("kernel_type", 2)), "-g",
                 repr(float(kernel_opts["gamma"])), "-c", "{c}", ("-e", "{eps}"), "-m",
                 _cache_mb(kernel_opts), "{train}", "{model}"],
                "kernel", model_kind="svmtool", default_eps=1e-3, counterpart="kernel"))
    binary_pm1 = set(np.unique(data_labels).tolist()) == {-1.0, 1.0}
    if "svmocas" in against and "hinge" in groups:
        exe = find_program("svmocas")
        if exe is None:
            notes.append("svmocas skipped: not on PATH")
        elif not binary_pm1:
            notes.append("svmocas skipped: it trains two classes labelled +1/-1")
        else:
            out.append(CommandRunner(
                "svmocas",
                [exe, "-c", "{c}", "-b", "{ocas_bias}", "-v", "1", ("-r", "{eps}"), "{train}",
                 "{model}"],
                "hinge", model_kind="ocas", default_eps=0.01, counterpart="ocas",
                iterations=_ocas_iterations))
    if "svm_perf_learn" in against and "hinge" in groups:
        exe = find_program("svm_perf_learn")
        if exe is None:
            notes.append("svm_perf_learn skipped: not on PATH (SVMperf, "
                         "www.cs.cornell.edu/people/tj/svm_light/svm_perf.html)")
        elif not binary_pm1:
            notes.append("svm_perf_learn skipped: it trains two classes labelled +1/-1")
        else:
            out.append(CommandRunner(
                "svm_perf_learn",
                [exe, "-c", "{perf_c}", ("-e", "{eps_percent}"), "-w", "3", "--b", "{ocas_bias}",
                 "{train}", "{model}"],
                "hinge", model_kind="svmtool", default_eps=0.001, counterpart="cp",
                iterations=_perf_iterations))
    return out


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


class ExternalCommand(CommandRunner):
    """``svmtool bench --external``: any command template (a shell line), timed from outside;
    accuracy from ``predict_template``'s predictions file (one value a line: a label, or a score
    whose sign picks the class of a binary problem); ``model_kind`` "svmtool": svmtool reads
    its model file (LIBLINEAR, LIBSVM, SVMlight/SVMperf formats), for the objective."""

    def __init__(self, template, predict_template=None, group="hinge", model_kind=None):
        super().__init__("external " + shlex.split(template)[0].rsplit("/", 1)[-1],
                         ["/bin/sh", "-c", template], group, model_kind=model_kind,
                         default_eps=0.001, iterations=_last_iterations)
        self.predict_template = predict_template

    def evaluate(self, state, raw, data):
        ev = super().evaluate(state, raw, data)
        C, eps, _ = raw
        if self.predict_template and data.test is not None:
            f = self._fields(state, C, eps)
            out = subprocess.run(self.predict_template.format(**f), shell=True,
                                 capture_output=True, text=True)
            if out.returncode == 0 and os.path.exists(f["predictions"]):
                vals = np.loadtxt(f["predictions"], ndmin=2)[:, 0]
                labels = np.unique(data.y)
                if not np.all(np.isin(vals, labels)) and len(labels) == 2:
                    pos, neg = (1.0, -1.0) if set(labels) == {-1.0, 1.0} else (labels[1], labels[0])
                    vals = np.where(vals > 0, pos, neg)
                ev.test_pred = vals
        return ev


def _last_iterations(text):
    m = re.findall(r"(?:Number of iterations|#iter =|iterations)\D*(\d+)", text)
    return int(m[-1]) if m else None


def _perf_iterations(text):
    m = re.findall(r"Number of iterations:\s*(\d+)", text)
    return int(m[-1]) if m else None


__all__ = ["ANCHOR_BIN", "LIBLINEAR_MC_ENV", "PROGRAMS", "REGRESSION_GROUPS", "SKLEARNEX_ENV",
           "SVC_ANCHORS", "CommandRunner", "ExternalCommand", "SvcCommand", "SvmtoolCommand",
           "count_liblinear_iterations", "find_program", "liblinear_mc_python",
           "liblinear_mc_runners", "program_runners", "run_timed", "set_anchor_bin",
           "svc_runners", "svmtool_command", "variant_flags"]

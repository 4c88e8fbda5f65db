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
* the Python peers -- multi-core LIBLINEAR and the SVCs of scikit-learn and
  scikit-learn-intelex, each one Python process that reads the text file and trains -- in
  :mod:`svmtool.bench.anchors.peers`, on this module's :class:`CommandRunner`;
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

"""Studies that are not one training run per solver: the tables of the opt-in suites
``param-search``, ``ocas-split``, ``dcsvm-levels`` and ``predict`` (:mod:`svmtool.bench.suites`).

* :func:`param_search_table`: ``svmtool train -C`` (LIBLINEAR's search of C along the doubling
  path, warm-started, with cross validation) against ``liblinear-train -C``, whole commands on
  the same text file: time, best C and its cross-validated accuracy (or MSE for -s 11);
* :func:`ocas_split_table`: where OCAS's time goes -- full data passes, the reduced QP, the line
  search -- for each ``--line-search``, and SVMperf's cutting plane beside it, from the solvers'
  own timers (in process, median of the timed runs after a warm-up run);
* :func:`dcsvm_levels_table`: DC-SVM level by level: clusters, clustering and training time,
  support vectors, the level's dual objective and the test accuracy of the level's
  early-prediction model (what ``svmtool train -s dcsvm --test FILE`` prints);
* :func:`predict_table`: ``svmtool predict`` against ``liblinear-predict`` on one LIBLINEAR model
  file, and ``svmtool svm-predict`` against ``svm-predict`` on one LIBSVM model file, whole
  commands: time, accuracy, and how many predictions agree with the C program's.

Commands run interleaved (A B A B ...) after one warm-up run of each, and the table gives the
median and the minimum.  Each function returns the markdown of its table (with its notes).
"""

import os
import re
import shutil
import statistics
import tempfile

from svmtool.bench.anchors.programs import run_timed, svmtool_command
from svmtool.bench.timing import interleave


def interleaved(commands, repeat, log=None):
    """{name: (times, stdout + stderr of the last run)} of the commands ({name: argv}), each run
    once untimed, then ``repeat`` rounds of one run of each in turn (bench.timing.interleave)."""
    def run(name):
        dt, rc, so, se = run_timed(commands[name])
        if rc != 0:
            argv = commands[name]
            raise RuntimeError(f"{name}: exit {rc}: {' '.join(argv)}\n{se.strip()[-400:]}")
        return so + se, dt

    res = interleave(list(commands), run, repeat, log=log)
    return {name: (times, text) for name, (text, _, times) in res.items()}


def _median_min(times):
    """'median (min)' of wall seconds, and the median CPU seconds when the runs carry them
    (commands: their own CPU, bench.timing.Seconds)."""
    from svmtool.bench.timing import cpu_of

    cpu = cpu_of(times)[0]
    return (f"{statistics.median(times):.3f} ({min(times):.3f})"
            + ("" if cpu is None else f", CPU {cpu:.3f}"))


def _sample_rows(path, rows, tmp, seed=1):
    """``path`` itself, or ``rows`` of its lines drawn without replacement by a seeded generator
    (in file order) written to a file in ``tmp``, as the bench harness subsamples."""
    import numpy as np

    if rows is None:
        return path
    with open(path, "rb") as src:
        lines = src.readlines()
    if rows >= len(lines):
        return path
    keep = np.sort(np.random.default_rng(seed).permutation(len(lines))[:rows])
    dst = os.path.join(tmp, f"{os.path.basename(path)}.{rows}")
    with open(dst, "wb") as fh:
        fh.writelines(lines[i] for i in keep)
    return dst


def _take(problem, rows, seed=1):
    """``rows`` rows of ``problem`` drawn by a seeded generator (in file order), or all."""
    import numpy as np

    if rows is None or rows >= problem.n_rows:
        return problem
    return problem.take_rows(np.sort(np.random.default_rng(seed).permutation(problem.n_rows)
                                     [:rows]))


def _program(name):
    return shutil.which(name)


# -- -C: parameter search ------------------------------------------------------------------------

_BEST = re.compile(r"Best C = (\S+)(?:\s+Best p = (\S+))?\s+CV (accuracy|MSE) = ([^%\s]+)")


def param_search_table(train, name, repeat=3, log=None, solvers=(2, 0, 11)):
    """``svmtool train -C -s N`` (all cores and --threads 1) against ``liblinear-train -C -s N``."""
    ll = _program("liblinear-train")
    ours = svmtool_command() + ["train"]
    lines = ["| data | -s | command | s median (min) | best C | best p | CV score | "
             "C values |", "|---|---|---|---|---|---|---|---|"]
    notes = []
    if ll is None:
        notes.append("liblinear-train is not on PATH: svmtool alone.")
    for s in solvers:
        cmds = {f"svmtool train -C -s {s}": ours + ["-C", "-s", str(s), train],
                f"svmtool train -C -s {s} --threads 1": ours + ["-C", "-s", str(s), "--threads",
                                                                "1", train]}
        if ll:
            cmds[f"*liblinear-train -C -s {s}*"] = [ll, "-C", "-s", str(s), train]
        if log:
            log(f"-C -s {s} on {name}")
        res = interleaved(cmds, repeat, log)
        for cmd, (times, text) in res.items():
            m = _BEST.search(text)
            best_c, best_p, kind, score = (m.group(1), m.group(2) or "", m.group(3),
                                           m.group(4)) if m else ("?", "", "", "?")
            tried = len(re.findall(r"^log2c=", text, flags=re.M))
            score = f"{score}%" if kind == "accuracy" else f"MSE {score}" if kind else score
            lines.append(f"| {name} | {s} | {cmd} | {_median_min(times)} | {best_c} | "
                         f"{best_p or '-'} | {score} | {tried} |")
    notes.append("Whole commands on the same text file (reading included); the folds differ "
                 "(each tool draws its own), so the best C and the CV score may differ by a "
                 "step of the path.  `C values`: the `log2c=` lines printed (with -s 11 one per "
                 "(C, p) pair).")
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"


# -- OCAS: where the time goes -------------------------------------------------------------------

def ocas_split_table(train, name, repeat=3, log=None, C=1.0, rows=None):
    """Time split of OCAS (each line search) and of ``cp``: passes, QP, line search, other."""
    import time

    from svmtool import api
    from svmtool.io.svmlight import load_data
    from svmtool.params import CuttingPlaneParams, TrainParams

    prob = _take(load_data(train), rows)
    runs = [(f"ocas --line-search {ls}", TrainParams(solver="ocas", C=C,
                                                       cp=CuttingPlaneParams(line_search=ls)))
            for ls in ("exact", "sorted", "gca2", "tca")]
    runs.append(("cp", TrainParams(solver="cp", C=C)))
    keys = ("time_passes", "time_qp", "time_line_search", "time_other")
    lines = [f"| data | solver | s median (min) | passes s | QP s | line search s | other s | "
             f"iterations | passes | line evals | primal |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, params in runs:
        if log:
            log(f"{label} on {name}")
        api.train(prob, params)                      # warm-up: compile, caches
        times, splits, model = [], [], None
        for _ in range(repeat):
            t0 = time.perf_counter()
            model = api.train(prob, params)
            times.append(time.perf_counter() - t0)
            subs = model.report["classes"]
            splits.append([sum(float(s.get(k) or 0.0) for s in subs) for k in keys])
        med = [statistics.median(col) for col in zip(*splits)]
        subs = model.report["classes"]
        it = sum(int(s.get("iterations") or 0) for s in subs)
        passes = sum(int(s.get("passes") or 0) for s in subs)
        evals = sum(int(s.get("line_evals") or 0) for s in subs)
        primal = sum(float(s["primal"]) for s in subs)
        lines.append(f"| {name} | {label} | {_median_min(times)} | "
                     + " | ".join(f"{x:.3f}" for x in med)
                     + f" | {it} | {passes} | {evals if label != 'cp' else '-'} | {primal:.6g} |")
    return ("\n".join(lines) + "\n\n- In process on data in memory, C = "
            f"{C:g}, each solver's default eps; the split is the solvers' own timers (medians), "
            "summed over one-vs-rest classes; `other` is the driver's remainder (bookkeeping, "
            "cut storage).  The exact and sorted searches find the same step, so their "
            "iterations agree; GCA2 and TCA approximate it.\n")


# -- DC-SVM level by level -----------------------------------------------------------------------

def dcsvm_levels_table(train, test, name, repeat=1, log=None, C=32.0, gamma=2.0, rows=None,
                       test_rows=None, bias=1.0):
    """DC-SVM's per-level statistics and the test accuracy of every level's early model."""
    from dataclasses import replace

    from svmtool import api
    from svmtool.io.svmlight import load_data
    from svmtool.params import DcsvmParams, KernelParams, TrainParams

    prob = _take(load_data(train), rows)
    tst = _take(load_data(test), test_rows) if test else None
    params = TrainParams(solver="dcsvm", C=C, bias=bias,
                         kernel=KernelParams(kernel_type=2, gamma=gamma),
                         dcsvm=DcsvmParams(test=tst, keep_level_models=tst is not None))
    runs = []
    for r in range(max(1, repeat)):
        if log:
            log(f"dcsvm on {name}, run {r + 1}")
        runs.append(api.train(prob, replace(params)).report)
    levels = [_levels_of(rep) for rep in runs]
    lines = ["| data | level | clusters | clustering s | training s | #SV | objective | "
             "test accuracy |", "|---|---|---|---|---|---|---|---|"]
    for i, st in enumerate(levels[0]):
        ct = statistics.median(lv[i]["cluster_time"] for lv in levels)
        tt = statistics.median(lv[i]["train_time"] for lv in levels)
        acc = st.get("accuracy")
        lines.append(f"| {name} | {st['level']} | {st['clusters']} | {ct:.3f} | {tt:.3f} | "
                     f"{st['n_sv']} | {st['objective']:.8g} | "
                     f"{'%.2f%%' % acc if acc is not None else '-'} |")
    total = statistics.median(float(rep["train_time"]) for rep in runs)
    n_test = tst.n_rows if tst is not None else 0
    return ("\n".join(lines) + f"\n\n- RBF kernel, gamma = {gamma:g}, C = {C:g}, -B {bias:g}, "
            f"{prob.n_rows} training rows, {n_test} test rows, levels 4, k = 4 (the defaults); "
            f"training {total:.2f} s in all (median of {len(runs)} run(s)); times are medians "
            "per level.  A level's accuracy is its early-prediction model's (each test row "
            "goes to its nearest cluster's local model); level 0 is the exact model, `refine` "
            "the pass over the last level's support vectors.\n")


def _levels_of(report):
    """The per-level statistics of a kernel model's report (summed over one-vs-one pairs)."""
    if report.get("levels"):
        return report["levels"]
    for c in report.get("classes") or []:
        if c.get("levels"):
            return c["levels"]
    return []


# -- prediction ----------------------------------------------------------------------------------

def predict_table(sets, repeat=3, log=None):
    """``sets``: [(name, train, test, kind, options)], kind "linear" or "kernel"; the model is
    trained once by the C program (liblinear-train -s 1 / svm-train) and read by both
    predictors."""
    ll_train, ll_pred = _program("liblinear-train"), _program("liblinear-predict")
    sv_train, sv_pred = _program("svm-train"), _program("svm-predict")
    ours = svmtool_command()
    lines = ["| data | model | command | test rows | s median (min) | accuracy | "
             "agreement |", "|---|---|---|---|---|---|---|"]
    notes = []
    tmp = tempfile.mkdtemp(prefix="svmtool-bench-predict-")
    try:
        for name, train, test, kind, opts in sets:
            tr = _sample_rows(train, opts.get("rows"), tmp)
            te = _sample_rows(test, opts.get("test_rows"), tmp)
            model = os.path.join(tmp, f"{name}.{kind}.model")
            if kind == "linear":
                trainer, pred_c, ours_cmd = ll_train, ll_pred, "predict"
                train_argv = [trainer, "-q", "-s", "1", tr, model]
                what = "LIBLINEAR -s 1"
            else:
                trainer, pred_c, ours_cmd = sv_train, sv_pred, "svm-predict"
                train_argv = [trainer, "-q", "-g", str(opts.get("gamma", 2.0)), "-c",
                              str(opts.get("C", 32.0)), tr, model]
                what = "LIBSVM RBF"
            if trainer is None:
                notes.append(f"{name} {kind}: no C trainer on PATH, skipped")
                continue
            run_timed(train_argv)
            outs = {"svmtool": os.path.join(tmp, "ours.out"), "c": os.path.join(tmp, "c.out")}
            cmds = {f"svmtool {ours_cmd}": ours + [ours_cmd, te, model, outs["svmtool"]]}
            if pred_c:
                cmds[f"*{os.path.basename(pred_c)}*"] = [pred_c, te, model, outs["c"]]
            if log:
                log(f"predict {name} ({kind})")
            res = interleaved(cmds, repeat, log)
            n_test = _count_lines(te)
            ref = _read_labels(outs["c"]) if pred_c else None
            for (cmd, (times, text)), key in zip(res.items(), ("svmtool", "c")):
                m = re.search(r"Accuracy = ([\d.]+)%", text)
                acc = f"{m.group(1)}%" if m else "?"
                agree = "-"
                if ref is not None:
                    mine = _read_labels(outs[key])
                    same = sum(a == b for a, b in zip(mine, ref))
                    agree = f"{same}/{len(ref)}"
                lines.append(f"| {name} | {what} | {cmd} | {n_test} | {_median_min(times)} | "
                             f"{acc} | {agree} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    notes.append("Whole commands (start, reading the model and the test text, predicting, "
                 "writing the labels); one model file, trained by the C program, read by both; "
                 "`agreement`: predicted labels equal to the C program's.")
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"


def _count_lines(path):
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def _read_labels(path):
    with open(path) as fh:
        return [float(line.split()[0]) for line in fh if line.strip() and not line.startswith("labels")]

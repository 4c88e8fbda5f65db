"""The tables of ``svmtool bench --suite grid``: model selection as users run it.

* :func:`anchors_table`: ``svmtool grid`` against LIBSVM's ``tools/grid.py`` running the C
  ``svm-train`` (grid.py from ``--anchor-bin`` folders, else Debian's ``svm-grid``), against
  scikit-learn's ``GridSearchCV(SVC, n_jobs=2)`` (dense input, 5 stratified folds), and
  ``svmtool grid -s dcd-l2`` against ``liblinear-train -C -s 2``: whole commands, interleaved
  (A B C A B C ...) after a warm-up run, wall and CPU time (the child's and its children's, from
  ``wait4``), best cell and rate, the load average before and after;
* :func:`shares_table`: each shared mechanism switched off in turn (alpha seeding, the shared
  kernel rows, threads) and all of them, the same grid, interleaved;
* :func:`early_table`: ``-s dcsvm --early`` against the exact ``-s dcsvm`` grid: the best cell of
  each, whether they agree, and the times;
* :func:`halving_table`: ``--halving`` against the whole grid: how often it keeps the whole
  grid's best cell (over seeds of its samples), and its time.
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from svmtool.bench.anchors.programs import find_program, svmtool_command
from svmtool.bench.timing import interleave, load_text

_FINAL = re.compile(r"^(\S+)(?: (\S+))? (\S+)$")


def run_rusage(argv, cwd=None):
    """(wall s, CPU s of the child and its waited-for children, exit status, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (dt, ru.ru_utime + ru.ru_stime, p.returncode,
                out.read().decode(errors="replace"), err.read().decode(errors="replace"))



def timed_rounds(commands, repeat, log=None, cwd=None):
    """{name: (wall times, CPU times, last stdout)} of commands run interleaved."""
    cpu = {name: [] for name in commands}

    def call(name):
        dt, c, rc, so, se = run_rusage(commands[name], cwd=cwd)
        if rc != 0:
            raise RuntimeError(f"{name}: exit {rc}: {' '.join(commands[name])}\n"
                               f"{se.strip()[-400:]}")
        cpu[name].append(c)
        return so + "\n" + se, dt

    res = interleave(list(commands), call, repeat, log=log)
    return {name: (times, cpu[name][1:], text) for name, (text, _, times) in res.items()}


def _med(xs):
    return f"{statistics.median(xs):.2f} ({min(xs):.2f})" if xs else "-"


def grid_py():
    """argv prefix of LIBSVM's grid.py (the --anchor-bin folders first), or None."""
    exe = find_program("grid.py", "svm-grid")
    if exe is None:
        return None
    if exe.endswith(".py"):
        return [sys.executable, exe]
    return [exe]


def best_of_grid(text):
    """(C, gamma or None, rate) from a grid.py-style last line."""
    for line in reversed(text.strip().splitlines()):
        m = _FINAL.match(line.strip())
        if m and not line.startswith("["):
            try:
                vals = [float(v) for v in m.groups() if v is not None]
            except ValueError:
                continue
            if len(vals) == 3:
                return vals[0], vals[1], vals[2]
            if len(vals) == 2:
                return vals[0], None, vals[1]
    return None


def _cell(best):
    if best is None:
        return "?", "?"
    c, g, rate = best
    where = f"C = {c:g}" + (f", gamma = {g:g}" if g is not None else "")
    return where, f"{rate:g}%"


SKLEARN = """
import sys, numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC
X, y = load_svmlight_file(sys.argv[1])
X = X.toarray()
cs = [2.0 ** k for k in np.arange({c0}, {c1} + 1e-9, {cs})]
gs = [2.0 ** k for k in np.arange({g0}, {g1} - 1e-9, {gstep})]
search = GridSearchCV(SVC(kernel="rbf", tol=1e-3, cache_size=100), {{"C": cs, "gamma": gs}},
                      cv=StratifiedKFold(5), n_jobs=2)
search.fit(X, y)
print(search.best_params_["C"], search.best_params_["gamma"], 100.0 * search.best_score_)
"""


def anchors_table(rows, repeat=3, log=None):
    """One block per grid row: svmtool grid and the anchors that are here (module doc).
    ``rows``: [(title, data path, svmtool grid args, grid.py args or None, sklearn ranges or
    None, liblinear args or None)]."""
    ours = svmtool_command() + ["grid"]
    gp = grid_py()
    svm_train = find_program("svm-train")
    ll = find_program("liblinear-train")
    lines = ["| grid | command | wall s median (min) | CPU s median | best cell | rate | "
             "vs grid.py / LIBLINEAR |", "|---|---|---|---|---|---|---|"]
    notes = []
    for title, data, args, gp_args, sk, ll_args in rows:
        tmp = tempfile.mkdtemp(prefix="svmtool-grid-bench-")
        try:
            cmds = {"svmtool grid": ours + args + ["-out", "null", "-png", "null", data]}
            ref = None
            if gp_args is not None and gp and svm_train:
                ref = "grid.py + C svm-train"
                cmds[ref] = gp + ["-svmtrain", svm_train, "-gnuplot", "null", "-out", "null"] + \
                    gp_args + [data]
            if sk is not None and _have("sklearn"):
                cmds["scikit-learn GridSearchCV(SVC), n_jobs=2"] = \
                    [sys.executable, "-c", SKLEARN.format(**sk), data]
            if ll_args is not None and ll:
                ref = "liblinear-train -C -s 2"
                cmds[ref] = [ll] + ll_args + [data]
            before = load_text()
            if log:
                log(f"grid: {title} (load {before})")
            res = timed_rounds(cmds, repeat, log, cwd=tmp)
            after = load_text()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        base = statistics.median(res[ref][0]) if ref in res else None
        for name, (walls, cpus, text) in res.items():
            best = _liblinear_best(text) if name.startswith("liblinear") else \
                _sklearn_best(text) if name.startswith("scikit") else best_of_grid(text)
            where, rate = _cell(best)
            ratio = f"{statistics.median(walls) / base:.2f}x" if base else "-"
            lines.append(f"| {title} | {name} | {_med(walls)} | {_med(cpus)} | {where} | "
                         f"{rate} | {ratio} |")
        notes.append(f"{title}: load average {before} before, {after} after.")
    if gp is None or svm_train is None:
        notes.append("LIBSVM's grid.py or svm-train not found (--anchor-bin DIR with grid.py "
                     "and svm-train, or Debian's svm-grid): svmtool alone.")
    notes.append("Whole commands from the same text file, interleaved after a warm-up run of "
                 "each; CPU is user + system time of the command and the processes it waited "
                 "for (grid.py's svm-train runs, scikit-learn's workers).")
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"


def _have(module):
    from svmtool.errors import installed

    return installed(module)


def _liblinear_best(text):
    m = re.search(r"Best C = (\S+)\s+CV accuracy = ([^%\s]+)", text)
    return (float(m.group(1)), None, float(m.group(2))) if m else None


def _sklearn_best(text):
    for line in reversed(text.strip().splitlines()):
        parts = line.split()
        if len(parts) == 3:
            try:
                return tuple(float(p) for p in parts)
            except ValueError:
                continue
    return None


def shares_table(rows, repeat=3, log=None):
    """The grid with each shared mechanism off in turn: its share of the speed-up."""
    ours = svmtool_command() + ["grid", "-out", "null", "-png", "null"]
    variants = [("all shared (default)", []),
                ("no alpha seeding", ["--seed-alpha", "none"]),
                ("no shared kernel rows", ["--no-row-sharing"]),
                ("one thread", ["--threads", "1"]),
                ("nothing shared", ["--seed-alpha", "none", "--no-row-sharing", "--threads",
                                    "1"])]
    lines = ["| grid | variant | wall s median (min) | CPU s median | wall vs default | best "
             "cell | rate |", "|---|---|---|---|---|---|---|"]
    notes = []
    for title, data, args in rows:
        cmds = {name: ours + args + extra + [data] for name, extra in variants}
        before = load_text()
        if log:
            log(f"shares: {title} (load {before})")
        res = timed_rounds(cmds, repeat, log)
        base = statistics.median(res[variants[0][0]][0])
        for name, (walls, cpus, text) in res.items():
            where, rate = _cell(best_of_grid(text))
            lines.append(f"| {title} | {name} | {_med(walls)} | {_med(cpus)} | "
                         f"{statistics.median(walls) / base:.2f}x | {where} | {rate} |")
        notes.append(f"{title}: load average {before} before, {load_text()} after.")
    notes.append("Without the shared kernel rows each fold's solve has a cache of its own (-m "
                 "MB), as each svm-train does; without alpha seeding every solve starts from "
                 "alpha = 0; one thread runs the units one after another.")
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"


def _grid_cells(problem, params, grid, opts):
    from svmtool.selection.grid import run_grid
    from svmtool.solvers import get_spec

    t0 = time.perf_counter()
    res = run_grid(problem, params, grid, get_spec(params.solver), opts)
    return res, time.perf_counter() - t0


def early_table(sets, log=None):
    """``-s dcsvm --early`` against the exact ``-s dcsvm`` grid (in process, after a warm-up
    cell): best cells, agreement, times.  ``sets``: [(title, problem, GridSpec)]."""
    from svmtool.params import DcsvmParams, TrainParams
    from svmtool.selection.grid import GridOptions

    lines = ["| data | grid | early best | exact best | exact rate at early's best | same "
             "cell | early s | exact s | speed-up |", "|---|---|---|---|---|---|---|---|---|"]
    agree = 0
    for title, prob, grid in sets:
        if log:
            log(f"early vs exact: {title} (load {load_text()})")
        out = {}
        for early in (True, False):
            p = TrainParams(solver="dcsvm", bias=1.0, dcsvm=DcsvmParams(early=early))
            out[early] = _grid_cells(prob, p, grid, GridOptions())
        (re_, te), (rx, tx) = out[True], out[False]
        rates = {(c.c, c.g): c.rate for c in rx.cells}
        same = re_.best[1:] == rx.best[1:]
        agree += same
        lines.append(f"| {title} | {grid.describe()} | {_fmt_best(re_.best)} | "
                     f"{_fmt_best(rx.best)} | {rates.get(re_.best[1:], float('nan')):g}% | "
                     f"{'yes' if same else 'no'} | {te:.1f} | {tx:.1f} | {tx / te:.1f}x |")
    return ("\n".join(lines) + f"\n\n- The early grid picked the exact grid's best cell on "
            f"{agree} of {len(sets)} data sets.  In process, all cores, -B 1 (DC-SVM's kernel "
            f"bias), the cells' folds as svm-train -v's; the load average was {load_text()} at the "
            f"end.\n")


def _fmt_best(best):
    if best is None:
        return "?"
    rate, c, g = best
    return f"log2 C {c:g}, log2 gamma {g:g}: {rate:g}%"


def halving_table(sets, seeds=(1, 2, 3, 4, 5), log=None):
    """``--halving`` against the whole grid: kept the best cell? (``sets`` as early_table's)."""
    from svmtool.params import TrainParams
    from svmtool.selection.grid import GridOptions
    from svmtool.selection.halving import run_halving
    from svmtool.solvers import get_spec

    lines = ["| data | grid | whole-grid best | halving kept it | rate of halving's pick "
             "(median) | whole grid s | halving s (median) |", "|---|---|---|---|---|---|---|"]
    kept_all, runs = 0, 0
    for title, prob, grid in sets:
        if log:
            log(f"halving: {title} (load {load_text()})")
        p = TrainParams(solver="c_svc")
        full, t_full = _grid_cells(prob, p, grid, GridOptions())
        rates = {(c.c, c.g): c.rate for c in full.cells}
        kept, picks, times = 0, [], []
        for seed in seeds:
            t0 = time.perf_counter()
            res = run_halving(prob, p, grid, get_spec("c_svc"), GridOptions(seed=seed))
            times.append(time.perf_counter() - t0)
            kept += res.best[1:] == full.best[1:]
            picks.append(rates[res.best[1:]])
        kept_all += kept
        runs += len(seeds)
        lines.append(f"| {title} | {grid.describe()} | {_fmt_best(full.best)} | {kept} of "
                     f"{len(seeds)} | {statistics.median(picks):g}% | {t_full:.1f} | "
                     f"{statistics.median(times):.1f} |")
    return ("\n".join(lines) + f"\n\n- Over all: the whole grid's best cell kept in {kept_all} "
            f"of {runs} runs (seeds {', '.join(map(str, seeds))} of the row samples).  In "
            f"process, all cores, C-SVC; the load average was {load_text()} at the end.\n")

"""Scaling beyond memory: whole ``svmtool train`` commands on caches of growing size, in memory,
out of core and on a local dask cluster (``svmtool bench TRAIN --scaling --scale-rows ...``).

The caches are a real data set repeated: copy k of TRAIN's rows in the k-th seeded random
order, the last copy cut to reach the row count asked for, written by the streaming cache
writer (memory O(one copy)) into a scratch folder.  No synthetic rows.

Each run is a child process timed from outside (wall time of the command: reading, verifying,
training, writing the model); its peak anonymous memory (RssAnon: the process's own, not the
page cache that holds the mapped cache) is sampled from /proc every few milliseconds, for the
command and for the sum over its child processes (the dask workers).  The slope of log time
against log rows is a least-squares fit per mode (Joachims' Figure 1: about 1 for a method whose
iterations do not grow with n).
"""

import math
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np

MODES = ("memory", "out-of-core", "dask:2")


def build_caches(train, rows_list, folder, seed=1, log=None):
    """[(rows, path)]: caches of ``rows`` rows from copies of ``train`` in different orders."""
    from svmtool.io.cache_stream import CacheWriter
    from svmtool.io.svmlight import load_data

    src = load_data(train)
    n = src.n_rows
    out = []
    for rows in rows_list:
        rows = int(rows)
        path = os.path.join(folder, f"scale-{rows}.cache")
        if not os.path.exists(path):
            if log:
                log(f"scaling: building {path} ({rows} rows, {math.ceil(rows / n)} copies)")
            rng = np.random.default_rng(seed)
            with CacheWriter(path) as w:
                left = rows
                while left > 0:
                    take = min(left, n)
                    w.append(src.take_rows(rng.permutation(n)[:take]))
                    left -= take
                w.finish(src.n_features)
        out.append((rows, path))
    return out


def _anon_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(root):
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def measure(cmd, env=None):
    """(seconds, peak RssAnon of the command in MB, peak summed RssAnon of its children in MB,
    exit status, stderr) of one command."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = {"self": 0, "kids": 0}
    done = threading.Event()

    def sample():
        k = 0
        kids = []
        while not done.is_set():
            if k % 20 == 0:
                kids = _descendants(proc.pid)
            k += 1
            peak["self"] = max(peak["self"], _anon_kb(proc.pid))
            if kids:
                peak["kids"] = max(peak["kids"], sum(_anon_kb(c) for c in kids))
            time.sleep(0.005)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - t0
    done.set()
    t.join()
    return seconds, peak["self"] / 1024, peak["kids"] / 1024, proc.returncode, err.decode()


def _mode_args(mode, budget_mb):
    if mode == "memory":
        return ["--in-memory"]
    if mode == "out-of-core":
        return ["--out-of-core", "--memory-budget", f"{budget_mb:g}"]
    if mode.startswith("dask:"):
        return ["--dask", "local:" + mode.split(":", 1)[1], "--memory-budget", f"{budget_mb:g}"]
    raise ValueError(f"unknown scaling mode {mode!r}: one of memory, out-of-core, dask:N")


def _fit_slope(pts):
    """Least-squares slope of log y against log x, or None with fewer than two points."""
    pts = [(x, y) for x, y in pts if x and y and x > 0 and y > 0]
    if len(pts) < 2:
        return None
    return float(np.polyfit(np.log([a for a, _ in pts]), np.log([b for _, b in pts]), 1)[0])


def _parse_run(err):
    """(iterations, training seconds, primal) from a train command's stderr (None if absent)."""
    its = re.findall(r"done: iterations (\d+)", err)
    primal = re.findall(r"done: iterations \d+, primal ([-+0-9.eE]+)", err)
    trained = re.findall(r"trained in ([0-9.]+) s", err)
    return (int(its[-1]) if its else None, float(trained[-1]) if trained else None,
            float(primal[-1]) if primal else None)


def run(train, rows_list, solver, folder, modes=MODES, C=1.0, eps=None, bias=-1.0, repeat=3,
        budget_mb=256, threads=None, seed=1, log=None, c_rule="fixed"):
    """Time ``svmtool train -s SOLVER`` on every cache and mode; returns {"points", "slopes",
    "parts", ...}.

    After one untimed warm-up run per mode, the ``repeat`` rounds are interleaved: every round
    runs every (mode, size) once, so that a burst of load from other jobs falls on one run of
    many points rather than on all runs of one point; each point reports medians.  Besides the
    whole command's time, each point has the solver's own training time (``trained in``), its
    outer iterations and the training time per iteration: log(train) = log(per iteration) +
    log(iterations), so the slope of the training time splits exactly into the slope of the
    cost per iteration (1 for passes linear in n) and the growth of the iteration count
    (Joachims' Figure 1 discussion).

    ``c_rule``: ``fixed`` -- LIBLINEAR's C at every size, so that k copies of TRAIN are TRAIN
    with C k (a harder problem, more iterations, as n grows); ``per-n`` -- Joachims' C/n
    normalisation (SVMperf's C, ``--perf-c``), chosen so that every size is TRAIN's problem at
    ``C``: the work per iteration grows with n, the iteration count should not."""
    caches = build_caches(train, rows_list, folder, seed=seed, log=log)
    if c_rule not in ("fixed", "per-n"):
        raise ValueError(f"c_rule must be fixed or per-n (got {c_rule!r})")
    base, env = _train_command(train, solver, C, eps, bias, threads, c_rule)
    model = os.path.join(folder, "scale.model")
    load_before = os.getloadavg()
    for mode in modes:                      # numba's cache and the page cache warm
        measure(base + _mode_args(mode, budget_mb) + [caches[0][1], model], env)
    runs = _interleaved_runs(base, env, caches, modes, budget_mb, model, repeat, log)
    points = [_point(mode, rows, path, runs[(mode, rows)])
              for mode in modes for rows, path in caches]
    slopes, parts = {}, {}
    for mode in modes:
        mine = [p for p in points if p["mode"] == mode]
        s = _fit_slope([(p["rows"], p["time"]) for p in mine])
        if s is not None:
            slopes[mode] = s
        parts[mode] = {key: _fit_slope([(p["rows"], p[key]) for p in mine])
                       for key in ("train_time", "per_iteration", "iterations")}
    return {"train": train, "solver": solver, "C": C, "eps": eps, "bias": bias,
            "repeat": repeat, "budget_mb": budget_mb, "c_rule": c_rule, "points": points,
            "slopes": slopes,
            "parts": parts, "load": [list(load_before), list(os.getloadavg())]}


def _train_command(train, solver, C, eps, bias, threads, c_rule):
    """(argv, environment) of ``svmtool train``, without mode and files."""
    env = dict(os.environ)          # the children find svmtool as this process did
    base = [sys.executable, "-m", "svmtool", "train", "-s", solver, "-B", f"{bias:g}"]
    if c_rule == "fixed":
        base += ["-c", f"{C:g}"]
    else:
        from svmtool.io.svmlight import load_data

        # C_light = perf_c * 100 / n = C * n_train / n: TRAIN's problem at C, k times over
        base += ["--perf-c", repr(float(C) * load_data(train).n_rows / 100.0)]
    if eps is not None:
        base += ["-e", f"{eps:g}"]
    if threads is not None:
        base += ["--threads", str(threads)]
    return base, env


def _interleaved_runs(base, env, caches, modes, budget_mb, model, repeat, log):
    """(mode, rows) -> the ``repeat`` measurements, every round running every point once."""
    runs = {(mode, rows): [] for mode in modes for rows, _ in caches}
    for k in range(max(1, int(repeat))):
        for mode in modes:
            for rows, path in caches:
                r = measure(base + _mode_args(mode, budget_mb) + [path, model], env)
                if r[3] != 0:
                    err = r[4].strip().splitlines()
                    raise RuntimeError(f"{mode}, {rows} rows: exit {r[3]}: "
                                       f"{err[-1] if err else ''}")
                runs[(mode, rows)].append(r)
                if log:
                    log(f"scaling: round {k + 1}, {mode}, {rows} rows: {r[0]:.2f} s, RssAnon "
                        f"{r[1]:.0f} MB (workers {r[2]:.0f} MB)")
    return runs


def _point(mode, rows, path, rr):
    """One point of the result: the medians of its runs ``rr`` (whole command, the solver's
    training time, iterations, time per iteration) and their peak memory."""
    parsed = [_parse_run(r[4]) for r in rr]
    its = [p[0] for p in parsed if p[0] is not None]
    trains = [p[1] for p in parsed if p[1] is not None]
    per_it = [p[1] / p[0] for p in parsed if p[0] and p[1] is not None]
    return {"mode": mode, "rows": rows, "bytes": os.path.getsize(path),
            "time": float(np.median([r[0] for r in rr])),
            "times": sorted(r[0] for r in rr),
            "train_time": float(np.median(trains)) if trains else None,
            "iterations": int(np.median(its)) if its else None,
            "per_iteration": float(np.median(per_it)) if per_it else None,
            "primal": parsed[-1][2],
            "rss_anon_mb": max(r[1] for r in rr),
            "workers_rss_anon_mb": max(r[2] for r in rr)}


def _num(v, fmt):
    return "" if v is None else format(v, fmt)


def markdown(result):
    """The result as a markdown table (one row per mode and size) and the slopes."""
    load = result.get("load")
    load_note = ""
    if load:
        load_note = (f" Load average (1, 5, 15 min) {', '.join(f'{x:.1f}' for x in load[0])} "
                     f"before, {', '.join(f'{x:.1f}' for x in load[1])} after.")
    c_text = f"C={result['C']:g}"
    if result.get("c_rule") == "per-n":
        c_text = (f"C={result['C']:g} per copy of the data: `--perf-c`, C/n as in Joachims' "
                  f"formulation, so every size is the same problem")
    lines = [f"Scaling of `svmtool train -s {result['solver']}` ({c_text}, "
             f"-B {result['bias']:g}) on caches of copies of {os.path.basename(result['train'])}"
             f" in different row orders; whole commands, median of {result['repeat']} "
             f"interleaved rounds; train s: the solver's own time (`trained in`); "
             f"ms/it: training time per outer iteration; RssAnon: peak anonymous memory of the "
             f"command (workers: summed over its child processes).{load_note}", "",
             "| mode | rows | cache MB | iterations | time s | train s | ms/it | RssAnon MB "
             "| workers' RssAnon MB | primal |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for p in result["points"]:
        its = "" if p.get("iterations") is None else p["iterations"]
        per = None if p.get("per_iteration") is None else 1000 * p["per_iteration"]
        lines.append(f"| {p['mode']} | {p['rows']} | {p['bytes'] / 2**20:.0f} | {its} | "
                     f"{p['time']:.2f} | {_num(p.get('train_time'), '.2f')} | "
                     f"{_num(per, '.1f')} | {p['rss_anon_mb']:.0f} | "
                     f"{p['workers_rss_anon_mb']:.0f} | {_num(p.get('primal'), '.10g')} |")
    lines.append("")
    for mode, s in result["slopes"].items():
        part = result.get("parts", {}).get(mode, {})
        extra = ", ".join(f"{name} {_num(part.get(key), '.2f')}"
                          for key, name in (("train_time", "training"),
                                            ("per_iteration", "per iteration"),
                                            ("iterations", "iteration count"))
                          if part.get(key) is not None)
        lines.append(f"- slope of log time against log rows, {mode}: {s:.2f} (whole command)"
                     + (f"; {extra}" if extra else ""))
    if int(result["repeat"]) < 3:
        lines.append(f"- {result['repeat']} run(s) per point: not a robust figure (use "
                     f"--repeat 3 or more)")
    return "\n".join(lines) + "\n"

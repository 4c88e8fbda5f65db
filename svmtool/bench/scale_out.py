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


def run(train, rows_list, solver, folder, modes=MODES, C=1.0, eps=None, bias=-1.0, repeat=1,
        budget_mb=256, threads=None, seed=1, log=None):
    """Time ``svmtool train -s SOLVER`` on every cache and mode; returns {"points", "slopes",
    ...} (time: the median of ``repeat`` runs after one untimed warm-up run per mode)."""
    caches = build_caches(train, rows_list, folder, seed=seed, log=log)
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                else "")
    base = [sys.executable, "-m", "svmtool", "train", "-s", solver, "-c", f"{C:g}",
            "-B", f"{bias:g}"]
    if eps is not None:
        base += ["-e", f"{eps:g}"]
    if threads is not None:
        base += ["--threads", str(threads)]
    model = os.path.join(folder, "scale.model")
    points = []
    for mode in modes:
        warm = True
        for rows, path in caches:
            cmd = base + _mode_args(mode, budget_mb) + [path, model]
            if warm:                       # numba's cache and the page cache warm
                measure(cmd, env)
                warm = False
            runs = [measure(cmd, env) for _ in range(max(1, int(repeat)))]
            bad = [r for r in runs if r[3] != 0]
            if bad:
                err = bad[0][4].strip().splitlines()
                raise RuntimeError(f"{mode}, {rows} rows: exit {bad[0][3]}: "
                                   f"{err[-1] if err else ''}")
            secs = sorted(r[0] for r in runs)
            its = re.findall(r"done: iterations (\d+)", runs[-1][4])
            points.append({"mode": mode, "rows": rows, "bytes": os.path.getsize(path),
                           "time": float(np.median(secs)), "times": secs,
                           "iterations": int(its[-1]) if its else None,
                           "rss_anon_mb": max(r[1] for r in runs),
                           "workers_rss_anon_mb": max(r[2] for r in runs)})
            if log:
                p = points[-1]
                log(f"scaling: {mode}, {rows} rows: {p['time']:.2f} s, RssAnon "
                    f"{p['rss_anon_mb']:.0f} MB (workers {p['workers_rss_anon_mb']:.0f} MB)")
    slopes = {}
    for mode in modes:
        pts = [(p["rows"], p["time"]) for p in points if p["mode"] == mode and p["time"] > 0]
        if len(pts) >= 2:
            slopes[mode] = float(np.polyfit(np.log([a for a, _ in pts]),
                                            np.log([b for _, b in pts]), 1)[0])
    return {"train": train, "solver": solver, "C": C, "eps": eps, "bias": bias,
            "repeat": repeat, "budget_mb": budget_mb, "points": points, "slopes": slopes}


def markdown(result):
    """The result as a markdown table (one row per mode and size) and the slopes."""
    lines = [f"Scaling of `svmtool train -s {result['solver']}` (C={result['C']:g}, "
             f"-B {result['bias']:g}) on caches of copies of {os.path.basename(result['train'])}"
             f" in different row orders; whole commands, median of {result['repeat']}; "
             f"RssAnon: peak anonymous memory of the command (workers: summed over its child "
             f"processes).", "",
             "| mode | rows | cache MB | iterations | time s | RssAnon MB "
             "| workers' RssAnon MB |",
             "|---|---|---|---|---|---|---|"]
    for p in result["points"]:
        its = "" if p.get("iterations") is None else p["iterations"]
        lines.append(f"| {p['mode']} | {p['rows']} | {p['bytes'] / 2**20:.0f} | {its} | "
                     f"{p['time']:.2f} | {p['rss_anon_mb']:.0f} | "
                     f"{p['workers_rss_anon_mb']:.0f} |")
    lines.append("")
    for mode, s in result["slopes"].items():
        lines.append(f"- slope of log time against log rows, {mode}: {s:.2f}")
    return "\n".join(lines) + "\n"

"""The benchmark harness: timing, memory, objectives, accuracy and traces, the same way for every run.

What is measured, and how
-------------------------
* **parse time**: the training file read twice with svmtool's reader; the first read (numba's
  compile or cache load) and the second (the parse itself) are reported apart.
* **wall time** of a run: ``time.perf_counter`` around the runner's ``fit`` on data already in
  memory (the conversion of the data to the tool's own structures is outside the timed region).
  One warm-up run first (numba's compile and cache loads, page faults), then ``repeat`` runs:
  the median and the minimum are reported, and ``jit`` = first run - median (>= 0).  A case
  whose warm-up run takes more than ``slow_s`` (3 s) gets one timed run and fewer replays.  External
  commands are timed from outside (the child's wall time, start-up included).
* **peak memory** (``mem_mib``, the larger of two measures): ``mem_rss_mib``, the rise of the
  peak resident set size over the RSS before the last timed run (reset through
  ``/proc/self/clear_refs``, Linux >= 4.0), which counts C allocations (LIBLINEAR, LIBSVM,
  numba's runtime) but misses memory the allocator reuses from earlier runs; and
  ``mem_traced_mib``, ``tracemalloc``'s peak over one more, untimed run (Python and numpy
  allocations, reused or not; not C libraries).  Both are lower bounds of what a fresh
  process would need on top of the data.
* **primal objective**: computed here from each run's ``w`` on the training data, in one
  convention: ``1/2 w'w + C sum loss_i`` with the loss of the run's problem (hinge, squared
  hinge, logistic; one-vs-rest: the sum over the binary problems; the bias column, if any, is a
  regularised feature as in LIBLINEAR).  Kernel models (binary): ``1/2 |w|^2 + C sum
  max(0, 1 - y f(x))`` with ``|w|^2 = sum_i coef_i (f(x_i) - b)`` over the support vectors.
* **relative gap**: ``(P - P*) / |P*|`` with ``P*`` the lowest objective of any run (table row)
  on the same data, C and problem.
* **test accuracy**: from the harness's own prediction (``argmax`` / sign of ``X w``) for
  linear models, the tool's prediction otherwise.
* **traces** (Chapelle and Keerthi's plot): (1) the solver callback, per outer iteration:
  time since the start of ``fit`` and every number the info dict gives (``primal``, ``f``,
  ``violation``, ...); where it also gives ``w`` (a binary problem), the objective and the test
  error at that point, computed after the run; none of today's solvers passes ``w``, so the
  test-error curves come from (2) *replays*: runs
  capped at 1, 2, 4, ... outer iterations (``max_iter``; LIBLINEAR: a ladder of ``-e`` values),
  each giving (its time, the objective computed here, the test error).
"""

import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from svmtool.bench.timing import cpu_of, interleaved_runs, load_average, rss_peak, traced_peak
from svmtool.bench.timing import timed_call as _timed

# --- data ---------------------------------------------------------------------------------------


@dataclass
class BenchData:
    name: str
    train: object                   # svmtool Problem
    test: Optional[object]
    bias: float
    parse: dict                     # {"first": s, "parse": s, "test": s, "bytes": n}
    train_path: Optional[str] = None
    test_path: Optional[str] = None

    def __post_init__(self):
        import scipy.sparse as sp

        from svmtool.problem import with_bias

        p = self.train
        self.n = p.n_rows
        self.nf = p.n_features
        self.y = np.asarray(p.y, dtype=float)
        self.X = p.X
        ip, ix, dv, nc = with_bias(p, self.bias)
        self.Xb = sp.csr_matrix((dv, ix, ip), shape=(p.n_rows, nc))
        self.Xt_raw = self.Xtb = self.yt = None
        if self.test is not None:
            t = self.test
            Xt = t.X
            if Xt.shape[1] > self.nf:
                Xt = sp.csr_matrix(Xt[:, :self.nf])
            elif Xt.shape[1] < self.nf:
                Xt = sp.csr_matrix((Xt.data, Xt.indices, Xt.indptr), shape=(t.n_rows, self.nf))
            Xt.sort_indices()
            self.Xt_raw = Xt
            if self.bias >= 0:
                Xt = sp.hstack([Xt, np.full((t.n_rows, 1), float(self.bias))], format="csr")
            self.Xtb = sp.csr_matrix(Xt)
            self.yt = np.asarray(t.y, dtype=float)
            from svmtool.problem import Problem

            self.test = Problem.from_matrix(self.Xt_raw, self.yt, n_features=self.nf)

    def train_text(self, path):
        if self.train_path and self.train.n_rows == self._full_rows and not _is_cache(
                self.train_path):
            return self.train_path
        _dump(self.train, path)
        return path

    def test_text(self, path):
        if self.test_path and not _is_cache(self.test_path):
            return self.test_path
        _dump(self.test, path)
        return path

    _full_rows = -1
    yesterday = None                # nightly: the day before's training data (warm start)


def _is_cache(path):
    from svmtool.io.svmlight import _is_cache as f

    try:
        return f(path)
    except Exception:
        return False


def _dump(problem, path):
    from svmtool.io.writer import dump_svmlight

    dump_svmlight(problem, path)


def load_bench_data(train_path, test_path=None, bias=-1.0, rows=None, seed=1, name=None,
                    threads=None, split=None, nightly=None, head=None):
    """Read the data (parse time measured apart: a first read, then the timed second read).

    ``split`` (no test file): a seeded permutation's first ``split`` rows train, the rest test.
    ``head``: the first ``head`` rows of the file, in order (``rows``: a seeded subsample).
    ``nightly`` (a fraction, with a test file): the warm-start scenario of a cron job --
    ``yesterday`` is the training file, today's training data is it with that fraction of its
    rows replaced by random test rows (see :func:`nightly_data`)."""
    from svmtool.io.svmlight import load_data

    t0 = time.perf_counter()
    load_data(train_path, threads=threads)
    t1 = time.perf_counter()
    train = load_data(train_path, threads=threads, mmap=False)
    t2 = time.perf_counter()
    full = train.n_rows
    test = None
    t_test = None
    if test_path:
        t3 = time.perf_counter()
        test = load_data(test_path, threads=threads, mmap=False)
        t_test = time.perf_counter() - t3
    if split is not None and test is None and split < train.n_rows:
        perm = np.random.default_rng(0).permutation(train.n_rows)
        test = train.take_rows(np.sort(perm[split:]))
        train = train.take_rows(np.sort(perm[:split]))
    yesterday = None
    if nightly is not None and test is not None:
        yesterday = train
        train = nightly_data(train, test, nightly, seed)
    if head is not None and head < train.n_rows:
        train = train.take_rows(np.arange(head))
    if rows is not None and rows < train.n_rows:
        if yesterday is not None:       # the first rows of both days, which mostly overlap
            train = train.take_rows(np.arange(rows))
            yesterday = yesterday.take_rows(np.arange(min(rows, yesterday.n_rows)))
        else:
            idx = np.sort(np.random.default_rng(seed).permutation(train.n_rows)[:rows])
            train = train.take_rows(idx)
    size = os.path.getsize(train_path) if os.path.exists(str(train_path)) else None
    d = BenchData(name=name or os.path.basename(str(train_path)), train=train, test=test,
                  bias=float(bias),
                  parse={"first": t1 - t0, "parse": t2 - t1, "test": t_test, "bytes": size,
                         "rows": full},
                  train_path=str(train_path), test_path=str(test_path) if test_path else None)
    d._full_rows = full if (split is None and nightly is None) else -1
    d.yesterday = yesterday
    return d


def nightly_data(train, test, fraction, seed=1):
    """``train`` with ``fraction`` of its rows replaced by random rows of ``test`` (today's data
    of a nightly retrain whose yesterday was ``train``)."""
    from svmtool.problem import Problem

    rng = np.random.default_rng(seed)
    n = train.n_rows
    k = int(round(fraction * n))
    out = np.sort(rng.choice(n, size=k, replace=False))
    keep = np.setdiff1d(np.arange(n), out)
    new = rng.choice(test.n_rows, size=k, replace=False)
    a, b = train.take_rows(keep), test.take_rows(np.sort(new))
    nf = max(a.n_features, b.n_features)
    indptr = np.concatenate([a.indptr - a.indptr[0],
                             b.indptr[1:] - b.indptr[0] + (a.indptr[-1] - a.indptr[0])])
    indices = np.concatenate([a.indices[a.indptr[0]:a.indptr[-1]],
                              b.indices[b.indptr[0]:b.indptr[-1]]])
    data = np.concatenate([a.data[a.indptr[0]:a.indptr[-1]], b.data[b.indptr[0]:b.indptr[-1]]])
    y = np.concatenate([a.y, b.y])
    return Problem(indptr=indptr.astype(np.int64), indices=indices, data=data, y=y,
                   n_features=nf)


def subsample(data, rows, seed=1, perm=None):
    """The first ``rows`` rows of a seeded permutation (nested subsamples for --scaling)."""
    if perm is None:
        perm = np.random.default_rng(seed).permutation(data.n)
    idx = np.sort(perm[:rows])
    d = BenchData(name=data.name, train=data.train.take_rows(idx), test=data.test,
                  bias=data.bias, parse=data.parse, train_path=data.train_path,
                  test_path=data.test_path)
    d._full_rows = data._full_rows
    return d


# --- objectives and predictions -----------------------------------------------------------------

def _loss(margins, group):
    if group == "hinge":
        return np.maximum(0.0, 1.0 - margins)
    if group == "squared_hinge":
        s = np.maximum(0.0, 1.0 - margins)
        return s * s
    if group in ("logistic", "l1_logistic"):
        return np.logaddexp(0.0, -margins)
    if group == "l1_squared_hinge":
        s = np.maximum(0.0, 1.0 - margins)
        return s * s
    raise ValueError(group)


SVR_P = 0.1     # the SVR groups' tube width: LIBLINEAR's default -p, which bench runs use


def linear_objective(Xb, y, W, col_labels, C, group):
    """reg(w_k) + C sum loss(y_ik w_k'x_i), summed over the columns (one-vs-rest); reg is
    1/2 |w|^2, or |w|_1 for the L1-regularised groups; the SVR groups take the real targets y
    and one column: 1/2 |w|^2 + C sum max(0, |w'x_i - y_i| - p) (squared for svr_squared)."""
    W = np.asarray(W, dtype=float).reshape(W.shape[0], -1)
    if W.shape[0] != Xb.shape[1]:
        return float("nan")
    Z = Xb @ W
    if group in ("svr", "svr_squared"):
        r = np.maximum(0.0, np.abs(Z[:, 0] - y) - SVR_P)
        return 0.5 * float(W[:, 0] @ W[:, 0]) + C * float(np.sum(r * r if group == "svr_squared"
                                                                 else r))
    total = 0.0
    for k, lab in enumerate(col_labels):
        yb = np.where(y == lab, 1.0, -1.0)
        reg = (float(np.abs(W[:, k]).sum()) if group.startswith("l1_")
               else 0.5 * float(W[:, k] @ W[:, k]))
        total += reg + C * float(np.sum(_loss(yb * Z[:, k], group)))
    return total


def kernel_objective(terms, y, C):
    """Binary kernel model: terms = {dec, pos, coef, f_sv, offset}, f = sum coef K + offset."""
    if terms is None:
        return float("nan")
    yb = np.where(y == terms["pos"], 1.0, -1.0)
    reg = 0.5 * float(np.sum(terms["coef"] * (terms["f_sv"] - terms["offset"])))
    return reg + C * float(np.sum(np.maximum(0.0, 1.0 - yb * terms["dec"])))


def predict_linear(Xtb, W, col_labels, all_labels):
    if Xtb.shape[1] != W.shape[0]:
        return None
    Z = Xtb @ W
    if len(col_labels) == 1:
        pos = col_labels[0]
        neg = [l for l in all_labels if l != pos]
        neg = neg[0] if neg else -pos
        return np.where(Z[:, 0] > 0, pos, neg)
    return np.asarray(col_labels)[np.argmax(Z, axis=1)]


def score(runner, ev, data, C):
    """(objective, test accuracy) computed the harness's way."""
    if ev.W is not None:
        obj = linear_objective(data.Xb, data.y, ev.W, ev.col_labels, C, runner.group)
    elif ev.kernel is not None:
        obj = kernel_objective(ev.kernel, data.y, C)
    elif ev.own_objective is not None:
        obj = float(ev.own_objective)
    else:
        obj = float("nan")
    acc = None
    if data.test is not None:
        pred = ev.test_pred
        if runner.group in ("svr", "svr_squared"):
            pred = None         # regression: no accuracy (the objective is the measure)
        elif pred is None and ev.W is not None:
            pred = predict_linear(data.Xtb, ev.W, ev.col_labels, np.unique(data.y))
        if pred is not None:
            acc = float(np.mean(np.asarray(pred, dtype=float) == data.yt))
    return obj, acc


# --- one case -----------------------------------------------------------------------------------

def _finite(x):
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def run_case(runner, data, state, C, eps, repeat=3, trace=True, memory=True, max_points=10,
             log=None, slow_s=3.0, timed=None):
    """Time one runner at one (C, eps) and trace it.  Returns (row, trace).

    ``timed = (raw, first, times)``: runs already timed elsewhere (interleaved with other
    runners, see :func:`run_grid`); only the evaluation and the row are left."""
    def fit(cap=None, callback=None):
        return runner.fit(state, C, eps, cap=cap, callback=callback)

    # warm-up (and LIBLINEAR's / LIBSVM's iteration count from their own messages)
    if timed is not None:
        raw, first, given = timed
        ll_iters = None
    elif hasattr(runner, "iterations_of_messages"):
        raw, first = _timed(lambda: runner.fit(state, C, eps, capture=True))
        ll_iters = runner.iterations_of_messages()
    else:
        raw, first = _timed(fit)
        ll_iters = None
    slow = first > slow_s
    if slow and timed is None:      # a slow case: fewer repeats and replays (said in the row)
        repeat, max_points = 1, min(max_points, 5)
    times = [] if timed is None else list(given)
    mem_rss = mem_traced = None
    for i in range(max(1, repeat) if timed is None else 0):
        if i == max(1, repeat) - 1 and memory and not runner.time_from_outside:
            # the last timed run also gives the rise of the peak RSS (the reset and the reads
            # of /proc/self/status take microseconds)
            (raw, t), mem_rss = rss_peak(lambda: _timed(fit))
        else:
            raw, t = _timed(fit)
        times.append(t)
    med = statistics.median(times)
    cpu, cpu_min = cpu_of(times)
    if memory and not runner.time_from_outside and not slow:
        # an untimed run under tracemalloc: numpy's allocations, even where the allocator
        # reused memory freed by earlier runs (which hides them from the RSS)
        _, mem_traced = traced_peak(fit)
    known = [m for m in (mem_rss, mem_traced) if m is not None]
    mem = max(known) if known else None
    ev = runner.evaluate(state, raw, data)
    if ev.iterations is None:
        ev.iterations = ll_iters
    obj, acc = score(runner, ev, data, C)
    row = {
        "data": data.name, "n": data.n, "C": C,
        "eps": eps if eps is not None else runner.default_eps, "eps_default": eps is None,
        "runner": runner.name, "source": runner.source, "group": runner.group,
        "time": med, "time_min": min(times), "times": [float(t) for t in times],
        "cpu": cpu, "cpu_min": cpu_min, "first": first,
        "jit": max(0.0, first - med), "mem_mib": mem, "mem_rss_mib": mem_rss,
        "mem_traced_mib": mem_traced,
        "iterations": ev.iterations, "objective": obj, "own_objective": ev.own_objective,
        "accuracy": acc, "timed_from_outside": runner.time_from_outside,
        "counterpart": runner.counterpart, "repeat": len(times),
        "solver": getattr(runner, "solver", None),
    }
    if ev.kernel is not None:
        row["nsv"] = int(len(ev.kernel["coef"]))   # support vectors of a binary kernel model
    if ev.extra.get("times"):
        row["phases"] = ev.extra["times"]     # svmtool train's own read/solve/write split
    if ev.extra.get("startup"):
        row["startup"] = ev.extra["startup"]  # its fixed cost by part (medians of the runs)
    tr = {"data": data.name, "C": C, "eps": row["eps"], "runner": runner.name,
          "group": runner.group, "callback": [], "replays": []}
    if trace:
        _trace(runner, data, state, C, eps, fit, row, tr, max_points)
    if log:
        log(f"  {runner.name:32s} C={C:g} time {med * 1e3:9.1f} ms  obj {obj:.8g}  "
            f"acc {acc if acc is None else round(acc, 4)}  it {ev.iterations}")
    return row, tr


def _trace(runner, data, state, C, eps, fit, row, tr, max_points):
    # (1) the solver's own callback, per outer iteration
    if runner.source == "svmtool":
        t0 = [0.0]
        rec = tr["callback"]

        ws = []

        def cb(cls, it, info):
            point = {"t": time.perf_counter() - t0[0], "class": int(cls), "it": int(it)}
            for k, v in info.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    point[k] = float(v)
            w = info.get("w")
            if isinstance(w, np.ndarray) and w.ndim == 1:
                ws.append((len(rec), w.copy()))   # scored after the run, off the clock
            rec.append(point)

        t0[0] = time.perf_counter()
        try:
            fit(callback=cb)
        except Exception as e:          # a solver without callback support: record why
            tr["callback_error"] = repr(e)
        # where the info dict gives w (binary problems): the objective and test error there
        if ws and runner.group in ("hinge", "squared_hinge", "logistic") and len(
                np.unique(data.y)) == 2:
            from svmtool.labels import group_classes

            pos = group_classes(data.y)[0][:1]
            for i, w in ws:
                if len(w) != data.Xb.shape[1]:
                    continue
                W = w.reshape(-1, 1)
                rec[i]["objective"] = linear_objective(data.Xb, data.y, W, pos, C, runner.group)
                if data.test is not None:
                    pred = predict_linear(data.Xtb, W, pos, np.unique(data.y))
                    rec[i]["accuracy"] = float(np.mean(pred == data.yt))
        # is the callback's objective in the common convention?  (checked on the last point)
        key = next((k for k in ("objective", "primal", "f") if rec and k in rec[-1]), None)
        if key and len({p["class"] for p in rec}) == 1 and _finite(row["objective"]):
            last = rec[-1][key]
            tr["callback_objective"] = key
            tr["callback_objective_matches"] = bool(
                abs(last - row["objective"]) <= 1e-6 * max(1.0, abs(row["objective"])))
    # (2) replays at growing effort
    caps = []
    if runner.cap == "max_iter":
        last = row["iterations"] or 1
        if runner.source != "svmtool" and runner.name.startswith("sklearn SGD"):
            last = max(last, 1)
        k = 1
        while k < last:
            caps.append(k)
            k *= 2
        if len(caps) > max_points:
            idx = np.unique(np.round(np.geomspace(1, len(caps), max_points)).astype(int) - 1)
            caps = [caps[i] for i in idx]
    elif runner.cap == "eps":
        e0 = row["eps"]
        caps = [e0 * 10.0 ** k for k in (3, 2, 1)]
    for cap in caps:
        try:
            raw, t = _timed(lambda: runner.fit(state, C, eps, cap=cap))
            ev = runner.evaluate(state, raw, data)
            obj, acc = score(runner, ev, data, C)
        except Exception as e:
            tr.setdefault("replay_errors", []).append(repr(e))
            continue
        tr["replays"].append({"cap": cap, "t": t, "objective": obj, "accuracy": acc})
    tr["replays"].append({"cap": "final", "t": row["time"], "objective": row["objective"],
                          "accuracy": row["accuracy"]})


# --- gaps ----------------------------------------------------------------------------------------

def add_gaps(rows, traces=()):
    """rel_gap per row against the best objective of the rows of its (data, n, C, group); the
    traces get ``subopt`` against min(best, their own points) so that a log scale works."""
    best = {}
    for r in rows:
        if _finite(r["objective"]):
            k = (r["data"], r["n"], r["C"], r["group"])
            best[k] = min(best.get(k, math.inf), r["objective"])
    for r in rows:
        b = best.get((r["data"], r["n"], r["C"], r["group"]))
        r["best_objective"] = b
        r["rel_gap"] = ((r["objective"] - b) / max(abs(b), 1e-300)
                        if b is not None and _finite(r["objective"]) else None)
    for tr in traces:
        n = next((r["n"] for r in rows if r["data"] == tr["data"]), None)
        b = best.get((tr["data"], n, tr["C"], tr["group"]))
        if b is None:
            continue
        pts = [p["objective"] for p in tr["replays"] if _finite(p["objective"])]
        ref = min([b] + pts)
        tr["best_objective"] = ref
        for p in tr["replays"]:
            p["subopt"] = ((p["objective"] - ref) / max(abs(ref), 1e-300)
                           if _finite(p["objective"]) else None)
        key = tr.get("callback_objective")
        if key and tr.get("callback_objective_matches"):
            for p in tr["callback"]:
                if key in p:
                    p["subopt"] = (p[key] - ref) / max(abs(ref), 1e-300)
    return rows


# --- a whole run --------------------------------------------------------------------------------

def machine_info():
    import platform

    info = {"python": sys.version.split()[0], "platform": platform.platform(),
            "cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["processor"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        info["load_average"] = os.getloadavg()
    except OSError:
        pass
    versions = {}
    from importlib import metadata

    for pkg in ("svmtool", "numpy", "scipy", "numba", "scikit-learn", "liblinear-official",
                "libsvm-official", "matplotlib"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    info["versions"] = versions
    return info


def run_grid(data, runners, Cs, epss, repeat=3, trace=True, memory=True, log=None,
             interleave=False):
    """Every runner at every (C, eps); eps None means each runner's default.  ``interleave``:
    the timed runs of the runners alternate (each runner once per round; no traces)."""
    rows, traces, errors = [], [], []
    states = {}
    load0 = load_average()
    for r in runners:
        try:
            states[r.name] = r.prepare(data)
        except Exception as e:
            errors.append({"runner": r.name, "error": f"prepare: {e!r}"})
    for C in Cs:
        for eps in epss:
            timed = interleaved_runs(runners, states, C, eps, repeat, errors, log) \
                if interleave else {}
            for r in runners:
                if r.name not in states or (interleave and r.name not in timed):
                    continue
                try:
                    row, tr = run_case(r, data, states[r.name], C, eps, repeat=repeat,
                                       trace=trace and not interleave,
                                       memory=memory and not interleave, log=log,
                                       timed=timed.get(r.name))
                except Exception as e:      # one failing solver must not sink the benchmark
                    errors.append({"runner": r.name, "C": C, "eps": eps, "error": repr(e)})
                    if log:
                        log(f"  {r.name}: failed: {e!r}")
                    continue
                row["load"] = [list(load0), list(load_average())]   # this case's start, end
                rows.append(row)
                traces.append(tr)
    for r in runners:
        if r.name in states:
            r.close(states[r.name])
    add_gaps(rows, traces)
    return rows, traces, errors


def run_scaling(data, runners, C, eps, repeat=1, fractions=None, seed=1, log=None):
    """Nested subsamples (the first n/32, n/16, ... rows of one permutation): time per runner,
    and the slope of log time against log n (least squares)."""
    fractions = fractions or [1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1]
    perm = np.random.default_rng(seed).permutation(data.n)
    points = []
    for f in fractions:
        m = max(2, int(round(data.n * f)))
        sub = subsample(data, m, perm=perm)
        if len(np.unique(sub.y)) < 2:
            continue
        if log:
            log(f"scaling: n = {m}")
        rows, _, errs = run_grid(sub, runners, [C], [eps], repeat=repeat, trace=False,
                                 memory=False)
        for r in rows:
            points.append({"runner": r["runner"], "group": r["group"], "n": m,
                           "time": r["time"], "iterations": r["iterations"],
                           "objective": r["objective"], "accuracy": r["accuracy"]})
    slopes = {}
    for name in dict.fromkeys(p["runner"] for p in points):
        pts = [(p["n"], p["time"]) for p in points if p["runner"] == name and p["time"] > 0]
        if len(pts) >= 2:
            x = np.log([p[0] for p in pts])
            y = np.log([p[1] for p in pts])
            slopes[name] = float(np.polyfit(x, y, 1)[0])
    return {"points": points, "slopes": slopes, "C": C, "eps": eps}

"""The scikit-learn estimators of :mod:`svmtool.sklearn` against scikit-learn's own (the suite
``sklearn``):

* :func:`fit_table`: whole ``fit`` calls in one warm process, svmtool's LinearSVC (``dcd-l2``)
  against scikit-learn's LinearSVC (liblinear, dual) at the same ``tol`` -- LIBLINEAR's default
  0.1 and scikit-learn's 1e-4 -- and svmtool's SVC (its SMO) against scikit-learn's SVC (its
  LIBSVM; on the CSR rows and on a dense copy), RBF kernel: wall and CPU time (median and
  minimum of interleaved rounds after a warm-up call of each), the primal objective of the
  linear models in one convention, iterations, test accuracy;
* :func:`out_of_core_table`: ``LinearSVC().fit(cache)`` in a process of its own on a cache of
  copies of a data set, once with a memory budget above the cache (in memory) and once below
  (out of core): time and peak anonymous memory (RssAnon: the process's own, not the page cache
  that holds the mapped cache).
"""

import statistics
import sys
import time
import warnings

import numpy as np

from svmtool.bench.timing import interleave, load_text


def _sklearn_rows(problem):
    """The rows as the CSR matrix scikit-learn's liblinear and libsvm take (int32 index
    arrays)."""
    import scipy.sparse as sp

    X = problem.X
    return sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                         shape=X.shape)


def _timed(fn):
    """((fn(), CPU seconds of the process), wall seconds)."""
    cpu, wall = time.process_time(), time.perf_counter()
    res = fn()
    return (res, time.process_time() - cpu), time.perf_counter() - wall


def _primal_ovr(est, X, y, C):
    """Sum over the one-vs-rest classes of 1/2 |w|^2 + C sum(squared hinge), the bias a
    regularised weight (intercept_scaling 1), from coef_ and intercept_."""
    coef = np.atleast_2d(est.coef_)
    icpt = np.atleast_1d(est.intercept_)
    classes = est.classes_
    targets = [classes[1]] if len(classes) == 2 else list(classes)
    total = 0.0
    for k, c in enumerate(targets):
        s = np.where(y == c, 1.0, -1.0)
        m = np.maximum(0.0, 1.0 - s * (X @ coef[k] + icpt[k]))
        total += 0.5 * (coef[k] @ coef[k] + icpt[k] ** 2) + C * float(m @ m)
    return total


def _med(times):
    return f"{statistics.median(times):.2f} ({min(times):.2f})"


def fit_table(sets, repeat=3, log=None):
    """Markdown of the fit comparison.  ``sets``: [(label, train, test, kind, options)], kind
    "linear" (options: ``tols``) or "rbf" (options: ``C``, ``gamma``, ``rows``)."""
    from svmtool.errors import require

    sklearn = require("sklearn", "the sklearn suite")
    require("sklearn.svm", "the sklearn suite")

    import svmtool
    import svmtool.sklearn as S

    lines = [f"scikit-learn {sklearn.__version__}; one process, a warm-up fit of each, then "
             f"{max(1, repeat)} interleaved rounds; seconds: median (min); ratio = svmtool's "
             f"median / scikit-learn's; load average before: {load_text()}.", "",
             "| data | tol | estimator | wall s | CPU s | ratio wall / CPU | iterations "
             "| primal | test acc. % |", "|---|---|---|---|---|---|---|---|---|"]
    for label, train, test, kind, opts in sets:
        prob = svmtool.load_data(train)
        X, y = _sklearn_rows(prob), prob.y
        te = svmtool.load_data(test, n_features=prob.n_features) if test else None
        Xt = _sklearn_rows(te) if te is not None else None
        if kind == "rbf":
            rows = opts.get("rows")
            if rows:
                X, y = X[:rows], y[:rows]
            dense = X.toarray()
            kw = {"C": opts.get("C", 1.0), "gamma": opts.get("gamma", "scale")}
            runners = {"svmtool.sklearn.SVC": lambda: S.SVC(**kw).fit(X, y),
                       "sklearn SVC": lambda: sklearn.svm.SVC(**kw).fit(X, y),
                       "sklearn SVC, dense X": lambda: sklearn.svm.SVC(**kw).fit(dense, y)}
            settings = [(f"C {kw['C']:g}, gamma {kw['gamma']}", runners)]
        else:
            settings = []
            for tol in opts.get("tols", (0.1, 1e-4)):
                settings.append((f"{tol:g}", {
                    "svmtool.sklearn.LinearSVC": lambda tol=tol: S.LinearSVC(tol=tol).fit(X, y),
                    "sklearn LinearSVC": lambda tol=tol: sklearn.svm.LinearSVC(
                        tol=tol, dual=True).fit(X, y)}))
        for setting, runners in settings:
            if log:
                log(f"sklearn suite: {label}, {setting}")
            cpus = {name: [] for name in runners}

            def call(name):
                (est, c), wall = _timed(runners[name])
                cpus[name].append(c)
                return est, wall

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = interleave(list(runners), call, repeat, log=log)
            cpu = {name: statistics.median(c[1:] or c) for name, c in cpus.items()}
            base = [n for n in runners if n.startswith("sklearn")]
            ref_wall = min(statistics.median(res[n][2]) for n in base)
            ref_cpu = min(cpu[n] for n in base)
            for name, (est, _, walls) in res.items():
                its = np.max(np.atleast_1d(getattr(est, "n_iter_", 0)))
                primal = f"{_primal_ovr(est, X, y, 1.0):.6g}" if kind == "linear" else "-"
                Xs = Xt if not name.endswith("dense X") else (
                    Xt.toarray() if Xt is not None else None)
                acc = (f"{100 * np.mean(est.predict(Xs) == te.y):.2f}" if Xs is not None
                       else "-")
                ratio = (f"{statistics.median(walls) / ref_wall:.2f} / "
                         f"{cpu[name] / ref_cpu:.2f}" if name.startswith("svmtool") else "")
                lines.append(f"| {label} | {setting} | {name} | {_med(walls)} | "
                             f"{cpu[name]:.2f} | {ratio} | {its} | {primal} | {acc} |")
    lines += ["", "CPU s: median process CPU time (all threads) of the timed rounds; ratios "
              "against the faster scikit-learn runner.  scikit-learn's LinearSVC stops at "
              "max_iter=1000 without converging where LIBLINEAR's dual CD needs more; "
              "svmtool's dcd-l2 then goes on with Newton (LIBLINEAR >= 2.40's fallback) to the "
              "tolerance: compare the primal column."]
    return "\n".join(lines)


FIT_CODE = """
import sys, time, warnings
warnings.simplefilter("ignore")
import svmtool.sklearn as S
t = time.perf_counter()
est = S.LinearSVC(solver=sys.argv[2], memory_budget=float(sys.argv[3])).fit(sys.argv[1])
print(est.model_.report.get("streaming", "memory"), time.perf_counter() - t,
      est.model_.report["classes"][0]["primal"], file=sys.stderr)
"""


def out_of_core_table(train, rows, folder, budget_mb=64.0, solvers=("dcd-l2", "newton"),
                      repeat=3, log=None):
    """Markdown: LinearSVC().fit(cache) in a child process, in memory and out of core."""
    import os

    from svmtool.bench.scale_out import build_caches, measure

    (_, path), = build_caches(train, [rows], folder, log=log)
    size = os.path.getsize(path) / 2**20
    commands = {}
    for solver in solvers:
        for budget in (max(4 * size, 2 * budget_mb), budget_mb):
            commands[(solver, budget)] = [sys.executable, "-c", FIT_CODE, path, solver,
                                          f"{budget:g}"]

    def run(key):
        sec, self_mb, _, rc, err = measure(commands[key])
        if rc != 0:
            raise RuntimeError(f"{key}: exit {rc}: {err.strip()[-400:]}")
        mode, fit_s, primal = err.strip().splitlines()[-1].split()
        return (mode, float(fit_s), float(primal), self_mb), sec

    res = interleave(list(commands), run, repeat, log=log)
    lines = [f"`LinearSVC(solver=..., memory_budget=B).fit(cache)` in a process of its own, "
             f"{rows} rows ({size:.0f} MB cache of copies of {os.path.basename(train)}); "
             f"{max(1, repeat)} interleaved rounds after a warm-up run, medians; load average "
             f"before: {load_text()}.", "",
             "| solver | budget MB | mode | fit s | whole process s | peak RssAnon MB | "
             "primal |", "|---|---|---|---|---|---|---|"]
    for (solver, budget), ((mode, fit_s, primal, mb), _, times) in res.items():
        lines.append(f"| {solver} | {budget:g} | {mode} | {fit_s:.2f} | "
                     f"{statistics.median(times):.2f} | {mb:.0f} | {primal:.8g} |")
    lines += ["", "fit s and peak memory: the last round's; whole process s: median of the "
              "rounds (Python, numpy, numba and scikit-learn imports included)."]
    return "\n".join(lines)

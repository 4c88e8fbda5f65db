"""DC-SVM: divide-and-conquer kernel SVM (Hsieh, Si, Dhillon, ICML 2014, Algorithm 1).

Same problem as ``-s kernel`` (:mod:`svmtool.solvers.kernel.kernel_cd`): the bias-free kernel SVM
dual ``min 1/2 a'Qa - e'a, 0 <= a_i <= C_i``, solved to the same stopping rule (``-e``, max
projected gradient violation), so the final model is the exact solution, written in LIBSVM's format.

Algorithm (levels ``L = --levels``, branching ``k = --clusters``)::

    alpha = 0 (or the warm start)
    for l = L, L-1, ..., 1:
        cluster the rows into k^l clusters:
            the first level run: two-step kernel k-means (svmtool.solvers.dcsvm.kmeans.two_step):
                kernel k-means on --sample points of all rows, then every row to its nearest
                centre in feature space (the one pass over the rows: n x sample kernel values);
            the others: kernel k-means on --sample points of the current support vectors
                (the paper's adaptive clustering), and every cluster of the level below joins,
                whole, the centre nearest to its own (kmeans.coarsen: sample x sample kernel
                values, no pass over the rows; the levels are nested);
        solve every cluster's subproblem independently (threads), warm-started from alpha
        restricted to it, to LEVEL_EPS x eps; concatenate the solutions into alpha
        exact model: skip the levels of fewer than MIN_EXACT_CLUSTER_ROWS rows a cluster, and
        stop dividing before a level of fewer than MIN_LEVEL_CLUSTERS clusters
    conquer (svmtool.solvers.dcsvm.dcsvm_conquer): a working-set loop over the whole problem --
        solve on the support vectors, expand the gradient of the other rows over the variables
        that moved, add the violators and the rows nearest to violating, until none violates

With ``--early`` the levels stop at the early level (``--early-level``, default the level of
about 64 clusters, as in the paper), which is clustered by two-step kernel k-means (every row to
its nearest centre, as test rows are assigned), and the levels' subproblems are solved to
LEVEL_EPS x eps; its early-prediction model (eq. 11) is returned.  The finer levels stay:
they choose the sample of the early level among their support vectors (on ijcnn1 over five
seeds a better test accuracy than starting at the early level with a sample of all rows, or
than nesting the early level in the finer one).  On large problems (``EARLY_FINE_MAX_ROWS``
rows and more) the early model starts at its own level, sampled from all rows: there the finer
level bought no accuracy and cost about half the time (see the constant).

The number of clusters of a level is capped so that clusters keep on average at least
``MIN_CLUSTER_ROWS`` rows; a level whose capped count equals the previous level's is skipped.
A problem of fewer than ``DC_MIN_ROWS`` rows (e.g. a pair of a one-vs-one multi-class problem
such as letter's) is not divided at all: it is solved directly.  The early model of a problem of
more than two classes does not come from here: its rows are clustered once for all pairs
(:mod:`svmtool.solvers.dcsvm.early_ovo`).

The level's objective reported is the dual objective of the level's (block-diagonal) problem,
the sum of the subproblems' objectives, which is the true objective of (1) with the kernel K-bar
of Lemma 1.  Per level the report holds: clusters, clustering time, training time, #SV,
objective (and with ``--test`` the accuracy of that level's early-prediction model).
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from svmtool.ops.kernels import Kernel, Rows, n_threads
from svmtool.solvers.common.result import STOPPED_TIME, SolverResult, time_limit_warning, time_up
from svmtool.ops.rows import take_rows
from svmtool.params import option
from svmtool.solvers.kernel.kernel_cd import CacheArena, solve
from svmtool.solvers.dcsvm.dcsvm_conquer import conquer, result_fields
from svmtool.solvers.dcsvm.kmeans import coarsen, two_step

MIN_CLUSTER_ROWS = 40
DC_MIN_ROWS = 2000      # below this many rows a (pair) problem is solved directly
# the exact model stops dividing before a level of fewer clusters than this (after a finer one):
# the few large subproblems of such a level cost more than the conquer step's working-set loop
# saves from their solution (ijcnn1: level 1's 4 clusters of tens of thousands of rows each made
# the whole fit slower than without that level; the levels' times: BENCHMARKS.md, "Suite
# `dcsvm-levels`")
MIN_LEVEL_CLUSTERS = 16
# and skips the levels whose clusters would hold fewer rows than this on average: their solution
# only starts the next level, which is solved anyway (ijcnn1, whole commands: starting at 64
# clusters took less CPU than at 256)
MIN_EXACT_CLUSTER_ROWS = 500
# the levels' subproblems stop at LEVEL_EPS x eps: the exact model's conquer step moves their
# solutions anyway; the early model's test accuracy on ijcnn1 (C 32, g 2, five seeds) at 10 eps
# was as good as at eps and steadier across seeds than at 100 eps
LEVEL_EPS = 10.0
# the early model's level subproblems keep rbf rows of dense data in single precision (as LIBSVM
# keeps its kernel values; kernel_cd.solve's ``single``): its solution is the model, an
# approximation by design.  On the 120,000-row ijcnn1 split the level's solves take less CPU
# than in double, at the same test accuracy (measured: BENCHMARKS.md, "Suite `dcsvm-e2e`").  The
# exact model's levels stay double: there they only start the conquer step, and their solution
# moves the next level's clustering (its sample of support vectors), which changed the
# subproblems' sizes more than the rows saved (5 seeds: no gain)
EARLY_SINGLE_ROWS = True
# --early without LEVEL: the level with about 64 clusters (the paper's choice; on ijcnn1 it was
# as accurate as 16 clusters in about half the time)
DEFAULT_EARLY_CLUSTERS = option("dcsvm.early_level").implied
# --early on this many rows or more skips the finer levels: its level is clustered from a sample
# of all rows.  ijcnn1's 141,691 rows shuffled, 120,000 to train (C 32, g 2, three seeds): the
# test accuracy without the finer level (256 clusters) was as good or better, in about half the
# CPU time; on ijcnn1's own 49,990 rows the finer level still pays (better accuracy in two of
# three seeds), so smaller problems keep it (the --early rows: BENCHMARKS.md, "Suite
# `dcsvm-e2e`")
EARLY_FINE_MAX_ROWS = 100_000


def default_early_level(levels, k):
    """The level whose k^l is closest to DEFAULT_EARLY_CLUSTERS (at most ``levels``)."""
    best, best_d = levels, None
    for l in range(1, levels + 1):
        d = abs(np.log(float(k) ** l) - np.log(DEFAULT_EARLY_CLUSTERS))
        if best_d is None or d < best_d - 1e-12:
            best, best_d = l, d
    return best


def level_plan(n, levels, k, early, keep_levels):
    """The levels ``fit`` clusters for ``n`` rows, [(level, clusters)], finest first (``levels``
    0: none).  A level's clusters keep MIN_CLUSTER_ROWS rows on average, a level with as many
    clusters as the one before is skipped; the exact model skips the levels of fewer than
    MIN_EXACT_CLUSTER_ROWS rows a cluster (unless every level's model is kept) and stops before
    a level of fewer than MIN_LEVEL_CLUSTERS clusters; the early model stops at its level (and
    on EARLY_FINE_MAX_ROWS rows or more starts there, unless every level's model is kept)."""
    plan, prev_nc = [], None
    for l in range(levels, 0, -1):
        if (early is not None and l > early and not keep_levels
                and n >= EARLY_FINE_MAX_ROWS):
            continue
        nc = int(min(k ** l, max(1, n // MIN_CLUSTER_ROWS)))
        if nc == prev_nc:
            continue
        if early is None and plan and nc < MIN_LEVEL_CLUSTERS:
            break           # the conquer step's working set takes over from here
        if early is None and not keep_levels and n < MIN_EXACT_CLUSTER_ROWS * nc:
            continue        # subproblems too small to pay for their clustering pass
        prev_nc = nc
        plan.append((l, nc))
        if early is not None and l <= early:
            break
    return plan


def planned_levels(n, params, warm=False):
    """:func:`level_plan` for a problem of ``n`` rows under ``params``: none below DC_MIN_ROWS
    rows (too small to divide: the plain solver, one cluster if --early) and none for the exact
    model from a warm start (``warm``: an alpha with support vectors, from an earlier model,
    already close: dividing again would only undo it; the conquer step starts from it)."""
    dp = params.dcsvm
    levels, k = int(dp.levels), int(dp.k_clusters)
    early = (dp.early_level or default_early_level(levels, k)) if dp.early else None
    if n < DC_MIN_ROWS or (warm and early is None):
        return []
    return level_plan(n, levels, k, early, bool(dp.keep_level_models))


class _Run:
    """One DC-SVM fit's problem, options and state (alpha over every row)."""

    def __init__(self, X, y, C, kernel, params, init_alpha):
        dp = params.dcsvm
        self.X, self.kernel, self.params, self.dp = X, kernel, params, dp
        self.sample = int(dp.sample)
        self.early = (dp.early_level or default_early_level(int(dp.levels), int(dp.k_clusters))
                      if dp.early else None)
        self.keep_levels = bool(dp.keep_level_models)
        self.cache_mb = float(params.kernel.cache_mb)
        self.threads = n_threads(params.threads)
        self.eps = params.eps
        # tolerance of the subproblems of the levels (the conquer step uses eps)
        self.level_eps = float(dp.level_eps) if dp.level_eps else LEVEL_EPS * self.eps
        self.shrinking = params.shrinking
        self.rng = np.random.default_rng(params.seed)
        self.n = n = X.n_rows
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.C = np.ascontiguousarray(np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)))
        self.t_start = time.perf_counter()
        self.deadline = params.deadline
        self.alpha = np.zeros(n) if init_alpha is None else \
            np.clip(init_alpha, 0.0, self.C).astype(np.float64)
        self.warm = bool(np.any(self.alpha > 0))
        # the row cache memory of finished solves, for the next ones: its pages are faulted in
        # (zeroed by the kernel) once per fit rather than once a level and a conquer round
        self._arenas = []
        self._arena_lock = threading.Lock()

    def take_arena(self):
        """Row cache memory for one solve: the largest of the free ones, or a new one."""
        with self._arena_lock:
            if not self._arenas:
                return CacheArena()
            big = max(range(len(self._arenas)), key=lambda i: self._arenas[i].buf.size)
            return self._arenas.pop(big)

    def give_arena(self, arena):
        """A solve's arena free again."""
        with self._arena_lock:
            self._arenas.append(arena)

    def drop_arenas(self):
        """The free arenas let go (their memory back to the system)."""
        with self._arena_lock:
            self._arenas.clear()

    def cluster(self, l, nc, prev_cl):
        """Level l's clustering into nc clusters: nested in the level below (coarsen), or two-step
        kernel k-means for the first level run and the early level."""
        X, kernel, rng, threads, sample = self.X, self.kernel, self.rng, self.threads, self.sample
        sv = np.flatnonzero(self.alpha > 0)
        candidates = sv if len(sv) >= max(nc, min(sample, self.n) // 2) else np.arange(self.n)
        if prev_cl is not None and not (self.early is not None and l <= self.early):
            return coarsen(X, prev_cl, candidates, nc, sample, kernel, rng, threads)
        return two_step(X, candidates, nc, sample, kernel, rng, threads,
                        mem_mb=min(64.0, self.cache_mb))

    def solve_level(self, cl):
        """Every cluster's subproblem, warm-started from alpha, on threads or dask tasks; alpha
        updated; (objective, steps, clusters sent as tasks)."""
        groups = [np.flatnonzero(cl.assign == c) for c in range(cl.nr_cluster)]
        sub_mb = max(1.0, self.cache_mb / self.threads)
        X, y, C, alpha = self.X, self.y, self.C, self.alpha
        single = EARLY_SINGLE_ROWS and self.early is not None

        def run(rows):
            if len(rows) == 0:
                return rows, None
            arena = self.take_arena()
            try:
                r = solve(take_rows(X, rows), y[rows], C[rows], self.kernel, eps=self.level_eps,
                          init_alpha=alpha[rows], shrinking=self.shrinking, cache_mb=sub_mb,
                          threads=1, deadline=self.deadline, arena=arena, single=single)
            finally:
                self.give_arena(arena)
            return rows, r

        order = sorted(range(len(groups)), key=lambda c: -len(groups[c]))
        tasks = None
        if self.dp.tasks is not None and len(groups) > 1:
            results = _run_on_cluster(self.dp.tasks, X, y, C, alpha, [groups[c] for c in order],
                                      self.kernel, self.level_eps, self.shrinking, sub_mb,
                                      self.deadline, single)
            tasks = sum(1 for g in groups if len(g))     # sent to the dask workers
        elif self.threads > 1 and len(groups) > 1:
            with ThreadPoolExecutor(self.threads) as pool:
                results = list(pool.map(run, [groups[c] for c in order]))
        else:
            results = [run(groups[c]) for c in order]
        obj = 0.0
        steps = 0
        for rows, r in results:
            if r is None:
                continue
            alpha[rows] = r.alpha
            obj += r.dual
            steps += r.iterations
        return obj, steps, tasks


def fit(X: Rows, y, C, kernel: Kernel, params, init_alpha=None, callback=None, context=None):
    """DC-SVM on (X, y, C); the exact solution (a SolverResult with alpha) or, with --early,
    the early-prediction model of its level in ``extra["early_model"]``."""
    run = _Run(X, y, C, kernel, params, init_alpha)
    stats, level_models, early_model, stopped, last_cl = _levels(run, callback)
    if run.early is not None and early_model is None and stats:
        # the early level was skipped (too few rows for its clusters): the last level run
        early_model = local_pair(X, run.y, run.alpha, last_cl, kernel)
    if early_model is not None:
        return _early_result(run, stats, early_model, level_models, stopped)
    if run.early is not None and not stats:
        return _direct_early(run)
    res = _conquered(run, stats, callback)
    res.extra["levels"] = stats
    res.extra["solve_time"] = time.perf_counter() - run.t_start
    if run.keep_levels:
        res.extra["level_models"] = level_models
    return res


def _levels(run, callback):
    """The levels of :func:`planned_levels`, finest first: (per-level stats, the kept level
    models, the early model if one was made, why the levels stopped, the last clustering)."""
    stats, level_models = [], {}
    early_model = stopped = prev_cl = None
    for l, nc in planned_levels(run.n, run.params, run.warm):
        if callback is not None:
            callback(0, {"level": l, "stage": "clustering"})
        t0 = time.perf_counter()
        cl = prev_cl = run.cluster(l, nc, prev_cl)
        t_cluster = time.perf_counter() - t0
        if callback is not None:
            callback(0, {"level": l, "stage": "training"})
        t0 = time.perf_counter()
        obj, steps, tasks = run.solve_level(cl)
        st = {"level": l, "clusters": int(cl.nr_cluster), "cluster_time": t_cluster,
              "train_time": time.perf_counter() - t0,
              "n_sv": int(np.count_nonzero(run.alpha > 0)), "objective": obj, "steps": steps}
        if tasks is not None:
            st["tasks"] = tasks
        stats.append(st)
        if time_up(run.deadline):
            # the budget is spent: the levels done so far, as an early-prediction model
            stopped = STOPPED_TIME
            early_model = local_pair(run.X, run.y, run.alpha, cl, run.kernel)
            break
        at_early = run.early is not None and l <= run.early
        if run.keep_levels or at_early:
            lp = local_pair(run.X, run.y, run.alpha, cl, run.kernel)
            if run.keep_levels:
                level_models[l] = lp
            if at_early:
                early_model = lp
                break
    return stats, level_models, early_model, stopped, prev_cl


def _early_result(run, stats, early_model, level_models, stopped):
    """The result of an early-prediction run (or of one stopped by the time budget)."""
    res = SolverResult(w=np.zeros(0), iterations=sum(s["steps"] for s in stats),
                       primal=float("nan"), gap=float("nan"), gap_kind="max PG violation",
                       converged=stopped is None, dual=stats[-1]["objective"],
                       n_sv=int(np.count_nonzero(run.alpha > 0)), alpha=run.alpha,
                       extra={"levels": stats, "early_model": early_model,
                              "early_level": stats[-1]["level"],
                              "solve_time": time.perf_counter() - run.t_start})
    if run.keep_levels:
        res.extra["level_models"] = level_models
    if stopped:
        res.extra["stopped"] = stopped
        res.extra["warning"] = time_limit_warning(
            "dcsvm", res.iterations, f"the early-prediction model of level "
            f"{stats[-1]['level']}")
    return res


def _direct_early(run):
    """--early on a problem too small to divide: the plain solver, one cluster."""
    from svmtool.solvers.dcsvm.kmeans import Clustering

    res = solve(run.X, run.y, run.C, run.kernel, eps=run.eps, shrinking=run.shrinking,
                cache_mb=run.cache_mb, max_steps=run.params.max_iter, threads=run.threads)
    one = Clustering(assign=np.zeros(run.n, dtype=np.int64), sample_rows=np.zeros(1, np.int64),
                     sample_cluster=np.zeros(1, np.int64), const=np.zeros(1))
    res.extra["early_model"] = local_pair(run.X, run.y, res.alpha, one, run.kernel)
    res.extra["early_level"] = 0
    res.extra["levels"] = [{"level": 0, "clusters": 1, "cluster_time": 0.0,
                            "train_time": time.perf_counter() - run.t_start,
                            "n_sv": int(res.n_sv), "objective": res.dual,
                            "steps": res.iterations}]
    return res


def _conquered(run, stats, callback):
    """The exact model: the whole problem solved directly, or (after the levels or from a
    warm start) by the conquer step from alpha; its stats appended to ``stats``."""
    if callback is not None:
        callback(0, {"level": 0, "stage": "training"})
    t0 = time.perf_counter()
    top_cb = None
    if callback is not None:
        top_cb = (lambda it, info: callback(it, dict(info, level=0)))
    # the levels' largest row cache memory for the conquer step's solves, the others let go
    arena = run.take_arena()
    run.drop_arenas()
    kw = dict(eps=run.eps, shrinking=run.shrinking, cache_mb=run.cache_mb, threads=run.threads,
              deadline=run.deadline, max_steps=run.params.max_iter, callback=top_cb,
              arena=arena)
    if not (stats or run.warm):
        res = solve(run.X, run.y, run.C, run.kernel, **kw)
    else:
        alpha, C, eps = run.alpha, run.C, run.eps
        last, G, info = conquer(run.X, run.y, C, run.kernel, alpha, **kw)
        f, primal, viol = result_fields(alpha, G, C, eps, info["gradient_error"])
        converged = bool(last.converged and viol <= eps)
        extra = dict(last.extra, pg_violation=viol, objective=f, gradient=G,
                     n_bounded_sv=int(np.count_nonzero(alpha >= C)), rounds=info["rounds"])
        if not converged and not extra.get("warning"):
            extra["warning"] = (f"the conquer step ended after {len(info['rounds'])} rounds "
                                f"with |PG| = {viol:.3g} > {eps:g}")
        res = SolverResult(w=np.zeros(0), iterations=info["steps"], primal=primal,
                           gap=primal + f, gap_kind="max PG violation", converged=converged,
                           dual=-f, n_sv=int(np.count_nonzero(alpha > 0)), alpha=alpha,
                           extra=extra)
    stats.append({"level": 0, "clusters": 1, "cluster_time": 0.0,
                  "train_time": time.perf_counter() - t0, "n_sv": int(res.n_sv),
                  "objective": res.dual, "steps": res.iterations})
    return res


def solve_cluster(X, y, C, kernel, eps, init_alpha, shrinking, cache_mb, seconds_left,
                  single=False):
    """One cluster's subproblem of a level, as a task on a dask worker (``seconds_left``: the
    time budget left when it was sent, None: none).  The same call as the threads make."""
    deadline = None if seconds_left is None else time.monotonic() + seconds_left
    return solve(X, y, C, kernel, eps=eps, init_alpha=init_alpha, shrinking=shrinking,
                 cache_mb=cache_mb, threads=1, deadline=deadline, single=single)


def _run_on_cluster(session, X, y, C, alpha, groups, kernel, eps, shrinking, cache_mb,
                    deadline, single=False):
    """The subproblems of a level as dask tasks, one per cluster (its rows travel with it);
    returns [(rows, result)] in the order of ``groups``.  Each task is the same deterministic
    solve as on a thread, so the level's alpha is the same bit for bit."""
    left = None if deadline is None else max(0.0, deadline - time.monotonic())
    futures, rows_of = [], []
    for rows in groups:
        if len(rows) == 0:
            continue
        futures.append(session.submit(solve_cluster, take_rows(X, rows), y[rows], C[rows],
                                      kernel, eps, alpha[rows], shrinking, cache_mb, left,
                                      single))
        rows_of.append(rows)
    results = session.gather(futures)
    return list(zip(rows_of, results))


def fit_task(indptr, indices, data, sq, n_features, y, C, kernel, params, init_alpha,
             seconds_left):
    """A whole problem that ``fit`` would not divide (a one-vs-one pair of fewer than
    DC_MIN_ROWS rows) as one dask task: ``fit`` on the worker, from the rows as the driver
    holds them, single-threaded, with the time budget left when it was sent."""
    from dataclasses import replace

    deadline = None if seconds_left is None else time.monotonic() + seconds_left
    X = Rows(indptr, indices, data, sq=sq, n_features=n_features)
    return fit(X, y, C, kernel, replace(params, deadline=deadline), init_alpha=init_alpha)


def submit_fit(session, X: Rows, y, C, kernel, params, init_alpha=None):
    """The future of :func:`fit_task` for (X, y, C) on the dask ``session`` (X's rows travel
    with it; the per-level test set stays here)."""
    from dataclasses import replace

    left = None if params.deadline is None else max(0.0, params.deadline - time.monotonic())
    shipped = replace(params, threads=1, deadline=None,
                      dcsvm=replace(params.dcsvm, tasks=None, test=None))
    return session.submit(fit_task, X.indptr, X.indices, X.data, X.sq, X.n_features, y, C,
                          kernel, shipped, init_alpha, left)


def local_pair(X, y, alpha, cl, kernel):
    """The early-prediction model of a level: centres and per-cluster local models."""
    from svmtool.models.early import LocalPair

    sv = np.flatnonzero(alpha > 0)
    coef = alpha[sv] * y[sv]
    sv_cluster = cl.assign[sv]
    sums = np.bincount(sv_cluster, weights=coef, minlength=cl.nr_cluster)
    return LocalPair(centres=take_rows(X, cl.sample_rows), centre_cluster=cl.sample_cluster,
                     centre_const=cl.const, svs=take_rows(X, sv), sv_cluster=sv_cluster,
                     sv_coef=coef, rho=-kernel.kbias * sums)

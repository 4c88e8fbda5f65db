"""DC-SVM's early prediction for multi-class problems: one clustering, one-vs-one inside clusters.

LIBSVM trains a multi-class problem one pair of classes at a time, and so does ``-s dcsvm``.  For
the *exact* model that is right, but for the *early* model (eq. 11 of Hsieh et al. 2014) it is
not: with many classes every pair is small (letter: 325 pairs of about 1,150 rows), too small to
divide, so each pair's early model would be its exact model and cost as much.

Here the early model of a multi-class problem divides the rows once, for all classes:

    cluster all rows into k^LEVEL clusters by the two-step kernel k-means of the binary DC-SVM
        (kernel k-means on --sample rows, then every row to its nearest centre in feature space);
    let every cluster also take the border rows of its neighbours (``--overlap``: rows whose
        centre is not much nearer than this one, see cluster_members): eq. 11 predicts a test
        point near a border with its own cluster's model, which without them would never have
        seen the training rows just across the border -- on letter a partition into 64 clusters
        lost points of test accuracy against LIBSVM, the border rows won nearly all of them back;
    in every cluster, for every pair (i, j) of classes that both have rows there, solve the
        binary kernel SVM of those rows (the bias-free dual of ``-s kernel``, the same kernel and
        kernel bias, C of class i / class j, stopped at max |projected gradient| <= eps);
    the cluster's local model is then a LIBSVM one-vs-one model over all K labels.

A row x is predicted by the local model of its nearest centre, pairs voting as LIBSVM's.  A pair
with rows of only one class in the cluster gets a constant decision value (+1 for class i, -1
for class j), one with neither class 0: a class absent from the cluster then never beats a
present one, and the vote among the present classes is exactly the vote of their own pairs.

The subproblems are tiny (letter, 64 clusters: about 230 rows a cluster, 40 rows a pair), so
per-call overhead would dominate: a cluster's rows are sorted by class and its kernel block is
computed once (with the kernel bias), so that a pair's Q is read in place from two segments of
it; all of its pairs are solved in one jitted call, by the kernel solver's greedy two-variable
coordinate descent on the dense block (single-variable steps zigzag under the kernel bias, which
couples every variable: on letter they took several times the steps).
Clusters are shared out over threads, or with ``--dask`` sent to the workers, one task a
cluster with its rows (:func:`cluster_task`: the same computation, so the same model).  A
cluster whose block would not fit the per-thread share of the kernel cache (``-m``) has its
pairs solved by the kernel solver of ``-s kernel`` instead, so memory stays bounded by the
cache size.

The multilevel warm starts of the binary DC-SVM are not used here: they pay for large
subproblems, and these are solved from scratch in microseconds.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from svmtool.ops.kernels import (Kernel, Rows, kernel_block, n_threads, symmetric_block_dense)
from svmtool.params import option
from svmtool.solvers.dcsvm._early_ovo_jit import (MAX_PG, N_SV, NSTATS, PRIMAL, ROWS, STEPS, DUAL_F,
                                                  CAPPED, solve_cluster_pairs)

# Border rows: a row also joins up to N - 1 neighbouring clusters (--overlap N), those whose
# centre is at most delta farther than its own, delta the Q-quantile (--overlap-quantile Q) over
# all rows of that difference for the second-nearest centre (cluster_members).  Without it the
# test points near a cluster's border lose the training rows across it: on letter (rbf C 8 g 2,
# -B 1), at 64 and at 256 clusters, the partition lost points of test accuracy to LIBSVM and
# (4, 0.7) won most of them back, (5, 0.7) a little more at 256 clusters.  The overlap costs
# more rows than the partition holds (one CD step per support vector or so, and kernel blocks
# growing as the square of a cluster), still far less time than LIBSVM's on the same data.
# The (N, Q) of an unset option are its declaration's ``implied`` (svmtool.params.OPTIONS).

def _solve_cluster_by_rows(X, rows, cls, Cc, Wr, kernel, eps, shrinking, cache_mb, coef, rho,
                           pair_stats):
    """The pairs of one (large) cluster by the kernel solver: same problem, bounded memory."""
    from svmtool.ops.rows import take_rows
    from svmtool.solvers.kernel.kernel_cd import solve

    K = len(Cc)
    members = [np.flatnonzero(cls == c) for c in range(K)]
    unconverged = 0
    p = -1
    for i in range(K):
        for j in range(i + 1, K):
            p += 1
            mi, mj = members[i], members[j]
            if len(mi) == 0 or len(mj) == 0:
                rho[p] = -1.0 if len(mi) else (1.0 if len(mj) else 0.0)
                continue
            sub = np.concatenate([mi, mj])
            yb = np.concatenate([np.ones(len(mi)), -np.ones(len(mj))])
            Cv = np.concatenate([np.full(len(mi), Cc[i]), np.full(len(mj), Cc[j])]) * Wr[sub]
            r = solve(take_rows(X, rows[sub]), yb, Cv, kernel, eps=eps, shrinking=shrinking,
                      cache_mb=cache_mb, threads=1)
            a = r.alpha
            coef[mi, j - 1] = a[:len(mi)]
            coef[mj, i] = -a[len(mi):]
            rho[p] = -kernel.kbias * float(a @ yb)
            pair_stats[p] += (len(sub), r.iterations, r.extra["objective"], 0.0, r.n_sv,
                              r.primal, 0 if r.converged else 1)
            pair_stats[p, MAX_PG] = max(pair_stats[p, MAX_PG], r.extra["pg_violation"])
            unconverged += 0 if r.converged else 1
    return unconverged


class ClusterJob(NamedTuple):
    """What every cluster's pairs share: C per class, the kernel (with its bias), the stopping
    rule, and the memory bound that picks the dense-block solver or the kernel solver."""
    Cc: np.ndarray
    kernel: Kernel
    eps: float
    max_steps: int
    shrinking: bool
    block_limit: float      # largest dense block, in values
    cache_mb: float         # the kernel solver's cache for a cluster beyond block_limit


def cluster_model(X: Rows, dense, rows, cls_rows, job: ClusterJob, w_rows=None):
    """One cluster: its pairs solved and its local model.  ``rows``: the cluster's rows of X,
    sorted by class; ``cls_rows`` their class indices; ``w_rows`` their instance weights (None:
    ones); ``dense``: X as a dense array (or None, sparse rows).  Returns (KernelModel over all K labels, per-pair statistics, the number of
    pairs stopped by the step cap)."""
    from svmtool.models.kernel import KernelModel
    from svmtool.ops.rows import take_rows

    Cc, kernel = job.Cc, job.kernel
    K = len(Cc)
    npairs = K * (K - 1) // 2
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    m = len(rows)
    coef = np.zeros((m, max(K - 1, 1)))
    Wr = np.ones(m) if w_rows is None else np.ascontiguousarray(w_rows, dtype=np.float64)
    rho = np.zeros(npairs)
    st = np.zeros((npairs, NSTATS))
    unc = 0
    if m and float(m) * m <= job.block_limit:
        Kc = np.empty((m, m))
        if dense is not None:
            symmetric_block_dense(dense, X.sq, rows, *kernel.args(), Kc)
        else:
            # the sparse kernel loop (kernel_block_threads' path for rows it keeps sparse)
            kernel_block(X.indptr, X.indices, X.data, X.sq, rows, X.indptr, X.indices, X.data,
                         X.sq, rows, *kernel.args(), max(X.n_features, 1), Kc)
        unc = solve_cluster_pairs(Kc, cls_rows, Cc, Wr, job.eps, job.max_steps, coef, rho,
                                  kernel.kbias, st)
    elif m:
        unc = _solve_cluster_by_rows(X, rows, cls_rows, Cc, Wr, kernel, job.eps, job.shrinking,
                                     job.cache_mb, coef, rho, st)
    # support vectors class by class (the rows are sorted by class), as LIBSVM stores them
    keep = np.flatnonzero(np.any(coef != 0.0, axis=1))
    svs = take_rows(X, rows[keep])
    kernel_out = Kernel(kernel.ktype, kernel.gamma, kernel.coef0, kernel.degree, 0.0)
    local = KernelModel(kernel=kernel_out, labels=np.arange(K, dtype=np.float64), rho=rho,
                        nr_sv=np.bincount(cls_rows[keep], minlength=K),
                        sv_indptr=svs.indptr, sv_indices=svs.indices, sv_data=svs.data,
                        sv_coef=coef[keep].T[:max(K - 1, 1)].copy(), nr_feature=X.n_features)
    return local, st, unc


def cluster_task(indptr, indices, data, sq, n_features, use_dense, cls_rows, job, w_rows=None):
    """:func:`cluster_model` on a dask worker, from the cluster's own rows (CSR arrays and
    squared norms as the driver holds them): the same kernel values and the same jitted
    solve, so the local model is the one a thread of the driver would make."""
    Xc = Rows(indptr, indices, data, sq=sq, n_features=n_features)
    dense = Xc.dense(max(Xc.n_features, 1)) if use_dense else None
    return cluster_model(Xc, dense, np.arange(Xc.n_rows), cls_rows, job, w_rows)


def _clusters_on_dask(session, X, use_dense, groups, order, cls, job, wof):
    """Every non-empty cluster one task (largest first); {cluster: cluster_model's result}
    in ``order``.  A lost worker's tasks are rerun by dask; if it gives up, ClusterError."""
    from svmtool.ops.rows import take_rows

    futures = {}
    for c in order:
        rows = groups[c]
        if len(rows):
            Xc = take_rows(Rows(X.indptr, X.indices, X.data, sq=X.sq, n_features=X.n_features),
                           rows)
            futures[c] = session.submit(cluster_task, Xc.indptr, Xc.indices, Xc.data, Xc.sq,
                                        Xc.n_features, use_dense, cls[rows], job, wof(rows))
    done = dict(zip(futures, session.gather(list(futures.values()))))
    return {c: done[c] if c in done else
            cluster_model(X, None, groups[c], cls[groups[c]], job, wof(groups[c])) for c in order}


def _run_clusters(X, dense, groups, cls, job, weights, tasks, threads):
    """{cluster: cluster_model's result}, largest cluster first: on the dask ``tasks`` (every
    cluster one task: its rows, classes and weights travel, its local model comes back), on
    ``threads``, or here."""
    order = sorted(range(len(groups)), key=lambda c: -len(groups[c]))

    def wof(rows):
        return None if weights is None else np.asarray(weights, dtype=np.float64)[rows]

    if tasks is not None:
        return _clusters_on_dask(tasks, X, dense is not None, groups, order, cls, job, wof)
    if threads > 1 and len(groups) > 1:
        with ThreadPoolExecutor(threads) as pool:
            return dict(zip(order, pool.map(
                lambda c: cluster_model(X, dense, groups[c], cls[groups[c]], job,
                                        wof(groups[c])), order)))
    return {c: cluster_model(X, dense, groups[c], cls[groups[c]], job, wof(groups[c]))
            for c in order}


def cluster_members(cl, cls, top, quantile):
    """Rows of every cluster, sorted by class (then row): the rows assigned to it, and with
    ``top`` > 1 the border rows of its neighbours: a row joins the t-th nearest of its ``top``
    nearest clusters when that one is at most delta farther than its own, delta the
    ``quantile`` of that difference for the second-nearest centre over all rows."""
    n = len(cl.assign)
    if top <= 1 or cl.near is None or cl.near.shape[1] < 2:
        member_rows, member_cl = np.arange(n), cl.assign
    else:
        extra = cl.dist - cl.dist[:, :1]
        second = extra[:, 1][np.isfinite(extra[:, 1])]
        delta = float(np.quantile(second, quantile)) if len(second) else 0.0
        mask = (extra <= delta) & (cl.near >= 0)
        mask[:, 0] = True
        member_rows = np.broadcast_to(np.arange(n)[:, None], mask.shape)[mask]
        member_cl = cl.near[mask]
    order = np.lexsort((member_rows, cls[member_rows], member_cl))
    bounds = np.searchsorted(member_cl[order], np.arange(cl.nr_cluster + 1))
    rows = member_rows[order]
    return [rows[bounds[c]:bounds[c + 1]] for c in range(cl.nr_cluster)]


def fit_early(X: Rows, cls, Cc, kernel: Kernel, params, n_clusters, level, callback=None,
              weights=None):
    """The multi-class early model (see the module docstring).

    X: all training rows; cls: class index of every row (0..K-1); Cc: C of each class (-w
    weights applied); kernel: with the kernel bias of -B; weights: each row's instance weight
    (None: ones), multiplying its class's C in every local problem.  Returns (ClusterOvO, stats), stats the
    level report (clusters, times, #SV, objective, steps) and per-pair sums.
    """
    from svmtool.models.early import ClusterOvO
    from svmtool.solvers.dcsvm.dcsvm import MIN_CLUSTER_ROWS
    from svmtool.ops.rows import take_rows
    from svmtool.solvers.dcsvm.kmeans import two_step

    dp = params.dcsvm
    sample = int(dp.sample)
    overlap = int(option("dcsvm.overlap").implied if dp.overlap is None else dp.overlap)
    overlap_quantile = float(option("dcsvm.overlap_quantile").implied
                             if dp.overlap_quantile is None else dp.overlap_quantile)
    cache_mb = float(params.kernel.cache_mb)
    threads = n_threads(params.threads)
    eps = float(params.eps)
    max_steps = int(params.max_iter) if params.max_iter else 10_000_000
    rng = np.random.default_rng(params.seed)
    cls = np.ascontiguousarray(cls, dtype=np.int64)
    Cc = np.ascontiguousarray(Cc, dtype=np.float64)
    K = len(Cc)
    npairs = K * (K - 1) // 2
    n = X.n_rows
    nc = int(max(1, min(n_clusters, n // MIN_CLUSTER_ROWS)))
    if callback is not None:
        callback(0, {"level": level, "stage": "clustering"})
    t0 = time.perf_counter()
    top = max(1, int(overlap))
    cl = two_step(X, np.arange(n), nc, sample, kernel, rng, threads, mem_mb=min(64.0, cache_mb),
                  top=top)
    t_cluster = time.perf_counter() - t0
    if callback is not None:
        callback(0, {"level": level, "stage": "training"})
    t0 = time.perf_counter()
    groups = cluster_members(cl, cls, top, overlap_quantile)
    # a cluster's dense block may take this much (the -m budget shared by the threads)
    block_limit = max(1.0, cache_mb / threads) * (1 << 20) / 8.0

    dense = X.dense(max(X.n_features, 1)) if X.prefers_dense() else None
    job = ClusterJob(Cc, kernel, eps, max_steps, params.shrinking, block_limit,
                     max(1.0, cache_mb / threads))
    tasks = dp.tasks if len(groups) > 1 else None
    out = _run_clusters(X, dense, groups, cls, job, weights, tasks, threads)
    local = [out[c][0] for c in range(len(groups))]
    pair_stats = np.zeros((npairs, NSTATS))
    for _, st, _ in out.values():
        pg = np.maximum(pair_stats[:, MAX_PG], st[:, MAX_PG])
        pair_stats += st
        pair_stats[:, MAX_PG] = pg
    unconverged = sum(u for _, _, u in out.values())
    n_sv = sum(lm.total_sv for lm in local)
    t_train = time.perf_counter() - t0
    model = ClusterOvO(centres=take_rows(X, cl.sample_rows), centre_cluster=cl.sample_cluster,
                       centre_const=cl.const, local=local)
    stats = {"level": level, "clusters": int(cl.nr_cluster), "cluster_time": t_cluster,
             "train_time": t_train, "n_sv": int(n_sv),
             "objective": float(-pair_stats[:, DUAL_F].sum()),
             "steps": int(pair_stats[:, STEPS].sum()),
             "pair_stats": pair_stats, "unconverged": int(unconverged)}
    if tasks is not None:
        stats["tasks"] = sum(1 for g in groups if len(g))      # sent to the dask workers
    return model, stats


def train_early(X: Rows, labels, cls, Cc, kernel: Kernel, params, spec_name, level,
                n_clusters, callback=None, weights=None):
    """An EarlyModel over all K classes (labels in LIBSVM's order, cls the class index of every
    row) with the report the CLI prints: per pair the sums over the clusters (steps, primal and
    dual objective of the level's subproblems, largest |PG|, #SV), and the level's line."""
    from svmtool.models.early import EarlyModel

    t0 = time.perf_counter()
    cb = None
    if callback is not None:
        cb = (lambda it, info: callback(0, it, info))
    shared, st = fit_early(X, cls, Cc, kernel, params, n_clusters, level, callback=cb,
                           weights=weights)
    K = len(labels)
    reports = []
    p = 0
    for i in range(K):
        for j in range(i + 1, K):
            ps = st["pair_stats"][p]
            reports.append({"label": float(labels[i]), "pair": (float(labels[i]),
                                                                 float(labels[j])),
                            "iterations": int(ps[STEPS]), "primal": float(ps[PRIMAL]),
                            "dual": float(-ps[DUAL_F]), "gap": float(ps[MAX_PG]),
                            "gap_kind": "max PG violation", "converged": ps[CAPPED] == 0,
                            "n_sv": int(ps[N_SV]), "rows": int(ps[ROWS])})
            p += 1
    level_stats = [{k: v for k, v in st.items() if k not in ("pair_stats", "unconverged")}]
    kernel_out = Kernel(kernel.ktype, kernel.gamma, kernel.coef0, kernel.degree, 0.0)
    model = EarlyModel(kernel=kernel_out, labels=labels, pairs=[], nr_feature=X.n_features,
                       level=level, shared=shared)
    model.report = {"solver": spec_name, "train_time": time.perf_counter() - t0,
                    "classes": reports, "levels": level_stats,
                    "params": {"C": params.C, "eps": params.eps, "bias": params.bias,
                               "kernel": kernel.name, "gamma": kernel.gamma}}
    return model

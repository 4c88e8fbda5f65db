"""One-vs-one driver of the kernel solvers (LIBSVM's ``svm_train`` for C-SVC): a KernelModel.

Every pair of classes (i, j), i < j, is a binary problem on the rows of the two classes, solved by
the registry's binary kernel solver (``-s kernel``: :mod:`svmtool.solvers.kernel.kernel_cd`; ``-s
dcsvm``: :mod:`svmtool.solvers.dcsvm.dcsvm`), the pairs on threads when there is more than one.  The
pairs' dual solutions are laid out as LIBSVM lays out a model: support vectors class by class,
each with its K-1 coefficients, and one rho per pair.  DC-SVM's early-prediction model comes back
from here too: per pair for two classes, and for more from one clustering shared by all pairs
(:mod:`svmtool.solvers.dcsvm.early_ovo`).
"""

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from svmtool.labels import class_index, class_weights, group_classes
from svmtool.models.early import EarlyModel
from svmtool.models.kernel import KernelModel
from svmtool.ops.kernels import Kernel, Rows, n_threads
from svmtool.ops.rows import take_rows


# ------------------------------------------------------------------------------------------------
# parameters shared by the kernel solvers

def kernel_of(params, n_features) -> Kernel:
    """The Kernel of ``params.kernel`` (LIBSVM's -t -g -d -r) with ``params.bias`` as kernel
    bias."""
    kp = params.kernel
    if int(kp.kernel_type) == 4:
        from svmtool.errors import ParameterError

        raise ParameterError("-t 4 (a precomputed kernel) needs one of LIBSVM's problems: -s "
                             "c_svc, nu_svc, one_class, epsilon_svr or nu_svr")
    gamma = kp.gamma
    if gamma is None:
        gamma = 1.0 / n_features if n_features > 0 else 1.0
    b = float(params.bias)
    kbias = b * b if b >= 0 else 0.0
    return Kernel(int(kp.kernel_type), float(gamma), float(kp.coef0), int(kp.degree), kbias)


# ------------------------------------------------------------------------------------------------
# one-vs-one driver (LIBSVM's svm_train for C-SVC), returns a KernelModel

def train_ovo(problem, params, spec, callback=None, init_model=None):
    """Train every pair of classes with the binary kernel solver of ``spec``; a KernelModel.

    Labels are grouped as LIBSVM groups them (first appearance; +1 first in a {-1,+1} problem).
    Pair (i, j), i < j, is trained on the rows of classes i and j with y = +1 for class i and C
    of class i / j as C_pos / C_neg (``-w`` weights apply).  Support vectors are stored class by
    class, each with its K-1 coefficients in LIBSVM's layout.
    """
    t0 = time.perf_counter()
    fit_fn = spec.load()
    X = Rows(problem.indptr, problem.indices, problem.data, n_features=problem.n_features)
    kernel = kernel_of(params, problem.n_features)
    labels, perm, start, count = group_classes(problem.y)
    cls = class_index(problem.y, labels)
    K = len(labels)
    wc = class_weights(params, labels)
    dp = params.dcsvm
    if spec.name == "dcsvm" and dp.early and K > 2:
        # a multi-class early model: one clustering for all pairs (svmtool.solvers.dcsvm.early_ovo)
        from svmtool.solvers.dcsvm.dcsvm import default_early_level
        from svmtool.solvers.dcsvm.early_ovo import train_early

        k = int(dp.k_clusters)
        level = dp.early_level or default_early_level(int(dp.levels), k)
        model = train_early(X, labels, cls, wc, kernel, params, spec.name, level, k ** level,
                            callback)
        if dp.test is not None:
            _level_accuracy(model, model.report["levels"], None, labels, model.kernel,
                            problem.n_features, dp.test)
        return model
    warm = None
    if init_model is not None:
        # rows equal to an old support vector start from its alpha (svmtool.solvers.common.warm)
        from svmtool.solvers.common.warm import KernelStart

        warm = KernelStart(init_model, labels)
    members = [np.flatnonzero(cls == c) for c in range(K)]
    nonzero = [np.zeros(len(m), dtype=bool) for m in members]
    coef_parts = {}          # (class, pair index) -> coefficients over that class's rows
    rho = []
    reports = []
    pair_models = []
    level_models = []
    p = 0
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    # pairs are independent: with more than one, they run in threads (each solver single-threaded)
    n_thr = n_threads(params.threads) if len(pairs) > 1 else 1
    pair_params = params
    if n_thr > 1:
        # the -m budget is shared by the pairs running at the same time
        kp = replace(params.kernel, cache_mb=float(params.kernel.cache_mb) / n_thr)
        pair_params = replace(params, threads=1, kernel=kp)

    def pair_problem(q):
        """Rows, labels (+1 class i, -1 class j), C and warm start of pair q."""
        i, j = pairs[q]
        rows = np.concatenate([members[i], members[j]])
        yb = np.concatenate([np.ones(len(members[i])), -np.ones(len(members[j]))])
        Cv = np.concatenate([np.full(len(members[i]), wc[i]), np.full(len(members[j]), wc[j])])
        init_alpha = None
        if warm is not None:
            init_alpha = warm.pair_alpha(X, members[i], members[j], i, j)
        return take_rows(X, rows), yb, Cv, init_alpha

    def fit_pair(q):
        i, j = pairs[q]
        Xp, yb, Cv, init_alpha = pair_problem(q)
        cb = None
        if callback is not None:
            cb = (lambda it, info, _p=q: callback(_p, it, info))
        return fit_fn(Xp, yb, Cv, kernel, pair_params, callback=cb, init_alpha=init_alpha,
                      context={"pair": (i, j), "labels": (labels[i], labels[j])})

    tasks = dp.tasks if spec.name == "dcsvm" else None
    if tasks is not None:
        results = _pairs_with_tasks(tasks, len(pairs), pair_problem, fit_pair, kernel,
                                    pair_params, n_thr)
    elif n_thr > 1:
        with ThreadPoolExecutor(n_thr) as pool:
            results = list(pool.map(fit_pair, range(len(pairs))))
    else:
        results = [fit_pair(q) for q in range(len(pairs))]
    for p, ((i, j), res) in enumerate(zip(pairs, results)):
        a = res.alpha
        ni = len(members[i])
        yb = np.concatenate([np.ones(ni), -np.ones(len(a) - ni)])
        ci = a[:ni] * 1.0
        cj = -a[ni:]
        coef_parts[(i, p)] = ci
        coef_parts[(j, p)] = cj
        nonzero[i] |= ci != 0
        nonzero[j] |= cj != 0
        rho.append(-kernel.kbias * float(np.sum(a * yb)))
        reports.append(_report_of(res, labels[i], labels[j], K))
        if res.extra.get("early_model") is not None:
            pair_models.append(res.extra["early_model"])
        if res.extra.get("level_models") is not None:
            level_models.append(res.extra["level_models"])
    p = len(pairs)
    # support vectors class by class, coefficients in LIBSVM's layout: for pair (i, j) the
    # coefficients of class i's SVs go to row j-1, those of class j's SVs to row i
    sv_rows, nr_sv = [], []
    for c in range(K):
        keep = members[c][nonzero[c]]
        sv_rows.append(keep)
        nr_sv.append(len(keep))
    total = int(sum(nr_sv))
    sv_coef = np.zeros((max(K - 1, 1), total))
    offset = np.concatenate([[0], np.cumsum(nr_sv)]).astype(np.int64)
    p = 0
    for i in range(K):
        for j in range(i + 1, K):
            sv_coef[j - 1, offset[i]:offset[i + 1]] = coef_parts[(i, p)][nonzero[i]]
            sv_coef[i, offset[j]:offset[j + 1]] = coef_parts[(j, p)][nonzero[j]]
            p += 1
    all_sv = np.concatenate(sv_rows) if sv_rows else np.zeros(0, dtype=np.int64)
    svs = take_rows(X, all_sv)
    kernel_out = Kernel(kernel.ktype, kernel.gamma, kernel.coef0, kernel.degree, 0.0)
    model = KernelModel(kernel=kernel_out, labels=labels, rho=np.array(rho), nr_sv=np.array(nr_sv),
                        sv_indptr=svs.indptr, sv_indices=svs.indices, sv_data=svs.data,
                        sv_coef=sv_coef[:K - 1] if K > 1 else sv_coef[:0],
                        nr_feature=problem.n_features)
    elapsed = time.perf_counter() - t0
    model.report = {"solver": spec.name, "train_time": elapsed, "classes": reports,
                    "params": {"C": params.C, "eps": params.eps, "bias": params.bias,
                               "kernel": kernel.name, "gamma": kernel.gamma}}
    level_stats = _aggregate_levels(reports)
    if pair_models and len(pair_models) == p:
        level = reports[0].get("early_level", 0) if reports else 0
        model = EarlyModel.from_pairs(pair_models, labels, kernel_out, problem.n_features,
                                      report=model.report, level=level)
    if level_stats:
        model.report["levels"] = level_stats
        test = params.dcsvm.test
        if test is not None:
            _level_accuracy(model, level_stats, level_models, labels, kernel_out,
                            problem.n_features, test)
    return model


def _pairs_with_tasks(session, npairs, pair_problem, fit_pair, kernel, params, n_thr):
    """DC-SVM's pairs with --dask (a binary problem is one pair): a pair that ``fit`` would
    solve directly (fewer than DC_MIN_ROWS rows: no clustered level) is one task, the whole
    pair solved on a worker; the others run here, their levels' cluster subproblems as tasks
    and their conquer step (for a warm start, from the --init-model, the only step) on this
    process.  The results of the pairs, in pair order."""
    from svmtool.solvers.dcsvm.dcsvm import planned_levels, submit_fit

    remote, here, results = {}, [], [None] * npairs
    for q in range(npairs):
        Xp, yb, Cv, init_alpha = pair_problem(q)
        warm = init_alpha is not None and bool(np.any(init_alpha > 0))
        divides = any(nc > 1 for _, nc in planned_levels(Xp.n_rows, params, warm))
        if divides or (warm and not params.dcsvm.early):
            here.append(q)          # its rows are taken again when it runs (memory)
        else:
            remote[q] = submit_fit(session, Xp, yb, Cv, kernel, params, init_alpha)
    if n_thr > 1 and len(here) > 1:
        with ThreadPoolExecutor(n_thr) as pool:
            done = list(pool.map(fit_pair, here))
    else:
        done = [fit_pair(q) for q in here]
    for q, res in zip(here, done):
        results[q] = res
    for q, res in zip(remote, session.gather(list(remote.values()))):
        res.extra["task"] = True            # solved on a dask worker
        results[q] = res
    return results


def _aggregate_levels(reports):
    """Per-level stats summed over the pairs (times, #SV, objectives, clusters)."""
    if not reports or "levels" not in reports[0]:
        return []
    out = {}
    order = []
    for r in reports:
        for st in r.get("levels", []):
            key = st["level"]
            if key not in out:
                out[key] = dict(st)
                order.append(key)
            else:
                for f in ("clusters", "cluster_time", "train_time", "n_sv", "objective", "steps"):
                    out[key][f] += st[f]
    return [out[k] for k in order]


def _level_accuracy(model, level_stats, level_models, labels, kernel, n_features, test):
    for st in level_stats:
        lv = st["level"]
        if lv == "refine":
            continue
        if lv == 0 or (lv == getattr(model, "level", None) and not isinstance(lv, str)
                       and type(model).__name__ == "EarlyModel"):
            m = model
        elif level_models and all(lv in lm for lm in level_models):
            m = EarlyModel.from_pairs([lm[lv] for lm in level_models], labels, kernel,
                                      n_features, level=lv)
        else:
            continue
        pred = m.predict(m.decision_function(test))
        st["accuracy"] = 100.0 * float(np.mean(pred == test.y))


def _report_of(res, li, lj, K):
    r = {"label": float(li), "pair": (float(li), float(lj)), "iterations": int(res.iterations),
         "primal": float(res.primal), "dual": float(res.dual), "gap": float(res.extra.get(
             "pg_violation", res.gap)), "gap_kind": res.gap_kind, "converged": bool(res.converged),
         "n_sv": int(res.n_sv)}
    for k, v in res.extra.items():
        if isinstance(v, (int, float, str, bool)) or v is None:
            r[k] = v
        elif k == "levels":
            r[k] = v
    return r

"""The driver of ``-s dcsvm``: the kernel family's one-vs-one pairs
(:class:`svmtool.solvers.kernel.ovo.OneVsOne`), each pair solved by :func:`dcsvm.fit
<svmtool.solvers.dcsvm.dcsvm.fit>`, plus what only DC-SVM has:

* with ``--early`` and more than two classes, one clustering for all pairs
  (:mod:`svmtool.solvers.dcsvm.early_ovo`) instead of a clustering per pair;
* with two classes and ``--early``, the pair's early-prediction model as the model;
* the per-level report (summed over the pairs) and, with ``--test``, each level's accuracy;
* with ``--dask``, the pairs too small to divide as whole tasks on the cluster and the others'
  level subproblems as tasks (``tasks``: the dask session the API opened).
"""

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from svmtool.models.early import EarlyModel
from svmtool.solvers.kernel.ovo import OneVsOne


def train_dcsvm(problem, params, spec, callback=None, init_model=None, tasks=None):
    """A KernelModel (exact) or an EarlyModel (``--early``) of ``problem``."""
    t0 = time.perf_counter()
    fit_fn = spec.load()
    if tasks is not None:
        params = replace(params, dcsvm=replace(params.dcsvm, tasks=tasks))
    ovo = OneVsOne(problem, params)
    dp = params.dcsvm
    if dp.early and ovo.K > 2:
        return _multiclass_early(ovo, params, spec, callback)
    ovo.start_from(init_model)
    if dp.tasks is not None:
        results = _pairs_with_tasks(dp.tasks, ovo, fit_fn, callback)
    else:
        results = ovo.run(fit_fn, callback)
    model = ovo.model(results, spec, t0)
    reports = model.report["classes"]
    pair_models = [r.extra["early_model"] for r in results
                   if r.extra.get("early_model") is not None]
    level_models = [r.extra["level_models"] for r in results
                    if r.extra.get("level_models") is not None]
    level_stats = _aggregate_levels(reports)
    kernel_out = ovo.kernel_out()
    if pair_models and len(pair_models) == len(ovo.pairs):
        level = reports[0].get("early_level", 0) if reports else 0
        model = EarlyModel.from_pairs(pair_models, ovo.labels, kernel_out,
                                      problem.n_features, report=model.report, level=level)
    if level_stats:
        model.report["levels"] = level_stats
        if dp.test is not None:
            _level_accuracy(model, level_stats, level_models, ovo.labels, kernel_out,
                            problem.n_features, dp.test)
    return model


def _multiclass_early(ovo, params, spec, callback):
    """A multi-class early model: one clustering for all pairs (early_ovo)."""
    from svmtool.solvers.dcsvm.dcsvm import default_early_level
    from svmtool.solvers.dcsvm.early_ovo import train_early

    dp = params.dcsvm
    k = int(dp.k_clusters)
    level = dp.early_level or default_early_level(int(dp.levels), k)
    model = train_early(ovo.X, ovo.labels, ovo.cls, ovo.wc, ovo.kernel, params, spec.name,
                        level, k ** level, callback, weights=ovo.weights)
    if dp.test is not None:
        _level_accuracy(model, model.report["levels"], None, ovo.labels, model.kernel,
                        ovo.problem.n_features, dp.test)
    return model


def _pairs_with_tasks(session, ovo, fit_fn, callback):
    """DC-SVM's pairs with --dask (a binary problem is one pair): a pair that ``fit`` would
    solve directly (fewer than DC_MIN_ROWS rows: no clustered level) is one task, the whole
    pair solved on a worker; the others run here, their levels' cluster subproblems as tasks
    and their conquer step (for a warm start, from the --init-model, the only step) on this
    process.  The results of the pairs, in pair order."""
    from svmtool.solvers.dcsvm.dcsvm import planned_levels, submit_fit

    params = ovo.pair_params
    npairs = len(ovo.pairs)
    remote, here, results = {}, [], [None] * npairs
    for q in range(npairs):
        Xp, yb, Cv, init_alpha = ovo.pair_problem(q)
        warm = init_alpha is not None and bool(np.any(init_alpha > 0))
        divides = any(nc > 1 for _, nc in planned_levels(Xp.n_rows, params, warm))
        if divides or (warm and not params.dcsvm.early):
            here.append(q)          # its rows are taken again when it runs (memory)
        else:
            remote[q] = submit_fit(session, Xp, yb, Cv, ovo.kernel, params, init_alpha)
    if ovo.threads > 1 and len(here) > 1:
        with ThreadPoolExecutor(ovo.threads) as pool:
            done = list(pool.map(lambda q: ovo.fit_pair(fit_fn, q, callback), here))
    else:
        done = [ovo.fit_pair(fit_fn, q, callback) for q in here]
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

"""The Python API that the CLI and a notebook share: train, predict, cross_validate, load, save.

``train`` does what LIBLINEAR's ``train()`` does around a binary solver (its train / train_one
split): it groups the labels (order of first appearance, +1 first in a {-1,+1} problem), appends
the bias column (``-B``), gives every class its weighted C, and runs the binary solver once for a
two-class problem or once per class (one-vs-rest) otherwise.  The solver comes from the one table
in :mod:`svmtool.solvers`.

Example::

    import svmtool
    prob = svmtool.load_data("data/a9a")
    model = svmtool.train(prob, solver="dcd-l1", C=1.0)
    labels, scores = svmtool.predict(model, svmtool.load_data("data/a9a.t"))
"""

import time
import warnings

import numpy as np

from svmtool.errors import ParameterError
from svmtool.params import TrainParams
from svmtool.problem import Problem


# --- labels -------------------------------------------------------------------------------------

def group_classes(y):
    """LIBLINEAR's class grouping.

    Returns (labels, perm, start, count): ``labels`` in order of first appearance, except that a
    problem with exactly the labels {-1, +1} puts +1 first; ``perm`` lists the rows class by class
    (stable within a class); class ``i`` occupies ``perm[start[i]:start[i] + count[i]]``.
    """
    y = np.asarray(y, dtype=np.float64)
    uniq, first, inverse = np.unique(y, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")          # classes by first appearance
    labels = uniq[order]
    if len(labels) == 2 and labels[0] == -1 and labels[1] == 1:
        order = order[::-1]
        labels = labels[::-1]
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    cls = rank[inverse.reshape(-1)]
    perm = np.argsort(cls, kind="stable")
    count = np.bincount(cls, minlength=len(labels))
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    return labels.copy(), perm, start, count


def class_index(y, labels):
    """Index into ``labels`` of every entry of ``y`` (-1 where a label is unknown)."""
    y = np.asarray(y, dtype=np.float64)
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    pos = np.searchsorted(sorted_labels, y)
    pos = np.clip(pos, 0, len(labels) - 1)
    found = sorted_labels[pos] == y
    return np.where(found, order[pos], -1)


# --- data preparation ---------------------------------------------------------------------------

def with_bias(problem, bias):
    """CSR arrays with a constant column ``bias`` appended at index n_features (LIBLINEAR's -B)."""
    indptr, indices, data = problem.indptr, problem.indices, problem.data
    if bias < 0:
        return indptr, indices, data, problem.n_features
    n = problem.n_rows
    nf = problem.n_features
    ends = indptr[1:] - indptr[0]
    idx_dtype = indices.dtype if nf <= np.iinfo(np.int32).max else np.int64
    new_indices = np.insert(indices[indptr[0]:indptr[-1]].astype(idx_dtype, copy=False), ends, nf)
    new_data = np.insert(data[indptr[0]:indptr[-1]], ends, float(bias))
    new_indptr = (indptr - indptr[0]) + np.arange(n + 1, dtype=np.int64)
    return new_indptr, new_indices, new_data, nf + 1


def class_factors(weights, labels):
    """The ``-w LABEL FACTOR`` factor of each label (1 when none is given); a warning for a
    weighted label that the data do not have."""
    out = np.ones(len(labels))
    for label, factor in weights:
        hit = np.nonzero(labels == float(label))[0]
        if len(hit) == 0:
            warnings.warn(f"class weight for label {label:g} specified, but no such label in data")
            continue
        out[hit[0]] *= float(factor)
    return out


def _class_weights(params, labels):
    return float(params.C) * class_factors(params.weights, labels)


# --- training -----------------------------------------------------------------------------------

def _make_params(params, kwargs):
    if params is None:
        params = TrainParams(**kwargs)
    elif kwargs:
        from dataclasses import replace

        params = replace(params, **kwargs)
    msg = params.check()
    if msg:
        raise ParameterError(msg)
    return params


def train(problem: Problem, params: TrainParams = None, *, callback=None, **kwargs):
    """Train a linear model; returns :class:`svmtool.model.LinearModel`.

    ``params`` (or keyword arguments of :class:`~svmtool.params.TrainParams`) choose the solver,
    C, eps, bias, class weights and so on.  ``callback(class_index, iteration, info)`` is called
    once per outer iteration of the solver (progress bars, benchmark traces).
    ``model.report`` holds, per binary subproblem, what the solver reached.
    """
    from svmtool.model import LinearModel
    from svmtool.solvers import get_spec

    params = _make_params(params, kwargs)
    spec = get_spec(params.solver)
    if params.eps is None:
        from dataclasses import replace

        params = replace(params, eps=spec.default_eps)
    fit = spec.load()
    if problem.n_rows == 0:
        raise ParameterError("no training examples")
    if spec.kind == "kernel":
        # kernel SVMs: one-vs-one like LIBSVM, a KernelModel (svmtool.solvers.kernel_cd)
        from svmtool.solvers.kernel_cd import check_kernel_params, train_ovo

        msg = check_kernel_params(params)
        if msg:
            raise ParameterError(msg)
        return train_ovo(problem, params, spec, callback=callback)
    if spec.kind == "ranking":
        # ranks from the labels (pairs within each qid); a scoring model (svmtool.solvers.ordinal)
        from svmtool.solvers.ordinal import train_ranking

        return train_ranking(problem, params, spec, fit, callback=callback)

    labels, perm, start, count = group_classes(problem.y)
    nr_class = len(labels)
    if params.liblinear_rng and not np.array_equal(perm, np.arange(len(perm))):
        # LIBLINEAR's solvers see the rows class by class; so must ours to draw the same numbers
        problem = problem.take_rows(perm)
        cls = np.repeat(np.arange(nr_class), count)
    else:
        cls = class_index(problem.y, labels)
    indptr, indices, data, n_cols = with_bias(problem, params.bias)
    weighted_c = _class_weights(params, labels)
    if params.liblinear_rng and spec.module == "svmtool.solvers.dcd":
        # LIBLINEAR never reseeds rand() between the classes of one-vs-rest: share one state
        from dataclasses import replace

        from svmtool.solvers.dcd import glibc_rand_state

        params = replace(params, extra={**params.extra,
                                        "liblinear_rand_state": glibc_rand_state(params.seed)})
    if spec.kind == "multiclass":
        # one solver over all classes at once (Crammer-Singer: svmtool.solvers.mcsvm)
        from svmtool.solvers.mcsvm import train_multiclass

        return train_multiclass(problem, params, spec, fit, labels, cls,
                                (indptr, indices, data, n_cols), weighted_c, callback=callback)

    t0 = time.perf_counter()
    if nr_class == 2:
        tasks = [(0, weighted_c[0], weighted_c[1])]
    else:
        tasks = [(i, weighted_c[i], params.C) for i in range(nr_class)]
    w = np.zeros((n_cols, len(tasks)), dtype=np.float64)

    def one(col):
        i, c_pos, c_neg = tasks[col]
        yb = np.where(cls == i, 1.0, -1.0)
        cb = None
        if callback is not None:
            cb = (lambda it, info, _i=i: callback(_i, it, info))
        init_w = None
        if params.extra.get("init_w") is not None:
            init_w = np.asarray(params.extra["init_w"])[:, col] if np.ndim(
                params.extra["init_w"]) == 2 else np.asarray(params.extra["init_w"])
        res = fit(indptr, indices, data, yb, n_cols, c_pos, c_neg, params, init_w=init_w,
                  callback=cb)
        if not res.converged and res.extra.get("liblinear_fallback") == "L2R_L2LOSS_SVC":
            # LIBLINEAR's rescue of -s 1 at its iteration cap: go on with -s 2 from its w
            from svmtool.solvers.newton import fallback_after_dual

            res = fallback_after_dual(res, indptr, indices, data, yb, n_cols, c_pos, c_neg,
                                      params, callback=cb)
        return res

    workers = _class_workers(params, spec, len(tasks), indptr)
    if workers > 1:
        # one-vs-rest classes are independent problems (each its own generator, same seed):
        # solved on threads (the jitted loop releases the GIL), the models are the same
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="svmtool-ovr") as ex:
            results = list(ex.map(one, range(len(tasks))))
    else:
        results = [one(col) for col in range(len(tasks))]
    reports = []
    for col, res in enumerate(results):
        i = tasks[col][0]
        w[:, col] = res.w
        reports.append(_report(res, labels[i] if nr_class > 2 else labels[0]))
    elapsed = time.perf_counter() - t0
    model = LinearModel(solver_type=spec.liblinear_type, labels=labels,
                        nr_feature=problem.n_features, bias=float(params.bias), w=w)
    model.report = {"solver": spec.name, "train_time": elapsed, "classes": reports,
                    "params": {"C": params.C, "eps": params.eps, "bias": params.bias}}
    return model


# below this many stored values a class takes a few milliseconds: threads would not pay
OVR_THREAD_MIN_NNZ = 50_000


def _class_workers(params, spec, n_tasks, indptr):
    """Threads for the one-vs-rest classes of the dual solvers (1: one after another).

    Only the dual coordinate descent solvers: their classes are independent unless the LIBLINEAR
    generator is emulated (``--liblinear-rng``: one rand() state runs through the classes in
    order, as in LIBLINEAR's process), while the primal solvers already split each class's row
    passes over the threads.
    """
    if n_tasks < 2 or params.liblinear_rng or spec.module != "svmtool.solvers.dcd":
        return 1
    if int(indptr[-1] - indptr[0]) < OVR_THREAD_MIN_NNZ:
        return 1
    from svmtool.engine.local import available_cores

    want = available_cores() if params.threads is None else int(params.threads)
    return max(1, min(want, n_tasks))


def _report(res, label):
    r = {
        "label": float(label),
        "iterations": int(res.iterations),
        "primal": float(res.primal),
        "gap": float(res.gap),
        "gap_kind": res.gap_kind,
        "converged": bool(res.converged),
    }
    if res.dual is not None:
        r["dual"] = float(res.dual)
    if res.n_sv is not None:
        r["n_sv"] = int(res.n_sv)
    for k, v in res.extra.items():
        if isinstance(v, (int, float, str, bool)) or v is None:
            r[k] = v
    return r


# --- prediction and evaluation ------------------------------------------------------------------

def predict(model, problem):
    """Return (labels, decision values) for every row of ``problem``."""
    scores = model.decision_function(problem)
    return model.predict(scores), scores


def cross_validate(problem: Problem, params: TrainParams = None, nr_fold: int = 5, *, seed=None,
                   **kwargs):
    """Predicted label of every row, each from a model trained on the other folds.

    Folds are contiguous slices of a seeded random permutation (as LIBLINEAR does); with fewer rows
    than folds, every row is its own fold (leave-one-out).
    """
    params = _make_params(params, kwargs)
    n = problem.n_rows
    if nr_fold < 2:
        raise ParameterError(f"n-fold cross validation: n must be >= 2 (got {nr_fold})")
    if nr_fold > n:
        nr_fold = n
        warnings.warn("more folds than examples: doing leave-one-out")
    rng = np.random.default_rng(params.seed if seed is None else seed)
    perm = rng.permutation(n)
    bounds = [i * n // nr_fold for i in range(nr_fold + 1)]
    out = np.empty(n, dtype=np.float64)
    for f in range(nr_fold):
        test = perm[bounds[f]:bounds[f + 1]]
        trainrows = np.concatenate([perm[:bounds[f]], perm[bounds[f + 1]:]])
        sub = problem.take_rows(np.sort(trainrows))
        model = train(sub, params)
        labels, _ = predict(model, problem.take_rows(test))
        out[test] = labels
    return out


def load_model(path):
    from svmtool.io.model_io import load_model as _load

    return _load(path)


def save_model(model, path, fmt=None):
    """Write a model; ``fmt``: None (the model's own format), "liblinear" or "svmlight"."""
    from svmtool.io.model_io import save_model as _save

    return _save(model, path, fmt)

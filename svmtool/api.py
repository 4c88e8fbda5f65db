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

import os
import sys
import time
import warnings

import numpy as np

from svmtool.errors import ParameterError
from svmtool.params import (TrainParams, check_cross_validation, check_for_solver,
                            for_one_run, make_params, refuse)
from svmtool.labels import check_class_labels, class_labels, class_weights, signs_of
from svmtool.problem import Problem, refuse_weights, with_bias


# --- training -----------------------------------------------------------------------------------

def train(problem: Problem, params: TrainParams = None, *, callback=None, init_model=None,
          **kwargs):
    """Train a model: :class:`svmtool.models.linear.LinearModel` (or the kernel, early or
    ranking model of the solvers that make those).

    ``params`` (or keyword arguments of :class:`~svmtool.params.TrainParams`) choose the solver,
    C, eps, bias, class weights and so on.  ``callback(class_index, iteration, info)`` is called
    once per outer iteration of the solver (progress bars, benchmark traces).
    ``init_model`` (a model, e.g. from :func:`load_model`) warm-starts the solver from it (see
    :mod:`svmtool.solvers.common.warm`: labels are mapped by value, features by index, the bias
    rescaled; a model of another kind or class set raises ParameterError).
    ``params.time_limit`` (seconds) stops the solver at an outer-iteration boundary once spent.
    ``model.report`` holds, per binary subproblem, what the solver reached.

    A model holding nan or inf (values so large that their squares overflow, say) is an error,
    never a result: every model reader refuses such a file, so it must not be written.
    """
    model = _train(problem, params, callback=callback, init_model=init_model, **kwargs)
    _check_finite(model, problem)
    return model


def _train(problem, params, *, callback, init_model, **kwargs):
    params, spec = _normalise(params, kwargs)
    if problem.n_rows == 0:
        raise ParameterError("no training examples")
    check_labels(problem, spec)
    refused = spec.weights_refused(params)
    if refused:
        refuse_weights(problem, f"solver {spec.name}", refused)
    _check_weights(problem)
    init_model = _init_model(init_model, spec)
    if params.dask is not None and spec.dask == "tasks":
        if not spec.takes_weights("dask"):
            refuse_weights(problem, f"dask training with solver {spec.name}")
        return _scale_out().train_with_tasks(problem, params, spec, callback, init_model)
    mode = _streaming_mode(problem, params, spec)
    if mode and not spec.takes_weights(mode):
        refuse_weights(problem, f"{'out-of-core' if mode == 'blocks' else 'dask'} training "
                                f"with solver {spec.name}")
    if spec.driver:
        return _train_driver(problem, params, spec, callback, init_model, mode)
    return _OneVsRest(problem, params, spec, init_model, mode).train(callback)


def _check_weights(problem):
    """ParameterError unless the instance weights (if any) are one finite number >= 0 a row
    (the readers check theirs; this is for a Problem built in memory)."""
    w = problem.weights
    if w is None:
        return
    w = np.asarray(w)
    if w.ndim != 1 or w.shape[0] != problem.n_rows:
        raise ParameterError(f"{w.size} instance weights for {problem.n_rows} rows")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise ParameterError("instance weights must be finite numbers >= 0")


def _normalise(params, kwargs):
    """(params, spec): the options checked, -e's default and the time budget's deadline set."""
    from dataclasses import replace

    from svmtool.solvers import get_spec

    params = for_one_run(make_params(params, kwargs))
    spec = get_spec(params.solver)
    refuse(check_for_solver(params, spec))
    params = replace(params, solver=spec.name)
    if params.eps is None:
        params = replace(params, eps=spec.default_eps)
    if params.time_limit is not None and params.deadline is None:
        params = replace(params, deadline=time.monotonic() + float(params.time_limit))
    return params, spec


def _init_model(init_model, spec):
    """The warm-start model (read when given as a path), or None."""
    if isinstance(init_model, (str, os.PathLike)):
        path = os.fspath(init_model)
        init_model = load_model(path)
        init_model.report["source"] = path
    if init_model is not None:
        from svmtool.solvers.common.warm import cold_only

        refuse(cold_only(spec))
    return init_model


def _train_driver(problem, params, spec, callback, init_model, mode):
    """The solvers that take the whole problem (one-vs-one kernel SVMs, Crammer-Singer,
    ranking, regression, one-class): their registry entry's driver, handed the out-of-core
    fit when streaming (``mode`` "blocks" or "dask")."""
    more = {} if init_model is None else {"init_model": init_model}
    close = None
    if mode:
        scale_out = _scale_out()
        more["fit_for"], close = scale_out.bound_fit(mode, problem, params)
        if scale_out.shard_sources(problem) is not None:
            problem = scale_out.RowsElsewhere(problem)
    try:
        model = spec.load_driver()(problem, params, spec, callback=callback, **more)
    finally:
        if close is not None:
            close()
    if mode:
        model.report["streaming"] = mode
    return model


class _OneVsRest:
    """LIBLINEAR's ``train()`` around a binary solver: the classes grouped (with
    ``--liblinear-rng`` the rows too, class by class, as LIBLINEAR's solvers see them), the bias
    column, each class's weighted C, one binary subproblem for two classes or one per class
    (one-vs-rest), each solved by LIBLINEAR's ``train_one`` (svmtool.solvers.common.train_one),
    independent classes of the dual solvers on threads."""

    def __init__(self, problem, params, spec, init_model, streaming):
        from dataclasses import replace

        self.spec, self.init_model, self.streaming = spec, init_model, streaming
        self.pass_threads = None          # threads of each class's row passes (None: params')
        self.batches = None               # the classes' shared passes (solvers.newton.batch)
        self.bind, self.close = (lambda s: s.load()), None
        if streaming:
            self.bind, self.close = _scale_out().bound_fit(streaming, problem, params)
        # per-row memory: the class of a row in one byte (or four), grouped in chunks
        labels, cls, count = class_labels(problem.y)
        if params.liblinear_rng and np.any(cls[1:] < cls[:-1]):
            # LIBLINEAR's solvers see the rows class by class; so must ours to draw the same
            # numbers
            problem = problem.take_rows(np.argsort(cls, kind="stable"))
            cls = np.repeat(np.arange(len(labels)), count).astype(cls.dtype)
        self.problem, self.labels, self.cls = problem, labels, cls
        self.clock, self.t0 = {}, time.perf_counter()   # col -> (started, seconds, thread CPU)
        self.arrays = _training_arrays(problem, params, streaming)
        weighted_c = class_weights(params, labels)
        if params.liblinear_rng and spec.reads("dcd"):
            # LIBLINEAR never reseeds rand() between the classes of one-vs-rest: share one
            from svmtool.solvers.common.rng import glibc_rand_state

            params = replace(params, dcd=replace(params.dcd,
                                                 rand_state=glibc_rand_state(params.seed)))
        self.params = params
        if len(labels) == 2:
            self.tasks = [(0, weighted_c[0], weighted_c[1])]
        else:
            self.tasks = [(i, weighted_c[i], params.C) for i in range(len(labels))]

    def train(self, callback):
        t0 = self.t0 = time.perf_counter()
        start_w = self.params.init_w
        if self.init_model is not None:
            from svmtool.solvers.common.warm import linear_start

            start_w = linear_start(self.init_model, self.spec, self.labels,
                                   self.problem.n_features, self.params.bias)
        if start_w is not None:
            start_w = np.asarray(start_w)
        try:
            results = self._run(start_w, callback)
        finally:
            if self.close is not None:
                self.close()             # the dask session (and the LocalCluster it started)
        return self._model(results, time.perf_counter() - t0)

    def _run(self, start_w, callback):
        n = len(self.tasks)
        workers, self.pass_threads = (1, None) if self.streaming else \
            _class_workers(self.params, self.spec, n, self.arrays[0])
        one = (lambda col: self.fit_class(col, start_w, callback))
        if self.pass_threads is not None and self.spec.class_batches:
            # a group of classes a core, whose CG passes are shared (solvers.newton.batch):
            # up to BATCH classes of each group in flight, each in a thread of its own
            from svmtool.solvers.newton.batch import BATCH, ClassBatches

            self.batches = ClassBatches(workers, self.pass_threads)
            workers = min(n, workers * BATCH)
        if workers > 1:
            # one-vs-rest classes are independent problems (each its own generator, same
            # seed): solved on threads (the jitted loop releases the GIL), the models are the
            # same
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=workers,
                                    thread_name_prefix="svmtool-ovr") as ex:
                return list(ex.map(one, range(n)))
        return [one(col) for col in range(n)]

    def fit_class(self, col, start_w, callback):
        """Class ``tasks[col]`` against the rest, through train_one."""
        from dataclasses import replace

        from svmtool.solvers.common.train_one import train_one

        spec, params = self.spec, self.params
        i, c_pos, c_neg = self.tasks[col]
        indptr, indices, data, n_cols = self.arrays
        yb = signs_of(self.cls, i) if spec.sign_labels else np.where(self.cls == i, 1.0, -1.0)
        cb = None if callback is None else (lambda it, info, _i=i: callback(_i, it, info))
        init_w = None
        if start_w is not None:
            init_w = start_w[:, col] if start_w.ndim == 2 else start_w
        p = params
        if self.pass_threads is not None:
            p = replace(p, threads=self.pass_threads)
        if self.init_model is not None and spec.warm_start == "alpha":
            if params.dcd.warm_start != "cold" and not self.streaming:
                # dual CD starts from an alpha derived from the old w (common.warm)
                from svmtool.solvers.common.warm import dual_start_of

                alpha = dual_start_of(spec, params.dcd.warm_start, indptr, indices, data, yb,
                                      c_pos, c_neg, init_w, n_cols,
                                      weights=self.problem.weights)
                p = replace(params, dcd=replace(params.dcd, init_alpha=alpha))
            init_w = None          # measured: the dual solvers gain nothing from a model's w

        weights = self.problem.weights
        more = {} if weights is None else {"weights": weights}

        def solve(s, p, w0):
            also = {"batch": self.batches} if self.batches is not None and s.class_batches \
                else {}
            return self.bind(s)(indptr, indices, data, yb, n_cols, c_pos, c_neg, p, init_w=w0,
                                callback=cb, **more, **also)

        t, c = time.perf_counter(), time.thread_time()
        res = train_one(spec, solve, p, init_w, weighted=weights is not None,
                        streaming=self.streaming)
        self.clock[col] = (t - self.t0, time.perf_counter() - t, time.thread_time() - c)
        return res

    def _model(self, results, elapsed):
        from svmtool.models.linear import LinearModel

        labels, params = self.labels, self.params
        w = np.zeros((self.arrays[3], len(self.tasks)), dtype=np.float64)
        reports = []
        for col, res in enumerate(results):
            w[:, col] = res.w
            i = self.tasks[col][0]
            reports.append(res.as_report(labels[i] if len(labels) > 2 else labels[0]))
            if col in self.clock:       # when it started (since train began), wall, thread CPU
                reports[-1]["started"], reports[-1]["seconds"], reports[-1]["thread_cpu"] = \
                    self.clock[col]
        model = LinearModel(solver_type=self.spec.liblinear_type, labels=labels,
                            nr_feature=self.problem.n_features, bias=float(params.bias), w=w)
        model.report = {"solver": self.spec.name, "train_time": elapsed, "classes": reports,
                        "params": {"C": params.C, "eps": params.eps, "bias": params.bias}}
        if self.streaming:
            model.report["streaming"] = self.streaming
        return model


def _training_arrays(problem, params, streaming):
    """(indptr, indices, data, n_cols) the binary fits get: in memory with the bias column
    appended; streamed, the raw arrays (the blocks append the bias column as they are loaded;
    none for a shard index, whose shards the fit streams one after another)."""
    n_cols = problem.n_features + (1 if params.bias >= 0 else 0)
    if streaming and _scale_out().shard_sources(problem) is not None:
        return None, None, None, n_cols
    if streaming:
        return problem.indptr, problem.indices, problem.data, n_cols
    return with_bias(problem, params.bias)


# values beyond this have squares (x'x, kernel distances) that overflow a double
HUGE_VALUE = 1e150


def _non_finite_in(obj, depth=0):
    """Whether a model (its arrays and numbers, through nested parts; not its report) holds a
    nan or inf."""
    if isinstance(obj, np.ndarray):
        return obj.dtype.kind == "f" and not bool(np.all(np.isfinite(obj)))
    if isinstance(obj, float):
        return not np.isfinite(obj)
    if depth > 3:
        return False
    if isinstance(obj, (list, tuple)):
        return any(_non_finite_in(x, depth + 1) for x in obj)
    fields = getattr(obj, "__dict__", None)
    if fields is None:
        return False
    return any(_non_finite_in(v, depth + 1) for k, v in fields.items() if k != "report")


def _check_finite(model, problem):
    if not _non_finite_in(model):
        return
    from svmtool.errors import DataFormatError, SvmtoolError

    solver = model.report.get("solver", "") if isinstance(model.report, dict) else ""
    what = f"-s {solver}: " if solver else ""
    data = problem.data[int(problem.indptr[0]):int(problem.indptr[-1])]
    biggest = float(np.max(np.abs(data))) if len(data) else 0.0
    if biggest > HUGE_VALUE:
        raise DataFormatError(problem.source or "<data>", None,
                              f"{what}training overflowed (the model came out with nan or inf): "
                              f"feature values up to {biggest:.3g} are too large for doubles; "
                              f"scale the data (svmtool convert --scale -1,1)")
    raise SvmtoolError(f"{what}training failed numerically (the model came out with nan or "
                       f"inf); nothing was written")


# --- out-of-core and dask.distributed training -------------------------------------------------
# The plumbing is svmtool.solvers.scale_out.streaming's; it is loaded only when a run may leave
# memory (a small in-memory run loads nothing of scale_out).

def _scale_out():
    from svmtool.solvers.scale_out import streaming

    return streaming


def _asked_to_stream(params):
    """Whether the options ask for out-of-core or dask training (every check is about them)."""
    return params.dask is not None or bool(params.out_of_core)


def check_streaming(spec, params):
    """ParameterError when ``params`` ask for out-of-core or dask training that ``spec`` cannot
    do (the command line calls this before reading any data; the checks are
    :func:`svmtool.solvers.scale_out.streaming.check_streaming`)."""
    if _asked_to_stream(params):
        _scale_out().check_streaming(spec, params)


def _streaming_mode(problem, params, spec):
    """None (train in memory), "blocks" (out of core) or "dask": asked for, or chosen for a
    memory-mapped cache larger than the memory budget."""
    from svmtool.engine.memory import mapped_file

    if not _asked_to_stream(params) and (
            params.out_of_core is False
            or (getattr(problem, "parts", None) is None and not mapped_file(problem.data))):
        return None                 # rows in memory, nothing asked: no cache to stream
    return _scale_out().streaming_mode(problem, params, spec)


def check_labels(problem, spec):
    """Classification solvers need integer class labels (regression, ranking and the one-class
    SVM take any); the error names the line of the first other label when the problem was read
    from text."""
    if spec.task == "classification":
        check_class_labels(problem.y, spec.name, problem.source,
                           getattr(problem, "label_note", None))


# below this many stored values a class takes a few milliseconds: threads would not pay
OVR_THREAD_MIN_NNZ = 50_000


def _class_workers(params, spec, n_tasks, indptr):
    """(threads for the one-vs-rest classes, threads for each class's row passes); (1, None):
    the classes one after another, each with all the threads its solver takes.

    Solvers whose registry entry lists "one-vs-rest classes" among what ``--threads`` speeds
    up: the dual and primal coordinate descent solvers and Newton.  The classes are independent
    problems unless the LIBLINEAR generator is emulated (``--liblinear-rng``: one rand() state
    runs through dual CD's classes in order, as in LIBLINEAR's process).  Newton's classes share
    the threads left (``threads // workers`` each, at least 1) for their row passes, whose
    blocks and sums do not depend on the thread count: the model is the same bits either way,
    and a class per thread spares the passes' hand-offs and runs the CG driver's serial vector
    work side by side.  A solver whose entry says ``class_batches`` (``-s 0``) takes each of the
    ``workers`` as a group of classes whose passes are shared (:meth:`_OneVsRest._run`).
    """
    if n_tasks < 2 or "one-vs-rest classes" not in spec.threads:
        return 1, None
    if params.liblinear_rng and spec.reads("dcd"):
        return 1, None
    if int(indptr[-1] - indptr[0]) < OVR_THREAD_MIN_NNZ:
        return 1, None
    from svmtool.ops.cores import default_threads

    want = default_threads() if params.threads is None else int(params.threads)
    workers = max(1, min(want, n_tasks))
    return workers, max(1, want // workers)


# --- prediction and evaluation ------------------------------------------------------------------

def predict(model, problem):
    """Return (labels, decision values) for every row of ``problem``."""
    scores = model.decision_function(problem)
    return model.predict(scores), scores


def iter_decision_values(model, source, *, dask=None, chunk_bytes=64 << 20, zero_based=False):
    """Yield ``(labels, qid, decision values)`` of the rows of ``source`` block by block, in row
    order: text (streamed), a cache or a shard index.  With ``dask`` (a scheduler address or
    ``local:N``), ``source`` must be a cache or a shard index that every worker can read at the
    same path: every piece is one task on the cluster, and the results come back in row order
    (the same decision values as locally: each row's is computed the same way)."""
    if dask is None:
        from svmtool.io.svmlight import PY_PARSE_LIMIT, PY_PARSE_LIMIT_NO_JIT, iter_data_chunks
        from svmtool.models.linear import LinearModel

        # a linear model scores small inputs with numpy: then a text file of a few MB is read
        # by the Python parser too, and the command never loads numba
        no_jit = isinstance(model, LinearModel) and "numba" not in sys.modules
        limit = PY_PARSE_LIMIT_NO_JIT if no_jit else PY_PARSE_LIMIT
        for chunk in iter_data_chunks(source, chunk_bytes=chunk_bytes, zero_based=zero_based,
                                      python_limit=limit):
            yield chunk.y, chunk.qid, model.decision_function(chunk)
        return
    yield from _scale_out().decision_values_on_cluster(model, source, dask, chunk_bytes)


def cross_validate(problem: Problem, params: TrainParams = None, nr_fold: int = 5, *, seed=None,
                   **kwargs):
    """Predicted label of every row, each from a model trained on the other folds.

    Folds are contiguous slices of a seeded random permutation (as LIBLINEAR does); with fewer rows
    than folds, every row is its own fold (leave-one-out).
    """
    params = for_one_run(make_params(params, kwargs))
    from svmtool.solvers import get_spec

    refuse(check_cross_validation(params, nr_fold))
    check_labels(problem, get_spec(params.solver))     # before the folds lose the line numbers
    n = problem.n_rows
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


def save_model(model, path, fmt=None, threads=1):
    """Write a model; ``fmt``: None (the model's own format), "liblinear" or "svmlight";
    ``threads``: format a large linear model's numbers on up to that many threads (None: the
    default count)."""
    from svmtool.io.model_io import save_model as _save

    return _save(model, path, fmt, threads)

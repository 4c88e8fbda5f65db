"""The out-of-core and dask plumbing of :func:`svmtool.api.train`: whether a problem is trained
in memory, out of core (blocks of its memory-mapped cache) or on a dask cluster, what each path
needs checked first, and the registry entry's fit bound to the data source.

:func:`streaming_mode` chooses ("blocks", "dask" or None); :func:`bound_fit` binds a solver's
out-of-core fit (:mod:`svmtool.solvers.scale_out.out_of_core`) or its dask fit
(:mod:`svmtool.solvers.scale_out.sharded`) to the cache or shards; :func:`train_with_tasks` runs a
driver whose subproblems go to the cluster as tasks (DC-SVM); :func:`decision_values_on_cluster`
is prediction's dask path.  :mod:`svmtool.api` stays the dispatch and loads this module only when
a run may leave memory.
"""

import os
import warnings

from svmtool.errors import ParameterError


def check_streaming(spec, params):
    """ParameterError when ``params`` ask for out-of-core or dask training that ``spec`` cannot
    do (the command line calls this before reading any data)."""
    from svmtool.solvers import specs

    if params.dask is not None and spec.dask == "tasks":
        # the subproblems travel to the workers as tasks: no cache, no blocks
        from svmtool.engine.dask_backend import require_dask

        require_dask()
        if params.out_of_core:
            raise ParameterError(f"-s {spec.name} cannot train out of core: --dask sends its "
                                 f"subproblems to the workers instead")
    elif params.dask is not None:
        if spec.dask != "passes":
            names = [s.name for mode in ("passes", "tasks") for s in specs() if s.dask == mode]
            raise ParameterError(f"--dask is not available for -s {spec.name} (only -s "
                                 f"{', '.join(names)})")
        from svmtool.engine.dask_backend import require_dask

        require_dask()
        if params.out_of_core is False:
            raise ParameterError("--dask reads the cache in blocks on every worker: it cannot "
                                 "be combined with --in-memory")
    elif params.out_of_core and not spec.out_of_core:
        names = ", ".join(s.name for s in specs() if s.out_of_core)
        raise ParameterError(f"--out-of-core is not available for -s {spec.name} (only -s "
                             f"{names})")
    if ((params.dask is not None or params.out_of_core) and params.cp.loss is not None
            and params.cp.loss != "errorrate"):
        raise ParameterError(f"--loss {params.cp.loss} needs the rows' scores in memory: it "
                             f"cannot be combined with --out-of-core or --dask")
    if (params.dask is not None or params.out_of_core) and params.liblinear_rng:
        raise ParameterError("--liblinear-rng needs the rows in memory: it cannot be combined "
                             "with --out-of-core or --dask")


def memory_budget_bytes(params):
    """The memory budget in bytes: --memory-budget, else half of the available memory."""
    if params.memory_budget is not None:
        return int(float(params.memory_budget) * (1 << 20))
    from svmtool.engine.memory import available_memory

    avail = available_memory()
    return None if avail is None else avail // 2


def train_with_tasks(problem, params, spec, callback, init_model):
    """A solver whose subproblems go to the cluster as tasks (registry ``dask="tasks"``): its
    driver as in memory, handed the session (DC-SVM: the cluster subproblems of every level;
    the refine and conquer steps stay here)."""
    from svmtool.engine.dask_backend import Session

    check_streaming(spec, params)
    more = {} if init_model is None else {"init_model": init_model}
    with Session(params.dask) as session:
        model = spec.load_driver()(problem, params, spec, callback=callback, tasks=session,
                                   **more)
    model.report["streaming"] = "dask"
    return model


class RowsElsewhere:
    """What a driver reads of a problem whose rows are streamed from its shards: the labels,
    query ids and sizes, but no CSR arrays (the streaming fit holds the shards)."""

    def __init__(self, problem):
        self.indptr = self.indices = self.data = None
        self.y, self.qid = problem.y, problem.qid
        self.n_features, self.n_rows = problem.n_features, problem.n_rows
        self.source = problem.source


def shard_sources(problem):
    """The (indptr, indices, data) of every shard of a problem read from a shard index (the
    mapped shards, in row order), or None for any other problem."""
    parts = getattr(problem, "parts", None)
    if parts is None or getattr(problem, "index", None) is None:
        return None
    return [(p.indptr, p.indices, p.data) for p in parts]


def data_bytes(problem, path):
    """The bytes of the data files behind ``problem`` (a cache, or a shard index's shards)."""
    if shard_sources(problem) is not None:
        return problem.data_bytes()
    return os.path.getsize(path)


def mapped_cache(problem):
    """The path of the cache whose memory map holds ``problem``'s arrays (for a problem read
    from a shard index: the index's path), or None."""
    from svmtool.engine.memory import mapped_file

    src = getattr(problem, "source", None)
    if shard_sources(problem) is not None:
        return src if isinstance(src, str) and os.path.isfile(src) else None
    if not src or not isinstance(src, str) or not os.path.isfile(src):
        return None
    if not (mapped_file(problem.data) and mapped_file(problem.indices)):
        return None
    return src


def streaming_mode(problem, params, spec):
    """None (train in memory), "blocks" (out of core) or "dask"."""
    if params.dask is None and params.out_of_core is False:
        return None
    check_streaming(spec, params)
    path = mapped_cache(problem)
    if params.dask is not None:
        if path is None:
            raise ParameterError("--dask trains from a binary cache (or a shard index) that "
                                 "every worker can read at the same path: convert TRAIN first "
                                 "(svmtool convert TRAIN TRAIN.cache)")
        return "dask"
    if params.out_of_core:
        if path is None:
            raise ParameterError("--out-of-core trains from a binary cache: convert TRAIN "
                                 "first (svmtool convert TRAIN TRAIN.cache)")
        return "blocks"
    # automatic: a mapped cache larger than the budget
    budget = memory_budget_bytes(params)
    if path is None or budget is None:
        return None
    size = data_bytes(problem, path)
    if size <= budget:
        return None
    if not spec.out_of_core or params.liblinear_rng:
        why = "--liblinear-rng" if spec.out_of_core else f"-s {spec.name}"
        warnings.warn(f"{path} ({size >> 20} MB) is larger than the memory "
                      f"budget ({budget >> 20} MB), but {why} cannot train out of core: "
                      f"training in memory")
        return None
    warnings.warn(f"{path} ({size >> 20} MB) is larger than the memory budget "
                  f"({budget >> 20} MB): training out of core (--in-memory loads it)")
    return "blocks"


def bound_fit(mode, problem, params):
    """(bind, close): ``bind(spec)`` is ``spec``'s fit on the out-of-core or dask path, bound to
    the data source; ``close`` what to call when training is over (None: nothing)."""
    import functools

    from svmtool.engine.blocks import block_values_for

    budget = memory_budget_bytes(params)
    if mode == "dask":
        from svmtool.engine.dask_backend import Session
        from svmtool.solvers.scale_out.sharded import fit as dask_fit

        if shard_sources(problem) is not None:
            # each shard file is a piece of its own; the workers map them from their paths
            path = [(os.path.abspath(sh["path"]), 0, sh["rows"][1] - sh["rows"][0])
                    for sh in problem.index["shards"]]
        else:
            path = os.path.abspath(mapped_cache(problem))
        session = Session(params.dask)
        return (lambda spec: functools.partial(
            dask_fit, spec=spec, bias=float(params.bias), path=path, labels_y=problem.y,
            session=session, block_values=block_values_for(budget))), session.close
    from svmtool.solvers.scale_out.out_of_core import streaming_fit

    sources = shard_sources(problem)
    return (lambda spec: streaming_fit(spec, float(params.bias), budget, sources)), None


def decision_values_on_cluster(model, source, dask, chunk_bytes):
    """Yield ``(labels, qid, decision values)`` of the rows of ``source`` (a cache or a shard
    index every worker can read at the same path) in row order, one task per piece on the dask
    cluster ``dask`` (:func:`svmtool.api.iter_decision_values` with ``dask``)."""
    from svmtool.io.cache import cache_info
    from svmtool.io.shards import looks_like_shard_index, read_shard_index
    from svmtool.params import check_dask_address, refuse

    refuse(check_dask_address(dask))
    from svmtool.engine.dask_backend import Session, predict_in_order, prediction_pieces

    if looks_like_shard_index(source):
        files = [os.path.abspath(sh["path"]) for sh in read_shard_index(source)["shards"]]
    else:
        from svmtool.io.cache import is_cache

        head = b""
        if source != "-" and os.path.isfile(source):
            with open(source, "rb") as f:
                head = f.read(16)
        if not is_cache(head):
            raise ParameterError("--dask predicts from a binary cache (or a shard index) that "
                                 "every worker can read at the same path: convert TEST first "
                                 "(svmtool convert TEST TEST.cache)")
        cache_info(source)                      # a truncated or foreign cache: one line here
        files = [os.path.abspath(source)]
    pieces = prediction_pieces(files, chunk_bytes)
    with Session(dask) as session:
        yield from predict_in_order(session, pieces, model)

"""``--dask``: the units of a grid as tasks of a dask.distributed cluster.

Each unit (a gamma and its folds, :func:`svmtool.selection.engine.plan_units`) is one task that
builds the evaluator on its worker and returns the unit's pieces.  The data goes to each
worker once: a binary cache (``svmtool convert``) by its path, which every worker maps
read-only and keeps for the session; other data is sent once to every worker
(``scatter(broadcast=True)``).  A worker keeps the evaluator it built for a grid, so its later
units reuse it (a C-SVC pair's dense copy, for one).  The pieces come back as the tasks finish;
the collector joins them into cells exactly as for threads, so the rates and the best cell are
the same wherever the units ran.
"""

import threading

_WORKER = {"key": None, "evaluator": None, "problem": {}}
_LOCK = threading.Lock()


def _problem_on_worker(ref):
    """The problem of ``ref``: ("cache", path) mapped once per worker, or the problem itself."""
    kind, value = ref
    if kind != "cache":
        return value
    with _LOCK:
        prob = _WORKER["problem"].get(value)
        if prob is None:
            from svmtool.io.cache import load_cache

            prob = load_cache(value, mmap="r")
            _WORKER["problem"][value] = prob
        return prob


def run_unit_task(key, ref, recipe, unit, gamma, c_cells, seconds_left):
    """One unit on a worker: its pieces (the same as a thread would report)."""
    import time

    from svmtool.selection.evaluators import evaluator_for

    with _LOCK:
        same = _WORKER["key"] == key
    if not same:
        kind, params, spec_name, folds, opts = recipe
        from svmtool.solvers import get_spec

        problem = _problem_on_worker(ref)
        ev = evaluator_for(kind, problem, params, get_spec(spec_name), folds, opts)
        with _LOCK:
            _WORKER["key"], _WORKER["evaluator"] = key, ev
    ev = _WORKER["evaluator"]
    from svmtool.selection.engine import stopper

    deadline = None if seconds_left is None else time.monotonic() + seconds_left
    pieces = []
    g, _, fold_ids = unit
    ev.run_unit(g, gamma, c_cells, fold_ids, pieces.append,
                stopper(deadline, lambda: len(pieces) > 0))
    return pieces


def _reference(session, problem):
    """How the workers get the data: a cache's path, or the problem sent once to each."""
    import os

    src = getattr(problem, "source", None)
    if isinstance(src, str) and os.path.isfile(src):
        from svmtool.io.cache import is_cache

        with open(src, "rb") as f:
            if is_cache(f.read(16)):
                return ("cache", os.path.abspath(src))
    return ("data", session.client.scatter(problem, broadcast=True))


def run_on_cluster(address, recipe, units, value_of, collector, deadline=None):
    """Run ``units`` on the dask cluster at ``address`` (or ``local:N``); pieces go to
    ``collector`` as tasks finish."""
    import time
    import uuid
    from dataclasses import replace

    from svmtool.engine.dask_backend import Session
    from svmtool.errors import require

    as_completed = require("distributed", "--dask").as_completed

    kind, problem, params, spec_name, folds, opts = recipe
    shipped = (kind, replace(params, deadline=None), spec_name, folds,
               replace(opts, dask=None, threads=1, deadline=None))
    key = uuid.uuid4().hex
    with Session(address) as session:
        ref = _reference(session, problem)
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        futures = []
        for unit in units:
            g, cs, _ = unit
            gamma, c_cells = value_of(g, cs)
            futures.append(session.client.submit(run_unit_task, key, ref, shipped, unit, gamma,
                                                 c_cells, left, pure=False))
        for fut in as_completed(futures):
            for piece in session.gather([fut])[0]:
                collector.add(piece)

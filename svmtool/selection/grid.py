"""``run_grid``: the cross-validated rate of every cell of a grid, and grid.py's best cell.

Which evaluator scores the cells (see each module):

=======================================  ===============================================
solver                                   evaluator
=======================================  ===============================================
``c_svc`` (svm-train -s 0, no ``-b 1``)  :mod:`~svmtool.selection.kernel_cells`: shared
                                         kernel rows, alpha seeding, LIBSVM's SMO
a linear solver (``dcd-l2``, ``lr``...)  :mod:`~svmtool.selection.linear_cells`: the
                                         warm-started C path of ``train -C``
``dcsvm --early``, two classes           :mod:`~svmtool.selection.early_cells`: one
                                         clustering per fold and gamma for every C
anything else                            :mod:`~svmtool.selection.generic_cells`: cell by
                                         cell through the API
=======================================  ===============================================

The folds are svm-train -v's (:func:`svmtool.selection.folds.libsvm_folds`) unless
``folds='svmtool'`` (a seeded split of the same shape).  The rate of a cell does not depend on
the threads, the order or the units: each is a function of the cell and the folds.
"""

import math
import time
from dataclasses import dataclass, replace
from typing import Optional

from svmtool.errors import ParameterError
from svmtool.selection.engine import (STOPPED_TIME, Collector, GridResult, Ordered, plan_units,
                                      replay_best, run_units)
from svmtool.selection.evaluators import (evaluator_for, kind_of, make_folds, path_solver,
                                          threads_of, values)
from svmtool.selection.spec import GridSpec, better

__all__ = ["GridOptions", "run_grid", "refine", "linear_range", "kind_of", "make_folds",
           "path_solver"]

ORDERS = ("grid", "path")
FOLDS = ("libsvm", "svmtool")


@dataclass
class GridOptions:
    order: str = "grid"              # grid: grid.py's centre-out order; path: gamma by gamma
    threads: Optional[int] = None    # None: all cores
    folds: str = "libsvm"            # libsvm: svm-train -v's split; svmtool: seeded
    seed: int = 1
    seed_alpha: str = "c"            # C-SVC's alpha seeding: c | fold | none
    share_rows: bool = True          # C-SVC: one kernel-row cache per gamma and pair
    deadline: Optional[float] = None  # time.monotonic() at which no new cell starts
    dask: Optional[str] = None       # a scheduler address or local:N: units as tasks
    refine: int = 0                  # dcsvm --early: re-run this many best cells exactly
    linear_path: bool = False        # linear: LIBLINEAR's C path, ending as -C ends
    fold_groups: Optional[int] = None  # units per gamma (None: enough for the threads)


def _refuse_weights(problem, spec, kind):
    """Instance weights go with the folds: to the linear path's fits and to ``api.train``
    (the generic cells) by ``take_rows``, to the kernel and early grids' subproblems as
    per-row C (their rows of weight 0 left out of the training rows); a solver whose registry
    entry says it takes none refuses them."""
    from svmtool.problem import refuse_weights

    if not spec.instance_weights:
        refuse_weights(problem, f"solver {spec.name}")


def run_grid(problem, params, gspec: GridSpec, spec, opts: GridOptions, *, resumed=None,
             on_cell=None, folds=None, cells=None, c_scale=1.0):
    """Score every cell of ``gspec`` (or of ``cells``, a subset) not in ``resumed``
    ({(log2c, log2g): rate}); ``c_scale`` multiplies every C.

    ``on_cell(cell)`` is called for every finished cell in the order of ``opts.order``, from
    this thread or a worker thread (one at a time).  Returns a :class:`GridResult` whose
    ``best`` is grid.py's best over the resumed and the new cells."""
    t0 = time.perf_counter()
    resumed = dict(resumed or {})
    if opts.order not in ORDERS:
        raise ParameterError(f"--order must be one of {', '.join(ORDERS)} (got {opts.order!r})")
    grid_order = gspec.cells("grid")
    emit_order = gspec.cells(opts.order)
    keep = None if cells is None else set(cells)
    todo = [cell for cell in emit_order if cell not in resumed and (keep is None or cell in keep)]
    kind = kind_of(spec, params)
    _refuse_weights(problem, spec, kind)
    if folds is None:
        folds = make_folds(problem, spec, gspec.fold, opts)
    done = []

    def emit(cell):
        done.append(cell)
        if on_cell is not None:
            on_cell(cell)

    ordered = Ordered(todo, emit)
    collector = Collector(problem.y, len(folds), gspec.lower_is_better, ordered.add)
    evaluator = evaluator_for(kind, problem, params, spec, folds, opts)
    threads = threads_of(opts)
    fold_groups = 1 if kind == "linear" else opts.fold_groups
    units = plan_units(todo, len(folds), threads, fold_groups)
    value_of = values(params, problem, c_scale)
    if opts.dask:
        from svmtool.selection.remote import run_on_cluster

        run_on_cluster(opts.dask, (kind, problem, params, spec.name, folds, opts), units,
                       value_of, collector, opts.deadline)
    else:
        run_units(evaluator, units, value_of, collector, threads, opts.deadline)
    ordered.flush()
    stopped = getattr(evaluator, "stopped", "")
    if len(done) < len(todo) and opts.deadline is not None and \
            time.monotonic() >= opts.deadline:
        stopped = STOPPED_TIME
    best = replay_best(done, grid_order, resumed, gspec.lower_is_better)
    res = GridResult(cells=done, best=best, stopped=stopped,
                     elapsed=time.perf_counter() - t0, units=len(units),
                     extra={"kind": kind, "folds": [len(f) for f in folds]})
    if opts.refine and kind == "early" and done:
        res.extra["refined"] = refine(problem, params, spec, gspec, folds, done, opts, on_cell)
        res.best = res.extra["refined"]["best"]
    return res


def refine(problem, params, spec, gspec, folds, cells, opts, on_cell=None):
    """Re-run the ``opts.refine`` best early cells exactly (DC-SVM without --early); grid.py's
    best among them.  ``on_cell`` gets each re-run cell (``cell.stats['refined'] = True``)."""
    from svmtool.selection.engine import Cell
    from svmtool.selection.generic_cells import GenericGrid

    rank = {key: i for i, key in enumerate(gspec.cells("grid"))}
    sign = 1.0 if gspec.lower_is_better else -1.0
    top = sorted(cells, key=lambda c: (sign * c.rate, rank[(c.c, c.g)]))[:int(opts.refine)]
    exact = replace(params, dcsvm=replace(params.dcsvm, early=False, early_level=None))
    ev = GenericGrid(problem, exact, spec, folds)
    value_of = values(params, problem)
    out = []

    def add(piece):
        import numpy as np

        from svmtool.selection.spec import libsvm_rate

        truth = np.asarray(problem.y, dtype=np.float64)[piece.rows]
        rate = libsvm_rate(int(np.count_nonzero(piece.pred == truth)), len(piece.rows))
        cell = Cell(piece.c, piece.g, rate, piece.seconds, dict(piece.stats, refined=True))
        out.append(cell)
        if on_cell is not None:
            on_cell(cell)

    for cell in sorted(top, key=lambda c: rank[(c.c, c.g)]):
        gamma, c_cells = value_of(cell.g, [cell.c])
        ev.run_unit(cell.g, gamma, c_cells, list(range(len(folds))), add, opts.deadline)
    best = None
    for cell in out:
        if better(cell.rate, cell.c, cell.g, best, gspec.lower_is_better):
            best = (cell.rate, cell.c, cell.g)
    return {"cells": out, "best": best}


def linear_range(problem, params):
    """LIBLINEAR's C path as a -log2c range: from its start C (``train -C``) to 1024."""
    from svmtool.solvers.selection.param_search import MAX_C, start_C

    c0 = start_C(problem, params)
    if not math.isfinite(c0) or c0 <= 0:
        c0 = 1.0
    lo = math.log2(min(c0, MAX_C))
    return (float(lo), float(math.log2(MAX_C)), 1.0)

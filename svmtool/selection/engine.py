"""Running a grid: cells grouped into units, units on threads or a dask cluster, cells back in
order.

A *unit* is one gamma (one column of the grid) with all its C values, in increasing C, over
some of the folds: the evaluator of the solver (:mod:`svmtool.selection.kernel_cells` for
C-SVC, :mod:`~svmtool.selection.linear_cells`, :mod:`~svmtool.selection.early_cells`,
:mod:`~svmtool.selection.generic_cells` for the rest) shares what it can inside a unit (kernel
rows, warm starts) and reports each cell's held-out predictions as a :class:`Piece`.  There is
one unit per gamma, or, with fewer gammas than threads, the folds are split between units of
one gamma.  :class:`Collector` joins the pieces of a cell and scores it (svm-train's rate, or
the mean squared error); :class:`Ordered` hands the finished cells on in the grid's order.

Units run on ``threads`` threads, submitted in grid.py's order of gamma (centre-out) so that
the first lines come early; with a dask session each unit is a task (the problem is sent to
every worker once).  After the deadline no unit starts a new cell once some cell is done (on
a cluster: once the unit has done one); the cells done are kept.
The cells and the best one do not depend on the number of threads or on where units ran.
"""

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from svmtool.selection.kernel_cells import Piece
from svmtool.selection.spec import better, centre_out, libsvm_rate, mse_rate

STOPPED_TIME = "time limit"


@dataclass
class Cell:
    c: object                 # log2c and log2g keys, as the grid spells them (None: not searched)
    g: object
    rate: float
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)
    resumed: bool = False


@dataclass
class GridResult:
    cells: list                    # every cell done (resumed first), in the order handed on
    best: Optional[tuple]          # (rate, log2c, log2g), grid.py's rule in grid.py's order
    stopped: str = ""
    elapsed: float = 0.0
    units: int = 0
    extra: dict = field(default_factory=dict)


class Collector:
    """Joins the folds of each cell and scores it when all are in."""

    def __init__(self, y, nr_fold, regression, on_cell):
        self.y = np.asarray(y, dtype=np.float64)
        self.nr_fold = nr_fold
        self.regression = regression
        self.on_cell = on_cell
        self.parts = {}
        self.finished = 0
        self.lock = threading.Lock()

    def add(self, piece: Piece):
        key = (piece.c, piece.g)
        with self.lock:
            got = self.parts.setdefault(key, {"folds": set(), "rows": [], "pred": [],
                                              "seconds": 0.0, "stats": {}})
            got["folds"].update(piece.folds)
            got["rows"].append(piece.rows)
            got["pred"].append(piece.pred)
            got["seconds"] += piece.seconds
            _merge(got["stats"], piece.stats)
            if len(got["folds"]) < self.nr_fold:
                return
            del self.parts[key]
            self.finished += 1
        rows = np.concatenate(got["rows"])
        pred = np.concatenate(got["pred"])
        truth = self.y[rows]
        if self.regression:
            rate = mse_rate(float(np.mean((pred - truth) ** 2))) if len(rows) else 0.0
        else:
            rate = libsvm_rate(int(np.count_nonzero(pred == truth)), len(rows))
        self.on_cell(Cell(piece.c, piece.g, rate, got["seconds"], got["stats"]))


def _merge(into, stats):
    for k, v in (stats or {}).items():
        if isinstance(v, dict):
            _merge(into.setdefault(k, {}), v)
        elif isinstance(v, (int, float)):
            into[k] = into.get(k, 0) + v
        else:
            into[k] = v


class Ordered:
    """Hands cells on in a given order: a cell waits until every cell before it is done (or
    will never be: :meth:`flush` at the end releases the rest in order)."""

    def __init__(self, order, emit):
        self.order = list(order)
        self.pos = 0
        self.ready = {}
        self.emit = emit
        self.lock = threading.Lock()

    def add(self, cell: Cell):
        with self.lock:
            self.ready[(cell.c, cell.g)] = cell
            while self.pos < len(self.order) and self.order[self.pos] in self.ready:
                self.emit(self.ready.pop(self.order[self.pos]))
                self.pos += 1

    def flush(self):
        with self.lock:
            for key in self.order[self.pos:]:
                if key in self.ready:
                    self.emit(self.ready.pop(key))
            self.pos = len(self.order)


def plan_units(cells, nr_fold, threads, fold_groups=None):
    """The units of the cells to compute: [(log2g, [log2c ascending], fold numbers)], gammas in
    grid.py's centre-out order; the folds split in groups when gammas are fewer than threads."""
    by_g = {}
    for c, g in cells:
        by_g.setdefault(g, []).append(c)
    gs = [g for g in centre_out(sorted(by_g, key=_key)) if g in by_g] if None not in by_g \
        else list(by_g)
    if fold_groups is None:
        fold_groups = 1
        if len(gs) < threads:
            fold_groups = min(nr_fold, -(-threads // max(len(gs), 1)))
    groups = [list(range(k, nr_fold, fold_groups)) for k in range(fold_groups)]
    groups = [sorted(gr) for gr in groups if gr]
    units = []
    for g in gs:
        cs = sorted(by_g[g], key=_key)
        for fold_ids in groups:
            units.append((g, cs, fold_ids))
    return units


def _key(v):
    return -math.inf if v is None else float(v)


def replay_best(cells, order, resumed, lower_is_better):
    """grid.py's best cell: the resumed cells in the file's order, then the grid's order."""
    best = None
    done = {(c.c, c.g): c.rate for c in cells}
    seq = list(resumed.items()) + [(k, done[k]) for k in order if k in done and k not in resumed]
    for (c, g), rate in seq:
        if better(rate, c, g, best, lower_is_better):
            best = (rate, c, g)
    return best


def stopper(deadline, done):
    """``stop()`` of the units: True once ``deadline`` (time.monotonic()) has passed and
    ``done()`` (some cell finished) holds; None without a deadline."""
    if deadline is None:
        return None
    return lambda: time.monotonic() >= deadline and done()


def run_units(evaluator, units, value_of, collector, threads, deadline=None):
    """Run the units on threads (one unit a thread at a time); pieces go to ``collector``."""
    stop = stopper(deadline, lambda: collector.finished > 0)

    def one(unit):
        g, cs, fold_ids = unit
        gamma, c_cells = value_of(g, cs)
        evaluator.run_unit(g, gamma, c_cells, fold_ids, collector.add, stop)

    if threads <= 1 or len(units) <= 1:
        for u in units:
            one(u)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(threads, len(units))) as pool:
        for fut in [pool.submit(one, u) for u in units]:
            fut.result()


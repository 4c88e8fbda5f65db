"""The linear solvers over a grid of C: the warm-started path of ``svmtool train -C``.

Every fold keeps one prepared training set and its last solution for the whole path
(:class:`svmtool.solvers.selection.param_search._FoldTrainer`: the Newton solvers start from the
previous ``w``, the dual solvers from the previous ``alpha``, feasible for a larger C), C runs
upwards, and each C's held-out predictions make the cell.  The folds of a C run on threads.
Without ``-log2c`` the path is LIBLINEAR's (from its computed start C, doubling, up to 1024)
and ends, as LIBLINEAR's ``-C`` ends, when no fold's ``w`` changed for five values of C.
There is no gamma: the grid is one column, or, for a linear SVR given ``-log2p``, one column
of C per p (the second key of a unit is then log2(p), the width of the epsilon-insensitive
loss), each column its own warm-started C path.
"""

import time
from dataclasses import replace
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from svmtool.selection.kernel_cells import Piece

UNCHANGED_STOP = 5


class LinearGrid:
    def __init__(self, problem, params, spec, folds, threads=1, early_stop=False):
        self.problem = problem
        self.params = params
        self.spec = spec
        self.folds = folds
        self.threads = max(1, int(threads))
        self.early_stop = early_stop
        self.stopped = ""

    def run_unit(self, g_key, gamma, c_cells, fold_ids, report, stop=None):
        from svmtool.solvers.selection.param_search import _FoldTrainer, folds_at

        inner = 1 if self.threads > 1 else self.params.threads
        params = self.params
        if g_key is not None:               # a linear solver's second key is an SVR's log2(p)
            params = replace(params, svr=replace(params.svr, p=2.0 ** g_key))
        trainers = []
        for f in fold_ids:
            test = self.folds[f]
            keep = np.ones(self.problem.n_rows, dtype=bool)
            keep[test] = False
            sub = self.problem.take_rows(np.flatnonzero(keep))
            trainers.append(_FoldTrainer(sub, self.problem.take_rows(test), test, params,
                                         self.spec, inner))
        pool = ThreadPoolExecutor(min(self.threads, len(trainers))) if self.threads > 1 and \
            len(trainers) > 1 else None
        unchanged = 0
        try:
            for c_key, C in c_cells:
                if (stop is not None and stop()):
                    return
                t0 = time.perf_counter()
                outs, changed = folds_at(trainers, C, pool)
                rows = np.concatenate([t.rows for t in trainers])
                pred = np.concatenate([np.asarray(v, dtype=np.float64) for _, v in outs])
                report(Piece(c_key, g_key, tuple(fold_ids), rows, pred,
                             time.perf_counter() - t0, {"solves": len(trainers)}))
                unchanged = 0 if changed else unchanged + 1
                if self.early_stop and unchanged >= UNCHANGED_STOP:
                    self.stopped = (f"no fold's model changed for {UNCHANGED_STOP} values of C "
                                    f"(LIBLINEAR's rule): the path ends at C = {C:g}")
                    return
        finally:
            if pool is not None:
                pool.shutdown()

"""Any solver of the registry over a grid, cell by cell: every fold of every cell trained from
scratch through :func:`svmtool.api.train` on LIBSVM's fold subproblem (its rows in LIBSVM's
order) and its held-out rows predicted through :func:`svmtool.api.predict`, as svm-train -v
does.  This is the path of the LIBSVM problems other than plain C-SVC (nu-SVC, one-class,
the SVRs, ``-b 1``, ``-t 4``), of ``-s kernel`` and of ``-s dcsvm`` (exact, and ``--early``
with more than two classes); it is also how ``--refine`` re-runs cells exactly.  Nothing is
shared between cells but the data."""

import time
from dataclasses import replace

import numpy as np

from svmtool.selection.folds import training_rows
from svmtool.selection.kernel_cells import Piece


def cell_params(params, C, gamma):
    """``params`` at one cell: C (None: as given), gamma (None: as given)."""
    p = params
    if C is not None:
        p = replace(p, C=float(C))
    if gamma is not None:
        p = replace(p, kernel=replace(p.kernel, gamma=float(gamma)))
    return p


class GenericGrid:
    """Cells of any solver; see the module doc."""

    def __init__(self, problem, params, spec, folds):
        self.problem = problem
        self.params = params
        self.spec = spec
        self.folds = folds
        self.probability = bool(params.libsvm.probability) and spec.task == "classification"

    def fold_model(self, f, C, gamma):
        """The model of fold f at one cell."""
        from svmtool import api

        sub = self.problem.take_rows(training_rows(self.folds, f))
        return api.train(sub, cell_params(self.params, C, gamma))

    def predict(self, model, rows):
        from svmtool import api

        held = self.problem.take_rows(rows)
        if self.probability and getattr(model, "has_probability_model", lambda: False)():
            from svmtool.ops.kernels import Rows

            _, pred = model.predict_with_probability(
                Rows(held.indptr, held.indices, held.data, n_features=held.n_features))
            return np.asarray(pred, dtype=np.float64)
        labels, _ = api.predict(model, held)
        return np.asarray(labels, dtype=np.float64)

    def run_unit(self, g_key, gamma, c_cells, fold_ids, report, stop=None):
        for c_key, C in c_cells:
            if (stop is not None and stop()):
                return
            t0 = time.perf_counter()
            rows, preds = [], []
            for f in fold_ids:
                test = self.folds[f]
                model = self.fold_model(f, C, gamma)
                rows.append(test)
                preds.append(self.predict(model, test))
            report(Piece(c_key, g_key, tuple(fold_ids), np.concatenate(rows),
                         np.concatenate(preds), time.perf_counter() - t0,
                         {"solves": len(fold_ids)}))

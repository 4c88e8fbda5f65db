"""``-s dcsvm --early`` over a grid: every cell scored by DC-SVM's early-prediction model.

Hsieh, Si and Dhillon (ICML 2014, section 5 and Table 5) select (C, gamma) with the early
model: a level's clustering and the local models of its clusters, no conquer step.  Here, per
fold and gamma, the fold's training rows are clustered once (two-step kernel k-means at the
early level's number of clusters, :func:`svmtool.solvers.dcsvm.kmeans.two_step`) and that clustering
serves every C; per C each cluster's subproblem (the bias-free dual of ``-s kernel``,
:func:`svmtool.solvers.kernel.kernel_cd.solve`, to DC-SVM's level tolerance) starts from its solution
at the previous, smaller C (still feasible: the dual has no equality constraint), and the
held-out rows are predicted by the early model (nearest centre, that cluster's local model).
Two classes only; more classes go cell by cell through the library's multi-class early model.
"""

import time

import numpy as np

from svmtool.labels import class_index, class_weights, group_classes
from svmtool.ops.kernels import Kernel, Rows
from svmtool.ops.rows import take_rows
from svmtool.selection.folds import training_rows
from svmtool.selection.kernel_cells import Piece


class EarlyGrid:
    def __init__(self, problem, params, folds):
        from svmtool.solvers.dcsvm.dcsvm import LEVEL_EPS, MIN_CLUSTER_ROWS, default_early_level

        self.params = params
        self.folds = folds
        self.X = Rows(problem.indptr, problem.indices, problem.data,
                      n_features=problem.n_features)
        self.labels, _, _, _ = group_classes(problem.y)
        self.cls = class_index(problem.y, self.labels)
        self.wc = class_weights(params, self.labels)
        # instance weights: as DC-SVM trains on them (rows of weight 0 left out of the fold's
        # training rows, row i's C times W_i); every held-out row is predicted
        self.W = None if problem.weights is None else np.asarray(problem.weights, np.float64)
        dp = params.dcsvm
        k = int(dp.k_clusters)
        level = dp.early_level or default_early_level(int(dp.levels), k)
        self.want_clusters = k ** level
        self.min_rows = MIN_CLUSTER_ROWS
        eps = params.eps if params.eps is not None else 1e-3
        self.level_eps = float(dp.level_eps) if dp.level_eps else LEVEL_EPS * eps
        b = float(params.bias)
        self.kbias = b * b if b >= 0 else 0.0

    def run_unit(self, g_key, gamma, c_cells, fold_ids, report, stop=None):
        from svmtool.solvers.dcsvm.dcsvm import local_pair
        from svmtool.solvers.kernel.kernel_cd import solve
        from svmtool.solvers.dcsvm.kmeans import two_step

        kp = self.params.kernel
        kernel = Kernel(int(kp.kernel_type), float(gamma), float(kp.coef0), int(kp.degree),
                        self.kbias)
        state = []
        t_setup = time.perf_counter()
        for f in fold_ids:
            rows = training_rows(self.folds, f)
            if self.W is not None:
                rows = rows[self.W[rows] > 0]
            Xf = take_rows(self.X, rows)
            yb = np.where(self.cls[rows] == 0, 1.0, -1.0)
            Cw = np.where(yb > 0, self.wc[0], self.wc[1])
            if self.W is not None:
                Cw = Cw * self.W[rows]
            nc = int(max(1, min(self.want_clusters, len(rows) // self.min_rows)))
            rng = np.random.default_rng(self.params.seed)
            cl = two_step(Xf, np.arange(len(rows)), nc, int(self.params.dcsvm.sample), kernel,
                          rng, threads=1, mem_mb=min(64.0, float(kp.cache_mb)))
            groups = [np.flatnonzero(cl.assign == c) for c in range(cl.nr_cluster)]
            parts = [(g, take_rows(Xf, g)) for g in groups if len(g)]
            state.append({"f": f, "X": Xf, "yb": yb, "Cw": Cw, "cl": cl, "parts": parts,
                          "alpha": np.zeros(len(rows)), "held": take_rows(self.X,
                                                                          self.folds[f])})
        setup = time.perf_counter() - t_setup
        for ci, (c_key, C) in enumerate(c_cells):
            if (stop is not None and stop()):
                return
            t0 = time.perf_counter()
            out_rows, preds, steps = [], [], 0
            for st in state:
                for g, Xg in st["parts"]:
                    r = solve(Xg, st["yb"][g], C * st["Cw"][g], kernel, eps=self.level_eps,
                              init_alpha=st["alpha"][g], shrinking=self.params.shrinking,
                              cache_mb=max(1.0, float(kp.cache_mb) / 4), threads=1)
                    st["alpha"][g] = r.alpha
                    steps += int(r.iterations)
                lp = local_pair(st["X"], st["yb"], st["alpha"], st["cl"], kernel)
                dec = lp.decision(st["held"], kernel, threads=1)
                out_rows.append(self.folds[st["f"]])
                preds.append(np.where(dec > 0, self.labels[0], self.labels[1]))
            seconds = time.perf_counter() - t0 + (setup if ci == 0 else 0.0)
            report(Piece(c_key, g_key, tuple(fold_ids), np.concatenate(out_rows),
                         np.concatenate(preds), seconds,
                         {"steps": steps, "clusters": int(sum(len(s["parts"])
                                                              for s in state))}))

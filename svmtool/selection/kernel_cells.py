"""C-SVC (LIBSVM's problem, svm-train -s 0) over a (C, gamma) grid, the kernel work shared.

Each cell's rate is svm-train -v's: every fold of every cell is LIBSVM's subproblem (its rows
in LIBSVM's order, one-vs-one pairs of classes in the subproblem's label order) solved by
:func:`svmtool.solvers.kernel.smo.solve`, LIBSVM's SMO, to ``-e``; the held-out rows are predicted as
svm-predict does (pairwise votes, the first class of most votes).  What is shared:

* **kernel rows.**  A *unit* is one gamma and some folds (all of them unless there are fewer
  gammas than threads).  For each pair of classes the unit keeps one KernelData over the pair's
  rows in the whole problem and one LRU cache of its kernel rows (``-m`` MB, whole rows over
  all those rows): every fold's subproblem is a subset of these data points (the variables
  ``xi`` of the SMO), so a row computed for one fold and one C serves every other fold and C
  of that gamma.  The held-out rows are data points too: their decision values are read from
  the cached rows of the support vectors (float32 rows, float64 sums; values closer to 0 than
  the rounding could move are recomputed in double).
* **alpha seeding** (DeCoste and Wagstaff, "Alpha seeding for support vector machines", KDD
  2000).  Along increasing C, a fold's solution at C scaled by C'/C is feasible at C' (the
  equality y'a = 0 and the box hold), and so are its gradient ``G' = (C'/C)(G + 1) - 1`` and
  LIBSVM's G_bar: no kernel value is needed (seed ``c``).  Across folds at one C, the previous
  fold's alpha on the rows both training sets share, C on the new rows that the previous model
  puts inside the margin (y f(x) < 1) and 0 on the others, then y'a = 0 restored by lowering
  the alphas of the side in excess, those of the largest margin first; its gradient is summed
  from the cached rows (seed ``fold``, with the C seed for the first fold).  The default is
  ``c``: on ijcnn1's grid the fold seed saved a third of the iterations and spent as much in
  its gradient sums.  A seeded solve shrinks from its first iteration (LIBSVM's first
  shrinking comes after 1000).  A seed only changes where the SMO starts: it stops by the same
  rule, so each cell's solution is the cold solve's to the tolerance ``-e``.

A unit reports the labels it predicted for its folds' held-out rows cell by cell
(:class:`svmtool.selection.engine.Collector` joins the folds of a cell); units run on threads
(the SMO's jitted loop releases the GIL) or as dask tasks.
"""

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from svmtool.labels import class_index, class_weights, group_classes
from svmtool.ops.kernels import Kernel, Rows, kernel_expansion
from svmtool.ops.rows import take_rows
from svmtool.solvers import default_eps
from svmtool.solvers.kernel import smo
from svmtool.solvers.kernel._smo_rows_jit import kernel_diag

SEEDS = ("c", "fold", "none")
# a decision value this close to 0 (relative to sum |coef|) is recomputed in double: the
# float32 kernel rows are exact to 2^-24 relative
RECHECK = 4.0 * 2.0 ** -24


@dataclass
class Piece:
    """What a unit reports for one cell: the predicted labels of its folds' held-out rows."""
    c: object                   # the cell's log2c and log2g keys
    g: object
    folds: tuple                # the fold numbers covered
    rows: np.ndarray            # the held-out rows, and their predictions
    pred: np.ndarray
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)


class _Pair:
    """Classes (a, b) (indices in the whole problem's label order): their rows, one dense or
    CSC copy for every gamma, and the rows' place among them."""

    def __init__(self, X, cls, a, b, n):
        self.a, self.b = a, b
        self._lock = threading.Lock()
        self.pts = np.flatnonzero((cls == a) | (cls == b))
        self.local = np.full(n, -1, dtype=np.int64)
        self.local[self.pts] = np.arange(len(self.pts))
        self.X = X if len(self.pts) == n else take_rows(X, self.pts)
        self._base = None

    def kernel_data(self, kernel):
        """A KernelData over the pair's rows for ``kernel`` (the copies made once)."""
        with self._lock:
            if self._base is None:
                self._base = smo.KernelData(self.X, kernel)
                # the units run on threads already: the gradient rebuilds' expansions run on
                # the unit's own thread (a pool per call cost more than the sums on heart_scale)
                self._base.threads = 1
        kd = object.__new__(smo.KernelData)
        kd.__dict__.update(self._base.__dict__)
        kd.kernel = kernel
        kd.buf = np.zeros_like(self._base.buf)        # scratch of the row kernels, per user
        kd.diag = kernel_diag(kd.X.indptr, kd.X.indices, kd.X.data, kd.X.sq, kd.kmat,
                              *kd.kargs())
        return kd


class _FoldPair:
    """One fold's subproblem of one pair: its variables as LIBSVM orders them."""

    def __init__(self, pair, train_rows, cls, plus_first):
        c = cls[train_rows]
        rows = train_rows[(c == pair.a) | (c == pair.b)]
        first = cls[rows[0]] if len(rows) else pair.a
        # the subproblem's label order decides which class is +1 (LIBSVM's svm_group_classes
        # on the fold's rows: first appearance, +1 first in a -1/+1 problem); canonical
        # orientation: +1 for class a
        self.sign = 1.0 if first == pair.a or plus_first else -1.0
        self.complete = bool(np.any(c == pair.a)) and bool(np.any(c == pair.b))
        pos, neg = (pair.a, pair.b) if self.sign > 0 else (pair.b, pair.a)
        self.rows = np.concatenate([rows[cls[rows] == pos], rows[cls[rows] == neg]])
        self.yb = np.where(cls[self.rows] == pos, 1.0, -1.0)
        self.xi = pair.local[self.rows]
        self.weight_pos = pos
        self.weight_neg = neg


@dataclass
class _Solution:
    alpha: np.ndarray
    G: np.ndarray
    G_bar: object
    C: np.ndarray
    rho: float
    fp: _FoldPair
    held: np.ndarray = None       # held-out rows and their decision values (canonical sign)
    held_dec: np.ndarray = None


class KernelGrid:
    """The problem, its folds and LIBSVM's options, prepared once for every unit."""

    def __init__(self, problem, params, folds, seed_mode="c", share_rows=True):
        self.params = params
        kp = params.kernel
        self.ktype, self.coef0, self.degree = int(kp.kernel_type), float(kp.coef0), \
            int(kp.degree)
        self.cache_mb = float(kp.cache_mb)
        self.eps = float(params.eps) if params.eps is not None else default_eps("c_svc")
        self.shrinking = bool(params.shrinking)
        self.seed_mode = seed_mode
        self.share_rows = share_rows
        self.X = Rows(problem.indptr, problem.indices, problem.data,
                      n_features=problem.n_features)
        self.n = problem.n_rows
        self.labels, _, _, _ = group_classes(problem.y)
        self.cls = class_index(problem.y, self.labels)
        self.y = np.asarray(problem.y, dtype=np.float64)
        self.wc = class_weights(params, self.labels)
        # instance weights: a fold's variables are its training rows of positive weight (a
        # row of weight 0 takes no part, as svm-train -W leaves it out), row i's C is C times
        # its class's weight times W_i; every row is predicted when held out
        self.W = None if problem.weights is None else np.asarray(problem.weights, np.float64)
        K = len(self.labels)
        self.folds = folds
        train = [np.concatenate([folds[k] for k in range(len(folds)) if k != f])
                 for f in range(len(folds))]
        if self.W is not None:
            train = [t[self.W[t] > 0] for t in train]
        self.train = train
        self.pair_ids = [(a, b) for a in range(K) for b in range(a + 1, K)]
        # LIBSVM puts +1 first in a problem of the labels -1 and +1 (group_classes did so for
        # the whole problem: class 0 is +1); its folds' subproblems are such problems too
        self.plus_first = K == 2 and sorted(self.labels.tolist()) == [-1.0, 1.0]
        self._pairs = {}
        self._lock = threading.Lock()

    def pair(self, q):
        with self._lock:
            if q not in self._pairs:
                a, b = self.pair_ids[q]
                self._pairs[q] = _Pair(self.X, self.cls, a, b, self.n)
            return self._pairs[q]

    # --------------------------------------------------------------------------------------------

    def run_unit(self, g_key, gamma, c_cells, fold_ids, report, stop=None):
        """Every cell of one gamma over the folds ``fold_ids``: ``c_cells`` = [(log2c key, C)]
        in increasing C.  ``report(piece)`` for every cell done.  Once ``stop()`` says so no
        new cell starts (a cell under way is finished; with more than two classes the first
        pair decides how many cells every pair finishes)."""
        kernel = Kernel(self.ktype, float(gamma), self.coef0, self.degree, 0.0)
        K = len(self.labels)
        if K < 2:
            self._one_class_only(g_key, c_cells, fold_ids, report)
            return
        single = K == 2
        votes = None if single else np.zeros((len(c_cells), self.n, K), dtype=np.int32)
        held = np.concatenate([self.folds[f] for f in fold_ids])
        stats = [dict(iterations=0, misses=0, solves=0, seeds={}, objective=0.0, gap=0.0)
                 for _ in c_cells]
        seconds = [0.0] * len(c_cells)
        n_cells = len(c_cells)
        for q in range(len(self.pair_ids)):
            pair = self.pair(q)
            kd = pair.kernel_data(kernel)
            cache = smo.RowCache(len(pair.pts), self.cache_mb) if self.share_rows else None
            by_fold = {}
            for ci, (c_key, C) in enumerate(c_cells[:n_cells]):
                if q == 0 and (stop is not None and stop()):
                    n_cells = ci
                    break
                t0 = time.perf_counter()
                prev = None
                dec_rows = []
                for f in fold_ids:
                    fp = self._fold_pair(q, f)
                    test = self.folds[f]
                    if not fp.complete:
                        # a class absent from the fold's training rows: LIBSVM trains no
                        # such pair; a two-class problem predicts the class it has
                        if single:
                            has_a = bool(np.any(self.cls[fp.rows] == pair.a))
                            dec_rows.append((test, np.full(len(test), 1.0 if has_a else -1.0)))
                        prev = None
                        continue
                    sol, st = self._solve(pair, kd, cache, fp, C, by_fold.get(f), prev)
                    s = stats[ci]
                    s["iterations"] += st["iterations"]
                    s["misses"] += st["misses"]
                    s["solves"] += 1
                    s["seeds"][st["seed"]] = s["seeds"].get(st["seed"], 0) + 1
                    s["objective"] += st["objective"]
                    s["gap"] += st["gap"]
                    dec = self._decision(pair, kd, cache, sol, test)
                    sol.held, sol.held_dec = test, dec * fp.sign
                    by_fold[f] = sol
                    prev = sol
                    dec_rows.append((test, sol.held_dec))
                seconds[ci] += time.perf_counter() - t0
                if single:
                    rows = np.concatenate([r for r, _ in dec_rows])
                    d = np.concatenate([v for _, v in dec_rows])
                    pred = np.where(d > 0, self.labels[pair.a], self.labels[pair.b])
                    report(Piece(c_key, g_key, tuple(fold_ids), rows, pred, seconds[ci],
                                 stats[ci]))
                else:
                    for rows, d in dec_rows:
                        winner = np.where(d > 0, pair.a, pair.b)
                        np.add.at(votes[ci], (rows, winner), 1)
        if not single:
            for ci, (c_key, _) in enumerate(c_cells[:n_cells]):
                v = votes[ci][held]
                pred = self.labels[np.argmax(v, axis=1)]
                report(Piece(c_key, g_key, tuple(fold_ids), held, pred, seconds[ci],
                             stats[ci]))

    def _one_class_only(self, g_key, c_cells, fold_ids, report):
        held = np.concatenate([self.folds[f] for f in fold_ids])
        for c_key, _ in c_cells:
            report(Piece(c_key, g_key, tuple(fold_ids), held,
                         np.full(len(held), self.labels[0] if len(self.labels) else 0.0)))

    def _fold_pair(self, q, f):
        key = ("fp", q, f)
        pair = self.pair(q)
        with self._lock:
            fp = self._pairs.get(key)
            if fp is None:
                fp = _FoldPair(pair, self.train[f], self.cls, self.plus_first)
                self._pairs[key] = fp
        return fp

    # --------------------------------------------------------------------------------------------

    def _solve(self, pair, kd, cache, fp, C, same_fold, prev_fold):
        m = len(fp.rows)
        Cv = C * np.where(fp.yb > 0, self.wc[fp.weight_pos], self.wc[fp.weight_neg])
        if self.W is not None:
            Cv = Cv * self.W[fp.rows]
        kw = {}
        a0 = np.zeros(m)
        seed = "cold"
        mode = self.seed_mode
        if mode == "fold" and prev_fold is not None and cache is not None and \
                prev_fold.fp is not fp:
            a0, G0, Gb0 = self._fold_seed(pair, kd, cache, fp, Cv, prev_fold)
            kw = dict(G0=G0, G_bar0=Gb0)
            seed = "fold"
        elif mode in ("fold", "c") and same_fold is not None:
            a0, kw = _c_seed(same_fold, Cv)
            seed = "c"
        # a seeded start shrinks at once: most variables are at their bounds already (on
        # ijcnn1's grid a few more iterations, less time than after LIBSVM's 1000)
        res = smo.solve(kd, fp.xi, fp.yb, -np.ones(m), Cv, a0, eps=self.eps,
                        shrinking=self.shrinking, cache_mb=self.cache_mb, rows=cache,
                        shrink_first=seed != "cold", **kw)
        sol = _Solution(alpha=res.alpha, G=res.G,
                        G_bar=res.G_bar if np.array_equal(res.in_gbar != 0, res.alpha >= Cv)
                        else None, C=Cv, rho=res.rho, fp=fp)
        return sol, {"iterations": res.iterations, "misses": res.extra["cache_misses"],
                     "seed": seed, "objective": res.obj, "gap": res.gap}

    def _fold_seed(self, pair, kd, cache, fp, Cv, prev):
        """The previous fold's solution moved onto this fold's rows (see the module doc)."""
        n = self.n
        pfp = prev.fp
        alpha_of = np.full(n, -1.0)
        alpha_of[pfp.rows] = prev.alpha
        dec = np.zeros(n)            # canonical decision values under the previous model
        dec[pfp.rows] = pfp.sign * (pfp.yb * (prev.G + 1.0) - prev.rho)
        dec[prev.held] = prev.held_dec
        a0 = alpha_of[fp.rows]
        new = a0 < 0
        margin = fp.yb * fp.sign * dec[fp.rows]
        a0[new] = np.where(margin[new] < 1.0, Cv[new], 0.0)
        d = float(fp.yb @ a0)
        if d != 0.0:
            side = 1.0 if d > 0 else -1.0
            idx = np.flatnonzero((fp.yb == side) & (a0 > 0))
            idx = idx[np.argsort(-margin[idx], kind="stable")]
            take = np.minimum(a0[idx], np.maximum(0.0, abs(d) - (np.cumsum(a0[idx]) - a0[idx])))
            a0[idx] -= take
        G0 = fp.yb * self._expand(kd, cache, fp.xi, fp.xi, a0 * fp.yb) - 1.0
        upper = a0 >= Cv
        Gb0 = fp.yb * self._expand(kd, cache, fp.xi[upper], fp.xi, (Cv * fp.yb)[upper]) \
            if upper.any() else np.zeros(len(a0))
        return a0, G0, Gb0

    def _expand(self, kd, cache, src, cols, coef):
        """sum_s coef_s K(x_src[s], x_t) for the data points ``cols`` (local indices), from
        the cached rows where present, else computed."""
        from svmtool.selection._gather_jit import gather_expansion

        nz = np.flatnonzero(coef != 0.0)
        src, coef = np.ascontiguousarray(src[nz]), np.ascontiguousarray(coef[nz])
        out = np.zeros(len(cols))
        if len(src) == 0:
            return out
        slots = cache.slot_of[src]
        ok = slots >= 0
        ok[ok] = cache.slot_epoch[slots[ok]] < 0
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        if ok.any():
            gather_expansion(cache.cache, np.ascontiguousarray(slots[ok]), coef[ok], cols, out)
        if not ok.all():
            out += kd.expansion(cols, src[~ok], coef[~ok])
        return out

    def _decision(self, pair, kd, cache, sol, test):
        """Decision values (the fold's own sign) of the held-out rows ``test``."""
        fp = sol.fp
        coef = sol.alpha * fp.yb
        nz = np.flatnonzero(coef)
        loc = pair.local[test]
        inside = loc >= 0
        dec = np.zeros(len(test))
        if cache is not None and inside.any():
            dec[inside] = self._expand(kd, cache, fp.xi[nz], loc[inside], coef[nz])
            scale = float(np.abs(coef).sum())
            redo = np.flatnonzero(inside & (np.abs(dec - sol.rho) <= RECHECK * scale))
        else:
            redo = np.flatnonzero(inside)
        outside = np.flatnonzero(~inside)
        exact = np.concatenate([redo, outside])
        if len(exact) and len(nz):
            dec[exact] = kernel_expansion(self.X, test[exact], self.X, fp.rows[nz], coef[nz],
                                          kd.kernel, threads=1)
        elif len(exact):
            dec[exact] = 0.0
        return dec - sol.rho


def _c_seed(prev, Cv):
    """alpha seeding along C: the previous solution scaled by C'/C (see the module doc; with
    instance weights every C_i is the cell's C times a fixed factor > 0, so the ratio of the
    first variable's is C'/C too)."""
    s = float(Cv[0] / prev.C[0]) if prev.C[0] > 0 else 1.0
    at_upper = prev.alpha >= prev.C
    a0 = np.where(at_upper, Cv, np.minimum(prev.alpha * s, Cv))
    kw = {"G0": s * (prev.G + 1.0) - 1.0}
    if prev.G_bar is not None:
        kw["G_bar0"] = s * prev.G_bar
    return a0, kw

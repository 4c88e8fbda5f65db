"""Choosing C by cross validation along a warm-started path (LIBLINEAR's ``train -C``).

What it does (Chu, Hsieh, Lin & Chen, "Warm start for parameter selection of linear classifiers",
KDD 2015, as LIBLINEAR 2.x implements it in ``find_parameters``):

* the rows are split once into ``nr_fold`` folds (contiguous slices of a seeded permutation);
* ``C`` runs over the doubling path ``C_0, 2 C_0, 4 C_0, ...`` up to ``max_C`` (1024), from a
  computed start below which the cross-validated predictions cannot change:
  ``C_0 = 2^floor(log2(1 / (k l max_i |x_i|^2)))`` with ``k = 1`` for logistic regression and the
  L1 loss, ``k = 2`` for the L2 (squared hinge) loss -- for smaller ``C`` every example lies
  inside the margin (or the logistic loss is in its linear regime), so ``w`` is a multiple of
  ``X'y`` and the predictions do not depend on ``C``;
* at each ``C`` every fold's model is trained starting from that fold's model at the previous
  ``C`` (``init_w`` for the Newton solvers; the dual solvers, which LIBLINEAR's -C does not
  offer, start from the previous ``alpha``, still feasible for a larger C), the held-out rows
  are predicted, and the accuracy over all rows is printed;
* the search stops early when no fold's ``w`` has changed (norm of the change <= 1e-15) for five
  consecutive values of ``C``: the solvers' relative stopping rule is then met at the warm start
  and the accuracy can no longer change;
* the best ``C`` is the first one with the highest accuracy.

For support vector regression with the primal solver (``svr-l2``, LIBLINEAR's -s 11) the search
is over C and the tube width p together, as LIBLINEAR 2.4x does: p runs down a grid of 20 values
``i max_i|y_i| / 20`` (i = 19, ..., 0; from the user's p downwards when -p is given) and, for each
p, C runs the doubling path (up to 2^20) from LIBLINEAR's regression start
``0.01 sum_i max(|y_i| - p, 0)^2 / (8 (sum_i |y_i|)^2 max_i |x_i|^2)`` (rounded down to a power
of two); the score is the cross-validated mean squared error, and the best (C, p) is the first
with the lowest.

Folds run in parallel threads when ``threads > 1`` (each fold's solver then runs on one thread;
the jitted passes release the GIL), so the path and the chosen ``C`` do not depend on the thread
count.
"""

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

from svmtool.labels import class_index, class_weights, group_classes
from svmtool.problem import with_bias
from svmtool.errors import ParameterError
from svmtool.solvers.common.train_one import train_one

MAX_C = 1024.0
MAX_C_SVR = 1048576.0
P_STEPS = 20
UNCHANGED_STOP = 5


@dataclass
class SearchResult:
    best_C: float
    best_rate: float                       # accuracy in [0, 1] (regression: the MSE)
    path: list = field(default_factory=list)   # [(C, rate, seconds)] ([(C, p, mse, seconds)])
    stopped: str = ""                      # why the path ended
    elapsed: float = 0.0
    best_p: float = -1.0                   # regression: the best tube width


def start_C(problem, params):
    """LIBLINEAR's ``calc_start_C`` for the solver of ``params`` (bias column included)."""
    from svmtool.solvers import get_spec

    spec = get_spec(params.solver)
    lo, hi = int(problem.indptr[0]), int(problem.indptr[-1])
    rows = np.repeat(np.arange(problem.n_rows), np.diff(problem.indptr))
    vals = problem.data[lo:hi]
    sq = np.bincount(rows, weights=vals * vals, minlength=problem.n_rows)
    if params.bias >= 0:
        sq = sq + params.bias * params.bias
    max_xtx = float(np.max(sq)) if len(sq) else 0.0
    if max_xtx <= 0.0:
        return 1.0
    l = problem.n_rows
    name = spec.liblinear_type
    if spec.task == "regression":
        y_abs = np.abs(np.asarray(problem.y, dtype=np.float64))
        p = float(params.svr.p)
        loss = float(np.sum(np.maximum(y_abs - p, 0.0) ** 2))
        sum_y = float(np.sum(y_abs))
        if not loss > 0:
            return math.inf
        min_c = 0.1 * 0.1 * loss / (8.0 * sum_y * sum_y * max_xtx)
        return 2.0 ** math.floor(math.log2(min_c))
    if name in ("L2R_L2LOSS_SVC", "L2R_L2LOSS_SVC_DUAL"):
        min_c = 1.0 / (2.0 * l * max_xtx)
    else:
        min_c = 1.0 / (l * max_xtx)
    return 2.0 ** math.floor(math.log2(min_c))


def fold_split(n, nr_fold, seed):
    """(perm, bounds): fold f holds rows perm[bounds[f]:bounds[f+1]]."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    bounds = [f * n // nr_fold for f in range(nr_fold + 1)]
    return perm, bounds


class _FoldTrainer:
    """One fold's training set, prepared once for every C of the path (what ``api.train`` does
    per call: class grouping, bias column, one-vs-rest labels; plus one row-pass oracle for the
    Newton solvers), and its previous solution for the warm start."""

    def __init__(self, sub, held, rows, params, spec, threads):
        self.held, self.rows = held, rows
        self.params, self.spec = params, spec
        self.regression = spec.task == "regression"
        self.arrays = with_bias(sub, params.bias)
        self.n_features = sub.n_features
        # the fold's instance weights (take_rows carried them), handed to every fit
        self.more = {} if sub.weights is None else {"weights": sub.weights}
        if self.regression:
            self.labels = None
            self.tasks = [0]
            self.yb = [np.ascontiguousarray(sub.y, dtype=np.float64)]
        else:
            labels, _, _, _ = group_classes(sub.y)
            self.labels = labels
            cls = class_index(sub.y, labels)
            self.tasks = [0] if len(labels) == 2 else list(range(len(labels)))
            self.yb = [np.where(cls == i, 1.0, -1.0) for i in self.tasks]
        self.fit = spec.load()
        self.oracle = None
        if _takes_oracle(self.fit):
            # a solver of row passes: one oracle for every C of the path
            from svmtool.engine.local import LocalOracle

            ip, ix, d, nc = self.arrays
            self.oracle = LocalOracle(ip, ix, d, nc, threads=threads)
        self.threads = threads
        self.w = None            # previous solution, (n_cols, len(tasks))
        self.alpha = [None] * len(self.tasks)

    def train_predict(self, C):
        from svmtool.models.linear import LinearModel

        params = replace(self.params, C=C, threads=self.threads)
        ip, ix, d, nc = self.arrays
        W = np.zeros((nc, len(self.tasks)))
        if self.regression:
            init_w = None if self.w is None else self.w[:, 0]
            kw = {} if self.oracle is None else {"oracle": self.oracle}
            res = self.fit(ip, ix, d, self.yb[0], nc, C, C, params, init_w=init_w, **kw,
                           **self.more)
            W[:, 0] = res.w
            model = LinearModel(solver_type=self.spec.liblinear_type, labels=None,
                                nr_feature=self.n_features, bias=float(params.bias), w=W)
            return W, model.decision_function(self.held)[:, 0]
        wc = class_weights(params, self.labels)
        for col, i in enumerate(self.tasks):
            c_pos, c_neg = (wc[0], wc[1]) if len(self.labels) == 2 else (wc[i], params.C)
            init_w = None if self.w is None else self.w[:, col]
            p = params
            if self.oracle is None and self.alpha[col] is not None:
                # the dual solvers start from the previous alpha: still feasible for a larger C
                p = replace(params, dcd=replace(params.dcd, init_alpha=self.alpha[col]))
            res = train_one(self.spec, self._solver(self.yb[col], c_pos, c_neg), p, init_w,
                            weighted=bool(self.more))
            if res.alpha is not None:
                self.alpha[col] = res.alpha
            W[:, col] = res.w
        model = LinearModel(solver_type=self.spec.liblinear_type, labels=self.labels,
                            nr_feature=self.n_features, bias=float(params.bias), w=W)
        labels = model.predict(model.decision_function(self.held))
        return W, labels


    def _solver(self, yb, c_pos, c_neg):
        """solve(spec, params, init_w) of train_one on this fold's arrays (the path's oracle
        for the solver whose fit takes one)."""
        ip, ix, d, nc = self.arrays

        def solve(s, p, w0):
            fit = self.fit if s is self.spec else s.load()
            kw = {"oracle": self.oracle} if fit is self.fit and self.oracle is not None else {}
            return fit(ip, ix, d, yb, nc, c_pos, c_neg, p, init_w=w0, **kw, **self.more)

        return solve


def _takes_oracle(fit):
    """Whether a fit takes a prebuilt row oracle (``oracle=``): the Newton solvers' do."""
    import inspect

    return "oracle" in inspect.signature(fit).parameters


def find_c(problem, params, nr_fold=5, *, start=None, max_C=None, threads=None, report=None,
           start_p=None):
    """Cross-validated accuracy along the doubling path of C; returns :class:`SearchResult`.

    ``report(C, rate)`` is called after each C (the CLI prints LIBLINEAR's ``log2c=`` line);
    for ``svr-l2`` the search is over (C, p), ``report(C, rate, p)`` gets the MSE, and
    ``start_p`` (the user's -p) is where the p grid starts.
    """
    from svmtool.params import check_cross_validation, refuse
    from svmtool.problem import refuse_weights

    t_start = time.perf_counter()
    params, spec, regression = _search_params(problem, params)
    if not spec.instance_weights:
        refuse_weights(problem, f"solver {spec.name}")
    n = problem.n_rows
    refuse(check_cross_validation(params, nr_fold))
    if nr_fold > n:
        nr_fold = n
    workers = api_threads(threads if threads is not None else params.threads)
    inner_threads = 1 if workers > 1 else params.threads
    subsets = _fold_subsets(problem, nr_fold, params.seed)

    def folds_for(p):
        return [_FoldTrainer(sub, held, rows, p, spec, inner_threads)
                for sub, held, rows in subsets]

    pool = ThreadPoolExecutor(max_workers=min(workers, nr_fold)) if workers > 1 else None
    try:
        if not regression:
            if max_C is None:
                max_C = MAX_C
            if start is None or start <= 0:
                start = start_C(problem, params)
            res = _c_path(problem, folds_for(params), min(float(start), float(max_C)),
                          float(max_C), pool, report, regression=False)
        else:
            res = _p_grid(problem, params, folds_for, start, start_p,
                          MAX_C_SVR if max_C is None else max_C, pool, report)
    finally:
        if pool is not None:
            pool.shutdown()
    res.elapsed = time.perf_counter() - t_start
    return res


def _search_params(problem, params):
    """(params, spec, regression): the run's parameters (eps the solver's default when unset),
    its solver checked to be one -C can search, and the labels checked for it."""
    from svmtool.params import for_one_run, make_params
    from svmtool.solvers import get_spec

    params = for_one_run(make_params(params, {}))
    spec = get_spec(params.solver)
    regression = spec.task == "regression"
    if regression and spec.warm_start != "w":
        from svmtool.solvers import specs

        them = " or ".join(f"-s {s.name} (LIBLINEAR's -s {s.liblinear_id})" for s in specs()
                           if s.task == "regression" and s.warm_start == "w")
        raise ParameterError(f"-C for regression searches C and p with {them}, not {spec.name}")
    if spec.kind not in ("binary",) and not regression:
        raise ParameterError(f"-C needs a linear classification solver, not {spec.name}")
    if params.eps is None:
        params = replace(params, eps=spec.default_eps)
    if not regression:
        from svmtool.labels import check_class_labels

        check_class_labels(problem.y, spec.name, problem.source, problem.label_note)
    return params, spec, regression


def _fold_subsets(problem, nr_fold, seed):
    """Per fold: (the training rows' problem, the held-out rows' problem, the held-out rows)."""
    perm, bounds = fold_split(problem.n_rows, nr_fold, seed)
    subsets = []
    for f in range(nr_fold):
        test = perm[bounds[f]:bounds[f + 1]]
        train_rows = np.sort(np.concatenate([perm[:bounds[f]], perm[bounds[f + 1]:]]))
        subsets.append((problem.take_rows(train_rows), problem.take_rows(test), test))
    return subsets


def _p_grid(problem, params, folds_for, start, start_p, max_C, pool, report):
    """SVR's search, as LIBLINEAR's: a C path for each p of the grid i max|y| / P_STEPS, from
    the largest p (or the user's -p) down to 0; the best (lowest MSE) path wins, every path's
    points are kept in order."""
    max_p = float(np.max(np.abs(problem.y))) if problem.n_rows else 0.0
    i = P_STEPS - 1
    if start_p is not None and start_p > 0 and max_p > 0:
        i = min(int(start_p / (max_p / P_STEPS)), i)
    res = None
    while i >= 0:
        p_params = replace(params, svr=replace(params.svr, p=i * max_p / P_STEPS))
        c0 = start if start is not None and start > 0 else start_C(problem, p_params)
        one = _c_path(problem, folds_for(p_params), min(float(c0), float(max_C)),
                      float(max_C), pool, report, regression=True, p=p_params.svr.p)
        if res is None or one.best_rate < res.best_rate:
            one.path = (res.path if res else []) + one.path
            res = one
        else:
            res.path += one.path
            if one.stopped.startswith("maximum"):
                res.stopped = one.stopped
        i -= 1
    return res


def _c_path(problem, folds, C, max_C, pool, report, regression, p=-1.0):
    """One doubling path of C over prepared folds (LIBLINEAR's ``find_parameter_C``)."""
    n = problem.n_rows
    pred = np.empty(n, dtype=np.float64)
    best_C = C
    best = math.inf if regression else -1.0
    unchanged = 0
    path = []
    stopped = "maximum C reached"
    while C <= max_C:
        t0 = time.perf_counter()
        outs, changed = folds_at(folds, C, pool)
        for fold, (_, values) in zip(folds, outs):
            pred[fold.rows] = values
        if regression:
            score = float(np.mean((pred - problem.y) ** 2))
            path.append((C, p, score, time.perf_counter() - t0))
            if score < best:
                best_C, best = C, score
            if report is not None:
                report(C, score, p)
        else:
            score = float(np.mean(pred == problem.y))
            path.append((C, score, time.perf_counter() - t0))
            if score > best:
                best_C, best = C, score
            if report is not None:
                report(C, score)
        # LIBLINEAR counts the first C as unchanged too (no previous w to compare with)
        unchanged = 0 if changed else unchanged + 1
        if unchanged >= UNCHANGED_STOP:
            stopped = f"no fold's model changed for {UNCHANGED_STOP} values of C"
            break
        C *= 2.0
    return SearchResult(best_C=best_C, best_rate=best, path=path, stopped=stopped,
                        best_p=p)


def folds_at(folds, C, pool=None):
    """Every fold trained at C from its previous solution and its held-out rows predicted:
    ([(w, predictions)] in fold order, whether any fold's w moved by more than 1e-15 -- the
    test of LIBLINEAR's early end of the path).  Each fold keeps its new w."""
    if pool is not None:
        outs = list(pool.map(lambda fold: fold.train_predict(C), folds))
    else:
        outs = [fold.train_predict(C) for fold in folds]
    changed = False
    for fold, (w, _) in zip(folds, outs):
        if fold.w is not None and math.sqrt(float(np.sum((w - fold.w) ** 2))) > 1e-15:
            changed = True
        fold.w = w
    return outs, changed


def api_threads(threads):
    from svmtool.ops.cores import default_threads

    return default_threads() if threads is None else max(1, int(threads))

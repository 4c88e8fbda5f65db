"""LIBSVM's ``svm_train`` for its five problems: a KernelModel in LIBSVM's layout.

``-s c_svc`` / ``nu_svc``: one binary problem per pair of classes (i, j), i < j, on the rows of
the two classes with y = +1 for class i (classes grouped as LIBSVM groups them: first
appearance, +1 first in a {-1, +1} problem); C-SVC gives class i the bound ``C w_i`` and class
j ``C w_j`` (``-wLABEL``).  The pairs run on threads when there are several.  Support vectors
are laid out class by class with their K-1 coefficients, one rho per pair, as ``svm_train``
lays out its model.  ``one_class``, ``epsilon_svr``, ``nu_svr``: one problem on all rows in
file order.  The solver of each problem is :mod:`svmtool.solvers.kernel.smo`.

``-b 1`` (``params.libsvm.probability``), LIBSVM's probability models:

* classification: for every pair, decision values of 5-fold cross-validation inside the pair
  (each fold trained as the pair itself), then Platt's sigmoid ``P(y = 1 | f) = 1 / (1 +
  exp(A f + B))`` fitted to them by the Newton method with backtracking of Lin, Lin and Weng
  ("A note on Platt's probabilistic outputs for support vector machines", 2007): ``probA``,
  ``probB`` per pair;
* regression: the errors of 5-fold cross-validation give ``sigma`` of a Laplace model (the mean
  absolute error over the errors within 5 standard deviations): ``probA``;
* one-class: ten density marks of the training decision values (the binning of Que and Lin):
  ``prob_density_marks``.

The folds come from a seeded generator (``params.libsvm.seed``), not LIBSVM's ``rand()``, so
probability models agree with LIBSVM's statistically, not digit for digit.

What LIBSVM prints while training (``optimization finished, #iter = ...``, ``obj = ..., rho =
...``, ``nSV = ..., nBSV = ...``, ``Total nSV = ...`` and the lines of each problem type) is
collected in ``model.report["libsvm_lines"]`` in LIBSVM's order, for the command line to print.
"""

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
import numpy as np

from svmtool.errors import ParameterError
from svmtool.labels import class_index, class_weights, group_classes
from svmtool.models.kernel import KernelModel
from svmtool.ops.kernels import Kernel, Rows, n_threads
from svmtool.ops.rows import take_rows
from svmtool.problem import without_zero_weights
from svmtool.solvers.kernel import smo

LIBSVM_TYPES = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
NR_FOLD = 5


class Setup:
    """What every subproblem shares: the rows, the kernel, the precomputed matrix's columns."""

    def __init__(self, problem, params):
        kp = params.kernel
        self.X = Rows(problem.indptr, problem.indices, problem.data,
                      n_features=problem.n_features)
        self.ktype = int(kp.kernel_type)
        gamma = kp.gamma
        if gamma is None or gamma == 0:
            gamma = 1.0 / problem.n_features if problem.n_features > 0 else 0.0
        self.kernel = Kernel(self.ktype, float(gamma), float(kp.coef0), int(kp.degree), 0.0)
        self.params = params
        self.weights = None if problem.weights is None else \
            np.asarray(problem.weights, dtype=np.float64)
        self.pre = None
        if self.ktype == 4:
            self.pre = precomputed_columns(problem)

    def data(self, rows, threads=None):
        """KernelData of the given rows (indices into the problem), its passes on ``threads``
        threads (None: the default count)."""
        rows = np.asarray(rows, dtype=np.int64)
        Xs = take_rows(self.X, rows)
        kmat = None
        if self.pre is not None:
            D, serial = self.pre
            kmat = D[np.ix_(rows, serial[rows])]
        return smo.KernelData(Xs, self.kernel, kmat, threads)

    def weights_of(self, rows):
        """The instance weights of these problem rows (None: every row weighs 1)."""
        return None if self.weights is None else self.weights[np.asarray(rows, dtype=np.int64)]

    def sv_rows(self, rows):
        """The support vectors of these problem rows as a model stores them (for -t 4: the
        serial number alone, LIBSVM's ``0:serial``)."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.pre is None:
            return take_rows(self.X, rows)
        m = len(rows)
        return Rows(np.arange(m + 1, dtype=np.int64), np.zeros(m, dtype=np.int32),
                    self.pre[1][rows].astype(np.float64), n_features=self.X.n_features)

    def solve_kw(self, params=None):
        p = self.params if params is None else params
        return {"eps": float(p.eps), "shrinking": bool(p.shrinking),
                "cache_mb": float(p.kernel.cache_mb), "max_iter": p.max_iter,
                "deadline": p.deadline, "threads": p.threads}


def precomputed_columns(problem):
    """-t 4 (LIBSVM's precomputed kernel; data read with zero-based indices): row i holds its
    serial number in column 0 and K(x_i, x_s) in column s.  Returns (dense rows, serials)."""
    from svmtool.errors import DataFormatError

    X = Rows(problem.indptr, problem.indices, problem.data, n_features=problem.n_features)
    width = max(problem.n_features, 1)
    D = X.dense(width)
    serial = D[:, 0]
    n = problem.n_rows
    bad = np.flatnonzero((serial != np.floor(serial)) | (serial < 1) | (serial > width - 1))
    if len(bad):
        i = int(bad[0])
        raise DataFormatError(problem.source, None,
                              f"example {i + 1}: precomputed kernel (-t 4) needs 0:<serial "
                              f"number> with 1 <= serial <= {width - 1} (got 0:{serial[i]:g})")
    return D, serial.astype(np.int64)


# ------------------------------------------------------------------------------------------------

def _solve(setup, rows, svm_type, yb, Cp, Cn, kw):
    kw = dict(kw, W=setup.weights_of(rows))
    kd = setup.data(rows, kw.pop("threads", None))
    p = setup.params
    if svm_type == "c_svc":
        return smo.solve_c_svc(kd, yb, Cp, Cn, **kw)
    if svm_type == "nu_svc":
        return smo.solve_nu_svc(kd, yb, float(p.oneclass.nu), **kw)
    if svm_type == "one_class":
        return smo.solve_one_class(kd, float(p.oneclass.nu), **kw)
    if svm_type == "epsilon_svr":
        return smo.solve_epsilon_svr(kd, yb, float(p.C), float(p.svr.p), **kw)
    return smo.solve_nu_svr(kd, yb, float(p.C), float(p.oneclass.nu), **kw)


def solution_lines(sol):
    out = [f"optimization finished, #iter = {sol.iterations}"]
    out += sol.notes
    out.append("obj = %f, rho = %f" % (sol.obj, sol.rho))
    out.append("nSV = %d, nBSV = %d" % (sol.n_sv, sol.n_bsv))
    return out


def _pair_report(sol, label, pair=None):
    r = {"label": float(label), "iterations": int(sol.iterations),
         "primal": float(-sol.obj + sol.gap), "dual": float(-sol.obj), "gap": float(sol.gap),
         "gap_kind": "duality gap", "converged": bool(sol.converged), "n_sv": int(sol.n_sv),
         "n_bsv": int(sol.n_bsv), "obj": float(sol.obj), "rho": float(sol.rho),
         "max_violation": float(sol.violation)}
    if pair is not None:
        r["pair"] = pair
    for k, v in sol.extra.items():
        if isinstance(v, (int, float, str, bool)):
            r[k] = v
    if not sol.converged:
        r["warning"] = ("reaching the maximal number of iterations" if
                        sol.extra.get("stopped") == "iterations" else
                        "stopped by the time limit") + " before the stopping rule was met"
    return r


def check_nu_feasible(svm_type, nu, counts):
    """LIBSVM refuses a nu-SVC nu that no pair of classes can meet (``counts``: the rows of
    each class, or their summed instance weights)."""
    if svm_type != "nu_svc":
        return
    for i in range(len(counts)):
        for j in range(i + 1, len(counts)):
            if nu * (counts[i] + counts[j]) / 2 > min(counts[i], counts[j]):
                raise ParameterError("specified nu is infeasible")


def train_libsvm(problem, params, spec, callback=None, init_model=None):
    """Train ``spec``'s LIBSVM problem on ``problem``; a KernelModel (see the module doc)."""
    t0 = time.perf_counter()
    problem = without_zero_weights(problem)
    setup = Setup(problem, params)
    if spec.liblinear_type in ("one_class", "epsilon_svr", "nu_svr"):
        model, reports, lines = _train_whole(problem, params, spec.liblinear_type, setup,
                                             callback)
    else:
        model, reports, lines = _train_pairs(problem, params, spec.liblinear_type, setup,
                                             callback)
    _finish_model(model, spec, params, setup, reports, lines, t0)
    return model


def _train_whole(problem, params, svm_type, setup, callback):
    """One-class SVM and the SVRs: one problem over every row; (model, reports, lines)."""
    kw = setup.solve_kw()
    lines = []
    prob_on = bool(params.libsvm.probability)
    rows = np.arange(problem.n_rows)
    z = np.asarray(problem.y, dtype=np.float64)
    extra = {}
    if prob_on and svm_type != "one_class":
        sigma, cv_lines = svr_sigma(setup, svm_type, z, kw, params.libsvm.seed)
        lines += cv_lines
    cb = None if callback is None else (lambda it, info: callback(0, it, info))
    sol = _solve(setup, rows, svm_type, z, 0.0, 0.0, dict(kw, callback=cb))
    lines += solution_lines(sol)
    nz = np.flatnonzero(sol.coef != 0)
    svs = setup.sv_rows(nz)
    model = KernelModel(kernel=setup.kernel, labels=None, rho=np.array([sol.rho]),
                        nr_sv=None, sv_indptr=svs.indptr, sv_indices=svs.indices,
                        sv_data=svs.data, sv_coef=sol.coef[nz][None, :],
                        nr_feature=problem.n_features, svm_type=svm_type)
    if prob_on and svm_type != "one_class":
        model.probA = np.array([sigma])
        lines.append("Prob. model for test data: target value = predicted value + z,")
        lines.append("z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma= %g" % sigma)
    elif prob_on:
        marks, warn = density_marks(_decision(setup, rows, nz, sol.coef[nz], sol.rho))
        if marks is None:
            extra["notice"] = warn
        model.prob_density_marks = marks
    return model, [dict(_pair_report(sol, 0.0), **extra)], lines


def _train_pairs(problem, params, svm_type, setup, callback):
    """C-SVC and nu-SVC: one-vs-one over the pairs of classes, on threads; (model, reports,
    lines)."""
    labels, perm, start, count = group_classes(problem.y)
    cls = class_index(problem.y, labels)
    K = len(labels)
    check_nu_feasible(svm_type, float(params.oneclass.nu), count if setup.weights is None else
                      np.bincount(cls, weights=setup.weights, minlength=K))
    wc = class_weights(params, labels)
    members = [np.flatnonzero(cls == c) for c in range(K)]
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    n_thr = min(n_threads(params.threads), len(pairs))
    kw = setup.solve_kw()
    # pairs at once on n_thr threads: each its share of the cache and of the threads
    pair_kw = kw if n_thr <= 1 else dict(kw, cache_mb=kw["cache_mb"] / n_thr,
                                         threads=max(1, n_threads(params.threads) // n_thr))
    lines = []
    if K == 1:
        lines.append("WARNING: training data in only one class. See README for details.")

    def fit_pair(q):
        i, j = pairs[q]
        rows = np.concatenate([members[i], members[j]])
        yb = np.concatenate([np.ones(len(members[i])), -np.ones(len(members[j]))])
        out = []
        ab = None
        if params.libsvm.probability:
            ab, cv_lines = binary_probability(setup, rows, svm_type, yb, wc[i], wc[j], pair_kw,
                                              params.libsvm.seed + q)
            out += cv_lines
        cb = None
        if callback is not None:
            cb = (lambda it, info, _q=q: callback(_q, it, info))
        sol = _solve(setup, rows, svm_type, yb, wc[i], wc[j], dict(pair_kw, callback=cb))
        out += solution_lines(sol)
        return sol, ab, out

    if n_thr > 1:
        with ThreadPoolExecutor(n_thr) as pool:
            results = list(pool.map(fit_pair, range(len(pairs))))
    else:
        results = [fit_pair(q) for q in range(len(pairs))]
    model, reports = _pairs_model(problem, params, svm_type, setup, labels, members, pairs,
                                  results, lines)
    return model, reports, lines


def _pairs_model(problem, params, svm_type, setup, labels, members, pairs, results, lines):
    """The one-vs-one KernelModel in LIBSVM's layout (support vectors class by class, each
    with its K-1 coefficients) and the pairs' reports; the pairs' lines go to ``lines``."""
    K = len(labels)
    nonzero = [np.zeros(len(m), dtype=bool) for m in members]
    for (i, j), (sol, _, out) in zip(pairs, results):
        ni = len(members[i])
        nonzero[i] |= sol.coef[:ni] != 0
        nonzero[j] |= sol.coef[ni:] != 0
        lines += out
    nr_sv = np.array([int(nz.sum()) for nz in nonzero], dtype=np.int64)
    total = int(nr_sv.sum())
    lines.append(f"Total nSV = {total}")
    offset = np.concatenate([[0], np.cumsum(nr_sv)]).astype(np.int64)
    sv_coef = np.zeros((max(K - 1, 1), total))
    rho = []
    reports = []
    for q, ((i, j), (sol, _, _)) in enumerate(zip(pairs, results)):
        ni = len(members[i])
        sv_coef[j - 1, offset[i]:offset[i + 1]] = sol.coef[:ni][nonzero[i]]
        sv_coef[i, offset[j]:offset[j + 1]] = sol.coef[ni:][nonzero[j]]
        rho.append(sol.rho)
        reports.append(_pair_report(sol, labels[i], (float(labels[i]), float(labels[j]))))
    all_sv = np.concatenate([members[c][nonzero[c]] for c in range(K)]) if K else \
        np.zeros(0, dtype=np.int64)
    svs = setup.sv_rows(all_sv)
    model = KernelModel(kernel=setup.kernel, labels=labels, rho=np.array(rho), nr_sv=nr_sv,
                        sv_indptr=svs.indptr, sv_indices=svs.indices, sv_data=svs.data,
                        sv_coef=sv_coef[:K - 1] if K > 1 else sv_coef[:0],
                        nr_feature=problem.n_features, svm_type=svm_type)
    if params.libsvm.probability and K > 1:
        model.probA = np.array([ab[0] for _, ab, _ in results])
        model.probB = np.array([ab[1] for _, ab, _ in results])
    return model, reports


def _finish_model(model, spec, params, setup, reports, lines, t0):
    model.report = {"solver": spec.name, "train_time": time.perf_counter() - t0,
                    "classes": reports, "libsvm_lines": lines,
                    "params": {"C": params.C, "eps": params.eps, "kernel": setup.kernel.name,
                               "gamma": setup.kernel.gamma}}


# ------------------------------------------------------------------------------------------------
# probability models

def fold_bounds(n, nr_fold=NR_FOLD):
    return [i * n // nr_fold for i in range(nr_fold + 1)]


def shuffled_folds(n, seed, nr_fold=NR_FOLD):
    """(test rows, training rows) of each fold of one seeded shuffle of the n rows cut into
    nr_fold slices; the training rows in LIBSVM's order: those before the fold, then after it."""
    perm = np.random.default_rng(seed).permutation(n)
    b = fold_bounds(n, nr_fold)
    for f in range(nr_fold):
        yield perm[b[f]:b[f + 1]], np.concatenate([perm[:b[f]], perm[b[f + 1]:]])


def binary_probability(setup, rows, svm_type, yb, Cp, Cn, kw, seed):
    """Platt's (A, B) of one pair from 5-fold cross-validation decision values."""
    n = len(rows)
    dec = np.zeros(n)
    lines = []
    for test, train in shuffled_folds(n, seed):
        ytr = yb[train]
        n_pos = int(np.count_nonzero(ytr > 0))
        n_neg = len(train) - n_pos
        if n_pos == 0 and n_neg == 0:
            dec[test] = 0.0
        elif n_neg == 0:
            dec[test] = 1.0
        elif n_pos == 0:
            dec[test] = -1.0
        else:
            # LIBSVM keeps the training order of the fold: rows before the fold, rows after it;
            # a sub-problem groups +1 first (y in {+1, -1}), so its decision values are
            # oriented for +1 already
            sub_rows = rows[train]
            order = np.concatenate([np.flatnonzero(ytr > 0), np.flatnonzero(ytr < 0)])
            sol = _solve(setup, sub_rows[order], svm_type, ytr[order], Cp, Cn, kw)
            lines += solution_lines(sol)
            lines.append("Total nSV = %d" % sol.n_sv)
            nz = np.flatnonzero(sol.coef != 0)
            dec[test] = _decision(setup, rows[test], sub_rows[order][nz], sol.coef[nz], sol.rho)
    A, B = sigmoid_train(dec, yb)
    return (A, B), lines


def _decision(setup, targets, sv_rows, coef, rho):
    """sum_s coef_s K(x_t, x_s) - rho for the problem's rows ``targets``."""
    if len(targets) == 0:
        return np.zeros(0)
    if setup.pre is not None:
        D, serial = setup.pre
        return D[np.ix_(targets, serial[sv_rows])] @ coef - rho
    from svmtool.ops.kernels import kernel_expansion

    return kernel_expansion(setup.X, targets, setup.X, sv_rows, coef, setup.kernel) - rho


def sigmoid_train(dec, yb):
    """Platt's sigmoid by the Newton method of Lin, Lin and Weng (2007): minimise the
    cross-entropy with the regularised targets (N+ + 1)/(N+ + 2) and 1/(N- + 2), Hessian
    + 1e-12 I, backtracking (Armijo, 1e-4) down to steps of 1e-10, stop at |gradient| < 1e-5
    or after 100 iterations."""
    dec = np.asarray(dec, dtype=np.float64)
    pos = np.asarray(yb) > 0
    prior1 = float(pos.sum())
    prior0 = float(len(dec) - prior1)
    t = np.where(pos, (prior1 + 1.0) / (prior1 + 2.0), 1.0 / (prior0 + 2.0))

    def fval(A, B):
        f = dec * A + B
        return float(np.sum(np.where(f >= 0, t * f + np.log1p(np.exp(-np.abs(f))),
                                     (t - 1.0) * f + np.log1p(np.exp(-np.abs(f))))))

    A = 0.0
    B = math.log((prior0 + 1.0) / (prior1 + 1.0))
    fv = fval(A, B)
    for _ in range(100):
        f = dec * A + B
        e = np.exp(-np.abs(f))
        p = np.where(f >= 0, e / (1.0 + e), 1.0 / (1.0 + e))       # 1 / (1 + exp(f))
        q = 1.0 - p
        d2 = p * q
        h11 = 1e-12 + float(dec * dec @ d2)
        h22 = 1e-12 + float(d2.sum())
        h21 = float(dec @ d2)
        d1 = t - p
        g1 = float(dec @ d1)
        g2 = float(d1.sum())
        if abs(g1) < 1e-5 and abs(g2) < 1e-5:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= 1e-10:
            nA = A + step * dA
            nB = B + step * dB
            nf = fval(nA, nB)
            if nf < fv + 1e-4 * step * gd:
                A, B, fv = nA, nB, nf
                break
            step /= 2.0
        if step < 1e-10:
            break
    return A, B


def svr_sigma(setup, svm_type, z, kw, seed):
    """The Laplace sigma of the errors of 5-fold cross-validation (LIBSVM's svr probability)."""
    n = len(z)
    pred = np.zeros(n)
    lines = []
    for test, train in shuffled_folds(n, seed):
        sol = _solve(setup, train, svm_type, z[train], 0.0, 0.0, kw)
        lines += solution_lines(sol)
        nz = np.flatnonzero(sol.coef != 0)
        pred[test] = _decision(setup, test, train[nz], sol.coef[nz], sol.rho)
    err = z - pred
    mae = float(np.mean(np.abs(err))) if n else 0.0
    std = math.sqrt(2.0 * mae * mae)
    keep = np.abs(err) <= 5.0 * std
    sigma = float(np.mean(np.abs(err[keep]))) if keep.any() else mae
    return sigma, lines


def density_marks(dec, nr_marks=10):
    """One-class density marks from the sorted training decision values; (None, warning) with
    fewer than nr_marks / 2 values on either side of 0."""
    d = np.sort(np.asarray(dec, dtype=np.float64))
    n = len(d)
    nonneg = np.flatnonzero(d >= 0)
    neg = int(nonneg[0]) if len(nonneg) else 0
    pos = n - neg
    mid = nr_marks // 2
    if neg < mid or pos < mid:
        return None, (f"number of positive or negative decision values <{mid}; too few to do a "
                      f"probability estimation.")
    tmp = np.empty(nr_marks + 1)
    for i in range(mid):
        tmp[i] = d[i * neg // mid]
    tmp[mid] = 0.0
    for i in range(mid + 1, nr_marks + 1):
        tmp[i] = d[neg - 1 + (i - mid) * pos // mid]
    return (tmp[:-1] + tmp[1:]) / 2.0, None



# ------------------------------------------------------------------------------------------------
# cross-validation (svm-train -v)

def cv_folds(y, nr_fold, classification, seed):
    """LIBSVM's folds: for classification every class is shuffled and spread over the folds in
    proportion (stratified); otherwise one shuffle cut into nr_fold slices.  Returns the rows of
    each fold.  (The shuffles come from a seeded generator, not C's rand().)"""
    n = len(y)
    rng = np.random.default_rng(seed)
    if nr_fold > n:
        nr_fold = n
    if classification and nr_fold < n:
        labels, perm, start, count = group_classes(y)
        folds = [[] for _ in range(nr_fold)]
        for c in range(len(labels)):
            idx = perm[start[c]:start[c] + count[c]].copy()
            rng.shuffle(idx)
            for f in range(nr_fold):
                folds[f].append(idx[f * count[c] // nr_fold:(f + 1) * count[c] // nr_fold])
        return [np.concatenate(f) if f else np.zeros(0, dtype=np.int64) for f in folds]
    perm = rng.permutation(n)
    b = fold_bounds(n, nr_fold)
    return [perm[b[f]:b[f + 1]] for f in range(nr_fold)]


def cross_validation(problem, params, spec, nr_fold, lines=None):
    """The prediction of every row by the model trained on the other folds (svm-train -v):
    labels for classification (by probability with -b 1, as LIBSVM), values for regression,
    +1/-1 for the one-class SVM.  The folds' training lines are appended to ``lines``."""
    import warnings

    from svmtool.problem import Problem

    if params.eps is None:
        params = replace(params, eps=spec.default_eps)
    n = problem.n_rows
    if nr_fold > n:
        warnings.warn(f"# folds ({nr_fold}) > # data ({n}). Will use # folds = # data instead "
                      f"(i.e., leave-one-out cross validation)")
    classification = spec.liblinear_type in ("c_svc", "nu_svc")
    folds = cv_folds(problem.y, nr_fold, classification, params.libsvm.seed)
    X = Rows(problem.indptr, problem.indices, problem.data, n_features=problem.n_features)
    out = np.zeros(n)
    for test in folds:
        if len(test) == 0:
            continue
        mask = np.ones(n, dtype=bool)
        mask[test] = False
        train_rows = np.flatnonzero(mask)
        tr = take_rows(X, train_rows)
        sub = Problem(tr.indptr, tr.indices, tr.data, problem.y[train_rows], problem.n_features,
                      weights=None if problem.weights is None else
                      np.asarray(problem.weights)[train_rows])
        if spec.liblinear_type in LIBSVM_TYPES and int(params.kernel.kernel_type) != 4 and \
                (params.kernel.gamma is None or params.kernel.gamma == 0):
            # gamma's default comes from the whole training file, as svm-train computes it
            params = replace(params, kernel=replace(
                params.kernel, gamma=1.0 / problem.n_features if problem.n_features else 0.0))
        model = train_libsvm(sub, params, spec)
        if lines is not None:
            lines.extend(model.report["libsvm_lines"])
        te = take_rows(X, test)
        if classification and params.libsvm.probability and model.has_probability_model():
            _, pred = model.predict_with_probability(te)
        else:
            pred = model.predict(te)
        out[test] = pred
    return out

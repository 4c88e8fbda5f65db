"""One-vs-one driver of the kernel solvers (LIBSVM's ``svm_train`` for C-SVC): a KernelModel.

Every pair of classes (i, j), i < j, is a binary problem on the rows of the two classes, solved by
the registry's binary kernel solver (``-s kernel``: :mod:`svmtool.solvers.kernel.kernel_cd`), the
pairs on threads when there is more than one.  The pairs' dual solutions are laid out as LIBSVM
lays out a model: support vectors class by class, each with its K-1 coefficients, and one rho per
pair.  :class:`OneVsOne` is the driver's parts, which DC-SVM's driver
(:mod:`svmtool.solvers.dcsvm.driver`) also runs its pairs with.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from svmtool.labels import class_index, class_weights, group_classes
from svmtool.models.kernel import KernelModel
from svmtool.ops.kernels import Kernel, Rows, n_threads
from svmtool.ops.rows import take_rows
from svmtool.problem import without_zero_weights


# ------------------------------------------------------------------------------------------------
# parameters shared by the kernel solvers

def kernel_of(params, n_features) -> Kernel:
    """The Kernel of ``params.kernel`` (LIBSVM's -t -g -d -r) with ``params.bias`` as kernel
    bias."""
    kp = params.kernel
    if int(kp.kernel_type) == 4:
        from svmtool.errors import ParameterError

        raise ParameterError("-t 4 (a precomputed kernel) needs one of LIBSVM's problems: -s "
                             "c_svc, nu_svc, one_class, epsilon_svr or nu_svr")
    gamma = kp.gamma
    if gamma is None:
        gamma = 1.0 / n_features if n_features > 0 else 1.0
    b = float(params.bias)
    kbias = b * b if b >= 0 else 0.0
    return Kernel(int(kp.kernel_type), float(gamma), float(kp.coef0), int(kp.degree), kbias)


# ------------------------------------------------------------------------------------------------
# one-vs-one driver (LIBSVM's svm_train for C-SVC), returns a KernelModel

class OneVsOne:
    """A problem's classes as LIBSVM pairs them: labels grouped by first appearance (+1 first in
    a {-1,+1} problem), pair (i, j), i < j, on the rows of classes i and j with y = +1 for class
    i and C of class i / j as C_pos / C_neg (``-w`` weights apply) times each row's instance
    weight (rows of weight 0 dropped first, as LIBSVM-weights), the pairs on threads when
    there is more than one (each solver single-threaded, the ``-m`` budget shared)."""

    def __init__(self, problem, params):
        problem = without_zero_weights(problem)
        self.problem, self.params = problem, params
        self.weights = None if problem.weights is None else \
            np.asarray(problem.weights, dtype=np.float64)
        self.X = Rows(problem.indptr, problem.indices, problem.data, n_features=problem.n_features)
        self.kernel = kernel_of(params, problem.n_features)
        self.labels, _, _, _ = group_classes(problem.y)
        self.cls = class_index(problem.y, self.labels)
        self.K = K = len(self.labels)
        self.wc = class_weights(params, self.labels)
        self.members = [np.flatnonzero(self.cls == c) for c in range(K)]
        self.pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
        self.threads = n_threads(params.threads) if len(self.pairs) > 1 else 1
        self.pair_params = params
        if self.threads > 1:
            kp = replace(params.kernel, cache_mb=float(params.kernel.cache_mb) / self.threads)
            self.pair_params = replace(params, threads=1, kernel=kp)
        self.warm = None

    def start_from(self, init_model):
        """Rows equal to an old support vector start from its alpha (svmtool.solvers.common.warm)."""
        if init_model is not None:
            from svmtool.solvers.common.warm import KernelStart

            self.warm = KernelStart(init_model, self.labels)

    def pair_problem(self, q):
        """Rows, labels (+1 class i, -1 class j), C and warm start of pair q."""
        i, j = self.pairs[q]
        mi, mj = self.members[i], self.members[j]
        rows = np.concatenate([mi, mj])
        yb = np.concatenate([np.ones(len(mi)), -np.ones(len(mj))])
        Cv = np.concatenate([np.full(len(mi), self.wc[i]), np.full(len(mj), self.wc[j])])
        if self.weights is not None:
            Cv = Cv * self.weights[rows]
        init_alpha = None
        if self.warm is not None:
            init_alpha = self.warm.pair_alpha(self.X, mi, mj, i, j)
        return take_rows(self.X, rows), yb, Cv, init_alpha

    def fit_pair(self, fit_fn, q, callback=None):
        """Pair q solved by ``fit_fn`` (the registry's binary kernel solver)."""
        i, j = self.pairs[q]
        Xp, yb, Cv, init_alpha = self.pair_problem(q)
        cb = None
        if callback is not None:
            cb = (lambda it, info, _p=q: callback(_p, it, info))
        return fit_fn(Xp, yb, Cv, self.kernel, self.pair_params, callback=cb,
                      init_alpha=init_alpha,
                      context={"pair": (i, j), "labels": (self.labels[i], self.labels[j])})

    def run(self, fit_fn, callback=None, pairs=None):
        """The results of the pairs ``pairs`` (default all), in their order."""
        pairs = range(len(self.pairs)) if pairs is None else pairs
        if self.threads > 1 and len(pairs) > 1:
            with ThreadPoolExecutor(self.threads) as pool:
                return list(pool.map(lambda q: self.fit_pair(fit_fn, q, callback), pairs))
        return [self.fit_pair(fit_fn, q, callback) for q in pairs]

    def model(self, results, spec, t0):
        """The KernelModel of the pairs' dual solutions: support vectors class by class, each
        with its K-1 coefficients in LIBSVM's layout, one rho per pair; ``report["classes"]``
        one entry per pair."""
        K, members = self.K, self.members
        nonzero = [np.zeros(len(m), dtype=bool) for m in members]
        coef_parts = {}          # (class, pair index) -> coefficients over that class's rows
        rho, reports = [], []
        for p, ((i, j), res) in enumerate(zip(self.pairs, results)):
            a = res.alpha
            ni = len(members[i])
            yb = np.concatenate([np.ones(ni), -np.ones(len(a) - ni)])
            coef_parts[(i, p)] = a[:ni] * 1.0
            coef_parts[(j, p)] = -a[ni:]
            nonzero[i] |= coef_parts[(i, p)] != 0
            nonzero[j] |= coef_parts[(j, p)] != 0
            rho.append(-self.kernel.kbias * float(np.sum(a * yb)))
            reports.append(_report_of(res, self.labels[i], self.labels[j], K))
        # for pair (i, j) the coefficients of class i's SVs go to row j-1, those of class j's
        # SVs to row i
        sv_rows = [members[c][nonzero[c]] for c in range(K)]
        nr_sv = [len(r) for r in sv_rows]
        sv_coef = np.zeros((max(K - 1, 1), int(sum(nr_sv))))
        offset = np.concatenate([[0], np.cumsum(nr_sv)]).astype(np.int64)
        for p, (i, j) in enumerate(self.pairs):
            sv_coef[j - 1, offset[i]:offset[i + 1]] = coef_parts[(i, p)][nonzero[i]]
            sv_coef[i, offset[j]:offset[j + 1]] = coef_parts[(j, p)][nonzero[j]]
        all_sv = np.concatenate(sv_rows) if sv_rows else np.zeros(0, dtype=np.int64)
        svs = take_rows(self.X, all_sv)
        kernel = self.kernel
        model = KernelModel(kernel=self.kernel_out(), labels=self.labels, rho=np.array(rho),
                            nr_sv=np.array(nr_sv), sv_indptr=svs.indptr, sv_indices=svs.indices,
                            sv_data=svs.data, sv_coef=sv_coef[:K - 1] if K > 1 else sv_coef[:0],
                            nr_feature=self.problem.n_features)
        params = self.params
        model.report = {"solver": spec.name, "train_time": time.perf_counter() - t0,
                        "classes": reports,
                        "params": {"C": params.C, "eps": params.eps, "bias": params.bias,
                                   "kernel": kernel.name, "gamma": kernel.gamma}}
        return model

    def kernel_out(self):
        """The kernel the model file holds: the kernel bias is in rho, not in the kernel."""
        k = self.kernel
        return Kernel(k.ktype, k.gamma, k.coef0, k.degree, 0.0)


def train_ovo(problem, params, spec, callback=None, init_model=None):
    """Train every pair of classes with the binary kernel solver of ``spec``; a KernelModel
    (see :class:`OneVsOne`)."""
    t0 = time.perf_counter()
    fit_fn = spec.load()
    ovo = OneVsOne(problem, params)
    ovo.start_from(init_model)
    return ovo.model(ovo.run(fit_fn, callback), spec, t0)


def _report_of(res, li, lj, K):
    r = {"label": float(li), "pair": (float(li), float(lj)), "iterations": int(res.iterations),
         "primal": float(res.primal), "dual": float(res.dual), "gap": float(res.extra.get(
             "pg_violation", res.gap)), "gap_kind": res.gap_kind, "converged": bool(res.converged),
         "n_sv": int(res.n_sv)}
    for k, v in res.extra.items():
        if isinstance(v, (int, float, str, bool)) or v is None:
            r[k] = v
        elif k == "levels":
            r[k] = v
    return r

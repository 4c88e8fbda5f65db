"""SVMlight 6.02's three learning problems (``svm_learn -z c|r|p``) on svmtool's solvers.

The problems, with SVMlight's kernels (0 linear, 1 ``(s a.b + r)^d``, 2 ``exp(-g |a-b|^2)``,
3 ``tanh(s a.b + r)``) and the model ``f(x) = sum_i c_i K(x_i, x) - b``:

* ``-z c`` (classification, labels > 0 positive, < 0 negative)::

      min 1/2 |w|^2 + C+ sum_{y_i = +1} xi_i + C- sum_{y_i = -1} xi_i,
      y_i f(x_i) >= 1 - xi_i,  C+ = C j (-j), C- = C;

  with ``-b 1`` (SVMlight's default) ``b`` is free, so the dual has the equality constraint
  ``y'a = 0``: LIBSVM's C-SVC, solved by :func:`svmtool.solvers.kernel.smo.solve_c_svc` (``b`` is
  its ``rho``).  With ``-b 0`` there is no ``b`` and no equality constraint: the bias-free dual of
  :mod:`svmtool.solvers.kernel.kernel_cd` (``-s kernel`` without ``-B``).
* ``-z r`` (regression): epsilon-SVR with tube ``-w`` (default 0.1), ``b`` free -- LIBSVM's
  epsilon-SVR, :func:`svmtool.solvers.kernel.smo.solve_epsilon_svr`.
* ``-z p`` (preference ranking): ``min 1/2 |w|^2 + C sum xi_ij`` over the pairs of rows of the
  same qid with different targets, ``w'(x_i - x_j) >= 1 - xi_ij`` for ``y_i > y_j`` -- with a
  linear kernel exactly :mod:`svmtool.solvers.cutting_plane.ordinal`'s problem (C per pair).

``C`` defaults (no ``-c``) to SVMlight's ``1 / avg_i(|x_i|_K)^2`` with ``|x|_K = sqrt(K(x,x) -
2 K(x,0) + K(0,0))``, the distance of the example from the origin in the kernel's feature space
(for ``-z p``: the average over the pairs' difference vectors ``x_i - x_j``).

Besides the model, :func:`train` returns the numbers svm_learn prints: misclassified training
examples, the maximal KKT violation (svmtool's: LIBSVM's maximal violating pair, or the largest
projected gradient without ``b``), support vectors and those at the upper bound, SVMlight's L1
loss (the slack of the examples violating the margin by more than ``-e``), ``|w|``, the longest
example, the VC-dimension estimate ``|w|^2 R^2 + 1`` (R: the largest ``|sv|_K``), and the
xi-alpha estimates of the leave-one-out error, recall and precision (Joachims, "Estimating the
generalization performance of an SVM efficiently", ICML 2000): example i counts as a
leave-one-out error when ``rho a_i R_delta^2 + xi_i >= 1`` (``R_delta``: the largest
``|x|_K``, ``rho``: ``-o``), the estimate SVMlight prints at depth 0.  The primal and dual
objectives are computed from the solution for the report.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from svmtool.errors import InputError, ParameterError
from svmtool.ops.kernels import Kernel, Rows


@dataclass(frozen=True)
class LightParams:
    task: str = "c"                 # c classification, r regression, p preference ranking
    C: float = 0.0                  # 0: SVMlight's default 1 / avg(|x|_K)^2
    cost_ratio: float = 1.0         # -j
    biased: bool = True             # -b
    tube: float = 0.1               # -w
    eps: float = 0.001              # -e
    cache_mb: float = 40.0          # -m
    kernel_type: int = 0            # -t
    degree: int = 3                 # -d
    gamma: float = 1.0              # -g
    coef_lin: float = 1.0           # -s
    coef_const: float = 1.0         # -r
    custom: str = "empty"           # -u
    xa_rho: float = 1.0             # -o
    loo: bool = False               # -x 1
    max_iter: Optional[int] = None
    deadline: Optional[float] = None

    def kernel(self) -> Kernel:
        from svmtool.io.svmlight_model import svmlight_kernel

        return svmlight_kernel(self.kernel_type, self.degree, self.gamma, self.coef_lin,
                               self.coef_const)

    def header(self):
        return (int(self.degree), float(self.gamma), float(self.coef_lin),
                float(self.coef_const), self.custom)


# ---- kernel values against the example itself and against the origin ---------------------------

def self_kernel(kernel: Kernel, sq):
    """K(x, x) for rows of squared norm ``sq``."""
    k = kernel.ktype
    if k == 0:
        return sq.copy()
    if k == 1:
        return np.power(kernel.gamma * sq + kernel.coef0, float(kernel.degree))
    if k == 2:
        return np.ones_like(sq)
    return np.tanh(kernel.gamma * sq + kernel.coef0)


def origin_distance(kernel: Kernel, sq):
    """|x|_K = sqrt(K(x,x) - 2 K(x,0) + K(0,0)): the distance from the origin in feature
    space."""
    k = kernel.ktype
    kxx = self_kernel(kernel, sq)
    if k == 0:
        k0 = 0.0
        kx0 = np.zeros_like(sq)
    elif k == 1:
        k0 = float(np.power(kernel.coef0, float(kernel.degree)))
        kx0 = np.full_like(sq, k0)
    elif k == 2:
        k0 = 1.0
        kx0 = np.exp(-kernel.gamma * sq)
    else:
        k0 = float(np.tanh(kernel.coef0))
        kx0 = np.full_like(sq, k0)
    return np.sqrt(np.maximum(kxx - 2.0 * kx0 + k0, 0.0))


def default_C(dist):
    avg = float(np.mean(dist)) if len(dist) else 0.0
    if not avg > 0:
        raise InputError("SVMlight's default C = 1/avg(|x|)^2 is undefined here (every example "
                         "is at the origin of the kernel's space): give -c")
    return 1.0 / (avg * avg)


def pair_distances(X: Rows, y, qid):
    """|x_i - x_j| over the ranking pairs (same qid, different targets)."""
    import scipy.sparse as sp

    from svmtool.ops.rows import take_rows

    y = np.asarray(y, dtype=np.float64)
    qid = np.zeros(len(y), dtype=np.int64) if qid is None else np.asarray(qid)
    out = []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        m = len(rows)
        if m < 2:
            continue
        sub = take_rows(X, rows)
        M = sp.csr_matrix((sub.data, sub.indices, sub.indptr), shape=(m, max(X.n_features, 1)))
        yy = y[rows]
        for lo in range(0, m, 1024):
            hi = min(m, lo + 1024)
            G = np.asarray((M[lo:hi] @ M.T).todense())
            d2 = sub.sq[lo:hi, None] + sub.sq[None, :] - 2.0 * G
            mask = (np.arange(lo, hi)[:, None] < np.arange(m)[None, :]) & \
                (yy[lo:hi, None] != yy[None, :])
            out.append(np.sqrt(np.maximum(d2[mask], 0.0)))
    return np.concatenate(out) if out else np.zeros(0)


# ---- training ---------------------------------------------------------------------------------

@dataclass
class LightResult:
    model: object                 # LinearModel or KernelModel
    C: float
    C_given: bool
    stats: dict                   # what svm_learn prints (see the module docstring)


def cost_factors(problem):
    """The examples' ``cost:`` factors (ones when none is given).  SVMlight multiplies the C of
    example i by its factor: ``C * j * cost_i`` for a positive example, ``C * cost_i`` for a
    negative one, ``C * cost_i`` for both variables of a regression example; 0 holds it at 0."""
    if problem.weights is None:
        return np.ones(problem.n_rows)
    return np.asarray(problem.weights, dtype=np.float64)


def refuse_cost(problem, lp: LightParams):
    """ParameterError when the examples carry ``cost:`` factors and svm_learn would rank
    (``-z p``): SVMlight gives a pair the mean of its two examples' factors, and svmtool's
    ranking solver has no per-pair C.  Classification and regression honour them."""
    if lp.task == "p":
        from svmtool.problem import refuse_weights

        refuse_weights(problem, "svm_learn -z p (the ranking solver)")


def train(problem, lp: LightParams, callback=None) -> LightResult:
    refuse_cost(problem, lp)
    if problem.n_rows == 0:
        raise InputError(f"{problem.source}: no training examples")
    X = Rows(problem.indptr, problem.indices, problem.data, n_features=problem.n_features)
    if lp.task == "p":
        return _train_ranking(problem, X, lp, callback)
    kernel = lp.kernel()
    dist = origin_distance(kernel, X.sq)
    C_given = lp.C > 0
    C = lp.C if C_given else default_C(dist)
    if lp.task == "r":
        return _train_regression(problem, X, kernel, dist, C, C_given, lp, callback)
    return _train_classification(problem, X, kernel, dist, C, C_given, lp, callback)


def _solve_kw(lp, callback):
    kw = {"eps": float(lp.eps), "shrinking": True, "cache_mb": float(lp.cache_mb),
          "max_iter": lp.max_iter, "deadline": lp.deadline}
    if callback is not None:
        kw["callback"] = callback
    return kw


def _expansion(X, kernel, coef, rows=None):
    """f(x_i) + b = sum_s coef_s K(x_s, x_i) over the rows (all by default)."""
    from svmtool.ops.kernels import kernel_expansion

    n = X.n_rows
    targets = np.arange(n) if rows is None else rows
    sv = np.flatnonzero(coef != 0.0)
    if len(sv) == 0:
        return np.zeros(len(targets))
    return kernel_expansion(X, targets, X, sv, coef[sv], kernel, None, 64.0)


def _kernel_model(X, kernel, coef, b, labels, svm_type, problem, lp, n_train):
    from svmtool.models.kernel import KernelModel
    from svmtool.ops.rows import take_rows

    sv = np.flatnonzero(coef != 0.0)
    nr_sv = None
    if svm_type == "c_svc":
        pos = sv[coef[sv] > 0]
        neg = sv[coef[sv] < 0]
        sv = np.concatenate([pos, neg])
        nr_sv = np.array([len(pos), len(neg)])
    S = take_rows(X, sv)
    model = KernelModel(kernel=kernel, labels=labels, rho=np.array([float(b)]), nr_sv=nr_sv,
                        sv_indptr=S.indptr, sv_indices=S.indices, sv_data=S.data,
                        sv_coef=coef[sv].reshape(1, -1), nr_feature=problem.n_features,
                        svm_type=svm_type)
    model.report = {"model_format": "svmlight", "n_train": int(n_train),
                    "svmlight_header": lp.header(),
                    "task": "regression" if svm_type == "epsilon_svr" else "classification"}
    return model


def _train_classification(problem, X, kernel, dist, C, C_given, lp, callback):
    from svmtool.solvers.kernel import smo

    y = np.asarray(problem.y, dtype=np.float64)
    if np.any(y == 0):
        raise ParameterError("svm_learn: examples with label 0 are unlabeled: SVMlight's "
                             "transductive learning (unlabeled examples, -p) has no counterpart "
                             "in svmtool")
    yb = np.where(y > 0, 1.0, -1.0)
    n_pos = int(np.count_nonzero(yb > 0))
    if n_pos in (0, len(yb)):
        raise InputError(f"{problem.source}: svm_learn -z c needs positive and negative "
                         f"examples; every label here is {'positive' if n_pos else 'negative'}")
    Cp, Cn = C * lp.cost_ratio, C
    W = cost_factors(problem)
    Ci = np.where(yb > 0, Cp, Cn) * W
    kd = None
    if lp.biased:
        kd = smo.KernelData(X, kernel)
        sol = smo.solve_c_svc(kd, yb, Cp, Cn, W=W, **_solve_kw(lp, callback))
        coef, b = sol.coef, float(sol.rho)
        iterations, converged, maxdiff = sol.iterations, sol.converged, sol.violation
        stopped = sol.extra.get("stopped", "")
        lin = _expansion(X, kernel, coef)
    else:
        from svmtool.solvers.kernel import kernel_cd

        cb = None if callback is None else (lambda it, info=None: callback(it, info or {}))
        res = kernel_cd.solve(X, yb, Ci, kernel, eps=float(lp.eps), cache_mb=float(lp.cache_mb),
                              max_steps=lp.max_iter, callback=cb, deadline=lp.deadline)
        coef, b = res.alpha * yb, 0.0
        iterations, converged = res.iterations, res.converged
        maxdiff = float(res.extra["pg_violation"])
        stopped = res.extra.get("stopped", "")
        lin = yb * (res.extra["gradient"] + 1.0)
    margin = yb * (lin - b)
    a = np.abs(coef)
    wsq = float(coef @ lin)
    slack = np.maximum(0.0, 1.0 - margin)
    primal = 0.5 * wsq + float(Ci @ slack)
    dual = float(a.sum()) - 0.5 * wsq
    stats = _common_stats(kernel, dist, X, coef, Ci, wsq, lp, iterations, converged, maxdiff,
                          stopped, primal, dual)
    stats["misclassified"] = int(np.count_nonzero(margin <= 0.0))
    stats["loss"] = float(np.sum(np.where(margin < 1.0 - lp.eps, 1.0 - margin, 0.0)))
    # xi-alpha estimates (depth 0)
    r_delta_sq = float(dist.max()) ** 2
    err = (lp.xa_rho * a * r_delta_sq + slack) >= 1.0
    pos = yb > 0
    n_err, pos_err, neg_err = int(err.sum()), int((err & pos).sum()), int((err & ~pos).sum())
    stats["xa_error"] = 100.0 * n_err / len(yb)
    stats["xa_recall"] = 100.0 * (1.0 - pos_err / n_pos)
    kept = n_pos - pos_err
    stats["xa_precision"] = 100.0 * kept / (kept + neg_err) if kept + neg_err else float("nan")
    stats["positives"], stats["negatives"] = n_pos, len(yb) - n_pos
    if lp.loo:
        stats["loo"] = leave_one_out(X, kernel, kd, yb, Ci, a, slack, b, r_delta_sq, lp)
    model = _kernel_model(X, kernel, coef, b, np.array([1.0, -1.0]), "c_svc", problem, lp,
                          problem.n_rows)
    return LightResult(_maybe_linear(model), C, C_given, stats)


def leave_one_out(X, kernel, kd, yb, Ci, a, slack, b, r_delta_sq, lp):
    """SVMlight's -x 1: the leave-one-out error, recall and precision, retraining only where the
    xi-alpha bound cannot decide.  Example i is surely classified right without it when
    ``rho a_i R_delta^2 + xi_i < 1`` (Joachims 2000) and surely wrong when ``xi_i > 1``;
    otherwise the problem is solved again with ``C_i = 0`` (example i held out), warm-started
    from the full solution, and i is an error when ``y_i f(x_i) <= 0``.  Returns the counts and
    SVMlight's progress marks (``+``, ``-``, ``(?[i]+)``, ``(?[i]-)``)."""
    import time

    from svmtool.solvers.kernel import kernel_cd, smo

    t0 = time.process_time()
    n = len(yb)
    marks = []
    err = np.zeros(n, dtype=bool)
    computed = 0
    kw = _solve_kw(lp, None)
    for i in range(n):
        if lp.xa_rho * a[i] * r_delta_sq + slack[i] < 1.0:
            marks.append("+")
            continue
        if slack[i] > 1.0:
            err[i] = True
            marks.append("-")
            continue
        computed += 1
        C = Ci.copy()
        C[i] = 0.0
        alpha0 = a.copy()
        alpha0[i] = 0.0
        if kd is not None:
            _restore_balance(alpha0, yb, C, a[i] * yb[i])
            res = smo.solve(kd, np.arange(n), yb, -np.ones(n), C, alpha0, **kw)
            margin = res.G[i] + 1.0 - yb[i] * res.rho
        else:
            res = kernel_cd.solve(X, yb, C, kernel, eps=float(lp.eps), init_alpha=alpha0,
                                  cache_mb=float(lp.cache_mb), max_steps=lp.max_iter,
                                  deadline=lp.deadline)
            margin = res.extra["gradient"][i] + 1.0
        err[i] = margin <= 0.0
        marks.append(f"(?[{i}]{'-' if err[i] else '+'})")
    pos = yb > 0
    n_pos = int(pos.sum())
    pos_err, neg_err = int((err & pos).sum()), int((err & ~pos).sum())
    kept = n_pos - pos_err
    return {"error": 100.0 * int(err.sum()) / n, "recall": 100.0 * kept / n_pos,
            "precision": 100.0 * kept / (kept + neg_err) if kept + neg_err else float("nan"),
            "computed": computed, "marks": "".join(marks), "errors": err,
            "cpu": time.process_time() - t0}


def _restore_balance(alpha, y, C, removed):
    """Make y'alpha = 0 again after a variable carrying ``removed`` (= its y a) was zeroed:
    raise the variables of the removed one's sign toward their bounds, then, if that is not
    enough, lower those of the other sign."""
    need = abs(removed)
    same = np.flatnonzero(y == np.sign(removed))
    for j in same:
        if need <= 0:
            return
        step = min(C[j] - alpha[j], need)
        if step > 0:
            alpha[j] += step
            need -= step
    other = np.flatnonzero(y != np.sign(removed))
    for j in other:
        if need <= 0:
            return
        step = min(alpha[j], need)
        alpha[j] -= step
        need -= step


def _train_regression(problem, X, kernel, dist, C, C_given, lp, callback):
    from svmtool.solvers.kernel import smo

    if not lp.biased:
        raise ParameterError("svm_learn: -z r with -b 0 (regression without a threshold) has no "
                             "counterpart in svmtool (its epsilon-SVR has the threshold b)")
    if lp.cost_ratio != 1.0:
        raise ParameterError("svm_learn: -j with -z r (a larger C for the upper side of the "
                             "tube) has no counterpart in svmtool")
    z = np.asarray(problem.y, dtype=np.float64)
    kd = smo.KernelData(X, kernel)
    W = cost_factors(problem)
    Ci = C * W
    sol = smo.solve_epsilon_svr(kd, z, C, float(lp.tube), W=W, **_solve_kw(lp, callback))
    coef, b = sol.coef, float(sol.rho)
    lin = _expansion(X, kernel, coef)
    wsq = float(coef @ lin)
    resid = np.abs(z - (lin - b))
    primal = 0.5 * wsq + float(Ci @ np.maximum(0.0, resid - lp.tube))
    dual = -sol.obj
    stats = _common_stats(kernel, dist, X, coef, Ci, wsq, lp, sol.iterations, sol.converged,
                          sol.violation, sol.extra.get("stopped", ""), primal, dual)
    over = resid - lp.tube
    stats["loss"] = float(np.sum(np.where(over > lp.eps, over, 0.0)))
    # SVMlight's regression model counts both copies of every example
    model = _kernel_model(X, kernel, coef, b, None, "epsilon_svr", problem, lp,
                          2 * problem.n_rows)
    return LightResult(_maybe_linear(model), C, C_given, stats)


def _common_stats(kernel, dist, X, coef, Ci, wsq, lp, iterations, converged, maxdiff, stopped,
                  primal, dual):
    a = np.abs(coef)
    sv = a > 0
    norm_w = float(np.sqrt(max(wsq, 0.0)))
    R = float(dist[sv].max()) if sv.any() else 0.0
    return {"iterations": int(iterations), "converged": bool(converged),
            "maxdiff": float(maxdiff), "stopped": stopped,
            "n_sv": int(sv.sum()), "n_bsv": int(np.count_nonzero(sv & (a >= Ci - 1e-15))),
            "norm_w": norm_w,
            "longest": float(np.sqrt(np.max(self_kernel(kernel, X.sq)))),
            "vcdim": norm_w * norm_w * R * R + 1.0,
            "primal": float(primal), "dual": float(dual)}


def _maybe_linear(model):
    """A linear kernel model as svmtool's LinearModel (w summed from the support vectors), as
    the SVMlight reader gives it back."""
    if model.kernel.ktype != 0:
        return model
    from svmtool.models.linear import LinearModel

    nf = int(model.nr_feature)
    S = model.sv_rows
    w = np.zeros(nf + 1)
    if model.total_sv:
        rows = np.repeat(np.arange(model.total_sv), np.diff(S.indptr))
        np.add.at(w, np.asarray(S.indices, dtype=np.int64),
                  model.sv_coef[0][rows] * S.data)
    b = float(model.rho[0])
    w[nf] = -b
    regression = model.svm_type == "epsilon_svr"
    lm = LinearModel(solver_type="L2R_L1LOSS_SVR_DUAL" if regression else "L2R_L1LOSS_SVC_DUAL",
                     labels=None if regression else model.labels, nr_feature=nf, bias=1.0,
                     w=w.reshape(-1, 1))
    lm.report = dict(model.report)
    return lm


def _train_ranking(problem, X, lp, callback):
    from svmtool.models.linear import LinearModel
    from svmtool.params import TrainParams
    from svmtool.solvers import program_spec

    ranking = program_spec("svm_learn -z p")        # the registry's ranking solver

    if lp.kernel_type != 0:
        raise ParameterError(f"svm_learn: -z p with -t {lp.kernel_type}: svmtool ranks with a "
                             f"linear kernel only (-t 0); it has no kernel ranking solver")
    if lp.cost_ratio != 1.0:
        raise ParameterError("svm_learn: -j with -z p (a larger C for the pairs whose first "
                             "example ranks higher) has no counterpart in svmtool")
    y = np.asarray(problem.y, dtype=np.float64)
    C_given = lp.C > 0
    # the pairs' difference vectors are SVMlight's examples here (default C, longest vector)
    d = pair_distances(X, y, problem.qid)
    if len(d) == 0:
        raise InputError(f"{problem.source}: no ranking pairs (rows of one qid with different "
                         f"targets)")
    C = lp.C if C_given else default_C(d)
    params = TrainParams(solver=ranking.name, C=C, eps=float(lp.eps), max_iter=lp.max_iter,
                         deadline=lp.deadline)
    cb = None if callback is None else (lambda it, info: callback(it, info))
    res = ranking.load()(problem.indptr, problem.indices, problem.data, y, problem.qid,
                         problem.n_features, C, params, callback=cb)
    w = np.asarray(res.w, dtype=np.float64)
    model = LinearModel(solver_type="L2R_L1LOSS_SVR_DUAL", labels=None,
                        nr_feature=problem.n_features, bias=-1.0, w=w.reshape(-1, 1))
    model.report = {"model_format": "svmlight", "n_train": problem.n_rows, "ranking": True,
                    "task": "ranking", "svmlight_header": lp.header()}
    norm = float(np.sqrt(w @ w))
    stats = {"iterations": int(res.iterations), "converged": bool(res.converged),
             "maxdiff": float(res.gap), "stopped": res.extra.get("stopped", ""),
             "pairs": int(res.extra.get("pairs", 0)), "norm_w": norm,
             "longest": float(d.max()),
             "primal": float(res.primal),
             "dual": float(res.dual) if res.dual is not None else float("nan"),
             "loss": (float(res.primal) - 0.5 * norm * norm) / C}
    return LightResult(model, C, C_given, stats)

"""Primal truncated Newton (Newton-CG) for L2-regularised L2-loss SVM and logistic regression.

The maths
---------
Minimise a twice (generalised-)differentiable objective (see
:mod:`svmtool.solvers.newton.objectives`)::

    -s 2 (newton)  f(w) = 1/2 w'w + sum_i C_i max(0, 1 - y_i w'x_i)^2
    -s 0 (lr)      f(w) = 1/2 w'w + sum_i C_i log(1 + exp(-y_i w'x_i))

(``C_i`` the class's C times the row's instance weight when the fit is given ``weights``; a
row of weight 0 takes no part, :mod:`svmtool.solvers.common.weighted`) by Newton's method with
the linear system ``H s = -g`` solved inexactly by preconditioned
conjugate gradient, as in Chapelle & Keerthi's "Large scale SVMs" (ICML 2008 workshop slides:
"solve by CG (I + C X_sv' X_sv)^-1 grad; each iteration is a matrix-vector multiplication") and in
LIBLINEAR 2.4x's ``NEWTON`` class (Galli & Lin, "A study on truncated Newton methods for linear
classification", 2021):

* outer iteration: ``M = diag`` preconditioner mixed as ``0.99 + 0.01 diag(H)``; PCG from 0 on
  ``H s = -g``, stopped by the decrease of the quadratic model ``Q(s) = g's + s'Hs/2``: after step
  ``k``, stop when ``k (Q_k - Q_{k-1}) >= cgtol Q_k`` with ``cgtol = min(0.5, sqrt(|g|_{M^-1}))``
  (at most ``max(n, 5)`` steps);
* line search along ``s``: ``X w`` and ``X s`` are cached, so ``f(w + t s)`` is an O(n) sum
  (``w'w``, ``w's``, ``s's`` known); backtracking from ``t = 1``, halving, until the Armijo
  condition ``f(w + t s) - f(w) <= 0.01 t g's`` (at most 20 trials; a failure ends the run);
* every Hessian-vector product is one fused pass over the rows that matter (the active set
  ``y_i w'x_i < 1`` for the squared hinge, every row for the logistic loss); the gradient and the
  preconditioner come from one pass together; for the logistic loss the CG passes also yield
  ``X s``; for the squared hinge the pass computing ``X s`` also gives the loss, gradient and
  preconditioner at ``w + s`` (used when the unit step passes the Armijo test, as it nearly
  always does).  Either way a Newton iteration makes one pass per CG step plus one (LIBLINEAR:
  plus three).

What ``-e`` means (LIBLINEAR's rule, default 0.01): stop when

    |grad f(w)| <= eps * max(min(#pos, #neg), 1) / l * |grad f(0)|

(also after ``max_iter`` Newton iterations, default 1000, when the line search fails, or when an
iteration changes ``f`` by at most 1e-12 relative).  A warm start ``init_w`` starts from that
point; the rule still compares with the gradient at 0.

Threads: the passes run on :class:`svmtool.engine.local.LocalOracle` with ``params.threads``
threads (default: all cores) over row blocks fixed by the data, so the model is bit-identical
for any thread count.

Returned: :class:`svmtool.solvers.common.result.SolverResult` with ``primal = f(w)``, ``gap = |g| /
|g0|`` ("relative gradient norm"), ``iterations`` (Newton steps) and in ``extra``: ``cg_steps``
(total), ``grad_norm``, ``grad_norm0``, ``tolerance`` (the bound on ``|g|/|g0|``),
``line_search_trials``, ``passes`` (passes over the data), ``solve_time``, ``threads``, ``warning``.
"""

import math
import time

import numpy as np

from svmtool._jit import njit
from svmtool.solvers import default_eps
from svmtool.solvers.common.result import STOPPED_TIME, SolverResult, time_limit_warning, time_up

DEFAULT_MAX_ITER = 1000       # LIBLINEAR's NEWTON max_iter
EPS_CG = 0.5                  # LIBLINEAR's eps_cg
ALPHA_PCG = 0.01              # preconditioner mix: (1 - a) + a diag(H)
ARMIJO_ETA = 0.01
MAX_LINE_SEARCH = 20


# Vector operations of CG and the line search as small jitted loops: numpy's ``@`` calls BLAS,
# whose threads (OpenBLAS) made each 62k-long dot product cost hundreds of times a plain loop on
# a busy 2-core machine (news20); plain loops are also deterministic.  Every reduction keeps four
# running sums (entries j = 0, 1, 2, 3 mod 4) added as (s0 + s1) + (s2 + s3) at the end: one sum
# is a chain of dependent additions (a few cycles each, no reordering without fast-math), four
# chains run side by side.  On news20 (62k features, few rows in the Hessian's active set) these
# loops were a large share of -s 2's time with one chain.  The order is fixed by the vector length
# alone, so the result never depends on the thread count.

@njit
def _vdot(a, b):
    n = a.shape[0]
    m = n - n % 4
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for j in range(0, m, 4):
        s0 += a[j] * b[j]
        s1 += a[j + 1] * b[j + 1]
        s2 += a[j + 2] * b[j + 2]
        s3 += a[j + 3] * b[j + 3]
    for j in range(m, n):
        s0 += a[j] * b[j]
    return (s0 + s1) + (s2 + s3)


@njit(inline="always")
def _cg_entry(j, alpha, d, Hd, s, r, g, Minv, z):
    sj = s[j] + alpha * d[j]
    rj = r[j] - alpha * Hd[j]
    s[j] = sj
    r[j] = rj
    zj = rj * Minv[j]
    z[j] = zj
    return sj * (rj - g[j]), zj * rj


@njit
def _cg_update(alpha, d, Hd, s, r, g, Minv, z, out):
    """s += alpha d; r -= alpha Hd; z = r * Minv (Minv = 1 / M, a multiplication being several
    times cheaper than a division).  out = (s'(r - g), z'r): the quadratic model's
    numerator and the next step's z'r, from one pass."""
    n = s.shape[0]
    m = n - n % 4
    q0 = 0.0
    q1 = 0.0
    q2 = 0.0
    q3 = 0.0
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    t3 = 0.0
    for j in range(0, m, 4):
        a, b = _cg_entry(j, alpha, d, Hd, s, r, g, Minv, z)
        q0 += a
        t0 += b
        a, b = _cg_entry(j + 1, alpha, d, Hd, s, r, g, Minv, z)
        q1 += a
        t1 += b
        a, b = _cg_entry(j + 2, alpha, d, Hd, s, r, g, Minv, z)
        q2 += a
        t2 += b
        a, b = _cg_entry(j + 3, alpha, d, Hd, s, r, g, Minv, z)
        q3 += a
        t3 += b
    for j in range(m, n):
        a, b = _cg_entry(j, alpha, d, Hd, s, r, g, Minv, z)
        q0 += a
        t0 += b
    out[0] = (q0 + q1) + (q2 + q3)
    out[1] = (t0 + t1) + (t2 + t3)


@njit
def _precondition(r, Minv, z):
    """z = r * Minv; returns z'r."""
    n = r.shape[0]
    m = n - n % 4
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for j in range(0, m, 4):
        z0 = r[j] * Minv[j]
        z1 = r[j + 1] * Minv[j + 1]
        z2 = r[j + 2] * Minv[j + 2]
        z3 = r[j + 3] * Minv[j + 3]
        z[j] = z0
        z[j + 1] = z1
        z[j + 2] = z2
        z[j + 3] = z3
        s0 += z0 * r[j]
        s1 += z1 * r[j + 1]
        s2 += z2 * r[j + 2]
        s3 += z3 * r[j + 3]
    for j in range(m, n):
        zj = r[j] * Minv[j]
        z[j] = zj
        s0 += zj * r[j]
    return (s0 + s1) + (s2 + s3)


@njit
def _new_direction(beta, d, z):
    for j in range(d.shape[0]):
        d[j] = z[j] + beta * d[j]


@njit
def _axpy(alpha, x, y):
    for j in range(x.shape[0]):
        y[j] += alpha * x[j]


def _pcg(obj, g, M, want_xs):
    """Preconditioned CG on ``H s = -g``; returns (s, Xs or None, steps, note)."""
    n = g.shape[0]
    s = np.zeros(n)
    r = -g
    z = np.empty(n)
    Minv = 1.0 / M
    zTr = _precondition(r, Minv, z)
    d = z.copy()
    cgtol = min(EPS_CG, math.sqrt(math.sqrt(max(zTr, 0.0))))
    max_steps = max(n, 5)
    xs = np.zeros(obj.oracle.n_rows) if want_xs else None
    xd = np.empty(obj.oracle.n_rows) if want_xs else None
    Q = 0.0
    steps = 0
    note = None
    sums = np.zeros(2)
    while steps < max_steps:
        steps += 1
        Hd, dHd = obj.hess_vec_dot(d, xv=xd)
        if dHd <= 1.0e-16:
            break
        alpha = zTr / dHd
        if want_xs:
            _axpy(alpha, xd, xs)
        _cg_update(alpha, d, Hd, s, r, g, Minv, z, sums)
        newQ = -0.5 * sums[0]
        Qdiff = newQ - Q
        if newQ <= 0.0 and Qdiff <= 0.0:
            if steps * Qdiff >= cgtol * newQ:
                break
        else:
            note = "quadratic model positive or increasing in CG"
            break
        Q = newQ
        znew = sums[1]
        beta = znew / zTr
        _new_direction(beta, d, z)
        zTr = znew
    if steps == max_steps:
        note = "reached the maximal number of CG steps"
    return s, xs, steps, note


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        loss="l2", oracle=None, weights=None, batch=None):
    """Train a binary L2-loss SVM (``loss="l2"``) or logistic regression (``loss="lr"``);
    ``oracle``: the row passes (default: a LocalOracle over the arrays); ``weights``: one
    instance weight a row (row i's cost ``C_class * W_i``; weight 0: the row takes no part),
    or None; ``batch``: the :class:`~svmtool.solvers.newton.batch.ClassBatches` of a
    one-vs-rest run whose classes share their CG passes (the same model either way)."""
    from svmtool.engine.local import LocalOracle
    from svmtool.solvers.common import weighted
    from svmtool.solvers.newton.objectives import make_objective

    t_start = time.perf_counter()
    if oracle is None:
        weights = weighted.checked(weights, len(indptr) - 1)
        if weighted.has_zeros(weights):
            return weighted.fit_positive(fit, indptr, indices, data, y, weights, n_features,
                                         C_pos, C_neg, params, init_w=init_w,
                                         callback=callback, loss=loss)
    else:
        # a shared oracle (the -C path) holds every row: a row of weight 0 is a row of cost 0,
        # which adds nothing to the primal loss, gradient or Hessian
        weights = weighted.checked(weights, oracle.n_rows)
    C_pos, C_neg = _costs(C_pos, C_neg)
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if oracle is None:
        oracle = LocalOracle(indptr, indices, data, n_features, threads=params.threads)
    _check_labels(y, oracle.n_rows)
    cost = weighted.row_costs(y, C_pos, C_neg, weights)
    obj = make_objective(loss, oracle, y, cost, free_last=not params.bias_reg.regularize)
    if batch is None:
        return _solve(obj, y, loss, params, init_w, callback, t_start)
    with batch.joined(obj):
        return _solve(obj, y, loss, params, init_w, callback, t_start)


def fit_rows(rows, y, n_features, C_pos, C_neg, params, init_w=None, callback=None, loss="l2",
             weights=None):
    """:func:`fit` over a row source of :mod:`svmtool.solvers.scale_out` (the blocks of a
    memory-mapped cache, or shards on a dask cluster), which builds the objective.
    ``weights``: one instance weight a row, or None; the rows stay in the
    passes, a row of weight 0 with cost 0 (nothing in the loss, gradient or Hessian), and the
    tolerance counts the rows of positive weight, as :func:`fit` in memory does."""
    from svmtool.solvers.common import weighted

    t_start = time.perf_counter()
    C_pos, C_neg = _costs(C_pos, C_neg)
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    _check_labels(y, rows.n_rows)
    more, y_tol = {}, y
    if weights is not None:
        more["weights"] = weighted.checked(weights, rows.n_rows)
        if weighted.has_zeros(more["weights"]):
            y_tol = y[more["weights"] > 0]
    obj = rows.objective(loss, y, C_pos, C_neg, free_last=not params.bias_reg.regularize,
                         **more)
    return _solve(obj, y_tol, loss, params, init_w, callback, t_start)


def _costs(C_pos, C_neg):
    C_pos, C_neg = float(C_pos), float(C_neg)
    if not (C_pos > 0 and C_neg > 0):
        raise ValueError(f"C must be > 0 (got C_pos={C_pos}, C_neg={C_neg})")
    return C_pos, C_neg


def _check_labels(y, n_rows):
    if y.shape[0] != n_rows:
        raise ValueError(f"{y.shape[0]} labels for {n_rows} rows")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("labels must be -1 or +1")


def _solve(obj, y, loss, params, init_w, callback, t_start):
    """:func:`minimise` with LIBLINEAR's tolerance of a classification problem."""
    eps = default_eps("newton") if params.eps is None else float(params.eps)
    l = y.shape[0]
    pos = int(np.count_nonzero(y > 0))
    tol = eps * max(min(pos, l - pos), 1) / max(l, 1)
    res = minimise(obj, tol, params, init_w=init_w, callback=callback, t_start=t_start)
    res.extra["eps"] = eps
    res.extra["loss"] = loss
    return res


def minimise(obj, tol, params, init_w=None, callback=None, t_start=None):
    """LIBLINEAR's NEWTON loop on ``obj`` (an
    :class:`~svmtool.solvers.newton.objectives.Objective`): stop when ``|grad f(w)| <= tol |grad
    f(0)|``; see the module docstring.  Returns a SolverResult (``extra`` without ``eps`` and
    ``loss``, which the caller adds)."""
    if t_start is None:
        t_start = time.perf_counter()
    max_iter = DEFAULT_MAX_ITER if params.max_iter is None else int(params.max_iter)
    g, M, gnorm0 = _start(obj, init_w)
    f = obj.fun()
    gnorm = _norm(g)
    run = {"it": 0, "cg_steps": 0, "line_search_trials": 0, "stopped": None, "warning": None}
    converged = gnorm <= tol * gnorm0
    if not (math.isfinite(gnorm0) and math.isfinite(gnorm)):
        # C (or a feature value) so large that the gradient overflows double precision
        converged = False
        run["warning"] = ("the gradient is not finite (C or the feature values too large for "
                          "double precision); the model is the starting point")
    t_loop = time.perf_counter()
    while run["warning"] is None and not converged and run["it"] < max_iter:
        # the Newton direction: H s = -g solved inexactly by preconditioned CG
        s, xs, cg, _note = _pcg(obj, g, (1.0 - ALPHA_PCG) + ALPHA_PCG * M, obj.hv_gives_xv)
        run["cg_steps"] += cg
        t, fnew, xs, unit, trials = _line_search(obj, f, g, s, xs)
        run["line_search_trials"] += trials
        if t is None:
            run["warning"] = "line search failed (no step decreased the objective enough)"
            break
        obj.move(t, s, xs)
        fold, f = f, fnew
        run["it"] += 1
        g, M = unit if unit is not None else obj.grad()
        gnorm = _norm(g)
        if callback is not None:
            callback(run["it"], {"f": f, "grad_norm": gnorm, "relative_grad": gnorm / gnorm0
                                 if gnorm0 > 0 else 0.0, "cg_steps": cg, "step_size": t,
                                 "elapsed": time.perf_counter() - t_start})
        if gnorm <= tol * gnorm0:
            converged = True
            break
        if _stalled(run, f, fold, params):
            break
    if not converged and run["warning"] is None:
        eps = default_eps("newton") if params.eps is None else float(params.eps)
        run["warning"] = (f"reached the maximum number of Newton iterations ({max_iter}) before "
                          f"the stopping tolerance eps={eps:g} was met")
    times = {"solve_time": time.perf_counter() - t_loop, "setup_time": t_loop - t_start}
    return _result(obj, run, f, gnorm, gnorm0, tol, converged, max_iter, times)


def _norm(g):
    return float(math.sqrt(_vdot(g, g)))


def _start(obj, init_w):
    """Start ``obj`` at ``init_w`` (or 0): (g, M) there and |grad f(0)|, the scale of the
    stopping rule (a warm start is measured against the cold start's gradient, as LIBLINEAR's)."""
    if init_w is not None and np.any(init_w):
        g0 = obj.grad_at_zero()
        gnorm0 = _norm(g0)
        obj.start(np.asarray(init_w, dtype=np.float64).reshape(-1))
        g, M = obj.grad()
    else:
        obj.start(None)
        g, M = obj.grad()
        gnorm0 = _norm(g)
    return g, M, gnorm0


def _line_search(obj, f, g, s, xs):
    """Backtracking along ``s`` from t = 1, halving, until Armijo's ``f(w + t s) - f(w) <= eta t
    g's``: (t, f(w + t s), X s, (g, M) at w + s when the unit step came with them, trials);
    t is None when no trial passed.  ``xs`` None: the objective gives X s with the loss,
    gradient and preconditioner at w + s in one pass (the squared hinge), tried first."""
    wTw = _rdot(obj, obj.w, obj.w)
    wTs = _rdot(obj, obj.w, s)
    sTs = _rdot(obj, s, s)
    gTs = _vdot(g, s)
    t = 1.0
    trials = 0
    if xs is None:
        xs = np.empty(obj.oracle.n_rows)
        loss1, g1, M1 = obj.unit_step(s, xs)
        trials = 1
        fnew = loss1 + 0.5 * (wTw + sTs) + wTs
        if fnew - f <= ARMIJO_ETA * gTs:
            return t, fnew, xs, (g1, M1), trials
        t = 0.5
    # on the cached z = X w and xs = X s each trial is O(n)
    while trials < MAX_LINE_SEARCH:
        trials += 1
        fnew = obj.loss_along(xs, t) + 0.5 * (wTw + t * t * sTs) + t * wTs
        if fnew - f <= ARMIJO_ETA * t * gTs:
            return t, fnew, xs, None, trials
        t *= 0.5
    return None, None, xs, None, trials


def _rdot(obj, a, b):
    """a'b over the regularised coordinates (the last one left out when the bias is free)."""
    v = _vdot(a, b)
    if obj.free_last:
        v -= a[-1] * b[-1]
    return v


def _stalled(run, f, fold, params):
    """Whether the run stops before the gradient rule after a step to ``f`` from ``fold`` (the
    objective unbounded, no longer decreasing, the time budget spent); sets its warning."""
    if f < -1.0e32:
        run["warning"] = "objective below -1e32"
    elif abs(fold - f) <= 1.0e-12 * abs(f):
        run["warning"] = ("the objective no longer decreases (relative change <= 1e-12) before "
                          "the gradient rule was met")
    elif time_up(params.deadline):
        run["stopped"] = STOPPED_TIME
        run["warning"] = time_limit_warning(params.solver or "newton", run["it"])
    return run["warning"] is not None


def _result(obj, run, f, gnorm, gnorm0, tol, converged, max_iter, times):
    """The SolverResult at the final w; its objective ``f`` from the cached X w, as LIBLINEAR
    reports it (no extra pass)."""
    oracle = obj.oracle
    extra = {
        "cg_steps": run["cg_steps"],
        "grad_norm": gnorm,
        "grad_norm0": gnorm0,
        "tolerance": tol,
        "line_search_trials": run["line_search_trials"],
        "passes": obj.passes,
        **times,
        "threads": oracle.threads,
        "blocks": oracle.n_blocks,
        "warning": run["warning"],
        "max_iter": max_iter,
    }
    if run["stopped"]:
        extra["stopped"] = run["stopped"]
    return SolverResult(w=obj.w, iterations=run["it"], primal=float(f),
                        gap=gnorm / gnorm0 if gnorm0 > 0 else 0.0,
                        gap_kind="relative gradient norm", converged=bool(converged),
                        extra=extra)

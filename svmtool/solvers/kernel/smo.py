"""LIBSVM's problems solved exactly: SMO with second-order working sets and shrinking.

The maths
---------
Every problem LIBSVM solves is an instance of the dual (Chang and Lin, "LIBSVM: a library for
support vector machines", ACM TIST 2011, section 4)::

    min_a  f(a) = 1/2 a'Qa + p'a    subject to   y'a = Delta,   0 <= a_t <= C_t,

with ``Q_st = y_s y_t K(x_s, x_t)``, ``y_t`` in {-1, +1}; the nu forms add ``e'a = const`` per
sign.  The five problems (:func:`solve_c_svc` and the rest) choose p, y, C and the start:

=============  ====================================  ======================  ===================
problem        variables, y                          p                       start
=============  ====================================  ======================  ===================
c_svc          one per row, the class sign           -1                      0
nu_svc         one per row, the class sign (nu form)  0, C = 1               nu l / 2 per sign
one_class      one per row, y = +1                   0, C = 1                nu l ones
epsilon_svr    two per row (+1, -1)                  eps -+ z_i              0
nu_svr         two per row (+1, -1) (nu form)        -+ z_i, C               C nu l / 2 per sign
=============  ====================================  ======================  ===================

Method (Fan, Chen and Lin, "Working set selection using second order information for training
support vector machines", JMLR 2005): with ``I_up = {t: y_t a_t can grow}`` and ``I_low = {t:
y_t a_t can shrink}``, i maximises ``-y_i G_i`` over I_up (the maximal violation), j minimises
the second-order decrease ``-(b_ij)^2 / a_ij`` over the ``t`` in I_low with ``b_it = -y_i G_i +
y_t G_t > 0``, ``a_it = K_ii + K_tt - 2 K_it`` (``1e-12`` when not positive); the pair is then
minimised exactly along the constraint, and the gradient ``G = Qa + p`` updated with two kernel
rows.  The nu form picks i among the variables of j's sign.  Stopping (``-e``, default 1e-3):
``m(a) - M(a) = max_{I_up} -y G - min_{I_low} -y G < eps``, LIBSVM's rule.

Shrinking (on by default, LIBSVM's ``-h``): every ``min(n, 1000)`` iterations the bounded
variables that cannot re-enter a violating pair under the present bounds leave the active set;
when the violation first falls below ``10 eps`` the gradient of the shrunk variables is rebuilt
and all come back; when the active variables meet the rule, the same happens and the rule is
checked over all variables.  The rebuild adds LIBSVM's ``G_bar`` (the part of the gradient due
to the variables at their upper bound, kept up to date whenever one reaches or leaves it with a
whole kernel row at hand) to a kernel expansion over the other nonzero variables, mostly the
free support vectors.  Kernel rows live in an LRU cache of ``-m`` MB (float32 values, as
LIBSVM); a row is computed only over the active rows when few are active; sparse rows are
computed by columns (a CSC copy: for each stored value of the row, the rows sharing its
feature) when that is less work than gathering per active row.

rho (the model's threshold) is the average of ``y_t G_t`` over the free variables, or the middle
of the interval left by the bounded ones when none is free (nu form: per sign, ``rho = (r1 -
r2) / 2`` and ``r = (r1 + r2) / 2``, by which the nu solutions are scaled).  ``obj`` is
``f(a)``, the number LIBSVM prints.  The iteration cap is LIBSVM's ``max(10^7, 100 n)``.

Threads: one solve is sequential; the one-vs-one pairs run on threads
(:mod:`svmtool.solvers.kernel.libsvm_train`).  The result is deterministic.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from svmtool.ops.kernels import Kernel, Rows, kernel_expansion
from svmtool.solvers.common.result import time_up
from svmtool.solvers.kernel import bsmo
from svmtool.solvers.kernel._smo_jit import rho_and_violation, smo_run
from svmtool.solvers.kernel._smo_rows_jit import (CLOCK, COUNTER, EPOCH, ITERS, MISSES, N_ACT,
                                                  UNSHRUNK, kernel_diag)

CHUNK = 50_000          # iterations between returns to Python (progress, time limit)


@dataclass
class SmoResult:
    alpha: np.ndarray         # the solution of the generic problem (per variable)
    G: np.ndarray             # its gradient Q a + p
    rho: float
    r: float                  # nu form only
    obj: float
    iterations: int
    converged: bool
    violation: float          # max violating pair at the end
    stopped: str = ""         # "", "iterations" or "time limit"
    gap: float = 0.0          # duality gap of the box problem (see solve)
    extra: dict = field(default_factory=dict)
    G_bar: np.ndarray = None  # LIBSVM's G_bar at the end, over the variables of in_gbar
    in_gbar: np.ndarray = None


class KernelData:
    """The rows of one problem as the jitted loop sees them (CSR, dense copies, or the given
    kernel matrix of ``-t 4``)."""

    def __init__(self, X: Rows, kernel: Kernel, kmat=None, threads=None):
        self.X = X
        self.kernel = kernel
        self.l = X.n_rows
        self.precomputed = kernel.ktype == 4
        self.use_dense = (not self.precomputed) and X.prefers_dense()
        nb = max(X.n_features, 1)
        if self.use_dense:
            self.dense = X.dense(nb)
            self.denseT = np.ascontiguousarray(self.dense.T)
        else:
            self.dense = self.denseT = np.zeros((1, 1))
        self.kmat = np.ascontiguousarray(kmat, dtype=np.float64) if self.precomputed \
            else np.zeros((1, 1))
        self.buf = np.zeros(nb + 1)
        if not self.use_dense and not self.precomputed:
            self.cp, self.ci, self.cv = csc_of(X)
        else:
            self.cp = np.zeros(1, dtype=np.int64)
            self.ci = np.zeros(0, dtype=np.int64)
            self.cv = np.zeros(0)
        self.diag = kernel_diag(X.indptr, X.indices, X.data, X.sq, self.kmat, *self.kargs())
        # of the batched solver's row computations and sums and of the kernel expansions
        # (gradient rebuilds); None: svmtool.ops.kernels.n_threads's default
        self.threads = threads

    def kargs(self):
        k = self.kernel
        return (np.int64(k.ktype), float(k.gamma), float(k.coef0), np.int64(k.degree))

    def expansion(self, targets, coef_rows, coef):
        """sum_e coef[e] K(x_d, x_e) for the data points d in ``targets`` (e in coef_rows)."""
        targets = np.asarray(targets, dtype=np.int64)
        if len(coef_rows) == 0 or len(targets) == 0:
            return np.zeros(len(targets))
        if self.precomputed:
            return self.kmat[np.ix_(targets, coef_rows)] @ coef
        k = Kernel(self.kernel.ktype, self.kernel.gamma, self.kernel.coef0, self.kernel.degree,
                   0.0)
        return kernel_expansion(self.X, targets, self.X, np.asarray(coef_rows, dtype=np.int64),
                                coef, k, threads=self.threads, mem_mb=64.0)


def csc_of(X: Rows):
    """The rows' values by feature (CSC: column pointers, row of each value, the values)."""
    lo, hi = int(X.indptr[0]), int(X.indptr[-1])
    cols = np.asarray(X.indices[lo:hi], dtype=np.int64)
    rows = np.repeat(np.arange(X.n_rows, dtype=np.int64), np.diff(X.indptr))
    order = np.argsort(cols, kind="stable")
    counts = np.bincount(cols, minlength=max(X.n_features, 1))
    cp = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=cp[1:])
    return cp, rows[order], np.ascontiguousarray(X.data[lo:hi][order])


def gradient(kd: KernelData, xi, y, p, alpha, targets, mask=None):
    """G_t = p_t + (Q a)_t for the variables ``targets``, from the nonzero a (those of ``mask``
    only, when given)."""
    keep = alpha != 0.0
    if mask is not None:
        keep &= mask
    nz = np.flatnonzero(keep)
    g = p[targets].copy()
    if len(nz) == 0 or len(targets) == 0:
        return g
    coef = np.bincount(xi[nz], weights=y[nz] * alpha[nz], minlength=kd.l)
    rows = np.flatnonzero(coef != 0.0)
    pts = xi[targets]
    upts, inv = np.unique(pts, return_inverse=True)
    f = kd.expansion(upts, rows, coef[rows])
    g += y[targets] * f[inv]
    return g


class RowCache:
    """The LRU cache of kernel rows over the data points of one KernelData (float32, as
    LIBSVM's), with its clock and epoch.  :func:`solve` makes one per call unless given one;
    a cache handed to several solves over the same KernelData (the folds and C values of a
    parameter grid: variables ``xi`` that are subsets of the data points) keeps its whole rows
    from one solve to the next.  Rows computed over the active points of a shrinking epoch are
    never reused by a later solve (each solve starts a new epoch)."""

    def __init__(self, l, cache_mb):
        slots = int(max(4, min(l, cache_mb * (1 << 20) // (4 * max(l, 1)))))
        self.cache = np.empty((slots, l), dtype=np.float32)
        self.slot_of = -np.ones(l, dtype=np.int64)
        self.slot_row = -np.ones(slots, dtype=np.int64)
        self.slot_stamp = np.zeros(slots, dtype=np.int64)
        self.slot_epoch = np.zeros(slots, dtype=np.int64)
        self.clock = 0
        self.epoch = 0
        self.misses = 0

    @property
    def slots(self):
        return self.cache.shape[0]

    def arrays(self):
        return self.cache, self.slot_of, self.slot_row, self.slot_stamp, self.slot_epoch


def solve(kd: KernelData, xi, y, p, C, alpha0, *, eps, nu=False, shrinking=True,
          cache_mb=100.0, max_iter=None, callback=None, deadline=None, G0=None, G_bar0=None,
          rows=None, shrink_first=False, working_set="auto", q=None):
    """Solve the generic problem over the variables (xi, y, p, C) from the feasible alpha0.

    Warm starts: ``G0`` is the gradient ``Q alpha0 + p`` when the caller knows it (alpha
    seeding along a C path scales the previous solution and its gradient), ``G_bar0`` the
    matching G_bar (see below); without them both are computed from alpha0's kernel
    expansion.  ``rows``: a :class:`RowCache` over kd's data points, shared with other solves
    (else a new one of ``cache_mb``); its rows are then always computed whole.
    ``shrink_first``: shrink at the first iteration instead of after min(n, 1000), for a warm
    start whose variables are mostly at their bounds already.  ``working_set``: "pair" (this
    solver), "batched" (:mod:`svmtool.solvers.kernel.bsmo`, same problem and answer; ``q`` its
    working set's size) or "auto" (the choice of :func:`svmtool.solvers.kernel.bsmo.use_batched`)."""
    if bsmo.use_batched(kd, len(y), working_set, rows):
        return _solve_batched(kd, xi, y, p, C, alpha0, G0, q, dict(
            eps=eps, nu=nu, cache_mb=cache_mb, max_iter=max_iter, callback=callback,
            deadline=deadline), shrinking)
    t0 = time.perf_counter()
    n = len(y)
    xi = np.ascontiguousarray(xi, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    p = np.ascontiguousarray(p, dtype=np.float64)
    C = np.ascontiguousarray(C, dtype=np.float64)
    alpha = np.ascontiguousarray(alpha0, dtype=np.float64).copy()
    # whole rows over all data points: for SVR (two variables share one point), for variables
    # on a subset of the points, and for a cache shared with other solves
    full_only = n != kd.l or rows is not None
    G, G_bar, in_gbar = _start_gradients(kd, xi, y, p, C, alpha, G0, G_bar0)
    if rows is None:
        rows = RowCache(kd.l, cache_mb)
    cache, slot_of, slot_row, slot_stamp, slot_epoch = rows.arrays()
    act = np.arange(n, dtype=np.int64)
    dact = np.zeros(n, dtype=np.int64)
    istate = _start_state(n, rows, shrink_first)
    misses0 = rows.misses
    cap = max(10_000_000, 100 * n) if max_iter is None else int(max_iter)
    converged = False
    stopped = ""
    rebuilds = 0
    while n > 0:
        budget = min(CHUNK, cap - int(istate[ITERS]))
        if budget <= 0:
            stopped = "iterations"
            break
        status = smo_run(kd.X.indptr, kd.X.indices, kd.X.data, kd.X.sq, kd.dense, kd.denseT,
                         kd.use_dense, kd.kmat, kd.cp, kd.ci, kd.cv, *kd.kargs(), xi, y, C,
                         kd.diag, alpha, G, act,
                         dact, full_only, 1 if nu else 0, float(eps), bool(shrinking), budget,
                         cache, slot_of, slot_row, slot_stamp, slot_epoch, istate, kd.buf,
                         G_bar, in_gbar)
        if callback is not None:
            callback(int(istate[ITERS]), {"active": int(istate[N_ACT])})
        if status == 0:
            if time_up(deadline):
                stopped = "time limit"
                break
            continue
        n_act = int(istate[N_ACT])
        if status == 1 and n_act == n:
            converged = True
            break
        # bring the shrunk variables back with an exact gradient
        _reactivate(kd, xi, y, p, C, alpha, G, G_bar, in_gbar, act, n_act, istate)
        rebuilds += 1
        # status 2: shrink again at once (LIBSVM goes on shrinking in the same call); status 1:
        # check the rule over all variables first, shrink from the iteration after
        istate[COUNTER] = 1 if status == 2 else 2
    if not converged and int(istate[N_ACT]) < n:
        _reactivate(kd, xi, y, p, C, alpha, G, G_bar, in_gbar, act, int(istate[N_ACT]),
                    istate)
    rows.clock = int(istate[CLOCK])
    rows.epoch = int(istate[EPOCH])
    rows.misses = int(istate[MISSES])
    return _solution(y, p, C, alpha, G, G_bar, in_gbar, nu, converged, stopped, int(istate[ITERS]),
                     {"cache_misses": int(istate[MISSES]) - misses0, "rebuilds": rebuilds,
                      "cache_rows": rows.slots, "solve_time": time.perf_counter() - t0})


def _solve_batched(kd, xi, y, p, C, alpha0, G0, q, kw, shrinking=True):
    """:func:`solve` by :func:`svmtool.solvers.kernel.bsmo.solve_batched`: its start gradient
    computed here, its end turned into the SmoResult (the pair solver taking over should a
    working set stall)."""
    p = np.ascontiguousarray(p, dtype=np.float64)
    alpha0 = np.ascontiguousarray(alpha0, dtype=np.float64)
    if G0 is None:
        G0 = gradient(kd, np.asarray(xi, dtype=np.int64), np.asarray(y, dtype=np.float64), p,
                      alpha0, np.arange(len(y)))
    run = bsmo.solve_batched(kd, xi, y, p, C, alpha0, G0, q=q,
                             gradient=gradient if shrinking else None, **kw)
    if run.stalled:
        cap = kw["max_iter"] if kw["max_iter"] is not None else max(10_000_000, 100 * len(y))
        return solve(kd, xi, y, p, C, run.alpha, **dict(kw, max_iter=max(1, cap - run.steps)),
                     G0=run.G, working_set="pair")
    return _solution(np.asarray(y, dtype=np.float64), p, np.asarray(C, dtype=np.float64),
                     run.alpha, run.G, None, None, kw["nu"], run.converged, run.stopped,
                     run.steps, run.extra)


def _start_gradients(kd, xi, y, p, C, alpha, G0, G_bar0):
    """(G, G_bar, in_gbar) at the start: the gradient Q alpha + p and LIBSVM's G_bar, the sum
    of C_k Q_tk over the variables at their upper bound (``in_gbar``), given or computed."""
    n = len(y)
    if G0 is None:
        G = gradient(kd, xi, y, p, alpha, np.arange(n))
    else:
        G = np.ascontiguousarray(G0, dtype=np.float64).copy()
    in_gbar = (alpha >= C).astype(np.int8)
    if G_bar0 is not None:
        G_bar = np.ascontiguousarray(G_bar0, dtype=np.float64).copy()
    else:
        G_bar = np.zeros(n)
        if in_gbar.any():
            G_bar = gradient(kd, xi, y, np.zeros(n), C, np.arange(n),
                             mask=in_gbar.astype(bool))
    return G, G_bar, in_gbar


def _start_state(n, rows, shrink_first):
    """The kernel loop's integer state at the start: every variable active, the row cache's
    clock and a new epoch."""
    istate = np.zeros(8, dtype=np.int64)
    istate[N_ACT] = n
    # LIBSVM shrinks first after min(n, 1000) iterations; a warm start may shrink at once
    istate[COUNTER] = 1 if shrink_first else min(n, 1000) + 1
    istate[CLOCK] = rows.clock
    istate[EPOCH] = rows.epoch + 1
    istate[MISSES] = rows.misses
    return istate


def _solution(y, p, C, alpha, G, G_bar, in_gbar, nu, converged, stopped, iterations, extra):
    """The SmoResult at alpha: rho (and r for the nu forms), the objective, the violation and
    the duality gap."""
    rho, r, viol = rho_and_violation(alpha, y, C, G, 1 if nu else 0)
    obj = 0.5 * float(alpha @ (G + p))
    # duality gap of the box problem at the multipliers of the equality constraints (rho, or
    # r1 = r + rho, r2 = r - rho per sign): sum a_t (G_t - s_t) + C_t max(0, s_t - G_t) >= 0,
    # zero exactly at a KKT point
    s = rho * y if not nu else np.where(y > 0, r + rho, r - rho)
    gap = float(alpha @ (G - s) + C @ np.maximum(0.0, s - G))
    return SmoResult(alpha=alpha, G=G, rho=float(rho), r=float(r), obj=obj,
                     iterations=iterations, converged=converged, violation=float(viol),
                     stopped=stopped, gap=gap, G_bar=G_bar, in_gbar=in_gbar, extra=extra)


def _reactivate(kd, xi, y, p, C, alpha, G, G_bar, in_gbar, act, n_act, istate):
    """Bring every variable back, the shrunk ones with an exact gradient: G_bar (the bounded
    variables it holds) plus the other nonzero variables, summed over their kernel values."""
    n = len(y)
    if n_act < n:
        mask = np.ones(n, dtype=bool)
        mask[act[:n_act]] = False
        others = np.flatnonzero(mask)
        held = (alpha >= C) & (in_gbar != 0)
        G[others] = G_bar[others] + gradient(kd, xi, y, p, alpha, others, mask=~held)
    act[:] = np.arange(n)
    istate[N_ACT] = n
    istate[EPOCH] += 1
    istate[UNSHRUNK] = 1


# ------------------------------------------------------------------------------------------------
# the five problems; each returns (coef per row, rho, info) as LIBSVM's svm_train_one

@dataclass
class OneSolution:
    coef: np.ndarray          # the model's coefficient of every row (y_i alpha_i, ...)
    rho: float
    obj: float
    iterations: int
    n_sv: int
    n_bsv: int
    converged: bool
    violation: float
    gap: float                # duality gap, in the units of obj
    notes: list               # LIBSVM's extra lines ("nu = ...", "C = ...", "epsilon = ...")
    extra: dict = field(default_factory=dict)


def _finish(res, coef, ub_pos, ub_neg, row_pos, notes, scale=1.0):
    a = np.abs(coef)
    sv = a > 0
    ub = np.where(row_pos, ub_pos, ub_neg)
    n_bsv = int(np.count_nonzero(sv & (a >= ub)))
    extra = dict(res.extra)
    if res.stopped:
        extra["stopped"] = res.stopped
    return OneSolution(coef=coef, rho=res.rho, obj=res.obj, iterations=res.iterations,
                       n_sv=int(np.count_nonzero(sv)), n_bsv=n_bsv, converged=res.converged,
                       violation=res.violation, gap=res.gap * scale, notes=notes, extra=extra)


def _row_weights(W, l):
    """Instance weights of the l rows as float64 (ones when ``W`` is None)."""
    return np.ones(l) if W is None else np.asarray(W, dtype=np.float64)


def fill_start(bounds, total):
    """A feasible start of a sum constraint: in order, each variable takes min(its bound, what
    is left of ``total``) (LIBSVM-weights' start of the nu forms and the one-class SVM)."""
    a = np.zeros(len(bounds))
    rest = float(total)
    for t in range(len(bounds)):
        if rest <= 0.0:
            break
        a[t] = min(float(bounds[t]), rest)
        rest -= a[t]
    return a


def solve_c_svc(kd, yb, Cp, Cn, W=None, **kw):
    """C-SVC: min 1/2 a'Qa - e'a, y'a = 0, 0 <= a_i <= C_{y_i} W_i (W: instance weights)."""
    l = kd.l
    yb = np.asarray(yb, dtype=np.float64)
    C = np.where(yb > 0, Cp, Cn) * _row_weights(W, l)
    res = solve(kd, np.arange(l), yb, -np.ones(l), C, np.zeros(l), **kw)
    notes = []
    if Cp == Cn and l:
        notes.append("nu = %f" % (res.alpha.sum() / (Cp * l)))
    return _finish(res, res.alpha * yb, C, C, yb > 0, notes)


def solve_nu_svc(kd, yb, nu, W=None, **kw):
    """nu-SVC: min 1/2 a'Qa, y'a = 0, e'a = nu sum W, 0 <= a_i <= W_i; scaled by 1/r
    afterwards.  The start fills each sign's nu sum(W) / 2 in row order."""
    l = kd.l
    yb = np.asarray(yb, dtype=np.float64)
    pos = yb > 0
    C = _row_weights(W, l)
    half = nu * float(C.sum()) / 2.0
    alpha0 = np.zeros(l)
    alpha0[pos] = fill_start(C[pos], half)
    alpha0[~pos] = fill_start(C[~pos], half)
    res = solve(kd, np.arange(l), yb, np.zeros(l), C, alpha0, nu=True, **kw)
    r = res.r
    res.rho /= r
    res.obj /= r * r
    return _finish(res, res.alpha * yb / r, C / r, C / r, pos, ["C = %f" % (1.0 / r)],
                   scale=1.0 / (r * r))


def solve_one_class(kd, nu, W=None, **kw):
    """One-class SVM: min 1/2 a'Ka, e'a = nu sum W, 0 <= a_i <= W_i; the start fills nu sum(W)
    in row order."""
    l = kd.l
    C = _row_weights(W, l)
    alpha0 = fill_start(C, nu * float(C.sum()))
    res = solve(kd, np.arange(l), np.ones(l), np.zeros(l), C, alpha0, **kw)
    return _finish(res, res.alpha.copy(), C, C, np.ones(l, dtype=bool), [])


def solve_epsilon_svr(kd, z, C, p_eps, W=None, **kw):
    """epsilon-SVR: variables (a, a*), min 1/2 (a - a*)'K(a - a*) + eps e'(a + a*) - z'(a - a*),
    e'(a - a*) = 0, 0 <= a_i, a*_i <= C W_i."""
    l = kd.l
    z = np.asarray(z, dtype=np.float64)
    xi = np.concatenate([np.arange(l), np.arange(l)])
    y = np.concatenate([np.ones(l), -np.ones(l)])
    p = np.concatenate([p_eps - z, p_eps + z])
    Ci = C * _row_weights(W, l)
    res = solve(kd, xi, y, p, np.concatenate([Ci, Ci]), np.zeros(2 * l), **kw)
    coef = res.alpha[:l] - res.alpha[l:]
    notes = ["nu = %f" % (np.abs(coef).sum() / (C * l))] if l else []
    return _finish(res, coef, Ci, Ci, z > 0, notes)


def solve_nu_svr(kd, z, C, nu, W=None, **kw):
    """nu-SVR: min 1/2 (a - a*)'K(a - a*) - z'(a - a*), e'(a - a*) = 0, e'(a + a*) = nu sum C_i,
    0 <= a_i, a*_i <= C_i = C W_i; epsilon comes out as -r.  The start gives a_i = a*_i the
    fill of nu sum(C_i) / 2 in row order."""
    l = kd.l
    z = np.asarray(z, dtype=np.float64)
    xi = np.concatenate([np.arange(l), np.arange(l)])
    y = np.concatenate([np.ones(l), -np.ones(l)])
    p = np.concatenate([-z, z])
    Ci = C * _row_weights(W, l)
    a = fill_start(Ci, nu * float(Ci.sum()) / 2.0)
    res = solve(kd, xi, y, p, np.concatenate([Ci, Ci]), np.concatenate([a, a]), nu=True, **kw)
    coef = res.alpha[:l] - res.alpha[l:]
    return _finish(res, coef, Ci, Ci, z > 0, ["epsilon = %f" % (-res.r)])

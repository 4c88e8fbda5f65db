"""1-slack cutting-plane SVM (``-s cp``): Joachims, "Training linear SVMs in linear time",
KDD 2006, Algorithm 1.

The problem (LIBLINEAR's ``-s 3`` problem, per-example costs ``c_i``: ``C_pos`` / ``C_neg``)::

    min_w  F(w) = 1/2 w'w + R(w),     R(w) = sum_i c_i max(0, 1 - y_i w'x_i).

Joachims' structural form (OP2) writes the same problem with one slack ``xi`` and the cost
``C n`` (with weights: ``sum_i c_i``, the slack becoming a ``c``-weighted average of the hinge
losses): ``R(w) >= <a_c, w> + b_c`` for every subset ``c`` of the rows, with
``a_c = -sum_{i in c} c_i y_i x_i`` and ``b_c = sum_{i in c} c_i``.  The most violated constraint
at ``w`` is the subset of margin violators ``y_i w'x_i < 1``: one pass for ``X w``, one over the
violators for ``X' v`` (O(sn)).  Each iteration adds it to the working set and re-solves the small
dual QP over the working set (:mod:`svmtool.solvers.cutting_plane.qp`, warm-started, jitted).

``-e`` (default 0.001) is the paper's stopping rule: stop when the most violated constraint
exceeds the working-set slack by at most ``eps`` in units of the average slack, i.e.

    R(w) - max(0, max_{j in W} <a_j, w> + b_j)  <=  eps * sum_i c_i     (= eps * C n).

(With an inexact QP the check includes the QP's own gap, so it reads ``F(w) - D(alpha) <=
eps C n``; with an exact QP both are the same.)  Then ``F(w) - F(w*) <= eps C n``.  ``-e 0.001``
is 0.1% of training loss, the same size as SVMperf's ``-e 0.1``, but not SVMperf's rule.

``--perf-e E`` (``perf_eps``) is SVMperf 3.00's own rule instead, as its 1-slack dual algorithm
(``svm_perf_learn -w 3``, ``svm_learn_struct_joint`` of SVM-struct) applies it.  SVMperf's slack
is ``xi = 100 R(w) / (C n)`` (percent) and ``E`` an absolute tolerance on it.  Its working-set
slack is not the largest cut value: it is the value at ``w`` of the *first* cut of the working
set (in the order they were added, after the removal of inactive ones) whose ``alpha`` is above
the working set's mean ``alpha`` (0 when there is none).  The run stops when the new most
violated constraint exceeds that slack by at most ``E`` -- the QP's own gap is not added -- and
each reduced QP is solved to half the smallest excess seen so far (SVMperf's ``epsilon_crit``).
SVMperf counts the last, checking iteration too: its iteration count is svmtool's plus one.

Returns the last ``w`` (as the paper), ``primal = F(w)``, ``dual`` = the QP's dual value (a lower
bound on ``F(w*)``), ``gap = primal - dual``.  ``extra`` holds iterations, working-set size,
seconds in data passes / QP / the rest, and the number of passes.

The data are touched only through :class:`svmtool.engine.passes_cp.CPOracle` (whole passes).
"""

import time

import numpy as np

from svmtool.engine.hinge import (cut_point_inplace, hinge_risk, hinge_sums, signs_and_costs,
                                  step_inplace)
from svmtool.engine.passes_cp import CPOracle, vdot
from svmtool.labels import check_signs
from svmtool.solvers import default_eps
from svmtool.solvers.common.result import SolverResult
from svmtool.solvers.cutting_plane.qp import QP_FOLLOW, WorkingSet
from svmtool.solvers.cutting_plane.stopping import early_stop, stop_reason, stop_warning

DEFAULT_MAX_ITER = 100000


class HingeRisk:
    """Binary hinge risk over an oracle: scores, risk, most violated constraint, line function.

    ``oracle``: :class:`svmtool.engine.passes_cp.CPOracle` or
    :class:`svmtool.solvers.scale_out.out_of_core.StreamedPasses` (``matvec(w, out)``,
    ``hinge_grad``, ``hinge_cut``).  ``cost``: ``(C_pos, C_neg)``, or a per-row vector.  Per-row
    memory: the labels as int8 signs with the costs by class (a per-row vector that is constant
    within each class becomes that), else the float64 signed costs (:mod:`svmtool.engine.hinge`);
    nothing else -- the cut's coefficients are never stored, and the score vectors are the
    driver's."""

    def __init__(self, oracle, y, cost):
        self.oracle = oracle
        if isinstance(cost, tuple):
            self.lab, self.c_pos, self.c_neg = signs_and_costs(y, None, *cost)
        else:
            self.lab, self.c_pos, self.c_neg = signs_and_costs(y, cost)
        self.dim = oracle.n_features
        self.n = len(self.lab)
        if self.lab.dtype == np.int8:
            n_pos = int(np.count_nonzero(self.lab > 0))
            self.scale = n_pos * self.c_pos + (self.n - n_pos) * self.c_neg   # C n (weighted)
        else:
            self.scale = float(np.abs(self.lab).sum())
        self.last_violators = 0
        self._z = None

    def zeros_scores(self):
        return np.zeros(self.n, dtype=np.float64)

    def scores(self, w, out=None):
        """``X w`` (into ``out``, a score vector the caller no longer needs, when given)."""
        return self.oracle.matvec(w, out)

    def risk(self, z):
        return float(hinge_risk(z, self.lab, self.c_pos, self.c_neg))

    def cut(self, z):
        """``(a, b, risk)`` of the most violated constraint at scores ``z``."""
        risk, off, nv = hinge_sums(z, self.lab, self.c_pos, self.c_neg)
        self.last_violators = int(nv)
        if nv:
            a = -self.oracle.hinge_grad(z, self.lab, self.c_pos, self.c_neg)
        else:
            a = np.zeros(self.dim, dtype=np.float64)
        return a, float(off), float(risk)

    def cut_at(self, w):
        """:meth:`cut` at ``w`` itself: scores and cut in one pass over the rows (the same
        numbers as ``cut(scores(w))``), the scores in one buffer kept between calls."""
        if self._z is None:
            self._z = np.empty(self.n, dtype=np.float64)
        z, g = self.oracle.hinge_cut(w, self.lab, self.c_pos, self.c_neg, self._z)
        risk, off, nv = hinge_sums(z, self.lab, self.c_pos, self.c_neg)
        self.last_violators = int(nv)
        if not nv:
            g[:] = 0.0
        return -g, float(off), float(risk)

    # ---- OCAS's line w_b + mu (w_t - w_b), from the scores zb and zt at its ends ------------
    def line(self, zb, zt, A, B, c0):
        from svmtool.solvers.cutting_plane.linesearch import HingeLine

        return HingeLine(zb, zt, self.lab, self.c_pos, self.c_neg, A, B, c0)

    def step(self, zb, zt, mu):
        """The scores at ``w_b + mu (w_t - w_b)``, in ``zb``'s buffer."""
        step_inplace(zb, zt, float(mu))
        return zb

    def cut_point(self, zb, zt, lam):
        """The scores at ``(1 - lam) w_b + lam w_t``, in ``zt``'s buffer."""
        cut_point_inplace(zb, zt, float(lam))
        return zt


def _perf_slack(ws):
    """SVMperf's working-set slack: the value of the first cut whose alpha is above the mean
    alpha of the cuts (``svm_learn_struct_joint``); needs ``ws.g`` current (after a solve)."""
    t = ws.t
    if t <= 1:
        return 0.0
    al = ws.alpha[1:t]
    above = np.flatnonzero(al > float(al.sum()) / (t - 1))
    if len(above) == 0:
        return 0.0
    return max(0.0, -float(ws.g[1 + above[0]]))


def solve_cp(risk, eps, max_iter, init_w=None, callback=None, inactive_limit=50, deadline=None,
             perf_eps=None):
    """Joachims' Algorithm 1 over any risk adapter (binary hinge, ordinal pairs); with
    ``perf_eps``, SVMperf's stopping rule (see the module docstring)."""
    t_start = time.perf_counter()
    oracle = risk.oracle
    p0, s0 = oracle.passes, oracle.seconds
    ws = WorkingSet(risk.dim, inactive_limit=inactive_limit,
                    threads=getattr(oracle, "threads", 1))
    w = start_point(risk, init_w)
    perf = perf_eps is not None
    target = (float(perf_eps) / 100.0 if perf else eps) * risk.scale
    perf_qp = risk.scale                  # SVMperf's epsilon: 100 (percent), then min excess
    lower = -np.inf
    qp_gap = 0.0
    model = 0.0
    t_qp = 0.0
    converged = False
    stopped = None
    it = 0
    primal = np.inf
    best = np.inf
    violation = np.inf
    max_ws = 0
    while True:
        if it == 0 and init_w is None:
            a, b, R = risk.cut(risk.zeros_scores())
        elif hasattr(risk, "cut_at"):
            a, b, R = risk.cut_at(w)
        else:
            a, b, R = risk.cut(risk.scores(w))
        primal = 0.5 * float(vdot(w, w)) + R
        # most violated constraint minus working-set slack
        violation = max(0.0, R - model) if perf else R - model
        stop_gap = violation if perf else violation + qp_gap     # what the stopping rule tests
        if callback is not None and it > 0:
            callback(it, {"primal": primal, "lower": lower, "violation": violation / risk.scale,
                          "cuts": ws.size, "elapsed": time.perf_counter() - t_start})
        if it > 0 and stop_gap <= target:
            converged = True
            break
        best = min(best, primal)
        stopped = stop_reason(it, stop_gap, target, lower, best, max_iter, deadline)
        if stopped:
            break
        it += 1
        ws.add(a, b)
        tq = time.perf_counter()
        if perf:
            perf_qp = min(perf_qp, violation)
            D, qp_gap = ws.solve(tol_abs=0.0, tol_rel=0.0, tol_pair=0.5 * perf_qp)
        else:
            D, qp_gap = ws.solve(tol_abs=max(0.05 * target, QP_FOLLOW * violation),
                                 tol_rel=1e-13)
        if not perf:
            model = max(0.0, -float(np.min(ws.g[:ws.t])))
        w = ws.w()
        t_qp += time.perf_counter() - tq
        lower = max(lower, D)
        max_ws = max(max_ws, ws.size)
        ws.prune()
        if perf:
            model = _perf_slack(ws)
    warning = stop_warning(stopped, "cp", it, max_iter, eps, gap=stop_gap, target=target,
                           lower=lower, best=best, rule_eps=perf_eps if perf else eps)
    extra = {
        "eps": eps,
        "eps_absolute": target,
        "stop_rule": "svmperf" if perf else "relative",
        "violation": violation,
        **run_counters(ws, oracle, p0, s0, t_start, t_qp, 0.0, max_cuts=max_ws),
        "warning": warning,
    }
    return cp_result(w, it, primal, lower, converged, stopped, extra)


def start_point(risk, init_w):
    """The first point of a cutting-plane driver: ``init_w`` (checked against the problem's
    dimension) or zeros."""
    if init_w is None:
        return np.zeros(risk.dim, dtype=np.float64)
    w = np.array(init_w, dtype=np.float64).reshape(-1)
    if w.shape[0] != risk.dim:
        raise ValueError(f"init_w has {w.shape[0]} entries, expected {risk.dim}")
    return w


def run_counters(ws, oracle, p0, s0, t_start, t_qp, t_ls, max_cuts=None):
    """What every cutting-plane driver reports of its run: the working set, the data passes
    since (p0, s0) and where the seconds since ``t_start`` went (passes, QP, line search)."""
    total = time.perf_counter() - t_start
    t_pass = oracle.seconds - s0
    out = {"cuts": ws.size}
    if max_cuts is not None:
        out["max_cuts"] = max_cuts
    out.update({"cuts_dropped": ws.dropped, "qp_iterations": ws.qp_iterations,
                "passes": oracle.passes - p0, "time_passes": t_pass, "time_qp": t_qp,
                "time_line_search": t_ls, "time_other": total - t_pass - t_qp - t_ls,
                "solve_time": total})
    return out


def cp_result(w, iterations, primal, lower, converged, stopped, extra):
    """The SolverResult of a cutting-plane driver: gap = primal - lower bound; ``stopped`` the
    reason it stopped (svmtool.solvers.cutting_plane.stopping)."""
    if early_stop(stopped):
        extra["stopped"] = early_stop(stopped)
    return SolverResult(w=w, iterations=iterations, primal=primal, gap=primal - lower,
                        gap_kind="primal - lower bound", converged=converged, dual=lower,
                        extra=extra)


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        weights=None):
    """Binary L1-loss SVM by the 1-slack cutting-plane method; see the module docstring.
    ``weights``: one instance weight a row (row i's cost ``C_class W_i`` in the risk and in
    each cut: a violator's contribution times its cost), or None."""
    from svmtool.solvers.common import weighted

    weights = weighted.checked(weights, len(indptr) - 1)
    if weighted.has_zeros(weights):
        return weighted.fit_positive(fit, indptr, indices, data, y, weights, n_features, C_pos,
                                     C_neg, params, init_w=init_w, callback=callback)
    y, C_pos, C_neg = check_signs(len(indptr) - 1, y, C_pos, C_neg)
    oracle = CPOracle(indptr, indices, data, n_features, params.threads)
    cost = (C_pos, C_neg) if weights is None else weighted.row_costs(y, C_pos, C_neg, weights)
    return solve_with(HingeRisk(oracle, y, cost), params, init_w, callback)


def fit_rows(rows, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
             weights=None):
    """:func:`fit` over a row source of :mod:`svmtool.solvers.scale_out` (blocks of a
    memory-mapped cache, shards on a dask cluster), which builds the hinge risk; ``weights``:
    one instance weight a row (a row of weight 0 stays in the passes with cost 0), or None."""
    y, C_pos, C_neg = check_signs(rows.n_rows, y, C_pos, C_neg)
    return solve_with(risk_of_rows(rows, y, C_pos, C_neg, weights), params, init_w, callback)


def risk_of_rows(rows, y, C_pos, C_neg, weights=None):
    """The row source's hinge risk, weighted when ``weights`` (one a row) is given."""
    if weights is None:
        return rows.hinge_risk(y, C_pos, C_neg)
    from svmtool.solvers.common import weighted

    return rows.hinge_risk(y, C_pos, C_neg, weights=weighted.checked(weights, rows.n_rows))


def solve_with(risk, params, init_w=None, callback=None):
    """:func:`solve_cp` with what ``params`` (TrainParams) says: eps and the iteration cap (the
    defaults above when unset), the working set's inactive limit, the time budget and
    SVMperf's stopping rule (``params.cp.perf_eps``)."""
    eps = default_eps("cp") if params.eps is None else float(params.eps)
    max_iter = DEFAULT_MAX_ITER if params.max_iter is None else int(params.max_iter)
    return solve_cp(risk, eps, max_iter, init_w=init_w, callback=callback,
                    inactive_limit=int(params.cp.inactive_limit), deadline=params.deadline,
                    perf_eps=params.cp.perf_eps)

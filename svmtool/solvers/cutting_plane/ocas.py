"""OCAS: the optimised cutting-plane algorithm (``-s ocas``, ``-s gca2``, ``-s tca``).

Franc and Sonnenburg, "OCAS: optimized cutting plane algorithm for support vector machines",
ICML 2008; line searches from Arnosti, "Reducing training time for linear SVMs" (2010), see
:mod:`svmtool.solvers.cutting_plane.linesearch`.

Same problem as ``-s cp`` and LIBLINEAR's ``-s 3``: ``F(w) = 1/2 w'w + sum_i c_i max(0, 1 -
y_i w'x_i)``.  With instance weights (the fit's ``weights``) ``c_i`` is the class's C times the
row's weight: each row's share of the risk and of a cut's subgradient is scaled by it (the risk's
per-row costs, :mod:`svmtool.engine.hinge`); a row of weight 0 takes no part.  Cutting planes of the risk go into the same reduced QP
(:mod:`svmtool.solvers.cutting_plane.qp`), but OCAS keeps a best-so-far point ``w_b`` and per
iteration:

1. solves the reduced QP: ``w_t`` and a lower bound ``D`` on ``min F`` (the QP's dual value);
2. one pass ``X w_t``; a line search for ``mu >= 0`` minimising ``F(w_b + mu (w_t - w_b))`` from
   the cached ``X w_b`` and ``X w_t`` (``exact``: the breakpoints' segment holding the minimiser
   found by selection, O(n) expected; ``sorted``: OCAS's sort and walk, O(n log n); ``gca2`` /
   ``tca``: O(n) per evaluation of f); ``w_b`` moves there (its scores too, without a pass);
3. stops when ``F(w_b) - D <= eps * F(w_b)`` (relative gap, ``-e``, default 0.01) or ``F(w_b) - D
   <= tol_abs`` (``params.cp.tol_abs``, default 0: off);
4. adds the cut at ``w_c = (1 - lambda) w_b + lambda w_t`` (``lambda = 0.1``, a point near
   ``w_b``), one pass over the violators for its subgradient.

Guard against ``mu = 0``: when the line search returns ``mu = 0`` for ``mu0_patience`` (5)
iterations in a row, ``mu0_step`` (0.02) is used instead (Arnosti, section V: a greedy ``mu = 0``
can stall OCAS for many iterations).  On by default; ``params.cp.mu0_guard = False`` turns
it off.  Since ``w_b`` is then no longer the best point seen (nor is it with gca2/tca, whose grid
points need not beat ``mu = 0``), the solver also keeps the best point, which it returns.

``extra`` reports iterations, passes, the seconds spent in data passes, in the QP and in the line
search, f evaluations, how often ``mu`` was 0 and how often the guard fired.
"""

import time

import numpy as np

from svmtool.engine.passes_cp import CPOracle, vdot
from svmtool.labels import check_signs
from svmtool.params import CuttingPlaneParams
from svmtool.solvers import default_eps
from svmtool.solvers.cutting_plane.cutting_plane import (HingeRisk, cp_result, run_counters,
                                                         start_point)
from svmtool.solvers.cutting_plane.linesearch import make_search
from svmtool.solvers.cutting_plane.qp import QP_FOLLOW, WorkingSet
from svmtool.solvers.cutting_plane.stopping import stop_reason, stop_warning

DEFAULT_MAX_ITER = 100000
CUT_LAMBDA = 0.1
QP_TOL = 0.1          # the reduced QP's tolerance, as a fraction of the target gap


def solve_ocas(risk, eps, max_iter, search, init_w=None, callback=None, cp=CuttingPlaneParams(),
               name="ocas", deadline=None):
    """OCAS over a risk adapter (see the module docstring); ``cp``: the options of the family
    (its absolute gap, the mu = 0 guard, the working set's inactive limit)."""
    tol_abs = float(cp.tol_abs)
    t_start = time.perf_counter()
    oracle = risk.oracle
    p0, s0 = oracle.passes, oracle.seconds
    ws = WorkingSet(risk.dim, inactive_limit=int(cp.inactive_limit),
                    threads=getattr(oracle, "threads", 1))
    wb = start_point(risk, init_w)
    zb = risk.scores(wb) if init_w is not None else risk.zeros_scores()
    spare = None
    a, b, R = risk.cut(zb)
    ws.add(a, b)
    best_w, best_F = wb.copy(), 0.5 * float(vdot(wb, wb)) + R
    lower = -np.inf
    run = _Counters(cp)
    converged = False
    stopped = None
    it = 0
    while True:
        it += 1
        # 1. the reduced QP: its solution w_t and a lower bound on min F
        wt, lower = _reduced_qp(ws, run, eps, tol_abs, best_F, lower)
        # 3. the gap between the best point and the lower bound (also after the step below)
        if _gap_met(best_F, lower, eps, tol_abs):
            converged = True
            break
        stopped = stop_reason(it - 1, best_F - lower, max(eps * abs(best_F), tol_abs), lower,
                              best_F, max_iter, deadline)
        if stopped:
            it -= 1
            break
        # 2. one pass X w_t, then w_b moves along w_t - w_b by the line search
        zt = risk.scores(wt, spare)
        spare = None
        mu, d = _step(risk, search, run, wb, zb, wt, zt)
        wb = wb + mu * d
        zb = risk.step(zb, zt, mu)
        Fb = 0.5 * float(vdot(wb, wb)) + risk.risk(zb)
        if Fb < best_F:
            best_F = Fb
            best_w = wb.copy()
        if callback is not None:
            callback(it, {"primal": best_F, "lower": lower,
                          "gap": (best_F - lower) / max(abs(best_F), 1e-300), "mu": mu,
                          "cuts": ws.size, "elapsed": time.perf_counter() - t_start})
        if _gap_met(best_F, lower, eps, tol_abs):
            converged = True
            break
        # 4. the cut at w_c, between w_b and w_t
        zc = risk.cut_point(zb, zt, CUT_LAMBDA)
        zt = None
        a, b, _ = risk.cut(zc)
        spare, zc = zc, None         # the next scores go into this buffer
        ws.add(a, b)
        ws.prune()
    warning = stop_warning(stopped, name, it, max_iter, eps, gap=best_F - lower,
                           target=max(eps * abs(best_F), tol_abs), lower=lower, best=best_F,
                           rule="the relative gap", point="the best point found")
    extra = {"eps": eps, "line_search": search.name, **run.report(),
             **run_counters(ws, oracle, p0, s0, t_start, run.t_qp, run.t_ls), "warning": warning}
    return cp_result(best_w, it, best_F, lower, converged, stopped, extra)


def _gap_met(best_F, lower, eps, tol_abs):
    """OCAS's stopping rule: the relative gap within eps, or the absolute gap within tol_abs."""
    gap = best_F - lower
    return gap <= eps * abs(best_F) or gap <= tol_abs


def _reduced_qp(ws, run, eps, tol_abs, best_F, lower):
    """Solve the reduced QP over the cuts: (w_t, the lower bound raised to its dual value)."""
    tq = time.perf_counter()
    # the reduced QP to a tenth of the target gap: any feasible point of it is a valid lower
    # bound, and a tighter QP bought no fewer iterations (news20, C 1, -e 0.001: 953 outer
    # iterations at a hundredth, 955 at a tenth, with 4.4x fewer QP steps)
    D, _ = ws.solve(tol_abs=max(QP_TOL * eps * abs(best_F), 0.1 * tol_abs,
                                QP_FOLLOW * (best_F - lower)), tol_rel=1e-13)
    wt = ws.w()
    run.t_qp += time.perf_counter() - tq
    return wt, max(lower, D)


def _step(risk, search, run, wb, zb, wt, zt):
    """(mu, d): the line search's step along d = w_t - w_b from the cached scores of both
    points, with the mu = 0 guard."""
    tl = time.perf_counter()
    d = wt - wb
    line = risk.line(zb, zt, float(vdot(d, d)), float(vdot(wb, d)), 0.5 * float(vdot(wb, wb)))
    mu = run.guarded(float(search(line)))
    run.evals += line.evals
    run.t_ls += time.perf_counter() - tl
    return mu, d


class _Counters:
    """What an OCAS run counts besides its iterations (QP and line-search seconds, f
    evaluations, mu = 0 steps and guard firings), and the mu = 0 guard's own state."""

    def __init__(self, cp):
        self.guard, self.patience, self.forced_step = (bool(cp.mu0_guard), int(cp.mu0_patience),
                                                       float(cp.mu0_step))
        self.t_qp = self.t_ls = 0.0
        self.evals = self.mu_zero = self.forced = self.zero_run = 0

    def guarded(self, mu):
        """The step to take for the line search's ``mu``: ``mu0_step`` after ``mu0_patience``
        zero steps in a row when the guard is on."""
        if not mu <= 0.0:
            self.zero_run = 0
            return mu
        self.mu_zero += 1
        self.zero_run += 1
        if self.guard and self.zero_run >= self.patience:
            self.forced += 1
            self.zero_run = 0
            return self.forced_step
        return 0.0

    def report(self):
        return {"line_evals": self.evals, "mu_zero": self.mu_zero, "mu_forced": self.forced}


# The score vectors are the solver's per-row memory (8 bytes a row each): OCAS keeps two, the
# scores at the best-so-far point and at the QP's point (whose buffer then holds the cut point's
# scores, then the next QP point's).  The risk adapter does the updates (``step``,
# ``cut_point``) -- in place for the binary hinge risk, whose line search and cut store no
# per-row vector either -- and the line ``line(zb, zt, ...)`` takes the two ends.


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        line_search=None, weights=None):
    """Binary L1-loss SVM by OCAS; ``line_search`` (or ``params.cp.line_search``) picks
    exact / sorted / gca2 / tca; ``weights``: one instance weight a row (row i's cost
    ``C_class W_i``: its share of the risk and of each cut's subgradient), or None."""
    from svmtool.solvers.common import weighted

    weights = weighted.checked(weights, len(indptr) - 1)
    if weighted.has_zeros(weights):
        return weighted.fit_positive(fit, indptr, indices, data, y, weights, n_features, C_pos,
                                     C_neg, params, init_w=init_w, callback=callback,
                                     line_search=line_search)
    y, C_pos, C_neg = check_signs(len(indptr) - 1, y, C_pos, C_neg)
    oracle = CPOracle(indptr, indices, data, n_features, params.threads)
    cost = (C_pos, C_neg) if weights is None else weighted.row_costs(y, C_pos, C_neg, weights)
    risk = HingeRisk(oracle, y, cost)
    return solve_with(risk, params, line_search, init_w=init_w, callback=callback)


def fit_rows(rows, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
             line_search=None, weights=None):
    """:func:`fit` over a row source of :mod:`svmtool.solvers.scale_out` (blocks of a
    memory-mapped cache, shards on a dask cluster), which builds the hinge risk; ``weights``:
    one instance weight a row (a row of weight 0 stays in the passes with cost 0), or None."""
    from svmtool.solvers.cutting_plane.cutting_plane import risk_of_rows

    y, C_pos, C_neg = check_signs(rows.n_rows, y, C_pos, C_neg)
    return solve_with(risk_of_rows(rows, y, C_pos, C_neg, weights), params, line_search,
                      init_w=init_w, callback=callback)


def solve_with(risk, params, line_search=None, init_w=None, callback=None, name="ocas"):
    """:func:`solve_ocas` with what ``params`` (TrainParams) says: eps and the iteration cap
    (OCAS's defaults when unset), the line search (``params.cp.line_search``, else
    ``line_search``, else exact) and the OCAS options of ``params.cp``; the drivers over local
    arrays, Crammer-Singer, memory-mapped blocks and dask shards all start OCAS here."""
    eps = default_eps("ocas") if params.eps is None else float(params.eps)
    max_iter = DEFAULT_MAX_ITER if params.max_iter is None else int(params.max_iter)
    ls = params.cp.line_search or line_search or "exact"
    return solve_ocas(risk, eps, max_iter, make_search(ls), init_w=init_w, callback=callback,
                      cp=params.cp, name=f"{name} ({ls})", deadline=params.deadline)

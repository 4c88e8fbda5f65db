"""``-s cp --loss``: SVMperf's multivariate losses (Joachims, "A support vector method for
multivariate performance measures", ICML 2005) on the 1-slack cutting plane.

The whole training set is one structured example: a labeling ``ybar`` of all ``n`` rows is
scored by ``w'Psi(ybar) = 1/(2n) sum_i ybar_i w'x_i`` and costs ``Delta(y, ybar)``, a loss of the
whole prediction vector.  In LIBLINEAR's convention (the cost ``C n`` of the one slack, as
``-s cp``)::

    min_w  F(w) = 1/2 w'w + C n xi(w),
    xi(w)  = max_ybar  Delta(y, ybar) - 1/n sum_{i: ybar_i != y_i} y_i w'x_i,

which for the error rate is exactly ``-s cp``'s hinge-loss SVM.  SVMperf states it with its own
C (``C_perf xi`` with ``Delta`` in percent): ``C = C_perf * 100 / n``, the conversion of
``--perf-c``, so that ``F(w)`` is SVMperf's primal value ``pval`` for the same ``w``.

Losses (``Delta`` as a fraction; ``a, b, c, d`` the contingency table of ``ybar``: true
positives, false positives, false negatives, true negatives; ``P`` positives):

* ``errorrate`` -- ``(b + c) / n``: the hinge loss of every row (``-s cp`` itself);
* ``f1``        -- ``1 - F1 = 1 - 2a / (2a + b + c)`` (1 when ``a = 0``);
* ``prbep``     -- ``1 - a / P`` over the labelings with exactly ``P`` positive predictions,
  where precision equals recall (the precision/recall break-even point);
* ``prec@k``    -- ``1 - a / (a + b)`` over the labelings with at least ``k`` positive
  predictions, ``k = k_fraction * P`` (default 0.5 P);
* ``rec@k``     -- ``1 - a / P`` over the labelings with at most ``k`` positive predictions
  (default ``k = 2 P``);
* ``rocarea``   -- the fraction of swapped positive/negative pairs ``1 - ROC area``, over rankings.

The most violated constraint at ``w`` is found as the paper shows: for the table losses, one
sort of each class's scores and a sweep over the tables
(:mod:`svmtool.solvers.cutting_plane._multivariate_jit`: for each ``a`` a binary search over ``b``,
O(n log n)); for ROC area the per-row counts of violated pairs
(``svmtool.engine.passes_cp.pair_counts``, O(n log n)), through
:class:`svmtool.solvers.cutting_plane.ordinal.PairRisk` with the pair cost ``C n / (P N)``.  The cut
is ``a = -C sum_{flipped} y_i x_i``, ``b = C n Delta``: two row passes per iteration, the rest is
``-s cp``'s driver and stopping rule (``-e``: the most violated constraint's excess over the working
set's slack, in units of ``xi``, so ``F(w) - F(w*) <= eps C n``; SVMperf's ``-e`` is in percent,
``eps = e_perf / 100``).

One difference from SVMperf 3.00: its search skips every labeling whose loss is 0; here every
labeling of the loss's set counts (those of loss 0 other than ``y`` itself exist for prec@k and
rec@k only: e.g. prec@k with all ``k`` top predictions right but positives flipped further down),
so the constraint set is the structural SVM's whole set.  For F1, PRBEP, error rate and ROC area
the two are the same problem.

The model is SVMperf's: a linear ``w`` whose bias column (``-B``, SVMperf's ``--b``) becomes the
threshold of the SVMlight-format model.  Labels: the first class of the API's grouping is the
positive one (+1 in a {-1, +1} problem); several classes are trained one against the rest.
"""

import numpy as np

from svmtool.engine.passes_cp import CPOracle, vdot
from svmtool.solvers import default_eps
from svmtool.solvers.common.result import SolverResult
from svmtool.labels import check_binary
from svmtool.solvers.cutting_plane.cutting_plane import DEFAULT_MAX_ITER, solve_cp
from svmtool.solvers.cutting_plane.cutting_plane import fit as fit_hinge
from svmtool.solvers.cutting_plane.ordinal import PairRisk

# --loss name -> SVMperf's -l number (the loss ids of the jitted sweep, 10 for ROC area)
LOSS_NUMBER = {"f1": 1, "errorrate": 2, "prbep": 3, "prec@k": 4, "rec@k": 5, "rocarea": 10}
TABLE_LOSSES = ("f1", "errorrate", "prbep", "prec@k", "rec@k")


def k_of(loss, n_pos, k_fraction=0.0):
    """SVMperf's k of prec@k / rec@k: ``int(fraction * P)``, at least 1 (fraction 0: 0.5 for
    prec@k, 2 for rec@k); 0 for the other losses."""
    if loss not in ("prec@k", "rec@k"):
        return 0
    frac = float(k_fraction) or (0.5 if loss == "prec@k" else 2.0)
    return max(1, int(n_pos * frac))


def table_value(y, z, ybar, loss, k=0):
    """``(value, Delta)`` of one labeling ``ybar`` (None when the loss's set excludes it) --
    the quantity the sweep maximises, computed directly (tests, small checks)."""
    from svmtool.solvers.cutting_plane import _multivariate_jit as mj

    y = np.asarray(y, dtype=np.float64)
    ybar = np.asarray(ybar, dtype=np.float64)
    P = int(np.sum(y > 0))
    N = len(y) - P
    a = int(np.sum((y > 0) & (ybar > 0)))
    b = int(np.sum((y < 0) & (ybar > 0)))
    lo, hi = mj.b_range(LOSS_NUMBER[loss], a, P, N, k)
    if not lo <= b <= hi:
        return None
    d = float(mj.delta(LOSS_NUMBER[loss], a, b, P, N))
    flipped = ybar != y
    return len(y) * d - float(np.sum(y[flipped] * np.asarray(z)[flipped])), d


class TableRisk:
    """``C n xi(w)`` of a contingency-table loss over an oracle (the risk adapter of
    :func:`svmtool.solvers.cutting_plane.cutting_plane.solve_cp`)."""

    def __init__(self, oracle, y, C, loss, k_fraction=0.0):
        self.oracle = oracle
        self.dim = oracle.n_features
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.C = float(C)
        self.loss = loss
        self.loss_id = LOSS_NUMBER[loss]
        self.n_pos = int(np.sum(self.y > 0))
        self.k = k_of(loss, self.n_pos, k_fraction)
        self.scale = self.C * len(self.y)
        self._v = np.zeros(len(self.y), dtype=np.float64)
        self.table = None                # (a, b, c, d) of the last most violated labeling
        self.delta = None

    def zeros_scores(self):
        return np.zeros(len(self.y), dtype=np.float64)

    def scores(self, w):
        return self.oracle.matvec(w)

    def cut(self, z):
        from svmtool.solvers.cutting_plane._multivariate_jit import threshold_cut

        z = np.ascontiguousarray(z, dtype=np.float64)
        val, d, a, b = threshold_cut(z, self.y, self.loss_id, self.k, self._v)
        P, N = self.n_pos, len(self.y) - self.n_pos
        self.table = (int(a), int(b), int(P - a), int(N - b))
        self.delta = float(d)
        coef = self.C * self._v
        off = self.scale * float(d)
        risk = off - float(vdot(coef, z))
        if a < P or b > 0:
            g = -self.oracle.rmatvec(coef)
        else:
            g = np.zeros(self.dim, dtype=np.float64)
        return g, off, max(risk, 0.0)

    def risk(self, z):
        return self.cut(z)[2]


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        weights=None):
    """``-s cp``: the hinge loss (no ``--loss``, or ``errorrate``) or a multivariate loss;
    ``weights`` (instance weights, the hinge loss only): see the module docstring."""
    loss = params.cp.loss
    if loss in (None, "errorrate"):
        more = {} if weights is None else {"weights": weights}
        res = fit_hinge(indptr, indices, data, y, n_features, C_pos, C_neg, params,
                        init_w=init_w, callback=callback, **more)
        if loss is not None:
            res.extra["loss"] = loss
        return res
    if weights is not None:
        from svmtool.errors import ParameterError
        from svmtool.solvers import get_spec

        raise ParameterError(get_spec("cp").weights_refused(params))
    y = check_binary(len(indptr) - 1, y, C_pos, C_neg)[0]
    if float(C_pos) != float(C_neg):
        raise ValueError(f"--loss {loss} takes one C (got C_pos={C_pos}, C_neg={C_neg})")
    C = float(C_pos)
    n = len(y)
    eps = default_eps("cp") if params.eps is None else float(params.eps)
    max_iter = DEFAULT_MAX_ITER if params.max_iter is None else int(params.max_iter)
    oracle = CPOracle(indptr, indices, data, n_features, params.threads)
    n_pos = int(np.sum(y > 0))
    if loss == "rocarea":
        m = n_pos * (n - n_pos)
        if m == 0:
            return SolverResult(w=np.zeros(n_features), iterations=0, primal=0.0, gap=0.0,
                                gap_kind="no pairs", converged=True, dual=0.0,
                                extra={"loss": loss, "pairs": 0,
                                       "warning": "ROC area needs both classes: no pairs"})
        risk = PairRisk(oracle, y, None, C * n / m)
    else:
        risk = TableRisk(oracle, y, C, loss, params.cp.k_fraction)
    res = solve_cp(risk, eps, max_iter, init_w=init_w, callback=callback,
                   inactive_limit=int(params.cp.inactive_limit), deadline=params.deadline,
                   perf_eps=params.cp.perf_eps)
    res.extra["loss"] = loss
    res.extra["positives"] = n_pos
    res.extra["negatives"] = n - n_pos
    # the slack at the final w, in SVMperf's units (percent): pval = 1/2 w'w + C_perf xi
    res.extra["xi_percent"] = 100.0 * (res.primal - 0.5 * float(vdot(res.w, res.w))) / (C * n)
    if isinstance(risk, TableRisk):
        res.extra["k"] = risk.k
    return res

"""Ordinal regression and ROC-area SVM (``-s ordinal``): Joachims 2006, Algorithm 2.

Pairs ``P = {(i, j): y_i > y_j}`` (with ``qid``: only pairs within the same query, as SVMrank),
``m = |P|``.  Problem, in LIBLINEAR's convention (``-c`` per pair)::

    min_w  F(w) = 1/2 w'w + C sum_{(i,j) in P} max(0, 1 - w'(x_i - x_j)).

``-w LABEL FACTOR`` gives the rows of that label the weight FACTOR (default 1) and a pair costs
``C`` times the product of its members' weights (for ROC area with two labels this only rescales
C; with several ranks it trades the ranks against each other).

With two label values this maximises a hinge bound on the ROC area.  The 1-slack form has cost
``C m``; ``--perf-c`` gives SVMperf's ROC-area ``C`` (loss in percent of pairs):
``C = C_perf * 100 / m``.

The most violated constraint at ``w`` selects the pairs with ``w'x_i - w'x_j < 1``; it is written
through per-row counts (``c+_i``: violated pairs where ``i`` is the higher-ranked member, ``c-_i``
where it is the lower one) as ``a = -C X'(c+ - c-)``, ``b = C sum c+``.  The counts come from one
sort of the scores per query and a counting pass with a Fenwick tree over the ranks
(:func:`svmtool.engine.passes_cp.pair_counts`, O(n log n)), never enumerating the pairs; so an
iteration costs two row passes plus the sort.  The rest is ``-s cp``'s driver
(:func:`svmtool.solvers.cutting_plane.cutting_plane.solve_cp`): ``-e`` (default 0.001) is the
violation of the most violated constraint in units of the average pair loss, so ``F(w) - F(w*) <=
eps C m``.

No bias (it cancels in every pair).  Returns
:class:`~svmtool.solvers.common.result.SolverResult` with ``extra["pairs"] = m``.
"""

import numpy as np

from svmtool.engine.passes_cp import CPOracle, pair_counts, vdot
from svmtool.solvers import default_eps
from svmtool.solvers.cutting_plane.cutting_plane import DEFAULT_MAX_ITER, solve_cp


def dense_ranks(y):
    uniq = np.unique(np.asarray(y, dtype=np.float64))
    return np.searchsorted(uniq, y).astype(np.int64), len(uniq)


def groups(qid, n):
    """(perm, group_start): rows sorted by query (stable) and the query boundaries."""
    if qid is None:
        return np.arange(n, dtype=np.int64), np.array([0, n], dtype=np.int64)
    qid = np.asarray(qid)
    perm = np.argsort(qid, kind="stable").astype(np.int64)
    q = qid[perm]
    cut = np.flatnonzero(q[1:] != q[:-1]) + 1
    return perm, np.concatenate([[0], cut, [n]]).astype(np.int64)


def count_pairs(y, qid=None):
    rank, R = dense_ranks(y)
    perm, gs = groups(qid, len(rank))
    m = 0
    for g in range(len(gs) - 1):
        cnt = np.bincount(rank[perm[gs[g]:gs[g + 1]]], minlength=R)
        m += int(np.sum(cnt * (np.cumsum(cnt) - cnt)))
    return m


def row_weights(y, weights):
    """Per-row pair weights from ``-w LABEL FACTOR`` (None when there are none)."""
    if not weights:
        return None
    from svmtool.labels import class_factors

    labels, cls = np.unique(np.asarray(y, dtype=np.float64), return_inverse=True)
    return class_factors(weights, labels)[cls.reshape(-1)]


class PairRisk:
    """Pairwise hinge risk ``C sum_P c_i c_j max(0, 1 - z_i + z_j)`` over an oracle.

    ``c`` holds per-row weights (the ``-w`` factor of the row's label; 1 by default), so that a
    pair costs ``C`` times the product of its members' weights; the 1-slack normaliser ``m`` is
    then the summed weight of the pairs (their number with unit weights).
    """

    def __init__(self, oracle, y, qid, C, row_weight=None):
        self.oracle = oracle
        self.dim = oracle.n_features
        self.C = float(C)
        rank, self.R = dense_ranks(y)
        self.perm, self.gs = groups(qid, len(rank))
        self.rank_p = np.ascontiguousarray(rank[self.perm])
        n = len(rank)
        self.c = np.ones(n) if row_weight is None else np.asarray(row_weight, dtype=np.float64)
        self.c_p = np.ascontiguousarray(self.c[self.perm])
        self._cp = np.zeros(n, dtype=np.float64)
        self._cm = np.zeros(n, dtype=np.float64)
        if row_weight is None:
            self.m = count_pairs(y, qid)
        else:
            self.m = float(pair_counts(self.zeros_scores(), self.rank_p, self.gs, self.R,
                                       self.c_p, self._cp, self._cm))
        self.scale = self.C * self.m

    def zeros_scores(self):
        return np.zeros(len(self.perm), dtype=np.float64)

    def scores(self, w):
        return self.oracle.matvec(w)

    def counts(self, z):
        """(c+, c-): per row, the summed partner weight of its violated pairs as the higher and
        as the lower member."""
        zp = np.ascontiguousarray(z[self.perm])
        pair_counts(zp, self.rank_p, self.gs, self.R, self.c_p, self._cp, self._cm)
        cplus = np.empty_like(self._cp)
        cminus = np.empty_like(self._cm)
        cplus[self.perm] = self._cp
        cminus[self.perm] = self._cm
        return cplus, cminus

    def cut(self, z):
        cplus, cminus = self.counts(z)
        v = self.C * self.c * (cplus - cminus)
        b = self.C * float(self.c @ cplus)
        risk = b - float(vdot(v, z))
        if b > 0:
            a = -self.oracle.rmatvec(v)
        else:
            a = np.zeros(self.dim, dtype=np.float64)
        return a, b, max(risk, 0.0)

    def risk(self, z):
        return self.cut(z)[2]


def fit(indptr, indices, data, y, qid, n_features, C, params, init_w=None, callback=None):
    """Ranking SVM by the 1-slack cutting plane (Algorithm 2); see the module docstring."""
    y = _targets(y, len(indptr) - 1, C)
    oracle = CPOracle(indptr, indices, data, n_features, params.threads)
    return _solve(oracle, y, qid, n_features, C, params, init_w, callback)


def fit_rows(rows, y, qid, n_features, C, params, init_w=None, callback=None):
    """:func:`fit` over a row source of :mod:`svmtool.solvers.scale_out` (the blocks of a
    memory-mapped cache): the same pair risk over its streamed passes."""
    y = _targets(y, rows.n_rows, C)
    return _solve(rows.passes(), y, qid, n_features, C, params, init_w, callback)


def _targets(y, n_rows, C):
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if y.shape[0] != n_rows:
        raise ValueError(f"{y.shape[0]} labels for {n_rows} rows")
    if not float(C) > 0:
        raise ValueError(f"C must be > 0 (got {C})")
    return y


def _solve(passes, y, qid, n_features, C, params, init_w, callback):
    eps = default_eps("ordinal") if params.eps is None else float(params.eps)
    max_iter = DEFAULT_MAX_ITER if params.max_iter is None else int(params.max_iter)
    risk = PairRisk(passes, y, qid, C, row_weights(y, params.weights))
    perf_c = params.perf_c
    if perf_c is not None and risk.m > 0:
        risk.C = float(perf_c) * 100.0 / risk.m
        risk.scale = risk.C * risk.m
    if risk.m == 0:
        from svmtool.solvers.common.result import SolverResult

        w = np.zeros(n_features)
        return SolverResult(w=w, iterations=0, primal=0.0, gap=0.0, gap_kind="no pairs",
                            converged=True, dual=0.0,
                            extra={"pairs": 0, "warning": "no comparable pairs: every label "
                                                          "(within each query) is the same"})
    inactive = int(params.cp.inactive_limit)
    res = solve_cp(risk, eps, max_iter, init_w=init_w, callback=callback,
                   inactive_limit=inactive, deadline=params.deadline)
    res.extra["pairs"] = risk.m
    res.extra["C_pair"] = risk.C
    return res


def train_ranking(problem, params, spec, callback=None, init_model=None, fit_for=None):
    """The API's ranking path: a :class:`LinearModel` that scores rows (no labels, no bias).

    The model's ``solver_type`` is a LIBLINEAR regression type so that LIBLINEAR-format readers
    print scores; ``report["ranking"]`` is True and the CLI writes it in SVMlight's format by
    default (SVMrank / SVMperf read it).  ``fit_for`` (from the API, for --out-of-core):
    ``fit_for(spec)`` is :func:`fit`'s signature over the rows of a memory-mapped cache."""
    import time

    from svmtool.models.linear import LinearModel

    fit_fn = spec.load() if fit_for is None else fit_for(spec)
    cb = None
    if callback is not None:
        cb = (lambda it, info: callback(0, it, info))
    t0 = time.perf_counter()
    init_w = params.init_w
    if init_model is not None:
        from svmtool.solvers.common.warm import linear_start

        init_w = linear_start(init_model, spec, None, problem.n_features, -1.0)
    res = fit_fn(problem.indptr, problem.indices, problem.data, problem.y, problem.qid,
                 problem.n_features, params.C, params, init_w=init_w, callback=cb)
    elapsed = time.perf_counter() - t0
    model = LinearModel(solver_type="L2R_L1LOSS_SVR_DUAL", labels=None,
                        nr_feature=problem.n_features, bias=-1.0,
                        w=np.asarray(res.w, dtype=np.float64).reshape(-1, 1))
    rep = {"label": 0.0, "iterations": int(res.iterations), "primal": float(res.primal),
           "gap": float(res.gap), "gap_kind": res.gap_kind, "converged": bool(res.converged)}
    if res.dual is not None:
        rep["dual"] = float(res.dual)
    if params.bias >= 0:
        rep["notice"] = "-B is ignored by ranking solvers (a bias cancels in every pair)"
    for k, v in res.extra.items():
        if isinstance(v, (int, float, str, bool)) or v is None:
            rep[k] = v
    model.report = {"solver": spec.name, "train_time": elapsed, "classes": [rep],
                    "ranking": True, "model_format": "svmperf",
                    "n_train": problem.n_rows,
                    "params": {"C": params.C, "eps": params.eps, "bias": -1.0}}
    return model


# --------------------------------------------------------------------------------------------
# evaluation of a ranking (predict --ranking)
# --------------------------------------------------------------------------------------------

def _concordant(y, s):
    """(concordant pairs, ties half; comparable pairs) over pairs y_i > y_j, O(R n log n)."""
    from scipy.stats import rankdata

    levels = np.unique(y)
    good = 0.0
    total = 0
    for r in levels[1:]:
        sub = y <= r
        top = y[sub] == r
        n_top = int(top.sum())
        n_low = int(sub.sum()) - n_top
        if n_top == 0 or n_low == 0:
            continue
        ranks = rankdata(s[sub])               # average ranks: ties count half
        good += float(ranks[top].sum()) - n_top * (n_top + 1) / 2.0
        total += n_top * n_low
    return good, total


def ranking_metrics(y, scores, qid=None):
    """Pairwise accuracy, ROC area (two label values) and Kendall's tau-b, per query and overall.

    Returns ``(overall, per_query)``: dicts with ``pairs``, ``pairwise_accuracy``, ``kendall_tau``
    and, for two label values, ``roc_area``; ``per_query`` maps each qid to such a dict (empty
    without qid).  Overall pairwise accuracy pools the pairs of every query; overall tau is the
    mean of the queries' taus (the single tau over all rows without qid)."""
    from scipy.stats import kendalltau

    y = np.asarray(y, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)

    def one(yy, ss):
        good, total = _concordant(yy, ss)
        d = {"rows": len(yy), "pairs": total,
             "pairwise_accuracy": good / total if total else float("nan")}
        if len(np.unique(yy)) == 2:
            d["roc_area"] = d["pairwise_accuracy"]
        if total and len(np.unique(ss)) > 1:
            d["kendall_tau"] = float(kendalltau(yy, ss).statistic)
        else:
            d["kendall_tau"] = float("nan")
        return d, good

    per = {}
    if qid is None:
        overall, _ = one(y, scores)
        return overall, per
    qid = np.asarray(qid)
    good_all = 0.0
    pairs_all = 0
    taus = []
    for q in np.unique(qid):
        rows = qid == q
        d, good = one(y[rows], scores[rows])
        per[int(q)] = d
        good_all += good
        pairs_all += d["pairs"]
        if not np.isnan(d["kendall_tau"]):
            taus.append(d["kendall_tau"])
    overall = {"rows": len(y), "pairs": pairs_all, "queries": len(per),
               "pairwise_accuracy": good_all / pairs_all if pairs_all else float("nan"),
               "kendall_tau": float(np.mean(taus)) if taus else float("nan")}
    return overall, per


def ranking_report_lines(y, scores, qid=None):
    overall, per = ranking_metrics(y, scores, qid)
    lines = []
    for q, d in per.items():
        lines.append(f"qid {q}: pairwise accuracy = {100 * d['pairwise_accuracy']:g}% "
                     f"({d['pairs']} pairs), Kendall's tau = {d['kendall_tau']:.4g}")
    text = (f"Pairwise accuracy = {100 * overall['pairwise_accuracy']:g}% "
            f"({overall['pairs']} pairs")
    text += f", {overall['queries']} queries)" if "queries" in overall else ")"
    lines.append(text)
    if "roc_area" in overall:
        lines.append(f"ROC area = {overall['roc_area']:.6g}")
    tau = "mean over queries " if "queries" in overall else ""
    lines.append(f"Kendall's tau = {overall['kendall_tau']:.6g} ({tau}tau-b)".replace("( ", "("))
    return lines

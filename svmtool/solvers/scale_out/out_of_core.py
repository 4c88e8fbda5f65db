"""Training from a memory-mapped cache in blocks: the solvers whose registry entry says
``out_of_core=True``, over :class:`svmtool.engine.blocks.BlockOracle`.

* newton (-s 2), lr (-s 0), svr-l2 (-s 11): the same truncated Newton loop
  (:func:`svmtool.solvers.newton.newton.minimise`) and objectives as in memory, their passes
  streamed;
* cp, ocas, gca2, tca: the same cutting-plane drivers (:func:`solve_cp`, :func:`solve_ocas`) over
  a hinge risk whose passes (``X w``, the cut's ``X' v`` over the violators; both in one pass
  over the blocks for cp's cut) are streamed; ordinal (rank, roc): the same pair risk and
  driver (:func:`fit_ranking`);
* dcd-l1 (-s 3), dcd-l2 (-s 1): block minimisation (:mod:`svmtool.solvers.scale_out.dcd_blocks`).

The in-memory and out-of-core runs start from the same point with the same drivers; only the
order in which a pass adds its numbers differs (other block limits; ``X w`` is bit-identical).
The Newton runs make the same iterations and their objectives agree to rounding (the tests ask
for 1e-8 relative).  The cutting-plane runs do the same on a9a, but a rounding difference in a
cut can change what the reduced QP (solved to a tolerance) returns, and from there the
iterations may part; both runs meet the same stopping rule, and each one's lower bound stays
below the other's objective.  The block minimisation of the dual is another method than the
in-memory coordinate descent: it stops by the same rule (PG spread <= eps).

:func:`fit` has the binary fit signature of the registry plus ``spec``, ``bias`` and
``budget_bytes``; the API binds those (``functools.partial``) and hands it the raw arrays of the
mapped cache, without the bias column (the blocks append it as they are loaded).
"""

import numpy as np

from svmtool.engine.blocks import BlockOracle, row_only
from svmtool.engine.hinge import hinge_cut_pass, hinge_grad_pass
from svmtool.engine.passes_cp import CountedPasses

SUPPORTED = ("newton", "lr", "svr-l2", "cp", "ocas", "gca2", "tca", "dcd-l1", "dcd-l2")


def _declare_row_only():
    from svmtool.solvers.newton import objectives

    row_only(objectives._loss_group)


class StreamedPasses(CountedPasses):
    """The passes the cutting-plane risks use (``matvec``, ``rmatvec``, the hinge cut) over a
    BlockOracle, counted and timed as :class:`svmtool.engine.passes_cp.CPOracle` counts them."""

    def __init__(self, blocks):
        self.blocks = blocks
        self.n_rows = blocks.n_rows
        self.n_features = blocks.n_features
        self.threads = blocks.threads
        self.passes = 0
        self.seconds = 0.0

    def matvec(self, w, out=None):
        return self._counted(self.blocks.matvec, np.ascontiguousarray(w, dtype=np.float64), out)

    def hinge_grad(self, z, lab, c_pos, c_neg):
        """The hinge cut's ``X' v`` over the violators at ``z`` (``v`` never stored)."""
        return self._counted(hinge_grad_pass, self.blocks, z, lab, c_pos, c_neg)

    def hinge_cut(self, w, lab, c_pos, c_neg, z=None):
        """``(X w, hinge_grad at X w)`` in one pass over the blocks (the same numbers as the
        two passes: the same block and sub-block sums)."""
        return self._counted(hinge_cut_pass, self.blocks, w, lab, c_pos, c_neg, z)

    def rmatvec(self, v):
        return self._counted(self.blocks.rmatvec, np.ascontiguousarray(v, dtype=np.float64))


def make_oracle(indptr, indices, data, raw_features, bias, params, budget_bytes, sources=None):
    return BlockOracle(indptr, indices, data, raw_features, bias=bias, threads=params.threads,
                       budget_bytes=budget_bytes, sources=sources)


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        *, spec, bias, budget_bytes=None, oracle=None, sources=None):
    """Train ``spec``'s binary problem from the raw (mapped) arrays; ``n_features`` counts the
    bias column when ``bias >= 0``.  ``sources``: the (indptr, indices, data) of every shard of
    a shard index, read one after another (then the first three arguments are unused)."""
    raw = int(n_features) - (1 if bias >= 0 else 0)
    if oracle is None:
        oracle = make_oracle(indptr, indices, data, raw, bias, params, budget_bytes, sources)
    name = spec.name
    if name in ("cp", "ocas", "gca2", "tca"):
        from svmtool.labels import check_signs

        y, C_pos, C_neg = check_signs(oracle.n_rows, y, C_pos, C_neg)
    else:
        y = np.ascontiguousarray(y, dtype=np.float64)
    kw = dict(spec.kwargs)
    if name in ("newton", "lr"):
        from svmtool.solvers.newton.newton import fit as newton_fit

        _declare_row_only()
        res = newton_fit(None, None, None, y, n_features, C_pos, C_neg, params, init_w=init_w,
                         callback=callback, loss=kw.get("loss", "l2"), oracle=oracle)
    elif name == "svr-l2":
        from svmtool.solvers.newton.svr_newton import fit as svr_fit

        _declare_row_only()
        res = svr_fit(None, None, None, y, n_features, C_pos, C_neg, params, init_w=init_w,
                      callback=callback, oracle=oracle)
    elif name == "cp":
        from svmtool.solvers.cutting_plane.cutting_plane import (DEFAULT_EPS, DEFAULT_MAX_ITER,
                                                                 HingeRisk, solve_cp)

        eps = DEFAULT_EPS if params.eps is None else float(params.eps)
        max_iter = DEFAULT_MAX_ITER if params.max_iter is None else int(params.max_iter)
        risk = HingeRisk(StreamedPasses(oracle), y, (C_pos, C_neg))
        res = solve_cp(risk, eps, max_iter, init_w=init_w, callback=callback,
                       inactive_limit=int(params.cp.inactive_limit), deadline=params.deadline,
                       perf_eps=params.cp.perf_eps)
    elif name in ("ocas", "gca2", "tca"):
        from svmtool.solvers.cutting_plane.cutting_plane import HingeRisk
        from svmtool.solvers.cutting_plane.ocas import solve_with

        risk = HingeRisk(StreamedPasses(oracle), y, (C_pos, C_neg))
        res = solve_with(risk, params, kw.get("line_search"), init_w=init_w, callback=callback)
    elif name in ("dcd-l1", "dcd-l2"):
        from svmtool.solvers.scale_out import dcd_blocks

        loss = kw.get("loss", "l1")
        res = dcd_blocks.fit(oracle, y, C_pos, C_neg, params, loss=loss, init_w=init_w,
                             callback=callback)
        if loss == "l2" and not res.converged and res.extra.get("stopped") is None:
            res = _newton_after_dual(res, oracle, y, n_features, C_pos, C_neg, params,
                                     callback)
    else:
        raise ValueError(f"-s {name} cannot train out of core")
    res.extra["out_of_core"] = True
    res.extra["blocks"] = oracle.n_blocks
    res.extra["block_values"] = oracle.block_values
    return res


def _newton_after_dual(res, oracle, y, n_features, C_pos, C_neg, params, callback):
    """LIBLINEAR's rescue of -s 1 at its iteration cap, out of core: -s 2 from the dual's w."""
    from dataclasses import replace

    from svmtool.solvers.newton.newton import fit as newton_fit

    _declare_row_only()
    dual_eps = res.extra.get("eps", 0.1)
    p2 = replace(params, eps=float(dual_eps) * 0.1, max_iter=None)
    out = newton_fit(None, None, None, y, n_features, C_pos, C_neg, p2, init_w=res.w,
                     callback=callback, loss="l2", oracle=oracle)
    out.extra["notice"] = (f"block minimisation of the dual (-s 1) reached its iteration cap "
                           f"({res.iterations}); switched to the primal Newton solver (-s 2) "
                           f"with eps={float(dual_eps) * 0.1:g}, as LIBLINEAR does")
    out.extra["dual_iterations"] = int(res.iterations)
    return out


def fit_ranking(indptr, indices, data, y, qid, n_features, C, params, init_w=None,
                callback=None, *, budget_bytes=None, sources=None):
    """The ranking SVM (-s ordinal / rank / roc) with its passes streamed: the pair risk and the
    cutting-plane driver of :mod:`svmtool.solvers.cutting_plane.ordinal`, as its ``fit`` builds them
    (the signature of that ``fit``; the ranking driver calls it through the registry entry the API
    hands it).  Ranking takes no bias column."""
    from svmtool.solvers.common.result import SolverResult
    from svmtool.solvers.cutting_plane.cutting_plane import solve_cp
    from svmtool.solvers.cutting_plane.ordinal import (DEFAULT_EPS, DEFAULT_MAX_ITER, PairRisk,
                                                       row_weights)

    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    n_rows = len(indptr) - 1 if sources is None else sum(len(s[0]) - 1 for s in sources)
    if y.shape[0] != n_rows:
        raise ValueError(f"{y.shape[0]} labels for {n_rows} rows")
    if not float(C) > 0:
        raise ValueError(f"C must be > 0 (got {C})")
    eps = DEFAULT_EPS if params.eps is None else float(params.eps)
    max_iter = DEFAULT_MAX_ITER if params.max_iter is None else int(params.max_iter)
    oracle = make_oracle(indptr, indices, data, int(n_features), -1.0, params, budget_bytes,
                         sources)
    risk = PairRisk(StreamedPasses(oracle), y, qid, C, row_weights(y, params.weights))
    if params.perf_c is not None and risk.m > 0:
        risk.C = float(params.perf_c) * 100.0 / risk.m
        risk.scale = risk.C * risk.m
    if risk.m == 0:
        return SolverResult(w=np.zeros(int(n_features)), iterations=0, primal=0.0, gap=0.0,
                            gap_kind="no pairs", converged=True, dual=0.0,
                            extra={"pairs": 0, "warning": "no comparable pairs: every label "
                                                          "(within each query) is the same"})
    res = solve_cp(risk, eps, max_iter, init_w=init_w, callback=callback,
                   inactive_limit=int(params.cp.inactive_limit), deadline=params.deadline)
    res.extra["pairs"] = risk.m
    res.extra["C_pair"] = risk.C
    res.extra["out_of_core"] = True
    res.extra["blocks"] = oracle.n_blocks
    return res

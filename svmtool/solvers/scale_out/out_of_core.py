"""Training from a memory-mapped cache (or a shard index's shards) in blocks: the solvers whose
registry entry names an ``out_of_core`` fit, over :class:`svmtool.engine.blocks.BlockOracle`.

:func:`fit` (binary and single problems) and :func:`fit_ranking` wrap the blocks in a row source,
:class:`BlockRows`, and call the registry entry's out-of-core fit with it in place of the CSR
arrays.  A row source is what a solver family asks of rows it does not hold:

* ``n_rows``;
* ``objective(loss, y, C_pos, C_neg, free_last, p=0.0, weights=None)``: the Newton objective
  (:mod:`svmtool.solvers.newton.objectives`) over its passes (newton, lr, svr-l2);
* ``hinge_risk(y, C_pos, C_neg, weights=None)``: the binary hinge risk of the cutting-plane
  drivers (cp, ocas, gca2, tca), its passes (``X w``, the cut's ``X' v`` over the violators)
  streamed;
* ``passes()``: those passes themselves (the ranking SVM's pair risk);
* ``oracle``: the BlockOracle (the block minimisation of the dual,
  :mod:`svmtool.solvers.scale_out.dcd_blocks`, for -s 1 and -s 3).

A fit whose registry entry has ``out_of_core_weights`` also gets the cache's instance weights
(``weights=``, one a row; the row sources' ``objective`` and ``hinge_risk`` take them, a row of
weight 0 staying in the passes with cost 0); the API refuses a weighted problem out of core for
the others.

:class:`svmtool.solvers.scale_out.sharded.ShardRows` offers the first three over shards on a
dask cluster, so that the same out-of-core fits run there (registry ``dask="passes"``).

The in-memory and out-of-core runs start from the same point with the same drivers; only the
order in which a pass adds its numbers differs (other block limits; ``X w`` is bit-identical).
The Newton runs make the same iterations and their objectives agree to rounding (the tests ask
for 1e-8 relative).  The cutting-plane runs do the same on a9a, but a rounding difference in a
cut can change what the reduced QP (solved to a tolerance) returns, and from there the
iterations may part; both runs meet the same stopping rule, and each one's lower bound stays
below the other's objective.  The block minimisation of the dual is another method than the
in-memory coordinate descent: it stops by the same rule (PG spread <= eps).

The API binds :func:`fit`'s ``spec``, ``bias``, ``budget_bytes`` and ``sources``
(:func:`streaming_fit`) and hands it the raw arrays of the mapped cache, without the bias column
(the blocks append it as they are loaded).
"""

import numpy as np

from svmtool.engine.blocks import BlockOracle, row_only
from svmtool.engine.hinge import hinge_cut_pass, hinge_grad_pass
from svmtool.engine.passes_cp import CountedPasses

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


class BlockRows:
    """The row source of a BlockOracle (see the module docstring)."""

    def __init__(self, oracle):
        self.oracle = oracle
        self.n_rows = oracle.n_rows

    def objective(self, loss, y, C_pos, C_neg, free_last, p=0.0, weights=None):
        """The Newton objective over the blocks; ``weights``: row i's cost is its class's C
        times ``weights[i]`` (None: the class's C)."""
        from svmtool.solvers.common.weighted import row_costs
        from svmtool.solvers.newton.objectives import _loss_group, make_objective

        row_only(_loss_group)
        cost = np.where(y > 0, C_pos, C_neg) if weights is None else row_costs(
            y, C_pos, C_neg, weights)
        return make_objective(loss, self.oracle, y, cost, p=p, free_last=free_last)

    def hinge_risk(self, y, C_pos, C_neg, weights=None):
        """The hinge risk over the blocks; ``weights`` as in :meth:`objective`."""
        from svmtool.solvers.common.weighted import row_costs
        from svmtool.solvers.cutting_plane.cutting_plane import HingeRisk

        cost = (C_pos, C_neg) if weights is None else row_costs(y, C_pos, C_neg, weights)
        return HingeRisk(self.passes(), y, cost)

    def passes(self):
        return StreamedPasses(self.oracle)


def make_oracle(indptr, indices, data, raw_features, bias, params, budget_bytes, sources=None):
    return BlockOracle(indptr, indices, data, raw_features, bias=bias, threads=params.threads,
                       budget_bytes=budget_bytes, sources=sources)


def streaming_fit(spec, bias, budget_bytes=None, sources=None):
    """``spec``'s fit (the signature of its kind: binary or single, or ranking) over the blocks
    of the arrays it is handed."""
    import functools

    if spec.kind == "ranking":
        return functools.partial(fit_ranking, spec=spec, budget_bytes=budget_bytes,
                                 sources=sources)
    return functools.partial(fit, spec=spec, bias=bias, budget_bytes=budget_bytes,
                             sources=sources)


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        *, spec, bias, budget_bytes=None, oracle=None, sources=None, weights=None):
    """Train ``spec``'s binary (or single) problem from the raw (mapped) arrays; ``n_features``
    counts the bias column when ``bias >= 0``.  ``sources``: the (indptr, indices, data) of
    every shard of a shard index, read one after another (then the first three arguments are
    unused).  ``weights``: the instance weights (one a row, or None), handed on to a fit whose
    registry entry says it takes them out of core (``out_of_core_weights``)."""
    raw = int(n_features) - (1 if bias >= 0 else 0)
    if oracle is None:
        oracle = make_oracle(indptr, indices, data, raw, bias, params, budget_bytes, sources)
    if not spec.sign_labels:
        y = np.ascontiguousarray(y, dtype=np.float64)
    more = {}
    if weights is not None:
        if not spec.takes_weights("blocks"):
            raise ValueError(f"{spec.name}: its out-of-core fit takes no instance weights")
        more["weights"] = weights
    res = spec.load_out_of_core()(BlockRows(oracle), y, n_features, C_pos, C_neg, params,
                                  init_w=init_w, callback=callback, **more)
    res.extra["out_of_core"] = True
    res.extra["blocks"] = oracle.n_blocks
    res.extra["block_values"] = oracle.block_values
    return res


def fit_ranking(indptr, indices, data, y, qid, n_features, C, params, init_w=None,
                callback=None, *, spec, budget_bytes=None, sources=None):
    """The ranking fit's signature (``spec.fit``) over the blocks: ranking takes no bias
    column."""
    oracle = make_oracle(indptr, indices, data, int(n_features), -1.0, params, budget_bytes,
                         sources)
    res = spec.load_out_of_core()(BlockRows(oracle), y, qid, n_features, C, params,
                                  init_w=init_w, callback=callback)
    res.extra["out_of_core"] = True
    res.extra["blocks"] = oracle.n_blocks
    return res

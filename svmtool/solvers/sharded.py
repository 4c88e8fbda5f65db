"""Truncated Newton (-s 2 newton, -s 0 lr) on a dask.distributed cluster (``--dask``).

The driver runs the same Newton-CG loop as in memory (:func:`svmtool.solvers.newton.minimise`)
on :class:`ShardedObjective`, which offers the interface of
:class:`svmtool.solvers.objectives.Objective` but keeps every per-row vector on the workers:
each shard (a row range of the cache, :class:`svmtool.engine.dask_backend.Shard`) has a state --
its labels, costs, scores ``z = X w``, the Hessian's row weights and the last ``X s`` -- held
as a dask future on the worker that maps those rows.  Per Newton iteration only d-vectors
(``w``, CG directions, gradients, Hessian-vector products) and scalars (losses along the line)
travel; each pass is one task per shard and one reduction (a sum in shard order) on the driver.

The tasks below are pure functions (a new state, never an update in place), so that dask can
recompute a lost worker's states from their lineage and the run ends with the same model.

Differences from the in-memory run: the logistic loss's Newton step gets ``X s`` from a pass of
its own (the squared hinge's fused "unit step" pass, for both losses) rather than from the CG
passes, and the sums are added shard by shard and block by block; the iterates agree to
rounding (the tests ask for the objective to 1e-8 relative).
"""

import numpy as np

from svmtool.solvers import objectives as _obj

DASK_SOLVERS = ("newton", "lr")


class _State:
    """One shard's per-row vectors (never changed after creation)."""

    __slots__ = ("y", "cost", "z", "dcoef", "xs")

    def __init__(self, y, cost, z, dcoef, xs):
        self.y, self.cost, self.z, self.dcoef, self.xs = y, cost, z, dcoef, xs


# ---- tasks (run on the workers) -------------------------------------------------------------

def t_state(shard, w, label, c_pos, c_neg):
    """The shard's labels in {-1, +1} (``label`` is the positive class), costs, z = X w."""
    y = np.where(np.asarray(shard.y) == label, 1.0, -1.0)
    cost = np.where(y > 0, float(c_pos), float(c_neg))
    with shard.lock:
        z = np.zeros(shard.n_rows) if w is None else shard.oracle.matvec(w)
    return _State(y, cost, z, np.zeros(shard.n_rows), None), int(np.count_nonzero(y > 0))


def t_loss(shard, st, loss_id, t):
    """sum_i C_i l(y_i, z_i + t xs_i) over the shard (t = 0: at z)."""
    xs = st.z if t == 0.0 else st.xs
    with shard.lock:
        return shard.oracle.sum_blocks(_obj._loss_group, loss_id, st.z, xs, float(t), st.y,
                                       st.cost, 0.0)


def t_grad(shard, st, loss_id):
    dcoef = np.zeros(shard.n_rows)
    gm = np.empty((2, shard.n_features))
    with shard.lock:
        shard.oracle.reduce_blocks(_obj._grad_group, gm, loss_id, st.z, st.y, st.cost, 0.0,
                                   dcoef)
    return _State(st.y, st.cost, st.z, dcoef, st.xs), gm


def t_grad_zero(shard, st, loss_id):
    out = np.empty(shard.n_features)
    with shard.lock:
        shard.oracle.reduce_blocks(_obj._grad_only_group, out, loss_id,
                                   np.zeros(shard.n_rows), st.y, st.cost, 0.0)
    return out


def t_hv(shard, st, v):
    out = np.empty(shard.n_features)
    with shard.lock:
        shard.oracle.reduce_blocks(_obj._hv_group, out, v, st.dcoef, False, st.z)
    return out


def t_unit_step(shard, st, loss_id, s):
    xs = np.empty(shard.n_rows)
    dcoef = np.empty(shard.n_rows)
    gm = np.empty((2, shard.n_features))
    with shard.lock:
        loss, _ = shard.oracle.reduce_blocks_and_sum(_obj._unit_step_group, gm, loss_id, st.z,
                                                     s, st.y, st.cost, 0.0, xs, dcoef)
    return _State(st.y, st.cost, st.z, dcoef, xs), (loss, gm)


def t_move(shard, st, t):
    return _State(st.y, st.cost, st.z + t * st.xs, st.dcoef, st.xs)


def _declare_row_only():
    from svmtool.engine.blocks import row_only

    row_only(_obj._loss_group)


_declare_row_only()         # on the driver and on every worker that unpickles a task of ours


# ---- the driver's objective -----------------------------------------------------------------

class _Meta:
    """What minimise() reads of an oracle."""

    def __init__(self, n_rows, n_features, shards):
        self.n_rows = n_rows
        self.n_features = n_features
        self.threads = shards
        self.n_blocks = shards


class ShardedObjective:
    """The Objective interface over shards on a dask cluster (see the module docstring)."""

    hv_gives_xv = False

    def __init__(self, session, shards, n_rows, n_features, loss, label, c_pos, c_neg,
                 free_last=False):
        self.session = session
        self.shards = shards
        self.loss_id = _obj.OBJECTIVES[loss].loss_id
        self.n = int(n_features)
        self.oracle = _Meta(int(n_rows), self.n, len(shards))
        self.label = label
        self.c = (float(c_pos), float(c_neg))
        self.free_last = bool(free_last) and self.n > 0
        self.w = np.zeros(self.n)
        self.states = None
        self.passes = 0
        self.positives = None

    def _each(self, fn, *args):
        return [self.session.submit(fn, sh, st, *args) for sh, st in zip(self.shards,
                                                                           self.states)]

    def _advance(self, futures):
        """New states from (state, result) futures; returns the results' futures."""
        states, results = [], []
        for f in futures:
            a, b = self.session.split(f, 2)
            states.append(a)
            results.append(b)
        self.states = states
        return results

    def start(self, w=None):
        if w is None or not np.any(w):
            self.w = np.zeros(self.n)
            arg = None
        else:
            self.w = np.asarray(w, dtype=np.float64).reshape(-1).copy()
            if self.w.shape[0] != self.n:
                raise ValueError(f"w has {self.w.shape[0]} entries, expected {self.n}")
            arg = self.w
            self.passes += 1
        fs = [self.session.submit(t_state, sh, arg, self.label, *self.c) for sh in self.shards]
        self.positives = sum(self.session.gather(self._advance(fs)))
        return self

    def _reg(self, a, b):
        v = float(np.dot(a, b))
        if self.free_last:
            v -= a[-1] * b[-1]
        return v

    def fun(self):
        return 0.5 * self._reg(self.w, self.w) + self.session.reduce(
            self._each(t_loss, self.loss_id, 0.0))

    def loss_along(self, xs, t):
        return self.session.reduce(self._each(t_loss, self.loss_id, float(t)))

    def _unreg(self, g, m, w, gm):
        if self.free_last:
            g[-1] -= w[-1]
            m[-1] = gm[1][-1]
        return g, m

    def grad(self):
        gm = self.session.reduce(self._advance(self._each(t_grad, self.loss_id)))
        self.passes += 1
        return self._unreg(gm[0] + self.w, gm[1] + 1.0, self.w, gm)

    def grad_at_zero(self):
        self.passes += 1
        return self.session.reduce(self._each(t_grad_zero, self.loss_id))

    def unit_step(self, s, xs):
        parts = self.session.gather(self._advance(self._each(t_unit_step, self.loss_id,
                                                             np.ascontiguousarray(s))))
        self.passes += 1
        loss = 0.0
        gm = parts[0][1].copy()
        for i, (ls, g) in enumerate(parts):
            loss += float(ls)
            if i:
                gm += g
        ws = self.w + s
        g, m = self._unreg(gm[0] + ws, gm[1] + 1.0, ws, gm)
        return loss, g, m

    def move(self, t, s, xs):
        self.w += t * s
        self.states = self._each(t_move, float(t))

    def hess_vec_dot(self, v, xv=None):
        v = np.ascontiguousarray(v, dtype=np.float64)
        hv = self.session.reduce(self._each(t_hv, v))
        self.passes += 1
        hv += v
        vhv = float(np.dot(v, hv))
        if self.free_last:
            hv[-1] -= v[-1]
            vhv -= v[-1] * v[-1]
        return hv, vhv


# ---- the binary fit the API calls -----------------------------------------------------------

def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        *, spec, bias, path, labels_y, session, block_values):
    """Binary newton / lr with the rows on the cluster; ``y`` (in {-1, +1}, on the driver) is
    used only to name the positive class, which the workers find in their own rows."""
    import time

    from svmtool.engine.dask_backend import ClusterError
    from svmtool.solvers.newton import DEFAULT_EPS, minimise

    t_start = time.perf_counter()
    y = np.asarray(y)
    pos = np.flatnonzero(y > 0)
    label = float(labels_y[pos[0]]) if len(pos) else np.nan
    l = len(y)
    n_pos = len(pos)
    shard_futures, ranges = session.shards(path, bias, block_values)
    obj = ShardedObjective(session, shard_futures, l, n_features, dict(spec.kwargs)["loss"],
                           label, C_pos, C_neg, free_last=not params.bias_reg.regularize)
    obj.start(None)
    if obj.positives != n_pos:
        raise ClusterError(f"dask: the workers found {obj.positives} rows of the positive class, "
                           f"the driver {n_pos}: the cache at {path} differs between them")
    eps = DEFAULT_EPS if params.eps is None else float(params.eps)
    tol = eps * max(min(n_pos, l - n_pos), 1) / max(l, 1)
    res = minimise(obj, tol, params, init_w=init_w, callback=callback, t_start=t_start)
    res.extra["eps"] = eps
    res.extra["loss"] = dict(spec.kwargs)["loss"]
    res.extra["shards"] = len(ranges)
    res.extra["dask"] = session.address
    return res

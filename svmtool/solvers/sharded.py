"""Truncated Newton (-s 2 newton, -s 0 lr) and the cutting-plane family (cp, ocas, gca2, tca) on a
dask.distributed cluster (``--dask``).

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

DASK_SOLVERS = ("newton", "lr", "cp", "ocas", "gca2", "tca")


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
    if spec.name not in ("newton", "lr"):
        return fit_cutting_plane(y, n_features, C_pos, C_neg, params, init_w, callback,
                                 spec=spec, bias=bias, path=path, labels_y=labels_y,
                                 session=session, block_values=block_values)
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
                           f"the driver {n_pos}: the data at {path} differs between them")
    eps = DEFAULT_EPS if params.eps is None else float(params.eps)
    tol = eps * max(min(n_pos, l - n_pos), 1) / max(l, 1)
    res = minimise(obj, tol, params, init_w=init_w, callback=callback, t_start=t_start)
    res.extra["eps"] = eps
    res.extra["loss"] = dict(spec.kwargs)["loss"]
    res.extra["shards"] = len(ranges)
    res.extra["dask"] = session.address
    return res


# ---- the cutting-plane family (cp, ocas, gca2, tca) ------------------------------------------
#
# solve_cp and solve_ocas (svmtool.solvers.cutting_plane / .ocas) touch the scores z = X w only
# through their risk adapter and linear combinations (z_b + mu z_d, ...).  ShardedHingeRisk hands
# them ShardScores -- one future per shard, the vector staying on its worker -- whose arithmetic
# runs as tasks on the workers; a cut is one task per shard returning (risk, offset, violators,
# -X_k' v_k) and one reduction; the risk along a line (GCA2, TCA) one scalar per shard and
# evaluation; the exact line search gathers the shards' breakpoints (n floats at most, as the
# issue allows) and selects on the driver.

def t_hinge_state(shard, label, c_pos, c_neg):
    y = np.where(np.asarray(shard.y) == label, 1.0, -1.0)
    return (y, np.where(y > 0, float(c_pos), float(c_neg))), int(np.count_nonzero(y > 0))


def t_scores(shard, w):
    with shard.lock:
        return shard.oracle.matvec(w)


def t_zeros(shard):
    return np.zeros(shard.n_rows)


def t_combine(a, b, alpha, beta):
    """alpha a + beta b (b None: alpha a), in the order numpy evaluates the driver's
    expressions (so the vectors are those of a local run, bit for bit)."""
    if b is None:
        return alpha * a
    if alpha == 1.0 and beta == 1.0:
        return a + b
    if alpha == 1.0 and beta == -1.0:
        return a - b
    return alpha * a + beta * b


def t_cut(shard, yc, z):
    from svmtool.engine.passes_cp import hinge_cut_coef

    y, cost = yc
    v = np.empty(shard.n_rows)
    risk, off, nv = hinge_cut_coef(z, y, cost, v)
    if nv:
        with shard.lock:
            a = -shard.oracle.rmatvec(v)
    else:
        a = np.zeros(shard.n_features)
    return float(risk), float(off), int(nv), a


def t_risk(yc, z, zd, mu):
    from svmtool.engine.passes_cp import hinge_risk, hinge_risk_line

    y, cost = yc
    if zd is None:
        return float(hinge_risk(z, y, cost))
    return float(hinge_risk_line(z, zd, y, cost, float(mu)))


def t_breakpoints(yc, zb, zd):
    from svmtool.engine.passes_cp import hinge_breakpoints

    y, cost = yc
    keys = np.empty(zb.shape[0])
    jumps = np.empty(zb.shape[0])
    slope0, nb = hinge_breakpoints(zb, zd, y, cost, keys, jumps)
    return float(slope0), keys[:nb], jumps[:nb]


class ShardScores:
    """A score vector held on the workers, one future per shard; ``+``, ``-`` and scaling by a
    number run as tasks there."""

    def __init__(self, session, parts):
        self.session = session
        self.parts = parts

    def _combine(self, other, alpha, beta):
        s = self.session
        if other is None:
            return ShardScores(s, [s.submit(t_combine, p, None, alpha, 0.0) for p in self.parts])
        return ShardScores(s, [s.submit(t_combine, p, q, alpha, beta)
                               for p, q in zip(self.parts, other.parts)])

    def __add__(self, other):
        return self._combine(other, 1.0, 1.0)

    def __sub__(self, other):
        return self._combine(other, 1.0, -1.0)

    def __mul__(self, k):
        return self._combine(None, float(k), 0.0)

    __rmul__ = __mul__


class _PassCounter:
    def __init__(self, n_rows, n_features, shards):
        self.n_rows, self.n_features = n_rows, n_features
        self.threads = self.n_blocks = shards
        self.passes = 0
        self.seconds = 0.0


class ShardedLine:
    """``f(mu)`` of OCAS's line search over ShardScores (see linesearch.HingeLine)."""

    def __init__(self, risk, zb, zd, A, B, c0):
        self.risk, self.zb, self.zd = risk, zb, zd
        self.A, self.B, self.c0 = float(A), float(B), float(c0)
        self.evals = 0

    def f(self, mu):
        self.evals += 1
        s = self.risk.session
        r = s.reduce([s.submit(t_risk, yc, b, d, float(mu)) for yc, b, d in
                      zip(self.risk.yc, self.zb.parts, self.zd.parts)])
        return self.c0 + mu * (self.B + 0.5 * self.A * mu) + r

    def exact(self, sort=False):
        from svmtool.solvers.linesearch import _exact_select, _exact_walk

        s = self.risk.session
        parts = s.gather([s.submit(t_breakpoints, yc, b, d) for yc, b, d in
                          zip(self.risk.yc, self.zb.parts, self.zd.parts)])
        slope0 = 0.0
        for p in parts:
            slope0 += p[0]
        keys = np.concatenate([p[1] for p in parts])
        jumps = np.concatenate([p[2] for p in parts])
        if self.A <= 0.0:
            return 0.0
        walk = _exact_walk if sort else _exact_select
        return float(walk(keys, jumps, keys.shape[0], slope0, self.A, self.B))


class ShardedHingeRisk:
    """The binary hinge risk adapter of the cutting-plane drivers, over shards."""

    def __init__(self, session, shards, n_rows, n_features, label, c_pos, c_neg, scale):
        self.session = session
        self.shards = shards
        self.dim = int(n_features)
        self.scale = float(scale)
        self.oracle = _PassCounter(n_rows, self.dim, len(shards))
        fs = [session.submit(t_hinge_state, sh, label, c_pos, c_neg) for sh in shards]
        self.yc, counts = [], []
        for f in fs:
            a, b = session.split(f, 2)
            self.yc.append(a)
            counts.append(b)
        self.positives = sum(session.gather(counts))
        self.last_violators = 0

    def zeros_scores(self):
        return ShardScores(self.session, [self.session.submit(t_zeros, sh) for sh in
                                          self.shards])

    def scores(self, w):
        import time

        t = time.perf_counter()
        w = np.ascontiguousarray(w, dtype=np.float64)
        out = ShardScores(self.session, [self.session.submit(t_scores, sh, w)
                                         for sh in self.shards])
        self.session.wait(out.parts)
        self.oracle.passes += 1
        self.oracle.seconds += time.perf_counter() - t
        return out

    def risk(self, z):
        s = self.session
        return s.reduce([s.submit(t_risk, yc, p, None, 0.0) for yc, p in zip(self.yc, z.parts)])

    def cut(self, z):
        import time

        t = time.perf_counter()
        s = self.session
        parts = s.gather([s.submit(t_cut, sh, yc, p) for sh, yc, p in
                          zip(self.shards, self.yc, z.parts)])
        risk = off = 0.0
        nv = 0
        a = parts[0][3].copy()
        for i, (r, o, n, ak) in enumerate(parts):
            risk += r
            off += o
            nv += n
            if i:
                a += ak
        self.last_violators = nv
        if nv:
            self.oracle.passes += 1
        self.oracle.seconds += time.perf_counter() - t
        return a, off, risk

    def line(self, zb, zd, A, B, c0):
        return ShardedLine(self, zb, zd, A, B, c0)


def fit_cutting_plane(y, n_features, C_pos, C_neg, params, init_w=None, callback=None, *, spec,
                      bias, path, labels_y, session, block_values):
    """cp / ocas / gca2 / tca with the rows on the cluster (the drivers of the local run)."""
    from svmtool.engine.dask_backend import ClusterError

    y = np.asarray(y)
    pos = np.flatnonzero(y > 0)
    label = float(labels_y[pos[0]]) if len(pos) else np.nan
    if not (float(C_pos) > 0 and float(C_neg) > 0):
        raise ValueError(f"C must be > 0 (got C_pos={C_pos}, C_neg={C_neg})")
    scale = float(len(pos)) * float(C_pos) + float(len(y) - len(pos)) * float(C_neg)
    shard_futures, ranges = session.shards(path, bias, block_values)
    risk = ShardedHingeRisk(session, shard_futures, len(y), n_features, label, C_pos, C_neg,
                            scale)
    if risk.positives != len(pos):
        raise ClusterError(f"dask: the workers found {risk.positives} rows of the positive "
                           f"class, the driver {len(pos)}: the data at {path} differs")
    kw = dict(spec.kwargs)
    if spec.name == "cp":
        from svmtool.solvers.cutting_plane import DEFAULT_EPS, DEFAULT_MAX_ITER, solve_cp

        eps = DEFAULT_EPS if params.eps is None else float(params.eps)
        max_iter = DEFAULT_MAX_ITER if params.max_iter is None else int(params.max_iter)
        res = solve_cp(risk, eps, max_iter, init_w=init_w, callback=callback,
                       inactive_limit=int(params.cp.inactive_limit), deadline=params.deadline,
                       perf_eps=params.cp.perf_eps)
    else:
        from svmtool.solvers.ocas import solve_with

        res = solve_with(risk, params, kw.get("line_search"), init_w=init_w, callback=callback)
    res.extra["shards"] = len(ranges)
    res.extra["dask"] = session.address
    return res

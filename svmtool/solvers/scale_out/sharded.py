"""Training with the rows on a dask.distributed cluster (``--dask``): the solvers whose registry
entry says ``dask="passes"`` -- truncated Newton (newton, lr) and the cutting-plane family (cp,
ocas, gca2, tca) -- run their out-of-core fit over :class:`ShardRows`, the row source of shards.

The driver runs the same Newton-CG loop as in memory
(:func:`svmtool.solvers.newton.newton.minimise`) on :class:`ShardedObjective`, which offers the
interface of :class:`svmtool.solvers.newton.objectives.Objective` but keeps every per-row vector on
the workers: each shard (a row range of the cache, :class:`svmtool.engine.dask_backend.Shard`) has a
state -- its labels, costs, scores ``z = X w``, the Hessian's row weights and the last ``X s`` --
held as a dask future on the worker that maps those rows.  Per Newton iteration only d-vectors
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

from svmtool.solvers.newton import objectives as _obj

class _State:
    """One shard's per-row vectors (never changed after creation)."""

    __slots__ = ("y", "cost", "z", "dcoef", "xs")

    def __init__(self, y, cost, z, dcoef, xs):
        self.y, self.cost, self.z, self.dcoef, self.xs = y, cost, z, dcoef, xs


# ---- tasks (run on the workers) -------------------------------------------------------------

def _weights_of(shard):
    """The shard's instance weights (the driver's cache has them, so must the workers')."""
    if shard.weights is None:
        raise ValueError(f"rows {shard.rows[0]}..{shard.rows[1]} of {shard.recipe[0]} have no "
                         f"instance weights on this worker, the driver's cache has them")
    return np.asarray(shard.weights, dtype=np.float64)


def t_weight_stats(shard):
    """(rows of positive weight, summed weight) of the shard, for the driver's check."""
    wt = _weights_of(shard)
    return int(np.count_nonzero(wt > 0)), float(wt.sum())


def t_state(shard, w, label, c_pos, c_neg, weighted=False):
    """The shard's labels in {-1, +1} (``label`` is the positive class), costs (the class's C,
    times the row's instance weight when ``weighted``), z = X w."""
    y = np.where(np.asarray(shard.y) == label, 1.0, -1.0)
    cost = np.where(y > 0, float(c_pos), float(c_neg))
    if weighted:
        cost = cost * _weights_of(shard)
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
                 free_last=False, weighted=False):
        self.session = session
        self.weighted = bool(weighted)
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
        fs = [self.session.submit(t_state, sh, arg, self.label, *self.c, self.weighted)
              for sh in self.shards]
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


# ---- the cutting-plane family (cp, ocas, gca2, tca) ------------------------------------------
#
# solve_cp and solve_ocas (svmtool.solvers.cutting_plane.cutting_plane / .ocas) touch the scores z =
# X w only through their risk adapter.  ShardedHingeRisk hands them ShardScores -- one future per
# shard, the vector staying on its worker -- and runs OCAS's updates of them (step, cut point) as
# tasks there; each shard keeps its labels as int8 signs (the costs are the two class costs; with
# instance weights the float64 signed costs, as svmtool.engine.hinge represents costs that differ
# within a class, a row of weight 0 staying with cost 0).  A cut is one task per shard returning (risk, offset, violators, -X_k' v_k) and one reduction; the
# risk along a line (GCA2, TCA) one scalar per shard and evaluation; the exact line search
# (svmtool.solvers.cutting_plane.linesearch.select_exact) a few rounds of one histogram of the
# breakpoints per shard (counts and jump sums in at most 4096 buckets), after which only the
# breakpoints of one small bucket (at most SELECT_LIMIT) travel to the driver.

def t_hinge_state(shard, label, c_pos=1.0, c_neg=1.0, weighted=False):
    """(labels, (positives, summed cost)): int8 signs, or with ``weighted`` the signed costs
    ``y_i C_class W_i`` (the summed cost then theirs, else None: the driver's)."""
    y = np.asarray(shard.y)
    pos = y == label
    n_pos = int(np.count_nonzero(pos))
    if not weighted:
        return np.where(pos, 1, -1).astype(np.int8), (n_pos, None)
    cost = np.where(pos, float(c_pos), float(c_neg)) * _weights_of(shard)
    return cost * np.where(pos, 1.0, -1.0), (n_pos, float(cost.sum()))


def t_scores(shard, w):
    with shard.lock:
        return shard.oracle.matvec(w)


def t_zeros(shard):
    return np.zeros(shard.n_rows)


def t_step(zb, zt, mu):
    """zb + mu (zt - zb), rounded as numpy rounds ``zb + mu * (zt - zb)``."""
    d = zt - zb
    d *= mu
    d += zb
    return d


def t_cut_point(zb, zt, lam):
    return (1.0 - lam) * zb + lam * zt


def t_cut(shard, lab, c_pos, c_neg, z):
    from svmtool.engine.hinge import hinge_grad_group, hinge_sums

    risk, off, nv = hinge_sums(z, lab, c_pos, c_neg)
    a = np.zeros(shard.n_features)
    if nv:
        with shard.lock:
            shard.oracle.reduce_blocks(hinge_grad_group, a, z, lab, c_pos, c_neg)
        np.negative(a, out=a)
    return float(risk), float(off), int(nv), a


def t_risk(lab, c_pos, c_neg, z, zt, mu):
    from svmtool.engine.hinge import hinge_risk, hinge_risk_line

    if zt is None:
        return float(hinge_risk(z, lab, c_pos, c_neg))
    return float(hinge_risk_line(z, zt, lab, c_pos, c_neg, float(mu)))


def t_break_hist(lab, c_pos, c_neg, zb, zt, lo, shift, nbk):
    """(slope0, counts, sums) of the shard's breakpoints in ``nbk`` buckets (linesearch)."""
    from svmtool.engine.hinge import break_hist

    counts = np.empty(nbk + 1, dtype=np.int64)
    sums = np.empty(nbk + 1, dtype=np.float64)
    slope0 = break_hist(zb, zt, lab, c_pos, c_neg, np.uint64(lo), np.uint64(shift), counts,
                        sums)
    return float(slope0), counts[:nbk], sums[:nbk]


def t_break_collect(lab, c_pos, c_neg, zb, zt, lo, hi, cap):
    """The shard's breakpoints (keys, jumps) whose bit patterns lie in [lo, hi), at most cap."""
    from svmtool.engine.hinge import break_collect

    keys = np.empty(cap + 1, dtype=np.float64)
    jumps = np.empty(cap + 1, dtype=np.float64)
    nb = break_collect(zb, zt, lab, c_pos, c_neg, np.uint64(lo), np.uint64(hi), keys, jumps)
    return keys[:nb], jumps[:nb]


class ShardScores:
    """A score vector held on the workers, one future per shard."""

    def __init__(self, session, parts):
        self.session = session
        self.parts = parts


class _PassCounter:
    def __init__(self, n_rows, n_features, shards):
        self.n_rows, self.n_features = n_rows, n_features
        self.threads = self.n_blocks = shards
        self.passes = 0
        self.seconds = 0.0


class ShardedLine:
    """``f(mu)`` of OCAS's line search over ShardScores (see linesearch.HingeLine); the exact
    search (``sort`` or not) by distributed selection.  ``received`` lists, per round, how many
    breakpoints reached the driver (0 for a histogram round)."""

    limit = None                 # breakpoints that may travel at the end (None: SELECT_LIMIT)

    def __init__(self, risk, zb, zt, A, B, c0):
        self.risk, self.zb, self.zt = risk, zb, zt
        self.A, self.B, self.c0 = float(A), float(B), float(c0)
        self.evals = 0
        self.received = []

    def _each(self, fn, *args):
        r = self.risk
        s = r.session
        return [s.submit(fn, lab, r.c_pos, r.c_neg, b, t, *args)
                for lab, b, t in zip(r.lab, self.zb.parts, self.zt.parts)]

    def f(self, mu):
        self.evals += 1
        r = self.risk.session.reduce(self._each(t_risk, float(mu)))
        return self.c0 + mu * (self.B + 0.5 * self.A * mu) + r

    def _hist(self, lo, shift, nbk):
        parts = self.risk.session.gather(self._each(t_break_hist, lo, shift, nbk))
        slope0 = 0.0
        counts = parts[0][1].copy()
        sums = parts[0][2].copy()
        for i, (s0, c, sm) in enumerate(parts):
            slope0 += s0
            if i:
                counts += c
                sums += sm
        self.received.append(0)
        return slope0, counts, sums

    def _collect(self, lo, hi, count):
        parts = self.risk.session.gather(self._each(t_break_collect, lo, hi, count))
        keys = np.concatenate([p[0] for p in parts])
        jumps = np.concatenate([p[1] for p in parts])
        self.received.append(int(keys.shape[0]))
        return keys, jumps

    def exact(self, sort=False):
        from svmtool.solvers.cutting_plane.linesearch import SELECT_LIMIT, select_exact

        limit = SELECT_LIMIT if self.limit is None else int(self.limit)
        return select_exact(self._hist, self._collect, self.A, self.B, limit)


class ShardedHingeRisk:
    """The binary hinge risk adapter of the cutting-plane drivers, over shards."""

    def __init__(self, session, shards, n_rows, n_features, label, c_pos, c_neg, scale,
                 weighted=False):
        """``scale``: the summed cost C n (with ``weighted`` the shards' sum of the rows'
        costs C_class W_i is used instead, the labels then being signed costs)."""
        self.session = session
        self.shards = shards
        self.dim = int(n_features)
        self.oracle = _PassCounter(n_rows, self.dim, len(shards))
        fs = [session.submit(t_hinge_state, sh, label, float(c_pos), float(c_neg),
                             bool(weighted)) for sh in shards]
        self.lab, counts = [], []
        for f in fs:
            a, b = session.split(f, 2)
            self.lab.append(a)
            counts.append(b)
        counts = session.gather(counts)
        self.positives = sum(n for n, _ in counts)
        if weighted:
            self.c_pos = self.c_neg = 1.0
            self.scale = float(sum(c for _, c in counts))
        else:
            self.c_pos, self.c_neg = float(c_pos), float(c_neg)
            self.scale = float(scale)
        self.last_violators = 0

    def _scores(self, fn, *parts, args=()):
        s = self.session
        return ShardScores(s, [s.submit(fn, *p, *args) for p in zip(*parts)])

    def zeros_scores(self):
        return self._scores(t_zeros, self.shards)

    def scores(self, w, out=None):
        import time

        t = time.perf_counter()
        w = np.ascontiguousarray(w, dtype=np.float64)
        out = self._scores(t_scores, self.shards, args=(w,))
        self.session.wait(out.parts)
        self.oracle.passes += 1
        self.oracle.seconds += time.perf_counter() - t
        return out

    def step(self, zb, zt, mu):
        return self._scores(t_step, zb.parts, zt.parts, args=(float(mu),))

    def cut_point(self, zb, zt, lam):
        return self._scores(t_cut_point, zb.parts, zt.parts, args=(float(lam),))

    def risk(self, z):
        s = self.session
        return s.reduce([s.submit(t_risk, lab, self.c_pos, self.c_neg, p, None, 0.0)
                         for lab, p in zip(self.lab, z.parts)])

    def cut(self, z):
        import time

        t = time.perf_counter()
        s = self.session
        parts = s.gather([s.submit(t_cut, sh, lab, self.c_pos, self.c_neg, p) for sh, lab, p in
                          zip(self.shards, self.lab, z.parts)])
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

    def line(self, zb, zt, A, B, c0):
        return ShardedLine(self, zb, zt, A, B, c0)


# ---- the row source and the binary fit the API calls ------------------------------------------

class ShardRows:
    """The row source (see :mod:`svmtool.solvers.scale_out.out_of_core`) of the shards of
    ``path`` on the cluster: the Newton objective and the hinge risk with their per-row vectors
    on the workers.  ``labels_y``: every row's label on the driver; the workers find the
    positive class (the label of the first row with y > 0) in their own rows."""

    def __init__(self, session, path, bias, block_values, labels_y, n_features):
        self.session, self.path, self.bias = session, path, bias
        self.block_values = block_values
        self.labels_y = labels_y
        self.n_rows = len(labels_y)
        self.n_features = int(n_features)
        self.n_shards = 0

    def _shards(self):
        shard_futures, ranges = self.session.shards(self.path, self.bias, self.block_values)
        self.n_shards = len(ranges)
        return shard_futures

    def _positive(self, y):
        y = np.asarray(y)
        n_pos = int(np.count_nonzero(y > 0))
        label = float(self.labels_y[int(np.argmax(y > 0))]) if n_pos else np.nan
        return label, n_pos

    def _agree(self, found, n_pos):
        from svmtool.engine.dask_backend import ClusterError

        if found != n_pos:
            raise ClusterError(f"dask: the workers found {found} rows of the positive class, "
                               f"the driver {n_pos}: the data at {self.path} differs between "
                               f"them")

    def _check_weights(self, shards, weights):
        """ClusterError unless the workers' shards hold the driver's instance weights (the
        rows of positive weight, and their sum to rounding)."""
        from svmtool.engine.dask_backend import ClusterError

        stats = self.session.gather([self.session.submit(t_weight_stats, sh) for sh in shards])
        count, total = sum(c for c, _ in stats), sum(t for _, t in stats)
        want_count, want_total = int(np.count_nonzero(weights > 0)), float(np.sum(weights))
        if count != want_count or abs(total - want_total) > 1e-9 * max(want_total, 1.0):
            raise ClusterError(f"dask: the workers' instance weights ({count} rows of positive "
                               f"weight, sum {total:g}) differ from the driver's ({want_count}, "
                               f"{want_total:g}): the data at {self.path} differs between them")

    def objective(self, loss, y, C_pos, C_neg, free_last, p=0.0, weights=None):
        """The Newton objective over the shards; ``weights``: the driver's instance weights
        (the workers use their shards' own, checked against them), or None."""
        label, n_pos = self._positive(y)
        shards = self._shards()
        if weights is not None:
            self._check_weights(shards, weights)
        obj = ShardedObjective(self.session, shards, len(y), self.n_features, loss,
                               label, C_pos, C_neg, free_last=free_last,
                               weighted=weights is not None)
        obj.start(None)
        self._agree(obj.positives, n_pos)
        return obj

    def hinge_risk(self, y, C_pos, C_neg, weights=None):
        """The hinge risk over the shards; ``weights`` as in :meth:`objective`."""
        label, n_pos = self._positive(y)
        shards = self._shards()
        if weights is not None:
            self._check_weights(shards, weights)
        scale = float(n_pos) * float(C_pos) + float(len(y) - n_pos) * float(C_neg)
        risk = ShardedHingeRisk(self.session, shards, len(y), self.n_features, label,
                                C_pos, C_neg, scale, weighted=weights is not None)
        self._agree(risk.positives, n_pos)
        return risk


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None,
        *, spec, bias, path, labels_y, session, block_values, weights=None):
    """``spec``'s out-of-core fit with the rows on the cluster; ``y`` (in {-1, +1}, on the
    driver) names the positive class, which the workers find in their own rows; ``weights``:
    the problem's instance weights (the workers read their shards' own), or None."""
    rows = ShardRows(session, path, bias, block_values, labels_y, n_features)
    more = {}
    if weights is not None:
        if not spec.takes_weights("dask"):
            raise ValueError(f"{spec.name}: its dask fit takes no instance weights")
        more["weights"] = np.asarray(weights, dtype=np.float64)
    res = spec.load_out_of_core()(rows, y, n_features, C_pos, C_neg, params, init_w=init_w,
                                  callback=callback, **more)
    res.extra["shards"] = rows.n_shards
    res.extra["dask"] = session.address
    return res

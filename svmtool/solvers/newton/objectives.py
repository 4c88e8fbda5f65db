"""Smooth L2-regularised objectives for the primal Newton solver, over a row-pass oracle.

The objectives (LIBLINEAR's -s 0 and -s 2), with per-row costs ``C_i`` (``C_pos`` for
``y_i = +1``, ``C_neg`` for ``y_i = -1``) and ``z = X w``::

    logistic (-s 0)         f(w) = 1/2 w'w + sum_i C_i log(1 + exp(-y_i z_i))
    squared hinge (-s 2)    f(w) = 1/2 w'w + sum_i C_i max(0, 1 - y_i z_i)^2
    squared eps-insensitive (-s 11, SVR, real y_i, tube width p)
                            f(w) = 1/2 w'w + sum_i C_i max(0, |z_i - y_i| - p)^2

Both are ``1/2 w'w + sum_i C_i l(y_i, z_i)``, so

    grad f(w) = w + X' a,        a_i = C_i dl/dz (z_i)
    H(w) v    = v + X' D X v,    D_ii = C_i d2l/dz2 (z_i)

with, for the logistic loss (``s_i = 1 / (1 + exp(-y_i z_i))``), ``a_i = C_i (s_i - 1) y_i`` and
``D_ii = C_i s_i (1 - s_i)``; for the squared hinge, on the rows with ``y_i z_i < 1`` (the active
set of Chapelle & Keerthi's slides and of LIBLINEAR), ``a_i = 2 C_i y_i (y_i z_i - 1)`` and
``D_ii = 2 C_i`` (a generalised Hessian; both are 0 on the other rows); for the SVR loss, on the
rows outside the tube (``|z_i - y_i| > p``), ``a_i = 2 C_i (z_i - y_i -+ p)`` and ``D_ii = 2 C_i``.
The diagonal preconditioner is ``diag(H) = 1 + sum_i D_ii x_ij^2``.

LIBLINEAR's -R (``free_last``): the last weight, the bias column's, is left out of the
regulariser: ``1/2 w'w`` becomes ``1/2 sum_{j < n-1} w_j^2``, so the gradient, the Hessian's
identity term and the preconditioner's 1 lose their last entry.

What an objective offers the solver (:class:`Objective`):

* ``start(w)`` -- take ``w`` as the current point; computes and caches ``z = X w``;
* ``fun()`` -- ``f`` at the current point (an O(n) sum over the cached ``z``);
* ``grad()`` -- ``(g, M)``: gradient and preconditioner diagonal at the current point, in ONE
  pass over the rows (LIBLINEAR makes two); it also fixes ``D`` for the Hessian products;
* ``hess_vec(v, xv=None)`` -- ``H v`` in one fused pass (for every row with ``D_ii != 0``:
  ``t = x_i'v``, then ``H v += D_ii t x_i``); when ``xv`` is given (logistic loss, where every
  row takes part) ``X v`` is stored there on the way, so the Newton step's ``X s`` comes for free;
* ``loss_along(xs, t)`` -- ``sum_i C_i l(y_i, z_i + t xs_i)``: with ``z`` and ``xs = X s`` cached,
  each trial of a line search along ``s`` costs O(n), not a pass over the data (the slides'
  point);
* ``unit_step(s, xs)`` -- one pass giving ``xs = X s`` together with the loss, gradient and
  preconditioner at ``w + s`` (the squared hinge's Newton step: when the unit step is accepted,
  the gradient pass is saved);
* ``move(t, s, xs)`` -- ``w += t s``, ``z += t xs``.

The row passes run on :class:`svmtool.engine.local.LocalOracle` (threads over row blocks).
"""

import math

import numpy as np

from svmtool._jit import njit

LOSS_LOGISTIC = 0
LOSS_SQUARED_HINGE = 1
LOSS_SQUARED_EPS = 2        # SVR: squared epsilon-insensitive loss

_ONE = np.uint64(1)


# --------------------------------------------------------------------------------------------
# per-row loss pieces
# --------------------------------------------------------------------------------------------

@njit
def _row_loss(loss, yi, zi, p):
    if loss == LOSS_SQUARED_EPS:
        d = zi - yi
        if d < -p:
            return (d + p) * (d + p)
        if d > p:
            return (d - p) * (d - p)
        return 0.0
    yz = yi * zi
    if loss == LOSS_LOGISTIC:
        if yz >= 0.0:
            return math.log1p(math.exp(-yz))
        return -yz + math.log1p(math.exp(yz))
    d = 1.0 - yz
    if d > 0.0:
        return d * d
    return 0.0


@njit
def _row_coefs(loss, yi, zi, ci, p):
    """(a_i, D_ii): first and second derivative of C_i l(y_i, z) at z_i."""
    if loss == LOSS_LOGISTIC:
        s = 1.0 / (1.0 + math.exp(-yi * zi))
        return ci * (s - 1.0) * yi, ci * s * (1.0 - s)
    if loss == LOSS_SQUARED_EPS:
        d = zi - yi
        if d < -p:
            return 2.0 * ci * (d + p), 2.0 * ci
        if d > p:
            return 2.0 * ci * (d - p), 2.0 * ci
        return 0.0, 0.0
    yz = yi * zi
    if yz < 1.0:
        return 2.0 * ci * yi * (yz - 1.0), 2.0 * ci
    return 0.0, 0.0


@njit
def _sq_norm(w):
    """w'w as a plain loop (numpy's ``@`` calls BLAS, whose threads cost more than they save)."""
    s = 0.0
    for j in range(w.shape[0]):
        s += w[j] * w[j]
    return s


# --------------------------------------------------------------------------------------------
# group kernels: each runs the blocks [b0, b1) of one thread (see svmtool.engine.local)
# --------------------------------------------------------------------------------------------

@njit
def _loss_group(indptr, indices, data, bounds, b0, b1, loss, z, xs, t, y, cost, p, parts):
    """parts[b] = sum_i C_i l(y_i, z_i + t xs_i) over the rows of block b."""
    for b in range(b0, b1):
        acc = 0.0
        if t == 0.0:
            for i in range(bounds[b], bounds[b + 1]):
                acc += cost[i] * _row_loss(loss, y[i], z[i], p)
        else:
            for i in range(bounds[b], bounds[b + 1]):
                acc += cost[i] * _row_loss(loss, y[i], z[i] + t * xs[i], p)
        parts[b] = acc
    return 0


@njit
def _grad_group(indptr, indices, data, bounds, b0, b1, loss, z, y, cost, p, dcoef, bufs):
    """D_ii into dcoef; bufs[b, 0] = sum a_i x_i and bufs[b, 1] = sum D_ii x_i^2 over block b."""
    for b in range(b0, b1):
        g = bufs[b, 0]
        m = bufs[b, 1]
        g[:] = 0.0
        m[:] = 0.0
        for i in range(bounds[b], bounds[b + 1]):
            a, d = _row_coefs(loss, y[i], z[i], cost[i], p)
            dcoef[i] = d
            if a != 0.0 or d != 0.0:
                for k in range(indptr[i], indptr[i + _ONE]):
                    j = indices[k]
                    v = data[k]
                    g[j] += a * v
                    m[j] += d * v * v
    return 0


@njit
def _unit_step_group(indptr, indices, data, bounds, b0, b1, loss, z, s, y, cost, p, xs, dcoef,
                     parts, bufs):
    """One pass for a trial step of length 1 along s: xs = X s, the loss at z + xs (parts[b]),
    and gradient and preconditioner terms at z + xs (bufs[b, 0], bufs[b, 1]); dcoef as there."""
    for b in range(b0, b1):
        g = bufs[b, 0]
        m = bufs[b, 1]
        g[:] = 0.0
        m[:] = 0.0
        acc = 0.0
        for i in range(bounds[b], bounds[b + 1]):
            p0 = indptr[i]
            p1 = indptr[i + _ONE]
            t = 0.0
            for k in range(p0, p1):
                t += s[indices[k]] * data[k]
            xs[i] = t
            zi = z[i] + t
            acc += cost[i] * _row_loss(loss, y[i], zi, p)
            a, d = _row_coefs(loss, y[i], zi, cost[i], p)
            dcoef[i] = d
            if a != 0.0 or d != 0.0:
                for k in range(p0, p1):
                    j = indices[k]
                    v = data[k]
                    g[j] += a * v
                    m[j] += d * v * v
        parts[b] = acc
    return 0


@njit
def _grad_only_group(indptr, indices, data, bounds, b0, b1, loss, z, y, cost, p, bufs):
    """bufs[b] = sum a_i x_i over block b (the gradient's data term only)."""
    for b in range(b0, b1):
        buf = bufs[b]
        buf[:] = 0.0
        for i in range(bounds[b], bounds[b + 1]):
            a, d = _row_coefs(loss, y[i], z[i], cost[i], p)
            if a != 0.0:
                for k in range(indptr[i], indptr[i + _ONE]):
                    buf[indices[k]] += a * data[k]
    return 0


@njit
def _hv_group(indptr, indices, data, bounds, b0, b1, v, dcoef, want_xv, xv, bufs):
    """bufs[b] = sum_i D_ii (x_i'v) x_i over block b; x_i'v into xv[i] when want_xv."""
    for b in range(b0, b1):
        buf = bufs[b]
        buf[:] = 0.0
        for i in range(bounds[b], bounds[b + 1]):
            c = dcoef[i]
            if c == 0.0 and not want_xv:
                continue
            p0 = indptr[i]
            p1 = indptr[i + _ONE]
            t = 0.0
            for k in range(p0, p1):
                t += v[indices[k]] * data[k]
            if want_xv:
                xv[i] = t
            if c != 0.0:
                t *= c
                for k in range(p0, p1):
                    buf[indices[k]] += t * data[k]
    return 0


@njit(inline="always")
def _sum_add_entry(bufs, nb, v, out, j):
    h = bufs[0, j]
    for b in range(1, nb):
        h += bufs[b, j]
    h += v[j]
    out[j] = h
    return v[j] * h


@njit
def _sum_add_dot(bufs, v, out):
    """out[j] = ((bufs[0, j] + bufs[1, j]) + ...) + v[j] (block order, then H's identity
    term); returns v'out, the curvature of conjugate gradient, from four running sums (entries
    j mod 4, added as (s0 + s1) + (s2 + s3)).  ``out`` may be ``bufs[0]`` itself (one block)."""
    nb = bufs.shape[0]
    n = out.shape[0]
    m = n - n % 4
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for j in range(0, m, 4):
        s0 += _sum_add_entry(bufs, nb, v, out, j)
        s1 += _sum_add_entry(bufs, nb, v, out, j + 1)
        s2 += _sum_add_entry(bufs, nb, v, out, j + 2)
        s3 += _sum_add_entry(bufs, nb, v, out, j + 3)
    for j in range(m, n):
        s0 += _sum_add_entry(bufs, nb, v, out, j)
    return (s0 + s1) + (s2 + s3)


# --------------------------------------------------------------------------------------------
# the objective
# --------------------------------------------------------------------------------------------

class Objective:
    """``1/2 w'w + sum_i C_i l(y_i, x_i'w)`` over an oracle; see the module docstring."""

    loss_id = None
    hv_gives_xv = False     # True when hess_vec visits every row, so it can hand back X v
    batch = None            # the group whose shared passes compute hess_vec_dot (batch.py)

    def __init__(self, oracle, y, cost, p=0.0, free_last=False):
        self.oracle = oracle
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.cost = np.ascontiguousarray(cost, dtype=np.float64)
        n = oracle.n_rows
        if self.y.shape[0] != n or self.cost.shape[0] != n:
            raise ValueError("y and cost need one entry per row")
        self.n = oracle.n_features
        self.z = np.zeros(n, dtype=np.float64)
        self.dcoef = np.zeros(n, dtype=np.float64)
        self.w = np.zeros(self.n, dtype=np.float64)
        self._gm = np.empty((2, self.n), dtype=np.float64)
        self._hv = np.empty(self.n, dtype=np.float64)
        self.passes = 0         # full passes over the stored values (for reports)
        self.p = float(p)       # SVR tube width (the other losses ignore it)
        self.free_last = bool(free_last) and self.n > 0   # -R: last weight not regularised

    # ---- state -------------------------------------------------------------------------------
    def start(self, w=None):
        """Make ``w`` (a copy; None: zeros) the current point and cache ``z = X w``."""
        if w is None or not np.any(w):
            self.w = np.zeros(self.n, dtype=np.float64)
            self.z[:] = 0.0
        else:
            w = np.asarray(w, dtype=np.float64).reshape(-1)
            if w.shape[0] != self.n:
                raise ValueError(f"w has {w.shape[0]} entries, expected {self.n}")
            self.w = w.copy()
            self.oracle.matvec(self.w, self.z)
            self.passes += 1
        return self

    def move(self, t, s, xs):
        """Step to ``w + t s`` (``xs = X s``)."""
        self.w += t * s
        self.z += t * xs

    # ---- values ------------------------------------------------------------------------------
    def loss_along(self, xs, t):
        """``sum_i C_i l(y_i, z_i + t xs_i)`` (O(n), no pass over the data)."""
        return self.oracle.sum_blocks(_loss_group, self.loss_id, self.z, xs, float(t), self.y,
                                      self.cost, self.p)

    def fun(self):
        """Objective value at the current point."""
        ww = _sq_norm(self.w)
        if self.free_last:
            ww -= self.w[-1] * self.w[-1]
        return 0.5 * ww + self.loss_along(self.z, 0.0)

    def grad(self):
        """``(g, M)`` at the current point (one pass); fixes the Hessian's row weights."""
        gm = self.oracle.reduce_blocks(_grad_group, self._gm, self.loss_id, self.z, self.y,
                                       self.cost, self.p, self.dcoef)
        self.passes += 1
        return self._unreg(gm[0] + self.w, gm[1] + 1.0, self.w, gm)

    def _unreg(self, g, m, w, gm):
        """-R: take the last weight's regularisation term back out of ``g`` and ``M``."""
        if self.free_last:
            g[-1] -= w[-1]
            m[-1] = gm[1][-1]
        return g, m

    def unit_step(self, s, xs):
        """One pass: ``xs = X s`` and, at ``w + s`` (without moving there), the loss sum and
        ``(g, M)`` as :meth:`grad` gives them.  Returns ``(loss, g, M)``; when the step is
        taken (``move(1.0, s, xs)``) ``g`` and ``M`` are the new point's, bit for bit."""
        loss, gm = self.oracle.reduce_blocks_and_sum(_unit_step_group, self._gm, self.loss_id,
                                                     self.z, s, self.y, self.cost, self.p, xs,
                                                     self.dcoef)
        self.passes += 1
        ws = self.w + s
        g, m = self._unreg(gm[0] + ws, gm[1] + 1.0, ws, gm)
        return loss, g, m

    def grad_at_zero(self):
        """Gradient at ``w = 0`` (for the relative stopping rule); does not move the point."""
        z0 = np.zeros(self.oracle.n_rows, dtype=np.float64)
        out = np.empty(self.n, dtype=np.float64)
        self.oracle.reduce_blocks(_grad_only_group, out, self.loss_id, z0, self.y, self.cost,
                                  self.p)
        self.passes += 1
        return out

    def hess_vec(self, v, xv=None, out=None):
        """``H v`` at the point of the last :meth:`grad`; ``X v`` into ``xv`` when given."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        want = xv is not None
        if not want:
            xv = self.z            # not written when want_xv is False
        hv = self.oracle.reduce_blocks(_hv_group, self._hv if out is None else out, v,
                                       self.dcoef, want, xv)
        self.passes += 1
        hv += v
        if self.free_last:
            hv[-1] -= v[-1]
        return hv

    def hess_vec_dot(self, v, xv=None):
        """``(H v, v'H v)``: the block buffers of the data term, the identity term ``v`` and the
        curvature summed in one pass (:func:`_sum_add_dot`); same ``H v`` as :meth:`hess_vec`.
        In a batch (:mod:`svmtool.solvers.newton.batch`) the pass is shared with the other
        classes of its group; the result is the same bits."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        if self.batch is not None:
            return self.batch.hess_vec_dot(self, v, xv)
        return self.own_hess_vec_dot(v, xv)

    def own_hess_vec_dot(self, v, xv=None, threads=None):
        """:meth:`hess_vec_dot` in a pass of its own (on ``threads`` threads; None: the
        oracle's)."""
        want = xv is not None
        if not want:
            xv = self.z
        more = {} if threads is None else {"threads": threads}
        bufs = self.oracle.block_buffers(_hv_group, self._hv, v, self.dcoef, want, xv, **more)
        self.passes += 1
        return self.finish_hess_vec_dot(v, self._hv, _sum_add_dot(bufs, v, self._hv))

    def finish_hess_vec_dot(self, v, hv, vhv):
        """-R: the last weight's identity term taken back out of ``H v`` and ``v'H v``."""
        if self.free_last:
            hv[-1] -= v[-1]
            vhv -= v[-1] * v[-1]
        return hv, vhv

    # ---- conveniences (tests, notebooks) ---------------------------------------------------
    def value_at(self, w):
        return self.start(w).fun()

    def gradient_at(self, w):
        return self.start(w).grad()[0].copy()

    def hess_vec_at(self, w, v):
        self.start(w).grad()
        return self.hess_vec(v).copy()


class LogisticObjective(Objective):
    loss_id = LOSS_LOGISTIC
    hv_gives_xv = True


class SquaredHingeObjective(Objective):
    loss_id = LOSS_SQUARED_HINGE
    hv_gives_xv = False


class SquaredEpsObjective(Objective):
    loss_id = LOSS_SQUARED_EPS
    hv_gives_xv = False


OBJECTIVES = {"lr": LogisticObjective, "logistic": LogisticObjective,
              "l2": SquaredHingeObjective, "squared_hinge": SquaredHingeObjective,
              "svr": SquaredEpsObjective}


def make_objective(loss, oracle, y, cost, p=0.0, free_last=False):
    try:
        cls = OBJECTIVES[loss]
    except KeyError:
        raise ValueError(f"unknown loss {loss!r}: one of {', '.join(OBJECTIVES)}") from None
    return cls(oracle, y, cost, p=p, free_last=free_last)

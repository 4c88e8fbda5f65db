"""Dual coordinate descent in plain Python, for problems too small to be worth importing numba.

A warm ``svmtool train`` on a small file that loads numba spends most of its time importing it
and loading cached kernels (measured: BENCHMARKS.md, "Against the C programs"), far more than
the few milliseconds of solving.  This module runs exactly the outer iterations of
:func:`svmtool.solvers.dual_cd._dcd_jit._dcd_iterations` -- the same arguments, the same state
arrays, the same floating-point operations in the same order -- so the driver
(:mod:`svmtool.solvers.dual_cd.dcd`) can start a problem here and, if it turns out to need more
work than a small budget, hand the state to the jitted loop and go on: the weights come out bit
for bit the same whichever way they were reached (tested).

Python's floats are IEEE doubles and it never fuses a multiply with an add, like the jitted loop;
the unsigned 64-bit arithmetic of the random generators is done on Python integers with masks.
Division by a zero ``QD_ii`` (an empty row with L1 loss) follows numpy's rules, as the jitted
loop's ``error_model="numpy"`` does.  The rows are converted to Python lists once per call
(a list index is several times faster than a numpy scalar index in the interpreter).
"""

import math

from svmtool.solvers.common.rng import SPLITMIX_GAMMA, SPLITMIX_M1, SPLITMIX_M2

_M64 = (1 << 64) - 1
_M32 = 0xFFFFFFFF
_INF = math.inf


def _div(a, b):
    """``a / b`` with IEEE semantics for ``b == 0`` (inf with the right sign, or nan)."""
    if b != 0.0:
        return a / b
    if a != a or a == 0.0:
        return math.nan
    return math.copysign(_INF, a) * math.copysign(1.0, b)


class _Glibc:
    """glibc's TYPE_3 ``rand()`` over the 33-slot state of :func:`svmtool.solvers.common.rng.glibc_rand_state`."""

    __slots__ = ("t", "f", "r")

    def __init__(self, rng):
        vals = [int(v) for v in rng]
        self.t = vals[:31]
        self.f = vals[31]
        self.r = vals[32]

    def below(self, n):
        t = self.t
        v = (t[self.f] + t[self.r]) & _M32
        t[self.f] = v
        self.f = 0 if self.f == 30 else self.f + 1
        self.r = 0 if self.r == 30 else self.r + 1
        return (v >> 1) % n

    def store(self, rng):
        rng[:31] = self.t
        rng[31] = self.f
        rng[32] = self.r


class _SplitMix:
    """splitmix64 with Lemire's bounded draw, as ``_splitmix_next``/``_bounded`` in
    :mod:`svmtool.solvers.common._rng_jit`."""

    __slots__ = ("s",)

    def __init__(self, rng):
        self.s = int(rng[0])

    def _next(self):
        z = (self.s + SPLITMIX_GAMMA) & _M64
        self.s = z
        z = ((z ^ (z >> 30)) * SPLITMIX_M1) & _M64
        z = ((z ^ (z >> 27)) * SPLITMIX_M2) & _M64
        return z ^ (z >> 31)

    def below(self, n):
        m = (self._next() >> 32) * n
        low = m & _M32
        if low < n:
            t = ((1 << 32) - n) % n
            while low < t:
                m = (self._next() >> 32) * n
                low = m & _M32
        return m >> 32

    def store(self, rng):
        rng[0] = self.s


def dcd_iterations(indptr, indices, data, y, qd, alpha, w, index, box, loop, rng,
                   use_glibc, shrinking, eps, max_iter, work_budget, hist, row_upper=None,
                   row_diag=None):
    """Same contract as ``_dcd_jit._dcd_iterations`` (``row_upper``/``row_diag`` None or empty:
    the box's per-class values): updates the arrays, returns (iterations done, work)."""
    per_row = row_upper is not None and len(row_upper) > 0
    ru = row_upper.tolist() if per_row else None
    rd = row_diag.tolist() if per_row else None
    ip = indptr.tolist()
    ix = indices.tolist()
    dv = data.tolist()
    # each row's indices and values as two short lists: zip() over them is the cheapest way to
    # walk a row in the interpreter
    rows_ix = [ix[ip[r]:ip[r + 1]] for r in range(len(ip) - 1)]
    rows_dv = [dv[ip[r]:ip[r + 1]] for r in range(len(ip) - 1)]
    yv = y.tolist()
    qv = qd.tolist()
    al = alpha.tolist()
    wv = w.tolist()
    order = index.tolist()
    gen = _Glibc(rng) if use_glibc else _SplitMix(rng)
    below = gen.below

    n_rows = len(order)
    st = loop[0]                    # a view: the assignments below write into ``loop``
    active = int(st["active"])
    it = int(st["iterations"])
    pgmax_old = float(st["pg_max_old"])
    pgmin_old = float(st["pg_min_old"])
    u_neg, u_pos, d_neg, d_pos = (float(box[0][f]) for f in ("u_neg", "u_pos", "d_neg", "d_pos"))
    n_hist = hist.shape[0]
    work_budget = int(work_budget)
    done = 0
    work = 0
    while it < max_iter and done < n_hist:
        for i in range(active):
            j = i + below(active - i)
            order[i], order[j] = order[j], order[i]

        pgmax_new = -_INF
        pgmin_new = _INF
        s = 0
        while s < active:
            i = order[s]
            r_ix = rows_ix[i]
            r_dv = rows_dv[i]
            work += len(r_ix)
            yi = yv[i]
            g = 0.0
            for j, v in zip(r_ix, r_dv):
                g += wv[j] * v
            g = yi * g - 1.0
            if yi > 0:
                c = u_pos
                dii = d_pos
            else:
                c = u_neg
                dii = d_neg
            if per_row:
                c = ru[i]
                dii = rd[i]
            a = al[i]
            g += a * dii

            pg = 0.0
            if a == 0.0:
                if g > pgmax_old:
                    active -= 1
                    order[s] = order[active]
                    order[active] = i
                    continue
                elif g < 0.0:
                    pg = g
            elif a == c:
                if g < pgmin_old:
                    active -= 1
                    order[s] = order[active]
                    order[active] = i
                    continue
                elif g > 0.0:
                    pg = g
            else:
                pg = g

            if pg > pgmax_new:
                pgmax_new = pg
            if pg < pgmin_new:
                pgmin_new = pg

            if abs(pg) > 1.0e-12:
                na = a - _div(g, qv[i])
                if not (na > 0.0):
                    na = 0.0
                if not (na < c):
                    na = c
                al[i] = na
                d = (na - a) * yi
                for j, v in zip(r_ix, r_dv):
                    wv[j] += d * v
            s += 1

        it += 1
        hist[done, 0] = pgmax_new
        hist[done, 1] = pgmin_new
        hist[done, 2] = float(active)
        done += 1

        if (pgmax_new - pgmin_new <= eps and abs(pgmax_new) <= eps
                and abs(pgmin_new) <= eps):
            if active == n_rows:
                st["converged"] = 1
                break
            active = n_rows
            pgmax_old = _INF
            pgmin_old = -_INF
        else:
            pgmax_old = pgmax_new
            pgmin_old = pgmin_new
            if pgmax_old <= 0.0 or not shrinking:
                pgmax_old = _INF
            if pgmin_old >= 0.0 or not shrinking:
                pgmin_old = -_INF
        if work >= work_budget:
            break

    alpha[:] = al
    w[:] = wv
    index[:] = order
    gen.store(rng)
    st["active"] = active
    st["iterations"] = it
    st["pg_max_old"] = pgmax_old
    st["pg_min_old"] = pgmin_old
    return done, work


def row_sq_norms(indptr, data):
    """``||x_i||^2`` per row, summed in storage order (as ``ops.sparse.row_sq_norms``)."""
    ip = indptr.tolist()
    dv = data.tolist()
    out = []
    for i in range(len(ip) - 1):
        s = 0.0
        for k in range(ip[i], ip[i + 1]):
            v = dv[k]
            s += v * v
        out.append(s)
    return out


def csr_dot_dense(indptr, indices, data, w):
    """``X @ w`` per row, summed in storage order (as ``ops.sparse.csr_dot_dense``)."""
    ip = indptr.tolist()
    ix = indices.tolist()
    dv = data.tolist()
    wv = w.tolist()
    n = len(wv)
    out = []
    for i in range(len(ip) - 1):
        s = 0.0
        for k in range(ip[i], ip[i + 1]):
            j = ix[k]
            if j < n:
                s += wv[j] * dv[k]
        out.append(s)
    return out


def csr_t_dot(indptr, indices, data, v, n_features):
    """``X.T @ v`` accumulated row by row (as ``ops.sparse.csr_t_dot``)."""
    ip = indptr.tolist()
    ix = indices.tolist()
    dv = data.tolist()
    vv = v.tolist()
    out = [0.0] * n_features
    for i in range(len(ip) - 1):
        a = vv[i]
        if a != 0.0:
            for k in range(ip[i], ip[i + 1]):
                j = ix[k]
                if j < n_features:
                    out[j] += a * dv[k]
    return out

"""The reduced problem of the cutting-plane solvers: a small QP over the working set of cuts.

With cuts ``R(w) >= <a_j, w> + b_j`` (j = 1..t) of a convex risk ``R`` and the trivial cut
``R >= 0`` (j = 0, ``a_0 = 0``, ``b_0 = 0``), the reduced primal

    min_w  1/2 w'w + max_j (<a_j, w> + b_j)

has the dual (``H_jk = <a_j, a_k>``, the probability simplex ``S``)

    max_{alpha in S}  D(alpha) = -1/2 alpha'H alpha + b'alpha,    w(alpha) = -sum_j alpha_j a_j.

Joachims' 1-slack dual (OP3, ``sum alpha <= C``) is the same problem: the slack's own variable is
``alpha_0`` and the scale C is inside ``a_j`` and ``b_j`` here (risks are sums, LIBLINEAR's
convention).  ``D(alpha)`` of any feasible ``alpha`` is a lower bound on the full problem's optimum,
so the solvers' stopping rules stay valid whatever the accuracy of this QP.

:func:`simplex_qp` solves it by sequential minimal optimisation on the simplex: move mass from a
coordinate ``v`` (``alpha_v > 0``) to ``u = argmin g`` (``g = H alpha - b``), ``v`` chosen by the
second-order rule of Fan, Chen and Lin (2005), the step clipped at ``alpha_v``.  Its gap
``alpha'g - min g`` equals the reduced primal at ``w(alpha)`` minus ``D(alpha)``.  It warm-starts
from the previous ``alpha`` (a new cut enters with ``alpha = 0``).

:class:`WorkingSet` keeps the cuts (dense rows, or sparse ones in high dimension), ``H``,
``b``, ``alpha``; it grows by doubling,
adds one row of ``H`` per new cut (``t`` dot products) and drops cuts that stayed inactive
(``alpha = 0``) for ``inactive_limit`` solves in a row (SVMperf does the same), so the QP stays
small.
"""

import numpy as np

from svmtool._jit import njit
from svmtool.engine.passes_cp import gram_row, neg_combination, sparse_vdot, vdot


@njit
def simplex_qp(H, b, alpha, g, t, tol_abs, tol_rel, max_iter):
    """SMO on ``min 1/2 a'Ha - b'a`` over the simplex, first ``t`` coordinates; in place.

    ``g`` is recomputed on entry and left holding ``H alpha - b``.  Returns
    ``(iterations, gap, f)`` with ``gap = alpha'g - min_j g_j`` and ``f`` the objective."""
    for j in range(t):
        s = 0.0
        for k in range(t):
            if alpha[k] != 0.0:
                s += H[j, k] * alpha[k]
        g[j] = s - b[j]
    it = 0
    gap = 0.0
    f = 0.0
    while True:
        u = 0
        ag = 0.0
        ab = 0.0
        for j in range(t):
            if g[j] < g[u]:
                u = j
            ag += alpha[j] * g[j]
            ab += alpha[j] * b[j]
        gap = ag - g[u]
        f = 0.5 * (ag - ab)
        if gap <= tol_abs or gap <= tol_rel * abs(f) or it >= max_iter:
            break
        gu = g[u]
        huu = H[u, u]
        v = -1
        best = 0.0
        bestk = 0.0
        for j in range(t):
            if alpha[j] > 0.0 and g[j] > gu and j != u:
                d = g[j] - gu
                kappa = huu + H[j, j] - 2.0 * H[u, j]
                if kappa <= 1e-12 * (huu + H[j, j]) + 1e-300:
                    kappa = 1e-12 * (huu + H[j, j]) + 1e-300
                score = d * d / kappa
                if score > best:
                    best = score
                    v = j
                    bestk = kappa
        if v < 0:
            break
        delta = (g[v] - gu) / bestk
        if delta > alpha[v]:
            delta = alpha[v]
        alpha[u] += delta
        alpha[v] -= delta
        if alpha[v] < 0.0:
            alpha[v] = 0.0
        for j in range(t):
            g[j] += delta * (H[j, u] - H[j, v])
        it += 1
    return it, gap, f


class WorkingSet:
    """Cuts, their Gram matrix and the dual point of the reduced QP (cut 0 is ``R >= 0``).

    Cuts are kept as dense rows when the dimension is small (``dim <= dense_limit``: one BLAS
    call per update) and as sparse (indices, values) pairs otherwise: a cut built from the
    violators of text data touches a few per cent of the features (median 2-3% on news20), and
    the working-set algebra (a new row of ``H``, ``w = -sum alpha_j a_j`` over the active cuts)
    then costs the cuts' non-zeros instead of ``t * dim`` memory traffic per iteration.
    """

    def __init__(self, dim, capacity=64, inactive_limit=50, dense_limit=4096):
        self.dim = int(dim)
        cap = max(int(capacity), 4)
        self.dense = self.dim <= dense_limit
        if self.dense:
            self.A = np.zeros((cap, self.dim), dtype=np.float64)   # row 0 stays zero
        else:
            self.cuts = [None]          # (indices or None for dense, values) per cut
        self.H = np.zeros((cap, cap), dtype=np.float64)
        self.b = np.zeros(cap, dtype=np.float64)
        self.alpha = np.zeros(cap, dtype=np.float64)
        self.alpha[0] = 1.0
        self.g = np.zeros(cap, dtype=np.float64)
        self.idle = np.zeros(cap, dtype=np.int64)
        self.t = 1
        self.inactive_limit = int(inactive_limit) if inactive_limit else 0
        self.qp_iterations = 0
        self.dropped = 0

    def _grow(self):
        cap = self.H.shape[0] * 2
        if self.dense:
            A = np.zeros((cap, self.dim))
            A[:self.t] = self.A[:self.t]
            self.A = A
        H = np.zeros((cap, cap))
        H[:self.t, :self.t] = self.H[:self.t, :self.t]
        self.H = H
        for name in ("b", "alpha", "g", "idle"):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype)
            new[:self.t] = old[:self.t]
            setattr(self, name, new)

    def _dot_cut(self, j, a):
        idx, val = self.cuts[j]
        return float(vdot(val, a)) if idx is None else float(sparse_vdot(idx, val, a))

    def add(self, a, b):
        """Add the cut ``R(w) >= <a, w> + b`` (enters with ``alpha = 0``)."""
        a = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
        if self.t == self.H.shape[0]:
            self._grow()
        t = self.t
        if self.dense:
            self.A[t] = a
            row = np.empty(t)
            gram_row(self.A, 1, t + 1, a, row)
        else:
            nz = np.flatnonzero(a)
            if len(nz) * 2 < self.dim:
                self.cuts.append((nz, a[nz]))
            else:
                self.cuts.append((None, a.copy()))
            row = np.array([self._dot_cut(j, a) for j in range(1, t + 1)])
        self.H[t, 1:t + 1] = row
        self.H[1:t + 1, t] = row
        self.b[t] = b
        self.alpha[t] = 0.0
        self.idle[t] = 0
        self.t = t + 1

    def solve(self, tol_abs, tol_rel=1e-12, max_iter=None):
        """Solve the reduced dual from the current alpha; returns ``(D, gap)``."""
        t = self.t
        if max_iter is None:
            max_iter = 1000 + 200 * t
        it, gap, f = simplex_qp(self.H, self.b, self.alpha, self.g, t, float(tol_abs),
                                float(tol_rel), int(max_iter))
        self.qp_iterations += int(it)
        self.idle[:t] = np.where(self.alpha[:t] > 0, 0, self.idle[:t] + 1)
        return -f, gap

    def w(self):
        """The reduced problem's primal point ``-sum alpha_j a_j`` (active cuts only)."""
        t = self.t
        act = np.flatnonzero(self.alpha[1:t] > 0) + 1
        if self.dense:
            w = np.empty(self.dim, dtype=np.float64)
            neg_combination(self.A, self.alpha, act.astype(np.int64), w)
            return w
        w = np.zeros(self.dim, dtype=np.float64)
        for j in act:
            idx, val = self.cuts[j]
            if idx is None:
                w -= self.alpha[j] * val
            else:
                w[idx] -= self.alpha[j] * val
        return w

    def value_at(self, w):
        """The cutting-plane model ``max(0, max_j <a_j, w> + b_j)`` of the risk at ``w``."""
        t = self.t
        if t == 1:
            return 0.0
        if self.dense:
            vals = np.empty(t - 1)
            gram_row(self.A, 1, t, np.ascontiguousarray(w, dtype=np.float64), vals)
        else:
            vals = np.array([self._dot_cut(j, w) for j in range(1, t)])
        return max(0.0, float(np.max(vals + self.b[1:t])))

    def prune(self):
        """Drop cuts inactive for ``inactive_limit`` solves in a row (never cut 0)."""
        if not self.inactive_limit or self.t <= 2:
            return
        t = self.t
        keep = np.ones(t, dtype=bool)
        keep[1:] = self.idle[1:t] < self.inactive_limit
        if keep.all():
            return
        idx = np.flatnonzero(keep)
        k = len(idx)
        if self.dense:
            self.A[:k] = self.A[idx]
        else:
            self.cuts = [self.cuts[j] for j in idx]
        self.H[:k, :k] = self.H[np.ix_(idx, idx)]
        for name in ("b", "alpha", "idle"):
            arr = getattr(self, name)
            arr[:k] = arr[idx]
        self.alpha[k:t] = 0.0
        self.dropped += t - k
        self.t = k

    @property
    def size(self):
        return self.t - 1

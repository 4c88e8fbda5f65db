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

:class:`WorkingSet` keeps the cuts (dense rows, or a sparse arena in high dimension), ``H``,
``b``, ``alpha``; it grows by doubling,
adds one row of ``H`` per new cut (``t`` dot products) and drops cuts that stayed inactive
(``alpha = 0``) for ``inactive_limit`` solves in a row (SVMperf does the same), so the QP stays
small.
"""

import numpy as np

from svmtool._jit import njit
from svmtool.engine.local import core_free, in_two
from svmtool.engine.passes_cp import gram_row, neg_combination

# The outer solvers ask the reduced QP for no more accuracy than this fraction of their current
# gap (OCAS: best F - lower bound; cp: the most violated constraint's excess).  Any feasible alpha
# gives a valid lower bound, so a loose QP early on costs nothing in correctness; it keeps an
# iteration cheap while the gap is large (C = 1e12 on heart_scale: the QP ran to its step cap every
# iteration, tens of milliseconds each, with the outer gap still at 1e14).
QP_FOLLOW = 0.05


@njit
def simplex_qp(H, b, alpha, g, t, tol_abs, tol_rel, max_iter, tol_pair=-1.0):
    """SMO on ``min 1/2 a'Ha - b'a`` over the simplex, first ``t`` coordinates; in place.

    It stops at ``gap <= tol_abs`` or ``gap <= tol_rel |f|``; with ``tol_pair >= 0`` instead at
    the KKT rule of SVMlight's optimizer (SVMperf's QP): the largest ``g`` of a coordinate with
    ``alpha > 0`` is within ``tol_pair`` of the smallest ``g`` (no cut is more than ``tol_pair``
    above the active ones, and the active ones agree to ``tol_pair``).

    ``H`` must be symmetric: every access goes along a row (``H[u, j]`` for ``H[j, u]``), which
    is contiguous in memory; the column walks of the gradient update were half of OCAS's time
    on news20.  ``g`` is recomputed on entry and left holding ``H alpha - b``.  Returns
    ``(iterations, gap, f)`` with ``gap = alpha'g - min_j g_j`` and ``f`` the objective."""
    diag = np.empty(t)
    for j in range(t):
        diag[j] = H[j, j]
        g[j] = -b[j]
    for k in range(t):
        a = alpha[k]
        if a != 0.0:
            for j in range(t):
                g[j] += H[k, j] * a
    it = 0
    gap = 0.0
    f = 0.0
    while True:
        u = 0
        ag = 0.0
        ab = 0.0
        gmax = -np.inf
        for j in range(t):
            if g[j] < g[u]:
                u = j
            ag += alpha[j] * g[j]
            ab += alpha[j] * b[j]
            if alpha[j] > 0.0 and g[j] > gmax:
                gmax = g[j]
        gap = ag - g[u]
        f = 0.5 * (ag - ab)
        if it >= max_iter:
            break
        if tol_pair >= 0.0:
            if gmax - g[u] <= tol_pair:
                break
        elif gap <= tol_abs or gap <= tol_rel * abs(f):
            break
        gu = g[u]
        huu = diag[u]
        v = -1
        best = 0.0
        bestk = 0.0
        for j in range(t):
            if alpha[j] > 0.0 and g[j] > gu and j != u:
                d = g[j] - gu
                kappa = huu + diag[j] - 2.0 * H[u, j]
                floor = 1e-12 * (huu + diag[j]) + 1e-300
                if kappa <= floor:
                    kappa = floor
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
            g[j] += delta * (H[u, j] - H[v, j])
        it += 1
    return it, gap, f


@njit(fastmath=True)
def arena_dots(idx, val, seg_lo, seg_hi, lo, hi, a, out):
    """``out[j - lo] = <cut j, a>`` for the sparse cuts ``lo <= j < hi`` of an arena: cut ``j``
    holds ``val[seg_lo[j]:seg_hi[j]]`` at features ``idx[...]``."""
    for j in range(lo, hi):
        s = 0.0
        for k in range(seg_lo[j], seg_hi[j]):
            s += val[k] * a[idx[k]]
        out[j - lo] = s


@njit
def arena_axpy(idx, val, seg_lo, seg_hi, coef, cuts, w):
    """``w -= coef[r] * cut[cuts[r]]`` for every r (sparse cuts of an arena)."""
    for r in range(cuts.shape[0]):
        j = cuts[r]
        c = coef[r]
        for k in range(seg_lo[j], seg_hi[j]):
            w[idx[k]] -= c * val[k]


@njit
def arena_axpy_range(idx, val, seg_lo, seg_hi, coef, cuts, w, f0, f1):
    """:func:`arena_axpy` on the features ``f0 <= f < f1`` only (a segment's features are
    ascending, so its part is found by bisection): two calls on disjoint feature ranges do the
    whole update, each entry of ``w`` getting the same terms in the same order."""
    for r in range(cuts.shape[0]):
        j = cuts[r]
        c = coef[r]
        lo = seg_lo[j]
        hi = seg_hi[j]
        a = lo + np.uint64(np.searchsorted(idx[lo:hi], f0))
        b = lo + np.uint64(np.searchsorted(idx[lo:hi], f1))
        for k in range(a, b):
            w[idx[k]] -= c * val[k]
    return 0


@njit
def arena_compact(idx, val, seg_lo, seg_hi, k):
    """Move the segments of cut slots ``0..k-1`` to the front of the arena, in place, closing
    the holes dropped cuts left; returns the new end.  Slots lie in the arena in slot order
    (cuts are appended, and pruning keeps their order), so the forward copy is safe."""
    pos = 0
    for j in range(k):
        lo = seg_lo[j]
        hi = seg_hi[j]
        seg_lo[j] = pos
        for q in range(lo, hi):
            idx[pos] = idx[q]
            val[pos] = val[q]
            pos += 1
        seg_hi[j] = pos
    return pos


class WorkingSet:
    """Cuts, their Gram matrix and the dual point of the reduced QP (cut 0 is ``R >= 0``).

    Cuts are kept as dense rows when the dimension is small (``dim <= dense_limit``: one BLAS
    call per update) and otherwise in a sparse arena, one (indices, values) segment per cut in
    two growing arrays: a cut built from the violators of text data touches a few per cent of
    the features (news20's among them).  The working-set algebra then runs in jitted passes
    over the arena's non-zeros: a new row of ``H`` is one pass, and ``w = -sum alpha_j a_j`` is
    kept up to date by adding only the cuts whose ``alpha`` changed since the last call (a full
    recomputation every ``REFRESH`` calls and after every pruning bounds the rounding drift).
    """

    REFRESH = 64
    # the sparse arena's passes run on two threads (threads > 1) from this many non-zeros on
    SPLIT_NNZ = 1 << 16

    def __init__(self, dim, capacity=64, inactive_limit=50, dense_limit=4096, threads=1):
        self.dim = int(dim)
        # two threads for the arena's passes when asked for and a core is idle at the start
        # (the results are the same either way, see _dots and _axpy)
        self.split = int(threads or 1) > 1 and core_free()
        self._fmid = self.dim // 2      # the feature at which the w update splits
        cap = max(int(capacity), 4)
        self.dense = self.dim <= dense_limit
        if self.dense:
            self.A = np.zeros((cap, self.dim), dtype=np.float64)   # row 0 stays zero
        else:
            # unsigned features and (in the kernels) segment limits: numba then leaves out the
            # negative-index checks of every access (the arena's passes run faster for it)
            idx_dtype = np.uint32 if self.dim < 2**32 else np.uint64
            self.idx = np.zeros(1024, dtype=idx_dtype)
            self.val = np.zeros(1024, dtype=np.float64)
            # cut j holds idx/val[seg_lo[j]:seg_hi[j]] (cut 0: an empty segment); dropped cuts
            # leave holes, closed only when the arena is full (arena_compact)
            self.seg_lo = np.zeros(cap, dtype=np.int64)
            self.seg_hi = np.zeros(cap, dtype=np.int64)
            self.end = 0
            self._w = None                  # -sum alpha_w[j] a_j, kept incrementally
            self._alpha_w = np.zeros(cap, dtype=np.float64)
            self._calls = 0
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
        else:
            for name in ("seg_lo", "seg_hi"):
                new = np.zeros(cap, dtype=np.int64)
                new[:self.t] = getattr(self, name)[:self.t]
                setattr(self, name, new)
            aw = np.zeros(cap)
            aw[:self.t] = self._alpha_w[:self.t]
            self._alpha_w = aw
        H = np.zeros((cap, cap))
        H[:self.t, :self.t] = self.H[:self.t, :self.t]
        self.H = H
        for name in ("b", "alpha", "g", "idle"):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype)
            new[:self.t] = old[:self.t]
            setattr(self, name, new)

    def _append_sparse(self, a):
        nz = np.flatnonzero(a)
        need = self.end + len(nz)
        if need > len(self.idx):             # full: close the holes first, then grow if the
            self.end = int(arena_compact(self.idx, self.val, self.seg_lo, self.seg_hi, self.t))
            need = self.end + len(nz)        # live cuts fill more than half of it
            if 2 * need > len(self.idx):
                size = max(2 * need, 2 * len(self.idx))
                for name in ("idx", "val"):
                    old = getattr(self, name)
                    new = np.zeros(size, dtype=old.dtype)
                    new[:self.end] = old[:self.end]
                    setattr(self, name, new)
        end = self.end
        if len(nz):
            self._fmid = int(nz[len(nz) // 2])     # about half of a cut's non-zeros below
        self.idx[end:need] = nz
        self.val[end:need] = a[nz]
        self.seg_lo[self.t] = end
        self.seg_hi[self.t] = need
        self.end = need

    def add(self, a, b):
        """Add the cut ``R(w) >= <a, w> + b`` (enters with ``alpha = 0``)."""
        a = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
        if self.t == self.H.shape[0]:
            self._grow()
        t = self.t
        row = np.empty(t)
        if self.dense:
            self.A[t] = a
            gram_row(self.A, 1, t + 1, a, row)
        else:
            self._append_sparse(a)
            self._alpha_w[t] = 0.0
            self._dots(1, t + 1, a, row)
        self.H[t, 1:t + 1] = row
        self.H[1:t + 1, t] = row
        self.b[t] = b
        self.alpha[t] = 0.0
        self.idle[t] = 0
        self.t = t + 1

    def _dots(self, lo, hi, a, out):
        """``out[j - lo] = <cut j, a>`` over the arena's cuts ``lo <= j < hi``, in two halves
        of about equal non-zeros on two threads when the arena is large (the same sums)."""
        args = (self.idx, self.val, self.seg_lo.view(np.uint64), self.seg_hi.view(np.uint64))
        if self.split and hi - lo > 1:
            size = np.cumsum(self.seg_hi[lo:hi] - self.seg_lo[lo:hi])
            if size[-1] >= self.SPLIT_NNZ:
                mid = lo + 1 + int(np.searchsorted(size, size[-1] // 2))
                if mid < hi:
                    in_two((arena_dots, *args, lo, mid, a, out),
                           (arena_dots, *args, mid, hi, a, out[mid - lo:]))
                    return
        arena_dots(*args, lo, hi, a, out)

    def _axpy(self, coef, cuts, w):
        """``w -= sum_r coef[r] cut[cuts[r]]``: on two threads over the two halves of the
        features when the cuts hold many non-zeros (each entry the same terms, same order)."""
        args = (self.idx, self.val, self.seg_lo.view(np.uint64), self.seg_hi.view(np.uint64),
                coef, cuts, w)
        if self.split and int(np.sum(self.seg_hi[cuts] - self.seg_lo[cuts])) >= self.SPLIT_NNZ:
            f = self._fmid
            in_two((arena_axpy_range, *args, 0, f), (arena_axpy_range, *args, f, self.dim))
        else:
            arena_axpy(*args)

    def solve(self, tol_abs, tol_rel=1e-12, max_iter=None, tol_pair=-1.0):
        """Solve the reduced dual from the current alpha; returns ``(D, gap)``.  ``tol_pair``
        (>= 0): SVMlight's KKT rule instead of ``tol_abs`` / ``tol_rel`` (see simplex_qp)."""
        t = self.t
        if max_iter is None:
            max_iter = 1000 + 200 * t
        it, gap, f = simplex_qp(self.H, self.b, self.alpha, self.g, t, float(tol_abs),
                                float(tol_rel), int(max_iter), float(tol_pair))
        self.qp_iterations += int(it)
        self.idle[:t] = np.where(self.alpha[:t] > 0, 0, self.idle[:t] + 1)
        return -f, gap

    def w(self):
        """The reduced problem's primal point ``-sum alpha_j a_j`` (active cuts only)."""
        t = self.t
        if self.dense:
            act = np.flatnonzero(self.alpha[1:t] > 0) + 1
            w = np.empty(self.dim, dtype=np.float64)
            neg_combination(self.A, self.alpha, act.astype(np.int64), w)
            return w
        self._calls += 1
        if self._w is None or self._calls % self.REFRESH == 0:
            self._w = np.zeros(self.dim, dtype=np.float64)
            self._alpha_w[:t] = 0.0
        delta = self.alpha[1:t] - self._alpha_w[1:t]
        moved = np.flatnonzero(delta) + 1
        if len(moved):
            self._axpy(self.alpha[moved] - self._alpha_w[moved], moved.astype(np.uint64),
                       self._w)
            self._alpha_w[moved] = self.alpha[moved]
        return self._w.copy()

    def value_at(self, w):
        """The cutting-plane model ``max(0, max_j <a_j, w> + b_j)`` of the risk at ``w``."""
        t = self.t
        if t == 1:
            return 0.0
        vals = np.empty(t - 1)
        w = np.ascontiguousarray(w, dtype=np.float64)
        if self.dense:
            gram_row(self.A, 1, t, w, vals)
        else:
            self._dots(1, t, w, vals)
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
            self.seg_lo[:k] = self.seg_lo[idx]     # the data stay; holes are closed when the
            self.seg_hi[:k] = self.seg_hi[idx]     # arena is full (_append_sparse)
            self._w = None                  # recomputed from the kept cuts at the next w()
        self.H[:k, :k] = self.H[np.ix_(idx, idx)]
        for name in ("b", "alpha", "idle", "g"):
            arr = getattr(self, name)
            arr[:k] = arr[idx]
        self.alpha[k:t] = 0.0
        self.dropped += t - k
        self.t = k

    @property
    def size(self):
        return self.t - 1

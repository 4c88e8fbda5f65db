"""Full passes over the rows for the cutting-plane family (cp, ocas, gca2, tca, ordinal, ocas-mc).

These solvers touch the training rows only through whole passes:

* ``matvec(w)``        -- scores ``z = X w`` (one pass);
* ``rmatvec(v)``       -- ``X' v`` (one pass; rows with ``v_i = 0`` are skipped, so a cut built
  from the violators costs a pass over the violators only);
* ``matmat(W)`` / ``rmatmat(V)`` -- the same for a block of K columns (Crammer-Singer).

Everything else (hinge risk -- its kernels in :mod:`svmtool.engine.hinge` --, the violator
coefficients, the loss along a line, the pairwise counts of the ordinal cut) works on length-n
vectors that are already in memory next to the rows,
so on a cluster each worker would compute its shard's share and the driver would add them up.
:class:`CPOracle` is the small interface the solvers call; it uses
:class:`svmtool.engine.local.LocalOracle` when that module exists and this module's own serial
kernels otherwise.  All kernels here are pure functions of their arguments.
"""

import time

import numpy as np

from svmtool._jit import njit
from svmtool.engine.hinge import hinge_cut_pass, hinge_grad_pass
# X w and X' v (rows with a zero coefficient skipped): the serial products of ops
from svmtool.ops.sparse import csr_dot_dense as xw
from svmtool.ops.sparse import csr_t_dot as xtv


# --------------------------------------------------------------------------------------------
# row passes
# --------------------------------------------------------------------------------------------

@njit
def xw_block(indptr, indices, data, W):
    """``X @ W`` for ``W`` of shape (n_features, K), row-major."""
    n = indptr.shape[0] - 1
    K = W.shape[1]
    out = np.zeros((n, K), dtype=np.float64)
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            v = data[k]
            for c in range(K):
                out[i, c] += v * W[j, c]
    return out


@njit
def xtv_block(indptr, indices, data, V, n_features):
    """``X' V`` for ``V`` of shape (n_rows, K); rows whose coefficients are all zero skipped."""
    n = indptr.shape[0] - 1
    K = V.shape[1]
    out = np.zeros((n_features, K), dtype=np.float64)
    for i in range(n):
        nz = False
        for c in range(K):
            if V[i, c] != 0.0:
                nz = True
                break
        if not nz:
            continue
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            v = data[k]
            for c in range(K):
                out[j, c] += v * V[i, c]
    return out


# --------------------------------------------------------------------------------------------
# ordinal regression: the most violated constraint without enumerating pairs
# --------------------------------------------------------------------------------------------

@njit
def _fenwick_add(tree, i, v):
    i += 1
    while i < tree.shape[0]:
        tree[i] += v
        i += i & (-i)


@njit
def _fenwick_prefix(tree, i):
    """Sum of entries 0..i-1."""
    s = 0.0
    while i > 0:
        s += tree[i]
        i -= i & (-i)
    return s


@njit
def pair_counts(z, rank, group_start, n_ranks, wt, cplus, cminus):
    """Joachims' Algorithm 2 counts, in O(n log n) per group, never enumerating pairs.

    Within each group (rows ``group_start[g]:group_start[g+1]``, e.g. one query), for pairs
    ``(i, j)`` with ``rank_i > rank_j`` the pair is violated when ``z_i - z_j < 1``.  Fills
    ``cplus[i]`` = the summed weight ``wt_j`` of the partners j of the violated pairs where ``i``
    is the higher-ranked member and ``cminus[j]`` = the summed ``wt_i`` where ``j`` is the lower
    one (with unit weights: the numbers of such pairs).  ``rank`` holds 0-based dense ranks
    (< ``n_ranks``).  Returns the summed weight ``wt_i wt_j`` of the comparable pairs of all
    groups (with unit weights: their number ``m``).

    One sort by score per group, then two sweeps with a Fenwick tree over ranks: every row enters
    the tree once and asks it once, so the cost is O(n log n + n log R).
    """
    n_groups = group_start.shape[0] - 1
    tree = np.zeros(n_ranks + 1, dtype=np.float64)
    cnt = np.zeros(n_ranks, dtype=np.float64)
    m_total = 0.0
    for g in range(n_groups):
        lo = group_start[g]
        hi = group_start[g + 1]
        ng = hi - lo
        if ng < 2:
            for i in range(lo, hi):
                cplus[i] = 0.0
                cminus[i] = 0.0
            continue
        zz = z[lo:hi]
        order = np.argsort(zz)               # ascending scores
        # comparable pairs in this group (weighted)
        for r in range(n_ranks):
            cnt[r] = 0.0
        for i in range(lo, hi):
            cnt[rank[i]] += wt[i]
        below = 0.0
        for r in range(n_ranks):
            m_total += cnt[r] * below
            below += cnt[r]
        # c+_i = sum of wt_j over {j: rank_j < rank_i, z_j > z_i - 1}: queries z_i - 1 in
        # descending order, items inserted while z_j > query
        for r in range(n_ranks + 1):
            tree[r] = 0.0
        p = ng - 1                           # next item to insert (descending z)
        for qi in range(ng - 1, -1, -1):     # queries by descending z_i (so z_i - 1 too)
            i = lo + order[qi]
            q = z[i] - 1.0
            while p >= 0 and z[lo + order[p]] > q:
                k = lo + order[p]
                _fenwick_add(tree, rank[k], wt[k])
                p -= 1
            cplus[i] = _fenwick_prefix(tree, rank[i])
        # c-_j = sum of wt_i over {i: rank_i > rank_j, z_i - 1 < z_j}: queries z_j ascending
        # (the same float test as above, so that both counts see the same violated pairs)
        for r in range(n_ranks + 1):
            tree[r] = 0.0
        p = 0
        inserted = 0.0
        for qj in range(ng):
            j = lo + order[qj]
            q = z[j]
            while p < ng and z[lo + order[p]] - 1.0 < q:
                k = lo + order[p]
                _fenwick_add(tree, rank[k], wt[k])
                p += 1
                inserted += wt[k]
            cminus[j] = inserted - _fenwick_prefix(tree, rank[j] + 1)
    return m_total


# --------------------------------------------------------------------------------------------
# Crammer-Singer (multi-class) risk
# --------------------------------------------------------------------------------------------

@njit
def cs_cut_coef(Z, cls, cost, V):
    """Most violated label per row at scores ``Z`` (n, K): ``max_y delta(y, y_i) + Z_iy - Z_iy_i``.

    Fills ``V`` (n, K) so that the risk's subgradient is ``X' V``: ``V[i, y*] = cost_i``,
    ``V[i, y_i] = -cost_i`` for rows whose best label ``y*`` is wrong (LIBLINEAR's ties: the
    true label wins a tie).  Returns ``(risk, offset)``."""
    n, K = Z.shape
    risk = 0.0
    off = 0.0
    for i in range(n):
        yi = cls[i]
        best = 0.0
        arg = yi
        zi = Z[i, yi]
        for c in range(K):
            V[i, c] = 0.0
            if c != yi:
                val = 1.0 + Z[i, c] - zi
                if val > best:
                    best = val
                    arg = c
        if arg != yi:
            risk += cost[i] * best
            off += cost[i]
            V[i, arg] = cost[i]
            V[i, yi] = -cost[i]
    return risk, off


@njit
def cs_risk_line(Zb, Zd, cls, cost, mu):
    """Crammer-Singer risk at ``W_b + mu D`` from cached ``Zb = X W_b`` and ``Zd = X D``."""
    n, K = Zb.shape
    r = 0.0
    for i in range(n):
        yi = cls[i]
        zi = Zb[i, yi] + mu * Zd[i, yi]
        best = 0.0
        for c in range(K):
            if c != yi:
                val = 1.0 + Zb[i, c] + mu * Zd[i, c] - zi
                if val > best:
                    best = val
        r += cost[i] * best
    return r


@njit
def cs_right_slope(Zb, Zd, cls, cost, mu):
    """Right derivative in ``mu`` of :func:`cs_risk_line` (ties broken toward the larger slope)."""
    n, K = Zb.shape
    g = 0.0
    for i in range(n):
        yi = cls[i]
        zi = Zb[i, yi] + mu * Zd[i, yi]
        si = Zd[i, yi]
        best = 0.0
        bslope = 0.0
        for c in range(K):
            if c != yi:
                val = 1.0 + Zb[i, c] + mu * Zd[i, c] - zi
                sl = Zd[i, c] - si
                if val > best or (val == best and sl > bslope):
                    best = val
                    bslope = sl
        g += cost[i] * bslope
    return g


# --------------------------------------------------------------------------------------------
# the interface the solvers call
# --------------------------------------------------------------------------------------------

class CountedPasses:
    """Counts an oracle's passes over the data and the time they take (``passes``,
    ``seconds``), for the solvers' reports."""

    passes = 0
    seconds = 0.0

    def _counted(self, fn, *args):
        """``fn(*args)`` as one counted, timed pass."""
        t = time.perf_counter()
        out = fn(*args)
        self.passes += 1
        self.seconds += time.perf_counter() - t
        return out


class CPOracle(CountedPasses):
    """Row passes over local CSR arrays; counts passes and the time they take."""

    def __init__(self, indptr, indices, data, n_features, threads=None):
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(indices)
        if self.indices.dtype not in (np.int32, np.int64):
            self.indices = self.indices.astype(np.int64)
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.n_features = int(n_features)
        self.n_rows = self.indptr.shape[0] - 1
        self.passes = 0
        self.seconds = 0.0
        self._engine = None
        try:        # the shared engine, when another module provides it
            from svmtool.engine.local import LocalOracle

            self._engine = LocalOracle(self.indptr, self.indices, self.data, self.n_features,
                                       threads)
        except Exception:
            self._engine = None
        # the threads the passes run on (the working set's own passes may use as many)
        self.threads = self._engine.threads if self._engine is not None else 1

    def _pass(self, shared, own, x, *more):
        """One timed, counted pass: the shared engine's method ``shared`` when there is one
        (None: none for this product), else this module's kernel ``own``."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if shared is not None and self._engine is not None:
            return self._counted(lambda: np.asarray(getattr(self._engine, shared)(x),
                                                    dtype=np.float64))
        return self._counted(own, self.indptr, self.indices, self.data, x, *more)

    def matvec(self, w, out=None):
        """``X w``; into ``out`` (n_rows floats) when given and the shared engine is there."""
        if out is None or self._engine is None:
            return self._pass("matvec", xw, w)
        return self._counted(self._engine.matvec, np.ascontiguousarray(w, dtype=np.float64), out)

    def rmatvec(self, v):
        return self._pass("rmatvec", xtv, v, self.n_features)

    def hinge_grad(self, z, lab, c_pos, c_neg):
        """``X' v`` with ``v_i = c_i y_i`` on the margin violators ``y_i z_i < 1`` (0 elsewhere;
        labels and costs as :mod:`svmtool.engine.hinge` keeps them), ``v`` never stored when
        the shared engine is there (:func:`~svmtool.engine.hinge.hinge_grad_pass`)."""
        if self._engine is None:
            y = np.where(np.asarray(lab) > 0, 1.0, -1.0)
            cost = np.abs(lab) * np.where(y > 0, c_pos, c_neg)
            return self.rmatvec(np.where(1.0 - y * z > 0.0, cost * y, 0.0))
        return self._counted(hinge_grad_pass, self._engine, z, lab, c_pos, c_neg)

    def hinge_cut(self, w, lab, c_pos, c_neg, z=None):
        """``(z, g)``: the scores ``z = X w`` (into ``z`` when given) and :meth:`hinge_grad` at
        them, in one pass over the rows when the shared engine is there
        (:func:`~svmtool.engine.hinge.hinge_cut_pass`), else as ``matvec`` then
        ``hinge_grad``."""
        if self._engine is None:
            z = self.matvec(w)
            return z, self.hinge_grad(z, lab, c_pos, c_neg)
        return self._counted(hinge_cut_pass, self._engine, w, lab, c_pos, c_neg, z)

    def matmat(self, W):
        return self._pass(None, xw_block, W)

    def rmatmat(self, V):
        return self._pass(None, xtv_block, V, self.n_features)


# --------------------------------------------------------------------------------------------
# vector algebra of the drivers, without BLAS: numpy's dot hands vectors of this size to a
# multi-threaded BLAS whose threads, woken after every pause, cost milliseconds per call on a
# busy machine, where a plain loop over the same vectors takes a small fraction of that
# --------------------------------------------------------------------------------------------

@njit(fastmath=True)
def vdot(a, b):
    """``a . b`` of two flat float64 vectors."""
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(fastmath=True)
def sparse_vdot(idx, val, a):
    """``sum_k val[k] * a[idx[k]]``."""
    s = 0.0
    for k in range(idx.shape[0]):
        s += val[k] * a[idx[k]]
    return s


@njit(fastmath=True)
def gram_row(A, lo, hi, a, out):
    """``out[j - lo] = A[j] . a`` for rows ``lo <= j < hi``."""
    d = A.shape[1]
    for j in range(lo, hi):
        s = 0.0
        for k in range(d):
            s += A[j, k] * a[k]
        out[j - lo] = s


@njit(fastmath=True)
def neg_combination(A, alpha, rows, out):
    """``out = -sum_{j in rows} alpha[j] A[j]``."""
    d = A.shape[1]
    for k in range(d):
        out[k] = 0.0
    for r in range(rows.shape[0]):
        j = rows[r]
        c = alpha[j]
        for k in range(d):
            out[k] -= c * A[j, k]


@njit
def cs_breakpoints(Zb, Zd, cls, cost, keys, jumps):
    """Breakpoints ``mu > 0`` of the Crammer-Singer risk along the line, for the exact search.

    Row ``i`` contributes ``c_i max_y (p_y + mu q_y)`` with ``p_y = delta + Zb_iy - Zb_iy_i`` and
    ``q_y = Zd_iy - Zd_iy_i`` (``p = q = 0`` for the true label); its upper envelope over
    ``mu >= 0`` is walked line by line (the next line is the one overtaking the current one
    first), O(K) per kink.  Returns ``(slope0, n_break)``: the risk's right derivative at 0 and
    the number of kinks written to ``keys`` (their ``mu``) and ``jumps`` (slope increase)."""
    n, K = Zb.shape
    slope0 = 0.0
    nb = 0
    for i in range(n):
        yi = cls[i]
        zi = Zb[i, yi]
        si = Zd[i, yi]
        # the line that is highest at mu = 0 (ties: the steepest)
        cur = yi
        pc = 0.0
        qc = 0.0
        for c in range(K):
            if c == yi:
                continue
            p = 1.0 + Zb[i, c] - zi
            q = Zd[i, c] - si
            if p > pc or (p == pc and q > qc):
                cur = c
                pc = p
                qc = q
        slope0 += cost[i] * qc
        mu = 0.0
        for _ in range(K):
            best_t = np.inf
            nxt = -1
            nq = 0.0
            npv = 0.0
            for c in range(K):
                if c == yi:
                    p = 0.0
                    q = 0.0
                else:
                    p = 1.0 + Zb[i, c] - zi
                    q = Zd[i, c] - si
                if q > qc:
                    t = (pc - p) / (q - qc)
                    if t < mu:
                        t = mu
                    if t < best_t or (t == best_t and q > nq):
                        best_t = t
                        nxt = c
                        nq = q
                        npv = p
            if nxt < 0:
                break
            if best_t > 0.0:
                keys[nb] = best_t
                jumps[nb] = cost[i] * (nq - qc)
                nb += 1
            else:
                slope0 += cost[i] * (nq - qc)
            mu = best_t
            cur = nxt
            pc = npv
            qc = nq
    return slope0, nb

"""The jitted half of dual coordinate descent (see :mod:`svmtool.solvers.dual_cd.dcd` for the
maths).

``_dcd_iterations`` runs whole outer iterations over raw CSR arrays and keeps all of its state in
the arrays it is given, so that the driver can stop it (work budget) and resume it, and so that
:mod:`svmtool.solvers.dual_cd._dcd_py` -- the same loop in plain Python, used for small problems so
that a small training run does not import numba -- can hand its state over mid-run with no
difference in the result.  Any change to the arithmetic here must be made there too (a test compares
the two bit for bit).
"""

import numpy as np

from svmtool._jit import njit
from svmtool.solvers.common._prefetch_jit import _PF_FAR, _PF_LINE, _PF_NEAR, _pf
from svmtool.solvers.common._rng_jit import _bounded, _glibc_rand

_ZERO = np.uint64(0)
_ONE = np.uint64(1)

# --------------------------------------------------------------------------------------------
# the jitted outer iterations
# --------------------------------------------------------------------------------------------

@njit(error_model="numpy")
def _dcd_iterations(indptr, indices, data, y, qd, alpha, w, index, box, loop, rng,
                    use_glibc, shrinking, eps, max_iter, work_budget, hist, row_upper, row_diag,
                    unit):
    """Run outer iterations until convergence, ``max_iter``, the work budget or a full history.

    indptr uint64, indices uint32, data/y/qd/alpha/w float64, index uint32 (permutation, its first
    ``loop[0].active`` entries are the active rows), ``box`` and ``loop`` the one-element records
    of :mod:`svmtool.solvers.dual_cd._dcd_state` (the dual's box; the state carried between calls),
    rng uint64[33].  Row ``t`` of ``hist`` receives (PGmax, PGmin, active_size) of the
    t-th iteration done in this call; returns the number of iterations done.  ``row_upper`` and
    ``row_diag`` (float64, one entry a row, or both empty): the bound and diagonal term of each
    row, which replace the box's per-class values when the rows carry instance weights.
    ``unit``: every
    stored value is 1.0 (binary features, as a9a's): the loops then skip the values, with the
    same result bit for bit (a product by 1.0 is exact) and one load fewer per stored entry.
    """
    inf = np.inf
    n_rows = np.uint64(index.shape[0])
    st = loop[0]
    active = np.uint64(st.active)
    it = st.iterations
    pgmax_old = st.pg_max_old
    pgmin_old = st.pg_min_old
    u_neg = box[0].u_neg
    u_pos = box[0].u_pos
    d_neg = box[0].d_neg
    d_pos = box[0].d_pos
    n_hist = hist.shape[0]
    n_data = np.uint64(data.shape[0])
    per_row = row_upper.shape[0] > 0
    done = 0
    work = _ZERO
    sink = 0.0
    while it < max_iter and done < n_hist:
        # a fresh random order of the active rows
        if use_glibc:
            for i in range(active):
                j = i + _glibc_rand(rng) % (active - i)
                t = index[i]
                index[i] = index[j]
                index[j] = t
        else:
            for i in range(active):
                j = i + _bounded(rng, active - i)
                t = index[i]
                index[i] = index[j]
                index[j] = t

        pgmax_new = -inf
        pgmin_new = inf
        s = _ZERO
        while s < active:
            i = index[s]
            p0 = indptr[i]
            p1 = indptr[i + _ONE]
            work += p1 - p0
            if s + _PF_FAR < active:
                r = index[s + _PF_FAR]
                sink += _pf(indptr, r) + _pf(alpha, r) + _pf(qd, r) + _pf(y, r)
            if s + _PF_NEAR < active:
                q = indptr[index[s + _PF_NEAR]]
                if q < n_data:
                    sink += _pf(indices, q)
                    if not unit:
                        sink += _pf(data, q)
                        q += _PF_LINE
                        if q < n_data:
                            sink += _pf(data, q)
            yi = y[i]
            g = 0.0
            if unit:
                for k in range(p0, p1):
                    g += w[indices[k]]
            else:
                for k in range(p0, p1):
                    g += w[indices[k]] * data[k]
            g = yi * g - 1.0
            if yi > 0:
                c = u_pos
                dii = d_pos
            else:
                c = u_neg
                dii = d_neg
            if per_row:
                c = row_upper[i]
                dii = row_diag[i]
            a = alpha[i]
            g += a * dii

            pg = 0.0
            if a == 0.0:
                if g > pgmax_old:
                    active -= _ONE
                    index[s] = index[active]
                    index[active] = i
                    continue
                elif g < 0.0:
                    pg = g
            elif a == c:
                if g < pgmin_old:
                    active -= _ONE
                    index[s] = index[active]
                    index[active] = i
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
                na = a - g / qd[i]
                if not (na > 0.0):
                    na = 0.0
                if not (na < c):
                    na = c
                alpha[i] = na
                d = (na - a) * yi
                if unit:
                    for k in range(p0, p1):
                        w[indices[k]] += d
                else:
                    for k in range(p0, p1):
                        w[indices[k]] += d * data[k]
            s += _ONE

        it += 1
        hist[done, 0] = pgmax_new
        hist[done, 1] = pgmin_new
        hist[done, 2] = float(active)
        done += 1

        if (pgmax_new - pgmin_new <= eps and abs(pgmax_new) <= eps
                and abs(pgmin_new) <= eps):
            if active == n_rows:
                st.converged = 1
                break
            # converged on the shrunk problem: check every row once more
            active = n_rows
            pgmax_old = inf
            pgmin_old = -inf
        else:
            pgmax_old = pgmax_new
            pgmin_old = pgmin_new
            if pgmax_old <= 0.0 or not shrinking:
                pgmax_old = inf
            if pgmin_old >= 0.0 or not shrinking:
                pgmin_old = -inf
        if work >= work_budget:
            break

    st.active = np.int64(active)
    st.iterations = it
    st.pg_max_old = pgmax_old
    st.pg_min_old = pgmin_old
    st.sink = sink            # keeps the prefetching loads alive; no meaning
    return done


@njit
def _projected_gradient(margins, y, alpha, box):
    """Projected gradient of the dual at alpha given y_i w'x_i (over all rows); ``box`` the
    one-element ``BOX`` record of :mod:`svmtool.solvers.dual_cd._dcd_state`."""
    n = alpha.shape[0]
    out = np.empty(n, dtype=np.float64)
    b = box[0]
    for i in range(n):
        if y[i] > 0:
            c = b.u_pos
            dii = b.d_pos
        else:
            c = b.u_neg
            dii = b.d_neg
        g = margins[i] - 1.0 + alpha[i] * dii
        if alpha[i] <= 0.0:
            out[i] = min(g, 0.0)
        elif alpha[i] >= c:
            out[i] = max(g, 0.0)
        else:
            out[i] = g
    return out

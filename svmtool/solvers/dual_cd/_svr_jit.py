"""The jitted outer iterations of dual coordinate descent for SVR (see
:mod:`svmtool.solvers.dual_cd.svr`).

``svr_iterations`` keeps its whole state in the arrays it is given (``beta``, ``w``, the
permutation, the shrinking threshold, the generator), so that the driver can call it for a few
outer iterations at a time (callbacks between calls) and resume with no change in the result.
Floating-point operations are LIBLINEAR's, in its order (sums left to right over a row, the
constant term first), which with LIBLINEAR's generator makes ``w`` bit-identical to its own.
As in :mod:`svmtool.solvers.dual_cd._dcd_jit`, the index arrays are unsigned and the rows visited
next are prefetched (reads only: the results are unchanged).
"""

import numpy as np

from svmtool._jit import njit
from svmtool.solvers.common._prefetch_jit import _PF_FAR, _PF_NEAR, _pf, pf_row
from svmtool.solvers.common._rng_jit import shuffle

_FAR = int(_PF_FAR)         # as signed integers: the row positions here are int64
_NEAR = int(_PF_NEAR)


@njit(error_model="numpy")
def svr_iterations(indptr, indices, data, y, qd, beta, w, index, lam, ub, p, fstate, istate,
                   rng, use_glibc, shrinking, eps, max_iter, n_iter, hist):
    """Up to ``n_iter`` outer iterations (fewer at convergence or ``max_iter``).

    indptr uint64, indices uint32, index int64 (the permutation; its first ``active`` entries
    are the active rows); ``lam`` and ``ub`` float64 per row (the diagonal term and the bound
    of row i's variable: a scalar C's, or ``C W_i``'s with instance weights).
    fstate float64[3] = (Gmax_old, Gnorm1_init, scratch); istate int64[3] = (active_size,
    iterations, converged); rng uint64[33] (glibc emulation or splitmix).  Row ``t`` of ``hist``
    receives (Gmax, Gnorm1, active_size) of the t-th iteration done here; returns how many.
    """
    l = index.shape[0]
    active = istate[0]
    it = istate[1]
    gmax_old = fstate[0]
    gnorm1_init = fstate[1]
    done = 0
    sink = 0.0
    while it < max_iter and done < n_iter:
        gmax_new = 0.0
        gnorm1_new = 0.0
        shuffle(index, active, rng, use_glibc)
        s = 0
        while s < active:
            i = index[s]
            if s + _FAR < active:
                r = index[s + _FAR]
                sink += _pf(indptr, r) + _pf(beta, r) + _pf(qd, r) + _pf(y, r) + _pf(lam, r)
            if s + _NEAR < active:
                sink += pf_row(indptr, indices, data, index[s + _NEAR])
            p0 = indptr[i]
            p1 = indptr[i + 1]
            b = beta[i]
            lam_i = lam[i]
            ub_i = ub[i]
            g = -y[i] + lam_i * b
            h = qd[i] + lam_i
            dot = 0.0
            for k in range(p0, p1):
                dot += w[indices[k]] * data[k]
            g += dot
            gp = g + p
            gn = g - p
            violation = 0.0
            if b == 0.0:
                if gp < 0.0:
                    violation = -gp
                elif gn > 0.0:
                    violation = gn
                elif gp > gmax_old and gn < -gmax_old:
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
            elif b >= ub_i:
                if gp > 0.0:
                    violation = gp
                elif gp < -gmax_old:
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
            elif b <= -ub_i:
                if gn < 0.0:
                    violation = -gn
                elif gn > gmax_old:
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
            elif b > 0.0:
                violation = abs(gp)
            else:
                violation = abs(gn)
            if violation > gmax_new:
                gmax_new = violation
            gnorm1_new += violation

            # Newton direction of the one-variable problem (its minimiser, then clipped)
            if gp < h * b:
                d = -gp / h
            elif gn > h * b:
                d = -gn / h
            else:
                d = -b
            s += 1
            if abs(d) < 1.0e-12:
                continue
            nb = b + d
            if not (nb > -ub_i):
                nb = -ub_i
            if not (nb < ub_i):
                nb = ub_i
            beta[i] = nb
            d = nb - b
            if d != 0.0:
                for k in range(p0, p1):
                    w[indices[k]] += d * data[k]

        if it == 0:
            gnorm1_init = gnorm1_new
        it += 1
        hist[done, 0] = gmax_new
        hist[done, 1] = gnorm1_new
        hist[done, 2] = float(active)
        done += 1
        if gnorm1_new <= eps * gnorm1_init:
            if active == l:
                istate[2] = 1
                break
            active = l
            gmax_old = np.inf
            continue
        gmax_old = gmax_new if shrinking else np.inf
    istate[0] = active
    istate[1] = it
    fstate[0] = gmax_old
    fstate[1] = gnorm1_init
    fstate[2] = sink        # keeps the prefetching loads alive; no meaning
    return done

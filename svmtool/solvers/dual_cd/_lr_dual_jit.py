"""The jitted outer iterations of dual coordinate descent for logistic regression (see
:mod:`svmtool.solvers.dual_cd.lr_dual`).

``lr_dual_iterations`` keeps its state in the arrays it is given (``alpha`` as the pairs
(alpha_i, C_i - alpha_i), ``w``, the permutation, the inner tolerance, the generator), so that
the driver can run a few outer iterations per call and resume with no change in the result.
Operations follow LIBLINEAR's order, so with its generator the weights are bit-identical.
As in :mod:`svmtool.solvers.dual_cd._dcd_jit`, the index arrays are unsigned (no wrap-around code
for negative indices) and the rows visited next are prefetched while the current one is worked on;
both touch only reads, so the results are unchanged.
"""

import math

from svmtool._jit import njit
from svmtool.solvers.common._prefetch_jit import _PF_FAR, _PF_NEAR, _pf, pf_row
from svmtool.solvers.common._rng_jit import shuffle

_FAR = int(_PF_FAR)         # as signed integers: the row positions here are int64
_NEAR = int(_PF_NEAR)

MAX_INNER_ITER = 100        # Newton steps per one-variable subproblem (LIBLINEAR's value)
ETA = 0.1                   # shrink factor when a Newton step leaves (0, C): xi of the paper


@njit(error_model="numpy")
def lr_dual_iterations(indptr, indices, data, y, xtx, alpha, w, index, cost, fstate, istate,
                       rng, use_glibc, eps, innereps_min, max_iter, n_iter, hist):
    """Up to ``n_iter`` outer iterations.  ``indptr`` uint64, ``indices`` uint32, ``index`` int64
    (the permutation); ``alpha`` float64[2 l] (alpha_i at 2i, C_i - alpha_i at
    2i + 1); ``cost`` the C_i; fstate float64[2] = (inner tolerance, scratch); istate int64[2] =
    (iterations, converged).  ``hist[t]`` = (max |g'| over the rows, inner Newton steps) of the
    t-th iteration done here; returns how many were done."""
    l = index.shape[0]
    it = istate[0]
    innereps = fstate[0]
    done = 0
    sink = 0.0
    while it < max_iter and done < n_iter:
        shuffle(index, l, rng, use_glibc)
        newton_iter = 0
        gmax = 0.0
        for s in range(l):
            i = index[s]
            if s + _FAR < l:
                r = index[s + _FAR]
                sink += _pf(indptr, r) + _pf(alpha, 2 * r) + _pf(xtx, r) + _pf(y, r) + _pf(cost, r)
            if s + _NEAR < l:
                sink += pf_row(indptr, indices, data, index[s + _NEAR])
            yi = y[i]
            C = cost[i]
            p0 = indptr[i]
            p1 = indptr[i + 1]
            dot = 0.0
            for k in range(p0, p1):
                dot += w[indices[k]] * data[k]
            a = xtx[i]
            b = yi * dot
            ind1 = 2 * i
            ind2 = 2 * i + 1
            sign = 1.0
            if 0.5 * a * (alpha[ind2] - alpha[ind1]) + b < 0.0:
                ind1 = 2 * i + 1
                ind2 = 2 * i
                sign = -1.0
            alpha_old = alpha[ind1]
            z = alpha_old
            if C - z < 0.5 * C:
                z = 0.1 * z
            gp = a * (z - alpha_old) + sign * b + math.log(z / (C - z))
            if abs(gp) > gmax:
                gmax = abs(gp)
            inner = 0
            while inner <= MAX_INNER_ITER:
                if abs(gp) < innereps:
                    break
                gpp = a + C / (C - z) / z
                tmpz = z - gp / gpp
                if tmpz <= 0.0:
                    z *= ETA
                else:
                    z = tmpz
                gp = a * (z - alpha_old) + sign * b + math.log(z / (C - z))
                newton_iter += 1
                inner += 1
            if inner > 0:
                alpha[ind1] = z
                alpha[ind2] = C - z
                d = sign * (z - alpha_old) * yi
                for k in range(p0, p1):
                    w[indices[k]] += d * data[k]
        it += 1
        hist[done, 0] = gmax
        hist[done, 1] = float(newton_iter)
        done += 1
        if gmax < eps:
            istate[1] = 1
            break
        if newton_iter <= l // 10:
            innereps = max(innereps_min, 0.1 * innereps)
    istate[0] = it
    fstate[0] = innereps
    fstate[1] = sink        # keeps the prefetching loads alive; no meaning
    return done

"""The jitted kernels of paired Hessian passes: the CG steps of two one-vs-rest classes in one
pass over the rows (:mod:`svmtool.solvers.newton.batch` drives them).

The two classes' CG directions are interleaved into ``V`` (features x 2, so one cache line holds
both classes' entries of a feature); each class brings its own Hessian row weights ``d0``,
``d1`` and ``X v`` outputs ``xv0``, ``xv1``.  For each class the arithmetic is exactly that of
:func:`svmtool.solvers.newton.objectives._hv_group` and ``_sum_add_dot`` for that class alone --
the same products, added in the same order, block by block -- so a class's ``H v``, ``X v``
and ``v'H v`` are the same bits whether its pass was shared or not, and so is its model.
What the pair saves is traffic: the rows' indices and values are read once for both classes,
and the two running dot products of a row are independent chains of additions.

A class with ``D_ii = 0`` takes no part in row i (its scatter adds an exact zero, which leaves
every sum's bits as they are: the sums start at +0.0 and the values are finite); a row where
both classes' ``D_ii`` are 0 is skipped unless ``X v`` is wanted, as the one-class kernel skips
it.
"""

import numpy as np

from svmtool._jit import njit

_ONE = np.uint64(1)


@njit
def interleave(v0, v1, V):
    """V[:, 0] = v0, V[:, 1] = v1."""
    for j in range(v0.shape[0]):
        V[j, 0] = v0[j]
        V[j, 1] = v1[j]
    return 0


@njit(inline="always")
def _weight(dcoef, t):
    """The scatter weight of one class in a row: ``D_ii t``, or an exact 0 when ``D_ii`` is 0."""
    if dcoef == 0.0:
        return 0.0
    return t * dcoef


@njit
def hv_pair_group(indptr, indices, data, bounds, b0, b1, V, d0, d1, want_xv, xv0, xv1, bufs):
    """For the blocks [b0, b1): ``bufs[b, :, c] = sum_i d_c[i] (x_i'V[:, c]) x_i`` over block b
    for both classes c; ``xv_c[i] = x_i'V[:, c]`` when ``want_xv``."""
    for b in range(b0, b1):
        buf = bufs[b]
        buf[:, :] = 0.0
        for i in range(bounds[b], bounds[b + 1]):
            c0 = d0[i]
            c1 = d1[i]
            if not want_xv and c0 == 0.0 and c1 == 0.0:
                continue
            p0 = indptr[i]
            p1 = indptr[i + _ONE]
            t0 = 0.0
            t1 = 0.0
            for k in range(p0, p1):
                j = indices[k]
                x = data[k]
                t0 += V[j, 0] * x
                t1 += V[j, 1] * x
            if want_xv:
                xv0[i] = t0
                xv1[i] = t1
            if c0 == 0.0 and c1 == 0.0:
                continue
            t0 = _weight(c0, t0)
            t1 = _weight(c1, t1)
            for k in range(p0, p1):
                j = indices[k]
                x = data[k]
                buf[j, 0] += t0 * x
                buf[j, 1] += t1 * x
    return 0


@njit(inline="always")
def _entry(bufs, nb, V, out, c, j):
    """out[j] = the block sums of class c's entry j, plus V[j, c]; returns V[j, c] out[j]."""
    h = bufs[0, j, c]
    for b in range(1, nb):
        h += bufs[b, j, c]
    h += V[j, c]
    out[j] = h
    return V[j, c] * h


@njit
def sum_add_dot_pair(bufs, V, out0, out1, vhv):
    """For both classes c: ``out_c[j] = ((bufs[0, j, c] + bufs[1, j, c]) + ...) + V[j, c]`` and
    ``vhv[c] = V[:, c]'out_c`` from four running sums (entries j mod 4, added as (s0 + s1) +
    (s2 + s3)): ``_sum_add_dot``'s arithmetic, for each class."""
    nb = bufs.shape[0]
    n = V.shape[0]
    m = n - n % 4
    a0 = a1 = a2 = a3 = 0.0
    e0 = e1 = e2 = e3 = 0.0
    for j in range(0, m, 4):
        a0 += _entry(bufs, nb, V, out0, 0, j)
        e0 += _entry(bufs, nb, V, out1, 1, j)
        a1 += _entry(bufs, nb, V, out0, 0, j + 1)
        e1 += _entry(bufs, nb, V, out1, 1, j + 1)
        a2 += _entry(bufs, nb, V, out0, 0, j + 2)
        e2 += _entry(bufs, nb, V, out1, 1, j + 2)
        a3 += _entry(bufs, nb, V, out0, 0, j + 3)
        e3 += _entry(bufs, nb, V, out1, 1, j + 3)
    for j in range(m, n):
        a0 += _entry(bufs, nb, V, out0, 0, j)
        e0 += _entry(bufs, nb, V, out1, 1, j)
    vhv[0] = (a0 + a1) + (a2 + a3)
    vhv[1] = (e0 + e1) + (e2 + e3)
    return 0

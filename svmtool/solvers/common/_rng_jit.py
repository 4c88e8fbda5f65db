"""The jitted generators of :mod:`svmtool.solvers.common.rng` (one draw at a time, over the
33-slot state), and LIBLINEAR's permutation of an index array by them."""

import numpy as np

from svmtool._jit import njit
from svmtool.solvers.common.rng import (GLIBC_FRONT, GLIBC_REAR, SPLITMIX_GAMMA, SPLITMIX_M1,
                                         SPLITMIX_M2)

_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_MASK32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)
_SHIFT32 = np.uint64(32)
_GLIBC_DEG = np.uint64(31)
_SM_GAMMA = np.uint64(SPLITMIX_GAMMA)
_SM_M1 = np.uint64(SPLITMIX_M1)
_SM_M2 = np.uint64(SPLITMIX_M2)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@njit
def _glibc_rand(rng):
    """One glibc ``rand()`` value (0 <= v < 2^31) from the emulated state; advances it."""
    f = rng[GLIBC_FRONT]
    r = rng[GLIBC_REAR]
    v = (rng[f] + rng[r]) & _MASK32
    rng[f] = v
    f += _ONE
    r += _ONE
    if f >= _GLIBC_DEG:
        f = _ZERO
    if r >= _GLIBC_DEG:
        r = _ZERO
    rng[GLIBC_FRONT] = f
    rng[GLIBC_REAR] = r
    return v >> _ONE


@njit
def glibc_rand_fill(rng, out):
    """Fill ``out`` (uint64) with successive emulated ``rand()`` values (for tests)."""
    for k in range(out.shape[0]):
        out[k] = _glibc_rand(rng)


@njit
def _splitmix_next(rng):
    z = rng[0] + _SM_GAMMA
    rng[0] = z
    z = (z ^ (z >> _S30)) * _SM_M1
    z = (z ^ (z >> _S27)) * _SM_M2
    return z ^ (z >> _S31)


@njit
def _bounded(rng, n):
    """Uniform integer in [0, n) for 0 < n < 2^32 (Lemire's multiply-shift with rejection)."""
    m = (_splitmix_next(rng) >> _SHIFT32) * n
    low = m & _MASK32
    if low < n:
        t = (_TWO32 - n) % n
        while low < t:
            m = (_splitmix_next(rng) >> _SHIFT32) * n
            low = m & _MASK32
    return m >> _SHIFT32


@njit
def draw(rng, use_glibc, n):
    """A uniform integer in [0, n): LIBLINEAR's ``rand() % n`` or the default generator."""
    if use_glibc:
        return np.int64(_glibc_rand(rng) % np.uint64(n))
    return np.int64(_bounded(rng, np.uint64(n)))


@njit
def shuffle(index, active, rng, use_glibc):
    """LIBLINEAR's permutation of ``index[:active]`` (a swap with a later or the same place for
    each position in turn), for the solvers whose indices are int64."""
    for j in range(active):
        i = j + draw(rng, use_glibc, active - j)
        t = index[i]
        index[i] = index[j]
        index[j] = t

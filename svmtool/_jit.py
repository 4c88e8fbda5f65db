"""The only place that imports numba.

Kernels elsewhere use ``from svmtool._jit import njit`` (serial, cached) or ``pjit`` (parallel,
not cached, as numba cannot cache every parallel kernel reliably).  Importing this module imports
numba, so the CLI imports solver and parser modules lazily, inside the commands that need them.
``NUMBA_DISABLE_JIT=1`` is honoured by numba itself (the kernels then run as plain Python).
"""

import numba
import numba.np.linalg as _nla

NUMBA_VERSION = numba.__version__


def _skip_blas_probe():
    """Keep numba from importing scipy.linalg at start-up.

    When its CPU target first loads, numba imports numba.np.arraymath, which probes for BLAS by
    importing scipy.linalg.cython_blas: 180-300 ms of every command's start-up, spent for nothing
    since svmtool's kernels call no BLAS routine.  Importing arraymath here with the probe stubbed
    out records "BLAS available"; numba's linalg still imports scipy (and checks it) when a kernel
    really compiles a BLAS call.
    """
    real = _nla.ensure_blas
    _nla.ensure_blas = lambda: None
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        _nla.ensure_blas = real


_skip_blas_probe()


def njit(*args, **kwargs):
    """Serial kernel: nopython, cached on disk, releases the GIL so threads can share the work."""
    kwargs.setdefault("cache", True)
    kwargs.setdefault("nogil", True)
    return numba.njit(*args, **kwargs)


def pjit(*args, **kwargs):
    """Parallel kernel (``prange``): nopython, parallel, not cached."""
    kwargs.setdefault("parallel", True)
    kwargs.setdefault("nogil", True)
    return numba.njit(*args, **kwargs)


prange = numba.prange

# The C library's strtod, callable from jitted code (a correctly rounded decimal -> double
# conversion for the rare numbers outside the exact fast path).  Declared with pointer-sized
# integer arguments: the address of a NUL-terminated byte buffer and NULL for the end pointer.
c_strtod = numba.types.ExternalFunction(
    "strtod", numba.types.float64(numba.types.uintp, numba.types.uintp))

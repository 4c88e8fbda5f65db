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


# A software prefetch callable from jitted code: ``prefetch(arr, i)`` asks the CPU to start
# loading ``arr[i]`` into cache.  It never faults and returns nothing.  Dual coordinate descent
# visits rows in random order, so most of its time is cache misses; prefetching the rows that
# come next in the permutation roughly halves it.
if numba.config.DISABLE_JIT:
    def prefetch(arr, i):
        """No-op when the JIT is disabled."""
else:
    from numba.core import cgutils as _cgutils
    from numba.extending import intrinsic as _intrinsic

    @_intrinsic
    def prefetch(typingctx, arr, i):
        if not isinstance(arr, numba.types.Array) or not isinstance(i, numba.types.Integer):
            return None

        def codegen(context, builder, sig, args):
            from llvmlite import ir

            ary = context.make_array(sig.args[0])(context, builder, args[0])
            ptr = _cgutils.get_item_pointer(context, builder, sig.args[0], ary, [args[1]],
                                            wraparound=False, boundscheck=False)
            i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
            fn = _cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
            # read access, high temporal locality, data cache
            builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()

        return numba.types.void(arr, i), codegen

"""Keep numpy's BLAS to one thread while svmtool's own threads call it.

The dense kernel blocks (:func:`svmtool.ops.kernels.dense_pieces`) are computed by pieces that
fit in a core's cache, one BLAS product each, shared among svmtool's threads.  A multi-threaded
OpenBLAS would start its own threads inside every one of those small products and the two kinds
of threads would fight over the cores (on ijcnn1 two of our threads then ran *slower* than
one).  OpenBLAS, as bundled with numpy wheels, has a process-wide thread count that can be
set through ctypes; this module finds it among numpy's bundled libraries.  When it cannot (numpy
built against another BLAS), :func:`blas_single_thread` yields False and the callers use a single
thread of their own.
"""

import ctypes
import glob
import os
import threading
from contextlib import contextmanager

_LOCK = threading.Lock()
_STATE = {"lib": None, "looked": False, "depth": 0, "saved": None}
_SET = ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
        "scipy_openblas_set_num_threads", "openblas_set_num_threads")
_GET = ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
        "scipy_openblas_get_num_threads", "openblas_get_num_threads")


def _find():
    if _STATE["looked"]:
        return _STATE["lib"]
    _STATE["looked"] = True
    try:
        import numpy as np

        base = os.path.dirname(os.path.dirname(np.__file__))
        paths = glob.glob(os.path.join(base, "numpy.libs", "*openblas*")) + \
            glob.glob(os.path.join(base, "numpy", ".dylibs", "*openblas*"))
        for path in paths:
            lib = ctypes.CDLL(path)
            setter = next((getattr(lib, s) for s in _SET if hasattr(lib, s)), None)
            getter = next((getattr(lib, g) for g in _GET if hasattr(lib, g)), None)
            if setter is not None and getter is not None:
                getter.restype = ctypes.c_int
                setter.argtypes = [ctypes.c_int]
                _STATE["lib"] = (setter, getter)
                break
    except OSError:
        _STATE["lib"] = None
    return _STATE["lib"]


@contextmanager
def blas_single_thread():
    """Within the block, numpy's OpenBLAS runs on one thread; yields whether that was possible.

    Re-entrant and thread-safe (a counter: the first entry saves the count, the last exit puts
    it back).
    """
    with _LOCK:
        lib = _find()
        if lib is not None:
            if _STATE["depth"] == 0:
                _STATE["saved"] = int(lib[1]())
                lib[0](1)
            _STATE["depth"] += 1
    try:
        yield lib is not None
    finally:
        if lib is not None:
            with _LOCK:
                _STATE["depth"] -= 1
                if _STATE["depth"] == 0 and _STATE["saved"]:
                    lib[0](_STATE["saved"])

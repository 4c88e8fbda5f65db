"""Prefetching the rows a coordinate-descent loop visits next (the loops of the dual, SVR, dual
logistic regression and L1 solvers)."""

import numpy as np

from svmtool._jit import njit

try:    # a real prefetch instruction (llvm.prefetch), if _jit provides one
    from svmtool._jit import prefetch as _jit_prefetch
except ImportError:
    _jit_prefetch = None

# --------------------------------------------------------------------------------------------
# prefetching the rows visited next
# --------------------------------------------------------------------------------------------
# The rows are visited in random order, so each visit starts with cache misses (the row's
# indptr, alpha, qd and y entries, then its indices and data).  The permutation is known in
# advance: while row s is processed, the per-row entries of row s + _PF_FAR and the stored
# entries of row s + _PF_NEAR are requested.  With a prefetch instruction from svmtool._jit the
# misses overlap the work on earlier rows; without it, plain loads whose values are summed into
# a sink (a "touch") do part of the same (the out-of-order core overlaps them with the work on
# the current row).  Either way only reads, so results are unchanged.

if _jit_prefetch is not None:
    HAVE_PREFETCH = True
    _PF_FAR = np.uint64(8)
    _PF_NEAR = np.uint64(4)

    @njit
    def _pf(arr, i):
        _jit_prefetch(arr, i)
        return 0.0
else:
    HAVE_PREFETCH = False
    _PF_FAR = np.uint64(2)
    _PF_NEAR = np.uint64(1)

    @njit
    def _pf(arr, i):
        return float(arr[i])

_PF_LINE = np.uint64(8)    # float64 entries per 64-byte cache line


@njit(inline="always")
def pf_row(indptr, indices, data, r):
    """Request the first stored entries of row ``r`` (``indptr`` uint64): its first indices and
    two cache lines of its values, for the other coordinate-descent loops (the loop below keeps
    the same lines written out: through this helper it ran slower on a9a).  Returns 0 (the
    loaded values when there is no prefetch instruction: the caller adds them into a sink that
    it stores, so they stay)."""
    sink = 0.0
    n_data = np.uint64(data.shape[0])
    q = indptr[r]
    if q < n_data:
        sink += _pf(data, q) + _pf(indices, q)
        q += _PF_LINE
        if q < n_data:
            sink += _pf(data, q)
    return sink

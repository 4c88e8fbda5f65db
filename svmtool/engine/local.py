"""LocalOracle: full passes over CSR rows held in this process, split over threads.

The Newton solver (and the cutting-plane family) touch the data only through whole passes: scores
``X @ w``, ``X.T @ v`` and sums over rows.  This module does those passes over local CSR arrays
(the array contract of :mod:`svmtool.problem`).

How the work is split
---------------------
The rows are cut into ``n_blocks`` contiguous blocks holding about the same number of stored
values.  The block count depends on the data only (:func:`default_blocks`: a power of two up to
``MAX_BLOCKS``, one block for small inputs), never on the thread count; ``threads`` threads each
run a contiguous group of blocks, group 0 in the calling thread and the others in a shared
``ThreadPoolExecutor``.  Each block runs a cached, GIL-releasing jitted kernel.

* Row-wise outputs (``X @ w``, per-row coefficients) are written by each block into its own
  slice of one output array: no reduction.
* Feature-wise outputs (``X.T @ v``, Hessian-vector products) are accumulated by each block into
  its own buffer; the buffers are then added in block order, ``((b0 + b1) + b2) + ...``.
* Scalar sums (a loss along a line) are per-block partial sums added in block order.

So every result is bit-identical for any thread count (one thread runs the same blocks one
after another), and with one block it is the plain storage-order sum of a serial loop (as
LIBLINEAR's ``sparse_operator``).  Measured cost of the fixed blocks on one thread: one kernel
call and one buffer addition per block and pass, a few per cent of a pass.

Kernels see unsigned index views (``indptr`` uint64, ``indices`` uint32): numba then emits no
negative-index wrap-around code (see PERFORMANCE-NOTES.md).

API (what other solvers can build on)::

    orc = LocalOracle(indptr, indices, data, n_features, threads=None, n_blocks=None)
    orc.n_rows, orc.n_features, orc.n_blocks, orc.bounds   # bounds: uint64 row limits, n_blocks+1
    orc.matvec(w, out=None)        -> X @ w                  (length n_rows)
    orc.rmatvec(v, out=None)       -> X.T @ v                (length n_features)
    orc.map(kernel, *args)         -> [kernel(indptr, indices, data, lo, hi, *args) per block]
    orc.map_rows(kernel, *args)    -> [kernel(lo, hi, *args) per block]    (rows only, no X)
    orc.reduce(kernel, out, *args) -> out = sum over blocks of the buffer that
                                      kernel(indptr, indices, data, lo, hi, *args, buf) fills
                                      (buf starts zeroed, same shape as out)
    orc.sum_rows(kernel, *args)    -> float sum over blocks of kernel(lo, hi, *args)

``kernel`` is any jitted function (``svmtool._jit.njit``) with that leading signature; ``lo`` and
``hi`` are uint64 row limits; ``indptr``/``indices`` are the unsigned views ``orc.indptr`` and
``orc.indices``.

The hot passes use "group" kernels instead, which loop over a thread's blocks themselves, so a
pass costs one jitted call per thread rather than one per block (a call's fixed overhead is
a visible share of a pass over a small data set cut into many blocks)::

    orc.run_groups(gkernel, *args)          gkernel(indptr, indices, data, bounds, b0, b1, *args)
                                            for each thread's block range [b0, b1)
    orc.reduce_blocks(gkernel, out, *args)  gkernel(..., b0, b1, *args, bufs): block b fills
                                            bufs[b] (it must zero it first; bufs has shape
                                            (n_blocks,) + out.shape); then out = bufs summed in
                                            block order (with one block, bufs[0] is out itself)
    orc.sum_blocks(gkernel, *args)          gkernel(..., b0, b1, *args, parts): block b writes
                                            its partial sum to parts[b]; returns their sum in
                                            block order
    orc.reduce_blocks_and_sum(gkernel, out, *args)   both: gkernel(..., *args, parts, bufs)

Per-block buffers are kept and reused between passes.
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from svmtool._jit import njit
from svmtool.ops.cores import (  # noqa: F401  (the engine's callers use them here)
    assume_idle, available_cores, core_free, default_threads, run_parts)

# Fewer stored values than this per block and the thread hand-off costs more than it saves.
MIN_BLOCK_NNZ = 1 << 15
# At most this many blocks; the count is a power of two fixed by the data alone (never by the
# thread count), so results are bit-identical for any number of threads.
MAX_BLOCKS = 256

_ONE = np.uint64(1)

_POOLS = {}
_POOLS_LOCK = threading.Lock()


def _pool(workers):
    with _POOLS_LOCK:
        pool = _POOLS.get(workers)
        if pool is None:
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="svmtool-rows")
            _POOLS[workers] = pool
        return pool


def in_two(first, second):
    """Run two jitted (GIL-releasing) calls at once, each ``(fn, *args)``: ``second`` on the
    shared pool's worker, ``first`` in the calling thread; returns both results.  For serial
    work of a solver that splits into two independent halves (the cutting-plane working set's
    Gram rows and ``w`` rebuild)."""
    fut = _pool(1).submit(*second)
    a = first[0](*first[1:])
    return a, fut.result()


def default_blocks(nnz, n_features, min_block_nnz=MIN_BLOCK_NNZ):
    """Blocks for a pass over ``nnz`` stored values: a power of two <= MAX_BLOCKS, at least
    ``min_block_nnz`` values per block, and at least 8 stored values per entry of a block's
    feature-sized buffer, so that zeroing and adding the buffers stays cheap next to the pass
    (news20: 1.27M values, 62k features -> 2 blocks; a9a, w8a -> 8; ijcnn1 -> 16).  The bound
    is high enough for a pass to use 64+ cores on large, narrow data."""
    b = min(MAX_BLOCKS, nnz // max(1, int(min_block_nnz)), nnz // (8 * max(1, n_features)))
    b = max(1, int(b))
    return 1 << (b.bit_length() - 1)


def split_rows(indptr, n_blocks):
    """Row limits (int64, ``n_blocks + 1``) of contiguous blocks with about equal stored values."""
    n_rows = len(indptr) - 1
    n_blocks = max(1, min(int(n_blocks), max(n_rows, 1)))
    nnz0 = int(indptr[0])
    total = int(indptr[-1]) - nnz0
    targets = nnz0 + (np.arange(1, n_blocks, dtype=np.float64) * total / n_blocks)
    cuts = np.searchsorted(indptr, targets, side="left").astype(np.int64)
    cuts = np.clip(cuts, 0, n_rows)
    bounds = np.concatenate([[0], cuts, [n_rows]]).astype(np.int64)
    bounds = np.maximum.accumulate(bounds)
    return bounds


# --------------------------------------------------------------------------------------------
# kernels (one block of rows each)
# --------------------------------------------------------------------------------------------

@njit
def _matvec_group(indptr, indices, data, bounds, b0, b1, w, out):
    for b in range(b0, b1):
        for i in range(bounds[b], bounds[b + 1]):
            s = 0.0
            for k in range(indptr[i], indptr[i + _ONE]):
                s += w[indices[k]] * data[k]
            out[i] = s
    return 0


@njit
def _rmatvec_group(indptr, indices, data, bounds, b0, b1, v, bufs):
    for b in range(b0, b1):
        buf = bufs[b]
        buf[:] = 0.0
        for i in range(bounds[b], bounds[b + 1]):
            a = v[i]
            if a != 0.0:
                for k in range(indptr[i], indptr[i + _ONE]):
                    buf[indices[k]] += a * data[k]
    return 0


@njit
def _sum_blocks(bufs, out):
    """out[j] = ((bufs[0, j] + bufs[1, j]) + bufs[2, j]) + ...  (block order)."""
    nb = bufs.shape[0]
    for j in range(out.shape[0]):
        s = bufs[0, j]
        for b in range(1, nb):
            s += bufs[b, j]
        out[j] = s
    return 0


@njit
def _add_into(out, buf):
    for j in range(out.shape[0]):
        out[j] += buf[j]


@njit
def _zero(buf):
    for j in range(buf.shape[0]):
        buf[j] = 0.0


# --------------------------------------------------------------------------------------------
# the oracle
# --------------------------------------------------------------------------------------------

def matvec_args(w, out, n_features, n_rows):
    """``X @ w``'s arguments checked, for every oracle: w as contiguous float64 (at least one
    entry a feature), ``out`` or a new vector of n_rows."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.shape[0] < n_features:
        raise ValueError(f"w has {w.shape[0]} entries for {n_features} features")
    return w, (np.empty(n_rows, dtype=np.float64) if out is None else out)


def rmatvec_args(v, out, n_features, n_rows):
    """``X.T @ v``'s arguments checked: v of exactly n_rows entries, ``out`` or a new vector of
    n_features."""
    v = np.ascontiguousarray(v, dtype=np.float64)
    if v.shape[0] != n_rows:
        raise ValueError(f"v has {v.shape[0]} entries for {n_rows} rows")
    return v, (np.empty(n_features, dtype=np.float64) if out is None else out)


class LocalOracle:
    """Passes over local CSR rows, split into row blocks run on threads (see module docstring)."""

    def __init__(self, indptr, indices, data, n_features, threads=None, n_blocks=None,
                 min_block_nnz=MIN_BLOCK_NNZ):
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        if indptr.ndim != 1 or len(indptr) < 1:
            raise ValueError("indptr must be a vector of length n_rows + 1")
        if int(indptr[0]) < 0 or (len(indptr) > 1 and np.any(np.diff(indptr) < 0)):
            raise ValueError("indptr must be non-negative and non-decreasing")
        n_features = int(n_features)
        indices = np.ascontiguousarray(indices)
        nnz_end = int(indptr[-1])
        if indices.shape[0] < nnz_end:
            raise ValueError(f"indices holds {indices.shape[0]} entries, indptr needs {nnz_end}")
        if nnz_end > int(indptr[0]):
            used = indices[int(indptr[0]):nnz_end]
            lo, hi = int(used.min()), int(used.max())
            if lo < 0 or hi >= n_features:
                raise ValueError(f"feature index {lo if lo < 0 else hi} outside [0, {n_features})")
        if n_features > 0xFFFFFFFF:
            raise ValueError("more than 2^32 - 1 features are not supported")
        if indices.dtype in (np.int32, np.uint32):
            self.indices = indices.view(np.uint32)
        else:
            self.indices = indices.astype(np.uint32)
        self.indptr_signed = indptr
        self.indptr = indptr.view(np.uint64)
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.n_rows = len(indptr) - 1
        self.n_features = n_features
        self.nnz = nnz_end - int(indptr[0])

        if n_blocks is None:
            n_blocks = default_blocks(self.nnz, n_features, min_block_nnz)
        self.n_blocks = int(max(1, min(int(n_blocks), max(self.n_rows, 1))))
        want = default_threads() if threads is None else max(1, int(threads))
        self.threads = int(min(want, self.n_blocks))
        self.bounds = np.ascontiguousarray(split_rows(indptr, self.n_blocks)).view(np.uint64)
        self._lims = [(self.bounds[b], self.bounds[b + 1]) for b in range(self.n_blocks)]
        # thread t runs the contiguous blocks _groups[t] (in order)
        cuts = [t * self.n_blocks // self.threads for t in range(self.threads + 1)]
        self._groups = [list(range(cuts[t], cuts[t + 1])) for t in range(self.threads)]
        self._bufs = {}
        self._rows_key = None

    def rows_key(self):
        """What tells these rows and blocks from others': two oracles of equal keys pass over
        the same stored values, split into the same blocks (so their per-block kernels can be
        run as one, as Newton's batched classes do)."""
        if self._rows_key is None:
            self._rows_key = (self.data.ctypes.data, self.indices.ctypes.data, self.n_rows,
                              self.nnz, self.n_features, hash(self.indptr.tobytes()),
                              self.bounds.tobytes())
        return self._rows_key

    # ---- generic passes ---------------------------------------------------------------------
    def _run(self, calls):
        """Run one zero-argument callable per block; thread t runs its group of blocks in order
        (group 0 in this thread, the others on the pool).  Returns the results in block order."""
        if self.threads == 1:
            return [c() for c in calls]
        pool = _pool(self.threads - 1)

        def group(t):
            return [calls[b]() for b in self._groups[t]]

        return [r for part in run_parts(pool, group, self.threads) for r in part]

    def map(self, kernel, *args):
        """``[kernel(indptr, indices, data, lo, hi, *args) for each block]`` (block order)."""
        ip, ix, d = self.indptr, self.indices, self.data
        return self._run([lambda lo=lo, hi=hi: kernel(ip, ix, d, lo, hi, *args)
                          for lo, hi in self._lims])

    def map_rows(self, kernel, *args):
        """``[kernel(lo, hi, *args) for each block]`` (rows only; block order)."""
        return self._run([lambda lo=lo, hi=hi: kernel(lo, hi, *args) for lo, hi in self._lims])

    def sum_rows(self, kernel, *args):
        """Sum, in block order, of the floats ``kernel(lo, hi, *args)`` returns."""
        parts = self.map_rows(kernel, *args)
        total = 0.0
        for p in parts:
            total += p
        return total

    def buffers(self, key, shape, count=None):
        """Per-block scratch arrays (float64), kept between calls under ``key``."""
        count = self.n_blocks if count is None else count
        bufs = self._bufs.get(key)
        if bufs is None or bufs[0].shape != tuple(np.atleast_1d(shape)):
            bufs = [np.zeros(shape, dtype=np.float64) for _ in range(count)]
            self._bufs[key] = bufs
        return bufs

    def reduce(self, kernel, out, *args):
        """``out`` = sum over blocks of what ``kernel(ip, ix, d, lo, hi, *args, buf)`` adds into a
        zeroed ``buf``; block 0 accumulates into ``out`` itself, the others into kept buffers,
        added in block order."""
        ip, ix, d = self.indptr, self.indices, self.data
        out[...] = 0.0
        if self.n_blocks == 1:
            kernel(ip, ix, d, self._lims[0][0], self._lims[0][1], *args, out)
            return out
        key = ("reduce", out.shape)
        bufs = self.buffers(key, out.shape, self.n_blocks - 1)
        flat = out.reshape(-1)

        def block(b):
            lo, hi = self._lims[b]
            if b == 0:
                kernel(ip, ix, d, lo, hi, *args, out)
            else:
                buf = bufs[b - 1]
                _zero(buf.reshape(-1))
                kernel(ip, ix, d, lo, hi, *args, buf)
            return 0

        self._run([lambda b=b: block(b) for b in range(self.n_blocks)])
        for buf in bufs:
            _add_into(flat, buf.reshape(-1))
        return out

    # ---- group passes (one jitted call per thread) -----------------------------------------
    def run_groups(self, gkernel, *args, threads=None):
        """``gkernel(indptr, indices, data, bounds, b0, b1, *args)`` per thread; results in
        thread order.  ``threads``: run on that many threads (at most one a block) instead of
        the oracle's own count; the blocks, so the results, are the same."""
        ip, ix, d, bd = self.indptr, self.indices, self.data, self.bounds
        groups = self._groups
        if threads is not None and threads != self.threads:
            t = max(1, min(int(threads), self.n_blocks))
            groups = [range(i * self.n_blocks // t, (i + 1) * self.n_blocks // t)
                      for i in range(t)]
        if len(groups) == 1:
            return [gkernel(ip, ix, d, bd, 0, self.n_blocks, *args)]

        def part(t):
            return gkernel(ip, ix, d, bd, groups[t][0], groups[t][-1] + 1, *args)

        return run_parts(_pool(len(groups) - 1), part, len(groups))

    def _buffers_for(self, out):
        """The per-block buffers (n_blocks,) + out.shape: ``out`` itself, reshaped, with one
        block; else an array kept and reused between passes."""
        if self.n_blocks == 1:
            return out.reshape((1,) + out.shape)
        key = ("blocks", out.shape)
        bufs = self._bufs.get(key)
        if bufs is None:
            bufs = np.empty((self.n_blocks,) + out.shape, dtype=np.float64)
            self._bufs[key] = bufs
        return bufs

    def reduce_blocks(self, gkernel, out, *args):
        """``out`` = per-block buffers filled by ``gkernel`` summed in block order."""
        bufs = self.block_buffers(gkernel, out, *args)
        if self.n_blocks > 1:
            _sum_blocks(bufs.reshape(self.n_blocks, -1), out.reshape(-1))
        return out

    def block_buffers(self, gkernel, out, *args, threads=None):
        """Like :meth:`reduce_blocks` but hands back the per-block buffers, unsummed, as an
        array (n_blocks,) + out.shape (with one block: ``out`` itself, reshaped), for a caller
        that folds the block-order sum into a pass of its own.  ``threads`` as in
        :meth:`run_groups`."""
        bufs = self._buffers_for(out)
        self.run_groups(gkernel, *args, bufs, threads=threads)
        return bufs

    def reduce_blocks_and_sum(self, gkernel, out, *args):
        """Both at once: ``gkernel(..., *args, parts, bufs)``; returns (sum of parts, out)."""
        parts = np.zeros(self.n_blocks, dtype=np.float64)
        bufs = self._buffers_for(out)
        self.run_groups(gkernel, *args, parts, bufs)
        if self.n_blocks > 1:
            _sum_blocks(bufs.reshape(self.n_blocks, -1), out.reshape(-1))
        total = 0.0
        for p in parts.tolist():
            total += p
        return total, out

    def sum_blocks(self, gkernel, *args):
        """Sum in block order of the partial sums ``gkernel`` writes to ``parts[b]``."""
        parts = np.zeros(self.n_blocks, dtype=np.float64)
        self.run_groups(gkernel, *args, parts)
        total = 0.0
        for p in parts.tolist():
            total += p
        return total

    # ---- the two basic products ------------------------------------------------------------
    def matvec(self, w, out=None):
        """``X @ w`` (float64, length n_rows); row sums in storage order."""
        w, out = matvec_args(w, out, self.n_features, self.n_rows)
        self.run_groups(_matvec_group, w, out)
        return out

    def rmatvec(self, v, out=None):
        """``X.T @ v`` (float64, length n_features)."""
        v, out = rmatvec_args(v, out, self.n_features, self.n_rows)
        return self.reduce_blocks(_rmatvec_group, out, v)

"""BlockOracle: full passes over CSR rows streamed block by block, for data larger than memory.

The arrays (``indptr``, ``indices``, ``data``) are usually the memory map of a binary cache
(:mod:`svmtool.io.cache`): their pages belong to the page cache, not to this process's anonymous
memory, and the kernel reads them from disk as they are touched and drops them under pressure.
A pass visits the rows in blocks of about ``block_values`` stored values, running the same group
kernels as :class:`svmtool.engine.local.LocalOracle` on one block at a time.  Without a bias
column the kernels read the mapped arrays in place; with LIBLINEAR's bias column (``bias >= 0``)
each block is copied into one reused buffer with the bias appended to every row, so no copy of
the whole problem with the bias is ever built.  While a block is being worked on, the next one
is requested from the kernel (``madvise(MADV_WILLNEED)``), so reading overlaps work.

Memory (anonymous): with a bias, one block's buffers (12 bytes per stored value) and a row-pointer
array (8 bytes a row); the per-row vectors the caller keeps (scores: 8 bytes a row each; the
cutting-plane family keeps its labels as int8 signs); the feature-sized buffers of a pass.
Nothing of size nnz.

Results are deterministic: each block is split into ``SUB_BLOCKS`` sub-blocks at fixed row
limits, whatever the thread count; partial sums and feature buffers are added in block order,
then sub-block order (so a pass equals LocalOracle's with ``n_blocks * SUB_BLOCKS`` blocks at
these limits, up to the threads).  Row-wise outputs (``X w``) are bit-identical to LocalOracle's;
sums over rows are not (other block limits, other rounding), so the models agree with the
in-memory ones to rounding (objectives within 1e-15 to 1e-9 relative in the tests).

Interface: what :mod:`svmtool.solvers.newton.objectives` and the cutting-plane risks use of
LocalOracle -- ``n_rows``, ``n_features``, ``threads``, ``n_blocks``, ``matvec``, ``rmatvec``,
``sum_blocks``, ``reduce_blocks``, ``block_buffers``, ``reduce_blocks_and_sum`` -- plus
:meth:`blocks`, an iterator over the loaded blocks for solvers that walk them themselves (block
minimisation of the dual).  Kernels that read only per-row vectors (a loss along a line) can be
declared with :func:`row_only`: their passes then skip loading the blocks.
"""

import mmap as _mmap

import numpy as np

from svmtool._jit import njit
from svmtool.engine.local import (_matvec_group, _pool, _rmatvec_group, default_threads,
                                  matvec_args, rmatvec_args)
from svmtool.engine.memory import _mmap_of, available_memory, mapped_file  # noqa: F401

SUB_BLOCKS = 4                  # fixed split of every block (thread-count independent results)
DEFAULT_BLOCK_VALUES = 1 << 22  # stored values per block when no budget is given (48 MB)
MIN_BLOCK_VALUES = 1 << 12
MAX_BLOCK_VALUES = 1 << 23   # 96 MB of block buffers at most

_ROW_ONLY = set()


def row_only(kernel):
    """Declare a group kernel that never reads ``indptr``/``indices``/``data`` (only per-row
    vectors): its passes run without loading any block.  Returns the kernel."""
    _ROW_ONLY.add(kernel)
    return kernel


def block_values_for(budget_bytes):
    """Stored values per block for a memory budget: the block's buffers (12 bytes a value) get
    an eighth of it, within [MIN_BLOCK_VALUES, MAX_BLOCK_VALUES]."""
    if budget_bytes is None:
        return DEFAULT_BLOCK_VALUES
    v = int(budget_bytes) // (8 * 12)
    return int(min(MAX_BLOCK_VALUES, max(MIN_BLOCK_VALUES, v)))


@njit
def _copy_block(indptr, indices, data, r0, r1, off, bias, nf, ip, ix, dv):
    """Rows r0..r1 of the source into ``ix``/``dv`` from position 0, the constant ``bias`` at
    column ``nf`` appended to every row when ``bias >= 0``; ``ip[off + r]`` = the row's first
    local position (``ip[off + r1]`` its end; ``off``: the source's first row in the whole
    problem).  Returns the number of values written."""
    p = 0
    for r in range(r0, r1):
        ip[off + r] = p
        for k in range(indptr[r], indptr[r + 1]):
            ix[p] = indices[k]
            dv[p] = data[k]
            p += 1
        if bias >= 0.0:
            ix[p] = nf
            dv[p] = bias
            p += 1
    ip[off + r1] = p
    return p


@njit
def _add_rows(out, bufs):
    """out += bufs[0]; out += bufs[1]; ...  (sub-block order)."""
    for b in range(bufs.shape[0]):
        for j in range(out.shape[0]):
            out[j] += bufs[b, j]


def _split(indptr, r0, r1, parts):
    """Row limits (parts + 1) of ``parts`` pieces of rows r0..r1 with about equal values."""
    lo, hi = int(indptr[r0]), int(indptr[r1])
    targets = lo + (np.arange(1, parts, dtype=np.float64) * (hi - lo) / parts)
    cuts = np.searchsorted(np.asarray(indptr[r0:r1 + 1]), targets, side="left") + r0
    out = np.concatenate([[r0], np.clip(cuts, r0, r1), [r1]]).astype(np.int64)
    return np.maximum.accumulate(out)


def _checked_sources(sources):
    """The (indptr, indices, data) triples as arrays, checked: int64 row pointers (which may
    start anywhere: a row range of a cache), 32-bit column indices, at least one source."""
    srcs = []
    for ip_, ix_, dv_ in sources:
        ip_ = np.asarray(ip_)
        if ip_.dtype != np.int64 or ip_.ndim != 1 or len(ip_) < 1:
            raise ValueError("indptr must be an int64 vector of length n_rows + 1")
        if np.asarray(ix_).dtype.itemsize > 4:
            raise ValueError("out-of-core passes need 32-bit column indices")
        srcs.append((ip_, np.asarray(ix_), np.asarray(dv_)))
    if not srcs:
        raise ValueError("no rows: a BlockOracle needs at least one source")
    return srcs


def _mappings(src):
    """For each array of a source: (its mmap, its offset in it), or None when it is not
    memory-mapped (what ``_advise`` tells the kernel about)."""
    where = []
    for a in src:
        mm = _mmap_of(a)
        try:
            base = np.frombuffer(mm, dtype=np.uint8, count=1).ctypes.data if mm else 0
            where.append((mm, a.ctypes.data - base) if mm else None)
        except (ValueError, TypeError):
            where.append(None)
    return where


class BlockOracle:
    """Row passes over CSR arrays (usually memory-mapped) one block at a time.

    ``sources`` (instead of ``indptr``, ``indices``, ``data``): a list of such triples, the
    rows of one after those of the other -- the shards of a shard index read as one problem.
    A block never spans two sources.
    """

    def __init__(self, indptr, indices, data, n_features, *, bias=-1.0, threads=None,
                 block_values=None, budget_bytes=None, sources=None):
        srcs = _checked_sources([(indptr, indices, data)] if sources is None else sources)
        self.srcs = srcs
        self.bias = float(bias)
        self.raw_features = int(n_features)
        self.n_features = self.raw_features + (1 if self.bias >= 0 else 0)
        self.row0 = [0]
        for ip_, _, _ in srcs:
            self.row0.append(self.row0[-1] + len(ip_) - 1)
        self.n_rows = self.row0[-1]
        self.nnz = sum(int(ip_[-1]) - int(ip_[0]) for ip_, _, _ in srcs)
        if block_values is None:
            block_values = block_values_for(budget_bytes)
        self.block_values = max(1, int(block_values))
        self.limits, self.block_src, cap = self._cut_blocks()
        self.n_blocks = max(1, len(self.limits) - 1)
        self._block_arrays(cap)
        self.sub = self._sub_blocks()
        want = default_threads() if threads is None else max(1, int(threads))
        self.threads = int(min(want, SUB_BLOCKS))
        cuts = [t * SUB_BLOCKS // self.threads for t in range(self.threads + 1)]
        self._groups = [(cuts[t], cuts[t + 1]) for t in range(self.threads)]
        self._loaded = -1
        self._mm = [_mappings(src) for src in srcs]
        self.passes = 0
        self.blocks_loaded = 0
        self._bufs = {}

    def _cut_blocks(self):
        """(limits, block_src, cap): the block limits in global rows, about ``block_values``
        stored values each (the bias counted), >= 1 row, within one source; the source of
        each block; the most values a block holds."""
        limits = [0]
        block_src = []
        cap = 1
        for k, (ip_, _, _) in enumerate(self.srcs):
            off, n_k = self.row0[k], len(ip_) - 1
            r = 0
            while r < n_k:
                target = int(ip_[r]) + self.block_values
                s = int(np.searchsorted(ip_, target, side="right")) - 1
                if self.bias >= 0:
                    # the bias adds one value a row: shrink until the block fits
                    while s > r + 1 and int(ip_[s]) - int(ip_[r]) + (s - r) > \
                            self.block_values:
                        s = r + max(1, (s - r) * 3 // 4)
                s = min(max(s, r + 1), n_k)
                cap = max(cap, int(ip_[s]) - int(ip_[r]) + ((s - r) if self.bias >= 0 else 0))
                limits.append(off + s)
                block_src.append(k)
                r = s
        return limits, block_src, cap

    def _block_arrays(self, cap):
        """The arrays the kernels read a loaded block from (``ip``, ``ix``, ``dv``): the
        sources themselves when they can be read in place (``direct``), else buffers of
        ``cap`` values that each block is copied into (with its bias column)."""
        srcs = self.srcs
        self.direct = self.bias < 0 and all(
            ix_.dtype in (np.int32, np.uint32) and dv_.dtype == np.float64
            and ip_.flags.c_contiguous and ix_.flags.c_contiguous and dv_.flags.c_contiguous
            for ip_, ix_, dv_ in srcs)
        if self.direct and len(srcs) == 1:
            # no bias column to append: the kernels read the mapped arrays in place (unsigned
            # views, as LocalOracle's), a block at a time; nothing is copied
            self.ip = srcs[0][0].view(np.uint64)
            self.ix = srcs[0][1].view(np.uint32)
            self.dv = srcs[0][2]
        elif self.direct:
            # several sources read in place: one row-pointer array over all rows (8 bytes a
            # row), each source's positions its own; where two sources meet, the entry is set
            # for the source of the loaded block (see load)
            self.ip = np.empty(self.n_rows + 1, dtype=np.uint64)
            for k, (ip_, _, _) in enumerate(srcs):
                self.ip[self.row0[k]:self.row0[k + 1] + 1] = ip_
            self.ix = srcs[0][1].view(np.uint32)
            self.dv = srcs[0][2]
        else:
            self.ix = np.empty(cap, dtype=np.uint32)
            self.dv = np.empty(cap, dtype=np.float64)
            self.ip = np.zeros(self.n_rows + 1, dtype=np.uint64)

    def _sub_blocks(self):
        """Each block's ``SUB_BLOCKS`` pieces of about equal values (global row limits), the
        units the threads share."""
        sub = []
        limits = self.limits
        for b in range(len(limits) - 1):
            k = self.block_src[b]
            off = self.row0[k]
            cut = _split(self.srcs[k][0], limits[b] - off, limits[b + 1] - off, SUB_BLOCKS) + off
            sub.append(np.ascontiguousarray(cut).view(np.uint64))
        return sub

    @property
    def src(self):
        """The (indptr, indices, data) of a single-source oracle."""
        if len(self.srcs) != 1:
            raise AttributeError("a BlockOracle over several sources has no single src")
        return self.srcs[0]

    # ---- loading ---------------------------------------------------------------------------
    def _local(self, b):
        """(source, source-local r0, r1, the source's first global row) of block ``b``."""
        k = self.block_src[b]
        off = self.row0[k]
        return k, self.limits[b] - off, self.limits[b + 1] - off, off

    def _advise(self, b):
        """Ask the kernel to start reading block ``b``'s bytes (best effort)."""
        if b >= len(self.limits) - 1:
            return
        k, r0, r1, _ = self._local(b)
        src = self.srcs[k]
        lo, hi = int(src[0][r0]), int(src[0][r1])
        for (a, where), first, last in zip(zip(src, self._mm[k]),
                                           (r0, lo, lo), (r1 + 1, hi, hi)):
            if where is None or last <= first or not hasattr(where[0], "madvise"):
                continue
            mm, start = where
            off = start + first * a.itemsize
            aligned = off - off % _mmap.PAGESIZE
            try:
                mm.madvise(_mmap.MADV_WILLNEED, aligned, (last - first) * a.itemsize +
                           (off - aligned))
            except (ValueError, OSError):
                pass

    def load(self, b):
        """Copy block ``b`` into the buffers (a no-op when it is the loaded one); returns its
        row limits."""
        r0, r1 = self.limits[b], self.limits[b + 1]
        if self._loaded != b and self.direct:
            if len(self.srcs) > 1:
                k, l0, l1, off = self._local(b)
                ip_, ix_, dv_ = self.srcs[k]
                self.ix = ix_.view(np.uint32)
                self.dv = dv_
                self.ip[r0] = ip_[l0]            # the rows where two sources meet
                self.ip[r1] = ip_[l1]
            self._loaded = b
            self.blocks_loaded += 1
            self._advise(b + 1 if b + 1 < self.n_blocks else 0)
        elif self._loaded != b:
            k, l0, l1, off = self._local(b)
            indptr, indices, data = self.srcs[k]
            _copy_block(indptr, indices, data, l0, l1, off, self.bias, self.raw_features,
                        self.ip, self.ix, self.dv)
            self._loaded = b
            self.blocks_loaded += 1
            self._advise(b + 1 if b + 1 < self.n_blocks else 0)
        return r0, r1

    def blocks(self, order=None):
        """Yield ``(b, r0, r1, ip, ix, dv)`` for every block (in ``order`` if given), loaded:
        rows r0..r1 are at positions ``ip[r]..ip[r+1]`` of ``ix``/``dv`` (``ip`` is indexed by
        the global row)."""
        for b in (range(self.n_blocks) if order is None else order):
            r0, r1 = self.load(int(b))
            yield int(b), r0, r1, self.ip, self.ix, self.dv

    # ---- the passes ------------------------------------------------------------------------
    def _run(self, gkernel, b, args):
        sub = self.sub[b]
        if self.threads == 1:
            gkernel(self.ip, self.ix, self.dv, sub, 0, SUB_BLOCKS, *args)
            return
        pool = _pool(self.threads - 1)
        futures = [pool.submit(gkernel, self.ip, self.ix, self.dv, sub, g0, g1, *args)
                   for g0, g1 in self._groups[1:]]
        g0, g1 = self._groups[0]
        gkernel(self.ip, self.ix, self.dv, sub, g0, g1, *args)
        for f in futures:
            f.result()

    def _sweep(self, gkernel, args, parts=False, out=None):
        """Run ``gkernel`` over every block; returns (sum of the parts, out summed)."""
        total = 0.0
        skip_load = gkernel in _ROW_ONLY
        p = np.zeros(SUB_BLOCKS, dtype=np.float64) if parts else None
        bufs = None
        if out is not None:
            out[...] = 0.0
            key = out.shape
            bufs = self._bufs.get(key)
            if bufs is None:
                bufs = np.empty((SUB_BLOCKS,) + out.shape, dtype=np.float64)
                self._bufs[key] = bufs
        extra = tuple(x for x in (p, bufs) if x is not None)
        for b in range(self.n_blocks):
            if not skip_load:
                self.load(b)
            self._run(gkernel, b, args + extra)
            if parts:
                for v in p.tolist():
                    total += v
            if out is not None:
                _add_rows(out.reshape(-1), bufs.reshape(SUB_BLOCKS, -1))
        if not skip_load:
            self.passes += 1
        return total, out

    def sum_blocks(self, gkernel, *args):
        return self._sweep(gkernel, args, parts=True)[0]

    def reduce_blocks(self, gkernel, out, *args):
        return self._sweep(gkernel, args, out=out)[1]

    def reduce_blocks_and_sum(self, gkernel, out, *args):
        return self._sweep(gkernel, args, parts=True, out=out)

    def block_buffers(self, gkernel, out, *args):
        """The summed buffer as a (1,) + out.shape array (one 'block', already summed)."""
        self._sweep(gkernel, args, out=out)
        return out.reshape((1,) + out.shape)

    def matvec(self, w, out=None):
        w, out = matvec_args(w, out, self.n_features, self.n_rows)
        for b in range(self.n_blocks):
            self.load(b)
            self._run(_matvec_group, b, (w, out))
        self.passes += 1
        return out

    def rmatvec(self, v, out=None):
        v, out = rmatvec_args(v, out, self.n_features, self.n_rows)
        return self.reduce_blocks(_rmatvec_group, out, v)

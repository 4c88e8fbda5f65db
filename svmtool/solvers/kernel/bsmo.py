"""LIBSVM's problems solved by SMO on batched working sets (Wen et al., "ThunderSVM: a fast SVM
library on GPUs and CPUs", JMLR 2018; oneDAL's "thunder" SVC method).

The problem, its variables and the answer are those of :func:`svmtool.solvers.kernel.smo.solve`,
which hands it here (``working_set``, :func:`use_batched`) and turns the end into its SmoResult;
only the way there differs.  Each outer step

1. selects a working set of ``q`` variables: half of it new -- alternately the variables of
   I_up with the largest ``-y G`` and those of I_low with the smallest (per sign for the nu
   form) --, the other half kept from the previous set (its free variables first), as
   ThunderSVM does; the first set is all new;
2. computes the kernel rows of the new variables' data points over all points in bulk (dense
   or narrow data: pieces of PIECE_ROWS rows, each BLAS products of their rows with all
   rows, COL_BLOCK points at a time, and the kernel applied in a jitted pass, on the threads;
   sparse data:
   :func:`svmtool.ops.kernels.kernel_block_threads`, BLAS products of augmented rows or the
   jitted sparse row kernels; the given matrix for ``-t 4``) into an LRU cache of float32 rows
   of ``-m`` MB (:class:`RowBuffer`), where the rows of the kept variables, and of variables
   that come back, are found again;
3. solves the subproblem of the set, the others fixed, with the set's ``q x q`` kernel block in
   memory -- read from the kernel rows of the variables new to the set, the entries among the
   kept ones taken from the last set's block
   (:func:`svmtool.solvers.kernel._bsmo_jit.assemble_block`) -- by
   :func:`svmtool.solvers.kernel._bsmo_jit.local_smo` (LIBSVM's second-order pairs within the
   set) to the local tolerance ``max(eps, LOCAL_FRACTION * v0)``, ``v0`` the set's
   violation at the start, or ``LOCAL_STEPS`` steps per variable of the set;
4. adds the alpha changes times the set's rows to the gradient of every variable.

The element-wise passes over whole rows -- the kernel applied to a bulk product's dot
products, the gradient's sums -- are split over the kernel data's threads (rows, resp. ranges
of points; every value computed as by one thread, so the run is the same for any count).

Shrinking (C-SVC, epsilon-SVR, one-class: the forms without the nu constraints; only when the
rows of all variables would not fit in the ``-m`` cache, :func:`rows_overflow`), as LIBSVM's
rule: after each outer step the bounded variables that cannot enter a violating pair under the
present bounds (``be_shrunk``: at the upper bound with ``-y G`` above the largest violation of
its side, at the lower bound likewise) leave the active set, from which the working sets are
drawn.  Their data points stay in the rows until the points of the active variables are fewer
than ``COMPACT_FRACTION`` of the rows' points; then the rows are laid out afresh over the
active points only (:class:`RowBuffer`), so that kernel rows are computed, cached and summed
over those points alone -- shorter rows, more of them in the ``-m`` budget.  The gradient stays
exact at every point of the layout; the points a re-layout drops keep the gradient of that
moment, and alpha then is recorded, so that bringing them back adds the kernel expansion of
alpha's change since (``_Loop.restore``).  All come back once when the violation first falls
below ``10 eps`` and when the active variables meet the rule; the rule is then checked over all.

It stops by LIBSVM's rule: the maximal violating pair over all variables, computed in double
precision from the gradient, below ``eps``.  Iterations counted are the pair steps of the local
solver (LIBSVM's ``#iter`` counts the same steps).  ``q`` shrinks until the set's rows fit in the
``-m`` budget.  No G_bar is kept (the result's ``G_bar`` is None).
"""

import mmap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from svmtool.ops.cores import run_parts
from svmtool.ops.kernels import Kernel, kernel_block_threads, n_threads
from svmtool.solvers.common.result import time_up
from svmtool.solvers.kernel._bsmo_jit import (assemble_block, carry_rows, local_smo, point_sums,
                                              rows_from_dots, select_set)
from svmtool.solvers.kernel._smo_jit import max_violation

LOCAL_FRACTION = 0.01    # the local tolerance: this fraction of the set's first violation
LOCAL_STEPS = 10         # local pair steps per variable of the set, at most
Q_MIN, Q_MAX = 64, 1024  # the working set's size bounds
BULK_ROWS = 128          # sparse data: kernel rows per bulk product (bounds its double result)
PIECE_ROWS = 32          # dense data: kernel rows per BLAS product, a thread's piece
COL_BLOCK = 4096         # ... and points per product: its dot products (1 MB) stay in cache
SPLIT_MIN = 1 << 16      # values per thread below which an element-wise pass is not split
CHEAP_ROW_FEATURES = 32  # dense rows this narrow cost about their memory's first touch
SLOTS_PER_SET = 2        # ... and are held for this many working sets at most (row_slots)
COMPACT_FRACTION = 0.5   # re-lay the rows out when the active points fall below this fraction


BATCHED_MIN_VARIABLES = 5000   # "auto" picks the batched solver from this many variables on


def use_batched(kd, n, working_set="auto", rows=None):
    """Whether smo.solve hands a problem of n variables over kd to :func:`solve_batched`: the
    one place of that choice.  "pair" and "batched" force it; "auto" takes the batched solver
    for problems of at least BATCHED_MIN_VARIABLES variables without a row cache shared with
    other solves (whose rows only the pair solver reuses)."""
    if working_set not in ("auto", "pair", "batched"):
        raise ValueError(f"working_set: {working_set!r} is not auto, pair or batched")
    if working_set != "auto":
        return working_set == "batched"
    return BATCHED_MIN_VARIABLES is not None and rows is None and n >= BATCHED_MIN_VARIABLES


def working_set_size(n, l, cache_mb):
    """q for n variables over l data points: about n / 40 within [Q_MIN, Q_MAX], a multiple
    of 8, no more than the float32 rows that ``cache_mb`` holds, and at most n."""
    q = int(np.clip(n // 40, Q_MIN, Q_MAX))
    fit = int(cache_mb * (1 << 20) // (4 * max(l, 1)))
    q = min(q, max(fit, 16))
    q = max(8, q - q % 8)
    return min(q, n)


def row_slots(kd, q, cache_mb):
    """How many rows the buffer holds: as many as ``cache_mb`` takes (at least q), but for
    dense rows of at most CHEAP_ROW_FEATURES features at most SLOTS_PER_SET working sets'
    rows.  Such a row costs about as much to compute again as the first touch of its memory
    (a page fault for every 4 KB the cache grows by, and the unmapping at the end): a larger
    cache saves recomputations but costs more in memory than it saves (BENCHMARKS.md,
    "Suite `kernel-peers`").  The rows' values, and so the model, are the same either way."""
    slots = int(min(kd.l, max(q, cache_mb * (1 << 20) // (4 * max(kd.l, 1)))))
    if kd.use_dense and not kd.precomputed and kd.dense.shape[1] <= CHEAP_ROW_FEATURES:
        slots = min(slots, SLOTS_PER_SET * q)
    return slots


def rows_overflow(n, l, cache_mb):
    """Whether the kernel rows of n variables over l points (a row a point: at most min(n, l)
    rows, SVR's two variables of a point sharing one) exceed the ``-m`` cache: the
    batched solver shrinks only then (when every row stays cached, as ijcnn1's first 10,000
    rows in 1000 MB, shrinking's re-layouts and gradient rebuilds cost more than the shorter
    rows save)."""
    return 4.0 * min(n, l) * l > cache_mb * (1 << 20)


def select_working_set(alpha, y, C, G, nu, q, prev):
    """The variables of the next set (:func:`svmtool.solvers.kernel._bsmo_jit.select_set`):
    new violators first (the top of I_up and the bottom of I_low by -y G, alternately, per
    sign for the nu form), then kept ones of ``prev``."""
    out = np.empty(max(int(q), 0), dtype=np.int64)
    k = select_set(np.ascontiguousarray(alpha, dtype=np.float64),
                   np.ascontiguousarray(y, dtype=np.float64),
                   np.ascontiguousarray(C, dtype=np.float64),
                   np.ascontiguousarray(G, dtype=np.float64), 1 if nu else 0, int(q),
                   np.ascontiguousarray(prev, dtype=np.int64), out)
    return out[:k]


def _mapped(count, dtype, populate=False):
    """A zero-filled array of ``count`` values in a private anonymous memory map of its own:
    memory as malloc gives a C program's large blocks, without the transparent-huge-page advice
    numpy's allocator gives arrays of 4 MB and more.  Under the kernel's default THP settings
    (enabled and defrag "madvise") each first touch of such advised memory may compact memory
    to find a huge page, which made the row cache's first touches most of a large run's system
    time.  ``populate``: the pages are faulted in by the mapping itself (Linux's MAP_POPULATE,
    where the platform has it), in one call instead of one fault a page as they are first
    written, which costs less per page than a fault each: for memory that will be written
    whole."""
    nbytes = max(1, int(count) * np.dtype(dtype).itemsize)
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
    if populate:
        flags |= getattr(mmap, "MAP_POPULATE", 0)
    buf = mmap.mmap(-1, nbytes, flags=flags) if flags else mmap.mmap(-1, nbytes)
    return np.frombuffer(buf, dtype=dtype, count=int(count))


def _distinct(points, l):
    """The distinct values of ``points`` (data points, below ``l``), increasing: np.unique's
    answer without its check for masked arrays, which imports numpy.ma (tens of milliseconds
    of a short run's start)."""
    if len(points) == 0:
        return points
    seen = np.zeros(l, dtype=bool)
    seen[points] = True
    return np.flatnonzero(seen)


class RowBuffer:
    """The float32 kernel rows of data points over all points, an LRU cache of as many rows as
    ``cache_mb`` holds (at least the working set's): a point's row, once computed, serves every
    later working set that holds one of its variables until it is the least recently used."""

    def __init__(self, kd, q, cache_mb):
        self.kd = kd
        self.q = q
        slots = row_slots(kd, q, cache_mb)
        # at most two sets' rows (cheap dense rows): the first set fills half, a longer run all
        self.flat = _mapped(slots * kd.l, np.float32, populate=slots <= SLOTS_PER_SET * q)
        self.slot_of = -np.ones(kd.l, dtype=np.int64)
        self.clock = 0
        k = kd.kernel
        self.kernel = Kernel(k.ktype, k.gamma, k.coef0, k.degree, 0.0)
        self.computed = 0
        self.layouts = 0
        self.threads = n_threads(kd.threads)
        # the calling thread takes a share of every split itself: threads - 1 workers
        self.pool = ThreadPoolExecutor(self.threads - 1) if self.threads > 1 else None
        # the bulk products' dot products, one buffer for all of them: a fresh array each time
        # is fresh memory from the OS (tens of MB past glibc's mmap threshold), which the
        # kernel zeroes page by page
        dense = kd.use_dense and not kd.precomputed
        self.dots_flat = (_mapped(self.threads * PIECE_ROWS * min(kd.l, COL_BLOCK), np.float64,
                                  populate=True) if dense else None)
        self.lay_out(np.arange(kd.l, dtype=np.int64))

    def lay_out(self, points):
        """Rows over the data points ``points`` (sorted) from now on: position k of a row is
        points[k].  A subset of the present points keeps the cached rows of its points (moved
        into the new layout in place); another set drops them."""
        kd = self.kd
        m = len(points)
        old = getattr(self, "points", None)
        carried = None
        if old is not None and m <= len(old) and np.all(self.pos[points] >= 0):
            live = np.flatnonzero(self.point >= 0)
            inside = np.zeros(kd.l, dtype=bool)
            inside[points] = True
            live = live[inside[self.point[live]]]
            carried = (len(old), live, self.point[live], self.stamp[live],
                       np.ascontiguousarray(self.pos[points]))
        self.points = points
        self.pos = -np.ones(kd.l, dtype=np.int64)
        self.pos[points] = np.arange(m, dtype=np.int64)
        slots = int(min(m, max(self.q, len(self.flat) // max(m, 1))))
        self.rows = self.flat[:slots * m].reshape(slots, m)
        self.point = -np.ones(slots, dtype=np.int64)
        self.stamp = np.zeros(slots, dtype=np.int64)
        self.slot_of[:] = -1
        if carried is not None:
            old_m, live, point, stamp, keep = carried
            live, point, stamp = live[:slots], point[:slots], stamp[:slots]
            carry_rows(self.flat, old_m, m, live, keep)
            k = len(live)
            self.point[:k] = point
            self.stamp[:k] = stamp
            self.slot_of[point] = np.arange(k, dtype=np.int64)
        if self.dots_flat is not None:
            t = self.threads
            self.dots = self.dots_flat.reshape(t, -1)
            whole = m == kd.l
            self.denseT = kd.denseT if whole else np.ascontiguousarray(kd.denseT[:, points])
            sq = np.ascontiguousarray(kd.X.sq, dtype=np.float64)
            self.sq_cols = sq if whole else np.ascontiguousarray(sq[points])
        self.layouts += 1

    def close(self):
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None

    def split(self, fn, n, per_item):
        """``fn(a, b)`` over [0, n) in as many consecutive ranges as threads (of at least
        SPLIT_MIN values, ``per_item`` values an item), on the pool; returns when all ran."""
        t = min(self.threads, max(1, n * per_item // SPLIT_MIN), n)
        self.in_parts(lambda w, a, b: fn(a, b), n, t)

    def in_parts(self, fn, n, t):
        """``fn(w, a, b)`` for the ``t`` consecutive ranges [a, b) of [0, n): the first in this
        thread, the others on the pool's threads (:func:`svmtool.ops.cores.run_parts`; all in
        this thread when t <= 1); returns when all ran."""
        if t <= 1 or self.pool is None:
            fn(0, 0, n)
            return
        cuts = np.linspace(0, n, t + 1).astype(np.int64)
        run_parts(self.pool, lambda w: fn(w, int(cuts[w]), int(cuts[w + 1])), t)

    def place(self, pts):
        """The slots of the rows of points ``pts`` (missing rows computed, the least recently
        used others evicted)."""
        self.clock += 1
        s = self.slot_of[pts]
        miss = _distinct(pts[s < 0], self.kd.l)
        if len(miss):
            held = np.zeros(len(self.point), dtype=bool)
            held[s[s >= 0]] = True
            cand = np.flatnonzero(~held)
            victims = cand[np.argsort(self.stamp[cand], kind="stable")[:len(miss)]]
            old = self.point[victims]
            self.slot_of[old[old >= 0]] = -1
            self._compute(victims, miss)
            self.point[victims] = miss
            self.slot_of[miss] = victims
            s = self.slot_of[pts]
        self.stamp[s] = self.clock
        return s

    def _compute(self, slots, pts):
        kd = self.kd
        self.computed += len(pts)
        if kd.precomputed:
            self.rows[slots] = kd.kmat[pts][:, self.points]
            return
        if kd.use_dense:
            self._compute_dense(slots, pts, self.pos[pts])   # (row points are in the layout)
            return
        for lo in range(0, len(pts), BULK_ROWS):
            hi = min(len(pts), lo + BULK_ROWS)
            # the layout's points against the new ones: the bulk product's long side is the
            # points, so each piece of it is a large BLAS product over few new rows' operands
            block = kernel_block_threads(kd.X, self.points, kd.X, pts[lo:hi], self.kernel,
                                         threads=kd.threads)
            self.rows[slots[lo:hi]] = block.T

    def _compute_dense(self, slots, pts, at):
        """The rows of data points ``pts`` (at the layout's positions ``at``) into ``slots``, by
        pieces of PIECE_ROWS rows (BLAS products of their dense rows with the layout's points,
        COL_BLOCK points at a time, each followed by the kernel applied by
        :func:`rows_from_dots` while its products are in cache; one product of all points had
        its result, tens of MB, zeroed by the BLAS, written and read again from memory), the
        pieces shared out over the threads in consecutive runs, each thread with its own
        product buffer: a piece is computed the same way whichever thread takes it."""
        kargs = self.kd.kargs()
        dense = self.kd.dense
        starts = range(0, len(at), PIECE_ROWS)
        m = self.denseT.shape[1]

        def run(w, first, last):
            flat = self.dots[w]
            for lo in starts[first:last]:
                hi = min(len(at), lo + PIECE_ROWS)
                A = dense[pts[lo:hi]]
                for c0 in range(0, m, COL_BLOCK):
                    c1 = min(m, c0 + COL_BLOCK)
                    D = flat[:(hi - lo) * (c1 - c0)].reshape(hi - lo, c1 - c0)
                    np.matmul(A, self.denseT[:, c0:c1], out=D)
                    rows_from_dots(D, at[lo:hi], slots[lo:hi], self.sq_cols, *kargs, self.rows,
                                   c0)

        self.in_parts(run, len(starts), min(len(self.dots), len(starts)))


@dataclass
class BatchedRun:
    """Where :func:`solve_batched` ended (smo.solve turns it into its SmoResult)."""
    alpha: np.ndarray
    G: np.ndarray
    converged: bool
    stopped: str          # "", "iterations" or "time limit"
    steps: int            # the local solver's pair steps
    stalled: bool         # no pair of a set moved: the pair solver is to go on from here
    extra: dict


def solve_batched(kd, xi, y, p, C, alpha0, G0, *, eps, nu=False, cache_mb=100.0,
                  max_iter=None, callback=None, deadline=None, q=None, gradient=None):
    """smo.solve's problem by batched working sets (see the module doc) from the feasible
    alpha0 and its gradient G0 = Q alpha0 + p; ``q`` the working set's size (default
    :func:`working_set_size`); ``gradient``: smo's ``gradient(kd, xi, y, p, alpha, targets)``,
    with which shrinking rebuilds the gradient of the variables it dropped (None: no shrinking,
    LIBSVM's ``-h 0``; the nu forms never shrink)."""
    t0 = time.perf_counter()
    n = len(y)
    xi = np.ascontiguousarray(xi, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    C = np.ascontiguousarray(C, dtype=np.float64)
    alpha = np.ascontiguousarray(alpha0, dtype=np.float64).copy()
    G = np.ascontiguousarray(G0, dtype=np.float64).copy()
    q = working_set_size(n, kd.l, cache_mb) if q is None else max(2, min(int(q), n))
    cap = max(10_000_000, 100 * n) if max_iter is None else int(max_iter)
    shrinks = gradient is not None and not nu and rows_overflow(n, kd.l, cache_mb)
    state = _Loop(kd, q, cache_mb, xi, gradient if shrinks else None)
    try:
        converged, stopped, stalled = _iterate(state, xi, y, C, alpha, G, nu, eps, cap,
                                               deadline, callback)
    finally:
        state.buf.close()
    extra = {"outer": state.outer, "rows_computed": state.buf.computed, "working_set": q,
             "layouts": state.buf.layouts, "solve_time": time.perf_counter() - t0}
    return BatchedRun(alpha, G, converged, stopped, state.steps, stalled, extra)


def _iterate(state, xi, y, C, alpha, G, nu, eps, cap, deadline, callback):
    """The outer steps until LIBSVM's rule holds over all variables, the cap or the deadline;
    (converged, stopped, stalled)."""
    n = len(y)
    converged, stopped, stalled = False, "", False
    while n > 0:
        act = state.active
        viol = max_violation(alpha[act], y[act], C[act], G[act], 1 if nu else 0)
        if viol < eps or (viol <= 10 * eps and not state.unshrunk):
            restored = state.shrunk()
            if restored:
                state.restore(xi, y, alpha, G)
            state.unshrunk = True
            if viol < eps and len(act) == n:
                converged = True
                break
            if viol < eps:
                continue                     # the rule, checked again over all
            if restored:
                state.shrink(xi, y, C, alpha, G)     # as LIBSVM, at once with all back
        if state.steps >= cap:
            stopped = "iterations"
            break
        if time_up(deadline):
            stopped = "time limit"
            break
        if state.outer_step(xi, y, C, alpha, G, nu, eps, cap) == 0:
            # (not expected: the set holds the maximal violating pair)
            stalled = True
            break
        state.shrink(xi, y, C, alpha, G)
        if callback is not None:
            callback(state.steps, {"active": len(state.active)})
    if not converged and state.shrunk():
        state.restore(xi, y, alpha, G)       # an exact gradient for every variable
    return converged, stopped, stalled


class _Loop:
    """The outer loop's state: the row buffer and its layout, the active variables, the present
    working set, the counts."""

    def __init__(self, kd, q, cache_mb, xi, gradient):
        self.kd = kd
        self.buf = RowBuffer(kd, q, cache_mb)
        self.q = q
        self.gradient = gradient             # None: no shrinking
        self.active = np.arange(len(xi), dtype=np.int64)   # the variables sets are drawn from
        self.loc = np.arange(len(xi), dtype=np.int64)      # a variable's place in it, or -1
        self.unshrunk = gradient is None     # LIBSVM's one unshrink at 10 eps (done or none)
        self.dropped = []                    # (alpha then, variables whose points left the rows)
        self.ws = np.zeros(0, dtype=np.int64)
        self.K = None                        # the kernel block of the set ws
        self.last_at = -np.ones(len(xi), dtype=np.int64)   # a variable's place in ws, or -1
        self.steps = 0
        self.outer = 0
        self._laid_out(xi)

    def shrunk(self):
        """Whether some variable is out of the active set or its point out of the rows."""
        return len(self.active) < len(self.loc) or len(self.buf.points) < self.kd.l

    def _laid_out(self, xi):
        """The variables whose points are in the rows and their positions there."""
        at = self.buf.pos[xi]
        self.in_rows = np.flatnonzero(at >= 0)
        self.at = np.ascontiguousarray(at[self.in_rows])
        self.sums = np.empty(len(self.buf.points))
        # variable k at position k of the rows (C-SVC, one-class over all points): G += y sums
        self.aligned = len(self.at) == len(xi) == len(self.sums) and \
            bool(np.all(self.at == np.arange(len(xi))))

    def outer_step(self, xi, y, C, alpha, G, nu, eps, cap):
        """One working set chosen among the active variables, its rows brought, its subproblem
        solved, G updated at the points of the rows; returns the local steps taken."""
        act = self.active
        prev = self.loc[self.ws]             # the last set's active variables, in its order
        local = select_working_set(alpha[act], y[act], C[act], G[act], nu,
                                   min(self.q, len(act)), prev[prev >= 0])
        ws = act[local]
        slots = self.buf.place(xi[ws])
        K = self._block(ws, slots, xi)
        self.ws = ws
        rows = self.buf.rows
        yB = y[ws]
        a_old = alpha[ws]
        aB = a_old.copy()
        GB = G[ws].copy()
        budget = min(LOCAL_STEPS * len(ws), cap - self.steps)
        steps, _ = local_smo(K, yB, C[ws], aB, GB, 1 if nu else 0, float(eps), LOCAL_FRACTION,
                             max(1, budget))
        self.steps += int(steps)
        self.outer += 1
        d = (aB - a_old) * yB
        sums = self.sums
        self.buf.split(lambda a, b: point_sums(rows, slots, d, sums, a, b), len(sums),
                       max(1, int(np.count_nonzero(d))))
        if self.aligned:
            G += y * sums
        else:
            G[self.in_rows] += y[self.in_rows] * sums[self.at]
        alpha[ws] = aB
        return int(steps)

    def _block(self, ws, slots, xi):
        """The kernel block of the set ``ws`` (its rows in ``slots``), in double: the rows of
        the variables new to it read from their kernel rows, the others' entries taken from
        the last set's block and by symmetry (:func:`assemble_block`); kept for the next set."""
        q = len(ws)
        K = np.empty((q, q))
        pts = np.ascontiguousarray(self.buf.pos[xi[ws]])
        order = np.argsort(pts, kind="stable")
        last = self.last_at
        prev_at = last[ws]
        last[self.ws] = -1
        last[ws] = np.arange(q, dtype=np.int64)
        Kprev = self.K if self.K is not None else K
        rows = self.buf.rows

        def fill(which, phase):
            self.buf.split(lambda a, b: assemble_block(rows, slots, pts, order, prev_at, Kprev,
                                                       K, which, a, b, phase), len(which), q)

        fill(np.flatnonzero(prev_at < 0), 0)        # the new rows first: phase 1 reads them
        fill(np.flatnonzero(prev_at >= 0), 1)
        self.K = K
        return K

    def shrink(self, xi, y, C, alpha, G):
        """LIBSVM's be_shrunk over the active variables; the rows laid out afresh over the
        active points when these are fewer than COMPACT_FRACTION of the rows' points."""
        if self.gradient is None:
            return
        act = self.active
        a, yy, c, g = alpha[act], y[act], C[act], G[act]
        f = -yy * g
        up = np.where(yy > 0, a < c, a > 0)
        low = np.where(yy > 0, a > 0, a < c)
        if not up.any() or not low.any():
            return
        gmax1 = f[up].max()                  # the largest -y G an i can bring
        gmax2 = (-f[low]).max()              # the largest y G a j can bring
        at_c, at_0 = a >= c, a <= 0
        pos = yy > 0
        out = (at_c & np.where(pos, -g > gmax1, -g > gmax2)) | \
            (at_0 & np.where(pos, g > gmax2, g > gmax1))
        if not out.any():
            return
        self.active = act[~out]
        self.loc[act[out]] = -1
        self.loc[self.active] = np.arange(len(self.active), dtype=np.int64)
        used = np.zeros(self.kd.l, dtype=bool)
        used[xi[self.active]] = True
        if np.count_nonzero(used) < COMPACT_FRACTION * len(self.buf.points):
            self._relay(xi, alpha, np.flatnonzero(used))

    def _relay(self, xi, alpha, points):
        """The rows over ``points`` (a subset of the present ones); the variables whose points
        leave them are recorded with alpha now (their gradient is exact now)."""
        keep = np.zeros(self.kd.l, dtype=bool)
        keep[points] = True
        leaving = self.in_rows[~keep[xi[self.in_rows]]]
        if len(leaving):
            self.dropped.append((alpha.copy(), leaving))
        self.buf.lay_out(points)
        self._laid_out(xi)

    def restore(self, xi, y, alpha, G):
        """Every variable active again, the rows over all points: the gradient of the variables
        dropped from the rows brought up to date by the kernel expansion of alpha's change since
        each was dropped (the latest drops first)."""
        for alpha_then, dropped in reversed(self.dropped):
            change = alpha - alpha_then
            G[dropped] += self.gradient(self.kd, xi, y, np.zeros(len(y)), change, dropped)
        self.dropped = []
        self.active = np.arange(len(xi), dtype=np.int64)
        self.loc = np.arange(len(xi), dtype=np.int64)
        if len(self.buf.points) < self.kd.l:
            self.buf.lay_out(np.arange(self.kd.l, dtype=np.int64))
            self._laid_out(xi)

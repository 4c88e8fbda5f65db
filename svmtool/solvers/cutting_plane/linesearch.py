"""Line searches of OCAS: minimise ``f(mu) = F(w_b + mu (w_t - w_b))`` over ``mu >= 0``.

``F(w) = 1/2 w'w + R(w)`` with a piecewise-linear convex risk, so ``f`` is a convex piecewise
quadratic: ``f(mu) = c0 + B mu + A mu^2 / 2 + R(mu)`` with ``A = |w_t - w_b|^2``,
``B = <w_b, w_t - w_b>``, ``c0 = |w_b|^2 / 2``; ``R(mu)`` costs O(n) (O(nK) multi-class) from the
cached scores ``X w_b`` and ``X (w_t - w_b)``, without touching the rows.

Three strategies (Arnosti 2010, "Reducing training time for linear SVMs"):

* ``exact`` -- OCAS's own (Franc & Sonnenburg 2008): the minimiser of f from the n breakpoints of
  the hinge terms -- the zero of the derivative inside a segment or a breakpoint where it jumps
  over zero.  OCAS sorts the breakpoints and walks them from ``mu = 0`` (O(n log n),
  :func:`_exact_walk`, kept as the reference); here the segment is found by selection, O(n):
  for the binary hinge (:func:`select_exact`) by rounds of histograms of the breakpoints' bit
  patterns, each a pass over the two score vectors that stores no breakpoint (two or three
  passes, then a quickselect over the few of one bucket; the same rounds run on a dask cluster
  as one histogram per shard), for Crammer-Singer by quickselect-style partitioning of the
  stored kinks (:func:`_exact_select`, O(n) expected).  Both give the same point as the walk up
  to the rounding of the sums of the jumps.  With the sort the line search was about half of
  OCAS's time on a9a (eps 0.001), by selection a small share (``svmtool bench --suite
  ocas-split`` measures it: BENCHMARKS.md, "Suite `ocas-split`").  ``sorted`` keeps OCAS's
  walk (Arnosti's baseline; it stores every breakpoint, 16 bytes a row).  (Multi-class: the
  kinks of each row's upper envelope of K lines, then the same search.)
* ``gca2`` -- Arnosti's modified grid search (Algorithm 2): up to three truncated passes with steps
  ``beta``, ``beta^2``, ``beta^3`` (``beta = 0.2``), each walking right while ``f`` decreases,
  started around the previous ``mu``; the coarse passes are skipped when the *uncertainty* is
  below the thresholds ``t2`` (first pass) and ``t1`` (second); the uncertainty halves when the new
  ``mu`` lands within ``h`` (half the coarsest step searched) of the previous one and doubles (up to
  1) otherwise.  ``t1 = 0.1``, ``t2 = 0.5`` (the paper leaves them open).
* ``tca`` -- Arnosti's three-point search (Algorithm 3): ``low, mid, high = mu_prev -+ u``; shift
  the window left/right while an end point is lower, else contract both ends toward ``mid`` with
  weights ``g(f_mid, f_end) = (f_mid / f_end)^2``, until ``high - low <= gamma = 0.02``; the
  uncertainty ``u`` halves when ``|mid - mu_prev| <= h(u) = u / 2`` and doubles otherwise (kept in
  ``[gamma, 4]`` so the window never falls below gamma).  The window is clipped at ``mu = 0``,
  and the final choice is the lowest of the last three points (the paper returns ``mid``).
  (The paper's shift-right line ``high <- 2 low - mid`` is a typo for ``2 mid - low``.)

Each search object keeps its state (``mu_prev``, uncertainty) across OCAS iterations and counts
its evaluations of ``f``.
"""

import numpy as np

from svmtool._jit import njit
from svmtool.engine.hinge import (INF_BITS, break_collect, break_hist, hinge_breakpoints,
                                  hinge_risk_line)
from svmtool.engine.passes_cp import cs_breakpoints, cs_right_slope, cs_risk_line


@njit
def _exact_walk(keys, jumps, nb, slope0, A, B):
    """Minimiser over mu >= 0 of a convex piecewise quadratic given its sorted breakpoints."""
    g = B + slope0                  # f'(0+) without the A mu term
    if g >= 0.0:
        return 0.0
    order = np.argsort(keys[:nb])
    for r in range(nb):
        k = order[r]
        t = keys[k]
        if A > 0.0:
            m = -g / A
            if m <= t:
                return m
        g += jumps[k]
        if A * t + g >= 0.0:
            return t
    if A > 0.0:
        return -g / A
    return 0.0


@njit
def _exact_select(keys, jumps, nb, slope0, A, B):
    """The same minimiser as :func:`_exact_walk` without sorting: O(nb) expected.

    The right derivative ``h(mu) = A mu + B + slope0 + sum of the jumps at breakpoints <= mu`` is
    non-decreasing (``jumps >= 0``, convexity).  Like quickselect, take a pivot breakpoint ``p``
    from the candidates, split them (in place) into below / equal / above ``p``, and compare the
    left and right derivatives at ``p`` with 0: both <= 0 .. >= 0 -> ``p`` is the minimiser;
    the right one < 0 -> the minimiser lies above (the jumps below and at ``p`` are banked);
    the left one > 0 -> it lies below.  When no candidate is left, the minimiser is the zero of
    the derivative's linear piece, ``-(B + slope0 + banked) / A``.  Each round is a pass over the
    remaining candidates, whose number shrinks geometrically in expectation (pivot at a
    pseudo-random position).  ``keys``/``jumps`` are reordered.
    """
    g = B + slope0                  # f'(0+) without the A mu term
    if g >= 0.0:
        return 0.0
    return _select_from(keys, jumps, nb, g, A)


@njit
def _select_from(keys, jumps, nb, g, A):
    """:func:`_exact_select`'s search from the derivative ``A mu + g`` (``g < 0``) that holds
    below every breakpoint in ``keys[:nb]``."""
    lo = 0
    hi = nb
    seed = np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(nb)
    while lo < hi:
        seed = seed * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)
        pick = lo + int((seed >> np.uint64(33)) % np.uint64(hi - lo))
        p = keys[pick]
        # three-way partition of [lo, hi): [lo, lt) < p, [lt, gt] == p, (gt, hi) > p
        lt = lo
        i = lo
        gt = hi - 1
        s_below = 0.0
        s_equal = 0.0
        while i <= gt:
            k = keys[i]
            if k < p:
                s_below += jumps[i]
                keys[i], keys[lt] = keys[lt], k
                jumps[i], jumps[lt] = jumps[lt], jumps[i]
                lt += 1
                i += 1
            elif k > p:
                keys[i], keys[gt] = keys[gt], k
                jumps[i], jumps[gt] = jumps[gt], jumps[i]
                gt -= 1
            else:
                s_equal += jumps[i]
                i += 1
        left = A * p + g + s_below
        if left > 0.0:
            hi = lt                  # the minimiser is below p
            continue
        right = left + s_equal
        if right >= 0.0:
            return p
        g += s_below + s_equal       # the minimiser is above p
        lo = gt + 1
    if A > 0.0:
        return -g / A
    return 0.0


# ---- the exact search by selection over the breakpoints' bit patterns ----------------------
#
# The breakpoints are never stored.  Positive doubles order as their bit patterns, so a round
# counts the breakpoints (and sums their jumps) in buckets of the next SELECT_BITS bits of the
# pattern inside the current bucket (the first round: by exponent); a walk over the buckets in
# order finds the one holding the minimiser -- the first whose upper edge U has a positive
# derivative A U + g + (jumps up to U) -- and banks the jumps below it.  When that bucket holds
# at most ``limit`` breakpoints they are copied out and :func:`_select_from` finishes; a bucket of
# one pattern is one breakpoint (its jumps summed).  At most 64 bits: six rounds, two or three
# on real data.  The same point as :func:`_exact_select` up to the order of the jumps' sums.  A
# round is a pass over the rows (local: :class:`HingeLine`) or one task per shard whose answer
# is a histogram (dask: :class:`svmtool.solvers.scale_out.sharded.ShardedLine`).

SELECT_BITS = 12
FIRST_SHIFT = 52             # the first round's buckets: the 2048 exponents of positive doubles
SELECT_LIMIT = 4096          # breakpoints of one bucket copied out


def bits_to_float(bits):
    """The double whose bit pattern is ``bits`` (+inf from INF_BITS on)."""
    if bits >= INF_BITS:
        return np.inf
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def _walk(counts, sums, lo, shift, A, g):
    """``(k, g)``: the first bucket whose upper edge ``U`` has ``A U + g + sum of the jumps up
    to it > 0`` (-1: none) and the derivative's constant part ``g`` below it."""
    nbk = counts.shape[0]
    upper = (np.arange(1, nbk + 1, dtype=np.uint64) << np.uint64(shift)) + np.uint64(lo)
    U = np.where(upper >= np.uint64(INF_BITS), np.inf,
                 np.minimum(upper, np.uint64(INF_BITS)).view(np.float64))
    incl = np.cumsum(np.concatenate([[g], sums]))        # sequential: g, g + s0, g + s0 + s1 ..
    with np.errstate(over="ignore"):
        hit = np.flatnonzero(A * U + incl[1:] > 0.0)
    if len(hit) == 0:
        return -1, float(incl[-1])
    k = int(hit[0])
    return k, float(incl[k])


def select_exact(hist, collect, A, B, limit=SELECT_LIMIT):
    """The minimiser over ``mu >= 0`` of ``c0 + B mu + A mu^2 / 2 + R(mu)`` from rounds of
    ``hist(lo, shift, n_buckets) -> (slope0, counts, sums)`` and one ``collect(lo, hi, count)
    -> (keys, jumps)`` (see above); ``slope0`` is R's right derivative at 0."""
    if A <= 0.0:
        return 0.0
    lo, shift = 0, FIRST_SHIFT
    slope0, counts, sums = hist(lo, shift, 1 << (63 - FIRST_SHIFT))
    g = B + slope0
    if g >= 0.0:
        return 0.0
    while True:
        k, g = _walk(counts, sums, lo, shift, A, g)
        if k < 0 or counts[k] == 0:
            return -g / A
        lo += k << shift
        if shift == 0:                      # one bit pattern: one breakpoint
            keys = np.array([bits_to_float(lo)])
            return float(_select_from(keys, np.array([float(sums[k])]), 1, g, A))
        if counts[k] <= limit:
            keys, jumps = collect(lo, lo + (1 << shift), int(counts[k]))
            return float(_select_from(keys, jumps, keys.shape[0], g, A))
        new = max(shift - SELECT_BITS, 0)
        _, counts, sums = hist(lo, new, 1 << (shift - new))
        shift = new


class HingeLine:
    """``f(mu)`` for a binary hinge risk ``sum c_i max(0, 1 - y_i z_i)`` along the line from
    ``w_b`` to ``w_t``, from the scores ``zb`` and ``zt`` at its ends (labels and costs as
    :mod:`svmtool.engine.hinge` keeps them); the exact search needs no per-row buffer."""

    limit = 1 << 16          # breakpoints copied out at the end of the local selection

    def __init__(self, zb, zt, lab, c_pos, c_neg, A, B, c0):
        self.zb, self.zt, self.lab = zb, zt, lab
        self.c_pos, self.c_neg = float(c_pos), float(c_neg)
        self.A, self.B, self.c0 = float(A), float(B), float(c0)
        self.evals = 0
        self.rounds = 0

    def f(self, mu):
        self.evals += 1
        return (self.c0 + mu * (self.B + 0.5 * self.A * mu)
                + hinge_risk_line(self.zb, self.zt, self.lab, self.c_pos, self.c_neg,
                                  float(mu)))

    def _hist(self, lo, shift, nbk):
        self.rounds += 1
        counts = np.empty(nbk + 1, dtype=np.int64)
        sums = np.empty(nbk + 1, dtype=np.float64)
        slope0 = break_hist(self.zb, self.zt, self.lab, self.c_pos, self.c_neg, np.uint64(lo),
                            np.uint64(shift), counts, sums)
        return slope0, counts[:nbk], sums[:nbk]

    def _collect(self, lo, hi, count):
        keys = np.empty(count + 1, dtype=np.float64)
        jumps = np.empty(count + 1, dtype=np.float64)
        nb = break_collect(self.zb, self.zt, self.lab, self.c_pos, self.c_neg, np.uint64(lo),
                           np.uint64(hi), keys, jumps)
        return keys[:nb], jumps[:nb]

    def breakpoints(self):
        """``(slope0, keys, jumps)``: every breakpoint (n floats each: the sorted search)."""
        n = self.zb.shape[0]
        keys = np.empty(n, dtype=np.float64)
        jumps = np.empty(n, dtype=np.float64)
        slope0, nb = hinge_breakpoints(self.zb, self.zt, self.lab, self.c_pos, self.c_neg,
                                       keys, jumps)
        return slope0, keys[:nb], jumps[:nb]

    def exact(self, sort=False):
        if sort:
            slope0, keys, jumps = self.breakpoints()
            if self.A <= 0.0:
                return 0.0
            return float(_exact_walk(keys, jumps, keys.shape[0], slope0, self.A, self.B))
        return select_exact(self._hist, self._collect, self.A, self.B, self.limit)


class CSLine:
    """``f(mu)`` for the Crammer-Singer risk (scores of shape (n, K))."""

    def __init__(self, Zb, Zd, cls, cost, A, B, c0):
        self.Zb, self.Zd, self.cls, self.cost = Zb, Zd, cls, cost
        self.A, self.B, self.c0 = float(A), float(B), float(c0)
        self.evals = 0

    def f(self, mu):
        self.evals += 1
        return (self.c0 + mu * (self.B + 0.5 * self.A * mu)
                + cs_risk_line(self.Zb, self.Zd, self.cls, self.cost, float(mu)))

    def risk_slope(self, mu):
        """Right derivative of the risk alone at ``mu``."""
        self.evals += 1
        return cs_right_slope(self.Zb, self.Zd, self.cls, self.cost, float(mu))

    def exact(self, sort=False):
        """Kinks of the per-row upper envelopes (:func:`cs_breakpoints`), then the same search
        as the binary case: O(nK + kinks) expected (sorted: O(nK + kinks log kinks))."""
        if self.A <= 0.0:
            return 0.0
        n, K = self.Zb.shape
        cap = n * K
        keys = np.empty(cap, dtype=np.float64)
        jumps = np.empty(cap, dtype=np.float64)
        slope0, nb = cs_breakpoints(self.Zb, self.Zd, self.cls, self.cost, keys, jumps)
        walk = _exact_walk if sort else _exact_select
        return float(walk(keys, jumps, nb, slope0, self.A, self.B))


class ExactSearch:
    name = "exact"

    def __call__(self, line):
        return line.exact()


class SortedSearch:
    """OCAS's original exact search: breakpoints sorted, then walked (O(n log n))."""
    name = "sorted"

    def __call__(self, line):
        return line.exact(sort=True)


class _Memo:
    def __init__(self, line):
        self.line = line
        self.cache = {}

    def __call__(self, mu):
        v = self.cache.get(mu)
        if v is None:
            v = self.line.f(mu)
            self.cache[mu] = v
        return v


class GCA2Search:
    """Arnosti's modified grid search; state carried between calls."""

    name = "gca2"

    def __init__(self, beta=0.2, t1=0.1, t2=0.5, mu0=1.0, max_steps=1000):
        self.beta, self.t1, self.t2 = float(beta), float(t1), float(t2)
        self.mu_prev = float(mu0)
        self.uncertainty = 1.0
        self.max_steps = int(max_steps)

    def _pass(self, f, init, inc):
        mu = max(init, 0.0)
        fm = f(mu)
        for _ in range(self.max_steps):
            fn = f(mu + inc)
            if fn < fm:
                mu, fm = mu + inc, fn
            else:
                break
        return mu

    def __call__(self, line):
        f = _Memo(line)
        b = self.beta
        u = self.uncertainty
        if u >= self.t2:
            mu1 = self._pass(f, self.mu_prev - 1.0, b)
            h = b / 2
        else:
            mu1 = self.mu_prev
            h = None
        if u >= self.t1:
            mu2 = self._pass(f, mu1 - b / 2, b * b)
            h = b * b / 2 if h is None else h
        else:
            mu2 = self.mu_prev
            h = b * b * b / 2 if h is None else h
        mu3 = self._pass(f, mu2 - b * b / 2, b ** 3)
        if abs(mu3 - self.mu_prev) <= h:
            self.uncertainty = u * 0.5
        else:
            self.uncertainty = min(1.0, u * 2.0)
        self.mu_prev = mu3
        return mu3


class TCASearch:
    """Arnosti's three-point search; state carried between calls."""

    name = "tca"

    def __init__(self, gamma=0.02, mu0=1.0, max_evals=200):
        self.gamma = float(gamma)
        self.mu_prev = float(mu0)
        self.uncertainty = 1.0
        self.max_evals = int(max_evals)

    def __call__(self, line):
        f = _Memo(line)
        u = self.uncertainty
        mid = self.mu_prev
        low = max(0.0, mid - u)
        high = mid + u
        fl, fm, fh = f(low), f(mid), f(high)
        steps = 0
        while high - low > self.gamma and steps < self.max_evals:
            steps += 1
            if fl < fm and low < mid:              # shift left
                high, fh = mid, fm
                mid, fm = low, fl
                low = max(0.0, 2.0 * mid - high)
                fl = f(low)
            elif fh < fm:                          # shift right
                low, fl = mid, fm
                mid, fm = high, fh
                high = 2.0 * mid - low
                fh = f(high)
            else:                                  # contract toward mid
                al = (fm / fl) ** 2 if fl > 0 else 1.0
                ah = (fm / fh) ** 2 if fh > 0 else 1.0
                low = (mid + al * low) / (1.0 + al)
                high = (mid + ah * high) / (1.0 + ah)
                fl, fh = f(low), f(high)
        # the window is below gamma: take the lowest of its three points (the paper returns mid;
        # with mid pinned at mu = 0 that would hide a better point up to gamma away)
        if fl < fm and fl <= fh:
            mid = low
        elif fh < fm:
            mid = high
        if abs(mid - self.mu_prev) <= u / 2:
            self.uncertainty = max(self.gamma, u * 0.5)
        else:
            self.uncertainty = min(4.0, u * 2.0)
        self.mu_prev = mid
        return mid


def make_search(name):
    name = (name or "exact").lower()
    if name == "exact":
        return ExactSearch()
    if name == "sorted":
        return SortedSearch()
    if name == "gca2":
        return GCA2Search()
    if name == "tca":
        return TCASearch()
    from svmtool.errors import ParameterError

    raise ParameterError(f"unknown line search {name!r}: choose exact, sorted, gca2 or tca")

"""Jitted sweep of :mod:`svmtool.solvers.cutting_plane.multivariate`: the most violated labeling of
a loss that depends on the contingency table only (F1, error rate, PRBEP, prec@k, rec@k).

Notation: ``P`` positive and ``N`` negative rows, ``n = P + N``; a labeling ``ybar`` has the
table ``(a, b, c, d)``: ``a`` positives and ``b`` negatives labelled positive, ``c = P - a``
positives and ``d = N - b`` negatives labelled negative.  At scores ``z`` the labeling's value is

    val(ybar) = n * Delta(a, b) - sum over the rows it flips of y_i z_i,

and among all labelings with the same ``(a, b)`` the largest value belongs to the one that keeps
the ``a`` best-scored positives and flips the ``b`` best-scored negatives.  With the positives'
scores sorted in descending order (prefix sums ``SP``) and the negatives' too (``SN``)::

    val(a, b) = n * Delta(a, b) - (SP[P] - SP[a]) + SN[b].

For a fixed ``a`` every loss here is concave in ``b`` on its range (F1: ``(b + c) / (b + c +
2a)``; prec@k: ``b / (a + b)``; error rate: linear; rec@k and PRBEP: constant or a single point),
and ``SN`` is concave (its increments are the sorted negative scores), so ``val(a, .)`` is
unimodal: a binary search on its increments finds the best ``b`` in O(log N).  The sweep costs
O(P log N) after the two sorts, O(n log n) in all -- instead of the O(P N) double loop over the
table.

Loss numbers (SVMperf's ``-l``): 1 F1, 2 error rate, 3 PRBEP, 4 prec@k, 5 rec@k.  ``Delta`` is a
fraction (SVMperf's percent / 100); the label sets are SVMperf's: PRBEP labels exactly ``P`` rows
positive, prec@k at least ``k``, rec@k at most ``k``.
"""

import numpy as np

from svmtool._jit import njit

F1 = 1
ERRORRATE = 2
PRBEP = 3
PREC_K = 4
REC_K = 5


@njit
def delta(loss, a, b, P, N):
    """The loss of the table ``(a, b, P - a, N - b)`` as a fraction (0 at the true labeling)."""
    c = P - a
    if loss == F1:
        if a == 0:
            return 1.0                  # F1 = 0 when nothing positive is found
        return (b + c) / (a + b + P)    # 1 - 2a / (2a + b + c)
    if loss == ERRORRATE:
        return (b + c) / (P + N)
    if loss == PRBEP or loss == REC_K:
        return c / P if P > 0 else 0.0
    if loss == PREC_K:
        return b / (a + b) if a + b > 0 else 1.0
    return 0.0


@njit
def b_range(loss, a, P, N, k):
    """``(lo, hi)``: the numbers ``b`` of negatives labelled positive allowed with ``a``
    positives labelled positive (``lo > hi``: none)."""
    if loss == PRBEP:
        b = P - a
        if b > N:
            return 1, 0
        return b, b
    if loss == PREC_K:
        lo = k - a
        return (lo if lo > 0 else 0), N
    if loss == REC_K:
        hi = k - a
        return 0, (hi if hi < N else N)
    return 0, N


@njit
def contingency_argmax(sp, sn, loss, k):
    """Best ``(a, b, value)`` over the tables the loss allows.

    ``sp`` / ``sn``: the positives' / negatives' scores, each sorted in descending order."""
    P = sp.shape[0]
    N = sn.shape[0]
    n = P + N
    SP = np.zeros(P + 1)
    for t in range(P):
        SP[t + 1] = SP[t] + sp[t]
    SN = np.zeros(N + 1)
    for t in range(N):
        SN[t + 1] = SN[t] + sn[t]
    best = -np.inf
    best_a = -1
    best_b = -1
    for a in range(P + 1):
        lo, hi = b_range(loss, a, P, N, k)
        if lo > hi:
            continue
        # first b whose increment val(a, b + 1) - val(a, b) is <= 0
        left = lo
        right = hi
        while left < right:
            mid = (left + right) // 2
            g0 = n * delta(loss, a, mid, P, N) + SN[mid]
            g1 = n * delta(loss, a, mid + 1, P, N) + SN[mid + 1]
            if g1 > g0:
                left = mid + 1
            else:
                right = mid
        val = n * delta(loss, a, left, P, N) + SN[left] - (SP[P] - SP[a])
        if val > best:
            best = val
            best_a = a
            best_b = left
    return best_a, best_b, best


@njit
def threshold_cut(z, y, loss, k, v):
    """The most violated labeling at scores ``z`` (labels ``y`` in {-1, +1}).

    Fills ``v_i = y_i`` for the rows it flips, 0 for the others, and returns ``(value, Delta,
    a, b)``: its value ``n Delta - sum_flipped y_i z_i`` (>= 0: the true labeling is allowed and
    has value 0), its loss and its table."""
    n = z.shape[0]
    P = 0
    for i in range(n):
        if y[i] > 0:
            P += 1
    N = n - P
    pos = np.empty(P, dtype=np.int64)
    neg = np.empty(N, dtype=np.int64)
    p = 0
    q = 0
    for i in range(n):
        if y[i] > 0:
            pos[p] = i
            p += 1
        else:
            neg[q] = i
            q += 1
    zp = np.empty(P)
    for t in range(P):
        zp[t] = -z[pos[t]]
    zn = np.empty(N)
    for t in range(N):
        zn[t] = -z[neg[t]]
    op = np.argsort(zp, kind="mergesort")          # descending scores
    on = np.argsort(zn, kind="mergesort")
    sp = np.empty(P)
    for t in range(P):
        sp[t] = z[pos[op[t]]]
    sn = np.empty(N)
    for t in range(N):
        sn[t] = z[neg[on[t]]]
    a, b, val = contingency_argmax(sp, sn, loss, k)
    for i in range(n):
        v[i] = 0.0
    for t in range(a, P):                          # the P - a worst-scored positives
        v[pos[op[t]]] = 1.0
    for t in range(b):                             # the b best-scored negatives
        v[neg[on[t]]] = -1.0
    return val, delta(loss, a, b, P, N), a, b

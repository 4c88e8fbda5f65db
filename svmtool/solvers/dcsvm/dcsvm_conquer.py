"""DC-SVM's conquer step as a working-set loop over the whole problem.

After the levels, ``alpha`` is the solution of the block-diagonal problem of the last level; its
support vectors are, by Theorem 2 of the paper, most of the final ones.  The conquer step
(:func:`conquer`) solves the bias-free dual over all n rows to the tolerance ``eps`` this way::

    W = support vectors of alpha (plus the rows closest to violating, see below)
    repeat:
        solve the problem restricted to W, warm-started           (kernel_cd.solve: W is
                                                                   small, its rows stay cached)
        G_out += y * K(out, moved) (y * delta alpha)               (rows outside W: one kernel
                                                                   expansion over the variables
                                                                   that moved)
        V = rows outside W with PG_i < -eps  (alpha_i = 0 there, so PG_i = min(G_i, 0))
        if V is empty: stop -- every row meets |PG_i| <= eps: the exact solution
        W = W + V + the rows outside W whose G_i is smallest (up to GROW x |V| of them)

A variable outside W is 0, so it adds nothing to the gradient of W's rows: the restricted
problem is exactly the full one with those variables fixed at 0, and the loop ends at a point
that meets the stopping rule of ``-s kernel`` on every row.  The rows outside W are touched only
by the expansions (one over the starting support vectors, then one over the moved variables per
round), each split over threads in cache-sized pieces: this replaces the shrinking, unshrinking
and gradient rebuilds of a plain solve started from alpha, whose cost was dominated by kernel rows
over tens of thousands of rows that were never going to move.

For the rbf kernel on dense rows (and eps >= SINGLE_MIN_EPS) the expansions are computed in
single precision (:func:`svmtool.ops.kernels32.expansion32`: a float32 product for the
exponents, float32 exponentials, as LIBSVM keeps its kernel values in floats, sums in double),
with a bound E_i on the error they leave in G_i.  A row whose G_i - E_i < -eps while E_i > 0 (it
may violate, or only its bound says so) has its G_i computed again exactly, in double, from
every support vector (E_i = 0): a few hundred rows of ijcnn1's 120,000-row split, where the
product's worst-case bound is some hundred times its actual error.  The rows left outside W
then meet the stopping rule for certain, and the violation reported is the bound's worst case.
"""

import time

import numpy as np

from svmtool.ops.kernels import kernel_expansion
from svmtool.ops.kernels32 import expansion32
from svmtool.ops.rows import take_rows
from svmtool.solvers.kernel.kernel_cd import CacheArena, gradient, objectives, solve

# rows added to W in a round besides the violators: the outside rows of smallest gradient,
# up to GROW times the number of violators (and at least MIN_GROW), so that rows about to
# violate join before they cost another round
GROW = 3.0
MIN_GROW = 300
MAX_ROUNDS = 50
# the first restricted solve (the refinement of the last level's support vectors) stops at this
# multiple of eps, at most FIRST_ROUND_TOL: the violators it finds are nearly the same, and the
# next round moves its solution anyway (ijcnn1: 26.9k steps in all rounds, against 43.0k when
# the first round solved to eps and 36.0k at 10 eps)
FIRST_ROUND_EPS = 100.0
FIRST_ROUND_TOL = 0.1
# the expansions take single precision exponentials when eps is at least this: their error
# bound (about 1e-7 of the sum of |coef| K, 1e-4 to 1e-3 on ijcnn1 at C 32) is then mostly
# below eps; a tighter eps would count many rows as possible violators for that bound alone
SINGLE_MIN_EPS = 1e-4


def conquer(X, y, C, kernel, alpha, *, eps, shrinking=True, cache_mb=100.0, threads=None,
            deadline=None, max_steps=None, callback=None, arena=None):
    """Solve the whole problem from ``alpha`` (updated in place); returns (result of the last
    restricted solve, full gradient G, statistics of the rounds); the statistics'
    ``gradient_error`` bounds |G_i - the exact gradient| (0 in W).  ``arena``: the
    :class:`~svmtool.solvers.kernel.kernel_cd.CacheArena` of the rounds' solves (None: one for
    them all)."""
    n = len(y)
    mem = min(64.0, cache_mb)
    in_w = alpha > 0
    if not in_w.any():
        in_w[:] = True
    W = np.flatnonzero(in_w)
    G = np.empty(n)
    E = np.zeros(n)     # bound on the error of G outside W (single precision expansions)
    rounds = []
    steps = 0
    last = None
    base = None     # alpha at which G outside W was last exact
    arena = CacheArena() if arena is None else arena
    for rnd in range(MAX_ROUNDS):
        t0 = time.perf_counter()
        before = alpha[W].copy()
        # the first round to a looser tolerance: the next ones move its solution anyway
        tol = max(eps, min(FIRST_ROUND_TOL, eps * FIRST_ROUND_EPS)) if rnd == 0 else eps
        g_w = None if rnd == 0 else _exact_on(X, y, alpha, kernel, G, E, W, threads, mem)
        r = solve(take_rows(X, W), y[W], C[W], kernel, eps=tol, init_alpha=before,
                  shrinking=shrinking, cache_mb=cache_mb, threads=threads, deadline=deadline,
                  max_steps=max_steps, callback=callback, init_gradient=g_w, arena=arena)
        last = r
        steps += r.iterations
        alpha[W] = r.alpha
        G[W] = r.extra["gradient"]
        E[W] = 0.0
        t1 = time.perf_counter()
        out = np.flatnonzero(~in_w)
        if len(out) == 0:
            rounds.append({"round": rnd, "rows": len(W), "solve": t1 - t0, "expansion": 0.0,
                           "moved": 0, "added": 0, "steps": r.iterations})
            if tol <= eps or not r.converged:
                break
            continue            # W is every row but was solved loosely: once more at eps
        if base is None:
            src = np.flatnonzero(alpha > 0)
            coef = alpha[src] * y[src]
            G[out] = -1.0
        else:
            delta = alpha - base
            src = np.flatnonzero(delta != 0.0)
            coef = delta[src] * y[src]
        if len(src):
            if eps >= SINGLE_MIN_EPS:
                vals, err = expansion32(X, out, X, src, coef, kernel, threads, mem)
                E[out] += err
            else:
                vals = kernel_expansion(X, out, X, src, coef, kernel, threads, mem)
            G[out] += y[out] * vals
        base = alpha.copy()
        g_out = G[out]
        # the rows that may violate only by the bound: their gradient exact, from every
        # support vector, in double (few rows: a small share of the expansion's values)
        maybe = out[(g_out - E[out] < -eps) & (E[out] > 0.0)]
        if len(maybe):
            _make_exact(X, y, alpha, kernel, G, E, maybe, threads, mem)
            g_out = G[out]
        t2 = time.perf_counter()
        viol = out[g_out - E[out] < -eps]
        rounds.append({"round": rnd, "rows": len(W), "solve": t1 - t0, "expansion": t2 - t1,
                       "moved": int(len(src)), "added": int(len(viol)),
                       "rechecked": int(len(maybe)),
                       "steps": r.iterations})
        if (len(viol) == 0 and tol <= eps) or not r.converged:
            break
        W = _grown(in_w, viol, out, g_out)
    return last, G, {"rounds": rounds, "steps": steps, "gradient_error": E}


def _make_exact(X, y, alpha, kernel, G, E, rows, threads, mem):
    """G on ``rows`` computed again, in double, from every support vector (E = 0 there)."""
    G[rows] = gradient(X, y, alpha, kernel, targets=rows, threads=threads, mem_mb=mem)
    E[rows] = 0.0


def _exact_on(X, y, alpha, kernel, G, E, W, threads, mem):
    """W's gradient, exact: it is on the rows solved last round and the rechecked ones; the
    others that joined (from the expansions, E > 0) are computed again (alpha is 0 outside W)."""
    inexact = W[E[W] > 0.0]
    if len(inexact):
        _make_exact(X, y, alpha, kernel, G, E, inexact, threads, mem)
    return G[W]


def _grown(in_w, viol, out, g_out):
    """The next working set: W, the violators and the outside rows of smallest gradient (up to
    GROW times the violators, at least MIN_GROW); in_w updated."""
    extra = int(max(MIN_GROW, GROW * len(viol)))
    near = out[np.argpartition(g_out, extra)[:extra]] if extra < len(out) else out
    in_w[viol] = True
    in_w[near] = True
    return np.flatnonzero(in_w)


def result_fields(alpha, G, C, eps, err=None):
    """(dual f(alpha), primal, max |PG|) over all rows from the gradient G; with ``err`` (a
    bound on G's error, nonzero only where alpha is 0) the violation's worst case."""
    low = G if err is None else G - err
    pg = np.where(alpha <= 0, np.minimum(low, 0), np.where(alpha >= C, np.maximum(G, 0), G))
    dual, primal = objectives(alpha, G, C)
    return dual, primal, float(np.abs(pg).max()) if len(pg) else 0.0

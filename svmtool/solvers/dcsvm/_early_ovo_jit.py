"""The jitted cluster solver of the multi-class early model
(:mod:`svmtool.solvers.dcsvm.early_ovo`).

One call solves every one-vs-one pair of one cluster on the cluster's dense kernel block, whose
rows are sorted by class so that a pair's Q is read in place from two segments of it, by the
kernel solver's greedy two-variable coordinate descent
(:func:`svmtool.solvers.kernel._kernel_cd_jit.pair_step`), and writes the pairs' coefficients, rho
and statistics into the arrays it is given.
"""

import numpy as np

from svmtool._jit import njit
from svmtool.solvers.kernel._kernel_cd_jit import pair_step, proj_grad

# columns of the per-pair statistics (solve_cluster_pairs)
ROWS, STEPS, DUAL_F, MAX_PG, N_SV, PRIMAL, CAPPED = range(7)
NSTATS = 7


@njit
def _fetch(Ks, r, yr, s0, ni, s1, nj, out):
    """Column r of the pair's Q = y y' K (classes i, j at Ks[s0:s0+ni], Ks[s1:s1+nj]): Ks is
    symmetric, so its row, read over the two segments, signed."""
    row = Ks[r]
    for a in range(ni):
        out[a] = yr * row[s0 + a]
    for b in range(nj):
        out[ni + b] = -yr * row[s1 + b]


@njit
def _dense_cd(Ks, s0, ni, s1, nj, C, qd, iqd, alpha, G, qi, qj, eps, max_steps):
    """One pair's dual, min 1/2 a'Qa - e'a over 0 <= a <= C, Q = y y' K over the rows of class i
    (Ks[s0:s0+ni], y = +1) and class j (Ks[s1:s1+nj], y = -1) of a class-sorted kernel block,
    from (alpha, G), G = Q alpha - 1 kept exact.  The steps of the kernel solver
    (svmtool.solvers.kernel.kernel_cd): i of largest PG_i^2 / Q_ii, the partner j of largest joint
    Newton decrease from column i, the pair's 2x2 box problem solved exactly (alpha_i alone
    when no partner beats the single step).  qd: diagonal of Q, iqd its inverse; qi, qj: work
    vectors.
    Returns (steps, max |PG|)."""
    n = ni + nj
    steps = 0
    # the first selection; afterwards each update pass also selects the next variable
    best, viol = _select(G, alpha, C, iqd, n)
    while True:
        if viol <= eps or best < 0 or steps >= max_steps:
            return steps, viol
        i = best
        ri = s0 + i if i < ni else s1 + i - ni
        _fetch(Ks, ri, 1.0 if i < ni else -1.0, s0, ni, s1, nj, qi)
        gi = G[i]
        qii = qd[i]
        ai = alpha[i]
        bestj = -1
        bestg = gi * gi / qii * 1.0001
        for j in range(n):
            qij = qi[j]
            gj = G[j]
            mj = qij * gi - qii * gj
            a = alpha[j]
            # a partner at a bound only when the joint step moves it inwards (selects, no
            # unpredictable branches: the test below is rarely true)
            stuck = ((a <= 0.0) & (mj < 0.0)) | ((a >= C[j]) & (mj > 0.0)) | (j == i)
            qjj = qd[j]
            det = max(qii * qjj - qij * qij, 1e-12)
            num = qjj * gi * gi - 2.0 * qij * gi * gj + qii * gj * gj
            if (num > bestg * det) & (not stuck):     # gain num / det > bestg, no division
                bestg = num / det
                bestj = j
        if bestj < 0:
            di = min(max(ai - gi / qii, 0.0), C[i]) - ai
            alpha[i] = ai + di
            dj = 0.0
            qj[:n] = 0.0
        else:
            j = bestj
            di, dj = pair_step(alpha, C, G, i, j, qii, qi[j], qd[j])
            rj = s0 + j if j < ni else s1 + j - ni
            _fetch(Ks, rj, 1.0 if j < ni else -1.0, s0, ni, s1, nj, qj)
        # update G and select the next variable in one pass
        best = -1
        best_sc = 0.0
        viol = 0.0
        for k in range(n):
            g = G[k] + (di * qi[k] + dj * qj[k])
            G[k] = g
            a = alpha[k]
            # projected gradient by selects: capped at 0 from above at the lower bound, from
            # below at the upper one
            cap = 0.0 if a <= 0.0 else np.inf
            floor = 0.0 if a >= C[k] else -np.inf
            pg = min(max(g, floor), cap)
            sc = pg * pg * iqd[k]
            viol = max(viol, abs(pg))
            better = sc > best_sc
            best_sc = sc if better else best_sc
            best = k if better else best
        steps += 1


@njit
def _select(G, alpha, C, iqd, n):
    """(index of the largest PG^2 / Q_kk, or -1 when every PG is 0; max |PG|)."""
    best = -1
    best_sc = 0.0
    viol = 0.0
    for k in range(n):
        pg = proj_grad(G[k], alpha[k], C[k])
        sc = pg * pg * iqd[k]
        viol = max(viol, abs(pg))
        if sc > best_sc:
            best_sc = sc
            best = k
    return best, viol


@njit
def solve_cluster_pairs(Ks, cls, Cc, Wr, eps, max_steps, coef, rho, kbias, pair_stats):
    """Every one-vs-one pair of the classes present in one cluster, each to |PG| <= eps.

    Ks: (m, m) kernel values (kernel bias included) of the cluster's rows, the rows sorted by
    class; cls: class index of each row (0..K-1, non-decreasing); Cc: C of each class; Wr: the
    instance weight of each row (its C is its class's C times it); eps, max_steps: stopping
    rule and step cap per pair.
    Out: coef (m, K-1), alpha * y in LIBSVM's layout (a row of class i keeps its coefficient of
    pair (i, j) in column j-1 if i < j, in column j if j < i); rho (K(K-1)/2,) per pair in
    LIBSVM's order; pair_stats (K(K-1)/2, NSTATS): rows, steps, dual objective f(alpha) (to
    minimise), max |PG| at the end, support vectors, primal objective, subproblems stopped by
    the step cap (added to what is there, the |PG| column by max).
    Returns the number of pairs stopped (by the step cap) before |PG| <= eps.
    """
    m = cls.shape[0]
    K = Cc.shape[0]
    count = np.zeros(K, dtype=np.int64)
    for r in range(m):
        count[cls[r]] += 1
    start = np.zeros(K + 1, dtype=np.int64)
    for c in range(K):
        start[c + 1] = start[c] + count[c]
    diag = np.empty(m)
    for r in range(m):
        # a zero diagonal (no kernel bias) is floored as in the kernel solver
        diag[r] = Ks[r, r] if Ks[r, r] > 1e-12 else 1e-12
    C = np.empty(m)
    qd = np.empty(m)
    iqd = np.empty(m)
    alpha = np.empty(m)
    G = np.empty(m)
    qi = np.empty(m)
    qj = np.empty(m)
    unconverged = 0
    p = -1
    for i in range(K):
        for j in range(i + 1, K):
            p += 1
            ni = count[i]
            nj = count[j]
            if ni == 0 or nj == 0:
                # one class (or none) here: a constant vote for the class present
                if ni > 0:
                    rho[p] = -1.0
                elif nj > 0:
                    rho[p] = 1.0
                else:
                    rho[p] = 0.0
                continue
            n = ni + nj
            s0 = start[i]
            s1 = start[j]
            for a in range(n):
                r = s0 + a if a < ni else s1 + a - ni
                C[a] = (Cc[i] if a < ni else Cc[j]) * Wr[r]
                qd[a] = diag[r]
                iqd[a] = 1.0 / diag[r]
                alpha[a] = 0.0
                G[a] = -1.0
            steps, viol = _dense_cd(Ks, s0, ni, s1, nj, C, qd, iqd, alpha, G, qi, qj, eps,
                                    max_steps)
            if viol > eps:
                unconverged += 1
                pair_stats[p, CAPPED] += 1
            f = 0.0
            primal = 0.0
            s = 0.0
            nsv = 0
            for a in range(n):
                # (Q alpha)_a = G_a + 1 = y_a f(x_a): f(alpha) = 1/2 a'Qa - e'a, and the primal
                # 1/2 |w|^2 + sum C_a max(0, 1 - y_a f(x_a)) at w of alpha
                f += alpha[a] * (0.5 * (G[a] + 1.0) - 1.0)
                primal += 0.5 * alpha[a] * (G[a] + 1.0)
                if G[a] < 0.0:
                    primal -= C[a] * G[a]
                s += alpha[a] if a < ni else -alpha[a]
                if alpha[a] > 0.0:
                    nsv += 1
            for a in range(ni):
                coef[s0 + a, j - 1] = alpha[a]
            for b in range(nj):
                coef[s1 + b, i] = -alpha[ni + b]
            rho[p] = -kbias * s
            pair_stats[p, ROWS] += n
            pair_stats[p, STEPS] += steps
            pair_stats[p, DUAL_F] += f
            if viol > pair_stats[p, MAX_PG]:
                pair_stats[p, MAX_PG] = viol
            pair_stats[p, N_SV] += nsv
            pair_stats[p, PRIMAL] += primal
    return unconverged

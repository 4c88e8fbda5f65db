"""Independent truths for SVMperf's multivariate losses (F1, PRBEP), written from the
definitions with numpy alone (nothing from svmtool), and SVMperf 3.00's own programs when they
are on PATH.

The 1-slack problem of ``-s cp --loss`` (Joachims 2005; svmtool/solvers/cutting_plane/multivariate.py)::

    F(w) = 1/2 w'w + C n xi(w),
    xi(w) = max over labelings ybar of  Delta(y, ybar) - 1/n sum_{i: ybar_i != y_i} y_i w'x_i

with ``Delta`` = 1 - F1 of ``ybar`` (1 when it has no true positive), or, for PRBEP, 1 - recall
over the labelings with exactly P positive predictions.
"""

import itertools
import shutil
import subprocess

import numpy as np
import pytest


def delta(loss, y, ybar):
    """Delta(y, ybar) by the definition, or None when ``ybar`` is not among the loss's
    labelings."""
    a = int(np.sum((y > 0) & (ybar > 0)))
    b = int(np.sum((y < 0) & (ybar > 0)))
    c = int(np.sum((y > 0) & (ybar < 0)))
    P = a + c
    if loss == "f1":
        return 1.0 if a == 0 else 1.0 - 2.0 * a / (2 * a + b + c)
    if loss == "prbep":
        return 1.0 - a / P if a + b == P else None
    raise ValueError(loss)


def labelings(n):
    for bits in itertools.product((-1.0, 1.0), repeat=n):
        yield np.array(bits)


def xi_enumerated(loss, y, z):
    """xi at scores ``z``: the maximum over every labeling (2^n of them: tiny n only)."""
    best = -np.inf
    for ybar in labelings(len(y)):
        d = delta(loss, y, ybar)
        if d is not None:
            flip = ybar != y
            best = max(best, d - float(np.sum(y[flip] * z[flip])) / len(y))
    return best


def xi_sweep(loss, y, z):
    """xi at scores ``z`` for any n: for a table (a true positives, b false positives) the best
    labeling flips the P - a lowest-scored positives and the b highest-scored negatives, so
    the maximum is over the (a, b) grid of sorted partial sums (checked against
    :func:`xi_enumerated`)."""
    n = len(y)
    pos, neg = np.sort(z[y > 0]), np.sort(z[y < 0])[::-1]
    P, N = len(pos), len(neg)
    low_pos = np.concatenate([[0.0], np.cumsum(pos)])      # sum of the c lowest positives
    high_neg = np.concatenate([[0.0], np.cumsum(neg)])     # sum of the b highest negatives
    a = np.arange(P + 1)[:, None]
    b = np.arange(N + 1)[None, :]
    c = P - a
    margin = (-low_pos[c] + high_neg[b]) / n
    if loss == "f1":
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.where(a == 0, 1.0, 1.0 - 2.0 * a / (2 * a + b + c))
        return float(np.max(d + margin))
    if loss == "prbep":
        ok = (a + b == P) & np.ones_like(b, dtype=bool)
        return float(np.max(np.where(ok, 1.0 - a / P + margin, -np.inf)))
    raise ValueError(loss)


def objective(loss, X, y, w, C, xi=xi_sweep):
    """F(w) with ``X`` holding the bias column if there is one; also returns xi."""
    z = X @ w
    x = xi(loss, y, z)
    return 0.5 * float(w @ w) + C * len(y) * x, x


def qp_optimum(D, G, C, n):
    """min 1/2 w'w + C n xi  s.t.  xi >= D_r - G_r w for every row r (every labeling), by
    scipy's SLSQP.  Returns the value at SLSQP's w with the exact slack of that w: an upper
    bound on the optimum whatever SLSQP's status."""
    from scipy.optimize import minimize

    d = G.shape[1]
    cons = {"type": "ineq", "fun": lambda u: u[d] - D + G @ u[:d],
            "jac": lambda u: np.hstack([G, np.ones((len(D), 1))])}
    res = minimize(lambda u: 0.5 * u[:d] @ u[:d] + C * n * u[d], np.zeros(d + 1),
                   jac=lambda u: np.append(u[:d], C * n), constraints=[cons],
                   method="SLSQP", options={"ftol": 1e-13, "maxiter": 1000})
    w = res.x[:d]
    return 0.5 * w @ w + C * n * max(0.0, float(np.max(D - G @ w)))


def structural_optimum(loss, X, y, C):
    """The optimum of F over w (an upper bound within SLSQP's precision), every labeling of
    the loss written out as a constraint: a brute force for tiny ``X`` (dense, n <= 10)."""
    n = len(y)
    rows = []
    for ybar in labelings(n):
        d = delta(loss, y, ybar)
        if d is not None:
            flip = ybar != y
            rows.append((d, (y[flip, None] * X[flip]).sum(axis=0) / n))
    return qp_optimum(np.array([r[0] for r in rows]), np.array([r[1] for r in rows]), C, n)


def f1_percent(y, s):
    """F1 (percent) of the predictions ``s > 0``, as svm_perf_classify reports it."""
    tp = int(np.sum((y > 0) & (s > 0)))
    fp = int(np.sum((y < 0) & (s > 0)))
    fn = int(np.sum((y > 0) & (s <= 0)))
    return 0.0 if tp == 0 else 100.0 * 2 * tp / (2 * tp + fp + fn)


def prbep_percent(y, s):
    """Precision/recall break-even point (percent): the positives among the P best-scored rows,
    a tie decided against the positives (as svm_perf_classify)."""
    P = int(np.sum(y > 0))
    order = np.lexsort((y > 0, -s))            # by score, high first; positives last in a tie
    return 100.0 * float(np.sum(y[order[:P]] > 0)) / P


def svmperf():
    """(svm_perf_learn, svm_perf_classify) on PATH, or skip: SVMperf is not packaged."""
    learn, classify = shutil.which("svm_perf_learn"), shutil.which("svm_perf_classify")
    if not (learn and classify):
        pytest.skip("SVMperf 3.00 is in no package registry (svm_perf_learn and "
                    "svm_perf_classify are not on PATH)")
    return learn, classify


def svmperf_run(train, test, options, folder):
    """SVMperf's own model of ``train``: (its stdout, the decision values it writes for
    ``test``)."""
    learn, classify = svmperf()
    model, pred = folder / "svmperf.model", folder / "svmperf.pred"
    out = subprocess.run([learn, *map(str, options), str(train), str(model)], check=True,
                         capture_output=True, text=True).stdout
    subprocess.run([classify, str(test), str(model), str(pred)], check=True,
                   capture_output=True)
    return out, np.loadtxt(pred)

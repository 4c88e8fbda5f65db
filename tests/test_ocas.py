"""OCAS with exact / GCA2 / TCA line searches (svmtool.solvers.cutting_plane.ocas,
svmtool.solvers.cutting_plane.linesearch).

Truths used: a dense grid of f(mu) computed here with numpy, the L1-loss optimum of dual
coordinate descent at a tight tolerance, and liblinear-official -s 3.
"""

import numpy as np
import pytest

from conftest import DATA, shared_file
from linear_helpers import fit, load, primal
from svmtool.params import CuttingPlaneParams, TrainParams
from svmtool.solvers import get_spec
from svmtool.engine.hinge import signs_and_costs
from svmtool.solvers.cutting_plane.linesearch import CSLine, GCA2Search, HingeLine, TCASearch

HEART = DATA / "heart_scale"
A9A = DATA / "a9a"




# --- line searches vs a dense grid -------------------------------------------------------------

def random_line(seed, n=400):
    rng = np.random.default_rng(seed)
    d = 6
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    cost = rng.uniform(0.5, 1.5, n)
    wb = rng.normal(size=d) * 0.3
    wt = wb + rng.normal(size=d) * rng.uniform(0.05, 2.0)
    zb = X @ wb
    dd = wt - wb

    def f(mu):
        w = wb + mu * dd
        return 0.5 * w @ w + float(cost @ np.maximum(0, 1 - y * (X @ w)))

    # per-row costs: the signed-cost representation of svmtool.engine.hinge
    lab, c_pos, c_neg = signs_and_costs(y, cost)
    line = HingeLine(zb, X @ wt, lab, c_pos, c_neg, dd @ dd, wb @ dd, 0.5 * wb @ wb)
    return line, f


@pytest.mark.parametrize("seed", range(8))
def test_exact_line_search_is_the_minimum(seed):
    line, f = random_line(seed)
    mu = line.exact()
    assert mu >= 0
    grid = np.concatenate([np.linspace(0, 5, 5001), [mu]])
    fg = np.array([f(m) for m in grid])
    assert f(mu) <= fg.min() + 1e-9 * abs(fg.min())
    assert line.f(mu) == pytest.approx(f(mu), rel=1e-12)
    # it is a minimiser: both one-sided differences are non-negative
    h = 1e-7
    assert f(mu + h) >= f(mu) - 1e-9
    if mu > h:
        assert f(mu - h) >= f(mu) - 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_selection_finds_the_point_of_the_sorted_walk(seed):
    # the O(n) quickselect-style search against OCAS's sort-and-walk, on the line above and on
    # raw breakpoint sets with many ties, including a minimiser exactly at a breakpoint
    from svmtool.solvers.cutting_plane.linesearch import _exact_select, _exact_walk

    line, f = random_line(seed)
    assert line.exact() == pytest.approx(line.exact(sort=True), rel=1e-12, abs=1e-14)
    rng = np.random.default_rng(seed)
    for trial in range(300):
        nb = int(rng.integers(0, 80))
        keys = rng.random(nb) * 3
        if trial % 2:
            keys = np.round(keys * 4) / 4
        jumps = rng.random(nb) * 2
        if trial % 5 == 0 and nb:
            jumps[rng.integers(nb)] = 50.0         # a jump over zero: minimiser at a breakpoint
        slope0, A, B = -rng.random() * nb, rng.random() * 5, rng.normal()
        a = _exact_walk(keys.copy(), jumps.copy(), nb, slope0, A, B)
        b = _exact_select(keys.copy(), jumps.copy(), nb, slope0, A, B)
        assert b == pytest.approx(a, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("Search", [GCA2Search, TCASearch])
def test_approximate_line_searches_near_the_minimum(seed, Search):
    line, f = random_line(seed)
    grid = np.linspace(0, 5, 5001)
    fg = np.array([f(m) for m in grid])
    fmin = fg.min()
    s = Search()
    mu = s(line)
    assert mu >= 0
    # within 2% of the possible decrease from mu = 0 (their grids are at most 0.008 / 0.02 wide)
    assert f(mu) - fmin <= 0.02 * (f(0.0) - fmin) + 1e-9
    assert line.evals < 60                  # a handful of O(n) evaluations, not a scan


@pytest.mark.parametrize("seed", range(5))
def test_cs_line_exact_vs_grid(seed):
    rng = np.random.default_rng(seed)
    n, K, d = 200, 4, 5
    X = rng.normal(size=(n, d))
    cls = rng.integers(0, K, n)
    cost = np.ones(n)
    Wb = rng.normal(size=(d, K)) * 0.2
    D = rng.normal(size=(d, K)) * 0.5

    def f(mu):
        W = Wb + mu * D
        Z = X @ W
        zy = Z[np.arange(n), cls]
        M = 1 + Z - zy[:, None]
        M[np.arange(n), cls] = 0
        return 0.5 * np.sum(W * W) + float(cost @ M.max(axis=1))

    line = CSLine(X @ Wb, X @ D, cls, cost, np.sum(D * D), np.sum(Wb * D), 0.5 * np.sum(Wb * Wb))
    mu = line.exact()
    assert mu == pytest.approx(line.exact(sort=True), rel=1e-12, abs=1e-14)
    grid = np.linspace(0, 4, 4001)
    assert f(mu) <= min(f(m) for m in grid) + 1e-9
    h = 1e-7
    assert f(mu + h) >= f(mu) - 1e-9 and (mu <= h or f(mu - h) >= f(mu) - 1e-9)
    assert line.f(0.3) == pytest.approx(f(0.3), rel=1e-12)


# --- OCAS vs DCD-L1 and liblinear ----------------------------------------------------------------

@pytest.mark.parametrize("solver", ["ocas", "gca2", "tca"])
@pytest.mark.parametrize("C,C_neg", [(1.0, None), (4.0, 0.5)])
def test_ocas_within_relative_gap_of_dcd(solver, C, C_neg):
    X, y = load(HEART)
    ref = get_spec("dcd-l1").load()(X.indptr.astype(np.int64), X.indices, X.data, y, X.shape[1],
                                    C, C if C_neg is None else C_neg,
                                    TrainParams(eps=1e-5, max_iter=100000))
    assert ref.converged
    eps = 0.01
    r = fit(solver, X, y, C, C_neg, eps=eps)
    cost = np.where(y > 0, C, C if C_neg is None else C_neg)
    assert r.converged
    assert r.primal == pytest.approx(primal(X, y, r.w, cost), rel=1e-10)
    assert r.primal - ref.primal <= eps * r.primal
    assert r.primal >= ref.dual - 1e-9
    assert r.dual <= ref.primal + 1e-9
    for k in ("time_line_search", "time_qp", "time_passes"):
        assert r.extra[k] >= 0


@pytest.mark.parametrize("solver", ["ocas", "gca2", "tca"])
def test_ocas_a9a_subset_tight(solver):
    X, y = load(A9A, rows=5000)
    ref = fit("dcd-l1", X, y, eps=1e-5, max_iter=100000)
    r = fit(solver, X, y, eps=0.001)
    assert r.primal - ref.primal <= 0.001 * r.primal
    assert abs(np.mean(np.sign(X @ r.w) == y) - np.mean(np.sign(X @ ref.w) == y)) <= 0.002


def test_ocas_vs_liblinear_official():
    ll = pytest.importorskip("liblinear.liblinearutil")
    X, y = load(A9A, rows=3000)
    m = ll.train(y, X, "-s 3 -c 2 -e 0.00001 -q")
    w_ll = np.array(m.get_decfun()[0])
    if m.get_labels()[0] != 1:
        w_ll = -w_ll
    cost = np.full(len(y), 2.0)
    F_ll = primal(X, y, w_ll[:X.shape[1]], cost)
    r = fit("ocas", X, y, 2.0, eps=0.001)
    assert r.primal - F_ll <= 0.001 * r.primal


def test_line_search_option_and_mu0_guard_switch():
    X, y = load(HEART)
    r1 = fit("ocas", X, y, eps=0.001,
             cp=CuttingPlaneParams(line_search="tca", mu0_guard=False))
    assert r1.extra["line_search"] == "tca" and r1.extra["mu_forced"] == 0
    r2 = fit("ocas", X, y, eps=0.001, cp=CuttingPlaneParams(mu0_patience=1, mu0_step=0.02))
    assert r2.extra["mu_forced"] == r2.extra["mu_zero"]
    assert r2.converged


def test_sorted_and_selection_exact_searches_give_the_same_run():
    X, y = load(HEART)
    a = fit("ocas", X, y, eps=0.001, cp=CuttingPlaneParams(line_search="sorted"))
    b = fit("ocas", X, y, eps=0.001, cp=CuttingPlaneParams(line_search="exact"))
    assert a.extra["line_search"] == "sorted" and b.extra["line_search"] == "exact"
    assert a.iterations == b.iterations
    assert b.primal == pytest.approx(a.primal, rel=1e-9)


def test_absolute_gap_option():
    X, y = load(HEART)
    r = fit("ocas", X, y, eps=1e-9, cp=CuttingPlaneParams(tol_abs=1.0))
    assert r.converged and r.gap <= 1.0


@pytest.mark.shared
def test_ocas_ijcnn1_subset_shared():
    X, y = load(shared_file("ijcnn1", "ijcnn1"), rows=10000)
    ref = fit("dcd-l1", X, y, eps=1e-5, max_iter=100000)
    for s in ("ocas", "gca2", "tca"):
        r = fit(s, X, y, eps=0.01)
        assert r.primal - ref.primal <= 0.01 * r.primal

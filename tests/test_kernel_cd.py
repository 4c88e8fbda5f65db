"""The kernel CD solver against a slow dense projected-gradient QP solver."""

import numpy as np
import pytest
import scipy.sparse as sp

from svmtool.ops.kernels import Kernel, Rows
from svmtool.solvers import default_eps
from svmtool.solvers.kernel.kernel_cd import solve
from tests.test_kernels import numpy_kernel


def dense_qp(Q, C, iters=20000):
    """min 1/2 a'Qa - e'a, 0 <= a <= C, by accelerated projected gradient (FISTA), to ~1e-12."""
    n = len(Q)
    L = np.linalg.eigvalsh(Q).max()
    a = np.zeros(n)
    z = a.copy()
    t = 1.0
    for _ in range(iters):
        a_new = np.clip(z - (Q @ z - 1.0) / L, 0.0, C)
        t_new = (1 + np.sqrt(1 + 4 * t * t)) / 2
        z = a_new + (t - 1) / t_new * (a_new - a)
        a, t = a_new, t_new
    return a


def objective(Q, a):
    return 0.5 * a @ Q @ a - a.sum()


def problem(seed, n=60, d=5):
    rng = np.random.default_rng(seed)
    Xd = rng.normal(size=(n, d))
    Xd[rng.random(size=Xd.shape) < 0.3] = 0.0
    y = np.where(Xd[:, 0] + 0.5 * Xd[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.2, 1.0, -1.0)
    return sp.csr_matrix(Xd), y


CASES = [(Kernel(2, 0.5), 1.0), (Kernel(2, 2.0), 10.0), (Kernel(1, 0.5, 1.0, 2), 0.5),
         (Kernel(0), 2.0), (Kernel(3, 0.1, 0.0), 1.0), (Kernel(2, 0.5, kbias=1.0), 4.0)]


@pytest.mark.parametrize("kernel,C", CASES, ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("shrinking", [True, False])
def test_matches_dense_qp(kernel, C, shrinking):
    X, y = problem(11)
    Q = np.outer(y, y) * numpy_kernel(X.toarray(), X.toarray(), kernel)
    a_ref = dense_qp(Q, C)
    res = solve(Rows.of(X), y, C, kernel, eps=1e-8, shrinking=shrinking)
    assert res.converged
    f_ref = objective(Q, a_ref)
    assert objective(Q, res.alpha) <= f_ref + 1e-9 * abs(f_ref)
    assert abs(-res.dual - objective(Q, res.alpha)) <= 1e-9 * abs(f_ref)
    np.testing.assert_allclose(res.alpha, a_ref, atol=1e-4 * C)
    # the stopping rule, checked from the dense gradient
    G = Q @ res.alpha - 1
    pg = np.where(res.alpha <= 0, np.minimum(G, 0), np.where(res.alpha >= C, np.maximum(G, 0), G))
    assert np.abs(pg).max() <= 1e-8


def test_per_row_C_and_default_eps():
    X, y = problem(4, n=80)
    k = Kernel(2, 0.3)
    C = np.where(y > 0, 3.0, 0.5)
    Q = np.outer(y, y) * numpy_kernel(X.toarray(), X.toarray(), k)
    res = solve(Rows.of(X), y, C, k, eps=default_eps("kernel"))          # 1e-3, the registry's
    assert np.all(res.alpha <= C) and np.all(res.alpha >= 0)
    G = Q @ res.alpha - 1
    pg = np.where(res.alpha <= 0, np.minimum(G, 0), np.where(res.alpha >= C, np.maximum(G, 0), G))
    assert np.abs(pg).max() <= 1e-3
    f_ref = objective(Q, dense_qp(Q, C))
    assert objective(Q, res.alpha) - f_ref <= 1e-3 * abs(f_ref)


def test_tiny_cache_same_iterates():
    # two cache slots: rows are evicted and recomputed, and shrinking forces partial rows;
    # the iterates do not depend on the cache
    X, y = problem(8, n=120)
    k = Kernel(2, 0.4)
    big = solve(Rows.of(X), y, 5.0, k, eps=1e-6)
    tiny = solve(Rows.of(X), y, 5.0, k, eps=1e-6, cache_mb=1e-6)
    assert tiny.extra["cache_misses"] > big.extra["cache_misses"]
    np.testing.assert_array_equal(tiny.alpha, big.alpha)


@pytest.mark.parametrize("d", [5, 40])
def test_cheap_rows_cache_is_bounded(d, monkeypatch):
    # dense rows of at most CHEAP_ROW_FEATURES features keep at most CHEAP_CACHE_MB of cache
    # whatever -m allows (more rows computed again, the same iterates); wider rows keep -m's
    from svmtool.solvers.kernel import kernel_cd

    X, y = problem(9, n=120, d=d)
    assert Rows.of(X).prefers_dense()
    k = Kernel(2, 2.0 / d)
    out = []
    for bound in (1e-6, 1e6):
        monkeypatch.setattr(kernel_cd, "CHEAP_CACHE_MB", bound)
        out.append(solve(Rows.of(X), y, 5.0, k, eps=1e-6, cache_mb=100.0))
    narrow = d <= kernel_cd.CHEAP_ROW_FEATURES
    assert (out[0].extra["cache_misses"] > out[1].extra["cache_misses"]) == narrow
    np.testing.assert_array_equal(out[0].alpha, out[1].alpha)
    assert out[0].iterations == out[1].iterations


def test_warm_start_from_solution_takes_no_step_and_helps():
    X, y = problem(9, n=100)
    k = Kernel(2, 0.4)
    cold = solve(Rows.of(X), y, 5.0, k, eps=1e-6)
    warm = solve(Rows.of(X), y, 5.0, k, eps=1e-6, init_alpha=cold.alpha)
    assert warm.iterations == 0
    rough = solve(Rows.of(X), y, 5.0, k, eps=1e-1)
    refined = solve(Rows.of(X), y, 5.0, k, eps=1e-6, init_alpha=rough.alpha)
    assert refined.iterations <= cold.iterations - rough.iterations
    assert abs(refined.dual - cold.dual) <= 1e-6 * abs(cold.dual)


def test_kernel_bias_is_an_extra_constant_feature():
    # K + b^2 with the linear kernel is the linear kernel on data with one more feature b
    X, y = problem(12, n=70)
    b = 1.5
    with_bias = solve(Rows.of(X), y, 2.0, Kernel(0, kbias=b * b), eps=1e-9)
    Xa = sp.hstack([X, np.full((70, 1), b)]).tocsr()
    augmented = solve(Rows.of(Xa), y, 2.0, Kernel(0), eps=1e-9)
    assert abs(with_bias.dual - augmented.dual) <= 1e-8 * abs(augmented.dual)


def test_compaction_of_the_active_rows(monkeypatch):
    # shrunk problems are copied into smaller ones (nested); same optimum as the dense QP
    from svmtool.solvers.kernel import kernel_cd

    monkeypatch.setattr(kernel_cd, "COMPACT_MIN_ROWS", 20)
    X, y = problem(21, n=150)
    k = Kernel(2, 0.5)
    Q = np.outer(y, y) * numpy_kernel(X.toarray(), X.toarray(), k)
    res = solve(Rows.of(X), y, 3.0, k, eps=1e-8, chunk_steps=5)
    assert res.extra["compactions"] >= 1 and res.converged
    f_ref = objective(Q, dense_qp(Q, 3.0))
    assert abs(-res.dual - f_ref) <= 1e-9 * abs(f_ref)
    G = Q @ res.alpha - 1
    assert np.abs(kernel_cd._pg_numpy(G, res.alpha, 3.0)).max() <= 1e-8


def test_one_memory_for_the_caches_of_a_solve_reads_no_stale_row(monkeypatch):
    # a solve's passes (after each unshrink, in each compaction) take their caches from one
    # arena: a pass must never read a row an earlier pass left there.  An arena that fills
    # every cache it hands out with NaN gives the same iterates as the solve's own arena
    from svmtool.solvers.kernel import kernel_cd

    class Poisoned(kernel_cd.CacheArena):
        takes = 0

        def take(self, slots, n, dtype=np.float64):
            cache = super().take(slots, n, dtype)
            cache[...] = np.nan
            self.takes += 1
            return cache

    made = []

    class Counting(kernel_cd.CacheArena):
        takes = 0

        def __init__(self):
            super().__init__()
            made.append(self)

        def take(self, slots, n, dtype=np.float64):
            self.takes += 1
            return super().take(slots, n, dtype)

    monkeypatch.setattr(kernel_cd, "COMPACT_MIN_ROWS", 20)
    X, y = problem(23, n=200)
    k = Kernel(2, 0.6)
    rough = solve(Rows.of(X), y, 4.0, k, eps=0.3)
    monkeypatch.setattr(kernel_cd, "CacheArena", Counting)
    own = solve(Rows.of(X), y, 4.0, k, eps=1e-9, init_alpha=rough.alpha, chunk_steps=5)
    assert own.extra["unshrinks"] + own.extra["compactions"] >= 2
    assert len(made) == 1 and made[0].takes >= 3          # the solve's own arena, all passes
    poisoned = Poisoned()
    res = solve(Rows.of(X), y, 4.0, k, eps=1e-9, init_alpha=rough.alpha, chunk_steps=5,
                arena=poisoned)
    assert poisoned.takes == made[0].takes
    assert res.converged and np.array_equal(res.alpha, own.alpha)
    assert res.iterations == own.iterations


def test_rebuild_after_shrinking_from_a_warm_start_is_exact(monkeypatch):
    # a warm start moves few variables: the rebuild of the shrunk rows' gradient adds only
    # their change to the gradient of the start; it must equal the gradient from scratch
    from svmtool.solvers.kernel import kernel_cd

    calls = {"full": 0}
    real = kernel_cd.gradient

    def counting(*a, **kw):
        calls["full"] += 1
        return real(*a, **kw)

    X, y = problem(23, n=200)
    k = Kernel(2, 0.6)
    Q = np.outer(y, y) * numpy_kernel(X.toarray(), X.toarray(), k)
    rough = solve(Rows.of(X), y, 4.0, k, eps=0.3)
    monkeypatch.setattr(kernel_cd, "gradient", counting)
    res = solve(Rows.of(X), y, 4.0, k, eps=1e-9, init_alpha=rough.alpha)
    assert res.converged and res.extra["unshrinks"] >= 1
    np.testing.assert_allclose(res.extra["gradient"], Q @ res.alpha - 1, rtol=1e-9, atol=1e-9)
    assert np.abs(kernel_cd._pg_numpy(Q @ res.alpha - 1, res.alpha, 4.0)).max() <= 1e-8
    assert calls["full"] == 1      # the warm start's gradient; every rebuild was incremental


@pytest.mark.parametrize("seed", range(6))
def test_two_variable_step_is_the_box_minimum(seed):
    """The pair step's exact 2-variable box QP against a brute-force grid over the box
    (convex, indefinite and singular 2x2 curvatures; unconstrained minimum inside or outside)."""
    from svmtool.solvers.kernel._kernel_cd_jit import _q2, _solve2

    rng = np.random.default_rng(seed)
    for case in range(40):
        kind = case % 4
        if kind == 0:                      # positive definite
            M = rng.normal(size=(2, 2))
            H = M @ M.T + 0.05 * np.eye(2)
        elif kind == 1:                    # singular (duplicate rows: Q_ij = Q_ii = Q_jj)
            H = np.full((2, 2), rng.uniform(0.5, 2.0))
            H[0, 1] = H[1, 0] = H[0, 0] * rng.choice([-1.0, 1.0])
        elif kind == 2:                    # indefinite (sigmoid kernels)
            H = np.diag([rng.uniform(0.1, 1), rng.uniform(0.1, 1)])
            H[0, 1] = H[1, 0] = rng.uniform(1.0, 2.0)
        else:                              # nearly singular
            v = rng.normal(size=2)
            H = np.outer(v, v) + 1e-9 * np.eye(2)
        g = rng.normal(scale=3.0, size=2)
        lo = -rng.uniform(0, 2, size=2)
        hi = rng.uniform(0, 2, size=2)
        di, dj = _solve2(g[0], g[1], H[0, 0], H[0, 1], H[1, 1], lo[0], hi[0], lo[1], hi[1])
        assert lo[0] - 1e-12 <= di <= hi[0] + 1e-12 and lo[1] - 1e-12 <= dj <= hi[1] + 1e-12
        xs = np.linspace(lo[0], hi[0], 401)
        ys = np.linspace(lo[1], hi[1], 401)
        Xg, Yg = np.meshgrid(xs, ys)
        grid = g[0] * Xg + g[1] * Yg + 0.5 * (H[0, 0] * Xg ** 2 + 2 * H[0, 1] * Xg * Yg
                                                + H[1, 1] * Yg ** 2)
        got = _q2(g[0], g[1], H[0, 0], H[0, 1], H[1, 1], di, dj)
        assert got <= grid.min() + 1e-9 * (1 + abs(grid.min()))


def test_pair_steps_take_fewer_steps_on_correlated_rows():
    """Near-duplicate rows of opposite labels (narrow rbf, large C) make single-variable steps
    zigzag; the pair step solves each such pair at once.  Same optimum as the dense QP."""
    rng = np.random.default_rng(3)
    base = rng.normal(size=(30, 4))
    Xd = np.vstack([base, base + 1e-3 * rng.normal(size=base.shape)])
    y = np.concatenate([np.where(base[:, 0] > 0, 1.0, -1.0), np.where(base[:, 0] > 0, -1.0, 1.0)])
    X = Rows.of(sp.csr_matrix(Xd))
    k = Kernel(2, 0.5, 0.0, 3, 0.0)
    Q = (y[:, None] * y[None, :]) * numpy_kernel(Xd, Xd, k)
    res = solve(X, y, 5.0, k, eps=1e-6)
    ref = dense_qp(Q, np.full(len(y), 5.0), iters=200000)
    assert objective(Q, res.alpha) <= objective(Q, ref) + 1e-6 * abs(objective(Q, ref))
    # the 30 duplicate pairs take about a step each (single-variable steps took 181)
    assert res.iterations < 3 * len(base)


def test_single_precision_rows_float32_cache_near_the_double_solve(monkeypatch):
    """``single``: rbf rows of dense data computed and cached in float32 (the gradient double);
    the solution meets eps against the exact numpy gradient up to the rows' error (about 1e-6
    of sum alpha K), its objective within 1e-7 of the double solve's, through compactions;
    sparse rows and other kernels take the double path, the same bits."""
    from svmtool.solvers.kernel import kernel_cd

    monkeypatch.setattr(kernel_cd, "COMPACT_MIN_ROWS", 20)
    seen = []
    real = kernel_cd._cd_run
    monkeypatch.setattr(kernel_cd, "_cd_run", lambda *a: seen.append(a[22].dtype) or real(*a))
    rng = np.random.default_rng(5)
    Xd = rng.uniform(-1.0, 1.0, size=(400, 3))
    y = np.where(Xd[:, 0] * Xd[:, 1] + 0.05 * rng.normal(size=400) > 0, 1.0, -1.0)
    X = Rows.of(sp.csr_matrix(Xd))
    assert X.prefers_dense()
    k, C, eps = Kernel(2, 1.5), 10.0, 1e-6
    Q = np.outer(y, y) * numpy_kernel(Xd, Xd, k)
    single = solve(X, y, C, k, eps=eps, single=True, chunk_steps=7)
    assert seen and set(seen) == {np.dtype(np.float32)}
    assert single.converged and single.extra["compactions"] >= 1
    seen.clear()
    double = solve(X, y, C, k, eps=eps, chunk_steps=7)
    assert set(seen) == {np.dtype(np.float64)}
    assert not np.array_equal(single.alpha, double.alpha)      # other roundings, other bits
    G = Q @ single.alpha - 1
    slack = 2e-6 * single.alpha.sum()
    assert np.abs(kernel_cd._pg_numpy(G, single.alpha, C)).max() <= eps + slack
    f_single, f_double = objective(Q, single.alpha), objective(Q, double.alpha)
    assert abs(f_single - f_double) <= 1e-7 * abs(f_double)
    # sparse rows (no dense copy) and a kernel other than rbf: single asks nothing
    Xs = sp.random(150, 3000, density=0.01, format="csr", random_state=2)
    ys = np.where(rng.random(150) < 0.5, 1.0, -1.0)
    assert not Rows.of(Xs).prefers_dense()
    for rows, kern in ((Rows.of(Xs), Kernel(2, 0.5)), (X, Kernel(1, 0.5, 1.0, 2))):
        yy = ys if rows is not X else y
        seen.clear()
        a = solve(rows, yy, 2.0, kern, eps=1e-6, single=True)
        b = solve(rows, yy, 2.0, kern, eps=1e-6)
        assert set(seen) == {np.dtype(np.float64)}
        np.testing.assert_array_equal(a.alpha, b.alpha)


def test_a_given_gradient_starts_the_solve(monkeypatch):
    # init_gradient replaces the gradient the solve would compute from init_alpha (it computes
    # none): the exact one gives the iterates of a solve that computes it; a wrong one is used
    # as given (the solve then stops at a point whose true gradient violates eps)
    from svmtool.solvers.kernel import kernel_cd

    X, y = problem(31, n=120)
    k = Kernel(2, 0.7)
    R = Rows.of(X)
    a0 = np.where(np.arange(120) % 3 == 0, 0.8, 0.0)
    G0 = kernel_cd.gradient(R, y, a0, k)
    ref = solve(R, y, 2.0, k, eps=1e-8, init_alpha=a0)
    computed = []
    exact = kernel_cd.gradient
    monkeypatch.setattr(kernel_cd, "gradient", lambda *a, **kw: (
        kw.get("targets") is None and computed.append(1)) or exact(*a, **kw))   # (not rebuilds)
    got = solve(R, y, 2.0, k, eps=1e-8, init_alpha=a0, init_gradient=G0)
    assert not computed
    # a start outside [0, C] is clipped: the given gradient no longer belongs to it, so the
    # solve computes its own
    solve(R, y, 0.5, k, eps=1e-8, init_alpha=a0, init_gradient=G0, max_steps=1)
    assert computed
    computed.clear()
    np.testing.assert_allclose(got.alpha, ref.alpha, rtol=0, atol=1e-12)
    assert got.iterations == ref.iterations
    wrong = solve(R, y, 2.0, k, eps=1e-8, init_alpha=a0, init_gradient=G0 + 0.5, max_steps=50)
    G = exact(R, y, wrong.alpha, k)
    assert np.abs(kernel_cd._pg_numpy(G, wrong.alpha, 2.0)).max() > 1e-3

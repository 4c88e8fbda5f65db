"""Dual coordinate descent (svmtool.solvers.dual_cd.dcd) and the CSR helpers (svmtool.ops.sparse).

Truths used: scipy.sparse products, glibc's own rand() (through ctypes), liblinear-official's
models (in a fresh subprocess for the bit-identical checks, its rand() state being global),
scikit-learn's LinearSVC (its LIBLINEAR copy has no iteration cap) for the L1-loss optimum, an
exhaustive active-set enumeration of the dual of a 6-point problem, and KKT conditions computed
here with numpy.
"""

import ctypes
import functools
import itertools
import json
import platform
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
import scipy.sparse as sp

from conftest import DATA, SHARED, need, shared_file
from svmtool.ops.sparse import csr_dot_dense, csr_t_dot, row_axpy, row_dot, row_sq_norms
from svmtool.params import DcdParams, TrainParams
from svmtool.solvers import get_spec
from svmtool.solvers.common import rng as generators
from svmtool.solvers.common._rng_jit import glibc_rand_fill
from svmtool.solvers.dual_cd import dcd

HEART = DATA / "heart_scale"
A9A = DATA / "a9a"


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def load(path):
    load_svmlight_file = need("sklearn.datasets").load_svmlight_file

    X, y = load_svmlight_file(str(path))
    X = sp.csr_matrix(X)
    X.sort_indices()
    return X, y


def liblinear_order(X, y, bias=-1.0):
    """Rows grouped as LIBLINEAR groups them; +1 for its first label; bias column appended."""
    labels = list(dict.fromkeys(y.tolist()))
    if sorted(labels) == [-1.0, 1.0]:
        labels = [1.0, -1.0]
    order = np.concatenate([np.flatnonzero(y == labels[0]), np.flatnonzero(y == labels[1])])
    Xo = X[order]
    yo = np.where(y[order] == labels[0], 1.0, -1.0)
    if bias >= 0:
        Xo = sp.hstack([Xo, np.full((Xo.shape[0], 1), float(bias))], format="csr")
        Xo.sort_indices()
    return sp.csr_matrix(Xo), yo


def run(X, y, C=1.0, loss="l2", C_neg=None, callback=None, **kw):
    params = TrainParams(**kw)
    return dcd.fit(X.indptr.astype(np.int64), X.indices, X.data, y, X.shape[1], C,
                   C if C_neg is None else C_neg, params, callback=callback, loss=loss)


def primal(X, y, w, C_pos, C_neg, loss):
    slack = np.maximum(0.0, 1.0 - y * (X @ w))
    cost = np.where(y > 0, C_pos, C_neg)
    return 0.5 * w @ w + cost @ (slack if loss == "l1" else slack ** 2)


def random_problem(seed, n=120, d=15, density=0.3, empty_rows=3):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(size=k))
    X = X.tolil()
    for i in rng.choice(n, empty_rows, replace=False):
        X.rows[i] = []
        X.data[i] = []
    X = sp.csr_matrix(X)
    X.sort_indices()
    w_true = rng.normal(size=d)
    y = np.where(X @ w_true + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


# ---------------------------------------------------------------------------------------------
# CSR helpers against scipy
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
def test_sparse_helpers_match_scipy(idx_dtype):
    X, _ = random_problem(3, n=60, d=25)
    indptr = X.indptr.astype(np.int64)
    indices = X.indices.astype(idx_dtype)
    data = X.data
    rng = np.random.default_rng(0)
    w = rng.normal(size=25)
    v = rng.normal(size=60)
    np.testing.assert_allclose(csr_dot_dense(indptr, indices, data, w), X @ w, rtol=1e-13,
                               atol=1e-13)
    # a shorter w: the columns it does not cover are ignored
    np.testing.assert_allclose(csr_dot_dense(indptr, indices, data, w[:10]),
                               X[:, :10] @ w[:10], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(csr_t_dot(indptr, indices, data, v, 25), X.T @ v, rtol=1e-13,
                               atol=1e-13)
    np.testing.assert_allclose(csr_t_dot(indptr, indices, data, v, 30)[:25], X.T @ v,
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(row_sq_norms(indptr, data),
                               np.asarray(X.multiply(X).sum(axis=1)).ravel(), rtol=1e-13)
    for i in (0, 7, 59):
        assert row_dot(indptr, indices, data, i, w) == pytest.approx((X[i] @ w)[0], abs=1e-13)
        w2 = w.copy()
        row_axpy(indptr, indices, data, i, 0.75, w2)
        np.testing.assert_allclose(w2, w + 0.75 * X[i].toarray().ravel(), rtol=1e-13,
                                   atol=1e-13)


# ---------------------------------------------------------------------------------------------
# glibc rand() emulation
# ---------------------------------------------------------------------------------------------

@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="compares with glibc's rand(), which needs glibc")
@pytest.mark.parametrize("seed", [1, 0, 7, 12345, 2**31 + 12345, 2**32 - 1])
def test_glibc_rand_emulation_matches_libc(seed):
    libc = ctypes.CDLL(None)
    libc.srand(ctypes.c_uint(seed))
    expected = np.array([libc.rand() for _ in range(2000)], dtype=np.uint64)
    libc.srand(1)
    got = np.empty(2000, dtype=np.uint64)
    glibc_rand_fill(generators.glibc_rand_state(seed), got)
    np.testing.assert_array_equal(got, expected)


def test_glibc_rand_first_value_after_srand_1():
    # glibc's well-known first rand() value when unseeded (equivalently after srand(1))
    out = np.empty(2, dtype=np.uint64)
    glibc_rand_fill(generators.glibc_rand_state(1), out)
    assert out.tolist() == [1804289383, 846930886]


# ---------------------------------------------------------------------------------------------
# bit-identical to liblinear-official
# ---------------------------------------------------------------------------------------------

_LIBLINEAR_SCRIPT = textwrap.dedent("""
    import ctypes, json, sys
    from liblinear import liblinear as LL, liblinearutil as L
    libc = ctypes.CDLL(None)
    jobs = json.loads(sys.argv[1])
    out, probs = [], {}
    for k, (path, opts) in enumerate(jobs):
        if path not in probs:
            probs[path] = L.problem(*L.svm_read_problem(path))
        if k > 0:
            libc.srand(1)   # the state of a fresh process: LIBLINEAR itself never seeds
        recalc = "--w-recalc" in opts
        opts = opts.replace("--w-recalc", "")
        if recalc:          # LIBLINEAR 2.50's w_recalc has no option letter: set the field
            param = LL.parameter(opts + " -q")
            probs[path].set_bias(param.bias)
            param.w_recalc = True
            m = LL.toPyModel(LL.liblinear.train(probs[path], param))
        else:
            m = L.train(probs[path], opts + " -q")   # train() sets the problem's bias from -B
        n = m.nr_feature + (1 if m.bias >= 0 else 0)
        out.append({"labels": m.get_labels(), "w": [float(m.w[i]).hex() for i in range(n)]})
    print(json.dumps(out))
""")

# LIBLINEAR options on the bundled data; the first job runs in the
# fresh, unseeded rand() state of the subprocess, the others after srand(1)
BUNDLED_JOBS = [
    (HEART, "-s 3 -c 1"),
    (HEART, "-s 1 -c 1 -B 1"),
    (HEART, "-s 3 -c 10 -B 1"),       # hits the 300-iteration cap: 300 permutations must agree
    (HEART, "-s 1 -c 0.1 -e 0.01"),
    (A9A, "-s 3 -c 1"),               # cap as well, 32561 rows
    (A9A, "-s 1 -c 0.1 -B 1"),
    (HEART, "-s 3 -c 1"),             # again after srand(1): the same as in the fresh process
    (HEART, "-s 3 -c 1 --w-recalc"),  # w rebuilt from alpha at the end (LIBLINEAR 2.50)
    (A9A, "-s 1 -c 0.1 -B 1 --w-recalc"),
]
W8A_JOBS = [("w8a", "-s 3 -c 1"), ("w8a", "-s 1 -c 0.5 -B 1")]


def parse_opts(opts):
    tok = opts.replace("--w-recalc", "").split()
    d = dict(zip(tok[::2], tok[1::2]))
    return (int(d["-s"]), float(d.get("-c", 1)), float(d.get("-B", -1)),
            float(d["-e"]) if "-e" in d else None)


@pytest.fixture(scope="module")
def liblinear_reference():
    """liblinear-official's models for every job, trained in one fresh subprocess."""
    pytest.importorskip("liblinear")
    if platform.libc_ver()[0] != "glibc":
        pytest.skip("LIBLINEAR draws with the C library's rand(); emulated only for glibc")
    jobs = list(BUNDLED_JOBS)
    w8a = SHARED / "w8a" / "w8a"
    if w8a.exists():
        jobs += [(w8a, o) for _, o in W8A_JOBS]
    args = [[str(path), opts] for path, opts in jobs]
    res = subprocess.run([sys.executable, "-c", _LIBLINEAR_SCRIPT, json.dumps(args)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    models = json.loads(res.stdout)
    return [(str(p), o, m["labels"], np.array([float.fromhex(v) for v in m["w"]]))
            for (p, o), m in zip(jobs, models)]


def reference_for(reference, path, opts):
    """The first model trained for (path, opts)."""
    return next((lab, w) for p, o, lab, w in reference if (p, o) == (str(path), opts))


def check_bit_identical(reference, jobs):
    for path, opts in jobs:
        labels, w_ref = reference_for(reference, path, opts)
        s, C, B, eps = parse_opts(opts)
        X, y = load(path)
        Xo, yo = liblinear_order(X, y, B)
        assert float(labels[0]) == 1.0
        r = run(Xo, yo, C, loss="l1" if s == 3 else "l2", eps=eps, liblinear_rng=True,
                dcd=DcdParams(w_recalc="--w-recalc" in opts))
        assert r.w.shape == w_ref.shape
        assert np.array_equal(r.w, w_ref), (
            f"{path.name} {opts}: max |dw| = {np.max(np.abs(r.w - w_ref)):.3g}")


def test_bit_identical_to_liblinear_heart_and_a9a(liblinear_reference):
    check_bit_identical(liblinear_reference, BUNDLED_JOBS)


def test_liblinear_fresh_process_equals_srand_1(liblinear_reference):
    # the premise of liblinear_rng: an unseeded glibc rand() is the state after srand(1)
    fresh, again = [w for p, o, _, w in liblinear_reference
                    if (p, o) == (str(HEART), "-s 3 -c 1")]
    assert np.array_equal(fresh, again)


@pytest.mark.shared
def test_bit_identical_to_liblinear_w8a_empty_rows(liblinear_reference):
    # w8a has about 4,200 rows without features: QD = 0 in the L1 case (alpha jumps to C)
    w8a = shared_file("w8a", "w8a")
    check_bit_identical(liblinear_reference, [(w8a, o) for _, o in W8A_JOBS])


# ---------------------------------------------------------------------------------------------
# objective against independent optima
# ---------------------------------------------------------------------------------------------

def sklearn_l1_reference(X, y, C, B):
    """w of scikit-learn's LinearSVC (hinge loss, dual): its bundled LIBLINEAR copy without the
    300-iteration cap, run to tol 1e-8; an intercept with scaling 1 is LIBLINEAR's -B 1."""
    import warnings

    LinearSVC = need("sklearn.svm").LinearSVC

    X32 = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                        shape=X.shape)
    m = LinearSVC(loss="hinge", dual=True, C=C, tol=1e-8, max_iter=10**7,
                  fit_intercept=B > 0, intercept_scaling=max(B, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a ConvergenceWarning would void the reference
        m.fit(X32, y)
    w = m.coef_.ravel()
    if B > 0:
        w = np.concatenate([w, m.intercept_ / B])
    return w if m.classes_[1] == 1 else -w


def liblinear_inprocess(X, y, s, C, B, eps):
    """w of liblinear-official trained in this process (rand() state does not matter here)."""
    ll = pytest.importorskip("liblinear.liblinear")
    prob = ll.problem(y, X, B)
    m = ll.toPyModel(ll.liblinear.train(prob, ll.parameter(f"-s {s} -c {C} -e {eps} -q")))
    n = m.nr_feature + (1 if m.bias >= 0 else 0)
    w = np.ctypeslib.as_array(m.w, (n,)).copy()
    return w if float(m.get_labels()[0]) == 1.0 else -w


@pytest.mark.parametrize("s,B,C", list(itertools.product([1, 3], [-1, 1], [0.1, 1, 10])))
def test_objective_heart_scale(s, B, C):
    loss = "l1" if s == 3 else "l2"
    X, y = load(HEART)
    Xo, yo = liblinear_order(X, y, B)
    r = run(Xo, yo, C, loss=loss, eps=1e-6, max_iter=10**6)
    assert r.converged
    p_ours = primal(Xo, yo, r.w, C, C, loss)
    assert r.primal == pytest.approx(p_ours, rel=1e-12)
    p_ll = primal(Xo, yo, liblinear_inprocess(X, y, s, C, B, 1e-6), C, C, loss)
    if s == 1:
        # LIBLINEAR -s 1 at -e 1e-6 converges (or finishes with its Newton fallback)
        assert p_ours == pytest.approx(p_ll, rel=1e-6)
    else:
        # LIBLINEAR -s 3 stops at its 300-iteration cap here, short of the optimum: its value
        # is an upper bound; the optimum comes from scikit-learn's uncapped LIBLINEAR copy
        assert p_ours <= p_ll * (1 + 1e-6)
        p_ref = primal(Xo, yo, sklearn_l1_reference(X, y, C, B), C, C, loss)
        assert p_ours == pytest.approx(p_ref, rel=1e-6)
    assert r.dual == pytest.approx(p_ours, rel=1e-6)
    assert 0 <= r.gap <= 1e-5 * p_ours


# ---------------------------------------------------------------------------------------------
# KKT certificate on random problems
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_kkt_certificate_random(seed, loss):
    X, y = random_problem(seed)
    C_pos, C_neg = 0.7, 2.5                      # class-weighted costs
    r = run(X, y, C_pos, C_neg=C_neg, loss=loss, eps=1e-9, max_iter=10**6, seed=seed + 11)
    assert r.converged
    alpha = r.alpha
    cost = np.where(y > 0, C_pos, C_neg)
    upper = cost if loss == "l1" else np.full(len(y), np.inf)
    dii = np.zeros(len(y)) if loss == "l1" else 0.5 / cost
    assert np.all(alpha >= 0) and np.all(alpha <= upper)
    w = X.T @ (y * alpha)                        # w recomputed from alpha with scipy
    np.testing.assert_allclose(r.w, w, rtol=1e-9, atol=1e-10)
    G = y * (X @ w) - 1.0 + dii * alpha
    PG = np.where(alpha <= 0, np.minimum(G, 0), np.where(alpha >= upper, np.maximum(G, 0), G))
    assert np.max(np.abs(PG)) <= 1e-8
    P = primal(X, y, w, C_pos, C_neg, loss)
    D = -(0.5 * w @ w + 0.5 * (dii * alpha) @ alpha - alpha.sum())
    assert P - D <= 1e-8 * max(1.0, P)
    assert r.primal == pytest.approx(P, rel=1e-10)
    assert r.dual == pytest.approx(D, rel=1e-10)
    assert r.n_sv == np.count_nonzero(alpha > 0)
    # the module's own projected-gradient helper agrees
    pg = dcd.projected_gradient(X.indptr.astype(np.int64), X.indices, X.data, y, w, alpha,
                                C_pos, C_neg, loss)
    np.testing.assert_allclose(pg, PG, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# a tiny problem against an exhaustive active-set enumeration of the dual
# ---------------------------------------------------------------------------------------------

def brute_force_dual(Xd, y, C, loss):
    """Optimal w by trying every assignment of alpha_i to {0, free, C} (C only for L1)."""
    n = len(y)
    Z = Xd * y[:, None]
    dii = 0.0 if loss == "l1" else 0.5 / C
    Q = Z @ Z.T + dii * np.eye(n)
    states = (0, 1, 2) if loss == "l1" else (0, 1)
    best = None
    for assign in itertools.product(states, repeat=n):
        assign = np.array(assign)
        alpha = np.where(assign == 2, C, 0.0)
        F = np.flatnonzero(assign == 1)
        if len(F):
            rhs = 1.0 - Q[np.ix_(F, np.flatnonzero(assign == 2))] @ alpha[assign == 2]
            sol, *_ = np.linalg.lstsq(Q[np.ix_(F, F)], rhs, rcond=None)
            if not np.allclose(Q[np.ix_(F, F)] @ sol, rhs, atol=1e-10):
                continue
            alpha[F] = sol
        if np.any(alpha < -1e-12) or (loss == "l1" and np.any(alpha > C + 1e-12)):
            continue
        G = Q @ alpha - 1.0
        ok = (np.all(G[assign == 0] >= -1e-10) and np.all(G[assign == 2] <= 1e-10)
              and np.all(np.abs(G[assign == 1]) <= 1e-10))
        if ok:
            f = 0.5 * alpha @ Q @ alpha - alpha.sum()
            if best is None or f < best[0] - 1e-12:
                best = (f, Z.T @ alpha)
    assert best is not None
    return best[1], -best[0]


@pytest.mark.parametrize("loss", ["l1", "l2"])
@pytest.mark.parametrize("C", [0.3, 5.0])
def test_tiny_problem_brute_force(loss, C):
    Xd = np.array([[1.0, 2.0], [2.0, 0.5], [0.5, -1.0], [-1.0, -1.5], [-2.0, 0.3],
                   [0.2, 0.1]])
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0, 1.0])
    w_star, d_star = brute_force_dual(Xd, y, C, loss)
    X = sp.csr_matrix(Xd)
    r = run(X, y, C, loss=loss, eps=1e-10, max_iter=10**6)
    assert r.converged
    np.testing.assert_allclose(r.w, w_star, rtol=1e-7, atol=1e-9)
    assert r.primal == pytest.approx(d_star, rel=1e-9)
    assert r.primal == pytest.approx(primal(X, y, w_star, C, C, loss), rel=1e-9)


# ---------------------------------------------------------------------------------------------
# iteration cap, callback, seeds, warm start, shrinking, registry, input checks
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_iteration_cap_warns(loss):
    X, y = liblinear_order(*load(HEART))
    r = run(X, y, 1.0, loss=loss, eps=1e-6, max_iter=2)
    assert not r.converged
    assert r.iterations == 2
    msg = r.extra["warning"]
    assert msg and "maximum number of iterations (2)" in msg
    # -s 1 goes on with -s 2 at its cap, as LIBLINEAR: the registry says so, not the result
    spec = get_spec("dcd-l2" if loss == "l2" else "dcd-l1")
    assert (spec.fallback, spec.fallback_eps) == (("newton", 0.1) if loss == "l2" else ("", 0.1))
    assert r.extra["pg_violation"] > 1e-6
    ok = run(X, y, 0.1, loss=loss)                        # default eps, cap 300: converges
    assert ok.converged and ok.extra["warning"] is None
    assert ok.extra["max_iter"] == dcd.LIBLINEAR_MAX_ITER == 300


def test_callback_once_per_iteration_and_results_unchanged(monkeypatch):
    X, y = liblinear_order(*load(HEART))
    plain = run(X, y, 1.0, loss="l1", liblinear_rng=True)
    seen = []
    monkeypatch.setattr(dcd, "CALLBACK_WORK_BUDGET", 1000)   # many calls of the jitted loop
    r = run(X, y, 1.0, loss="l1", liblinear_rng=True, callback=lambda it, info:
            seen.append((it, info)))
    assert [it for it, _ in seen] == list(range(1, r.iterations + 1))
    assert all({"pg_max", "pg_min", "violation", "active_size"} <= set(i) for _, i in seen)
    assert seen[-1][1]["violation"] == pytest.approx(r.extra["pg_violation"])
    assert seen[-1][1]["active_size"] == len(y)
    assert np.array_equal(r.w, plain.w) and r.iterations == plain.iterations


def test_seed_determinism():
    X, y = liblinear_order(*load(HEART))
    a = run(X, y, 1.0, seed=5)
    b = run(X, y, 1.0, seed=5)
    c = run(X, y, 1.0, seed=6)
    assert np.array_equal(a.w, b.w) and a.iterations == b.iterations
    assert not np.array_equal(a.w, c.w)


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_warm_start_from_alpha(loss):
    X, y = liblinear_order(*load(HEART))
    cold = run(X, y, 1.0, loss=loss, eps=1e-4, max_iter=10**5)
    # from the solution itself: a pass over all rows confirms it
    again = run(X, y, 1.0, loss=loss, eps=1e-4, max_iter=10**5,
                dcd=DcdParams(init_alpha=cold.alpha))
    assert again.converged and again.iterations <= 3 < cold.iterations
    assert again.primal == pytest.approx(cold.primal, rel=1e-5)
    assert again.dual >= cold.dual
    # a warm start at C=2 from the C=1 solution needs fewer iterations than a cold one
    cold2 = run(X, y, 2.0, loss=loss, eps=1e-4, max_iter=10**5)
    warm2 = run(X, y, 2.0, loss=loss, eps=1e-4, max_iter=10**5,
                dcd=DcdParams(init_alpha=cold.alpha))
    assert warm2.converged and warm2.iterations < cold2.iterations
    assert warm2.primal == pytest.approx(cold2.primal, rel=1e-5)
    # alpha beyond the box is clipped, and w is recomputed from the clipped alpha
    wild = np.full(len(y), 50.0)
    r = run(X, y, 0.5, loss="l1", eps=1e-4, max_iter=10**5, dcd=DcdParams(init_alpha=wild))
    assert np.all(r.alpha <= 0.5)
    np.testing.assert_allclose(r.w, X.T @ (y * r.alpha), rtol=1e-9, atol=1e-10)


def test_shrinking_off_same_optimum():
    X, y = liblinear_order(*load(HEART))
    on = run(X, y, 1.0, loss="l1", eps=1e-5, max_iter=10**5)
    off = run(X, y, 1.0, loss="l1", eps=1e-5, max_iter=10**5, shrinking=False)
    assert on.converged and off.converged
    assert off.primal == pytest.approx(on.primal, rel=1e-6)


def test_registry_points_here():
    for name, loss in (("dcd-l2", "l2"), ("1", "l2"), ("dcd-l1", "l1"), ("3", "l1")):
        fn = get_spec(name).load()
        assert fn.func is dcd.fit and fn.keywords == {"loss": loss}


def test_input_checks_and_empty_problem():
    X, y = random_problem(0, n=10, d=4, empty_rows=0)
    with pytest.raises(ValueError, match="feature index"):
        dcd.fit(X.indptr, X.indices, X.data, y, 2, 1.0, 1.0, TrainParams())
    with pytest.raises(ValueError, match="-1 or \\+1"):
        dcd.fit(X.indptr, X.indices, X.data, y * 2, 4, 1.0, 1.0, TrainParams())
    with pytest.raises(ValueError, match="loss"):
        dcd.fit(X.indptr, X.indices, X.data, y, 4, 1.0, 1.0, TrainParams(), loss="l3")
    r = dcd.fit(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0),
                np.zeros(0), 3, 1.0, 1.0, TrainParams())
    assert r.converged and r.w.tolist() == [0.0, 0.0, 0.0] and r.primal == 0.0


# ---------------------------------------------------------------------------------------------
# the two engines: plain Python for small problems, the jitted loop, and the hand-over
# ---------------------------------------------------------------------------------------------

def assert_same_result(a, b):
    assert np.array_equal(a.w, b.w) and np.array_equal(a.alpha, b.alpha)
    assert a.iterations == b.iterations and a.converged == b.converged
    assert a.primal == b.primal and a.dual == b.dual
    assert a.extra["pg_violation"] == b.extra["pg_violation"]
    assert a.extra["active_size"] == b.extra["active_size"]


@pytest.mark.parametrize("loss", ["l1", "l2"])
@pytest.mark.parametrize("liblinear_rng", [False, True])
@pytest.mark.parametrize("shrinking", [True, False])
def test_python_engine_bit_identical_to_jitted(loss, liblinear_rng, shrinking):
    # random data with empty rows (QD_ii = 0 under L1 loss: the x/0 path) and unequal costs
    X, y = random_problem(11, empty_rows=4)
    kw = dict(eps=1e-3, max_iter=400, liblinear_rng=liblinear_rng, shrinking=shrinking)
    jit = run(X, y, 2.0, loss=loss, C_neg=0.7, dcd=DcdParams(engine="jit"), **kw)
    py = run(X, y, 2.0, loss=loss, C_neg=0.7, dcd=DcdParams(engine="python"), **kw)
    assert jit.iterations > 5
    assert_same_result(py, jit)


@pytest.mark.parametrize("loss", ["l1", "l2"])
@pytest.mark.parametrize("liblinear_rng", [False, True])
def test_binary_values_take_the_unit_loop_bit_identical(loss, liblinear_rng, monkeypatch):
    """Every stored value 1.0 (binary features): the jitted passes skip the values; the result
    is the same bit for bit as the python engine's and as the jitted loop told the values are
    general; one value that is not 1.0 (even in a later chunk) keeps the general loop."""
    import svmtool.solvers.dual_cd._dcd_jit as J

    X, y = random_problem(5, empty_rows=3)
    X.data[:] = 1.0
    real = J._dcd_iterations
    flags = []

    def spy(*a):
        flags.append(a[-1])
        return real(*a)

    monkeypatch.setattr(J, "_dcd_iterations", spy)
    kw = dict(eps=1e-3, max_iter=400, liblinear_rng=liblinear_rng)
    jit = run(X, y, 2.0, loss=loss, C_neg=0.7, dcd=DcdParams(engine="jit"), **kw)
    assert flags and all(f is True for f in flags) and jit.iterations > 5
    asked = []
    monkeypatch.setattr(dcd, "_all_ones", lambda d, *a: asked.append(1) or True)
    py = run(X, y, 2.0, loss=loss, C_neg=0.7, dcd=DcdParams(engine="python"), **kw)
    assert asked == []          # the python engine never asks; the jitted loop asks once a fit
    monkeypatch.undo()
    assert_same_result(py, jit)
    monkeypatch.setattr(J, "_dcd_iterations", lambda *a: real(*a[:-1], False))
    general = run(X, y, 2.0, loss=loss, C_neg=0.7, dcd=DcdParams(engine="jit"), **kw)
    assert_same_result(general, jit)
    assert dcd._all_ones(np.ones(9), chunk=4)
    assert not dcd._all_ones(np.r_[np.ones(8), 0.5], chunk=4)
    assert not dcd._all_ones(np.ones(0))


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_python_engine_heart_warm_start_and_cap(loss):
    X, y = liblinear_order(*load(HEART), bias=1.0)
    for kw in (dict(liblinear_rng=True), dict(eps=1e-6, max_iter=25, seed=3)):
        jit = run(X, y, 4.0, loss=loss, dcd=DcdParams(engine="jit"), **kw)
        py = run(X, y, 4.0, loss=loss, dcd=DcdParams(engine="python"), **kw)
        assert_same_result(py, jit)
    start = np.linspace(0.0, 1.0, len(y))
    jit = run(X, y, 1.0, loss=loss, dcd=DcdParams(engine="jit", init_alpha=start))
    py = run(X, y, 1.0, loss=loss, dcd=DcdParams(engine="python", init_alpha=start))
    assert_same_result(py, jit)


@pytest.mark.parametrize("budget", [1, 700, 20000])
@pytest.mark.parametrize("liblinear_rng", [False, True])
def test_hand_over_from_python_to_jitted_changes_nothing(budget, liblinear_rng):
    X, y = liblinear_order(*load(HEART))
    kw = dict(eps=1e-3, liblinear_rng=liblinear_rng)
    jit = run(X, y, 2.0, dcd=DcdParams(engine="jit"), **kw)
    mixed = run(X, y, 2.0, dcd=DcdParams(python_budget=budget), **kw)
    assert jit.iterations * len(y) > 20000         # so the largest budget also hands over
    assert_same_result(mixed, jit)
    # the engine option is checked with every other option, before any solver runs
    from svmtool.errors import ParameterError
    from svmtool.params import make_params

    with pytest.raises(ParameterError, match="engine must be one of auto, jit, python"):
        make_params(None, {"dcd": DcdParams(engine="fast")})


def test_small_training_never_imports_numba_until_the_budget_is_spent(tmp_path):
    # a fresh process: training heart_scale from the command line stays in plain Python; with
    # the Python budget nearly spent the same run moves to the jitted loop, same model bytes
    model_a, model_b = tmp_path / "a.model", tmp_path / "b.model"
    code = ("import sys; from svmtool.cli import run; from svmtool.solvers.dual_cd import dcd;"
            "dcd.PY_WORK_BUDGET = int(sys.argv[2]);"
            f"rc = run(['train', '-q', {str(HEART)!r}, sys.argv[1]]);"
            "print(rc, 'numba' in sys.modules, dcd._JIT_MODULE in sys.modules)")
    outs = [subprocess.run([sys.executable, "-c", code, str(m), b], capture_output=True,
                           text=True, check=True).stdout.split()
            for m, b in ((model_a, "1500000"), (model_b, "3000"))]
    # the jitted loop runs from the kernel extension when it is built (no numba), else numba's
    assert outs[0] == ["0", "False", "False"]
    assert outs[1][0] == "0" and outs[1][2] == "True"
    assert model_a.read_bytes() == model_b.read_bytes()


def test_one_vs_rest_classes_on_threads_give_the_same_model(monkeypatch):
    from svmtool import api
    from svmtool.problem import Problem

    rng = np.random.default_rng(5)
    X = sp.random(900, 40, density=0.3, format="csr", random_state=rng)
    X.sort_indices()
    y = rng.integers(0, 4, size=900).astype(np.float64) * 2 + 1      # labels 1, 3, 5, 7
    prob = Problem(X.indptr.astype(np.int64), X.indices, X.data, y, 40)
    monkeypatch.setattr(api, "OVR_THREAD_MIN_NNZ", 0)
    for solver in ("dcd-l2", "dcd-l1"):
        one = api.train(prob, TrainParams(solver=solver, threads=1, bias=1.0))
        two = api.train(prob, TrainParams(solver=solver, threads=2, bias=1.0))
        assert api._class_workers(TrainParams(threads=2), get_spec(solver), 4, X.indptr)[0] == 2
        assert np.array_equal(one.w, two.w) and one.w.shape == (41, 4)
        assert [r["iterations"] for r in one.report["classes"]] == \
            [r["iterations"] for r in two.report["classes"]]
        # each column is the binary problem "this class against the rest", solved alone
        Xb = sp.hstack([X, np.ones((900, 1))], format="csr")
        for col, label in enumerate(two.labels):
            alone = run(Xb, np.where(y == label, 1.0, -1.0), 1.0,
                        loss="l2" if solver == "dcd-l2" else "l1", eps=0.1)
            assert np.array_equal(two.w[:, col], alone.w)
    # LIBLINEAR's generator runs through the classes in order: never threads
    assert api._class_workers(TrainParams(threads=2, liblinear_rng=True), get_spec("dcd-l2"),
                              4, X.indptr) == (1, None)
    # Newton: a class per thread, each class's passes on the threads left over
    assert api._class_workers(TrainParams(threads=2), get_spec("newton"), 4, X.indptr) == (2, 1)
    assert api._class_workers(TrainParams(threads=8), get_spec("lr"), 3, X.indptr) == (3, 2)
    # the cutting planes split each class's passes only
    assert api._class_workers(TrainParams(threads=2), get_spec("ocas"), 4, X.indptr) == (1, None)


@pytest.mark.parametrize("solver", ["newton", "lr"])
def test_newton_classes_on_threads_give_the_same_bits(solver, monkeypatch):
    """Newton's one-vs-rest classes side by side (a class per thread) or one after another with
    both threads in each class's passes: the same model bits and iterations."""
    from svmtool import api
    from svmtool.problem import Problem

    rng = np.random.default_rng(8)
    X = sp.random(4000, 300, density=0.06, format="csr", random_state=rng)   # 2 blocks
    X.sort_indices()
    y = rng.integers(0, 3, size=4000).astype(np.float64)
    prob = Problem(X.indptr.astype(np.int64), X.indices, X.data, y, 300)
    monkeypatch.setattr(api, "OVR_THREAD_MIN_NNZ", 0)
    side = api.train(prob, TrainParams(solver=solver, threads=2, bias=1.0, eps=1e-4))
    monkeypatch.setattr(api, "OVR_THREAD_MIN_NNZ", 10 ** 12)
    serial = api.train(prob, TrainParams(solver=solver, threads=2, bias=1.0, eps=1e-4))
    one = api.train(prob, TrainParams(solver=solver, threads=1, bias=1.0, eps=1e-4))
    assert [r["threads"] for r in side.report["classes"]] == [1, 1, 1]
    assert [r["threads"] for r in serial.report["classes"]] == [2, 2, 2]
    for other in (serial, one):
        assert np.array_equal(side.w, other.w)
        assert [r["iterations"] for r in side.report["classes"]] == \
            [r["iterations"] for r in other.report["classes"]]


# the two engines on generated problems: shape, sparsity, scale, costs, loss, shrinking, seeds,
# LIBLINEAR's generator and warm starts all drawn by hypothesis; the results must agree bit for bit
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 60), d=st.integers(1, 12),
       density=st.floats(0.0, 1.0), scale=st.sampled_from([1e-3, 1.0, 1e3]),
       C=st.floats(1e-3, 1e3), c_neg=st.floats(1e-2, 1e2), loss=st.sampled_from(["l1", "l2"]),
       shrinking=st.booleans(), liblinear_rng=st.booleans(), warm=st.booleans(),
       budget=st.sampled_from([None, 1, 50, 5000]))
def test_engines_agree_on_generated_problems(seed, n, d, density, scale, C, c_neg, loss,
                                              shrinking, liblinear_rng, warm, budget):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: scale * rng.normal(size=k))
    X.sort_indices()
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    start = rng.uniform(0.0, 2.0 * C, n) if warm else None
    kw = dict(eps=1e-3, max_iter=200, seed=seed % 1000, liblinear_rng=liblinear_rng,
              shrinking=shrinking)
    jit = run(X, y, C, loss=loss, C_neg=c_neg, dcd=DcdParams(engine="jit", init_alpha=start),
              **kw)
    other = (DcdParams(engine="python", init_alpha=start) if budget is None
             else DcdParams(python_budget=budget, init_alpha=start))
    py = run(X, y, C, loss=loss, C_neg=c_neg, dcd=other, **kw)
    assert_same_result(py, jit)


@pytest.mark.parametrize("loss", ["l1", "l2"])
@pytest.mark.parametrize("budget", [1, 20000, 2**62])
def test_both_loops_leave_the_same_state_records(loss, budget):
    # the jitted loop and its twin read and write the same BOX / LOOP records: one call of
    # each from the same state (stopped by the work budget, or run to convergence) leaves the
    # same alpha, w, permutation, generator and LOOP fields (all but the prefetch sink)
    from svmtool.solvers.common.rng import splitmix_state
    from svmtool.solvers.dual_cd import _dcd_py
    from svmtool.solvers.dual_cd._dcd_jit import _dcd_iterations
    from svmtool.solvers.dual_cd._dcd_state import new_box, new_loop

    X, y = load(HEART)
    n, d = X.shape
    indptr = X.indptr.astype(np.int64)
    box = new_box(loss, 2.0, 0.7)
    pos = y > 0
    diag = np.where(pos, box[0]["d_pos"], box[0]["d_neg"])
    qd = diag + np.asarray(X.multiply(X).sum(axis=1)).ravel()

    def state():
        return (X.indices.astype(np.uint32), X.data.astype(np.float64), y.astype(np.float64), qd,
                np.zeros(n), np.zeros(d), np.arange(n, dtype=np.uint32), box.copy(), new_loop(n),
                splitmix_state(3))

    options = (False, True, 1e-3, 1000)
    a, b = state(), state()
    ha, hb = np.empty((1000, 3)), np.empty((1000, 3))
    no_rows = np.empty(0, dtype=np.float64)
    done_jit = _dcd_iterations(indptr.view(np.uint64), *a, *options, np.uint64(budget), ha,
                               no_rows, no_rows, False)
    done_py, _work = _dcd_py.dcd_iterations(indptr, *b, *options, budget, hb)
    assert done_jit == done_py >= 1
    for x, z in zip(a[4:7] + a[9:], b[4:7] + b[9:]):
        assert np.array_equal(x, z)
    la, lb = a[8][0], b[8][0]
    for field in ("pg_max_old", "pg_min_old", "active", "iterations", "converged"):
        assert la[field] == lb[field], field
    assert la["iterations"] == done_jit
    assert bool(la["converged"]) == (budget == 2**62)
    if budget == 20000:                 # stopped mid-run with rows shrunk away
        assert 0 < la["active"] < n and la["pg_max_old"] < np.inf
    assert np.array_equal(ha[:done_jit], hb[:done_py])

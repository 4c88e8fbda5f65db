"""The batched working-set SMO (svmtool.solvers.kernel.bsmo) against LIBSVM as contract: the
same stopping rule met (the maximal violating pair recomputed here in numpy from the returned
alpha and an independently computed kernel), LIBSVM's objective, support vectors within 1% and
the same decision values, for C-SVC, nu-SVC, one-class and epsilon-SVR; working sets far
smaller than the problem so the outer loop runs many times."""

import numpy as np
import pytest
from conftest import DATA

from svmtool.io.svmlight import load_svmlight
from svmtool.ops.kernels import Kernel, Rows
from svmtool.params import KernelParams, SvrParams
from svmtool.solvers.kernel import bsmo, smo

svmutil = pytest.importorskip("libsvm.svmutil")

GAMMA = 1 / 13


@pytest.fixture(scope="module")
def heart():
    return load_svmlight(DATA / "heart_scale")


def _kd(prob):
    X = Rows(prob.indptr, prob.indices, prob.data, n_features=prob.n_features)
    return smo.KernelData(X, Kernel(2, GAMMA, 0.0, 3, 0.0))


def _rbf(prob):
    D = prob.X.toarray()
    sq = (D * D).sum(1)
    return np.exp(-GAMMA * np.maximum(sq[:, None] + sq[None, :] - 2 * D @ D.T, 0.0))


def _libsvm(prob, opts, capfd):
    """(model, the obj value printed) of libsvm-official."""
    capfd.readouterr()
    model = svmutil.svm_train(list(prob.y), prob.X, opts)
    out = capfd.readouterr().out
    obj = [float(s.split("obj = ")[1].split(",")[0]) for s in out.splitlines()
           if s.startswith("obj = ")][0]
    return model, obj


def _violation(alpha, y, C, G):
    """max over I_up of -y G minus min over I_low of -y G (LIBSVM's stopping measure)."""
    up = np.where(y > 0, alpha < C, alpha > 0)
    low = np.where(y > 0, alpha > 0, alpha < C)
    f = -y * G
    return f[up].max() - f[low].min()


def _signs(prob):
    return np.where(prob.y == prob.y[0], 1.0, -1.0)


CASES = {
    "c_svc": ("-s 0 -c 4", lambda kd, prob, kw: smo.solve_c_svc(kd, _signs(prob), 4.0, 4.0,
                                                                 **kw)),
    "nu_svc": ("-s 1 -n 0.4", lambda kd, prob, kw: smo.solve_nu_svc(kd, _signs(prob), 0.4,
                                                                    **kw)),
    "one_class": ("-s 2 -n 0.3", lambda kd, prob, kw: smo.solve_one_class(kd, 0.3, **kw)),
    "epsilon_svr": ("-s 3 -c 2 -p 0.2",
                    lambda kd, prob, kw: smo.solve_epsilon_svr(kd, prob.y, 2.0, 0.2, **kw)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_batched_as_libsvm(heart, name, capfd):
    opts, run = CASES[name]
    ref, ref_obj = _libsvm(heart, f"{opts} -e 1e-4 -g {GAMMA!r}", capfd)
    kd = _kd(heart)
    sol = run(kd, heart, dict(eps=1e-4, working_set="batched", q=32))
    assert sol.converged and sol.extra["outer"] > 3
    assert abs(sol.obj - ref_obj) <= 1e-3 * max(1.0, abs(ref_obj))
    assert abs(sol.n_sv - ref.l) <= max(1, 0.01 * ref.l)
    K = _rbf(heart)
    dec = K @ sol.coef - sol.rho
    _, _, ref_dec = svmutil.svm_predict(list(heart.y), heart.X, ref, "-q")
    ref_dec = np.array(ref_dec)[:, 0]
    if name in ("c_svc", "nu_svc") and ref.label[0] != heart.y[0]:
        ref_dec = -ref_dec
    assert np.max(np.abs(dec - ref_dec)) < 1e-2 * max(1.0, np.abs(ref_dec).max())
    clear = np.abs(ref_dec) > 1e-2 * max(1.0, np.abs(ref_dec).max())   # off the margin
    assert np.mean(np.sign(dec[clear]) == np.sign(ref_dec[clear])) >= 0.99


def test_stopping_rule_recomputed_independently(heart):
    """C-SVC: LIBSVM's rule at the returned alpha, G = Q alpha - e from numpy's kernel."""
    y = _signs(heart)
    C = np.where(y > 0, 2.0, 3.0)            # a per-variable bound array (class weights)
    kd = _kd(heart)
    l = len(y)
    res = smo.solve(kd, np.arange(l), y, -np.ones(l), C, np.zeros(l), eps=1e-3,
                    working_set="batched", q=16)
    assert res.converged and res.extra["outer"] > 3
    G = y * (_rbf(heart) @ (y * res.alpha)) - 1.0
    assert _violation(res.alpha, y, C, G) < 1e-3 + 1e-5
    assert abs(y @ res.alpha) < 1e-9 and res.alpha.min() >= 0 and np.all(res.alpha <= C)
    pair = smo.solve(kd, np.arange(l), y, -np.ones(l), C, np.zeros(l), eps=1e-3,
                     working_set="pair")
    assert abs(res.obj - pair.obj) <= 1e-3 * abs(pair.obj)


def test_working_set_choice():
    assert bsmo.use_batched(None, 10, "batched") and not bsmo.use_batched(None, 10**7, "pair")
    with pytest.raises(ValueError):
        bsmo.use_batched(None, 10, "both")
    assert bsmo.working_set_size(100_000, 100_000, 1.0) < bsmo.working_set_size(100_000,
                                                                                 100_000, 1000.0)


def test_auto_routes_a_large_svr_through_the_batched_solver(capfd):
    """epsilon-SVR of 2600 rows (5200 variables: above the automatic choice's threshold) by
    svmtool's train: LIBSVM's obj and support vectors."""
    import scipy.sparse as sp

    from svmtool.api import train
    from svmtool.params import TrainParams
    from svmtool.problem import Problem

    rng = np.random.default_rng(3)
    D = np.round(rng.uniform(-1, 1, (2600, 5)), 3)
    z = np.round(np.sin(3 * D[:, 0]) + D[:, 1] * D[:, 2] + 0.1 * rng.normal(size=2600), 3)
    assert bsmo.use_batched(None, 2 * len(z))
    X = sp.csr_matrix(D)
    prob = Problem(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, z, 5)
    capfd.readouterr()
    ref = svmutil.svm_train(list(z), X, "-s 3 -c 4 -p 0.1 -g 0.5 -e 1e-3")
    out = capfd.readouterr().out
    ref_obj = [float(s.split("obj = ")[1].split(",")[0]) for s in out.splitlines()
               if s.startswith("obj = ")][0]
    m = train(prob, TrainParams(solver="epsilon_svr", C=4.0, eps=1e-3,
                                kernel=KernelParams(gamma=0.5), svr=SvrParams(p=0.1)))
    rep = m.report["classes"][0]
    assert rep["converged"] and rep["outer"] > 0          # the batched solver's outer steps
    assert abs(rep["obj"] - ref_obj) <= 1e-3 * abs(ref_obj)
    assert abs(m.total_sv - ref.l) <= 0.01 * ref.l


@pytest.mark.parametrize("name", ["c_svc", "epsilon_svr"])
def test_threads_change_no_bit(heart, name, monkeypatch):
    """The element-wise passes split over threads (kernel rows from the bulk products, the
    set's block, the gradient's sums) compute every value as one thread does: the same
    coefficients, offset and objective, bit for bit, for 1 and 2 threads (splits forced down
    to a few values)."""
    monkeypatch.setattr(bsmo, "SPLIT_MIN", 8)
    _, run = CASES[name]
    out = []
    for threads in (1, 2, 3):
        kd = _kd(heart)
        kd.threads = threads
        sol = run(kd, heart, dict(eps=1e-4, working_set="batched", q=32))
        assert sol.converged and sol.extra["outer"] > 3
        out.append(sol)
    assert kd.use_dense or name != "c_svc", "heart_scale's narrow rows take the dense path"
    for other in out[1:]:
        assert np.array_equal(out[0].coef, other.coef) and out[0].rho == other.rho
        assert out[0].obj == other.obj and out[0].iterations == other.iterations


def test_split_runs_its_first_range_in_the_caller(heart):
    """A split over t threads runs its first range in the calling thread and the others on
    the pool's threads, each range once; an error in the caller's range comes out only after
    the workers' ranges ran (none writes into the buffers after the call returned), and it
    is the one raised when a worker's range fails too; a worker's error alone comes out."""
    import threading
    import time

    kd = _kd(heart)
    kd.threads = 3
    buf = bsmo.RowBuffer(kd, 32, 100.0)
    try:
        seen = []

        def fn(w, a, b):
            seen.append((w, a, b, threading.get_ident()))

        buf.in_parts(fn, 90, 3)
        me = threading.get_ident()
        assert sorted(s[:3] for s in seen) == [(0, 0, 30), (1, 30, 60), (2, 60, 90)]
        assert [s[3] == me for s in sorted(seen)] == [True, False, False]

        done = []

        def failing(w, a, b):
            if w == 0:
                raise RuntimeError("range 0")
            time.sleep(0.05)
            done.append(w)
            if w == 2:
                raise ValueError("range 2")

        with pytest.raises(RuntimeError, match="range 0"):
            buf.in_parts(failing, 90, 3)
        assert sorted(done) == [1, 2]
        with pytest.raises(ValueError, match="range 2"):
            buf.in_parts(lambda w, a, b: failing(w, a, b) if w else None, 90, 3)
    finally:
        buf.close()


@pytest.mark.parametrize("name", ["c_svc", "epsilon_svr"])
def test_cheap_rows_held_for_two_sets_change_no_bit(heart, name, monkeypatch):
    """Narrow dense rows (heart_scale's 13 features) are held for SLOTS_PER_SET working sets
    only, whatever ``-m`` allows: the solver computes more of them again, and every value is
    the one a cache holding every row gives (coefficients, offset, objective, steps)."""
    _, run = CASES[name]
    out = []
    for per_set in (bsmo.SLOTS_PER_SET, 10 ** 6):
        monkeypatch.setattr(bsmo, "SLOTS_PER_SET", per_set)
        kd = _kd(heart)
        assert bsmo.row_slots(kd, 32, 100.0) == min(kd.l, per_set * 32)
        sol = run(kd, heart, dict(eps=1e-4, working_set="batched", q=32, cache_mb=100.0))
        assert sol.converged and sol.extra["outer"] > 3
        out.append(sol)
    assert out[0].extra["rows_computed"] > out[1].extra["rows_computed"]
    assert np.array_equal(out[0].coef, out[1].coef) and out[0].rho == out[1].rho
    assert out[0].obj == out[1].obj and out[0].iterations == out[1].iterations


def test_rows_by_column_blocks_are_the_kernel(heart, monkeypatch):
    """Dense rows computed COL_BLOCK points at a time (here 7: 39 blocks and a remainder over
    heart_scale's 270 points, on 2 threads) are the rows of one block, bit for bit, and the
    rbf kernel computed here in numpy, rounded to float32."""
    pts = np.arange(0, 270, 5, dtype=np.int64)
    rows = []
    for block in (7, 4096):
        monkeypatch.setattr(bsmo, "COL_BLOCK", block)
        kd = _kd(heart)
        kd.threads = 2
        buf = bsmo.RowBuffer(kd, 32, 100.0)
        try:
            slots = buf.place(pts)
            rows.append(buf.rows[slots].copy())
        finally:
            buf.close()
    assert np.array_equal(rows[0], rows[1])
    want = _rbf(heart)[pts].astype(np.float32)
    assert np.allclose(rows[0], want, rtol=2e-7, atol=1e-30)


def test_wide_or_sparse_rows_fill_the_cache():
    """Rows that cost more than their memory (sparse ones, or dense ones wider than
    CHEAP_ROW_FEATURES) keep LIBSVM's rule: as many as ``-m`` holds."""
    prob = load_svmlight(DATA / "a9a")
    X, _ = _head(prob, 2000)
    kd = smo.KernelData(X, Kernel(2, 0.05, 0.0, 3, 0.0))
    assert not (kd.use_dense and kd.dense.shape[1] <= bsmo.CHEAP_ROW_FEATURES)
    assert bsmo.row_slots(kd, 32, 100.0) == 2000
    assert bsmo.row_slots(kd, 32, 1.0) == (1 << 20) // (4 * 2000)


def _head(prob, n):
    ip = prob.indptr[:n + 1]
    X = Rows(ip, prob.indices[:ip[-1]], prob.data[:ip[-1]], n_features=prob.n_features)
    D = np.zeros((n, prob.n_features))
    for i in range(n):
        D[i, prob.indices[ip[i]:ip[i + 1]]] = prob.data[ip[i]:ip[i + 1]]
    return X, D


@pytest.mark.parametrize("path,n,gamma", [("heart_scale", 270, GAMMA), ("a9a", 3000, 0.05)])
@pytest.mark.parametrize("form", ["c_svc", "epsilon_svr"])
def test_shrinking_meets_the_rule_over_all_variables(path, n, gamma, form):
    """With shrinking (LIBSVM's -h 1, the default; a cache that cannot hold every row) the rows
    are laid out afresh over fewer and fewer points (heart_scale takes the dense path, a9a's
    rows the sparse one); at the end the gradient of every variable, dropped or not, is
    Q alpha + p as numpy computes it, LIBSVM's rule holds over all of them, and the objective is
    the one reached without shrinking."""
    prob = load_svmlight(DATA / path)
    X, D = _head(prob, n)
    sq = (D * D).sum(1)
    K = np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * D @ D.T, 0.0))
    if form == "c_svc":
        y = _signs(prob)[:n]
        xi, p, C = np.arange(n), -np.ones(n), np.where(y > 0, 4.0, 2.0)
    else:                                    # two variables per point, as LIBSVM's SVR
        target = D[:, 0] - D[:, 1]
        xi = np.concatenate([np.arange(n), np.arange(n)])
        y = np.concatenate([np.ones(n), -np.ones(n)])
        p = np.concatenate([0.1 - target, 0.1 + target])
        C = np.full(2 * n, 2.0)
    got = {}
    for shrinking in (True, False):
        kd = smo.KernelData(X, Kernel(2, gamma, 0.0, 3, 0.0))
        got[shrinking] = smo.solve(kd, xi, y, p, C, np.zeros(len(y)), eps=1e-3,
                                   working_set="batched", q=32, shrinking=shrinking,
                                   cache_mb=0.1)   # (fewer rows than all: it shrinks)
    assert bsmo.rows_overflow(len(y), n, 0.1) and not bsmo.rows_overflow(len(y), n, 100.0)
    res = got[True]
    assert res.converged and res.extra["layouts"] > 2 and got[False].extra["layouts"] == 1
    Q = (y[:, None] * y[None, :]) * K[np.ix_(xi, xi)]
    G = Q @ res.alpha + p
    np.testing.assert_allclose(res.G, G, rtol=0, atol=1e-4)   # (float32 rows)
    assert _violation(res.alpha, y, C, G) < 1e-3 + 1e-4
    assert abs(res.obj - got[False].obj) <= 1e-5 * abs(got[False].obj)


@pytest.mark.parametrize("populate", [False, True])
def test_mapped_memory_is_zeroed_and_writable(populate):
    """The row buffer's memory (a private anonymous map, its pages faulted in at once when
    asked): zeros of the asked size and type, writable, and each array its own memory."""
    a = bsmo._mapped(100_000, np.float32, populate=populate)
    b = bsmo._mapped(100_000, np.float32, populate=populate)
    assert a.dtype == np.float32 and a.shape == (100_000,) and not a.any()
    a[:] = 1.5
    assert a.sum() == 150_000.0 and not b.any()


def _plain_selection(alpha, y, C, G, nu, q, prev):
    """The working set rule read literally, in Python: the lists of I_up by decreasing -y G
    and of I_low by increasing -y G (ties by k * 2654435761 mod 2^32; per sign for nu: positive up,
    positive low, negative up, negative low), each cut to n_new // (the number of lists),
    taken alternately without repeats up to n_new, then the last set's others, free first."""
    n = len(y)
    n_new = q if len(prev) == 0 else q // 2
    signs = [0] if not nu else [1, -1]
    per = max(1, n_new // (2 * len(signs)))
    lists = []
    for s in signs:
        ok = [k for k in range(n) if s == 0 or y[k] * s > 0]
        up = [k for k in ok if (alpha[k] < C[k] if y[k] > 0 else alpha[k] > 0)]
        low = [k for k in ok if (alpha[k] > 0 if y[k] > 0 else alpha[k] < C[k])]
        lists.append(sorted(up, key=lambda k: (y[k] * G[k], k * 2654435761 % 2**32))[:per])
        lists.append(sorted(low, key=lambda k: (-y[k] * G[k], k * 2654435761 % 2**32))[:per])
    out = []
    for r in range(per):
        for lst in lists:
            if r < len(lst) and lst[r] not in out and len(out) < n_new:
                out.append(lst[r])
    rest = [v for v in prev if v not in out]
    free = [v for v in rest if 0 < alpha[v] < C[v]]
    rest = free + [v for v in rest if v not in free]
    return out + rest[:q - len(out)]


@pytest.mark.parametrize("nu", [False, True])
def test_working_set_selection_as_its_rule_reads(nu):
    """bsmo.select_working_set against the rule read literally, on problems with many ties of
    -y G (gradients of few values, alphas at both bounds) and with or without a last set."""
    rng = np.random.default_rng(5)
    for trial in range(40):
        n = int(rng.integers(3, 60))
        y = rng.choice([-1.0, 1.0], n)
        C = rng.choice([1.0, 2.0], n)
        alpha = np.where(rng.random(n) < 0.3, 0.0, np.where(rng.random(n) < 0.4, C,
                                                            rng.random(n) * C))
        G = rng.integers(-3, 3, n) / 2.0
        q = int(rng.integers(2, n + 1))
        prev = rng.permutation(n)[:int(rng.integers(0, q + 1))] if trial % 3 else []
        prev = np.asarray(prev, dtype=np.int64)
        got = bsmo.select_working_set(alpha, y, C, G, nu, q, prev)
        assert list(got) == _plain_selection(alpha, y, C, G, nu, q, list(prev)), trial


def test_block_from_the_last_set_is_the_kernel_block():
    """The set's block assembled from the new variables' kernel rows, the last set's block and
    symmetry equals the kernel matrix at the set's points, whatever the overlap of the sets."""
    from svmtool.solvers.kernel._bsmo_jit import assemble_block

    rng = np.random.default_rng(2)
    l = 50
    S = rng.random((l, l)).astype(np.float32)
    S = S + S.T                                   # a symmetric "kernel" over l points
    for trial in range(20):
        last = rng.permutation(l)[:int(rng.integers(1, 20))]
        ws = np.concatenate([rng.permutation(l)[:int(rng.integers(0, 10))],
                             rng.permutation(last)[:int(rng.integers(0, len(last) + 1))]])
        ws = np.unique(ws)[rng.permutation(len(np.unique(ws)))]
        if len(ws) == 0:
            continue
        where = {v: k for k, v in enumerate(last)}
        prev_at = np.array([where.get(v, -1) for v in ws], dtype=np.int64)
        Kprev = S[np.ix_(last, last)].astype(np.float64)
        slots = rng.permutation(len(ws)).astype(np.int64)
        KB = np.zeros((len(ws), l), dtype=np.float32)
        KB[slots] = S[ws]                         # the set's kernel rows, in their slots
        pts = ws.astype(np.int64)                 # (rows laid out over every point)
        order = np.argsort(pts, kind="stable")
        K = np.full((len(ws), len(ws)), np.nan)
        for phase in (0, 1):                      # the new rows first
            which = np.flatnonzero((prev_at >= 0) == bool(phase))
            assemble_block(KB, slots, pts, order, prev_at, Kprev, K, which, 0, len(which), phase)
        np.testing.assert_array_equal(K, S[np.ix_(ws, ws)].astype(np.float64))

"""DC-SVM: levels, two-step kernel k-means, early prediction (eq. 11), early model files."""

import numpy as np
import pytest
import scipy.sparse as sp

from svmtool import api
from svmtool.io.model_io import load_model, save_model
from svmtool.models.early import EarlyModel, LocalPair
from svmtool.ops.kernels import Kernel, Rows
from svmtool.params import DcsvmParams, KernelParams, TrainParams
from svmtool.problem import Problem
from svmtool.solvers.dcsvm import dcsvm
from svmtool.solvers.kernel.kernel_cd import solve
from svmtool.solvers.dcsvm.kmeans import two_step

from tests.conftest import run_cli, shared_file, write_svmlight
from tests.test_kernel_cd import dense_qp, objective
from tests.test_kernels import numpy_kernel


@pytest.fixture(autouse=True)
def divide_small_problems(monkeypatch):
    # the tests divide problems far smaller than DC-SVM's own threshold, into few clusters
    monkeypatch.setattr(dcsvm, "DC_MIN_ROWS", 0)
    monkeypatch.setattr(dcsvm, "MIN_LEVEL_CLUSTERS", 1)
    monkeypatch.setattr(dcsvm, "MIN_EXACT_CLUSTER_ROWS", 0)


def moons(n=600, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, np.pi, n)
    up = rng.random(n) < 0.5
    x = np.where(up, np.cos(t), 1 - np.cos(t))
    z = np.where(up, np.sin(t), 0.5 - np.sin(t))
    Xd = np.column_stack([x, z]) + rng.normal(scale=0.15, size=(n, 2))
    return Problem.from_matrix(sp.csr_matrix(Xd), np.where(up, 1.0, -1.0))


def params(early=None, **dcsvm_opts):
    if early is not None:
        dcsvm_opts.update(early=True, early_level=early or None)
    return TrainParams(solver="dcsvm", C=4.0, eps=1e-6, threads=2,
                       kernel=KernelParams(kernel_type=2, gamma=2.0),
                       dcsvm=DcsvmParams(**dcsvm_opts))


def test_one_level_one_cluster_is_the_plain_solver():
    prob = moons(60)          # 60 rows: the cluster cap leaves a single cluster
    X = Rows.of(prob)
    plain = solve(X, prob.y, 4.0, Kernel(2, 2.0), eps=1e-6)
    res = dcsvm.fit(X, prob.y, 4.0, Kernel(2, 2.0), params(levels=1, level_eps=1e-6))
    assert res.extra["levels"][0]["clusters"] == 1
    assert res.extra["levels"][0]["objective"] == plain.dual      # the level is the plain solve
    assert abs(res.dual - plain.dual) <= 1e-7 * abs(plain.dual)


def test_exact_dcsvm_reaches_the_qp_optimum():
    prob = moons(400, seed=2)
    X = Rows.of(prob)
    k = Kernel(2, 2.0)
    res = dcsvm.fit(X, prob.y, 4.0, k, params(levels=3, k_clusters=2, sample=200))
    lv = [s["level"] for s in res.extra["levels"]]
    assert lv[:3] == [3, 2, 1] and lv[-1] == 0
    assert [s["clusters"] for s in res.extra["levels"][:3]] == [8, 4, 2]
    Q = np.outer(prob.y, prob.y) * numpy_kernel(prob.X.toarray(), prob.X.toarray(), k)
    f_ref = objective(Q, dense_qp(Q, 4.0, iters=6000))
    assert abs(-res.dual - f_ref) <= 1e-6 * abs(f_ref)
    assert abs(objective(Q, res.alpha) - f_ref) <= 1e-6 * abs(f_ref)


def test_two_step_kmeans_linear_kernel_is_nearest_mean():
    # with the linear kernel the feature-space centres are plain means: check step 2 by numpy
    rng = np.random.default_rng(4)
    blobs = np.array([[0, 0], [6, 0], [0, 6]])
    Xd = blobs[rng.integers(0, 3, 300)] + rng.normal(scale=0.5, size=(300, 2))
    X = Rows.of(sp.csr_matrix(Xd))
    cl = two_step(X, np.arange(300), 3, 90, Kernel(0), rng)
    assert cl.nr_cluster == 3
    means = np.array([Xd[cl.sample_rows[cl.sample_cluster == k]].mean(0) for k in range(3)])
    want = np.argmin(((Xd[:, None, :] - means[None]) ** 2).sum(-1), axis=1)
    np.testing.assert_array_equal(cl.assign, want)
    # well separated blobs come out whole
    truth = np.argmin(((Xd[:, None, :] - blobs[None]) ** 2).sum(-1), axis=1)
    assert len(set(zip(truth.tolist(), cl.assign.tolist()))) == 3
    np.testing.assert_allclose(cl.const, (means ** 2).sum(1), rtol=1e-10)


def test_coarsen_nests_fine_clusters_by_nearest_centre():
    # linear kernel: feature-space centres are plain means, so the rule can be checked by numpy
    from svmtool.solvers.dcsvm.kmeans import coarsen

    rng = np.random.default_rng(5)
    blobs = np.array([[0, 0], [8, 0], [0, 8], [8, 8]])
    Xd = blobs[rng.integers(0, 4, 400)] + rng.normal(scale=1.5, size=(400, 2))
    X = Rows.of(sp.csr_matrix(Xd))
    fine = two_step(X, np.arange(400), 16, 200, Kernel(0), rng)
    cand = np.arange(0, 400, 2)
    coarse = coarsen(X, fine, cand, 4, 100, Kernel(0), rng)
    # nested: every fine cluster lies in one coarse cluster
    for c in range(fine.nr_cluster):
        assert len(np.unique(coarse.assign[fine.assign == c])) == 1
    # each fine cluster joined the coarse centre nearest to its own centre (means)
    fine_means = np.array([Xd[fine.sample_rows[fine.sample_cluster == c]].mean(0)
                           for c in range(fine.nr_cluster)])
    cmeans = np.array([Xd[coarse.sample_rows[coarse.sample_cluster == k]].mean(0)
                       for k in range(coarse.nr_cluster)])
    want = np.argmin(((fine_means[:, None, :] - cmeans[None]) ** 2).sum(-1), axis=1)
    got = np.array([coarse.assign[fine.assign == c][0] for c in range(fine.nr_cluster)])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(coarse.const, (cmeans ** 2).sum(1), rtol=1e-10)
    assert set(coarse.sample_rows.tolist()) <= set(cand.tolist())


def test_conquer_from_a_poor_start_meets_eps_on_every_row():
    from svmtool.solvers.dcsvm.dcsvm_conquer import conquer, result_fields

    prob = moons(500, seed=7)
    X = Rows.of(prob)
    k = Kernel(2, 2.0, kbias=1.0)
    C = np.full(prob.n_rows, 4.0)
    alpha = np.where(np.arange(prob.n_rows) % 7 == 0, 2.0, 0.0)    # a few arbitrary "SVs"
    last, G, info = conquer(X, prob.y, C, k, alpha, eps=1e-6, threads=2)
    assert len(info["rounds"]) >= 2                 # violators outside W had to join
    Q = np.outer(prob.y, prob.y) * numpy_kernel(prob.X.toarray(), prob.X.toarray(), k)
    np.testing.assert_allclose(G, Q @ alpha - 1.0, rtol=0, atol=1e-9)   # G exact on all rows
    assert not info["gradient_error"].any()         # (eps below SINGLE_MIN_EPS: in double)
    f, _, viol = result_fields(alpha, G, C, 1e-6)
    assert viol <= 1e-6
    f_ref = objective(Q, dense_qp(Q, 4.0, iters=6000))
    assert abs(f - f_ref) <= 1e-6 * abs(f_ref)


def test_conquer_single_precision_expansions_within_their_bound():
    """At eps >= SINGLE_MIN_EPS the expansions of dense rbf rows take float32 exponentials:
    G outside W within the bound the conquer step keeps (0 on W and on the rows made exact
    because the bound alone could make them violate), the reported violation that
    bound's worst case, and the exact gradient's projected violation within eps on every row
    (the certificate holds for the true gradient, not only the approximate one)."""
    from svmtool.solvers.dcsvm.dcsvm_conquer import SINGLE_MIN_EPS, conquer, result_fields

    prob = moons(800, seed=5)
    X = Rows.of(prob)
    k = Kernel(2, 2.0, kbias=1.0)
    C = np.full(prob.n_rows, 32.0)
    alpha = np.where(np.arange(prob.n_rows) % 5 == 0, 8.0, 0.0)
    eps = SINGLE_MIN_EPS
    last, G, info = conquer(X, prob.y, C, k, alpha, eps=eps, threads=2)
    Q = np.outer(prob.y, prob.y) * numpy_kernel(prob.X.toarray(), prob.X.toarray(), k)
    exact = Q @ alpha - 1.0
    E = info["gradient_error"]
    assert E.max() > 0 and not E[alpha > 0].any()
    assert np.all(np.abs(G - exact) <= E + 1e-12)
    assert np.abs(G - exact).max() > 1e-12               # single precision was used
    # rows whose bound alone made them possible violators had their gradient made exact
    assert sum(r["rechecked"] for r in info["rounds"]) > 0
    np.testing.assert_allclose(G[E == 0], exact[E == 0], rtol=0, atol=1e-9)
    f, _, viol = result_fields(alpha, G, C, eps, E)
    assert viol <= eps
    pg = np.where(alpha <= 0, np.minimum(exact, 0),
                  np.where(alpha >= C, np.maximum(exact, 0), exact))
    assert np.abs(pg).max() <= eps + 1e-9


def test_conquer_from_zero_meets_eps_although_w_is_every_row():
    """alpha = 0 puts every row in W at once: the first (loose) round must not be the last, the
    loop goes on to a solve at eps."""
    from svmtool.solvers.dcsvm.dcsvm_conquer import conquer, result_fields

    prob = moons(300, seed=3)
    X = Rows.of(prob)
    k = Kernel(2, 2.0, kbias=1.0)
    C = np.full(prob.n_rows, 4.0)
    alpha = np.zeros(prob.n_rows)
    last, G, info = conquer(X, prob.y, C, k, alpha, eps=1e-6, threads=2)
    f, _, viol = result_fields(alpha, G, C, 1e-6)
    assert viol <= 1e-6
    Q = np.outer(prob.y, prob.y) * numpy_kernel(prob.X.toarray(), prob.X.toarray(), k)
    f_ref = objective(Q, dense_qp(Q, 4.0, iters=6000))
    assert abs(f - f_ref) <= 1e-6 * abs(f_ref)


def tiny_early_model():
    """Hand-made: linear kernel, two clusters, one local model each."""
    centres = Rows.of(sp.csr_matrix(np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 0.0]])))
    svs = Rows.of(sp.csr_matrix(np.array([[1.0, 1.0], [0.0, 1.0]])))
    lp = LocalPair(centres=centres, centre_cluster=np.array([0, 0, 1]),
                   centre_const=np.array([1.0, 100.0]),          # |(1,0)|^2, |(10,0)|^2
                   svs=svs, sv_cluster=np.array([0, 1]), sv_coef=np.array([2.0, -1.0]),
                   rho=np.array([0.0, 0.5]))
    return EarlyModel(kernel=Kernel(0), labels=np.array([1.0, -1.0]), pairs=[lp], nr_feature=2,
                      level=1)


def test_early_prediction_is_eq11_by_hand(tmp_path):
    m = tiny_early_model()
    test = sp.csr_matrix(np.array([[2.0, 3.0], [9.0, 1.0], [5.0, -4.0]]))
    # (2,3): nearest centre (1,0) -> 2 * (2 + 3) = 10
    # (9,1): nearest centre (10,0) -> -1 * 1 - 0.5 = -1.5
    # (5,-4): |.-(1,0)|^2 = 32 < |.-(10,0)|^2 = 41 -> 2 * (5 - 4) = 2
    np.testing.assert_allclose(m.decision_function(test)[:, 0], [10.0, -1.5, 2.0])
    np.testing.assert_array_equal(m.predict(test), [1.0, -1.0, 1.0])
    path = tmp_path / "e.model"
    save_model(m, str(path))
    back = load_model(str(path))
    assert isinstance(back, EarlyModel)
    np.testing.assert_array_equal(back.decision_function(test), m.decision_function(test))


def test_early_model_from_training_matches_level_solution(tmp_path):
    prob = moons(500, seed=3)
    model = api.train(prob, params(levels=2, k_clusters=3, sample=150, early=1))
    assert isinstance(model, EarlyModel) and model.level == 1
    lp = model.pairs[0]
    # eq. 11 directly: nearest centre by numpy over the dense kernel, then its local model
    k = Kernel(2, 2.0)
    A = prob.X.toarray()
    C = lp.centres.dense(2)
    KC = numpy_kernel(A, C, k)
    cnt = np.bincount(lp.centre_cluster)
    S = np.stack([KC[:, lp.centre_cluster == c].sum(1) / cnt[c] for c in range(lp.nr_cluster)], 1)
    near = np.argmin(lp.centre_const[None] - 2 * S, axis=1)
    KS = numpy_kernel(A, lp.svs.dense(2), k)
    want = np.array([KS[i, lp.sv_cluster == near[i]] @ lp.sv_coef[lp.sv_cluster == near[i]]
                     for i in range(len(A))])
    np.testing.assert_allclose(model.decision_function(prob)[:, 0], want, rtol=1e-9, atol=1e-9)
    acc = np.mean(model.predict(prob) == prob.y)
    assert acc > 0.9
    path = tmp_path / "early.model"
    save_model(model, str(path))
    np.testing.assert_array_equal(load_model(str(path)).decision_function(prob),
                                  model.decision_function(prob))


def test_multiclass_dcsvm_equals_kernel_solver():
    from tests.test_libsvm_model import three_class

    prob = three_class(2, n=240)
    p_exact = TrainParams(solver="kernel", C=2.0, eps=1e-7, kernel=KernelParams(kernel_type=2, gamma=1.0))
    p_dc = TrainParams(solver="dcsvm", C=2.0, eps=1e-7,
                       kernel=KernelParams(kernel_type=2, gamma=1.0), dcsvm=DcsvmParams(levels=2, k_clusters=2))
    a, b = api.train(prob, p_exact), api.train(prob, p_dc)
    np.testing.assert_allclose(a.decision_function(prob), b.decision_function(prob), atol=1e-4)
    for ra, rb in zip(a.report["classes"], b.report["classes"]):
        assert abs(ra["dual"] - rb["dual"]) <= 1e-7 * abs(ra["dual"])


def test_cli_early_and_level_report(tmp_path):
    data = tmp_path / "moons.txt"
    prob = moons(2400, seed=5)          # above DC_MIN_ROWS: the CLI runs in a subprocess
    write_svmlight(prob, data)
    model = tmp_path / "m.early"
    r = run_cli("train", "-s", "dcsvm", "-c", "4", "-g", "2", "--levels", "2", "--early",
                "--test", data, data, model)
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "level" in err and "accuracy" in err
    assert model.read_text().startswith("svmtool_early_model 1\n")
    out = tmp_path / "pred"
    r = run_cli("predict", data, model, out)
    assert r.returncode == 0, r.stderr
    m = load_model(str(model))
    np.testing.assert_array_equal(np.array(out.read_text().split(), dtype=float),
                                  m.predict(prob))


@pytest.mark.shared
def test_ijcnn1_subsample_dcsvm_objective():
    from svmtool.io.svmlight import load_data

    prob = load_data(shared_file("ijcnn1", "ijcnn1"))
    keep = np.sort(np.random.default_rng(0).permutation(prob.n_rows)[:3000])
    prob = prob.take_rows(keep)
    X = Rows.of(prob)
    k = Kernel(2, 2.0)
    plain = solve(X, prob.y, 32.0, k, eps=1e-5)
    res = dcsvm.fit(X, prob.y, 32.0, k, TrainParams(solver="dcsvm", C=32.0, eps=1e-5,
                                                    dcsvm=DcsvmParams(levels=3)))
    assert abs(res.dual - plain.dual) <= 1e-3 * abs(plain.dual)


def test_small_problem_is_not_divided_and_early_is_exact(monkeypatch):
    monkeypatch.setattr(dcsvm, "DC_MIN_ROWS", 10_000)
    prob = moons(300, seed=6)
    exact = api.train(prob, TrainParams(solver="kernel", C=4.0, eps=1e-6,
                                        kernel=KernelParams(kernel_type=2, gamma=2.0)))
    early = api.train(prob, params(early=2))
    assert isinstance(early, EarlyModel) and early.pairs[0].nr_cluster == 1
    np.testing.assert_allclose(early.decision_function(prob), exact.decision_function(prob),
                               rtol=1e-12, atol=1e-12)


def test_cluster_sums_and_label_check():
    from svmtool.ops.centres import nearest_centre
    from svmtool.solvers.dcsvm.kmeans import cluster_sums

    rng = np.random.default_rng(4)
    block = rng.normal(size=(7, 30))
    lab = rng.integers(0, 5, size=30)
    want = np.zeros((7, 5))
    for s in range(30):
        want[:, lab[s]] += block[:, s]
    np.testing.assert_allclose(cluster_sums(block, lab, 5, np.empty((7, 5))), want, rtol=1e-13)
    # a centre label outside [0, number of clusters) is refused, never written out of bounds
    R = Rows.of(sp.csr_matrix(rng.normal(size=(4, 3))))
    with pytest.raises(ValueError, match="centre labels"):
        nearest_centre(R, np.arange(4), R, np.arange(4), np.array([0, 1, 2, 2]),
                       np.zeros(2), Kernel(0))


@pytest.mark.parametrize("ktype", [1, 2])
def test_nearest_centre_dense_pieces_against_numpy(ktype, monkeypatch):
    """Dense rows go by BLAS pieces with the centre points sorted by cluster (segment sums);
    against a numpy computation of the feature-space distances, with an empty cluster, pieces
    made small and two threads."""
    import svmtool.ops.kernels as kmod
    from svmtool.ops.centres import nearest_centre

    monkeypatch.setattr(kmod, "_PIECE_VALUES", 5 * 40)
    rng = np.random.default_rng(ktype)
    Xd = rng.normal(size=(700, 6))
    X = Rows.of(sp.csr_matrix(Xd))
    assert X.prefers_dense()
    pts = rng.permutation(700)[:40]
    lab = rng.integers(0, 7, 40)
    lab[lab == 3] = 4                         # cluster 3 empty
    k = Kernel(ktype, 0.3, 1.0, 2, 0.5)
    K = numpy_kernel(Xd, Xd[pts], k)
    const = rng.normal(size=7)
    counts = np.bincount(lab, minlength=7)
    S = np.stack([K[:, lab == c].sum(1) / max(counts[c], 1) for c in range(7)], axis=1)
    dist = const[None, :] - 2.0 * S
    dist[:, counts == 0] = np.inf
    got = nearest_centre(X, np.arange(700), X, pts, lab, const, k, threads=2)
    np.testing.assert_array_equal(got, np.argmin(dist, axis=1))


def test_single_precision_exp_against_numpy():
    """The float32 exp of the rbf sums: relative error within 2e-7 of the double precision exp
    over the whole range of exponents it keeps, 0 for positive arguments' clip (exp(0) = 1),
    and the smallest normal float32 from -87 down."""
    from svmtool.ops.kernels32 import exp_nonpositive32

    x = np.concatenate([-np.linspace(0.0, 87.0, 200_001), [-1e-30, -0.5, 3.0, -300.0]])
    x32 = x.astype(np.float32)
    got = x32.copy()
    exp_nonpositive32(got, len(got), np.empty(len(got), dtype=np.int32))
    want = np.exp(np.minimum(np.maximum(x32.astype(np.float64), -87.0), 0.0))
    assert np.max(np.abs(got / want - 1.0)) < 2e-7
    assert got[-2] == 1.0 and got[-1] == np.float32(np.exp(-87.0))


@pytest.mark.parametrize("scale, single", [(1.0, True), (1e16, False)])
def test_rbf_nearest_centre_single_precision_and_its_limit(scale, single, monkeypatch):
    """Dense rbf rows are assigned from float32 kernel sums (ops.kernels32.rbf_pieces32): the
    same nearest centres as a double precision numpy computation on rows of norm about 10
    (ijcnn1's scale: gamma |x|^2 up to 20), two threads, small pieces, a kernel bias; values
    too large for single precision take the double precision path (then the distances agree to
    1e-10), and the float32 path is not entered at all."""
    import svmtool.ops.kernels32 as kmod
    from svmtool.ops.centres import nearest_centres

    calls = []
    real = kmod.rbf_segment_sums32
    monkeypatch.setattr(kmod, "rbf_segment_sums32",
                        lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(kmod, "_PIECE_VALUES", 7 * 60)
    rng = np.random.default_rng(11)
    Xd = rng.uniform(-1.0, 1.0, size=(900, 22)) * scale
    X = Rows.of(sp.csr_matrix(Xd))
    pts = rng.permutation(900)[:60]
    lab = rng.integers(0, 6, 60)
    k = Kernel(2, 0.5 / scale ** 2, 0.0, 3, 1.0)
    K = np.exp(-k.gamma * ((Xd[:, None, :] - Xd[pts][None, :, :]) ** 2).sum(-1)) + k.kbias
    const = rng.normal(size=6) * 0.01 + 1.0
    counts = np.bincount(lab, minlength=6)
    D = const[None, :] - 2.0 * np.stack([K[:, lab == c].mean(1) for c in range(6)], 1)
    near, dist = nearest_centres(X, np.arange(900), X, pts, lab, const, k, 2, threads=2)
    assert bool(calls) == single
    want = np.argsort(D, axis=1, kind="stable")[:, :2]
    gap = np.take_along_axis(D, want, 1)
    np.testing.assert_allclose(dist, gap, rtol=0.0 if single else 1e-10,
                               atol=2e-6 if single else 1e-12)
    # rows whose two nearest clusters are closer than the float32 error may swap: none here
    clear = np.abs(gap[:, 1] - gap[:, 0]) > 1e-5
    assert clear.mean() > 0.99 and counts.min() > 0
    np.testing.assert_array_equal(near[clear], want[clear])


def test_exact_model_dual_objective_against_libsvm_optimum():
    """The exact model's dual objective, sandwiched by LIBSVM's optimum of the same data.

    DC-SVM solves the bias-free dual with the kernel K + b^2 (problem P_b); LIBSVM solves the
    dual with K and the equality y'alpha = 0 (problem L).  Every point feasible for L has the
    same objective in P_b, so opt(P_b) <= opt(L) (as minima of the dual f); and LIBSVM's primal
    solution (w, rho) is a primal point of P_b with bias weight -rho/b, whose primal value is
    L's plus rho^2 / (2 b^2).  With D = -f the reported dual objective:
        -f_L <= D(P_b) <= -f_L + rho^2 / (2 b^2).
    """
    svmutil = pytest.importorskip("libsvm.svmutil")
    from svmtool.io.svmlight import load_data
    from tests.conftest import DATA

    prob = load_data(str(DATA / "a9a")).take_rows(np.arange(2000))
    C, gamma, b = 4.0, 0.5, 1.0
    y = np.where(prob.y > 0, 1.0, -1.0)
    ref = svmutil.svm_train(list(y), prob.X, f"-q -s 0 -t 2 -c {C} -g {gamma} -e 1e-7")
    sv = np.flatnonzero(np.isin(np.arange(prob.n_rows), np.array(ref.get_sv_indices()) - 1))
    coef = np.array([c[0] for c in ref.get_sv_coef()])
    order = np.argsort(np.array(ref.get_sv_indices()) - 1)
    coef = coef[order]
    def rbf(A):
        sq = (A * A).sum(1)
        return np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2.0 * A @ A.T, 0.0))

    K = rbf(prob.X[sv].toarray())
    f_lib = 0.5 * coef @ K @ coef - np.abs(coef).sum()
    rho = float(ref.rho[0])
    res = dcsvm.fit(Rows.of(prob), y, C, Kernel(2, gamma, kbias=b * b),
                    TrainParams(solver="dcsvm", C=C, eps=1e-6, threads=2,
                                kernel=KernelParams(kernel_type=2, gamma=gamma),
                                dcsvm=DcsvmParams(levels=2)))
    assert res.converged and res.extra["levels"][0]["clusters"] == 16
    tol = 1e-6 * abs(f_lib)
    assert -f_lib - tol <= res.dual <= -f_lib + rho * rho / (2 * b * b) + tol
    # and the reported objective is that of the returned alpha
    Q = np.outer(y, y) * (rbf(prob.X.toarray()) + b * b)
    assert abs(objective(Q, res.alpha) + res.dual) <= 1e-9 * abs(res.dual)


def test_early_level_plan_skips_finer_levels_on_large_problems():
    """--early keeps the finer level (it picks the early level's sample among its support
    vectors) below EARLY_FINE_MAX_ROWS rows and starts at its own level from there on, unless
    every level's model is kept."""
    big = dcsvm.EARLY_FINE_MAX_ROWS
    assert dcsvm.level_plan(big - 1, 4, 4, early=3, keep_levels=False) == [(4, 256), (3, 64)]
    assert dcsvm.level_plan(big, 4, 4, early=3, keep_levels=False) == [(3, 64)]
    assert dcsvm.level_plan(big, 4, 4, early=3, keep_levels=True) == [(4, 256), (3, 64)]
    # the exact model's plan does not change
    assert dcsvm.level_plan(big, 4, 4, early=None, keep_levels=False) == \
        dcsvm.level_plan(big - 1, 4, 4, early=None, keep_levels=False)


def test_early_levels_single_precision_rows_exact_levels_double(monkeypatch):
    """The early model's level subproblems ask for float32 rbf rows (dcsvm.EARLY_SINGLE_ROWS),
    the exact model's levels and conquer step do not; the early model made with float32 rows
    predicts as the one made in double (decision values within 1e-4 of their scale)."""
    seen = []
    real = dcsvm.solve

    def spy(*a, **kw):
        seen.append(kw.get("single", False))
        return real(*a, **kw)

    monkeypatch.setattr(dcsvm, "solve", spy)
    prob = moons(500, seed=4)
    opts = dict(levels=2, k_clusters=3, sample=150)
    early = api.train(prob, params(early=1, **opts))
    assert seen and all(seen)
    seen.clear()
    api.train(prob, params(**opts))
    assert seen and not any(seen)
    monkeypatch.setattr(dcsvm, "EARLY_SINGLE_ROWS", False)
    seen.clear()
    double = api.train(prob, params(early=1, **opts))
    assert seen and not any(seen)
    d1, d2 = early.decision_function(prob)[:, 0], double.decision_function(prob)[:, 0]
    assert np.abs(d1 - d2).max() <= 1e-4 * np.abs(d2).max()
    assert np.array_equal(early.predict(prob), double.predict(prob))


def test_row_cache_memory_is_reused_across_levels_and_conquer_rounds(monkeypatch):
    """A fit's solves share their row cache memory (CacheArena): the levels' subproblems take
    the free arenas of earlier ones (no more arenas than threads), the conquer step's rounds one
    arena, the levels' largest; the solution is that of a fresh arena for every solve."""
    import svmtool.solvers.dcsvm.dcsvm_conquer as conquer_mod

    seen = {"level": [], "conquer": []}

    def spy(where, real):
        def call(*a, **kw):
            seen[where].append(kw["arena"])
            return real(*a, **kw)
        return call

    prob = moons(500, seed=5)
    opts = dict(levels=3, k_clusters=2, sample=150)
    monkeypatch.setattr(dcsvm, "solve", spy("level", dcsvm.solve))
    monkeypatch.setattr(conquer_mod, "solve", spy("conquer", conquer_mod.solve))
    shared = api.train(prob, params(**opts))
    levels = {id(a) for a in seen["level"]}
    assert len(seen["level"]) >= 8 and 1 <= len(levels) <= 2
    assert len(seen["conquer"]) >= 2 and len({id(a) for a in seen["conquer"]}) == 1
    assert id(seen["conquer"][0]) in levels
    biggest = max(seen["level"], key=lambda a: a.buf.size)
    assert seen["conquer"][0].buf.size >= biggest.buf.size

    from svmtool.solvers.kernel import kernel_cd

    def fresh_arena(*a, **kw):
        return kernel_cd.solve(*a, **dict(kw, arena=kernel_cd.CacheArena()))

    monkeypatch.setattr(dcsvm, "solve", fresh_arena)
    monkeypatch.setattr(conquer_mod, "solve", fresh_arena)
    alone = api.train(prob, params(**opts))
    assert np.array_equal(shared.decision_function(prob), alone.decision_function(prob))

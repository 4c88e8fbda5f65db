"""DC-SVM's multi-class early model: one clustering, one-vs-one local models per cluster."""

import numpy as np
import pytest
import scipy.sparse as sp

from svmtool import api
from svmtool.errors import ModelFormatError
from svmtool.io.model_io import load_model, save_model
from svmtool.models.early import ClusterOvO, EarlyModel
from svmtool.models.kernel import KernelModel
from svmtool.ops.kernels import Kernel, Rows, kernel_block_threads
from svmtool.params import DcsvmParams, KernelParams, TrainParams
from svmtool.problem import Problem
from svmtool.solvers.dcsvm import early_ovo
from svmtool.ops.rows import take_rows
from svmtool.ops.centres import nearest_centre, nearest_centres
from svmtool.solvers.dcsvm.kmeans import Clustering, two_step

from tests.conftest import need, run_cli, shared_file, write_svmlight
from tests.test_kernel_cd import dense_qp, objective
from tests.test_kernels import numpy_kernel


def blobs(n=400, k=4, seed=0, d=3):
    """k classes around random centres, some overlap (so pairs have bounded SVs)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=1.5, size=(k, d))
    y = rng.integers(0, k, size=n)
    Xd = centres[y] + rng.normal(scale=0.8, size=(n, d))
    return Problem.from_matrix(sp.csr_matrix(Xd), (y + 1).astype(float) * 10)


def pair_q(Xd, y_pair, kernel):
    K = numpy_kernel(Xd, Xd, kernel)
    return y_pair[:, None] * y_pair[None, :] * K


def test_cluster_pairs_reach_the_qp_optimum_of_every_pair():
    prob = blobs(150, k=4, seed=1)
    cls = (prob.y / 10 - 1).astype(np.int64)
    order = np.argsort(cls, kind="stable")
    X = Rows.of(prob)
    kernel = Kernel(2, 0.7, kbias=1.0)
    Ks = kernel_block_threads(X, order, X, order, kernel)
    K = 4
    Cc = np.array([2.0, 0.5, 4.0, 1.0])
    npairs = K * (K - 1) // 2
    coef = np.zeros((len(order), K - 1))
    rho = np.zeros(npairs)
    st = np.zeros((npairs, early_ovo.NSTATS))
    unc = early_ovo.solve_cluster_pairs(Ks, cls[order], Cc, np.ones(len(cls)), 1e-10, 10**7, coef, rho, 1.0, st)
    assert unc == 0
    Xd = prob.X.toarray()[order]
    c_sorted = cls[order]
    p = 0
    for i in range(K):
        for j in range(i + 1, K):
            ri, rj = np.flatnonzero(c_sorted == i), np.flatnonzero(c_sorted == j)
            rows = np.concatenate([ri, rj])
            yb = np.concatenate([np.ones(len(ri)), -np.ones(len(rj))])
            Cv = np.concatenate([np.full(len(ri), Cc[i]), np.full(len(rj), Cc[j])])
            Q = pair_q(Xd[rows], yb, kernel)
            ref = dense_qp(Q, Cv)
            a = np.concatenate([coef[ri, j - 1], -coef[rj, i]])      # LIBSVM's layout
            assert np.all(a >= 0) and np.all(a <= Cv + 1e-12)
            assert objective(Q, a) <= objective(Q, ref) + 1e-8 * abs(objective(Q, ref))
            np.testing.assert_allclose(a, ref, atol=1e-5)
            assert st[p, early_ovo.DUAL_F] == pytest.approx(objective(Q, a), rel=1e-10)
            assert st[p, early_ovo.MAX_PG] <= 1e-10
            assert rho[p] == pytest.approx(-1.0 * (a @ yb), abs=1e-12)
            # primal at w of alpha: 1/2 a'Qa + sum C hinge(1 - (Qa)_k)
            qa = Q @ a
            primal = 0.5 * a @ qa + Cv @ np.maximum(0.0, 1.0 - qa)
            assert st[p, early_ovo.PRIMAL] == pytest.approx(primal, rel=1e-9)
            p += 1


def test_absent_classes_get_constant_votes():
    # one cluster holding classes 0 and 2 of 4: pairs with one class present vote for it
    Xd = np.array([[0.0, 0.0], [0.1, 0.0], [1.0, 1.0], [1.1, 1.0]])
    cls = np.array([0, 0, 2, 2])
    Ks = numpy_kernel(Xd, Xd, Kernel(2, 1.0))
    coef = np.zeros((4, 3))
    rho = np.full(6, np.nan)
    st = np.zeros((6, early_ovo.NSTATS))
    early_ovo.solve_cluster_pairs(Ks, cls, np.ones(4), np.ones(len(cls)), 1e-6, 10**6, coef, rho, 0.0, st)
    # pairs in order (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
    assert rho[0] == -1.0 and rho[2] == -1.0        # class 0 present: decision +1
    assert rho[3] == 1.0                            # (1, 2): only class 2, decision -1
    assert rho[4] == 0.0                            # (1, 3): neither
    assert rho[5] == -1.0                           # (2, 3): class 2
    assert st[1, early_ovo.ROWS] == 4 and np.all(st[[0, 2, 3, 4, 5], early_ovo.ROWS] == 0)


def hand_model():
    """Linear kernel, 3 classes; cluster 0 (centre (0,0)) holds classes 0 and 1, cluster 1
    (centre (10,0)) only class 2."""
    centres = Rows.of(sp.csr_matrix(np.array([[0.0, 0.0], [10.0, 0.0]])))
    sv = Rows.of(sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0]])))
    lab = np.arange(3, dtype=float)
    # cluster 0: pair (0,1) with w = 2*(1,0) - 1*(0,1), rho 0.5; (0,2) and (1,2): class 2 absent
    c0 = KernelModel(kernel=Kernel(0), labels=lab, rho=np.array([0.5, -1.0, -1.0]),
                     nr_sv=np.array([1, 1, 0]), sv_indptr=sv.indptr, sv_indices=sv.indices,
                     sv_data=sv.data, sv_coef=np.array([[2.0, -1.0], [0.0, 0.0]]), nr_feature=2)
    empty = take_rows(sv, np.zeros(0, dtype=np.int64))
    c1 = KernelModel(kernel=Kernel(0), labels=lab, rho=np.array([0.0, 1.0, 1.0]),
                     nr_sv=np.array([0, 0, 0]), sv_indptr=empty.indptr,
                     sv_indices=empty.indices, sv_data=empty.data, sv_coef=np.zeros((2, 0)),
                     nr_feature=2)
    shared = ClusterOvO(centres=centres, centre_cluster=np.array([0, 1]),
                        centre_const=np.array([0.0, 100.0]), local=[c0, c1])
    return EarlyModel(kernel=Kernel(0), labels=np.array([5.0, 6.0, 7.0]), pairs=[],
                      nr_feature=2, level=1, shared=shared)


def test_shared_early_model_is_eq11_by_hand(tmp_path):
    m = hand_model()
    test = sp.csr_matrix(np.array([[3.0, 1.0], [1.0, 4.0], [9.0, 2.0]]))
    dec = m.decision_function(test)
    # (3,1): centre (0,0); pair (0,1): 2*3 - 1*1 - 0.5 = 4.5; (0,2), (1,2): +1 (class 2 absent)
    # (1,4): centre (0,0); 2*1 - 4 - 0.5 = -2.5 -> class 1 beats class 0
    # (9,2): centre (10,0) (|.|^2: 85 > 5); every pair's decision -rho: 0, -1, -1 -> class 2
    np.testing.assert_allclose(dec, [[4.5, 1.0, 1.0], [-2.5, 1.0, 1.0], [0.0, -1.0, -1.0]])
    np.testing.assert_array_equal(m.predict(test), [5.0, 6.0, 7.0])
    path = tmp_path / "hand.early"
    save_model(m, str(path))
    back = load_model(str(path))
    assert isinstance(back, EarlyModel) and back.shared is not None and back.level == 1
    np.testing.assert_array_equal(back.decision_function(test), dec)


def test_one_cluster_is_the_exact_one_vs_one_model():
    prob = blobs(240, k=3, seed=2)
    base = KernelParams(kernel_type=2, gamma=0.5)
    exact = api.train(prob, TrainParams(solver="kernel", C=2.0, eps=1e-9, bias=1.0,
                                        kernel=base))
    labels = exact.labels
    cls = np.searchsorted(np.sort(labels), prob.y)
    cls = np.argsort(np.argsort(labels))[cls]          # class index in the model's label order
    X = Rows.of(prob)
    params = TrainParams(solver="dcsvm", C=2.0, eps=1e-9, bias=1.0, kernel=base,
                         dcsvm=DcsvmParams(overlap=1))
    shared, st = early_ovo.fit_early(X, cls, np.full(3, 2.0), Kernel(2, 0.5, kbias=1.0),
                                     params, n_clusters=1, level=1)
    assert st["clusters"] == 1 and st["unconverged"] == 0
    model = EarlyModel(kernel=Kernel(2, 0.5), labels=labels, pairs=[], level=1, shared=shared)
    np.testing.assert_allclose(model.decision_function(prob), exact.decision_function(prob),
                               atol=1e-6)
    # the exact model's dual objectives, pair by pair
    for p, r in enumerate(exact.report["classes"]):
        assert -st["pair_stats"][p, early_ovo.DUAL_F] == pytest.approx(r["dual"], rel=1e-8)


@pytest.mark.parametrize("sparse", [False, True])
def test_nearest_centres_against_numpy(sparse):
    rng = np.random.default_rng(3)
    Xd = rng.normal(size=(300, 40 if sparse else 4))
    if sparse:
        Xd[rng.random(Xd.shape) < 0.9] = 0.0
    X = Rows.of(sp.csr_matrix(Xd))
    k = Kernel(2, 0.3)
    cl = two_step(X, np.arange(300), 6, 80, k, np.random.default_rng(0))
    near, dist = nearest_centres(X, np.arange(300), X, cl.sample_rows, cl.sample_cluster,
                                 cl.const, k, top=3)
    KS = numpy_kernel(Xd, Xd[cl.sample_rows], k)
    cnt = np.bincount(cl.sample_cluster)
    S = np.stack([KS[:, cl.sample_cluster == c].sum(1) / cnt[c] for c in range(6)], 1)
    D = cl.const[None] - 2 * S
    want = np.argsort(D, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(near, want)
    # dense rbf rows: the kernel sums in single precision (ops.kernels32.rbf_pieces32), so the
    # distances to within a few float32 ulps of values about 1; sparse rows: double precision
    tol = dict(rtol=1e-10, atol=1e-12) if sparse else dict(rtol=0.0, atol=4e-6)
    np.testing.assert_allclose(dist, np.take_along_axis(D, want, 1), **tol)
    one = nearest_centre(X, np.arange(300), X, cl.sample_rows, cl.sample_cluster, cl.const, k)
    np.testing.assert_array_equal(near[:, 0], one)


def test_cluster_members_border_rows():
    rng = np.random.default_rng(4)
    n, nc = 500, 5
    d = np.sort(rng.random((n, 3)), axis=1)            # distances to the 3 nearest centres
    near = np.array([rng.permutation(nc)[:3] for _ in range(n)])
    cl = Clustering(assign=near[:, 0].copy(), sample_rows=np.zeros(1, np.int64),
                    sample_cluster=np.zeros(1, np.int64), const=np.zeros(nc), near=near, dist=d)
    cls = rng.integers(0, 4, size=n)
    part = early_ovo.cluster_members(cl, cls, 1, 0.5)
    assert sorted(np.concatenate(part).tolist()) == list(range(n))       # a partition
    for q in (0.0, 0.3, 0.7, 1.0):
        groups = early_ovo.cluster_members(cl, cls, 3, q)
        delta = np.quantile(d[:, 1] - d[:, 0], q)
        count = np.zeros(n, dtype=int)
        for c, g in enumerate(groups):
            assert np.all(np.diff(cls[g]) >= 0)                         # sorted by class
            for r in g:
                t = np.flatnonzero(near[r] == c)[0]
                assert t == 0 or d[r, t] - d[r, 0] <= delta
            count[g] += 1
        want = 1 + ((d[:, 1:] - d[:, :1]) <= delta).sum(1)
        np.testing.assert_array_equal(count, want)
        for r in range(n):
            assert r in set(groups[near[r, 0]])                         # its own cluster


def test_large_clusters_go_through_the_kernel_solver(monkeypatch):
    prob = blobs(1200, k=3, seed=5)
    X = Rows.of(prob)
    cls = (prob.y / 10 - 1).astype(np.int64)
    k = Kernel(2, 0.5, kbias=1.0)
    out = {}
    # two clusters of ~600 rows: with -m 1e-9 a block may take the floor of 1 MB (131,072
    # values), too little for 600^2, so the kernel solver runs
    for cache_mb in (100.0, 1e-9):
        params = TrainParams(solver="dcsvm", C=1.0, eps=1e-9, threads=2,
                             kernel=KernelParams(cache_mb=cache_mb))
        out[cache_mb] = early_ovo.fit_early(X, cls, np.ones(3), k, params, 2, 1)
    calls = []
    real = early_ovo._solve_cluster_by_rows
    monkeypatch.setattr(early_ovo, "_solve_cluster_by_rows",
                        lambda *a, **kw: calls.append(1) or real(*a, **kw))
    early_ovo.fit_early(X, cls, np.ones(3), k, TrainParams(solver="dcsvm", C=1.0, eps=1e-3,
                        kernel=KernelParams(cache_mb=1e-9)), 2, 1)
    assert calls
    (a, sa), (b, sb) = out[100.0], out[1e-9]
    Kout = Kernel(2, 0.5)
    np.testing.assert_allclose(a.decision(X, Kout), b.decision(X, Kout), atol=1e-6)
    np.testing.assert_allclose(sa["pair_stats"][:, early_ovo.DUAL_F],
                               sb["pair_stats"][:, early_ovo.DUAL_F], rtol=1e-8)


def test_cli_multiclass_early(tmp_path):
    prob = blobs(900, k=4, seed=6)
    data = tmp_path / "blobs.txt"
    write_svmlight(prob, data)
    model = tmp_path / "m.early"
    r = run_cli("train", "-s", "dcsvm", "-c", "2", "-g", "0.5", "--early", "--early-level", "2", "--overlap",
                "3", "--test", data, data, model)
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert "accuracy" in err and "16 " in err.splitlines()[-1]   # level 2: 16 clusters
    assert "shared_clusters 16" in model.read_text()
    out = tmp_path / "pred"
    r = run_cli("predict", data, model, out)
    assert r.returncode == 0, r.stderr
    m = load_model(str(model))
    pred = np.array(out.read_text().split(), dtype=float)
    np.testing.assert_array_equal(pred, m.predict(prob))
    exact = api.train(prob, TrainParams(solver="kernel", C=2.0, bias=1.0,
                                        kernel=KernelParams(kernel_type=2, gamma=0.5)))
    assert np.mean(pred == prob.y) >= np.mean(exact.predict(prob) == prob.y) - 0.03
    r = run_cli("train", "-s", "dcsvm", "--overlap", "2", data, tmp_path / "x")
    assert r.returncode == 2 and b"--overlap needs --early" in r.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("cut, message", [
    (lambda t: t.replace("shared_clusters 16", "shared_clusters 17"),
     "expected 17 values per cluster"),
    (lambda t: t[:t.index("\ncluster 15\n") + 1], "missing 'cluster'"),
    (lambda t: t.replace("\ncluster 3\n", "\ncluster 4\n", 1), "expected 'cluster 3'"),
    (lambda t: t[:len(t) // 2], "truncated"),
    (lambda t: t.replace("nr_pair 6", "nr_pair 5"), "nr_pair is 5, expected 6"),
])
def test_broken_shared_early_models(tmp_path, cut, message):
    prob = blobs(900, k=4, seed=7)
    m = api.train(prob, TrainParams(solver="dcsvm", C=1.0, bias=1.0,
                                    kernel=KernelParams(kernel_type=2, gamma=0.5), dcsvm=DcsvmParams(early=True, early_level=2)))
    path = tmp_path / "m.early"
    save_model(m, str(path))
    text = path.read_text()
    bad = tmp_path / "bad.early"
    bad.write_text(cut(text))
    with pytest.raises(ModelFormatError, match=message) as e:
        load_model(str(bad))
    assert str(bad) in str(e.value) and ":" in str(e.value)


@pytest.mark.shared
def test_letter_early_model_against_libsvm():
    svmutil = need("libsvm.svmutil")

    from svmtool.io.svmlight import load_data

    train = load_data(shared_file("letter", "letter.scale"))
    test = load_data(shared_file("letter", "letter.scale.t"))
    m = api.train(train, TrainParams(solver="dcsvm", C=8.0, bias=1.0,
                                     kernel=KernelParams(kernel_type=2, gamma=2.0), dcsvm=DcsvmParams(early=True, early_level=4)))
    acc = np.mean(m.predict(test) == test.y)
    ref = svmutil.svm_train(svmutil.svm_problem(train.y, train.X),
                            svmutil.svm_parameter("-s 0 -t 2 -c 8 -g 2 -q"))
    Xt = sp.csr_matrix((test.X.data, test.X.indices, test.X.indptr),
                       shape=(test.n_rows, train.n_features))
    lab, _, _ = svmutil.svm_predict(test.y, Xt, ref, "-q")
    ref_acc = np.mean(np.array(lab) == test.y)
    # the bar: at most 0.5 points below LIBSVM
    assert acc >= ref_acc - 0.005, (acc, ref_acc)

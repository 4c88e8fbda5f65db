"""Ordinal regression / ROC-area SVM (svmtool.solvers.cutting_plane.ordinal, Joachims 2006 Algorithm
2).

Truths used: brute-force enumeration of every pair (counts, the pairwise hinge objective), and
the optimum of the explicit pairwise problem (one row x_i - x_j per pair) solved by dual
coordinate descent at a tight tolerance.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import DATA, need, shared_file
from svmtool.engine.passes_cp import pair_counts
from svmtool.params import TrainParams
from svmtool.solvers import get_spec
from svmtool.solvers.cutting_plane.ordinal import count_pairs, dense_ranks, groups

HEART = DATA / "heart_scale"


def brute_pairs(y, qid=None):
    """Every pair (i, j) with y_i > y_j (in the same query), enumerated."""
    y = np.asarray(y)
    q = np.zeros(len(y)) if qid is None else np.asarray(qid)
    i, j = np.nonzero((y[:, None] > y[None, :]) & (q[:, None] == q[None, :]))
    return list(zip(i.tolist(), j.tolist()))


def brute_objective(X, y, w, C, qid=None):
    z = X @ w
    i, j = np.array(brute_pairs(y, qid)).T
    return 0.5 * w @ w + C * float(np.maximum(0.0, 1 - z[i] + z[j]).sum())


@pytest.mark.parametrize("seed", range(6))
def test_pair_counts_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    y = rng.integers(0, 4, n).astype(float)
    qid = rng.integers(0, 3, n) if seed % 2 else None
    z = np.round(rng.normal(size=n) * 8) / 4       # exact ties in scores and at distance 1
    rank, R = dense_ranks(y)
    perm, gs = groups(qid, n)
    cp_ = np.zeros(n)
    cm_ = np.zeros(n)
    m = pair_counts(np.ascontiguousarray(z[perm]), np.ascontiguousarray(rank[perm]), gs, R,
                    np.ones(n), cp_, cm_)
    cplus = np.empty(n, dtype=np.int64)
    cminus = np.empty(n, dtype=np.int64)
    cplus[perm] = cp_
    cminus[perm] = cm_
    P = brute_pairs(y, qid)
    assert m == len(P) == count_pairs(y, qid)
    bp = np.zeros(n, dtype=np.int64)
    bm = np.zeros(n, dtype=np.int64)
    for i, j in P:
        if z[i] - z[j] < 1:
            bp[i] += 1
            bm[j] += 1
    np.testing.assert_array_equal(cplus, bp)
    np.testing.assert_array_equal(cminus, bm)


def fit_ordinal(X, y, C, qid=None, **kw):
    params = TrainParams(solver="ordinal", C=C, **kw)
    return get_spec("ordinal").load()(X.indptr.astype(np.int64), X.indices, X.data, y, qid,
                                      X.shape[1], C, params)


def pairwise_optimum(X, y, C, qid=None):
    P = brute_pairs(y, qid)
    i, j = np.array(P).T
    D = sp.csr_matrix(X[i] - X[j])
    D.sort_indices()
    ones = np.ones(len(P))
    r = get_spec("dcd-l1").load()(D.indptr.astype(np.int64), D.indices, D.data, ones,
                                  D.shape[1], C, C, TrainParams(eps=1e-6, max_iter=100000))
    return r, len(P)


@pytest.mark.parametrize("use_qid", [False, True])
def test_ordinal_objective_vs_explicit_pairs(use_qid):
    rng = np.random.default_rng(7)
    n, d = 90, 6
    X = sp.csr_matrix(rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7))
    w_true = rng.normal(size=d)
    y = np.digitize(X @ w_true + 0.5 * rng.normal(size=n), [-1, 0, 1]).astype(float)
    qid = rng.integers(0, 4, n) if use_qid else None
    C = 0.05
    eps = 0.001
    r = fit_ordinal(X, y, C, qid, eps=eps)
    ref, m = pairwise_optimum(X, y, C, qid)
    assert r.converged
    assert r.extra["pairs"] == m
    F = brute_objective(X, y, r.w, C, qid)
    assert r.primal == pytest.approx(F, rel=1e-9)
    assert F - ref.primal <= eps * C * m
    assert F >= ref.dual - 1e-9
    assert r.dual <= ref.primal + 1e-9


def test_weighted_pair_counts_and_objective():
    """-w LABEL FACTOR: a pair costs C c_i c_j.  Counts against brute force with random
    weights; with integer weights the optimum equals the unweighted problem on the explicit
    pair list where each pair is repeated c_i c_j times (solved by DCD-L1)."""
    rng = np.random.default_rng(3)
    n = 50
    y = rng.integers(0, 4, n).astype(float)
    z = np.round(rng.normal(size=n) * 8) / 4
    wt = rng.uniform(0.2, 3.0, n)
    rank, R = dense_ranks(y)
    perm, gs = groups(None, n)
    cp_, cm_ = np.zeros(n), np.zeros(n)
    m = pair_counts(z[perm].copy(), rank[perm].copy(), gs, R, wt[perm].copy(), cp_, cm_)
    bp, bm, bmw = np.zeros(n), np.zeros(n), 0.0
    for i, j in brute_pairs(y):
        bmw += wt[i] * wt[j]
        if z[i] - z[j] < 1:
            bp[i] += wt[j]
            bm[j] += wt[i]
    assert m == pytest.approx(bmw, rel=1e-12)
    np.testing.assert_allclose(cp_[np.argsort(perm)], bp, rtol=1e-12)
    np.testing.assert_allclose(cm_[np.argsort(perm)], bm, rtol=1e-12)

    d = 5
    X = sp.csr_matrix(rng.normal(size=(n, d)))
    y = np.digitize(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n), [-0.5, 0.5]).astype(float)
    C, eps = 0.05, 1e-4
    r = fit_ordinal(X, y, C, eps=eps, weights=((2, 3.0), (0, 2.0)))
    c = np.where(y == 2, 3.0, np.where(y == 0, 2.0, 1.0))
    P = [(i, j) for i, j in brute_pairs(y) for _ in range(int(c[i] * c[j]))]
    i, j = np.array(P).T
    D = sp.csr_matrix(X[i] - X[j])
    D.sort_indices()
    ref = get_spec("dcd-l1").load()(D.indptr.astype(np.int64), D.indices, D.data,
                                    np.ones(len(P)), D.shape[1], C, C,
                                    TrainParams(eps=1e-7, max_iter=100000))
    zz = X @ r.w
    F = 0.5 * r.w @ r.w + C * float(np.maximum(0.0, 1 - zz[i] + zz[j]).sum())
    assert r.primal == pytest.approx(F, rel=1e-9)
    assert r.extra["pairs"] == pytest.approx(len(P))
    assert ref.dual - 1e-9 <= F <= ref.primal + eps * C * len(P)
    # and it is not the unweighted solution
    u = fit_ordinal(X, y, C, eps=eps)
    assert np.abs(u.w - r.w).max() > 1e-3


def test_roc_area_two_labels_heart():
    load_svmlight_file = need("sklearn.datasets").load_svmlight_file
    roc_auc_score = need("sklearn.metrics").roc_auc_score

    X, y = load_svmlight_file(str(HEART))
    X = sp.csr_matrix(X)
    C = 0.001
    r = fit_ordinal(X, y, C, eps=0.001)
    ref, m = pairwise_optimum(X, y, C)
    assert m == np.sum(y > 0) * np.sum(y < 0)
    assert brute_objective(X, y, r.w, C) - ref.primal <= 0.001 * C * m
    auc = roc_auc_score(y > 0, X @ r.w)
    auc_ref = roc_auc_score(y > 0, X @ ref.w)
    assert abs(auc - auc_ref) < 0.005


def test_ordinal_api_model():
    from svmtool import api
    from svmtool.io.svmlight import load_data

    prob = load_data(str(HEART))
    m = api.train(prob, solver="ordinal", C=0.001, eps=0.001)
    assert m.report["ranking"] and m.nr_w == 1 and not m.has_bias
    s = m.decision_function(prob)[:, 0]
    roc_auc_score = need("sklearn.metrics").roc_auc_score

    assert roc_auc_score(prob.y > 0, s) > 0.85


@pytest.mark.shared
def test_letor_ohsumed_queries_shared():
    from svmtool.io.svmlight import load_data

    p = load_data(str(shared_file("letor_ohsumed", "Fold1_validationset.txt")))
    assert p.qid is not None
    keep = np.isin(p.qid, np.unique(p.qid)[:6])
    sub = p.take_rows(np.flatnonzero(keep))
    X = sp.csr_matrix((sub.data, sub.indices, sub.indptr), shape=(sub.n_rows, sub.n_features))
    C = 0.01
    r = fit_ordinal(X, sub.y, C, sub.qid, eps=0.001)
    ref, m = pairwise_optimum(X, sub.y, C, sub.qid)
    assert r.primal - ref.primal <= 0.001 * C * m


def test_ranking_metrics_vs_brute_force():
    from scipy.stats import kendalltau

    from svmtool.solvers.cutting_plane.ordinal import ranking_metrics

    rng = np.random.default_rng(4)
    n = 120
    y = rng.integers(0, 3, n).astype(float)
    s = np.round(rng.normal(size=n) + 0.5 * y, 1)
    qid = rng.integers(0, 4, n)
    overall, per = ranking_metrics(y, s, qid)
    good = tot = 0
    for i, j in brute_pairs(y, qid):
        tot += 1
        good += 1.0 if s[i] > s[j] else (0.5 if s[i] == s[j] else 0.0)
    assert overall["pairs"] == tot
    assert overall["pairwise_accuracy"] == pytest.approx(good / tot)
    q0 = qid == 0
    assert per[0]["kendall_tau"] == pytest.approx(kendalltau(y[q0], s[q0]).statistic)
    yb = (y > 0).astype(float)
    roc_auc_score = need("sklearn.metrics").roc_auc_score

    o2, _ = ranking_metrics(yb, s)
    assert o2["roc_area"] == pytest.approx(roc_auc_score(yb, s))


def test_cli_ranking_train_and_predict(tmp_path):
    from click.testing import CliRunner

    from conftest import TESTDATA
    from svmtool.cli import cli

    train = TESTDATA / "example3_train.dat"
    model = tmp_path / "r.model"
    r = CliRunner().invoke(cli, ["train", "-s", "ordinal", "-c", "1", "-q", str(train),
                                 str(model)])
    assert r.exit_code == 0, r.output
    assert model.read_text().startswith("SVM-light Version")
    out = tmp_path / "r.out"
    r = CliRunner().invoke(cli, ["predict", "--ranking", str(TESTDATA / "example3_test.dat"),
                                 str(model), str(out)])
    assert r.exit_code == 0, r.output
    assert b"Pairwise accuracy" in r.stderr_bytes and b"Kendall" in r.stderr_bytes
    assert len(out.read_text().split()) == 4

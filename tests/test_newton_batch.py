"""Newton's one-vs-rest classes in batches (svmtool.solvers.newton.batch): the classes of a
group share their CG passes, and each class's model must be the bits of that class trained
alone (its binary fit, no batch) -- and LIBLINEAR's model within its tolerance."""

import threading

import numpy as np
import pytest
import scipy.sparse as sp

from svmtool import api
from svmtool.engine.local import LocalOracle
from svmtool.params import BiasRegParams, TrainParams
from svmtool.problem import Problem
from svmtool.solvers.newton import newton
from svmtool.solvers.newton.batch import ClassBatches
from svmtool.solvers.newton.objectives import make_objective


def eight_classes(rows=5000, d=300, density=0.09, seed=3):
    """A problem large enough for the threaded one-vs-rest path (and four row blocks), with
    labels from a noisy linear rule over eight classes."""
    rng = np.random.default_rng(seed)
    X = sp.random(rows, d, density=density, random_state=rng, format="csr",
                  data_rvs=lambda k: rng.uniform(-1, 1, k))
    X.sort_indices()
    score = X @ rng.standard_normal((d, 8)) + 0.5 * rng.standard_normal((rows, 8))
    y = 1.0 + np.argmax(score, axis=1)
    return X, y


@pytest.fixture(scope="module")
def problem():
    X, y = eight_classes()
    return X, y, Problem.from_matrix(X, y)


@pytest.mark.parametrize("solver,loss", [("lr", "lr"), ("newton", "l2")])
@pytest.mark.parametrize("threads", [1, 2])
def test_each_class_has_the_bits_of_its_own_fit(problem, solver, loss, threads):
    X, y, prob = problem
    params = TrainParams(solver=solver, C=0.7, eps=1e-4, threads=threads)
    model = api.train(prob, params)
    assert model.w.shape == (300, 8)
    for col, label in enumerate(model.labels):
        yb = np.where(y == label, 1.0, -1.0)
        alone = newton.fit(prob.indptr, prob.indices, prob.data, yb, prob.n_features, 0.7, 0.7,
                           TrainParams(eps=1e-4, threads=1), loss=loss)
        assert np.array_equal(model.w[:, col], alone.w), f"class {label}"


def test_batches_with_a_free_bias_keep_the_bits(problem):
    """-B 1 -R: the last weight out of the regulariser (finish_hess_vec_dot's correction)."""
    X, y, prob = problem
    params = TrainParams(solver="lr", C=2.0, eps=1e-4, bias=1.0, threads=2,
                         bias_reg=BiasRegParams(regularize=False))
    model = api.train(prob, params)
    Xb = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
    Xb.sort_indices()
    for col, label in enumerate(model.labels):
        yb = np.where(y == label, 1.0, -1.0)
        alone = newton.fit(Xb.indptr, Xb.indices, Xb.data, yb, Xb.shape[1], 2.0, 2.0,
                           TrainParams(eps=1e-4, threads=1, bias=1.0,
                                       bias_reg=BiasRegParams(regularize=False)), loss="lr")
        assert np.array_equal(model.w[:, col], alone.w), f"class {label}"


def test_batched_model_matches_liblinear(problem):
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    X, y, prob = problem
    model = api.train(prob, TrainParams(solver="lr", C=0.7, eps=1e-6, threads=2))
    m = liblinear.train(liblinear.problem(y, X), liblinear.parameter("-s 0 -c 0.7 -e 1e-6 -q"))
    labels = [int(m.label[i]) for i in range(8)]
    assert labels == [int(v) for v in model.labels]
    W = np.array([m.w[i] for i in range(300 * 8)]).reshape(300, 8)
    np.testing.assert_allclose(model.w, W, atol=1e-5)


def _objectives(X, n, loss):
    rng = np.random.default_rng(11)
    out = []
    for k in range(n):
        orc = LocalOracle(X.indptr, X.indices, X.data, X.shape[1], threads=1, n_blocks=4)
        y = np.where(rng.random(X.shape[0]) < 0.3, 1.0, -1.0)
        obj = make_objective(loss, orc, y, np.full(X.shape[0], 0.5 + k))
        obj.start(rng.standard_normal(X.shape[1]) * 0.1)
        obj.grad()
        out.append(obj)
    return out


@pytest.mark.parametrize("loss", ["lr", "l2"])
def test_shared_products_are_each_members_own(problem, loss):
    """Five members in one group, each asking for products of its own vectors, in threads:
    every answer equals the member's own pass (in pairs, and alone, as members leave)."""
    X = problem[0]
    objs = _objectives(X, 5, loss)
    rng = np.random.default_rng(5)
    steps = [3, 5, 6, 8, 9]
    vecs = [[rng.standard_normal(X.shape[1]) for _ in range(s)] for s in steps]
    want = objs[0].hv_gives_xv
    expect = []
    for obj, vs in zip(objs, vecs):
        got = []
        for v in vs:
            xv = np.empty(X.shape[0]) if want else None
            hv, vhv = obj.own_hess_vec_dot(v, xv)
            got.append((hv.copy(), vhv, None if xv is None else xv.copy()))
        expect.append(got)
    batches = ClassBatches(1)
    results = [[] for _ in objs]
    errors = []
    gate = threading.Event()        # every member joined: the rounds are then the same each run

    def member(k):
        try:
            with batches.joined(objs[k]):
                gate.wait()
                for v in vecs[k]:
                    xv = np.empty(X.shape[0]) if want else None
                    hv, vhv = objs[k].hess_vec_dot(v, xv)
                    results[k].append((hv.copy(), vhv, None if xv is None else xv.copy()))
        except BaseException as e:           # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=member, args=(k,)) for k in range(5)]
    for t in threads:
        t.start()
    for _ in range(12000):
        if batches.members() == 5:
            break
        threading.Event().wait(0.005)
    gate.set()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a member never got its product"
    assert not errors
    for k in range(5):
        assert len(results[k]) == steps[k]
        for (hv, vhv, xv), (hv0, vhv0, xv0) in zip(results[k], expect[k]):
            assert np.array_equal(hv, hv0) and vhv == vhv0
            if want:
                assert np.array_equal(xv, xv0)
    # rounds: 5 members (3 rounds of two pairs and one alone), 4 (2 rounds of two pairs),
    # 3 (one round of a pair and one alone), 2 (two rounds of a pair), 1 (one round alone)
    assert batches.passes == {2: 13, 1: 5}


def test_a_failing_class_does_not_hang_the_others(problem):
    """A class whose fit raises (here: its progress callback) leaves its group; the others
    finish, and train reports the error."""
    X, y, prob = problem

    def callback(cls, it, info):
        if cls == 2 and it == 2:
            raise RuntimeError("stop here")

    out = {}

    def run():
        try:
            api.train(prob, TrainParams(solver="lr", C=0.7, eps=1e-4, threads=2),
                      callback=callback)
        except RuntimeError as e:
            out["error"] = str(e)

    t = threading.Thread(target=run)
    t.start()
    t.join(timeout=120)
    assert not t.is_alive(), "train hung after a class failed"
    assert out.get("error") == "stop here"


def test_run_groups_on_more_threads_gives_the_same_bits(problem):
    from svmtool.engine.local import _rmatvec_group

    X = problem[0]
    orc = LocalOracle(X.indptr, X.indices, X.data, X.shape[1], threads=1, n_blocks=4)
    v = np.random.default_rng(2).standard_normal(X.shape[0])
    one = orc.block_buffers(_rmatvec_group, np.empty(X.shape[1]), v).copy()
    for t in (2, 3, 4, 9):
        got = orc.block_buffers(_rmatvec_group, np.empty(X.shape[1]), v, threads=t)
        assert np.array_equal(got, one)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_paired_passes_run_on_the_kernel_extension(problem, tmp_path, threads):
    """The pair kernels are in the extension for the argument types a run gives them: a
    multi-class -s 0 run reports no kernel left to numba (make test builds the extension)."""
    import json

    from svmtool import _aot
    from svmtool.io.writer import dump_svmlight

    from conftest import run_cli

    assert _aot.state() == "used", _aot.state()
    X, y, prob = problem
    data = tmp_path / "eight.svm"
    dump_svmlight(prob, str(data))
    report = tmp_path / "r.json"
    out = run_cli("train", "-q", "-s", "0", "--threads", threads, "--report", str(report),
                  str(data), str(tmp_path / "m"))
    assert out.returncode == 0, out.stderr
    block = json.loads(report.read_text())["startup"]
    assert "misses" not in block["aot"], block["aot"]

"""DC-SVM on a dask.distributed cluster (--dask): the multi-class early model's clusters and the
one-vs-one pairs too small to divide as tasks, and workers killed while a level's tasks run.

Truth: the same training run in this process (whose models are checked against LIBSVM and by
KKT conditions in test_dcsvm.py and test_early_ovo.py): decision values within 1e-8 relative
and the same predictions.  A worker SIGKILLed at the moment it starts one of DC-SVM's tasks
must either be absorbed (dask reruns the task elsewhere: the same model) or end the command
with one line, a non-zero status and the old model file untouched -- never a wrong model.
A LocalCluster of two worker processes on loopback; small data, seconds.
"""

import os

import numpy as np
import pytest

from conftest import DATA, local_cluster, run_cli, shared_file, write_svmlight

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed "
                                                        "(pip install 'svmtool[dask]')")

from svmtool import api  # noqa: E402
from svmtool.io.svmlight import load_data, load_svmlight  # noqa: E402
from svmtool.params import DcsvmParams, KernelParams, TrainParams  # noqa: E402
from svmtool.problem import Problem  # noqa: E402


def _local_cluster(**config):
    return local_cluster(quiet="CRITICAL", **config)


@pytest.fixture(scope="module")
def cluster():
    c = _local_cluster()
    yield c
    c.close()


def _blobs(sizes, d=6, sparse=False, seed=3):
    """Classes 1..K of the given sizes around random centres (rbf-separable, with overlap);
    ``sparse``: 300 features, 6 stored values a row (rows the kernel code keeps sparse)."""
    rng = np.random.default_rng(seed)
    if sparse:
        d = 300
    centres = rng.normal(size=(len(sizes), d)) * 1.2
    X, y = [], []
    for c, m in enumerate(sizes):
        pts = centres[c] + rng.normal(size=(m, d))
        if sparse:
            keep = np.zeros((m, d), dtype=bool)
            for i in range(m):
                keep[i, rng.choice(d, 6, replace=False)] = True
            keep[:, c] = True                      # every class shows on a feature of its own
            pts = np.where(keep, pts, 0.0)
        X.append(pts)
        y.append(np.full(m, c + 1.0))
    perm = rng.permutation(sum(sizes))
    return Problem.from_matrix(np.vstack(X)[perm], np.concatenate(y)[perm])


def _early(C=4.0, gamma=0.5, cache_mb=100.0, **more):
    return TrainParams(solver="dcsvm", C=C, kernel=KernelParams(kernel_type=2, gamma=gamma,
                                                                cache_mb=cache_mb),
                       dcsvm=DcsvmParams(early=True, **more))


def assert_same_model(dist, local, test):
    """Decision values within 1e-8 relative (and absolute), the same predicted labels."""
    dd, dl = dist.decision_function(test), local.decision_function(test)
    np.testing.assert_allclose(dd, dl, rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(dist.predict(dd), local.predict(dl))


@pytest.mark.parametrize("data", ["dense", "sparse", "by-rows",
                                  pytest.param("letter", marks=pytest.mark.shared)])
def test_multiclass_early_model_clusters_are_tasks(cluster, data):
    """--early with more than two classes: one task per cluster (the cluster's rows and class
    indices go to a worker, its local one-vs-one model comes back); the early model of the
    local run, and as accurate on held-out rows.  Dense rows, sparse rows, and clusters too
    large for the -m budget's dense block (their pairs by the kernel solver)."""
    if data == "letter":
        prob = load_svmlight(str(shared_file("letter", "letter.scale")))
        train, test = prob.take_rows(np.arange(1500)), prob.take_rows(np.arange(1500, 2500))
        p = _early(C=8.0, gamma=2.0)
    else:
        prob = _blobs([450, 400, 350, 300], sparse=data == "sparse")
        train, test = prob.take_rows(np.arange(1100)), prob.take_rows(np.arange(1100, 1500))
        p = _early(gamma=0.05 if data == "sparse" else 0.5)
        if data == "by-rows":            # 2 clusters of 550+ rows, blocks of at most 362^2
            p = _early(cache_mb=1e-9, levels=1, k_clusters=2, early_level=1)
    local = api.train(train, p)
    dist = api.train(train, p, dask=cluster.scheduler_address)
    [level] = dist.report["levels"]
    assert dist.report["streaming"] == "dask"
    assert level["clusters"] >= (2 if data == "by-rows" else 9)
    assert level["tasks"] == level["clusters"]
    assert "tasks" not in local.report["levels"][0]
    assert level["n_sv"] == local.report["levels"][0]["n_sv"]
    assert abs(level["objective"] - local.report["levels"][0]["objective"]) <= \
        1e-8 * abs(level["objective"])
    assert_same_model(dist, local, test)
    acc = np.mean(dist.predict(dist.decision_function(test)) == test.y)
    assert acc > (0.7 if data == "letter" else 0.8), acc


def test_multiclass_exact_pairs_on_the_cluster(cluster):
    """The exact multi-class model: a pair too small to divide is one task (the whole pair
    solved on a worker), a larger pair runs its levels' clusters as tasks and its conquer step
    here -- nothing of it silently on the driver.  The model of the local run."""
    prob = _blobs([1100, 250, 1000], d=4)          # pairs of 1350, 2100 and 1250 rows
    test = _blobs([200, 200, 200], d=4)
    p = TrainParams(solver="dcsvm", C=2.0, kernel=KernelParams(kernel_type=2, gamma=0.5),
                    dcsvm=DcsvmParams(levels=1, k_clusters=4))
    local = api.train(prob, p)
    dist = api.train(prob, p, dask=cluster.scheduler_address)
    pairs = {frozenset(r["pair"]): r for r in dist.report["classes"]}
    assert [pairs[frozenset(k)].get("task") for k in ((1, 2), (1, 3), (2, 3))] == \
        [True, None, True]
    divided = [x for x in pairs[frozenset((1, 3))]["levels"] if x["level"] == 1]
    assert divided and divided[0]["tasks"] == divided[0]["clusters"] == 4
    for a, b in zip(local.report["classes"], dist.report["classes"]):
        assert a["n_sv"] == b["n_sv"]
        assert abs(a["dual"] - b["dual"]) <= 1e-8 * abs(a["dual"])
    assert_same_model(dist, local, test)


# ---- workers killed mid-run --------------------------------------------------------------------

def _kill_at_first(address, task_name, marker):
    """Install a worker plugin that SIGKILLs its own worker process when it starts executing
    the first task named ``task_name`` (one kill in all: ``marker`` is created exclusively,
    so the nanny's new worker and the other worker let their tasks run).  Returns its name."""

    class KillAtTask(distributed.WorkerPlugin):
        def transition(self, key, start, finish, **kwargs):
            name = key if isinstance(key, str) else str(key)
            if finish == "executing" and name.startswith(task_name + "-"):
                try:
                    fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    return
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                import signal

                os.kill(os.getpid(), signal.SIGKILL)

    name = f"kill-{task_name}-{os.path.basename(marker)}"
    with distributed.Client(address) as c:
        c.register_plugin(KillAtTask(), name=name)
    return name


def _remove_plugin(address, name, workers=2):
    with distributed.Client(address) as c:
        c.wait_for_workers(workers, timeout=60)      # the nanny has brought a worker back
        c.unregister_worker_plugin(name)


def _a9a_2600():
    return load_svmlight(str(DATA / "a9a")).take_rows(np.arange(0, 26000, 10))


def _exact_binary():
    return TrainParams(solver="dcsvm", C=1.0, kernel=KernelParams(kernel_type=2, gamma=0.05),
                       dcsvm=DcsvmParams(levels=2, k_clusters=4))


@pytest.mark.parametrize("case", ["binary-exact", "multiclass-early"])
def test_worker_killed_during_a_level_same_model(cluster, tmp_path, case):
    """SIGKILL the worker that starts a level's first cluster task: dask reruns the lost task
    on the survivor (or the nanny's new worker) and the model is the undisturbed run's."""
    if case == "binary-exact":
        prob, p, task = _a9a_2600(), _exact_binary(), "solve_cluster"
    else:
        prob, p, task = _blobs([450, 400, 350, 300]), _early(), "cluster_task"
    address = cluster.scheduler_address
    ref = api.train(prob, p, dask=address)
    local = api.train(prob, p)
    marker = str(tmp_path / "killed")
    name = _kill_at_first(address, task, marker)
    try:
        model = api.train(prob, p, dask=address)
    finally:
        _remove_plugin(address, name)
    assert os.path.exists(marker)                     # a worker died inside a level's task
    assert [x["n_sv"] for x in model.report["levels"]] == \
        [x["n_sv"] for x in ref.report["levels"]]
    np.testing.assert_array_equal(model.decision_function(prob), ref.decision_function(prob))
    assert_same_model(model, local, prob)


def test_command_line_worker_killed(tmp_path):
    """The command line, on a scheduler that gives a task up after one lost worker
    (allowed-failures 0): the kill ends the run with one line and status 1, and MODEL keeps
    its old bytes; on the default scheduler (which retries) the same kill gives exit 0 and
    the model of a local run."""
    train = tmp_path / "three.svm"
    write_svmlight(_blobs([450, 400, 350, 300]), train)
    opts = ["-q", "-s", "dcsvm", "-c", "4", "-g", "0.5", "--early"]
    model = tmp_path / "m.model"
    model.write_bytes(b"an older model\n")
    strict = _local_cluster(**{"distributed.scheduler.allowed-failures": 0})
    try:
        _kill_at_first(strict.scheduler_address, "cluster_task", str(tmp_path / "k1"))
        r = run_cli("train", *opts, "--dask", strict.scheduler_address, train, model)
    finally:
        strict.close()
    assert os.path.exists(tmp_path / "k1")
    assert r.returncode == 1, r.stderr
    err = r.stderr.decode()
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("svmtool: error: dask: "), err
    assert model.read_bytes() == b"an older model\n"
    assert sorted(os.listdir(tmp_path)) == ["k1", "m.model", "three.svm"]   # no temporary left

    r = run_cli("train", *opts, train, tmp_path / "local.model")
    assert r.returncode == 0, r.stderr
    retry = _local_cluster()
    try:
        name = _kill_at_first(retry.scheduler_address, "cluster_task", str(tmp_path / "k2"))
        r = run_cli("train", *opts, "--dask", retry.scheduler_address, train, model)
        _remove_plugin(retry.scheduler_address, name)
    finally:
        retry.close()
    assert os.path.exists(tmp_path / "k2")
    assert r.returncode == 0, r.stderr
    test = load_data(str(train))
    assert_same_model(api.load_model(str(model)), api.load_model(str(tmp_path / "local.model")),
                      test)

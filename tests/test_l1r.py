"""-s 5 (l1r-l2) and -s 6 (l1r-lr), the L1-regularised solvers, against LIBLINEAR
(liblinear-official in a subprocess): byte-identical model files with --liblinear-rng (binary,
one-vs-rest, -R), primal objectives at a tight tolerance computed here from w, the number of
non-zero weights, and the model round trip through LIBLINEAR's predict."""

import numpy as np
import pytest

from conftest import DATA, run_cli
from liblinear_ref import liblinear_predict, liblinear_train, load_xy, objective, read_model

HEART = DATA / "heart_scale"


@pytest.fixture(scope="module")
def three_class(tmp_path_factory):
    lines = HEART.read_text().splitlines()
    out = [f"{[3, 1, 2][(i * 7) % 3]} " + ln.split(" ", 1)[1] for i, ln in enumerate(lines)]
    f = tmp_path_factory.mktemp("l1r") / "three.svm"
    f.write_text("\n".join(out) + "\n")
    return f


@pytest.mark.parametrize("options", ["-s 5", "-s 6", "-s 5 -B 1 -c 4", "-s 6 -B 1 -e 0.0001",
                                     "-s 5 -B 1 -R", "-s 6 -B 1 -R -w-1 3"])
def test_model_file_identical_to_liblinear(tmp_path, options):
    want = liblinear_train(HEART, options, tmp_path / "ll.model").read_bytes()
    r = run_cli("train", "-q", "--liblinear-rng", *options.split(), HEART, tmp_path / "m")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m").read_bytes() == want


@pytest.mark.parametrize("solver", ["l1r-l2", "l1r-lr"])
def test_one_vs_rest_identical_to_liblinear(tmp_path, three_class, solver):
    number = {"l1r-l2": 5, "l1r-lr": 6}[solver]
    want = liblinear_train(three_class, f"-s {number} -B 1", tmp_path / "ll.model").read_bytes()
    r = run_cli("train", "-q", "--liblinear-rng", "-s", solver, "-B", "1", three_class,
                tmp_path / "m")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m").read_bytes() == want


@pytest.mark.parametrize("solver, kind, options", [
    ("5", "l1-l2svc", "-e 1e-5 -c 0.5"),
    ("6", "l1-lr", "-e 1e-5 -c 2"),
    ("5", "l1-l2svc", "-e 1e-5 -B 1 -R"),
])
def test_objective_and_sparsity_match_liblinear(tmp_path, solver, kind, options):
    opts = f"-s {solver} {options}"
    liblinear_train(HEART, opts, tmp_path / "ll.model")
    r = run_cli("train", "-q", "--seed", "5", *opts.split(), HEART, tmp_path / "m")
    assert r.returncode == 0, r.stderr
    C = float(opts.split("-c ")[1].split()[0]) if "-c " in opts else 1.0
    X, y = load_xy(HEART, 1.0 if "-B 1" in opts else -1.0)
    f, nnz = {}, {}
    for name, path in (("ll", tmp_path / "ll.model"), ("ours", tmp_path / "m")):
        head, w = read_model(path)
        f[name] = objective(kind, X, y, w[:, 0], C=C, unreg_bias="-R" in opts,
                            pos_label=float(head["label"][0]))
        nnz[name] = int(np.count_nonzero(w))
    assert abs(f["ours"] - f["ll"]) <= 1e-3 * abs(f["ll"]), f
    assert abs(nnz["ours"] - nnz["ll"]) <= max(1, 0.01 * nnz["ll"]), nnz


def test_round_trip_through_liblinear_predict(tmp_path):
    model = tmp_path / "m"
    r = run_cli("train", "-q", "-s", "l1r-lr", "-B", "1", HEART, model)
    assert r.returncode == 0, r.stderr
    assert model.read_text().startswith("solver_type L1R_LR\n")
    out = tmp_path / "p"
    r = run_cli("predict", "-b", "1", HEART, model, out)
    assert r.returncode == 0, r.stderr
    ours = np.array([float(ln.split()[0]) for ln in out.read_text().splitlines()[1:]])
    labels, _ = liblinear_predict(HEART, model)
    assert np.array_equal(ours, labels)


@pytest.mark.parametrize("seed", range(6))
def test_columns_are_scipys_csc_with_rows_in_order(seed):
    # the L1 solvers' column copy (a counting sort in ops.sparse) against scipy's conversion;
    # a last column cut off by n_cols is left out, as the solvers' n_features asks
    import scipy.sparse as sp

    from svmtool.solvers.primal_cd.l1r_svc import to_columns

    rng = np.random.default_rng(seed)
    a = sp.random(int(rng.integers(0, 40)), int(rng.integers(1, 15)), density=0.3,
                  format="csr", random_state=seed)
    n = a.shape[1] - (seed % 2)
    cptr, rows, vals = to_columns(a.indptr, a.indices, a.data, n)
    b = a[:, :n].tocsc()
    b.sort_indices()
    assert cptr.dtype == np.uint64 and rows.dtype == np.uint32
    np.testing.assert_array_equal(cptr, b.indptr)
    np.testing.assert_array_equal(rows, b.indices)
    np.testing.assert_array_equal(vals, b.data)

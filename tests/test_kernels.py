"""Kernel values over CSR rows against a dense numpy computation."""

import numpy as np
import pytest
import scipy.sparse as sp

from svmtool.ops.kernels import (Kernel, Rows, kernel_block_threads, kernel_expansion,
                                 row_sq_norms)


def numpy_kernel(A, B, k: Kernel):
    dot = A @ B.T
    if k.ktype == 0:
        v = dot
    elif k.ktype == 1:
        v = (k.gamma * dot + k.coef0) ** k.degree
    elif k.ktype == 2:
        d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
        v = np.exp(-k.gamma * d2)
    else:
        v = np.tanh(k.gamma * dot + k.coef0)
    return v + k.kbias


def random_csr(rng, n, d, density):
    M = sp.random(n, d, density=density, random_state=rng, format="csr")
    M.data = rng.normal(size=M.nnz)
    M.sort_indices()
    return M


KERNELS = [Kernel(0), Kernel(1, 0.3, 0.7, 3), Kernel(2, 0.5), Kernel(3, 0.2, -0.4),
           Kernel(2, 1.5, kbias=2.25), Kernel(1, 1.0, 1.0, 2, kbias=1.0)]


@pytest.mark.parametrize("k", KERNELS, ids=lambda k: f"{k.name}-b{k.kbias}")
@pytest.mark.parametrize("density", [0.05, 0.9], ids=["sparse", "dense"])
def test_block_matches_numpy(k, density):
    rng = np.random.default_rng(3)
    d = 400 if density < 0.5 else 12        # sparse: the CSR path, dense: the dense-row path
    A = random_csr(rng, 70, d, density)
    B = random_csr(rng, 50, d, density)
    Ra, Rb = Rows.of(A), Rows.of(B)
    assert Ra.prefers_dense() == (density > 0.5)
    rows_a = rng.permutation(70)[:40]
    rows_b = rng.permutation(50)[:30]
    got = kernel_block_threads(Ra, rows_a, Rb, rows_b, k, threads=2)
    want = numpy_kernel(A.toarray()[rows_a], B.toarray()[rows_b], k)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("k", KERNELS, ids=lambda k: f"{k.name}-b{k.kbias}")
@pytest.mark.parametrize("threads", [1, 2])
def test_large_dense_block_by_blas_pieces(k, threads, monkeypatch):
    # a block above BLAS_MIN_BLOCK on dense rows: pieces of rows, each a BLAS product of the
    # augmented rows finished by numpy (pieces made small here so that there are many, with a
    # short last one, shared by the threads)
    import svmtool.ops.kernels as kmod

    monkeypatch.setattr(kmod, "_PIECE_VALUES", 7 * 60)
    rng = np.random.default_rng(11)
    A = random_csr(rng, 300, 10, 0.9)
    B = random_csr(rng, 80, 10, 0.9)
    rows_a = rng.permutation(300)[:290]
    rows_b = rng.permutation(80)[:60]
    assert len(rows_a) * len(rows_b) >= kmod.BLAS_MIN_BLOCK
    got = kernel_block_threads(Rows.of(A), rows_a, Rows.of(B), rows_b, k, threads=threads)
    want = numpy_kernel(A.toarray()[rows_a], B.toarray()[rows_b], k)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    if k.ktype == 2:
        # identical rows: exactly K = 1 (+ kbias), never above it through rounding
        same = kernel_block_threads(Rows.of(A), np.arange(300), Rows.of(A), np.arange(20), k)
        assert np.all(same <= 1.0 + k.kbias)
        assert np.allclose(same[np.arange(20), np.arange(20)], 1.0 + k.kbias, rtol=1e-12)


def test_block_with_extra_test_features():
    # columns of the test rows that the other side never has still count in |u - v|^2
    rng = np.random.default_rng(5)
    A = random_csr(rng, 20, 30, 0.3)
    B = random_csr(rng, 15, 20, 0.3)
    k = Kernel(2, 0.7)
    got = kernel_block_threads(Rows.of(A), np.arange(20), Rows.of(B), np.arange(15), k)
    Bd = np.hstack([B.toarray(), np.zeros((15, 10))])
    np.testing.assert_allclose(got, numpy_kernel(A.toarray(), Bd, k), rtol=1e-10, atol=1e-12)


def test_expansion_in_chunks_matches_numpy():
    rng = np.random.default_rng(7)
    A = random_csr(rng, 300, 50, 0.2)
    B = random_csr(rng, 40, 50, 0.2)
    k = Kernel(2, 0.3)
    coef = rng.normal(size=(40, 3))
    got = kernel_expansion(Rows.of(A), np.arange(300), Rows.of(B), np.arange(40), coef, k,
                           threads=2, mem_mb=40 * 64 * 8 / (1 << 20))   # forces several chunks
    want = numpy_kernel(A.toarray(), B.toarray(), k) @ coef
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_rbf_row32_against_double():
    """ops.kernels32.rbf_row32: a whole rbf row in single precision from the feature-major
    float32 copy: within 6e-7 x max(1, s) relative of numpy's double value, s = gamma |x -
    z|^2 <= 80, within float32's clip (exp(-87)) beyond."""
    from svmtool.ops.kernels32 import rbf_row32

    rng = np.random.default_rng(8)
    Xd = rng.uniform(-1.0, 1.0, size=(500, 22))
    Xd[-20:] *= 12.0                                # far rows: exponents below -87
    DT32 = np.ascontiguousarray(Xd.T.astype(np.float32))
    for i, gamma in ((0, 2.0), (7, 0.3), (499, 2.0)):
        tmp = np.empty(500, dtype=np.float32)
        rbf_row32(DT32, i, 500, gamma, tmp, np.empty(500, dtype=np.int32))
        s = gamma * ((Xd - Xd[i]) ** 2).sum(1)
        want = np.exp(-s)
        near = s <= 80.0
        assert near.sum() > (400 if i < 480 else 0)       # the far rows: only themselves
        rel = np.abs(tmp[near] / want[near] - 1.0)
        assert np.all(rel <= 6e-7 * np.maximum(1.0, s[near]))
        assert np.all(np.abs(tmp[~near] - want[~near]) <= 1.7e-35)
        assert tmp[i] == 1.0


@pytest.mark.parametrize("dense", [True, False])
def test_single_precision_expansion_within_its_bound(dense, monkeypatch):
    """ops.kernels32.expansion32: for dense rbf rows the exponentials in float32, the sums in
    double: within the bound it returns of the double precision numpy value; with rows far
    from the points' mean (exponents below float32's -87) the exponents come from the double
    product, and the bound is about 1e-7 of sum |coef| K (gamma 2, a kernel bias, small pieces
    on two threads); sparse rows go to kernel_expansion in double (bound 0)."""
    from svmtool.ops import kernels32

    monkeypatch.setattr(kernels32, "_PIECE_VALUES32", 7 * 80)
    rng = np.random.default_rng(3)
    Ad = rng.uniform(-1.0, 1.0, size=(700, 22))
    Ad[:50] *= 20.0                                  # exponents far below -87
    Bd = rng.uniform(-1.0, 1.0, size=(80, 22))
    if not dense:
        Ad[rng.random(Ad.shape) < 0.9] = 0.0
        Bd[rng.random(Bd.shape) < 0.9] = 0.0
    A, B = Rows.of(sp.csr_matrix(Ad)), Rows.of(sp.csr_matrix(Bd))
    assert A.prefers_dense() == dense
    k = Kernel(2, 2.0, 0.0, 3, 0.25)
    coef = rng.uniform(-32.0, 32.0, 80)
    products = []
    blocks = kernels32.rbf_blocks32
    monkeypatch.setattr(kernels32, "rbf_blocks32", lambda *a: products.append(1) or blocks(*a))
    got, err = kernels32.expansion32(A, np.arange(700), B, np.arange(80), coef, k, threads=2)
    assert not products         # the far rows: the exponents from the double product
    Kx = numpy_kernel(Ad, Bd, k)
    want = Kx @ coef
    if not dense:
        assert not err.any()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
        return
    diff = np.abs(got - want)
    assert np.all(diff <= err + 1e-12) and diff.max() > 0
    # the bound: 1.5e-7 of each |coef| K, plus 6e-8 |s| K for the exponent s's rounding, at
    # most 6e-8 / e of |coef| (s e^s <= 1/e)
    assert np.all(err <= 1.6e-7 * (np.abs(coef) * (Kx - k.kbias)).sum(1)
                  + 2.3e-8 * np.abs(coef).sum())


def test_single_precision_product_expansion_within_its_bound(monkeypatch):
    """ops.kernels32.expansion32 on rows near the points (ijcnn1's scale, gamma 2): the
    exponents from rbf_blocks32's float32 product, whose rounding the bound covers: every
    value within the bound of the double precision numpy value, the bound at most 2e-4 of
    sum |coef| K (the product's worst case) and wider than the double product's 1.6e-7."""
    from svmtool.ops import kernels32

    monkeypatch.setattr(kernels32, "_PIECE_VALUES", 7 * 90)
    rng = np.random.default_rng(8)
    Ad = rng.uniform(-1.0, 1.0, size=(600, 22))
    Bd = rng.uniform(-1.0, 1.0, size=(90, 22)) + 0.2
    Ad[:5] = Bd[:5]                             # rows on points: exponents about 0, clipped
    A, B = Rows.of(sp.csr_matrix(Ad)), Rows.of(sp.csr_matrix(Bd))
    k = Kernel(2, 2.0, 0.0, 3, 0.25)
    coef = rng.uniform(-32.0, 32.0, 90)
    products = []
    blocks = kernels32.rbf_blocks32
    monkeypatch.setattr(kernels32, "rbf_blocks32", lambda *a: products.append(1) or blocks(*a))
    got, err = kernels32.expansion32(A, np.arange(600), B, np.arange(90), coef, k, threads=2)
    assert products
    Kx = numpy_kernel(Ad, Bd, k)
    diff = np.abs(got - Kx @ coef)
    assert np.all(diff <= err + 1e-12) and diff.max() > 1e-9     # (+ the double sums)
    size = (np.abs(coef) * (Kx - k.kbias)).sum(1)
    assert np.all(err <= 2e-4 * size) and np.all(err > 1.6e-7 * size)


def test_expansion_over_no_support_vector_is_zero():
    """A model without support vectors (a cross-validation fold of nu-SVC's -b 1 can give one)
    scores every row 0, for a vector or a matrix of coefficients."""
    X = Rows.of(sp.csr_matrix(np.arange(12, dtype=float).reshape(4, 3)))
    k = Kernel(2, 0.5, 0.0, 3, 0.0)
    none = np.zeros(0, dtype=np.int64)
    assert np.array_equal(kernel_expansion(X, np.arange(4), X, none, np.zeros(0), k), np.zeros(4))
    assert kernel_expansion(X, np.arange(4), X, none, np.zeros((0, 2)), k).shape == (4, 2)


def test_row_sq_norms():
    rng = np.random.default_rng(1)
    A = random_csr(rng, 30, 20, 0.4)
    got = row_sq_norms(A.indptr.astype(np.int64), A.indices, A.data)
    np.testing.assert_allclose(got, (A.toarray() ** 2).sum(1), rtol=1e-14)


def test_vectorised_exp_against_numpy():
    from svmtool.ops.exp import exp_nonpositive

    rng = np.random.default_rng(2)
    x = np.concatenate([-rng.random(5000) * 50, -rng.random(500) * 1e-6, -np.logspace(-300, 2.8, 500),
                        [0.0, -0.0, -0.5 * np.log(2), -700.0, -708.0]])
    got = x.copy()
    n = len(x) - 3
    exp_nonpositive(got, n, np.empty(len(x), dtype=np.int64))
    np.testing.assert_allclose(got[:n], np.exp(x[:n]), rtol=5e-15, atol=0)
    assert np.array_equal(got[n:], x[n:])                 # entries past n untouched
    below = np.array([-709.0, -1e4, -np.inf])
    exp_nonpositive(below, 3, np.empty(3, dtype=np.int64))
    assert np.all((below > 0) & (below <= np.exp(-708.0) * (1 + 1e-14)))   # clamped, not 0 or nan


def test_exp_to_float32_is_the_rounded_exp():
    # the r^9 series of exp_nonpositive_to32, rounded to float32, against numpy's exp rounded to
    # float32: at most one float32 ulp apart (a tie may round either way), equal almost always
    from svmtool.ops.exp import exp_nonpositive_to32

    rng = np.random.default_rng(3)
    x = np.concatenate([-rng.random(20000) * 80, -rng.random(2000) * 1e-6, [0.0, -0.0, -87.0]])
    out = np.empty(len(x), dtype=np.float32)
    exp_nonpositive_to32(x.copy(), len(x), np.empty(len(x), dtype=np.int64), out)
    want = np.exp(x).astype(np.float32)
    ulps = np.abs(out.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    assert ulps.max() <= 1 and np.mean(ulps == 0) > 0.999


@pytest.mark.parametrize("degree", range(0, 12))
def test_int_power_matches_pow(degree):
    """The polynomial kernel's in-place power by squaring against Python's ** (negative bases,
    zeros, values above and below 1)."""
    from svmtool.ops.kernels import int_power

    x = np.random.default_rng(degree).normal(scale=1.5, size=500)
    x[:3] = [0.0, -1.0, 1.0]
    want = np.array([float(v) ** degree for v in x])
    got = int_power(x.copy(), degree)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)

"""LIBLINEAR model files: exact round trips, interoperability with liblinear-official both ways,
and strict error reporting on damaged files."""

import ctypes
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from svmtool.errors import ModelFormatError
from svmtool.io.liblinear_model import liblinear_text
from svmtool.io.model_io import load_model, save_model
from svmtool.models.linear import LinearModel, nr_w_for
from svmtool.problem import Problem

ll = pytest.importorskip("liblinear.liblinearutil")
from liblinear import liblinear as llc  # noqa: E402  (after the importorskip)

REPO = Path(__file__).resolve().parents[1]
HEART = REPO / "data" / "heart_scale"

SOLVERS = {0: "L2R_LR", 1: "L2R_L2LOSS_SVC_DUAL", 2: "L2R_L2LOSS_SVC", 3: "L2R_L1LOSS_SVC_DUAL",
           4: "MCSVM_CS", 5: "L1R_L2LOSS_SVC", 6: "L1R_LR", 7: "L2R_LR_DUAL",
           11: "L2R_L2LOSS_SVR", 12: "L2R_L2LOSS_SVR_DUAL", 13: "L2R_L1LOSS_SVR_DUAL",
           21: "ONECLASS_SVM"}


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


# ---- helpers: liblinear as the independent truth ----------------------------------------------

def rows_to_problem(y, rows):
    """Our Problem from liblinear's (y, list of {index: value}) without going through our reader."""
    indptr, indices, data = [0], [], []
    for r in rows:
        for k in sorted(r):
            indices.append(k - 1)
            data.append(r[k])
        indptr.append(len(indices))
    nf = max(indices) + 1 if indices else 0
    return Problem(np.array(indptr, np.int64), np.array(indices, np.int32),
                   np.array(data, np.float64), np.array(y, np.float64), nf)


def ll_decision_values(m, rows, nr_w):
    """liblinear's predict_values for every row, with a buffer of nr_w doubles (the Python
    wrapper's own predict() allocates too few for two-class MCSVM_CS models)."""
    nr_feature = m.get_nr_feature()
    out = np.empty((len(rows), nr_w))
    buf = (ctypes.c_double * max(nr_w, 2))()
    labels = []
    for i, r in enumerate(rows):
        xi, _ = llc.gen_feature_nodearray(r, feature_max=nr_feature)
        xi[-2] = llc.feature_node(nr_feature + 1, m.bias) if m.bias >= 0 \
            else llc.feature_node(-1, m.bias)
        labels.append(llc.liblinear.predict_values(m, xi, buf))
        out[i] = buf[:nr_w]
    return out, np.array(labels)


def multiclass_rows(seed=0, n=90, n_features=12):
    """A small 4-class problem whose labels first appear in the order 3, -2, 7, 1."""
    rng = np.random.default_rng(seed)
    classes = [3, -2, 7, 1]
    centers = rng.normal(size=(4, n_features)) * 2
    y, rows = [], []
    for i in range(n):
        c = i % 4
        x = centers[c] + rng.normal(size=n_features)
        keep = rng.random(n_features) < 0.6
        rows.append({j + 1: round(float(x[j]), 6) for j in range(n_features) if keep[j]})
        y.append(classes[c])
    return y, rows


DATASETS = {}


def dataset(name):
    if name not in DATASETS:
        if name == "heart":
            DATASETS[name] = ll.svm_read_problem(str(HEART))
        else:
            DATASETS[name] = multiclass_rows()
    return DATASETS[name]


# ---- round trips of our own writer and reader --------------------------------------------------

SPECIAL = [1e-300, -0.0, 1 / 3, 5e-324, 1.7976931348623157e308, -2.2250738585072014e-308,
           0.1, -123456789.123456789, 0.0, 2.0 ** -1074 * 3]


def test_round_trip_is_bit_exact(tmp_path):
    w = np.array(SPECIAL + [7.0], dtype=np.float64).reshape(-1, 1)   # 10 features + bias
    m = LinearModel("L2R_LR", np.array([1.0, -1.0]), 10, 1.0, w)
    path = tmp_path / "m.model"
    save_model(m, path)
    back = load_model(str(path))
    assert back.solver_type == "L2R_LR" and back.nr_feature == 10 and back.bias == 1.0
    np.testing.assert_array_equal(bits(back.w), bits(w))   # bitwise: -0.0 stays -0.0
    np.testing.assert_array_equal(back.labels, [1.0, -1.0])
    assert back.rho is None


def test_round_trip_multiclass_oneclass_regression_and_fractional_labels(tmp_path):
    rng = np.random.default_rng(1)
    models = [
        LinearModel("MCSVM_CS", np.array([2.0, 5.0]), 4, -1, rng.normal(size=(4, 2))),
        LinearModel("L2R_L2LOSS_SVC_DUAL", np.array([3.0, -2.0, 7.0]), 3, 0.5,
                    rng.normal(size=(4, 3))),
        LinearModel("ONECLASS_SVM", None, 3, -1, rng.normal(size=(3, 1)), rho=1 / 7),
        LinearModel("L2R_L2LOSS_SVR", None, 5, 2.5, rng.normal(size=(6, 1))),
        LinearModel("L2R_LR", np.array([0.5, -1.25]), 2, -1, rng.normal(size=(2, 1))),
    ]
    for i, m in enumerate(models):
        path = tmp_path / f"m{i}"
        save_model(m, path)
        back = load_model(str(path))
        assert back == m, m.solver_type   # dataclass equality
        np.testing.assert_array_equal(bits(back.w), bits(m.w))
        if m.rho is not None:
            assert bits(np.array([back.rho]))[0] == bits(np.array([m.rho]))[0]
        # writing what we read gives the same bytes
        assert liblinear_text(back) == path.read_text()


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(0, 6), st.integers(3, 4)),
                  elements=st.floats(allow_nan=False, allow_infinity=False)),
       st.sampled_from([-1.0, 0.0, 1.0, 1e-9]))
def test_round_trip_any_finite_weights(tmp_path_factory, w, bias):
    nr_class = w.shape[1]
    n_rows = w.shape[0]
    nr_feature = n_rows - 1 if bias >= 0 else n_rows
    if nr_feature < 0:
        return
    m = LinearModel("L2R_L2LOSS_SVC", np.arange(1.0, nr_class + 1), nr_feature, bias, w)
    path = tmp_path_factory.mktemp("rt") / "m"
    save_model(m, path)
    back = load_model(str(path))
    np.testing.assert_array_equal(bits(back.w), bits(w))
    assert back.bias == bias and back.nr_feature == nr_feature


def test_save_model_layout_matches_formats_md(tmp_path):
    m = LinearModel("L2R_LR", np.array([1.0, -1.0]), 2, 1.0, np.array([[0.5], [-0.0], [1 / 3]]))
    text = liblinear_text(m)
    assert text == ("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias 1\nw\n"
                    "0.5 \n-0 \n0.33333333333333331 \n")


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(0, 8), st.sampled_from([1, 3, 5])),
                  elements=st.sampled_from([0.0, -0.0, 5e-324, -1.5, 1 / 3, 1e300, 2.0 ** -1074])))
def test_weight_lines_are_percent_17g_of_every_number(w):
    # the writer formats only the non-zero weights; the text must be what formatting every
    # number with %.17g (LIBLINEAR's fprintf) gives, -0.0 included
    nr_class = 2 if w.shape[1] == 1 else w.shape[1]
    m = LinearModel("L2R_L2LOSS_SVC", np.arange(1.0, nr_class + 1), w.shape[0], -1, w)
    lines = liblinear_text(m).split("\n")
    body = lines[lines.index("w") + 1:-1]
    assert body == ["".join("%.17g " % v for v in row) for row in w.tolist()]


# boundaries of the jitted %.17g: the ends of its exact powers of ten, the switch between
# fixed and exponential notation, values whose 17 digits round up to the next power of ten
G17_EDGES = [1e-6, 9.9999999999999995e-07, 1.0000000000000002e-06, 1e-4, 9.9999999999999991e-05,
             1e16, 9999999999999998.0, 1e17, 99999999999999984.0, 1e22, 0.1, 0.5, 1.0, 100.0,
             12345678901234567.0, 123456789012345678.0, 2.5e-7, 5e-324, 1.7976931348623157e308,
             2.0 ** 53, 2.0 ** 53 + 2, 0.0001234, 1e15 + 0.5, np.inf, np.nan]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 64 - 1))
def test_weight_section_is_percent_17g_of_any_double(seed):
    """The jitted writer against Python's own %.17g: random bit patterns (every exponent, NaN
    and inf among them), random normal values over 30 decades, and the edges above."""
    from svmtool.io.liblinear_model import weight_section

    rng = np.random.default_rng(seed)
    w = np.concatenate([rng.integers(0, 2 ** 64, 600, dtype=np.uint64).view(np.float64),
                        rng.normal(size=600) * 10.0 ** rng.integers(-15, 18, 600),
                        np.array(G17_EDGES + [-v for v in G17_EDGES] + [0.0, -0.0] * 4)])
    w = np.tile(rng.permutation(w)[:1200].reshape(-1, 4), (4, 1))     # 4,800 numbers: jitted
    assert weight_section(w) == "".join("%.17g " * 4 % tuple(r) + "\n" for r in w.tolist())


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_weight_section_on_threads_is_the_same_text(threads):
    """Row ranges formatted on threads and joined: the text of one thread, the values Python
    formats (outside the jitted range) in each range among them."""
    from svmtool.io import liblinear_model

    rng = np.random.default_rng(threads)
    rows = liblinear_model.THREAD_MIN_NUMBERS * threads // 3 + 5
    w = rng.normal(size=(rows, 3)) * 10.0 ** rng.integers(-9, 18, (rows, 3))
    w[::97] = np.array(G17_EDGES[:3])
    one = liblinear_model.weight_section(w)
    assert liblinear_model.weight_section(w, threads) == one
    assert one.count("\n") == rows and one.startswith("%.17g " % w[0, 0])


def test_save_to_stdout(capsys):
    m = LinearModel("L2R_L1LOSS_SVC_DUAL", np.array([1.0, 2.0]), 1, -1, np.array([[2.0]]))
    save_model(m, "-")
    assert capsys.readouterr().out.startswith("solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 2\n")


def test_failed_save_leaves_no_file(tmp_path):
    m = LinearModel("L2R_LR", np.array([1.0, -1.0]), 1, -1, np.array([[1.0]]))
    m.w = np.zeros((5, 1))        # made inconsistent after construction
    with pytest.raises(ValueError):
        save_model(m, tmp_path / "bad")
    assert list(tmp_path.iterdir()) == []


# ---- interoperability with liblinear-official ---------------------------------------------------

# liblinear refuses a bias with ONECLASS_SVM
CASES = [(s, b, d) for s in SOLVERS for b in (-1, 1) for d in ("heart", "multi")
         if not (s == 21 and b >= 0)]


@pytest.mark.parametrize("solver,bias,data", CASES,
                         ids=[f"s{s}-B{b}-{d}" for s, b, d in CASES])
def test_liblinear_model_reads_and_predicts_like_liblinear(tmp_path, solver, bias, data):
    y, rows = dataset(data)
    m = ll.train(y, rows, f"-s {solver} -B {bias} -q")
    ll_path = tmp_path / "ll.model"
    ll.save_model(str(ll_path), m)

    ours = load_model(str(ll_path))
    assert ours.solver_type == SOLVERS[solver]
    assert ours.nr_feature == m.get_nr_feature()
    assert ours.bias == m.bias
    assert ours.nr_class == m.get_nr_class()
    if ours.labels is not None:
        assert list(ours.labels) == m.get_labels()

    # our writer reproduces liblinear's file byte for byte
    assert liblinear_text(ours) == ll_path.read_text()

    # decision values and labels equal liblinear's predict_values
    nr_w = nr_w_for(ours.solver_type, ours.nr_class)
    assert ours.nr_w == nr_w
    expect_dec, expect_labels = ll_decision_values(m, rows, nr_w)
    prob = rows_to_problem(y, rows)
    dec = ours.decision_function(prob)
    np.testing.assert_allclose(dec, expect_dec, rtol=1e-12, atol=0)
    # same terms added in the same order as liblinear: the same doubles, not just close ones
    np.testing.assert_array_equal(bits(dec), bits(expect_dec))
    np.testing.assert_array_equal(ours.predict(dec), expect_labels)
    # and through the numba kernel too (the numpy path is taken for small inputs before numba
    # loads; both must agree bit for bit)
    from svmtool.ops.predict import decision_values
    out = np.empty_like(dec)
    decision_values(prob.indptr, prob.indices, prob.data, ours.w, ours.nr_feature, ours.bias, out)
    if ours.rho is not None:
        out[:, 0] -= ours.rho
    np.testing.assert_array_equal(bits(out), bits(dec))

    if ours.is_probabilistic():
        p_labels, _, p_vals = ll.predict(y, rows, m, "-b 1 -q")
        np.testing.assert_allclose(ours.predict_proba(dec), np.array(p_vals), rtol=1e-12,
                                   atol=1e-15)
        np.testing.assert_array_equal(ours.predict(dec), p_labels)

    # our file of the model -> liblinear's load_model -> the same predictions
    our_path = tmp_path / "ours.model"
    save_model(ours, our_path)
    m2 = ll.load_model(str(our_path))
    dec2, labels2 = ll_decision_values(m2, rows, nr_w)
    np.testing.assert_array_equal(bits(dec2), bits(expect_dec))
    np.testing.assert_array_equal(labels2, expect_labels)


def test_model_written_by_us_loads_in_liblinear(tmp_path):
    """A model liblinear never trained (our weights, our label order) predicts the same there."""
    rng = np.random.default_rng(5)
    y, rows = dataset("multi")
    labels = np.array([7.0, -2.0, 3.0, 1.0])
    m = LinearModel("L2R_L2LOSS_SVC", labels, 12, 0.5, rng.normal(size=(13, 4)))
    path = tmp_path / "ours.model"
    save_model(m, path)
    lm = ll.load_model(str(path))
    assert lm.get_labels() == [7, -2, 3, 1] and lm.get_nr_feature() == 12 and lm.bias == 0.5
    expect_dec, expect_labels = ll_decision_values(lm, rows, 4)
    dec = m.decision_function(rows_to_problem(y, rows))
    np.testing.assert_allclose(dec, expect_dec, rtol=1e-12)
    np.testing.assert_array_equal(m.predict(dec), expect_labels)


def test_features_beyond_nr_feature_are_ignored_as_in_liblinear(tmp_path):
    y, rows = dataset("heart")
    short = [{k: v for k, v in r.items() if k <= 9} for r in rows]     # train on features 1..9
    m = ll.train(y, short, "-s 3 -B 1 -q")
    assert m.get_nr_feature() == 9
    path = tmp_path / "m"
    ll.save_model(str(path), m)
    ours = load_model(str(path))
    wide = [{**r, 40: 3.0} for r in rows]                                # and a feature 40
    expect_dec, expect_labels = ll_decision_values(m, wide, 1)
    prob = rows_to_problem(y, wide)
    assert prob.n_features == 40
    dec = ours.decision_function(prob)
    np.testing.assert_allclose(dec, expect_dec, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(ours.predict(dec), expect_labels)


# ---- damaged files ------------------------------------------------------------------------------

GOOD = ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 3\nbias -1\nw\n"
        "0.5 \n-0.25 \n1 \n")

BAD = {
    "unknown key": (GOOD.replace("bias -1\n", "bias -1\ngamma 2\n"), 6, "unknown key 'gamma'"),
    "missing nr_feature": (GOOD.replace("nr_feature 3\n", ""), 5, "missing 'nr_feature'"),
    "missing w": (GOOD.split("w\n")[0], 6, "missing 'w'"),
    "truncated w": (GOOD.replace("1 \n", ""), 9, "expected 3 weight rows, found 2"),
    "truncated mid-row": (GOOD[:-4], 9, "expected 3 weight rows, found 2"),
    "non-numeric weight": (GOOD.replace("-0.25", "-0.2x5"), 8, "'-0.2x5' is not a number"),
    "underscore weight": (GOOD.replace("-0.25", "1_000"), 8, "'1_000' is not a number"),
    "wrong count per row": (GOOD.replace("-0.25 \n", "-0.25 3 \n"), 8,
                            "expected 1 weight on this row, found 2"),
    "labels vs nr_class": (GOOD.replace("label 1 -1", "label 1 -1 2"), 3,
                           "3 labels but nr_class is 2"),
    "non-numeric nr_feature": (GOOD.replace("nr_feature 3", "nr_feature three"), 4,
                               "nr_feature: 'three' is not an integer"),
    "non-numeric bias": (GOOD.replace("bias -1", "bias none"), 5, "bias: 'none' is not a number"),
    "unknown solver": (GOOD.replace("L2R_L2LOSS_SVC_DUAL", "L2R_MAGIC"), 1,
                       "unknown solver_type 'L2R_MAGIC'"),
    "extra text after w": (GOOD + "0.3 \n", 10, "unexpected text after the 3 weight rows"),
    "missing labels": (GOOD.replace("label 1 -1\n", ""), 5, "missing 'label' line"),
    "duplicate key": (GOOD.replace("bias -1\n", "bias -1\nbias 1\n"), 6, "given twice"),
    "libsvm model": ("svm_type c_svc\nkernel_type rbf\n", 3,
                     "missing 'SV' line"),   # LIBSVM models are read now: a truncated one
    "svmlight model": ("SVM-light Version V6.02\n0 # kernel type\n", 3,
                       "truncated header"),     # SVMlight models are read now: a truncated one
    "not a model": ("1 1:0.5 2:3\n", 1, "not a model file"),
    "empty": ("", None, "empty file"),
    "blank only": ("\n\n  \n", None, "empty file"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_damaged_model_files_give_exact_errors(tmp_path, case):
    text, line, reason = BAD[case]
    path = tmp_path / "m.model"
    path.write_text(text)
    with pytest.raises(ModelFormatError) as info:
        load_model(str(path))
    e = info.value
    assert e.path == str(path)
    assert e.line == line
    assert reason in e.reason
    where = f"{path}:{line}" if line is not None else str(path)
    assert str(e) == f"{where}: {e.reason}"


def test_binary_garbage_is_refused(tmp_path):
    path = tmp_path / "garbage"
    path.write_bytes(b"solver_type L2R_LR\n\x00\x01\x02\xff")
    with pytest.raises(ModelFormatError, match="binary data") as info:
        load_model(str(path))
    assert info.value.line == 2
    path.write_bytes(os.urandom(64).replace(b"\0", b"\1") + b"\xff")
    with pytest.raises(ModelFormatError, match="not ASCII"):
        load_model(str(path))


def test_good_text_loads_and_crlf_is_accepted(tmp_path):
    path = tmp_path / "m"
    path.write_text(GOOD)
    m = load_model(str(path))
    np.testing.assert_array_equal(m.w[:, 0], [0.5, -0.25, 1.0])
    path.write_bytes(GOOD.replace("\n", "\r\n").encode())
    np.testing.assert_array_equal(load_model(str(path)).w, m.w)
    path.write_text(GOOD[:-1])          # no final newline
    np.testing.assert_array_equal(load_model(str(path)).w, m.w)

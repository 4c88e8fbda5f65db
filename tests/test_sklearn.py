"""svmtool.sklearn gives svmtool's answers and scikit-learn's where the problems are the same.

* every estimator's decision_function equals ``svmtool train`` + ``svmtool predict
  --decision-values`` with the same options, and the model it saves is read by the CLI to the
  same values (binary, multi-class with labels out of order, regression, one-class, ranking);
* LinearSVC, LogisticRegression and SVC against scikit-learn's at a tight tolerance on
  heart_scale and a9a: objectives within 1e-3, the same predictions but for near-ties;
* model files through the C programs (liblinear-predict, svm-predict) both ways.
"""

import pickle
import shutil
import subprocess
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn", minversion="1.6",
                    reason="the estimators need scikit-learn >= 1.6 (pip install svmtool[sklearn])")

import sklearn  # noqa: E402
import sklearn.linear_model  # noqa: E402
import sklearn.svm  # noqa: E402

import svmtool  # noqa: E402
import svmtool.sklearn as S  # noqa: E402
from conftest import DATA, TESTDATA, run_cli  # noqa: E402

HEART = DATA / "heart_scale"
A9A = DATA / "a9a"


def as_sklearn_csr(problem):
    """The problem's rows as the CSR matrix scikit-learn's liblinear accepts (int32 indptr)."""
    X = problem.X
    return sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                         shape=X.shape)


@pytest.fixture(scope="module")
def multi_file(tmp_path_factory):
    """Four classes labelled 7, 2, 5, 11 in order of first appearance (not sorted), so that the
    model files' label order and scikit-learn's differ."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=160, n_features=8, n_informative=5, n_classes=4,
                               random_state=3)
    names = np.array([7, 2, 5, 11])
    first = [int(np.flatnonzero(y == k)[0]) for k in range(4)]
    y = names[np.argsort(np.argsort(first))][y]
    path = tmp_path_factory.mktemp("multi") / "multi.svm"
    with open(path, "w") as f:
        for row, label in zip(X, y):
            feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row))
            f.write(f"{label} {feats}\n")
    return path


def cli_decision(*args):
    r = run_cli("predict", "--decision-values", *args)
    assert r.returncode == 0, r.stderr.decode()
    return np.loadtxt(r.stdout.decode().splitlines(), ndmin=2)


def in_sklearn_layout(dec, file_labels, classes, pairs):
    """The decision columns of a model file (its label order) in scikit-learn's layout: two
    classes one value positive for classes[1]; more, a column per class (one-vs-rest) or per
    pair (i, j) of classes, i < j, positive for i (one-vs-one)."""
    labels = list(file_labels)
    pos = [labels.index(c) for c in classes]
    K = len(classes)
    if not pairs:
        if dec.shape[1] == 1:
            return dec[:, 0] if labels[0] == classes[1] else -dec[:, 0]
        return dec[:, pos] if K > 2 else dec[:, pos[1]] - dec[:, pos[0]]
    model_pairs = [(a, b) for a in range(K) for b in range(a + 1, K)]
    cols = []
    for i in range(K):
        for j in range(i + 1, K):
            a, b = pos[i], pos[j]
            cols.append(dec[:, model_pairs.index((min(a, b), max(a, b)))] * (1 if a < b else -1))
    out = np.column_stack(cols)
    return -out[:, 0] if K == 2 else out


# (estimator, the same options for svmtool train, also on the two-class heart_scale)
CLASSIFIERS = [
    (lambda: S.LinearSVC(), "-s dcd-l2 -B 1", True),
    (lambda: S.LinearSVC(loss="hinge", solver="ocas"), "-s ocas -B 1", False),
    (lambda: S.LinearSVC(multi_class="crammer_singer"), "-s ocas-mc -B 1", False),
    (lambda: S.LinearSVC(penalty="l1", dual=False, C=0.5), "-s l1r-l2 -B 1 -c 0.5", False),
    (lambda: S.LogisticRegression(C=2.0), "-s lr -B 1 -R -c 2", True),
    (lambda: S.LogisticRegression(dual=True, intercept_scaling=2.0), "-s lr-dual -B 2", False),
    (lambda: S.SVC(gamma=0.1, decision_function_shape="ovo"), "-s c_svc -t 2 -g 0.1", True),
    (lambda: S.SVC(kernel="poly", gamma=0.2, degree=2, coef0=1.0, C=3.0,
                   decision_function_shape="ovo"), "-s c_svc -t 1 -g 0.2 -d 2 -r 1 -c 3", False),
    (lambda: S.NuSVC(gamma=0.1, nu=0.2, decision_function_shape="ovo"),
     "-s nu_svc -t 2 -g 0.1 -n 0.2", False),
    (lambda: S.DCSVC(gamma=0.1, decision_function_shape="ovo"), "-s dcsvm -t 2 -g 0.1", True),
]


def finish_options(est, prob):
    """The command line's options of the fit the estimator kept: on these small problems the
    exact finish (tol 1e-10 and its iteration cap) when the solver reached it."""
    from svmtool.sklearn._base import FINISH_TOL

    if not est.exact_finish_:
        return []
    cap = est._finish_max_iter(prob)
    return ["-e", repr(FINISH_TOL)] + ([] if cap is None else ["--max-iter", str(cap)])


CASES = [(make, options, data) for make, options, heart in CLASSIFIERS
         for data in (("heart", "multi") if heart else ("multi",))]


@pytest.mark.parametrize("make,options,data", CASES,
                         ids=[f"{o}-{d}" for _, o, d in CASES])
def test_classifier_equals_the_command_line(make, options, data, multi_file, tmp_path):
    path = HEART if data == "heart" else multi_file
    prob = svmtool.load_data(str(path))
    est = make().fit(prob.X, prob.y)
    model = tmp_path / "cli.model"
    r = run_cli("train", "-q", *options.split(), *finish_options(est, prob), path, model)
    assert r.returncode == 0, r.stderr.decode()
    kernel = isinstance(est, (S.SVC, S.DCSVC))
    want = in_sklearn_layout(cli_decision(path, model, "-"),
                             svmtool.load_model(str(model)).labels, est.classes_, kernel)
    got = est.decision_function(prob.X)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
    # the saved model, read by the command line, scores the same
    est.save(tmp_path / "est.model")
    again = in_sklearn_layout(cli_decision(path, tmp_path / "est.model", "-"),
                              svmtool.load_model(str(tmp_path / "est.model")).labels,
                              est.classes_, kernel)
    np.testing.assert_allclose(got, again, rtol=1e-12, atol=1e-12)
    # and svmtool.sklearn.load gives back the same estimator (a LIBSVM file does not say which
    # solver wrote it: DC-SVM's model comes back as an SVC)
    back = S.load(tmp_path / "est.model")
    assert type(back) is (S.SVC if isinstance(est, S.DCSVC) else type(est))
    if kernel:
        back.set_params(decision_function_shape="ovo")
    np.testing.assert_allclose(back.decision_function(prob.X), got, rtol=1e-12, atol=1e-12)
    assert np.array_equal(back.predict(prob.X), est.predict(prob.X))


SINGLE = [
    (lambda: S.LinearSVR(epsilon=0.1), "-s svr-l1-dual -B 1 -p 0.1", "multi"),
    (lambda: S.LinearSVR(loss="squared_epsilon_insensitive", dual=False, C=0.5),
     "-s svr-l2 -B 1 -c 0.5 -p 0", "multi"),
    (lambda: S.SVR(gamma=0.1, epsilon=0.2), "-s epsilon_svr -t 2 -g 0.1 -p 0.2", "multi"),
    (lambda: S.NuSVR(gamma=0.1, nu=0.4, C=2.0), "-s nu_svr -t 2 -g 0.1 -n 0.4 -c 2", "multi"),
    (lambda: S.LinearOneClassSVM(nu=0.3), "-s one-class -n 0.3", "heart"),
    (lambda: S.OneClassSVM(gamma=0.1, nu=0.3), "-s one_class -t 2 -g 0.1 -n 0.3", "heart"),
    (lambda: S.RankSVM(C=0.5), "-s ordinal -c 0.5", "rank"),
]


@pytest.mark.parametrize("make,options,data", SINGLE, ids=[o for _, o, _ in SINGLE])
def test_one_problem_estimators_equal_the_command_line(make, options, data, multi_file,
                                                       tmp_path):
    path = {"heart": HEART, "multi": multi_file, "rank": TESTDATA / "example3_train.dat"}[data]
    prob = svmtool.load_data(str(path))
    est = make()
    if data == "rank":
        est.fit(prob.X, prob.y, qid=prob.qid)
    else:
        est.fit(prob.X, prob.y)
    model = tmp_path / "cli.model"
    r = run_cli("train", "-q", *options.split(), *finish_options(est, prob), path, model)
    assert r.returncode == 0, r.stderr.decode()
    got = est.decision_function(prob.X) if hasattr(est, "decision_function") else \
        est.predict(prob.X)
    np.testing.assert_allclose(got, cli_decision(path, model, "-")[:, 0], rtol=1e-9, atol=1e-11)
    est.save(tmp_path / "est.model")
    np.testing.assert_allclose(got, cli_decision(path, tmp_path / "est.model", "-")[:, 0],
                               rtol=1e-12, atol=1e-12)
    back = S.load(tmp_path / "est.model")
    assert type(back) is type(est)
    np.testing.assert_allclose(back.predict(prob.X), est.predict(prob.X), rtol=1e-12)


# --- the same answers as scikit-learn's own estimators ----------------------------------------

def squared_or_plain_hinge(w, b, X, y, C, squared):
    margin = np.maximum(0.0, 1.0 - y * (X @ w + b))
    return 0.5 * (w @ w + b * b) + C * np.sum(margin ** 2 if squared else margin)


def agree_but_for_ties(ours, theirs, dec, scale):
    differ = ours != theirs
    assert np.all(np.abs(dec[differ]) < 1e-4 * scale), (int(differ.sum()), dec[differ][:5])


@pytest.mark.parametrize("path", [HEART, A9A], ids=["heart_scale", "a9a"])
@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_linear_svc_matches_sklearn(path, loss):
    prob = svmtool.load_data(str(path))
    X = as_sklearn_csr(prob)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = sklearn.svm.LinearSVC(loss=loss, dual=True, tol=1e-5, max_iter=100000)
        theirs.fit(X, prob.y)
    ours = S.LinearSVC(loss=loss, tol=1e-5, max_iter=100000).fit(X, prob.y)
    y = np.where(prob.y == ours.classes_[1], 1.0, -1.0)
    squared = loss == "squared_hinge"
    f_ours = squared_or_plain_hinge(ours.coef_[0], ours.intercept_[0], X, y, 1.0, squared)
    f_theirs = squared_or_plain_hinge(theirs.coef_[0], theirs.intercept_[0], X, y, 1.0, squared)
    assert abs(f_ours - f_theirs) <= 1e-3 * f_theirs
    dec = ours.decision_function(X)
    agree_but_for_ties(ours.predict(X), theirs.predict(X), dec, np.abs(dec).max())


@pytest.mark.parametrize("path", [HEART, A9A], ids=["heart_scale", "a9a"])
def test_logistic_regression_matches_sklearn(path):
    """Both leave the intercept out of the regulariser (svmtool's lr with -R; lbfgs)."""
    prob = svmtool.load_data(str(path))
    X = as_sklearn_csr(prob)
    theirs = sklearn.linear_model.LogisticRegression(tol=1e-6, max_iter=5000).fit(X, prob.y)
    ours = S.LogisticRegression(tol=1e-6).fit(X, prob.y)
    y = np.where(prob.y == ours.classes_[1], 1.0, -1.0)

    def objective(est):
        w, b = est.coef_[0], est.intercept_[0]
        return 0.5 * w @ w + np.sum(np.logaddexp(0.0, -y * (X @ w + b)))

    assert abs(objective(ours) - objective(theirs)) <= 1e-3 * objective(theirs)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=5e-3)
    dec = ours.decision_function(X)
    agree_but_for_ties(ours.predict(X), theirs.predict(X), dec, np.abs(dec).max())


def dual_objective(est, gamma):
    from sklearn.metrics.pairwise import rbf_kernel

    c = est.dual_coef_
    c = np.asarray(c.todense() if sp.issparse(c) else c).ravel()
    sv = est.support_vectors_
    return 0.5 * c @ rbf_kernel(sv, sv, gamma=gamma) @ c - np.abs(c).sum()


@pytest.mark.parametrize("path,rows", [(HEART, None), (A9A, 2000)], ids=["heart_scale", "a9a"])
def test_svc_matches_sklearn(path, rows):
    prob = svmtool.load_data(str(path))
    X = as_sklearn_csr(prob)
    y = prob.y
    if rows:
        X, y = X[:rows], y[:rows]
    theirs = sklearn.svm.SVC(tol=1e-5).fit(X, y)
    ours = S.SVC(tol=1e-5).fit(X, y)
    gamma = 1.0 / (X.shape[1] * (X.multiply(X).mean() - X.mean() ** 2))
    f_ours, f_theirs = dual_objective(ours, gamma), dual_objective(theirs, gamma)
    assert abs(f_ours - f_theirs) <= 1e-3 * abs(f_theirs)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-3)
    dec = ours.decision_function(X)
    np.testing.assert_allclose(dec, theirs.decision_function(X), atol=1e-3)
    agree_but_for_ties(ours.predict(X), theirs.predict(X), dec, 1.0)
    # dual_coef_, support_vectors_ and intercept_ are scikit-learn's layout: they rebuild the
    # decision values
    from sklearn.metrics.pairwise import rbf_kernel

    again = rbf_kernel(X, ours.support_vectors_, gamma=gamma) @ ours.dual_coef_[0] + \
        ours.intercept_[0]
    np.testing.assert_allclose(again, dec, atol=1e-10)


def test_multiclass_svc_layout_matches_sklearn(multi_file):
    """Four classes whose first appearance is not their order: one-vs-one and one-vs-rest
    decision values, intercepts, n_support_ and dual_coef_ as scikit-learn lays them out."""
    prob = svmtool.load_data(str(multi_file))
    X = prob.X.toarray()
    for shape in ("ovo", "ovr"):
        theirs = sklearn.svm.SVC(tol=1e-6, decision_function_shape=shape).fit(X, prob.y)
        ours = S.SVC(tol=1e-6, decision_function_shape=shape).fit(X, prob.y)
        np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                                   atol=1e-4)
        assert np.array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-4)
    if np.array_equal(ours.n_support_, theirs.n_support_):
        np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, atol=1e-4)
        np.testing.assert_allclose(ours.support_vectors_, theirs.support_vectors_)


# --- model files through the C programs -------------------------------------------------------

def need(program):
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed (Debian: liblinear-tools, libsvm-tools)")


def c_predict(program, test, model, out, *opts):
    r = subprocess.run([program, *opts, str(test), str(model), str(out)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def same_probabilities(output, est, X):
    """A C predictor's ``-b 1`` output (``labels ...`` then label and probabilities per row)
    holds the estimator's predict_proba, to the digits it prints."""
    lines = output.read_text().splitlines()
    order = [float(v) for v in lines[0].split()[1:]]
    proba = np.loadtxt(lines[1:], ndmin=2)[:, 1:]
    want = est.predict_proba(X)[:, [list(est.classes_).index(c) for c in order]]
    np.testing.assert_allclose(proba, want, atol=1e-5)


def test_linear_models_round_trip_through_liblinear(tmp_path, multi_file):
    need("liblinear-predict")
    for path in (HEART, multi_file):
        prob = svmtool.load_data(str(path))
        for est in (S.LinearSVC(), S.LogisticRegression(solver="lr-dual", dual=True)):
            est.fit(prob.X, prob.y).save(tmp_path / "m")
            c_predict("liblinear-predict", path, tmp_path / "m", tmp_path / "out")
            assert np.array_equal(np.loadtxt(tmp_path / "out"), est.predict(prob.X))
        c_predict("liblinear-predict", path, tmp_path / "m", tmp_path / "out", "-b", "1")
        same_probabilities(tmp_path / "out", est, prob.X)
    # a model LIBLINEAR's own trainer wrote, loaded as an estimator
    need("liblinear-train")
    subprocess.run(["liblinear-train", "-q", "-s", "2", "-B", "1", str(multi_file),
                    str(tmp_path / "c.model")], check=True)
    c_predict("liblinear-predict", multi_file, tmp_path / "c.model", tmp_path / "out")
    est = S.load(tmp_path / "c.model")
    assert isinstance(est, S.LinearSVC) and est.solver == "newton"
    X = svmtool.load_data(str(multi_file)).X
    assert np.array_equal(est.predict(X), np.loadtxt(tmp_path / "out"))


def test_kernel_models_round_trip_through_libsvm(tmp_path, multi_file):
    need("svm-predict")
    prob = svmtool.load_data(str(multi_file))
    for est in (S.SVC(gamma=0.1, C=4.0), S.NuSVC(gamma=0.1, nu=0.2)):
        est.fit(prob.X, prob.y).save(tmp_path / "m")
        c_predict("svm-predict", multi_file, tmp_path / "m", tmp_path / "out")
        assert np.array_equal(np.loadtxt(tmp_path / "out"), est.predict(prob.X))
    est = S.SVC(gamma=0.1, probability=True).fit(prob.X, prob.y)
    est.save(tmp_path / "p")
    c_predict("svm-predict", multi_file, tmp_path / "p", tmp_path / "out", "-b", "1")
    same_probabilities(tmp_path / "out", est, prob.X)
    need("svm-train")
    subprocess.run(["svm-train", "-q", "-g", "0.1", str(multi_file), str(tmp_path / "c.model")],
                   check=True)
    c_predict("svm-predict", multi_file, tmp_path / "c.model", tmp_path / "out")
    est = S.load(tmp_path / "c.model")
    assert isinstance(est, S.SVC) and est.gamma == pytest.approx(0.1)
    assert np.array_equal(est.predict(prob.X), np.loadtxt(tmp_path / "out"))


def test_save_formats_and_what_cannot_be_saved(tmp_path):
    prob = svmtool.load_data(str(HEART))
    est = S.LinearSVC().fit(prob.X, prob.y)
    est.save(tmp_path / "m.svmlight", format="svmlight")
    assert (tmp_path / "m.svmlight").read_text().startswith("SVM-light Version")
    np.testing.assert_allclose(S.load(tmp_path / "m.svmlight").decision_function(prob.X),
                               est.decision_function(prob.X), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="cannot be saved as 'libsvm'"):
        est.save(tmp_path / "x", format="libsvm")
    words = np.where(prob.y > 0, "sick", "well")
    named = S.SVC().fit(prob.X, words)
    assert set(named.predict(prob.X)) <= {"sick", "well"}
    with pytest.raises(ValueError, match="integer class labels"):
        named.save(tmp_path / "y")
    assert not (tmp_path / "y").exists()


# --- paths, caches, out of core, warm starts, dask ---------------------------------------------

def test_fit_on_a_path_a_cache_and_arrays_alike(tmp_path):
    svmtool.save_cache(svmtool.load_data(str(HEART)), str(tmp_path / "h.cache"))
    prob = svmtool.load_data(str(HEART))
    models = [S.LinearSVC().fit(X, y) for X, y in
              ((str(HEART), None), (tmp_path / "h.cache", None), (prob.X, prob.y),
               (prob.X.toarray(), prob.y), (prob, None))]
    for m in models[1:]:
        assert np.array_equal(m.coef_, models[0].coef_)
        assert np.array_equal(m.intercept_, models[0].intercept_)
    assert np.array_equal(models[1].decision_function(str(HEART)),
                          models[0].decision_function(prob.X))
    # labels given beside a path replace the file's
    flipped = S.LinearSVC().fit(tmp_path / "h.cache", np.where(prob.y > 0, "no", "yes"))
    assert list(flipped.classes_) == ["no", "yes"]
    assert np.array_equal(flipped.predict(prob.X) == "yes", models[0].predict(prob.X) < 0)


def test_out_of_core_above_the_memory_budget(tmp_path):
    """A cache larger than memory_budget trains out of core, to the in-memory optimum."""
    svmtool.save_cache(svmtool.load_data(str(A9A)), str(tmp_path / "a9a.cache"))
    inside = S.LinearSVC(solver="newton", tol=1e-6).fit(tmp_path / "a9a.cache")
    with pytest.warns(UserWarning, match="training out of core"):
        outside = S.LinearSVC(solver="newton", tol=1e-6, memory_budget=1)
        outside.fit(tmp_path / "a9a.cache")
    assert outside.model_.report["streaming"] == "blocks"
    assert "streaming" not in inside.model_.report
    # a9a's one-hot columns leave w loosely determined: compare the objective and the scores
    primal = [m.model_.report["classes"][0]["primal"] for m in (outside, inside)]
    assert abs(primal[0] - primal[1]) <= 1e-8 * primal[1]
    test = svmtool.load_data(str(DATA / "a9a.t"), n_features=123)
    np.testing.assert_allclose(outside.decision_function(test.X),
                               inside.decision_function(test.X), atol=1e-3)


def test_warm_start_and_init_model(tmp_path):
    prob = svmtool.load_data(str(A9A))
    warm = S.LinearSVC(solver="newton", tol=1e-4, warm_start=True).fit(prob.X, prob.y)
    warm.save(tmp_path / "c1.model")
    warm.set_params(C=2.0).fit(prob.X, prob.y)
    cold = S.LinearSVC(solver="newton", tol=1e-4, C=2.0).fit(prob.X, prob.y)
    assert warm.n_iter_ < cold.n_iter_
    primal = [m.model_.report["classes"][0]["primal"] for m in (warm, cold)]
    assert abs(primal[0] - primal[1]) <= 1e-4 * primal[1]
    # from a model file and from a fitted estimator: the same start, the same model
    a = S.LinearSVC(solver="newton", tol=1e-4, C=2.0).fit(prob.X, prob.y,
                                                          init_model=tmp_path / "c1.model")
    b = S.LinearSVC(solver="newton", tol=1e-4, C=2.0).fit(
        prob.X, prob.y, init_model=S.load(tmp_path / "c1.model"))
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.coef_, warm.coef_)
    with pytest.raises(ValueError):
        S.LinearSVC(solver="newton").fit(prob.X, np.where(prob.y > 0, 3, 4),
                                         init_model=tmp_path / "c1.model")
    with pytest.raises(ValueError, match="cannot start from a model"):
        S.SVC().fit(prob.X[:200], prob.y[:200], init_model=tmp_path / "c1.model")


def test_dcsvc_warm_start_from_its_support_vectors():
    prob = svmtool.load_data(str(HEART))
    first = S.DCSVC(gamma=0.1, tol=1e-4, warm_start=True).fit(prob.X, prob.y)
    cold_iters = first.n_iter_.sum()
    first.fit(prob.X, prob.y)
    assert first.n_iter_.sum() < cold_iters
    np.testing.assert_allclose(first.decision_function(prob.X),
                               S.DCSVC(gamma=0.1, tol=1e-4).fit(prob.X, prob.y)
                               .decision_function(prob.X), atol=1e-2)


def test_on_a_dask_cluster(tmp_path):
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    svmtool.save_cache(svmtool.load_data(str(HEART)), str(tmp_path / "h.cache"))
    here = S.LinearSVC(solver="newton").fit(tmp_path / "h.cache")
    there = S.LinearSVC(solver="newton", dask="local:1").fit(tmp_path / "h.cache")
    assert there.model_.report["streaming"] == "dask"
    np.testing.assert_allclose(there.coef_, here.coef_, rtol=1e-10, atol=1e-12)


# --- scikit-learn's tools -----------------------------------------------------------------------

def test_pipeline_grid_search_clone_and_pickle():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    prob = svmtool.load_data(str(HEART))
    X = prob.X.toarray()
    search = GridSearchCV(make_pipeline(StandardScaler(), S.SVC()),
                          {"svc__C": [0.5, 2.0], "svc__gamma": ["scale", 0.01]}, cv=3)
    search.fit(X, prob.y)
    assert search.best_score_ > 0.75
    best = search.best_estimator_
    again = pickle.loads(pickle.dumps(best))
    assert np.array_equal(again.predict(X), best.predict(X))
    assert sklearn.base.clone(best[-1]).get_params() == best[-1].get_params()


def test_rank_svm_scores_pairs_within_queries():
    prob = svmtool.load_data(str(TESTDATA / "example3_train.dat"))
    est = S.RankSVM(C=1.0).fit(prob.X, prob.y, qid=prob.qid)
    s = est.decision_function(prob.X)
    good = total = 0.0
    for i in range(len(s)):
        for j in range(len(s)):
            if prob.qid[i] == prob.qid[j] and prob.y[i] > prob.y[j]:
                total += 1
                good += 1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0
    assert est.score(prob.X, prob.y, qid=prob.qid) == pytest.approx(good / total)
    assert S.RankSVM().fit(str(TESTDATA / "example3_train.dat")).score(
        prob.X, prob.y, prob.qid) == pytest.approx(good / total)

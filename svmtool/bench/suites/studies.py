"""The opt-in study suites (not in ``make bench``): LIBLINEAR's ``-C`` search, the time split of
OCAS, DC-SVM level by level, and prediction against the C programs' predictors.  Their tables
come from :mod:`svmtool.bench.studies`; ``--quick`` runs each on the bundled heart_scale."""

from svmtool.bench import studies
from svmtool.bench.suites.registry import Case, Suite, register


def _param_search_cases(w):
    # --quick: -s 2 alone (a smoke run of the table)
    solvers = (2,) if w.quick else (2, 0, 11)
    return [Case(f"{name} -C", table=_with_repeat(studies.param_search_table, tr, name,
                                                  solvers=solvers), files=[tr])
            for name, tr, _, _ in w.sets(["a9a"])]


def _with_repeat(fn, *args, **kw):
    """``fn(*args, **kw)`` as a Case.table: (repeat, log) -> markdown."""
    def table(repeat, log=None):
        return fn(*args, repeat=repeat, log=log, **kw)
    return table


register(Suite(
    "param-search",
    "svmtool train -C (-s 2, 0, 11) against liblinear-train -C, whole commands",
    "LIBLINEAR's parameter search (`-C`: C along the doubling path from a small start, warm "
    "started, five-fold cross validation; with -s 11 C and p together) as `svmtool train -C -s "
    "N` (all cores, and `--threads 1`) and `liblinear-train -C -s N`, whole commands on the same "
    "text file, interleaved.",
    _param_search_cases,
    replaces="benchmarks/newton_vs_liblinear.py --find-c"))


def _ocas_cases(w):
    return [Case(f"{name} time split", table=_with_repeat(studies.ocas_split_table, tr, name),
                 files=[tr])
            for name, tr, _, _ in w.sets(["a9a", "ijcnn1"])]


register(Suite(
    "ocas-split",
    "where OCAS's time goes (passes, QP, line search) per --line-search, and cp's",
    "OCAS (-s ocas) with each line search, and SVMperf's cutting plane (-s cp), at C = 1: total "
    "training time and its split into full data passes (scores, risk and subgradient), the "
    "reduced QP over the cuts and the line search, from the solvers' own timers.",
    _ocas_cases,
    replaces="benchmarks/cutting_plane_bench.py linesearch (time split)"))

# name: (C, gamma, training rows, test rows)
_LEVEL_SETS = {"ijcnn1": (32.0, 2.0, 10000, 20000), "a9a": (1.0, 0.05, 10000, 16281)}


def _level_cases(w):
    out = []
    if w.quick or w.shared is None:
        for name, tr, te, _ in w.sets([], fallback=("heart",)):
            out.append(Case(f"{name} DC-SVM levels", table=_with_repeat(
                studies.dcsvm_levels_table, tr, te or tr, name, C=1.0, gamma=0.5), files=[tr]))
        return out
    for name, (C, gamma, rows, test_rows) in _LEVEL_SETS.items():
        f = w.files(name)
        if f is None:
            continue
        out.append(Case(f"{name} DC-SVM levels", table=_with_repeat(
            studies.dcsvm_levels_table, f[0], f[1], f"{name} {rows} rows", C=C, gamma=gamma,
            rows=rows, test_rows=test_rows), files=[f[0], f[1]]))
    return out


register(Suite(
    "dcsvm-levels",
    "DC-SVM level by level: clusters, times, support vectors, early-model test accuracy",
    "DC-SVM (-s dcsvm, RBF) with its per-level statistics, as `svmtool train -s dcsvm --test "
    "FILE` prints them: at each level the number of clusters, the time of the clustering and "
    "of the cluster subproblems, the support vectors, the level's dual objective, and the test "
    "accuracy of the level's early-prediction model; then the refine pass and the exact model "
    "(level 0).  --quick: heart_scale, whose accuracy is on the training rows.",
    _level_cases,
    replaces="benchmarks/dcsvm_vs_libsvm.py per-level table"))


def _predict_cases(w):
    if w.quick or w.shared is None:
        sets = [(name, tr, te or tr, kind, {"gamma": 0.5, "C": 1.0})
                for name, tr, te, _ in w.sets([], fallback=("heart",))
                for kind in ("linear", "kernel")]
    else:
        sets = []
        for name in ("a9a", "ijcnn1"):
            f = w.files(name)
            if f is not None:
                sets.append((name, f[0], f[1], "linear", {}))
        f = w.files("ijcnn1")
        if f is not None:
            sets.append(("ijcnn1", f[0], f[1], "kernel",
                         {"rows": 3000, "test_rows": 10000, "gamma": 2.0, "C": 32.0}))
    if not sets:
        return []
    return [Case("prediction", table=_with_repeat(studies.predict_table, sets),
                 files=sorted({p for s in sets for p in s[1:3]}))]


register(Suite(
    "predict",
    "svmtool predict / svm-predict against liblinear-predict / svm-predict, whole commands",
    "Prediction as a user runs it: one model file written by the C trainer (liblinear-train -s "
    "1; svm-train, RBF, on 3000 rows of ijcnn1), predicted by `svmtool predict` and "
    "`liblinear-predict`, `svmtool svm-predict` and `svm-predict` on the same test text "
    "(ijcnn1 kernel: 10000 test rows; rows drawn by a seeded generator, as the harness "
    "subsamples), interleaved.",
    _predict_cases,
    replaces="benchmarks/end_to_end.py predict"))

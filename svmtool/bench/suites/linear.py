"""The linear suites: every linear solver against LIBLINEAR and scikit-learn, the C sweep, and
the per-family studies that used to be scripts under benchmarks/ (dual CD, primal Newton, the
cutting-plane family and its line searches, ordinal regression, warm start).

All run in process through :func:`svmtool.bench.run.run_one`: data in memory, median of the
timed runs after a warm-up run, objectives recomputed from w in LIBLINEAR's convention.
"""

from svmtool.bench.anchors.ours import Variant
from svmtool.bench.run import BenchConfig
from svmtool.bench.suites.registry import Case, Suite, register


def _cases(where, names, fallback=("a9a",), per_set=None, **common):
    out = []
    for name, tr, te, opts in where.sets(names, fallback):
        kw = dict(common)
        kw.update(opts)
        if per_set and not where.quick:
            kw.update(per_set.get(name, {}))
        out.append(Case(name, BenchConfig(train=tr, test=te, name=name, **kw)))
    return out


register(Suite(
    "linear",
    "every linear solver of the registry against liblinear-official and scikit-learn",
    "Every linear solver of the registry (kinds binary and multiclass, `svmtool.solvers.specs()`) "
    "at C = 1 and each solver's default eps, against liblinear-official's `train()` of the same "
    "-s number and scikit-learn's LinearSVC and SGDClassifier, in process; traces of test error "
    "and suboptimality; scaling on nested subsamples of ijcnn1.",
    lambda w: _cases(w, ["a9a", "w8a", "ijcnn1"], against=["liblinear", "sklearn"],
                     per_set={"ijcnn1": {"scaling": True}},
                     **({"scaling": True} if w.shared is None and not w.quick else {})),
    default=True))

register(Suite(
    "c-sweep",
    "dcd-l1, dcd-l2, newton, ocas over C = 0.01 ... 100 against liblinear-official",
    "Iterations, time and objective of dcd-l1, dcd-l2, newton and ocas at C = 0.01, 0.1, 1, 10, "
    "100 (default eps), against liblinear-official's -s 3, -s 1, -s 2 in process.",
    lambda w: [Case(f"{c.title} C sweep", c.config) for c in _cases(
        w, ["a9a"], sweep="C", solvers=["dcd-l1", "dcd-l2", "newton", "ocas"], trace=False,
        against=["liblinear"])],
    default=True))


def _dcd_variants():
    return [Variant("dcd-l2"), Variant("dcd-l2", "dcd-l2 --liblinear-rng", {"liblinear_rng": True}),
            Variant("dcd-l1"), Variant("dcd-l1", "dcd-l1 --liblinear-rng", {"liblinear_rng": True})]


register(Suite(
    "dcd",
    "dual CD (-s 1, -s 3; with and without --liblinear-rng) against liblinear-official",
    "dcd-l2 and dcd-l1 with svmtool's generator and with `--liblinear-rng` (LIBLINEAR's "
    "permutations: the same iterations and arithmetic, so the same w) against "
    "liblinear-official's -s 1 and -s 3, at the default eps and at eps 1e-4 (where both "
    "must reach the same objective); binary sets and the one-vs-rest news20 and letter.",
    lambda w: _cases(w, ["a9a", "w8a", "ijcnn1", "news20", "letter"], variants=_dcd_variants(),
                     against=["liblinear"], trace=False, epss=[None, 1e-4],
                     per_set={"news20": {"epss": [None]}, "letter": {"epss": [None]}}),
    replaces="benchmarks/dcd_vs_liblinear.py, benchmarks/dcd_multiclass.py"))

register(Suite(
    "newton",
    "primal Newton (-s 2, -s 0) with 1 and 2 threads against liblinear-official",
    "newton (-s 2) and lr (-s 0) with `--threads 1` and `--threads 2` (the row passes split "
    "over threads; the model does not depend on it) against liblinear-official's -s 2 and -s 0, "
    "at the default eps and at eps 1e-4.",
    lambda w: _cases(w, ["a9a", "w8a", "ijcnn1", "news20"], against=["liblinear"], trace=False,
                     epss=[None, 1e-4],
                     variants=[Variant(s, f"{s} --threads {t}", {"threads": t})
                               for s in ("newton", "lr") for t in (1, 2)]),
    replaces="benchmarks/newton_vs_liblinear.py"))

register(Suite(
    "cutting-plane",
    "cp, ocas, gca2, tca against dual CD solved to eps 1e-4 (the reference optimum)",
    "The 1-slack cutting-plane family (cp: SVMperf's algorithm; ocas, gca2, tca: OCAS with the "
    "exact, GCA2 and TCA line searches) at their default eps, against dcd-l1 run to eps 1e-4 "
    "(the reference optimum of the same hinge-loss problem: rel. gap is the quality); scaling "
    "on nested subsamples of ijcnn1.  The C program svmocas is in the end-to-end suite.",
    lambda w: _cases(w, ["a9a", "w8a", "ijcnn1", "news20"], against=[], trace=False,
                     solvers=["cp", "ocas", "gca2", "tca"],
                     variants=[Variant("dcd-l1", "dcd-l1 -e 0.0001",
                                       {"eps": 1e-4, "max_iter": 100000})],
                     per_set={"ijcnn1": {"scaling": True}}),
    replaces="benchmarks/cutting_plane_bench.py quality, scaling"))

register(Suite(
    "line-search",
    "OCAS with each --line-search (exact, sorted, gca2, tca)",
    "OCAS (-s ocas) with each line search: `exact` (selection, O(n)), `sorted` (OCAS's sort, "
    "O(n log n)), Arnosti's `gca2` and `tca`; same problem, so the objectives should agree to "
    "the relative gap eps = 0.01.",
    lambda w: _cases(w, ["ijcnn1", "letter"], fallback=("a9a",), against=[], trace=False,
                     variants=[Variant("ocas", f"ocas --line-search {ls}",
                                       {"cp.line_search": ls})
                               for ls in ("exact", "sorted", "gca2", "tca")]),
    replaces="benchmarks/cutting_plane_bench.py linesearch"))


def _ordinal_cases(w):
    out = []
    letor = w.files("letor") if not w.quick and w.shared is not None else None
    if letor:
        out.append(Case("letor Fold1", BenchConfig(train=letor[0], name="letor Fold1",
                                                   solvers=["ordinal"], Cs=[1e-3], against=[],
                                                   trace=False, scaling=True)))
    for name, tr, te, opts in w.sets(["a9a"]):
        kw = dict(opts)
        if name == "a9a":
            kw["rows"] = 8000
        out.append(Case(f"{name} ROC area", BenchConfig(
            train=tr, test=te, name=f"{name} ROC area", solvers=["ordinal"], Cs=[1e-4],
            against=[], trace=False, **kw)))
    return out


register(Suite(
    "ordinal",
    "ordinal regression over qid pairs (LETOR) and the ROC-area SVM",
    "-s ordinal: the 1-slack cutting plane over the pairs within each qid (LETOR OHSUMED "
    "Fold 1, C = 0.001, with scaling over nested subsamples), and with two labels and no qid "
    "the ROC-area SVM (a9a, 8000 rows, C = 0.0001).  No anchor (SVMrank is not packaged); the "
    "objective is the solver's own.",
    _ordinal_cases,
    replaces="benchmarks/cutting_plane_bench.py ordinal"))


def _warm_variants(solvers):
    out = []
    for s in solvers:
        out += [Variant(s, f"{s} cold"), Variant(s, f"{s} warm", warm=True)]
        if s.startswith("dcd"):
            out.append(Variant(s, f"{s} warm (alpha scaled)", {"dcd.warm_start": "scaled"},
                               warm=True))
    return out


def _warm_cases(w):
    linear = ["dcd-l2", "dcd-l1", "newton", "lr", "cp", "ocas", "gca2", "tca", "ocas-mc"]
    out = []
    for name, tr, te, opts in w.sets(["a9a"]):
        out.append(Case(f"{name} nightly", BenchConfig(
            train=tr, test=te, name=f"{name} nightly", nightly=0.05, bias=1.0, against=[],
            trace=False, variants=_warm_variants(linear), **opts)))
        kopts = dict(opts)
        if name != "heart":
            kopts["rows"] = 10000
        out.append(Case(f"{name} nightly kernel", BenchConfig(
            train=tr, test=te, name=f"{name} nightly kernel", nightly=0.05, against=[],
            trace=False, variants=_warm_variants(["kernel", "dcsvm"]), **kopts)))
    return out


register(Suite(
    "warm-start",
    "cold against warm start (--init-model) on a nightly retrain, every solver family",
    "The cron scenario: yesterday's model was trained on the training file; today's data is it "
    "with 5% of its rows replaced by test rows.  Each solver trains today's data from scratch "
    "(`cold`) and from yesterday's model (`warm`, `--init-model`; yesterday's training is "
    "untimed); dcd-* also with the dual start the model's w gives (`alpha scaled`), which is "
    "why they start cold.  -B 1; kernel solvers on 10000 rows.",
    _warm_cases,
    replaces="benchmarks/warm_start.py"))

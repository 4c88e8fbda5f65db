"""The end-to-end suite: ``svmtool train`` against the C programs, each a whole command line on
the same svmlight text file (process start, reading, training, writing the model), timed from
outside (see :mod:`svmtool.bench.anchors.programs`).  What a Makefile or a cron job pays per
call.
"""

from svmtool.bench.run import BenchConfig
from svmtool.bench.suites import derived
from svmtool.bench.suites.registry import Case, Suite, register

PROGRAMS = ["liblinear-train", "svm-train", "svmocas", "svm_perf_learn"]


def _cases(w):
    out = []
    for name, tr, te, opts in w.sets(["a9a", "news20"]):
        solvers = (["dcd-l2", "dcd-l1"] if name == "news20"
                   else ["dcd-l2", "newton", "dcd-l1", "lr", "ocas", "cp"])
        out.append(Case(f"{name} end to end", BenchConfig(
            train=tr, test=te, name=f"{name} end to end", solvers=solvers, end_to_end=True,
            against=PROGRAMS, trace=False, **opts)))
    for name, tr, te, opts in w.sets(["ijcnn1"], fallback=("heart",)):
        kw = dict(opts)
        if name == "ijcnn1":
            kw.update(rows=3000, gamma=2.0, Cs=[32.0])
        out.append(Case(f"{name} kernel end to end", BenchConfig(
            train=tr, test=te, name=f"{name} kernel end to end", solvers=["kernel", "dcsvm"],
            end_to_end=True, against=PROGRAMS, trace=False, **kw)))
    return out


register(Suite(
    "end-to-end",
    "svmtool train against liblinear-train, svm-train, svmocas, svm_perf_learn, whole commands",
    "Whole command lines on the same text file, timed from outside (start to exit, median of "
    "the timed runs after one warm-up run): `svmtool train -s NAME` against the C programs on "
    "PATH -- `liblinear-train -s N` for the same problem, `svmocas` (OCAS), `svm_perf_learn` "
    "(SVMperf, when installed) and, for the kernel solvers, `svm-train` (LIBSVM).  svmtool's "
    "warm-up run compiles into an empty numba cache of its own, so `jit/warm-up s` is the "
    "compile cost of a first run; peak memory is not measured for commands.  The model files are "
    "read back for the objective and the test accuracy.",
    _cases,
    default=True,
    replaces="benchmarks/end_to_end.py"))


def _dcsvm_cases(w):
    from svmtool.bench.anchors import Variant

    out = []
    for name, tr, te, opts in w.sets(["ijcnn1"], fallback=("heart",)):
        kw = dict(opts)
        kw.update(gamma=2.0, Cs=[32.0], cache_mb=1000.0)
        if w.large and name == "ijcnn1":
            tr, te = derived.shuffled_split(tr, te, w.work, "ijcnn1-120k")
            name = "ijcnn1 120k"
        out.append(Case(f"{name} DC-SVM end to end", BenchConfig(
            train=tr, test=te, name=f"{name} DC-SVM end to end", end_to_end=True,
            variants=[Variant("dcsvm", "dcsvm", {"bias": 1.0}),
                      Variant("dcsvm", "dcsvm --early", {"bias": 1.0, "dcsvm.early": True})],
            against=["svm-train"], trace=False, repeat=5, interleave=True, **kw)))
    return out


register(Suite(
    "dcsvm-e2e",
    "svmtool train -s dcsvm (exact and --early) against svm-train on all of ijcnn1, whole commands",
    "Issue 18's DC-SVM case: `svmtool train -s dcsvm -c 32 -g 2 -m 1000` (its default kernel "
    "bias -B 1) exact and with `--early` (the early-prediction model of the level with about 64 "
    "clusters), against LIBSVM's `svm-train -c 32 -g 2 -m 1000`, each a whole command on the "
    "same text file (all 49,990 rows of ijcnn1), timed from outside; accuracy on ijcnn1.t. "
    "One warm-up run of each, then five rounds in which each command runs once (interleaved, "
    "so that the load of a shared machine reaches all alike); medians.  With `--large`: "
    "ijcnn1's training and test files together (141,691 rows) shuffled with a fixed seed, the "
    "first 120,000 rows to train and the other 21,691 to test (built in --out/data), where "
    "the kernel work, not start-up, decides the time.",
    _dcsvm_cases))


def _c_program_cases(w):
    import shlex

    from svmtool.bench.anchors import Variant
    from svmtool.bench.anchors.programs import find_program

    out = []
    for name, tr, te, opts in w.sets(["news20"], fallback=()):
        if name != "news20":        # (only the shared news20 has its classes)
            continue
        tr, te = derived.binarised(tr, te, w.work, "news20-binary", 11)
        out.append(Case("news20 (1-10 vs 11-20) OCAS end to end", BenchConfig(
            train=tr, test=te, name="news20 (1-10 vs 11-20) OCAS end to end", solvers=["ocas"],
            Cs=[1.0], epss=[0.001], end_to_end=True, against=["svmocas"], trace=False,
            repeat=5, interleave=True)))
    learn, classify = find_program("svm_perf_learn"), find_program("svm_perf_classify")
    perf = {}
    if learn is not None:       # SVMperf's own default algorithm (-w 9), as a user runs it
        perf = dict(external=f"{shlex.quote(learn)} -c {{perf_c}} -e 0.1 --b 0 {{train}} {{model}}",
                    external_model="svmtool")
        if classify is not None:
            perf["external_predict"] = (f"{shlex.quote(classify)} {{test}} {{model}} "
                                        f"{{predictions}}")
    for name, tr, te, opts in w.sets(["a9a"]):
        out.append(Case(f"{name} 1-slack CP at SVMperf's rule end to end", BenchConfig(
            train=tr, test=te, name=f"{name} 1-slack CP at SVMperf's rule end to end",
            Cs=[1.0], end_to_end=True, against=[], trace=False,
            variants=[Variant("cp", "cp --perf-e 0.1", {"cp.perf_eps": 0.1})],
            repeat=5, interleave=True, **perf, **opts)))
    # multi-core LIBLINEAR (-m 2) against svmtool train --threads 2 and 1, -s 0, 1, 2 (the
    # two-thread run first: the time ratios pair the anchor with it)
    threads = [Variant(str(s), f"{s} --threads {t}", {"threads": t})
               for s in MULTICORE_SOLVERS for t in (2, 1)]
    for name, tr, te, opts in w.sets(["news20", "a9a"]):
        out.append(Case(f"{name} multi-core LIBLINEAR end to end", BenchConfig(
            train=tr, test=te, name=f"{name} multi-core LIBLINEAR end to end", Cs=[1.0],
            end_to_end=True, variants=threads, against=["liblinear-mc"], trace=False,
            interleave=True, **opts)))
    return out


MULTICORE_SOLVERS = (0, 1, 2)       # LIBLINEAR's -s of the multi-core rows


register(Suite(
    "c-programs",
    "OCAS against svmocas (news20, 1-10 vs 11-20), cp against svm_perf_learn (a9a), -s 0, 1, 2 "
    "against multi-core LIBLINEAR (news20, a9a), whole commands",
    "Issue 30's rows against the two single-threaded C programs of the cutting-plane family, "
    "whole commands on the same text file, timed from outside, one warm-up run of each and "
    "five interleaved rounds (medians): `svmtool train -s ocas -c 1 -e 0.001` against "
    "`svmocas -c 1 -b 0 -r 0.001` on news20 with the classes 1-10 as +1 and 11-20 as -1 "
    "(built in --out/data), and `svmtool train -s cp -c 1 --perf-e 0.1` (SVMperf's stopping "
    "rule) against `svm_perf_learn -c 325.61 -e 0.1 --b 0` (its default algorithm) on a9a "
    "(SVMperf's C is C n / 100), compared at the objective each reaches.  Issue 40's "
    "multi-core rows, on news20 (20 classes) and a9a: `svmtool train -s N -c 1 --threads T` "
    "(T = 1, 2) for N = 0, 1, 2, against multi-core LIBLINEAR (PyPI's liblinear-multicore, "
    "`-s N -c 1 -m 2`) as one Python process that reads the same text file (scikit-learn's "
    "`load_svmlight_file` where its venv has scikit-learn, else the package's own "
    "`svm_read_problem`), trains and saves the model (svmtool/bench/anchors/"
    "liblinear_mc_child.py), each timed from outside, start to exit, three interleaved rounds "
    "after one warm-up run.  That package's module `liblinear` clashes with liblinear-official's, "
    "so it lives in a venv of its own, named by the environment variable "
    "`SVMTOOL_BENCH_LIBLINEAR_MC_PYTHON` (that venv's python, e.g. after `python3 -m venv "
    "VENV; VENV/bin/pip install liblinear-multicore scikit-learn`); unset or without the "
    "package, its rows are left out with one line saying why.",
    _c_program_cases))

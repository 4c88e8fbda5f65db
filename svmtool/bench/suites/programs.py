"""The end-to-end suite: ``svmtool train`` against the C programs, each a whole command line on
the same svmlight text file (process start, reading, training, writing the model), timed from
outside (see :mod:`svmtool.bench.anchors.programs`).  What a Makefile or a cron job pays per
call.
"""

from svmtool.bench.run import BenchConfig
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
    "so that the load of a shared machine reaches all alike); medians.",
    _dcsvm_cases))

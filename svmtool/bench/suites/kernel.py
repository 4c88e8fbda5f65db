"""The kernel suites: the exact kernel solver and DC-SVM against LIBSVM (in process), DC-SVM's
early-prediction model, the kernel-bias study behind the kernel solvers' default -B 1, and the
exact C-SVC peers (svmtool's LIBSVM-compatible solver against svm-train, scikit-learn's SVC and
scikit-learn-intelex's).

RBF kernel throughout.  svmtool's kernel rows run without the bias (-B -1) unless the variant
says -B 1: LIBSVM's and SVC's unregularised offset b is one more free variable, so their
objective can be lower (said above every table).
"""

from svmtool.bench.anchors.ours import Variant
from svmtool.bench.run import BenchConfig
from svmtool.bench.suites.registry import Case, Suite, register


def _kernel_cases(w, rows, variants=(), solvers=("kernel", "dcsvm"), against=("libsvm", "sklearn"),
                  **kw):
    out = []
    for name, tr, te, opts in w.sets(["ijcnn1"], fallback=("heart",)):
        o = dict(kw)
        o.update(opts)
        title = f"{name} kernel"
        if name == "ijcnn1":
            o.update(rows=rows, gamma=2.0, Cs=[32.0])
            title = f"ijcnn1 kernel {rows} rows" if rows != 3000 else "ijcnn1 kernel"
        out.append(Case(title, BenchConfig(train=tr, test=te, name=title, solvers=list(solvers),
                                           variants=list(variants), against=list(against), **o)))
    return out


register(Suite(
    "kernel",
    "the kernel solvers (kernel, dcsvm) against libsvm-official and scikit-learn's SVC",
    "The exact kernel solver (greedy dual CD with shrinking) and DC-SVM on 3000 rows of "
    "ijcnn1 (RBF, gamma = 2, C = 32, -B -1), against libsvm-official's svm_train and "
    "scikit-learn's SVC in process; traces from an -e ladder.",
    lambda w: _kernel_cases(w, 3000),
    default=True))

register(Suite(
    "dcsvm",
    "DC-SVM (exact, --early, -B 1) and the kernel solver against libsvm-official, 10000 rows",
    "DC-SVM exact and with `--early` (the early-prediction model of the level with about 64 "
    "clusters), and both svmtool kernel solvers with the kernel bias -B 1, against "
    "libsvm-official on 10000 rows of ijcnn1 (RBF, gamma = 2, C = 32).  The early model has "
    "no single kernel expansion: its objective is n/a, its accuracy is measured.",
    lambda w: _kernel_cases(
        w, 10000, against=["libsvm"], trace=False,
        variants=[Variant("dcsvm", "dcsvm --early", {"dcsvm.early": True}),
                  Variant("kernel", "kernel -B 1", {"bias": 1.0}),
                  Variant("dcsvm", "dcsvm -B 1", {"bias": 1.0})]),
    replaces="benchmarks/dcsvm_vs_libsvm.py"))

# name: (set, C, gamma or None = 1/features, training rows or None, rows held out for testing)
_BIAS_SETS = {
    "ijcnn1-10k": ("ijcnn1", 32.0, 2.0, 10000, None),
    "mushrooms": ("mushrooms", 1.0, None, None, 6000),
    "letter": ("letter", 8.0, 2.0, None, None),
    "a9a-10k": ("a9a", 1.0, 0.05, 10000, None),
    "w8a-10k": ("w8a", 8.0, None, 10000, None),
}


def _bias_variants():
    out = []
    for early in (False, True):
        for bias in (-1.0, 1.0):
            for seed in (1, 2, 3):
                opts = {"bias": bias, "seed": seed}
                if early:
                    opts["dcsvm.early"] = True
                out.append(Variant("dcsvm", f"dcsvm{' --early' if early else ''} -B {bias:g} "
                                            f"--seed {seed}", opts))
    return out


def _bias_cases(w):
    out = []
    if w.quick or w.shared is None:
        for name, tr, te, opts in w.sets([], fallback=("heart",)):
            out.append(Case(f"{name} kernel bias", BenchConfig(
                train=tr, test=te, name=f"{name} kernel bias", variants=_bias_variants(),
                against=[], trace=False, memory=False, repeat=1, **opts)))
        return out
    for title, (name, C, gamma, rows, split) in _BIAS_SETS.items():
        f = w.files(name)
        if f is None:
            continue
        out.append(Case(title, BenchConfig(
            train=f[0], test=f[1], name=title, Cs=[C], gamma=gamma, rows=rows, split=split,
            variants=_bias_variants(), against=[], trace=False, memory=False, repeat=1)))
    return out


register(Suite(
    "kernel-bias",
    "DC-SVM exact and --early without and with the kernel bias (-B -1 / -B 1), 3 seeds",
    "Test accuracy of DC-SVM (exact, and `--early`) without the kernel bias (-B -1, the DC-SVM "
    "paper's problem) and with it (-B 1, K + 1), three clustering seeds each: the measurement "
    "behind the kernel solvers' default -B 1 (KERNEL_DEFAULT_BIAS in "
    "svmtool/solvers/__init__.py).  One timed run per row; mushrooms has no test file: 6000 rows "
    "train, the rest test.",
    _bias_cases,
    replaces="benchmarks/kernel_bias.py"))


# the exact C-SVC problem of the peers: RBF, gamma = 2, C = 32, a kernel cache of 1000 MB
PEER_KERNEL = dict(gamma=2.0, Cs=[32.0], cache_mb=1000.0)
PEER_ROWS = 10000


def _peer_cases(w):
    out = []
    for name, tr, te, opts in w.sets(["ijcnn1"], fallback=("heart",)):
        kw = dict(opts)
        sizes = [(f"{name} C-SVC peers", None)]
        if name == "ijcnn1":
            kw.update(PEER_KERNEL)
            sizes = [(f"ijcnn1 C-SVC peers, first {PEER_ROWS} rows", PEER_ROWS),
                     ("ijcnn1 C-SVC peers, all rows", None)]
        for title, head in sizes:
            out.append(Case(title, BenchConfig(
                train=tr, test=te, name=title, solvers=["c_svc"], head=head, end_to_end=True,
                variants=[Variant("c_svc", "c_svc --threads 1", {"threads": 1})],
                against=["svm-train", "sklearn-svc", "sklearn-svc-dense", "sklearnex",
                         "sklearnex-dense"], trace=False, memory=False,
                interleave=True, **kw)))
    return out


register(Suite(
    "kernel-peers",
    "exact C-SVC, whole commands: svmtool train -s c_svc against svm-train, scikit-learn's SVC "
    "and scikit-learn-intelex's SVC (optional), ijcnn1 10,000 rows and all",
    "Issue 40's exact kernel peers, all on LIBSVM's C-SVC problem (its unregularised offset b; "
    "RBF, gamma = 2, C = 32, eps 0.001, a 1000 MB kernel cache) on the first 10,000 rows of "
    "ijcnn1 and on all 49,990, tested on ijcnn1.t.  Every row times a whole command on the "
    "same text file, from outside, start to exit (start-up, reading, training, writing the "
    "model): `svmtool train -s c_svc -c 32 -t 2 -g 2 -m 1000 -B -1` (svmtool's "
    "LIBSVM-compatible SMO, no kernel bias; from 5,000 variables on it works on batched "
    "working sets, svmtool/solvers/kernel/bsmo.py; `svmtool svm-train` runs the same solver), "
    "with its default threads (the cores this process may use) and with `--threads 1`, "
    "LIBSVM's `svm-train -c 32 -g 2 -m 1000`, and for scikit-learn's `SVC(C=32, gamma=2, "
    "cache_size=1000)` and scikit-learn-intelex's (`sklearnex.svm.SVC`, oneDAL, its own "
    "threads: all cores) a Python process that imports it, reads the file with "
    "`load_svmlight_file`, fits and writes the model in LIBSVM's format "
    "(svmtool/bench/anchors/svc_child.py), fitting the reader's scipy CSR matrix as it comes "
    "or (`, dense` rows) a dense numpy copy made in that process (ijcnn1 has 22 features; "
    "CPU against wall seconds shows the cores each used).  sklearnex is optional: it runs "
    "under the python named by the environment variable `SVMTOOL_BENCH_SKLEARNEX_PYTHON` (a "
    "venv of its own: the TBB it brings could become numba's threading layer in svmtool's), "
    "else under svmtool's "
    "when it imports there; otherwise its row is left out with one line saying why.  One "
    "warm-up run of each, then interleaved rounds (medians); CPU seconds are the child's, all "
    "threads.  Each model file is read back here: the objective (LIBSVM's problem, the same "
    "for all rows), nSV (listed under the table) and the test accuracy are computed alike.",
    _peer_cases))

"""DC-SVM and the exact kernel solver against libsvm-official, same C / kernel / eps.

Times are solver-only wall times (data already in memory; the JIT is warmed on a tiny problem
first).  Accuracy on the test file.  ``ref`` runs our exact solver at ``--ref-eps`` (default
1e-5) to give the objective the others are compared with (relative difference).

Examples (from the repository root)::

    python benchmarks/dcsvm_vs_libsvm.py ../shared/data/ijcnn1/ijcnn1 \\
        ../shared/data/ijcnn1/ijcnn1.t -c 32 -g 2 --rows 10000
    python benchmarks/dcsvm_vs_libsvm.py ../shared/data/letter/letter.scale \\
        ../shared/data/letter/letter.scale.t -c 8 -g 2 --run libsvm,kernel,dcsvm,early
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from svmtool import api  # noqa: E402
from svmtool.io.svmlight import load_data  # noqa: E402
from _typed import train_params  # noqa: E402


def libsvm_run(prob, test, a):
    from libsvm import svmutil

    X = prob.X
    Xt = test.X
    if Xt.shape[1] < X.shape[1]:
        import scipy.sparse as sp

        Xt = sp.csr_matrix((Xt.data, Xt.indices, Xt.indptr), shape=(Xt.shape[0], X.shape[1]))
    opts = f"-s 0 -t {a.t} -c {a.c} -e {a.eps} -m {a.m} -q -d {a.d} -r {a.r}"
    if a.g is not None:
        opts += f" -g {a.g}"
    p = svmutil.svm_problem(prob.y, X)
    t0 = time.perf_counter()
    m = svmutil.svm_train(p, svmutil.svm_parameter(opts))
    t = time.perf_counter() - t0
    # accuracy through svmtool's LIBSVM reader (its decisions equal libsvm's, see
    # tests/test_libsvm_model.py; libsvm's Python svm_predict is slow on large test sets)
    import tempfile

    from svmtool.io.model_io import load_model

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "libsvm.model")
        svmutil.svm_save_model(path, m)
        model = load_model(path)
    t1 = time.perf_counter()
    lab, _ = api.predict(model, test)
    tp = time.perf_counter() - t1
    return {"time": t, "acc": 100.0 * float(np.mean(lab == test.y)), "n_sv": m.l,
            "predict_time": tp}


def ours(prob, test, a, solver, eps, **extra):
    ex = {"kernel_type": a.t, "gamma": a.g, "degree": a.d, "coef0": a.r, "cache_mb": a.m,
          "levels": a.levels, "k_clusters": a.k, "sample": a.sample}
    ex.update(extra)
    params = train_params(solver, C=a.c, eps=eps, bias=a.bias, threads=a.threads, **ex)
    t0 = time.perf_counter()
    model = api.train(prob, params)
    t = time.perf_counter() - t0
    t1 = time.perf_counter()
    lab, _ = api.predict(model, test)
    tp = time.perf_counter() - t1
    reps = model.report["classes"]
    obj = sum(r["dual"] for r in reps)
    return {"time": t, "acc": 100.0 * float(np.mean(lab == test.y)), "objective": obj,
            # support vectors of the model (each row once, as LIBSVM counts them); an early
            # model has no such list: the per-pair counts summed
            "n_sv": int(np.sum(model.nr_sv)) if getattr(model, "nr_sv", None) is not None
            else sum(r.get("n_sv", 0) for r in reps), "predict_time": tp,
            "levels": model.report.get("levels")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("-c", type=float, default=1.0)
    ap.add_argument("-g", type=float, default=None)
    ap.add_argument("-t", type=int, default=2)
    ap.add_argument("-d", type=int, default=3)
    ap.add_argument("-r", type=float, default=0.0)
    ap.add_argument("-m", type=float, default=100.0)
    ap.add_argument("-e", "--eps", type=float, default=1e-3)
    ap.add_argument("--bias", type=float, default=-1.0)
    ap.add_argument("--ref-eps", type=float, default=1e-5)
    ap.add_argument("--levels", type=int, default=4)
    ap.add_argument("-k", type=int, default=4)
    ap.add_argument("--sample", type=int, default=1000)
    ap.add_argument("--early", type=int, default=0)
    ap.add_argument("--overlap", type=int, default=None,
                    help="multi-class early model: clusters a border row may join")
    ap.add_argument("--overlap-quantile", type=float, default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the list N times interleaved; report median times")
    ap.add_argument("--rows", type=int, default=None,
                    help="a random subsample of N training rows (seed 0)")
    ap.add_argument("--run", default="libsvm,kernel,dcsvm,early",
                    help="comma list of libsvm, kernel, dcsvm, early, ref, dcsvm-bias, "
                         "kernel-bias, early-bias, ref-bias (the -bias items use -B 1, the "
                         "others --bias)")
    a = ap.parse_args()
    prob = load_data(a.train)
    if a.rows:
        keep = np.random.default_rng(0).permutation(prob.n_rows)[:min(a.rows, prob.n_rows)]
        prob = prob.take_rows(np.sort(keep))
    test = load_data(a.test)
    # warm the JIT on a small slice
    small = prob.take_rows(np.arange(min(200, prob.n_rows)))
    for early in (None, 0):     # (early: the multi-class early model's kernels too)
        api.train(small, train_params("dcsvm", C=1.0, kernel_type=a.t, gamma=a.g, early=early))
    print(f"# {a.train} rows {prob.n_rows} test {test.n_rows}: -t {a.t} -c {a.c} -g {a.g} "
          f"-d {a.d} -r {a.r} -e {a.eps} -m {a.m}", flush=True)
    rows = {}
    times = {}
    items = a.run.split(",")
    # --repeat N: the list is run N times, interleaved; times are medians, the rest from the last
    for rep in range(a.repeat):
        for what in items:
            r = run_one(what, prob, test, a)
            times.setdefault(what, []).append(r["time"])
            r["times"] = list(times[what])
            r["time"] = float(np.median(times[what]))
            rows[what] = r
            if rep < a.repeat - 1:
                print(f"  (repeat {rep + 1}) {what:12s} {r['times'][-1]:.3f} s", flush=True)
    report(rows)


# --run items other than libsvm: name -> (solver, eps option, early model); the same name with
# "-bias" appended runs with the kernel bias -B 1 instead of --bias
RUNS = {"kernel": ("kernel", "eps", False), "ref": ("kernel", "ref_eps", False),
        "dcsvm": ("dcsvm", "eps", False), "early": ("dcsvm", "eps", True)}


def run_one(what, prob, test, a):
    """One --run item: a dict with time, acc, n_sv, predict_time (objective, levels: ours)."""
    if what == "libsvm":
        return libsvm_run(prob, test, a)
    base = what[:-len("-bias")] if what.endswith("-bias") else what
    if base not in RUNS:
        raise SystemExit(f"unknown --run item {what}")
    solver, eps_option, early = RUNS[base]
    if base != what:
        a = argparse.Namespace(**{**vars(a), "bias": 1.0})
    extra = {"early": a.early} if early else {}
    for key in ("overlap", "overlap_quantile"):
        if early and getattr(a, key) is not None:
            extra[key] = getattr(a, key)
    return ours(prob, test, a, solver, getattr(a, eps_option), **extra)


def report(rows):
    for what, r in rows.items():
        obj = r.get("objective")
        many = r.get("times", [])
        spread = f" (min {min(many):.3f} max {max(many):.3f}, {len(many)} runs)" if len(many) > 1 \
            else ""
        print(f"{what:12s} time {r['time']:9.3f} s{spread}  acc {r['acc']:8.4f}%  "
              f"nSV {r['n_sv']:7d}  "
              f"predict {r['predict_time']:7.3f} s"
              + (f"  objective {obj:.10g}" if obj is not None else ""), flush=True)
        for st in r.get("levels") or []:
            print(f"    level {st['level']!s:>6} clusters {st['clusters']:5d} "
                  f"cluster {st['cluster_time']:7.3f} s train {st['train_time']:8.3f} s "
                  f"nSV {st['n_sv']:6d} obj {st['objective']:.8g}", flush=True)
    for name in ("ref", "ref-bias"):
        if name not in rows:
            continue
        ref = rows[name]["objective"]
        # (an early model's objective is its level's block-diagonal one: not comparable)
        same = [k for k in rows if k.endswith("-bias") == name.endswith("-bias")
                and not k.startswith("early")]
        for k in same:
            r = rows[k]
            if r.get("objective") is not None and k != name:
                print(f"rel. objective difference {k} vs {name}: "
                      f"{(r['objective'] - ref) / abs(ref):.3e}")
    if "libsvm" in rows:
        for k, r in rows.items():
            if k != "libsvm":
                print(f"speed-up of {k} over libsvm: {rows['libsvm']['time'] / r['time']:.2f}x, "
                      f"accuracy difference {r['acc'] - rows['libsvm']['acc']:+.3f} points")


if __name__ == "__main__":
    main()

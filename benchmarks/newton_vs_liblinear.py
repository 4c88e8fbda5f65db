"""Primal Newton (svmtool -s 0 / -s 2) against liblinear-official, side by side.

For every data set and solver it measures, interleaving the runs (the machine is noisy):

* solver time: liblinear-official's ``train()`` call (the C solver, data already converted) and
  svmtool's ``api.train`` solver loop (``model.report["train_time"]``; JIT compile excluded by a
  warm-up run) with 1 and 2 threads; min and median over ``--repeats``;
* quality at a tight tolerance (``--tight-eps``): the objective of every one-vs-rest column,
  recomputed here with numpy from each tool's weights, as the largest relative difference;
* accuracy on the test file at the default tolerance.

Usage (from the repository root)::

    .venv/bin/python benchmarks/newton_vs_liblinear.py                # ../shared/data sets
    .venv/bin/python benchmarks/newton_vs_liblinear.py --datasets a9a --repeats 5
    .venv/bin/python benchmarks/newton_vs_liblinear.py --find-c       # also -C on a9a
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SETS = {
    "a9a": ("a9a/a9a", "a9a/a9a.t"),
    "w8a": ("w8a/w8a", "w8a/w8a.t"),
    "ijcnn1": ("ijcnn1/ijcnn1", "ijcnn1/ijcnn1.t"),
    "news20": ("news20/news20", "news20/news20.t"),
}


def objective(loss, w, X, y, cost):
    z = y * (X @ w)
    if loss == "l2":
        return 0.5 * w @ w + float(cost @ np.maximum(0.0, 1.0 - z) ** 2)
    return 0.5 * w @ w + float(cost @ np.logaddexp(0.0, -z))


def liblinear_w(model, n_cols):
    """LIBLINEAR's weights as (n_cols, nr_w) in its label order."""
    nr_w = 1 if model.nr_class == 2 else model.nr_class
    w = np.array([model.w[i] for i in range(n_cols * nr_w)]).reshape(n_cols, nr_w)
    return w, [int(model.label[i]) for i in range(model.nr_class)]


def column_objectives(loss, W, labels, X, y, C):
    """Objective of each one-vs-rest column (two classes: one column toward labels[0])."""
    out = []
    cols = W.shape[1]
    for k in range(cols):
        yb = np.where(y == labels[k], 1.0, -1.0)
        out.append(objective(loss, W[:, k], X, yb, np.full(len(y), C)))
    return np.array(out)


def run(args):
    from liblinear.liblinearutil import parameter, problem, train

    from svmtool import api
    from svmtool.io.svmlight import load_data

    data_dir = Path(args.data_dir)
    rows = []
    for name in args.datasets.split(","):
        tr_path, te_path = (data_dir / p for p in SETS[name])
        if not tr_path.exists():
            print(f"skip {name}: {tr_path} absent", file=sys.stderr)
            continue
        tr = load_data(str(tr_path))
        te = load_data(str(te_path))
        X = tr.X
        lp = problem(tr.y, X)
        for s in args.solvers.split(","):
            solver = {"0": "lr", "2": "newton"}[s]
            loss = "lr" if s == "0" else "l2"
            reps = args.repeats
            # warm-up (JIT compile, page cache)
            api.train(tr, solver=solver, C=args.C, eps=0.01, threads=1)
            t_lib, t1, t2 = [], [], []
            for _ in range(reps):
                t = time.perf_counter()
                m_lib = train(lp, parameter(f"-s {s} -c {args.C} -e 0.01 -q"))
                t_lib.append(time.perf_counter() - t)
                m1 = api.train(tr, solver=solver, C=args.C, eps=0.01, threads=1)
                t1.append(m1.report["train_time"])
                m2 = api.train(tr, solver=solver, C=args.C, eps=0.01, threads=2)
                t2.append(m2.report["train_time"])
            # accuracy at the default eps
            from liblinear.liblinearutil import predict as ll_predict

            ll_lab, _, _ = ll_predict(te.y, te.X[:, :X.shape[1]] if te.X.shape[1] > X.shape[1]
                                      else te.X, m_lib, "-q")
            acc_lib = 100.0 * float(np.mean(np.array(ll_lab) == te.y))
            lab1, _ = api.predict(m1, te)
            acc1 = 100.0 * float(np.mean(lab1 == te.y))
            # objective at a tight eps (--tight-eps 0: skipped)
            rel, t_lib_tight, t_ours_tight = float("nan"), float("nan"), float("nan")
            if args.tight_eps > 0:
                t = time.perf_counter()
                m_lib_t = train(lp, parameter(f"-s {s} -c {args.C} -e {args.tight_eps} -q"))
                t_lib_tight = time.perf_counter() - t
                m_t = api.train(tr, solver=solver, C=args.C, eps=args.tight_eps, threads=1)
                t_ours_tight = m_t.report["train_time"]
                W_lib, lab_lib = liblinear_w(m_lib_t, X.shape[1])
                f_lib = column_objectives(loss, W_lib, lab_lib, X, tr.y, args.C)
                f_ours = column_objectives(loss, m_t.w, [int(v) for v in m_t.labels], X, tr.y,
                                           args.C)
                rel = float(np.max(np.abs(f_ours - f_lib) / np.abs(f_lib)))
            row = dict(data=name, s=s, lib_min=min(t_lib), lib_med=statistics.median(t_lib),
                       t1_min=min(t1), t1_med=statistics.median(t1), t2_min=min(t2),
                       t2_med=statistics.median(t2), acc_lib=acc_lib, acc=acc1, rel_obj=rel,
                       lib_tight=t_lib_tight, ours_tight=t_ours_tight,
                       iters=sum(c["iterations"] for c in m1.report["classes"]),
                       cg=sum(c.get("cg_steps", 0) for c in m1.report["classes"]))
            rows.append(row)
            print(f"{name:7s} -s {s}: liblinear {row['lib_min']:.3f}/{row['lib_med']:.3f} s, "
                  f"ours 1t {row['t1_min']:.3f}/{row['t1_med']:.3f} s "
                  f"({row['lib_med'] / row['t1_med']:.2f}x), 2t {row['t2_min']:.3f}/"
                  f"{row['t2_med']:.3f} s ({row['lib_med'] / row['t2_med']:.2f}x); "
                  f"acc {acc_lib:.2f} vs {acc1:.2f}; rel obj diff at eps {args.tight_eps:g}: "
                  f"{rel:.2e} (tight: lib {t_lib_tight:.2f} s, ours {row['ours_tight']:.2f} s); "
                  f"Newton its {row['iters']}, CG {row['cg']}", flush=True)
    print()
    print("| data | -s | liblinear s (min/med) | svmtool 1 thread | speed-up (medians) | "
          "svmtool 2 threads | speed-up (medians) | acc liblinear | acc svmtool | "
          "rel. objective diff (tight eps) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['data']} | {r['s']} | {r['lib_min']:.3f} / {r['lib_med']:.3f} | "
              f"{r['t1_min']:.3f} / {r['t1_med']:.3f} | {r['lib_med'] / r['t1_med']:.2f}x | "
              f"{r['t2_min']:.3f} / {r['t2_med']:.3f} | {r['lib_med'] / r['t2_med']:.2f}x | "
              f"{r['acc_lib']:.2f} | {r['acc']:.2f} | {r['rel_obj']:.1e} |")
    if args.find_c:
        find_c_bench(args)


def find_c_bench(args):
    from liblinear.liblinearutil import parameter, problem, train

    from svmtool.io.svmlight import load_data
    from svmtool.params import TrainParams
    from svmtool.solvers.param_search import find_c

    tr = load_data(str(Path(args.data_dir) / "a9a" / "a9a"))
    lp = problem(tr.y, tr.X)
    for s, solver in (("2", "newton"), ("0", "lr")):
        t = time.perf_counter()
        best = train(lp, parameter(f"-C -s {s} -q"))
        t_lib = time.perf_counter() - t
        for th in (1, 2):
            t = time.perf_counter()
            res = find_c(tr, TrainParams(solver=solver, threads=th), 5)
            t_ours = time.perf_counter() - t
            print(f"-C -s {s} a9a: liblinear best C {best[0]:g} ({100 * best[2]:.4g}%) in "
                  f"{t_lib:.2f} s; svmtool ({th} thread(s)) best C {res.best_C:g} "
                  f"({100 * res.best_rate:.4g}%) in {t_ours:.2f} s, {len(res.path)} values of C",
                  flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--datasets", default="a9a,w8a,ijcnn1,news20")
    ap.add_argument("--solvers", default="2,0")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--tight-eps", type=float, default=1e-4,
                    help="eps of the objective comparison; 0 skips it")
    ap.add_argument("--find-c", action="store_true")
    run(ap.parse_args())


if __name__ == "__main__":
    main()

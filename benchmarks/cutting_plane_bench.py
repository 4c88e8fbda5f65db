"""Benchmark of the cutting-plane family (cp, ocas/exact, gca2, tca, ordinal) against DCD-L1.

    python benchmarks/cutting_plane_bench.py quality  [--data DIR] [--sets a9a,w8a,...]
    python benchmarks/cutting_plane_bench.py linesearch [--sets ijcnn1,letter] [--repeat 3]
    python benchmarks/cutting_plane_bench.py scaling  [--sets ijcnn1,news20] [--perf-c 500]
    python benchmarks/cutting_plane_bench.py ordinal

Data default: ../shared/data beside the repository.  Every timed run comes after a warm-up run on
a small slice (JIT compile and cache loads excluded).  Times are solver times (inside fit);
``extra`` breaks them into data passes, QP and line search.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from svmtool.labels import class_index, group_classes  # noqa: E402
from svmtool.io.svmlight import load_data  # noqa: E402
from _typed import train_params  # noqa: E402
from svmtool.solvers import get_spec  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
FILES = {"a9a": ("a9a/a9a", "a9a/a9a.t"), "w8a": ("w8a/w8a", "w8a/w8a.t"),
         "ijcnn1": ("ijcnn1/ijcnn1", "ijcnn1/ijcnn1.t"),
         "news20": ("news20/news20", "news20/news20.t"),
         "letter": ("letter/letter.scale", "letter/letter.scale.t"),
         "heart": ("heart/heart_scale", None)}


def load(name, data):
    tr, te = FILES[name]
    p = load_data(str(data / tr))
    q = load_data(str(data / te)) if te else None
    return p, q


def binary_tasks(p):
    """(y in {-1,+1}) per one-vs-rest task, as the API builds them."""
    labels, *_ = group_classes(p.y)
    cls = class_index(p.y, labels)
    if len(labels) == 2:
        return labels, [np.where(cls == 0, 1.0, -1.0)]
    return labels, [np.where(cls == i, 1.0, -1.0) for i in range(len(labels))]


def run(solver, p, y, C=1.0, eps=None, **extra):
    spec = get_spec(solver)
    prm = train_params(solver, C=C, eps=eps if eps is not None else spec.default_eps,
                       **extra)
    fit = spec.load()
    t = time.perf_counter()
    if spec.kind == "ranking":
        r = fit(p.indptr, p.indices, p.data, y, p.qid, p.n_features, C, prm)
    else:
        r = fit(p.indptr, p.indices, p.data, y, p.n_features, C, C, prm)
    return r, time.perf_counter() - t


def warm(solvers):
    p, _ = load("heart", DATA)
    y = np.where(p.y > 0, 1.0, -1.0)
    for s in solvers:
        run(s, p, y)


def accuracy(ws, labels, q, nf):
    W = np.column_stack(ws)
    import scipy.sparse as sp

    X = sp.csr_matrix((q.data, q.indices, q.indptr), shape=(q.n_rows, max(nf, q.n_features)))
    S = X[:, :nf] @ W
    if W.shape[1] == 1:
        pred = np.where(S[:, 0] > 0, labels[0], labels[1])
    else:
        pred = labels[np.argmax(S, axis=1)]
    return 100.0 * np.mean(pred == q.y)


def quality(args):
    warm(["dcd-l1", "cp", "ocas", "gca2", "tca"])
    print("set      solver  eps     time_s  iters  F(w)            F_dcd           "
          "(F-Fdcd)/bound  acc    acc_dcd")
    for name in args.sets:
        p, q = load(name, DATA)
        labels, tasks = binary_tasks(p)
        res = {}
        runs = (("cp", args.cp_eps), ("ocas", args.ocas_eps), ("gca2", args.ocas_eps),
                ("tca", args.ocas_eps))
        for solver, eps in (("dcd-l1", 1e-4),) + runs:
            F = 0.0
            T = 0.0
            it = 0
            ws = []
            Fs = []
            for y in tasks:
                r, t = run(solver, p, y, eps=eps, max_iter=100000 if solver == "dcd-l1" else None)
                F += r.primal
                Fs.append(r.primal)
                T += t
                it += r.iterations
                ws.append(r.w)
            acc = accuracy(ws, labels, q, p.n_features) if q is not None else float("nan")
            res[solver] = (F, T, it, acc, Fs)
        Fd = res["dcd-l1"][0]
        n = p.n_rows
        for solver, eps in runs:
            F, T, it, acc, Fs = res[solver]
            # guarantee: cp: C n eps per task; the OCAS solvers: eps * F per task
            bound = (len(tasks) * n * eps) if solver == "cp" else eps * F
            print(f"{name:8s} {solver:6s} {eps:<7g} {T:7.2f} {it:6d} {F:15.6f} {Fd:15.6f} "
                  f"{(F - Fd) / bound:8.3f}  {acc:6.2f} {res['dcd-l1'][3]:6.2f}   dcd time "
                  f"{res['dcd-l1'][1]:.2f}s")


def linesearch(args):
    warm(["ocas", "gca2", "tca"])
    print("set      search  total_s  ls_s    qp_s    pass_s  iters  evals  F(w)")
    for name in args.sets:
        p, _ = load(name, DATA)
        labels, tasks = binary_tasks(p)
        for rep in range(args.repeat):
            for ls in ("sorted", "exact", "gca2", "tca"):
                T = L = Q = P = 0.0
                it = ev = 0
                F = 0.0
                for y in tasks:
                    r, t = run("ocas", p, y, eps=args.eps, line_search=ls)
                    T += t
                    L += r.extra["time_line_search"]
                    Q += r.extra["time_qp"]
                    P += r.extra["time_passes"]
                    it += r.iterations
                    ev += r.extra["line_evals"]
                    F += r.primal
                print(f"{name:8s} {ls:6s} {T:8.3f} {L:7.3f} {Q:7.3f} {P:7.3f} {it:6d} {ev:6d} "
                      f"{F:.6f}")


def scaling(args):
    warm(["ocas", "cp"])
    rng = np.random.default_rng(0)
    for name in args.sets:
        p, _ = load(name, DATA)
        labels, tasks = binary_tasks(p)
        y_all = tasks[0]
        perm = rng.permutation(p.n_rows)
        sizes = [p.n_rows // 8, p.n_rows // 4, p.n_rows // 2, p.n_rows]
        for solver in args.solvers:
            pts = []
            for m in sizes:
                rows = np.sort(perm[:m])
                sub = p.take_rows(rows)
                ts = []
                # --perf-c: C held fixed in SVMperf's (Joachims') convention, the setting of
                # Joachims' Figures 1-2, i.e. LIBLINEAR's C = C_perf * 100 / n; else C = 1
                C = 1.0 if args.perf_c is None else args.perf_c * 100.0 / m
                for _ in range(args.repeat):
                    r, t = run(solver, sub, y_all[rows], C=C, eps=args.eps_scaling.get(solver))
                    ts.append(t)
                pts.append((m, min(ts), r.iterations))
                print(f"{name} {solver} n={m} C={C:.4g} time={min(ts):.3f}s "
                      f"iters={r.iterations}")
            x = np.log([a for a, _, _ in pts])
            yy = np.log([b for _, b, _ in pts])
            print(f"{name} {solver} log-log slope {np.polyfit(x, yy, 1)[0]:.3f}")


def ordinal(args):
    path = DATA / "letor_ohsumed" / "Fold1_trainingset.txt"
    p = load_data(str(path))
    warm_p = p.take_rows(np.arange(200))
    run("ordinal", warm_p, warm_p.y)
    rng = np.random.default_rng(0)
    # nested subsamples of whole queries
    q = p.qid
    uq = rng.permutation(np.unique(q))
    for frac in (0.25, 1.0):
        keepq = set(uq[:max(1, int(len(uq) * frac))].tolist())
        rows = np.flatnonzero([v in keepq for v in q])
        sub = p.take_rows(rows)
        ts = []
        for _ in range(args.repeat):
            r, t = run("ordinal", sub, sub.y, C=args.ord_c, eps=args.eps, perf_c=args.perf_c)
            ts.append(t)
        print(f"letor n={len(rows)} pairs={r.extra['pairs']} time={min(ts):.3f}s "
              f"iters={r.iterations} F={r.primal:.6f}")
    # no qid: ROC area on a9a
    a, _ = load("a9a", DATA)
    for frac in (0.25, 1.0):
        m = int(a.n_rows * frac)
        sub = a.take_rows(np.arange(m))
        sub.qid = None
        ts = []
        for _ in range(args.repeat):
            r, t = run("ordinal", sub, sub.y, C=1e-4, eps=args.eps, perf_c=args.perf_c)
            ts.append(t)
        print(f"a9a-roc n={m} pairs={r.extra['pairs']} time={min(ts):.3f}s "
              f"iters={r.iterations}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["quality", "linesearch", "scaling", "ordinal"])
    ap.add_argument("--data", default=None)
    ap.add_argument("--sets", default=None)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--eps", type=float, default=None)
    ap.add_argument("--cp-eps", type=float, default=0.001)
    ap.add_argument("--ocas-eps", type=float, default=0.01)
    ap.add_argument("--solvers", default="ocas,cp")
    ap.add_argument("--ord-c", type=float, default=1e-3)
    ap.add_argument("--perf-c", type=float, default=None,
                    help="ordinal: SVMperf's C (C per pair = C_perf * 100 / pairs), so that the "
                         "1-slack problem's C stays fixed across subsample sizes; scaling: the "
                         "same for examples (C = C_perf * 100 / n; default C = 1 for every n)")
    args = ap.parse_args()
    global DATA
    if args.data:
        DATA = Path(args.data)
    defaults = {"quality": "a9a,w8a,ijcnn1,news20", "linesearch": "ijcnn1,letter",
                "scaling": "ijcnn1,news20", "ordinal": ""}
    args.sets = (args.sets or defaults[args.what]).split(",")
    args.solvers = args.solvers.split(",")
    args.eps_scaling = {}
    {"quality": quality, "linesearch": linesearch, "scaling": scaling,
     "ordinal": ordinal}[args.what](args)


if __name__ == "__main__":
    main()

"""Dual coordinate descent one-vs-rest (news20, letter) against liblinear-official, side by side.

For -s 1 and -s 3 at the same -c: the time of ``svmtool.api.train`` (label grouping, one binary
DCD per class) against liblinear-official's C ``train`` on a ``problem`` built beforehand (data
conversion outside the timed region for both); median (min) of --repeats interleaved runs after a
warm-up.  Then the primal objective summed over the classes at --obj-eps for both (computed the
same way from each tool's w) and the test accuracy of each at the default eps.

    python benchmarks/dcd_multiclass.py                   # news20 and letter, -s 1 and 3
"""

import argparse
import ctypes
import statistics
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
SETS = {"news20": ("news20/news20", "news20/news20.t"),
        "letter": ("letter/letter.scale", "letter/letter.scale.t")}


def ovr_objective(X, y, W, labels, C, loss):
    total = 0.0
    for k, lab in enumerate(labels):
        yb = np.where(y == lab, 1.0, -1.0)
        w = W[:, k]
        s = np.maximum(0.0, 1.0 - yb * (X @ w))
        total += 0.5 * float(w @ w) + C * float(np.sum(s if loss == "l1" else s * s))
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["news20", "letter"])
    ap.add_argument("--solvers", nargs="+", type=int, default=[1, 3])
    ap.add_argument("-c", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--obj-eps", type=float, default=1e-4)
    args = ap.parse_args()

    from liblinear import liblinear as ll

    from svmtool import api
    from svmtool.io.svmlight import load_svmlight

    libc = ctypes.CDLL(None)
    print("| set | -s | svmtool s | liblinear s | ratio | objective svmtool | objective liblinear"
          " | rel. diff | acc svmtool | acc liblinear |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.sets:
        tr, te = (DATA / p for p in SETS[name])
        if not tr.exists():
            print(f"| {name} | absent | | | | | | | | |")
            continue
        p = load_svmlight(tr)
        t = load_svmlight(te, n_features=max(p.n_features, load_svmlight(te).n_features))
        X = p.X
        rows = [dict(zip(X.indices[X.indptr[i]:X.indptr[i + 1]] + 1,
                         X.data[X.indptr[i]:X.indptr[i + 1]])) for i in range(p.n_rows)]
        prob = ll.problem(p.y.tolist(), rows)
        for s in args.solvers:
            def ours(eps=None):
                return api.train(p, solver=str(s), C=args.c, eps=eps)

            def theirs(eps=0.1):
                libc.srand(1)
                return ll.liblinear.train(prob, ll.parameter(f"-s {s} -c {args.c} -e {eps} -q"))
            ours()
            theirs()
            to, tl = [], []
            for _ in range(args.repeats):
                a = time.perf_counter(); m = ours(); to.append(time.perf_counter() - a)
                a = time.perf_counter(); mm = theirs(); tl.append(time.perf_counter() - a)
            pm = ll.toPyModel(mm)
            labels = np.array(pm.get_labels(), dtype=float)
            nr_w = pm.get_nr_class() if pm.get_nr_class() > 2 else 1
            Wl = np.ctypeslib.as_array(pm.w, (p.n_features * nr_w,)).reshape(p.n_features, nr_w)
            acc_o = float(np.mean(api.predict(m, t)[0] == t.y))
            Xt = t.X[:, :p.n_features]
            pred_l = labels[np.argmax(Xt @ Wl, axis=1)] if nr_w > 1 else np.where(
                Xt @ Wl[:, 0] > 0, labels[0], labels[1])
            acc_l = float(np.mean(pred_l == t.y))
            loss = "l1" if s == 3 else "l2"
            mo = ours(args.obj_eps)
            pm2 = ll.toPyModel(theirs(args.obj_eps))
            W2 = np.ctypeslib.as_array(pm2.w, (p.n_features * nr_w,)).reshape(p.n_features, nr_w)
            fo = ovr_objective(X, p.y, mo.w, mo.labels, args.c, loss)
            fl = ovr_objective(X, p.y, W2, np.array(pm2.get_labels(), dtype=float), args.c, loss)
            mo_t, ml_t = statistics.median(to), statistics.median(tl)
            print(f"| {name} | {s} | {mo_t:.3f} ({min(to):.3f}) | {ml_t:.3f} ({min(tl):.3f}) | "
                  f"{mo_t / ml_t:.2f}x | {fo:.10g} | {fl:.10g} | {(fo - fl) / fl:.1e} | "
                  f"{100 * acc_o:.2f} | {100 * acc_l:.2f} |", flush=True)


if __name__ == "__main__":
    main()

"""Solver time and objective of svmtool's dual coordinate descent against liblinear-official.

For each data set and solver (-s 1, -s 3) at the same -c/-B/-e:

* time of one call of svmtool's ``svmtool.solvers.dcd.fit`` on CSR arrays already in memory, in
  LIBLINEAR's row order, bias column appended -- with the default generator ("ours") and with the
  glibc rand() emulation ("ours, ll-rng": the same permutations, hence the same iterations and
  the same arithmetic as LIBLINEAR);
* time of liblinear-official's C ``train`` on a ``problem`` built beforehand (the conversion of
  the data to LIBLINEAR's structures is outside the timed region for both tools);
* median (and min) of 7 interleaved runs, after one warm-up call (numba's compile or cache load
  is excluded).  ``srand(1)`` is called before every LIBLINEAR run so that each run repeats the
  sequence of a fresh process (LIBLINEAR itself never seeds);
* then one more run of each at ``--obj-eps`` (1e-4) to compare the primal objectives
  ``1/2 w'w + C sum loss_i`` computed the same way (numpy, here) from each tool's ``w``.

Data are read with scikit-learn's ``load_svmlight_file`` (exact, see PERFORMANCE-NOTES).

    python benchmarks/dcd_vs_liblinear.py                      # a9a, w8a, ijcnn1; -s 1 and 3
    python benchmarks/dcd_vs_liblinear.py --sets a9a --solvers 3 --repeats 3
"""

import argparse
import ctypes
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
FILES = {"a9a": "a9a/a9a", "w8a": "w8a/w8a", "ijcnn1": "ijcnn1/ijcnn1",
         "heart": "heart/heart_scale"}


def load(path):
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(path))
    X = sp.csr_matrix(X)
    X.sort_indices()
    return X, y


def liblinear_order(X, y, bias):
    """Rows grouped as LIBLINEAR groups them (first label first, +1 first for {-1,+1})."""
    labels = list(dict.fromkeys(y.tolist()))
    if len(labels) != 2:
        raise SystemExit(f"binary data needed, got {len(labels)} labels")
    if sorted(labels) == [-1.0, 1.0]:
        labels = [1.0, -1.0]
    order = np.concatenate([np.flatnonzero(y == labels[0]), np.flatnonzero(y == labels[1])])
    Xo = X[order]
    yo = np.where(y[order] == labels[0], 1.0, -1.0)
    if bias >= 0:
        Xo = sp.hstack([Xo, np.full((Xo.shape[0], 1), float(bias))], format="csr")
        Xo.sort_indices()
    return Xo, yo, labels


def primal_objective(X, y, w, C, loss):
    slack = np.maximum(0.0, 1.0 - y * (X @ w))
    return 0.5 * float(w @ w) + C * float(np.sum(slack if loss == "l1" else slack * slack))


class Liblinear:
    """liblinear-official's C train() on a prebuilt problem; srand(1) before each run."""

    def __init__(self, X, y, bias):
        from liblinear import liblinear as ll

        self.ll = ll
        self.prob = ll.problem(y, X, bias)
        self.libc = ctypes.CDLL(None)
        self.messages = []
        self._cb = ll.PRINT_STRING_FUN(lambda s: self.messages.append(s.decode()))

    def train(self, s, C, eps, capture=False):
        ll = self.ll
        param = ll.parameter(f"-s {s} -c {C} -e {eps} -q")
        if capture:
            self.messages = []
            ll.liblinear.set_print_string_function(self._cb)
        self.libc.srand(1)
        t0 = time.perf_counter()
        m = ll.liblinear.train(self.prob, param)
        t = time.perf_counter() - t0
        model = ll.toPyModel(m)
        n = model.nr_feature + (1 if model.bias >= 0 else 0)
        w = np.ctypeslib.as_array(model.w, (n,)).copy()
        labels = model.get_labels()
        if capture:
            ll.liblinear.set_print_string_function(ll.ctypes_print_null)
        return t, w, labels

    def iterations(self):
        text = "".join(self.messages)
        found = re.findall(r"#iter = (\d+)", text)
        switched = "Switching to use -s 2" in text
        return (int(found[0]) if found else None), switched


def run_ours(Xo, yo, s, C, eps, liblinear_rng):
    from svmtool.params import TrainParams
    from svmtool.solvers.dcd import fit

    params = TrainParams(solver=str(s), C=C, eps=eps, liblinear_rng=liblinear_rng)
    t0 = time.perf_counter()
    r = fit(Xo.indptr, Xo.indices, Xo.data, yo, Xo.shape[1], C, C, params,
            loss="l1" if s == 3 else "l2")
    return time.perf_counter() - t0, r


def _have_prefetch():
    from svmtool.solvers import _dcd_jit

    return _dcd_jit.HAVE_PREFETCH


def fmt_t(ts):
    return f"{statistics.median(ts) * 1e3:.1f} ({min(ts) * 1e3:.1f})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--sets", nargs="+", default=["a9a", "w8a", "ijcnn1"])
    ap.add_argument("--solvers", nargs="+", type=int, default=[1, 3])
    ap.add_argument("-c", type=float, default=1.0)
    ap.add_argument("-B", type=float, default=-1.0)
    ap.add_argument("-e", type=float, default=0.1)
    ap.add_argument("--obj-eps", type=float, default=1e-4)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)

    if not args.data_dir.is_dir():
        raise SystemExit(f"data folder {args.data_dir} not found (use --data-dir)")
    rows = []
    for name in args.sets:
        X, y = load(args.data_dir / FILES.get(name, name))
        Xo, yo, labels = liblinear_order(X, y, args.B)
        lib = Liblinear(X, y, args.B)
        for s in args.solvers:
            loss = "l1" if s == 3 else "l2"
            # warm-up: numba compile / cache load, page faults
            run_ours(Xo, yo, s, args.c, args.e, False)
            run_ours(Xo, yo, s, args.c, args.e, True)
            lib.train(s, args.c, args.e)
            t_ll, t_ours, t_ours_ll, t_loop = [], [], [], []
            for _ in range(args.repeats):
                t, w_ll, _ = lib.train(s, args.c, args.e)
                t_ll.append(t)
                t, r = run_ours(Xo, yo, s, args.c, args.e, False)
                t_ours.append(t)
                t, r_ll = run_ours(Xo, yo, s, args.c, args.e, True)
                t_ours_ll.append(t)
                t_loop.append(r_ll.extra["solve_time"])
            ident = bool(np.array_equal(w_ll, r_ll.w))
            _, _, lab = lib.train(s, args.c, args.e, capture=True)
            it_ll, switched = lib.iterations()
            # objectives at a tight tolerance
            _, w_ll_tight, lab = lib.train(s, args.c, args.obj_eps, capture=True)
            it_ll_tight, switched_tight = lib.iterations()
            _, r_tight = run_ours(Xo, yo, s, args.c, args.obj_eps, False)
            sign = 1.0 if float(lab[0]) == labels[0] else -1.0   # w points toward lab[0]
            p_ll = primal_objective(Xo, yo, sign * w_ll_tight, args.c, loss)
            p_ours = primal_objective(Xo, yo, r_tight.w, args.c, loss)
            rows.append({
                "set": name, "s": s, "n": Xo.shape[0], "nnz": Xo.nnz,
                "ll": fmt_t(t_ll), "ours": fmt_t(t_ours), "ours_ll": fmt_t(t_ours_ll),
                "loop": fmt_t(t_loop),
                "ratio": f"{statistics.median(t_ours) / statistics.median(t_ll):.2f} "
                         f"({min(t_ours) / min(t_ll):.2f})",
                "ratio_ll": f"{statistics.median(t_ours_ll) / statistics.median(t_ll):.2f} "
                            f"({min(t_ours_ll) / min(t_ll):.2f})",
                "it": f"{it_ll}{' +s2' if switched else ''} / {r.iterations} / {r_ll.iterations}",
                "ident": "yes" if ident else "no",
                "it_tight": f"{it_ll_tight}{' +s2' if switched_tight else ''} / "
                            f"{r_tight.iterations}",
                "p_ll": p_ll, "p_ours": p_ours, "rel": (p_ours - p_ll) / abs(p_ll),
            })
            print(f"done {name} -s {s}", file=sys.stderr, flush=True)

    print(f"\n-c {args.c:g} -B {args.B:g} -e {args.e:g}; times in ms: median (min) of "
          f"{args.repeats} interleaved runs; ratio = ours / liblinear: of medians (of mins); "
          f"objectives at -e {args.obj_eps:g}; prefetch instruction: "
          f"{'yes' if _have_prefetch() else 'no (touch loads)'}\n")
    print("| set | -s | rows | nnz | liblinear | ours | ratio | ours ll-rng | ratio | "
          "ll-rng loop only | iters ll / ours / ll-rng | same w | iters at obj-eps ll / ours "
          "| primal ll | primal ours | rel. diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['set']} | {r['s']} | {r['n']} | {r['nnz']} | {r['ll']} | {r['ours']} | "
              f"{r['ratio']} | {r['ours_ll']} | {r['ratio_ll']} | {r['loop']} | "
              f"{r['it']} | {r['ident']} | {r['it_tight']} | {r['p_ll']:.10g} | "
              f"{r['p_ours']:.10g} | {r['rel']:.2e} |")


if __name__ == "__main__":
    main()

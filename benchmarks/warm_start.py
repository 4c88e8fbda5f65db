"""Cold against warm start on a nightly retrain: every solver family, medians of interleaved runs.

The scenario of a cron job: yesterday's model was trained on TRAIN; today's data is TRAIN with a
fraction of its rows (default 5%) replaced by rows of TEST.  Each solver is trained on yesterday's
data once (its model is the warm start), then on today's data from scratch and from that model,
alternately, ``--repeat`` times.  Reported: iterations and solver time (train time of the API,
JIT compile excluded: every solver runs once on the data before timing), cold and warm, their
ratio, and the objectives (the warm one must be within the solver's tolerance of the cold one).

    python benchmarks/warm_start.py DATA/a9a DATA/a9a.t --solvers dcd-l2,dcd-l1,newton
    python benchmarks/warm_start.py DATA/a9a DATA/a9a.t --dual-starts margin,scaled,cold
"""

import argparse
import statistics
import time

import numpy as np

ALL = "dcd-l2,dcd-l1,newton,lr,cp,ocas,gca2,tca,ocas-mc,ordinal,kernel,dcsvm"


def nightly(train, test, fraction, seed):
    """TRAIN with ``fraction`` of its rows replaced by random rows of TEST."""
    from svmtool.problem import Problem

    rng = np.random.default_rng(seed)
    n = train.n_rows
    k = int(round(fraction * n))
    out = np.sort(rng.choice(n, size=k, replace=False))
    keep = np.setdiff1d(np.arange(n), out)
    new = rng.choice(test.n_rows, size=k, replace=False)
    a, b = train.take_rows(keep), test.take_rows(np.sort(new))
    nf = max(a.n_features, b.n_features)
    indptr = np.concatenate([a.indptr - a.indptr[0],
                             b.indptr[1:] - b.indptr[0] + (a.indptr[-1] - a.indptr[0])])
    indices = np.concatenate([a.indices[a.indptr[0]:a.indptr[-1]],
                              b.indices[b.indptr[0]:b.indptr[-1]]])
    data = np.concatenate([a.data[a.indptr[0]:a.indptr[-1]], b.data[b.indptr[0]:b.indptr[-1]]])
    y = np.concatenate([a.y, b.y])
    return Problem(indptr=indptr.astype(np.int64), indices=indices, data=data, y=y,
                   n_features=nf)


def options(name, args):
    from svmtool.params import DcdParams, KernelParams, TrainParams

    kw = dict(solver=name, C=args.C, bias=1.0 if name not in ("ordinal",) else -1.0,
              threads=args.threads)
    if name in ("kernel", "dcsvm"):
        kw["kernel"] = KernelParams(kernel_type=2, gamma=args.gamma)
    return TrainParams(**kw), DcdParams


def summary(model):
    reps = model.report["classes"]
    return (sum(r["iterations"] for r in reps), model.report["train_time"],
            sum(r.get("dual", r["primal"]) if model.report["solver"] in ("kernel", "dcsvm")
                else r["primal"] for r in reps))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--solvers", default=ALL)
    ap.add_argument("--fraction", type=float, default=0.05)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-c", dest="C", type=float, default=1.0)
    ap.add_argument("-g", dest="gamma", type=float, default=None)
    ap.add_argument("--kernel-rows", type=int, default=10000,
                    help="kernel solvers: the first N rows of both days (default 10000)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--dual-starts", default="scaled",
                    help="dcd-*: the alpha variants to compare (margin, scaled, clipped)")
    args = ap.parse_args(argv)

    from dataclasses import replace

    import svmtool
    from svmtool import api

    train = svmtool.load_data(args.train)
    test = svmtool.load_data(args.test)
    today = nightly(train, test, args.fraction, args.seed)
    print("| family | variant | iterations cold | warm | solver s cold | warm | ratio | "
          "objective cold | warm |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.solvers.split(","):
        params, DcdParams = options(name, args)
        old_data, new_data = train, today
        if name in ("kernel", "dcsvm"):
            old_data = train.take_rows(np.arange(min(args.kernel_rows, train.n_rows)))
            new_data = today.take_rows(np.arange(min(args.kernel_rows, today.n_rows)))
        old = api.train(old_data, params)             # yesterday's model (and the JIT warm-up)
        variants = [None]
        if name.startswith("dcd"):
            variants = args.dual_starts.split(",")
        for variant in variants:
            p = params
            if variant is not None:
                p = replace(params, dcd=DcdParams(warm_start=variant))
            api.train(new_data, p, init_model=old)    # warm-up of this path
            cold, warm = [], []
            for _ in range(args.repeat):
                cold.append(summary(api.train(new_data, p)))
                warm.append(summary(api.train(new_data, p, init_model=old)))
            it_c = statistics.median(c[0] for c in cold)
            it_w = statistics.median(w[0] for w in warm)
            t_c = statistics.median(c[1] for c in cold)
            t_w = statistics.median(w[1] for w in warm)
            print(f"| {name} | {variant or 'w'} | {it_c:g} | {it_w:g} | {t_c:.3f} | {t_w:.3f} | "
                  f"{t_w / t_c:.2f} | {cold[0][2]:.8g} | {warm[0][2]:.8g} |", flush=True)


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()

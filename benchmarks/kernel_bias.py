"""Test accuracy of the kernel solvers without and with the kernel bias (-B 1), exact and early.

The measurement behind the kernel solvers' default -B (see KERNEL_DEFAULT_BIAS in
svmtool/solvers/dcsvm.py).  rbf kernel, DC-SVM exact and --early (64 clusters), 3 seeds each
(the clustering is random); mushrooms has no test file: a seeded 6000-row split.

    python benchmarks/kernel_bias.py --sets ijcnn1-10k,mushrooms,letter,a9a-10k,w8a-10k
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

HERE = os.path.dirname(os.path.abspath(__file__))
# name: (train, test or None, C, gamma or None = 1/features, rows kept or None)
SETS = {
    "ijcnn1": ("ijcnn1/ijcnn1", "ijcnn1/ijcnn1.t", 32.0, 2.0, None),
    "ijcnn1-10k": ("ijcnn1/ijcnn1", "ijcnn1/ijcnn1.t", 32.0, 2.0, 10000),
    "a9a-10k": ("a9a/a9a", "a9a/a9a.t", 1.0, 0.05, 10000),
    "w8a-10k": ("w8a/w8a", "w8a/w8a.t", 8.0, None, 10000),
    "letter": ("letter/letter.scale", "letter/letter.scale.t", 8.0, 2.0, None),
    "mushrooms": ("mushrooms/mushrooms", None, 1.0, None, None),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "shared", "data"))
    ap.add_argument("--sets", default="ijcnn1-10k,mushrooms,letter,a9a-10k,w8a-10k")
    ap.add_argument("--seeds", default="1,2,3")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    warm = load_data(os.path.join(HERE, "..", "data", "heart_scale"))
    api.train(warm, train_params("dcsvm", C=1.0, kernel_type=2))
    for name in a.sets.split(","):
        tr, te, C, g, rows = SETS[name]
        prob = load_data(os.path.join(a.data, tr))
        if te is None:
            perm = np.random.default_rng(0).permutation(prob.n_rows)
            test = prob.take_rows(np.sort(perm[6000:]))
            prob = prob.take_rows(np.sort(perm[:6000]))
        else:
            test = load_data(os.path.join(a.data, te))
        if rows:
            keep = np.random.default_rng(0).permutation(prob.n_rows)[:rows]
            prob = prob.take_rows(np.sort(keep))
        for early in (False, True):
            for bias in (-1.0, 1.0):
                accs, times = [], []
                for seed in seeds:
                    ex = {"kernel_type": 2, "gamma": g}
                    if early:
                        ex["early"] = 0
                    t = time.perf_counter()
                    m = api.train(prob, train_params("dcsvm", C=C, bias=bias, seed=seed, **ex))
                    times.append(time.perf_counter() - t)
                    lab, _ = api.predict(m, test)
                    accs.append(100.0 * float(np.mean(lab == test.y)))
                print(f"{name:11s} {'early' if early else 'exact'} -B {bias:+.0f}  acc "
                      + " ".join(f"{v:.2f}" for v in accs)
                      + f"  mean {np.mean(accs):.3f}  time median {np.median(times):.2f} s",
                      flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""svmtool as users install it, against the C programs: whole commands, interleaved rounds.

    tools/bench-installed.py --wheel VENV/bin --checkout CHECKOUT/.venv/bin \\
        --data-dir ../shared/data --liblinear DIR --libsvm DIR --svmperf DIR [--rounds 5]

VENV is a fresh venv holding the wheel (``pip install dist/svmtool-*.whl``); CHECKOUT a clone
after ``make test``. Both run the same commands from a scratch folder outside the checkout:
issue 41's four cases -- the mission's ``train -c 1000 -e 0.001`` on a9a, the 1-slack cutting
plane at SVMperf's rule on a9a, ``grid`` on heart_scale with grid.py's default grid, and a small
``train`` against ``python -c "import numpy"`` -- and the first three again from the wheel with
``SVMTOOL_AOT=0`` (numba's JIT alone). DIR are folders holding LIBLINEAR's ``train``, LIBSVM's
``svm-train`` and ``tools/grid.py``, and SVMperf's ``svm_perf_learn``, built from their sources.
With ``--levels``, the wheel's commands also run on each CPU level of its kernel extension
that this CPU runs (``SVMTOOL_AOT=generic``, ``x86-64-v3``, ...; the plain run takes the best),
and exact C-SVC on the first 10,000 rows of ijcnn1 (``train -s c_svc -c 32 -g 2 -m 1000 -B -1``
against ``svm-train -c 32 -g 2 -m 1000``) joins the cases.
One warm-up run each, then ROUNDS rounds of every command in turn; prints medians of wall and
CPU seconds (user + system of the child and its children) and the ratios. The numbers go into
BENCHMARKS.md by hand, with the date and the load it prints.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time


def commands(a, work):
    data = os.path.join(a.data_dir, "a9a", "a9a")
    heart = os.path.join(work, "heart_scale")
    out = []
    for who, folder in (("wheel", a.wheel), ("checkout", a.checkout)):
        sv = os.path.join(folder, "svmtool")
        out += [
            ("mission a9a", who, [sv, "train", "-q", "-c", "1000", "-e", "0.001", data, "m"]),
            ("cp a9a", who, [sv, "train", "-q", "-s", "cp", "-c", "1", "--perf-e", "0.1", data,
                             "cp"]),
            ("grid heart_scale", who, [sv, "grid", "-png", "null", heart]),
            ("train heart_scale", who, [sv, "train", "-q", heart, "h"]),
            ("import numpy", who, [os.path.join(folder, "python"), "-c", "import numpy"]),
        ]
    jit = ["env", "SVMTOOL_AOT=0", os.path.join(a.wheel, "svmtool")]
    out += [
        ("mission a9a", "JIT only", jit + ["train", "-q", "-c", "1000", "-e", "0.001", data, "mj"]),
        ("cp a9a", "JIT only", jit + ["train", "-q", "-s", "cp", "-c", "1", "--perf-e", "0.1",
                                      data, "cpj"]),
        ("grid heart_scale", "JIT only", jit + ["grid", "-png", "null", heart]),
        ("mission a9a", "C", [os.path.join(a.liblinear, "train"), "-q", "-c", "1000", "-e",
                              "0.001", data, "mc"]),
        ("cp a9a", "C", [os.path.join(a.svmperf, "svm_perf_learn"), "-c", "325.61", "-e", "0.1",
                         "--b", "0", data, "cpc"]),
        ("grid heart_scale", "C", ["python3", os.path.join(a.libsvm, "tools", "grid.py"),
                                   "-svmtrain", os.path.join(a.libsvm, "svm-train"), "-gnuplot",
                                   "null", heart]),
    ]
    if a.levels:
        out += level_commands(a, work, data)
    return out


def wheel_levels(wheel_bin):
    """The CPU levels of the wheel's kernel extension that this CPU runs, plainest first."""
    probe = "import svmtool._aot as a; print(' '.join(a.runnable_levels()))"
    done = subprocess.run([os.path.join(wheel_bin, "python"), "-c", probe], capture_output=True,
                          text=True, check=True, cwd=tempfile.gettempdir())
    return done.stdout.split()


def level_commands(a, work, data):
    """The wheel's commands on each CPU level, and exact C-SVC on ijcnn1's first 10,000 rows."""
    ij = os.path.join(work, "ijcnn1-10k")
    with open(os.path.join(a.data_dir, "ijcnn1", "ijcnn1"), encoding="ascii") as src, \
            open(ij, "w", encoding="ascii") as dst:
        for _, line in zip(range(10000), src):
            dst.write(line)
    svc = ["train", "-q", "-s", "c_svc", "-c", "32", "-g", "2", "-m", "1000", "-B", "-1", ij]
    out = [("c_svc ijcnn1 10k", "wheel", [os.path.join(a.wheel, "svmtool"), *svc, "sv"]),
           ("c_svc ijcnn1 10k", "C", [os.path.join(a.libsvm, "svm-train"), "-q", "-c", "32",
                                      "-g", "2", "-m", "1000", ij, "svc"])]
    for level in wheel_levels(a.wheel):
        sv = ["env", f"SVMTOOL_AOT={level}", os.path.join(a.wheel, "svmtool")]
        out += [
            ("mission a9a", level, sv + ["train", "-q", "-c", "1000", "-e", "0.001", data,
                                         f"m-{level}"]),
            ("cp a9a", level, sv + ["train", "-q", "-s", "cp", "-c", "1", "--perf-e", "0.1",
                                    data, f"cp-{level}"]),
            ("c_svc ijcnn1 10k", level, sv + svc + [f"sv-{level}"]),
        ]
    return out


def timed(argv, cwd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"failed (exit {done.returncode}): {' '.join(argv)}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    for name in ("wheel", "checkout", "data-dir", "liblinear", "libsvm", "svmperf"):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--heart", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   os.pardir, "data", "heart_scale"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--levels", action="store_true",
                   help="also the wheel on each CPU level of its kernel extension")
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="svmtool-bench-installed-")
    shutil.copy(a.heart, os.path.join(work, "heart_scale"))
    todo = commands(a, work)
    for _, _, argv in todo:
        timed(argv, work)
    runs, loads = {}, [os.getloadavg()[0]]
    for _ in range(a.rounds):
        for case, who, argv in todo:
            runs.setdefault((case, who), []).append(timed(argv, work))
        loads.append(os.getloadavg()[0])
    shutil.rmtree(work, ignore_errors=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for k, v in runs.items()}
    print(f"{a.rounds} interleaved rounds, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"1-minute load {min(loads):.2f}-{max(loads):.2f}")
    for (case, who), (w, c) in med.items():
        print(f"{case:18s} {who:9s} wall {w:6.3f} s  CPU {c:6.3f} s")
    for case in ("mission a9a", "cp a9a", "grid heart_scale", "c_svc ijcnn1 10k"):
        if (case, "C") not in med:
            continue
        cw, cc = med[(case, "C")]
        for (case2, who), (w, c) in med.items():
            if case2 == case and who != "C":
                print(f"ratio {case:18s} {who:9s} wall {w / cw:.2f}x  CPU {c / cc:.2f}x")
    for who in ("wheel", "checkout"):
        t, n = med[("train heart_scale", who)][0], med[("import numpy", who)][0]
        print(f"start {who:9s} train heart_scale {t:.3f} s, import numpy {n:.3f} s: {t - n:+.3f} s")


if __name__ == "__main__":
    main()

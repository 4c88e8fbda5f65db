"""End-to-end command lines: `svmtool train` / `predict` against LIBLINEAR's own programs.

What a Makefile or a cron job pays per call: process start, imports, reading, training, writing
the model.  svmtool reads a binary cache (made once by `svmtool convert`) or the text file;
LIBLINEAR's `train` reads the text file (it cannot read anything else).  LIBLINEAR's programs are
found as `liblinear-train` / `liblinear-predict` (Debian's liblinear-tools) or `train` / `predict`
on PATH, or given with --liblinear-train / --liblinear-predict; without them only svmtool's
times are printed.

Medians (and minima) of --repeat interleaved runs; one untimed warm-up run of each command first
(so numba's cache is warm and the files are in the page cache).

    python benchmarks/end_to_end.py                       # heart_scale, letter, news20, a9a
    python benchmarks/end_to_end.py --sets heart --repeat 11
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"

SETS = {
    "heart": (ROOT / "data" / "heart_scale", ROOT / "data" / "heart_scale"),
    "a9a": (ROOT / "data" / "a9a", ROOT / "data" / "a9a.t"),
    "letter": (SHARED / "letter" / "letter.scale", SHARED / "letter" / "letter.scale.t"),
    "news20": (SHARED / "news20" / "news20", SHARED / "news20" / "news20.t"),
}


def find(names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def timed(cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{r.stderr.decode()}")
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="heart,a9a,letter,news20")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("-s", dest="solver", default="1")
    ap.add_argument("-c", dest="C", default="1")
    ap.add_argument("--liblinear-train", default=None)
    ap.add_argument("--liblinear-predict", default=None)
    args = ap.parse_args()

    svmtool = [sys.executable, "-m", "svmtool"]
    exe = Path(sys.executable).parent / "svmtool"
    if exe.exists():
        svmtool = [str(exe)]
    ll_train = args.liblinear_train or find(["liblinear-train", "train"])
    ll_pred = args.liblinear_predict or find(["liblinear-predict", "predict"])
    tmp = Path(tempfile.mkdtemp(prefix="svmtool-e2e-"))
    rows = []
    try:
        for name in args.sets.split(","):
            train, test = SETS[name]
            if not train.exists():
                print(f"skip {name}: {train} absent", file=sys.stderr)
                continue
            cache = tmp / f"{name}.cache"
            subprocess.run(svmtool + ["-q", "convert", str(train), str(cache)], check=True)
            cmds = {
                "svmtool train (cache)": svmtool + ["train", "-q", "-s", args.solver, "-c", args.C,
                                                    str(cache), str(tmp / "a.model")],
                "svmtool train (text)": svmtool + ["train", "-q", "-s", args.solver, "-c", args.C,
                                                   str(train), str(tmp / "b.model")],
            }
            if ll_train:
                cmds["LIBLINEAR train (text)"] = [ll_train, "-q", "-s", args.solver, "-c", args.C,
                                                  str(train), str(tmp / "c.model")]
            for c in cmds.values():      # warm-up: numba cache, page cache, models for predict
                timed(c)
            pcmds = {"svmtool predict": svmtool + ["predict", "-q", str(test), str(tmp / "a.model"),
                                                   str(tmp / "a.out")]}
            if ll_pred:
                pcmds["LIBLINEAR predict"] = [ll_pred, "-q", str(test), str(tmp / "c.model"),
                                              str(tmp / "c.out")]
            for c in pcmds.values():
                timed(c)
            allc = {**cmds, **pcmds}
            times = {k: [] for k in allc}
            for _ in range(args.repeat):
                for k, c in allc.items():
                    times[k].append(timed(c))
            for k, ts in times.items():
                rows.append((name, k, statistics.median(ts), min(ts)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"| set | command (-s {args.solver} -c {args.C}) | median s | min s | ratio to LIBLINEAR |")
    print("|---|---|---|---|---|")
    ref = {}
    for name, k, med, mn in rows:
        if k.startswith("LIBLINEAR train"):
            ref[(name, "train")] = med
        if k.startswith("LIBLINEAR predict"):
            ref[(name, "predict")] = med
    for name, k, med, mn in rows:
        kind = "predict" if "predict" in k else "train"
        r = ref.get((name, kind))
        ratio = f"{med / r:.2f}x" if r and not k.startswith("LIBLINEAR") else ""
        print(f"| {name} | {k} | {med:.3f} | {mn:.3f} | {ratio} |")


if __name__ == "__main__":
    main()

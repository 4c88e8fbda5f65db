"""Write seed corpora for fuzz/fuzz_targets.py from the bundled data and freshly trained models.

    python fuzz/seed.py OUT_DIR      -> OUT_DIR/<target>/<seed files>
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(out):
    import svmtool
    from svmtool import api
    from svmtool.io.cache import save_cache
    from svmtool.params import KernelParams

    out = Path(out)
    heart = (ROOT / "data" / "heart_scale").read_bytes()
    a9a = (ROOT / "data" / "a9a").read_bytes()[:4000]
    texts = {"heart": heart[:3000], "a9a": a9a, "qid": b"3 qid:1 1:1 2:0.5 # c\n1 qid:1 3:1\n",
             "zero": b"-1 0:1 4:2\n+1 1:1e-300 2:1e300\n", "crlf": b"1 1:1\r\n-1 2:1\r\n"}
    for target in ("text-python", "text-jit", "compressed"):
        d = out / target
        d.mkdir(parents=True, exist_ok=True)
        for name, body in texts.items():
            (d / name).write_bytes(body if target != "compressed" else b"\x00" + body)
    prob = svmtool.load_data(ROOT / "data" / "heart_scale")
    d = out / "model"
    d.mkdir(parents=True, exist_ok=True)
    for name, kw in (("dcd", {}), ("lr", {"solver": "lr", "bias": 1.0}),
                     ("mc", {"solver": "ocas-mc"}),
                     ("kernel", {"solver": "kernel", "kernel": KernelParams(gamma=0.1)})):
        api.save_model(api.train(prob.take_rows(range(60)), **kw), d / name)
    api.save_model(api.train(prob, solver="dcd-l1"), d / "svmlight", "svmlight")
    d = out / "cache"
    d.mkdir(parents=True, exist_ok=True)
    save_cache(prob.take_rows(range(20)), d / "heart.cache")
    d = out / "ranges"
    d.mkdir(parents=True, exist_ok=True)
    (d / "x").write_bytes(b"x\n-1 1\n1 0 1\n2 -3.5 7\n")
    (d / "xy").write_bytes(b"y\n-1 1\n-1 1\nx\n0 1\n1 0 1\n3 2 2\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join("fuzz-out", "seeds"))

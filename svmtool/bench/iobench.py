"""Reading and writing throughput: svmtool's parser and cache against scikit-learn (the suites
``io`` and ``io-all`` of ``svmtool bench --suite``, and ``svmtool bench TRAIN --io``).

* read throughput, median of ``repeats`` interleaved runs after one warm-up call of each reader
  (numba's compile or cache load excluded): svmtool's ``load_svmlight`` with 1 and 2 threads,
  scikit-learn's ``load_svmlight_file``, and svmtool's cache loaded memory-mapped (``mmap``),
  mapped and touched once (``mmap+touch``) and read into memory (``read``).  MB/s of the *text*
  file, so every column is comparable;
* write throughput: ``dump_svmlight`` against scikit-learn's ``dump_svmlight_file``;
* peak memory of each reader in a subprocess of its own (rise of the peak RSS);
* the JIT cost of the first read and write in fresh subprocesses (empty / warm numba cache).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from svmtool.bench.data import bundled
from svmtool.errors import require

TINY = Path(bundled("heart_scale"))


def data_files(data_dir, only):
    files = []
    for p in sorted(Path(data_dir).rglob("*")):
        if not p.is_file() or p.name in ("MANIFEST.tsv", "README.md", "words"):
            continue
        if only and not any(o in str(p.relative_to(data_dir)) for o in only):
            continue
        files.append(p)
    return files


def median_runs(funcs, repeats):
    """Interleaved timing: {name: [seconds] * repeats}."""
    times = {name: [] for name in funcs}
    for _ in range(repeats):
        for name, f in funcs.items():
            t = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t)
    return times


def fmt_rate(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def bench_reads(files, repeats, tmp):
    load_svmlight_file = require("sklearn.datasets", "the io benchmark").load_svmlight_file

    from svmtool.io.cache import load_cache, save_cache
    from svmtool.io.svmlight import load_svmlight

    rows = []
    for path in files:
        size = path.stat().st_size
        p = load_svmlight(path, threads=1)                  # warm-up (and the row count)
        cache = Path(tmp) / (path.name + ".cache")
        save_cache(p, cache)
        n_rows = p.n_rows
        del p

        def touch():
            q = load_cache(cache)
            float(q.data.sum()) + float(q.indices.sum()) + float(q.indptr[-1])

        funcs = {
            "svmtool 1 thread": lambda: load_svmlight(path, threads=1),
            "svmtool 2 threads": lambda: load_svmlight(path, threads=2),
            "sklearn": lambda: load_svmlight_file(str(path)),
            "cache mmap": lambda: load_cache(cache),
            "cache mmap+touch": touch,
            "cache read": lambda: load_cache(cache, mmap=False),
        }
        for f in funcs.values():
            f()
        times = median_runs(funcs, repeats)
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append((path, size, n_rows, cache.stat().st_size, med))
        print(f"  read {path.name}: " + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in med.items()),
              file=sys.stderr)
    return rows


def bench_writes(files, repeats, tmp):
    dump_svmlight_file = require("sklearn.datasets", "the io benchmark").dump_svmlight_file

    from svmtool.io.svmlight import load_svmlight
    from svmtool.io.writer import dump_svmlight

    rows = []
    for path in files:
        p = load_svmlight(path)
        X = p.X
        out1 = Path(tmp) / "ours.txt"
        out2 = Path(tmp) / "sklearn.txt"
        if p.qid is not None:
            funcs = {"svmtool": lambda: dump_svmlight(p, out1),
                     "sklearn": lambda: dump_svmlight_file(X, p.y, str(out2), query_id=p.qid)}
        else:
            funcs = {"svmtool": lambda: dump_svmlight(p, out1),
                     "sklearn": lambda: dump_svmlight_file(X, p.y, str(out2))}
        for f in funcs.values():
            f()
        times = median_runs(funcs, repeats)
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append((path, out1.stat().st_size, p.nnz, med))
        print(f"  write {path.name}: " + ", ".join(f"{k} {v * 1e3:.1f} ms"
                                                  for k, v in med.items()), file=sys.stderr)
    return rows


MEMORY_SCRIPT = textwrap.dedent("""
    import json, sys, tracemalloc
    loader, path, cache, tiny, tiny_cache = sys.argv[1:6]
    from sklearn.datasets import load_svmlight_file
    from svmtool.io.cache import load_cache
    from svmtool.io.svmlight import load_svmlight
    f = {
        "svmtool 1 thread": lambda p: load_svmlight(p, threads=1),
        "svmtool 2 threads": lambda p: load_svmlight(p, threads=2),
        "sklearn": lambda p: load_svmlight_file(p),
        "cache read": lambda p: load_cache(p, mmap=False),
        "cache mmap+touch": lambda p: (lambda q: (q, q.data.sum(), q.indices.sum()))(load_cache(p)),
    }[loader]
    f(tiny_cache if loader.startswith("cache") else tiny)

    def status(key):
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        return None

    try:                      # reset the peak RSS (VmHWM) to the current RSS (Linux >= 4.0)
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        rss_ok = True
    except OSError:
        rss_ok = False
    before = status("VmRSS")
    if not rss_ok:
        tracemalloc.start()   # fallback: the peak of Python and numpy allocations
    keep = f(cache if loader.startswith("cache") else path)
    traced = tracemalloc.get_traced_memory()[1] if not rss_ok else 0
    peak = status("VmHWM")
    print(json.dumps({"rss_kib": (peak - before) if rss_ok and peak else None,
                      "traced_kib": traced // 1024}))
""")


def bench_memory(files, tmp):
    from svmtool.io.cache import save_cache
    from svmtool.io.svmlight import load_svmlight

    tiny_cache = Path(tmp) / "tiny.cache"
    save_cache(load_svmlight(TINY), tiny_cache)
    loaders = ["svmtool 1 thread", "svmtool 2 threads", "sklearn", "cache read",
               "cache mmap+touch"]
    rows = []
    for path in files:
        big = Path(tmp) / "big.cache"
        save_cache(load_svmlight(path), big)
        res = {}
        for loader in loaders:
            out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, loader, str(path),
                                  str(big), str(TINY), str(tiny_cache)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                res[loader] = None
                print(out.stderr, file=sys.stderr)
                continue
            got = json.loads(out.stdout.strip().splitlines()[-1])
            res[loader] = (got["rss_kib"] if got["rss_kib"] is not None
                           else got["traced_kib"]) / 1024
        rows.append((path, big.stat().st_size, res))
        print(f"  memory {path.name}: {res}", file=sys.stderr)
    return rows


JIT_SCRIPT = textwrap.dedent("""
    import json, sys, time, tempfile, os
    t0 = time.perf_counter()
    from svmtool.io.svmlight import load_svmlight
    from svmtool.io.writer import dump_svmlight
    t1 = time.perf_counter()
    p = load_svmlight(sys.argv[1])
    t2 = time.perf_counter()
    p = load_svmlight(sys.argv[1])
    t3 = time.perf_counter()
    out = os.path.join(tempfile.mkdtemp(), "o.txt")
    dump_svmlight(p, out)
    t4 = time.perf_counter()
    dump_svmlight(p, out)
    t5 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "read first": t2 - t1, "read again": t3 - t2,
                      "write first": t4 - t3, "write again": t5 - t4}))
""")


def bench_jit():
    with tempfile.TemporaryDirectory() as cache_dir:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
        res = {}
        for label in ("empty cache", "warm cache"):
            out = subprocess.run([sys.executable, "-c", JIT_SCRIPT, str(TINY)], env=env,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(out.stderr, file=sys.stderr)
                return None
            res[label] = json.loads(out.stdout.strip().splitlines()[-1])
        return res


# --- tables -------------------------------------------------------------------------------------

def _label(path, base):
    try:
        return str(Path(path).relative_to(base)) if base else Path(path).name
    except ValueError:
        return Path(path).name


def reads_table(reads, base=None):
    out = ["| file | MB | rows | svmtool 1T MB/s | svmtool 2T MB/s | sklearn MB/s | cache mmap "
           "MB/s | cache mmap+touch MB/s | cache read MB/s | 1T / sklearn | 2T / sklearn | "
           "cache read / 1T | rows/s 1T | rows/s sklearn | rows/s cache read |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for path, size, n_rows, csize, med in reads:
        mb = size / 1e6
        r = {k: mb / v for k, v in med.items()}
        out.append(f"| {_label(path, base)} | {mb:.2f} | {n_rows} | "
                   f"{fmt_rate(r['svmtool 1 thread'])} | {fmt_rate(r['svmtool 2 threads'])} | "
                   f"{fmt_rate(r['sklearn'])} | {fmt_rate(r['cache mmap'])} | "
                   f"{fmt_rate(r['cache mmap+touch'])} | {fmt_rate(r['cache read'])} | "
                   f"{r['svmtool 1 thread'] / r['sklearn']:.1f}x | "
                   f"{r['svmtool 2 threads'] / r['sklearn']:.1f}x | "
                   f"{r['cache read'] / r['svmtool 1 thread']:.0f}x | "
                   f"{n_rows / med['svmtool 1 thread']:,.0f} | {n_rows / med['sklearn']:,.0f} | "
                   f"{n_rows / med['cache read']:,.0f} |")
    tot = {k: sum(m[k] for *_, m in reads) for k in reads[0][4]}
    mb = sum(r[1] for r in reads) / 1e6
    out.append(f"| **all** | {mb:.2f} | {sum(r[2] for r in reads)} | "
               f"{fmt_rate(mb / tot['svmtool 1 thread'])} | "
               f"{fmt_rate(mb / tot['svmtool 2 threads'])} | {fmt_rate(mb / tot['sklearn'])} | "
               f"{fmt_rate(mb / tot['cache mmap'])} | {fmt_rate(mb / tot['cache mmap+touch'])} | "
               f"{fmt_rate(mb / tot['cache read'])} | "
               f"{tot['sklearn'] / tot['svmtool 1 thread']:.1f}x | "
               f"{tot['sklearn'] / tot['svmtool 2 threads']:.1f}x | "
               f"{tot['svmtool 1 thread'] / tot['cache read']:.0f}x | | | |")
    return "\n".join(out)


def writes_table(writes, base=None):
    out = ["| file | nnz | svmtool MB/s | sklearn MB/s | svmtool ns/nnz | sklearn ns/nnz "
           "| svmtool / sklearn |", "|---|---:|---:|---:|---:|---:|---:|"]
    for path, size, nnz, med in writes:
        mb = size / 1e6
        out.append(f"| {_label(path, base)} | {nnz} | {fmt_rate(mb / med['svmtool'])} | "
                   f"{fmt_rate(mb / med['sklearn'])} | "
                   f"{med['svmtool'] / max(nnz, 1) * 1e9:.0f} | "
                   f"{med['sklearn'] / max(nnz, 1) * 1e9:.0f} | "
                   f"{med['sklearn'] / med['svmtool']:.1f}x |")
    ts = sum(m["svmtool"] for *_, m in writes)
    tk = sum(m["sklearn"] for *_, m in writes)
    out.append(f"| **all** | {sum(w[2] for w in writes)} | | | | | {tk / ts:.1f}x |")
    return "\n".join(out)


def memory_table(mem, base=None):
    names = list(mem[0][2])
    out = ["| file | text MB | cache MB | " + " | ".join(names) + " |",
           "|---|---:|---:|" + "---:|" * len(names)]
    for path, csize, res in mem:
        cells = " | ".join("n/a" if res[n] is None else f"{res[n]:.0f}" for n in names)
        out.append(f"| {_label(path, base)} | {Path(path).stat().st_size / 1e6:.1f} | "
                   f"{csize / 1e6:.1f} | {cells} |")
    return "\n".join(out)


def jit_table(jit):
    keys = list(jit["empty cache"])
    out = ["| NUMBA_CACHE_DIR | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
    for label, res in jit.items():
        out.append(f"| {label} | " + " | ".join(f"{res[k]:.3f}" for k in keys) + " |")
    return "\n".join(out)


def run(files, repeats=5, memory="largest", write=True, jit=True, base=None):
    """Run the I/O benchmark on ``files``; returns (data dict, markdown)."""
    require("sklearn.datasets", "the io benchmark")      # before anything is measured
    files = [Path(f) for f in files]
    parts = [f"## Reading and writing\n\n{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, "
             f"median of {repeats} interleaved runs (warm-up excluded).  MB = megabytes of "
             f"svmlight text.\n"]
    data = {}
    with tempfile.TemporaryDirectory() as tmp:
        reads = bench_reads(files, repeats, tmp)
        data["reads"] = [{"file": str(p), "bytes": s, "rows": n, "cache_bytes": c, "median_s": m}
                         for p, s, n, c, m in reads]
        parts.append("### Reading\n\n" + reads_table(reads, base) + "\n")
        if write:
            writes = bench_writes(files, repeats, tmp)
            data["writes"] = [{"file": str(p), "bytes": s, "nnz": n, "median_s": m}
                              for p, s, n, m in writes]
            parts.append("### Writing\n\n" + writes_table(writes, base) + "\n")
        if memory != "none":
            mem_files = files if memory == "all" else [max(files, key=lambda p: p.stat().st_size)]
            mem = bench_memory(mem_files, tmp)
            data["memory"] = [{"file": str(p), "cache_bytes": c, "mib": r} for p, c, r in mem]
            parts.append("### Peak memory (MiB: rise of the peak resident set during the load, "
                         "in a subprocess, after its imports and a warm-up; the cache file's size "
                         "is given for scale)\n\n" + memory_table(mem, base) + "\n")
    if jit:
        j = bench_jit()
        if j:
            data["jit"] = j
            parts.append("### JIT cost (fresh subprocess, heart_scale; seconds)\n\n"
                         + jit_table(j) + "\n")
    return data, "\n".join(parts)

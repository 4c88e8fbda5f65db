"""One benchmark run (what `svmtool bench` does) and the suites `make bench` runs.

    python -m svmtool.bench.suites --suite standard --out bench-out --markdown BENCHMARKS.md

The standard suite uses ``../shared/data`` beside the repository when it is there, else the small
copies in ``data/``.
"""

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from svmtool.io.output import open_output

REPO = Path(__file__).resolve().parents[2]


@dataclass
class BenchConfig:
    train: str
    test: Optional[str] = None
    name: Optional[str] = None
    solvers: Optional[list] = None          # registry names; None: every linear solver
    Cs: list = field(default_factory=lambda: [1.0])
    epss: list = field(default_factory=lambda: [None])   # None: each solver's default
    repeat: int = 3
    against: list = field(default_factory=lambda: ["liblinear", "libsvm", "sklearn"])
    bias: float = -1.0
    rows: Optional[int] = None              # subsample the training rows
    gamma: Optional[float] = None           # kernel runners (default 1 / n_features)
    kernel_type: int = 2
    trace: bool = True
    memory: bool = True
    scaling: bool = False
    sweep: Optional[str] = None             # "eps" | "C"
    io: bool = False
    external: Optional[str] = None
    external_predict: Optional[str] = None
    external_group: str = "hinge"
    threads: Optional[int] = None
    seed: int = 1


SWEEP_C = [0.01, 0.1, 1.0, 10.0, 100.0]
SWEEP_EPS_FACTORS = [10.0, 1.0, 0.1, 0.01]


def run_one(cfg: BenchConfig, log=None):
    """Run one benchmark; returns the result dict (see report.markdown / write_json)."""
    from svmtool.bench import anchors, harness, report

    if "OMP_NUM_THREADS" not in os.environ:
        # libsvm-official (and liblinear-official) wheels are built with OpenMP; on a busy
        # machine their spinning threads made LIBSVM 500x slower on heart_scale.  One thread
        # (LIBSVM's standard build) unless the caller says otherwise; set before their import.
        os.environ["OMP_NUM_THREADS"] = str(cfg.threads or 1)
    data = harness.load_bench_data(cfg.train, cfg.test, bias=cfg.bias, rows=cfg.rows,
                                   seed=cfg.seed, name=cfg.name, threads=cfg.threads)
    specs = anchors.select_solvers(cfg.solvers, has_qid=data.train.qid is not None)
    kopts = anchors.kernel_defaults(data.nf, cfg.gamma, cfg.kernel_type)
    runners, notes = anchors.build_runners(specs, cfg.against, cfg.bias, kopts, cfg.external,
                                           cfg.external_predict, cfg.external_group,
                                           threads=cfg.threads)
    if log:
        log(f"{data.name}: {data.n} rows, {data.nf} features; runners: "
            + ", ".join(r.name for r in runners))
    Cs, epss = list(cfg.Cs), list(cfg.epss)
    blocks = []
    title = f"{data.name} (n={data.n}, features={data.nf}" + (
        f", test rows={data.test.n_rows})" if data.test is not None else ")")
    if cfg.sweep == "C" and Cs == [1.0]:
        Cs = SWEEP_C
    rows, traces, errors = harness.run_grid(data, runners, Cs, epss, repeat=cfg.repeat,
                                            trace=cfg.trace and cfg.sweep is None,
                                            memory=cfg.memory, log=log)
    block = {"title": title, "parse": report.parse_table(data), "rows": rows, "traces": traces,
             "errors": errors, "ratios": report.headline_ratios(rows)}
    if cfg.sweep == "eps":
        # eps means different things per solver: sweep each around its own default
        extra = []
        for r in runners:
            base = r.default_eps or 0.1
            for f in SWEEP_EPS_FACTORS:
                if f == 1.0 and epss == [None]:
                    continue
                rr, _, ee = harness.run_grid(data, [r], Cs[:1], [base * f], repeat=cfg.repeat,
                                             trace=False, memory=False, log=log)
                extra += rr
                errors += ee
        rows += extra
        harness.add_gaps(rows)
    if cfg.sweep:
        block["sweep"] = cfg.sweep
    if cfg.scaling:
        block["scaling"] = harness.run_scaling(data, runners, Cs[0], epss[0],
                                               repeat=max(1, min(cfg.repeat, 3)), log=log)
    blocks.append(block)
    notes.append(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} for the OpenMP builds "
                 f"of LIBSVM/LIBLINEAR; svmtool threads: {cfg.threads or 'all cores'}")
    result = {"machine": harness.machine_info(), "config": {k: v for k, v in vars(cfg).items()},
              "blocks": blocks, "notes": notes,
              "parse": data.parse}
    if cfg.io:
        from svmtool.bench import iobench

        files = [p for p in (cfg.train, cfg.test) if p]
        result["io_data"], result["io"] = iobench.run(files, repeats=max(1, cfg.repeat),
                                                      memory="none", write=False, jit=False)
    return result


def finish(result, out_dir, tag, log=None, link_prefix=""):
    """Write the JSON, the markdown and the plots into out_dir; returns (markdown, plot files)."""
    from svmtool.bench import plots, report

    os.makedirs(out_dir, exist_ok=True)
    files = []
    if plots.available():
        for b in result["blocks"]:
            try:
                if b.get("traces") and any(t["replays"] for t in b["traces"]):
                    files += plots.traces(b["traces"], out_dir, tag)
                if b.get("scaling") and b["scaling"]["points"]:
                    files += plots.scaling(b["scaling"], out_dir, tag)
                if b.get("sweep"):
                    files += plots.sweep(b["rows"], b["sweep"], out_dir, tag)
            except Exception as e:          # a plot must never cost the tables
                result["notes"].append(f"plot failed: {e!r}")
    else:
        result["notes"].append(plots.HINT)
    result["plots"] = [os.path.basename(f) for f in files]
    report.write_json(result, os.path.join(out_dir, f"{tag}.json"))
    with open_output(os.path.join(out_dir, f"{tag}.md"), "w", encoding="utf-8") as fh:
        fh.write(report.markdown(result, files))
    return report.markdown(result, files, link_prefix), files


# --- the standard suite (make bench) ------------------------------------------------------------

def _shared_sets(base):
    """(name, train, test, options) of the standard suite on ../shared/data."""
    b = Path(base)
    return [
        ("a9a", b / "a9a/a9a", b / "a9a/a9a.t", {}),
        ("w8a", b / "w8a/w8a", b / "w8a/w8a.t", {}),
        ("ijcnn1", b / "ijcnn1/ijcnn1", b / "ijcnn1/ijcnn1.t", {"scaling": True}),
        ("a9a C sweep", b / "a9a/a9a", b / "a9a/a9a.t",
         {"sweep": "C", "solvers": ["dcd-l1", "dcd-l2", "newton", "ocas"], "trace": False,
          "against": ["liblinear"]}),
        ("ijcnn1 kernel", b / "ijcnn1/ijcnn1", b / "ijcnn1/ijcnn1.t",
         {"rows": 3000, "solvers": ["kernel", "dcsvm"], "gamma": 2.0, "Cs": [32.0]}),
    ]


def _local_sets(base):
    b = Path(base)
    return [
        ("a9a", b / "a9a", b / "a9a.t", {"scaling": True}),
        ("heart kernel", b / "heart_scale", None, {"solvers": ["kernel", "dcsvm"]}),
    ]


def suite(name, data_dir=None, repeat=None):
    shared = Path(data_dir) if data_dir else REPO.parent / "shared" / "data"
    if name == "quick" or not (shared / "a9a" / "a9a").exists():
        sets = _local_sets(REPO / "data")
        where = "data/ (bundled)"
    else:
        sets = _shared_sets(shared)
        where = "../shared/data"
    cfgs = []
    for title, tr, te, opts in sets:
        if not Path(tr).exists():
            continue
        opts = dict(opts)
        from svmtool.solvers import REGISTRY

        if opts.get("solvers"):
            opts["solvers"] = [s for s in opts["solvers"] if s in REGISTRY]
            if not opts["solvers"]:
                continue
        cfgs.append((title, BenchConfig(train=str(tr), test=str(te) if te else None,
                                        name=title, repeat=repeat or 3, **opts)))
    return cfgs, where


def main(argv=None):
    ap = argparse.ArgumentParser(description="svmtool's benchmark suites")
    ap.add_argument("--suite", choices=["standard", "quick"], default="standard")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", default="bench-out")
    ap.add_argument("--markdown", default="BENCHMARKS.md")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--only", default=None, help="comma-separated titles of the suite to run")
    ap.add_argument("--no-io", action="store_true")
    args = ap.parse_args(argv)

    from svmtool.bench import harness

    def log(m):
        print(m, file=sys.stderr, flush=True)

    cfgs, where = suite(args.suite, args.data_dir, args.repeat)
    if args.only:
        keep = {s.strip() for s in args.only.split(",")}
        cfgs = [(t, c) for t, c in cfgs if t in keep]
    rel = os.path.relpath(os.path.abspath(args.out),
                          os.path.dirname(os.path.abspath(args.markdown)))
    t0 = time.time()
    sections, all_plots = [], []
    for title, cfg in cfgs:
        log(f"== {title}")
        res = run_one(cfg, log=log)
        tag = "bench_" + "".join(c if c.isalnum() else "_" for c in title)
        md, files = finish(res, args.out, tag, log=log, link_prefix=rel + "/")
        sections.append(md)
        all_plots += files
    io_md = ""
    if not args.no_io:
        from svmtool.bench import iobench

        files = ([str(c.train) for _, c in cfgs[:1]] + [str(c.test) for _, c in cfgs[:1]
                                                        if c.test])
        if files:
            log("== reading")
            _, io_md = iobench.run(files, repeats=args.repeat or 3, memory="none", write=True,
                                   jit=False)
    m = harness.machine_info()
    v = m["versions"]
    head = [
        "# svmtool benchmarks\n",
        f"Written by `make bench` (suite `{args.suite}`, data from {where}) in "
        f"{(time.time() - t0) / 60:.1f} minutes.  Machine: {m['processor']}, {m['cpus']} CPUs "
        f"(shared with other jobs: load average at the end "
        f"{', '.join(f'{x:.1f}' for x in m.get('load_average', ()))}), {m['platform']}, "
        f"Python {m['python']}.  Versions: " + ", ".join(f"{k} {x}" for k, x in v.items() if x)
        + ".\n",
        "How it measures (see `svmtool/bench/harness.py`): wall time = median of the repeated "
        "runs after one warm-up run (`jit` = first run - median), data already in memory and "
        "converted to each tool's structures outside the timed region; peak memory = the larger "
        "of the rise of the peak RSS during the last timed run (reset through "
        "/proc/self/clear_refs) and tracemalloc's peak over one untimed run; the primal "
        "objective is computed by the harness from each run's w in LIBLINEAR's convention "
        "1/2 w'w + C sum loss; rel. gap is to the best objective of any run on the same data, "
        "C and problem.  Anchors in *italics*.  Traces: test error and primal suboptimality "
        "against time from runs capped at 1, 2, 4, ... outer iterations (LIBLINEAR, LIBSVM: "
        "an -e ladder), dotted lines from the solver callback.\n",
    ]
    text = "\n".join(head) + "\n" + "\n".join(sections) + ("\n" + io_md if io_md else "")
    with open_output(args.markdown, "w", encoding="utf-8") as fh:
        fh.write(text)
    log(f"wrote {args.markdown} and {args.out}/ in {(time.time() - t0) / 60:.1f} min")


if __name__ == "__main__":
    main()

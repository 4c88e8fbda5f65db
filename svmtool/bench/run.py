"""One benchmark run: what ``svmtool bench TRAIN`` does, and what every case of a suite is.

A run reads one data set (parse time apart), builds the runners (svmtool's solvers from the
registry, their variants, the anchors asked for), times every runner at every (C, eps) through
:func:`svmtool.bench.harness.run_grid`, and optionally the scaling on nested subsamples, a
sweep over eps or C, and the reader's throughput.  :func:`finish` writes the JSON, the markdown
and the plots.
"""

import os
from dataclasses import dataclass, field
from typing import Optional

from svmtool.io.output import open_output


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
    head: Optional[int] = None              # or take the first rows of the file, in order
    gamma: Optional[float] = None           # kernel runners (default 1 / n_features)
    kernel_type: int = 2
    cache_mb: Optional[float] = None        # kernel runners' -m (None: each tool's 100 MB)
    interleave: bool = False        # timed runs alternate between the runners (A B A B ...)
    trace: bool = True
    memory: bool = True
    scaling: bool = False
    sweep: Optional[str] = None             # "eps" | "C"
    io: bool = False
    external: Optional[str] = None
    external_predict: Optional[str] = None
    external_group: str = "hinge"
    external_model: Optional[str] = None    # "svmtool": svmtool reads its model (the objective)
    threads: Optional[int] = None
    seed: int = 1
    variants: list = field(default_factory=list)    # anchors.Variant: svmtool runs with options
    end_to_end: bool = False        # svmtool's runs as `svmtool train` commands on the text file
    split: Optional[int] = None     # no test file: train on this many rows, test on the rest
    nightly: Optional[float] = None  # warm-start scenario: fraction of rows replaced overnight


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
        from svmtool.bench.anchors.base import HARNESS_ENV

        HARNESS_ENV.add("OMP_NUM_THREADS")
    data = harness.load_bench_data(cfg.train, cfg.test, bias=cfg.bias, rows=cfg.rows,
                                   head=cfg.head,
                                   seed=cfg.seed, name=cfg.name, threads=cfg.threads,
                                   split=cfg.split, nightly=cfg.nightly)
    specs = ([] if cfg.variants and not cfg.solvers
             else anchors.select_solvers(cfg.solvers, has_qid=data.train.qid is not None))
    kopts = anchors.kernel_defaults(data.nf, cfg.gamma, cfg.kernel_type)
    if cfg.cache_mb:
        kopts["cache_mb"] = float(cfg.cache_mb)
    runners, notes = anchors.build_runners(specs, cfg.against, cfg.bias, kopts, cfg.external,
                                           cfg.external_predict, cfg.external_group,
                                           external_model=cfg.external_model,
                                           threads=cfg.threads, variants=cfg.variants,
                                           end_to_end=cfg.end_to_end, labels=data.y)
    if log:
        for n in notes:             # the anchors skipped (one line each, why) or found
            log(n)
        log(f"{data.name}: {data.n} rows, {data.nf} features; runners: "
            + ", ".join(r.name for r in runners))
    Cs, epss = list(cfg.Cs), list(cfg.epss)
    blocks = []
    title = f"{data.name} (n={data.n}, features={data.nf}" + (
        f", test rows={data.test.n_rows})" if data.test is not None else ")")
    if cfg.sweep == "C" and Cs == [1.0]:
        Cs = SWEEP_C
    load0 = harness.load_average()
    rows, traces, errors = harness.run_grid(data, runners, Cs, epss, repeat=cfg.repeat,
                                            trace=cfg.trace and cfg.sweep is None,
                                            memory=cfg.memory, log=log,
                                            interleave=cfg.interleave)
    block = {"title": title, "parse": report.parse_table(data), "rows": rows, "traces": traces,
             "errors": errors, "ratios": report.headline_ratios(rows),
             "load": [list(load0), list(harness.load_average())]}
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
    notes += _command_notes(runners, cfg)
    result = {"machine": harness.machine_info(), "config": _config_json(cfg),
              "blocks": blocks, "notes": notes,
              "parse": data.parse}
    if cfg.io:
        from svmtool.bench import iobench

        files = [p for p in (cfg.train, cfg.test) if p]
        result["io_data"], result["io"] = iobench.run(files, repeats=max(1, cfg.repeat),
                                                      memory="none", write=False, jit=False)
    return result


def _command_notes(runners, cfg):
    """The notes under a block: each command as it ran, and the threads of each kind."""
    notes = [f"`{r.name}` ran `{r.describe()}` (timed from outside, start to exit)"
             for r in runners if r.time_from_outside]
    if any(getattr(r, "own_threads", False) for r in runners):
        notes.append("svmtool's commands and the Python peers (SVC commands, liblinear-mc) "
                     "run without the bench's OMP_NUM_THREADS, with their own default threads")
    notes.append(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} for the OpenMP builds "
                 f"of LIBSVM/LIBLINEAR; svmtool threads: {cfg.threads or 'all cores'}")
    return notes


def _config_json(cfg):
    out = {}
    for k, v in vars(cfg).items():
        if k == "variants":
            v = [{"solver": x.solver, "label": x.label, "options": dict(x.options),
                  "warm": x.warm} for x in v]
        out[k] = v
    return out


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

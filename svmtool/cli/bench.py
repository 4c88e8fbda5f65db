"""``svmtool bench``: time, memory, objective and accuracy of svmtool's solvers against anchors.

Two forms: ``svmtool bench TRAIN [options]`` (one run on one data set) and ``svmtool bench
--suite NAME[,NAME]`` (registered suites, :mod:`svmtool.bench.suites`; ``--list-suites``)."""

import click
from click.core import ParameterSource

from svmtool.cli.common import info, quiet_option


def _floats(text, what):
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"{what} must be a comma-separated list of numbers: {text!r}")


def _names(text):
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


# options of the one-run form only (refused with --suite)
RUN_ONLY = ("test_file", "solvers", "c_list", "e_list", "bias", "gamma", "cache_mb", "external",
            "external_predict", "external_loss", "rows", "head", "scaling", "sweep", "io_bench",
            "no_trace", "no_memory", "tag", "end_to_end", "interleave", "scale_rows",
            "scale_modes", "scale_budget", "scale_c")
SUITE_ONLY = ("data_dir", "quick", "markdown", "large")


@click.command(context_settings={"help_option_names": ["-h", "--help"]},
               epilog="Examples: svmtool bench data/a9a --test data/a9a.t --solvers dcd-l1,ocas "
                      "-c 1 --repeat 5 --out bench-out;  svmtool bench --list-suites;  "
                      "svmtool bench --suite dcd --markdown BENCHMARKS.md")
@click.argument("train_file", metavar="[TRAIN]", required=False,
                type=click.Path(exists=True, dir_okay=False))
@click.option("--suite", "suite_names", default=None,
              help="Run registered suites instead of one TRAIN: comma-separated names, "
                   "'default' (what make bench runs) or 'all'; see --list-suites.")
@click.option("--list-suites", is_flag=True, help="List the suites and exit.")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Suites: the folder of the data sets (each in a folder of its own, as "
                   "a9a/a9a, or side by side; default ../shared/data of the current folder "
                   "when there, else data/a9a of the current folder and the bundled "
                   "heart_scale).")
@click.option("--quick", is_flag=True,
              help="Suites: the bundled heart_scale only (a smoke run of any suite; alone: "
                   "of the default set).")
@click.option("--large", is_flag=True,
              help="Suites: their larger cases instead (dcsvm-e2e: ijcnn1's training and "
                   "test rows shuffled, 120,000 to train), data sets built in --out.")
@click.option("--markdown", type=click.Path(dir_okay=False), default=None,
              help="Suites: write their sections into this file (BENCHMARKS.md), keeping the "
                   "sections of the other suites; without it the markdown goes to stdout.")
@click.option("--end-to-end", is_flag=True,
              help="svmtool's runs as whole `svmtool train` commands on the text file (as the "
                   "program anchors run), timed from outside.")
@click.option("--interleave", is_flag=True,
              help="Alternate the timed runs of the runners (one run of each per round, after "
                   "one warm-up run of each), so that a shared machine's load reaches all "
                   "alike; no traces and no memory run.")
@click.option("--test", "test_file", type=click.Path(exists=True, dir_okay=False),
              help="Test file: test accuracy and the test-error traces.")
@click.option("--solvers", default=None,
              help="Comma-separated solver names or numbers from the registry, or 'all' "
                   "(default: every linear solver; kernel solvers only when named).")
@click.option("-c", "c_list", default="1", show_default=True, help="Comma-separated C values.")
@click.option("-e", "e_list", default=None,
              help="Comma-separated eps values (default: each solver's and anchor's own).")
@click.option("-B", "bias", type=float, default=-1.0, show_default=True,
              help="Bias feature value for the linear runs (-1: none), as LIBLINEAR's -B.")
@click.option("-g", "gamma", type=float, default=None,
              help="RBF gamma of the kernel runs (default 1/features).")
@click.option("-m", "cache_mb", type=float, default=None,
              help="Kernel cache in MB of the kernel runs, svm-train's -m (default 100).")
@click.option("--repeat", type=int, default=3, show_default=True,
              help="Timed runs per case after one warm-up run; the median is reported.")
@click.option("--against", default="liblinear,libsvm,sklearn", show_default=True,
              help="Anchors (each used only if installed): liblinear, libsvm, sklearn (in "
                   "process); liblinear-train, svm-train, svmocas, svm_perf_learn (programs on "
                   "PATH, whole commands; 'programs': all four; also named liblinear-c, libsvm-c, "
                   "svmperf); Python processes, whole commands: sklearn-svc (scikit-learn's "
                   "SVC), sklearnex (scikit-learn-intelex's SVC, under "
                   "$SVMTOOL_BENCH_SKLEARNEX_PYTHON when set), each also -dense (fit to a "
                   "dense copy), liblinear-mc (multi-core "
                   "LIBLINEAR, under $SVMTOOL_BENCH_LIBLINEAR_MC_PYTHON: a venv of its own with "
                   "liblinear-multicore); 'all'; 'none'.  With --suite: replaces each suite's "
                   "own anchors.")
@click.option("--anchor-bin", "anchor_bin", multiple=True, metavar="DIR",
              type=click.Path(file_okay=False),
              help="A folder searched before PATH for the anchor programs (repeatable).")
@click.option("--external", default=None,
              help="External training command template, e.g. 'svm_perf_learn -c {perf_c} -e "
                   "{eps_percent} {train} {model}' ({train} {test} {model} {predictions} {c} "
                   "{perf_c} {eps} {eps_percent} {n}); timed from outside.")
@click.option("--external-predict", default=None,
              help="Its prediction command template, e.g. 'svm_perf_classify {test} {model} "
                   "{predictions}'.")
@click.option("--external-loss", type=click.Choice(["hinge", "squared_hinge", "logistic"]),
              default="hinge", show_default=True,
              help="The problem the external command solves (its row group).")
@click.option("--rows", type=int, default=None, help="Use a random subsample of the training rows.")
@click.option("--head", type=int, default=None,
              help="Use the first HEAD rows of TRAIN, in file order (written to a text file "
                   "that every command reads).")
@click.option("--scaling", is_flag=True,
              help="Also time every runner on nested subsamples n/32 ... n (log-log plot, slope).")
@click.option("--scale-rows", "scale_rows", default=None, metavar="ROWS,...",
              help="With --scaling: time whole `svmtool train` commands on caches of these row "
                   "counts (e.g. 2e6,4e6,8e6), built from copies of TRAIN in different row "
                   "orders in --out, in the --scale-modes; peak RssAnon per run.")
@click.option("--scale-modes", "scale_modes", default="memory,out-of-core,dask:2",
              show_default=True, help="With --scale-rows: memory, out-of-core, dask:N.")
@click.option("--scale-budget", "scale_budget", type=float, default=256, show_default=True,
              metavar="MB", help="With --scale-rows: --memory-budget of the out-of-core and "
                                 "dask runs.")
@click.option("--scale-c", "scale_c", type=click.Choice(["fixed", "per-n"]), default="fixed",
              show_default=True,
              help="With --scale-rows: LIBLINEAR's C at every size (k copies = C k), or C/n "
                   "as Joachims and SVMperf normalise it (every size the same problem).")
@click.option("--sweep", type=click.Choice(["eps", "C"]), default=None,
              help="Iterations and time against eps (around each solver's default) or C.")
@click.option("--io", "io_bench", is_flag=True,
              help="Also measure reading throughput: svmtool vs scikit-learn vs the cache.")
@click.option("--no-trace", is_flag=True, help="Skip the traces (callback and replay runs).")
@click.option("--no-memory", is_flag=True, help="Skip the peak-memory run.")
@click.option("--threads", type=int, default=None, help="Threads for reading and row passes.")
@click.option("--out", "out_dir", default="bench-out", show_default=True,
              help="Folder for the JSON, the markdown copy and the PNG plots.")
@click.option("--tag", default="bench", show_default=True, help="File name stem in --out.")
@quiet_option
@click.pass_context
def command(ctx, train_file, suite_names, list_suites, data_dir, quick, markdown, end_to_end,
            test_file, solvers, c_list, e_list, bias, gamma, repeat, against, external,
            external_predict, external_loss, rows, scaling, sweep, io_bench, no_trace, no_memory,
            threads, out_dir, tag, quiet, scale_rows=None, scale_modes="", scale_budget=256,
            anchor_bin=(), scale_c="fixed", interleave=False, cache_mb=None, head=None,
            large=False):
    """Benchmark svmtool's solvers against anchors (LIBLINEAR, LIBSVM, scikit-learn, svmocas,
    SVMperf, an external command): on TRAIN (a markdown table on stdout, JSON and plots in
    --out), or the registered suites (--suite, --list-suites)."""
    from svmtool.errors import ParameterError

    if repeat < 1:
        raise ParameterError(f"--repeat must be at least 1 (got {repeat})")
    given = {n for n in RUN_ONLY + SUITE_ONLY + ("against", "repeat")
             if ctx.get_parameter_source(n) not in (ParameterSource.DEFAULT, None)}
    if list_suites:
        _list_suites()
        return
    if anchor_bin:
        from svmtool.bench.anchors.programs import set_anchor_bin

        set_anchor_bin(anchor_bin)
    if suite_names is None and train_file is None and quick:
        suite_names = "default"          # `svmtool bench --quick`: the default set's smoke run
    if suite_names is not None:
        if train_file is not None:
            raise ParameterError("give TRAIN or --suite, not both")
        bad = sorted(f"--{n.replace('_', '-')}" for n in given & set(RUN_ONLY))
        if bad:
            raise ParameterError(f"{', '.join(bad)}: only with TRAIN (a suite sets its own)")
        _run_suites(ctx, suite_names, data_dir, quick, markdown,
                    repeat if "repeat" in given else None,
                    _against(against) if "against" in given else None, threads, out_dir, quiet,
                    large=large)
        return
    if train_file is None:
        raise ParameterError("missing TRAIN (or --suite NAME, or --list-suites)")
    bad = sorted(f"--{n.replace('_', '-')}" for n in given & set(SUITE_ONLY))
    if bad:
        raise ParameterError(f"{', '.join(bad)}: only with --suite")
    from svmtool.bench.run import BenchConfig, finish, run_one
    from svmtool.errors import MissingExtra, installed

    if io_bench and not installed("sklearn"):
        raise MissingExtra("sklearn", "--io")
    Cs = _floats(c_list, "-c")
    if not Cs or any(not (c > 0) for c in Cs):
        raise ParameterError(f"-c needs positive values (got {c_list!r})")
    epss = _floats(e_list, "-e") or [None]
    if any(e is not None and not (e > 0) for e in epss):
        raise ParameterError(f"-e needs positive values (got {e_list!r})")
    if scale_rows is not None:
        if not scaling:
            raise ParameterError("--scale-rows needs --scaling")
        return _scale_out(ctx, train_file, scale_rows, scale_modes, scale_budget, solvers, Cs,
                          epss, bias, repeat, threads, out_dir, tag, quiet, scale_c)
    if head is not None and (head < 1 or rows is not None):
        raise ParameterError("--head needs a positive number of rows, and not with --rows")
    ag = _against(against)
    cfg = BenchConfig(train=train_file, test=test_file, solvers=_names(solvers), Cs=Cs,
                      epss=epss, repeat=repeat, against=ag, bias=bias, rows=rows, gamma=gamma,
                      trace=not no_trace, memory=not no_memory, scaling=scaling, sweep=sweep,
                      io=io_bench, external=external, external_predict=external_predict,
                      external_group=external_loss, threads=threads, end_to_end=end_to_end,
                      interleave=interleave, cache_mb=cache_mb, head=head)
    log = (lambda m: info(ctx, m, quiet))
    result = run_one(cfg, log=log)
    md, files = finish(result, out_dir, tag, log=log)
    click.echo(md)
    info(ctx, f"wrote {out_dir}/{tag}.json, {out_dir}/{tag}.md"
         + (f" and {len(files)} plot(s)" if files else ""), quiet)


def _against(text):
    from svmtool.bench.anchors import expand_against
    from svmtool.errors import ParameterError

    try:
        return expand_against(_names(text) or [])
    except ValueError as e:
        raise ParameterError(f"--against: {e}")


def _list_suites():
    from svmtool.bench.suites import SUITES, ordered

    width = max(len(n) for n in SUITES)
    for s in ordered():
        mark = "*" if s.default else " "
        click.echo(f"{mark} {s.name:{width}s}  {s.summary}")
    click.echo("(* in the default set: make bench = svmtool bench --suite default "
               "--markdown BENCHMARKS.md --out bench-out)")


def _run_suites(ctx, names, data_dir, quick, markdown, repeat, against, threads, out_dir, quiet,
                large=False):
    import os

    from svmtool.bench.suites import Where, merge_markdown, ordered, run_suite, select
    from svmtool.bench.suites.registry import SETS, holds_sets
    from svmtool.errors import MissingExtra, ParameterError, installed

    try:
        suites = select(names)
    except KeyError as e:
        raise ParameterError(e.args[0])
    for suite in suites:             # before any suite runs: nothing half-written
        for module in suite.needs:
            if not installed(module):
                raise MissingExtra(module, f"bench --suite {suite.name}")
    if data_dir is not None and not os.path.isdir(data_dir):
        raise ParameterError(f"--data-dir: no folder {data_dir}")
    if data_dir is not None and not quick and not holds_sets(data_dir):
        raise ParameterError(f"--data-dir: {data_dir} holds none of the data sets "
                             f"({', '.join(tr for tr, _ in SETS.values())})")
    where = Where(data_dir=data_dir, quick=quick, large=large,
                  work=os.path.join(out_dir, "data"))
    log = (lambda m: info(ctx, m, quiet))
    os.makedirs(out_dir, exist_ok=True)
    prefix = ""
    if markdown:
        rel = os.path.relpath(os.path.abspath(out_dir),
                              os.path.dirname(os.path.abspath(markdown)))
        prefix = rel + "/"
    sections = {}
    for suite in suites:
        sections[suite.name] = run_suite(suite, where, out_dir, repeat=repeat, against=against,
                                         threads=threads, log=log, link_prefix=prefix,
                                         given_data_dir=data_dir)
    if markdown:
        merge_markdown(markdown, sections, [s.name for s in ordered()])
        info(ctx, f"wrote {markdown} ({', '.join(sections)}) and {out_dir}/", quiet)
    else:
        click.echo("\n".join(sections.values()))


def _scale_out(ctx, train_file, scale_rows, scale_modes, budget, solvers, Cs, epss, bias, repeat,
               threads, out_dir, tag, quiet, scale_c="fixed"):
    """--scaling --scale-rows: whole commands on caches of growing size
    (:mod:`svmtool.bench.scale_out`)."""
    import json
    import os

    from svmtool.bench import scale_out
    from svmtool.errors import ParameterError
    from svmtool.io.output import open_output

    rows = _floats(scale_rows, "--scale-rows")
    if not rows or any(not (r >= 2) for r in rows):
        raise ParameterError(f"--scale-rows needs row counts >= 2 (got {scale_rows!r})")
    modes = _names(scale_modes) or []
    for m in modes:
        if m not in ("memory", "out-of-core") and not (
                m.startswith("dask:") and m[5:].isdigit() and int(m[5:]) >= 1):
            raise ParameterError(f"--scale-modes: {m!r} is not memory, out-of-core or dask:N")
    names = _names(solvers) or ["ocas"]
    os.makedirs(out_dir, exist_ok=True)
    log = (lambda m: info(ctx, m, quiet))
    parts = []
    results = []
    for name in names:
        res = scale_out.run(train_file, [int(r) for r in rows], name, out_dir, modes=modes,
                            C=Cs[0], eps=epss[0], bias=-1.0 if bias is None else bias,
                            repeat=repeat, budget_mb=budget, threads=threads, log=log,
                            c_rule=scale_c)
        results.append(res)
        parts.append(scale_out.markdown(res))
    md = "\n".join(parts)
    with open_output(os.path.join(out_dir, f"{tag}-scaling.json"), "w") as f:
        f.write(json.dumps(results, indent=1) + "\n")
    with open_output(os.path.join(out_dir, f"{tag}-scaling.md"), "w") as f:
        f.write(md)
    click.echo(md)

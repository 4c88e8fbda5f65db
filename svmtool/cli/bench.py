"""``svmtool bench``: time, memory, objective and accuracy of svmtool's solvers against anchors."""

import click

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


@click.command(context_settings={"help_option_names": ["-h", "--help"]},
               epilog="Example: svmtool bench data/a9a --test data/a9a.t --solvers dcd-l1,ocas "
                      "-c 1 --repeat 5 --out bench-out")
@click.argument("train_file", metavar="TRAIN", type=click.Path(exists=True, dir_okay=False))
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
@click.option("--repeat", type=int, default=3, show_default=True,
              help="Timed runs per case after one warm-up run; the median is reported.")
@click.option("--against", default="liblinear,libsvm,sklearn", show_default=True,
              help="Anchors (each used only if installed): liblinear, libsvm, sklearn; 'none'.")
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
@click.option("--scaling", is_flag=True,
              help="Also time every runner on nested subsamples n/32 ... n (log-log plot, slope).")
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
def command(ctx, train_file, test_file, solvers, c_list, e_list, bias, gamma, repeat, against,
            external, external_predict, external_loss, rows, scaling, sweep, io_bench, no_trace,
            no_memory, threads, out_dir, tag, quiet):
    """Benchmark svmtool's solvers (and anchors: LIBLINEAR, LIBSVM, scikit-learn, an external
    command) on TRAIN: a markdown table on stdout, JSON and plots in --out."""
    from svmtool.bench.suites import BenchConfig, finish, run_one
    from svmtool.errors import ParameterError

    if repeat < 1:
        raise ParameterError(f"--repeat must be at least 1 (got {repeat})")
    Cs = _floats(c_list, "-c")
    if not Cs or any(not (c > 0) for c in Cs):
        raise ParameterError(f"-c needs positive values (got {c_list!r})")
    epss = _floats(e_list, "-e") or [None]
    if any(e is not None and not (e > 0) for e in epss):
        raise ParameterError(f"-e needs positive values (got {e_list!r})")
    ag = [] if (against or "").strip().lower() == "none" else _names(against) or []
    unknown = set(ag) - {"liblinear", "libsvm", "sklearn"}
    if unknown:
        raise ParameterError(f"--against: unknown anchor(s) {', '.join(sorted(unknown))} "
                             f"(choose from liblinear, libsvm, sklearn, none)")
    cfg = BenchConfig(train=train_file, test=test_file, solvers=_names(solvers), Cs=Cs,
                      epss=epss, repeat=repeat, against=ag, bias=bias, rows=rows, gamma=gamma,
                      trace=not no_trace, memory=not no_memory, scaling=scaling, sweep=sweep,
                      io=io_bench, external=external, external_predict=external_predict,
                      external_group=external_loss, threads=threads)
    log = (lambda m: info(ctx, m, quiet))
    result = run_one(cfg, log=log)
    md, files = finish(result, out_dir, tag, log=log)
    click.echo(md)
    info(ctx, f"wrote {out_dir}/{tag}.json, {out_dir}/{tag}.md"
         + (f" and {len(files)} plot(s)" if files else ""), quiet)

"""``svmtool train``: LIBLINEAR's train command line, on svmtool's solvers."""

import os
import re
import sys

import click

from svmtool.cli.common import (info, is_quiet, quiet_option, show_progress, warn,
                                zero_based_option)

_WEIGHT = re.compile(r"^-w([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)$")


class LiblinearStyleCommand(click.Command):
    """Accepts LIBLINEAR's ``-wLABEL WEIGHT`` spelling (e.g. ``-w1 5``, ``-w-1 2``)."""

    def parse_args(self, ctx, args):
        rewritten = []
        i = 0
        while i < len(args):
            m = _WEIGHT.match(args[i])
            if m and i + 1 < len(args):
                rewritten += ["--weight", m.group(1), args[i + 1]]
                i += 2
                continue
            if args[i] == "--":
                rewritten += args[i:]
                break
            rewritten.append(args[i])
            i += 1
        return super().parse_args(ctx, rewritten)


def _solver_help():
    from svmtool.solvers import REGISTRY

    seen, lines = set(), []
    for spec in REGISTRY.values():
        if spec.name in seen:
            continue
        seen.add(spec.name)
        num = f" (-s {spec.liblinear_id})" if spec.liblinear_id is not None else ""
        lines.append(f"{spec.name}{num}: {spec.description}")
    return "; ".join(lines)


@click.command(cls=LiblinearStyleCommand, context_settings={"help_option_names": ["-h", "--help"]},
               epilog="Class weights may also be given LIBLINEAR's way: -w1 5 -w-1 0.5.")
@click.argument("train_file", metavar="TRAIN")
@click.argument("model_file", metavar="[MODEL]", required=False)
@click.option("-s", "solver", default="1", show_default=True,
              help="Solver: a name or LIBLINEAR's number. " + _solver_help())
@click.option("-c", "C", type=float, default=1.0, show_default=True,
              help="Cost C of 1/2 w'w + C sum(loss_i) (LIBLINEAR's and SVMlight's convention).")
@click.option("-e", "eps", type=float, default=None,
              help="Stopping tolerance (default per solver; dual solvers: max projected-gradient "
                   "violation 0.1).")
@click.option("-B", "bias", type=float, default=-1.0, show_default=True,
              help="Bias: if >= 0 each example gets an extra feature of this value "
                   "(its weight is the bias, regularised as LIBLINEAR does); -1: none.  "
                   "Kernel solvers: b^2 is added to every kernel value (a regularised bias; "
                   "the LIBSVM model gets rho = -b^2 sum(alpha_i y_i)).")
@click.option("--weight", "weights", type=(float, float), multiple=True, metavar="LABEL W",
              help="Multiply C of class LABEL by W (LIBLINEAR's -wLABEL W).")
@click.option("-v", "folds", type=int, default=None,
              help="n-fold cross validation: print the accuracy, write no model.")
@click.option("-C", "find_c", is_flag=True,
              help="Find C by n-fold cross validation (-v n, default 5) along a warm-started "
                   "doubling path, as LIBLINEAR's -C; prints each C and the best; writes no "
                   "model.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seed of the random permutations and of the cross-validation folds.")
@click.option("--max-iter", type=int, default=None,
              help="Outer-iteration cap (default per solver, as LIBLINEAR's).")
@click.option("--liblinear-rng", is_flag=True,
              help="Draw permutations as LIBLINEAR does (its rand() and ordering): the model is "
                   "then bit-identical to LIBLINEAR's for the same data and options.")
@click.option("--no-shrinking", is_flag=True, help="Turn the shrinking heuristic off.")
@click.option("--threads", type=int, default=None,
              help="Threads for reading, row passes and one-vs-rest classes.")
@click.option("-t", "kernel_type", type=int, default=2, show_default=True,
              help="Kernel of -s kernel / dcsvm (LIBSVM's -t): 0 linear, 1 polynomial "
                   "(gamma u'v + coef0)^degree, 2 rbf exp(-gamma |u-v|^2), 3 sigmoid "
                   "tanh(gamma u'v + coef0).")
@click.option("-g", "gamma", type=float, default=None,
              help="Kernel gamma (default 1/number of features).")
@click.option("-d", "degree", type=int, default=3, show_default=True, help="Polynomial degree.")
@click.option("-r", "coef0", type=float, default=0.0, show_default=True, help="Kernel coef0.")
@click.option("-m", "cache_mb", type=float, default=100.0, show_default=True,
              help="Kernel row cache size in MB (kernel solvers).")
@click.option("--levels", type=int, default=4, show_default=True,
              help="DC-SVM: number of levels; level l has k^l clusters.")
@click.option("--clusters", "k_clusters", type=int, default=4, show_default=True,
              help="DC-SVM: k, the branching factor of the clustering.")
@click.option("--sample", "sample_size", type=int, default=1000, show_default=True,
              help="DC-SVM: points sampled for kernel k-means at each level.")
@click.option("--early", "early_level", type=int, is_flag=False, flag_value=0, default=None,
              metavar="[LEVEL]",
              help="DC-SVM: stop at LEVEL (default: the level with about 64 clusters; "
                   "without LEVEL put --early last or before another option) "
                   "and save an early-prediction model (nearest cluster's local model).")
@click.option("--overlap", "overlap", type=int, default=None, metavar="N",
              help="DC-SVM --early, multi-class: a border row also trains the local models of "
                   "up to N-1 neighbouring clusters (default 4; 1: the clusters partition the "
                   "rows).")
@click.option("--overlap-quantile", "overlap_quantile", type=float, default=None, metavar="Q",
              help="DC-SVM --early, multi-class: a row is a border row of a neighbouring "
                   "cluster when that centre is at most as much farther than its own as the "
                   "Q-quantile over all rows of the second-nearest centre's (default 0.7).")
@click.option("--test", "test_file", type=click.Path(dir_okay=False), default=None,
              help="DC-SVM: report the accuracy of every level on this test file.")
@click.option("--line-search", "line_search",
              type=click.Choice(["exact", "sorted", "gca2", "tca"]), default=None,
              help="OCAS line search (-s ocas, ocas-mc): exact (the exact minimiser by "
                   "selection, O(n)), sorted (the same by OCAS's sort of the breakpoints, "
                   "O(n log n)), gca2 (Arnosti's grid search) or tca (three-point search).")
@click.option("--abs-gap", "abs_gap", type=float, default=None,
              help="OCAS (-s ocas/gca2/tca/ocas-mc): also stop when F(w) - lower bound <= this "
                   "absolute gap (default: the relative gap -e only).")
@click.option("--no-mu0-guard", "no_mu0_guard", is_flag=True,
              help="OCAS: turn off the guard that takes a small positive step after the line "
                   "search returned mu = 0 five times in a row.")
@click.option("--perf-c", "perf_c", type=float, default=None,
              help="C in SVMperf's convention instead of -c: C = C_perf * 100 / n (per pair "
                   "for -s ordinal: C = C_perf * 100 / number of pairs).")
@click.option("--model-format", "model_format", type=click.Choice(["liblinear", "svmlight"]),
              default=None,
              help="Model file format (default: LIBLINEAR's; SVMlight's for ranking models). "
                   "svmlight: SVMperf's single-vector linear model.")
@zero_based_option
@quiet_option
@click.pass_context
def command(ctx, train_file, model_file, solver, C, eps, bias, weights, folds, seed, max_iter,
            liblinear_rng, no_shrinking, threads, zero_based, quiet, **kernel_opts):
    """Train a model on TRAIN and write it to MODEL.

    TRAIN is svmlight/libsvm text (plain, gzip, bzip2 or xz), - for stdin, or a binary cache
    made by `svmtool convert`.  MODEL defaults to TRAIN's base name + ".model" in the current
    folder; - writes the model to stdout.  The model is written in LIBLINEAR's format (kernel
    solvers: LIBSVM's; --early: svmtool's early-prediction format), to a temporary name first
    and then renamed, so a killed run leaves an older model intact.
    """
    import time

    from svmtool.errors import InputError, ParameterError
    from svmtool.params import TrainParams
    from svmtool.solvers import get_spec

    quiet = is_quiet(ctx, quiet)
    spec = get_spec(solver)
    find_c = kernel_opts.pop("find_c", False)
    line_search = kernel_opts.pop("line_search", None)
    perf_c = kernel_opts.pop("perf_c", None)
    abs_gap = kernel_opts.pop("abs_gap", None)
    no_mu0_guard = kernel_opts.pop("no_mu0_guard", False)
    model_format = kernel_opts.pop("model_format", None)
    if model_file is None and folds is None:
        if train_file == "-":
            raise InputError("MODEL is needed when TRAIN is - (stdin)")
        model_file = os.path.basename(train_file.rstrip("/")) + ".model"
    params = TrainParams(solver=spec.name, C=C, eps=eps, bias=bias, weights=tuple(weights),
                         max_iter=max_iter, seed=seed, liblinear_rng=liblinear_rng,
                         shrinking=not no_shrinking, threads=threads)
    ocas_opts = line_search is not None or abs_gap is not None or no_mu0_guard
    if (ocas_opts and spec.module not in ("svmtool.solvers.ocas", "svmtool.solvers.mcsvm")):
        names = [n for n, v in (("--line-search", line_search), ("--abs-gap", abs_gap),
                                ("--no-mu0-guard", no_mu0_guard)) if v not in (None, False)]
        raise ParameterError(f"{', '.join(names)} only apply to the OCAS solvers "
                             f"(-s ocas, gca2, tca, ocas-mc, 4), not -s {spec.name}")
    if ocas_opts or perf_c is not None:
        from dataclasses import replace

        extra = dict(params.extra)
        if line_search is not None:
            extra["line_search"] = line_search
        if abs_gap is not None:
            if not abs_gap >= 0:
                raise ParameterError(f"--abs-gap must be >= 0 (got {abs_gap})")
            extra["tol_abs"] = abs_gap
        if no_mu0_guard:
            extra["mu0_guard"] = False
        if perf_c is not None:
            if not perf_c > 0:
                raise ParameterError(f"--perf-c must be > 0 (got {perf_c})")
            extra["perf_c"] = perf_c
        params = replace(params, extra=extra)
    if spec.kind == "kernel":
        from dataclasses import replace

        from svmtool.solvers.dcsvm import cli_extra

        params = replace(params, **cli_extra(ctx, params, kernel_opts, zero_based))
    msg = params.check()
    if msg:
        raise ParameterError(msg)

    from svmtool import api
    from svmtool.io.svmlight import load_data

    t0 = time.perf_counter()
    prob = load_data(train_file, zero_based=zero_based, threads=threads,
                     progress=show_progress(ctx, quiet))
    t_read = time.perf_counter() - t0
    info(ctx, f"read {prob.n_rows} examples, {prob.n_features} features, {prob.nnz} non-zeros "
              f"in {t_read:.3f} s", quiet)

    if perf_c is not None and spec.kind != "ranking":
        # SVMperf's C is per 100% of average loss: C_light = C_perf * 100 / n (FORMATS.md 6)
        from dataclasses import replace

        params = replace(params, C=perf_c * 100.0 / max(prob.n_rows, 1))

    if find_c:
        _find_c(prob, params, folds, quiet)
        return

    if folds is not None:
        import numpy as np

        pred = api.cross_validate(prob, params, folds)
        acc = 100.0 * float(np.mean(pred == prob.y))
        click.echo(f"Cross Validation Accuracy = {acc:g}%", err=True)
        return

    callback, bar = _progress(ctx, quiet, spec.name)
    try:
        model = api.train(prob, params, callback=callback)
    finally:
        if bar is not None:
            bar.close()
    _print_report(ctx, model, quiet)
    if spec.kind == "kernel" and not quiet:
        from svmtool.solvers.dcsvm import level_report_lines

        for line in level_report_lines(model.report):
            click.echo(line, err=True)
    if model_format == "svmlight" or model.report.get("model_format") == "svmlight":
        model.report.setdefault("n_train", prob.n_rows)
    api.save_model(model, model_file, model_format)


def _progress(ctx, quiet, name):
    if not show_progress(ctx, quiet):
        return None, None
    from tqdm import tqdm

    bar = tqdm(desc=f"training ({name})", unit=" iter", file=sys.stderr, leave=False)
    state = {"cls": None}

    def callback(cls, it, info_):
        if cls != state["cls"]:
            state["cls"] = cls
            bar.set_description(f"training ({name}), class {cls + 1}")
        bar.update(1)
        if isinstance(info_, dict) and "level" in info_:
            bar.set_description(f"training ({name}), class {cls + 1}, level {info_['level']}")
        viol = info_.get("pg_violation") if isinstance(info_, dict) else None
        if viol is not None:
            bar.set_postfix_str(f"violation {viol:.3g}", refresh=False)

    return callback, bar


def _find_c(prob, params, folds, quiet):
    """LIBLINEAR's train -C: one line per C (not with -q), then the best (all on stderr)."""
    import math

    from svmtool.solvers.param_search import find_c

    def report(c, rate):
        click.echo(f"log2c={math.log2(c):7.2f}\trate={100.0 * rate:g}", err=True)

    res = find_c(prob, params, 5 if folds is None else folds, report=None if quiet else report)
    if res.stopped.startswith("maximum"):
        warn("maximum C reached")
    click.echo(f"Best C = {res.best_C:g}  CV accuracy = {100.0 * res.best_rate:g}%", err=True)


def _print_report(ctx, model, quiet):
    rep = model.report
    for r in rep["classes"]:
        if r.get("notice"):
            warn(f"class {r['label']:g}: {r['notice']}")
    for r in rep["classes"]:
        if not r.get("converged", True):
            msg = r.get("warning") or ("reaching the maximal number of iterations "
                                       f"({r['iterations']}) before the stopping rule was met")
            warn(f"class {r['label']:g}: {msg}")
    if quiet:
        return
    for r in rep["classes"]:
        parts = [f"class {r['label']:g}" if len(rep["classes"]) > 1 else "done",
                 f"iterations {r['iterations']}", f"primal {r['primal']:.10g}"]
        if "dual" in r:
            parts.append(f"dual {r['dual']:.10g}")
        parts.append(f"{r['gap_kind']} {r['gap']:.3g}")
        if "n_sv" in r:
            parts.append(f"nSV {r['n_sv']}")
        if "cg_steps" in r:
            parts.append(f"CG steps {r['cg_steps']}")
        click.echo(": ".join(parts[:1]) + ": " + ", ".join(parts[1:]), err=True)
    click.echo(f"trained in {rep['train_time']:.3f} s ({rep['solver']})", err=True)

"""``svmtool train``: LIBLINEAR's train command line, on svmtool's solvers."""

import os
import re
import sys

import click

from svmtool.cli.common import info, is_quiet, quiet_option, show_progress, zero_based_option

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
                   "(its weight is the bias, regularised as LIBLINEAR does); -1: none.")
@click.option("--weight", "weights", type=(float, float), multiple=True, metavar="LABEL W",
              help="Multiply C of class LABEL by W (LIBLINEAR's -wLABEL W).")
@click.option("-v", "folds", type=int, default=None,
              help="n-fold cross validation: print the accuracy, write no model.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seed of the random permutations and of the cross-validation folds.")
@click.option("--max-iter", type=int, default=None,
              help="Outer-iteration cap (default per solver, as LIBLINEAR's).")
@click.option("--liblinear-rng", is_flag=True,
              help="Draw permutations as LIBLINEAR does (its rand() and ordering): the model is "
                   "then bit-identical to LIBLINEAR's for the same data and options.")
@click.option("--no-shrinking", is_flag=True, help="Turn the shrinking heuristic off.")
@click.option("--threads", type=int, default=None, help="Threads for reading and row passes.")
@zero_based_option
@quiet_option
@click.pass_context
def command(ctx, train_file, model_file, solver, C, eps, bias, weights, folds, seed, max_iter,
            liblinear_rng, no_shrinking, threads, zero_based, quiet):
    """Train a model on TRAIN and write it to MODEL.

    TRAIN is svmlight/libsvm text (plain, gzip, bzip2 or xz), - for stdin, or a binary cache
    made by `svmtool convert`.  MODEL defaults to TRAIN's base name + ".model" in the current
    folder; - writes the model to stdout.  The model is written in LIBLINEAR's format, to a
    temporary name first and then renamed, so a killed run leaves an older model intact.
    """
    import time

    from svmtool.errors import InputError, ParameterError
    from svmtool.params import TrainParams
    from svmtool.solvers import get_spec

    quiet = is_quiet(ctx, quiet)
    spec = get_spec(solver)
    if model_file is None and folds is None:
        if train_file == "-":
            raise InputError("MODEL is needed when TRAIN is - (stdin)")
        model_file = os.path.basename(train_file.rstrip("/")) + ".model"
    params = TrainParams(solver=spec.name, C=C, eps=eps, bias=bias, weights=tuple(weights),
                         max_iter=max_iter, seed=seed, liblinear_rng=liblinear_rng,
                         shrinking=not no_shrinking, threads=threads)
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
    api.save_model(model, model_file)


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
        viol = info_.get("pg_violation") if isinstance(info_, dict) else None
        if viol is not None:
            bar.set_postfix_str(f"violation {viol:.3g}", refresh=False)

    return callback, bar


def _print_report(ctx, model, quiet):
    rep = model.report
    for r in rep["classes"]:
        if not r.get("converged", True):
            msg = r.get("warning") or ("reaching the maximal number of iterations "
                                       f"({r['iterations']}) before the stopping rule was met")
            click.echo(f"svmtool: warning: class {r['label']:g}: {msg}", err=True)
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
        click.echo(": ".join(parts[:1]) + ": " + ", ".join(parts[1:]), err=True)
    click.echo(f"trained in {rep['train_time']:.3f} s ({rep['solver']})", err=True)

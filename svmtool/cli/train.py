"""``svmtool train``: LIBLINEAR's train command line, on svmtool's solvers."""

import os
import re
from dataclasses import replace

import click
from click.core import ParameterSource

from svmtool.cli.common import is_quiet, quiet_option, warn, zero_based_option
from svmtool.cli.publish import TrainJob, read_training_data, train_and_publish
from svmtool.errors import ParameterError
from svmtool.params import OPTIONS, check_value, flag_name, option, refuse

# the options are svmtool.params.OPTIONS: their flags, fields, groups, defaults, help and checks

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


def _solver_table():
    from svmtool.solvers import help_table

    # \b keeps click from re-wrapping the table
    return "\b\nSolvers (-s NAME or LIBLINEAR's number):\n" + help_table(78)


def _default_solver():
    from svmtool.solvers import get_spec

    spec = get_spec(option("solver").default)
    return spec.name + ("" if spec.liblinear_id is None else f", LIBLINEAR's {spec.liblinear_id}")


def option_groups():
    """Registry option group -> the flags of svmtool train that belong to it (OPTIONS)."""
    groups = {}
    for opt in OPTIONS:
        if opt.group and opt.flags:
            groups.setdefault(opt.group, []).append(opt)
    return groups


def click_option(opt):
    """The click option of declaration ``opt``."""
    kw = {"help": opt.help_text(), "show_default": opt.show_default}
    if opt.field == "solver":
        kw["help"] += f"  [default: {_default_solver()}]"
    if opt.type is None:
        kw["is_flag"] = True
    elif opt.type is bool:
        kw["default"] = None
    else:
        kw["default"] = opt.given_default
        kw["type"] = (click.Choice(opt.choices) if opt.choices else
                      click.Path(dir_okay=False) if opt.type == "file" else opt.type)
        kw["multiple"] = opt.multiple
    if opt.metavar:
        kw["metavar"] = opt.metavar
    return click.option("/".join(opt.flags), opt.key, **kw)


def declared_options(command):
    """``command`` with the click option of every declaration with flags, in OPTIONS' order."""
    for opt in reversed([o for o in OPTIONS if o.flags]):
        command = click_option(opt)(command)
    return command


@click.command(cls=LiblinearStyleCommand, context_settings={"help_option_names": ["-h", "--help"]},
               epilog="Class weights may also be given LIBLINEAR's way: -w1 5 -w-1 0.5.\n\n"
                      + _solver_table())
@click.argument("train_file", metavar="TRAIN")
@click.argument("model_file", metavar="[MODEL]", required=False)
@declared_options
@zero_based_option
@quiet_option
@click.pass_context
def command(ctx, train_file, model_file, zero_based, quiet, **opts):
    """Train a model on TRAIN and write it to MODEL.

    TRAIN is svmlight/libsvm text (plain, gzip, bzip2 or xz), - for stdin, or a binary cache
    made by `svmtool convert`.  MODEL defaults to TRAIN's base name + ".model" in the current
    folder; - writes the model to stdout.  The model is written in LIBLINEAR's format (kernel
    solvers: LIBSVM's; --early: svmtool's early-prediction format), to a temporary name first
    and then renamed, so a killed run leaves an older model intact.
    """
    import time

    from svmtool import _startup
    from svmtool.errors import InputError

    t_command = time.monotonic()
    _startup.timed_import("numpy")        # first imported here: --report's startup block
    quiet = is_quiet(ctx, quiet)
    folds, find_c, model_format = opts["folds"], opts["find_c"], opts["model_format"]
    retrain = {k: opts[k] for k in RETRAIN_OPTIONS}
    if model_file is None and folds is None and not find_c:
        if train_file == "-":
            raise InputError("MODEL is needed when TRAIN is - (stdin)")
        model_file = os.path.basename(train_file.rstrip("/")) + ".model"
    # every option is checked before any data is read
    spec, params = _params_of(ctx, opts)
    _check_retrain(ctx, spec, retrain, folds, find_c, model_file)
    if folds is not None or find_c:
        from svmtool.params import check_cross_validation

        refuse(check_cross_validation(params, 5 if folds is None else folds), flag_name)
    if params.time_limit is not None:
        # the budget counts from the start of the command: reading the data spends it too
        params = replace(params, deadline=t_command + params.time_limit)
    job = TrainJob(spec=spec, params=params, train_file=train_file, model_file=model_file,
                   model_format=model_format, zero_based=zero_based,
                   test_file=opts["test_file"], quiet=quiet, started=t_command,
                   weight_file=opts["weight_file"],
                   **{k: v for k, v in retrain.items() if k != "time_limit"})
    if folds is None and not find_c:
        return train_and_publish(ctx, job)
    prob, params, _ = read_training_data(ctx, job)
    if find_c:
        _find_c(ctx, spec, prob, params, folds, quiet)
        return
    _cross_validate(spec, prob, params, folds)


def _cross_validate(spec, prob, params, folds):
    """-v: the cross-validated accuracy (regression: MSE and squared correlation) on stderr."""
    import numpy as np

    from svmtool import api

    pred = api.cross_validate(prob, params, folds)
    if spec.task == "regression":
        from svmtool.ops.metrics import RegressionSums

        sums = RegressionSums().add(prob.y, pred)
        click.echo(f"Cross Validation Mean squared error = {sums.mse():g}", err=True)
        click.echo(f"Cross Validation Squared correlation coefficient = "
                   f"{sums.squared_correlation():g}", err=True)
        return
    acc = 100.0 * float(np.mean(pred == prob.y))
    click.echo(f"Cross Validation Accuracy = {acc:g}%", err=True)


def _given(ctx, name):
    """Whether option ``name`` (a parameter name) was given on the command line."""
    src = ctx.get_parameter_source(name)
    return src is not None and src != ParameterSource.DEFAULT


RETRAIN_OPTIONS = ("init_model", "time_limit", "wait", "report_file", "log_file",
                   "validate_file", "min_accuracy", "max_drop")


def _check_retrain(ctx, spec, opts, folds, find_c, model_file):
    """The retraining options' combinations, before any data is read: ParameterError if wrong."""
    flag = {o.key: o.flags[0] for o in OPTIONS if o.flags}
    given = [flag[k] for k in RETRAIN_OPTIONS if opts[k] is not None]
    if given and (folds is not None or find_c):
        raise ParameterError(f"{', '.join(given)}: only for training a model, not with "
                             f"{'-C' if find_c else '-v'}")
    if opts["init_model"] is not None:
        from svmtool.solvers.common.warm import cold_only

        refuse(cold_only(spec))
    for k in ("min_accuracy", "max_drop"):
        if opts[k] is not None and opts["validate_file"] is None:
            raise ParameterError(f"{flag[k]} needs --validate FILE")
    refuse(check_value("min_accuracy", opts["min_accuracy"]))
    refuse(check_value("max_drop", opts["max_drop"]))
    if opts["max_drop"] is not None and model_file == "-":
        raise ParameterError("--max-drop compares with the published MODEL: MODEL cannot be -")
    refuse(check_value("wait", opts["wait"]))
    if opts["init_model"] is not None and spec.reads("dcsvm") and ctx.params.get("early"):
        raise ParameterError("--init-model cannot start an --early model (it starts -s dcsvm "
                             "without --early)")


def _params_of(ctx, opts):
    """(spec, TrainParams) of the command line's values ``opts`` (by declaration key), every
    option checked: ParameterError if not."""
    from svmtool.api import check_streaming
    from svmtool.params import check_for_solver, params_from
    from svmtool.solvers import get_spec

    spec = get_spec(opts["solver"])
    _check_groups(ctx, spec)
    _check_model_format(spec, opts["model_format"], bool(opts.get("early")))
    values = {}
    for opt in OPTIONS:
        if not opt.field or opt.key not in opts:
            continue
        value = opts[opt.key]
        if opt.invert:
            value = not value
        elif value is None:
            value = opt.default
        values[opt.field] = tuple(value) if opt.multiple else value
    values["solver"] = spec.name
    if opts["bias"] is None:
        values["bias"] = spec.default_bias
    params = params_from(values)
    refuse(params.check(), flag_name)
    check_streaming(spec, params)
    refuse(check_for_solver(params, spec), flag_name)
    return spec, params


def _check_groups(ctx, spec):
    """Refuse an option of a group the solver does not read (its registry entry's options)."""
    for group, opts in option_groups().items():
        given = [o.flags[0] for o in opts if _given(ctx, o.key)]
        if given and not spec.reads(group):
            users = ", ".join(s.name for s in _specs_reading(group))
            raise ParameterError(f"{', '.join(given)} only appl{'ies' if len(given) == 1 else 'y'}"
                                 f" to -s {users}, not -s {spec.name}")


def _check_model_format(spec, model_format, early):
    """Refuse a --model-format that cannot hold the model the solver makes."""
    if model_format is None:
        return
    allowed = spec.model_formats
    if spec.model_type == "kernel" or spec.task == "regression":
        # SVMlight's format also holds a two-class or regression kernel model, and a linear
        # regression model (svmtool.io.svmlight_model)
        allowed = tuple(allowed) + ("svmlight", "svmperf")
    if early:
        allowed = ()
    if model_format not in allowed:
        what = ("an early-prediction model (svmtool's own format)" if early
                else f"{' or '.join(allowed)} models")
        raise ParameterError(f"-s {spec.name} writes {what}: --model-format {model_format} "
                             f"cannot hold it")


def _specs_reading(group):
    from svmtool.solvers import specs

    return [s for s in specs() if s.reads(group)]


def _find_c(ctx, spec, prob, params, folds, quiet):
    """LIBLINEAR's train -C: one line per C (not with -q), then the best (all on stderr).  An
    explicit -c is where the C path starts; for svr-l2 (-s 11) an explicit -p is where the p
    grid starts, as in LIBLINEAR."""
    import math

    from svmtool.solvers.selection.param_search import find_c

    def report(c, score, p=None):
        if p is None:
            click.echo(f"log2c={math.log2(c):7.2f}\trate={100.0 * score:g}", err=True)
        else:
            click.echo(f"log2c={math.log2(c):7.2f}\tp={p:7.2f}\tMean squared error={score:g}",
                       err=True)

    start = params.C if _given(ctx, "C") else None
    start_p = params.svr.p if _given(ctx, "svr_p") else None
    res = find_c(prob, params, 5 if folds is None else folds, start=start, start_p=start_p,
                 report=None if quiet else report)
    if res.stopped.startswith("maximum"):
        warn("maximum C reached")
    if spec.task == "regression":
        click.echo(f"Best C = {res.best_C:g} Best p = {res.best_p:g}  CV MSE = "
                   f"{res.best_rate:g}", err=True)
        return
    click.echo(f"Best C = {res.best_C:g}  CV accuracy = {100.0 * res.best_rate:g}%", err=True)



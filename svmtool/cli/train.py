"""``svmtool train``: LIBLINEAR's train command line, on svmtool's solvers."""

import os
import re
from dataclasses import replace

import click
from click.core import ParameterSource

from svmtool.cli.common import is_quiet, quiet_option, warn, zero_based_option
from svmtool.cli.publish import TrainJob, read_training_data, train_and_publish
from svmtool.errors import ParameterError
from svmtool.params import (LINE_SEARCHES, PERF_LOSSES, CuttingPlaneParams, DcsvmParams,
                            KernelParams, OneClassParams, SvrParams, TrainParams, refuse)

# the options' defaults are the parameter dataclasses' (one fact in one place)
_TRAIN, _KERNEL, _DCSVM = TrainParams(), KernelParams(), DcsvmParams()
_CP, _SVR, _ONECLASS = CuttingPlaneParams(), SvrParams(), OneClassParams()

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

    spec = get_spec(_TRAIN.solver)
    return spec.name + ("" if spec.liblinear_id is None else f", LIBLINEAR's {spec.liblinear_id}")


# option name on the command line -> the TrainParams option group it belongs to
OPTION_GROUPS = {
    "kernel": ("-t", "-g", "-d", "-r", "-m"),
    "dcsvm": ("--levels", "--clusters", "--sample", "--early", "--early-level", "--overlap",
              "--overlap-quantile", "--test"),
    "ocas": ("--line-search", "--abs-gap", "--no-mu0-guard"),
    "loss": ("--loss", "--k-fraction", "--perf-e"),
    "svr": ("-p",),
    "oneclass": ("-n",),
    "bias_reg": ("-R",),
}
_PARAM_OF = {"-t": "kernel_type", "-g": "gamma", "-d": "degree", "-r": "coef0", "-m": "cache_mb",
             "--levels": "levels", "--clusters": "k_clusters", "--sample": "sample_size",
             "--early": "early", "--early-level": "early_level", "--overlap": "overlap",
             "--overlap-quantile": "overlap_quantile", "--test": "test_file",
             "--line-search": "line_search", "--abs-gap": "abs_gap",
             "--no-mu0-guard": "no_mu0_guard", "--loss": "perf_loss",
             "--k-fraction": "k_fraction", "--perf-e": "perf_eps", "-p": "svr_p", "-n": "nu",
             "-R": "no_reg_bias"}


@click.command(cls=LiblinearStyleCommand, context_settings={"help_option_names": ["-h", "--help"]},
               epilog="Class weights may also be given LIBLINEAR's way: -w1 5 -w-1 0.5.\n\n"
                      + _solver_table())
@click.argument("train_file", metavar="TRAIN")
@click.argument("model_file", metavar="[MODEL]", required=False)
@click.option("-s", "solver", default=_TRAIN.solver,
              help=f"Solver: a name or LIBLINEAR's number (the table below).  [default: "
                   f"{_default_solver()}]")
@click.option("-c", "C", type=float, default=_TRAIN.C, show_default=True,
              help="Cost C of 1/2 w'w + C sum(loss_i) (LIBLINEAR's and SVMlight's convention).")
@click.option("-e", "eps", type=float, default=None,
              help="Stopping tolerance (default per solver; dual solvers: max projected-gradient "
                   "violation 0.1).")
@click.option("-B", "bias", type=float, default=None,
              help="Bias: if >= 0 each example gets an extra feature of this value "
                   "(its weight is the bias, regularised as LIBLINEAR does); -1: none "
                   "(the default of the linear solvers).  Kernel solvers: b^2 is added to every "
                   "kernel value (a regularised bias; the LIBSVM model gets rho = -b^2 "
                   "sum(alpha_i y_i)); their default is 1.")
@click.option("--weight", "weights", type=(float, float), multiple=True, metavar="LABEL W",
              help="Multiply C of class LABEL by W (LIBLINEAR's -wLABEL W).")
@click.option("-v", "folds", type=int, default=None,
              help="n-fold cross validation: print the accuracy, write no model.")
@click.option("-C", "find_c", is_flag=True,
              help="Find C by n-fold cross validation (-v n, default 5) along a warm-started "
                   "doubling path, as LIBLINEAR's -C; prints each C and the best; writes no "
                   "model.")
@click.option("--seed", type=int, default=_TRAIN.seed, show_default=True,
              help="Seed of the random permutations and of the cross-validation folds.")
@click.option("--max-iter", type=int, default=None,
              help="Outer-iteration cap (default per solver, as LIBLINEAR's).")
@click.option("--liblinear-rng", is_flag=True,
              help="Draw permutations as LIBLINEAR does (its rand() and ordering): the model is "
                   "then bit-identical to LIBLINEAR's for the same data and options.")
@click.option("--no-shrinking", is_flag=True, help="Turn the shrinking heuristic off.")
@click.option("--threads", type=int, default=None,
              help="Threads for reading, row passes and one-vs-rest classes.")
@click.option("--out-of-core/--in-memory", "out_of_core", default=None,
              help="Train from the binary cache (or shard index) TRAIN in blocks, without "
                   "loading it (default: when it is larger than --memory-budget and the solver "
                   "can).")
@click.option("--memory-budget", "memory_budget", type=float, default=None, metavar="MB",
              help="Memory for the data: a larger cache is trained out of core, in blocks sized "
                   "from it (default: half of the available memory).")
@click.option("--dask", "dask", default=None, metavar="ADDRESS",
              help="Train on a dask.distributed cluster: a scheduler address (tcp://host:8786) "
                   "or local:N (N local worker processes).  TRAIN must be a cache or a shard "
                   "index (convert --shards) all workers can read at the same paths.  Needs the "
                   "'dask' extra.")
@click.option("-t", "kernel_type", type=int, default=_KERNEL.kernel_type, show_default=True,
              help="Kernel of -s kernel / dcsvm (LIBSVM's -t): 0 linear, 1 polynomial "
                   "(gamma u'v + coef0)^degree, 2 rbf exp(-gamma |u-v|^2), 3 sigmoid "
                   "tanh(gamma u'v + coef0).")
@click.option("-g", "gamma", type=float, default=None,
              help="Kernel gamma (default 1/number of features).")
@click.option("-d", "degree", type=int, default=_KERNEL.degree, show_default=True,
              help="Polynomial degree.")
@click.option("-r", "coef0", type=float, default=_KERNEL.coef0, show_default=True,
              help="Kernel coef0.")
@click.option("-m", "cache_mb", type=float, default=_KERNEL.cache_mb, show_default=True,
              help="Kernel row cache size in MB (kernel solvers).")
@click.option("--levels", type=int, default=_DCSVM.levels, show_default=True,
              help="DC-SVM: number of levels; level l has k^l clusters.")
@click.option("--clusters", "k_clusters", type=int, default=_DCSVM.k_clusters, show_default=True,
              help="DC-SVM: k, the branching factor of the clustering.")
@click.option("--sample", "sample_size", type=int, default=_DCSVM.sample, show_default=True,
              help="DC-SVM: points sampled for kernel k-means at each level.")
@click.option("--early", "early", is_flag=True,
              help="DC-SVM: stop at a level (--early-level) and save an early-prediction model "
                   "(each row scored by its nearest cluster's local model).")
@click.option("--early-level", "early_level", type=int, default=None, metavar="N",
              help="DC-SVM --early: the level to stop at (default: the level with about 64 "
                   "clusters).")
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
              type=click.Choice(LINE_SEARCHES), default=None,
              help="OCAS line search (-s ocas, ocas-mc): exact (the exact minimiser by "
                   "selection, O(n)), sorted (the same by OCAS's sort of the breakpoints, "
                   "O(n log n)), gca2 (Arnosti's grid search) or tca (three-point search).")
@click.option("--abs-gap", "abs_gap", type=float, default=None,
              help="OCAS (-s ocas/gca2/tca/ocas-mc): also stop when F(w) - lower bound <= this "
                   "absolute gap (default: the relative gap -e only).")
@click.option("--no-mu0-guard", "no_mu0_guard", is_flag=True,
              help="OCAS: turn off the guard that takes a small positive step after the line "
                   "search returned mu = 0 five times in a row.")
@click.option("--loss", "perf_loss",
              type=click.Choice(PERF_LOSSES), default=None,
              help="-s cp: SVMperf's multivariate loss of the whole prediction vector (its -l): "
                   "errorrate (the hinge loss, -s cp's default problem), f1, prbep "
                   "(precision/recall break-even), prec@k, rec@k, rocarea; C as for the hinge "
                   "loss (--perf-c: SVMperf's C).  Use -B 1 for a threshold, as SVMperf's --b 1.")
@click.option("--k-fraction", "k_fraction", type=float, default=_CP.k_fraction,
              help="--loss prec@k / rec@k: k = this fraction of the positive training rows "
                   "(SVMperf's --p; default 0.5 for prec@k, 2 for rec@k).")
@click.option("--perf-e", "perf_eps", type=float, default=None,
              help="-s cp: stop by SVMperf's own rule with its -e (an absolute tolerance on its "
                   "slack, in percent of the loss: svm_perf_learn -w 3 -e E is --perf-e E), "
                   "instead of -e's relative rule.")
@click.option("-p", "svr_p", type=float, default=_SVR.p, show_default=True,
              help="SVR (-s 11, 12, 13): the width epsilon of the insensitive tube, no loss "
                   "while |w'x - y| <= epsilon (LIBLINEAR's -p).")
@click.option("-n", "nu", type=float, default=_ONECLASS.nu, show_default=True,
              help="One-class SVM (-s 21): nu, the fraction of support vectors "
                   "(LIBLINEAR's -n).")
@click.option("-R", "no_reg_bias", is_flag=True,
              help="Do not regularise the bias weight (-s 0, 2, 5, 6, 11; needs -B 1), as "
                   "LIBLINEAR's -R.")
@click.option("--perf-c", "perf_c", type=float, default=None,
              help="C in SVMperf's convention instead of -c: C = C_perf * 100 / n (per pair "
                   "for -s ordinal: C = C_perf * 100 / number of pairs).")
@click.option("--model-format", "model_format",
              type=click.Choice(["liblinear", "svmlight", "svmperf", "libsvm"]), default=None,
              help="Model file format (default: LIBLINEAR's for linear models, SVMlight's for "
                   "ranking models, LIBSVM's for kernel models). svmlight: SVMlight 6.02's "
                   "(svm_classify reads it): a linear model of two classes, regression or "
                   "ranking as one vector, a two-class or regression kernel model (kernels "
                   "0-3) with its support vectors; svmperf: the same with the version line "
                   "SVMperf's svm_perf_classify reads (V6.20).")
@click.option("--init-model", "init_model", type=click.Path(dir_okay=False), default=None,
              metavar="FILE",
              help="Warm start from this model (e.g. yesterday's): same classes, any order; new "
                   "features start at 0.  Every solver family (see docs/cron.md).")
@click.option("--time-limit", "time_limit", type=float, default=None, metavar="SECONDS",
              help="Stop training when this many seconds (from the start, reading included) are "
                   "spent and write the current (OCAS: best) model, with a warning; exit 0.")
@click.option("--wait", "wait", type=float, default=None, metavar="SECONDS",
              help="If another svmtool is writing MODEL, wait up to this long for it (default: "
                   "fail at once with exit status 75).")
@click.option("--report", "report_file", type=click.Path(dir_okay=False), default=None,
              metavar="FILE", help="Write a JSON record of the run (written atomically).")
@click.option("--log", "log_file", type=click.Path(dir_okay=False), default=None,
              metavar="FILE", help="Append the same record as one JSON line.")
@click.option("--validate", "validate_file", type=click.Path(dir_okay=False), default=None,
              metavar="FILE",
              help="Score the new model (and the existing MODEL) on this data before publishing.")
@click.option("--min-accuracy", "min_accuracy", type=float, default=None, metavar="PCT",
              help="With --validate: publish only if the new model's accuracy is >= PCT.")
@click.option("--max-drop", "max_drop", type=float, default=None, metavar="POINTS",
              help="With --validate: publish only if the new model's accuracy is at most POINTS "
                   "below the existing MODEL's.  A refused model exits 3, MODEL untouched.")
@zero_based_option
@quiet_option
@click.pass_context
def command(ctx, train_file, model_file, solver, C, eps, bias, weights, folds, seed, max_iter,
            liblinear_rng, no_shrinking, threads, zero_based, quiet, **opts):
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
    model_format = opts.pop("model_format", None)
    find_c = opts.pop("find_c", False)
    perf_c = opts.pop("perf_c", None)
    retrain = {k: opts.pop(k) for k in RETRAIN_OPTIONS}
    if model_file is None and folds is None and not find_c:
        if train_file == "-":
            raise InputError("MODEL is needed when TRAIN is - (stdin)")
        model_file = os.path.basename(train_file.rstrip("/")) + ".model"
    # every option is checked before any data is read
    spec, params = _params_of(ctx, solver, C, eps, bias, weights, max_iter, seed, liblinear_rng,
                              no_shrinking, threads, perf_c, model_format,
                              retrain["time_limit"], opts)
    _check_retrain(ctx, spec, retrain, folds, find_c, model_file)
    if folds is not None or find_c:
        from svmtool.params import check_cross_validation

        refuse(check_cross_validation(params, 5 if folds is None else folds))
    if params.time_limit is not None:
        # the budget counts from the start of the command: reading the data spends it too
        params = replace(params, deadline=t_command + params.time_limit)
    job = TrainJob(spec=spec, params=params, train_file=train_file, model_file=model_file,
                   model_format=model_format, zero_based=zero_based,
                   test_file=opts["test_file"], quiet=quiet, started=t_command,
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
    flag = {"init_model": "--init-model", "time_limit": "--time-limit", "wait": "--wait",
            "report_file": "--report", "log_file": "--log", "validate_file": "--validate",
            "min_accuracy": "--min-accuracy", "max_drop": "--max-drop"}
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
    if opts["min_accuracy"] is not None and not 0.0 <= opts["min_accuracy"] <= 100.0:
        raise ParameterError(f"--min-accuracy must be between 0 and 100 (got "
                             f"{opts['min_accuracy']:g})")
    if opts["max_drop"] is not None and not opts["max_drop"] >= 0.0:
        raise ParameterError(f"--max-drop must be >= 0 (got {opts['max_drop']:g})")
    if opts["max_drop"] is not None and model_file == "-":
        raise ParameterError("--max-drop compares with the published MODEL: MODEL cannot be -")
    if opts["wait"] is not None and not opts["wait"] >= 0.0:
        raise ParameterError(f"--wait must be >= 0 seconds (got {opts['wait']:g})")
    if opts["init_model"] is not None and spec.reads("dcsvm") and ctx.params.get("early"):
        raise ParameterError("--init-model cannot start an --early model (it starts -s dcsvm "
                             "without --early)")


def _params_of(ctx, solver, C, eps, bias, weights, max_iter, seed, liblinear_rng, no_shrinking,
               threads, perf_c, model_format, time_limit, opts):
    """(spec, TrainParams) of the command line, every option checked: ParameterError if not."""
    from svmtool.api import check_streaming
    from svmtool.params import BiasRegParams, check_for_solver
    from svmtool.solvers import get_spec

    spec = get_spec(solver)
    _check_groups(ctx, spec)
    _check_model_format(spec, model_format, bool(opts.get("early")))
    kernel = KernelParams(kernel_type=opts["kernel_type"], gamma=opts["gamma"],
                          degree=opts["degree"], coef0=opts["coef0"], cache_mb=opts["cache_mb"])
    dcsvm = DcsvmParams(levels=opts["levels"], k_clusters=opts["k_clusters"],
                        sample=opts["sample_size"], early=bool(opts["early"]),
                        early_level=opts["early_level"], overlap=opts["overlap"],
                        overlap_quantile=opts["overlap_quantile"])
    cp = CuttingPlaneParams(line_search=opts["line_search"],
                            tol_abs=_CP.tol_abs if opts["abs_gap"] is None else opts["abs_gap"],
                            mu0_guard=not opts["no_mu0_guard"], loss=opts["perf_loss"],
                            k_fraction=opts["k_fraction"], perf_eps=opts["perf_eps"])
    params = TrainParams(solver=spec.name, C=C, eps=eps,
                         bias=spec.default_bias if bias is None else bias,
                         weights=tuple(weights), max_iter=max_iter, seed=seed,
                         liblinear_rng=liblinear_rng, shrinking=not no_shrinking,
                         threads=threads, perf_c=perf_c, time_limit=time_limit,
                         kernel=kernel, dcsvm=dcsvm, cp=cp, svr=SvrParams(p=opts["svr_p"]),
                         oneclass=OneClassParams(nu=opts["nu"]),
                         bias_reg=BiasRegParams(regularize=not opts["no_reg_bias"]),
                         out_of_core=opts["out_of_core"], memory_budget=opts["memory_budget"],
                         dask=opts["dask"])
    refuse(params.check())
    check_streaming(spec, params)
    refuse(check_for_solver(params, spec))
    return spec, params


def _check_groups(ctx, spec):
    """Refuse an option of a group the solver does not read (its registry entry's options)."""
    for group, flags in OPTION_GROUPS.items():
        given = [f for f in flags if _given(ctx, _PARAM_OF[f])]
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



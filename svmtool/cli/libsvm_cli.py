"""``svmtool svm-train``, ``svm-predict`` and ``svm-scale``: LIBSVM's three programs, their exact
argument vectors and the lines they print, so that a script switches by putting ``svmtool ``
in front of the program's name.

svm-train: ``svm-train [options] training_set_file [model_file]`` with LIBSVM's options (-s
svm_type, -t kernel_type, -d degree, -g gamma, -r coef0, -c cost, -n nu, -p epsilon of the SVR
loss, -m cache size in MB, -e tolerance, -h shrinking, -b probability estimates, -wi weight, -v
n-fold cross validation, -q quiet), each mapped onto the field of svmtool's option declaration
it sets (``TRAIN_OPTIONS``) and defaulting as LIBSVM's (``svmtool svm-train --help``).

The model goes to ``model_file`` (default: the training file's name with ``.model``, in the
current folder).  What LIBSVM prints (without its progress dots) goes to standard output, as
LIBSVM's does: ``optimization finished, #iter = N``, ``nu = ...`` / ``C = ...`` /
``epsilon = ...``, ``obj = ..., rho = ...``, ``nSV = ..., nBSV = ...``, ``Total nSV = ...``;
``-v n`` prints ``Cross Validation Accuracy = x%`` (or the mean squared error and squared
correlation coefficient of regression) and writes no model.

svm-predict: ``svm-predict [-b 0|1] [-q] test_file model_file output_file``: one prediction a
line (``%.17g``; with ``-b 1`` a ``labels ...`` header, then the label and each class's
probability), then ``Accuracy = x% (a/b) (classification)`` or ``Mean squared error = ...
(regression)`` and ``Squared correlation coefficient = ... (regression)``.

svm-scale: ``svm-scale [-l lower] [-u upper] [-y y_lower y_upper] [-s save_file] [-r
restore_file] data_file``: the scaled data on standard output (:mod:`svmtool.io.scale`, svm-scale's
semantics).

As the rest of svmtool: errors are one line and exit status 2 (a bad option names it; bad data
names file and line), outputs are written atomically (``-`` is standard output), ``-q`` (also
``svmtool -q``) silences everything but the results.
"""

import os
import sys

import click

from svmtool.cli.common import is_quiet, note_quiet, scan_options, show_progress, warn
from svmtool.errors import ParameterError

RAW = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


def _usage(prog):
    raise ParameterError(f"usage: svmtool {prog} {USAGES[prog]} (see LIBSVM's README)")


USAGES = {
    "svm-train": "[options] training_set_file [model_file]",
    "svm-predict": "[-b 0|1] [-q] test_file model_file output_file",
    "svm-scale": "[-l lower] [-u upper] [-y y_lower y_upper] [-s save_filename] "
                 "[-r restore_filename] filename",
}


def _number(opt, text, conv=float):
    try:
        return conv(text)
    except (TypeError, ValueError):
        raise ParameterError(f"{opt} needs a number (got {text!r})") from None


def _int(opt, text):
    v = _number(opt, text, float)
    if v != int(v):
        raise ParameterError(f"{opt} needs an integer (got {text!r})")
    return int(v)


# ------------------------------------------------------------------------------------------------
# svm-train

def _scan(args, prog, with_value, flags=(), arity=None, prefixed=(), has="", counted=False):
    """LIBSVM's argument loop on svmtool's scan (svmtool.cli.common.scan_options): LIBSVM's
    messages (``counted``: "needs k value(s)"), no ``--``."""
    return scan_options(
        list(args), with_value, (), prog, (), flags=flags, arity=arity, prefixed=prefixed,
        end_marker=None, unknown=lambda a: f"unknown option: {a} ({prog} {has})",
        missing=lambda a, k: (f"option {a} needs {k} value(s)" if counted
                              else f"option {a} needs a value"))


# svm-train's options: flag -> (its settings key, the field of svmtool's option declaration it
# sets, its type).  LIBSVM's defaults are svmtool's (svmtool.params.OPTIONS), but for -s (0,
# C-SVC), -e (the registry's c_svc tolerance) and -g (0: 1/num_features, svmtool's None).
TRAIN_OPTIONS = {
    "-s": ("svm_type", "", int), "-t": ("kernel_type", "kernel.kernel_type", int),
    "-d": ("degree", "kernel.degree", int), "-g": ("gamma", "kernel.gamma", float),
    "-r": ("coef0", "kernel.coef0", float), "-n": ("nu", "oneclass.nu", float),
    "-m": ("cache", "kernel.cache_mb", float), "-c": ("C", "C", float),
    "-e": ("eps", "eps", float), "-p": ("p", "svr.p", float),
    "-h": ("shrinking", "shrinking", int), "-b": ("probability", "libsvm.probability", int),
}


def train_defaults():
    """svm-train's settings before its options are read (LIBSVM's defaults)."""
    from svmtool.params import option
    from svmtool.solvers import default_eps

    s = {key: typ(option(path).default) for key, path, typ in TRAIN_OPTIONS.values()
         if path and option(path).default is not None}
    s.update(svm_type=0, gamma=0.0, eps=default_eps("c_svc"), weights=[], quiet=False,
             folds=None, weight_file=None)
    return s


def parse_train_args(args):
    """LIBSVM svm-train's argument vector -> (settings dict, data file, model file)."""
    s = train_defaults()
    opts, rest = _scan(args, "svm-train", tuple(TRAIN_OPTIONS) + ("-v", "-W"),
                       flags=("-q",), prefixed=("-w",), has="has no such option")
    for opt, val in opts:
        if opt == "-q":
            s["quiet"] = True
        elif opt in TRAIN_OPTIONS:
            key, _, typ = TRAIN_OPTIONS[opt]
            s[key] = _int(opt, val) if typ is int else _number(opt, val)
        elif opt == "-W":                               # LIBSVM-weights' weight file
            s["weight_file"] = val
        elif opt == "-v":
            n = _int(opt, val)
            if n < 2:
                raise ParameterError("n-fold cross validation: n must >= 2")
            s["folds"] = n
        else:                                           # -wLABEL weight
            s["weights"].append((_int(opt, opt[2:]), _number(opt, val)))
    if len(rest) not in (1, 2):
        _usage("svm-train")
    data = rest[0]
    if len(rest) == 2:
        model = rest[1]
    else:
        model = os.path.basename(data.rstrip("/")) + ".model"
    return s, data, model


def check_train_settings(s):
    """LIBSVM's svm_check_parameter, as one line naming the option."""
    if s["svm_type"] not in range(5):
        raise ParameterError("-s: unknown svm type (0 to 4)")
    if s["kernel_type"] not in range(5):
        raise ParameterError("-t: unknown kernel type (0 to 4)")
    if s["gamma"] < 0:
        raise ParameterError("-g: gamma < 0")
    if s["degree"] < 0:
        raise ParameterError("-d: degree of polynomial kernel < 0")
    if s["cache"] <= 0:
        raise ParameterError("-m: cache_size <= 0")
    if s["eps"] <= 0:
        raise ParameterError("-e: eps <= 0")
    if s["svm_type"] in (0, 3, 4) and s["C"] <= 0:
        raise ParameterError("-c: C <= 0")
    if s["svm_type"] in (1, 2, 4) and not 0 < s["nu"] <= 1:
        raise ParameterError("-n: nu <= 0 or nu > 1")
    if s["svm_type"] == 3 and s["p"] < 0:
        raise ParameterError("-p: p < 0")
    if s["shrinking"] not in (0, 1):
        raise ParameterError("-h: shrinking != 0 and shrinking != 1")
    if s["probability"] not in (0, 1):
        raise ParameterError("-b: probability != 0 and probability != 1")


def train_params(s, n_features=None):
    """TrainParams of svm-train's settings ``s``: each option onto its declared field."""
    from svmtool.params import option, params_from
    from svmtool.solvers import libsvm_spec

    values = {path: option(path).type(s[key]) if option(path).type in (int, float)
              else bool(s[key]) for key, path, _ in TRAIN_OPTIONS.values() if path}
    values["solver"] = libsvm_spec(s["svm_type"]).name
    values["kernel.gamma"] = s["gamma"] if s["gamma"] > 0 else None
    values["weights"] = (tuple((float(k), float(v)) for k, v in s["weights"])
                         if s["svm_type"] == 0 else ())
    return params_from(values)


def run_train(ctx, args):
    s, data, model_path = parse_train_args(args)
    check_train_settings(s)
    if s["quiet"]:
        note_quiet(ctx, None, True)       # -q silences svmtool's warnings too
    quiet = s["quiet"] or is_quiet(ctx)
    from svmtool import _startup

    _startup.timed_import("numpy")
    from svmtool import api
    from svmtool.io.svmlight import load_data
    from svmtool.solvers import get_spec
    from svmtool.solvers.kernel.libsvm_train import cross_validation

    params = train_params(s)
    from svmtool.io.weights import attach_weights
    from svmtool.problem import refuse_weights

    prob = attach_weights(load_data(data, zero_based=s["kernel_type"] == 4), s["weight_file"])
    spec = get_spec(params.solver)
    api.check_labels(prob, spec)
    if not spec.instance_weights:
        refuse_weights(prob, f"solver {spec.name}")
    say = (lambda line: None) if quiet else click.echo
    if s["folds"] is not None:
        lines = []
        target = cross_validation(prob, params, spec, s["folds"], lines)
        for line in lines:
            say(line)
        for line in cv_lines(prob.y, target, spec.task == "regression"):
            click.echo(line)    # LIBSVM prints these with printf, -q or not
        return
    bar = None
    callback = None
    if show_progress(ctx, quiet):
        # a bar of SMO iterations on a terminal's stderr (LIBSVM prints dots)
        from tqdm import tqdm

        bar = tqdm(unit=" iter", desc="svm-train", file=sys.stderr, leave=False)
        seen = {}

        def callback(pair, iterations, info):
            bar.update(iterations - seen.get(pair, 0))
            seen[pair] = iterations
    try:
        model = api.train(prob, params, callback=callback)
    finally:
        if bar is not None:
            bar.close()
    for line in model.report.get("libsvm_lines", []):
        say(line)
    for r in model.report.get("classes", []):
        if r.get("notice"):
            warn(r["notice"])
        if not r.get("converged", True):
            warn(r.get("warning") or "reaching max number of iterations")
    api.save_model(model, model_path)


def cv_lines(y, target, regression):
    import numpy as np

    y = np.asarray(y, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64)
    if regression:
        n = len(y)
        mse = float(np.sum((t - y) ** 2)) / n
        scc = _scc(t, y)
        return [f"Cross Validation Mean squared error = {mse:g}",
                f"Cross Validation Squared correlation coefficient = {scc:g}"]
    return [f"Cross Validation Accuracy = {100.0 * float(np.mean(t == y)):g}%"]


def _scc(pred, y):
    n = len(y)
    sp, st = float(pred.sum()), float(y.sum())
    spp, stt, spt = float(pred @ pred), float(y @ y), float(pred @ y)
    num = (n * spt - sp * st) ** 2
    den = (n * spp - sp * sp) * (n * stt - st * st)
    return num / den if den != 0 else float("nan")


# ------------------------------------------------------------------------------------------------
# svm-predict

def parse_predict_args(args):
    s = {"probability": 0, "quiet": False}
    opts, rest = _scan(args, "svm-predict", ("-b",), flags=("-q",), has="has -b and -q")
    for opt, val in opts:
        if opt == "-q":
            s["quiet"] = True
            continue
        s["probability"] = _int(opt, val)
        if s["probability"] not in (0, 1):
            raise ParameterError("-b: probability must be 0 or 1")
    if len(rest) != 3:
        _usage("svm-predict")
    return s, rest[0], rest[1], rest[2]


def run_predict(ctx, args):
    s, test_path, model_path, out_path = parse_predict_args(args)
    if s["quiet"]:
        note_quiet(ctx, None, True)
    quiet = s["quiet"] or is_quiet(ctx)
    import numpy as np

    from svmtool import api
    from svmtool.io.output import open_output
    from svmtool.io.svmlight import load_data
    from svmtool.models.kernel import KernelModel

    model = api.load_model(model_path)
    if not isinstance(model, KernelModel):
        raise ParameterError(f"{model_path}: not a LIBSVM model (svm-predict reads LIBSVM "
                             f"models; use svmtool predict for the others)")
    say = (lambda line: None) if quiet else click.echo
    prob_on = s["probability"] == 1
    if prob_on and not model.has_probability_model():
        raise ParameterError(f"{model_path}: model does not support probability estimates "
                             f"(train with -b 1)")
    if not prob_on and model.has_probability_model():
        say("Model supports probability estimates, but disabled in prediction.")
    test = load_data(test_path, zero_based=model.kernel.ktype == 4)
    scores = model.decision_function(test)
    lines = []
    if prob_on and model.is_regression():
        say("Prob. model for test data: target value = predicted value + z,")
        say("z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma=%g" % float(model.probA[0]))
    if prob_on and not model.is_regression():
        probs, pred = model.predict_with_probability(scores)
        if model.is_oneclass():
            lines.append("label normal outlier")
        else:
            lines.append("labels " + " ".join("%d" % v for v in model.class_labels))
        for t in range(len(pred)):
            lines.append("%g " % pred[t] + " ".join("%g" % v for v in probs[t]))
    else:
        pred = model.predict(scores)
        lines.extend("%.17g" % v for v in pred)
    with open_output(out_path) as f:
        f.write("\n".join(lines) + ("\n" if lines else ""))
    y = np.asarray(test.y, dtype=np.float64)
    pred = np.asarray(pred, dtype=np.float64)
    n = len(y)
    if model.is_regression():
        mse = float(np.sum((pred - y) ** 2)) / n if n else float("nan")
        say("Mean squared error = %g (regression)" % mse)
        say("Squared correlation coefficient = %g (regression)" % _scc(pred, y))
    else:
        correct = int(np.sum(pred == y))
        acc = 100.0 * correct / n if n else float("nan")
        say("Accuracy = %g%% (%d/%d) (classification)" % (acc, correct, n))


# ------------------------------------------------------------------------------------------------
# svm-scale

def parse_scale_args(args):
    s = {"lower": -1.0, "upper": 1.0, "y": None, "save": None, "restore": None}
    opts, rest = _scan(args, "svm-scale", ("-l", "-u", "-y", "-s", "-r"), arity={"-y": 2},
                       has="has -l -u -y -s -r", counted=True)
    for opt, val in opts:
        if opt == "-l":
            s["lower"] = _number(opt, val)
        elif opt == "-u":
            s["upper"] = _number(opt, val)
        elif opt == "-y":
            s["y"] = (_number(opt, val[0]), _number(opt, val[1]))
        elif opt == "-s":
            s["save"] = val
        else:
            s["restore"] = val
    if len(rest) != 1:
        _usage("svm-scale")
    if not s["upper"] > s["lower"] or (s["y"] is not None and not s["y"][1] > s["y"][0]):
        raise ParameterError("inconsistent lower/upper specification (-l/-u or -y)")
    if s["save"] and s["restore"]:
        raise ParameterError("cannot use -r and -s simultaneously")
    return s, rest[0]


def run_scale(ctx, args):
    s, data = parse_scale_args(args)
    from svmtool.io.output import open_output
    from svmtool.io.scale import (compute_ranges, iter_svm_scale_text, restore_ranges, save_ranges,
                                  scale)
    from svmtool.io.svmlight import load_data

    prob = load_data(data)
    if s["restore"]:
        ranges = restore_ranges(s["restore"])
    else:
        ranges = compute_ranges(prob, s["lower"], s["upper"], y_range=s["y"])
    out = scale(prob, ranges, warn=warn)
    if s["save"]:
        save_ranges(ranges, s["save"])
    with open_output("-", "wb") as f:
        for chunk in iter_svm_scale_text(out):
            f.write(chunk)


TRAIN_HELP = """\b
-s svm_type: 0 C-SVC, 1 nu-SVC, 2 one-class SVM, 3 epsilon-SVR, 4 nu-SVR ({svm_type})
-t kernel_type: 0 linear, 1 polynomial, 2 rbf, 3 sigmoid, 4 precomputed ({kernel_type})
-d degree ({degree})   -g gamma (1/num_features)   -r coef0 ({coef0:g})
-c cost ({C:g})     -n nu ({nu:g})                 -p epsilon of the SVR loss ({p:g})
-m cache size in MB ({cache:g})   -e tolerance ({eps:g})   -h shrinking 0|1 ({shrinking})
-b probability estimates 0|1 ({probability})   -wi weight (C of class i: weight * C)
-v n: n-fold cross validation   -q: quiet
-W weight_file: instance weights, one a line (LIBSVM-weights: row i's C is C * w_class * W_i;
rows of weight 0 take no part)"""

OPTION_HELP = {
    "svm-train": TRAIN_HELP,
    "svm-predict": """\b
-b 0|1: probability estimates (0)   -q: quiet""",
    "svm-scale": """\b
-l lower (-1)  -u upper (1)  -y y_lower y_upper (no y scaling)
-s save_filename: save the ranges   -r restore_filename: scale with saved ranges
The scaled data goes to standard output.""",
}


def _help(prog):
    """A program's option help; svm-train's defaults filled in from train_defaults()."""
    return TRAIN_HELP.format(**train_defaults()) if prog == "svm-train" else OPTION_HELP[prog]


def make_command(prog, runner):
    @click.command(prog, context_settings=RAW, add_help_option=False,
                   help=f"LIBSVM's {prog}, its options unchanged: svmtool {prog} "
                        f"{USAGES[prog]}.\n\n{_help(prog)}")
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    @click.pass_context
    def command(ctx, args):
        if list(args) == ["--help"]:
            click.echo(ctx.get_help())
            return
        runner(ctx, args)

    return command

"""``svmtool svm_learn`` / ``svmtool svm_classify``: SVMlight 6.02's command lines on svmtool's
solvers (:mod:`svmtool.solvers.kernel.svmlight_train`).

The argument vectors are SVMlight's: options first (each ``-X VALUE``), then the files
(``svm_learn [options] example_file [model_file]``, model_file defaulting to ``svm_model``;
``svm_classify [options] example_file model_file [output_file]``, output_file defaulting to
``svm_predictions``).  ``-`` stands for standard input / output, as everywhere in svmtool.

svm_learn's options and what they become:

* ``-z c|r|p`` classification (C-SVC; ``-b 0``: the bias-free dual), regression (epsilon-SVR,
  ``-w`` its tube), preference ranking over qid groups (linear kernel only: svmtool has no
  kernel ranking solver); ``-z o`` / ``-z s`` (SVMlight's own inequalities) are refused;
* ``-c`` C (default SVMlight's ``1/avg(|x|)^2``), ``-j`` C of the positives as ``C j``, ``-b
  0|1`` threshold, ``-e`` tolerance of the solver's stopping rule, ``-m`` kernel cache (MB),
  ``-t 0..3 -d -g -s -r`` the kernel (``-t 4``, SVMlight's compiled-in kernel, is refused), ``-u``
  is written to the model's header;
* ``-v N`` verbosity (0: no lines; 2: also the class counts and the objectives), ``-o rho`` of
  the xi-alpha estimates (printed after every classification run, as SVMlight does), ``-k 0``
  (depth 0, the only one here);
* ``-x 1`` (classification): leave-one-out by retraining where the xi-alpha bound cannot
  decide, SVMlight's pruning (:func:`svmtool.solvers.kernel.svmlight_train.leave_one_out`);
* ``-k`` > 0, ``-i -f -q -n -h -# -y -a -l -p``:
  no counterpart here, refused with one line naming the option (exit 2), where SVMlight would
  print its help and exit 0.

The printed lines are SVMlight's, with svmtool's numbers: the iteration count is the SMO's
(pairs of variables) rather than SVMlight's working-set iterations, maxdiff is the largest KKT
violation svmtool's solver measures, and SVMlight's count of kernel evaluations is not
printed.  They go to stdout, to stderr when the model goes to stdout (``-``); ``svmtool -q`` or
``-v 0`` silences them.  A progress bar on a terminal.  Errors: one line, exit 2.

svm_classify writes one decision value per line (``%.8g``, ``-f 0``: SVMlight's old
``v:+1 -v:-1`` format) and, when every test label is +1 or -1, SVMlight's accuracy and
precision / recall lines; when the labels are not all +1 / -1 (a regression model, real
targets) svmtool adds the mean squared error and the squared correlation of the decision values
(SVMlight prints nothing then).
"""

import sys
import time

import click

from svmtool.cli.common import (ChunkScores, ReportLines, classify_files, option_number,
                                raw_command, scan_options, show_progress, warn)
from svmtool.errors import InputError, ParameterError

# svm_learn's options without a counterpart, and what they are in SVMlight
NO_COUNTERPART = {
    "-i": "removing inconsistent training examples and retraining",
    "-f": "skipping the final optimality check of shrunk variables",
    "-q": "SVMlight's QP subproblem size (svmtool's quiet mode is 'svmtool -q svm_learn' or -v 0)",
    "-n": "the number of new variables entering SVMlight's working set",
    "-h": "SVMlight's shrinking iterations",
    "-#": "SVMlight's limit of iterations without progress",
    "-y": "restarting from the alphas of a file",
    "-a": "writing the alphas to a file",
    "-l": "the predictions of transductive learning",
    "-p": "the positive fraction of transductive learning",
}

LEARN_HELP = """\
usage: svmtool svm_learn [options] example_file [model_file]

SVMlight 6.02's svm_learn on svmtool's solvers; model_file defaults to svm_model.

  -z {{c,r,p}}  classification (default), regression, preference ranking (linear kernel)
  -c float    C (default [avg. |x|]^-2, SVMlight's)
  -w float    epsilon: width of the regression tube (default {tube:g})
  -j float    cost factor: C of the positive examples is C*j (default {cost_ratio:g})
  -b [0,1]    threshold b in the model (default {biased:d}); 0: the hyperplane through the origin
  -e float    tolerance of the stopping rule (default {eps:g})
  -m int      kernel cache in MB (default {cache_mb:g})
  -t int      kernel: 0 linear (default), 1 polynomial (s a*b+c)^d, 2 rbf exp(-gamma |a-b|^2),
              3 sigmoid tanh(s a*b + c)
  -d int      d of the polynomial kernel (default {degree})
  -g float    gamma of the rbf kernel (default {gamma:g})
  -s float    s of the polynomial / sigmoid kernel (default {coef_lin:g})
  -r float    c of the polynomial / sigmoid kernel (default {coef_const:g})
  -u string   written to the model's header (SVMlight's user-defined kernel parameter)
  -o float    rho of the xi-alpha estimates (default {xa_rho}); -k 0 their depth (the only one)
  -x [0,1]    1: leave-one-out estimates (classification), retraining where the xi-alpha
              bound cannot decide (default {loo:d})
  -v [0..3]   verbosity (default {verbosity})
  -?, --help  this help

Options of SVMlight without a counterpart here are refused (exit 2): -i -f -q -n -h -# -y -a
-l -p, -k > 0, -t 4, -z o, -z s.
"""
VERBOSITY = 1           # svm_learn's -v


def learn_help():
    """svm_learn --help, its defaults LightParams' (and VERBOSITY)."""
    from dataclasses import asdict

    from svmtool.solvers.kernel.svmlight_train import LightParams

    return LEARN_HELP.format(verbosity=VERBOSITY, **asdict(LightParams()))


CLASSIFY_HELP = """\
usage: svmtool svm_classify [options] example_file model_file [output_file]

SVMlight 6.02's svm_classify: one decision value per line to output_file (default
svm_predictions; - for stdout), then the accuracy and precision/recall on the test set.
The model: SVMlight's or SVMperf's, or any svmtool model with one decision function.

  -v [0..3]   verbosity (default 2)
  -f [0,1]    0: old output format of V1.0; 1: the decision value (default)
  -h, --help  this help
"""


def _refuse(message):
    raise ParameterError(f"svm_learn: {message}")


def _number(kind, ok=None, message=""):
    """A converter of a number option, refusing values where ``ok`` fails with ``message``."""
    def convert(opt, val):
        v = option_number(opt, val, kind)
        if ok is not None and not ok(v):
            _refuse(message)
        return v
    return convert


def _zero_one(opt, val):
    v = option_number(opt, val, int)
    if v not in (0, 1):
        _refuse(f"{opt} must be 0 or 1 (got {val})")
    return v == 1


def _task(opt, val):
    if val in ("o", "s"):
        _refuse(f"-z {val} (SVMlight's optimization of given inequalities) has no counterpart "
                f"in svmtool")
    if val not in ("c", "r", "p"):
        _refuse(f"unknown type '{val}': valid types are 'c' (classification), 'r' (regression) "
                f"and 'p' (preference ranking)")
    return val


def _kernel_type(opt, val):
    t = option_number(opt, val, int)
    if t == 4:
        _refuse("-t 4 (SVMlight's user-defined kernel, compiled from kernel.h) has no "
                "counterpart in svmtool")
    if t not in (0, 1, 2, 3):
        _refuse(f"-t {val}: unknown kernel type (0 linear, 1 polynomial, 2 rbf, 3 sigmoid)")
    return t


def _custom(opt, val):
    if "#" in val or "\n" in val or not val.strip():
        _refuse("-u needs a word without '#' (it is written to the model's header)")
    return val


def _depth(opt, val):
    if option_number(opt, val, int) != 0:
        _refuse(f"option -k {val} (the search depth of SVMlight's extended xi-alpha estimator) "
                f"has no counterpart in svmtool; only depth 0")
    return 0


# svm_learn's options: flag -> (the LightParams field it sets, "verbosity" or "": none; its
# converter and check)
LEARN = {
    "-z": ("task", _task),
    "-v": ("verbosity", _number(int)),
    "-b": ("biased", _zero_one),
    "-c": ("C", _number(float, lambda v: v >= 0, "the C parameter must be greater than zero")),
    "-w": ("tube", _number(float, lambda v: v >= 0,
                           "-w (the width of the tube) must be >= 0")),
    "-j": ("cost_ratio", _number(float, lambda v: v > 0,
                                 "the COSTRATIO parameter (-j) must be greater than zero")),
    "-e": ("eps", _number(float, lambda v: v > 0,
                          "the epsilon parameter (-e) must be greater than zero")),
    "-m": ("cache_mb", lambda opt, val: float(_number(
        int, lambda v: v >= 1, "-m (the kernel cache in MB) must be at least 1")(opt, val))),
    "-t": ("kernel_type", _kernel_type),
    "-d": ("degree", _number(int)),
    "-g": ("gamma", _number(float)),
    "-s": ("coef_lin", _number(float)),
    "-r": ("coef_const", _number(float)),
    "-u": ("custom", _custom),
    "-x": ("loo", _zero_one),
    "-o": ("xa_rho", _number(float, lambda v: v >= 0, "the parameter rho of the xi-alpha "
                             "estimates (-o) must be greater than zero")),
    "-k": ("", _depth),
}
LEARN_OPTIONS = tuple(LEARN)


def learn_settings(argv):
    """Everything svm_learn's command line says, checked before any data is read."""
    from svmtool.solvers.kernel.svmlight_train import LightParams

    opts, files = scan_options(argv, LEARN_OPTIONS, NO_COUNTERPART, "svm_learn", ("-?", "--help"))
    if opts is None:
        return None
    kw = {"verbosity": VERBOSITY}
    for opt, val in opts:
        if opt in NO_COUNTERPART:
            _refuse(f"option {opt} ({NO_COUNTERPART[opt]}) has no counterpart in svmtool")
        name, convert = LEARN[opt]
        value = convert(opt, val)
        if name:
            kw[name] = value
    verbosity = kw.pop("verbosity")
    lp = LightParams(**kw)
    if lp.loo and lp.task != "c":
        _refuse(f"-x 1 with -z {lp.task}: svmtool computes leave-one-out estimates for "
                f"classification only (-z c), as SVMlight does")
    if lp.kernel_type == 1 and not 0 <= lp.degree < 2**31:
        _refuse(f"-d {lp.degree}: the polynomial degree must be from 0 to 2^31-1")
    if not files:
        _refuse("not enough input parameters: example_file is missing")
    if len(files) > 2:
        _refuse(f"unexpected argument {files[2]!r} after example_file and model_file")
    return {"params": lp, "verbosity": verbosity, "train": files[0],
            "model": files[1] if len(files) > 1 else "svm_model"}


def _counted(n):
    """SVMlight's running count while reading: 100..200.. (every hundredth example)."""
    return "".join(f"{k}.." for k in range(100, n + 1, 100))


@raw_command("svm_learn")
def learn_command(ctx, argv):
    """SVMlight's svm_learn command line (svmtool svm_learn --help)."""
    s = learn_settings(list(argv))
    if s is None:
        click.echo(learn_help(), nl=False)
        return
    from svmtool.io.lock import locked
    from svmtool.io.output import open_output
    from svmtool.io.svmlight import load_data
    from svmtool.io.svmlight_model import svmlight_text
    from svmtool.solvers.kernel import svmlight_train

    lp = s["params"]
    say = ReportLines(ctx, s["verbosity"], to_stderr=s["model"] == "-")
    with locked(s["model"], 0.0):
        prob = load_data(s["train"], progress=show_progress(ctx))
        svmlight_train.refuse_cost(prob, lp)
        say("Scanning examples...done")
        say(f"Reading examples into memory...{_counted(prob.n_rows)}OK. ({prob.n_rows} examples "
            f"read)")
        if prob.n_rows == 0:
            raise InputError(f"{s['train']}: no training examples")
        callback, bar = _progress(ctx)
        t0 = time.process_time()
        try:
            res = svmlight_train.train(prob, lp, callback=callback)
        finally:
            if bar is not None:
                bar.close()
        cpu = time.process_time() - t0
        st = res.stats
        if lp.task == "p":
            say(f"Constructing {st['pairs']} rank constraints...done.")
        if not res.C_given:
            say("Setting default regularization parameter C=%.4f" % res.C)
        if lp.task == "c":
            say(f"{st['positives']} positive, {st['negatives']} negative, and 0 unlabeled "
                f"examples.", 2)
        say(f"Optimizing...done. ({st['iterations']} iterations)")
        if not st["converged"]:
            warn(f"svm_learn stopped ({st['stopped'] or 'iteration limit'}) before the stopping "
                 f"rule was met; the model is the current point")
        if lp.task == "c":
            say("Optimization finished (%d misclassified, maxdiff=%.5f)."
                % (st["misclassified"], st["maxdiff"]))
        else:
            say("Optimization finished (maxdiff=%.5f)." % st["maxdiff"])
        say("Runtime in cpu-seconds: %.2f" % cpu)
        if lp.task != "p":
            say(f"Number of SV: {st['n_sv']} (including {st['n_bsv']} at upper bound)")
        say("L1 loss: loss=%.5f" % st["loss"])
        say("Norm of weight vector: |w|=%.5f" % st["norm_w"])
        say("Norm of longest example vector: |x|=%.5f" % st["longest"])
        if lp.task == "c":
            say("Estimated VCdim of classifier: VCdim<=%.5f" % st["vcdim"])
            say("Computing XiAlpha-estimates...done")
            say("Runtime for XiAlpha-estimates in cpu-seconds: 0.00")
            for what, sign, key in (("error", "error<=", "xa_error"),
                                    ("recall", "recall=>", "xa_recall"),
                                    ("precision", "precision=>", "xa_precision")):
                say("XiAlpha-estimate of the %s: %s%.2f%% (rho=%.2f,depth=0)"
                    % (what, sign, st[key], lp.xa_rho))
        if lp.loo:
            loo = st["loo"]
            say("Computing leave-one-out" + loo["marks"])
            say("Leave-one-out estimate of the error: error=%.2f%%" % loo["error"])
            say("Leave-one-out estimate of the recall: recall=%.2f%%" % loo["recall"])
            say("Leave-one-out estimate of the precision: precision=%.2f%%" % loo["precision"])
            say("Actual leave-one-outs computed:  %d (rho=%.2f)" % (loo["computed"], lp.xa_rho))
            say("Runtime for leave-one-out in cpu-seconds: %.2f" % loo["cpu"])
        say("Objective (svmtool): primal=%.10g, dual=%.10g" % (st["primal"], st["dual"]), 2)
        text = svmlight_text(res.model, res.model.report["n_train"], fmt="svmlight")
        with open_output(s["model"]) as f:
            f.write(text)
        say("Writing model file...done")


def _progress(ctx):
    """A tqdm bar of solver iterations on a terminal (not with -q)."""
    if not show_progress(ctx):
        return None, None
    from tqdm import tqdm

    bar = tqdm(desc="training (svm_learn)", unit=" iter", file=sys.stderr, leave=False)
    state = {"last": 0}

    def callback(it, info=None):
        it = int(it)
        bar.update(max(0, it - state["last"]))
        state["last"] = it

    return callback, bar


@raw_command("svm_classify")
def classify_command(ctx, argv):
    """SVMlight's svm_classify command line (svmtool svm_classify --help)."""
    opts, files = scan_options(list(argv), ("-v", "-f"), NO_COUNTERPART, "svm_classify",
                               ("-h", "--help"))
    if opts is None:
        click.echo(CLASSIFY_HELP, nl=False)
        return
    verbosity, pred_format = 2, 1
    for opt, val in opts:
        if opt not in ("-v", "-f"):
            raise ParameterError(f"svm_classify: unrecognized option {opt}")
        v = option_number(opt, val, int)
        if opt == "-v":
            verbosity = v
        else:
            if v not in (0, 1):
                raise ParameterError("svm_classify: output format (-f) can only take the values "
                                     "0 or 1")
            pred_format = v
    test, model_file, out_path = classify_files("svm_classify", files)

    import numpy as np

    from svmtool.io.model_io import load_model
    from svmtool.io.output import open_output

    say = ReportLines(ctx, verbosity, to_stderr=out_path == "-")
    model = load_model(model_file)
    sign = _sign_of(model, model_file)
    n_sv = model.total_sv if hasattr(model, "total_sv") else 1
    say(f"Reading model...OK. ({n_sv} support vectors read)")
    scores = ChunkScores(model, test, sign)
    total = 0
    with open_output(out_path) as out:
        for d in scores:
            total += len(d)
            if not len(d):
                continue
            if pred_format == 1:
                out.write("".join("%.8g\n" % v for v in d.tolist()))
            else:
                out.write("".join("%.8g:+1 %.8g:-1\n" % (v, -v) if v > 0 else
                                  "%.8g:-1 %.8g:+1\n" % (-v, v) for v in d.tolist()))
    y, d = scores.y, scores.values
    say(f"Classifying test examples..{_counted(total)}done", 2)
    say("Runtime (without IO) in cpu-seconds: %.2f" % scores.runtime, 2)
    if total == 0:
        return
    binary = bool(np.all(np.floor(0.01 + y * y) == 1))
    if binary:
        pos = d > 0
        correct = int(np.count_nonzero(pos & (y > 0)) + np.count_nonzero(~pos & (y < 0)))
        a = int(np.count_nonzero(pos & (y > 0)))
        b = int(np.count_nonzero(pos & (y <= 0)))
        c = int(np.count_nonzero(~pos & (y > 0)))
        say("Accuracy on test set: %.2f%% (%d correct, %d incorrect, %d total)"
            % (correct * 100.0 / total, correct, total - correct, total))
        say("Precision/recall on test set: %s%%/%s%%" % (_pct(a, a + b), _pct(a, a + c)))
    elif not np.any(y == 0):
        from svmtool.ops.metrics import RegressionSums

        sums = RegressionSums()
        sums.add(y, d)
        say("Mean squared error on test set: %.6g (svmtool; the labels are not all +1/-1)"
            % sums.mse())
        say("Squared correlation coefficient on test set: %.6g" % sums.squared_correlation())


def _pct(num, den):
    return "%.2f" % (num * 100.0 / den) if den else "nan"


def _sign_of(model, name):
    """+1, or -1 when a two-class model's decision value > 0 means the smaller label (SVMlight's
    decision value > 0 means the larger, +1); refuses models with several decision values."""
    if model.nr_w != 1:
        raise InputError(f"{name}: svm_classify needs a model with one decision function (two "
                         f"classes, regression or ranking); this one has {model.nr_w}")
    labels = getattr(model, "labels", None)
    if labels is not None and len(labels) == 2 and not model.is_regression():
        return 1.0 if labels[0] > labels[1] else -1.0
    return 1.0

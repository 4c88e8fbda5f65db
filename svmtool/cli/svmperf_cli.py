"""``svmtool svm_perf_learn`` / ``svmtool svm_perf_classify``: SVMperf 3.00's command lines on
svmtool's 1-slack cutting plane (``-s cp --loss``,
:mod:`svmtool.solvers.cutting_plane.multivariate`).

The argument vectors are SVMperf's: options first (each ``-X VALUE``, SVMperf's own options
``--X VALUE``), then the files.  What they become:

* ``-c C`` (required, as in SVMperf): C in SVMperf's convention, ``C = C_perf * 100 / n``;
* ``-e E`` (default 0.1, percent of the loss): ``--perf-e E`` of ``-s cp``, SVMperf's own
  stopping rule (:mod:`svmtool.solvers.cutting_plane.cutting_plane`), one to one;
* ``-l L`` (default 2): 1 F1, 2 error rate, 3 PRBEP, 4 prec@k, 5 rec@k, 10 ROC area;
  0 (zero/one loss of the whole vector) and 11 (average precision) are refused;
* ``-w A`` (default 9): 0, 1, 2, 3, 4 and 9 all become svmtool's 1-slack cutting plane -- SVMperf
  treats the training set as one structured example, so the n-slack and 1-slack formulations are
  the same problem; only SVMperf's way of solving it differs;
* ``--b B`` (default 1): the bias feature's value (0: none), its weight folded into the
  model's threshold; ``--p F``: k of prec@k / rec@k as a fraction of the positives;
* ``-t 0`` (linear) and the kernel parameters ``-d -g -s -r -u`` (written to the model's header,
  as SVMperf; a linear model ignores them); ``-o 2``, ``-p 1`` (SVMperf's only margin-rescaled,
  L1-slack problem here);
* ``-v N`` SVMperf's verbosity (0: no report lines), ``-y N`` accepted (SVM-light's own);
* every other option (``-t 1..4``, ``-o 1``, ``-p 2``, ``-k -f -b -n -q -m -h -# -a``,
  ``--t --i --k --r --f --s``) has no counterpart: one line naming it, exit 2 (SVMperf would
  print its help and exit 0).

SVMlight's ``cost:`` tokens: SVMperf 3.00 reads its examples with SVMlight's reader, which
parses them, but no part of its learner uses the factor (its structured-output API only copies
it when ``--i`` replaces the feature vectors; the losses, the most violated labelings and the
cutting-plane QP never read it).  So svmtool's ``svm_perf_learn`` ignores them too and says so in
one line on stderr; the model is the unweighted one, as SVMperf's is.

Output: SVMperf's report lines on stdout (``svmtool -q`` or ``-v 0``: none), on stderr when an
output file is ``-`` (stdout); the model in SVMperf's SVM-light V6.20 format, written atomically;
errors as the rest of svmtool (one line, exit 2).  ``svm_perf_classify`` writes one decision value
per line (SVMperf's ``%.8f``) and prints SVMperf's accuracy / precision / recall / F1 / PRBEP /
ROC area / average precision lines.
"""

import sys
import time

import click

from svmtool.cli.common import (ChunkScores, ReportLines, classify_files, option_number,
                                raw_command, scan_options, show_progress, warn)
from svmtool.errors import InputError, ParameterError

LOSSES = {1: "f1", 2: "errorrate", 3: "prbep", 4: "prec@k", 5: "rec@k", 10: "rocarea"}
REFUSED_LOSSES = {0: "the zero/one loss of the whole prediction vector",
                  11: "average precision"}
ALGORITHMS = (0, 1, 2, 3, 4, 9)

# options of svm_perf_learn without a counterpart, and why
NO_COUNTERPART = {
    "-k": "the number of constraints SVMperf's n-slack optimizer accumulates",
    "-f": "the constraint cache of SVMperf's -w 4",
    "-b": "the cache refresh of SVMperf's -w 4",
    "-n": "SVM-light's working-set size",
    "-q": "SVM-light's QP subproblem size (svmtool's quiet mode is 'svmtool -q svm_perf_learn' "
          "or -v 0)",
    "-m": "SVM-light's kernel cache",
    "-h": "SVM-light's shrinking iterations",
    "-#": "SVM-light's iteration limit of its QP subproblems",
    "-a": "the alpha file (svmtool's cutting plane has no per-example alphas)",
    "--t": "sparse kernel approximation",
    "--i": "sparse kernel approximation (CPSP)",
    "--k": "sparse kernel approximation's basis size",
    "--r": "sparse kernel approximation's restarts",
    "--f": "sparse kernel approximation's basis file",
    "--s": "the shrinking heuristic of SVMperf's own error-rate algorithm",
}

LEARN_HELP = """\
usage: svmtool svm_perf_learn [options] example_file [model_file]

SVMperf 3.00's svm_perf_learn on svmtool's 1-slack cutting plane (svmtool train -s cp --loss).
model_file defaults to svm_struct_model.

  -c float    C: trade-off between training error and margin (required)
  -e float    epsilon: tolerance of the termination criterion, in percent of the loss
              (default {eps:g})
  -l [1..]    loss: 1 F1, 2 error rate (default), 3 precision/recall break-even,
              4 prec@k, 5 rec@k, 10 ROC area (swapped pairs)
  -w [0..9]   algorithm: 0, 1, 2, 3, 4 and 9 all solve the same problem here, by the
              1-slack cutting plane (default {alg})
  -o 2        margin rescaling (the only one here); -p 1  L1 slack (the only one here)
  -t 0        linear kernel (the only one here); -d -g -s -r -u are written to the model
  --b float   value of the bias feature, 0 for none (default {bias:g})
  --p float   k of prec@k / rec@k as a fraction of the positives (default {k_fraction:g}: 0.5 / 2)
  -v [0..3]   verbosity (default {verbosity}); -y is accepted and ignored
  --help      this help

NOTE: c_light = c_perf*100/n for the error rate, as in SVMperf.
Options of SVMperf without a counterpart here are refused (exit 2).
"""

CLASSIFY_HELP = """\
usage: svmtool svm_perf_classify [options] example_file model_file [output_file]

SVMperf 3.00's svm_perf_classify: scores example_file with a linear model (SVMperf's or any
two-class linear model svmtool reads) and writes one decision value per line to output_file
(default svm_predictions; - for stdout), then prints SVMperf's evaluation.

  -v [0..3]   verbosity (default 1); -y is accepted and ignored
  --help      this help
"""


# svm_perf_learn's defaults (SVMperf's), the settings and the help both read them
LEARN_DEFAULTS = {"eps": 0.1, "loss": 2, "alg": 9, "bias": 1.0, "k_fraction": 0.0,
                  "verbosity": 1}

# the fields of svmtool's option declarations svm_perf_learn's options set, in its spelling
SPELLING = {"perf_c": "-c", "cp.perf_eps": "-e", "cp.loss": "-l", "cp.k_fraction": "--p",
            "bias": "--b"}


def _spelled(path):
    from svmtool.params import flag_name

    return SPELLING.get(path) or flag_name(path)


LEARN_OPTIONS = ("-c", "-e", "-l", "-w", "-o", "-p", "-t", "-d", "-g", "-s", "-r", "-u", "-v",
                 "-y", "--b", "--p")


def learn_settings(argv):
    """Everything the command line says, checked before any data is read: a dict."""
    opts, files = scan_options(argv, LEARN_OPTIONS, NO_COUNTERPART, "svm_perf_learn",
                               ("--help", "-?"), long_options=True)
    if opts is None:
        return None
    s = dict(LEARN_DEFAULTS, C=None, kernel_header=[3, 1.0, 1.0, 1.0, "empty"])
    for opt, val in opts:
        if opt in NO_COUNTERPART:
            raise ParameterError(f"svm_perf_learn: option {opt} ({NO_COUNTERPART[opt]}) has no "
                                 f"counterpart in svmtool")
        if opt == "-c":
            s["C"] = option_number(opt, val)
        elif opt == "-e":
            s["eps"] = option_number(opt, val)
        elif opt == "-l":
            s["loss"] = option_number(opt, val, int)
        elif opt == "-w":
            s["alg"] = option_number(opt, val, int)
        elif opt == "-o":
            if option_number(opt, val, int) != 2:
                raise ParameterError(f"svm_perf_learn: -o {val}: only margin rescaling (-o 2) "
                                     f"is implemented in svmtool")
        elif opt == "-p":
            if option_number(opt, val, int) != 1:
                raise ParameterError(f"svm_perf_learn: -p {val}: only the L1-norm of the slack "
                                     f"(-p 1) is implemented in svmtool")
        elif opt == "-t":
            if option_number(opt, val, int) != 0:
                raise ParameterError(f"svm_perf_learn: -t {val}: svmtool's svm_perf_learn "
                                     f"trains linear models only (-t 0)")
        elif opt == "-d":
            s["kernel_header"][0] = option_number(opt, val, int)
        elif opt in ("-g", "-s", "-r"):
            s["kernel_header"][{"-g": 1, "-s": 2, "-r": 3}[opt]] = option_number(opt, val)
        elif opt == "-u":
            s["kernel_header"][4] = val
        elif opt == "-v":
            s["verbosity"] = option_number(opt, val, int)
        elif opt == "-y":
            option_number(opt, val, int)
        elif opt == "--b":
            s["bias"] = option_number(opt, val)
        elif opt == "--p":
            s["k_fraction"] = option_number(opt, val)
    if s["C"] is None or not s["C"] > 0 or s["C"] == float("inf"):
        raise ParameterError("svm_perf_learn: you have to specify a value for the parameter "
                             "'-c' (C > 0), as in SVMperf")
    if not s["eps"] > 0 or s["eps"] == float("inf"):
        raise ParameterError(f"svm_perf_learn: -e must be a number > 0 (got {s['eps']:g})")
    if s["alg"] not in ALGORITHMS:
        raise ParameterError(f"svm_perf_learn: -w {s['alg']}: the algorithm must be 0, 1, 2, 3, "
                             f"4 or 9")
    if s["loss"] in REFUSED_LOSSES:
        raise ParameterError(f"svm_perf_learn: -l {s['loss']} ({REFUSED_LOSSES[s['loss']]}) is "
                             f"not implemented in svmtool")
    if s["loss"] not in LOSSES:
        raise ParameterError(f"svm_perf_learn: -l {s['loss']}: unknown loss (1 F1, 2 error "
                             f"rate, 3 PRBEP, 4 prec@k, 5 rec@k, 10 ROC area)")
    if not abs(s["bias"]) < float("inf"):
        raise ParameterError(f"svm_perf_learn: --b must be a finite number (got {s['bias']})")
    if s["k_fraction"] < 0 or s["k_fraction"] == float("inf"):
        raise ParameterError(f"svm_perf_learn: --p must be a finite number >= 0 (got "
                             f"{s['k_fraction']:g})")
    loss = LOSSES[s["loss"]]
    if s["k_fraction"] and loss not in ("prec@k", "rec@k"):
        s["k_fraction"] = 0.0                  # SVMperf reads --p only for prec@k / rec@k
    if not files:
        raise ParameterError("svm_perf_learn: not enough input parameters: example_file is "
                             "missing")
    if len(files) > 2:
        raise ParameterError(f"svm_perf_learn: unexpected argument {files[2]!r} after "
                             f"example_file and model_file")
    s["train"] = files[0]
    s["model"] = files[1] if len(files) > 1 else "svm_struct_model"
    s["loss_name"] = loss
    return s


@raw_command("svm_perf_learn")
def learn_command(ctx, argv):
    """SVMperf's svm_perf_learn command line (svmtool svm_perf_learn --help)."""
    s = learn_settings(list(argv))
    if s is None:
        click.echo(LEARN_HELP.format(**LEARN_DEFAULTS), nl=False)
        return
    from dataclasses import replace

    import numpy as np

    from svmtool import api
    from svmtool.io.lock import locked
    from svmtool.io.svmlight import load_data
    from svmtool.io.svmlight_model import svmlight_text
    from svmtool.io.output import open_output
    from svmtool.params import CuttingPlaneParams, TrainParams, render
    from svmtool.solvers import program_spec

    say = ReportLines(ctx, s["verbosity"], to_stderr=s["model"] == "-")
    loss = s["loss_name"]
    bias = abs(s["bias"]) if s["bias"] != 0 else -1.0
    params = TrainParams(solver=program_spec("svm_perf_learn").name, C=1.0, bias=bias,
                         perf_c=s["C"], cp=CuttingPlaneParams(loss=loss, k_fraction=s["k_fraction"],
                                               perf_eps=s["eps"]))
    msg = params.check()
    if msg:
        raise ParameterError(f"svm_perf_learn: {render(msg, _spelled)}")
    with locked(s["model"], 0.0):
        prob = load_data(s["train"], progress=show_progress(ctx))
        if prob.weights is not None:                # cost: tokens, before any line
            warn(f"{s['train']}: cost: tokens ignored, as SVMperf 3.00 ignores them (its "
                 f"losses are of the whole labeling)")
            prob = replace(prob, weights=None)
        say("Reading training examples...done")       # whole lines: an error comes alone
        if prob.n_rows == 0:
            raise InputError(f"{s['train']}: no training examples")
        y = np.where(prob.y > 0, 1.0, -1.0)
        n_pos = int(np.sum(y > 0))
        if n_pos in (0, prob.n_rows):
            raise InputError(f"{s['train']}: svm_perf_learn needs positive (> 0) and negative "
                             f"labels; every label here is {'positive' if n_pos else 'not'}")
        prob = replace(prob, y=y, label_note=None)
        params = replace(params, C=s["C"] * 100.0 / prob.n_rows)
        say(f"Training set properties: {prob.n_features + (bias > 0)} features, {prob.n_rows} "
            f"examples ({n_pos} pos / {prob.n_rows - n_pos} neg)")
        callback, bar = _progress(ctx, s["verbosity"], say)
        t0 = time.process_time()
        try:
            model = api.train(prob, params, callback=callback)
        finally:
            if bar is not None:
                bar.close()
        cpu = time.process_time() - t0
        rep = model.report["classes"][0]
        if not rep.get("converged", True):
            warn(rep.get("warning") or "the stopping rule was not met")
        w = model.w[:, 0]
        norm = float(np.sqrt(w @ w))
        xi = (rep["primal"] - 0.5 * norm * norm) / (s["C"])       # SVMperf's slack, percent
        say(f"Upper bound on duality gap: {rep['primal'] - rep.get('dual', rep['primal']):.5f}")
        say(f"Dual objective value: dval={rep.get('dual', float('nan')):.5f}")
        say(f"Primal objective value: pval={rep['primal']:.5f}")
        say(f"Total number of constraints in final working set: {rep.get('cuts', 0)}")
        # SVMperf counts the last pass too, which finds no cut worth adding
        say(f"Number of iterations: {rep['iterations'] + 1}")
        say(f"Norm of weight vector: |w|={norm:.5f}")
        say(f"Value of slack variable (global): xi={xi:.5f}")
        say(f"Runtime in cpu-seconds: {cpu:.2f}")
        model.report["n_train"] = prob.n_rows
        text = svmlight_text(model, prob.n_rows, fmt="svmperf",
                             kernel_header=tuple(s["kernel_header"]))
        with open_output(s["model"]) as f:
            f.write(text)
        say("Writing learned model...done")


def _progress(ctx, verbosity, say):
    """A tqdm bar on a terminal (not with -q); with -v 2 or more, one line per iteration."""
    bar = None
    if show_progress(ctx):
        from tqdm import tqdm

        bar = tqdm(desc="training (svm_perf_learn)", unit=" iter", file=sys.stderr, leave=False)
    if bar is None and verbosity < 2:
        return None, None

    def callback(cls, it, info):
        if bar is not None:
            bar.update(1)
        if verbosity >= 2:
            say(f"Iter {it}: primal {info.get('primal', float('nan')):.6g}, violation "
                f"{100.0 * info.get('violation', float('nan')):.5f}, constraints "
                f"{info.get('cuts', 0)}")

    return callback, bar


CLASSIFY_OPTIONS = ("-v", "-y")


@raw_command("svm_perf_classify")
def classify_command(ctx, argv):
    """SVMperf's svm_perf_classify command line (svmtool svm_perf_classify --help)."""
    opts, files = scan_options(list(argv), CLASSIFY_OPTIONS, NO_COUNTERPART,
                               "svm_perf_classify", ("--help", "-?"), long_options=True)
    if opts is None:
        click.echo(CLASSIFY_HELP, nl=False)
        return
    verbosity = 1
    for opt, val in opts:
        if opt in NO_COUNTERPART or opt not in CLASSIFY_OPTIONS:
            raise ParameterError(f"svm_perf_classify: option {opt} has no counterpart in "
                                 f"svmtool")
        v = option_number(opt, val, int)
        if opt == "-v":
            verbosity = v
    test, model_file, out_path = classify_files("svm_perf_classify", files)

    import numpy as np

    from svmtool.io.model_io import load_model
    from svmtool.io.output import open_output
    from svmtool.models.linear import LinearModel
    from svmtool.ops.perf_measures import perf_measures, summary_lines

    say = ReportLines(ctx, verbosity, to_stderr=out_path == "-")
    model = load_model(model_file)
    if not isinstance(model, LinearModel) or model.nr_w != 1 or model.is_regression() or \
            model.labels is None or len(model.labels) != 2:
        raise InputError(f"{model_file}: svm_perf_classify needs a two-class linear model "
                         f"(SVMperf's, or svmtool's linear binary models)")
    say("Reading model...done.")
    # SVMperf's decision value ranks the larger label first
    sign = 1.0 if model.labels[0] > model.labels[1] else -1.0
    scores = ChunkScores(model, test, sign)
    with open_output(out_path) as out:
        for s in scores:
            if len(s):
                out.write("".join("%.8f\n" % v for v in s.tolist()))
    y, s, runtime = scores.y, scores.values, scores.runtime
    say(f"Reading test examples... ({len(y)} examples) done.")
    say("Classifying test examples...done")
    say(f"Runtime (without IO) in cpu-seconds: {runtime:.2f}")
    unlabeled = int(np.count_nonzero(y == 0))
    if len(y) == 0:
        return
    m = perf_measures(y, s)
    if not unlabeled:
        wrong = m["errorrate"] > 0
        say(f"Average loss on test set: {m['errorrate']:.4f}")
        say(f"Zero/one-error on test set: {100.0 if wrong else 0.0:.2f}% ({0 if wrong else 1} "
            f"correct, {1 if wrong else 0} incorrect, 1 total)")
        say("NOTE: The loss reported above is the percentage of errors. The zero/one-error")
        say("      is the multivariate zero/one-error regarding the whole prediction vector!")
        for line in summary_lines(m):
            say(line)
    else:
        say(f"NOTE: {unlabeled} test examples are unlabeled, so performance cannot be computed. "
            f"The")
        say("      loss and the error reported above may be inaccurate!")

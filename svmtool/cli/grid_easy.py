"""``svmtool grid --easy TRAIN [TEST]``: what LIBSVM's ``tools/easy.py`` does, in one process.

easy.py's steps, lines and files, in the current folder, named after the inputs' base names:

1. ``Scaling training data...``: TRAIN scaled to [-1, 1] by svm-scale's rule, written as
   ``TRAIN.scale`` (svm-scale's text) with its ranges in ``TRAIN.range``;
2. ``Cross validation...``: the grid (grid.py's defaults, and any grid or svm-train options
   given) on ``TRAIN.scale`` as written, which leaves ``TRAIN.scale.out`` and
   ``TRAIN.scale.png``; then ``Best c=C, g=GAMMA CV rate=RATE``;
3. ``Training...``: the best cell's model on all of ``TRAIN.scale``: ``TRAIN.model``
   (``Output model: ...``);
4. with TEST: ``Scaling testing data...`` with the training ranges into ``TEST.scale``,
   ``Testing...``, svm-predict's ``Accuracy = x% (a/b) (classification)`` and
   ``TEST.predict`` (``Output prediction: ...``).

``-q`` prints only the last result line (the accuracy, or the best cell without TEST).
"""

import os

import click

from svmtool.cli.common import warn
from svmtool.errors import ParameterError


def _write_scaled(problem, path):
    from svmtool.io.output import open_output
    from svmtool.io.scale import iter_svm_scale_text

    with open_output(path, "wb") as f:
        for chunk in iter_svm_scale_text(problem):
            f.write(chunk)


def easy(ctx, a, quiet, started):
    from dataclasses import replace

    from svmtool import api
    from svmtool.cli.grid_args import build_params, solver_name
    from svmtool.cli.grid_run import prepare, run_grid_command
    from svmtool.io.scale import compute_ranges, save_ranges, scale
    from svmtool.io.svmlight import load_data

    say = (lambda line: None) if quiet else click.echo
    params, spec = build_params(a, solver_name(a))
    if spec.libsvm_id != 0:
        raise ParameterError(f"--easy is easy.py's C-SVC job (-s 0); -s {spec.name} goes "
                             f"through svmtool grid without --easy")
    train = load_data(a.data)
    test = load_data(a.test) if a.test else None
    name = os.path.basename(a.data.rstrip("/"))
    scaled, range_file, model_file = name + ".scale", name + ".range", name + ".model"
    say("Scaling training data...")
    ranges = compute_ranges(train, -1.0, 1.0)
    _write_scaled(scale(train, ranges, warn=warn), scaled)
    save_ranges(ranges, range_file)
    say("Cross validation...")
    g_args = replace(a, data=scaled, test=None, easy=False, quiet=True)
    prepared = prepare(ctx, g_args, True)
    res = run_grid_command(ctx, g_args, True, started, prepared=prepared, echo_final=False)
    b_rate, b_c, b_g = res.best
    c, g = 2.0 ** b_c, 2.0 ** b_g
    say("Best c={0}, g={1} CV rate={2}".format(c, g, b_rate))
    say("Training...")
    prob = prepared[0]
    p = replace(params, C=c, kernel=replace(params.kernel, gamma=g))
    model = api.train(prob, p)
    api.save_model(model, model_file)
    say("Output model: {0}".format(model_file))
    if test is None:
        if quiet:
            click.echo("Best c={0}, g={1} CV rate={2}".format(c, g, b_rate))
        return
    t_name = os.path.basename(a.test.rstrip("/"))
    scaled_test, predict_file = t_name + ".scale", t_name + ".predict"
    say("Scaling testing data...")
    _write_scaled(scale(test, ranges, warn=warn), scaled_test)
    say("Testing...")
    from svmtool.cli.libsvm_cli import run_predict

    run_predict(ctx, [*(["-q"] if quiet else []), scaled_test, model_file, predict_file])
    if quiet:
        _accuracy_line(load_data(scaled_test), model)
    say("Output prediction: {0}".format(predict_file))


def _accuracy_line(test, model):
    import numpy as np

    pred = np.asarray(model.predict(model.decision_function(test)), dtype=np.float64)
    y = np.asarray(test.y, dtype=np.float64)
    n = len(y)
    correct = int(np.sum(pred == y))
    click.echo("Accuracy = %g%% (%d/%d) (classification)" %
               (100.0 * correct / n if n else float("nan"), correct, n))

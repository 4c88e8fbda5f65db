"""``svmtool predict [options] TEST MODEL OUTPUT`` -- LIBLINEAR's predict, streaming.

The test data is read block by block (memory about one block plus the per-row arrays the
evaluation needs), scored against the model and written to OUTPUT by the output rule of
:mod:`svmtool.io.output` (``-``: stdout; TEST ``-``: stdin).  The evaluation goes to stderr:
LIBLINEAR's ``Accuracy = ...`` line, plus, for a two-class model, precision / recall / F1 of
the first label and the ROC AUC of the decision values; for a regression model LIBLINEAR's mean
squared error and squared correlation lines; for a ranking model (``--ranking``, or a model
that says it ranks: svmtool's ranking models, SVMlight files tagged ``svmtool task ranking``)
the pairwise accuracy, never a classification accuracy.  An SVMlight model file without
svmtool's task tag (SVMlight's own files do not record whether ``svm_learn`` classified or
regressed) is scored as a classifier while the test labels are all +1 / -1, and otherwise its
decision values are scored as regression (mean squared error, squared correlation), as
svm_classify reports accuracy only on +1 / -1 labels.
"""

import click

from svmtool.cli.common import info, quiet_option, zero_based_option

BLOCK_BYTES = 64 << 20


def format_value(v) -> str:
    """Shortest text that reads back as the same double; integral values without ``.0``."""
    r = repr(v)
    return r[:-2] if r.endswith(".0") else r


@click.command("predict", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("test", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("model_file", metavar="MODEL", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("output", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-b", "probability", type=click.Choice(["0", "1"]), default="0", show_default=True,
              help="1: write class probabilities (logistic-regression models only), "
                   "as LIBLINEAR's predict -b 1.")
@click.option("--decision-values", is_flag=True,
              help="Write the decision values (one column per weight column) instead of labels.")
@click.option("--ranking", is_flag=True,
              help="Ranking evaluation: write one score per line and report pairwise accuracy, "
                   "ROC area (two label values) and Kendall's tau, per qid and overall.")
@quiet_option
@zero_based_option
@click.option("--dask", "dask", default=None, metavar="ADDRESS",
              help="Predict on a dask.distributed cluster: a scheduler address "
                   "(tcp://host:8786) or local:N.  TEST must be a cache or a shard index all "
                   "workers can read at the same paths; one task per piece, OUTPUT in row "
                   "order.  Needs the 'dask' extra.")
@click.option("--chunk-bytes", type=click.IntRange(min=1), default=BLOCK_BYTES, hidden=True,
              help="Bytes of test data scored per block.")
@click.pass_context
def command(ctx, test, model_file, output, probability, decision_values, quiet, zero_based,
            chunk_bytes, ranking=False, dask=None):
    """Predict the rows of TEST with MODEL and write the results to OUTPUT.

    TEST is svmlight/libsvm text (plain or compressed, - for stdin), a binary cache or a shard
    index (convert --shards: the shards in order); MODEL a
    LIBLINEAR model file, a LIBSVM kernel model or an svmtool DC-SVM early-prediction model;
    OUTPUT gets one prediction per line (- for stdout).
    """
    from svmtool.errors import ParameterError
    from svmtool.io.output import open_output
    from svmtool.io.model_text import format_label

    with_proba = probability == "1"
    model = _checked_model(test, model_file, with_proba, decision_values, dask)

    import numpy as np

    from svmtool.api import iter_decision_values
    from svmtool.io.svmlight_model import model_task

    task = model_task(model)
    if task == "ranking":
        ranking = True          # a ranking model is scored by pairs, never by accuracy
    regression = model.is_regression()
    if not regression:
        class_labels = model.class_labels
        label_text = np.array([format_label(v) for v in class_labels], dtype=object)
    tally = _Tally(model, unknown_task=task == "unknown")
    # an SVMlight model that does not say its task is a classifier or a regressor by its test
    # labels, known only after the last row: its lines wait until then (labels or values)
    deferred = [] if task == "unknown" and not decision_values and not with_proba else None
    if ranking:
        if model.nr_w != 1:
            raise ParameterError("--ranking needs a model with one weight vector (a ranking, "
                                 "binary or SVMlight model)")
        decision_values = True
        rank_y, rank_s, rank_q = [], [], []

    with open_output(output) as out:
        if with_proba:
            out.write("labels " + " ".join(label_text) + "\n")
        for chunk_y, chunk_qid, scores in iter_decision_values(
                model, test, dask=dask, chunk_bytes=chunk_bytes, zero_based=zero_based):
            if regression:
                predicted = scores[:, 0]
                index = None
            else:
                index = model.predict_index(scores)
                predicted = class_labels[index]
            tally.add(chunk_y, predicted, index, scores)
            if ranking:
                rank_y.append(np.array(chunk_y, dtype=np.float64))
                rank_s.append(scores[:, 0].copy())
                rank_q.append(None if chunk_qid is None else np.array(chunk_qid))
            if len(scores) == 0:
                continue
            if deferred is not None:
                deferred.append((label_text[index], scores[:, 0].copy()))
                continue
            if decision_values:
                lines = [" ".join(map(format_value, row)) for row in scores.tolist()]
            elif with_proba:
                lines = _proba_lines(model, scores, label_text[index])
            elif regression:
                lines = [format_value(v) for v in predicted.tolist()]
            else:
                lines = label_text[index].tolist()
            out.write("\n".join(lines))
            out.write("\n")
        for labels, values in deferred or ():
            lines = [format_value(v) for v in values.tolist()] if tally.as_regression() \
                else labels.tolist()
            out.write("\n".join(lines))
            out.write("\n")

    for line in _ranking_lines(rank_y, rank_s, rank_q) if ranking else tally.report():
        info(ctx, line, quiet)


def _checked_model(test, model_file, with_proba, decision_values, dask):
    """The model, once the options are known to go together (ParameterError if not)."""
    from svmtool.errors import InputError, ParameterError
    from svmtool.io.model_io import load_model

    if test == "-" and model_file == "-":
        raise InputError("TEST and MODEL cannot both be read from stdin ('-')")
    if with_proba and decision_values:
        raise ParameterError("-b 1 and --decision-values cannot be used together")
    if dask is not None:
        from svmtool.engine.dask_backend import require_dask
        from svmtool.params import check_dask_address, refuse

        refuse(check_dask_address(dask))
        require_dask()
    model = load_model(model_file)
    if with_proba and not model.is_probabilistic():
        raise ParameterError(f"-b 1 needs a logistic-regression model (L2R_LR, L1R_LR or "
                             f"L2R_LR_DUAL); {model_file} is {model.solver_type}")
    return model


def _proba_lines(model, scores, labels):
    """-b 1's lines: the label, then each class's probability."""
    proba = model.predict_proba(scores)
    return [lab + " " + " ".join(map(format_value, row)) for lab, row in zip(labels,
                                                                             proba.tolist())]


def _ranking_lines(rank_y, rank_s, rank_q):
    """--ranking's report of the gathered labels, scores and qids."""
    import numpy as np

    from svmtool.solvers.cutting_plane.ordinal import ranking_report_lines

    ys = np.concatenate(rank_y) if rank_y else np.zeros(0)
    ss = np.concatenate(rank_s) if rank_s else np.zeros(0)
    qs = None
    if rank_q and all(q is not None for q in rank_q):
        qs = np.concatenate(rank_q)
    return ranking_report_lines(ys, ss, qs)


class _Tally:
    """What the evaluation needs, gathered chunk by chunk."""

    def __init__(self, model, unknown_task=False):
        self.model = model
        self.total = 0
        self.correct = 0
        self.y = []
        self.index = []
        self.score = []
        # an SVMlight file does not say whether it classifies or regresses: when its test
        # labels are not all +1 / -1 (svm_classify's test), its decision values are scored as
        # regression instead
        self.unknown_task = unknown_task
        self.not_binary = False
        if model.is_regression() or unknown_task:
            from svmtool.ops.metrics import RegressionSums

            self.sums = RegressionSums()

    def add(self, y, predicted, index, scores):
        import numpy as np

        self.total += len(y)
        if self.model.is_regression():
            self.sums.add(y, predicted)
            return
        if self.unknown_task:
            yy = np.asarray(y, dtype=np.float64)
            self.not_binary |= bool(np.any(np.abs(yy) != 1.0))
            self.sums.add(yy, scores[:, 0])
        self.correct += int(np.count_nonzero(y == predicted))
        if len(self.model.class_labels) == 2:
            self.y.append(np.array(y, dtype=np.float64))
            self.index.append(index)
            self.score.append(np.array(self.model.binary_score(scores), dtype=np.float64))

    def as_regression(self):
        """Whether the model is scored (and its predictions written) as a regressor."""
        return self.model.is_regression() or (self.unknown_task and self.not_binary)

    def report(self):
        if self.unknown_task and self.not_binary:
            return ["Mean squared error = %g (regression: the SVMlight model does not say its "
                    "task and the test labels are not all +1/-1, so its decision values are "
                    "the predictions, compared with them)" % self.sums.mse(),
                    "Squared correlation coefficient = %g (regression)"
                    % self.sums.squared_correlation()]
        if self.model.is_regression():
            return ["Mean squared error = %g (regression)" % self.sums.mse(),
                    "Squared correlation coefficient = %g (regression)"
                    % self.sums.squared_correlation()]
        if self.total == 0:
            return ["Accuracy = n/a (no test rows)"]
        lines = ["Accuracy = %g%% (%d/%d)" % (self.correct / self.total * 100, self.correct,
                                              self.total)]
        if self.y:
            lines += self._binary_lines()
        return lines

    def _binary_lines(self):
        import numpy as np

        from svmtool.io.model_text import format_label
        from svmtool.ops.metrics import precision_recall_f1, roc_auc

        labels = self.model.class_labels
        positive = labels[0]
        y = np.concatenate(self.y)
        predicted = labels[np.concatenate(self.index)]
        score = np.concatenate(self.score)
        p, r, f1, tp, fp, fn = precision_recall_f1(y, predicted, positive)
        name = format_label(positive)
        lines = ["Precision = %g%% (%d/%d), Recall = %g%% (%d/%d), F1 = %g (label %s)"
                 % (100 * p, tp, tp + fp, 100 * r, tp, tp + fn, f1, name)]
        is_pos = y == positive
        if is_pos.all() or not is_pos.any():
            lines.append(f"ROC AUC = n/a (every test label is {'' if is_pos.any() else 'not '}"
                         f"{name})")
        else:
            lines.append("ROC AUC = %g (label %s ranked by decision value)"
                         % (roc_auc(is_pos, score), name))
        return lines

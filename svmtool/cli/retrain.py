"""What ``svmtool train`` adds for unattended retraining: the run record (``--report`` /
``--log``) and the validation gate (``--validate``, ``--min-accuracy``, ``--max-drop``).

The record is one JSON object: svmtool's version, the command line, the solver and every
parameter, the data file (path, size, sha256) and its shape, per subproblem what the solver
reached and why it stopped, the times, the peak memory, the validation results, and the published
model (path, sha256) or why nothing was published.  ``--report`` writes it atomically,
``--log`` appends it as one line with a single ``O_APPEND`` write, so that concurrent runs never
mix their lines.
"""

import hashlib
import json
import os
import sys

from svmtool.errors import SvmtoolError

EXIT_REFUSED = 3       # the validation gate refused to publish the model


class GateRefused(SvmtoolError):
    """The new model failed the validation gate: nothing published, exit status 3."""

    exit_code = EXIT_REFUSED


def file_facts(path):
    """(size, sha256) of a regular file, else (None, None) (stdin, pipes)."""
    if path is None or path == "-":
        return None, None
    try:
        if not os.path.isfile(path):
            return None, None
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return os.path.getsize(path), h.hexdigest()
    except OSError:
        return None, None


def peak_memory_bytes():
    try:
        import resource

        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(kb) * (1 if sys.platform == "darwin" else 1024)
    except (ImportError, OSError):
        return None


def params_record(params):
    """Every TrainParams field that is an option (arrays and runtime state left out)."""
    from dataclasses import fields, is_dataclass

    def plain(obj):
        out = {}
        for f in fields(obj):
            if not f.compare:          # arrays and runtime state, not options
                continue
            v = getattr(obj, f.name)
            out[f.name] = plain(v) if is_dataclass(v) else v
        return out

    rec = plain(params)
    rec["weights"] = [list(p) for p in params.weights]
    return rec


def stop_reason(rep):
    """Why one subproblem stopped: converged, time limit, iteration cap or the solver's note."""
    if rep.get("converged", True):
        return "converged"
    if rep.get("stopped"):
        return rep["stopped"]
    warning = rep.get("warning") or ""
    if "maximum number" in warning or "maximal number" in warning or not warning:
        return "iteration cap"
    return warning


def _plain(v):
    import numpy as np

    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, tuple):
        return list(v)
    return str(v)


def dumps(record, indent=None):
    return json.dumps(record, default=_plain, indent=indent, allow_nan=True)


def write_report(path, record):
    from svmtool.io.output import open_output

    with open_output(path, encoding="utf-8") as f:
        f.write(dumps(record, indent=1) + "\n")


def append_log(path, record):
    """One line, one ``write`` on an ``O_APPEND`` descriptor: lines of concurrent runs never mix."""
    line = (dumps(record) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


# -- the validation gate ---------------------------------------------------------------------------

def metric_of(spec):
    if spec.task == "ranking":
        return "pairwise accuracy"
    if spec.task == "regression":
        return "mse"
    return "accuracy"


def score(model, problem, metric):
    """The model's score on ``problem``: accuracy or pairwise accuracy in %, or the MSE."""
    import numpy as np

    scores = model.decision_function(problem)
    if metric == "pairwise accuracy":
        from svmtool.solvers.cutting_plane.ordinal import ranking_metrics

        overall, _ = ranking_metrics(problem.y, scores[:, 0], problem.qid)
        return 100.0 * float(overall["pairwise_accuracy"])
    if metric == "mse":
        return float(np.mean((scores[:, 0] - problem.y) ** 2))
    predicted = model.predict(scores)
    return 100.0 * float(np.mean(predicted == problem.y)) if len(predicted) else float("nan")


def gate(new_score, old_score, metric, min_accuracy, max_drop):
    """The reason to refuse the new model, or None.  For the MSE a "drop" is a rise."""
    if min_accuracy is not None and metric != "mse" and not new_score >= min_accuracy:
        return (f"{metric} {new_score:.4g}% on the validation data is below --min-accuracy "
                f"{min_accuracy:g}%")
    if max_drop is not None and old_score is not None:
        worse = (new_score - old_score) if metric == "mse" else (old_score - new_score)
        if worse > max_drop:
            unit = "" if metric == "mse" else " points"
            return (f"{metric} fell from {old_score:.4g} (the published model) to "
                    f"{new_score:.4g}, more than --max-drop {max_drop:g}{unit}")
    return None

"""``svmtool train``'s path from the data file to a published model: read the data, train
(warm-started with --init-model), gate with --validate, write MODEL under its lock, and keep the
run record of --report / --log (the record and the gate themselves: :mod:`svmtool.cli.retrain`)."""

import os
import sys
from dataclasses import dataclass, replace
from typing import Any, Optional

import click

from svmtool.cli.common import info, jit_clock, jit_since, show_progress, timed_note, warn
from svmtool.cli.train_output import level_report_lines, print_report, progress
from svmtool.errors import ParameterError


@dataclass(frozen=True)
class TrainJob:
    """What one ``svmtool train`` was asked to do, its options checked (cli/train.py): the
    solver's registry entry and the TrainParams, the files, and the publishing options of
    --init-model, --wait, --report, --log, --validate, --min-accuracy and --max-drop."""
    spec: Any
    params: Any
    train_file: str
    model_file: Optional[str]
    model_format: Optional[str] = None
    zero_based: bool = False
    test_file: Optional[str] = None          # DC-SVM's --test: per-level accuracy
    quiet: bool = False
    started: float = 0.0                     # time.monotonic() when the command started
    init_model: Optional[str] = None
    weight_file: Optional[str] = None        # -W: instance weights, one a line
    wait: Optional[float] = None
    report_file: Optional[str] = None
    log_file: Optional[str] = None
    validate_file: Optional[str] = None
    min_accuracy: Optional[float] = None
    max_drop: Optional[float] = None


def read_training_data(ctx, job):
    """(problem, params, seconds): the training data, and the job's params completed from it."""
    import time

    from svmtool import _startup
    from svmtool.io.svmlight import PY_PARSE_LIMIT, PY_PARSE_LIMIT_NUMBA_FREE, load_data

    spec, params, model_format = job.spec, job.params, job.model_format
    # numba is loaded by the solver that needs it, not by the parser before it
    limit = PY_PARSE_LIMIT_NUMBA_FREE if spec.small_without_numba else PY_PARSE_LIMIT
    if job.test_file:
        test = load_data(job.test_file, zero_based=job.zero_based)
        params = replace(params, dcsvm=replace(params.dcsvm, test=test,
                                               keep_level_models=spec.reads("dcsvm")))
    t0, jit0, own0 = time.perf_counter(), jit_clock(), _startup.span_start()
    prob = load_data(job.train_file, zero_based=job.zero_based, threads=params.threads,
                     progress=show_progress(ctx, job.quiet), python_limit=limit)
    if job.weight_file is not None:
        from svmtool.io.weights import attach_weights

        attach_weights(prob, job.weight_file)
    refused = spec.weights_refused(params)
    if refused:                             # as api.train would, before the first line
        from svmtool.problem import refuse_weights

        refuse_weights(prob, f"solver {spec.name}", refused)
    t_read = time.perf_counter() - t0
    _startup.add("parse", *_startup.own_since(own0))
    info(ctx, f"read {prob.n_rows} examples, {prob.n_features} features, {prob.nnz} non-zeros "
              f"{timed_note(t_read, jit_since(jit0))}", job.quiet)
    if model_format in ("svmlight", "svmperf") and spec.task == "classification":
        from svmtool.labels import distinct_values

        k = len(distinct_values(prob.y))
        if k > 2:
            raise ParameterError(f"--model-format {model_format} holds one decision function:"
                                 f" it cannot hold a model of {k} classes (use the "
                                 f"{'LIBSVM' if spec.model_type == 'kernel' else 'LIBLINEAR'}"
                                 f" format)")

    if params.perf_c is not None and spec.kind != "ranking":
        # SVMperf's C is per 100% of average loss: C_light = C_perf * 100 / n (FORMATS.md 6)
        params = replace(params, C=params.perf_c * 100.0 / max(prob.n_rows, 1))
    return prob, params, t_read


def train_and_publish(ctx, job):
    """Train and write MODEL under its lock; with the retraining options, warm start, gate,
    report and log (svmtool.cli.retrain)."""
    import time

    from svmtool.io.lock import LockBusy, locked

    rec = None
    if job.report_file is not None or job.log_file is not None:
        from svmtool import __version__
        from svmtool.cli.retrain import params_record

        rec = {"svmtool": __version__, "argv": list(sys.argv), "pid": os.getpid(),
               "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "solver": job.spec.name,
               "params": params_record(job.params), "data": {"path": job.train_file},
               "init_model": job.init_model, "model": {"path": job.model_file},
               "status": "failed"}
    try:
        with locked(job.model_file, job.wait):
            _publish(ctx, job, rec)
    except LockBusy as e:
        if rec is not None:
            rec["status"] = "busy"
            rec["error"] = str(e)
            _record(job, rec, report=False)
        raise
    except BaseException as e:
        if rec is not None:
            if rec["status"] == "failed":
                rec["error"] = str(e) or type(e).__name__
            _record(job, rec)
        raise
    if rec is not None:
        _record(job, rec)


def _record(job, rec, report=True):
    import time

    from svmtool.cli.retrain import append_log, peak_memory_bytes, write_report

    rec.setdefault("times", {})["total"] = time.monotonic() - job.started
    rec["peak_memory_bytes"] = peak_memory_bytes()
    if report and job.report_file is not None:
        write_report(job.report_file, rec)
    if job.log_file is not None:
        append_log(job.log_file, rec)


def _publish(ctx, job, rec):
    import time

    from svmtool import api

    spec = job.spec
    init_model = _init_model(job)
    prob, params, t_read = read_training_data(ctx, job)
    if rec is not None:
        _record_data(rec, job, prob, t_read)
    callback, bar = progress(ctx, job.quiet, spec.name)
    t_train, jit0 = time.perf_counter(), jit_clock()
    try:
        model = api.train(prob, params, callback=callback, init_model=init_model)
    finally:
        if bar is not None:
            bar.close()
    # the `trained in` line: the whole training call with numba's share said apart (numba is
    # first imported inside it when the data came from a cache)
    jit = jit_since(jit0)
    print_report(ctx, model, job.quiet, jit=jit, seconds=time.perf_counter() - t_train)
    if spec.kind == "kernel" and not job.quiet:
        for line in level_report_lines(model.report):
            click.echo(line, err=True)
    if job.model_format in ("svmlight", "svmperf") or \
            model.report.get("model_format") == "svmlight":
        model.report.setdefault("n_train", prob.n_rows)
    if rec is not None:
        from svmtool.cli.retrain import stop_reason

        rec["subproblems"] = model.report["classes"]
        reasons = [stop_reason(r) for r in model.report["classes"]]
        rec["stopped"] = next((r for r in reasons if r != "converged"), "converged")
        rec["times"]["solve"] = model.report["train_time"]
        rec["times"]["numba_startup"], rec["times"]["numba_compile"] = jit
        from svmtool import _startup

        rec["startup"] = _startup.block()     # the fixed cost of this run, by part
        if init_model is not None:
            rec["warm_start"] = type(init_model).__name__
    if job.validate_file is not None:
        _validate(ctx, job, model, rec)
    t0 = time.perf_counter()
    api.save_model(model, job.model_file, job.model_format, threads=params.threads)
    if rec is not None:
        from svmtool.cli.retrain import file_facts

        rec["times"]["write"] = time.perf_counter() - t0
        rec["model"]["sha256"] = file_facts(job.model_file)[1]
        rec["status"] = "published"


def _init_model(job):
    """The --init-model, read and checked against the solver before the data is read."""
    if job.init_model is None:
        return None
    from svmtool import api
    from svmtool.solvers.common.warm import check_kind

    init_model = api.load_model(job.init_model)
    init_model.report["source"] = job.init_model
    check_kind(init_model, job.spec)
    return init_model


def _record_data(rec, job, prob, t_read):
    import numpy as np

    from svmtool.cli.retrain import file_facts
    from svmtool.labels import distinct_values

    size, digest = file_facts(job.train_file)
    rec["data"].update({"size": size, "sha256": digest, "n": prob.n_rows,
                        "d": prob.n_features, "nnz": prob.nnz})
    if job.spec.task != "ranking":
        rec["data"]["classes"] = [float(v) for v in distinct_values(prob.y)]
    if prob.weights is not None:
        # the instance weights trained with: where from, and their sum (a changed file shows)
        _, w_digest = file_facts(job.weight_file)
        rec["data"]["weights"] = {"from": job.weight_file or "cost: tokens",
                                  "sha256": w_digest, "sum": float(np.sum(prob.weights))}
    rec["times"] = {"read": t_read}


def _validate(ctx, job, model, rec):
    """Score the new model and the published one on --validate; GateRefused (exit 3) if the
    new one fails --min-accuracy or --max-drop.  Nothing is written before this returns."""
    from svmtool import api
    from svmtool.cli.retrain import GateRefused, gate, metric_of, score
    from svmtool.io.lock import lockable
    from svmtool.io.svmlight import load_data

    metric = metric_of(job.spec)
    val = load_data(job.validate_file, zero_based=job.zero_based)
    new_score = score(model, val, metric)
    old_score = None
    old_note = None
    model_file = job.model_file
    if model_file != "-" and lockable(model_file) and os.path.exists(model_file):
        try:
            old_score = score(api.load_model(model_file), val, metric)
        except Exception as e:         # an unreadable old model: no comparison, say why
            old_note = f"the published model could not be scored: {e}"
            warn(old_note)
    result = {"file": job.validate_file, "metric": metric, "new": new_score,
              "old": old_score}
    if old_note:
        result["note"] = old_note
    unit = "" if metric == "mse" else "%"
    old_text = "" if old_score is None else f", published model {old_score:.4f}{unit}"
    info(ctx, f"validation {metric}: new model {new_score:.4f}{unit}{old_text}", job.quiet)
    reason = gate(new_score, old_score, metric, job.min_accuracy, job.max_drop)
    result["passed"] = reason is None
    if rec is not None:
        rec["validation"] = result
    if reason is not None:
        if rec is not None:
            rec["status"] = "refused"
            rec["error"] = f"validation gate: {reason}"
        raise GateRefused(f"validation gate: {reason}; {model_file} left as it was")

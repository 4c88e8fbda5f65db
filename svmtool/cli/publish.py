"""``svmtool train``'s path from the data file to a published model: read the data, train
(warm-started with --init-model), gate with --validate, write MODEL under its lock, and keep the
run record of --report / --log (the record and the gate themselves: :mod:`svmtool.cli.retrain`)."""

import os
import sys
from dataclasses import replace

import click

from svmtool.cli.common import info, jit_clock, jit_since, show_progress, timed_note, warn
from svmtool.cli.train_output import level_report_lines, print_report, progress
from svmtool.errors import ParameterError


def read_training_data(ctx, spec, params, train_file, model_format, zero_based, threads, perf_c,
                       kernel_opts, quiet):
    """(problem, params, seconds): the training data, and params completed from it."""
    import time

    from svmtool.io.svmlight import load_data

    if kernel_opts.get("test_file"):
        test = load_data(kernel_opts["test_file"], zero_based=zero_based)
        params = replace(params, dcsvm=replace(params.dcsvm, test=test,
                                               keep_level_models=spec.name == "dcsvm"))
    t0, jit0 = time.perf_counter(), jit_clock()
    prob = load_data(train_file, zero_based=zero_based, threads=threads,
                     progress=show_progress(ctx, quiet))
    t_read = time.perf_counter() - t0
    info(ctx, f"read {prob.n_rows} examples, {prob.n_features} features, {prob.nnz} non-zeros "
              f"{timed_note(t_read, jit_since(jit0))}", quiet)
    if model_format in ("svmlight", "svmperf") and spec.task == "classification":
        import numpy as np

        k = len(np.unique(prob.y))
        if k > 2:
            raise ParameterError(f"--model-format {model_format} holds one decision function:"
                                 f" it cannot hold a model of {k} classes (use the "
                                 f"{'LIBSVM' if spec.model_type == 'kernel' else 'LIBLINEAR'}"
                                 f" format)")

    if perf_c is not None and spec.kind != "ranking":
        # SVMperf's C is per 100% of average loss: C_light = C_perf * 100 / n (FORMATS.md 6)
        params = replace(params, C=perf_c * 100.0 / max(prob.n_rows, 1))
    return prob, params, t_read


def train_and_publish(ctx, spec, params, train_file, model_file, model_format, retrain,
                       zero_based, threads, perf_c, kernel_opts, quiet, t_command):
    """Train and write MODEL under its lock; with the retraining options, warm start, gate,
    report and log (svmtool.cli.retrain)."""
    import time

    from svmtool.io.lock import LockBusy, locked

    record_wanted = retrain["report_file"] is not None or retrain["log_file"] is not None
    rec = None
    if record_wanted:
        from svmtool import __version__
        from svmtool.cli.retrain import params_record

        rec = {"svmtool": __version__, "argv": list(sys.argv), "pid": os.getpid(),
               "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "solver": spec.name,
               "params": params_record(params), "data": {"path": train_file},
               "init_model": retrain["init_model"], "model": {"path": model_file},
               "status": "failed"}
    try:
        with locked(model_file, retrain["wait"]):
            _publish(ctx, spec, params, train_file, model_file, model_format, retrain,
                     zero_based, threads, perf_c, kernel_opts, quiet, t_command, rec)
    except LockBusy as e:
        if rec is not None:
            rec["status"] = "busy"
            rec["error"] = str(e)
            _record(retrain, rec, t_command, report=False)
        raise
    except BaseException as e:
        if rec is not None:
            if rec["status"] == "failed":
                rec["error"] = str(e) or type(e).__name__
            _record(retrain, rec, t_command)
        raise
    if rec is not None:
        _record(retrain, rec, t_command)


def _record(retrain, rec, t_command, report=True):
    import time

    from svmtool.cli.retrain import append_log, peak_memory_bytes, write_report

    rec.setdefault("times", {})["total"] = time.monotonic() - t_command
    rec["peak_memory_bytes"] = peak_memory_bytes()
    if report and retrain["report_file"] is not None:
        write_report(retrain["report_file"], rec)
    if retrain["log_file"] is not None:
        append_log(retrain["log_file"], rec)


def _publish(ctx, spec, params, train_file, model_file, model_format, retrain, zero_based,
             threads, perf_c, kernel_opts, quiet, t_command, rec):
    import time

    from svmtool import api

    init_model = None
    if retrain["init_model"] is not None:
        init_model = api.load_model(retrain["init_model"])
        init_model.report["source"] = retrain["init_model"]
        from svmtool.solvers.warm import check_kind

        check_kind(init_model, spec)
    prob, params, t_read = read_training_data(ctx, spec, params, train_file, model_format,
                                              zero_based, threads, perf_c, kernel_opts, quiet)
    if rec is not None:
        import numpy as np

        from svmtool.cli.retrain import file_facts

        size, digest = file_facts(train_file)
        rec["data"].update({"size": size, "sha256": digest, "n": prob.n_rows,
                            "d": prob.n_features, "nnz": prob.nnz})
        if spec.task != "ranking":
            rec["data"]["classes"] = sorted(float(v) for v in np.unique(prob.y))
        rec["times"] = {"read": t_read}

    callback, bar = progress(ctx, quiet, spec.name)
    t_train, jit0 = time.perf_counter(), jit_clock()
    try:
        model = api.train(prob, params, callback=callback, init_model=init_model)
    finally:
        if bar is not None:
            bar.close()
    # the `trained in` line: the whole training call with numba's share said apart (numba is
    # first imported inside it when the data came from a cache)
    jit = jit_since(jit0)
    print_report(ctx, model, quiet, jit=jit, seconds=time.perf_counter() - t_train)
    if spec.kind == "kernel" and not quiet:
        for line in level_report_lines(model.report):
            click.echo(line, err=True)
    if model_format in ("svmlight", "svmperf") or model.report.get("model_format") == "svmlight":
        model.report.setdefault("n_train", prob.n_rows)
    if rec is not None:
        from svmtool.cli.retrain import stop_reason

        rec["subproblems"] = model.report["classes"]
        reasons = [stop_reason(r) for r in model.report["classes"]]
        rec["stopped"] = next((r for r in reasons if r != "converged"), "converged")
        rec["times"]["solve"] = model.report["train_time"]
        rec["times"]["numba_startup"], rec["times"]["numba_compile"] = jit
        if init_model is not None:
            rec["warm_start"] = type(init_model).__name__
    if retrain["validate_file"] is not None:
        _validate(ctx, spec, model, model_file, retrain, zero_based, quiet, rec)
    t0 = time.perf_counter()
    api.save_model(model, model_file, model_format)
    if rec is not None:
        from svmtool.cli.retrain import file_facts

        rec["times"]["write"] = time.perf_counter() - t0
        rec["model"]["sha256"] = file_facts(model_file)[1]
        rec["status"] = "published"


def _validate(ctx, spec, model, model_file, retrain, zero_based, quiet, rec):
    """Score the new model and the published one on --validate; GateRefused (exit 3) if the
    new one fails --min-accuracy or --max-drop.  Nothing is written before this returns."""
    from svmtool import api
    from svmtool.cli.retrain import GateRefused, gate, metric_of, score
    from svmtool.io.lock import lockable
    from svmtool.io.svmlight import load_data

    metric = metric_of(spec)
    val = load_data(retrain["validate_file"], zero_based=zero_based)
    new_score = score(model, val, metric)
    old_score = None
    old_note = None
    if model_file != "-" and lockable(model_file) and os.path.exists(model_file):
        try:
            old_score = score(api.load_model(model_file), val, metric)
        except Exception as e:         # an unreadable old model: no comparison, say why
            old_note = f"the published model could not be scored: {e}"
            warn(old_note)
    result = {"file": retrain["validate_file"], "metric": metric, "new": new_score,
              "old": old_score}
    if old_note:
        result["note"] = old_note
    unit = "" if metric == "mse" else "%"
    old_text = "" if old_score is None else f", published model {old_score:.4f}{unit}"
    info(ctx, f"validation {metric}: new model {new_score:.4f}{unit}{old_text}", quiet)
    reason = gate(new_score, old_score, metric, retrain["min_accuracy"], retrain["max_drop"])
    result["passed"] = reason is None
    if rec is not None:
        rec["validation"] = result
    if reason is not None:
        if rec is not None:
            rec["status"] = "refused"
            rec["error"] = f"validation gate: {reason}"
        raise GateRefused(f"validation gate: {reason}; {model_file} left as it was")

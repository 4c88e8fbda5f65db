"""``svmtool info FILE [--json]``: what a model file is, in any format svmtool reads, or what a
binary data cache holds (rows, features, and whether it carries instance weights)."""

import click

from svmtool.cli.common import quiet_option


def describe_cache(path):
    """A dict describing the binary cache at ``path``: its header's facts and, when it carries
    instance weights, their count, sum, minimum and maximum (read from the mapped file)."""
    import numpy as np

    from svmtool.io.cache import cache_info, load_cache

    facts = cache_info(path)
    out = {"file": path, "format": "svmtool cache", "size": facts["bytes"],
           "cache_version": facts["version"], "rows": facts["n_rows"],
           "features": facts["n_features"], "nonzeros": facts["nnz"], "qid": facts["qid"],
           "weights": facts["weights"]}
    if facts["weights"]:
        w = np.asarray(load_cache(path, mmap="r").weights)
        out["weights_sum"] = float(w.sum())
        out["weights_min"] = float(w.min()) if len(w) else 0.0
        out["weights_max"] = float(w.max()) if len(w) else 0.0
    return out


def _is_cache_path(path):
    from svmtool.io.cache import CACHE_MAGIC, is_cache

    if path == "-":
        return False
    try:
        with open(path, "rb") as f:
            return is_cache(f.read(len(CACHE_MAGIC)))
    except OSError:
        return False


def describe(path):
    """A dict describing the model file at ``path`` (format, type, classes, features, ...),
    or the data cache at ``path`` (:func:`describe_cache`)."""
    import numpy as np

    if _is_cache_path(path):
        return describe_cache(path)

    from svmtool.io.model_io import load_model, model_format
    from svmtool.io.model_text import decode, read_bytes

    if path == "-":
        import tempfile

        raw, _ = read_bytes(path)
        with tempfile.NamedTemporaryFile(suffix=".model") as tmp:
            tmp.write(raw)
            tmp.flush()
            model = load_model(tmp.name)
        name = "<stdin>"
    else:
        model = load_model(path)
        raw, name = read_bytes(path)
    text = decode(raw, name)
    fmt = model_format(text)
    out = {"file": path, "format": fmt, "size": len(raw)}
    kind = type(model).__name__
    labels = getattr(model, "labels", None)
    if labels is not None:
        out["classes"] = len(labels)
        out["labels"] = [float(v) for v in np.asarray(labels).reshape(-1)]
    out["features"] = int(model.nr_feature)
    svmlight_task = None
    if fmt == "SVMlight":
        from svmtool.io.svmlight_model import task_and_reason

        svmlight_task = task_and_reason(model)
    if kind == "LinearModel":
        out["model"] = "linear"
        out["solver_type"] = model.solver_type
        ranking = model.labels is None or (model.report or {}).get("model_format") == "svmlight"
        if (model.report or {}).get("ranking"):
            out["task"] = "ranking"      # read from a tagged SVMlight/SVMperf ranking file
        elif model.is_regression():
            out["task"] = "regression"
        elif model.is_oneclass():
            out["task"] = "one-class"
        else:
            out["task"] = "classification" if not ranking or labels is not None else "ranking"
        if svmlight_task is not None:
            out["task"], out["task_reason"] = svmlight_task
        out["bias"] = float(model.bias)
        w = np.asarray(model.w)
        out["weight_vectors"] = int(w.shape[1])
        feat = w[:model.nr_feature]
        out["nonzero_weights"] = int(np.count_nonzero(feat))
        out["features_used"] = int(np.count_nonzero(np.any(feat != 0, axis=1)))
        return out
    kernel = model.kernel
    out["kernel"] = {"type": kernel.name, "gamma": float(kernel.gamma),
                     "coef0": float(kernel.coef0), "degree": int(kernel.degree)}
    if kind == "KernelModel":
        out["model"] = "kernel"
        out["svm_type"] = model.svm_type
        out["support_vectors"] = int(model.total_sv)
        if model.nr_sv is not None:
            out["support_vectors_per_class"] = [int(v) for v in model.nr_sv]
        out["rho"] = [float(v) for v in model.rho]
        if svmlight_task is not None:
            out["task"], out["task_reason"] = svmlight_task
        return out
    out["model"] = "early"
    out["level"] = int(model.level) if not isinstance(model.level, str) else model.level
    if model.shared is not None:
        out["clusters"] = int(model.shared.nr_cluster)
    else:
        out["pairs"] = len(model.pairs)
        out["clusters"] = [int(p.nr_cluster) for p in model.pairs]
        out["support_vectors"] = int(sum(p.svs.n_rows for p in model.pairs))
    return out


def text_lines(d):
    lines = []
    for k, v in d.items():
        if isinstance(v, dict):
            v = ", ".join(f"{a} {b:g}" if isinstance(b, float) else f"{a} {b}"
                          for a, b in v.items())
        elif isinstance(v, list):
            v = " ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in v)
        elif isinstance(v, float):
            v = f"{v:g}"
        lines.append(f"{k.replace('_', ' ')}: {v}")
    return lines


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_file", metavar="FILE")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text lines.")
@quiet_option
def command(model_file, as_json, quiet):
    """Describe FILE, a model: format, solver type, classes, features, bias, kernel, support
    vectors, non-zero weights, file size (every model format svmtool reads; - for stdin); or a
    binary data cache: rows, features, non-zeros, and its instance weights (sum, min, max)."""
    d = describe(model_file)
    if as_json:
        import json

        click.echo(json.dumps(d))
    else:
        click.echo("\n".join(text_lines(d)))

"""Model files: read and write them in the formats of the reference tools.

Writing: :func:`save_model` writes a :class:`svmtool.models.linear.LinearModel` in LIBLINEAR's layout
(``solver_type``, ``nr_class``, ``label``, ``nr_feature``, ``bias``, ``rho``, ``w``, then one row
per feature, each number followed by a space), numbers as ``%.17g`` so they read back exactly,
independent of the locale (Python's ``%`` formatting never consults it).  ``-`` writes to stdout;
every path goes through :func:`svmtool.io.output.open_output`.

Reading: :func:`load_model` sniffs the first line and hands the text to the reader of that
format (the table :data:`READERS`):

* ``solver_type ...``       -- LIBLINEAR (:mod:`svmtool.io.liblinear_model`);
* ``svm_type ...``          -- LIBSVM kernel models (:mod:`svmtool.io.libsvm_model`; written too,
  from a :class:`svmtool.models.kernel.KernelModel`);
* ``svmtool_early_model 1`` -- DC-SVM early-prediction models (:mod:`svmtool.io.early_model`);
* ``SVM-light Version ...`` -- SVMlight / SVMperf models, linear or kernel
  (:mod:`svmtool.io.svmlight_model`).

Readers are strict and every complaint is a :class:`svmtool.errors.ModelFormatError` naming the
file, the line and the reason: an unknown key, a missing required key, a non-numeric value, a
weight row with the wrong number of values, a truncated ``w`` section, labels that disagree with
``nr_class``, an empty or binary file.
"""

import sys

from svmtool.errors import ModelFormatError
from svmtool.io.output import open_output
from svmtool.io.model_text import decode, first_line


def save_model(model, path, fmt=None, threads=1) -> None:
    """Write ``model`` to ``path`` (``-``: stdout) in its own format: LIBLINEAR's for a linear
    model, LIBSVM's for a kernel model (see :mod:`svmtool.io.output`).

    ``fmt="svmlight"`` (the version line SVMlight 6.02's svm_classify reads) or ``"svmperf"``
    (the one SVMperf's svm_perf_classify reads) writes a linear one-column model, or a
    two-class / regression kernel model, in SVMlight's format instead
    (:mod:`svmtool.io.svmlight_model`); with ``fmt=None`` models whose ``report`` asks for it
    (ranking models, models read from SVMlight files) are written that way too.  ``threads``:
    a large LIBLINEAR model's numbers are formatted on up to that many threads (None: the
    default count)."""
    if fmt is None and getattr(model, "report", None) and \
            model.report.get("model_format") in ("svmlight", "svmperf"):
        fmt = model.report["model_format"]
    if fmt in ("svmlight", "svmperf"):
        from svmtool.io.svmlight_model import svmlight_text

        text = svmlight_text(model, fmt=fmt)
    else:
        text = _model_text(model, threads)
    with open_output(path) as f:
        f.write(text)


def _model_text(model, threads=1) -> str:
    """The file text of any model: LIBLINEAR, LIBSVM (KernelModel) or early (EarlyModel)."""
    # each model module is looked up, not imported: a model of a kind whose module was never
    # loaded cannot exist (and svm-train need not import DC-SVM's early model, nor the linear
    # one, to save its own)
    linear = sys.modules.get("svmtool.models.linear")
    if linear is not None and isinstance(model, linear.LinearModel):
        from svmtool.io.liblinear_model import liblinear_text

        return liblinear_text(model, threads)
    kernel = sys.modules.get("svmtool.models.kernel")
    if kernel is not None and isinstance(model, kernel.KernelModel):
        from svmtool.io.libsvm_model import libsvm_text

        return libsvm_text(model)
    early = sys.modules.get("svmtool.models.early")
    if early is not None and isinstance(model, early.EarlyModel):
        from svmtool.io.early_model import early_text

        return early_text(model)
    raise TypeError(f"cannot save a {type(model).__name__}")


def _read_liblinear(text, name):
    from svmtool.io.liblinear_model import read_liblinear

    return read_liblinear(text, name)


def _read_libsvm(text, name):
    from svmtool.io.libsvm_model import read_libsvm

    return read_libsvm(text, name)


def _read_early(text, name):
    from svmtool.io.early_model import read_early

    return read_early(text, name)


def _read_svmlight(text, name):
    from svmtool.io.svmlight_model import read_svmlight_model

    return read_svmlight_model(text, name)


def _first_word(line):
    words = line.split()
    return words[0] if words else ""


# name, test on the first non-blank line, reader(text, name) -> model
READERS = [
    ("LIBLINEAR", lambda first: _first_word(first) == "solver_type", _read_liblinear),
    ("LIBSVM", lambda first: _first_word(first) == "svm_type", _read_libsvm),
    ("svmtool-early", lambda first: _first_word(first) == "svmtool_early_model", _read_early),
    ("SVMlight", lambda first: first.startswith("SVM-light Version"), _read_svmlight),
]


def model_format(text) -> str:
    """Name of the format of a model file's text, or raise ValueError."""
    _, first = first_line(text)
    for fmt, test, _ in READERS:
        if first and test(first):
            return fmt
    raise ValueError("unknown model format")


def load_model(path):
    """Read a model file (``-``: stdin), telling its format from the first line."""
    from svmtool.io.model_text import read_bytes

    raw, name = read_bytes(path)
    text = decode(raw, name)
    number, first = first_line(text)
    for _, test, reader in READERS:
        if test(first):
            return reader(text, name)
    shown = first if len(first) <= 40 else first[:40] + "..."
    raise ModelFormatError(name, number,
                           f"not a model file: the first line {shown!r} starts with none of "
                           f"solver_type (LIBLINEAR), svm_type (LIBSVM), "
                           f"'SVM-light Version' (SVMlight)")

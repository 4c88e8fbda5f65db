"""Model files: read and write them in the formats of the reference tools.

Writing: :func:`save_model` writes a :class:`svmtool.model.LinearModel` in LIBLINEAR's layout
(``solver_type``, ``nr_class``, ``label``, ``nr_feature``, ``bias``, ``rho``, ``w``, then one row
per feature, each number followed by a space), numbers as ``%.17g`` so they read back exactly,
independent of the locale (Python's ``%`` formatting never consults it).  ``-`` writes to stdout;
files are written atomically.

Reading: :func:`load_model` sniffs the first line and hands the text to the reader of that
format (the table :data:`READERS`):

* ``solver_type ...``       -- LIBLINEAR (read here);
* ``svm_type ...``          -- LIBSVM kernel models (:mod:`svmtool.io.libsvm_model`; written too,
  from a :class:`svmtool.kernel_model.KernelModel`);
* ``svmtool_early_model 1`` -- DC-SVM early-prediction models (same module);
* ``SVM-light Version ...`` -- SVMlight / SVMperf linear models (:mod:`svmtool.io.svmlight_model`).

Readers are strict and every complaint is a :class:`svmtool.errors.ModelFormatError` naming the
file, the line and the reason: an unknown key, a missing required key, a non-numeric value, a
weight row with the wrong number of values, a truncated ``w`` section, labels that disagree with
``nr_class``, an empty or binary file.
"""

import sys

import numpy as np

from svmtool.errors import ModelFormatError
from svmtool.model import (CLASSIFICATION_TYPES, ONECLASS_TYPES, REGRESSION_TYPES, SOLVER_TYPES,
                           LinearModel, nr_w_for)
from svmtool.io.atomic import atomic_output


# ------------------------------------------------------------------------------------------------
# writing

def format_g17(v) -> str:
    """``%.17g`` of a float: enough digits to read back the same double."""
    return "%.17g" % v


def format_label(v) -> str:
    """A class label as LIBLINEAR writes it: an integer when integral, else ``%.17g``."""
    v = float(v)
    if np.isfinite(v) and v == int(v):
        return "%d" % int(v)
    return "%.17g" % v


def liblinear_text(model: LinearModel) -> str:
    """The LIBLINEAR model file of ``model`` as one string."""
    problem = model.check()
    if problem:
        raise ValueError(f"cannot save an inconsistent model: {problem}")
    head = [f"solver_type {model.solver_type}", f"nr_class {model.nr_class}"]
    if model.labels is not None:
        head.append("label " + " ".join(format_label(v) for v in model.labels))
    head.append(f"nr_feature {model.nr_feature}")
    head.append(f"bias {format_g17(model.bias)}")
    if model.is_oneclass():
        head.append(f"rho {format_g17(model.rho)}")
    head.append("w")
    row_format = "%.17g " * model.nr_w
    rows = [row_format % tuple(r) for r in model.w.tolist()]
    return "\n".join(head + rows) + "\n"


def save_model(model: LinearModel, path, fmt=None) -> None:
    """Write ``model`` to ``path`` (``-``: stdout) in LIBLINEAR's format, atomically.

    ``fmt="svmlight"`` writes a linear one-column model in SVMperf's format instead
    (:mod:`svmtool.io.svmlight_model`); with ``fmt=None`` models whose ``report`` asks for it
    (ranking models) are written that way too."""
    if fmt is None and isinstance(model, LinearModel) and model.report and \
            model.report.get("model_format") == "svmlight":
        fmt = "svmlight"
    if fmt == "svmlight":
        from svmtool.io.svmlight_model import svmlight_text

        text = svmlight_text(model)
    else:
        text = _model_text(model)
    with atomic_output(path) as f:
        f.write(text)


# ------------------------------------------------------------------------------------------------
# reading

def _read_bytes(path):
    if path == "-":
        return sys.stdin.buffer.read(), "<stdin>"
    with open(path, "rb") as f:
        return f.read(), str(path)


def _decode(raw: bytes, name: str) -> str:
    if not raw.strip():
        raise ModelFormatError(name, None, "empty file, not a model")
    nul = raw.find(b"\0")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise ModelFormatError(name, line, "binary data (a NUL byte), not a text model file")
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ModelFormatError(
            name, line, f"byte 0x{raw[e.start]:02x} is not ASCII: not a text model file") from None


def _first_line(text):
    """(1-based number, content) of the first non-blank line."""
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            return number, line.strip()
    return 1, ""


def _read_libsvm(text, name):
    from svmtool.io.libsvm_model import read_libsvm

    return read_libsvm(text, name)


def _read_early(text, name):
    from svmtool.io.libsvm_model import read_early

    return read_early(text, name)


def _model_text(model) -> str:
    """The file text of any model: LIBLINEAR, LIBSVM (KernelModel) or early (EarlyModel)."""
    if isinstance(model, LinearModel):
        return liblinear_text(model)
    from svmtool.io.libsvm_model import early_text, libsvm_text
    from svmtool.kernel_model import EarlyModel, KernelModel

    if isinstance(model, KernelModel):
        return libsvm_text(model)
    if isinstance(model, EarlyModel):
        return early_text(model)
    raise TypeError(f"cannot save a {type(model).__name__}")


def _read_svmlight(text, name):
    from svmtool.io.svmlight_model import read_svmlight_model

    return read_svmlight_model(text, name)


def _parse_float(token, name, line, what):
    # float() also takes '1_000' and surrounding blanks; C's strtod does not: refuse them.
    if "_" not in token:
        try:
            return float(token)
        except ValueError:
            pass
    raise ModelFormatError(name, line, f"{what}: {token!r} is not a number")


def _parse_int(token, name, line, what, minimum=0):
    try:
        if "_" in token:
            raise ValueError
        v = int(token)
    except ValueError:
        raise ModelFormatError(name, line, f"{what}: {token!r} is not an integer") from None
    if v < minimum:
        raise ModelFormatError(name, line, f"{what} must be >= {minimum} (got {v})")
    return v


def _read_liblinear(text, name):
    lines = text.split("\n")
    header = {}          # key -> (line number, tokens after the key)
    w_line = None
    for number, line in enumerate(lines, 1):
        tokens = line.split()
        if not tokens:
            continue
        key = tokens[0]
        if key == "w":
            if len(tokens) != 1:
                raise ModelFormatError(name, number, "text after 'w' on its line")
            w_line = number
            break
        if key not in ("solver_type", "nr_class", "label", "nr_feature", "bias", "rho"):
            raise ModelFormatError(name, number,
                                   f"unknown key {key!r} in the header of a LIBLINEAR model")
        if key in header:
            raise ModelFormatError(name, number,
                                   f"key {key!r} given twice (first on line {header[key][0]})")
        if key != "label" and len(tokens) != 2:
            raise ModelFormatError(name, number, f"{key} takes one value, found {len(tokens) - 1}")
        header[key] = (number, tokens[1:])

    missing = [k for k in ("solver_type", "nr_class", "nr_feature", "bias") if k not in header]
    if w_line is None:
        missing.append("w")
    if missing:
        at = len(lines) if w_line is None else w_line
        hint = " (truncated file?)" if w_line is None else ""
        raise ModelFormatError(name, at, "missing " + ", ".join(repr(k) for k in missing)
                               + " in the LIBLINEAR model header" + hint)

    number, (solver_type,) = header["solver_type"]
    if solver_type not in SOLVER_TYPES:
        raise ModelFormatError(name, number, f"unknown solver_type {solver_type!r} "
                                             f"(LIBLINEAR knows {', '.join(SOLVER_TYPES)})")
    number, (tok,) = header["nr_class"]
    nr_class = _parse_int(tok, name, number, "nr_class", minimum=1)
    number, (tok,) = header["nr_feature"]
    nr_feature = _parse_int(tok, name, number, "nr_feature", minimum=0)
    number, (tok,) = header["bias"]
    bias = _parse_float(tok, name, number, "bias")

    labels = None
    if "label" in header:
        number, toks = header["label"]
        labels = np.array([_parse_float(t, name, number, "label") for t in toks], dtype=np.float64)
        if len(labels) != nr_class:
            raise ModelFormatError(name, number, f"{len(labels)} labels but nr_class is {nr_class}"
                                                 f" (line {header['nr_class'][0]})")
    elif solver_type in CLASSIFICATION_TYPES:
        raise ModelFormatError(name, w_line, f"missing 'label' line, which a {solver_type} "
                                             f"model needs")
    if solver_type in REGRESSION_TYPES or solver_type in ONECLASS_TYPES:
        if nr_class != 2:
            raise ModelFormatError(name, header["nr_class"][0],
                                   f"nr_class must be 2 for a {solver_type} model (got {nr_class})")
        labels = None    # a prediction of these models is a value or +1/-1, never a label

    rho = None
    if "rho" in header:
        number, (tok,) = header["rho"]
        rho = _parse_float(tok, name, number, "rho")
    if solver_type in ONECLASS_TYPES and rho is None:
        raise ModelFormatError(name, w_line, "missing 'rho' line, which a one-class model needs")
    if solver_type not in ONECLASS_TYPES:
        rho = None

    nr_w = nr_w_for(solver_type, nr_class)
    n_rows = nr_feature + (1 if bias >= 0 else 0)
    w = _read_weights(lines, w_line, n_rows, nr_w, name)
    return LinearModel(solver_type=solver_type, labels=labels, nr_feature=nr_feature, bias=bias,
                       w=w, rho=rho)


def _read_weights(lines, w_line, n_rows, nr_w, name):
    """The ``n_rows`` x ``nr_w`` weights on the lines after line ``w_line`` (1-based)."""
    body = lines[w_line:w_line + n_rows]
    rows = [line.split() for line in body]
    found = len(rows)
    # a file without its final newline splits into one empty string more: count real rows only
    while found and not rows[found - 1] and w_line + found == len(lines):
        found -= 1
    if found < n_rows or any(not r for r in rows[:n_rows]):
        first_blank = next((i for i, r in enumerate(rows[:found]) if not r), None)
        if first_blank is not None:
            raise ModelFormatError(name, w_line + 1 + first_blank,
                                   f"blank line in the w section: expected {n_rows} weight rows "
                                   f"of {nr_w} values")
        raise ModelFormatError(name, w_line + found + 1 if found else w_line + 1,
                               f"expected {n_rows} weight rows, found {found} (truncated file?)")
    bad = [i for i, r in enumerate(rows) if len(r) != nr_w]
    if bad:
        i = bad[0]
        raise ModelFormatError(name, w_line + 1 + i,
                               f"expected {nr_w} weight{'s' if nr_w != 1 else ''} on this row, "
                               f"found {len(rows[i])}")
    for number in range(w_line + n_rows, len(lines)):
        if lines[number].strip():
            raise ModelFormatError(name, number + 1,
                                   f"unexpected text after the {n_rows} weight rows")
    flat = [t for r in rows for t in r]
    try:
        if any("_" in t for t in flat):
            raise ValueError
        w = np.array([float(t) for t in flat], dtype=np.float64)
    except ValueError:
        # find the culprit for the message
        for i, r in enumerate(rows):
            for t in r:
                _parse_float(t, name, w_line + 1 + i, "weight")
        raise   # pragma: no cover - the loop above always finds it
    return w.reshape(n_rows, nr_w)


# name, test on the first non-blank line, reader(text, name) -> model
READERS = [
    ("LIBLINEAR", lambda first: first.split()[0] == "solver_type", _read_liblinear),
    ("LIBSVM", lambda first: first.split()[0] == "svm_type", _read_libsvm),
    ("svmtool-early", lambda first: first.split()[0] == "svmtool_early_model", _read_early),
    ("SVMlight", lambda first: first.startswith("SVM-light Version"), _read_svmlight),
]


def model_format(text) -> str:
    """Name of the format of a model file's text, or raise ValueError."""
    _, first = _first_line(text)
    for fmt, test, _ in READERS:
        if first and test(first):
            return fmt
    raise ValueError("unknown model format")


def load_model(path):
    """Read a model file (``-``: stdin), telling its format from the first line."""
    raw, name = _read_bytes(path)
    text = _decode(raw, name)
    number, first = _first_line(text)
    for _, test, reader in READERS:
        if test(first):
            return reader(text, name)
    shown = first if len(first) <= 40 else first[:40] + "..."
    raise ModelFormatError(name, number,
                           f"not a model file: the first line {shown!r} starts with none of "
                           f"solver_type (LIBLINEAR), svm_type (LIBSVM), "
                           f"'SVM-light Version' (SVMlight)")

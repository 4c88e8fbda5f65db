"""LIBLINEAR model files (LinearModel), read and written.

Layout (linear.cpp's ``save_model``): ``solver_type``, ``nr_class``, ``label``, ``nr_feature``,
``bias``, ``rho`` (one-class only), ``w``, then one line per feature (and one for the bias
feature), each with ``nr_w`` numbers followed by a space.  Numbers are ``%.17g`` so they read back
exactly, independent of the locale.  The reader is strict: an unknown key, a missing required key,
a non-numeric value, a weight row with the wrong number of values, a truncated ``w`` section or
labels that disagree with ``nr_class`` are each a ModelFormatError naming file and line.
"""

import numpy as np

from svmtool.errors import ModelFormatError
from svmtool.io.model_text import format_g17, format_label, parse_float, parse_int
from svmtool.models.linear import (CLASSIFICATION_TYPES, ONECLASS_TYPES, REGRESSION_TYPES,
                                   SOLVER_TYPES, LinearModel, nr_w_for)


def liblinear_text(model: LinearModel, threads=1) -> str:
    """The LIBLINEAR model file of ``model`` as one string (its ``w`` section formatted on up
    to ``threads`` threads)."""
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
    return "\n".join(head) + "\n" + weight_section(np.asarray(model.w, dtype=np.float64),
                                                    threads)


# below this many numbers Python's ``%`` formats the w section in a few milliseconds, and a
# small model is written without loading the jitted kernels (and numba where they are not
# compiled ahead of time)
JIT_MIN_NUMBERS = 4096
# numbers at least in each thread's share of a section formatted on threads
THREAD_MIN_NUMBERS = 1 << 18


def weight_section(w, threads=1):
    """The ``w`` section: each row's numbers as ``%.17g``, each followed by a space, and a newline
    after each row.  Large sections by the jitted kernels of :mod:`svmtool.io._g17_jit` (the
    values they leave, outside about 1e-6 to 1e16, by Python's ``%``), in row ranges on up to
    ``threads`` threads (None: the default count; the same text), small ones by Python."""
    if w.size < JIT_MIN_NUMBERS:
        row_format = "%.17g " * w.shape[1]
        return "".join(row_format % tuple(r) + "\n" for r in w.tolist())
    if threads is None:
        from svmtool.ops.cores import default_threads

        threads = default_threads()
    rows = w.shape[0]
    parts = max(1, min(int(threads or 1), w.size // THREAD_MIN_NUMBERS, rows))
    if parts == 1:
        return _section_bytes(w).decode("ascii")
    from concurrent.futures import ThreadPoolExecutor

    from svmtool.ops.cores import run_parts

    cuts = [k * rows // parts for k in range(parts + 1)]
    with ThreadPoolExecutor(parts - 1, thread_name_prefix="svmtool-write") as pool:
        chunks = run_parts(pool, lambda k: _section_bytes(w[cuts[k]:cuts[k + 1]]), parts)
    return b"".join(chunks).decode("ascii")


def _section_bytes(w):
    """The ``w`` section's text of the rows ``w`` as bytes (the jitted kernels)."""
    from svmtool.io._format_jit import FAIL
    from svmtool.io._g17_jit import MAX_G17_CHARS, g17_digits, write_g17_matrix

    vals = np.ascontiguousarray(w).reshape(-1)
    m = np.empty(len(vals), dtype=np.int64)
    e = np.empty(len(vals), dtype=np.int32)
    blob, off = np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64)
    if g17_digits(vals, m, e):
        texts = ["%.17g" % v for v in vals[e == FAIL].tolist()]
        # (a bytearray: a numpy view of bytes is read-only, another type for numba)
        blob = np.frombuffer(bytearray("".join(texts).encode("ascii")), dtype=np.uint8)
        off = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(t) for t in texts], out=off[1:])
    out = np.empty(len(vals) * MAX_G17_CHARS + w.shape[0] + 1, dtype=np.uint8)
    n = write_g17_matrix(vals, w.shape[0], w.shape[1], m, e, blob, off, out)
    return out[:n].tobytes()


def read_liblinear(text, name):
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
        if number == len(lines):
            # the header's last line without its newline: the file was cut there
            raise ModelFormatError(name, number, f"the file ends inside the header, at "
                                                 f"{line.strip()!r} (truncated file?)")
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
    nr_class = parse_int(tok, name, number, "nr_class", minimum=1)
    number, (tok,) = header["nr_feature"]
    nr_feature = parse_int(tok, name, number, "nr_feature", minimum=0)
    number, (tok,) = header["bias"]
    bias = parse_float(tok, name, number, "bias")

    labels = None
    if "label" in header:
        number, toks = header["label"]
        labels = np.array([parse_float(t, name, number, "label") for t in toks], dtype=np.float64)
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
        rho = parse_float(tok, name, number, "rho")
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
        if any("_" in line for line in body):       # float() would take "1_0"; LIBLINEAR not
            raise ValueError
        # most weights of a sparse problem's model are written as "0" (see _weight_lines):
        # only the others go through float(), the costly step per value
        w = np.zeros(len(flat), dtype=np.float64)
        nonzero = [i for i, t in enumerate(flat) if t != "0"]
        w[nonzero] = list(map(float, [flat[i] for i in nonzero]))
        if not np.all(np.isfinite(w)):
            raise ValueError
    except ValueError:
        # find the culprit for the message
        for i, r in enumerate(rows):
            for t in r:
                parse_float(t, name, w_line + 1 + i, "weight")
        raise   # pragma: no cover - the loop above always finds it
    return w.reshape(n_rows, nr_w)

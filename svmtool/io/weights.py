"""Instance-weight files: LIBLINEAR-weights' and LIBSVM-weights' ``-W weight_file``.

The file holds one weight a line, the weight of the example on the same line of the training
data (blank and comment lines of the data are not examples, so they have no line here): a
decimal number, finite, 0 or more (0: the example takes no part).  Row ``i``'s C becomes
``C * w_class * W_i``.  Anything else -- a line that is not one number, NaN or Inf, a negative
weight, an empty file, more or fewer weights than examples -- is a
:class:`~svmtool.errors.DataFormatError` naming the file, the line and the reason, raised
before any training.

A weight file and SVMlight ``cost:`` tokens in the training data are two answers to one
question: given together they are refused (:func:`attach_weights`).
"""

import re

import numpy as np

from svmtool.errors import DataFormatError, ParameterError

# a decimal number as the data's grammar writes one (no nan, inf, hex or underscores)
_NUMBER = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NOT_FINITE = re.compile(rb"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


def _weight(token, path, line):
    """The weight of one stripped line, or a DataFormatError naming it."""
    shown = token[:40].decode("utf-8", "replace")
    if not token:
        raise DataFormatError(path, line, "empty line: expected one weight")
    if _NOT_FINITE.fullmatch(token):
        raise DataFormatError(path, line, f"weight {shown!r} is not finite (NaN or Inf)")
    if not _NUMBER.fullmatch(token):
        raise DataFormatError(path, line, f"weight {shown!r} is not a number")
    value = float(token)
    if value - value != 0.0:
        raise DataFormatError(path, line, f"weight {shown!r} is not finite (it overflows)")
    if value < 0.0:
        raise DataFormatError(path, line, f"weight {shown!r} is negative (a weight is 0 or "
                                          f"more)")
    return value


def read_weights(path, n_rows=None):
    """The weights of ``path`` (float64), checked; ``n_rows``: the number of examples they
    must match (None: any)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise DataFormatError(path, None, f"cannot read the weight file: {e.strerror}") from None
    lines = raw.split(b"\n")
    if lines and lines[-1].strip() == b"":
        lines.pop()                     # the newline that ends the last line
    if not lines:
        raise DataFormatError(path, None, "empty weight file: no weights")
    weights = np.array([_weight(s.strip(b" \t\r"), path, k + 1) for k, s in enumerate(lines)],
                       dtype=np.float64)
    if n_rows is not None and len(weights) != n_rows:
        where = len(weights) if len(weights) < n_rows else n_rows + 1
        raise DataFormatError(path, where, f"{len(weights)} weights for {n_rows} examples "
                                           f"(one weight a line, one line an example)")
    return weights


def attach_weights(problem, path):
    """``problem`` with the weights of the weight file ``path`` (None: as it is); refused when
    its data carries ``cost:`` tokens already."""
    if path is None:
        return problem
    if problem.weights is not None:
        raise ParameterError(f"{problem.source} has cost: tokens and -W {path} gives weights "
                             f"too: give the instance weights one way")
    problem.weights = read_weights(path, problem.n_rows)
    return problem

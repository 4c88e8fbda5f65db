"""Feature scaling with LIBSVM svm-scale's semantics, and svm-scale's range files.

What svm-scale does (LIBSVM 3.x ``svm-scale.c``), and so what this module does:

* Each feature ``j`` (1 .. the largest index in the data or in a restored range file) gets its
  minimum and maximum over **all** rows, counting the implicit zero of every row where the feature
  is absent.  A feature that no row has gets min = max = 0.
* A value ``v`` of feature ``j`` becomes ``lower`` if ``v == min``, ``upper`` if ``v == max``, else
  ``lower + (upper - lower) * (v - min) / (max - min)`` (evaluated in that order, in doubles).
  Implicit zeros are scaled too: with the default ``[-1, 1]`` a sparse non-negative feature's
  zeros become -1 and the output gets denser (svm-scale warns and suggests ``-l 0``; so do we).
* Features with ``min == max`` are left out of the output entirely; scaled values equal to 0 are
  dropped from the sparse row.
* The range file: an optional ``y`` block (``y`` / ``y_lower y_upper`` / ``y_min y_max``), then
  ``x`` / ``lower upper`` / one ``index min max`` line per feature whose min != max.
* Restoring (``svm-scale -r``): ``lower``/``upper`` and each listed feature's min/max come from the
  file; a feature that the file does not list keeps the min/max of the data being scaled (and
  is scaled with them if it varies there -- svm-scale warns about it, and so do we; it is
  usually a feature that was constant on the training data).  A ``y`` block in the file scales
  the labels the same way.

Differences, on purpose: svm-scale prints scaled values with ``%g`` (6 significant digits); here
they stay full doubles (the writer prints them exactly), and range files are written with the
shortest exact decimals instead of ``%.16g``/``%.17g`` -- svm-scale reads both.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from svmtool._jit import njit
from svmtool.errors import DataFormatError, ParameterError
from svmtool.io.output import open_output
from svmtool.problem import Problem


@dataclass
class Ranges:
    """Scaling parameters: target interval and the min/max of each listed feature.

    ``index`` holds one-based feature numbers (column ``j`` is feature ``j + 1``), increasing;
    ``fmin``/``fmax`` their minimum and maximum.  ``y`` is ``(y_lower, y_upper, y_min, y_max)`` when
    labels are scaled.
    """

    lower: float
    upper: float
    index: np.ndarray
    fmin: np.ndarray
    fmax: np.ndarray
    y: Optional[tuple] = None


def check_bounds(lower, upper, what="scale"):
    if not (np.isfinite(lower) and np.isfinite(upper) and upper > lower):
        raise ParameterError(f"--{what}: the upper bound must be greater than the lower bound "
                             f"(got {lower:g},{upper:g})")


@njit
def _min_max(indices, data, n_rows, n, fmin, fmax):
    count = np.zeros(n, dtype=np.int64)
    for k in range(len(indices)):
        c = indices[k]
        v = data[k]
        if count[c] == 0:
            fmin[c] = v
            fmax[c] = v
        else:
            if v < fmin[c]:
                fmin[c] = v
            if v > fmax[c]:
                fmax[c] = v
        count[c] += 1
    for c in range(n):
        if count[c] < n_rows:          # some row has an implicit zero here
            if count[c] == 0 or fmin[c] > 0.0:
                fmin[c] = 0.0
            if count[c] == 0 or fmax[c] < 0.0:
                fmax[c] = 0.0


def feature_min_max(problem, n=None):
    """(fmin, fmax) of every column 0..n-1 over all rows, implicit zeros included."""
    n = problem.n_features if n is None else int(n)
    indptr = np.asarray(problem.indptr)
    lo, hi = int(indptr[0]), int(indptr[-1])
    fmin = np.zeros(n, dtype=np.float64)
    fmax = np.zeros(n, dtype=np.float64)
    if n:
        _min_max(np.ascontiguousarray(problem.indices[lo:hi]),
                 np.ascontiguousarray(problem.data[lo:hi], dtype=np.float64),
                 problem.n_rows, n, fmin, fmax)
    return fmin, fmax


def compute_ranges(problem, lower=-1.0, upper=1.0, y_range=None):
    """The ranges svm-scale would save for ``problem`` (``svm-scale -l lower -u upper -s``).

    ``y_range``: ``(y_lower, y_upper)`` to scale the labels too (svm-scale ``-y``).
    """
    lower, upper = float(lower), float(upper)
    check_bounds(lower, upper)
    fmin, fmax = feature_min_max(problem)
    keep = np.flatnonzero(fmin != fmax)
    y = None
    if y_range is not None:
        y_lower, y_upper = float(y_range[0]), float(y_range[1])
        check_bounds(y_lower, y_upper, "scale-y")
        yy = np.asarray(problem.y, dtype=np.float64)
        y = (y_lower, y_upper, float(yy.min()), float(yy.max())) if len(yy) else None
    return Ranges(lower, upper, (keep + 1).astype(np.int64), fmin[keep], fmax[keep], y)


def _scale_vec(v, lower, upper, lo, hi):
    """svm-scale's map of values v (arrays; lo, hi scalars or arrays), elementwise: exact
    comparisons first, then lower + (upper - lower) * (v - lo) / (hi - lo) in that order."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lin = lower + (upper - lower) * (v - lo) / (hi - lo)
    return np.where(v == lo, lower, np.where(v == hi, upper, lin))


@njit
def _scale_rows(indptr, indices, data, n, active, fmin, fmax, lower, upper, dense_cols,
                dense_vals, out_indptr, out_indices, out_data):
    """Scale every row; write the kept entries (column order) and return their count."""
    z = 0
    nd = len(dense_cols)
    span = upper - lower
    lo0 = indptr[0]
    out_indptr[0] = 0
    for r in range(len(indptr) - 1):
        d = 0
        for k in range(indptr[r] - lo0, indptr[r + 1] - lo0):
            c = indices[k]
            # the dense columns before c take the scaled value of an implicit zero
            while d < nd and dense_cols[d] < c:
                out_indices[z] = dense_cols[d]
                out_data[z] = dense_vals[d]
                z += 1
                d += 1
            if d < nd and dense_cols[d] == c:
                d += 1
            if c >= n or not active[c]:
                continue
            v = data[k]
            if v == fmin[c]:
                s = lower
            elif v == fmax[c]:
                s = upper
            else:
                s = lower + span * (v - fmin[c]) / (fmax[c] - fmin[c])
            if s != 0.0:
                out_indices[z] = c
                out_data[z] = s
                z += 1
        while d < nd:
            out_indices[z] = dense_cols[d]
            out_data[z] = dense_vals[d]
            z += 1
            d += 1
        out_indptr[r + 1] = z
    return z


def scale(problem, ranges, *, warn=None):
    """``problem`` scaled like ``svm-scale -r`` with ``ranges`` (see the module notes).

    ``warn(message)`` receives svm-scale's warnings (features missing from the ranges, output
    denser than input); by default they go to :func:`warnings.warn`.
    """
    if warn is None:
        import warnings

        def warn(msg):
            warnings.warn(msg, RuntimeWarning, stacklevel=3)

    lower, upper = float(ranges.lower), float(ranges.upper)
    check_bounds(lower, upper)
    idx = np.asarray(ranges.index, dtype=np.int64)
    if len(idx) and idx.min() < 1:
        raise ParameterError("range file: feature indices start at 1")
    n = max(problem.n_features, int(idx.max()) if len(idx) else 0)
    fmin, fmax = feature_min_max(problem, n)
    listed = np.zeros(n, dtype=bool)
    listed[idx - 1] = True
    unlisted_varying = np.flatnonzero(~listed & (fmin != fmax))
    if len(unlisted_varying):
        shown = ", ".join(str(j + 1) for j in unlisted_varying[:10])
        more = f" and {len(unlisted_varying) - 10} more" if len(unlisted_varying) > 10 else ""
        warn(f"feature{'s' if len(unlisted_varying) > 1 else ''} {shown}{more} of "
             f"{problem.source} not in the ranges: scaled with their own min/max, as svm-scale "
             f"does")
    fmin[idx - 1] = np.asarray(ranges.fmin, dtype=np.float64)
    fmax[idx - 1] = np.asarray(ranges.fmax, dtype=np.float64)
    active = fmin != fmax
    # the value an implicit zero takes in each active column (svm-scale's formula, vectorised)
    zero_val = _scale_vec(np.zeros(n), lower, upper, fmin, fmax)
    zero_val[~active] = 0.0
    dense_cols = np.flatnonzero(active & (zero_val != 0.0)).astype(np.int64)
    dense_vals = zero_val[dense_cols]
    n_rows = problem.n_rows
    indptr = np.ascontiguousarray(problem.indptr, dtype=np.int64)
    lo, hi = int(indptr[0]), int(indptr[-1])
    indices = np.ascontiguousarray(problem.indices[lo:hi])
    data = np.ascontiguousarray(problem.data[lo:hi], dtype=np.float64)
    nnz_ub = (hi - lo) + n_rows * len(dense_cols)
    idx_dtype = np.int32 if n <= np.iinfo(np.int32).max else np.int64
    out_indptr = np.empty(n_rows + 1, dtype=np.int64)
    out_indices = np.empty(nnz_ub, dtype=idx_dtype)
    out_data = np.empty(nnz_ub, dtype=np.float64)
    z = _scale_rows(indptr, indices, data, n, active, fmin, fmax, lower, upper, dense_cols,
                    dense_vals, out_indptr, out_indices, out_data)
    if z < nnz_ub:
        out_indices = out_indices[:z].copy()
        out_data = out_data[:z].copy()
    if z > hi - lo:
        hint = (": if feature values are non-negative and sparse, scale with a lower bound of 0 "
                "(--scale 0,1)" if lower != 0.0 else "")
        warn(f"original #nonzeros {hi - lo} < new #nonzeros {z}{hint}")
    y = np.asarray(problem.y, dtype=np.float64)
    if ranges.y is not None:
        y_lower, y_upper, y_min, y_max = (float(v) for v in ranges.y)
        if y_min != y_max:
            y = _scale_vec(y, y_lower, y_upper, y_min, y_max)
        else:
            y = np.where(y == y_min, y_lower, y)
    return Problem(out_indptr, out_indices, out_data, y, n, qid=problem.qid,
                   comments=problem.comments, weights=problem.weights, source=problem.source)


def _num(x):
    """Shortest exact decimal of a float, without a trailing ``.0``."""
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


def format_ranges(ranges):
    """The text of a range file in svm-scale's layout."""
    lines = []
    if ranges.y is not None:
        y_lower, y_upper, y_min, y_max = ranges.y
        lines += ["y", f"{_num(y_lower)} {_num(y_upper)}", f"{_num(y_min)} {_num(y_max)}"]
    lines += ["x", f"{_num(ranges.lower)} {_num(ranges.upper)}"]
    for j, a, b in zip(np.asarray(ranges.index).tolist(), np.asarray(ranges.fmin).tolist(),
                       np.asarray(ranges.fmax).tolist()):
        lines.append(f"{j} {_num(a)} {_num(b)}")
    return "\n".join(lines) + "\n"


def save_ranges(ranges, path):
    """Write a range file (``"-"`` for stdout; see :mod:`svmtool.io.output`) that svm-scale -r can read."""
    with open_output(path, "w") as f:
        f.write(format_ranges(ranges))


# the largest feature number a range file may list: what a data file's index can be (at most
# 18 digits, see svmtool.io._grammar) and an int64 holds
_MAX_INDEX = 2**31 - 1     # as a model's feature count


def parse_ranges(text, name="<ranges>"):
    """Read the text of an svm-scale range file into :class:`Ranges`."""
    lines = text.splitlines()
    pos = 0

    def number(p, k, what):
        """A finite number (as strtod reads it, without '_' or NaN/infinity)."""
        try:
            if "_" in p:
                raise ValueError
            v = float(p)
        except ValueError:
            raise DataFormatError(name, k + 1,
                                  f"expected {what}, found {lines[k].strip()!r}") from None
        if not np.isfinite(v):
            raise DataFormatError(name, k + 1, f"{what}: {p!r} is not a finite number")
        return v

    def numbers(k, count, what):
        if k >= len(lines):
            raise DataFormatError(name, k + 1, f"missing {what}")
        parts = lines[k].split()
        if len(parts) != count:
            raise DataFormatError(name, k + 1, f"expected {what}, found {lines[k].strip()!r}")
        return [number(p, k, what) for p in parts]

    while pos < len(lines) and not lines[pos].strip():
        pos += 1
    y = None
    if pos < len(lines) and lines[pos].strip() == "y":
        y_lower, y_upper = numbers(pos + 1, 2, "'y_lower y_upper'")
        y_min, y_max = numbers(pos + 2, 2, "'y_min y_max'")
        y = (y_lower, y_upper, y_min, y_max)
        pos += 3
    if pos >= len(lines) or lines[pos].strip() != "x":
        found = repr(lines[pos].strip()) if pos < len(lines) else "the end of the file"
        raise DataFormatError(name, pos + 1, f"expected 'x' (an svm-scale range file), found "
                                             f"{found}")
    lower, upper = numbers(pos + 1, 2, "'lower upper'")
    if not upper > lower:
        raise DataFormatError(name, pos + 2, f"upper bound {upper:g} is not above lower {lower:g}")
    idx, fmins, fmaxs = [], [], []
    for k in range(pos + 2, len(lines)):
        parts = lines[k].split()
        if not parts:
            continue
        if len(parts) != 3:
            raise DataFormatError(name, k + 1, f"expected 'index min max', found "
                                               f"{lines[k].strip()!r}")
        try:
            if "_" in parts[0]:
                raise ValueError
            j = int(parts[0])
        except ValueError:
            raise DataFormatError(name, k + 1, f"expected 'index min max', found "
                                               f"{lines[k].strip()!r}") from None
        a, b = (number(p, k, "'index min max'") for p in parts[1:])
        if j < 1:
            raise DataFormatError(name, k + 1, f"feature index {j}: indices start at 1")
        if j > _MAX_INDEX:
            raise DataFormatError(name, k + 1, f"feature index {j} is too large: beyond what a "
                                               f"model can hold (at most {_MAX_INDEX} features)")
        idx.append(j)
        fmins.append(a)
        fmaxs.append(b)
    index = np.array(idx, dtype=np.int64)
    fmin = np.array(fmins, dtype=np.float64)
    fmax = np.array(fmaxs, dtype=np.float64)
    order = np.argsort(index, kind="stable")
    index, fmin, fmax = index[order], fmin[order], fmax[order]
    if len(index) > 1 and np.any(np.diff(index) == 0):
        dup = int(index[np.flatnonzero(np.diff(index) == 0)[0]])
        raise DataFormatError(name, None, f"feature {dup} is listed twice")
    return Ranges(lower, upper, index, fmin, fmax, y)


def restore_ranges(path):
    """Read a range file written by svm-scale -s or :func:`save_ranges`."""
    import os

    name = os.fspath(path)
    with open(name, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise DataFormatError(name, None, "not an svm-scale range file (not text)") from None
    return parse_ranges(text, name)


def iter_svm_scale_text(problem, rows_per_chunk=8192):
    """Scaled data as svm-scale prints it, in bytes chunks: the label with 17 significant
    digits, every feature as ``index:%g`` (six significant digits), each token followed by a
    space, one row a line.  ``svmtool convert --scale`` writes exact numbers instead; this is the
    byte-for-byte form of LIBSVM's own program, for ``svmtool svm-scale``.  A row's instance
    weight (SVMlight's ``cost:``, which LIBSVM's svm-scale does not read) is kept as a
    ``cost:<w>`` token after the label, its shortest exact decimal."""
    indptr, indices, data, y = problem.indptr, problem.indices, problem.data, problem.y
    weights = problem.weights
    n = problem.n_rows
    for start in range(0, n, rows_per_chunk):
        stop = min(n, start + rows_per_chunk)
        out = []
        for i in range(start, stop):
            a, b = int(indptr[i]), int(indptr[i + 1])
            toks = ["%.17g " % float(y[i])]
            if weights is not None:
                toks.append(f"cost:{_num(float(weights[i]))} ")
            toks.extend("%d:%g " % (int(j) + 1, float(v))
                        for j, v in zip(indices[a:b], data[a:b]))
            toks.append("\n")
            out.append("".join(toks))
        yield "".join(out).encode("ascii")


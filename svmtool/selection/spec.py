"""The grid of LIBSVM's ``tools/grid.py``: its ranges, its order, its lines and its files.

Everything here is what grid.py does, so that ``svmtool grid`` prints what grid.py prints and
reads and writes the ``.out`` files grid.py reads and writes:

* a range ``-log2c begin,end,step`` is ``begin, begin + step, ...`` while not past ``end``
  (the sum accumulated in floating point, as grid.py does); ``null`` leaves the parameter out;
  the defaults are ``-5,15,2`` for log2(C) and ``3,-15,-2`` for log2(gamma), kept as integers
  (grid.py prints them as ``-5``, a given range as ``-5.0``);
* the order of the cells: each range permuted centre-out (the middle value, then the middles of
  the two halves alternately, recursively), then rows of C and columns of gamma added in turn
  so that the resolution of the whole plane grows evenly (:func:`job_order`);
* a cell's rate is svm-train's ``Cross Validation Accuracy = %g%%`` read back as a number (6
  significant digits), and the best cell is updated as grid.py updates it: a higher rate, or the
  same rate at the same gamma with a smaller C (:func:`better`);
* a line per cell: ``[local] log2c log2g rate (best c=C, g=GAMMA, rate=RATE)``; the ``.out``
  line: ``log2c=.. log2g=.. rate=..``; the last line: ``C GAMMA RATE`` of the best cell;
* a linear SVR's grid (``-log2p``, svmtool's: grid.py has no p) has p, the width of the
  epsilon-insensitive loss, where gamma stands: ``p=`` in the lines, ``log2p=`` in the file;
* ``-resume FILE`` reads the ``rate=``, ``log2c=`` and ``log2g=`` fields of every line with
  grid.py's own patterns (the rate's also with an exponent).

Regression (svm-train's ``-s 3``, ``-s 4`` and the linear SVR solvers) has no accuracy:
svmtool's rate is then the cross-validated mean squared error (``%g``) and the best cell the
lowest (grid.py would read the first number after "Cross" and keep the highest).
"""

import math
import re
from dataclasses import dataclass
from typing import Optional

from svmtool.errors import ParameterError

DEFAULT_LOG2C = (-5, 15, 2)
DEFAULT_LOG2G = (3, -15, -2)
DEFAULT_FOLD = 5
PREFIX = "[local]"
RESUMED = "[resumed]"


def parse_range(opt, text):
    """``begin,end,step`` (floats, as grid.py's ``map(float, ...)``) or None for ``null``."""
    if text == "null":
        return None
    parts = text.split(",")
    if len(parts) != 3:
        raise ParameterError(f"{opt} takes begin,end,step or null (got {text!r})")
    try:
        begin, end, step = (float(p) for p in parts)
    except ValueError:
        raise ParameterError(f"{opt} takes begin,end,step or null: {text!r} holds a value "
                             f"that is not a number") from None
    if not all(math.isfinite(v) for v in (begin, end, step)):
        raise ParameterError(f"{opt}: begin, end and step must be finite numbers (got {text!r})")
    if step == 0:
        raise ParameterError(f"{opt} {text}: a step of 0 never reaches the end")
    if (end - begin) * step < 0:
        raise ParameterError(f"{opt} {text}: the step goes away from the end (a step of the "
                             f"wrong sign names no cell; use {begin:g},{end:g},{-step:g})")
    return begin, end, step


def range_values(rng):
    """grid.py's ``range_f``: begin, begin + step, ... not past end."""
    begin, end, step = rng
    out = []
    v = begin
    while not ((step > 0 and v > end) or (step < 0 and v < end)):
        out.append(v)
        v = v + step
    return out


def centre_out(seq):
    """grid.py's ``permute_sequence``: the middle, then the two halves' orders interleaved."""
    n = len(seq)
    if n <= 1:
        return list(seq)
    mid = n // 2
    left = centre_out(seq[:mid])
    right = centre_out(seq[mid + 1:])
    out = [seq[mid]]
    while left or right:
        if left:
            out.append(left.pop(0))
        if right:
            out.append(right.pop(0))
    return out


def job_order(c_seq, g_seq):
    """grid.py's ``calculate_jobs``: the cells in the order it runs them (sequences already
    centre-out; ``[None]`` for a parameter left out)."""
    nr_c, nr_g = float(len(c_seq)), float(len(g_seq))
    i = j = 0
    jobs = []
    while i < nr_c or j < nr_g:
        if i / nr_c < j / nr_g:
            jobs += [(c_seq[i], g_seq[k]) for k in range(j)]
            i += 1
        else:
            jobs += [(c_seq[k], g_seq[j]) for k in range(i)]
            j += 1
    return jobs


def libsvm_rate(correct, n):
    """svm-train's accuracy line read back as grid.py reads it: ``float('%g' % percent)``."""
    return float("%g" % (100.0 * correct / n)) if n else 0.0


def mse_rate(mse):
    return float("%g" % mse)


def better(rate, c, g, best, lower_is_better=False):
    """grid.py's update rule: ``rate`` at (c, g) replaces ``best`` = (rate, c, g) (or None)."""
    if best is None:
        return True
    b_rate, b_c, b_g = best
    if lower_is_better:
        if rate < b_rate:
            return True
    elif rate > b_rate:
        return True
    return rate == b_rate and g == b_g and c is not None and b_c is not None and c < b_c


def number(v):
    """A log2 value or a rate as grid.py prints it (Python's ``str``)."""
    return str(v)


@dataclass
class GridSpec:
    """The grid: ranges (None: the parameter is not searched), folds, and the file names."""
    log2c: Optional[tuple] = DEFAULT_LOG2C
    log2g: Optional[tuple] = DEFAULT_LOG2G
    fold: int = DEFAULT_FOLD
    lower_is_better: bool = False        # regression: the rate is a mean squared error
    axis: str = "g"                      # the second range: "g" log2(gamma), "p" log2(p)

    def __post_init__(self):
        if self.log2c is None and self.log2g is None:
            raise ParameterError("-log2c and -log2g should not be null simultaneously")

    @property
    def c_seq(self):
        return [None] if self.log2c is None else range_values(self.log2c)

    @property
    def g_seq(self):
        return [None] if self.log2g is None else range_values(self.log2g)

    def cells(self, order="grid"):
        """Every cell (log2c, log2g), in grid.py's order or, ``order='path'``, gamma by gamma
        (grid.py's order of gamma) with C increasing: the order the C path computes them."""
        cs, gs = self.c_seq, self.g_seq
        if not cs or not gs:
            raise ParameterError("the grid names no cell")
        if order == "path":
            cs_sorted = sorted(cs, key=lambda v: -math.inf if v is None else v)
            return [(c, g) for g in (centre_out(gs) if gs != [None] else gs) for c in cs_sorted]
        return job_order(centre_out(cs), centre_out(gs))

    def describe(self):
        def one(name, r):
            return f"{name} null" if r is None else f"{name} {r[0]:g},{r[1]:g},{r[2]:g}"
        return f"{one('-log2c', self.log2c)} {one('-log2' + self.axis, self.log2g)}"


def cell_line(c, g, rate, best, prefix=PREFIX, axis="g"):
    """The line grid.py prints when a cell is done: ``best`` = (rate, log2c, log2g); ``axis``:
    the second parameter's letter (``GridSpec.axis``)."""
    b_rate, b_c, b_g = best
    head = " ".join(number(x) for x in (c, g) if x is not None)
    out = f"{prefix} {head} {number(rate)} (best "
    if c is not None:
        out += f"c={number(2.0 ** b_c)}, "
    if g is not None:
        out += f"{axis}={number(2.0 ** b_g)}, "
    return out + f"rate={number(b_rate)})"


def out_line(c, g, rate, axis="g"):
    """The cell's line of the ``.out`` file (without the newline)."""
    out = ""
    if c is not None:
        out += f"log2c={number(c)} "
    if g is not None:
        out += f"log2{axis}={number(g)} "
    return out + f"rate={number(rate)}"


def final_line(best):
    """grid.py's last line: the best C and gamma (as numbers, not logs) and the rate."""
    b_rate, b_c, b_g = best
    values = [number(2.0 ** v) for v in (b_c, b_g) if v is not None]
    return " ".join(values) + f" {number(b_rate)}"


# grid.py's patterns; the rate's also takes an exponent (a small mean squared error is
# written so by %g)
_RATE = re.compile(r"rate=([0-9.]+(?:[eE][-+]?[0-9]+)?)")
_LOG2C = re.compile(r"log2c=([0-9.-]+)")
_LOG2G = re.compile(r"log2g=([0-9.-]+)")
_LOG2P = re.compile(r"log2p=([0-9.-]+)")


def read_resume(path, spec: GridSpec):
    """The cells of a grid.py (or svmtool grid) ``.out`` file, {(log2c, log2g): rate} in the
    file's order, each matched to the grid's own values; a cell the grid does not hold is an
    error naming its line (the file belongs to another grid)."""
    from svmtool.errors import DataFormatError

    on_grid_c = {float(v): v for v in spec.c_seq if v is not None}
    on_grid_g = {float(v): v for v in spec.g_seq if v is not None}
    done = {}
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise ParameterError(f"{path}: no such file (the -resume file)") from None
    for no, line in enumerate(lines, 1):
        line = line.strip()
        m = _RATE.findall(line)
        if not m:
            continue
        try:
            rate = float(m[0])
            c = _LOG2C.findall(line)
            g = (_LOG2P if spec.axis == "p" else _LOG2G).findall(line)
            c = float(c[0]) if c else None
            g = float(g[0]) if g else None
        except ValueError:
            raise DataFormatError(path, no, f"not a grid line: {line!r}") from None
        if (c is None) != (spec.log2c is None) or (g is None) != (spec.log2g is None):
            raise DataFormatError(path, no, f"a cell of another grid ({line!r}): this grid is "
                                            f"{spec.describe()}")
        if (c is not None and c not in on_grid_c) or (g is not None and g not in on_grid_g):
            raise DataFormatError(path, no, f"the cell {line!r} is not on this grid "
                                            f"({spec.describe()}): the file belongs to another "
                                            f"grid")
        key = (on_grid_c[c] if c is not None else None, on_grid_g[g] if g is not None else None)
        done[key] = rate
    return done

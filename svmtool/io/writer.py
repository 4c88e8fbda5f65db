"""Writing svmlight / libsvm text, fast, with numbers that read back bit for bit.

Each line is ``<label> [qid:<q>] [cost:<w>] <index>:<value> ... [#<comment>]`` with one-based
indices (or zero-based on request); ``cost:`` (SVMlight's per-example cost) is written when the
problem has instance weights.  Every number is written as the shortest decimal that converts back to
exactly the same double -- the digits Python's ``repr`` gives, in the same notation, except that
integral values are written without ``.0`` (``1``, ``-1``, ``3``, ``1e+16``).  ``-0.0`` is written
``-0``.  A comment is written after ``" #"`` exactly as stored, so text read with comments kept
comes back unchanged.

How the digits are found (all in jitted code, exact tests only; :mod:`svmtool.io._format_jit`):

1. integers below 2**53 are written as integers;
2. the 15-digit candidate ``m = round(a * 10**s)``: when ``a`` has any decimal form of at most 15
   significant digits, this rounding finds it (the 15-digit grid is more than twice as fine as
   the rounding error of one multiplication), and the test ``m / 10**s == a`` is exact by
   Clinger's argument (``m < 2**53``, ``10**s`` exact for ``|s| <= 22``, one correctly rounded
   operation); trailing zeros of ``m`` are dropped;
3. the 16-digit candidate: the integer nearest to ``a * 10**s``, computed from the exact product
   as a double-double (Dekker's two-product), tested by Clinger's rule or, above 2**53, by the C
   library's correctly rounded ``strtod``;
4. the 17-digit nearest decimal from the exact product: 17 correctly rounded significant digits
   always read back exactly, so it needs no test.

Steps 3 and 4 need ``1e-7 <= a < 1e17``; step 2 works for ``1e-8 <= a < 1e37``.  The few values
outside (tiny or huge numbers needing more than 15 digits, subnormals, NaN and infinities) are
formatted by Python's ``repr`` in a batch per block and copied into place.

The text is produced in blocks of rows: a jitted pass finds every value's digits, Python formats
the rare leftovers, and a jitted pass writes the block's bytes into a preallocated buffer, which
is then written to the file.  Output goes through :func:`svmtool.io.output.open_output`.
"""

import numpy as np

from svmtool.io._format_jit import BLOCK_NNZ, BLOCK_ROWS, FAIL, MAX_FLOAT_CHARS, shortest_digits, write_rows
from svmtool.io.output import open_output
from svmtool.problem import Problem


# --- Python driver ------------------------------------------------------------------------------

_EMPTY_U8 = np.zeros(0, dtype=np.uint8)
_EMPTY_I64 = np.zeros(0, dtype=np.int64)


def _repr_text(x):
    """Python's repr without the ``.0`` of integral values (the writer's notation)."""
    s = repr(x)
    return s[:-2] if s.endswith(".0") else s


class _Digits:
    """Digits of a value array (one block), plus the Python-formatted leftovers."""

    def __init__(self, vals, tmp):
        n = len(vals)
        self.m = np.empty(n, dtype=np.int64)
        self.e = np.empty(n, dtype=np.int32)
        fails = shortest_digits(vals, self.m, self.e, tmp) if n else 0
        if fails:
            idx = np.flatnonzero(self.e == FAIL)
            texts = [_repr_text(x) for x in vals[idx].tolist()]
            # (a bytearray: numpy views of bytes are read-only, another type for numba)
            self.blob = np.frombuffer(bytearray("".join(texts).encode("ascii")), dtype=np.uint8)
            self.off = np.zeros(len(texts) + 1, dtype=np.int64)
            np.cumsum([len(t) for t in texts], out=self.off[1:])
        else:
            self.blob = _EMPTY_U8
            self.off = _EMPTY_I64


def _as_problem(problem_or_X, y, qid, comments):
    if isinstance(problem_or_X, Problem):
        p = problem_or_X
        if y is not None or qid is not None:
            p = Problem(p.indptr, p.indices, p.data,
                        p.y if y is None else np.asarray(y, dtype=np.float64).reshape(-1),
                        p.n_features, qid=p.qid if qid is None else qid,
                        comments=p.comments, weights=p.weights, source=p.source)
    else:
        if y is None:
            raise ValueError("dump_svmlight(X, dest, y): y is required when X is not a Problem")
        p = Problem.from_matrix(problem_or_X, y, qid=qid)
    if comments is None:
        comments = p.comments
    elif comments is False:
        comments = None
    if len(p.y) != p.n_rows:
        raise ValueError(f"{len(p.y)} labels for {p.n_rows} rows")
    if p.qid is not None and len(p.qid) != p.n_rows:
        raise ValueError(f"{len(p.qid)} query ids for {p.n_rows} rows")
    if comments is not None and len(comments) != p.n_rows:
        raise ValueError(f"{len(comments)} comments for {p.n_rows} rows")
    return p, comments


def iter_svmlight_bytes(problem, *, zero_based=False, comments=None, block_nnz=BLOCK_NNZ,
                        block_rows=BLOCK_ROWS):
    """Yield the svmlight text of ``problem`` as byte blocks (memoryviews valid until the next).

    ``comments``: a list of one string per row (``None`` entries or ``""``: no comment), by
    default the Problem's own; ``False`` drops them.
    """
    p, comments = _as_problem(problem, None, None, comments)
    indptr = np.ascontiguousarray(p.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(p.indices)
    if indices.dtype not in (np.int32, np.int64):
        indices = indices.astype(np.int64)
    data = np.ascontiguousarray(p.data, dtype=np.float64)
    y = np.ascontiguousarray(p.y, dtype=np.float64)
    has_qid = p.qid is not None
    qid_all = np.ascontiguousarray(p.qid, dtype=np.int64) if has_qid else _EMPTY_I64
    has_comments = comments is not None
    weights = None if p.weights is None else np.asarray(p.weights, dtype=np.float64)
    base = 0 if zero_based else 1
    idx_chars = 11 if indices.dtype == np.int32 else 20
    tmp = np.zeros(64, dtype=np.uint8)
    out = None
    n = p.n_rows
    r0 = 0
    while r0 < n:
        r1 = int(np.searchsorted(indptr, indptr[r0] + block_nnz, side="right")) - 1
        r1 = min(max(r1, r0 + 1), n, r0 + block_rows)
        lo, hi = int(indptr[r0]), int(indptr[r1])
        vals = data[lo:hi]
        yv = y[r0:r1]
        dv = _Digits(vals, tmp)
        dy = _Digits(yv, tmp)
        if has_comments:
            parts = []
            for c in comments[r0:r1]:
                if c is None or c == "":
                    parts.append(b"")
                    continue
                if "\n" in c or "\r" in c:
                    raise ValueError("a comment contains a line break")
                parts.append(c.encode("utf-8"))
            cblob = np.frombuffer(bytearray(b"".join(parts)), dtype=np.uint8)
            coff = np.zeros(len(parts) + 1, dtype=np.int64)
            np.cumsum([len(b) for b in parts], out=coff[1:])
        else:
            cblob, coff = _EMPTY_U8, _EMPTY_I64
        need = ((hi - lo) * (2 + idx_chars + MAX_FLOAT_CHARS)
                + (r1 - r0) * (MAX_FLOAT_CHARS + 2 + (26 if has_qid else 0))
                + (len(cblob) + 2 * (r1 - r0) if has_comments else 0))
        if out is None or len(out) < need:
            out = np.empty(max(need, 1 << 16), dtype=np.uint8)
        used = write_rows(indptr[r0:r1 + 1], indices[lo:hi], base, vals, dv.m, dv.e, dv.blob,
                          dv.off, yv, dy.m, dy.e, dy.blob, dy.off,
                          qid_all[r0:r1] if has_qid else qid_all, has_qid, cblob, coff,
                          has_comments, out)
        if weights is None:
            yield memoryview(out)[:used]
        else:
            yield memoryview(_with_costs(out[:used], weights[r0:r1], has_qid))
        r0 = r1


_COST = np.frombuffer(b" cost:", dtype=np.uint8)


def _with_costs(text, weights, has_qid):
    """The block of lines ``text`` (uint8, one row a line) with `` cost:<w>`` inserted after
    each line's label (and qid): the weights' digits come from the writer itself (as the
    labels of a problem without features), the insertion is a scatter, no loop over rows."""
    n = len(weights)
    digits = np.frombuffer(format_svmlight(Problem(
        np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
        np.zeros(0, dtype=np.float64), weights, 0)), dtype=np.uint8)
    ends = np.flatnonzero(digits == 10)
    tok_len = np.diff(np.concatenate(([-1], ends))) - 1 + len(_COST)
    tok_start = np.concatenate(([0], np.cumsum(tok_len)[:-1]))
    ins = np.empty(int(tok_len.sum()), dtype=np.uint8)
    prefix = np.zeros(len(ins), dtype=bool)
    at = (tok_start[:, None] + np.arange(len(_COST))[None, :]).reshape(-1)
    prefix[at] = True
    ins[at] = np.tile(_COST, n)
    ins[~prefix] = digits[digits != 10]
    # where each row's token goes: before the delimiter that ends its label (or its qid)
    starts = np.concatenate(([0], np.flatnonzero(text == 10)[:-1] + 1))
    delims = np.flatnonzero((text == 32) | (text == 10))
    where = delims[np.searchsorted(delims, starts) + (1 if has_qid else 0)]
    inc = np.zeros(len(text), dtype=np.int64)
    inc[where] = tok_len
    dest = np.arange(len(text)) + np.cumsum(inc)
    out = np.empty(len(text) + len(ins), dtype=np.uint8)
    filled = np.zeros(len(out), dtype=bool)
    out[dest] = text
    filled[dest] = True
    out[~filled] = ins
    return out


def dump_svmlight(problem_or_X, dest, y=None, *, qid=None, zero_based=False, comments=None):
    """Write a data set as svmlight text whose numbers read back bit for bit.

    ``problem_or_X``: a :class:`~svmtool.problem.Problem`, or a matrix (scipy sparse or dense
    numpy; zeros of a dense matrix are not written) with labels ``y``.  ``dest``: a path
    (written by :func:`svmtool.io.output.open_output`), ``"-"`` for stdout, or a binary file
    object.  ``qid``: query ids (a Problem's own by default).  ``zero_based``: write indices from 0 (scikit-learn's default)
    instead of 1.  ``comments``: one string per row written after ``#`` (a Problem's own by
    default; ``False`` drops them).
    """
    p, comments = _as_problem(problem_or_X, y, qid, comments)
    chunks = iter_svmlight_bytes(p, zero_based=zero_based,
                                 comments=False if comments is None else comments)
    if hasattr(dest, "write"):
        for chunk in chunks:
            dest.write(chunk)
        return
    with open_output(dest, "wb") as f:
        for chunk in chunks:
            f.write(chunk)


def format_svmlight(problem_or_X, y=None, *, qid=None, zero_based=False, comments=None):
    """The svmlight text of a data set as bytes (see :func:`dump_svmlight`)."""
    p, comments = _as_problem(problem_or_X, y, qid, comments)
    return b"".join(bytes(c) for c in iter_svmlight_bytes(
        p, zero_based=zero_based, comments=False if comments is None else comments))


def format_floats(values):
    """The writer's text of each value (shortest exact decimal, repr notation, no ``.0``)."""
    vals = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    n = len(vals)
    p = Problem(np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                np.zeros(0, dtype=np.float64), vals, 0)
    text = format_svmlight(p).decode("ascii")
    return text.split("\n")[:n]

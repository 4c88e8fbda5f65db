"""Writing svmlight / libsvm text, fast, with numbers that read back bit for bit.

Each line is ``<label> [qid:<q>] <index>:<value> ... [#<comment>]`` with one-based indices (or
zero-based on request).  Every number is written as the shortest decimal that converts back to
exactly the same double -- the digits Python's ``repr`` gives, in the same notation, except that
integral values are written without ``.0`` (``1``, ``-1``, ``3``, ``1e+16``).  ``-0.0`` is written
``-0``.  A comment is written after ``" #"`` exactly as stored, so text read with comments kept
comes back unchanged.

How the digits are found (all in jitted code, exact tests only):

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

import math

import numpy as np

from svmtool._jit import c_strtod, njit
from svmtool.io.output import open_output
from svmtool.problem import Problem

FAIL = np.int32(1 << 30)          # exponent marker of a value formatted in Python

_P10 = np.array([float(10 ** k) for k in range(23)], dtype=np.float64)
_TWO53 = 9007199254740992.0
_SPLIT = 134217729.0              # 2**27 + 1: Veltkamp's split of a double into two halves

MAX_FLOAT_CHARS = 24              # "-1.2345678901234567e-308"
BLOCK_NNZ = 1 << 18               # values per block
BLOCK_ROWS = 1 << 16              # rows per block

# Helpers below take and return scalars only: a jitted helper that takes an array pays an atomic
# reference-count increment and decrement per call (numba does not prune them across branches),
# which would cost more than the formatting itself.  The byte writing is therefore written out
# inside the two kernels.


@njit
def _two_prod(a, b):
    """(p, e) with p = fl(a * b) and p + e == a * b exactly (no overflow, no underflow)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


@njit
def _nearest_int(hi, lo):
    """An integer nearest to hi + lo (ties to even when hi is an integer), 0 <= hi < 2**62."""
    f = math.floor(hi)
    r = (hi - f) + lo
    k = math.floor(r)
    d = r - k
    m = np.int64(f) + np.int64(k)
    if d > 0.5 or (d == 0.5 and (m & 1) == 1):
        m += 1
    return m


@njit
def _strip(m, e10):
    """Drop the trailing zeros of m >= 0 into the exponent (8, 4, 2 at a time, then 1s)."""
    if m == 0:
        return m, 0
    if m % 100000000 == 0:
        m //= 100000000
        e10 += 8
    if m % 10000 == 0:
        m //= 10000
        e10 += 4
    if m % 100 == 0:
        m //= 100
        e10 += 2
    while m % 10 == 0:
        m //= 10
        e10 += 1
    return m, e10


@njit
def _seventeen(a, s):
    """The 17-digit nearest decimal of a, m * 10**-s with m in [1e16, 1e17): (m, e10, ok)."""
    hi = 0.0
    lo = 0.0
    for _ in range(3):
        if s < 0 or s > 22:
            return np.int64(0), FAIL, False
        hi, lo = _two_prod(a, _P10[s])
        if hi < 1e16:
            s += 1
        elif hi >= 1e17:
            s -= 1
        else:
            break
    if not (1e16 <= hi < 1e17):
        return np.int64(0), FAIL, False
    m, e10 = _strip(_nearest_int(hi, lo), -s)
    return m, e10, True


@njit
def _shortest(a):
    """Shortest digits of a finite a > 0.

    Returns (m, e10, code): code 0 -- a == m * 10**e10 (m without trailing zeros); code 1 --
    not found here (Python fallback); code 2 -- m * 10**e10 is the 16-digit candidate with
    m >= 2**53, to be tested with strtod (m not stripped), else use :func:`_seventeen`
    with s = 1 - e10.
    """
    if a < _TWO53 and a == math.floor(a):
        m, e10 = _strip(np.int64(a), 0)
        return m, e10, 0
    e = int(math.floor(math.log10(a)))
    s = 0
    t = 0.0
    for _ in range(3):
        s = 14 - e
        if s > 22 or s < -22:
            return np.int64(0), FAIL, 1
        t = a * _P10[s] if s >= 0 else a / _P10[-s]
        if t < 1e14:
            e -= 1
        elif t >= 1e15:
            e += 1
        else:
            break
    if not (1e14 <= t < 1e15):
        return np.int64(0), FAIL, 1
    m = np.int64(t + 0.5)
    x = float(m)
    if (x / _P10[s] if s >= 0 else x * _P10[-s]) == a:
        m, e10 = _strip(m, -s)
        return m, e10, 0
    s = 15 - e
    if s < 0 or s > 22:
        return np.int64(0), FAIL, 1
    hi, lo = _two_prod(a, _P10[s])
    if 1e15 <= hi < 1e16:
        m = _nearest_int(hi, lo)
        if m >= 9007199254740992:
            return m, -s, 2
        if float(m) / _P10[s] == a:
            m, e10 = _strip(m, -s)
            return m, e10, 0
    m, e10, ok = _seventeen(a, s + 1)
    return m, e10, 0 if ok else 1


@njit
def shortest_digits(vals, m_out, e_out, tmp):
    """For each value: m_out, e_out with |v| == m * 10**e read back exactly (shortest m).

    Zeros of either sign give (0, 0).  Values left to Python get e_out == FAIL; returns how many.
    ``tmp`` is a scratch byte buffer (at least 32 bytes) for strtod.
    """
    fails = 0
    for i in range(len(vals)):
        a = abs(vals[i])
        m = np.int64(0)
        e10 = np.int32(0)
        if a == 0.0:
            pass
        elif a < np.inf:
            m, e10, code = _shortest(a)
            if code == 2:
                # write "<m>e-<s>" and let strtod decide
                s = -e10
                n = 0
                x = m
                while x > 0:
                    n += 1
                    x //= 10
                x = m
                for k in range(n - 1, -1, -1):
                    tmp[k] = 48 + x % 10
                    x //= 10
                tmp[n] = 101
                tmp[n + 1] = 45
                tmp[n + 2] = 48 + s // 10
                tmp[n + 3] = 48 + s % 10
                tmp[n + 4] = 0
                if c_strtod(tmp.ctypes.data, 0) == a:
                    m, e10 = _strip(m, e10)
                else:
                    m, e10, ok = _seventeen(a, s + 1)
                    if not ok:
                        e10 = FAIL
            elif code == 1:
                e10 = FAIL
        else:
            e10 = FAIL
        m_out[i] = m
        e_out[i] = e10
        if e10 == FAIL:
            fails += 1
    return fails


@njit
def write_rows(indptr, indices, base, vals, vm, ve, fb_blob, fb_off,
               y, ym, ye, yfb_blob, yfb_off, qid, has_qid, cblob, coff, has_comments, out):
    """Write rows as svmlight text into ``out``; return the number of bytes written.

    ``indptr`` holds the block's row pointers (absolute); ``indices``, ``vals``, ``vm``, ``ve``
    start at ``indptr[0]``.  ``base`` is added to each column (1 for one-based files).
    ``vm``/``ve`` (``ym``/``ye`` for labels) are the digits from :func:`shortest_digits`; the
    values marked FAIL take the next string of ``fb_blob`` (``yfb_blob``) in order.
    """
    pos = 0
    fk = 0
    yk = 0
    lo = indptr[0]
    for r in range(len(indptr) - 1):
        j0 = indptr[r] - lo
        j1 = indptr[r + 1] - lo
        # item -2: the label, -1: the qid, j >= 0: feature j (index, then value)
        for j in range(-2, j1 - j0):
            # ---- the integer part of the item (qid or feature index)
            if j == -2:
                v = y[r]
                m = ym[r]
                e10 = np.int64(ye[r])
            else:
                if j == -1:
                    if not has_qid:
                        continue
                    out[pos] = 32
                    out[pos + 1] = 113        # q
                    out[pos + 2] = 105        # i
                    out[pos + 3] = 100        # d
                    out[pos + 4] = 58         # :
                    pos += 5
                    iv = qid[r]
                    if iv < 0:
                        out[pos] = 45
                        pos += 1
                        iv = -iv              # qid of -2**63 is not supported
                else:
                    out[pos] = 32
                    pos += 1
                    iv = np.int64(indices[j0 + j]) + base
                n = 1
                x = iv
                while x >= 10:
                    x //= 10
                    n += 1
                for k in range(pos + n - 1, pos - 1, -1):
                    out[k] = 48 + iv % 10
                    iv //= 10
                pos += n
                if j == -1:
                    continue
                out[pos] = 58                 # :
                pos += 1
                v = vals[j0 + j]
                m = vm[j0 + j]
                e10 = np.int64(ve[j0 + j])
            # ---- the number v with digits m * 10**e10
            if e10 == FAIL:
                if j == -2:
                    for k in range(yfb_off[yk], yfb_off[yk + 1]):
                        out[pos] = yfb_blob[k]
                        pos += 1
                    yk += 1
                else:
                    for k in range(fb_off[fk], fb_off[fk + 1]):
                        out[pos] = fb_blob[k]
                        pos += 1
                    fk += 1
                continue
            if v < 0.0 or (v == 0.0 and math.copysign(1.0, v) < 0.0):
                out[pos] = 45
                pos += 1
            if m == 0:
                out[pos] = 48
                pos += 1
                continue
            nd = 1
            x = m
            while x >= 10:
                x //= 10
                nd += 1
            decpt = nd + e10
            if decpt > 16 or decpt < -3:
                # scientific: d[.ddd]e+XX; digits written from position pos + 1, then the first
                # digit moved in front of the point
                x = m
                for k in range(pos + nd, pos, -1):
                    out[k] = 48 + x % 10
                    x //= 10
                out[pos] = out[pos + 1]
                if nd > 1:
                    out[pos + 1] = 46
                    pos += nd + 1
                else:
                    pos += 1
                out[pos] = 101
                ex = decpt - 1
                if ex < 0:
                    out[pos + 1] = 45
                    ex = -ex
                else:
                    out[pos + 1] = 43
                pos += 2
                if ex < 10:
                    out[pos] = 48
                    pos += 1
                n = 1
                x = ex
                while x >= 10:
                    x //= 10
                    n += 1
                for k in range(pos + n - 1, pos - 1, -1):
                    out[k] = 48 + ex % 10
                    ex //= 10
                pos += n
            elif decpt <= 0:
                # 0.000ddd
                out[pos] = 48
                out[pos + 1] = 46
                pos += 2
                for k in range(-decpt):
                    out[pos] = 48
                    pos += 1
                x = m
                for k in range(pos + nd - 1, pos - 1, -1):
                    out[k] = 48 + x % 10
                    x //= 10
                pos += nd
            elif decpt >= nd:
                # an integer: ddd000
                x = m
                for k in range(pos + nd - 1, pos - 1, -1):
                    out[k] = 48 + x % 10
                    x //= 10
                pos += nd
                for k in range(decpt - nd):
                    out[pos] = 48
                    pos += 1
            else:
                # ddd.ddd: the point after decpt digits
                x = m
                for k in range(pos + nd, pos + decpt, -1):
                    out[k] = 48 + x % 10
                    x //= 10
                out[pos + decpt] = 46
                for k in range(pos + decpt - 1, pos - 1, -1):
                    out[k] = 48 + x % 10
                    x //= 10
                pos += nd + 1
        if has_comments:
            a = coff[r]
            b = coff[r + 1]
            if b > a:
                out[pos] = 32
                out[pos + 1] = 35             # '#'
                pos += 2
                for k in range(a, b):
                    out[pos] = cblob[k]
                    pos += 1
        out[pos] = 10
        pos += 1
    return pos


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
                        comments=p.comments, source=p.source)
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
        yield memoryview(out)[:used]
        r0 = r1


def dump_svmlight(problem_or_X, dest, y=None, *, qid=None, zero_based=False, comments=None):
    """Write a data set as svmlight text whose numbers read back bit for bit.

    ``problem_or_X``: a :class:`~svmtool.problem.Problem`, or a matrix (scipy sparse or dense
    numpy; zeros of a dense matrix are not written) with labels ``y``.  ``dest``: a path
    (written by :func:`svmtool.io.output.open_output`), ``"-"`` for stdout, or a binary file object.  ``qid``: query ids (a
    Problem's own by default).  ``zero_based``: write indices from 0 (scikit-learn's default)
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

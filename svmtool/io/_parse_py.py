"""Pure-Python svmlight/libsvm parser for small inputs: no numba, same results as the jitted one.

Importing numba and loading the cached kernels of :mod:`svmtool.io._parse` costs far more than
parsing a few hundred KB takes (numba's start-up is measured in BENCHMARKS.md, "Against the C
programs"); :func:`parse_bytes` parses such inputs with the standard library and numpy only, so
that a command on a small file never loads numba.  Files above ``PY_PARSE_LIMIT`` go to the
jitted parser, whose start the training that follows needs anyway.  Its behaviour is, on any
input, exactly the jitted parser's (as seen through :func:`svmtool.io.svmlight.load_svmlight`):
the same arrays bit for bit, or the same :class:`~svmtool.errors.DataFormatError` (same line,
same reason).  The grammar and its quirks are described in :mod:`svmtool.io._parse`; the status
codes and messages live in :mod:`svmtool.io._grammar`.

How it stays fast (one regular expression per input, not a Python loop per token) and exact:

* fast path (:func:`_parse_fast`): one regular expression over the whole input matches every line
  (label, an optional ``qid`` first, ``index:value`` items with indices of at most 18 digits, an
  optional comment, or a blank / comment line), numbers matched loosely by their characters; the
  tokens are then converted in bulk by Python's ``float`` and ``int`` and checked on the arrays
  (zero index, indices not increasing, a number that overflows to infinity, a token of
  ``MAX_TOKEN`` bytes or more).  On these characters ``float`` accepts exactly the grammar's
  numbers, so any doubt -- a line that does not match, a token ``float`` refuses, a failed check
  -- sends the whole input to the exact path;
* exact path (:func:`_parse_exact`): line by line (nothing in the grammar crosses a newline); a
  line that a strict regular expression accepts is kept as tokens for the bulk conversion, any
  other line (``sid``/``cost``, a late ``qid``, anything malformed) goes through
  :func:`_parse_line`, a faithful port of ``fill_piece`` that parses it or raises the error
  ``fill_piece`` would report.  What the strict expression cannot see (zero index, order,
  overflow) is checked on the arrays, and the first line in file order with such a problem is
  handed to :func:`_parse_line`, which finds its first error.

Numbers are converted by Python's ``float`` on validated decimal strings, correctly rounded, so
bit-identical to the jitted parser's Clinger fast path / ``strtod``.
"""

import re

import numpy as np

from svmtool.errors import DataFormatError
from svmtool.io._grammar import (BOM, BOM_REASON,
    ERR_BAD_COST, ERR_COST_NEGATIVE, ERR_COST_NOT_FINITE, ERR_BAD_INDEX, ERR_BAD_LABEL, ERR_BAD_QID, ERR_BAD_TOKEN, ERR_BAD_VALUE, ERR_DUPLICATE,
    ERR_INDEX_TOO_BIG, ERR_INDEX_ZERO, ERR_LABEL_NOT_FINITE, ERR_NO_LABEL, ERR_NOT_INCREASING,
    ERR_TOO_LONG, ERR_VALUE_NOT_FINITE, MAX_CLASS_LABEL, MAX_COLUMN, MAX_INDEX_DIGITS, MAX_TOKEN,
    MESSAGES, MIN_CLASS_LABEL, TOKEN_QUOTE_BYTES,
)

__all__ = ["parse_bytes"]

_INT64_MAX = 2**63 - 1
_TWO53 = 1 << 53

_WS = b" \t\r"                 # white space inside a line
_DELIM = b" \t\r\n#"           # what may follow a number
_NOT_FINITE_START = b"nNiI"    # after an optional sign: nan / inf, any case -> not finite

# --- the fast path: one regular expression over the whole input -----------------------------

# Numbers are matched loosely here, by their characters: on these characters Python's float()
# accepts exactly the grammar's decimal numbers (no 'n', 'i' or '_' can occur), so a token that
# float() refuses sends the input to the exact path.  One match per line, blank and comment lines
# included (their label group is empty), so every line matched <=> as many matches as lines.
_LOOSE_NUM = rb"[0-9.+\-eE]++"
# (possessive quantifiers: every token ends at a delimiter, so giving characters back can never
# turn a failed match into a successful one; they only save the regex engine work)
_FAST_INPUT = re.compile(
    rb"^[ \t\r]*+(?:(" + _LOOSE_NUM + rb")"                          # label
    rb"(?:[ \t\r]++qid:([+-]?[0-9]{1,18}+))?"                       # qid (fits in 64 bits)
    rb"((?:[ \t\r]++[0-9]{1,%d}+:" % MAX_INDEX_DIGITS + _LOOSE_NUM + rb")*+)"  # index:value items
    rb"[ \t\r]*)?(?:#(.*))?$",                                       # comment
    re.MULTILINE)

# --- the exact path's fast lines: a strict regular expression per line -----------------------

_NUM = rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_FAST_LINE = re.compile(
    rb"[ \t\r]*(" + _NUM + rb")"                                   # label
    rb"(?:[ \t\r]+qid:([+-]?[0-9]{1,18}))?"                         # qid (fits in 64 bits)
    rb"((?:[ \t\r]+[0-9]{1,%d}:" % MAX_INDEX_DIGITS + _NUM + rb")*)"  # index:value items
    rb"[ \t\r]*(?:#(.*))?",                                         # comment
    re.DOTALL)
_LONG_RUN = re.compile(rb"[^ \t\r:]{%d}" % MAX_TOKEN)   # a token too long for the fast paths

# --- the exact path: a port of fill_piece for one line ---------------------------------------

_NUMBER = re.compile(rb"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:([eE])([+-]?)([0-9]*))?")
_DIGITS = re.compile(rb"[0-9]*")
_SIGNED_DIGITS = re.compile(rb"([+-]?)([0-9]*)")


class _LineError(Exception):
    """A grammar error at byte ``offset`` of a line."""

    def __init__(self, status, offset):
        super().__init__(status, offset)
        self.status = status
        self.offset = offset


def _long_number_value(sign, d1, d2, esign, edigits):
    """The value the jitted ``_parse_number`` gives a number of MAX_TOKEN bytes or more, or None
    when it would need strtod (then the number is "too long").

    A literal port of its digit loop and its two strtod-free cases: Clinger's fast path (at most
    19 significant digits kept, none dropped, mantissa at most 2**53, decimal exponent within
    +-22: one exact IEEE multiplication or division) and an exact zero.  Below MAX_TOKEN bytes the
    fast path always agrees with ``float``; beyond, the jitted parser stops accumulating an
    exponent at 100000, which (for a number of 100000 digits or more) can make its fast path
    give another value than ``float`` -- reproduced here.
    """
    mant = 0
    ndig = 0
    dropped = False
    exp10 = 0
    for c in d1:
        if ndig < 19:
            if ndig > 0 or c != 48:
                mant = mant * 10 + (c - 48)
                ndig += 1
        else:
            exp10 += 1
            if c != 48:
                dropped = True
    for c in d2 or b"":
        if ndig < 19:
            if ndig > 0 or c != 48:
                mant = mant * 10 + (c - 48)
                ndig += 1
            exp10 -= 1
        elif c != 48:
            dropped = True
    if edigits:
        e = 0
        for c in edigits:
            if e < 100000:
                e = e * 10 + (c - 48)
        exp10 += -e if esign == b"-" else e
    if not dropped and mant <= _TWO53 and -22 <= exp10 <= 22:
        v = float(mant)
        if exp10 >= 0:
            v = v * 10.0 ** exp10
        else:
            v = v / 10.0 ** -exp10
        return -v if sign == b"-" else v
    if mant == 0 and not dropped:
        return -0.0 if sign == b"-" else 0.0
    return None


def _number(s, i):
    """Parse a number at s[i:]: (value, next_index, status) as the jitted ``_parse_number``.

    status 0 ok, 1 not a number, 2 not finite, 3 too long.  The caller checks what follows.
    """
    m = _NUMBER.match(s, i)
    sign, d1, d2, e, esign, edigits = m.groups()
    p = i + len(sign)
    if p < len(s) and s[p] in _NOT_FINITE_START:
        return 0.0, p, 2
    if not d1 and not d2:
        return 0.0, m.end(), 1
    if e and not edigits:
        return 0.0, m.end(), 1
    j = m.end()
    if j - i >= MAX_TOKEN:
        v = _long_number_value(sign, d1, d2, esign, edigits)
        if v is None:
            return 0.0, j, 3
        return v, j, 0
    v = float(s[i:j])
    if v - v != 0.0:           # inf (a validated decimal string is never nan)
        return v, j, 2
    return v, j, 0


def _parse_line(s, zero_based):
    """Parse one line (without its newline) exactly as ``fill_piece`` does.

    Returns None for a line that is not an example (blank, or only a comment), else
    ``(label, items, count, qid, comment, cost)``: the label's bytes, the ``index:value`` tokens
    joined by spaces, their number, the qid (int or None), the comment's bytes (or None) and the
    value of its ``cost:`` token (or None).  Raises
    :class:`_LineError` with the status and the offset of the offending token.
    """
    end = len(s)
    i = 0
    while i < end and s[i] in _WS:
        i += 1
    if i >= end or s[i] == 35:                     # blank, or a whole-line comment
        return None
    tok = i
    v, i, st = _number(s, i)
    if st == 0 and i < end and s[i] not in _DELIM:
        st = 1
    if st != 0:
        if st == 2:
            raise _LineError(ERR_LABEL_NOT_FINITE, tok)
        if st == 3:
            raise _LineError(ERR_TOO_LONG, tok)
        q = tok
        while q < end and s[q] not in _DELIM:      # a feature where the label should be?
            if s[q] == 58:
                raise _LineError(ERR_NO_LABEL, tok)
            q += 1
        raise _LineError(ERR_BAD_LABEL, tok)
    # (a long number is given as the repr of its value: float() of it is the jitted value)
    label = s[tok:i] if i - tok < MAX_TOKEN else repr(v).encode()
    items = []
    qid = None
    comment = None
    cost = None
    prev = -1
    while True:
        while i < end and s[i] in _WS:
            i += 1
        if i >= end:
            break
        c = s[i]
        if c == 35:                                # '#': the comment, to the end of the line
            comment = s[i + 1:]
            break
        tok = i
        if 48 <= c <= 57:                          # index:value
            j = _DIGITS.match(s, i).end()
            if j >= end or s[j] != 58:
                raise _LineError(ERR_BAD_INDEX, tok)
            significant = s[i:j].lstrip(b"0")
            if len(significant) > 18:
                raise _LineError(ERR_INDEX_TOO_BIG, tok)
            idx = int(significant) if significant else 0
            i = j + 1
            if zero_based:
                col = idx
            else:
                if idx == 0:
                    raise _LineError(ERR_INDEX_ZERO, tok)
                col = idx - 1
            if col <= prev:
                raise _LineError(ERR_DUPLICATE if col == prev else ERR_NOT_INCREASING, tok)
            if col > MAX_COLUMN:
                raise _LineError(ERR_INDEX_TOO_BIG, tok)
            vstart = i
            v, i, st = _number(s, i)
            if st == 0 and i < end and s[i] not in _DELIM:
                st = 1
            if st != 0:
                if st == 2:
                    raise _LineError(ERR_VALUE_NOT_FINITE, tok)
                if st == 3:
                    raise _LineError(ERR_TOO_LONG, tok)
                raise _LineError(ERR_BAD_VALUE, tok)
            items.append(s[tok:i] if i - vstart < MAX_TOKEN else s[tok:vstart] + repr(v).encode())
            prev = col
        elif s.startswith(b"qid:", i):
            m = _SIGNED_DIGITS.match(s, i + 4)
            sign, digits = m.groups()
            i = m.end()
            if not digits or (i < end and s[i] not in _DELIM):
                raise _LineError(ERR_BAD_QID, tok)
            digits = digits.lstrip(b"0")
            limit = _INT64_MAX + 1 if sign == b"-" else _INT64_MAX    # int64's range
            if len(digits) > 19 or (digits and int(digits) > limit):
                raise _LineError(ERR_BAD_QID, tok)
            qv = int(digits) if digits else 0
            qid = -qv if sign == b"-" else qv
        elif s.startswith(b"cost:", i):
            cost, i, st = _number(s, i + 5)
            if st == 0 and i < end and s[i] not in _DELIM:
                st = 1
            if st == 2:
                raise _LineError(ERR_COST_NOT_FINITE, tok)
            if st == 3:
                raise _LineError(ERR_TOO_LONG, tok)
            if st != 0:
                raise _LineError(ERR_BAD_COST, tok)
            if cost < 0.0:
                raise _LineError(ERR_COST_NEGATIVE, tok)
        elif s.startswith(b"sid:", i):
            while i < end and s[i] not in _DELIM:
                i += 1
        else:
            raise _LineError(ERR_BAD_TOKEN, tok)
    return label, b" ".join(items), len(items), qid, comment, cost


def _quote(s, off):
    """The token at s[off:] (one line) as the jitted reader quotes it in messages."""
    limit = min(len(s), off + TOKEN_QUOTE_BYTES)
    end = off
    while end < limit and s[end] not in _WS:
        end += 1
    token = s[off:end].decode("utf-8", "replace")
    # a token cut at the quote limit (the end of a line or of the input is a natural end)
    if end == limit and limit < len(s) and s[limit] not in _WS:
        token += "..."
    return token


def _data_format_error(name, lines, lineno, err):
    """The DataFormatError of ``_Parser.raise_error`` for an error in line ``lineno`` (0-based)."""
    token = _quote(lines[lineno], err.offset)
    return DataFormatError(name, lineno + 1, MESSAGES[err.status].format(token=token))


def _first_non_class_label(y):
    """Index of the first label that is not a class label (see _grammar), or None."""
    ok = (y == np.floor(y)) & (y >= MIN_CLASS_LABEL) & (y <= MAX_CLASS_LABEL)
    if ok.all():
        return None
    return int(np.argmin(ok))


def _label_note(line):
    """(1-based line number, quoted label) of the label of line ``line`` = (number, bytes)."""
    n, s = line
    return n + 1, _quote(s, len(s) - len(s.lstrip(_WS)))


def _comment_text(c):
    return c.rstrip(b"\r").decode("utf-8", "replace") if c else ""


def _convert(tokens, fn, dtype):
    """np.array([fn(t) for t in tokens]); through a table of the distinct tokens when they repeat
    (sparse data sets have few distinct indices, binary ones few distinct values)."""
    n = len(tokens)
    if n == 0:
        return np.empty(0, dtype=dtype)
    if n >= 256:
        sample = tokens[:2048]
        if len(set(sample)) * 3 < len(sample):
            table = {t: fn(t) for t in set(tokens)}
            return np.array(list(map(table.__getitem__, tokens)), dtype=dtype)
    return np.array(list(map(fn, tokens)), dtype=dtype)


def _csr(labels, items, counts, zero_based):
    """Convert the rows' tokens: (indptr, 0-based columns int64, data, y).  Raises ValueError
    when a label or a value is not a number (possible only on the loosely matched fast path)."""
    rows = len(labels)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    if rows:
        np.cumsum(np.array(counts, dtype=np.int64), out=indptr[1:])
    nnz = int(indptr[-1])
    tokens = b" ".join(items).replace(b":", b" ").split()
    if len(tokens) != 2 * nnz:     # pragma: no cover - the regular expressions guarantee it
        raise AssertionError("svmlight parser: token count mismatch")
    y = _convert(labels, float, np.float64)
    data = _convert(tokens[1::2], float, np.float64)
    cols = _convert(tokens[0::2], int, np.int64)
    if not zero_based:
        cols -= 1
    return indptr, cols, data, y


def _first_bad_row(indptr, cols, data, y):
    """The first row with a zero index, indices not increasing or a non-finite number, or None."""
    rows = len(y)
    nnz = len(cols)
    bad = []
    if nnz:
        step = np.empty(nnz, dtype=bool)
        step[0] = True
        np.greater(cols[1:], cols[:-1], out=step[1:])
        starts = indptr[:-1]
        step[starts[starts < nnz]] = True          # the first feature of a row has no predecessor
        problem = ~step | (cols < 0) | (cols > MAX_COLUMN) | ~np.isfinite(data)
        hit = np.flatnonzero(problem)
        if len(hit):
            bad.append(int(np.searchsorted(indptr, hit[0], side="right")) - 1)
    if rows:
        hit = np.flatnonzero(~np.isfinite(y))
        if len(hit):
            bad.append(int(hit[0]))
    return min(bad) if bad else None


def _finish(name, indptr, cols, data, y, qids, comments, want_comments, line_of_row,
            costs=None):
    """The arrays of parse_bytes; ``line_of_row(r)`` gives (0-based line number, line bytes) of
    row r (asked only for the first row whose label is not a class label); ``costs`` the rows'
    ``cost:`` values (None where absent), or None when no row has one."""
    if len(y) == 0:
        raise DataFormatError(name, None, "empty input: no examples found")
    max_col = int(cols.max()) if len(cols) else -1
    indices = cols.astype(np.int32)          # every column is at most MAX_COLUMN (checked)
    qid = None
    if qids is not None:
        qid = np.array([int(q) if q else 0 for q in qids], dtype=np.int64)
    comment_list = [_comment_text(c) for c in comments] if want_comments else None
    r = _first_non_class_label(y)
    note = None if r is None else _label_note(line_of_row(r))
    weights = None
    if costs is not None:
        weights = np.array([1.0 if c is None else c for c in costs], dtype=np.float64)
    return indptr, indices, data, y, qid, comment_list, max_col, note, weights


def _parse_fast(raw, name, zero_based, want_comments):
    """The whole input in one regular expression and bulk conversions; None when the input holds
    anything unusual (an error, sid/cost, a late qid, a very long token...)."""
    if raw[:3] == BOM:
        return None
    found = _FAST_INPUT.findall(raw)
    if len(found) != raw.count(b"\n") + 1:
        return None                                 # some line did not match
    rows = [t for t in found if t[0]]
    if rows:
        labels, qids, items, comments = zip(*rows)
    else:
        labels = qids = items = comments = ()
    if len(raw) >= MAX_TOKEN and (
            max(map(len, labels), default=0) >= MAX_TOKEN
            or any(_LONG_RUN.search(f) for f in items if len(f) >= MAX_TOKEN)):
        return None                                 # a number that may be too long
    counts = list(map(bytes.count, items, [b":"] * len(items)))
    try:
        indptr, cols, data, y = _csr(labels, items, counts, zero_based)
    except ValueError:
        return None                                 # a token float() refuses: not a number
    if _first_bad_row(indptr, cols, data, y) is not None:
        return None
    has_qid = any(qids)

    def line_of_row(r):
        n = [k for k, t in enumerate(found) if t[0]][r]
        return n, raw.split(b"\n")[n]

    return _finish(name, indptr, cols, data, y, qids if has_qid else None, comments,
                   want_comments, line_of_row)


def _parse_exact(raw, name, zero_based, want_comments):
    """Line by line: a strict regular expression for ordinary lines, :func:`_parse_line` for the
    others; reports the first error in file order exactly as the jitted parser."""
    if raw[:3] == BOM:
        raise DataFormatError(name, 1, BOM_REASON)
    lines = raw.split(b"\n")
    fast = _FAST_LINE.fullmatch
    long_run = _LONG_RUN.search
    labels = []         # label bytes, one per row
    items = []          # the row's index:value tokens (bytes, separated by white space)
    counts = []         # features per row
    row_line = []       # 0-based line number of each row
    slow_rows = set()   # rows parsed by _parse_line (already fully checked)
    qids = []           # bytes / int / None per row
    comments = []       # bytes or None per row
    costs = []          # the cost: value or None per row
    has_qid = False
    has_cost = False
    pending = None      # (line number, _LineError) of the first line _parse_line rejected

    for n, s in enumerate(lines):
        m = fast(s)
        if m is not None and (len(s) < MAX_TOKEN or long_run(s) is None):
            lab, q, f, c = m.groups()
            counts.append(f.count(b":"))
            w = None
        else:
            try:
                row = _parse_line(s, zero_based)
            except _LineError as err:
                pending = (n, err)
                break
            if row is None:
                continue
            lab, f, cnt, q, c, w = row
            slow_rows.add(len(labels))
            counts.append(cnt)
            if q is not None:
                q = str(q).encode()
        labels.append(lab)
        items.append(f)
        row_line.append(n)
        qids.append(q)
        comments.append(c)
        costs.append(w)
        if q is not None:
            has_qid = True
        if w is not None:
            has_cost = True

    indptr, cols, data, y = _csr(labels, items, counts, zero_based)
    # the errors the regular expression cannot see, found on the converted arrays
    r = _first_bad_row(indptr, cols, data, y)
    if r is not None:
        n = row_line[r]
        assert r not in slow_rows
        try:
            _parse_line(lines[n], zero_based)
        except _LineError as err:
            raise _data_format_error(name, lines, n, err) from None
        raise AssertionError(f"svmlight parser: line {n + 1} flagged but parses")  # pragma: no cover
    if pending is not None:
        raise _data_format_error(name, lines, pending[0], pending[1]) from None
    return _finish(name, indptr, cols, data, y, qids if has_qid else None, comments,
                   want_comments, lambda r: (row_line[r], lines[row_line[r]]),
                   costs if has_cost else None)


def parse_bytes(raw, name, zero_based, want_comments):
    """Parse svmlight text held in memory.

    Returns ``(indptr, indices, data, y, qid, comments, max_col, label_note, weights)``: CSR
    arrays (indptr int64, indices int32, data float64), the labels (float64), the query ids
    (int64, 0 where absent) or None when no line has one, the comments (a list of str, "" for rows without
    one) or None unless ``want_comments``, the largest 0-based column (-1 when there is no
    feature at all; ``n_features`` is ``max_col + 1``) and (line, label) of the first label that
    is not a class label, or None (``Problem.label_note``), and the rows' ``cost:`` weights
    (float64, 1.0 where a row has none) or None when no row has one.  Raises
    DataFormatError(name, line, reason) exactly as the jitted reader does, and
    DataFormatError(name, None, "empty input: no examples found") when there is no example.
    """
    if not isinstance(raw, bytes):
        raw = bytes(raw)
    zero_based = bool(zero_based)
    want_comments = bool(want_comments)
    out = _parse_fast(raw, name, zero_based, want_comments)
    if out is None:
        out = _parse_exact(raw, name, zero_based, want_comments)
    return out

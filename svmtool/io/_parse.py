"""Jitted svmlight/libsvm text parser: a counting pass and a fill pass over raw bytes.

The reader (:mod:`svmtool.io.svmlight`) cuts its input at newlines into pieces; for each piece
:func:`count_piece` gives upper bounds (newlines for rows, colons for non-zeros) and
:func:`fill_piece` parses it into preallocated arrays at given offsets.  Both are pure functions of
arrays, release the GIL and run in parallel threads on different pieces.

Grammar of one line (whitespace is space, tab or CR)::

    line    := ws* ( '#' comment | label ( ws+ item )* ws* ( '#' comment )? )? '\\n'
    item    := index ':' number | 'qid' ':' integer | 'cost' ':' number | 'sid' ':' token
    label   := number

Blank lines and lines holding only a comment are skipped (they are not examples).

Numbers are converted exactly (correctly rounded, bit-identical to Python's ``float``): decimal
strings with at most 19 significant digits whose mantissa fits in 53 bits and whose decimal
exponent is within +-22 take Clinger's fast path (one exact IEEE multiplication or division);
everything else goes through the C library's ``strtod``.

``cost:<number>`` is SVMlight's weight of the example (its C is multiplied by it): a finite
number, 0 or more; rows without one weigh 1.  ``sid:`` tokens are skipped.

Limits: a feature index must fit in LIBLINEAR's int (column at most ``MAX_COLUMN``, checked as
the index is read, so an absurd index never reaches an allocation); ``qid`` is any int64.

Errors are not raised here: :func:`fill_piece` returns a status code and the byte offset of the
offending token, and the Python layer turns that into ``FILE:LINE: reason``.  It also returns the
offset of the first label that is not a class label (not an integer a C int holds; see
``_grammar.MAX_CLASS_LABEL``), which costs one comparison per row and lets a classification
solver name that line later.
"""

import numpy as np

from svmtool._jit import c_strtod, njit

# status codes and messages: one definition shared with the pure-Python parser
from svmtool.io._grammar import (  # noqa: E402,F401
    ERR_BAD_COST, ERR_COST_NEGATIVE, ERR_COST_NOT_FINITE,
    ERR_BAD_INDEX, ERR_BAD_LABEL, ERR_BAD_QID, ERR_BAD_TOKEN, ERR_BAD_VALUE, ERR_DUPLICATE,
    ERR_INDEX_TOO_BIG, ERR_INDEX_ZERO, ERR_LABEL_NOT_FINITE, ERR_NO_LABEL, ERR_NOT_INCREASING,
    ERR_TOO_LONG, ERR_VALUE_NOT_FINITE, MAX_CLASS_LABEL, MAX_COLUMN, MAX_TOKEN, MESSAGES,
    MIN_CLASS_LABEL, OK)

# exact powers of ten for Clinger's fast path
_P10 = np.array([10.0 ** k for k in range(23)], dtype=np.float64)
_MAX_TOKEN = MAX_TOKEN    # longest number handed to strtod (bytes)
_TWO53 = 1 << 53

COLUMN_LIMIT = np.int64(MAX_COLUMN)
# qid: digits accumulate as a negative number (|INT64_MIN| = INT64_MAX + 1 fits only there)
_QID_CUTOFF = np.int64((2**63 - 1) // 10)
_LABEL_LO = float(MIN_CLASS_LABEL)
_LABEL_HI = float(MAX_CLASS_LABEL)


@njit
def count_piece(buf, start, end):
    """Upper bounds for a piece: (newlines, colons)."""
    nl = 0
    colons = 0
    for i in range(start, end):
        c = buf[i]
        nl += c == 10
        colons += c == 58
    return nl, colons


@njit
def _is_ws(c):
    return c == 32 or c == 9 or c == 13


@njit
def _is_delim(c):
    # what may follow a number: whitespace, newline, a comment
    return c == 32 or c == 9 or c == 13 or c == 10 or c == 35


@njit
def _parse_number(buf, i, end, tmp, p10):
    """Parse a decimal number at buf[i:]; return (value, next_index, status).

    status 0 ok, 1 not a number, 2 not finite (nan/inf), 3 too long.  The number must be followed
    by a delimiter (or the end of the piece) or by ':' (checked by the caller for indices).
    """
    j = i
    neg = False
    if j < end and (buf[j] == 45 or buf[j] == 43):  # - +
        neg = buf[j] == 45
        j += 1
    if j < end:
        c = buf[j]
        if c == 110 or c == 78 or c == 105 or c == 73:  # n N i I
            return 0.0, j, 2
    mant = np.uint64(0)
    ndig = 0          # significant digits accumulated into mant
    dropped = False   # nonzero digits beyond what mant can hold exactly
    exp10 = 0
    any_digit = False
    while j < end:
        c = buf[j]
        if c < 48 or c > 57:
            break
        any_digit = True
        if ndig < 19:
            if ndig > 0 or c != 48:
                mant = mant * np.uint64(10) + np.uint64(c - 48)
                ndig += 1
        else:
            exp10 += 1
            if c != 48:
                dropped = True
        j += 1
    if j < end and buf[j] == 46:  # .
        j += 1
        while j < end:
            c = buf[j]
            if c < 48 or c > 57:
                break
            any_digit = True
            if ndig < 19:
                if ndig > 0 or c != 48:
                    mant = mant * np.uint64(10) + np.uint64(c - 48)
                    ndig += 1
                exp10 -= 1
            elif c != 48:
                dropped = True
            j += 1
    if not any_digit:
        return 0.0, j, 1
    if j < end and (buf[j] == 101 or buf[j] == 69):  # e E
        k = j + 1
        eneg = False
        if k < end and (buf[k] == 45 or buf[k] == 43):
            eneg = buf[k] == 45
            k += 1
        e = 0
        edig = 0
        while k < end:
            c = buf[k]
            if c < 48 or c > 57:
                break
            if e < 100000:
                e = e * 10 + (c - 48)
            edig += 1
            k += 1
        if edig == 0:
            return 0.0, k, 1
        exp10 += -e if eneg else e
        j = k
    # fast exact path
    if not dropped and mant <= np.uint64(_TWO53) and -22 <= exp10 <= 22:
        v = float(mant)
        if exp10 >= 0:
            v = v * p10[exp10]
        else:
            v = v / p10[-exp10]
        if neg:
            v = -v
        return v, j, 0
    if mant == np.uint64(0) and not dropped:
        return (-0.0 if neg else 0.0), j, 0
    # correctly rounded fallback through strtod on a NUL-terminated copy
    n = j - i
    if n >= _MAX_TOKEN:
        return 0.0, j, 3
    for t in range(n):
        tmp[t] = buf[i + t]
    tmp[n] = 0
    v = c_strtod(tmp.ctypes.data, 0)
    if v != v or v == np.inf or v == -np.inf:
        return v, j, 2
    return v, j, 0


@njit
def fill_piece(buf, start, end, zero_based, want_comments, max_col,
               indptr, indices, data, y, qid, cost, cstart, cend, row0, nnz0):
    """Parse buf[start:end] (whole lines) into the arrays from row ``row0`` / non-zero ``nnz0``.

    Writes indptr[row0 + r + 1] (absolute positions), y[row0 + r], qid[row0 + r] (0 where absent),
    cost[row0 + r] (1.0 where absent), indices/data from nnz0, and when ``want_comments`` the
    byte span of each row's comment.  ``max_col`` is the largest column accepted
    (``COLUMN_LIMIT``).  Returns (status, error_offset, rows, nnz, largest_column, has_qid,
    note_offset, has_cost), ``note_offset`` being the offset of the first label that is not a
    class label (-1 if none).
    """
    tmp = np.empty(_MAX_TOKEN + 1, dtype=np.uint8)
    p10 = _P10
    i = start
    r = row0
    k = nnz0
    biggest = np.int64(-1)
    has_qid = False
    has_cost = False
    note = -1
    while i < end:
        # start of a line: skip leading white space
        while i < end and _is_ws(buf[i]):
            i += 1
        if i >= end:
            break
        c = buf[i]
        if c == 10:
            i += 1
            continue
        if c == 35:
            while i < end and buf[i] != 10:
                i += 1
            i += 1
            continue
        # label
        tok = i
        lab, i, st = _parse_number(buf, i, end, tmp, p10)
        if st == 0 and i < end and not _is_delim(buf[i]):
            st = 1
        if st != 0:
            if st == 2:
                return (ERR_LABEL_NOT_FINITE, tok, r - row0, k - nnz0, biggest,
                        has_qid, note, has_cost)
            if st == 3:
                return ERR_TOO_LONG, tok, r - row0, k - nnz0, biggest, has_qid, note, has_cost
            # a feature where the label should be?
            q = tok
            while q < end and not _is_delim(buf[q]):
                if buf[q] == 58:
                    return ERR_NO_LABEL, tok, r - row0, k - nnz0, biggest, has_qid, note, has_cost
                q += 1
            return ERR_BAD_LABEL, tok, r - row0, k - nnz0, biggest, has_qid, note, has_cost
        y[r] = lab
        if note < 0 and not (lab == np.floor(lab) and _LABEL_LO <= lab <= _LABEL_HI):
            note = tok
        qid[r] = 0
        cost[r] = 1.0
        if want_comments:
            cstart[r] = 0
            cend[r] = 0
        prev = np.int64(-1)
        while True:
            while i < end and _is_ws(buf[i]):
                i += 1
            if i >= end:
                break
            c = buf[i]
            if c == 10:
                i += 1
                break
            if c == 35:
                i += 1
                if want_comments:
                    cstart[r] = i
                while i < end and buf[i] != 10:
                    i += 1
                if want_comments:
                    e = i
                    while e > cstart[r] and buf[e - 1] == 13:
                        e -= 1
                    cend[r] = e
                i += 1
                break
            tok = i
            if 48 <= c <= 57:
                idx = np.int64(0)
                nd = 0          # significant digits (leading zeros are not)
                while i < end and 48 <= buf[i] <= 57:
                    d = buf[i] - 48
                    if nd > 0 or d != 0:
                        if nd < 18:
                            idx = idx * 10 + d
                        nd += 1
                    i += 1
                if i >= end or buf[i] != 58:
                    return ERR_BAD_INDEX, tok, r - row0, k - nnz0, biggest, has_qid, note, has_cost
                if nd > 18:
                    return (ERR_INDEX_TOO_BIG, tok, r - row0, k - nnz0, biggest,
                            has_qid, note, has_cost)
                i += 1
                if zero_based:
                    col = idx
                else:
                    if idx == 0:
                        return (ERR_INDEX_ZERO, tok, r - row0, k - nnz0, biggest,
                                has_qid, note, has_cost)
                    col = idx - 1
                if col <= prev:
                    if col == prev:
                        return (ERR_DUPLICATE, tok, r - row0, k - nnz0, biggest,
                                has_qid, note, has_cost)
                    return (ERR_NOT_INCREASING, tok, r - row0, k - nnz0, biggest,
                            has_qid, note, has_cost)
                if col > max_col:
                    return (ERR_INDEX_TOO_BIG, tok, r - row0, k - nnz0, biggest,
                            has_qid, note, has_cost)
                val, i, st = _parse_number(buf, i, end, tmp, p10)
                if st == 0 and i < end and not _is_delim(buf[i]):
                    st = 1
                if st != 0:
                    if st == 2:
                        return (ERR_VALUE_NOT_FINITE, tok, r - row0, k - nnz0, biggest,
                                has_qid, note, has_cost)
                    if st == 3:
                        return (ERR_TOO_LONG, tok, r - row0, k - nnz0, biggest,
                                has_qid, note, has_cost)
                    return ERR_BAD_VALUE, tok, r - row0, k - nnz0, biggest, has_qid, note, has_cost
                indices[k] = col
                data[k] = val
                k += 1
                prev = col
                if col > biggest:
                    biggest = col
            elif (c == 113 and i + 3 < end and buf[i + 1] == 105 and buf[i + 2] == 100
                  and buf[i + 3] == 58):  # qid:
                i += 4
                qneg = False
                if i < end and (buf[i] == 45 or buf[i] == 43):
                    qneg = buf[i] == 45
                    i += 1
                qv = np.int64(0)        # minus the value read so far
                last = 8 if qneg else 7  # last digit of INT64_MIN / INT64_MAX
                nd = 0
                overflow = False
                while i < end and 48 <= buf[i] <= 57:
                    d = np.int64(buf[i] - 48)
                    if not overflow:
                        if qv < -_QID_CUTOFF or (qv == -_QID_CUTOFF and d > last):
                            overflow = True
                        else:
                            qv = qv * 10 - d
                    nd += 1
                    i += 1
                if nd == 0 or overflow or (i < end and not _is_delim(buf[i])):
                    return ERR_BAD_QID, tok, r - row0, k - nnz0, biggest, has_qid, note, has_cost
                qid[r] = qv if qneg else -qv
                has_qid = True
            elif (c == 99 and i + 4 < end and buf[i + 1] == 111 and buf[i + 2] == 115
                  and buf[i + 3] == 116 and buf[i + 4] == 58):  # cost:
                cv, i, st = _parse_number(buf, i + 5, end, tmp, p10)
                if st == 0 and i < end and not _is_delim(buf[i]):
                    st = 1
                bad = OK
                if st == 2:
                    bad = ERR_COST_NOT_FINITE
                elif st == 3:
                    bad = ERR_TOO_LONG
                elif st != 0:
                    bad = ERR_BAD_COST
                elif cv < 0.0:
                    bad = ERR_COST_NEGATIVE
                if bad != OK:
                    return bad, tok, r - row0, k - nnz0, biggest, has_qid, note, has_cost
                cost[r] = cv
                has_cost = True
            elif (c == 115 and i + 3 < end and buf[i + 1] == 105 and buf[i + 2] == 100
                  and buf[i + 3] == 58):  # sid:
                while i < end and not _is_delim(buf[i]):
                    i += 1
            else:
                return ERR_BAD_TOKEN, tok, r - row0, k - nnz0, biggest, has_qid, note, has_cost
        r += 1
        indptr[r] = k
    return OK, -1, r - row0, k - nnz0, biggest, has_qid, note, has_cost


@njit
def find_line_starts(buf, start, end, n):
    """n+1 cut points splitting buf[start:end] into n pieces of whole lines (roughly equal)."""
    cuts = np.empty(n + 1, dtype=np.int64)
    cuts[0] = start
    cuts[n] = end
    size = end - start
    for p in range(1, n):
        pos = start + (size * p) // n
        if pos < cuts[p - 1]:
            pos = cuts[p - 1]
        while pos < end and pos > start and buf[pos - 1] != 10:
            pos += 1
        cuts[p] = pos
    return cuts


@njit
def count_newlines(buf, start, end):
    n = 0
    for i in range(start, end):
        n += buf[i] == 10
    return n

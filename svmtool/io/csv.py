"""Dense CSV input: one example per line, one column holding the label, the others the features.

``load_csv(source, label_column=0, header=None, delimiter=",")`` returns a
:class:`~svmtool.problem.Problem`: the label comes from ``label_column`` (0 = first, -1 = last),
the remaining columns, in order, become features 1, 2, ...; zeros are not stored.  ``header``:
``True`` skips the first line, ``False`` reads it as data, ``None`` (default) skips it when one of
its fields is not a number.  Blank lines are skipped; every data line must have the same number
of fields; fields may be quoted with ``"``; values must be finite numbers.  ``source`` is a path
or ``-`` (stdin), plain or gzip/bzip2/xz-compressed (told by magic bytes, as for svmlight text).

The file is read in blocks of whole lines, each parsed by numpy's C reader (``np.loadtxt``); a
block that it rejects is scanned line by line in Python to name the file, line and reason.
"""

import io

import numpy as np

from svmtool.errors import DataFormatError
from svmtool.problem import Problem

BLOCK_BYTES = 16 << 20


def _blocks(source, block_bytes):
    """Yield (bytes of whole lines, number of lines before them), and the display name first."""
    from svmtool.io.source import open_input as _Input

    with _Input(source) as inp:
        yield inp.name
        if inp.buf is not None:
            buf = inp.buf
            start, line0, size = 0, 0, len(buf)
            while start < size:
                end = min(size, start + block_bytes)
                if end < size:
                    cut = bytes(buf[end:min(size, end + (1 << 20))]).find(b"\n")
                    while cut < 0 and end < size:           # a very long line
                        end = min(size, end + (1 << 20))
                        cut = bytes(buf[end:min(size, end + (1 << 20))]).find(b"\n")
                    end = size if cut < 0 else end + cut + 1
                chunk = bytes(buf[start:end])
                yield chunk, line0
                line0 += chunk.count(b"\n")
                start = end
        else:
            leftover = b""
            line0 = 0
            while True:
                data = inp.stream.read(block_bytes)
                if not data:
                    break
                data = leftover + data
                cut = data.rfind(b"\n")
                if cut < 0:
                    leftover = data
                    continue
                chunk, leftover = data[:cut + 1], data[cut + 1:]
                yield chunk, line0
                line0 += chunk.count(b"\n")
            if leftover:
                yield leftover, line0


def _split(line, delimiter):
    """Fields of one line, with simple "double quote" support."""
    if '"' not in line:
        return line.split(delimiter)
    import csv

    return next(csv.reader([line], delimiter=delimiter))


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def _scan_errors(name, text, line0, n_cols, delimiter):
    """Find the first bad line of a block the fast reader rejected and raise for it."""
    for k, line in enumerate(text.split("\n")):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        fields = _split(line, delimiter)
        if len(fields) != n_cols:
            raise DataFormatError(name, line0 + k + 1,
                                  f"{len(fields)} fields, expected {n_cols} (as on the first line)")
        for col, f in enumerate(fields):
            f = f.strip()
            if f == "":
                raise DataFormatError(name, line0 + k + 1, f"empty field in column {col + 1}")
            try:
                v = float(f)
            except ValueError:
                raise DataFormatError(name, line0 + k + 1,
                                      f"field {f!r} in column {col + 1} is not a number") from None
            if not np.isfinite(v):
                raise DataFormatError(name, line0 + k + 1,
                                      f"field {f!r} in column {col + 1} is not finite")
    raise DataFormatError(name, line0 + 1, "cannot parse this block of lines")


def _parse_block(name, text, line0, n_cols, delimiter):
    try:
        a = np.loadtxt(io.StringIO(text), delimiter=delimiter, dtype=np.float64, ndmin=2,
                       comments=None, quotechar='"', encoding=None)
    except ValueError:
        _scan_errors(name, text, line0, n_cols, delimiter)
        raise
    if a.shape[0] and a.shape[1] != n_cols:
        _scan_errors(name, text, line0, n_cols, delimiter)
    if not np.all(np.isfinite(a)):
        _scan_errors(name, text, line0, n_cols, delimiter)
    return a


def load_csv(source, *, label_column=0, header=None, delimiter=",", block_bytes=BLOCK_BYTES):
    """Read a dense CSV file into a Problem (see the module notes)."""
    gen = _blocks(source, block_bytes)
    name = next(gen)
    parts = []
    n_cols = None
    label = None
    for chunk, line0 in gen:
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as e:
            line = line0 + chunk[: e.start].count(b"\n") + 1
            raise DataFormatError(name, line, "not UTF-8 text") from None
        if text.startswith("\ufeff") and line0 == 0:
            text = text[1:]                                  # a byte-order mark
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if n_cols is None:
            # the first non-blank line decides the width and whether it is a header
            lines = text.split("\n")
            k = 0
            while k < len(lines) and not lines[k].strip():
                k += 1
            if k == len(lines):
                continue
            fields = _split(lines[k], delimiter)
            n_cols = len(fields)
            if n_cols < 1:
                raise DataFormatError(name, line0 + k + 1, "no fields")
            label = label_column if label_column >= 0 else n_cols + label_column
            if not 0 <= label < n_cols:
                raise DataFormatError(name, line0 + k + 1,
                                      f"label column {label_column} does not exist (the line "
                                      f"has {n_cols} fields; columns count from 0)")
            is_header = header
            if is_header is None:
                is_header = not all(_is_number(f.strip()) for f in fields)
            if is_header:
                skip = k + 1
                text = "\n" * skip + "\n".join(lines[skip:])
        a = _parse_block(name, text, line0, n_cols, delimiter)
        if a.shape[0] == 0:
            continue
        y = a[:, label].copy()
        feats = np.delete(a, label, axis=1) if n_cols > 1 else np.zeros((a.shape[0], 0))
        mask = feats != 0
        counts = mask.sum(axis=1)
        rows, cols = np.nonzero(mask)
        parts.append((counts, cols.astype(np.int32), feats[rows, cols], y))
    if not parts:
        raise DataFormatError(name, None, "empty input: no examples found")
    counts = np.concatenate([p[0] for p in parts])
    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.concatenate([p[1] for p in parts])
    data = np.concatenate([p[2] for p in parts]).astype(np.float64, copy=False)
    y = np.concatenate([p[3] for p in parts])
    return Problem(indptr, indices, data, y, n_cols - 1, source=name)

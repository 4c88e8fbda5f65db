"""Text helpers shared by the model-file formats (LIBLINEAR, LIBSVM, early, SVMlight).

Numbers are written so that they read back to the same double (``%.17g``), labels as integers when
integral; numbers are read strictly, as the C programs' ``strtod``/``atoi`` would accept them, and
every complaint is a :class:`~svmtool.errors.ModelFormatError` naming file and line.  The sparse
row lines of LIBSVM-style sections (``<prefix numbers> index:value ...``) and the kernel header
lines are shared by the LIBSVM and early-prediction formats.
"""

import math
import sys

import numpy as np

from svmtool.errors import ModelFormatError
# svmtool.ops.kernels (Kernel, Rows) is imported inside the functions that build them: it imports
# numba, which reading or writing a linear model must not pay for.


def format_g17(v) -> str:
    """``%.17g`` of a float: enough digits to read back the same double."""
    return "%.17g" % v


def format_label(v) -> str:
    """A class label as LIBLINEAR writes it: an integer when integral, else ``%.17g``."""
    v = float(v)
    if np.isfinite(v) and v == int(v):
        return "%d" % int(v)
    return "%.17g" % v


def parse_float(token, name, line, what):
    """A finite number as C's strtod reads it; ModelFormatError naming the file and line if not.

    NaN and infinity (``nan``, ``inf``, or a number beyond the doubles such as ``1e999``) are
    refused: no model svmtool or the reference tools train holds one, and a model that did would
    predict garbage without a word."""
    # float() also takes '1_000' and surrounding blanks; C's strtod does not: refuse them.
    if "_" not in token:
        try:
            v = float(token)
        except ValueError:
            pass
        else:
            if math.isfinite(v):
                return v
            # nan/inf would predict garbage (every decision value nan): a corrupt model
            raise ModelFormatError(name, line, f"{what}: {token!r} is not a finite number")
    raise ModelFormatError(name, line, f"{what}: {token!r} is not a number")


def parse_int(token, name, line, what, minimum=0, maximum=2**63 - 1):
    """A decimal integer in [``minimum``, ``maximum``] (by default what fits in 64 bits);
    ModelFormatError naming the file and line if not."""
    try:
        if "_" in token:
            raise ValueError
        v = int(token)
    except ValueError:
        raise ModelFormatError(name, line, f"{what}: {token!r} is not an integer") from None
    if v < minimum:
        raise ModelFormatError(name, line, f"{what} must be >= {minimum} (got {v})")
    if v > maximum:
        raise ModelFormatError(name, line, f"{what} must be <= {maximum} (got {v})")
    return v


def read_bytes(path):
    """(bytes, display name) of a model file, ``-`` for stdin."""
    if path == "-":
        return sys.stdin.buffer.read(), "<stdin>"
    with open(path, "rb") as f:
        return f.read(), str(path)


def decode(raw: bytes, name: str) -> str:
    """The ASCII text of a model file; refuses empty and binary files."""
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


def first_line(text):
    """(1-based number, content) of the first non-blank line."""
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            return number, line.strip()
    return 1, ""


def sv_lines(rows, prefixes, value_fmt="%.17g"):
    """One line per row: prefix, then index:value pairs (1-based), values by ``value_fmt``
    (``%.17g``; ``%r``, the shortest text that reads back the same double, is shorter and
    faster for values read from text).

    All rows in one formatting operation (one format string, one flat tuple), not a generator
    and join per value: one call into the formatter instead of one per value, the same text."""
    import numpy as np

    ip, ix, dt = rows.indptr, rows.indices, rows.data
    n = len(prefixes)
    if n == 0:
        return []
    lo, hi = int(ip[0]), int(ip[n])
    lens = np.diff(ip[:n + 1]).tolist()
    flat = [None] * (2 * (hi - lo))
    flat[0::2] = (ix[lo:hi].astype(np.int64) + 1).tolist()
    flat[1::2] = dt[lo:hi].tolist()
    pair = "%d:" + value_fmt + " "
    fmt = "\n".join(pre.replace("%", "%%") + " " + pair * k for pre, k in zip(prefixes, lens))
    return (fmt % tuple(flat)).split("\n")


def kernel_head(kernel):
    """The kernel lines of a LIBSVM header (only the parameters the kernel uses)."""
    head = [f"kernel_type {kernel.name}"]
    if kernel.ktype == 1:
        head.append(f"degree {int(kernel.degree)}")
    if kernel.ktype in (1, 2, 3):
        head.append(f"gamma {format_g17(kernel.gamma)}")
    if kernel.ktype in (1, 3):
        head.append(f"coef0 {format_g17(kernel.coef0)}")
    return head


def kernel_from_header(h, name):
    """The Kernel of a parsed header ``{key: (line, values)}``."""
    from svmtool.ops.kernels import KERNEL_NAMES, Kernel

    kernel_types = {name: i for i, name in enumerate(KERNEL_NAMES)}
    ln, toks = h.get("kernel_type", (None, None))
    if toks is None:
        raise ModelFormatError(name, None, "missing 'kernel_type' in the model header")
    if toks[0] not in kernel_types:
        what = "precomputed kernels are not supported" if toks[0] == "precomputed" else \
            f"unknown kernel_type {toks[0]!r}"
        raise ModelFormatError(name, ln, what)
    kt = kernel_types[toks[0]]

    def get(key, default, conv=parse_float):
        if key not in h:
            return default
        line, t = h[key]
        return conv(t[0], name, line, key)

    def degree(token, name, line, what):
        return parse_int(token, name, line, what, maximum=2**31 - 1)    # a C int in LIBSVM

    return Kernel(kt, get("gamma", 0.0), get("coef0", 0.0), int(get("degree", 3, degree)), 0.0)


def parse_rows(lines, first_line_no, n_prefix, name, what):
    """Parse lines of '<n_prefix numbers> idx:val ...'; returns (prefix array, Rows)."""
    from svmtool.ops.kernels import Rows

    pre = np.empty((len(lines), n_prefix))
    indptr = np.zeros(len(lines) + 1, dtype=np.int64)
    idx, val = [], []
    for r, line in enumerate(lines):
        no = first_line_no + r
        toks = line.split()
        if len(toks) < n_prefix:
            raise ModelFormatError(name, no, f"{what}: expected {n_prefix} number(s) before the "
                                             f"features, found {len(toks)}")
        for k in range(n_prefix):
            pre[r, k] = parse_float(toks[k], name, no, what)
        last = -1
        for t in toks[n_prefix:]:
            a, sep, b = t.partition(":")
            if not sep:
                raise ModelFormatError(name, no, f"{what}: {t!r} is not index:value")
            c = parse_int(a, name, no, "feature index", minimum=0)
            col = c - 1 if c > 0 else 0      # index 0 (LIBSVM accepts it) is column 0 too
            if col <= last:
                raise ModelFormatError(name, no, f"{what}: feature indices not increasing at "
                                                 f"{t!r}")
            last = col
            idx.append(col)
            val.append(parse_float(b, name, no, "feature value"))
        indptr[r + 1] = len(idx)
    indices = np.array(idx, dtype=np.int32 if (not idx or max(idx) < 2 ** 31 - 1) else np.int64)
    return pre, Rows(indptr, indices, np.array(val, dtype=np.float64))

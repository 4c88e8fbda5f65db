"""svmtool's binary cache: a data set as raw little-endian arrays, loaded by memory-mapping.

Parsing text costs seconds per hundred megabytes; mapping the arrays of a cache costs
milliseconds, so a data set used more than once (parameter search, cron jobs) is converted once
with ``svmtool convert data.txt data.cache`` and read from the cache afterwards.  Every command
reads data through :func:`svmtool.io.svmlight.load_data`, which recognises a cache by its first
eight bytes (:data:`CACHE_MAGIC`), so a cache can stand wherever a data file is expected.

Layout (format version 2 for a problem with instance weights, 1 otherwise; all integers
little-endian)::

    offset  size  field
         0     8  CACHE_MAGIC  b"\\x93SVMTC\\r\\n" (not text, not gzip/bz2/xz/npy; the CR LF
                                catches a file mangled by newline translation)
         8     4  version      uint32, 1
        12     4  header_size  uint32, bytes before the first array (a multiple of 64)
        16     4  flags        uint32, bit 0: qid present, bit 1: comments present,
                                bit 2: data_crc is set, bit 3: weights present (version 2)
        20     4  index_size   uint32, 4 (int32 indices) or 8 (int64 indices)
        24     8  n_rows       int64
        32     8  n_features   int64
        40     8  nnz          int64
        48    96  arrays       6 x (offset int64, nbytes int64): indptr, indices, data, y, qid,
                                comments (an absent array has offset 0 and nbytes 0)
       144     8  total_size   int64, the exact size of the file
       152     4  data_crc     uint32, zlib.crc32 over the bytes of all arrays in order
       156     4  header_crc   uint32, zlib.crc32 of bytes 0..155
       160        zero padding to header_size

    Version 2 has a seventh array entry, the instance weights, so from offset 48 on::

        48   112  arrays       7 x (offset int64, nbytes int64): the six above, then weights
       160     8  total_size   int64
       168     4  data_crc     uint32
       172     4  header_crc   uint32, zlib.crc32 of bytes 0..171
       176        zero padding to header_size

    A problem without weights is written as version 1, byte for byte what svmtool wrote before
    weights existed, so older svmtool releases still read it; one with weights is written as
    version 2, which those releases refuse by its version number rather than misread.

    then each array at an offset that is a multiple of 64 (zero padding between arrays):
      indptr  int64  n_rows + 1, starting at 0
      indices int32 or int64, nnz (0-based columns)
      data    float64, nnz
      y       float64, n_rows
      qid     int64, n_rows                     (optional)
      comments UTF-8 text, the n_rows comments joined by "\\n"   (optional)
      weights float64, n_rows, each finite and >= 0 (version 2, optional): Problem.weights

Loading checks the magic, the version, the header checksum and the file's length, which catches
truncated, foreign and newer files at no cost proportional to the data.  ``verify=True`` also
checks the arrays' checksum and the CSR invariants (one pass over the data).
"""

import mmap as _mmap
import os
import struct
import sys
import zlib

import numpy as np

from svmtool.errors import CacheFormatError
from svmtool.io.magic import CACHE_MAGIC, is_cache
from svmtool.io.output import open_output
from svmtool.problem import Problem

CACHE_VERSION = 2              # the newest version read and written (1 is read and written too)
ALIGN = 64

FLAG_QID = 1
FLAG_COMMENTS = 2
FLAG_DATA_CRC = 4
FLAG_WEIGHTS = 8
_KNOWN_FLAGS = {1: FLAG_QID | FLAG_COMMENTS | FLAG_DATA_CRC,
                2: FLAG_QID | FLAG_COMMENTS | FLAG_DATA_CRC | FLAG_WEIGHTS}

# magic, version, header_size, flags, index_size, n_rows, n_features, nnz,
# 6 (version 1) or 7 (version 2) x (offset, nbytes), total_size, data_crc
_HEADS = {1: struct.Struct("<8sIIII3q12qqI"), 2: struct.Struct("<8sIIII3q14qqI")}
_HEAD = _HEADS[1]
_CRC = struct.Struct("<I")
_HEADER_SIZE = 192                       # the larger head + 4 rounded up to a multiple of ALIGN
assert max(h.size for h in _HEADS.values()) + _CRC.size <= _HEADER_SIZE
assert _HEADER_SIZE % ALIGN == 0

_NAMES = ("indptr", "indices", "data", "y", "qid", "comments", "weights")


def _align(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _arrays_of(problem):
    """The arrays to store, normalised to little-endian contiguous arrays of the cache's types."""
    indptr = np.asarray(problem.indptr)
    start, stop = int(indptr[0]), int(indptr[-1])
    indptr = np.ascontiguousarray(indptr - start if start else indptr, dtype="<i8")
    indices = np.asarray(problem.indices)[start:stop]
    # keep the index width the Problem has (int32, or int64 for very wide data)
    indices = np.ascontiguousarray(indices, dtype="<i4" if indices.dtype.itemsize <= 4 else "<i8")
    data = np.ascontiguousarray(np.asarray(problem.data)[start:stop], dtype="<f8")
    y = np.ascontiguousarray(problem.y, dtype="<f8")
    n_rows = len(indptr) - 1
    if len(y) != n_rows:
        raise ValueError(f"{len(y)} labels for {n_rows} rows")
    if len(indices) != len(data):
        raise ValueError(f"{len(indices)} indices but {len(data)} values")
    qid = None
    if problem.qid is not None:
        qid = np.ascontiguousarray(problem.qid, dtype="<i8")
        if len(qid) != n_rows:
            raise ValueError(f"{len(qid)} query ids for {n_rows} rows")
    comments = None
    if problem.comments is not None:
        if len(problem.comments) != n_rows:
            raise ValueError(f"{len(problem.comments)} comments for {n_rows} rows")
        texts = ["" if c is None else str(c) for c in problem.comments]
        if any("\n" in t for t in texts):
            raise ValueError("a comment contains a newline")
        comments = np.frombuffer("\n".join(texts).encode("utf-8"), dtype=np.uint8)
    weights = None
    if getattr(problem, "weights", None) is not None:
        weights = np.ascontiguousarray(problem.weights, dtype="<f8")
        if weights.shape != (n_rows,):
            raise ValueError(f"{weights.size} instance weights for {n_rows} rows")
        if not (np.all(np.isfinite(weights)) and np.all(weights >= 0)):
            raise ValueError("instance weights must be finite numbers >= 0")
    return [indptr, indices, data, y, qid, comments, weights]


def _layout(nbytes, checksum, crc):
    """The table of offsets and the total size for arrays of ``nbytes`` (None: absent)."""
    table = []
    pos = _HEADER_SIZE
    last = _HEADER_SIZE
    for nb in nbytes:
        if nb is None:
            table += [0, 0]
            continue
        table += [pos, nb]
        last = pos + nb
        pos = _align(pos + nb)
    # the file ends right after the last array (no padding after it)
    return table, max(last, _HEADER_SIZE)


def _pack_header(n_rows, n_features, nnz, index_size, nbytes, checksum, crc):
    """(header bytes, table) of a cache whose arrays have ``nbytes`` (None: absent): version 2
    when the weights (the seventh array) are present, version 1 (six arrays) otherwise."""
    nbytes = list(nbytes) + [None] * (len(_NAMES) - len(nbytes))
    version = 2 if nbytes[6] is not None else 1
    if version == 1:
        nbytes = nbytes[:6]
    table, total = _layout(nbytes, checksum, crc)
    flags = ((FLAG_QID if nbytes[4] is not None else 0)
             | (FLAG_COMMENTS if nbytes[5] is not None else 0)
             | (FLAG_DATA_CRC if checksum else 0)
             | (FLAG_WEIGHTS if version == 2 else 0))
    head = _HEADS[version].pack(CACHE_MAGIC, version, _HEADER_SIZE, flags, index_size,
                                n_rows, int(n_features), nnz, *table, total,
                                crc if checksum else 0)
    head += _CRC.pack(zlib.crc32(head))
    return head, table, total


def save_cache(problem, path, *, checksum=True):
    """Write ``problem`` to ``path`` as a cache (``"-"`` writes to stdout; see :mod:`svmtool.io.output`).

    ``checksum=True`` stores a CRC-32 of the arrays, checked by ``load_cache(verify=True)``.
    """
    arrays = _arrays_of(problem)
    n_rows = len(arrays[0]) - 1
    nnz = len(arrays[2])
    crc = 0
    if checksum:
        for a in arrays:
            if a is not None:
                crc = zlib.crc32(memoryview(a).cast("B"), crc)
    head, table, total = _pack_header(n_rows, problem.n_features, nnz, arrays[1].itemsize,
                                      [None if a is None else a.nbytes for a in arrays],
                                      checksum, crc)
    with open_output(path, "wb") as f:
        f.write(head)
        written = len(head)
        for a, off in zip(arrays, table[0::2]):
            if a is None:
                continue
            if off > written:
                f.write(b"\0" * (off - written))
                written = off
            if a.nbytes:
                f.write(memoryview(a).cast("B"))
            written += a.nbytes
        if written < total:                       # only for a cache without any array bytes
            f.write(b"\0" * (total - written))


class _Header:
    pass


def _parse_header(buf, size, name):
    """Check and decode the header from the first bytes ``buf`` of a ``size``-byte file."""
    if len(buf) < len(CACHE_MAGIC) or not is_cache(buf):
        raise CacheFormatError(name, "not an svmtool cache (wrong magic bytes)")
    if len(buf) < 12:
        raise CacheFormatError(name, f"truncated cache: {size} bytes, too short for a header")
    version = struct.unpack_from("<I", buf, 8)[0]
    if version > CACHE_VERSION:
        raise CacheFormatError(
            name, f"cache format version {version} is newer than this svmtool (reads "
                  f"{CACHE_VERSION}); convert the data again or upgrade svmtool")
    if version < 1:
        raise CacheFormatError(name, f"unknown cache format version {version}")
    head = _HEADS[version]
    if len(buf) < head.size + _CRC.size:
        raise CacheFormatError(
            name, f"truncated cache: expected at least {_HEADER_SIZE} bytes, found {size}")
    stored_crc = _CRC.unpack_from(buf, head.size)[0]
    if zlib.crc32(bytes(buf[: head.size])) != stored_crc:
        raise CacheFormatError(name, "corrupt cache: header checksum does not match")
    h = _unpack(head.unpack_from(buf, 0))
    if h.header_size < head.size + _CRC.size or h.header_size % ALIGN:
        raise CacheFormatError(name, f"corrupt cache: header size {h.header_size}")
    if h.flags & ~_KNOWN_FLAGS[h.version]:
        raise CacheFormatError(name, f"corrupt cache: unknown flags {h.flags:#x}")
    if h.index_size not in (4, 8):
        raise CacheFormatError(name, f"corrupt cache: index size {h.index_size}")
    if h.n_rows < 0 or h.nnz < 0 or h.n_features < 0:
        raise CacheFormatError(name, "corrupt cache: negative size in header")
    expected = [(h.n_rows + 1) * 8, h.nnz * h.index_size, h.nnz * 8, h.n_rows * 8,
                h.n_rows * 8 if h.flags & FLAG_QID else 0, None, h.n_rows * 8]
    for i, (off, nbytes) in enumerate(h.table):
        if not _present(h, i):
            if off or nbytes:
                raise CacheFormatError(name, f"corrupt cache: stray {_NAMES[i]} array")
            continue
        if expected[i] is not None and nbytes != expected[i]:
            raise CacheFormatError(
                name, f"corrupt cache: {_NAMES[i]} has {nbytes} bytes, expected {expected[i]}")
        if off % ALIGN or off < h.header_size or off + nbytes > h.total_size:
            raise CacheFormatError(name, f"corrupt cache: bad offset of {_NAMES[i]}")
    if size < h.total_size:
        raise CacheFormatError(
            name, f"truncated cache: expected {h.total_size} bytes, found {size}")
    if size > h.total_size:
        raise CacheFormatError(
            name, f"corrupt cache: {size} bytes, but the header says {h.total_size}")
    return h


def _unpack(fields):
    """A _Header of the unpacked fields of a version 1 or 2 head (6 or 7 array entries); a
    version 1 header's weights entry is (0, 0), absent."""
    h = _Header()
    (_, h.version, h.header_size, h.flags, h.index_size, h.n_rows, h.n_features,
     h.nnz) = fields[:8]
    k = (len(fields) - 10) // 2
    table = fields[8:8 + 2 * k]
    h.total_size, h.data_crc = fields[8 + 2 * k], fields[9 + 2 * k]
    h.table = [(table[2 * i], table[2 * i + 1]) for i in range(k)]
    h.table += [(0, 0)] * (len(_NAMES) - k)
    return h


def _present(h, i):
    return i < 4 or (i == 4 and bool(h.flags & FLAG_QID)) or (
        i == 5 and bool(h.flags & FLAG_COMMENTS)) or (i == 6 and bool(h.flags & FLAG_WEIGHTS))


def _kinds(h):
    return ["<i8", "<i4" if h.index_size == 4 else "<i8", "<f8", "<f8", "<i8", "u1", "<f8"]


def _views(h, buf):
    """numpy views of the arrays inside ``buf`` (a mmap, bytearray or bytes)."""
    out = []
    for i, ((off, nbytes), kind) in enumerate(zip(h.table, _kinds(h))):
        if not _present(h, i):
            out.append(None)
            continue
        dt = np.dtype(kind)
        out.append(np.frombuffer(buf, dtype=dt, count=nbytes // dt.itemsize, offset=off))
    return out


def _build(h, arrays, name, verify):
    indptr, indices, data, y, qid, comments, weights = arrays
    if verify:
        crc = 0
        for a in arrays:
            if a is not None:
                crc = zlib.crc32(memoryview(np.ascontiguousarray(a)).cast("B"), crc)
        if h.flags & FLAG_DATA_CRC and crc != h.data_crc:
            raise CacheFormatError(name, "corrupt cache: array checksum does not match")
        _check_csr(h, indptr, indices, name)
    elif (int(indptr[0]) != 0 or int(indptr[-1]) != h.nnz):
        raise CacheFormatError(name, "corrupt cache: row pointers do not match the header")
    text = None
    if comments is not None:
        try:
            text = bytes(comments).decode("utf-8").split("\n") if h.n_rows else []
        except UnicodeDecodeError:
            raise CacheFormatError(name, "corrupt cache: comments are not UTF-8") from None
        if len(text) != h.n_rows:
            raise CacheFormatError(name, "corrupt cache: wrong number of comments")
    if indices.dtype.byteorder not in "=|":          # a big-endian machine: native copies
        indptr, indices, data, y = (a.astype(a.dtype.newbyteorder("=")) for a in
                                    (indptr, indices, data, y))
        if qid is not None:
            qid = qid.astype(qid.dtype.newbyteorder("="))
        if weights is not None:
            weights = weights.astype(weights.dtype.newbyteorder("="))
    _check_weights(weights, name)
    return Problem(indptr, indices, data, y, int(h.n_features), qid=qid, comments=text,
                   weights=weights, source=name)


def _check_weights(weights, name):
    """CacheFormatError unless every stored weight is finite and >= 0 (one pass over n_rows
    values, cheap beside the data; a reader trusts a loaded problem's weights)."""
    if weights is None:
        return
    bad = np.flatnonzero(~(np.isfinite(weights) & (weights >= 0)))
    if len(bad):
        raise CacheFormatError(name, f"corrupt cache: instance weight of row {int(bad[0]) + 1} "
                                     f"is {float(weights[bad[0]])!r} (a weight is finite, >= 0)")


VERIFY_VALUES = 1 << 22        # stored values per piece of the structure check


def _check_csr(h, indptr, indices, name):
    """The CSR invariants, checked piece by piece (a few million values at a time) so that
    verifying a memory-mapped cache larger than memory allocates O(piece), not O(nnz)."""
    if int(indptr[0]) != 0 or int(indptr[-1]) != h.nnz:
        raise CacheFormatError(name, "corrupt cache: row pointers do not match the header")
    step = max(1, VERIFY_VALUES)
    for a in range(0, h.n_rows, step):
        part = indptr[a:min(h.n_rows, a + step) + 1]
        if len(part) > 1 and np.any(part[1:] < part[:-1]):
            raise CacheFormatError(name, "corrupt cache: row pointers decrease")
    if not h.nnz:
        return
    a = 0
    while a < h.n_rows:
        # rows a..b hold about VERIFY_VALUES stored values (at least one row)
        b = int(np.searchsorted(indptr, int(indptr[a]) + step, side="right")) - 1
        b = min(max(b, a + 1), h.n_rows)
        lo, hi = int(indptr[a]), int(indptr[b])
        if hi > lo:
            ix = indices[lo:hi]
            if int(ix.min()) < 0 or int(ix.max()) >= h.n_features:
                raise CacheFormatError(name, "corrupt cache: a column index is out of range")
            # strictly increasing within each row: a drop is allowed only where a row starts
            bad = np.flatnonzero(np.diff(ix.astype(np.int64)) <= 0) + 1
            if len(bad):
                starts = np.zeros(hi - lo + 1, dtype=bool)
                starts[np.asarray(indptr[a:b + 1]) - lo] = True
                if not np.all(starts[bad]):
                    raise CacheFormatError(name, "corrupt cache: column indices not increasing")
        a = b


def load_cache(source, mmap=True, *, verify=False, prefix=b""):
    """Load a cache written by :func:`save_cache` and return a :class:`Problem`.

    ``source`` is a path, ``"-"`` (stdin, read fully), a binary file object, or a bytes-like
    object holding the whole file.  ``prefix`` is what the caller has already read from a
    stream to recognise the cache (at most its first bytes); it is put back in front.

    ``mmap=True`` maps a file copy-on-write: nothing is read until used, and the arrays are
    ordinary writable numpy arrays (numba compiles one variant for them, not a second one for
    read-only arrays) whose changes stay in this process and never reach the file.
    ``mmap="r"`` maps it read-only; ``mmap=False`` reads the arrays into memory.
    ``verify=True`` checks the arrays' checksum and CSR structure (one pass over the data).
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        buf = memoryview(source).cast("B")
        h = _parse_header(buf[:_HEADER_SIZE], len(buf), "<memory>")
        return _build(h, _views(h, buf), "<memory>", verify)
    if source == "-" or hasattr(source, "read"):
        name = "<stdin>" if source == "-" else getattr(source, "name", "<stream>")
        stream = sys.stdin.buffer if source == "-" else source
        buf = bytearray(prefix)
        while True:
            chunk = stream.read(1 << 24)
            if not chunk:
                break
            buf += chunk
        h = _parse_header(memoryview(buf)[:_HEADER_SIZE], len(buf), name)
        return _build(h, _views(h, buf), name, verify)
    name = os.fspath(source)
    with open(name, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(_HEADER_SIZE)
        h = _parse_header(head, size, name)
        if mmap:
            if mmap == "r":
                mm = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
            else:
                mm = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_COPY)
            arrays = _views(h, mm)
        else:
            arrays = []
            for i, ((off, nbytes), kind) in enumerate(zip(h.table, _kinds(h))):
                if not _present(h, i):
                    arrays.append(None)
                    continue
                a = np.empty(nbytes // np.dtype(kind).itemsize, dtype=kind)
                f.seek(off)
                view = memoryview(a).cast("B")
                got = 0
                while got < nbytes:
                    n = f.readinto(view[got:])
                    if not n:
                        raise CacheFormatError(name, "truncated cache: file shrank while read")
                    got += n
                arrays.append(a)
    return _build(h, arrays, name, verify)


def cache_info(path):
    """The header of a cache as a dict (rows, features, nnz, version, size), without the data."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        h = _parse_header(f.read(_HEADER_SIZE), size, os.fspath(path))
    return {"version": h.version, "n_rows": h.n_rows, "n_features": h.n_features, "nnz": h.nnz,
            "qid": bool(h.flags & FLAG_QID), "comments": bool(h.flags & FLAG_COMMENTS),
            "weights": bool(h.flags & FLAG_WEIGHTS), "index_bytes": h.index_size,
            "bytes": h.total_size}

"""Opening a data source: a path or ``-`` (stdin), plain or compressed.

gzip, bzip2 and xz are recognised by their magic bytes, never by the file name.  A regular,
uncompressed, non-empty file is memory-mapped (``buf``: a uint8 array over the whole file, parsed
in place); anything else (a pipe, stdin, a compressed stream) is a binary ``stream`` read in blocks
of whole lines.  A truncated or corrupt compressed stream is a DataFormatError naming the file and
the byte count; a UTF-8 byte-order mark is named as such.  The text reader
(:mod:`svmtool.io.svmlight`) and the CSV reader (:mod:`svmtool.io.csv`) both open their sources
here.
"""

import mmap
import os
import stat
import sys

import numpy as np

from svmtool.errors import DataFormatError
from svmtool.io._grammar import BOM, BOM_REASON

_GZIP = b"\x1f\x8b"
_BZ2 = b"BZh"
_XZ = b"\xfd7zXZ\x00"


def _display_name(source):
    return "<stdin>" if source == "-" else os.fspath(source)


def _peek(f, n):
    """Up to n leading bytes of a binary stream without consuming them."""
    if hasattr(f, "peek"):
        return f.peek(n)[:n]
    pos = f.tell()
    head = f.read(n)
    f.seek(pos)
    return head


class _CountingReader:
    """The compressed bytes under a decompressor: counts them, and remembers whether reading
    them failed (an I/O error is reported as such, not as corrupt data)."""

    def __init__(self, raw):
        self.raw = raw
        self.count = 0
        self.failed = False
        self.mode = "rb"

    def read(self, n=-1):
        try:
            data = self.raw.read(n)
        except OSError:
            self.failed = True
            raise
        self.count += len(data)
        return data

    def readable(self):
        return True


class _Decompressed:
    """A decompressing stream whose failures are DataFormatErrors naming the file: a truncated
    gzip/bzip2/xz stream (the decompressors raise EOFError, which click would even turn into
    "aborted") or corrupt compressed data."""

    def __init__(self, stream, counter, kind, name):
        import lzma
        import zlib

        self._CORRUPT = (OSError, EOFError, zlib.error, lzma.LZMAError)
        self.stream = stream
        self.counter = counter
        self.kind = kind
        self.name = name

    def read(self, n=-1):
        try:
            return self.stream.read(n)
        except self._CORRUPT as e:
            if self.counter.failed:
                raise                # the file itself could not be read: an I/O error
            at = self.counter.count
            if isinstance(e, EOFError):
                raise DataFormatError(self.name, None, f"truncated {self.kind} stream after "
                                                       f"{at} bytes (the file ends before the "
                                                       f"end of the compressed data)") from None
            raise DataFormatError(self.name, None, f"corrupt {self.kind} stream after {at} "
                                                   f"bytes: {e}") from None

    def close(self):
        self.stream.close()


def _opener(kind):
    """The decompressing reader of a ``kind`` stream, its module imported only for such a file
    (not at every command's start)."""
    if kind == "gzip":
        import gzip

        return lambda f: gzip.GzipFile(fileobj=f, mode="rb")
    if kind == "bzip2":
        import bz2

        return lambda f: bz2.BZ2File(f, mode="rb")
    import lzma

    return lambda f: lzma.LZMAFile(f, mode="rb")


class _Input:
    """An opened source: either a byte array in memory (``buf``) or a binary ``stream``."""

    def __init__(self, source):
        self.name = _display_name(source)
        self.buf = None
        self.stream = None
        self.size = None
        self._closers = []
        if source == "-":
            raw = sys.stdin.buffer
        else:
            path = os.fspath(source)
            raw = open(path, "rb")
            self._closers.append(raw)
        head = _peek(raw, 8)
        self.head = head
        kind = ("gzip" if head.startswith(_GZIP) else "bzip2" if head.startswith(_BZ2) else
                "xz" if head.startswith(_XZ) else None)
        if kind is None and head.startswith(BOM):
            self.close()
            raise DataFormatError(self.name, 1, BOM_REASON)
        if kind is not None:
            counter = _CountingReader(raw)
            opener = _opener(kind)
            self.stream = _Decompressed(opener(counter), counter, kind, self.name)
        else:
            st = os.fstat(raw.fileno()) if hasattr(raw, "fileno") else None
            if source != "-" and st is not None and stat.S_ISREG(st.st_mode) and st.st_size > 0:
                self.size = st.st_size
                mm = mmap.mmap(raw.fileno(), 0, access=mmap.ACCESS_READ)
                self._mmap = mm
                self.buf = np.frombuffer(mm, dtype=np.uint8)
            else:
                self.stream = raw
        if self.stream is not None and self.stream is not raw:
            self._closers.insert(0, self.stream)

    def close(self):
        self.buf = None
        mm = getattr(self, "_mmap", None)
        if mm is not None:
            try:
                mm.close()
            except BufferError:
                pass    # a caller still holds a view; the mapping goes when it does
            self._mmap = None
        for c in self._closers:
            try:
                c.close()
            except Exception:
                pass
        self._closers = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def blocks(self, block_bytes):
        """Yield (byte array, first line number - 1) blocks of whole lines from a stream."""
        leftover = b""
        line0 = 0
        read = self.stream.read
        while True:
            data = read(block_bytes)
            if not data:
                break
            buf = leftover + data if leftover else data
            cut = buf.rfind(b"\n")
            if cut < 0:
                leftover = buf
                continue
            block = np.frombuffer(buf, dtype=np.uint8, count=cut + 1)
            leftover = buf[cut + 1:]
            yield block, line0
            line0 += _count_newlines(block)
        if leftover:
            yield np.frombuffer(leftover, dtype=np.uint8), line0


open_input = _Input    # public name: other readers (CSV) share the source handling


def _count_newlines(block):
    # the jitted counter, imported on first use only (it imports numba)
    from svmtool.io._parse import count_newlines

    return count_newlines(block, 0, len(block))

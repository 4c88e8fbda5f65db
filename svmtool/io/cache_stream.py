"""Writing a binary cache (:mod:`svmtool.io.cache`) from row chunks in memory bounded by one
chunk: ``svmtool convert`` of a file or a pipe of any size.  Each array goes to a section file of
its own as the chunks come; :meth:`CacheWriter.finish` writes the header and copies the sections
behind it, computing the checksum on the way, through the output rule of
:mod:`svmtool.io.output` (atomic for a regular file).  The result is byte-identical to
:func:`svmtool.io.cache.save_cache` of the whole problem.
"""

import os
import zlib

import numpy as np

from svmtool.io.cache import _NAMES, _pack_header
from svmtool.io.output import open_output


COPY_BYTES = 1 << 22          # pieces in which section files are copied into the cache


class CacheWriter:
    """Write a cache from row chunks (Problems, in order) in memory bounded by one chunk.

    Each array goes to its own temporary section file (in ``tmp_dir``: by default the folder of
    ``path``, so that the sections and the cache share a file system) as the chunks come;
    :meth:`finish` then writes the header and copies the sections behind it in pieces, computing
    the checksum on the way, through :func:`svmtool.io.output.open_output` (so a regular file
    appears atomically, complete or not at all).  The result is byte for byte what
    :func:`save_cache` writes for the whole problem.  Disk use while writing: the sections plus
    the cache, about twice the cache.

    Example::

        with CacheWriter("big.cache") as out:
            for chunk in iter_data_chunks("big.txt"):
                out.append(chunk)
            info = out.finish()
    """

    def __init__(self, path, *, checksum=True, comments=False, tmp_dir=None):
        import tempfile

        self.path = path
        self.checksum = bool(checksum)
        self.comments = bool(comments)
        if tmp_dir is None and path != "-" and not hasattr(path, "write"):
            tmp_dir = os.path.dirname(os.path.abspath(os.fspath(path)))
        self._dir = tempfile.mkdtemp(prefix=".svmtool-sections-", dir=tmp_dir)
        self._files = {}
        for name in _NAMES:
            if name == "comments" and not self.comments:
                continue
            self._files[name] = open(os.path.join(self._dir, name), "w+b")
        self.n_rows = 0
        self.nnz = 0
        self.n_features = 0
        self.has_qid = False
        self.has_weights = False
        self._files["indptr"].write(np.zeros(1, dtype="<i8").tobytes())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Remove the section files (after :meth:`finish`, or to abandon the cache)."""
        import shutil

        for f in self._files.values():
            try:
                f.close()
            except OSError:
                pass
        self._files = {}
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _put(self, name, a):
        if a.nbytes:
            self._files[name].write(memoryview(np.ascontiguousarray(a)).cast("B"))

    def append(self, problem):
        """Append the rows of ``problem`` (a chunk) after those appended before."""
        indptr = np.asarray(problem.indptr, dtype=np.int64)
        start, stop = int(indptr[0]), int(indptr[-1])
        rows = len(indptr) - 1
        if rows == 0:
            return
        indices = np.asarray(problem.indices)[start:stop]
        if indices.dtype.itemsize > 4:
            if len(indices) and int(indices.max()) > np.iinfo(np.int32).max:
                raise ValueError("a feature index beyond 2**31 - 1 cannot be streamed")
        if len(problem.y) != rows:
            raise ValueError(f"{len(problem.y)} labels for {rows} rows")
        self._put("indptr", (indptr[1:] - start + self.nnz).astype("<i8", copy=False))
        self._put("indices", indices.astype("<i4", copy=False))
        self._put("data", np.asarray(problem.data)[start:stop].astype("<f8", copy=False))
        self._put("y", np.asarray(problem.y).astype("<f8", copy=False))
        if problem.qid is not None:
            self.has_qid = True
            self._put("qid", np.asarray(problem.qid).astype("<i8", copy=False))
        else:
            self._put("qid", np.zeros(rows, dtype="<i8"))
        self._put_weights(problem, rows)
        if self.comments:
            texts = [""] * rows if problem.comments is None else [
                "" if c is None else str(c) for c in problem.comments]
            if any("\n" in t for t in texts):
                raise ValueError("a comment contains a newline")
            text = "\n".join(texts)
            if self.n_rows:
                text = "\n" + text
            self._files["comments"].write(text.encode("utf-8"))
        self.n_rows += rows
        self.nnz += stop - start
        self.n_features = max(self.n_features, int(problem.n_features))

    def _put_weights(self, problem, rows):
        """The chunk's instance weights (1 for each row of a chunk without them: a file whose
        later rows carry cost: tokens weighs its earlier rows 1, as the text reader does)."""
        w = getattr(problem, "weights", None)
        if w is not None:
            w = np.asarray(w, dtype="<f8")
            if w.shape != (rows,):
                raise ValueError(f"{w.size} instance weights for {rows} rows")
            if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
                raise ValueError("instance weights must be finite numbers >= 0")
            self.has_weights = True
        self._put("weights", np.ones(rows, dtype="<f8") if w is None else w)

    def finish(self, n_features=None):
        """Write the cache; returns :func:`cache_info`-style facts (without reading it back)."""
        if n_features is not None:
            if int(n_features) < self.n_features:
                raise ValueError(f"{self.n_features} features found, more than "
                                 f"n_features={n_features}")
            self.n_features = int(n_features)
        names = [n for n in _NAMES if not (n == "qid" and not self.has_qid)
                 and not (n == "weights" and not self.has_weights) and n in self._files]
        sizes = {}
        for name, f in self._files.items():
            f.flush()
            sizes[name] = f.tell()
        crc = 0
        if self.checksum:
            for name in names:
                crc = self._scan(name, crc, None)
        nbytes = [sizes[n] if n in names else None for n in _NAMES]
        head, table, total = _pack_header(self.n_rows, self.n_features, self.nnz, 4, nbytes,
                                          self.checksum, crc)
        with open_output(self.path, "wb") as out:
            out.write(head)
            written = len(head)
            for i, name in enumerate(_NAMES):
                if name not in names:
                    continue
                off = table[2 * i]
                if off > written:
                    out.write(b"\0" * (off - written))
                    written = off
                self._scan(name, 0, out)
                written += sizes[name]
            if written < total:
                out.write(b"\0" * (total - written))
        return {"version": 2 if self.has_weights else 1, "n_rows": self.n_rows, "n_features": self.n_features,
                "nnz": self.nnz, "qid": self.has_qid, "comments": self.comments,
                "weights": self.has_weights, "index_bytes": 4, "bytes": total}

    def _scan(self, name, crc, out):
        """Read section ``name`` in pieces: its CRC continued from ``crc``, or copied to ``out``."""
        f = self._files[name]
        f.seek(0)
        buf = bytearray(COPY_BYTES)
        view = memoryview(buf)
        while True:
            n = f.readinto(buf)
            if not n:
                break
            if out is None:
                crc = zlib.crc32(view[:n], crc)
            else:
                out.write(view[:n])
        return crc


def stream_cache(chunks, path, *, n_features=None, checksum=True, comments=False,
                 tmp_dir=None, on_chunk=None):
    """Write the row chunks ``chunks`` (an iterable of Problems) to the cache ``path`` in memory
    bounded by one chunk; returns the cache's facts (as :func:`cache_info`)."""
    with CacheWriter(path, checksum=checksum, comments=comments, tmp_dir=tmp_dir) as w:
        for chunk in chunks:
            w.append(chunk)
            if on_chunk is not None:
                on_chunk(chunk)
        return w.finish(n_features)

"""Shards: row ranges of a binary cache, each a cache of its own, named by a JSON index file
(``svmtool convert --shards N``) that the workers of a cluster read from a shared path.
"""

import os

import numpy as np

from svmtool.errors import CacheFormatError
from svmtool.io.cache import cache_info, load_cache, save_cache
# the shard index's signature and its test live in io.magic (read without importing this module)
from svmtool.io.magic import SHARD_INDEX_FORMAT, is_shard_index, looks_like_shard_index  # noqa: F401
from svmtool.io.output import open_output
from svmtool.problem import Problem


SHARD_INDEX_VERSION = 1


def shard_bounds(indptr, n_shards):
    """Row limits (``n_shards + 1`` ints) of contiguous row ranges with about equal stored
    values (and at least one row each while there are rows enough)."""
    n_rows = len(indptr) - 1
    n_shards = max(1, min(int(n_shards), max(n_rows, 1)))
    total = int(indptr[-1]) - int(indptr[0])
    cuts = [0]
    for k in range(1, n_shards):
        target = int(indptr[0]) + total * k // n_shards
        r = int(np.searchsorted(indptr, target, side="left"))
        r = min(max(r, cuts[-1] + 1), n_rows - (n_shards - k))
        cuts.append(r)
    cuts.append(n_rows)
    return cuts


def shard_names(index_path, n_shards):
    """The shard file names (without folder) that :func:`write_shards` uses for ``index_path``."""
    base = os.path.basename(os.fspath(index_path))
    for suffix in (".json", ".shards", ".index"):
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
            break
    return [f"{base}-{i:05d}-of-{n_shards:05d}.cache" for i in range(n_shards)]


def write_shards(cache_path, index_path, n_shards, *, checksum=True):
    """Split the cache ``cache_path`` into ``n_shards`` row-range caches beside ``index_path``
    and write the index (JSON) naming them; the shard paths in the index are relative to the
    index's folder, so the folder can be mounted anywhere (a cluster's shared path).

    Every shard keeps the whole data set's ``n_features``.  Memory: one shard's row pointers
    (the arrays are copied from the mapped cache).  Returns the index as a dict."""
    import json

    prob = load_cache(cache_path, mmap="r")
    cuts = shard_bounds(prob.indptr, n_shards)
    n_shards = len(cuts) - 1
    folder = os.path.dirname(os.path.abspath(os.fspath(index_path)))
    names = shard_names(index_path, n_shards)
    shards = []
    for k in range(n_shards):
        a, b = cuts[k], cuts[k + 1]
        lo, hi = int(prob.indptr[a]), int(prob.indptr[b])
        # save_cache takes the rows' values from indptr's positions in the whole arrays
        part = Problem(prob.indptr[a:b + 1], prob.indices, prob.data, prob.y[a:b],
                       prob.n_features, qid=None if prob.qid is None else prob.qid[a:b],
                       comments=None if prob.comments is None else prob.comments[a:b],
                       weights=None if prob.weights is None else prob.weights[a:b])
        save_cache(part, os.path.join(folder, names[k]), checksum=checksum)
        shards.append({"path": names[k], "rows": [a, b], "nnz": hi - lo,
                       "bytes": os.path.getsize(os.path.join(folder, names[k]))})
    index = {"format": SHARD_INDEX_FORMAT, "version": SHARD_INDEX_VERSION,
             "n_rows": prob.n_rows, "n_features": int(prob.n_features), "nnz": prob.nnz,
             "qid": prob.qid is not None, "weights": prob.weights is not None,
             "shards": shards}
    text = json.dumps(index, indent=1) + "\n"
    with open_output(index_path, "w") as f:
        f.write(text)
    return index




def read_shard_index(path):
    """The shard index at ``path`` as a dict whose shard ``path`` entries are made absolute
    (relative to the index's folder); every shard's header is checked against it (missing,
    truncated or foreign shards are CacheFormatError naming the shard)."""
    import json

    name = os.fspath(path)
    with open(name, "rb") as f:
        raw = f.read(1 << 24)
    try:
        index = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise CacheFormatError(name, f"not a shard index ({e})") from None
    if not isinstance(index, dict) or index.get("format") != SHARD_INDEX_FORMAT:
        raise CacheFormatError(name, "not a shard index (no \"format\": \"svmtool-shards\")")
    if int(index.get("version", 0)) > SHARD_INDEX_VERSION:
        raise CacheFormatError(name, f"shard index version {index.get('version')} is newer "
                                     f"than this svmtool reads ({SHARD_INDEX_VERSION})")
    folder = os.path.dirname(os.path.abspath(name))
    try:
        shards = index["shards"]
        n_features = int(index["n_features"])
        row = 0
        for sh in shards:
            sh["path"] = os.path.join(folder, sh["path"])
            a, b = (int(v) for v in sh["rows"])
            if a != row or b < a:
                raise CacheFormatError(name, f"shard {sh['path']}: rows {a}..{b} do not follow "
                                             f"row {row}")
            row = b
            if not os.path.exists(sh["path"]):
                raise CacheFormatError(name, f"shard {sh['path']} is missing")
            info = cache_info(sh["path"])
            if info["n_rows"] != b - a or info["n_features"] != n_features:
                raise CacheFormatError(sh["path"], "shard does not match its index "
                                                   f"({name})")
            if info["weights"] != bool(index.get("weights", False)):
                raise CacheFormatError(sh["path"], "shard " + (
                    "has no instance weights" if index.get("weights") else
                    "has instance weights") + f", unlike its index ({name})")
        if row != int(index["n_rows"]):
            raise CacheFormatError(name, f"the shards hold {row} rows, the index says "
                                         f"{index['n_rows']}")
    except (KeyError, TypeError, ValueError) as e:
        raise CacheFormatError(name, f"corrupt shard index ({e!r})") from None
    return index


class ShardedProblem(Problem):
    """The rows of a shard index as one problem, the shards one after another.

    The shards stay memory-mapped (``parts``: one Problem per shard).  The labels, query ids
    and comments are gathered at once (8 bytes a row); the CSR arrays (``indptr``, ``indices``,
    ``data``) only when something asks for them -- an in-memory run copies the shards into one
    problem then, while the out-of-core and dask paths read ``parts`` and never build them.
    """

    def __init__(self, index, parts, source, comments=False):
        self.index = index
        self.parts = parts
        self.n_features = int(index["n_features"])
        self.source = source
        self.label_note = None
        self._csr = None
        self.y = np.concatenate([np.asarray(p.y, dtype=np.float64) for p in parts]) \
            if parts else np.zeros(0)
        qids = [p.qid for p in parts]
        self.qid = np.concatenate(qids) if parts and all(q is not None for q in qids) else None
        ws = [p.weights for p in parts]
        self.weights = np.concatenate(ws) if parts and all(w is not None for w in ws) \
            else None
        self.comments = None
        if comments and parts and all(p.comments is not None for p in parts):
            self.comments = [c for p in parts for c in p.comments]

    @property
    def shard_paths(self):
        return [sh["path"] for sh in self.index["shards"]]

    @property
    def n_rows(self):
        return len(self.y)

    @property
    def nnz(self):
        return sum(p.nnz for p in self.parts)

    def data_bytes(self):
        """The bytes of the shard files (what an in-memory run would load)."""
        return sum(int(sh.get("bytes") or os.path.getsize(sh["path"]))
                   for sh in self.index["shards"])

    def _concat(self):
        if self._csr is None:
            counts = [np.diff(np.asarray(p.indptr, dtype=np.int64)) for p in self.parts]
            indptr = np.zeros(self.n_rows + 1, dtype=np.int64)
            if counts:
                np.cumsum(np.concatenate(counts), out=indptr[1:])
            wide = any(np.asarray(p.indices).dtype == np.int64 for p in self.parts)
            dt = np.int64 if wide else np.int32
            indices = np.empty(int(indptr[-1]), dtype=dt)
            data = np.empty(int(indptr[-1]), dtype=np.float64)
            at = 0
            for p in self.parts:
                lo, hi = int(p.indptr[0]), int(p.indptr[-1])
                indices[at:at + hi - lo] = p.indices[lo:hi]
                data[at:at + hi - lo] = p.data[lo:hi]
                at += hi - lo
            self._csr = (indptr, indices, data)
        return self._csr

    # the CSR arrays, built on first use (an in-memory run); assigning one replaces the problem's
    # arrays as on a plain Problem
    def _get(k):
        return property(lambda self: self._concat()[k],
                        lambda self, v, _k=k: self._set(_k, v))

    indptr, indices, data = _get(0), _get(1), _get(2)
    del _get

    def _set(self, k, v):
        csr = list(self._concat())
        csr[k] = v
        self._csr = tuple(csr)


def load_shards(path, *, mmap=True, verify=True, comments=False):
    """A :class:`ShardedProblem` of the shard index at ``path``: every shard mapped (``mmap``)
    and, with ``verify``, its checksum and structure checked; a missing, truncated or foreign
    shard is a CacheFormatError naming it."""
    index = read_shard_index(path)
    parts = []
    for sh in index["shards"]:
        p = load_cache(sh["path"], mmap=mmap, verify=verify)
        if p.n_rows != sh["rows"][1] - sh["rows"][0] or \
                p.n_features != int(index["n_features"]):
            raise CacheFormatError(sh["path"], f"shard does not match its index ({path})")
        parts.append(p)
    return ShardedProblem(index, parts, os.fspath(path), comments=comments)



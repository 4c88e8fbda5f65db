"""What a data file is, told by its first bytes, without importing the readers: a binary cache
(:mod:`svmtool.io.cache`), a shard index (:mod:`svmtool.io.shards`) or text.  The readers of
caches and shards take a command that reads text time to import; this module imports nothing
beyond the standard library."""

import os

# the first eight bytes of every binary cache (the format is described in svmtool.io.cache)
CACHE_MAGIC = b"\x93SVMTC\r\n"
# the "format" field of a shard index, found in its first bytes
SHARD_INDEX_FORMAT = "svmtool-shards"


def is_cache(first_bytes) -> bool:
    """True when ``first_bytes`` (a file's first bytes) start like a binary cache."""
    return bytes(first_bytes[: len(CACHE_MAGIC)]) == CACHE_MAGIC


def is_shard_index(first_bytes) -> bool:
    """True when ``first_bytes`` (a file's first bytes) look like a shard index."""
    head = bytes(first_bytes[:256]).lstrip()
    return head.startswith(b"{") and SHARD_INDEX_FORMAT.encode() in head


def looks_like_shard_index(path) -> bool:
    """True when the regular file at ``path`` starts like a shard index (False for stdin)."""
    if not isinstance(path, (str, os.PathLike)) or os.fspath(path) == "-":
        return False
    try:
        with open(path, "rb") as f:
            return is_shard_index(f.read(256))
    except OSError:
        return False

"""Reading svmlight / libsvm text into CSR arrays, fast and strictly.

Sources (opened by :mod:`svmtool.io.source`): a path, ``-`` for stdin, plain or compressed (gzip,
bzip2, xz, recognised by their magic bytes, not by the file name).  A regular uncompressed file is
memory-mapped and parsed in place; anything else (a pipe, a compressed stream) is read once, in
blocks of whole lines, so ``cat data | svmtool train - model`` works.

Each block is cut at newlines into one piece per thread; a jitted counting pass gives upper bounds
for the rows and non-zeros of each piece, and a jitted fill pass parses the pieces in parallel
threads (the kernels release the GIL) straight into preallocated arrays.  The grammar, the
accepted quirks and the exact float conversion are described in :mod:`svmtool.io._parse`.

Public functions:

* :func:`load_svmlight` -- the whole input as one :class:`~svmtool.problem.Problem`;
* :func:`iter_svmlight_chunks` -- one Problem per block, for streaming consumers (prediction on
  files larger than memory);
* :func:`load_data` / :func:`iter_data_chunks` -- the same, but a binary cache written by
  ``svmtool convert`` is recognised by its magic bytes and loaded instead of parsed.
"""

import os
import sys

import numpy as np

from svmtool.errors import DataFormatError, InputError
from svmtool.io.source import _Input, _display_name, _peek
from svmtool.problem import Problem

BLOCK_BYTES = 64 << 20
_SMALL = 1 << 20           # below this size a single thread parses the whole input
# plain files up to this size are parsed by the pure-Python parser (svmtool.io._parse_py), which
# gives the same arrays and errors without importing numba: a short cron job or a predict on a
# small file then pays no JIT start-up at all
PY_PARSE_LIMIT = 256 << 10
# A caller that will not load numba afterwards (predict with a linear model, whose decision
# values numpy computes up to a million stored values) may pass this larger limit: up to a few
# MB the Python parser finishes before numba's import and first cached call would (numba's
# start-up: BENCHMARKS.md, "Against the C programs").
PY_PARSE_LIMIT_NO_JIT = 4 << 20
# A training run whose solver runs small problems without numba (dual CD: up to 200,000 stored
# entries, 1-2 MB of text) reads up to this size with the Python parser: such a run then never
# loads numba (an input between the two limits used to load it for the parsing alone).
PY_PARSE_LIMIT_NUMBA_FREE = 1 << 20


def _parse():
    # the jitted module, imported on first use only (it imports numba)
    from svmtool.io import _parse as p

    return p


class _Parser:
    """Parses regions of a byte array into arrays; owns the options and the thread pool."""

    def __init__(self, name, zero_based, comments, threads):
        self.p = _parse()
        self.name = name
        self.zero_based = bool(zero_based)
        self.comments = bool(comments)
        if threads is None:
            threads = min(os.cpu_count() or 1, 8)
        self.threads = max(1, int(threads))
        self._pool = None
        self.has_cost = False       # some row read so far has a cost: token

    def each(self, fn, n):
        """[fn(k) for k in range(n)]: piece 0 in this thread, the others on the pool's
        threads - 1 workers (:func:`svmtool.ops.cores.run_parts`; imported here: a small
        input read by the pure-Python parser loads nothing of svmtool.ops)."""
        from svmtool.ops.cores import run_parts

        if n > 1 and self.threads > 1 and self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self.threads - 1)
        return run_parts(self._pool, fn, n)

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def plan(self, buf, start, end):
        """Cut buf[start:end] into pieces; return (cuts, newline counts, colon counts)."""
        n = self.threads if end - start >= _SMALL else 1
        cuts = self.p.find_line_starts(buf, start, end, n)
        counts = self.each(lambda k: self.p.count_piece(buf, cuts[k], cuts[k + 1]), n)
        nls = [c[0] for c in counts]
        cols = [c[1] for c in counts]
        return cuts, nls, cols

    def allocate(self, rows_ub, nnz_ub):
        out = {
            "indptr": np.empty(rows_ub + 1, dtype=np.int64),
            "indices": np.empty(nnz_ub, dtype=np.int32),
            "data": np.empty(nnz_ub, dtype=np.float64),
            "y": np.empty(rows_ub, dtype=np.float64),
            "qid": np.empty(rows_ub, dtype=np.int64),
            "cost": np.empty(rows_ub, dtype=np.float64),
        }
        if self.comments:
            out["cstart"] = np.empty(rows_ub, dtype=np.int64)
            out["cend"] = np.empty(rows_ub, dtype=np.int64)
        else:
            out["cstart"] = out["cend"] = np.empty(1, dtype=np.int64)
        out["indptr"][0] = 0
        return out

    def fill(self, buf, plan, out, row_cur, nnz_cur, line0):
        """Parse the planned pieces into ``out`` from the cursors; return (rows, nnz, maxcol,
        has_qid, comments, note): ``note`` is (line, label) of the first label in these pieces
        that is not a class label, or None."""
        p = self.p
        cuts, nls, cols = plan
        n = len(nls)
        max_col = p.COLUMN_LIMIT
        row_offs, nnz_offs = [], []
        r, z = row_cur, nnz_cur
        for k in range(n):
            row_offs.append(r)
            nnz_offs.append(z)
            r += nls[k] + 1
            z += cols[k]

        def work(k):
            return p.fill_piece(buf, cuts[k], cuts[k + 1], self.zero_based, self.comments,
                                max_col, out["indptr"], out["indices"], out["data"], out["y"],
                                out["qid"], out["cost"], out["cstart"], out["cend"], row_offs[k],
                                nnz_offs[k])

        results = self.each(work, n)
        for k, res in enumerate(results):
            status, err = res[0], res[1]
            if status != p.OK:
                self.raise_error(buf, status, err, line0)
        note = None
        for res in results:
            if res[6] >= 0:
                note = (self.line_of(buf, res[6], line0), _token_at(buf, res[6]))
                break
        # close the gaps between pieces (each was filled from its upper-bound offset)
        rows_done, nnz_done = row_cur, nnz_cur
        maxcol, has_qid = -1, False
        for k, res in enumerate(results):
            _, _, rows, nnz, biggest, hq, _, hc = res
            self.has_cost = self.has_cost or bool(hc)
            r0, z0 = row_offs[k], nnz_offs[k]
            if r0 != rows_done:
                out["y"][rows_done:rows_done + rows] = out["y"][r0:r0 + rows]
                out["qid"][rows_done:rows_done + rows] = out["qid"][r0:r0 + rows]
                out["cost"][rows_done:rows_done + rows] = out["cost"][r0:r0 + rows]
                if self.comments:
                    out["cstart"][rows_done:rows_done + rows] = out["cstart"][r0:r0 + rows]
                    out["cend"][rows_done:rows_done + rows] = out["cend"][r0:r0 + rows]
            if r0 != rows_done or z0 != nnz_done:
                out["indptr"][rows_done + 1:rows_done + rows + 1] = (
                    out["indptr"][r0 + 1:r0 + rows + 1] - (z0 - nnz_done))
            if z0 != nnz_done:
                out["indices"][nnz_done:nnz_done + nnz] = out["indices"][z0:z0 + nnz]
                out["data"][nnz_done:nnz_done + nnz] = out["data"][z0:z0 + nnz]
            rows_done += rows
            nnz_done += nnz
            maxcol = max(maxcol, int(biggest))
            has_qid = has_qid or bool(hq)
        comments = None
        if self.comments:
            cs = out["cstart"][row_cur:rows_done]
            ce = out["cend"][row_cur:rows_done]
            comments = [bytes(buf[a:b]).decode("utf-8", "replace") if b > a else ""
                        for a, b in zip(cs.tolist(), ce.tolist())]
        return rows_done - row_cur, nnz_done - nnz_cur, maxcol, has_qid, comments, note

    def line_of(self, buf, offset, line0):
        """The 1-based line number of byte ``offset`` of ``buf`` (whose first line is line0+1)."""
        return line0 + int(self.p.count_newlines(buf, 0, offset)) + 1

    def raise_error(self, buf, status, err, line0):
        raise DataFormatError(self.name, self.line_of(buf, err, line0),
                              self.p.MESSAGES[status].format(token=_token_at(buf, err)))


def _token_at(buf, start):
    """The token at buf[start:] as error messages quote it (at most TOKEN_QUOTE_BYTES bytes,
    then "...")."""
    from svmtool.io._grammar import TOKEN_QUOTE_BYTES

    end = start
    limit = min(len(buf), start + TOKEN_QUOTE_BYTES)
    while end < limit and buf[end] not in (32, 9, 13, 10):
        end += 1
    token = bytes(buf[start:end]).decode("utf-8", "replace")
    if end == limit and limit < len(buf) and buf[limit] not in (32, 9, 13, 10):
        token += "..."
    return token


def _load_small(inp, zero_based, n_features, comments):
    """A small plain file, parsed without numba (identical results, see _parse_py)."""
    from svmtool.io._parse_py import parse_bytes

    indptr, indices, data, y, qid, cm, maxcol, note, weights = parse_bytes(
        bytes(inp.buf), inp.name, bool(zero_based), bool(comments))
    return _checked(Problem(indptr, indices, data, y, maxcol + 1, qid=qid, comments=cm,
                            weights=weights, source=inp.name, label_note=note),
                    maxcol, zero_based, n_features)


def _checked(prob, maxcol, zero_based, n_features):
    found = maxcol + 1
    if n_features is not None:
        if found > n_features:
            raise DataFormatError(prob.source, None,
                                  f"feature index {found if not zero_based else maxcol} is "
                                  f"beyond n_features={n_features}")
        prob.n_features = int(n_features)
    return prob


def _finish(parser, out, rows, nnz, maxcol, has_qid, comments, n_features, name, note):
    if rows == 0:
        raise DataFormatError(name, None, "empty input: no examples found")
    indptr, indices, data = out["indptr"][:rows + 1], out["indices"][:nnz], out["data"][:nnz]
    y, qid = out["y"][:rows], (out["qid"][:rows] if has_qid else None)
    weights = out["cost"][:rows] if parser.has_cost else None
    # give back over-allocated memory when the upper bounds were loose (comments with ':')
    if len(out["indices"]) > 1.1 * nnz + 1024:
        indices, data = indices.copy(), data.copy()
    return _checked(Problem(indptr, indices, data, y, maxcol + 1, qid=qid, comments=comments,
                            weights=weights, source=name, label_note=note),
                    maxcol, parser.zero_based, n_features)


def _progress_bar(enabled, total, name):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, desc=f"reading {os.path.basename(name)}",
                file=sys.stderr, leave=False)


def load_svmlight(source, *, zero_based=False, n_features=None, comments=False, threads=None,
                  progress=False, block_bytes=BLOCK_BYTES, engine="auto",
                  python_limit=PY_PARSE_LIMIT):
    """Read svmlight/libsvm text into a :class:`~svmtool.problem.Problem`.

    ``source``: a path or ``-`` (stdin); gzip/bzip2/xz are recognised by their magic bytes.
    ``zero_based``: feature indices start at 0 (else index 0 is an error).  ``n_features``: the
    width to give the matrix (an index beyond it is an error).  ``comments``: keep the text after
    ``#`` of each example.  ``threads``: parser threads (default: the cores, at most 8).
    ``engine``: "auto" (plain files up to ``python_limit`` bytes by the pure-Python parser, the
    rest by the jitted one), "jit" or "python" (the latter only for plain files; both give
    identical results).  Raises :class:`~svmtool.errors.DataFormatError` naming the file, line and reason.
    """
    with _Input(source) as inp:
        return _load_input(inp, zero_based, n_features, comments, threads, progress, block_bytes,
                           engine, python_limit)


def _use_python(inp, engine, limit=PY_PARSE_LIMIT):
    if engine not in ("auto", "jit", "python"):
        raise ValueError(f"engine must be auto, jit or python (got {engine!r})")
    if inp.buf is None:
        return False
    return engine == "python" or (engine == "auto" and len(inp.buf) <= limit)


def _load_input(inp, zero_based, n_features, comments, threads, progress, block_bytes,
                engine="auto", python_limit=PY_PARSE_LIMIT):
    if _use_python(inp, engine, python_limit):
        return _load_small(inp, zero_based, n_features, comments)
    parser = _Parser(inp.name, zero_based, comments, threads)
    try:
        if inp.buf is not None:
            return _load_buffer(parser, inp, n_features, progress, block_bytes)
        return _load_stream(parser, inp, n_features, progress, block_bytes)
    finally:
        parser.close()


def _load_buffer(parser, inp, n_features, progress, block_bytes):
    """The whole input is in memory (mmap): plan every block, allocate once, fill in place."""
    buf = inp.buf
    size = len(buf)
    nblocks = max(1, -(-size // block_bytes))
    bounds = parser.p.find_line_starts(buf, 0, size, nblocks)
    plans = [parser.plan(buf, bounds[b], bounds[b + 1]) for b in range(nblocks)]
    rows_ub = sum(sum(pl[1]) + len(pl[1]) for pl in plans)
    nnz_ub = sum(sum(pl[2]) for pl in plans)
    out = parser.allocate(rows_ub, nnz_ub)
    rows = nnz = 0
    maxcol, has_qid, comments = -1, False, ([] if parser.comments else None)
    note = None
    bar = _progress_bar(progress, size, inp.name)
    try:
        for b, pl in enumerate(plans):
            r, z, mc, hq, cm, nt = parser.fill(buf, pl, out, rows, nnz, 0)
            note = note or nt
            rows += r
            nnz += z
            maxcol = max(maxcol, mc)
            has_qid = has_qid or hq
            if comments is not None:
                comments.extend(cm)
            if bar is not None:
                bar.update(int(bounds[b + 1] - bounds[b]))
    finally:
        if bar is not None:
            bar.close()
    return _finish(parser, out, rows, nnz, maxcol, has_qid, comments, n_features, inp.name, note)


def _parse_block(parser, block, line0):
    """Parse one block of whole lines into arrays of its own; returns a tuple for _finish."""
    plan = parser.plan(block, 0, len(block))
    out = parser.allocate(sum(plan[1]) + len(plan[1]), sum(plan[2]))
    r, z, mc, hq, cm, note = parser.fill(block, plan, out, 0, 0, line0)
    return out, r, z, mc, hq, cm, note


def _load_stream(parser, inp, n_features, progress, block_bytes):
    parts = []
    maxcol, has_qid, note = -1, False, None
    bar = _progress_bar(progress, None, inp.name)
    try:
        for block, line0 in inp.blocks(block_bytes):
            out, r, z, mc, hq, cm, nt = _parse_block(parser, block, line0)
            parts.append((out, r, z, cm))
            note = note or nt
            maxcol = max(maxcol, mc)
            has_qid = has_qid or hq
            if bar is not None:
                bar.update(len(block))
    finally:
        if bar is not None:
            bar.close()
    rows = sum(p[1] for p in parts)
    nnz = sum(p[2] for p in parts)
    if len(parts) == 1:
        out, r, z, cm = parts[0]
        return _finish(parser, out, r, z, maxcol, has_qid, cm, n_features, inp.name, note)
    # concatenate the blocks
    out = {
        "indptr": np.empty(rows + 1, dtype=np.int64),
        "indices": np.empty(nnz, dtype=np.int32),
        "data": np.empty(nnz, dtype=np.float64),
        "y": np.empty(rows, dtype=np.float64),
        "qid": np.empty(rows, dtype=np.int64),
        "cost": np.empty(rows, dtype=np.float64),
    }
    out["indptr"][0] = 0
    comments = [] if parser.comments else None
    r0 = z0 = 0
    for part, r, z, cm in parts:
        out["indptr"][r0 + 1:r0 + r + 1] = part["indptr"][1:r + 1] + z0
        out["indices"][z0:z0 + z] = part["indices"][:z]
        out["data"][z0:z0 + z] = part["data"][:z]
        out["y"][r0:r0 + r] = part["y"][:r]
        out["qid"][r0:r0 + r] = part["qid"][:r]
        out["cost"][r0:r0 + r] = part["cost"][:r]
        if comments is not None:
            comments.extend(cm)
        r0 += r
        z0 += z
    parts.clear()
    return _finish(parser, out, rows, nnz, maxcol, has_qid, comments, n_features, inp.name, note)


def iter_svmlight_chunks(source, *, chunk_bytes=BLOCK_BYTES, zero_based=False, comments=False,
                         threads=None, engine="auto", python_limit=PY_PARSE_LIMIT):
    """Yield one :class:`Problem` per block of about ``chunk_bytes`` of whole lines, in order.
    With ``engine="auto"``, a plain file of at most ``python_limit`` bytes (and one block) is
    read by the pure-Python parser.

    Each chunk's ``n_features`` is the largest column seen in that chunk plus one.  Memory stays
    at about one block's arrays, whatever the size of the input.  An input without any example
    raises DataFormatError, as :func:`load_svmlight` does.
    """
    with _Input(source) as inp:
        if _use_python(inp, engine, python_limit) and (engine == "python"
                                                       or len(inp.buf) <= chunk_bytes):
            yield _load_small(inp, zero_based, None, comments)
            return
        parser = _Parser(inp.name, zero_based, comments, threads)
        try:
            if inp.buf is not None:
                buf = inp.buf
                size = len(buf)
                nblocks = max(1, -(-size // chunk_bytes))
                bounds = parser.p.find_line_starts(buf, 0, size, nblocks)
                line0 = 0
                blocks = []
                for b in range(nblocks):
                    blocks.append((buf[bounds[b]:bounds[b + 1]], line0))
                    if b + 1 < nblocks:
                        line0 += int(parser.p.count_newlines(buf, bounds[b], bounds[b + 1]))
                source_blocks = iter(blocks)
            else:
                source_blocks = inp.blocks(chunk_bytes)
            total = 0
            for block, line0 in source_blocks:
                out, r, z, mc, hq, cm, _ = _parse_block(parser, block, line0)
                if r == 0:
                    continue
                total += r
                yield Problem(out["indptr"][:r + 1], out["indices"][:z], out["data"][:z],
                              out["y"][:r], mc + 1, qid=out["qid"][:r] if hq else None,
                              comments=cm, source=inp.name,
                              weights=out["cost"][:r] if parser.has_cost else None)
            if total == 0:
                raise DataFormatError(inp.name, None, "empty input: no examples found")
        finally:
            parser.close()


# --- text or cache, told apart by magic bytes ---------------------------------------------------

def _cache_module():
    from svmtool.io import cache

    return cache


def _is_cache(source):
    """Whether ``source`` (a path or ``-``) is a binary cache, by its first bytes."""
    from svmtool.io.magic import CACHE_MAGIC, is_cache

    if source == "-":
        head = _peek(sys.stdin.buffer, len(CACHE_MAGIC))
    else:
        try:
            with open(source, "rb") as f:
                head = f.read(len(CACHE_MAGIC))
        except IsADirectoryError:
            raise InputError(f"{source}: is a directory")
    return is_cache(head)


def _widen(prob, n_features, source, what):
    """``prob`` given ``n_features`` columns (None: as read); fewer than it holds is an error."""
    if n_features is not None:
        if prob.n_features > n_features:
            raise DataFormatError(_display_name(source), None,
                                  f"{what} {prob.n_features} features, beyond "
                                  f"n_features={n_features}")
        prob.n_features = int(n_features)
    return prob


def load_data(source, *, zero_based=False, n_features=None, comments=False, threads=None,
              progress=False, mmap=True, verify=True, python_limit=PY_PARSE_LIMIT):
    """Load a data set from svmlight text (any compression, or stdin) or a binary cache.

    A cache's checksum and structure are verified (``verify``; one sequential pass over the
    arrays, which training touches anyway): a bit flipped on disk is an error, not a
    silently different model.

    A shard index (``svmtool convert --shards N``) is read as one problem, its shards one after
    another (:class:`svmtool.io.shards.ShardedProblem`: mapped, concatenated only if an
    in-memory solver asks for the arrays).  ``python_limit``: plain text files up to this size
    are read by the pure-Python parser (see :func:`load_svmlight`)."""
    from svmtool.io.magic import looks_like_shard_index

    if looks_like_shard_index(source):
        from svmtool.io.shards import load_shards

        prob = load_shards(source, mmap=mmap, verify=verify, comments=comments)
        return _widen(prob, n_features, source, "the shards have")
    if _is_cache(source):
        prob = _cache_module().load_cache(source, mmap=mmap, verify=verify)
        if not comments:
            prob.comments = None
        return _widen(prob, n_features, source, "the cache has")
    return load_svmlight(source, zero_based=zero_based, n_features=n_features,
                         comments=comments, threads=threads, progress=progress,
                         python_limit=python_limit)


def iter_data_chunks(source, *, chunk_bytes=BLOCK_BYTES, zero_based=False, comments=False,
                     threads=None, chunk_rows=None, python_limit=PY_PARSE_LIMIT):
    """Yield Problems in file order from text (streamed in blocks), a cache (row slices) or a
    shard index (its shards' row slices, shard after shard); ``python_limit`` as in
    :func:`iter_svmlight_chunks`."""
    from svmtool.io.magic import looks_like_shard_index

    if looks_like_shard_index(source):
        from svmtool.io.shards import read_shard_index

        for sh in read_shard_index(source)["shards"]:
            yield from iter_data_chunks(sh["path"], chunk_bytes=chunk_bytes,
                                        chunk_rows=chunk_rows)
        return
    if _is_cache(source):
        prob = _cache_module().load_cache(source, mmap=True)
        step = chunk_rows or max(1, int(chunk_bytes // max(1, 12 * prob.nnz / max(1, prob.n_rows))))
        for a in range(0, prob.n_rows, step):
            b = min(prob.n_rows, a + step)
            lo, hi = int(prob.indptr[a]), int(prob.indptr[b])
            yield Problem(prob.indptr[a:b + 1] - lo, prob.indices[lo:hi], prob.data[lo:hi],
                          prob.y[a:b], prob.n_features,
                          qid=None if prob.qid is None else prob.qid[a:b], source=prob.source)
        return
    yield from iter_svmlight_chunks(source, chunk_bytes=chunk_bytes, zero_based=zero_based,
                                    comments=comments, threads=threads, python_limit=python_limit)

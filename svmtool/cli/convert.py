"""``svmtool convert IN OUT`` -- svmlight text, CSV and the binary cache into each other, with
svm-scale style scaling on the way."""

import sys

import click

from svmtool.cli.common import (info, jit_clock, jit_since, quiet_option, show_progress,
                                timed_note, warn, zero_based_option)

CACHE_SUFFIXES = (".cache", ".svmc")
CSV_SUFFIXES = (".csv", ".tsv")
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")


def _bounds(ctx, param, value):
    """Parse 'LOWER,UPPER' into two floats."""
    if value is None:
        return None
    parts = value.replace(" ", "").split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        lower, upper = float(parts[0]), float(parts[1])
    except ValueError:
        raise click.BadParameter(f"expected LOWER,UPPER (e.g. -1,1 or 0,1), got {value!r}")
    if not upper > lower:
        raise click.BadParameter(f"UPPER must be greater than LOWER (got {value!r})")
    return lower, upper


def _strip_compression(name):
    low = name.lower()
    for s in COMPRESSED_SUFFIXES:
        if low.endswith(s):
            return low[: -len(s)]
    return low


@click.command("convert", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("input_path", metavar="IN", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("output_path", metavar="OUT",
                type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--from", "from_", type=click.Choice(["auto", "svmlight", "csv"]), default="auto",
              show_default=True,
              help="Input format. auto: CSV when IN ends in .csv or .tsv (also .gz/.bz2/.xz), "
                   "else svmlight text or a cache, told apart by the file's first bytes.")
@click.option("--to", "to", type=click.Choice(["auto", "svmlight", "cache"]), default="auto",
              show_default=True,
              help="Output format. auto: a binary cache when OUT ends in .cache or .svmc, else "
                   "svmlight text (also for OUT = -).")
@zero_based_option
@click.option("--output-zero-based", is_flag=True,
              help="Write feature indices from 0 (scikit-learn's default) instead of 1.")
@click.option("--keep-comments", is_flag=True,
              help="Keep the '# ...' text of each example (by default comments are dropped).")
@click.option("--label-column", type=int, default=0, show_default=True, metavar="N",
              help="CSV: the column holding the label (0 = first, -1 = last).")
@click.option("--csv-header/--no-csv-header", default=None,
              help="CSV: the first line is (not) a header.  Default: a header when one of its "
                   "fields is not a number.")
@click.option("--delimiter", default=None, metavar="CHAR",
              help="CSV: field separator (default ',' , or a tab for .tsv).")
@click.option("--scale", "scale_to", callback=_bounds, metavar="LOWER,UPPER",
              help="Scale every feature linearly to [LOWER,UPPER] as LIBSVM's svm-scale does "
                   "(min/max include the implicit zeros; constant features are dropped).  "
                   "Use 0,1 to keep sparse non-negative data sparse.")
@click.option("--scale-y", "scale_y", callback=_bounds, metavar="LOWER,UPPER",
              help="Also scale the labels to [LOWER,UPPER] (svm-scale -y).")
@click.option("--save-ranges", type=click.Path(dir_okay=False, allow_dash=True),
              metavar="FILE",
              help="Write the scaling ranges in svm-scale's format (svm-scale -s).  Without "
                   "--scale this scales to svm-scale's default -1,1.")
@click.option("--restore-ranges", type=click.Path(dir_okay=False, exists=True),
              metavar="FILE",
              help="Scale with the ranges in FILE, from --save-ranges or svm-scale -s "
                   "(svm-scale -r): test data scaled like the training data.")
@click.option("--verify", is_flag=True,
              help="With a cache as input, also check its checksum and structure.")
@click.option("--shards", type=click.IntRange(min=1), default=None, metavar="N",
              help="Write N caches of consecutive rows (about equal non-zeros each) beside OUT "
                   "and make OUT an index (JSON) naming them, for the workers of a cluster "
                   "(svmtool train --dask) reading from a shared path.")
@click.option("--block-size", "block_mb", type=click.FloatRange(min=0.01), default=64.0,
              show_default=True, metavar="MB",
              help="Text is parsed in blocks of this many megabytes: a text -> cache conversion "
                   "holds about one block's arrays in memory, whatever the input's size.")
@quiet_option
@click.pass_context
def command(ctx, input_path, output_path, from_, to, zero_based, output_zero_based,
            keep_comments, label_column, csv_header, delimiter, scale_to, scale_y, save_ranges,
            restore_ranges, verify, shards, block_mb, quiet):
    """Convert the data set IN into OUT (- for stdin / stdout).

    \b
    Examples:
      svmtool convert train.txt train.cache        # text -> binary cache (fast to load)
      svmtool convert train.cache train.txt        # cache -> text
      svmtool convert --zero-based sk.txt lib.txt  # 0-based indices -> 1-based
      svmtool convert --from csv data.csv data.txt
      svmtool convert --scale 0,1 --save-ranges r train.txt train.scaled
      svmtool convert --restore-ranges r test.txt test.scaled
      cat part1 part2 | svmtool convert - big.cache  # any size, in bounded memory
      svmtool convert --shards 8 big.txt big.shards  # 8 shard caches + index

    Numbers are written so that they read back bit for bit.  The cache is read by every
    command in place of the text (recognised by its first bytes).
    """
    import time

    _check_paths(input_path, output_path, scale_to, scale_y, save_ranges, restore_ranges)
    fmt_in, fmt_out = _formats(input_path, output_path, from_, to, shards)
    scaling = bool(scale_to or scale_y or save_ranges or restore_ranges)
    if fmt_out in ("cache", "shards") and fmt_in == "data" and not scaling and \
            not _is_cache_file(input_path):
        return _stream(ctx, input_path, output_path, fmt_out, shards, zero_based,
                       keep_comments, block_mb, quiet)
    t0, jit0 = time.perf_counter(), jit_clock()
    if fmt_in == "csv":
        prob = _read_csv(input_path, label_column, csv_header, delimiter)
    else:
        prob = _read_data(ctx, input_path, zero_based, keep_comments, verify, quiet)
    if not keep_comments:
        prob.comments = None
    t_read = time.perf_counter() - t0
    info(ctx, f"read {input_path}: {prob.n_rows} rows, {prob.n_features} features, "
              f"{prob.nnz} non-zeros {timed_note(t_read, jit_since(jit0))}", quiet)
    ranges = None
    if scaling:
        prob, ranges = _scale(ctx, prob, scale_to, scale_y, restore_ranges, quiet)
    _write(ctx, prob, output_path, fmt_out, shards, output_zero_based, quiet, ranges,
           save_ranges)


def _check_paths(input_path, output_path, scale_to, scale_y, save_ranges, restore_ranges):
    """The combinations of files and scaling options, before anything is read."""
    import os

    from svmtool.errors import ParameterError

    if restore_ranges and (scale_to or scale_y):
        raise ParameterError("--restore-ranges takes the bounds from the range file: drop "
                             "--scale / --scale-y")
    if restore_ranges and save_ranges:
        raise ParameterError("--save-ranges and --restore-ranges cannot be used together "
                             "(as in svm-scale)")
    if save_ranges == "-" and output_path == "-":
        raise ParameterError("OUT and --save-ranges cannot both be stdout ('-')")
    if input_path != "-" and output_path != "-" and os.path.exists(output_path) and \
            os.path.samefile(input_path, output_path):
        raise ParameterError("IN and OUT are the same file")


def _formats(input_path, output_path, from_, to, shards):
    """(input format "csv" | "data", output format "cache" | "shards" | "svmlight")."""
    from svmtool.errors import ParameterError

    fmt_in = from_
    if fmt_in == "auto":
        fmt_in = "csv" if input_path != "-" and \
            _strip_compression(input_path).endswith(CSV_SUFFIXES) else "data"
    fmt_out = to
    if fmt_out == "auto":
        fmt_out = "cache" if output_path != "-" and \
            output_path.lower().endswith(CACHE_SUFFIXES) else "svmlight"
    if shards is not None:
        if output_path == "-":
            raise ParameterError("--shards writes files beside OUT: OUT cannot be - (stdout)")
        if to == "svmlight":
            raise ParameterError("--shards writes caches: drop --to svmlight")
        fmt_out = "shards"
    return fmt_in, fmt_out


def _read_csv(input_path, label_column, csv_header, delimiter):
    from svmtool.errors import ParameterError
    from svmtool.io.csv import load_csv

    if delimiter is None:
        delimiter = "\t" if _strip_compression(input_path).endswith(".tsv") else ","
    if delimiter in ("\\t", "tab"):
        delimiter = "\t"
    if len(delimiter) != 1:
        raise ParameterError(f"--delimiter must be one character (got {delimiter!r})")
    return load_csv(input_path, label_column=label_column, header=csv_header,
                    delimiter=delimiter)


def _read_data(ctx, input_path, zero_based, keep_comments, verify, quiet):
    """svmlight text or a cache (``verify``: a cache's checksum and structure checked)."""
    from svmtool.io.svmlight import load_data

    if verify and input_path != "-":
        from svmtool.io.cache import CACHE_MAGIC, is_cache, load_cache

        with open(input_path, "rb") as f:
            head = f.read(len(CACHE_MAGIC))
        if is_cache(head):
            return load_cache(input_path, verify=True)
    return load_data(input_path, zero_based=zero_based, comments=keep_comments,
                     progress=show_progress(ctx, quiet))


def _scale(ctx, prob, scale_to, scale_y, restore_ranges, quiet):
    """(scaled problem, ranges): svm-scale's rule, from --scale / --scale-y or a range file."""
    import time

    from svmtool.io.scale import compute_ranges, restore_ranges as read_ranges, scale

    t1 = time.perf_counter()
    if restore_ranges:
        ranges = read_ranges(restore_ranges)
    else:
        lower, upper = scale_to or (-1.0, 1.0)
        ranges = compute_ranges(prob, lower, upper, y_range=scale_y)
    nnz_before = prob.nnz
    prob = scale(prob, ranges, warn=warn)
    info(ctx, f"scaled to [{ranges.lower:g},{ranges.upper:g}]: {len(ranges.index)} features "
              f"with ranges, {nnz_before} -> {prob.nnz} non-zeros in "
              f"{time.perf_counter() - t1:.3f} s", quiet)
    return prob, ranges


def _write(ctx, prob, output_path, fmt_out, shards, output_zero_based, quiet, ranges,
           save_ranges):
    """OUT in its format, then the ranges of --save-ranges."""
    import os
    import time

    t2 = time.perf_counter()
    if fmt_out == "shards":
        _write_shards(ctx, prob, output_path, shards, quiet)
        kind = "shard index"
    elif fmt_out == "cache":
        from svmtool.io.cache import save_cache

        save_cache(prob, output_path)
        kind = "cache"
    else:
        from svmtool.io.writer import dump_svmlight

        dump_svmlight(prob, output_path, zero_based=output_zero_based)
        kind = "svmlight text"
    if save_ranges:
        from svmtool.io.scale import save_ranges as write_ranges

        write_ranges(ranges, save_ranges)
    size = ""
    if output_path != "-" and os.path.isfile(output_path):
        size = f", {os.path.getsize(output_path)} bytes"
    info(ctx, f"wrote {output_path} ({kind}{size}) in {time.perf_counter() - t2:.3f} s", quiet)


def _is_cache_file(path):
    if path == "-":
        return False          # a cache on stdin is read whole (it has to be, to be checked)
    from svmtool.io.cache import CACHE_MAGIC, is_cache

    try:
        with open(path, "rb") as f:
            return is_cache(f.read(len(CACHE_MAGIC)))
    except IsADirectoryError:
        return False


def _stream(ctx, input_path, output_path, fmt_out, shards, zero_based, keep_comments, block_mb,
            quiet):
    """Text -> cache (or shards) in memory O(one block): parse a block of lines, append its
    arrays to the cache's section files, assemble the cache at the end."""
    import os
    import time

    from svmtool.io.cache_stream import stream_cache
    from svmtool.io.svmlight import iter_data_chunks

    t0, jit0 = time.perf_counter(), jit_clock()
    block = max(1 << 16, int(block_mb * (1 << 20)))
    bar = None
    if show_progress(ctx, quiet):
        from tqdm import tqdm

        bar = tqdm(desc=f"converting {os.path.basename(input_path)}", unit=" rows",
                   file=sys.stderr, leave=False)

    def tick(chunk):
        if bar is not None:
            bar.update(chunk.n_rows)

    # (a cache arriving on stdin is recognised here too, and read whole)
    chunks = iter_data_chunks(input_path, chunk_bytes=block, zero_based=zero_based,
                              comments=keep_comments)
    target = output_path
    tmp = None
    if fmt_out == "shards":
        import tempfile

        folder = os.path.dirname(os.path.abspath(output_path))
        fd, tmp = tempfile.mkstemp(prefix=".svmtool-whole-", suffix=".cache", dir=folder)
        os.close(fd)
        target = tmp
    try:
        try:
            facts = stream_cache(chunks, target, comments=keep_comments, on_chunk=tick)
        finally:
            if bar is not None:
                bar.close()
        info(ctx, f"read {input_path}: {facts['n_rows']} rows, {facts['n_features']} features, "
                  f"{facts['nnz']} non-zeros; wrote {'the whole ' if tmp else ''}cache "
                  f"({facts['bytes']} bytes) "
                  f"{timed_note(time.perf_counter() - t0, jit_since(jit0))}", quiet)
        if tmp is not None:
            from svmtool.io.shards import write_shards

            t1 = time.perf_counter()
            index = write_shards(tmp, output_path, shards)
            info(ctx, f"wrote {output_path} (shard index, {len(index['shards'])} shards) in "
                      f"{time.perf_counter() - t1:.3f} s", quiet)
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def _write_shards(ctx, prob, output_path, shards, quiet):
    """A problem already in memory (CSV, scaled, a cache) -> a whole cache beside OUT, then
    the shards and the index."""
    import os
    import tempfile

    from svmtool.io.cache import save_cache
    from svmtool.io.shards import write_shards

    folder = os.path.dirname(os.path.abspath(output_path))
    fd, tmp = tempfile.mkstemp(prefix=".svmtool-whole-", suffix=".cache", dir=folder)
    os.close(fd)
    try:
        save_cache(prob, tmp)
        write_shards(tmp, output_path, shards)
    finally:
        os.unlink(tmp)

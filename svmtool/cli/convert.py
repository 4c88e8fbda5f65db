"""``svmtool convert IN OUT`` -- svmlight text, CSV and the binary cache into each other, with
svm-scale style scaling on the way."""

import click

from svmtool.cli.common import info, quiet_option, show_progress, warn, zero_based_option

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
@quiet_option
@click.pass_context
def command(ctx, input_path, output_path, from_, to, zero_based, output_zero_based,
            keep_comments, label_column, csv_header, delimiter, scale_to, scale_y, save_ranges,
            restore_ranges, verify, quiet):
    """Convert the data set IN into OUT (- for stdin / stdout).

    \b
    Examples:
      svmtool convert train.txt train.cache        # text -> binary cache (fast to load)
      svmtool convert train.cache train.txt        # cache -> text
      svmtool convert --zero-based sk.txt lib.txt  # 0-based indices -> 1-based
      svmtool convert --from csv data.csv data.txt
      svmtool convert --scale 0,1 --save-ranges r train.txt train.scaled
      svmtool convert --restore-ranges r test.txt test.scaled

    Numbers are written so that they read back bit for bit.  The cache is read by every
    command in place of the text (recognised by its first bytes).
    """
    import os
    import time

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

    fmt_in = from_
    if fmt_in == "auto":
        fmt_in = "csv" if input_path != "-" and \
            _strip_compression(input_path).endswith(CSV_SUFFIXES) else "data"
    fmt_out = to
    if fmt_out == "auto":
        fmt_out = "cache" if output_path != "-" and \
            output_path.lower().endswith(CACHE_SUFFIXES) else "svmlight"

    t0 = time.perf_counter()
    if fmt_in == "csv":
        from svmtool.io.csv import load_csv

        if delimiter is None:
            delimiter = "\t" if _strip_compression(input_path).endswith(".tsv") else ","
        if delimiter in ("\\t", "tab"):
            delimiter = "\t"
        if len(delimiter) != 1:
            raise ParameterError(f"--delimiter must be one character (got {delimiter!r})")
        prob = load_csv(input_path, label_column=label_column, header=csv_header,
                        delimiter=delimiter)
    else:
        from svmtool.io.svmlight import load_data

        if verify and input_path != "-":
            from svmtool.io.cache import CACHE_MAGIC, is_cache, load_cache

            with open(input_path, "rb") as f:
                head = f.read(len(CACHE_MAGIC))
            if is_cache(head):
                prob = load_cache(input_path, verify=True)
            else:
                prob = load_data(input_path, zero_based=zero_based, comments=keep_comments,
                                 progress=show_progress(ctx, quiet))
        else:
            prob = load_data(input_path, zero_based=zero_based, comments=keep_comments,
                             progress=show_progress(ctx, quiet))
    if not keep_comments:
        prob.comments = None
    t_read = time.perf_counter() - t0
    info(ctx, f"read {input_path}: {prob.n_rows} rows, {prob.n_features} features, "
              f"{prob.nnz} non-zeros in {t_read:.3f} s", quiet)

    if scale_to or scale_y or save_ranges or restore_ranges:
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
    else:
        ranges = None

    t2 = time.perf_counter()
    if fmt_out == "cache":
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

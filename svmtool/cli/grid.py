"""``svmtool grid``: LIBSVM's ``tools/grid.py`` in one process (and ``--easy``, its easy.py).

    svmtool grid [-log2c B,E,S|null] [-log2g B,E,S|null] [-v N] [-out FILE|null]
                 [-png FILE|null] [-resume [FILE]] [svm-train's options] [options] TRAIN
    svmtool grid --easy [options] TRAIN [TEST]

grid.py's options and files: the cells in its order, one line per cell as it finishes
(``[local] log2c log2g rate (best c=.., g=.., rate=..)``), its ``.out`` file (``-resume`` reads
one written by either tool), the last line ``C GAMMA RATE``; a contour plot instead of
gnuplot's (matplotlib, ``pip install 'svmtool[plot]'``).  ``-svmtrain`` and ``-gnuplot`` are
accepted and ignored.  svm-train's options (``-s -t -d -r -n -m -e -p -h -b -wi``) apply to
every cell; ``-s`` also takes svmtool's solvers by name: a linear solver (``-s dcd-l2``, ...)
searches C along the warm-started path of ``train -C`` (no gamma), ``-s dcsvm --early``
scores the cells with DC-SVM's early model (``--refine K`` re-runs the best K exactly).

svmtool's options:

    --threads N            units of cells on N threads (default: all cores)
    --dask ADDRESS|local:N units of cells as tasks of a dask cluster
    --order grid|path      the order of the lines: grid.py's (default), or gamma by gamma
    --time-limit SECONDS   no new cell after this; the best so far (exit 0, a warning)
    --report FILE          a JSON record: every cell's rate and time, the best, the options
    --halving              successive halving over cells on growing row samples (C scaled
                           by sqrt(N/n)); off by default
    --libsvm-folds         svm-train -v's folds (the default); --svmtool-folds: seeded ones
    --seed N               the seed of --svmtool-folds and of --halving's samples
    --seed-alpha c|fold|none, --no-row-sharing   switch the shared work (to measure)
    -q                     only the final line

Bad input (a grid of no cell, a step of 0 or of the wrong sign, -v < 2 or more folds than
rows, a -resume file of another grid, an unknown option) ends with one line and exit 2 before
any cell runs.
"""

import time

import click

from svmtool.cli.common import is_quiet, note_quiet

RAW = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


HELP = """LIBSVM's grid.py (and, with --easy, its easy.py) in one process.

\b
svmtool grid [-log2c B,E,S|null] [-log2g B,E,S|null] [-v N] [-out FILE|null]
             [-png FILE|null] [-resume [FILE]] [svm-train's options] [options] TRAIN
svmtool grid --easy [options] TRAIN [TEST]

\b
grid.py's options (-svmtrain and -gnuplot are accepted and ignored):
-log2c begin,end,step|null   log2(C) (default -5,15,2)
-log2g begin,end,step|null   log2(gamma) (default 3,-15,-2)
-v n                         n-fold cross validation (5), svm-train -v's folds
-out FILE|null               the .out file (TRAIN.out); -resume reads it
-png FILE|null               contour plot (TRAIN.png; needs matplotlib)
-resume [FILE]               skip the cells of a .out file (TRAIN.out)

\b
svm-train's options, for every cell: -s -t -d -r -n -m -e -p -h -b -wi -q
(-s also takes svmtool's solvers by name: a linear one, e.g. -s dcd-l2, searches C
along train -C's warm-started path, and with -s svr-l2 or svr-l1 also p, given
-log2p begin,end,step (one C path per p); -s dcsvm --early scores cells by DC-SVM's
early model, --refine K re-runs the best K exactly; -B for them)

\b
svmtool's options:
--threads N             units of cells on N threads (default: all cores)
--dask ADDRESS|local:N  units of cells as tasks of a dask cluster
--order grid|path       lines in grid.py's order (default) or gamma by gamma
--time-limit SECONDS    no new cell after this: the best so far (exit 0, a warning)
--report FILE           JSON record: every cell's rate and time, the best, the options
--halving               successive halving over cells on growing row samples
--svmtool-folds         seeded folds instead of svm-train's (--libsvm-folds)
--seed N                seed of --svmtool-folds and of --halving's samples
--seed-alpha c|fold|none, --no-row-sharing: other alpha seeds, no shared rows
-q                      print only the final line

Output: one line per cell, '[local] log2c log2g rate (best c=.., g=.., rate=..)',
then 'C GAMMA RATE' of the best cell, as grid.py prints them.
"""


@click.command("grid", context_settings=RAW, add_help_option=False, help=HELP)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def command(ctx, args):
    if not args or list(args) in (["--help"], ["-h"]):
        click.echo(ctx.get_help())
        return
    from svmtool.cli.grid_args import parse

    a = parse(args)
    if a.quiet:
        note_quiet(ctx, None, True)
    quiet = a.quiet or is_quiet(ctx)
    started = time.monotonic()
    if a.easy:
        from svmtool.cli.grid_easy import easy

        easy(ctx, a, quiet, started)
    else:
        from svmtool.cli.grid_run import run_grid_command

        run_grid_command(ctx, a, quiet, started)

"""The ``svmtool`` console script and ``python -m svmtool``: where the process enters svmtool.

A command's start imports a few hundred modules (click, numpy, svmtool's own) whose objects all
live to the end; with the cyclic collector's default young generation (700 allocations) it
scans them over and over while they are made, dozens of collections before a short command's
first row.  Here, before any of them is imported (only the version and the lazy names of
:mod:`svmtool` itself come first), the young generation is made
YOUNG_THRESHOLD allocations for the life of the process: the start pays for its imports only,
and cycles are still collected, a little later.  Only this process entry does it; importing
:mod:`svmtool` or :mod:`svmtool.cli` (a notebook, a test) leaves the collector as it was."""

import gc

YOUNG_THRESHOLD = 50_000


def main():
    """Run the CLI (:func:`svmtool.cli.main`, which ends the process)."""
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    from svmtool.cli import main as cli_main

    cli_main()

"""What ``svmtool grid`` does once its arguments are parsed: read, check, run the grid, print
grid.py's lines, keep the ``.out`` file, draw, report; and ``--easy``, easy.py's job."""

import contextlib
import os
import sys
import time

import click

from svmtool.cli.common import show_progress, warn
from svmtool.errors import ParameterError

OUT_EVERY = 1.0       # seconds between rewrites of a regular .out file while the grid runs


class OutFile:
    """grid.py's ``.out`` file.  A regular file is rewritten whole (atomically) at most once a
    second while the grid runs and at the end, so that it is always complete and a run that
    dies loses at most a second of cells for ``-resume``; a pipe or ``-`` gets each line as it
    comes.  With ``-resume`` the new lines follow what the file held, as grid.py appends."""

    def __init__(self, path, keep_existing):
        from svmtool.io.output import open_output, output_kind

        self.path = path
        self.lines = []
        self.stack = contextlib.ExitStack()
        self.stream = None
        self.kind, _ = output_kind(path)
        self.last = 0.0
        if self.kind == "atomic":
            if keep_existing and os.path.isfile(path):
                with open(path, "r", encoding="utf-8", errors="replace") as f:
                    text = f.read()
                self.lines = text.splitlines()
        else:
            self.stream = self.stack.enter_context(open_output(path))

    def add(self, line):
        if self.stream is not None:
            self.stream.write(line + "\n")
            self.stream.flush()
            return
        self.lines.append(line)
        if time.monotonic() - self.last >= OUT_EVERY:
            self.write()

    def write(self):
        from svmtool.io.output import open_output

        with open_output(self.path) as f:
            f.write("".join(line + "\n" for line in self.lines))
        self.last = time.monotonic()

    def close(self):
        if self.stream is None:
            self.write()
        self.stack.close()


def prepare(ctx, a, quiet):
    """Everything checked and read before any cell: (problem, params, spec, grid, resumed)."""
    from svmtool import _startup

    _startup.timed_import("numpy")        # first imported here: --report's startup block
    from svmtool import api
    from svmtool.cli.grid_args import build_params, note_ignored, solver_name
    from svmtool.io.svmlight import load_data
    from dataclasses import replace

    from svmtool.selection.grid import GridOptions, kind_of, linear_range, make_folds, path_solver
    from svmtool.selection.plot import have_matplotlib
    from svmtool.selection.spec import GridSpec, read_resume

    params, spec = build_params(a, solver_name(a))
    kind = kind_of(spec, params)
    if a.log2p is not None:
        if kind != "linear" or spec.task != "regression":
            raise ParameterError(f"-log2p: p is searched for the linear SVR solvers (-s svr-l2, "
                                 f"svr-l1), not -s {spec.name}")
        if "p" in a.train:
            raise ParameterError("-p and -log2p: the grid sets p (give one of them)")
    if kind == "linear" and a.log2g_given and a.log2g is not None:
        raise ParameterError(f"-log2g: -s {spec.name} is linear, it has no gamma (-log2g null "
                             f"is implied)")
    if a.png_given and a.png and not have_matplotlib():
        from svmtool.errors import MissingExtra

        raise MissingExtra("matplotlib", "-png", " (or -png null)")
    if a.halving and kind == "linear":
        raise ParameterError("--halving is for kernel grids; a linear solver's C path shares "
                             "its work already")
    if a.dask:
        from svmtool.errors import require
        from svmtool.params import check_dask_address, refuse

        refuse(check_dask_address(a.dask))
        require("distributed", "--dask")
    note_ignored(a, quiet)
    own0 = _startup.span_start()
    prob = load_data(a.data, zero_based=int(params.kernel.kernel_type) == 4)
    _startup.add("parse", *_startup.own_since(own0))
    api.check_labels(prob, spec)
    log2c, log2g = a.log2c, a.log2g
    linear_path = False
    if kind == "linear":
        log2g = a.log2p                   # a linear solver has no gamma; an SVR's p, if given
        runner = path_solver(spec)
        if runner is not spec and "e" not in a.train and (
                prob.weights is None or runner.instance_weights):
            if not quiet:
                click.echo(f"svmtool: the C path of -s {spec.name} runs -s {runner.name}, "
                           f"LIBLINEAR's -C solver of the same problem ({spec.problem}); "
                           f"give -e to run -s {spec.name} itself", err=True)
            params = replace(params, solver=runner.name, eps=None)
            spec = runner
        if not a.log2c_given:
            log2c, linear_path = linear_range(prob, params), True
            a.order = "path"
    grid = GridSpec(log2c=log2c, log2g=log2g, fold=a.fold,
                    lower_is_better=spec.task == "regression",
                    axis="p" if a.log2p is not None else "g")
    grid.cells()                       # a grid of no cell: an error now
    opts = GridOptions(order=a.order, threads=a.threads, folds=a.folds, seed=a.seed,
                       seed_alpha=a.seed_alpha, share_rows=a.share_rows, dask=a.dask,
                       refine=a.refine, linear_path=linear_path)
    folds = make_folds(prob, spec, a.fold, opts)
    resumed = read_resume(a.resume, grid) if a.resume else {}
    return prob, params, spec, grid, opts, folds, resumed


def run_grid_command(ctx, a, quiet, started, prepared=None, echo_final=True):
    """The grid of ``a`` from its data file, grid.py's output; returns the result."""
    from svmtool.selection.spec import RESUMED, better, cell_line, final_line, out_line

    prob, params, spec, grid, opts, folds, resumed = prepared or prepare(ctx, a, quiet)
    if a.time_limit is not None:
        opts.deadline = started + a.time_limit
    out = None
    out_path = a.title + ".out" if a.out is None else a.out
    if out_path:
        out = OutFile(out_path, keep_existing=bool(a.resume))
    state = {"best": None}
    say = (lambda line: None) if quiet else click.echo
    for (c, g), rate in resumed.items():
        if better(rate, c, g, state["best"], grid.lower_is_better):
            state["best"] = (rate, c, g)
        # grid.py prints a resumed cell with the logs it read, as floats
        say(cell_line(*(None if v is None else float(v) for v in (c, g)), rate, state["best"],
                      prefix=RESUMED, axis=grid.axis))
    total = len([k for k in grid.cells() if k not in resumed])
    bar = progress_bar(ctx, quiet, total)

    def on_cell(cell):
        refined = cell.stats.get("refined")
        if not refined and better(cell.rate, cell.c, cell.g, state["best"],
                                  grid.lower_is_better):
            state["best"] = (cell.rate, cell.c, cell.g)
        if bar is not None:
            bar.update(1)
        line = cell_line(cell.c, cell.g, cell.rate, state["best"],
                         prefix="[refine]" if refined else "[local]", axis=grid.axis)
        if bar is not None:
            bar.clear()
        say(line)
        if out is not None and not refined:
            out.add(out_line(cell.c, cell.g, cell.rate, axis=grid.axis))

    try:
        if a.halving:
            from svmtool.selection.halving import run_halving

            res = run_halving(prob, params, grid, spec, opts, resumed=resumed, on_cell=on_cell,
                              folds=folds, say=None if quiet else
                              (lambda line: click.echo(line, err=True)))
        else:
            from svmtool.selection.grid import run_grid

            res = run_grid(prob, params, grid, spec, opts, resumed=resumed, on_cell=on_cell,
                           folds=folds)
    finally:
        if bar is not None:
            bar.close()
        if out is not None:
            out.close()
    if res.stopped == "time limit":
        warn(f"--time-limit: the grid stopped after {len(res.cells)} of {total} cells; the "
             f"best cell so far")
    elif res.stopped and not quiet:
        click.echo(f"svmtool: {res.stopped}", err=True)
    if res.best is None:
        from svmtool.errors import SvmtoolError

        raise SvmtoolError("no cell finished: no best cell")
    if echo_final:
        click.echo(final_line(res.best))
    _draw(a, grid, res, resumed)
    if a.report:
        from svmtool.cli.grid_report import write_grid_report

        write_grid_report(a.report, a, params, spec, grid, res, resumed, started)
    return res


def progress_bar(ctx, quiet, total, desc="grid"):
    """A tqdm bar over cells on a terminal's stderr (None otherwise)."""
    if not show_progress(ctx, quiet):
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=" cell", file=sys.stderr, leave=False)


def _draw(a, grid, res, resumed):
    from svmtool.selection.plot import draw, have_matplotlib

    if grid.log2c is None or grid.log2g is None or a.png == "":
        return
    png = a.title + ".png" if a.png is None else a.png
    cells = [(c, g, r) for (c, g), r in resumed.items()]
    cells += [(c.c, c.g, c.rate) for c in res.cells if not c.stats.get("refined")]
    if not have_matplotlib():
        warn("no contour plot: matplotlib is not installed (pip install 'svmtool[plot]')")
        return
    draw(png, cells, res.best, a.title, grid.log2c, grid.log2g, axis=grid.axis,
         lower_is_better=grid.lower_is_better)


"""``svmtool grid --report FILE``: one JSON object, written atomically, like train's report:
the command line, the options, the data, every cell (log2c, log2g, C, gamma, rate, seconds,
and the evaluator's counts: SMO iterations, kernel-row misses, seeds), the best cell, why the
grid stopped, and the times."""

import sys
import time


def write_grid_report(path, a, params, spec, grid, res, resumed, started):
    from dataclasses import asdict

    from svmtool import __version__
    from svmtool.cli.retrain import write_report

    def cell(c, g, rate, seconds=None, stats=None, resumed_=False):
        second = "gamma" if grid.axis == "g" else grid.axis
        return {"log2c": c, "log2" + grid.axis: g, "C": None if c is None else 2.0 ** c,
                second: None if g is None else 2.0 ** g, "rate": rate, "seconds": seconds,
                "resumed": resumed_, **({"stats": stats} if stats else {})}

    cells = [cell(c, g, r, resumed_=True) for (c, g), r in resumed.items()]
    cells += [cell(x.c, x.g, x.rate, x.seconds, x.stats) for x in res.cells]
    best = None
    if res.best is not None:
        b_rate, b_c, b_g = res.best
        best = cell(b_c, b_g, b_rate)
    params_d = {k: v for k, v in asdict(params).items()
                if k not in ("init_w", "deadline", "dcd")}
    record = {
        "version": __version__, "command": ["svmtool", *sys.argv[1:]],
        "solver": spec.name, "evaluator": res.extra.get("kind"), "params": params_d,
        "data": a.data, "folds": grid.fold, "fold_sizes": res.extra.get("folds"),
        "fold_split": a.folds, "log2c": grid.log2c, "log2" + grid.axis: grid.log2g,
        "lower_is_better": grid.lower_is_better, "order": a.order, "threads": a.threads,
        "units": res.units, "cells": cells, "best": best, "stopped": res.stopped,
        "grid_seconds": res.elapsed, "total_seconds": time.monotonic() - started,
    }
    if "refined" in res.extra:
        record["refined"] = [cell(x.c, x.g, x.rate, x.seconds, x.stats)
                             for x in res.extra["refined"]["cells"]]
    if "halving" in res.extra:
        record["halving"] = res.extra["halving"]
    from svmtool import _startup

    record["startup"] = _startup.block()     # the fixed cost of this run, by part
    write_report(path, record)

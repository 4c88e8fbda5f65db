"""``--halving``: successive halving over the cells of a grid (off by default).

Every cell is first scored on a small sample of the rows; only the best third go on to a sample
three times larger, and so on; the last round is the whole data, scored exactly as the plain
grid scores it (so its lines and ``.out`` file are grid.py's, for fewer cells).  A sample of n
of the N rows is a seeded, class-stratified subset (``--seed``) with its own folds, and a cell's
C is scaled to it as Chapelle and Keerthi scale the C they tune on a subsample: the C of the
whole data is ``C = C~ sqrt(N / n)``, so the sample is scored at ``C~ = C sqrt(n / N)``.

The rounds: with m cells and eta = 3, ``R = min(floor(log_3 m), floor(log_3 (N / MIN_ROWS)))``
rounds on samples ``N / 3^R, ..., N / 3`` rows, then the whole data.  Ties in a round's ranking
go to the cell that comes first in grid.py's order.  What it saves and how often it keeps
grid.py's best cell are measured by ``svmtool bench --suite grid``; it is a heuristic: a cell
that only shines on the whole data can be dropped early.
"""

import math

import numpy as np

from svmtool.labels import group_classes

ETA = 3
MIN_ROWS = 50


def rounds(n_cells, n_rows, eta=ETA, min_rows=MIN_ROWS):
    """The sample sizes of the rounds before the whole data (smallest first)."""
    if n_cells <= 1 or n_rows < eta * min_rows:
        return []
    r = min(int(math.floor(math.log(n_cells, eta) + 1e-9)),
            int(math.floor(math.log(n_rows / min_rows, eta) + 1e-9)))
    return [int(n_rows // eta ** (r - k)) for k in range(r)]


def stratified_order(y, seed):
    """A seeded order of the rows whose every prefix holds the classes in proportion."""
    labels, perm, start, count = group_classes(y)
    rng = np.random.default_rng(seed)
    keys = np.empty(len(y))
    for c in range(len(labels)):
        rows = perm[start[c]:start[c] + count[c]].copy()
        rng.shuffle(rows)
        keys[rows] = (np.arange(count[c]) + rng.random()) / max(count[c], 1)
    return np.argsort(keys, kind="stable")


def run_halving(problem, params, grid, spec, opts, *, resumed=None, on_cell=None, folds=None,
                say=None, eta=ETA):
    """The rounds on samples, then :func:`svmtool.selection.grid.run_grid` on the cells kept
    (lines and ``.out`` as the plain grid); ``res.extra['halving']`` tells each round."""
    from svmtool.selection.grid import make_folds, run_grid

    # (instance weights: run_grid refuses them where its cells do not carry them)

    resumed = dict(resumed or {})
    order = grid.cells("grid")
    rank = {key: i for i, key in enumerate(order)}
    alive = [key for key in order if key not in resumed]
    N = problem.n_rows
    sizes = rounds(len(alive), N, eta)
    regression = spec.task == "regression"
    row_order = stratified_order(problem.y, opts.seed) if not regression else \
        np.random.default_rng(opts.seed).permutation(N)
    info = []
    for n in sizes:
        if len(alive) <= 1:
            break
        rows = np.sort(row_order[:n])
        sub = problem.take_rows(rows)
        sub_folds = make_folds(sub, spec, grid.fold, opts)
        scale = math.sqrt(n / N)
        res = run_grid(sub, params, grid, spec, opts, folds=sub_folds, cells=alive,
                       c_scale=scale)
        sign = 1.0 if grid.lower_is_better else -1.0
        scored = sorted(res.cells, key=lambda c: (sign * c.rate, rank[(c.c, c.g)]))
        keep = max(1, int(math.ceil(len(alive) / eta)))
        kept = [(c.c, c.g) for c in scored[:keep]]
        info.append({"rows": int(n), "cells": len(alive), "kept": len(kept),
                     "seconds": res.elapsed, "c_scale": scale,
                     "rates": {f"{c.c} {c.g}": c.rate for c in res.cells}})
        if say is not None:
            say(f"[halving] {n} of {N} rows, C x {scale:.4g}: {len(alive)} cells, kept "
                f"{len(kept)}")
        alive = sorted(kept, key=lambda k: rank[k])
        if res.stopped:
            break
    res = run_grid(problem, params, grid, spec, opts, resumed=resumed, on_cell=on_cell,
                   folds=folds, cells=alive)
    res.extra["halving"] = info
    return res

"""The contour plot of a grid, as grid.py draws it with gnuplot, drawn with matplotlib.

x: log2(C), y: log2(gamma), contour lines of the cross-validated rate from (best rate - 3)
upwards every 0.5 (grid.py's levels), the best cell marked and named in the title, as grid.py's
labels name it.  grid.py draws nothing when all cells share one C, one gamma or one rate; so
does this (:func:`drawable`).  matplotlib is an optional dependency (``svmtool[plot]``).
"""

import math


def have_matplotlib():
    from svmtool.errors import installed

    return installed("matplotlib")


def drawable(cells):
    """Whether grid.py would draw these cells [(log2c, log2g, rate)]."""
    if not cells:
        return False
    return all(len({c[k] for c in cells}) > 1 for k in range(3))


def draw(path, cells, best, title, c_range, g_range, axis="g", lower_is_better=False):
    """Write the PNG of ``cells`` [(log2c, log2g, rate)] to ``path`` (atomically); ``best`` is
    (rate, log2c, log2g).  Returns False (nothing written) when grid.py would not draw."""
    fig = figure(cells, best, title, c_range, g_range, axis, lower_is_better)
    if fig is None:
        return False
    from svmtool.io.output import open_output

    with open_output(path, "wb") as f:
        fig.savefig(f, format="png")
    return True


def figure(cells, best, title, c_range, g_range, axis="g", lower_is_better=False):
    """The matplotlib Figure of the plot (None when grid.py would not draw); ``axis``: the
    second parameter (``g`` gamma, ``p`` a linear SVR's p); ``lower_is_better``: the rate is a
    mean squared error (contours over its whole range instead of grid.py's 3 points below the
    best accuracy)."""
    if not drawable(cells):
        return None
    from svmtool.errors import require

    matplotlib = require("matplotlib", "the contour plot")
    matplotlib.use("Agg")
    import numpy as np
    from matplotlib.figure import Figure

    cs = sorted({c for c, _, _ in cells})
    gs = sorted({g for _, g, _ in cells})
    Z = np.full((len(gs), len(cs)), np.nan)
    for c, g, r in cells:
        Z[gs.index(g), cs.index(c)] = r
    fig = Figure(figsize=(6.4, 4.8), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    if lower_is_better:
        lo, hi = min(r for _, _, r in cells), max(r for _, _, r in cells)
        levels = [lo + (hi - lo) * k / 10.0 for k in range(11)]
    else:
        top = max(r for _, _, r in cells)
        begin = round(top) - 3
        levels = [begin + 0.5 * k for k in range(int(math.ceil((top - begin) / 0.5)) + 2)]
    name = "gamma" if axis == "g" else axis
    score = "MSE" if lower_is_better else "accuracy"
    unit = "" if lower_is_better else "%"
    cont = ax.contour(cs, gs, np.ma.masked_invalid(Z), levels=levels, cmap="viridis")
    ax.clabel(cont, inline=True, fontsize=7, fmt="%g")
    b_rate, b_c, b_g = best
    ax.plot([b_c], [b_g], marker="*", markersize=14, color="red", linestyle="none",
            label=f"best: log2(C) = {b_c:g}, log2({name}) = {b_g:g}, {b_rate:g}{unit}")
    ax.set_xlabel("log2(C)")
    ax.set_ylabel(f"log2({name})")
    ax.set_xlim(min(c_range[0], c_range[1]), max(c_range[0], c_range[1]))
    ax.set_ylim(min(g_range[0], g_range[1]), max(g_range[0], g_range[1]))
    ax.set_title(f"{title}\nBest log2(C) = {b_c:g}  log2({name}) = {b_g:g}  {score} = "
                 f"{b_rate:g}{unit}\nC = {2.0 ** b_c:g}  {name} = {2.0 ** b_g:g}", fontsize=9)
    ax.legend(loc="best", fontsize=7)
    fig.tight_layout()
    return fig

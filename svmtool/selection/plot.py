"""The contour plot of a grid, as grid.py draws it with gnuplot, drawn with matplotlib.

x: log2(C), y: log2(gamma), contour lines of the cross-validated rate from (best rate - 3)
upwards every 0.5 (grid.py's levels), the best cell marked and named in the title, as grid.py's
labels name it.  grid.py draws nothing when all cells share one C, one gamma or one rate; so
does this (:func:`drawable`).  matplotlib is an optional dependency (``svmtool[plot]``).
"""

import math


def have_matplotlib():
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def drawable(cells):
    """Whether grid.py would draw these cells [(log2c, log2g, rate)]."""
    if not cells:
        return False
    return all(len({c[k] for c in cells}) > 1 for k in range(3))


def draw(path, cells, best, title, c_range, g_range):
    """Write the PNG of ``cells`` [(log2c, log2g, rate)] to ``path`` (atomically); ``best`` is
    (rate, log2c, log2g).  Returns False (nothing written) when grid.py would not draw."""
    fig = figure(cells, best, title, c_range, g_range)
    if fig is None:
        return False
    from svmtool.io.output import open_output

    with open_output(path, "wb") as f:
        fig.savefig(f, format="png")
    return True


def figure(cells, best, title, c_range, g_range):
    """The matplotlib Figure of the plot (None when grid.py would not draw)."""
    if not drawable(cells):
        return None
    import matplotlib

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
    top = max(r for _, _, r in cells)
    begin = round(top) - 3
    levels = [begin + 0.5 * k for k in range(int(math.ceil((top - begin) / 0.5)) + 2)]
    cont = ax.contour(cs, gs, np.ma.masked_invalid(Z), levels=levels, cmap="viridis")
    ax.clabel(cont, inline=True, fontsize=7, fmt="%g")
    b_rate, b_c, b_g = best
    ax.plot([b_c], [b_g], marker="*", markersize=14, color="red", linestyle="none",
            label=f"best: log2(C) = {b_c:g}, log2(gamma) = {b_g:g}, {b_rate:g}%")
    ax.set_xlabel("log2(C)")
    ax.set_ylabel("log2(gamma)")
    ax.set_xlim(min(c_range[0], c_range[1]), max(c_range[0], c_range[1]))
    ax.set_ylim(min(g_range[0], g_range[1]), max(g_range[0], g_range[1]))
    ax.set_title(f"{title}\nBest log2(C) = {b_c:g}  log2(gamma) = {b_g:g}  accuracy = "
                 f"{b_rate:g}%\nC = {2.0 ** b_c:g}  gamma = {2.0 ** b_g:g}", fontsize=9)
    ax.legend(loc="best", fontsize=7)
    fig.tight_layout()
    return fig

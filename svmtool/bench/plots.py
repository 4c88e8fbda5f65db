"""PNG plots (matplotlib, the ``plot`` extra).  Every function returns the files it wrote; without
matplotlib they write nothing and :func:`available` says so."""

import math
import os

from svmtool.io.output import open_output

HINT = "plots skipped: matplotlib is not installed (pip install 'svmtool[plot]')"


def available():
    from svmtool.errors import installed

    return installed("matplotlib")


def _plt():
    from svmtool.errors import require

    matplotlib = require("matplotlib", "the bench's plots")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _no_minor_labels(*axes):
    from matplotlib.ticker import NullFormatter

    for ax in axes:
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())


def _safe(s):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(s))


def _colors(names):
    import matplotlib

    cmap = matplotlib.colormaps["tab20"] if hasattr(matplotlib, "colormaps") else None
    out = {}
    for i, n in enumerate(names):
        out[n] = cmap(i % 20) if cmap is not None else None
    return out


def _is_anchor(name):
    return name.startswith(("liblinear", "sklearn", "libsvm", "external"))


FLOOR = 1e-10


def traces(traces, out_dir, tag):
    """Chapelle and Keerthi's plot: test error and primal suboptimality against training time,
    one curve per runner; one figure per (data, C), one row of panels per problem."""
    plt = _plt()
    files = []
    keys = list(dict.fromkeys((t["data"], t["C"]) for t in traces))
    for data, C in keys:
        mine = [t for t in traces if t["data"] == data and t["C"] == C and t["replays"]]
        groups = list(dict.fromkeys(t["group"] for t in mine))
        if not groups:
            continue
        colors = _colors(list(dict.fromkeys(t["runner"] for t in mine)))
        fig, axes = plt.subplots(len(groups), 2, figsize=(12, 4.2 * len(groups)), squeeze=False)
        for gi, g in enumerate(groups):
            ax1, ax2 = axes[gi]
            for t in (t for t in mine if t["group"] == g):
                pts = [p for p in t["replays"] if p["t"] and p["t"] > 0]   # in order of effort
                style = "--s" if _is_anchor(t["runner"]) else "-o"
                col = colors[t["runner"]]
                acc = [(p["t"], 1 - p["accuracy"]) for p in pts if p.get("accuracy") is not None]
                if acc:
                    ax1.plot(*zip(*acc), style, ms=3, color=col, label=t["runner"])
                sub = [(p["t"], max(p["subopt"], FLOOR)) for p in pts
                       if p.get("subopt") is not None and math.isfinite(p["subopt"])]
                if sub:
                    ax2.plot(*zip(*sub), style, ms=3, color=col, label=t["runner"])
                cbk = [(p["t"], max(p["subopt"], FLOOR)) for p in t.get("callback", [])
                       if p.get("subopt") is not None and p["t"] > 0]
                if cbk:
                    ax2.plot(*zip(*cbk), ":", lw=1.2, color=col)
                cacc = [(p["t"], 1 - p["accuracy"]) for p in t.get("callback", [])
                        if p.get("accuracy") is not None and p["t"] > 0]
                if cacc:        # only where the solver's callback hands out w
                    ax1.plot(*zip(*cacc), ":", lw=1.2, color=col)
            ax1.set_xscale("log")
            ax1.set_xlabel("training time (s)")
            ax1.set_ylabel("test error")
            ax1.set_title(f"{data}, C={C:g}, {g}: test error vs time", fontsize=10)
            ax2.set_xscale("log")
            ax2.set_yscale("log")
            ax2.set_ylim(bottom=FLOOR / 2)
            ax2.set_xlabel("training time (s)")
            ax2.set_ylabel("(P - P*) / |P*|")
            ax2.set_title(f"{g}: primal suboptimality vs time (dotted: callback)", fontsize=10)
            for ax in (ax1, ax2):
                ax.grid(True, which="both", alpha=0.3)
            ax2.legend(fontsize=7, loc="upper right")
            _no_minor_labels(ax1, ax2)
        fig.tight_layout()
        stem = tag if len({t["data"] for t in traces}) == 1 else f"{tag}_{data}"
        path = os.path.join(out_dir, f"{_safe(stem)}_C{C:g}_traces.png")
        with open_output(path, "wb") as fh:
            fig.savefig(fh, format="png", dpi=100)
        plt.close(fig)
        files.append(path)
    return files


def scaling(scaling, out_dir, tag):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 5))
    names = list(dict.fromkeys(p["runner"] for p in scaling["points"]))
    colors = _colors(names)
    for name in names:
        pts = sorted((p["n"], p["time"]) for p in scaling["points"] if p["runner"] == name)
        s = scaling["slopes"].get(name)
        ax.plot(*zip(*pts), "--s" if _is_anchor(name) else "-o", ms=3, color=colors[name],
                label=f"{name} (slope {s:.2f})" if s is not None else name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training rows n")
    ax.set_ylabel("training time (s)")
    ax.set_title(f"{tag}: time vs n (nested subsamples), C={scaling['C']:g}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _no_minor_labels(ax)
    fig.tight_layout()
    path = os.path.join(out_dir, f"{_safe(tag)}_scaling.png")
    with open_output(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
    plt.close(fig)
    return [path]


def sweep(rows, what, out_dir, tag):
    plt = _plt()
    key = "C" if what == "C" else "eps"
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    names = list(dict.fromkeys(r["runner"] for r in rows))
    colors = _colors(names)
    for name in names:
        style = "--s" if _is_anchor(name) else "-o"
        pts = sorted((r[key], r["iterations"], r["time"]) for r in rows
                     if r["runner"] == name and r["iterations"] is not None)
        if pts:
            ax1.plot([p[0] for p in pts], [p[1] for p in pts], style, ms=3,
                     color=colors[name], label=name)
        pts = sorted((r[key], r["time"]) for r in rows if r["runner"] == name)
        ax2.plot(*zip(*pts), style, ms=3, color=colors[name], label=name)
    for ax, yl in ((ax1, "outer iterations"), (ax2, "training time (s)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(key)
        ax.set_ylabel(yl)
        ax.grid(True, which="both", alpha=0.3)
    ax1.set_title(f"{tag}: iterations vs {key}")
    ax2.set_title(f"time vs {key}")
    ax2.legend(fontsize=7)
    _no_minor_labels(ax1, ax2)
    fig.tight_layout()
    path = os.path.join(out_dir, f"{_safe(tag)}_sweep_{key}.png")
    with open_output(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
    plt.close(fig)
    return [path]

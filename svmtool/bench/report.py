"""Markdown tables and JSON out of the harness's rows; the reader of those tables (for tests)."""

import json
import math
import os

from svmtool._startup import FIXED
from svmtool.bench.anchors.base import GROUP_TITLES

COLUMNS = ["data", "n", "C", "eps", "problem", "runner", "time ms", "min ms", "CPU ms",
           "jit/warm-up s", "mem MiB", "iters", "primal objective", "rel. gap", "test acc"]


def _f(x, fmt):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return format(x, fmt)


def _row_key(r):
    return (r["data"], r["n"], r["C"], r["group"], r["eps"] if r["eps"] is not None else 0,
            0 if r["source"] == "svmtool" else 1, r["time"])


def results_table(rows):
    """One markdown table, rows grouped by (data, n, C, problem)."""
    out = ["| " + " | ".join(COLUMNS) + " |",
           "|" + "|".join(["---"] * 6 + ["---:"] * (len(COLUMNS) - 6)) + "|"]
    for r in sorted(rows, key=_row_key):
        name = r["runner"] if r["source"] == "svmtool" else f"*{r['runner']}*"
        t = r["time"] * 1e3
        out.append("| " + " | ".join([
            str(r["data"]), str(r["n"]), f"{r['C']:g}",
            f"{r['eps']:g}" + ("" if not r.get("eps_default") else " (default)"),
            r["group"], name, _f(t, ".1f") + (" (outside)" if r.get("timed_from_outside") else ""),
            _f(r["time_min"] * 1e3, ".1f"),
            _f(r["cpu"] * 1e3 if r.get("cpu") is not None else None, ".1f"),
            _f(r["jit"], ".2f"), _f(r["mem_mib"], ".1f"),
            "n/a" if r["iterations"] is None else str(r["iterations"]),
            _f(r["objective"], ".10g"), _f(r["rel_gap"], ".2e"), _f(r["accuracy"], ".4f"),
        ]) + " |")
    return "\n".join(out)


def parse_markdown_table(text):
    """Rows of the first markdown table in ``text`` as dicts (header -> cell)."""
    lines = []
    for ln in text.splitlines():
        if ln.strip().startswith("|"):
            lines.append(ln.strip())
        elif lines:
            break
    if len(lines) < 2:
        return []
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    header = cells[0]
    if not all(set(c) <= set("-: ") and "-" in c for c in cells[1]):
        raise ValueError("second line of the table is not a separator")
    rows = []
    for c in cells[2:]:
        if len(c) != len(header):
            raise ValueError(f"row with {len(c)} cells, header has {len(header)}")
        rows.append(dict(zip(header, c)))
    return rows


def headline_ratios(rows):
    """svmtool's time against every anchor solving the same problem on the same data and C
    (default eps only): list of dicts, ratio = ours / anchor (< 1: svmtool faster)."""
    out = []
    key = lambda r: (r["data"], r["n"], r["C"], r["group"], r["eps_default"])
    ours = [r for r in rows if r["source"] == "svmtool"]
    anchors = [r for r in rows if r["source"] != "svmtool"]
    for a in anchors:
        same = [o for o in ours if key(o) == key(a)]
        if not same:
            continue
        # the anchor's counterpart: the svmtool run of the same solver, its plain run (no
        # variant) first; else the fastest svmtool run of the problem
        paired = [o for o in same if (o.get("solver") or o["runner"]) == a.get("counterpart")]
        plain = [o for o in paired if o["runner"] == a.get("counterpart")]
        best = (plain or paired or [min(same, key=lambda o: o["time"])])[0]
        out.append({"data": a["data"], "n": a["n"], "C": a["C"], "group": a["group"],
                    "anchor": a["runner"], "anchor_time": a["time"], "ours": best["runner"],
                    "ours_time": best["time"], "ratio": best["time"] / max(a["time"], 1e-12),
                    "cpu_ratio": (best["cpu"] / max(a["cpu"], 1e-12)
                                  if best.get("cpu") is not None and a.get("cpu") is not None
                                  else None),
                    "anchor_gap": a["rel_gap"], "ours_gap": best["rel_gap"],
                    "eps_default": a["eps_default"]})
    return out


def ratios_table(ratios):
    if not ratios:
        return ""
    out = ["| data | n | C | problem | fastest svmtool | time ms | anchor | time ms | "
           "svmtool / anchor | CPU ratio | gap svmtool | gap anchor |",
           "|---|---:|---:|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in ratios:
        out.append(f"| {r['data']} | {r['n']} | {r['C']:g} | {r['group']} | {r['ours']} | "
                   f"{r['ours_time'] * 1e3:.1f} | {r['anchor']} | {r['anchor_time'] * 1e3:.1f} | "
                   f"{r['ratio']:.2f}x | "
                   f"{_f(r.get('cpu_ratio'), '.2f') + ('x' if r.get('cpu_ratio') else '')} | "
                   f"{_f(r['ours_gap'], '.1e')} | "
                   f"{_f(r['anchor_gap'], '.1e')} |")
    return "\n".join(out)


def scaling_table(scaling):
    if not scaling or not scaling.get("points"):
        return ""
    ns = sorted({p["n"] for p in scaling["points"]})
    names = list(dict.fromkeys(p["runner"] for p in scaling["points"]))
    out = ["| runner | " + " | ".join(f"n={n}" for n in ns) + " | slope |",
           "|---|" + "---:|" * (len(ns) + 1)]
    for name in names:
        t = {p["n"]: p["time"] for p in scaling["points"] if p["runner"] == name}
        cells = [_f(t.get(n, float("nan")) * 1e3 if n in t else None, ".1f") for n in ns]
        out.append(f"| {name} | " + " | ".join(cells) +
                   f" | {_f(scaling['slopes'].get(name), '.2f')} |")
    return "\n".join(out)


STARTUP_PARTS = FIXED + ("parse", "fixed")


def startup_table(rows):
    """Wall / CPU seconds of each start-up part of the rows that have one."""
    have = [r for r in rows if r.get("startup")]
    if not have:
        return ""
    out = ["| runner | " + " | ".join(STARTUP_PARTS) + " | kernels: extension / numba |",
           "|---|" + "---:|" * (len(STARTUP_PARTS) + 1)]
    for r in have:
        st = r["startup"]
        cells = [f"{st[p]['wall']:.3f} / {st[p]['cpu']:.3f}" if p in st else "-"
                 for p in STARTUP_PARTS]
        twins = st.get("aot", {}).get("kernels", 0)
        loads = st.get("cache_loads", {}).get("count", 0)
        out.append(f"| {r['runner']} | " + " | ".join(cells) + f" | {twins} / {loads} |")
    return "\n".join(out)


def nsv_line(rows):
    """The support-vector counts of the kernel rows (binary models), one line; "" if none."""
    have = [r for r in sorted(rows, key=_row_key) if r.get("nsv") is not None]
    if not have:
        return ""
    return "Support vectors (nSV): " + "; ".join(
        f"{r['runner']} {r['nsv']}" + (f" (n={r['n']})" if len({h['n'] for h in have}) > 1
                                       else "") for r in have) + "."


def sweep_table(rows, what):
    key = "C" if what == "C" else "eps"
    out = [f"| runner | {key} | iterations | time ms | rel. gap | test acc |",
           "|---|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r["group"], r["runner"], r[key])):
        out.append(f"| {r['runner']} | {r[key]:g} | {r['iterations']} | "
                   f"{r['time'] * 1e3:.1f} | {_f(r['rel_gap'], '.1e')} | "
                   f"{_f(r['accuracy'], '.4f')} |")
    return "\n".join(out)


def load_line(start, end):
    """The machine's load average while a table was measured."""
    def fmt(load):
        return ", ".join(f"{x:.2f}" for x in load) or "n/a"

    return (f"Load average (1, 5, 15 min): {fmt(start)} at the start, {fmt(end)} at the end.  "
            f"`time ms`, `min ms`: wall seconds (median, fastest); `CPU ms`: median CPU seconds "
            f"(user + system, all threads; a command's own, from the kernel's accounting)")


def parse_table(data):
    p = data.parse
    mb = (p["bytes"] or 0) / 1e6
    rate = f", {mb / p['parse']:.0f} MB/s" if p.get("bytes") and p["parse"] > 0 else ""
    test = f"; test file {p['test'] * 1e3:.1f} ms" if p.get("test") is not None else ""
    return (f"parse (svmtool reader): first read {p['first'] * 1e3:.1f} ms (JIT compile or cache "
            f"load included), then {p['parse'] * 1e3:.1f} ms{rate}{test}")


def markdown(result, plots=(), link_prefix=""):
    """The whole report of one `svmtool bench` run."""
    parts = []
    for block in result["blocks"]:
        parts.append(f"### {block['title']}\n")
        parts.append(block["parse"] + "\n")
        if block.get("load"):
            parts.append(load_line(*block["load"]) + "\n")
        groups = sorted({r["group"] for r in block["rows"]})
        parts.append("Problems: " + "; ".join(f"`{g}` = {GROUP_TITLES.get(g, g)}" for g in groups)
                     + ".  Anchors in *italics*.\n")
        parts.append(results_table(block["rows"]) + "\n")
        sv = nsv_line(block["rows"])
        if sv:
            parts.append(sv + "\n")
        st = startup_table(block["rows"])
        if st:
            parts.append("Start-up of the svmtool commands (`--report`'s `startup` block, medians "
                         "of the timed runs; `fixed` sums python to cache_loads):\n\n" + st + "\n")
        rt = ratios_table(block.get("ratios", []))
        if rt:
            parts.append("Time ratios (default eps; < 1: svmtool faster):\n\n" + rt + "\n")
        if block.get("sweep"):
            parts.append(f"Sweep over {block['sweep']}:\n\n"
                         + sweep_table(block["rows"], block["sweep"]) + "\n")
        if block.get("scaling"):
            s = block["scaling"]
            parts.append(f"Scaling (nested subsamples, C={s['C']:g}; time ms; slope of log time "
                         f"against log n):\n\n" + scaling_table(s) + "\n")
        if block.get("errors"):
            parts.append("Failed runs: " + "; ".join(f"{e['runner']}: {e['error']}"
                                                     for e in block["errors"]) + "\n")
    if result.get("io"):
        parts.append(result["io"] + "\n")
    if result.get("notes"):
        parts.append("\n".join(f"- {n}" for n in result["notes"]) + "\n")
    for p in plots:
        name = os.path.basename(p)
        parts.append(f"![{name}]({link_prefix}{name})\n")
    return "\n".join(parts)


def _clean(o):
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if hasattr(o, "item"):
        return _clean(o.item())
    return o


def write_json(result, path):
    from svmtool.io.output import open_output

    with open_output(path, "w", encoding="utf-8") as fh:
        json.dump(_clean(result), fh, indent=1)

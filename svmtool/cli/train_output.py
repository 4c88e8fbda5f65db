"""What ``svmtool train`` shows while and after it trains: the progress bar (stderr, on a terminal,
not with ``-q``), the per-subproblem result lines, the solver's warnings as ``svmtool: warning``
lines, and DC-SVM's per-level table."""

import sys

import click

from svmtool.cli.common import show_progress, timed_note, warn


def progress(ctx, quiet, name):
    """(callback, bar) of a tqdm bar counting iterations, or (None, None) when not shown."""
    if not show_progress(ctx, quiet):
        return None, None
    from tqdm import tqdm

    bar = tqdm(desc=f"training ({name})", unit=" iter", file=sys.stderr, leave=False)
    state = {"cls": None}

    def callback(cls, it, info_):
        if cls != state["cls"]:
            state["cls"] = cls
            bar.set_description(f"training ({name}), class {cls + 1}")
        bar.update(1)
        if isinstance(info_, dict) and "level" in info_:
            bar.set_description(f"training ({name}), class {cls + 1}, level {info_['level']}")
        viol = info_.get("pg_violation") if isinstance(info_, dict) else None
        if viol is not None:
            bar.set_postfix_str(f"violation {viol:.3g}", refresh=False)

    return callback, bar


def print_report(ctx, model, quiet, jit=(0.0, 0.0), seconds=None):
    """The warnings of every subproblem, then (not with -q) one result line per subproblem."""
    rep = model.report
    for r in rep["classes"]:
        if r.get("notice"):
            warn(f"class {r['label']:g}: {r['notice']}")
    for r in rep["classes"]:
        if not r.get("converged", True):
            msg = r.get("warning") or ("reaching the maximal number of iterations "
                                       f"({r['iterations']}) before the stopping rule was met")
            warn(f"class {r['label']:g}: {msg}")
    if quiet:
        return
    for r in rep["classes"]:
        parts = [f"class {r['label']:g}" if len(rep["classes"]) > 1 else "done",
                 f"iterations {r['iterations']}", f"primal {r['primal']:.10g}"]
        if "dual" in r:
            parts.append(f"dual {r['dual']:.10g}")
        parts.append(f"{r['gap_kind']} {r['gap']:.3g}")
        if "n_sv" in r:
            parts.append(f"nSV {r['n_sv']}")
        if "cg_steps" in r:
            parts.append(f"CG steps {r['cg_steps']}")
        click.echo(": ".join(parts[:1]) + ": " + ", ".join(parts[1:]), err=True)
    spent = rep["train_time"] if seconds is None else seconds
    click.echo(f"trained {timed_note(spent, jit, rep['solver'])}", err=True)


def level_report_lines(report):
    """DC-SVM's per-level table (empty for other solvers)."""
    lv = report.get("levels")
    if not lv:
        return []
    lines = ["level  clusters  clustering_s  training_s      #SV       objective  accuracy"]
    for st in lv:
        acc = st.get("accuracy")
        acc_s = f"{acc:8.4f}%" if acc is not None else "       -"
        lines.append(f"{str(st['level']):>6} {st['clusters']:>9} {st['cluster_time']:>13.3f} "
                     f"{st['train_time']:>11.3f} {st['n_sv']:>8} {st['objective']:>15.8g} "
                     f"{acc_s}")
    return lines

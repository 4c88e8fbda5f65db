"""Running suites and writing their markdown: one section per suite, each opening with the exact
command that reproduces it, the data folder, the time it took and the machine's load, between
markers so that a later run of one suite replaces only its own section of BENCHMARKS.md."""

import datetime
import os
import re
import time
from dataclasses import replace

from svmtool.io.output import open_output

DEFAULT_REPEAT = 3


def command_line(suite, where, repeat=None, against=None, threads=None, given_data_dir=None):
    """The `svmtool bench` command that runs ``suite`` with these options."""
    words = ["svmtool", "bench", "--suite", suite.name]
    if where.quick:
        words.append("--quick")
    elif given_data_dir:
        words += ["--data-dir", str(given_data_dir)]
    if where.large:
        words.append("--large")
    if repeat is not None and repeat != DEFAULT_REPEAT:
        words += ["--repeat", str(repeat)]
    if against is not None:
        words += ["--against", ",".join(against) or "none"]
    if threads is not None:
        words += ["--threads", str(threads)]
    return " ".join(words)


def missing_note(suite, where):
    """One line naming the data sets ``suite`` asked for that were not found (None if none)."""
    if where.quick or not where.missing:
        return None
    sets = ", ".join(where.missing)
    if where.shared is not None:
        return f"{suite.name}: not in {where.describe()}: {sets} (left out)"
    return (f"{suite.name}: {sets} not found (no ../shared/data or data/a9a in the current "
            f"folder; --data-dir DIR names a data folder): it runs on the bundled heart_scale")


def _tag(title):
    return "bench_" + "".join(c if c.isalnum() else "_" for c in title)


def run_suite(suite, where, out_dir, repeat=None, against=None, threads=None, log=None,
              link_prefix="", given_data_dir=None):
    """Run every case of ``suite``; returns its markdown section (markers included)."""
    from svmtool.bench import harness
    from svmtool.bench.run import finish, run_one

    t0 = time.time()
    load0 = _load()
    parts = []
    where.missing.clear()
    cases = suite.cases(where)
    note = missing_note(suite, where)
    if note and log:
        log(note)
    for case in cases:
        if log:
            log(f"== {suite.name}: {case.title}")
        if case.config is not None:
            cfg = case.config
            changes = {}
            if repeat is not None:
                changes["repeat"] = repeat
            if against is not None:
                changes["against"] = list(against)
            if threads is not None:
                changes["threads"] = threads
            cfg = replace(cfg, **changes) if changes else cfg
            res = run_one(cfg, log=log)
            md, _ = finish(res, out_dir, _tag(case.title), log=log, link_prefix=link_prefix)
            parts.append(md)
        elif case.io:
            from svmtool.bench import iobench

            opts = dict(case.io_options)
            _, md = iobench.run(case.io, repeats=repeat or DEFAULT_REPEAT, **opts)
            parts.append(re.sub(r"^## Reading and writing", f"### {case.title}", md, count=1))
        elif case.table is not None:
            parts.append(f"### {case.title}\n\n" + case.table(repeat or DEFAULT_REPEAT, log))
    m = harness.machine_info()
    cmd = command_line(suite, where, repeat, against, threads, given_data_dir)
    head = [f"<!-- suite: {suite.name} -->", f"## Suite `{suite.name}`: {suite.summary}", "",
            f"Command: `{cmd}`" + (f" (replaces `{suite.replaces}`)" if suite.replaces else ""),
            "",
            f"Data: {where.describe()}.  Ran {datetime.date.today().isoformat()} in "
            f"{(time.time() - t0) / 60:.1f} minutes on {m['processor']}, {m['cpus']} CPUs; "
            f"load average {_fmt(load0)} at the start, {_fmt(_load())} at the end "
            f"(the machine is shared: times of one section are comparable with each other, "
            f"less so across sections).", "", suite.what, ""]
    if not cases:
        parts.append("No data for this suite here (see --data-dir).\n")
    return ("\n".join(head) + "\n" + "\n".join(parts).rstrip()
            + f"\n\n<!-- /suite: {suite.name} -->\n")


def _load():
    try:
        return os.getloadavg()
    except OSError:
        return ()


def _fmt(load):
    return ", ".join(f"{x:.1f}" for x in load) or "n/a"


HEADER = """# svmtool benchmarks

Every section below is one suite of `svmtool bench` and opens with the exact command that wrote
it; `svmtool bench --list-suites` lists the suites.  `make bench` runs the default set
(`svmtool bench --suite default --markdown BENCHMARKS.md --out bench-out`); running any suite
with `--markdown BENCHMARKS.md` replaces that suite's section and keeps the others.

How it measures (see `svmtool/bench/harness.py`): wall time = median of the repeated runs after
one warm-up run (`jit` = first run - median), data already in memory and converted to each
tool's structures outside the timed region (end-to-end rows: the whole command, timed from
outside); peak memory = the larger of the rise of the peak RSS during the last timed run (reset
through /proc/self/clear_refs) and tracemalloc's peak over one untimed run (end-to-end rows: not
measured, a child's peak RSS counts its Python parent's); the primal objective is computed by
the harness from each run's w (read back from the model file for commands) in LIBLINEAR's
convention 1/2 w'w + C sum loss; rel. gap is to the best objective of any run on the same data,
C and problem.  Anchors in *italics*.  Traces: test error and primal suboptimality against time
from runs capped at 1, 2, 4, ... outer iterations (LIBLINEAR, LIBSVM: an -e ladder).

Versions at the last write: {versions}.
"""


SUMMARY = re.compile(r"<!-- summary -->.*?<!-- /summary -->\n?", re.S)


def merge_markdown(path, sections, order):
    """Write ``path``: the title, the hand-written summary block of the file as it was (between
    ``<!-- summary -->`` and ``<!-- /summary -->``: the table against the C programs), the
    header, then the sections of ``order`` (suite names) -- the new ones from ``sections``
    ({name: text}), the others kept from the file as it was."""
    from svmtool.bench import harness

    old = {}
    summary = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for m in re.finditer(r"<!-- suite: ([\w.-]+) -->.*?<!-- /suite: \1 -->\n?", text, re.S):
            old[m.group(1)] = m.group(0)
        found = SUMMARY.search(text)
        if found:
            summary = found.group(0).rstrip() + "\n\n"
    merged = {**old, **sections}
    v = harness.machine_info()["versions"]
    head = HEADER.format(versions=", ".join(f"{k} {x}" for k, x in v.items() if x))
    title, rest = head.split("\n\n", 1)
    head = title + "\n\n" + summary + rest
    body = [merged[n].rstrip() + "\n" for n in order if n in merged]
    with open_output(path, "w", encoding="utf-8") as fh:
        fh.write(head + "\n" + "\n".join(body))

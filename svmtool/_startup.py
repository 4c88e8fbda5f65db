"""A command's fixed cost, named: the clocks behind ``--report``'s ``startup`` block.

This is the one place that says how a command starts.  Before its first row a command pays the
interpreter's start with svmtool's CLI and click (``python``) and numpy's import.  Its kernels
then come from one of two places, chosen per call by :mod:`svmtool._jit`:

* svmtool's kernel extension (:mod:`svmtool._aot`), compiled ahead of time by numba while the
  wheel is built (``setup.py``, through :mod:`svmtool._aot_build`), or by ``make aot`` in a
  checkout: opening it is the ``aot`` part (the manifest read, the sources' digests checked,
  the extension imported), with the state, the kernels called that had twins, and the calls
  that went to numba;
* numba's JIT, for a kernel or argument types the extension lacks, or when there is no
  extension (no compiler at build time, ``SVMTOOL_AOT=0``): scipy's top level (numba imports it
  to check its version), numba's import (``numba``), and numba's loads of cached kernels
  (``cache_loads``, counted: numba's compiler-lock time less its compile time, the first
  including the CPU target's one-time set-up); after an install, compiling what the cache lacks
  (``compile``, counted, once).

A small input (a few hundred rows) runs the pure-Python twins of the reader and of dual CD and
calls no kernel at all: it pays only the first two parts.

Every part is kept as wall and CPU seconds (the CPU seconds are steadier on a busy machine).
This module imports only the standard library, so the CLI reads it in any process;
:mod:`svmtool._aot` and :mod:`svmtool._jit` fill their parts, the commands the rest."""

import importlib
import os
import sys
import time

# part -> [wall seconds, CPU seconds, count]
_PARTS = {}
# the order of the block, and which parts make the fixed cost (the sum)
FIXED = ("python", "numpy", "aot", "scipy", "numba", "cache_loads")


def clocks():
    """(wall, CPU) seconds now: perf_counter and this process's CPU time."""
    return time.perf_counter(), time.process_time()


def add(part, wall, cpu, count=1):
    """Count ``count`` events of ``part`` that took ``wall`` and ``cpu`` seconds."""
    slot = _PARTS.setdefault(part, [0.0, 0.0, 0])
    slot[0] += wall
    slot[1] += cpu
    slot[2] += count


def add_since(part, start, count=1):
    """Count one event of ``part`` from ``start`` (a :func:`clocks` reading) to now."""
    wall, cpu = clocks()
    add(part, wall - start[0], cpu - start[1], count)


def timed_import(name, part=None):
    """Import module ``name``, timed as ``part`` (default: its name) if this is its first import;
    None if it is not installed."""
    if name in sys.modules:
        return sys.modules[name]
    t = clocks()
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    add_since(part or name, t)
    return module


def _process_age():
    """Wall seconds since this process started (10 ms resolution: the kernel's clock ticks),
    or None where /proc is not there."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return max(time.clock_gettime(time.CLOCK_BOOTTIME) - started, 0.0)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def mark_entry():
    """Note the ``python`` part once: the process's age and CPU time when svmtool's CLI starts
    running a command (the interpreter, site, click and svmtool.cli imported)."""
    if "python" in _PARTS:
        return
    age = _process_age()
    add("python", age if age is not None else float("nan"), time.process_time())


def span_start():
    """A reading for :func:`own_since`: the clocks and numba's parts so far."""
    return clocks(), _numba_total()


def own_since(start):
    """(wall, CPU) seconds since ``start`` (a :func:`span_start` reading) that were not numba's
    (its import, set-up, cache loads, compiling): the span's own work."""
    (w0, c0), (nw0, nc0) = start
    (w1, c1), (nw1, nc1) = clocks(), _numba_total()
    return max(w1 - w0 - (nw1 - nw0), 0.0), max(c1 - c0 - (nc1 - nc0), 0.0)


def _numba_total():
    wall = cpu = 0.0
    for part in ("scipy", "numba", "cache_loads", "compile"):
        w, c, _ = seconds(part)
        wall += w
        cpu += c
    return wall, cpu


def seconds(part):
    """(wall, CPU, count) of ``part`` so far; zeros if it never happened."""
    if part == "cache_loads":
        return _cache_loads()
    wall, cpu, count = _PARTS.get(part, (0.0, 0.0, 0))
    return wall, cpu, count


def _cache_loads():
    jit = sys.modules.get("svmtool._jit")
    return jit.cache_loads() if jit is not None and "numba" in _PARTS else (0.0, 0.0, 0)


def block(parse=None):
    """The ``startup`` block of a run record: each part's wall and CPU seconds (and count for
    the counted ones), ``parse`` (wall, CPU; default: the ``parse`` part the command noted,
    reading the data with numba's parts taken out), and ``fixed``: the sum of the fixed
    parts."""
    if parse is None and "parse" in _PARTS:
        parse = _PARTS["parse"][:2]
    out = {}
    total = [0.0, 0.0]
    for part in FIXED + ("compile",):
        wall, cpu, count = seconds(part)
        if part not in _PARTS and not (part == "cache_loads" and count):
            continue
        entry = {"wall": round(wall, 6), "cpu": round(cpu, 6)}
        if part in ("cache_loads", "compile"):
            entry["count"] = count
            names = _NAMES.get(part)
            if names:
                entry["kernels"] = sorted(names)
        if part == "aot":
            entry.update(_aot_report())
        out[part] = entry
        if part in FIXED and wall == wall:
            total[0] += wall
            total[1] += cpu
    if parse is not None:
        out["parse"] = {"wall": round(parse[0], 6), "cpu": round(parse[1], 6)}
    out["fixed"] = {"wall": round(total[0], 6), "cpu": round(total[1], 6)}
    return out


def _aot_report():
    aot = sys.modules.get("svmtool._aot")
    return (aot.report() or {}) if aot is not None else {}


# part -> names of the kernels loaded or compiled (counted in _PARTS)
_NAMES = {}


def add_kernel(part, name, wall, cpu):
    """One kernel compiled (``part``: compile), with its name."""
    add(part, wall, cpu)
    _NAMES.setdefault(part, []).append(name)

"""Time and memory of the harness's runs (:mod:`svmtool.bench.harness`): a timed call, the rise
of the peak RSS and tracemalloc's peak during a call, and interleaved timing -- one warm-up run of
every runner, then rounds in which each runner runs once (A B C A B C ...), so that a change of a
shared machine's load reaches every runner alike (the end-to-end comparisons with the C
programs, whose runs take seconds while the load of the machine moves)."""

import os
import statistics
import time
import tracemalloc


class Seconds(float):
    """Wall seconds of a timed call, with ``cpu``: the CPU seconds it cost -- this process's
    (every thread) plus those of the child processes it waited for (a command timed from
    outside: its own CPU, and the few milliseconds of starting it)."""

    cpu = None


def cpu_now():
    """CPU seconds so far of this process and of its children that were waited for."""
    return time.process_time() + children_cpu_now()


def children_cpu_now():
    """CPU seconds so far of the child processes this process waited for."""
    try:
        import resource

        ch = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ch.ru_utime + ch.ru_stime
    except (ImportError, OSError):
        return 0.0


def with_cpu(wall, cpu):
    """``wall`` as :class:`Seconds` carrying ``cpu``."""
    s = Seconds(wall)
    s.cpu = cpu
    return s


def cpu_of(times):
    """(median, min) CPU seconds of timed runs (:class:`Seconds`), or (None, None)."""
    cpus = [t.cpu for t in times if getattr(t, "cpu", None) is not None]
    if not cpus:
        return None, None
    return statistics.median(cpus), min(cpus)


def load_average():
    """The machine's load average (1, 5, 15 minutes) from /proc/loadavg, or () elsewhere."""
    try:
        return tuple(os.getloadavg())
    except OSError:
        return ()


def load_text():
    """The load average as the tables print it: ``1.23 0.98 0.75``, or ``?`` where unknown."""
    return " ".join(f"{v:.2f}" for v in load_average()) or "?"

def _status(key):
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def rss_peak(fn):
    """(result, MiB or None): the rise of the peak RSS during fn() over the RSS before it."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return fn(), None
    before = _status("VmRSS")
    res = fn()
    peak = _status("VmHWM")
    if before is None or peak is None:
        return res, None
    return res, max(0, peak - before) / 1024.0


def traced_peak(fn):
    """(result, MiB): tracemalloc's peak during fn() (Python and numpy allocations only)."""
    tracemalloc.start()
    try:
        res = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return res, peak / 2**20


def timed_call(fn):
    """(fn(), seconds): wall seconds as :class:`Seconds`, its ``cpu`` the CPU seconds spent."""
    c = cpu_now()
    t = time.perf_counter()
    r = fn()
    wall = time.perf_counter() - t
    return r, with_cpu(wall, cpu_now() - c)


def interleave(names, call, repeat, on_warmup_error=None, log=None):
    """Interleaved timing: ``call(name)`` returns ``(result, seconds)``; one warm-up call of every
    name, then ``repeat`` (at least 1) rounds of one call of each in turn.  Returns {name: (last
    result, warm-up seconds, [round seconds])}.  With ``on_warmup_error(name, exc)``, a name whose
    warm-up raises is reported there and left out; without it the error propagates."""
    out, live = {}, []
    for name in names:
        try:
            res, dt = call(name)
        except Exception as e:      # one failing runner must not sink the benchmark
            if on_warmup_error is None:
                raise
            on_warmup_error(name, e)
            continue
        out[name] = [res, dt, []]
        live.append(name)
    rounds = max(1, repeat)
    for i in range(rounds):
        for name in live:
            out[name][0], dt = call(name)
            out[name][2].append(dt)
        if log:
            log(f"  round {i + 1}/{rounds}: " + ", ".join(
                f"{n} {out[n][2][-1]:.2f} s" + _cpu_note(out[n][2][-1]) for n in live)
                + f" (load {', '.join(f'{x:.1f}' for x in load_average())})")
    return {k: tuple(v) for k, v in out.items()}


def _cpu_note(t):
    cpu = getattr(t, "cpu", None)
    return "" if cpu is None else f" ({cpu:.2f} CPU)"


def interleaved_runs(runners, states, C, eps, repeat, errors, log=None):
    """{runner name: (raw, first, times)} for the runners with a state; a runner whose warm-up
    fails is left out, with its error appended to ``errors``."""
    byname = {r.name: r for r in runners if r.name in states}

    def fit(name):
        return timed_call(lambda: byname[name].fit(states[name], C, eps))

    def failed(name, e):
        errors.append({"runner": name, "C": C, "eps": eps, "error": repr(e)})

    return interleave(list(byname), fit, repeat, on_warmup_error=failed, log=log)

"""Time and memory of the harness's runs (:mod:`svmtool.bench.harness`): a timed call, the rise
of the peak RSS and tracemalloc's peak during a call, and interleaved timing -- one warm-up run of
every runner, then rounds in which each runner runs once (A B C A B C ...), so that a change of a
shared machine's load reaches every runner alike (the end-to-end comparisons with the C
programs, whose runs take seconds while the load of the machine moves)."""

import time
import tracemalloc

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
    """(fn(), seconds)."""
    t = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t




def interleaved_runs(runners, states, C, eps, repeat, errors, log=None):
    """{runner name: (raw, first, times)} for the runners with a state; a runner whose warm-up
    fails is left out, with its error appended to ``errors``."""
    out = {}
    live = [r for r in runners if r.name in states]
    for r in list(live):
        t0 = time.perf_counter()
        try:
            raw = r.fit(states[r.name], C, eps)
        except Exception as e:      # one failing runner must not sink the benchmark
            errors.append({"runner": r.name, "C": C, "eps": eps, "error": repr(e)})
            live.remove(r)
            continue
        out[r.name] = [raw, time.perf_counter() - t0, []]
    for i in range(max(1, repeat)):
        for r in live:
            t0 = time.perf_counter()
            out[r.name][0] = r.fit(states[r.name], C, eps)
            out[r.name][2].append(time.perf_counter() - t0)
        if log:
            log(f"  round {i + 1}: " + ", ".join(f"{r.name} {out[r.name][2][-1]:.2f} s"
                                                 for r in live))
    return {k: tuple(v) for k, v in out.items()}

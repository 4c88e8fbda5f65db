"""What a step costs in memory and in work, read from the kernel: the peak resident set size
(``VmHWM`` of /proc/self/status, reset to the current size first through /proc/self/clear_refs)
and the page faults (``getrusage``).  No sampling thread, no clock: a peak between two samples
is not missed, and a busy machine does not change the numbers.  Linux only; elsewhere, or where
clear_refs may not be written, :func:`measurable` says why and the tests skip."""

import contextlib
import resource


def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def _reset_peak():
    """Set this process's peak resident size (VmHWM) to its current size (Linux 4.0+)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def measurable():
    """None when the peak can be measured here, else the reason it cannot."""
    try:
        _reset_peak()
        _status("VmHWM")
    except (OSError, KeyError) as e:
        return f"needs /proc/self/status and a writable /proc/self/clear_refs (Linux): {e}"
    return None


@contextlib.contextmanager
def growth():
    """Measure the ``with`` block: yields a dict that holds, once the block has ended,
    ``peak``: the largest resident size during the block less the size on entry (bytes), and
    ``faults``: the page faults the process took meanwhile (minor and major)."""
    out = {}
    _reset_peak()
    base = _status("VmRSS")
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    yield out
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    out["peak"] = _status("VmHWM") - base
    out["faults"] = (r1.ru_minflt - r0.ru_minflt) + (r1.ru_majflt - r0.ru_majflt)

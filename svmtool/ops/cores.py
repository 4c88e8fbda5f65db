"""The cores this process may run on (its CPU affinity, which a container, ``taskset`` or a
batch scheduler may narrow below the machine's count): every default thread count starts
here, and :func:`core_free` (the one-minute-load rule) says whether a second thread would get
a core of its own."""

import contextlib
import os
import threading


def available_cores():
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_threads():
    """The thread count of a run that names none (``--threads`` unset): the cores this process
    may use, or one while :func:`core_free` says the machine has no core to spare (threads that
    wait for a busy core make a split pass slower than one thread)."""
    return available_cores() if core_free() else 1


_IDLE = threading.Event()       # set while assume_idle() is in force


@contextlib.contextmanager
def assume_idle():
    """Within this block :func:`core_free` answers yes whatever the load: the kernel
    extension's build runs the commands this way, so that the paths which split work over two
    threads when a core is free are taken, and their kernels compiled, on a busy builder too."""
    _IDLE.set()
    try:
        yield
    finally:
        _IDLE.clear()


def core_free():
    """Whether another core is idle now: the load average of the last minute (which counts
    this process's running thread) at most the cores less one half.  For work that pays for
    a second thread only when it gets a core of its own (a thread waiting for a busy core
    turns the split into a loss: OCAS on news20 on two busy cores spent more CPU and more wall
    time with the working set's passes split than without)."""
    if _IDLE.is_set():
        return True
    try:
        return os.getloadavg()[0] <= available_cores() - 0.5
    except (AttributeError, OSError):
        return True


def run_parts(pool, part, n):
    """``[part(k) for k in range(n)]`` with part 0 in the calling thread and the others on
    ``pool`` (a concurrent.futures executor; None: all here): the caller works rather than
    waits, one thread fewer to wake.  Returns once every part ran; an error of part 0 comes out
    only then (no worker still writes into shared buffers), and before any worker's."""
    if pool is None or n <= 1:
        return [part(k) for k in range(n)]
    from concurrent.futures import wait

    others = [pool.submit(part, k) for k in range(1, n)]
    try:
        first = part(0)
    finally:
        wait(others)
    return [first] + [f.result() for f in others]

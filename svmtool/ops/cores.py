"""The cores this process may run on (its CPU affinity, which a container, ``taskset`` or a
batch scheduler may narrow below the machine's count): every default thread count starts
here."""

import os


def available_cores():
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)

"""Memory facts without numba: the memory available to new work, and whether an array lies in a
memory map (a cache loaded with ``mmap``).  The API asks both for every training run, so they
must not import the jitted engine (a small ``train`` never imports numba)."""

import mmap as _mmap
import os


def available_memory():
    """Bytes of memory available to new work (MemAvailable of /proc/meminfo; else the
    physical memory), or None when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _mmap_of(a):
    """The mmap object under a numpy array (through its bases and memoryviews), or None."""
    seen = 0
    while a is not None and seen < 8:
        if isinstance(a, _mmap.mmap):
            return a
        a = a.obj if isinstance(a, memoryview) else getattr(a, "base", None)
        seen += 1
    return None


def mapped_file(a):
    """True when the numpy array ``a`` lies in a memory map (a cache loaded with mmap)."""
    return _mmap_of(a) is not None

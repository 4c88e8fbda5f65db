"""A lock on an output path, so that two runs writing the same model never interleave.

The lock is an ``flock`` on a small file beside the target, ``.NAME.lock``, holding the pid of
the run that has it.  The kernel releases an ``flock`` when its process dies, whatever the way
(``kill -9`` included), so a lock is never stale: the file may stay behind, but nobody holds it.
The lock file is never removed (removing it would let a third run lock a new file while a second
still waits on the old one).

Targets that are not regular files -- ``-`` (stdout), devices such as ``/dev/null``, pipes -- are
not locked: nothing there can be interleaved by a rename.
"""

import contextlib
import os
import stat
import time

from svmtool.errors import SvmtoolError

EX_TEMPFAIL = 75       # sysexits.h: try again later
POLL_SECONDS = 0.05


class LockBusy(SvmtoolError):
    """Another process holds the lock: exit status 75 (EX_TEMPFAIL)."""

    exit_code = EX_TEMPFAIL


def lock_path(path):
    path = os.fspath(path)
    folder, base = os.path.split(os.path.abspath(path))
    return os.path.join(folder, "." + base + ".lock")


def lockable(path) -> bool:
    """Whether ``path`` is (or will be) a regular file: ``-``, devices and pipes are not."""
    if path is None or os.fspath(path) == "-":
        return False
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return True
    return stat.S_ISREG(mode)


def _holder(fd):
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 64).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None


@contextlib.contextmanager
def locked(path, wait=0.0):
    """Hold the lock on ``path`` for the ``with`` block.

    Another holder: wait up to ``wait`` seconds for it, then raise :class:`LockBusy`
    ("another svmtool (pid N) is writing PATH").  Non-regular targets are not locked.
    """
    if not lockable(path):
        yield None
        return
    import fcntl

    name = lock_path(path)
    fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        give_up = time.monotonic() + max(0.0, float(wait or 0.0))
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= give_up:
                    pid = _holder(fd)
                    who = f"another svmtool (pid {pid})" if pid else "another svmtool"
                    how = f" (waited {wait:g} s)" if wait else ""
                    raise LockBusy(f"{who} is writing {os.fspath(path)}{how}") from None
                time.sleep(POLL_SECONDS)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield name
    finally:
        os.close(fd)          # releases the flock

"""A lock on an output path, so that two runs writing the same model never interleave.

The lock is an ``flock`` on a small file beside the target, ``.NAME.lock``, holding the pid of
the run that has it.  The kernel releases an ``flock`` when its process dies, whatever the way
(``kill -9`` included), so a lock is never stale: after a kill the file stays behind, but nobody
holds it and the next run takes it.  The holder removes the file while it still holds the lock;
a run that locked a file which is no longer the one at that path (removed or replaced meanwhile)
lets it go and tries again, so two runs never hold "the" lock on two different files.

Targets that are not regular files -- ``-`` (stdout), devices such as ``/dev/null``, pipes -- are
not locked: nothing there can be interleaved by a rename.
"""

import contextlib
import os
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


def lock_target(path):
    """The regular file whose writers ``path`` serialises (a symlink's final target), or None
    for outputs that are written in place: ``-``, devices, pipes, ``/dev/fd/N`` (the rule of
    :func:`svmtool.io.output.output_kind`)."""
    if path is None:
        return None
    from svmtool.io.output import output_kind

    kind, where = output_kind(path)
    return where if kind == "atomic" else None


def lockable(path) -> bool:
    """Whether ``path`` is (or will be) a regular file that is replaced atomically."""
    return lock_target(path) is not None


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
    target = lock_target(path)
    if target is None:
        yield None
        return
    import fcntl

    from svmtool.io.output import _error

    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        from svmtool.errors import OutputError

        raise OutputError(f"cannot write {os.fspath(path)}: no such folder {folder}")
    name = lock_path(target)
    give_up = time.monotonic() + max(0.0, float(wait or 0.0))
    while True:
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as e:
            # the folder cannot take the lock file: it cannot take the model either
            raise _error(os.fspath(path), e) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(fd)
            os.close(fd)
            if time.monotonic() >= give_up:
                who = f"another svmtool (pid {pid})" if pid else "another svmtool"
                how = f" (waited {wait:g} s)" if wait else ""
                raise LockBusy(f"{who} is writing {os.fspath(path)}{how}") from None
            time.sleep(POLL_SECONDS)
            continue
        if _same_file(fd, name):
            break
        os.close(fd)          # its holder removed it before we got it: take the new one
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield name
    finally:
        try:
            os.unlink(name)   # still ours: nobody can hold a lock on this file now
        except OSError:
            pass
        os.close(fd)          # releases the flock


def _same_file(fd, name):
    try:
        a, b = os.fstat(fd), os.stat(name)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)

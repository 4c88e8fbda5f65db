"""Write files atomically: to a temporary name in the same folder, then rename into place.

A run killed half-way (a cron job's time limit, Ctrl-C) leaves the previous file intact and at
most a ``.NAME.tmp-*`` file behind, never a truncated model or data file.  ``-`` means stdout.
"""

import contextlib
import os
import sys
import tempfile


@contextlib.contextmanager
def atomic_output(path, mode="w", encoding="ascii", newline="\n"):
    """Context manager yielding a file object; on success the file appears at ``path``.

    ``path == "-"`` yields stdout (text or binary by ``mode``) and writes nothing to disk.
    On any exception the temporary file is removed and the exception propagates.
    """
    binary = "b" in mode
    if path == "-":
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(2, "no such folder", path)
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp-", dir=folder)
    except PermissionError as e:
        raise PermissionError(e.errno, e.strerror, path) from None
    try:
        if binary:
            f = os.fdopen(fd, mode)
        else:
            f = os.fdopen(fd, mode, encoding=encoding, newline=newline)
        with f:
            yield f
            f.flush()
        # keep the permissions a newly created file would get (mkstemp makes it 0600)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

"""Every file svmtool writes goes through :func:`open_output`: the one output rule.

What happens depends on what the path is when the write starts:

* ``-``: standard output, written directly.
* ``/dev/fd/N``, ``/dev/stdout``, ``/proc/self/fd/N`` (and any symlink chain that ends in a
  process's fd folder): the open descriptor N is duplicated and written, so ``>(gzip > m.gz)``,
  ``> file`` and ``>> file`` behave as with any C tool.
* a character or block device, a named pipe, a socket: opened and written directly (no rename
  could work there; renaming over ``/dev/full`` would replace the device node).
* a regular file, or a path that does not exist yet: written to a temporary file beside the
  target (``.NAME.<random>.tmp``, created exclusively, so concurrent runs never share one),
  flushed and fsynced, renamed over the target, then the folder is fsynced.  A reader sees the old
  file or the complete new one, never a mix; of two runs writing one path at once, the last
  rename wins and the file is complete.  A replaced file keeps its permission bits.
* a symlink to a regular file (or a dangling one): the same, at the link's final target; the
  link itself stays.
* a directory: refused (:class:`svmtool.errors.InputError`, misuse: exit status 2).

Every write, flush, fsync and close is checked.  A failure (ENOSPC, EFBIG from ``ulimit -f``,
EIO, EPIPE on a named pipe, a missing or read-only folder, ...) raises
:class:`svmtool.errors.OutputError` (exit status 1) naming the path; the temporary file is
removed first.  It is removed as well on any other exception, including the
:class:`svmtool.errors.Interrupted` the CLI raises for SIGINT/SIGTERM/SIGHUP; those signals are
held off only for the instants where a temporary file is created, renamed or removed, so no
signal can leave one behind.  Standard output is the exception: a ``BrokenPipeError`` on ``-``
(the reader of a pipe went away, e.g. ``| head``) propagates unchanged for the CLI to end quietly.
"""

import contextlib
import errno
import os
import re
import signal
import stat
import sys

from svmtool.errors import InputError, OutputError, StdoutGone

STDOUT_NAME = "standard output"

# signals held off while a temporary file is created, renamed or removed
_HELD = {getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)}

# the fd folder of a process, as a resolved path
_FD_DIR = re.compile(r"/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd")

_REASONS = {
    errno.ENOENT: "no such folder",
    errno.ENOTDIR: "no such folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large (a file size limit, ulimit -f?)",
    errno.EIO: "input/output error",
    errno.EPIPE: "broken pipe (its reader went away)",
    errno.EISDIR: "is a directory",
}


def _reason(e):
    if e.errno in _REASONS:
        return _REASONS[e.errno]
    text = e.strerror or str(e)
    return text[:1].lower() + text[1:]


def _error(display, e):
    err = OutputError(f"cannot write {display}: {_reason(e)}")
    err.errno = getattr(e, "errno", None)
    return err


@contextlib.contextmanager
def _signals_held():
    """Hold off SIGINT/SIGTERM/SIGHUP for a few system calls (delivered right after)."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    except (AttributeError, OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _descriptor_of(path):
    """N when ``path`` names this process's open descriptor N (``/dev/stdout``, ``/dev/fd/N``,
    ``/proc/self/fd/N``, or a symlink leading there); -1 for another process's fd folder;
    None otherwise."""
    p = os.path.abspath(path)
    for _ in range(40):
        folder, name = os.path.split(p)
        real = os.path.realpath(folder)
        if _FD_DIR.fullmatch(real):
            pid = real.split("/")[2]
            own = pid in ("self", "thread-self") or int(pid) == os.getpid()
            return int(name) if own and name.isdigit() else -1
        if not os.path.islink(p):
            return None
        p = os.path.normpath(os.path.join(folder, os.readlink(p)))
    return None


def output_kind(path):
    """``(kind, where)`` for ``path``: ``("stdout", None)``, ``("fd", N)``, ``("direct", path)``
    (devices, pipes, sockets, other processes' fds) or ``("atomic", target)`` with ``target``
    the regular file to replace or create (a symlink's final target)."""
    path = os.fspath(path)
    if path == "-":
        return "stdout", None
    fd = _descriptor_of(path)
    if fd is not None:
        return ("fd", fd) if fd >= 0 else ("direct", path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        # a new file, or a dangling symlink whose target gets created
        return "atomic", os.path.realpath(path) if os.path.islink(path) else path
    except OSError as e:
        raise _error(path, e) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"cannot write {path}: is a directory")
    if stat.S_ISREG(st.st_mode):
        return "atomic", os.path.realpath(path) if os.path.islink(path) else path
    return "direct", path


class _Checked:
    """A file object whose write/flush/close failures become :class:`OutputError`."""

    def __init__(self, f, display, stdout=False):
        self._f = f
        self._display = display
        self._stdout = stdout

    def _fail(self, e):
        if self._stdout and isinstance(e, BrokenPipeError):
            return StdoutGone()
        return _error(self._display, e)

    def write(self, data):
        try:
            return self._f.write(data)
        except OSError as e:
            raise self._fail(e) from None

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        try:
            self._f.flush()
        except OSError as e:
            raise self._fail(e) from None

    def fileno(self):
        return self._f.fileno()

    @property
    def name(self):
        return self._display

    def __getattr__(self, attr):
        return getattr(self._f, attr)


def _open_mode(mode):
    if mode not in ("w", "wb"):
        raise ValueError(f"open_output writes new files: mode 'w' or 'wb', not {mode!r}")
    return mode == "wb"


@contextlib.contextmanager
def open_output(path, mode="w", encoding="ascii", newline="\n"):
    """Context manager yielding a file object for writing ``path`` by the rule above.

    ``mode``: ``"w"`` (text, ``encoding``, ``newline``) or ``"wb"``.  The data is in place once
    the ``with`` block has ended without an exception; on an exception nothing new is left on
    disk (a device or pipe may have received part of it) and the exception propagates, write
    failures as :class:`OutputError`.
    """
    binary = _open_mode(mode)
    kind, where = output_kind(path)
    display = STDOUT_NAME if kind == "stdout" else os.fspath(path)
    if kind == "atomic":
        with _atomic(where, display, binary, encoding, newline) as f:
            yield f
        return
    if kind == "stdout":
        stream = sys.stdout.buffer if binary else sys.stdout
        f = _Checked(stream, display, stdout=True)
        yield f
        f.flush()
        return
    try:
        if kind == "fd":
            raw = open(os.dup(where), "wb")
        else:
            raw = open(where, "wb")
    except OSError as e:
        raise _error(display, e) from None
    stream = raw if binary else _text(raw, encoding, newline)
    f = _Checked(stream, display)
    try:
        yield f
        f.flush()
    except BaseException:
        with contextlib.suppress(OSError):
            stream.close()
        raise
    try:
        stream.close()
    except OSError as e:
        raise _error(display, e) from None


def _text(raw, encoding, newline):
    import io

    return io.TextIOWrapper(raw, encoding=encoding, newline=newline)


def _create_temp(target):
    """A new temporary file beside ``target``: (fd, name)."""
    folder, base = os.path.split(target)
    for _ in range(100):
        tmp = os.path.join(folder, f".{base[:200]}.{os.urandom(6).hex()}.tmp")
        try:
            # mode 0666 less the umask, as a plain new file; O_EXCL: never someone else's file
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                           0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", folder)


def _fsync_folder(folder, display):
    try:
        dfd = os.open(folder or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return                    # a folder we may write but not open: nothing to sync through
    try:
        os.fsync(dfd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF, errno.EROFS):
            raise _error(display, e) from None
    finally:
        os.close(dfd)


@contextlib.contextmanager
def _atomic(target, display, binary, encoding, newline):
    folder = os.path.dirname(target)
    if folder and not os.path.isdir(folder):
        raise OutputError(f"cannot write {display}: no such folder {folder}")
    try:
        old_mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        old_mode = None
    if old_mode is not None and not os.access(target, os.W_OK):
        raise OutputError(f"cannot write {display}: permission denied (the file is read-only)")
    try:
        with _signals_held():
            fd, tmp = _create_temp(target)
    except OSError as e:
        raise _error(display, e) from None
    stream = None
    try:
        # only failures of our own calls become OutputError; the caller's pass through as they are
        try:
            try:
                stream = open(fd, "wb")
            except BaseException:
                os.close(fd)
                raise
            if not binary:
                stream = _text(stream, encoding, newline)
            if old_mode is not None:
                os.fchmod(fd, old_mode)
        except OSError as e:
            raise _error(display, e) from None
        f = _Checked(stream, display)
        yield f
        f.flush()
        try:
            os.fsync(fd)
            with _signals_held():
                stream.close()
                os.replace(tmp, target)
                tmp = None
        except OSError as e:
            raise _error(display, e) from None
    except BaseException:
        with _signals_held():
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        raise
    _fsync_folder(folder, display)

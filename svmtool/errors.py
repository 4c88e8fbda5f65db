"""Errors and the exit-code contract, decided in this one place.

Exit status of every svmtool command:

* 0 -- success;
* 2 -- misuse or bad input: an unknown option, a bad parameter value, a data or model file that
  does not parse (the message names the file, the line and the reason);
* 1 -- any other failure (an output that cannot be written: a missing or read-only folder, a
  full disk, a file size limit, an I/O error; a solver that failed);
* 128 + N -- stopped by signal N: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP (no partial
  output is left behind, see :mod:`svmtool.io.output`); 141 when the reader of standard output
  went away (SIGPIPE's number; nothing is printed, as ``head`` users expect).

Every error the user can cause is a subclass of :class:`SvmtoolError`; the CLI prints
``svmtool: error: <message>`` on one line to stderr and exits with ``exit_code``.
"""

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class SvmtoolError(Exception):
    """Base class of every error svmtool reports to a user."""

    exit_code = EXIT_FAILURE


class InputError(SvmtoolError):
    """Bad input of any kind: exit status 2."""

    exit_code = EXIT_USAGE


class DataFormatError(InputError):
    """A data file that does not parse. ``str()`` gives ``FILE:LINE: reason``."""

    def __init__(self, path, line, reason):
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {reason}")


class ModelFormatError(InputError):
    """A model file that does not parse (corrupt, truncated or of an unknown kind)."""

    def __init__(self, path, line, reason):
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {reason}")


class ParameterError(InputError):
    """A parameter value that makes no sense (C <= 0, an unknown solver, ...)."""


class CacheFormatError(InputError):
    """A binary cache file that is truncated, corrupt or of another version."""

    def __init__(self, path, reason):
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class OutputError(SvmtoolError):
    """An output that cannot be written or completed (exit status 1); the message names it."""


class StdoutGone(SvmtoolError):
    """The reader of standard output went away (``| head``): exit 141, SIGPIPE's status, with no
    message.  Not an OSError, so that nothing on the way out (click included) takes it for a
    failure of its own."""

    exit_code = 141

    def __init__(self):
        super().__init__("standard output closed by its reader")


class Interrupted(BaseException):
    """Raised by the CLI's handler of SIGINT, SIGTERM or SIGHUP, so that every ``with`` block and
    ``finally`` clause on the way out runs (temporary files are removed).  A BaseException, as
    KeyboardInterrupt, so that no ``except Exception`` swallows it."""

    def __init__(self, signum):
        import signal

        self.signum = signum
        try:
            self.signame = signal.Signals(signum).name
        except ValueError:
            self.signame = f"signal {signum}"
        self.exit_code = 128 + signum
        super().__init__(f"interrupted by {self.signame}")

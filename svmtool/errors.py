"""Errors and the exit-code contract, decided in this one place.

Exit status of every svmtool command:

* 0 -- success;
* 2 -- misuse or bad input: an unknown option, a bad parameter value, a data or model file that
  does not parse (the message names the file, the line and the reason);
* 1 -- any other failure (an I/O error while writing, a solver that failed).

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

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


# Optional dependencies: the module svmtool imports -> (the name a user knows it by, the extra of
# pyproject.toml's [project.optional-dependencies] that installs it).
EXTRAS = {"sklearn": ("scikit-learn", "sklearn"), "dask": ("dask", "dask"),
          "distributed": ("dask.distributed", "dask"), "matplotlib": ("matplotlib", "plot")}


class MissingExtra(InputError, ImportError):
    """An optional dependency that is not installed (exit status 2).  The message names the extra
    that installs it; an ImportError too, so that an ``import`` of a module that needs it fails
    as imports do."""

    def __init__(self, module, what="this", alternative=""):
        top = module.partition(".")[0]
        name, extra = EXTRAS.get(top, (top, None))
        how = f"pip install 'svmtool[{extra}]'" if extra else f"pip install {top}"
        super().__init__(f"{what} needs {name}: {how}{alternative}")
        self.name = top
        self.extra = extra


def installed(module):
    """Whether ``module`` (a top-level package) can be imported, without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec(module.partition(".")[0]) is not None
    except (ImportError, ValueError):
        return False


def require(module, what="this"):
    """``module`` imported (dotted names too), or :class:`MissingExtra` when its package is not
    installed; ``what`` names what needs it in the message (an option, a suite, a module).  An
    ImportError from inside an installed package is not turned into this one."""
    import importlib

    top = module.partition(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if e.name is not None and e.name.partition(".")[0] != top:
            raise
        raise MissingExtra(module, what) from None


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

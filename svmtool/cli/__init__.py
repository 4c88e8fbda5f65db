"""The ``svmtool`` command: a click group whose subcommands are imported only when invoked.

Errors are turned into exit codes here and nowhere else (see :mod:`svmtool.errors`): one line
``svmtool: error: ...`` on stderr, no traceback, status 2 for misuse or bad input, 1 otherwise.

Signals: while a command runs, SIGINT, SIGTERM and SIGHUP raise
:class:`svmtool.errors.Interrupted`, so that the output being written is abandoned cleanly (its
temporary file removed, an older file left as it was) before the exit with status 128 + the
signal's number; a signal that was ignored when svmtool started (``nohup``, a background job)
stays ignored.  A reader of standard output that goes away (``| head``) ends the run quietly.
Warnings from anywhere are shown as one ``svmtool: warning:`` line each, none with ``-q``.
"""

import importlib
import os
import signal
import sys
import warnings

import click

from svmtool import __version__
from svmtool.cli.common import note_quiet, reset_quiet, show_warning
from svmtool.errors import EXIT_FAILURE, EXIT_USAGE, Interrupted, StdoutGone, SvmtoolError

# name -> (module, one-line help); "module:attr" when the command is not the module's `command`.
# A command is listed only once it really works.
COMMANDS = {
    "convert": ("svmtool.cli.convert", "Convert data: text <-> binary cache, CSV, scaling."),
    "train": ("svmtool.cli.train", "Train a model (LIBLINEAR-style options)."),
    "predict": ("svmtool.cli.predict", "Predict labels or scores for a data file."),
    "bench": ("svmtool.cli.bench", "Benchmark solvers against LIBLINEAR, LIBSVM, scikit-learn."),
    "grid": ("svmtool.cli.grid", "LIBSVM's grid.py and easy.py (--easy) in one process."),
    "info": ("svmtool.cli.info", "Describe a model file: format, classes, features, kernel."),
    "svm-train": ("svmtool.cli.svm_train", "LIBSVM's svm-train, same options and output."),
    "svm-predict": ("svmtool.cli.svm_predict", "LIBSVM's svm-predict, same options and output."),
    "svm-scale": ("svmtool.cli.svm_scale", "LIBSVM's svm-scale, same options and output."),
    "svm_perf_learn": ("svmtool.cli.svmperf_cli:learn_command",
                       "SVMperf's svm_perf_learn command line (multivariate losses)."),
    "svm_perf_classify": ("svmtool.cli.svmperf_cli:classify_command",
                          "SVMperf's svm_perf_classify command line and evaluation."),
    "svm_learn": ("svmtool.cli.svmlight_cli:learn_command",
                  "SVMlight's svm_learn command line (-z c|r|p, kernels, its output)."),
    "svm_classify": ("svmtool.cli.svmlight_cli:classify_command",
                     "SVMlight's svm_classify command line and evaluation."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        module, _, attr = entry[0].partition(":")
        return getattr(importlib.import_module(module), attr or "command")

    def format_commands(self, ctx, formatter):
        # list the commands from the table, without importing them
        rows = [(name, help_) for name, (_, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


EPILOG = ("Exit status: 0 success, 2 misuse or bad input (the message names file, line and "
          "reason), 1 any other failure.")


@click.group(cls=LazyGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="svmtool")
@click.option("-q", "--quiet", is_flag=True, callback=note_quiet,
              help="No progress bars, reports or warnings on stderr.")
@click.pass_context
def cli(ctx, quiet):
    """Train and use support vector machines on large sparse data.

    Reads svmlight/libsvm text (plain, gzip, bzip2, xz, or - for stdin) and svmtool's binary
    cache; writes models LIBLINEAR and LIBSVM can read.
    """
    ctx.ensure_object(dict)
    ctx.obj["quiet"] = quiet
    # a fresh start for every invocation (the CLI may be called many times in one process):
    # the group's -q, then the command's own -q when click parses it
    reset_quiet()
    note_quiet(ctx, None, quiet)


def _fail(message, code):
    try:
        sys.stdout.flush()
    except Exception:
        pass
    sys.stderr.write(f"svmtool: error: {message}\n")
    sys.stderr.flush()
    return code


def _spelled(error):
    """An error's message; a parameter check's fields spelled as the command line's flags."""
    template = getattr(error, "template", None)
    if template is None:
        return str(error)
    from svmtool.params import flag_name, render

    return render(template, flag_name)


SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


_SIGNAL_STATE = {"raised": None}     # the signal number the handler has raised for, if any


def _install_signal_handlers():
    """Make SIGINT/SIGTERM/SIGHUP raise Interrupted (once); returns what to restore."""
    state = _SIGNAL_STATE
    state["raised"] = None

    def handler(signum, frame):
        if state["raised"] is not None:
            return                   # a second signal must not cut the clean-up short
        state["raised"] = signum
        raise Interrupted(signum)

    previous = {}
    for name in SIGNALS:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            old = signal.getsignal(sig)
            if old == signal.SIG_IGN:
                continue
            signal.signal(sig, handler)
            previous[sig] = old
        except ValueError:           # not the main thread: leave signals alone
            break
    return previous


def _restore_signal_handlers(previous):
    for sig, old in previous.items():
        signal.signal(sig, old if old is not None else signal.SIG_DFL)


def _stdout_gone():
    """Point stdout at /dev/null so that no later flush fails again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except Exception:
        pass


def run(args=None):
    """Run the CLI and return the exit status (never raises for user errors or signals)."""
    from svmtool import _startup

    _startup.mark_entry()
    reset_quiet()
    previous = _install_signal_handlers()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = show_warning
            return _run(args)
    except Interrupted as e:         # a signal that came just before or after the command
        return _fail(str(e), e.exit_code)
    except Exception:
        signum = _SIGNAL_STATE["raised"]
        if signum is None:
            raise
        # the Interrupted of a signal came out as another error (a library that wraps what
        # its callee raised, numba's compiler for one): it is still the signal
        e = Interrupted(signum)
        return _fail(str(e), e.exit_code)
    finally:
        _restore_signal_handlers(previous)


def _run(args):
    try:
        cli.main(args=args, prog_name="svmtool", standalone_mode=False)
        return 0
    except Interrupted as e:
        return _fail(str(e), e.exit_code)
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.exceptions.Abort:
        return _fail("aborted", 130)
    except click.ClickException as e:
        msg = e.format_message()
        ctx = getattr(e, "ctx", None)
        if ctx is not None:
            msg += f" (see '{ctx.command_path} --help')"
        return _fail(msg, EXIT_USAGE if isinstance(e, click.UsageError) else e.exit_code)
    except StdoutGone as e:
        _stdout_gone()
        return e.exit_code
    except SvmtoolError as e:
        return _fail(_spelled(e), e.exit_code)
    except KeyboardInterrupt:
        return _fail("interrupted by SIGINT", 128 + signal.SIGINT)
    except BrokenPipeError:
        # the reader of our stdout went away (e.g. `| head`): not an error of ours, no message;
        # the status a C tool killed by SIGPIPE would give (write errors on named outputs are
        # OutputError, reported above)
        _stdout_gone()
        return 128 + getattr(signal, "SIGPIPE", 13)
    except FileNotFoundError as e:
        return _fail(f"{e.filename}: no such file", EXIT_USAGE)
    except IsADirectoryError as e:
        return _fail(f"{e.filename}: is a directory", EXIT_USAGE)
    except PermissionError as e:
        return _fail(f"{e.filename}: permission denied", EXIT_USAGE)
    except MemoryError:
        return _fail("out of memory", EXIT_FAILURE)
    except OSError as e:
        name = f"{e.filename}: " if getattr(e, "filename", None) else ""
        return _fail(f"{name}{e.strerror or e}", EXIT_FAILURE)


def main(args=None):
    # svmtool's kernels are its own loops; numpy's BLAS threads only get in the way (on a busy
    # machine a threaded dot product of one row's length waits for its woken threads and takes
    # many times a plain loop)
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    code = run(args)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    # skip the interpreter's slow teardown (numba, llvm): everything is flushed and closed above
    os._exit(code)

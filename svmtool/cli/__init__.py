"""The ``svmtool`` command: a click group whose subcommands are imported only when invoked.

Errors are turned into exit codes here and nowhere else (see :mod:`svmtool.errors`): one line
``svmtool: error: ...`` on stderr, no traceback, status 2 for misuse or bad input, 1 otherwise.
"""

import importlib
import os
import sys

import click

from svmtool import __version__
from svmtool.errors import EXIT_FAILURE, EXIT_USAGE, SvmtoolError

# name -> (module, one-line help).  A command is listed only once it really works.
COMMANDS = {
    "convert": ("svmtool.cli.convert", "Convert data: text <-> binary cache, CSV, scaling."),
    "train": ("svmtool.cli.train", "Train a model (LIBLINEAR-style options)."),
    "predict": ("svmtool.cli.predict", "Predict labels or scores for a data file."),
    "bench": ("svmtool.cli.bench", "Benchmark solvers against LIBLINEAR, LIBSVM, scikit-learn."),
    "info": ("svmtool.cli.info", "Describe a model file: format, classes, features, kernel."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        return importlib.import_module(entry[0]).command

    def format_commands(self, ctx, formatter):
        # list the commands from the table, without importing them
        rows = [(name, help_) for name, (_, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


EPILOG = ("Exit status: 0 success, 2 misuse or bad input (the message names file, line and "
          "reason), 1 any other failure.")


@click.group(cls=LazyGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="svmtool")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars or reports on stderr.")
@click.pass_context
def cli(ctx, quiet):
    """Train and use support vector machines on large sparse data.

    Reads svmlight/libsvm text (plain, gzip, bzip2, xz, or - for stdin) and svmtool's binary
    cache; writes models LIBLINEAR and LIBSVM can read.
    """
    ctx.ensure_object(dict)
    ctx.obj["quiet"] = quiet


def _fail(message, code):
    try:
        sys.stdout.flush()
    except Exception:
        pass
    sys.stderr.write(f"svmtool: error: {message}\n")
    sys.stderr.flush()
    return code


def run(args=None):
    """Run the CLI and return the exit status (never raises for user errors)."""
    try:
        cli.main(args=args, prog_name="svmtool", standalone_mode=False)
        return 0
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
    except SvmtoolError as e:
        return _fail(str(e), e.exit_code)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        # the reader of our stdout went away (e.g. `| head`): not an error of ours
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except Exception:
            pass
        return EXIT_FAILURE
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
    # 2-core machine a threaded 60k-element dot product took 100x a plain loop)
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

"""Options and helpers shared by the commands.

Warnings: every one is a single line ``svmtool: warning: ...`` on stderr, whether the CLI says it
(:func:`warn`) or the library does (``warnings.warn``, shown through :func:`show_warning`, which
:func:`svmtool.cli.run` installs); ``-q``, before or after the command name, silences them all.
"""

import sys

import click

# set by the -q callbacks as soon as click parses the flag, reset by svmtool.cli.run
_state = {"quiet": False}


def reset_quiet():
    _state["quiet"] = False


def note_quiet(ctx, param, value):
    """Click callback of every -q: remember it for warnings raised anywhere later."""
    if value:
        _state["quiet"] = True
    return value


def is_quiet(ctx, local_quiet=False):
    root = ctx.find_root()
    return bool(local_quiet or _state["quiet"] or (root.obj or {}).get("quiet"))


def warn(message):
    """One warning line on stderr unless -q."""
    if not _state["quiet"]:
        text = " ".join(str(message).split())
        click.echo(f"svmtool: warning: {text}", err=True)


def show_warning(message, category, filename, lineno, file=None, line=None):
    """Replacement of :func:`warnings.showwarning`: the message only, as one warning line."""
    warn(message)


def show_progress(ctx, local_quiet=False):
    """Progress bars only on a terminal, and never with -q (cron has no terminal)."""
    return (not is_quiet(ctx, local_quiet)) and sys.stderr.isatty()


def info(ctx, message, local_quiet=False):
    """A report line on stderr unless -q."""
    if not is_quiet(ctx, local_quiet):
        click.echo(message, err=True)


def jit_clock():
    """(numba start-up, compiling) seconds spent so far in this process -- zeros while numba is
    not loaded (small commands never load it)."""
    jit = sys.modules.get("svmtool._jit")
    if jit is None or not hasattr(jit, "IMPORT_SECONDS"):
        return 0.0, 0.0
    startup, compiling, _ = jit.jit_seconds()
    return startup, compiling


def jit_since(before):
    """The numba start-up and compile seconds since BEFORE (a :func:`jit_clock` reading)."""
    now = jit_clock()
    return max(now[0] - before[0], 0.0), max(now[1] - before[1], 0.0)


def timed_note(seconds, jit, what=None):
    """'in S s (WHAT; +J s numba start-up)' -- a span's own seconds, numba's set-up and
    compilation (``jit``: a :func:`jit_since` result) said apart, the way `read` and `trained`
    lines print them.  Compilation happens once after an install; the start-up on every run
    that loads numba."""
    startup, compiling = jit
    own = max(seconds - startup - compiling, 0.0)
    notes = [what] if what else []
    if compiling >= 0.0005:
        notes.append(f"+{compiling:.3f} s compiling numba's kernels, once")
    if startup >= 0.0005:
        notes.append(f"+{startup:.3f} s numba start-up")
    return f"in {own:.3f} s" + (f" ({'; '.join(notes)})" if notes else "")


quiet_option = click.option("-q", "--quiet", "quiet", is_flag=True, callback=note_quiet,
                            help="Quiet mode: no progress, no report and no warnings on stderr.")
zero_based_option = click.option("--zero-based", is_flag=True,
                                  help="Feature indices in text input start at 0, not 1.")


class ChunkScores:
    """A two-class model's decision values (times ``sign``) over a test file, chunk by chunk in
    bounded memory, as svm_classify and svm_perf_classify score: iterate for each chunk's
    values; then ``runtime`` (CPU seconds of the scoring alone, SVMlight's "without IO") and
    ``y``, ``values`` of all rows."""

    def __init__(self, model, test, sign):
        self.model, self.test, self.sign = model, test, sign
        self.runtime = 0.0
        self._ys, self._vs = [], []

    def __iter__(self):
        import time

        import numpy as np

        from svmtool.io.svmlight import iter_data_chunks

        for chunk in iter_data_chunks(self.test):
            t = time.process_time()
            v = self.sign * self.model.decision_function(chunk)[:, 0]
            self.runtime += time.process_time() - t
            self._ys.append(np.array(chunk.y, dtype=np.float64))
            self._vs.append(v)
            yield v

    @property
    def y(self):
        import numpy as np

        return np.concatenate(self._ys) if self._ys else np.zeros(0)

    @property
    def values(self):
        import numpy as np

        return np.concatenate(self._vs) if self._vs else np.zeros(0)


def raw_command(name):
    """A click command that takes its arguments raw, for a C program's own scan of them
    (:func:`scan_options`): no click options, no click --help; the function gets (ctx, argv)."""
    def wrap(fn):
        fn = click.argument("argv", nargs=-1, type=click.UNPROCESSED)(click.pass_context(fn))
        return click.command(name, add_help_option=False,
                             context_settings={"ignore_unknown_options": True,
                                               "allow_extra_args": True})(fn)
    return wrap


def classify_files(prog, files):
    """``(example_file, model_file, output_file)`` of SVMlight's and SVMperf's classify programs
    (``PROG example_file model_file [output_file]``, output ``svm_predictions`` by default)."""
    from svmtool.errors import InputError, ParameterError

    if len(files) < 2:
        raise ParameterError(f"{prog}: not enough input parameters: example_file and "
                             f"model_file are needed")
    if len(files) > 3:
        raise ParameterError(f"{prog}: unexpected argument {files[3]!r}")
    test, model_file = files[0], files[1]
    if test == "-" and model_file == "-":
        raise InputError("example_file and model_file cannot both be read from stdin ('-')")
    return test, model_file, files[2] if len(files) > 2 else "svm_predictions"


def scan_options(argv, with_value, no_counterpart, prog, help_flags, long_options=False, *,
                 flags=(), arity=None, prefixed=(), end_marker="--", unknown=None, missing=None):
    """The argument scan of the programs svmtool stands in for (SVMlight, SVMperf, LIBSVM):
    options first, then the file names (an argument not starting with ``-``, or ``-`` itself,
    ends the options; so does ``end_marker``, consumed).  Returns ``(options, files)``, options
    as ``(name, value)`` pairs in order, or ``(None, None)`` when a help flag came first.

    ``with_value``: the options followed by a value (``arity``: {option: k} for those followed
    by k values, given as a tuple); ``no_counterpart``: options recognised but refused later
    (they take a value too); ``flags``: options with no value (value None); ``prefixed``:
    options whose name goes on (LIBSVM's ``-wLABEL weight``: the name is the whole text);
    ``long_options``: also SVMperf's ``--b``-style options (two dashes, one letter).
    ``unknown(option)`` and ``missing(option, k)`` give the messages (default Joachims')."""
    from svmtool.errors import ParameterError

    arity = arity or {}
    unknown = unknown or (lambda a: f"{prog}: unrecognized option {a}")
    missing = missing or (lambda a, k: f"{prog}: option {a} needs a value")
    opts = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in help_flags:
            return None, None
        if not a.startswith("-") or a == "-":
            break
        if end_marker is not None and a == end_marker:
            i += 1
            break
        if a in flags:
            opts.append((a, None))
            i += 1
            continue
        short = len(a) == 2 or (long_options and a.startswith("--") and len(a) == 3)
        known = short and (a in with_value or a in no_counterpart)
        if not known and not any(a.startswith(p) and len(a) > len(p) for p in prefixed):
            raise ParameterError(unknown(a))
        k = arity.get(a, 1)
        if i + k >= len(argv):
            raise ParameterError(missing(a, k))
        opts.append((a, argv[i + 1] if k == 1 else tuple(argv[i + 1:i + 1 + k])))
        i += 1 + k
    return opts, list(argv[i:])


def option_number(opt, text, kind=float):
    """An option's value as ``kind`` (int or a finite float), or a ParameterError naming it."""
    from svmtool.errors import ParameterError

    try:
        v = kind(text)
    except ValueError:
        raise ParameterError(f"option {opt} needs {'an integer' if kind is int else 'a number'},"
                             f" got {text!r}") from None
    if kind is float and not abs(v) < float("inf"):
        raise ParameterError(f"option {opt} needs a finite number, got {text!r}")
    return v


class ReportLines:
    """The printed lines of SVMlight's and SVMperf's programs: on stdout, or on stderr when
    stdout carries an output file (``-``); none below verbosity ``level`` or with ``-q``."""

    def __init__(self, ctx, verbosity, to_stderr=False):
        self.on = verbosity >= 1 and not is_quiet(ctx)
        self.verbosity = verbosity
        self.err = to_stderr

    def __call__(self, text, level=1):
        if self.on and self.verbosity >= level:
            click.echo(text, err=self.err)


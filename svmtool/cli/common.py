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


quiet_option = click.option("-q", "--quiet", "quiet", is_flag=True, callback=note_quiet,
                            help="Quiet mode: no progress, no report and no warnings on stderr.")
zero_based_option = click.option("--zero-based", is_flag=True,
                                  help="Feature indices in text input start at 0, not 1.")

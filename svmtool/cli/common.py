"""Options and helpers shared by the commands."""

import sys

import click


def is_quiet(ctx, local_quiet=False):
    root = ctx.find_root()
    return bool(local_quiet or (root.obj or {}).get("quiet"))


def show_progress(ctx, local_quiet=False):
    """Progress bars only on a terminal, and never with -q (cron has no terminal)."""
    return (not is_quiet(ctx, local_quiet)) and sys.stderr.isatty()


def info(ctx, message, local_quiet=False):
    """A report line on stderr unless -q."""
    if not is_quiet(ctx, local_quiet):
        click.echo(message, err=True)


quiet_option = click.option("-q", "--quiet", "quiet", is_flag=True,
                            help="Quiet mode: no progress and no report on stderr.")
zero_based_option = click.option("--zero-based", is_flag=True,
                                  help="Feature indices in text input start at 0, not 1.")

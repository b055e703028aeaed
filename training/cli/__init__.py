"""The ``rulebreaker`` command line (typer + rich): front-ends only — parse, print, exit codes, progress.

Each command group is one module exposing ``register(app)``; :data:`COMMAND_GROUPS` lists them, in the
order ``--help`` shows them. The jobs they call live beside this package (``training.evaluate``,
``training.train``, ``training.discover``…) and never import it.

Bad input (unknown ruleset/agent, invalid rules file, bad argument) prints one readable line and
exits with code 2; it never shows a stack trace.
"""

from __future__ import annotations

import sys

import typer
from rich.markup import escape
from typer._click import exceptions as click

from envs.core.errors import UserError
from training.cli import (
    bench,
    check,
    demo,
    discover,
    evaluate,
    new_ruleset,
    odds,
    play,
    regress,
    report,
    rulesets,
    solve,
    sweep,
    train,
)
from training.cli.common import err

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Find dominant strategies and broken rules in tabletop RPG rulesets.",
)

COMMAND_GROUPS = (
    rulesets,
    play,
    evaluate,
    demo,
    train,
    odds,
    solve,
    regress,
    discover,
    report,
    sweep,
    bench,
    check,
    new_ruleset,
)
"""Every command group, registered on :data:`app` in this order."""

for _group in COMMAND_GROUPS:
    _group.register(app)


def main() -> None:
    """Entry point: a usage error (click's: bad option value, missing argument) or a :class:`UserError` raised
    by a command becomes one ``error:`` line and exit 2; Ctrl-C exits 130."""
    try:
        code = app(standalone_mode=False)
    except click.NoArgsIsHelpError as e:  # `rulebreaker` alone: typer has printed the help already
        sys.exit(e.exit_code)
    except click.UsageError as e:  # one line, like a UserError, with where to look
        cmd = e.ctx.command_path if e.ctx is not None else "rulebreaker"
        err.print(
            f"[bold red]error:[/bold red] {escape(e.format_message())} (see {escape(cmd)} --help)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(e.exit_code)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except UserError as e:
        err.print(f"[bold red]error:[/bold red] {escape(str(e))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err.print("aborted")
        sys.exit(130)
    if isinstance(code, int) and code != 0:  # a command's ctx.exit(code) or typer.Exit(code)
        sys.exit(code)


if __name__ == "__main__":
    main()

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
    sweep,
    bench,
    check,
    new_ruleset,
)
"""Every command group, registered on :data:`app` in this order."""

for _group in COMMAND_GROUPS:
    _group.register(app)


def main() -> None:
    """Entry point: click/typer report usage errors (exit 2) themselves; a :class:`UserError` raised
    by a command becomes one ``error:`` line and exit 2."""
    try:
        app()
    except UserError as e:
        err.print(f"[bold red]error:[/bold red] {escape(str(e))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err.print("aborted")
        sys.exit(130)


if __name__ == "__main__":
    main()

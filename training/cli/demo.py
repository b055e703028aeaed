"""``rulebreaker demo``: the main job on its default, ``discover blackbird --budget quick``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from training.cli.common import out
from training.cli.discover import discover_cmd


def register(app: typer.Typer) -> None:
    app.command()(demo)


def demo(
    ruleset: Annotated[str, typer.Argument(help="Ruleset to examine.")] = "blackbird",
    budget: Annotated[str, typer.Option("--budget", help="quick | standard | deep")] = "quick",
    out_dir: Annotated[Path | None, typer.Option("--out", help="Output folder.")] = None,
) -> None:
    """The main job on its default: `discover blackbird --budget quick` (findings, report, example games)."""
    out.print(
        f"[bold]rulebreaker demo[/bold]: discovering what breaks in '{ruleset}' (budget {budget}); "
        "this trains RL agents and replays thousands of games, a few minutes per scenario."
    )
    discover_cmd(
        ruleset, None, rules=None, budget=budget, out_dir=out_dir, fail_on=None, seed=0, workers=2, no_rl=False
    )

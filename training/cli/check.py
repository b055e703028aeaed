"""``rulebreaker check RULESET``: the contract kit of :mod:`envs.core.check` on one ruleset.

Prints one line per failed check (``FAIL <scenario> <check>: <why>``) and a summary; exit 0 when every
check passes, 1 otherwise. An unknown ruleset or scenario is a usage error (exit 2).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from envs.core.check import DEFAULT_ALPHA, DEFAULT_STEPS, failures, run_checks
from envs.core.registry import get_ruleset
from training.cli.common import SeedOpt, out

MAX_STEPS = 10_000_000
"""The most random decisions ``check`` plays per scenario (a bound on its work)."""


def register(app: typer.Typer) -> None:
    app.command("check")(check)


def check(
    ruleset: Annotated[str, typer.Argument(help="Ruleset name (shipped or a plugin's).")],
    steps: Annotated[
        int, typer.Option("--steps", min=1, max=MAX_STEPS, help="Random masked decisions per scenario (<= 10,000,000).")
    ] = DEFAULT_STEPS,
    scenario: Annotated[
        list[str] | None, typer.Option("--scenario", help="Check only this scenario (repeatable).")
    ] = None,
    seed: SeedOpt = 0,
    alpha: Annotated[
        float, typer.Option("--alpha", min=1e-12, max=0.5, help="Chi-square significance per scenario.")
    ] = DEFAULT_ALPHA,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Print every check, not only failures.")] = False,
) -> None:
    """Check that RULESET keeps the game protocol: env checkers, determinism, random play, masks, clone, chance, config."""
    rs = get_ruleset(ruleset)
    for name in scenario or []:
        rs.scenario(name)
    results = run_checks(rs, steps=steps, seed=seed, alpha=alpha, scenarios=scenario or None)
    failed = failures(results)
    for r in results if verbose else failed:
        out.print(escape(r.line()), highlight=False, soft_wrap=True)
    if failed:
        out.print(f"{rs.name}: {len(failed)} of {len(results)} checks failed", highlight=False)
        raise typer.Exit(1)
    out.print(f"{rs.name}: all {len(results)} checks passed ({steps} random steps per scenario)", highlight=False)

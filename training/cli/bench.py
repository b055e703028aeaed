"""``rulebreaker bench``: throughput figures as ratios to a reference measured in the same run."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from training.bench import BENCHMARKS, BenchOptions, run_benchmarks
from training.cli.common import err, out


def register(app: typer.Typer) -> None:
    app.command()(bench)


def bench(
    names: Annotated[list[str] | None, typer.Argument(help="Benchmarks to run (default: all registered).")] = None,
    ruleset: Annotated[
        str | None, typer.Option("--ruleset", help="Scenario's ruleset (default: the simplest shipped scenario).")
    ] = None,
    scenario: Annotated[str | None, typer.Option("--scenario", help="Scenario name.")] = None,
    steps: Annotated[int, typer.Option("--steps", min=256, help="Training timesteps per measurement.")] = 16_384,
    decisions: Annotated[int, typer.Option("--decisions", min=10, help="Decisions per inference measurement.")] = 5_000,
    n_envs: Annotated[int, typer.Option("--n-envs", min=1, help="Vectorised envs for the train benchmark.")] = 4,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    list_only: Annotated[bool, typer.Option("--list", help="List the registered benchmarks and exit.")] = False,
) -> None:
    """Throughput: training steps/s vs SB3 PPO on Blackjack-v1, rl: agent decisions/s vs SB3 predict, ..."""
    if list_only:
        for b in BENCHMARKS.values():
            out.print(f"{b.name}: {b.description}")
        return
    opts = BenchOptions(ruleset=ruleset, scenario=scenario, steps=steps, decisions=decisions, n_envs=n_envs)
    err.print("benchmarking (figures depend on the machine and its load; compare the ratios)...")
    results = run_benchmarks(names or None, opts)
    if as_json:
        print(json.dumps(results, indent=2))
        return
    for name, res in results.items():
        out.rule(name)
        for k, v in res.items():
            out.print(f"{k}: {v}", highlight=False)

"""``rulebreaker bench``: throughput figures as ratios to a reference measured in the same run."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Annotated

import typer
from rich.table import Table

from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from training.bench import (
    BENCHMARKS,
    TABLE_BENCHMARKS,
    BenchOptions,
    machine_info,
    markdown_table,
    rows_as_dicts,
    run_benchmarks,
    summary_rows,
)
from training.cli.common import err, out
from training.cli.progress import stage_progress

QUICK_STEPS = 2048
QUICK_DECISIONS = 1000


def register(app: typer.Typer) -> None:
    app.command()(bench)


def bench(
    names: Annotated[
        list[str] | None,
        typer.Argument(help=f"Benchmarks to run (default: the table's, {', '.join(TABLE_BENCHMARKS)})."),
    ] = None,
    ruleset: Annotated[
        str | None,
        typer.Option("--ruleset", help="Only this ruleset (envs/search/games); the train/inference scenario."),
    ] = None,
    scenario: Annotated[str | None, typer.Option("--scenario", help="Scenario name.")] = None,
    steps: Annotated[int, typer.Option("--steps", min=256, help="Training timesteps per measurement.")] = 16_384,
    decisions: Annotated[int, typer.Option("--decisions", min=10, help="Decisions per inference measurement.")] = 5_000,
    n_envs: Annotated[int, typer.Option("--n-envs", min=1, help="Vectorised envs for the train benchmark.")] = 4,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick", help=f"Short blocks and budgets (--steps {QUICK_STEPS}, --decisions {QUICK_DECISIONS})."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (results, table rows, machine).")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the table as Markdown.")] = False,
    list_only: Annotated[bool, typer.Option("--list", help="List the registered benchmarks and exit.")] = False,
) -> None:
    """Throughput figures side by side in one process, as ratios to references measured in the same run.

    A bare ``rulebreaker bench`` prints the summary table: every env's steps/s ÷ Blackjack-v1, clone() cost,
    search decisions/s, persona games/s and the --workers 2 speed-up, MaskablePPO training ÷ SB3 PPO on
    Blackjack-v1, trained-agent decisions/s ÷ SB3 predict, odds table time, each with its goal.
    """
    if list_only:
        for b in BENCHMARKS.values():
            out.print(f"{b.name}: {b.description}")
        return
    unknown = [n for n in names or [] if n not in BENCHMARKS]
    if unknown:  # before the banner: a bad name is one line
        raise UserError(f"unknown benchmark(s): {', '.join(unknown)}; valid: {', '.join(BENCHMARKS)}")
    if ruleset is not None:
        rs = get_ruleset(ruleset)
        if scenario is not None:
            rs.scenario(scenario)
    if quick:
        steps, decisions = min(steps, QUICK_STEPS), min(decisions, QUICK_DECISIONS)
    machine = machine_info()
    err.print(
        f"benchmarking on {machine['nproc']} cores, load {machine['load_average']} "
        "(absolute rates depend on the machine and its load; compare the ratios)..."
    )
    with stage_progress("bench") as update:
        opts = BenchOptions(
            ruleset=ruleset,
            scenario=scenario,
            steps=steps,
            decisions=decisions,
            n_envs=n_envs,
            quick=quick,
            on_progress=lambda stage, done, total: update(stage, done, total),
        )
        results = run_benchmarks(names or None, opts)
    machine["load_average_after"] = machine_info()["load_average"]
    rows = summary_rows(results)
    if as_json:
        print(json.dumps({"machine": machine, "results": results, "table": rows_as_dicts(rows)}, indent=2))
        return
    if markdown:
        command = " ".join(["rulebreaker", *(shlex.quote(a) for a in sys.argv[1:])])
        print(
            f"Measured {machine['date_utc']} on {machine['nproc']} cores ({machine['cpu']}), load average "
            f"{' / '.join(map(str, machine['load_average']))} before and "
            f"{' / '.join(map(str, machine['load_average_after']))} after (1/5/15 min); command: `{command}`\n"
        )
        print(markdown_table(rows))
        return
    if rows:
        table = Table(title=f"rulebreaker bench — {machine['date_utc']}, {machine['nproc']} × {machine['cpu']}")
        for col in ("figure", "value", "goal", "met"):
            table.add_column(col)
        for r in rows:
            met = "" if r.met is None else ("[green]met[/]" if r.met else "[red]missed[/]")
            table.add_row(r.figure, r.value, r.goal, met)
        out.print(table)
    for name, res in results.items():
        if name in TABLE_BENCHMARKS:
            continue
        out.rule(name)
        for k, v in res.items():
            out.print(f"{k}: {v}", highlight=False)
    err.print(f"load average before {machine['load_average']}, after {machine['load_average_after']}")

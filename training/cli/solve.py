"""``rulebreaker solve R S``: exact optimal play where the scenario is small enough (the job: training.solve).

Seats named by ``--opponent`` play that fixed policy (a persona or ``random``); the others play optimally
for their own return. Scenarios are shrunk with a variant file (``--rules``) and/or ``--set key=value``. A
scenario with more than ``--max-states`` positions is refused with a state-count estimate (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from agents.solver import SolveResult
from envs.core.config import config_hash
from envs.core.errors import UserError
from training.cli.common import out
from training.solve import estimate_scenario, solve_scenario

MAX_STATES = 20_000_000
"""The largest ``--max-states``: every position is held in memory."""


def register(app: typer.Typer) -> None:
    app.command("solve")(solve_cmd)


def solve_cmd(
    ruleset: str,
    scenario: str,
    rules: Annotated[Path | None, typer.Option("--rules", help="A variant TOML overriding rules.toml.")] = None,
    sets: Annotated[
        list[str] | None, typer.Option("--set", help="Override one rule key: KEY=VALUE (repeatable).")
    ] = None,
    seat: Annotated[int, typer.Option("--seat", help="The seat whose optimal value is reported.")] = 0,
    opponent: Annotated[
        str | None, typer.Option("--opponent", help="Other seats play this persona (default: they play optimally too).")
    ] = None,
    max_states: Annotated[
        int,
        typer.Option("--max-states", max=MAX_STATES, help=f"Refuse beyond this many positions (<= {MAX_STATES:,})."),
    ] = 1_000_000,
    limit: Annotated[int, typer.Option("--limit", help="Decisions shown in the policy table.")] = 20,
    estimate: Annotated[bool, typer.Option("--estimate", help="Only estimate the size; do not solve.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Exact optimal policy and value of a small scenario (expectimax over chance_outcomes)."""
    if max_states < 1:
        raise UserError(f"--max-states must be at least 1, got {max_states}")
    if limit < 0:
        raise UserError(f"--limit must be at least 0, got {limit}")
    if estimate:
        _estimate(ruleset, scenario, rules, sets or [], seat, opponent, as_json)
        return
    res = solve_scenario(ruleset, scenario, rules, sets or [], seat, opponent, max_states)
    cfg = res.config
    head = {
        "ruleset": ruleset,
        "scenario": scenario,
        "rules_hash": config_hash(cfg),
        "sets": sets or [],
        "rules": str(rules) if rules else None,
    }
    if as_json:
        print(json.dumps({**head, **res.to_dict(limit)}, indent=2))
        return
    _print(res, head, limit)


def _estimate(
    ruleset: str, scenario: str, rules: Path | None, sets: list[str], seat: int, opponent: str | None, as_json: bool
) -> None:
    est = estimate_scenario(ruleset, scenario, rules, sets, seat, opponent)
    if as_json:
        print(
            json.dumps(
                {
                    "ruleset": ruleset,
                    "scenario": scenario,
                    "tree_nodes": est.tree_nodes,
                    "mean_depth": est.mean_depth,
                    "max_depth": est.max_depth,
                    "probes": est.probes,
                }
            )
        )
        return
    out.print(escape(f"{ruleset} {scenario}: {est.describe()}"), highlight=False)


def _print(res: SolveResult, head: dict[str, Any], limit: int) -> None:
    fixed = ", ".join(f"seat {s} plays {n}" for s, n in res.fixed.items())
    optimal = ", ".join(f"seat {s}" for s in res.solved_seats)
    out.rule(
        escape(
            f"{head['ruleset']} {head['scenario']} — exact solve (rules {head['rules_hash']}"
            + (f", {head['rules']}" if head["rules"] else "")
            + (f", {' '.join(head['sets'])}" if head["sets"] else "")
            + ")"
        )
    )
    how = (
        "backward induction (acyclic)"
        if res.acyclic
        else (f"value iteration, {res.iterations} sweeps, residual {res.residual:.1e}")
    )
    out.print(
        f"{res.num_states:,} positions ({res.num_decisions:,} optimal-seat decisions), {how}, "
        f"{res.seconds:.2f} s. Optimal: {optimal}" + (f"; fixed: {fixed}" if fixed else "") + ".",
        highlight=False,
    )
    if res.stochastic_fixed_nodes:
        out.print(
            f"note: the fixed policy was stochastic at {res.stochastic_fixed_nodes:,} positions; its "
            "distribution there is estimated from 16 fixed-seed probes",
            highlight=False,
        )
    values = ", ".join(f"seat {s}: {v:.6f}" for s, v in enumerate(res.value))
    out.print(
        f"[bold]optimal value[/bold] (expected return of seat {res.seat}): [bold]{res.value[res.seat]:.6f}"
        f"[/bold]; P(seat {res.seat} wins) = {res.win_probability:.6f}; returns: {values}",
        highlight=False,
    )
    t = Table(title="what optimal play chooses, per decision (weighted by how often it is reached)")
    for c in ("seat", "decision", "option", "share", "times per game"):
        t.add_column(c, justify="right" if c in ("share", "times per game") else "left")
    for row in res.option_summary():
        t.add_row(
            str(row["seat"]),
            row["context"],
            row["option"],
            f"{100 * row['share']:.1f}%",
            f"{row['expected_times']:.3f}",
        )
    out.print(t)
    if limit:
        multi = len(res.value) > 1
        t2 = Table(title=f"the optimal policy: the {limit} most likely decisions")
        t2.add_column("reach", justify="right", no_wrap=True)
        if multi:
            t2.add_column("seat", justify="right")
        t2.add_column("decision")
        t2.add_column("situation", overflow="fold")
        t2.add_column("optimal (value)")
        t2.add_column("next best (value)")
        for r in res.policy_rows(limit):
            alts = sorted((q for q in r.q if q[0] != r.best_label), key=lambda q: -q[1])
            best_v = next(v for lab, v in r.q if lab == r.best_label)
            after = _short(r.recent[-1]) if r.recent else "(start)"
            state = ", ".join(f"{k} {v:g}" for k, v in list(r.resources.items())[:3])
            cells = [
                f"{100 * r.reach:.1f}%",
                *([str(r.seat)] if multi else []),
                r.context,
                f"{after} [dim]{state}[/dim]",
                f"{r.best_label} ({best_v:.4f})",
                f"{alts[0][0]} ({alts[0][1]:.4f})" if alts else "—",
            ]
            t2.add_row(*cells)
        out.print(t2)


def _short(text: str, n: int = 60) -> str:
    text = escape(text)
    return text if len(text) <= n else text[: n - 1] + "…"

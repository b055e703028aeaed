"""``rulebreaker solve R S``: exact optimal play where the scenario is small enough.

Expectimax / value iteration over ``chance_outcomes()`` (:mod:`agents.solver`). Seats named by
``--opponent`` play that fixed policy (a persona or ``random``); the others play optimally for their
own return. Scenarios are shrunk with a variant file (``--rules``) and/or ``--set key=value``. A
scenario with more than ``--max-states`` positions is refused with a state-count estimate (exit 2).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from envs.core.errors import UserError
from training.cli import app, out


def parse_value(text: str) -> Any:
    """A ``--set`` value as TOML would read it (``3``, ``0.5``, ``true``, ``"x"``, ``[1, 2]``), else a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_sets(config: Any, sets: list[str]) -> Any:
    from envs.core.config import with_override

    for item in sets:
        if "=" not in item:
            raise UserError(f"--set needs KEY=VALUE (e.g. session.sessions=1), got '{item}'")
        k, v = item.split("=", 1)
        config = with_override(config, k.strip(), parse_value(v.strip()))
    return config


def _blackbird_session_key(state: Any) -> Any:
    """blackbird session: ``key()`` keeps the last roll (``own``), the helper's and the opposition's
    successes after the roll is resolved, so positions that differ only in a past roll stay apart (the
    solve grows ~100x). They matter only while a roll is being resolved, so drop them otherwise."""
    from envs.blackbird.session import Phase

    mid = state.phase in (Phase.JOINT, Phase.OPPOSE, Phase.ROLL_OFF)
    return (state.phase, state.session_no, state.obstacle_no, state.obstacle, state.attempt, state.pool,
            state.helper_pool, state.conditions, state.trait, state.help_given, state.spent,
            state.own if mid else None, state.partner if mid else 0, state.opposition if mid else 0,
            state.won, state.at_stake, state.char.key(), state._outcome)


CANONICAL_KEYS: dict[tuple[str, str], tuple[tuple[str, ...], Any]] = {
    ("blackbird", "session"): (("phase", "session_no", "obstacle_no", "obstacle", "attempt", "pool", "helper_pool",
                                "conditions", "trait", "help_given", "spent", "own", "partner", "opposition", "won",
                                "at_stake", "char", "_outcome"), _blackbird_session_key),
}
"""Solver keys that merge positions a scenario's own ``key()`` keeps apart needlessly (used only when
the state still has every attribute they read; otherwise ``State.key()`` is used)."""


def solver_key(ruleset: str, scenario: str, root: Any) -> Any:
    from agents.solver import default_key

    entry = CANONICAL_KEYS.get((ruleset, scenario))
    if entry is None or not all(hasattr(root, a) for a in entry[0]):
        return default_key
    return entry[1]


def solve_scenario(ruleset: str, scenario: str, rules: Path | None = None, sets: list[str] | None = None,
                   seat: int = 0, opponent: str | None = None, max_states: int | None = None) -> Any:
    """Solve ``ruleset``/``scenario`` (with overrides) and return the :class:`~agents.solver.SolveResult`.

    The discover command uses this to measure an RL agent's gap to the optimum.
    """
    from agents.registry import make_agent
    from agents.solver import DEFAULT_MAX_STATES, solve
    from envs import get_ruleset
    from envs.core.config import load_config

    rs = get_ruleset(ruleset)
    sc = rs.scenario(scenario)
    cfg = apply_sets(load_config(rs, rules), sets or [])
    n = sc.players(cfg)
    if not 0 <= seat < n:
        raise UserError(f"--seat must be between 0 and {n - 1} for {ruleset} {scenario}, got {seat}")
    opponents = {}
    if opponent is not None:
        if n == 1:
            raise UserError(f"{ruleset} {scenario} has one seat; --opponent does not apply")
        opponents = {s: make_agent(rs.name, opponent, scenario) for s in range(n) if s != seat}
    root = sc.new_game(cfg)
    result = solve(root, seat, opponents, max_states=max_states or DEFAULT_MAX_STATES, num_actions=sc.num_actions,
                   key=solver_key(rs.name, scenario, root))
    result.config = cfg
    return result


@app.command()
def solve(
    ruleset: str, scenario: str,
    rules: Annotated[Path | None, typer.Option("--rules", help="A variant TOML overriding rules.toml.")] = None,
    sets: Annotated[list[str] | None, typer.Option("--set", help="Override one rule key: KEY=VALUE (repeatable).")]
    = None,
    seat: Annotated[int, typer.Option("--seat", help="The seat whose optimal value is reported.")] = 0,
    opponent: Annotated[str | None, typer.Option("--opponent", help="Other seats play this persona (default: "
                                                 "they play optimally too).")] = None,
    max_states: Annotated[int, typer.Option("--max-states", help="Refuse beyond this many positions.")] = 1_000_000,
    limit: Annotated[int, typer.Option("--limit", help="Decisions shown in the policy table.")] = 20,
    estimate: Annotated[bool, typer.Option("--estimate", help="Only estimate the size; do not solve.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Exact optimal policy and value of a small scenario (expectimax over chance_outcomes)."""
    from envs.core.config import config_hash

    if max_states < 1:
        raise UserError(f"--max-states must be at least 1, got {max_states}")
    if limit < 0:
        raise UserError(f"--limit must be at least 0, got {limit}")
    if estimate:
        _estimate(ruleset, scenario, rules, sets or [], seat, opponent, as_json)
        return
    res = solve_scenario(ruleset, scenario, rules, sets or [], seat, opponent, max_states)
    cfg = res.config
    head = {"ruleset": ruleset, "scenario": scenario, "rules_hash": config_hash(cfg), "sets": sets or [],
            "rules": str(rules) if rules else None}
    if as_json:
        print(json.dumps({**head, **res.to_dict(limit)}, indent=2))
        return
    _print(res, head, limit)


def _estimate(ruleset: str, scenario: str, rules: Path | None, sets: list[str], seat: int, opponent: str | None,
              as_json: bool) -> None:
    from agents.registry import make_agent
    from agents.solver import estimate_states
    from envs import get_ruleset
    from envs.core.config import load_config

    rs = get_ruleset(ruleset)
    sc = rs.scenario(scenario)
    cfg = apply_sets(load_config(rs, rules), sets)
    n = sc.players(cfg)
    opponents = {s: make_agent(rs.name, opponent, scenario) for s in range(n) if s != seat} if opponent else {}
    est = estimate_states(sc.new_game(cfg), opponents)
    if as_json:
        print(json.dumps({"ruleset": ruleset, "scenario": scenario, "tree_nodes": est.tree_nodes,
                          "mean_depth": est.mean_depth, "max_depth": est.max_depth, "probes": est.probes}))
        return
    out.print(f"{ruleset} {scenario}: {est.describe()}", highlight=False)


def _print(res: Any, head: dict[str, Any], limit: int) -> None:
    fixed = ", ".join(f"seat {s} plays {n}" for s, n in res.fixed.items())
    optimal = ", ".join(f"seat {s}" for s in res.solved_seats)
    out.rule(f"{head['ruleset']} {head['scenario']} — exact solve (rules {head['rules_hash']}"
             + (f", {head['rules']}" if head["rules"] else "") + (f", {' '.join(head['sets'])}" if head["sets"]
                                                                   else "") + ")")
    how = "backward induction (acyclic)" if res.acyclic else (
        f"value iteration, {res.iterations} sweeps, residual {res.residual:.1e}")
    out.print(f"{res.num_states:,} positions ({res.num_decisions:,} optimal-seat decisions), {how}, "
              f"{res.seconds:.2f} s. Optimal: {optimal}" + (f"; fixed: {fixed}" if fixed else "") + ".",
              highlight=False)
    if res.stochastic_fixed_nodes:
        out.print(f"note: the fixed policy was stochastic at {res.stochastic_fixed_nodes:,} positions; its "
                  "distribution there is estimated from 16 fixed-seed probes", highlight=False)
    values = ", ".join(f"seat {s}: {v:.6f}" for s, v in enumerate(res.value))
    out.print(f"[bold]optimal value[/bold] (expected return of seat {res.seat}): [bold]{res.value[res.seat]:.6f}"
              f"[/bold]; P(seat {res.seat} wins) = {res.win_probability:.6f}; returns: {values}", highlight=False)
    t = Table(title="what optimal play chooses, per decision (weighted by how often it is reached)")
    for c in ("seat", "decision", "option", "share", "times per game"):
        t.add_column(c, justify="right" if c in ("share", "times per game") else "left")
    for row in res.option_summary():
        t.add_row(str(row["seat"]), row["context"], row["option"], f"{100 * row['share']:.1f}%",
                  f"{row['expected_times']:.3f}")
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
            row = [f"{100 * r.reach:.1f}%", *([str(r.seat)] if multi else []), r.context,
                   f"{after} [dim]{state}[/dim]", f"{r.best_label} ({best_v:.4f})",
                   f"{alts[0][0]} ({alts[0][1]:.4f})" if alts else "—"]
            t2.add_row(*row)
        out.print(t2)


def _short(text: str, n: int = 60) -> str:
    from rich.markup import escape

    text = escape(text)
    return text if len(text) <= n else text[: n - 1] + "…"

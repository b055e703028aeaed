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
    """Apply every ``KEY=VALUE`` override, then validate once (so related keys may change together)."""
    from envs.core.config import config_dict, validate_config
    from envs.core.errors import ConfigError

    if not sets:
        return config
    data = config_dict(config)
    for item in sets:
        if "=" not in item:
            raise UserError(f"--set needs KEY=VALUE (e.g. session.sessions=1), got '{item}'")
        k, v = (x.strip() for x in item.split("=", 1))
        node = data
        parts = k.split(".")
        for p in parts[:-1]:
            if not isinstance(node.get(p), dict):
                raise ConfigError(f"--set: unknown key '{k}'")
            node = node[p]
        if parts[-1] not in node:
            raise ConfigError(f"--set: unknown key '{k}'")
        node[parts[-1]] = parse_value(v)
    return validate_config(type(config), data, "--set " + " ".join(sets))


def _key_without(state: Any, blank: dict[str, Any]) -> Any:
    """``state.key()`` computed with some attributes temporarily blanked (restored afterwards)."""
    saved = {a: getattr(state, a) for a in blank}
    try:
        for a, v in blank.items():
            setattr(state, a, v)
        return state.key()
    finally:
        for a, v in saved.items():
            setattr(state, a, v)


def _blackbird_session_key(state: Any) -> Any:
    """blackbird session: ``key()`` keeps the last roll (``own``), the helper's and the opposition's
    successes after the roll is resolved, so positions that differ only in a past roll stay apart (the
    solve grows ~100x). They matter only while a roll is being resolved, so blank them otherwise."""
    from envs.blackbird.session import Phase

    if state.phase in (Phase.JOINT, Phase.OPPOSE, Phase.ROLL_OFF):
        return state.key()
    return _key_without(state, {"own": None, "partner": 0, "opposition": 0})


def wicked_age_duel_blanks(state: Any) -> dict[str, Any] | None:
    """What a two-party wicked_age conflict no longer needs (``None``: nothing to blank).

    Once the turn order is set (stage TURN) the others have picked up their opening dice, only the
    standing roll's reading (Rule 6: sorted faces, advantage on the highest) is compared again, and the
    tie bookkeeping is reset before any later tie; once an absolute result is in (``conseq`` set) no
    roll is compared again at all (the owe list reads die sizes, not faces). ``key()`` keeps all of it,
    so every roll history would carry its own copy of the rest of the round."""
    from envs.wicked_age.dice import Roll
    from envs.wicked_age.engine import Stage

    if state.num_players != 2 or state.stage != Stage.TURN:
        return None
    n = len(state.rolls)
    if state.conseq is not None:
        rolls: list[Any] = [None] * n
    else:
        rolls = [None] * n
        if state.order:
            first = state.order[0]
            r = state.rolls[first]
            rolls[first] = None if r is None else Roll(tuple(x for x in r.key if x), 0)
    return {"rolls": rolls, "tie_rerolls": 0, "tied": [], "avoid_votes": []}


def _wicked_age_duel_key(state: Any) -> Any:
    """wicked_age duel: ``key()`` with :func:`wicked_age_duel_blanks` applied."""
    blanks = wicked_age_duel_blanks(state)
    return state.key() if blanks is None else _key_without(state, blanks)


CANONICAL_KEYS: dict[tuple[str, str], tuple[tuple[str, ...], Any]] = {
    ("blackbird", "session"): (("phase", "own", "partner", "opposition"), _blackbird_session_key),
    ("wicked_age", "duel"): (("conseq", "rolls", "stage", "order", "tie_rerolls", "tied", "avoid_votes"),
                             _wicked_age_duel_key),
}
"""Solver keys that merge positions a scenario's own ``key()`` keeps apart needlessly (used only when
the state has every attribute they touch; otherwise ``State.key()`` is used). Each is checked against
the plain key on a small configuration in tests/training/test_solve.py."""


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


def solve_benchmarks() -> dict[str, Any]:
    """Named callables, each one exact solve from scratch (for ``rulebreaker bench``)."""
    here = Path(__file__).resolve().parents[1] / "tests" / "training"
    return {
        "solve.blackbird.session_1_obstacle": lambda: solve_scenario(
            "blackbird", "session", here / "solve_blackbird_session.toml", ["session.obstacles_per_session=1"]),
        "solve.storyteller.heist_one_task": lambda: solve_scenario(
            "storyteller", "heist", here / "solve_storyteller_heist.toml"),
        "solve.blackbird.session_2_obstacles": lambda: solve_scenario(
            "blackbird", "session", here / "solve_blackbird_session.toml"),
    }

"""The solve job: exact optimal play where the scenario is small enough (``rulebreaker solve R S``).

Expectimax / value iteration over ``chance_outcomes()`` (:mod:`agents.solver`). Seats named by
``opponent`` play that fixed policy (a persona or ``random``); the others play optimally for their
own return. Scenarios are shrunk with a variant file (``rules``) and/or ``KEY=VALUE`` overrides
(``sets``). A scenario with more than ``max_states`` positions is refused with a state-count estimate.
Discovery's exact stage solves through :func:`solver_key` too.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agents.registry import make_agent
from agents.solver import DEFAULT_MAX_STATES, KeyFn, SolveResult, StateEstimate, default_key, estimate_states, solve
from envs.core.config import load_config, with_overrides
from envs.core.errors import ConfigError, UserError
from envs.core.game import Ruleset, Scenario
from envs.core.policy import Policy
from envs.core.registry import get_ruleset


def parse_value(text: str) -> Any:
    """A ``--set`` value as TOML would read it (``3``, ``0.5``, ``true``, ``"x"``, ``[1, 2]``), else a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_sets(config: BaseModel, sets: list[str]) -> BaseModel:
    """Apply every ``KEY=VALUE`` override together, validated once (:func:`envs.core.config.with_overrides`)."""
    items = []
    for item in sets:
        if "=" not in item:
            raise UserError(f"--set needs KEY=VALUE (e.g. session.sessions=1), got '{item}'")
        k, v = (x.strip() for x in item.split("=", 1))
        items.append((k, parse_value(v)))
    try:
        return with_overrides(config, items, "--set " + " ".join(sets))
    except ConfigError as e:
        raise ConfigError(f"--set: {e}") from None


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
    phase = type(state.phase)  # the scenario's own Phase enum (read from the state: no engine import here)
    if state.phase in (phase.JOINT, phase.OPPOSE, phase.ROLL_OFF):
        return state.key()
    return _key_without(state, {"own": None, "partner": 0, "opposition": 0})


def wicked_age_duel_blanks(state: Any) -> dict[str, Any] | None:
    """What a two-party wicked_age conflict no longer needs (``None``: nothing to blank).

    Once the turn order is set (stage TURN) the others have picked up their opening dice, only the
    standing roll's reading (Rule 6: sorted faces, advantage on the highest) is compared again, and the
    tie bookkeeping is reset before any later tie; once an absolute result is in (``conseq`` set) no
    roll is compared again at all (the owe list reads die sizes, not faces). ``key()`` keeps all of it,
    so every roll history would carry its own copy of the rest of the round."""
    if state.num_players != 2 or state.stage != type(state.stage).TURN:  # the scenario's own Stage enum
        return None
    n = len(state.rolls)
    if state.conseq is not None:
        rolls: list[Any] = [None] * n
    else:
        rolls = [None] * n
        if state.order:
            first = state.order[0]
            r = state.rolls[first]
            rolls[first] = None if r is None else type(r)(tuple(x for x in r.key if x), 0)  # the same Roll type
    return {"rolls": rolls, "tie_rerolls": 0, "tied": [], "avoid_votes": []}


def _wicked_age_duel_key(state: Any) -> Any:
    """wicked_age duel: ``key()`` with :func:`wicked_age_duel_blanks` applied."""
    blanks = wicked_age_duel_blanks(state)
    return state.key() if blanks is None else _key_without(state, blanks)


CANONICAL_KEYS: dict[tuple[str, str], tuple[tuple[str, ...], Any]] = {
    ("blackbird", "session"): (("phase", "own", "partner", "opposition"), _blackbird_session_key),
    ("wicked_age", "duel"): (
        ("conseq", "rolls", "stage", "order", "tie_rerolls", "tied", "avoid_votes"),
        _wicked_age_duel_key,
    ),
}
"""Solver keys that merge positions a scenario's own ``key()`` keeps apart needlessly (used only when
the state has every attribute they touch; otherwise ``State.key()`` is used). Each is checked against
the plain key on a small configuration in tests/training/test_solve.py."""


def solver_key(ruleset: str, scenario: str, root: Any) -> KeyFn:
    """The key the solver merges positions by: a canonical key of :data:`CANONICAL_KEYS`, or ``State.key``."""
    entry = CANONICAL_KEYS.get((ruleset, scenario))
    if entry is None or not all(hasattr(root, a) for a in entry[0]):
        return default_key
    return entry[1]


def _setup(ruleset: str, scenario: str, rules: Path | None, sets: list[str]) -> tuple[Ruleset, Scenario, BaseModel]:
    rs = get_ruleset(ruleset)
    sc = rs.scenario(scenario)
    return rs, sc, apply_sets(load_config(rs, rules), sets)


def _opponents(rs: Ruleset, sc: Scenario, cfg: BaseModel, seat: int, opponent: str | None) -> dict[int, Policy]:
    """The fixed policies of the seats other than ``seat`` (``--opponent``), after checking the seat exists."""
    n = sc.players(cfg)
    if not 0 <= seat < n:
        raise UserError(f"--seat must be between 0 and {n - 1} for {rs.name} {sc.name}, got {seat}")
    if opponent is None:
        return {}
    if n == 1:
        raise UserError(f"{rs.name} {sc.name} has one seat; --opponent does not apply")
    return {s: make_agent(rs.name, opponent, sc.name) for s in range(n) if s != seat}


def solve_scenario(
    ruleset: str,
    scenario: str,
    rules: Path | None = None,
    sets: list[str] | None = None,
    seat: int = 0,
    opponent: str | None = None,
    max_states: int | None = None,
) -> SolveResult:
    """Solve ``ruleset``/``scenario`` (with overrides) and return the :class:`~agents.solver.SolveResult`.

    The discover command uses this to measure an RL agent's gap to the optimum.
    """
    rs, sc, cfg = _setup(ruleset, scenario, rules, sets or [])
    opponents = _opponents(rs, sc, cfg, seat, opponent)
    root = sc.new_game(cfg)
    result = solve(
        root,
        seat,
        opponents,
        max_states=max_states or DEFAULT_MAX_STATES,
        num_actions=sc.action_count(cfg),
        key=solver_key(rs.name, scenario, root),
    )
    result.config = cfg
    return result


def estimate_scenario(
    ruleset: str,
    scenario: str,
    rules: Path | None = None,
    sets: list[str] | None = None,
    seat: int = 0,
    opponent: str | None = None,
) -> StateEstimate:
    """Knuth's estimate of the game tree of ``ruleset``/``scenario`` (with overrides), without solving it."""
    rs, sc, cfg = _setup(ruleset, scenario, rules, sets or [])
    return estimate_states(sc.new_game(cfg), _opponents(rs, sc, cfg, seat, opponent))


def solve_benchmarks() -> dict[str, Any]:
    """Named callables, each one exact solve from scratch (for ``rulebreaker bench``)."""
    here = Path(__file__).resolve().parents[1] / "tests" / "training"
    return {
        "solve.blackbird.session_1_obstacle": lambda: solve_scenario(
            "blackbird", "session", here / "solve_blackbird_session.toml", ["session.obstacles_per_session=1"]
        ),
        "solve.storyteller.heist_one_task": lambda: solve_scenario(
            "storyteller", "heist", here / "solve_storyteller_heist.toml"
        ),
        "solve.blackbird.session_2_obstacles": lambda: solve_scenario(
            "blackbird", "session", here / "solve_blackbird_session.toml"
        ),
    }

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
from agents.solver import DEFAULT_MAX_STATES, SolveResult, StateEstimate, estimate_states, solve
from agents.solver_keys import solver_key
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

"""Agent names the CLI understands: ``random``, a persona of the ruleset, ``rl:<run dir or model>``, or
``search[:<base>][@<simulations>]`` (the search agent of :mod:`agents.search` over any of the others)."""

from __future__ import annotations

import importlib
import math
from typing import Any

from agents.rl import load_rl_policy
from agents.search import is_search_spec, make_search_agent, parse_search_spec
from envs.core.errors import UserError
from envs.core.policy import Policy, UniformRandom
from envs.core.registry import all_rulesets

MAX_SIMULATIONS = 10_000
"""The largest search budget an agent name may ask for (simulations per decision)."""


def personas(ruleset: str) -> dict[str, Any]:
    """The persona classes of a ruleset: its ``Ruleset.personas`` (a plugin's), else ``agents/personas/<name>.py``
    (empty if it ships none)."""
    registered = all_rulesets().get(ruleset)
    if registered is not None and registered.personas is not None:
        return dict(registered.personas)
    try:
        module = importlib.import_module(f"agents.personas.{ruleset}")
    except ModuleNotFoundError as e:
        if e.name == f"agents.personas.{ruleset}":
            return {}
        raise
    return dict(module.PERSONAS)


def agent_names(ruleset: str) -> list[str]:
    return ["random", *personas(ruleset)]


def describe(ruleset: str) -> dict[str, str]:
    out = {"random": "uniform over the legal actions"}
    for name, cls in personas(ruleset).items():
        out[name] = " ".join((cls.__doc__ or "").split())
    out["search[:<base>][@<n>]"] = (
        "MCTS over the engine with <base> (default random) as rollout policy and prior, n simulations per "
        "decision (default 32); re-optimizes under any restriction (docs/search.md)"
    )
    return out


def make_agent(ruleset: str, spec: str, scenario: str | None = None, **kwargs: Any) -> Policy:
    """Build a policy from its CLI name. Unknown names raise :class:`UserError` listing the valid ones."""
    spec = spec.strip()
    if is_search_spec(spec):
        parsed = parse_search_spec(spec)
        if parsed.simulations > MAX_SIMULATIONS:
            raise UserError(
                f"search budget '{spec}' is above {MAX_SIMULATIONS:,} simulations per decision (a game would not end)"
            )
        if not math.isfinite(parsed.c) or parsed.c < 0:
            raise UserError(f"bad search spec '{spec}': c= must be a finite number >= 0")
        return make_search_agent(ruleset, spec, scenario)
    if spec == "random":
        return UniformRandom()
    if spec.startswith("rl:"):
        return load_rl_policy(spec[3:], ruleset=ruleset, scenario=scenario)
    table = personas(ruleset)
    if spec in table:
        policy = table[spec](**kwargs)
        return policy
    valid = ", ".join([*agent_names(ruleset), "rl:<run dir>", "search[:<base>][@<simulations>]"])
    raise UserError(f"unknown agent '{spec}' for ruleset '{ruleset}'; valid: {valid}")


def parse_agents(ruleset: str, specs: str, scenario: str | None = None) -> list[Policy]:
    names = [s for s in (x.strip() for x in specs.split(",")) if s]
    if not names:
        raise UserError("--agents needs at least one agent name")
    return [make_agent(ruleset, n, scenario) for n in names]

"""The exact stage of discovery: where a scenario is small enough to solve, the optimal value, each agent's
exact gap to it (the truth RL is measured against), and the exact restricted optima of the options the
verdict stage restricted.

The optimum is the one the verdict stage's subject is measured against (:mod:`training.discover.verdicts`):
in a one-seat scenario the game's optimum; in a multi-seat scenario the subject plays seat ``g mod n`` of
deal ``g`` with the base persona at every other seat, so its optimum is that seat's best response to the
base, ``solve(root, seat, {other seats: base})`` (what ``rulebreaker solve --opponent <base>`` computes),
averaged over the same seat schedule. Each forbid/force the verdict stage played gets its exact restricted
optimum the same way, on a :class:`agents.search.RestrictedState` view of the game, so the strength
certificate can hold every restricted-play change against the exact one.

A scenario whose estimated tree is far beyond the budget's state limit is not explored: the report gives
the estimate instead.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from pydantic import BaseModel

from agents.registry import make_agent
from agents.search import RestrictedState, Restriction
from agents.solver import SolveResult, TooLargeError, estimate_states, solve
from envs.core.dice import Rng
from envs.core.errors import UserError
from envs.core.game import State
from envs.core.policy import Policy, UniformRandom
from training.discover.discovery import Discovery
from training.solve import solver_key

MAX_STATES = {"quick": 40_000, "standard": 500_000, "deep": 5_000_000}
TREE_GATE = 1e18
"""Explore only when Knuth's estimate of the game *tree* is below this. The tree counts a position once per
path to it, so it overstates distinct positions by many orders of magnitude (the one-task heist: a 1e13
tree, 1e4 positions); the gate only skips scenarios that are astronomically large (1e34 and up as shipped)."""
RESTRICTED_STATES = {"quick": 600_000, "standard": 5_000_000, "deep": 50_000_000}
"""Positions the restricted solves may explore in all (each explores at most what the unrestricted solve of
its seat did: a restriction only removes moves). Restrictions beyond it are left out, in the verdict plan's
order, and counted in ``restricted_left_out``; deterministic, unlike a time limit."""


class OnEngine:
    """A fixed policy handed the engine state inside a :class:`RestrictedState` view (personas check the
    state's type); the view restricts another seat, so the policy's legal actions are the engine's."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.name = inner.name

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        return self.inner.act(getattr(state, "inner", state), mask, rng)


def seat_schedule(d: Discovery) -> list[int]:
    """The subject's seat per verdict deal (``g mod n``), or every seat once before the verdict stage has run."""
    n = d.num_players
    deals = (d.sections.get("verdicts") or {}).get("deals")
    return [g % n for g in range(deals)] if deals else list(range(n))


class _Solver:
    """The exact solves of one discovery's scenario, each seat's against the base at the other seats."""

    def __init__(self, d: Discovery, base: str | None, config: BaseModel | None = None) -> None:
        self.d = d
        cfg = d.config if config is None else config
        self.sc = d.ruleset.scenario(d.scenario)
        self.num_actions = self.sc.action_count(cfg)
        self.root = self.sc.new_game(cfg)
        self.key = solver_key(d.ruleset.name, d.scenario, self.root)
        self.limit = MAX_STATES.get(d.budget.name, 200_000)
        self.base = base
        self.explored = 0

    def opponents(self, seat: int, on_view: bool = False) -> dict[int, Policy]:
        if self.base is None:
            return {}
        out: dict[int, Policy] = {}
        for s in range(self.d.num_players):
            if s != seat:
                pol = make_agent(self.d.ruleset.name, self.base, self.d.scenario)
                out[s] = OnEngine(pol) if on_view and not isinstance(pol, UniformRandom) else pol
        return out

    def solve(self, seat: int, restriction: Restriction | None = None, player: Policy | None = None) -> SolveResult:
        root: State = self.root if restriction is None else RestrictedState(self.root, seat, restriction)
        fixed = self.opponents(seat, on_view=restriction is not None)
        if player is not None:
            fixed[seat] = player
        res = solve(root, seat, fixed, key=self.key, max_states=self.limit, num_actions=self.num_actions)
        self.explored += res.num_states
        return res


def _mean(values: dict[int, float], seats: list[int]) -> float:
    return float(np.mean([values[s] for s in seats]))


def exact_stage(d: Discovery, agents: list[str]) -> dict[str, Any]:
    """The optimum (and the exact restricted optima of the verdict stage's restrictions) where tractable."""
    n = d.num_players
    verdicts = d.sections.get("verdicts") or {}
    base = (verdicts.get("base") or d.sections.get("best_persona")) if n > 1 else None
    if n > 1 and base is None:
        out: dict[str, Any] = {"tractable": False, "reason": "multi-seat: no base persona for the other seats yet"}
        d.sections["exact"] = out
        return out
    ex = _Solver(d, base)
    est = estimate_states(ex.root, ex.opponents(0), probes=100)
    if est.tree_nodes > TREE_GATE:
        out = {"tractable": False, "reason": f"too large: {est.describe()}", "estimate": est.tree_nodes}
        d.sections["exact"] = out
        return out
    seats = seat_schedule(d)
    distinct = sorted(set(seats))
    free: dict[int, SolveResult] = {}
    try:
        for s in distinct:
            free[s] = ex.solve(s)
    except TooLargeError as e:
        out = {"tractable": False, "reason": str(e), "estimate": e.estimate}
        d.sections["exact"] = out
        return out
    optimum = _mean({s: r.value[s] for s, r in free.items()}, seats)
    gaps = {}
    for a in agents:
        try:
            # the agent fixed at its seat (full-width masks, as the env gives them): the exact value of that policy
            vals = {s: ex.solve(s, player=make_agent(d.ruleset.name, a, d.scenario)).value[s] for s in distinct}
        except TooLargeError:
            continue
        v = _mean(vals, seats)
        gaps[a] = {"value": round(v, 6), "gap": round(optimum - v, 6)}
    restricted, left_out = _restricted_optima(d, ex, free, seats, optimum)
    out = {
        "tractable": True,
        "optimal_value": round(optimum, 6),
        "states": max(r.num_states for r in free.values()),
        "seconds": round(sum(r.seconds for r in free.values()), 2),
        "agents": gaps,
        "restricted": restricted,
        "restricted_left_out": left_out,
    }
    if n > 1:
        counts = Counter(seats)
        out["opponents"] = base
        out["per_seat"] = {
            str(s): {"value": round(free[s].value[s], 6), "states": free[s].num_states, "deals": counts[s]}
            for s in distinct
        }
        out["note"] = (
            f"each seat's best response to {base} at every other seat, averaged over the verdict stage's seat "
            f"schedule (deal g -> seat g mod {n})"
        )
    d.sections["exact"] = out
    return out


def _restricted_optima(
    d: Discovery, ex: _Solver, free: dict[int, SolveResult], seats: list[int], optimum: float
) -> tuple[dict[str, Any], int]:
    """``{"<mode>=<group>": {value, change}}`` for every restriction the verdict stage played, and how many
    were left out by :data:`RESTRICTED_STATES` (``change``: the restricted optimum minus the optimum)."""
    options = (d.sections.get("verdicts") or {}).get("options") or {}
    played = [(grp, mode) for grp, row in options.items() for mode in ("forbid", "force") if row.get(mode) is not None]
    cap = RESTRICTED_STATES.get(d.budget.name, 1_000_000)
    cost = sum(free[s].num_states for s in free)  # at most this many positions per restriction
    out: dict[str, Any] = {}
    spent = 0
    left = 0
    for grp, mode in played:
        if spent + cost > cap:
            left += 1
            continue
        r = Restriction(mode, grp)  # type: ignore[arg-type]
        before = ex.explored
        vals = {s: ex.solve(s, r).value[s] for s in free}
        spent += ex.explored - before
        v = _mean(vals, seats)
        out[r.spec()] = {"value": round(v, 6), "change": round(v - optimum, 6)}
    return out, left


PROBE_STATES = 40_000
"""The state limit of :func:`fits_exactly`: the exact rollout mode only pays on games this small."""


def fits_exactly(d: Discovery, base: str, config: BaseModel | None = None) -> bool:
    """Whether the plain game solves within :data:`PROBE_STATES` states (seat 0's best response to ``base`` at
    the other seats): the verdict stage then plays its subject in the exact rollout mode (``#rollout#exact``,
    agents/rollout.py), whose values are exact where the base's continuation fits, as on the small variants
    the exact-reach tests measure. A bounded probe: a large game gives up after that many states. ``config``:
    another rule set of the same scenario (a perturbed rule of the adapting sensitivity; default the discovery's)."""
    ex = _Solver(d, base if d.num_players > 1 else None, config)
    ex.limit = min(ex.limit, PROBE_STATES)
    try:
        if estimate_states(ex.root, ex.opponents(0), probes=20).tree_nodes > TREE_GATE:
            return False
        ex.solve(0)
    except (TooLargeError, NotImplementedError, UserError):
        return False
    return True

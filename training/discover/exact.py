"""The exact stage of discovery: where a scenario is small enough to solve, the optimal value and each
agent's exact gap to it (the truth RL is measured against).

Only one-seat scenarios are solved here (a multi-seat optimum depends on who the opponents are; use
``rulebreaker solve R S --opponent P`` for those). A scenario whose estimated tree is far beyond the
budget's state limit is not explored: the report gives the estimate instead.
"""

from __future__ import annotations

from typing import Any

from agents.registry import make_agent
from agents.solver import TooLargeError, estimate_states, solve
from training.discover.discovery import Discovery
from training.solve import solver_key

MAX_STATES = {"quick": 20_000, "standard": 500_000, "deep": 5_000_000}
TREE_GATE = 1e18
"""Explore only when Knuth's estimate of the game *tree* is below this. The tree counts a position once per
path to it, so it overstates distinct positions by many orders of magnitude (the one-task heist: a 1e13
tree, 1e4 positions); the gate only skips scenarios that are astronomically large (1e34 and up as shipped)."""


def exact_stage(d: Discovery, agents: list[str]) -> dict[str, Any]:
    sc = d.ruleset.scenario(d.scenario)
    num_actions = sc.action_count(d.config)
    if d.num_players != 1:
        out = {"tractable": False, "reason": "multi-seat: see `rulebreaker solve --opponent`"}
        d.sections["exact"] = out
        return out
    limit = MAX_STATES.get(d.budget.name, 200_000)
    root = sc.new_game(d.config)
    est = estimate_states(root, probes=100)
    if est.tree_nodes > TREE_GATE:
        out = {"tractable": False, "reason": f"too large: {est.describe()}", "estimate": est.tree_nodes}
        d.sections["exact"] = out
        return out
    key = solver_key(d.ruleset.name, d.scenario, root)
    try:
        res = solve(root, 0, {}, max_states=limit, num_actions=num_actions, key=key)
    except TooLargeError as e:
        out = {"tractable": False, "reason": str(e), "estimate": e.estimate}
        d.sections["exact"] = out
        return out
    gaps = {}
    for a in agents:
        pol = make_agent(d.ruleset.name, a, d.scenario)
        try:
            # every seat fixed: the exact value of that policy (full-width masks, as the env gives them)
            v = solve(sc.new_game(d.config), 0, {0: pol}, key=key, max_states=limit, num_actions=num_actions).value[0]
        except TooLargeError:
            continue
        gaps[a] = {"value": round(v, 6), "gap": round(res.value[0] - v, 6)}
    out = {
        "tractable": True,
        "optimal_value": round(res.value[0], 6),
        "states": res.num_states,
        "seconds": round(res.seconds, 2),
        "agents": gaps,
    }
    d.sections["exact"] = out
    return out

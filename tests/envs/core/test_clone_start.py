"""``Scenario.clone_start``: the adapter builds the start once and hands each reset a clone.

The promise is that a clone of the start plays exactly as a freshly built game: nothing a game changes may be
shared with the start it was cloned from. Each scenario that sets it is played both ways, step for step, over
many episodes (a start spoiled by an earlier episode shows in a later one).
"""

from __future__ import annotations

import copy
import random
from dataclasses import replace

import numpy as np
import pytest

import envs  # noqa: F401  (registers the shipped rulesets)
from envs.core.gym_adapter import GameEnv
from envs.core.registry import all_rulesets
from tests.toy import RULESET as PIG
from tests.toy import PigState

CLONED = [(rs.name, name) for rs in all_rulesets().values() for name, sc in rs.scenarios.items() if sc.clone_start]


def _trace(env: GameEnv, steps: int, seed: int) -> list[tuple]:
    """Observations, masks, rewards and ends of ``steps`` random legal steps from ``reset(seed=seed)``."""
    rnd = random.Random(seed)
    obs, info = env.reset(seed=seed)
    out: list[tuple] = [(obs.tobytes(), info["action_mask"].tobytes())]
    for _ in range(steps):
        legal = np.flatnonzero(env.action_masks())
        obs, reward, terminated, truncated, info = env.step(int(legal[int(rnd.random() * len(legal))]))
        out.append((obs.tobytes(), info["action_mask"].tobytes(), reward, terminated, truncated))
        if terminated or truncated:
            obs, info = env.reset()
            out.append((obs.tobytes(), info["action_mask"].tobytes()))
    return out


def _both_ways(ruleset, scenario: str, steps: int, seed: int) -> tuple[list[tuple], list[tuple], int]:
    cloned = GameEnv(ruleset, scenario)
    fresh = GameEnv(ruleset, scenario)
    fresh.scenario = replace(fresh.scenario, clone_start=False)
    cloned.scenario = replace(cloned.scenario, clone_start=True)
    a, b = _trace(cloned, steps, seed), _trace(fresh, steps, seed)
    return a, b, sum(1 for t in b if len(t) == 2)


def test_the_shipped_scenarios_that_clone_their_start_are_listed():
    assert ("wicked_age", "melee") in CLONED  # the test below must not pass by playing nothing


@pytest.mark.parametrize(("ruleset", "scenario"), CLONED)
def test_a_cloned_start_plays_as_a_fresh_game(ruleset: str, scenario: str):
    cloned, fresh, episodes = _both_ways(ruleset, scenario, steps=1500, seed=7)
    assert episodes >= 5, f"only {episodes} episodes: too few to show a spoiled start"
    assert cloned == fresh


class SharedScores(PigState):
    """A clone that shares the banked scores with its original: an episode's points leak into the next start."""

    def clone(self):
        twin = copy.copy(self)
        twin.log = list(self.log)
        return twin


def test_a_start_spoiled_by_its_clones_is_caught():
    race = PIG.scenarios["race"]
    toy = replace(PIG, scenarios={"race": replace(race, new_game=lambda cfg: SharedScores(cfg))})
    cloned, fresh, episodes = _both_ways(toy, "race", steps=400, seed=3)
    assert episodes >= 2
    assert cloned != fresh

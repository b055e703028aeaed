"""Every agent of every ruleset honours the mask it is given (restricted play depends on it)."""

import numpy as np
import pytest

from agents.registry import agent_names, make_agent
from envs import all_rulesets
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL
from envs.core.policy import legal_mask

CASES = [(rs, sc, a) for rs, r in sorted(all_rulesets().items()) for sc in r.scenarios for a in agent_names(rs)]


@pytest.mark.parametrize(("ruleset", "scenario", "agent"), CASES)
def test_agent_chooses_within_a_narrowed_mask(ruleset, scenario, agent):
    rs = all_rulesets()[ruleset]
    sc = rs.scenario(scenario)
    policy = make_agent(ruleset, agent, scenario)
    rng, chance = Rng(1), Rng(2)
    checked = 0
    for _game in range(20):
        state = sc.new_game(rs.default_config())
        steps = 0
        while state.current_player() != TERMINAL and steps < 400:
            steps += 1
            if state.current_player() == CHANCE:
                state.apply_chance(state.sample_chance(chance))
                continue
            mask = legal_mask(state, sc.action_count(rs.default_config()))
            legal = np.flatnonzero(mask)
            if len(legal) > 1:  # forbid one legal action at random, as restricted play would
                narrowed = mask.copy()
                narrowed[legal[int(rng.random() * len(legal))]] = False
                a = policy.act(state, narrowed, rng)
                assert narrowed[a], f"{agent} chose {state.action_label(a)}, which the mask forbids"
                checked += 1
            else:
                a = policy.act(state, mask, rng)
            state.apply_action(int(np.flatnonzero(mask)[0]) if not mask[a] else a)
    assert checked > 0

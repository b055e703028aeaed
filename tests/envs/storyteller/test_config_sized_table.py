"""Issue 21: the heist's action table never caps the actions Rule 9 allows (docs/rules/storyteller.md).

Rule 9 (the seed: "as many actions as you want") limits a turn only by the pools: action k of N rolls
pool - N - (k - 1) dice and needs at least one. A rating is at most 10, so a pool is at most 20 dice and
its 10th action rolls 20 - 10 - 9 = 1 die: ``multiple_actions.max_actions`` takes 1..10. Beyond 3 the
table grows by two ids per action (declaring that many, Willpower on that action), after the 22 of the
rules as written.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import envs  # noqa: F401
from agents.registry import make_agent
from envs.core.config import load_config
from envs.core.dice import Rng
from envs.core.errors import ConfigError
from envs.core.game import CHANCE, TERMINAL
from envs.core.policy import UniformRandom, legal_mask
from envs.storyteller import RULESET
from envs.storyteller.actions import (
    Act,
    Phase,
    count_action,
    declared_count,
    heist_option,
    is_count,
    is_willpower,
    willpower_action,
    willpower_index,
)
from envs.storyteller.config import TRAITS, StorytellerConfig
from envs.storyteller.heist import HeistState
from envs.storyteller.observation import HEIST_OBS_SIZE
from tests.envs.storyteller.helpers import make_cfg

PERSONAS = ("steady", "splitter", "spender", "retrier")


def big(**more: object) -> StorytellerConfig:
    """Every rating 10 (20-die pools), up to 10 actions, the same task may be rolled more than once a turn."""
    return make_cfg(
        multiple_actions__max_actions=10,
        extended__one_roll_per_task=False,
        heist__character=dict.fromkeys(TRAITS, 10),
        **more,
    )


def test_the_rules_as_written_keep_the_22_ids() -> None:
    cfg = RULESET.default_config()
    assert RULESET.scenario("heist").action_count(cfg) == 22
    # the ids of the rules card (heist.py): 2..4 declare 1..3 actions, 15..17 Willpower on action 1..3
    assert [count_action(n) for n in (1, 2, 3)] == [2, 3, 4]
    assert [willpower_action(k) for k in (0, 1, 2)] == [15, 16, 17]
    assert RULESET.scenario("heist").action_count(make_cfg(multiple_actions__max_actions=2)) == 22


def test_each_action_beyond_three_adds_two_ids_at_the_end() -> None:
    assert RULESET.scenario("heist").action_count(make_cfg(multiple_actions__max_actions=4)) == 24
    assert RULESET.scenario("heist").action_count(big()) == 36
    for n in range(1, 11):
        a = count_action(n)
        assert is_count(a) and declared_count(a) == n and not is_willpower(a)
        assert heist_option(a) == ("single_action" if n == 1 else "multiple_actions")
        w = willpower_action(n - 1)
        assert is_willpower(w) and willpower_index(w) == n - 1 and not is_count(w)
        assert heist_option(w) == "willpower"
    assert sorted({count_action(n) for n in range(4, 11)} | {willpower_action(k) for k in range(3, 10)}) == list(
        range(22, 36)
    )


def test_max_actions_takes_what_the_pools_allow(tmp_path: Path) -> None:
    v = tmp_path / "v.toml"
    v.write_text("[multiple_actions]\nmax_actions = 10\n")
    assert load_config(RULESET, v).multiple_actions.max_actions == 10  # type: ignore[attr-defined]
    v.write_text("[multiple_actions]\nmax_actions = 11\n")
    with pytest.raises(ConfigError, match=r"multiple_actions\.max_actions.*11.*≤ 10"):
        load_config(RULESET, v)


def test_a_twenty_die_pool_declares_up_to_ten_actions() -> None:
    """Rule 9: 20 - N - (N - 1) >= 1 for N <= 10, so the first turn offers 1..10 actions."""
    listed = {"heist__tasks": ["documents", "house", "drive"], "heist__draw": 0}  # no draw: the first turn at once
    st = HeistState(big(**listed))
    assert st.phase == Phase.COUNT
    assert st.legal_actions() == [count_action(n) for n in range(1, 11)]
    assert st.action_label(count_action(10)) == "10 actions"
    st.apply_action(count_action(10))
    assert st.n_actions == 10
    # with one roll per task (Rule 11 as written) three tasks still cap the turn at three actions
    st = HeistState(make_cfg(multiple_actions__max_actions=10, heist__character=dict.fromkeys(TRAITS, 10), **listed))
    assert st.legal_actions() == [count_action(n) for n in (1, 2, 3)]


def _play(cfg: StorytellerConfig, agent: str, seed: int, seen: set[int]) -> None:
    n = RULESET.scenario("heist").action_count(cfg)
    policy = UniformRandom() if agent == "random" else make_agent("storyteller", agent, "heist")
    st = HeistState(cfg)
    st.narrating = False
    rng = Rng(seed)
    for _ in range(2000):
        p = st.current_player()
        if p == TERMINAL:
            break
        if p == CHANCE:
            st.apply_chance(st.sample_chance(rng))
            continue
        legal = st.legal_actions()
        mask = legal_mask(st, n)
        assert np.flatnonzero(mask).tolist() == sorted(legal)
        obs = st.observation(0)
        assert obs.shape == (HEIST_OBS_SIZE,) and np.all(obs >= 0.0) and np.all(obs <= 1.0)
        for a in legal:
            st.action_label(a)
            assert st.option_of(a) is not None
        a = policy.act(st, mask, rng)
        assert mask[a]
        seen.add(int(a))
        st.apply_action(a)
    assert st.is_terminal()


@pytest.mark.parametrize("agent", ["random", *PERSONAS])
@pytest.mark.parametrize("declared", ["before_each_roll", "before_the_turn"])
def test_random_and_persona_games_end_with_masks_equal_to_the_legal_lists(agent: str, declared: str) -> None:
    seen: set[int] = set()
    for seed in range(10):
        _play(big(willpower__declared=declared), agent, seed, seen)
    if agent == "random":  # random play declares more than three actions and spends Willpower late in a turn
        assert any(a >= 22 and is_count(a) for a in seen)
        assert any(a >= 22 and is_willpower(a) for a in seen)
        assert Act.THREE_ACTIONS in seen


def test_the_env_of_a_big_config_masks_the_whole_table() -> None:
    env = gym.make("rulebreaker/StorytellerHeist-v0", config=big())
    assert env.action_space.n == 36  # type: ignore[attr-defined]
    rnd = np.random.default_rng(1)
    obs, info = env.reset(seed=5)
    for _ in range(300):
        legal = np.flatnonzero(info["action_mask"])
        assert legal.tolist() == sorted(env.unwrapped.state.legal_actions())  # type: ignore[attr-defined]
        obs, _, term, trunc, info = env.step(int(rnd.choice(legal)))
        assert obs.shape == (HEIST_OBS_SIZE,)
        if term or trunc:
            obs, info = env.reset()
    env.close()

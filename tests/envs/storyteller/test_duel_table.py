"""Issue 21: the duel's action table never caps the actions Rules 9 and 11 allow (docs/rules/storyteller.md).

With one roll per task (Rule 11 as written) a duellist's turn holds one attack and one defence: two
actions, the 8 ids of the rules as written. Without it (the seed's "as many actions as you like") only
the pools limit a turn: action k of n rolls pool - n - (k - 1) dice and needs at least one, so
``duel.max_actions`` takes 1..10 ([decision]; never more than ``multiple_actions.max_actions``). Each
action beyond 2 adds two ids after the 8 (declaring that many, Willpower on that action) and three
observation values (the kind of that pick) after the 40.
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
from envs.storyteller import RULESET, rules
from envs.storyteller.actions import (
    DUEL_OPTION_GROUPS,
    DAct,
    DPhase,
    Kind,
    duel_count_action,
    duel_declared_count,
    duel_option,
    duel_willpower_action,
    duel_willpower_index,
    pick_action,
)
from envs.storyteller.config import StorytellerConfig
from envs.storyteller.duel import DuelState
from tests.envs.storyteller.helpers import make_cfg

PERSONAS = ("steady", "splitter", "spender", "retrier")
DUEL = RULESET.scenario("duel")
assert RULESET.variants_dir is not None
VARIANTS = sorted(RULESET.variants_dir.glob("*.toml"))


def free(n: int = 4, **more: object) -> StorytellerConfig:
    """Several rolls per task allowed, up to ``n`` actions a duellist's turn."""
    return make_cfg(
        extended__one_roll_per_task=False,
        multiple_actions__max_actions=max(n, 3),
        duel__max_actions=n,
        **more,
    )


def strong(pool: int) -> list[dict[str, object]]:
    """Two fighters whose three rolls all have ``pool`` dice at difficulty 6."""
    return [
        {
            "name": name,
            "attack_pool": pool,
            "attack_difficulty": 6,
            "alt_attack_pool": pool,
            "alt_attack_difficulty": 6,
            "defence_pool": pool,
            "defence_difficulty": 6,
            "specialty": False,
        }
        for name in ("Asha", "Bram")
    ]


def test_the_rules_as_written_and_every_variant_keep_the_8_ids_and_40_values() -> None:
    for cfg in [RULESET.default_config(), *(load_config(RULESET, v) for v in VARIANTS)]:
        assert DUEL.action_count(cfg) == 8 and DUEL.observation_length(cfg) == 40
    assert [v.name for v in VARIANTS] == [
        "control_difficulty_floor.toml",
        "exploit_split_one_task.toml",
        "windfall_willpower.toml",
    ]
    # one roll per task: the key is not used, the duel keeps two actions
    assert DUEL.action_count(make_cfg(multiple_actions__max_actions=4, duel__max_actions=4)) == 8
    assert [duel_count_action(n) for n in (1, 2)] == [DAct.ONE_ACTION, DAct.TWO_ACTIONS]
    assert [duel_willpower_action(k) for k in (0, 1)] == [DAct.WILLPOWER, DAct.WILLPOWER_2]


def test_rule_9_and_11_cap_of_a_duellists_turn() -> None:
    assert rules.duel_max_actions(make_cfg()) == 2  # one roll per task: one attack, one defence
    assert rules.duel_max_actions(make_cfg(multiple_actions__max_actions=10, duel__max_actions=10)) == 2
    assert rules.duel_max_actions(free(4)) == 4 and rules.duel_max_actions(free(1)) == 1
    assert rules.duel_max_actions(make_cfg(extended__one_roll_per_task=False)) == 2  # the key's default
    assert rules.duel_max_actions(free(2, multiple_actions__enabled=False)) == 1  # Rule 9 off: one action
    assert rules.duel_max_actions(make_cfg(multiple_actions__max_actions=1)) == 1


def test_each_action_beyond_two_adds_two_ids_and_three_values() -> None:
    assert (DUEL.action_count(free(4)), DUEL.observation_length(free(4))) == (12, 46)
    assert (DUEL.action_count(free(10)), DUEL.observation_length(free(10))) == (24, 64)
    assert (DUEL.action_count(free(1)), DUEL.observation_length(free(1))) == (8, 40)
    for n in range(1, 11):
        a = duel_count_action(n)
        assert duel_declared_count(a) == n
        assert duel_option(a) == ("single_action" if n == 1 else "multiple_actions")
        w = duel_willpower_action(n - 1)
        assert duel_willpower_index(w) == n - 1 and duel_option(w) == "willpower"
    beyond = {duel_count_action(n) for n in range(3, 11)} | {duel_willpower_action(k) for k in range(2, 10)}
    assert sorted(beyond) == list(range(8, 24))
    st = DuelState(free(4))
    assert st.action_label(duel_count_action(4)) == "4 actions (split)"
    assert st.action_label(duel_willpower_action(3)) == "willpower on action 4"
    assert st.option_of(12) is None and st.action_label(12) == "action 12"


def test_max_actions_takes_what_the_pools_allow_and_no_more_than_rule_9(tmp_path: Path) -> None:
    v = tmp_path / "v.toml"
    v.write_text(
        "[extended]\none_roll_per_task = false\n[multiple_actions]\nmax_actions = 10\n[duel]\nmax_actions = 10\n"
    )
    assert load_config(RULESET, v).duel.max_actions == 10  # type: ignore[attr-defined]
    v.write_text("[multiple_actions]\nmax_actions = 10\n[duel]\nmax_actions = 11\n")
    with pytest.raises(ConfigError, match=r"duel\.max_actions.*11.*≤ 10") as err:
        load_config(RULESET, v)
    assert "\n" not in str(err.value)
    v.write_text("[duel]\nmax_actions = 4\n")  # multiple_actions.max_actions is 3 as written
    with pytest.raises(ConfigError, match=r"duel\.max_actions = 4 exceeds multiple_actions\.max_actions = 3") as err:
        load_config(RULESET, v)
    assert "\n" not in str(err.value)
    v.write_text("[duel]\nmax_actions = 0\n")
    with pytest.raises(ConfigError, match=r"duel\.max_actions.*0.*≥ 1"):
        load_config(RULESET, v)
    # the rules as written's 2 stays valid under a single action (Rule 9 then caps the duel at one)
    v.write_text("[multiple_actions]\nmax_actions = 1\n[extended]\none_roll_per_task = false\n")
    st = DuelState(load_config(RULESET, v))  # type: ignore[arg-type]
    assert st.legal_actions() == [DAct.ONE_ACTION]


def test_the_pools_limit_a_turn_of_the_default_fighters() -> None:
    """Rule 9 by hand: the wild attack's 8 dice fill 4 places (8 - 4 - 3 = 1), the 6-dice rolls only 2."""
    st = DuelState(free(4))
    assert st.legal_actions() == [duel_count_action(n) for n in (1, 2, 3, 4)]
    st.apply_action(duel_count_action(4))
    every = [pick_action(k) for k in Kind]
    assert st.legal_actions() == every  # place 1: 6 - 4 = 2 dice, 8 - 4 = 4
    st.apply_action(pick_action(Kind.ATTACK_MAIN))
    assert st.legal_actions() == every  # place 2: 6 - 4 - 1 = 1 die
    st.apply_action(pick_action(Kind.DEFEND))
    assert st.legal_actions() == [pick_action(Kind.ATTACK_ALT)]  # place 3: 6 - 4 - 2 = 0, 8 - 4 - 2 = 2
    st.apply_action(pick_action(Kind.ATTACK_ALT))
    assert st.legal_actions() == [pick_action(Kind.ATTACK_ALT)]  # place 4: 8 - 4 - 3 = 1
    st.apply_action(pick_action(Kind.ATTACK_ALT))
    obs = st.observation(0)
    assert obs[8] == pytest.approx(0.0)  # seat 1 declares now: seat 0's plan is no longer in its phase part
    assert st.current_player() == 1 and st.phase is DPhase.COUNT
    # 20-die pools: ten places (20 - 10 - 9 = 1), but never more than duel.max_actions
    assert DuelState(free(4, duel__fighters=strong(20))).legal_actions() == [duel_count_action(n) for n in range(1, 5)]
    top = DuelState(free(10, duel__fighters=strong(20)))
    assert top.legal_actions() == [duel_count_action(n) for n in range(1, 11)]
    assert DuelState(free(10, duel__fighters=strong(19))).legal_actions() == [
        duel_count_action(n) for n in range(1, 10)
    ]


def test_four_actions_declared_before_the_turn() -> None:
    st = DuelState(free(4, willpower__declared="before_the_turn"))
    st.apply_action(duel_count_action(4))
    for kind in (Kind.ATTACK_MAIN, Kind.ATTACK_MAIN, Kind.ATTACK_ALT, Kind.ATTACK_ALT):
        st.apply_action(pick_action(kind))
    assert st.phase is DPhase.WILLPOWER
    assert st.legal_actions() == [DAct.NO_WILLPOWER, DAct.WILLPOWER, DAct.WILLPOWER_2, 9, 11]
    obs = st.observation(0)
    assert obs.shape == (46,)
    assert obs[8] == pytest.approx(1.0)  # 4 of at most 4
    assert obs[9 + Kind.ATTACK_MAIN] == 1.0 and obs[12 + Kind.ATTACK_MAIN] == 1.0
    assert obs[40 + Kind.ATTACK_ALT] == 1.0 and obs[43 + Kind.ATTACK_ALT] == 1.0
    assert obs[40:].sum() == 2.0
    st.apply_action(duel_willpower_action(3))
    assert st.wp_action[0] == 3
    st.apply_action(duel_count_action(1))
    st.apply_action(pick_action(Kind.DEFEND))
    st.apply_action(DAct.NO_WILLPOWER)
    assert [(r.seat, r.kind, r.pool, r.willpower) for r in st.queue] == [
        (0, Kind.ATTACK_MAIN, 6 - 4, 0),
        (0, Kind.ATTACK_MAIN, 6 - 5, 0),
        (0, Kind.ATTACK_ALT, 8 - 6, 0),
        (0, Kind.ATTACK_ALT, 8 - 7, 1),  # Willpower on action 4 (Rule 8)
        (1, Kind.DEFEND, 6, 0),
    ]
    assert "split: dice -4, -5, -6, -7" in st.log[-1].text


def _play(cfg: StorytellerConfig, agents: tuple[str, str], seed: int, seen: set[int]) -> None:
    n = DUEL.action_count(cfg)
    size = DUEL.observation_length(cfg)
    policies = [UniformRandom() if a == "random" else make_agent("storyteller", a, "duel") for a in agents]
    st = DuelState(cfg)
    st.narrating = False
    rng = Rng(seed)
    for _ in range(5000):
        p = st.current_player()
        if p == TERMINAL:
            break
        if p == CHANCE:
            st.apply_chance(st.sample_chance(rng))
            continue
        legal = st.legal_actions()
        mask = legal_mask(st, n)
        assert np.flatnonzero(mask).tolist() == sorted(legal)
        for s in (0, 1):
            obs = st.observation(s)
            assert obs.shape == (size,) and np.all(obs >= 0.0) and np.all(obs <= 1.0)
        for a in legal:
            assert st.action_label(a) != f"action {a}"
            assert st.option_of(a) in DUEL_OPTION_GROUPS
        a = policies[p].act(st, mask, rng)
        assert mask[a]
        seen.add(int(a))
        st.apply_action(a)
    assert st.is_terminal()


@pytest.mark.parametrize("agent", ["random", *PERSONAS])
@pytest.mark.parametrize("declared", ["before_each_roll", "before_the_turn"])
def test_random_and_persona_games_end_with_masks_equal_to_the_legal_lists(agent: str, declared: str) -> None:
    seen: set[int] = set()
    for seed in range(12):
        _play(free(4, willpower__declared=declared), (agent, "random"), seed, seen)
        _play(free(10, willpower__declared=declared, duel__fighters=strong(20)), ("random", agent), seed, seen)
    # random play declares more than two actions and spends Willpower late in a turn
    assert any(a >= 8 and duel_option(a) == "multiple_actions" for a in seen)
    assert any(a >= 8 and duel_option(a) == "willpower" for a in seen)
    assert {duel_count_action(3), duel_count_action(4)} <= seen


def test_the_env_of_a_four_action_duel_masks_the_whole_table() -> None:
    env = gym.make("rulebreaker/StorytellerDuel-v0", config=free(4))
    assert env.action_space.n == 12  # type: ignore[attr-defined]
    assert env.observation_space.shape == (46,)
    rnd = np.random.default_rng(2)
    obs, info = env.reset(seed=3)
    for _ in range(300):
        legal = np.flatnonzero(info["action_mask"])
        assert legal.tolist() == sorted(env.unwrapped.state.legal_actions())  # type: ignore[attr-defined]
        obs, _, term, trunc, info = env.step(int(rnd.choice(legal)))
        assert obs.shape == (46,)
        if term or trunc:
            obs, info = env.reset()
    env.close()

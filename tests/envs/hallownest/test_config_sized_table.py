"""Issue 21: the action table never caps an investment the rules allow (docs/rules/hallownest.md, Rules 11-12).

Rule 12 sets no maximum on the Stamina a parry with a shield or a dodge invests beyond what the bug has;
Rule 11 none on an attack's (beyond the tax) and Rule 20 none on a focus's Soul. The config bounds each bug's
Stamina and Soul at 10, so a config that raises the Rule 5 cap (``dice.max_characteristic``) and gives the bugs
10 Stamina and Soul plays 100 ids, the 82 of the rules as written first, unchanged. Rule 16 makes a grapple an
attack and lets an escape "invest more Stamina, as in an attack" and the grappler resist "investing Stamina if it
wishes"; Rule 21 makes the pogo a melee attack: none has a maximum but the bug's Stamina, so their keys take up
to 10 and a config that raises them past 3 plays the whole table, 128 ids (the 100 first, unchanged).
"""

from __future__ import annotations

from typing import Any

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
from envs.hallownest import RULESET
from envs.hallownest.actions import ACTIONS, NUM_ACTIONS, Kind, Phase, action_id, action_label
from envs.hallownest.config import HallownestConfig
from envs.hallownest.duel import DuelState
from tests.envs.hallownest.helpers import config

PERSONAS = ("all_in", "flurry", "turtle", "balanced")
# both bugs with all the Stamina and Soul a bug can have; seat 1 parries with a shield (Rule 12)
BIG_BUGS: list[dict[str, Any]] = [
    {"name": "Nailbug", "weapon": "nail", "side": "player", "stamina": 10, "soul": 10},
    {"name": "Shieldbug", "weapon": "nail", "side": "enemy", "stamina": 10, "soul": 10, "shield_quality": 1},
]
BIG: dict[str, Any] = {
    "dice": {"max_characteristic": 10},
    "parry": {"max_shield_investment": 10},
    "dodge": {"max_investment": 10},
    "duel": {"bugs": BIG_BUGS},
}


SMALL_KEYS: dict[str, Any] = {
    "grapple": {"max_investment": 10, "max_escape_investment": 10, "max_resist_investment": 10},
    "pogo": {"max_investment": 10, "needs_pass_over": False},  # any jump earlier in the turn: pogos come often
}
SMALL_KINDS = (Kind.GRAPPLE, Kind.POGO, Kind.ESCAPE, Kind.RESIST)


def big(**more: Any) -> HallownestConfig:
    sections: dict[str, Any] = {**BIG, **more}
    return config(**sections)


def big_small() -> HallownestConfig:
    """10 Stamina and Soul, and every grapple, pogo, escape and resist key at its most (10)."""
    return big(**SMALL_KEYS)


def test_the_rules_as_written_keep_the_82_ids() -> None:
    cfg = RULESET.default_config()
    assert RULESET.scenario("duel").action_count(cfg) == NUM_ACTIONS == 82
    # the ids the rules card lists (duel.py: attack 1-7, parry and dodge 0-6, provoked 0-6, stay last)
    assert [action_id(Kind.ATTACK, n) for n in (1, 7)] == [1, 7]
    assert [action_id(Kind.PARRY, n) for n in (0, 6)] == [53, 59]
    assert [action_id(Kind.DODGE, n) for n in (0, 6)] == [60, 66]
    assert [action_id(Kind.PROVOKED, n) for n in (0, 6)] == [70, 76]
    assert action_id(Kind.STAY) == 81


def test_bugs_with_ten_stamina_play_the_whole_table() -> None:
    assert RULESET.scenario("duel").action_count(big()) == 100
    for kind, top in ((Kind.ATTACK, 10), (Kind.PARRY, 10), (Kind.DODGE, 10), (Kind.PROVOKED, 10), (Kind.FOCUS, 10)):
        assert action_id(kind, top) >= NUM_ACTIONS  # the further rows follow the first 82
    # a cap of 7 Stamina but no defense cost: a defense could invest 7, so the whole table too
    seven = {"duel": {"bugs": [{**bug, "stamina": 7, "soul": 3} for bug in BIG_BUGS]}}
    assert RULESET.scenario("duel").action_count(config(**seven)) == NUM_ACTIONS  # 7 - 1 (the cost) = 6 fits
    assert RULESET.scenario("duel").action_count(config(**seven, defense={"base_cost": 0})) == 100


def test_grapple_pogo_escape_and_resist_rows_follow_the_first_100() -> None:
    assert len(ACTIONS) == 128
    # the rows of the rules card (grapple, pogo 1-3, escape, resist 0-3) keep their ids
    assert [action_id(Kind.GRAPPLE, n) for n in (1, 3)] == [8, 10]
    assert [action_id(Kind.POGO, n) for n in (1, 3)] == [11, 13]
    assert [action_id(Kind.ESCAPE, n) for n in (0, 3)] == [41, 44]
    assert [action_id(Kind.RESIST, n) for n in (0, 3)] == [77, 80]
    further = [action_id(kind, n) for kind in SMALL_KINDS for n in range(4, 11)]
    assert further == list(range(100, 128))
    assert action_label(action_id(Kind.RESIST, 10)) == "resist invest 10"
    assert action_label(action_id(Kind.GRAPPLE, 4)) == "grapple invest 4"


def test_the_small_keys_size_the_table_only_when_stamina_lets_a_bug_use_them() -> None:
    count = RULESET.scenario("duel").action_count
    assert count(big_small()) == 128
    assert count(config(**SMALL_KEYS)) == NUM_ACTIONS  # 3 Stamina (the templates): 3 at most anyway
    seven = {"duel": {"bugs": [{**bug, "stamina": 7, "soul": 3} for bug in BIG_BUGS]}}
    assert count(config(**seven, grapple={"max_resist_investment": 4})) == 128  # resisting invests 4 of 7
    assert count(config(**seven, grapple={"max_escape_investment": 4})) == 128  # 7 - 1 (the cost) = 6 >= 4
    four = {"duel": {"bugs": [{**bug, "stamina": 4, "soul": 3} for bug in BIG_BUGS]}}
    assert count(config(**four, grapple={"max_escape_investment": 10})) == NUM_ACTIONS  # 4 - 1 = 3 fits
    assert count(config(**four, pogo={"max_investment": 10})) == 128
    assert count(config(**four, pogo={"max_investment": 10, "enabled": False})) == NUM_ACTIONS


def test_the_keys_take_what_the_rules_allow(tmp_path: Any) -> None:
    v = tmp_path / "v.toml"
    v.write_text("[parry]\nmax_shield_investment = 10\n[dodge]\nmax_investment = 10\n")
    cfg = load_config(RULESET, v)
    assert cfg.parry.max_shield_investment == 10 and cfg.dodge.max_investment == 10  # type: ignore[attr-defined]
    v.write_text("[dodge]\nmax_investment = 11\n")
    with pytest.raises(ConfigError, match=r"dodge\.max_investment.*11.*≤ 10"):
        load_config(RULESET, v)
    v.write_text(
        "[grapple]\nmax_investment = 10\nmax_escape_investment = 10\nmax_resist_investment = 10\n"
        "[pogo]\nmax_investment = 10\n"
    )
    g = load_config(RULESET, v)
    assert isinstance(g, HallownestConfig)
    assert (g.grapple.max_investment, g.grapple.max_escape_investment, g.grapple.max_resist_investment) == (10, 10, 10)
    assert g.pogo.max_investment == 10
    for section, key in (
        ("grapple", "max_investment"),
        ("grapple", "max_escape_investment"),
        ("grapple", "max_resist_investment"),
        ("pogo", "max_investment"),
    ):
        v.write_text(f"[{section}]\n{key} = 11\n")
        with pytest.raises(ConfigError, match=rf"{section}\.{key}.*11.*≤ 10"):
            load_config(RULESET, v)
    defaults = RULESET.default_config()
    assert isinstance(defaults, HallownestConfig)
    assert defaults.grapple.max_investment == defaults.pogo.max_investment == 3


def _play(cfg: HallownestConfig, agents: tuple[str, str], seed: int, seen: dict[Kind, int]) -> None:
    """One game to the end; at every decision the mask is the legal list and the offers reach the rules' bounds."""
    n = RULESET.scenario("duel").action_count(cfg)
    policies = [UniformRandom() if a == "random" else make_agent("hallownest", a, "duel") for a in agents]
    st = DuelState(cfg)
    st.narrating = False
    rng = Rng(seed)
    for _ in range(4000):
        p = st.current_player()
        if p == TERMINAL:
            break
        if p == CHANCE:
            st.apply_chance(st.sample_chance(rng))
            continue
        legal = st.legal_actions()
        mask = legal_mask(st, n)
        assert np.flatnonzero(mask).tolist() == sorted(legal) == legal
        offered: dict[Kind, int] = {}
        for a in legal:
            s = ACTIONS[a]
            offered[s.kind] = max(offered.get(s.kind, -1), s.amount)
            seen[s.kind] = max(seen.get(s.kind, -1), s.amount)
        me = st.bugs[st.atk.target if st.phase == Phase.DEFENSE and st.atk else st.active]
        if st.phase == Phase.DEFENSE:  # Rule 12: 1 Stamina for the defense, the rest may be invested
            if me.p.shield_quality:
                assert offered[Kind.PARRY] == me.stamina - 1
            assert offered[Kind.DODGE] == me.stamina - 1
        if st.phase == Phase.TURN and Kind.ATTACK in offered:  # Rule 11: all that is left after the tax
            assert offered[Kind.ATTACK] == me.stamina - me.attacks_made
        if st.phase == Phase.TURN and Kind.FOCUS in offered:  # Rule 20: all the Soul
            assert offered[Kind.FOCUS] == me.soul
        if st.phase == Phase.PROVOKED:  # Rule 15: 1 Stamina not invested, the rest may be
            assert offered[Kind.PROVOKED] == st.bugs[st.decider].stamina - 1
        g, pogo = cfg.grapple, cfg.pogo
        if st.phase == Phase.TURN and Kind.GRAPPLE in offered:  # Rule 16: an attack, taxed like one
            assert offered[Kind.GRAPPLE] == min(me.stamina - me.attacks_made, g.max_investment)
        if st.phase == Phase.TURN and Kind.POGO in offered:  # Rule 21: a melee attack
            assert offered[Kind.POGO] == min(me.stamina - me.attacks_made, pogo.max_investment)
        if st.phase == Phase.TURN and me.grappled_by >= 0 and me.stamina >= 1:  # Rule 16: 1 Stamina, then invest
            assert offered[Kind.ESCAPE] == min(me.stamina - 1, g.max_escape_investment)
        if st.phase == Phase.RESIST:  # Rule 16: the grappler may invest its Stamina
            assert offered[Kind.RESIST] == min(st.bugs[st.decider].stamina, g.max_resist_investment)
        a = policies[p].act(st, mask, rng)
        assert mask[a]
        st.apply_action(a)
    assert st.is_terminal()


@pytest.mark.parametrize("persona", ["random", *PERSONAS])
def test_random_and_persona_games_end_with_masks_equal_to_the_legal_lists(persona: str) -> None:
    seen: dict[Kind, int] = {}
    for seed in range(12):
        _play(big(), (persona, "random"), seed, seen)
        _play(big(), ("random", persona), 100 + seed, seen)
    if persona == "random":  # random play reaches the further rows
        assert seen[Kind.ATTACK] == 10 and seen[Kind.PARRY] > 6 and seen[Kind.DODGE] > 6 and seen[Kind.FOCUS] == 10
    assert all(seen.get(kind, 0) <= 3 for kind in SMALL_KINDS)  # the default keys: 3 at most


@pytest.mark.parametrize("persona", ["random", *PERSONAS])
def test_games_with_the_small_keys_at_ten_end_with_masks_equal_to_the_legal_lists(persona: str) -> None:
    seen: dict[Kind, int] = {}
    for seed in range(12):
        _play(big_small(), (persona, "random"), seed, seen)
        _play(big_small(), ("random", persona), 100 + seed, seen)
    if persona == "random":  # random play offers every small kind past 3
        assert all(seen[kind] > 3 for kind in SMALL_KINDS), seen


@pytest.mark.parametrize(("small_keys", "n"), [(False, 100), (True, 128)])
def test_the_env_of_a_big_config_masks_the_whole_table(small_keys: bool, n: int) -> None:
    env = gym.make("rulebreaker/HallownestDuel-v0", config=big_small() if small_keys else big())
    assert env.action_space.n == n  # type: ignore[attr-defined]
    rnd = np.random.default_rng(0)
    obs, info = env.reset(seed=3)
    for _ in range(400):
        legal = np.flatnonzero(info["action_mask"])
        assert legal.tolist() == sorted(env.unwrapped.state.legal_actions())  # type: ignore[attr-defined]
        obs, _, term, trunc, info = env.step(int(rnd.choice(legal)))
        assert obs.shape == (80,) and np.all(np.abs(obs) <= 1.0)
        if term or trunc:
            obs, info = env.reset()
    env.close()

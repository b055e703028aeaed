"""The planted variants do what their [variant] tables say (fixed seeds, common random numbers)."""

from __future__ import annotations

import numpy as np

from agents.personas.storyteller import PERSONAS
from envs.core.config import load_config, variant_meta
from envs.core.dice import Rng
from envs.core.game import CHANCE
from envs.core.policy import legal_mask
from envs.storyteller import RULESET
from envs.storyteller.actions import DAct, DPhase

VARIANTS = RULESET.variants_dir


def returns(name, cfg, agents, games, seed=11):
    sc = RULESET.scenarios[name]
    out = np.zeros((games, sc.players(cfg)))
    for g in range(games):
        state = sc.new_game(cfg)
        rng = Rng(seed * 100_003 + g)
        while not state.is_terminal():
            p = state.current_player()
            if p == CHANCE:
                state.apply_chance(state.sample_chance(rng))
            else:
                state.apply_action(agents[p].act(state, legal_mask(state, sc.action_count(cfg)), rng))
        out[g] = state.returns()
    return out


class DoubleAttack:
    """Attacks twice a turn whenever that is legal (the exploit's odd behaviour)."""

    name = "double_attack"

    def act(self, state, mask, rng):
        prefs = {DPhase.COUNT: [DAct.TWO_ACTIONS], DPhase.PICK: [DAct.ATTACK, DAct.DEFEND]}.get(
            state.phase, [DAct.NO_WILLPOWER]
        )
        for a in prefs:
            if mask[a]:
                return int(a)
        return int(np.flatnonzero(mask)[0])


def test_every_variant_has_its_table():
    kinds = {variant_meta(p)["kind"] for p in VARIANTS.glob("*.toml")}
    assert kinds == {"windfall", "exploit", "control"}
    for p in VARIANTS.glob("*.toml"):
        meta = variant_meta(p)
        assert meta["description"] and meta["breaks"] and isinstance(meta["expect"], list)


def test_control_changes_no_game():
    base = load_config(RULESET)
    ctl = load_config(RULESET, VARIANTS / "control_difficulty_floor.toml")
    for name, agents in (("heist", [PERSONAS["steady"]()]), ("duel", [PERSONAS["spender"](), PERSONAS["splitter"]()])):
        assert (returns(name, base, agents, 150) == returns(name, ctl, agents, 150)).all()


def test_windfall_helps_every_willpower_spender():
    base = load_config(RULESET)
    wf = load_config(RULESET, VARIANTS / "windfall_willpower.toml")
    for p in ("steady", "spender"):
        gain = returns("heist", wf, [PERSONAS[p]()], 400).mean() - returns("heist", base, [PERSONAS[p]()], 400).mean()
        assert gain > 0.08, p


def test_exploit_rewards_attacking_twice_only_under_the_variant():
    base = load_config(RULESET)
    ex = load_config(RULESET, VARIANTS / "exploit_split_one_task.toml")
    agents = [DoubleAttack(), PERSONAS["steady"]()]
    n = 1500
    before = returns("duel", base, agents, n)[:, 0].mean()
    after = returns("duel", ex, agents, n)[:, 0].mean()
    se = 2 / np.sqrt(n)  # returns are in [-1, 1]
    assert after > 0.08 and after - before > 2 * se

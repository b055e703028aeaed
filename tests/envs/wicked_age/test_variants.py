"""The planted variants load, document themselves, and move what they claim to move."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.personas.wicked_age import PERSONAS
from envs.core.config import load_config, variant_meta
from envs.core.dice import Rng
from envs.core.play import advance
from envs.wicked_age import RULESET
from envs.wicked_age.actions import NUM_ACTIONS

VARIANTS = sorted(Path(RULESET.variants_dir).glob("*.toml"))


@pytest.mark.parametrize("path", VARIANTS, ids=lambda p: p.stem)
def test_variant_loads_and_is_documented(path):
    load_config(RULESET, path)
    meta = variant_meta(path)
    assert meta["kind"] in ("windfall", "exploit", "control") and meta["description"] and "expect" in meta


def test_one_of_each_kind():
    kinds = sorted(variant_meta(p)["kind"] for p in VARIANTS)
    assert kinds == ["control", "exploit", "windfall"]


def _farmer_entries(cfg, games=40):
    entries = 0
    for g in range(games):
        state = RULESET.new_game(cfg, "duel")
        advance(state, Rng(g), [PERSONAS["owe_farmer"](), PERSONAS["highest"]()], NUM_ACTIONS)
        entries += sum(1 for e in state.log if e.kind == "owe" and e.seat == 0)
    return entries


def test_exploit_variant_lets_the_farmer_pile_up_entries():
    base = _farmer_entries(RULESET.default_config())
    exploit = _farmer_entries(load_config(RULESET, RULESET.variants_dir / "exploit_owe_every_round.toml"))
    assert exploit > 1.3 * base


def test_control_variant_changes_no_game():
    base = RULESET.default_config()
    ctrl = load_config(RULESET, RULESET.variants_dir / "control_tie_cap.toml")
    for g in range(20):
        logs = []
        for cfg in (base, ctrl):
            state = RULESET.new_game(cfg, "duel")
            advance(state, Rng(g), [PERSONAS["highest"](), PERSONAS["brute"]()], NUM_ACTIONS)
            logs.append([e.text for e in state.log])
        assert logs[0] == logs[1]

"""The seventeenth wave's machine shortcuts against plain play (issue 16: speed work changes no result).

``apply_action`` converts an action that is not exactly an ``int`` (a numpy integer, an ``IntEnum`` member) with
``int()`` before anything reads it, and tests the landed return (None) first. The tests play the same seeded games
with plain ints and with numpy ints and ``Act`` members: the states agree at every node, value for value and type for
type (a numpy integer compares equal to an int, so the types are checked too).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL
from envs.core.policy import UniformRandom, legal_mask
from envs.wicked_age import RULESET
from envs.wicked_age.actions import Act
from envs.wicked_age.conflict import WickedAgeState
from tests.envs.wicked_age.helpers import config, new_game


def plain_types(value: Any) -> bool:
    """Every number in ``value`` (nested tuples, lists, named tuples) is a plain Python int, bool or float."""
    if isinstance(value, tuple | list):
        return all(plain_types(v) for v in value)
    return not isinstance(value, np.generic)


def everything(state: WickedAgeState) -> tuple[Any, ...]:
    """The state's key, its legal ids, node, player and log (kinds, texts and data), for comparing twins."""
    log = tuple((e.kind, e.text, tuple(sorted((k, repr(v)) for k, v in e.data.items()))) for e in state.log)
    return (state.key(), state._legal, state.node, state._player, log)


@pytest.mark.parametrize(
    ("scenario", "sections"),
    [("duel", {}), ("melee", {}), ("melee", {"melee": {"parties": 5, "build_phase": True}})],
)
@pytest.mark.parametrize("kind", ["numpy", "act"])
def test_actions_of_other_integer_types_play_as_plain_ints(scenario: str, sections: dict, kind: str) -> None:
    cfg = config(**sections)
    actions = RULESET.scenario(scenario).action_count(cfg)
    plain, other = new_game(scenario, cfg), new_game(scenario, cfg)
    rng_a, rng_b, pick = Rng(7), Rng(7), Rng(70)
    decisions = 0
    for _ in range(2500):
        if plain.current_player() == TERMINAL:
            plain, other = new_game(scenario, cfg), new_game(scenario, cfg)
        if plain.current_player() == CHANCE:
            plain.apply_chance(plain.sample_chance(rng_a))
            other.apply_chance(other.sample_chance(rng_b))
        else:
            a = UniformRandom().act(plain, legal_mask(plain, actions), pick)
            plain.apply_action(int(a))
            # an ``Act`` member where the table names the id (a larger melee's challenges beyond it: a numpy int32)
            other.apply_action(np.int64(a) if kind == "numpy" else Act._value2member_map_.get(a, np.int32(a)))
            decisions += 1
        assert everything(other) == everything(plain)
        assert plain_types(other.key()) and plain_types(other._legal)
    assert decisions > 1000

"""Issue 16: the heist's memoised declarations against the rules computed afresh (a brute-force twin)."""

from __future__ import annotations

import pytest

from envs.core.config import config_dict, deep_merge, validate_config
from envs.core.dice import Rng
from envs.storyteller import RULESET
from envs.storyteller.actions import Phase, count_action
from envs.storyteller.config import StorytellerConfig
from envs.storyteller.heist import HeistState


def _config(**sections: object) -> StorytellerConfig:
    cfg = validate_config(StorytellerConfig, deep_merge(config_dict(RULESET.default_config()), sections), "test")
    assert isinstance(cfg, StorytellerConfig)
    return cfg


@pytest.mark.parametrize(
    "sections",
    [{}, {"extended": {"one_roll_per_task": False}}, {"willpower": {"points": 0}}],
)
def test_memoised_declarations_agree_with_the_direct_rules(sections: dict[str, object]) -> None:
    """Counts and picks memoised per config equal Rules 9-11 worked out again, state by state."""
    cfg = _config(**sections)
    checked = 0
    for seed in range(60):
        st = HeistState(cfg)
        rng = Rng(200 + seed)
        while not st.is_terminal():
            if st.is_chance():
                st.apply_chance(st.sample_chance(rng))
                continue
            legal = st.legal_actions()
            if st.phase is Phase.PICK:
                assert legal == st._legal_picks()
                checked += 1
            elif st.phase is Phase.COUNT:
                assert legal == [count_action(n) for n in range(1, st.max_actions + 1) if st._feasible(n, 0, ())]
                checked += 1
            st.apply_action(legal[int(rng.random() * len(legal))])
    assert checked > 300

"""``State.legal_sorted``: an engine that promises increasing legal tuples lets ``advance`` pick a uniform opponent's
move without sorting; the games must be the ones the mask path (which sorts by construction) plays."""

from __future__ import annotations

import pytest

from envs.core.dice import Rng
from envs.core.play import advance
from envs.core.policy import UniformRandom
from envs.core.registry import RULESET_NAMES, get_ruleset

SCENARIOS = [(name, sc) for name in RULESET_NAMES for sc in get_ruleset(name).scenarios]


class ThroughAct(UniformRandom):
    """A subclass: ``advance`` asks its ``act`` with the mask (ids from ``mask.nonzero()``: increasing)."""


def _game(ruleset: str, scenario: str, policy: UniformRandom, seed: int) -> tuple[list[tuple[int, int]], list[float]]:
    rs = get_ruleset(ruleset)
    sc, cfg = rs.scenario(scenario), rs.default_config()
    state = sc.new_game(cfg)
    moves: list[tuple[int, int]] = []

    def hook(s, p, a):
        if type(s).legal_sorted:
            kept = s.legal_tuple()
            assert list(kept) == sorted(kept), f"{type(s).__name__} sets legal_sorted but lists {kept}"
        moves.append((p, a))

    advance(state, Rng(seed), [policy] * sc.players(cfg), sc.action_count(cfg), hook=hook)
    return moves, list(state.returns())


@pytest.mark.parametrize(("ruleset", "scenario"), SCENARIOS)
def test_uniform_opponents_play_the_mask_path_s_games(ruleset: str, scenario: str) -> None:
    for seed in range(12):
        fast = _game(ruleset, scenario, UniformRandom(), seed)
        plain = _game(ruleset, scenario, ThroughAct(), seed)
        assert len(fast[0]) > 3 and fast == plain, (ruleset, scenario, seed)


def test_an_unsorted_tuple_under_the_promise_plays_another_game() -> None:
    """The test above can fail: a state that claims legal_sorted but lists its ids backwards picks otherwise."""
    from tests.toy import RULESET as TOY
    from tests.toy import PigState

    class Backwards(PigState):
        legal_sorted = True

        def legal_actions(self):
            return super().legal_actions()[::-1]

    sc, cfg = TOY.scenario("race"), TOY.default_config()
    games = []
    for policy in (UniformRandom(), ThroughAct()):
        state = Backwards(cfg)
        moves: list[int] = []
        advance(state, Rng(3), [policy] * 2, sc.action_count(cfg), hook=lambda s, p, a, m=moves: m.append(a))
        games.append(moves)
    assert games[0] != games[1]

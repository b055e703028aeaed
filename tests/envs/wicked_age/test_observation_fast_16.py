"""The observation encoder (``observation.py``: kept rows and blocks, packed pieces cached by value) against a plain
encoding written here from its layout, at every node of seeded random games (issue 16: speed work changes no value).

The plain encoding reads the state feature by feature, as the module docstring and ``PARTY_FEATURES`` describe
the layout, with nothing kept or cached: each value as a double, cast to float32 and clipped to 1 at the end.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.core.dice import Rng
from envs.core.game import TERMINAL
from envs.wicked_age import RULESET
from envs.wicked_age import observation as obs
from envs.wicked_age.actions import DECISION_CONTEXTS, party_slots
from envs.wicked_age.conflict import WickedAgeState
from envs.wicked_age.rules import Offer, PcForm, advantage_dice
from envs.wicked_age.stages import Stage
from tests.envs.wicked_age.helpers import config, new_game, random_step


def plain_encoding(state: WickedAgeState, seat: int) -> bytes:
    """The observation of ``seat`` from its layout: one block of 22 features per party slot (the seat first, then
    the others in seat order; absent slots all zeros), then round and conflict progress, the decision kind, the
    forms that fit the seat's action, its first picked form, the standing challenge's roll, the pending offer's
    kind and the seat's part in a pending consequence. Float32 bytes, every feature clipped to at most 1."""
    n = state.num_players
    build, turns = state.stage is Stage.BUILD, state.stage is Stage.TURN
    v: list[float] = []
    for k in range(n):
        p = (seat + k) % n
        ch = state.chars[p]
        # during the build a seat sees its own draft and no other sheet; its own undecided cashing counts for it only
        sheet = (state.drafts[p] if p == seat else [0] * 6) if build else ch.dice
        pending = state.pending_cash[seat] if p == seat else 0
        rolled = list(state.roll_dice[p][:3]) + [0] * 3
        holds = state.adv[p]
        adv_dice = advantage_dice(holds, state.in_conflict, state.rules.keep_advantage, state.cashed[p])
        roll = state.rolls[p]
        v += [1.0, float(state.in_chapter[p]), float(state.in_conflict[p]), float(ch.npc)]
        v += [d / 12.0 for d in sheet]
        v += [d / 12.0 for d in rolled[:3]]
        v += [
            (adv_dice + pending * state.rules.dice_per_entry) / 6.0,
            float(holds[seat]),
            float(state.adv[seat][p]),
            (state.owe.count(p) - pending) / 5.0,
            float(state.challenged[p]),
            float(state.moved[p]),
            0.0 if roll is None else roll.key[0] / 40.0,
            0.0 if roll is None else roll.key[1] / 40.0,
            float(turns and state.challenger == p),
        ]
    v += [0.0] * (22 * (party_slots(n) - n))
    v += [state.round_no / state.rules.max_rounds, state.conflict_no / state.max_conflicts]
    v += [float(state.node == int(c)) for c in DECISION_CONTEXTS]
    v += [float(int(f) in state.available[seat]) for f in PcForm]
    picks = state.picks[seat]
    v += [float(bool(picks) and picks[0] == int(f)) for f in PcForm]
    challenge = state.rolls[state.challenger] if turns and state.challenger is not None else None
    v += [0.0, 0.0] if challenge is None else [challenge.key[0] / 40.0, challenge.key[1] / 40.0]
    kind: Offer | None = None
    if state.offer is not None:
        kind = state.offer.kind
    else:
        kind = state.terms_offer if state.terms is not None and state.terms.name == "OFFERED" else None
    v += [float(kind == o) for o in Offer]
    conseq = state.conseq
    v += [0.0, 0.0] if conseq is None else [float(conseq.winner == seat), float(conseq.loser == seat)]
    assert len(v) == obs.observation_size(n)
    return np.minimum(np.array(v, dtype=np.float32), np.float32(1.0)).tobytes()


def check(state: WickedAgeState, seat: int) -> None:
    """The encoding of ``seat`` equals the plain one; it is a fresh, writable float32 array of its own; and the
    rows the state keeps afterwards are the rows packed afresh (no own view, draft or cashing left in them)."""
    out = state.observation(seat)
    assert out.dtype == np.float32 and out.shape == (obs.observation_size(state.num_players),)
    assert out.flags.writeable and out.flags.c_contiguous
    assert out.tobytes() == plain_encoding(state, seat), (state.stage, state.node, seat)
    kept = list(state._rows)
    assert None not in kept and state._rows_seat == seat
    fresh: list[bytes | None] = [None] * state.num_players
    obs.party_rows(state, fresh, seat)
    assert fresh == kept
    # the caller keeps the array: writing into it changes nothing the state keeps, nor the next encoding
    again = state.observation(seat)
    assert not np.shares_memory(out, again)
    out[:] = 7.0
    assert state.observation(seat).tobytes() == again.tobytes() == plain_encoding(state, seat)


CONFIGS = [
    ("duel", {}),
    ("melee", {}),
    ("duel", {"duel": {"build_phase": True, "opponent": "npc"}}),
    ("melee", {"melee": {"parties": 5, "build_phase": True}, "owe_list": {"dice_per_entry": 2}}),
    ("melee", {"advantage": {"tracking": "single", "keep_when_opponent_out": False}}),
    ("melee", {"advantage": {"keep_when_opponent_out": True}, "contest": {"max_rounds": 2}}),
]


@pytest.mark.parametrize(("scenario", "sections"), CONFIGS)
def test_every_node_of_random_games_and_their_clones_encodes_as_the_plain_encoding(
    scenario: str, sections: dict
) -> None:
    """Seeded random games: at every node every seat's encoding (seat 0 twice, then each other seat, so the rows
    kept for one observer are dropped for the next) equals the plain one; clones taken along the way play on with
    other dice and choices and are checked at each of their nodes, and the original's encodings are unchanged."""
    cfg = config(**sections)
    actions = RULESET.scenario(scenario).action_count(cfg)
    state, rng = new_game(scenario, cfg), Rng(16)
    stages: set[Stage] = set()
    for step in range(700):
        if state.current_player() == TERMINAL:
            state = new_game(scenario, cfg)
        stages.add(state.stage)
        for seat in (0, 0, *range(1, state.num_players)):
            check(state, seat)
        if step % 23 == 0:
            before = [state.observation(s).tobytes() for s in range(state.num_players)]
            twin, twin_rng = state.clone(), Rng(500 + step)
            for _ in range(30):
                if twin.current_player() == TERMINAL:
                    break
                random_step(twin, twin_rng, actions)
                check(twin, 0)
                check(twin, twin.num_players - 1)
            assert [state.observation(s).tobytes() for s in range(state.num_players)] == before
        random_step(state, rng, actions)
    assert {Stage.PICK, Stage.WINDOW, Stage.TURN} <= stages


@pytest.mark.parametrize(("scenario", "sections"), CONFIGS)
@pytest.mark.parametrize("seat", [0, 1])
def test_a_seat_observing_at_its_own_decisions_only_encodes_as_the_plain_encoding(
    scenario: str, sections: dict, seat: int
) -> None:
    """The env's pattern (``GameEnv.step`` observes the agent's seat where it decides): the kept rows and blocks see
    many changes between two encodings, each of which must have dropped them."""
    cfg = config(**sections)
    actions = RULESET.scenario(scenario).action_count(cfg)
    state, rng, observed = new_game(scenario, cfg), Rng(40 + seat), 0
    for _ in range(3000):
        if state.current_player() == TERMINAL:
            state = new_game(scenario, cfg)
        if state.current_player() == seat:
            assert state.observation(seat).tobytes() == plain_encoding(state, seat)
            observed += 1
        random_step(state, rng, actions)
    assert observed > 300


def test_value_caches_emptied_or_overflowing_encode_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The packed pieces cached by value (sheets, rolled dice, opening rolls, pending blocks) are only caches: with
    a limit of two entries (emptied at nearly every new value) and emptied outright every few steps, the encodings
    still equal the plain ones."""
    monkeypatch.setattr(obs, "_CACHE_LIMIT", 2)
    cfg = config(melee={"parties": 5, "build_phase": True})
    actions = RULESET.scenario("melee").action_count(cfg)
    state, rng = new_game("melee", cfg), Rng(3)
    for step in range(1500):
        if state.current_player() == TERMINAL:
            state = new_game("melee", cfg)
        if step % 7 == 0:
            for cache in obs._CACHES:
                cache.clear()
            state._rows = [None] * state.num_players  # packed again from the emptied caches
        for seat in range(state.num_players):
            assert state.observation(seat).tobytes() == plain_encoding(state, seat)
        random_step(state, rng, actions)
    assert all(len(cache) <= 2 for cache in obs._CACHES)


def test_many_owe_entries_and_cashed_dice_are_clipped_as_the_plain_encoding() -> None:
    """Owe entries and advantage dice above their norms (more than five entries, more than six dice) clip to 1: clones
    of random positions given long owe lists and large cashings (their rows dropped) encode as the plain encoding."""
    cfg = config(melee={"parties": 5})
    actions = RULESET.scenario("melee").action_count(cfg)
    state, rng, clipped = new_game("melee", cfg), Rng(8), 0
    for step in range(400):
        if state.current_player() == TERMINAL:
            state = new_game("melee", cfg)
        twin = state.clone()
        n = twin.num_players
        twin.owe = [p for p in range(n) for _ in range(step % 9)]
        twin.cashed = [(step + p) % 11 for p in range(n)]
        twin._rows = [None] * n
        for seat in range(n):
            assert twin.observation(seat).tobytes() == plain_encoding(twin, seat)
        clipped += step % 9 > 5
        random_step(state, rng, actions)
    assert clipped > 100

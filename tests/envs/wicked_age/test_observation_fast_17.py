"""The seventeenth wave's observation shortcuts against plain computations (issue 16: speed work changes no value).

A party row's head (its first ten features: the present, chapter, conflict and NPC flags and the six sheet dice) is
kept on the state apart from the row (``_heads``), dropped only where one of those values changes, so a row repacked
for a roll, a move or a round's start packs ten features fewer. The tests below compare every kept head with one
written from the layout, at every node of seeded random games and of their clones.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.core.dice import Rng
from envs.core.game import TERMINAL
from envs.wicked_age import RULESET
from envs.wicked_age import observation as obs
from envs.wicked_age.conflict import WickedAgeState
from envs.wicked_age.stages import Stage
from tests.envs.wicked_age.helpers import config, new_game, random_step
from tests.envs.wicked_age.test_observation_fast_16 import CONFIGS as CONFIGS_16
from tests.envs.wicked_age.test_observation_fast_16 import plain_encoding


def plain_head(state: WickedAgeState, p: int) -> bytes:
    """Party ``p``'s first ten features from the layout: present, in chapter, in conflict, NPC, then its six sheet
    dice over 12 clipped to 1 (during the build: no sheet shown), as float32 bytes."""
    ch = state.chars[p]
    sheet = [0] * 6 if state.stage is Stage.BUILD else ch.dice
    v = [1.0, float(state.in_chapter[p]), float(state.in_conflict[p]), float(ch.npc)]
    v += [min(d / 12.0, 1.0) for d in sheet]
    return np.array(v, dtype=np.float32).tobytes()


def check_heads(state: WickedAgeState) -> int:
    """Every head the state keeps equals the plain head of its party, and begins the party's kept row; the number
    of kept heads."""
    kept = 0
    for p, head in enumerate(state._heads):
        if head is None:
            continue
        assert head == plain_head(state, p), (state.stage, state.node, p)
        row = state._rows[p]
        assert row is None or row[:40] == head
        kept += 1
    return kept


CONFIGS = [*CONFIGS_16, ("melee", {"consequences": {"min_die_hit": 8}})]
"""The observation tests' configs, and one where dice under a d8 never lose a size (the variant hook of Rule 3)."""


@pytest.mark.parametrize(("scenario", "sections"), CONFIGS)
def test_kept_heads_are_the_plain_heads_at_every_node_and_in_clones(scenario: str, sections: dict) -> None:
    """Seeded random games observed by seat 0 only (the env's pattern: heads kept over many changes) and now and then
    by every seat: at every node each kept head equals the plain one, and the encoding equals the plain encoding;
    clones play on with other dice and are checked the same way, and leave the original's heads as they were."""
    cfg = config(**sections)
    actions = RULESET.scenario(scenario).action_count(cfg)
    state, rng, kept = new_game(scenario, cfg), Rng(17), 0
    for step in range(1500):
        if state.current_player() == TERMINAL:
            state = new_game(scenario, cfg)
        kept += check_heads(state)
        if state.current_player() == 0 or step % 11 == 0:
            seats = (0,) if step % 11 else range(state.num_players)
            for seat in seats:
                assert state.observation(seat).tobytes() == plain_encoding(state, seat)
            kept += check_heads(state)
        if step % 41 == 0:
            before = list(state._heads)
            twin, twin_rng = state.clone(), Rng(900 + step)
            for _ in range(40):
                if twin.current_player() == TERMINAL:
                    break
                random_step(twin, twin_rng, actions)
                if twin.current_player() == 0:
                    assert twin.observation(0).tobytes() == plain_encoding(twin, 0)
                check_heads(twin)
            assert state._heads == before
        random_step(state, rng, actions)
    assert kept > 1000


def test_a_lost_size_and_leaving_the_conflict_drop_the_head() -> None:
    """The two changes of a head's values outside a conflict's start: a lost size (Rule 3) and leaving the conflict
    (the conflict flag), each dropping the party's kept head with its row."""
    state = new_game("melee", config())
    state._heads[0] = state._rows[0] = b"kept"
    state._lose_size(0, 0)
    assert state._heads[0] is None and state._rows[0] is None
    state._heads[1] = state._rows[1] = b"kept"
    state.in_conflict[1] = True
    state._leave_conflict(1)
    assert state._heads[1] is None and state._rows[1] is None
    state._heads[2] = state._rows[2] = b"kept"
    state._sheet_changed(2)
    assert state._heads[2] is None and state._rows[2] is None


def test_a_packed_row_is_its_head_then_the_full_rows_other_features() -> None:
    """``_ROW_PACK`` of a head packed by ``_HEAD_PACK`` gives the bytes of ``_FULL_ROW_PACK`` of every feature."""
    rolled, key = obs._ROLLED_PACK(0.5, 0.25, 0.0), obs._ROLL_PACK(0.3, 0.1)
    for flags in ((True, False, True), (False, True, False)):
        head = obs._HEAD_PACK(1.0, *flags, 1.0, 0.5, 1 / 3, 0.0, 0.25, 2 / 3)
        tail = (0.5, flags[0], flags[1], 0.2, flags[2], True, key, flags[1])
        full = obs._FULL_ROW_PACK(1.0, *flags, 1.0, 0.5, 1 / 3, 0.0, 0.25, 2 / 3, rolled, *tail)
        assert obs._ROW_PACK(head, rolled, *tail) == full


@pytest.mark.parametrize(("parties", "max_rounds", "max_conflicts"), [(2, 3, 1), (3, 3, 6), (5, 2, 8), (8, 4, 50)])
def test_the_progress_table_holds_the_plain_progress_of_every_round_and_conflict(
    parties: int, max_rounds: int, max_conflicts: int
) -> None:
    """Each block of :func:`obs.progress_table` is the absent slots' zeros, then round and conflict progress from the
    layout (each over its limit, clipped to 1), as float32 bytes."""
    table = obs.progress_table(parties, max_rounds, max_conflicts)
    assert len(table) == max_rounds + 1 and all(len(row) == max_conflicts + 1 for row in table)
    zeros = [0.0] * (obs.PARTY_FEATURES * (max(parties, 4) - parties))
    for r in range(max_rounds + 1):
        for c in range(max_conflicts + 1):
            v = [*zeros, min(r / max_rounds, 1.0), min(c / max_conflicts, 1.0)]
            assert table[r][c] == np.array(v, dtype=np.float32).tobytes(), (r, c)


def test_a_progress_block_outside_the_table_is_packed_as_the_table_packs() -> None:
    """A state whose round or conflict lies beyond its game's limits (set by hand: play never gets there) gets the
    clipped block, packed, and the kept block is the one returned."""
    state = new_game("melee", config())
    for round_no, conflict_no in ((state.rules.max_rounds + 3, 1), (1, state.max_conflicts + 2), (0, 0)):
        state.round_no, state.conflict_no = round_no, conflict_no
        block = obs.progress_block(state)
        assert state._progress is block
        tail = np.frombuffer(block, dtype=np.float32)[-2:]
        expected = [min(round_no / state.rules.max_rounds, 1.0), min(conflict_no / state.max_conflicts, 1.0)]
        assert tail.tolist() == np.array(expected, dtype=np.float32).tolist()

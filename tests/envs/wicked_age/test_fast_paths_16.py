"""The conflict machine's landed transitions against the machine run on from where they stop (issue 16).

The busiest decisions and chance outcomes run the machine on to the next node and set that node's protocol fields
themselves (``conflict._LANDED``: no ``_proceed`` call, no ``_LEGAL_AT`` call). A stop of the machine is a fixed
point of it: run on from there, :meth:`WickedAgeState._proceed` stops at the same node, for the same seat, with the
same menu, and changes nothing. So at every node of seeded random play the state as the transition left it must
equal a clone that ran ``_proceed`` again — a landed transition that left a cursor, the node, the actor or the menu
other than the machine's own steps leave them fails here (as do the kept-menu checks of ``check_fast_state``).
"""

from __future__ import annotations

import pytest

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL
from envs.wicked_age import RULESET
from envs.wicked_age.actions import Ctx, action_count
from envs.wicked_age.conflict import WickedAgeState, npc
from envs.wicked_age.dice import Roll
from envs.wicked_age.stages import Stage
from tests.envs.wicked_age.helpers import config, new_game, random_step, seed_four
from tests.envs.wicked_age.test_fast_paths import check_fast_state

CONFIGS = [
    ("duel", {}),
    ("melee", {}),
    ("duel", {"duel": {"build_phase": True, "opponent": "npc"}}),
    ("melee", {"melee": {"parties": 5, "build_phase": True}, "owe_list": {"dice_per_entry": 2}}),
    ("melee", {"melee": {"parties": 4, "forms_available": 2}}),
    ("melee", {"advantage": {"tracking": "single", "keep_when_opponent_out": False}}),
    ("melee", {"negotiation": {"enabled": False}}),
]


def machine_fields(state: WickedAgeState) -> tuple:
    """Everything a stop fixes: the position (``key``), the protocol fields and the narration so far."""
    return (state.key(), state.node, state.actor, state.current_player(), state.legal_tuple(), len(state.log))


def check_fixed_point(state: WickedAgeState) -> None:
    """Run on from this stop, the machine stops here again and changes nothing."""
    if state.current_player() == TERMINAL:
        return
    twin = state.clone()
    twin._proceed()
    assert machine_fields(twin) == machine_fields(state), state.decision_context()


@pytest.mark.parametrize(("scenario", "sections"), CONFIGS)
def test_every_stop_is_where_the_machine_run_on_stops(scenario: str, sections: dict) -> None:
    cfg = config(**sections)
    actions = RULESET.scenario(scenario).action_count(cfg)
    state, rng = new_game(scenario, cfg), Rng(16)
    seen: set[int] = set()
    for step in range(3000):
        if state.current_player() == TERMINAL:
            state = new_game(scenario, cfg)
        check_fixed_point(state)
        if step % 5 == 0:
            check_fast_state(state)
        seen.add(state.node)
        random_step(state, rng, actions)
    assert len(seen) >= 10  # the walk reached most kinds of node  # noqa: PLR2004


def plain_roll(state: WickedAgeState, outcome: tuple[tuple[int, ...], int]) -> WickedAgeState:
    """A twin that reads an opening or answer roll and then runs the machine's plain steps (``_proceed``: the
    opening rolls' step, the tie step, the turns' steps, the consequence step) instead of the landed shortcuts."""
    twin = state.clone()
    s = twin.actor
    roll = Roll(*outcome)
    twin.rolls[s] = roll
    twin._rows[s] = None
    twin.adv_rolled[s] = twin.advantage_dice(s)
    twin.cash_done = False
    if twin.roll_purpose == Ctx.OPENING_ROLL:
        twin.idx += 1  # the opening rolls go on from the next party
    else:
        twin._resolve_answer(s, roll)
    twin._proceed()
    return twin


@pytest.mark.parametrize(("scenario", "sections"), CONFIGS)
def test_a_roll_lands_where_the_plain_steps_run_to(scenario: str, sections: dict) -> None:
    """Opening and answer rolls: the landed transition (the next roll, the ties, the turn order and the turns' first
    stop, or the consequence) against the plain steps run from the roll."""
    cfg = config(**sections)
    actions = RULESET.scenario(scenario).action_count(cfg)
    state, rng, checked, tied = new_game(scenario, cfg), Rng(7), 0, 0
    for _ in range(4000):
        if state.current_player() == TERMINAL:
            state = new_game(scenario, cfg)
        if state.current_player() == CHANCE and state.node in (Ctx.OPENING_ROLL, Ctx.ANSWER_ROLL):
            outcome = state.sample_chance(rng)
            twin = plain_roll(state, outcome)
            state.apply_chance(outcome)
            assert machine_fields(state)[:5] == machine_fields(twin)[:5]
            checked += 1
            tied += state.stage == Stage.TIE
            continue
        random_step(state, rng, actions)
    assert checked > 200 and tied > 0  # noqa: PLR2004


def test_an_npc_seated_first_picks_and_lands_like_the_machine() -> None:
    """The scenarios seat their NPC last; a chapter built directly with the NPC first (and a PC after it) reaches the
    picks' landings after an NPC's pick too: every stop there is a fixed point as well."""
    chars = [
        npc("Esan", action=(12, 8), maneuvering=(10, 6), self_protection=(6, 4)),
        *(c.copy() for c in seed_four()[:2]),
    ]
    cfg = config()
    state = WickedAgeState(cfg, [c.copy() for c in chars], max_conflicts=3, forms_available=3)
    rng, picks_after_npc = Rng(3), 0
    for _ in range(2000):
        if state.current_player() == TERMINAL:
            state = WickedAgeState(cfg, [c.copy() for c in chars], max_conflicts=3, forms_available=3)
        check_fixed_point(state)
        check_fast_state(state)
        picks_after_npc += state.node == Ctx.PICK_FORM and state.actor == 1
        random_step(state, rng, action_count(3))
    assert picks_after_npc > 20  # noqa: PLR2004

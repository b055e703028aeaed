"""Issue 15, hallownest item 15: movement as the seed has it (docs/rules/hallownest.md, Rules 15 and 21).

Seed (chapter 10, "Клетки"): "Жуки могут попытаться пройти через пространство враждебно настроенного
жука, но это провоцирует атаку." — passing through a hostile bug's space provokes an attack.
Seed ("Провоцированные атаки"): the provoked bug may attack for 1 Stamina — nothing limits it to melee.
Seed ("Удар с отскоком"): "Если жук передвигается над целью и попадает в нее рукопашной атакой" — a pogo
strike is a melee hit made while moving over the target.

Defaults: two Medium bugs (Grace 3, Maneuverability 2, Stamina 3); Nailbug (seat 0) acts first.
"""

from __future__ import annotations

from envs.hallownest.actions import Kind, Phase, action_id
from tests.envs.hallownest.helpers import act, duel, force

EAST, WEST, NORTH = 0, 1, 2


# -- Rule 15: passing through a hostile bug's cell -------------------------------------------------
def test_a_dash_through_the_foes_cell_provokes_it() -> None:
    """Track, Nailbug at 2, Greatbug at 3: the dash east passes through cell 3 and lands on 4.

    Only one enemy-adjacent cell is entered (4), fewer than Maneuverability 2, so only the pass-through
    provokes: Greatbug decides whether to attack for 1 Stamina.
    """
    st = duel(start=(2, 3))
    act(st, Kind.DASH, 0, EAST)
    assert st.bugs[0].pos == (4, 0)
    assert st.phase == Phase.PROVOKED and st.current_player() == 1
    legal = st.legal_actions()
    assert action_id(Kind.DECLINE) in legal
    assert action_id(Kind.PROVOKED, 2) in legal and action_id(Kind.PROVOKED, 3) not in legal  # 1 + 2 <= 3


def test_a_dash_that_does_not_pass_through_the_foe_does_not_provoke() -> None:
    """Nailbug at 1 dashes east to 3, next to Greatbug at 4: one adjacent cell, no pass-through."""
    st = duel(start=(1, 4))
    act(st, Kind.DASH, 0, EAST)
    assert st.phase == Phase.TURN and st.current_player() == 0


def test_a_provoked_attack_from_a_pass_through_is_once_per_round() -> None:
    """Over and back in one turn: the second pass-through provokes nothing (once per round per pair)."""
    st = duel(start=(2, 3), seat0={"stamina": 5})
    act(st, Kind.DASH, 0, EAST)
    act(st, Kind.DECLINE)
    assert st.phase == Phase.TURN and st.bugs[0].pos == (4, 0)
    act(st, Kind.DASH, 0, WEST)
    assert st.phase == Phase.TURN and st.bugs[0].pos == (2, 0)


def test_passing_an_unconscious_bug_provokes_nothing() -> None:
    """The seed: one may move freely through unconscious bugs; an unconscious bug cannot act."""
    st = duel(start=(2, 3))
    st.bugs[1].unconscious = True
    act(st, Kind.DASH, 0, EAST)
    assert st.phase == Phase.TURN


# -- Rule 15: a foe with a ranged weapon is provoked too ---------------------------------------------
def test_a_foe_with_a_thrown_weapon_gets_its_provoked_attack() -> None:
    """Grid; Greatbug holds a tack at (3, 2). Nailbug walks (2,1), (3,1), (4,1): three cells next to it,
    more than Maneuverability 2. The provoked tack attack rolls Grace 3 + Quality 1 + 0 invested = 4 dice."""
    st = duel(arena={"kind": "grid", "start": [[2, 2], [3, 2]]}, seat1={"weapon": "tack"})
    for d in (NORTH, EAST, EAST):
        assert st.phase == Phase.TURN
        act(st, Kind.STEP, 0, d)
    assert st.phase == Phase.PROVOKED and st.current_player() == 1
    act(st, Kind.PROVOKED, 0)
    assert st.phase == Phase.ATTACK_ROLL and st.roll[0] == 3 + 1 + 0
    assert st.bugs[1].stamina == 3 - 1


# -- Rule 21: a pogo strike needs a move over the target ---------------------------------------------
def test_no_pogo_after_a_dash_that_only_lands_next_to_the_target() -> None:
    st = duel(start=(1, 4), seat0={"stamina": 7})
    act(st, Kind.DASH, 0, EAST)  # to 3, next to the foe at 4, not over it
    assert st.phase == Phase.TURN
    assert action_id(Kind.POGO, 1) not in st.legal_actions()


def test_pogo_after_a_jump_over_the_target() -> None:
    """Nailbug (Stamina 7) at 2 jumps over Greatbug at 3 to 4 (provoking it: declined), then pogos: a hit
    bounces (free move 2). The bounce is not another pass over the target: no second pogo without one."""
    st = duel(start=(2, 3), seat0={"stamina": 7})
    act(st, Kind.DASH, 0, EAST)
    act(st, Kind.DECLINE)
    assert action_id(Kind.POGO, 1) in st.legal_actions()
    act(st, Kind.POGO, 1)
    force(st, 1)
    act(st, Kind.NO_DEFENSE)
    force(st, 0)
    assert st.bugs[0].free_move == 2
    assert action_id(Kind.POGO, 1) not in st.legal_actions()


def test_a_pogo_must_follow_the_jump_over_the_target() -> None:
    """Jump over, then step away and back: the pogo is gone (it is struck while moving over the target)."""
    st = duel(start=(2, 3), seat0={"stamina": 7})
    act(st, Kind.DASH, 0, EAST)
    act(st, Kind.DECLINE)
    act(st, Kind.STEP, 0, EAST)
    act(st, Kind.STEP, 0, WEST)
    assert st.phase == Phase.TURN
    assert action_id(Kind.POGO, 1) not in st.legal_actions()


def test_pogo_after_any_jump_by_config() -> None:
    """``pogo.needs_pass_over = false``: the earlier reading, any dash / jump this turn enables a pogo."""
    st = duel(start=(1, 4), seat0={"stamina": 7}, pogo={"needs_pass_over": False})
    act(st, Kind.DASH, 0, EAST)
    assert action_id(Kind.POGO, 1) in st.legal_actions()


def test_pogo_miss_after_a_second_jump_over_lands_off_balance() -> None:
    """Over and back (the second pass provokes nothing: once per round), then a pogo that misses:
    Stamina 7 - 1 (dash) - 1 (dash) - 1 (pogo, first attack) = 4; Imbalance 1."""
    st = duel(start=(2, 3), seat0={"stamina": 7})
    act(st, Kind.DASH, 0, EAST)
    act(st, Kind.DECLINE)
    act(st, Kind.DASH, 0, WEST)
    act(st, Kind.POGO, 1)
    force(st, 0)
    assert st.bugs[0].imbalance == 1 and st.bugs[0].stamina == 4

"""A golden duel with forced dice, told like the rulebook's own examples (docs/rules/hallownest.md)."""

from __future__ import annotations

from envs.core.game import TERMINAL, EndReason
from envs.hallownest.actions import Kind, Phase
from envs.hallownest.duel import DuelState
from tests.envs.hallownest.helpers import act, config, force


def test_nail_against_great_nail_to_deaths_door_and_death() -> None:
    st = DuelState(config(arena={"start": [[2, 0], [3, 0]]}))
    nail, great = st.bugs

    # Initiative (Rule 9): Nailbug sums 14, Greatbug 9: Nailbug acts first.
    force(st, 14, 9)
    assert st.active == 0 and st.round == 1

    # Nailbug invests 2 Stamina: Might 3 + Quality 1 + 2 = 6 dice with the nail's reroll; 3 successes.
    act(st, Kind.ATTACK, 2)
    assert st.roll == (6, 1, 5) and nail.stamina == 1
    force(st, 3)
    # Greatbug parries with its great nail investing 1: Might 3 + 2 x 1 = 5 dice (its reroll applies); 1 success.
    assert st.current_player() == 1
    act(st, Kind.PARRY, 1)
    assert st.roll == (5, 1, 5) and great.stamina == 1
    force(st, 1)
    # Net 2: a hit, 3 base + min(1, max(3, 2)) extra = 4 potential; Shell 3 dice soak 1: 3 damage.
    force(st, 1)
    assert great.heart == 7 - 3
    act(st, Kind.END_TURN)

    # Greatbug's turn: Stamina refills 1 -> 3. It puts all 3 into one swing: 3 + 1 + 3 = 7 dice; Imbalance +1.
    assert st.active == 1 and great.stamina == 3
    act(st, Kind.ATTACK, 3)
    assert st.roll == (7, 1, 5) and great.stamina == 0 and great.imbalance == 1
    force(st, 4)
    # Nailbug dodges with its last Stamina (nothing invested): Grace 3 dice; 1 success.
    act(st, Kind.DODGE, 0)
    assert st.roll == (3, 0, 5) and nail.stamina == 0
    force(st, 1)
    # Net 3: 4 base + min(2, max(4, 3)) = 6 potential; no soak success: Nailbug drops to Heart 1.
    force(st, 0)
    assert nail.heart == 1
    assert st.decision_context() == "dodge_move"
    act(st, Kind.STAY)
    act(st, Kind.END_TURN)

    # Round 2. Nailbug refills to 3 and makes two small attacks: 1 Stamina, then 1 + tax 1.
    assert st.round == 2 and st.active == 0 and nail.stamina == 3
    act(st, Kind.ATTACK, 1)
    force(st, 2)
    # Greatbug has no Stamina to defend: straight to the soak. 3 + 1 = 4 potential, soak 0: Heart 4 -> 0.
    assert st.phase == Phase.SOAK_ROLL
    force(st, 0)
    assert great.heart == 0 and st.decision_context() == "heart_zero"
    act(st, Kind.DEATHS_DOOR)  # first time since the last Rest: all Stamina restored
    assert great.at_dd and great.stamina == 3
    act(st, Kind.ATTACK, 1)
    assert nail.stamina == 0 and st.log[-1].data["tax"] == 1
    force(st, 1)
    act(st, Kind.PARRY, 1)  # 2 Stamina: Greatbug is left with 1
    force(st, 0)
    force(st, 1)  # 3 damage, soak 1: 2 damage to Stamina 1 -> death
    assert st.current_player() == TERMINAL
    out = st.outcome()
    assert out is not None and out.winner == 0 and out.reason == EndReason.KNOCKOUT
    assert out.returns == (1.0, -1.0)
    assert "Greatbug dies" in st.log[-2].text

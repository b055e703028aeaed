"""Hallownest personas: legal actions only, and each one's own style of spending Stamina."""

from __future__ import annotations

import numpy as np
import pytest

import envs  # noqa: F401
from agents.personas.hallownest import PERSONAS
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL
from envs.core.policy import UniformRandom, legal_mask
from envs.hallownest import RULESET
from envs.hallownest.actions import ACTIONS, NUM_ACTIONS, Kind, Phase
from envs.hallownest.duel import DuelState

Record = tuple[DuelState, int]  # (state before, action) of the persona's seat


def play(persona: str, games: int = 40, opponent: str | None = None) -> list[Record]:
    cfg = RULESET.default_config()
    records: list[Record] = []
    for g in range(games):
        st = RULESET.new_game(cfg, "duel")
        assert isinstance(st, DuelState)
        seat = g % 2
        me = PERSONAS[persona]()
        other = PERSONAS[opponent]() if opponent else UniformRandom()
        rng = Rng(g)
        while st.current_player() != TERMINAL:
            p = st.current_player()
            if p == CHANCE:
                st.apply_chance(st.sample_chance(rng))
                continue
            mask = legal_mask(st, NUM_ACTIONS)
            a = (me if p == seat else other).act(st, mask, rng)
            assert mask[a], f"{persona} chose an illegal action {a}"
            if p == seat:
                records.append((st.clone(), a))
            st.apply_action(a)
    return records


def attacks(records: list[Record]) -> list[Record]:
    return [(s, a) for s, a in records if s.phase == Phase.TURN and ACTIONS[a].kind == Kind.ATTACK]


@pytest.mark.parametrize("name", sorted(PERSONAS))
def test_persona_has_name_and_one_sentence_doc(name: str) -> None:
    cls = PERSONAS[name]
    assert cls.name == name
    doc = " ".join((cls.__doc__ or "").split())
    assert doc.endswith(".") and doc.count(". ") == 0


@pytest.mark.parametrize("name", sorted(PERSONAS))
@pytest.mark.parametrize("opponent", [None, "flurry"])
def test_persona_plays_only_legal_actions(name: str, opponent: str | None) -> None:
    assert play(name, games=20, opponent=opponent)


def test_all_in_puts_all_stamina_into_one_attack() -> None:
    recs = attacks(play("all_in"))
    assert recs
    for s, a in recs:
        me = s.bugs[s.active]
        assert me.attacks_made == 0  # never a second, taxed attack
        expected = me.stamina - 1 if me.at_dd else me.stamina
        assert ACTIONS[a].amount == expected


def test_flurry_makes_many_one_stamina_attacks() -> None:
    recs = attacks(play("flurry"))
    assert all(ACTIONS[a].amount == 1 for _, a in recs)
    assert sum(1 for s, _ in recs if s.bugs[s.active].attacks_made >= 1) > len(recs) / 4


def test_turtle_keeps_two_stamina_for_defense() -> None:
    recs = play("turtle")
    atk = attacks(recs)
    assert atk
    for s, a in atk:
        assert s.bugs[s.active].stamina - ACTIONS[a].amount >= 2
    defenses = [(s, a) for s, a in recs if s.phase == Phase.DEFENSE]
    assert defenses and all(
        ACTIONS[a].kind != Kind.NO_DEFENSE
        for s, a in defenses
        if s.bugs[s.decider].stamina >= 2 and not s.bugs[s.decider].at_dd
    )


def test_balanced_invests_half_and_lets_weak_attacks_through() -> None:
    recs = play("balanced")
    for s, a in attacks(recs):
        me = s.bugs[s.active]
        if not me.at_dd:
            assert ACTIONS[a].amount <= max(1, (me.stamina + 1) // 2)
    weak = [
        (s, a)
        for s, a in recs
        if s.phase == Phase.DEFENSE
        and s.atk is not None
        and s.atk.att_succ == 1
        and s.bugs[s.decider].heart > 3
        and not s.bugs[s.decider].at_dd
    ]
    assert weak and all(ACTIONS[a].kind == Kind.NO_DEFENSE for _, a in weak)


def test_personas_are_distinct() -> None:
    """Average Stamina invested per attack differs: all_in > balanced > flurry = 1."""

    def mean_invest(name: str) -> float:
        return float(np.mean([ACTIONS[a].amount for _, a in attacks(play(name, games=20))]))

    assert mean_invest("all_in") > mean_invest("balanced") > mean_invest("flurry") == 1.0

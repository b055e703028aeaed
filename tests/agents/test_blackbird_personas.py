"""Blackbird personas: only legal actions in both scenarios, and one behavioural property each."""

from __future__ import annotations

import numpy as np
import pytest

from agents.personas.blackbird import PERSONAS
from envs.blackbird import RULESET
from envs.blackbird.actions import Maneuver, SessionAct, duel_spend, session_spend
from envs.blackbird.actions import SessionPhase as Phase
from envs.blackbird.duel import DuelState
from envs.blackbird.session import SessionState
from envs.core.config import with_override
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL
from envs.core.policy import legal_mask

BRAWL, LOCKED_DOOR, RESCUE = 0, 1, 6


def mask_of(state) -> np.ndarray:  # type: ignore[no-untyped-def]
    sc = RULESET.scenario("session" if isinstance(state, SessionState) else "duel")
    return legal_mask(state, sc.action_count(state.cfg))


@pytest.mark.parametrize("scenario", ["session", "duel"])
@pytest.mark.parametrize("name", sorted(PERSONAS))
def test_personas_only_pick_legal_actions(name: str, scenario: str) -> None:
    persona = PERSONAS[name]()
    assert persona.name == name and persona.__doc__ and persona.__doc__.count(".") == 1
    cfg = RULESET.default_config()
    sc = RULESET.scenario(scenario)
    for seed in range(8):
        s = sc.new_game(cfg)
        rng = Rng(seed)
        while s.current_player() != TERMINAL:
            if s.current_player() == CHANCE:
                s.apply_chance(s.sample_chance(rng))
                continue
            m = legal_mask(s, sc.action_count(cfg))
            a = persona.act(s, m, rng)
            assert m[a], (name, s.action_label(a))
            s.apply_action(a)


def at_spend(obstacle: int, trait: int = 0, pool: int | None = None) -> SessionState:
    s = SessionState(RULESET.default_config())  # type: ignore[arg-type]
    s.apply_chance(obstacle)
    if pool is not None:
        s.pool = pool
    s.apply_action(SessionAct.TRAIT_0 + trait)
    s.apply_action(SessionAct.DECLINE_HELP)
    assert s.phase == Phase.SPEND
    return s


def test_greedy_stops_spending_once_the_roll_is_near_its_best() -> None:
    easy = at_spend(LOCKED_DOOR, trait=2)  # difficulty 2 with 3 dice: a few pool dice already reach ~99%
    k = PERSONAS["greedy"]().act(easy, mask_of(easy), Rng(0)) - session_spend(0)
    assert 0 < k < easy.spendable()
    assert easy.pass_chance(k) >= easy.pass_chance(easy.spendable()) - 0.01


def test_hoarder_spends_nothing_on_ordinary_stakes_and_plenty_on_critical() -> None:
    h = PERSONAS["hoarder"]()
    ordinary = at_spend(BRAWL)
    assert h.act(ordinary, mask_of(ordinary), Rng(0)) == session_spend(0)
    critical = at_spend(RESCUE)
    assert h.act(critical, mask_of(critical), Rng(0)) >= session_spend(5)


def test_farmer_throws_an_ordinary_roll_below_the_cap_but_not_at_it() -> None:
    f = PERSONAS["farmer"]()
    s = SessionState(RULESET.default_config())  # type: ignore[arg-type]
    s.apply_chance(BRAWL)
    s.pool = 6
    assert f.act(s, mask_of(s), Rng(0)) == SessionAct.NO_TRAIT
    s.pool = 10
    assert f.act(s, mask_of(s), Rng(0)) == SessionAct.TRAIT_0  # Mercenary: 4 dice, the best


def test_aggressor_attacks_all_out_and_spends_nothing_on_defence() -> None:
    cfg = with_override(RULESET.default_config(), "duel.start_distance", 1)
    d = DuelState(cfg)  # type: ignore[arg-type]
    agg = PERSONAS["aggressor"]()
    assert agg.act(d, mask_of(d), Rng(0)) == Maneuver.ALL_OUT_ATTACK
    d.apply_action(Maneuver.ATTACK)
    assert agg.act(d, mask_of(d), Rng(0)) == duel_spend(d.spendable(0))  # every pool die on the attack
    d.apply_action(duel_spend(0))
    assert agg.act(d, mask_of(d), Rng(0)) == duel_spend(0)  # nothing on defence


def test_defender_readies_braces_and_spends_only_on_defence() -> None:
    d = DuelState(RULESET.default_config())  # type: ignore[arg-type]
    de = PERSONAS["defender"]()
    assert de.act(d, mask_of(d), Rng(0)) == Maneuver.READY
    cfg = with_override(RULESET.default_config(), "duel.start_distance", 1)
    d = DuelState(cfg)  # type: ignore[arg-type]
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))
    assert de.act(d, mask_of(d), Rng(0)) > duel_spend(0)  # defending: spends
    d2 = DuelState(cfg)  # type: ignore[arg-type]
    d2.apply_action(Maneuver.AIM)
    d2.f[0].aim = 2  # Kale has aimed twice: Snargle braces
    assert de.act(d2, mask_of(d2), Rng(0)) == Maneuver.ALL_OUT_DEFENSE
    d2.f[0].aim = 0
    d2.f[1].aim = 3  # fully aimed itself: strike
    assert de.act(d2, mask_of(d2), Rng(0)) == Maneuver.ATTACK


@pytest.mark.parametrize("scenario", ["session", "duel"])
@pytest.mark.parametrize("name", sorted(PERSONAS))
def test_personas_respect_a_restricted_mask(name: str, scenario: str) -> None:
    """Restricted play hands personas a mask with an option group removed: they must stay inside it."""
    persona = PERSONAS[name]()
    cfg = RULESET.default_config()
    sc = RULESET.scenario(scenario)
    for group in sc.option_groups:
        s = sc.new_game(cfg)
        rng = Rng(1)
        while s.current_player() != TERMINAL:
            if s.current_player() == CHANCE:
                s.apply_chance(s.sample_chance(rng))
                continue
            m = legal_mask(s, sc.action_count(cfg))
            r = m.copy()
            for a in s.legal_actions():
                if s.option_of(a) == group:
                    r[a] = False
            if not r.any():
                r = m
            a = persona.act(s, r, rng)
            assert r[a], (name, group, s.action_label(a))
            s.apply_action(a)

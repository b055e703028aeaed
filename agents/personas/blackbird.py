"""Blackbird personas: styles of spending pool dice (session) and of fighting (duel).

Every persona plays both scenarios: the session ones fight by their spending habit, the duel ones
face obstacles with their temperament.
"""

from __future__ import annotations

import numpy as np

from envs.blackbird.actions import DUEL_SPEND_0, SESSION_SPEND_0, Maneuver, SessionAct
from envs.blackbird.actions import DuelPhase as DPhase
from envs.blackbird.actions import SessionPhase as SPhase
from envs.blackbird.dice import beat_probability, pass_probability
from envs.blackbird.duel import DuelState
from envs.blackbird.session import SessionState
from envs.core.dice import Rng
from envs.core.game import State

NEAR_BEST = 0.01
DEFENDER_SAFETY = 0.8


def _legal(mask: np.ndarray) -> list[int]:
    return [int(a) for a in np.flatnonzero(mask)]


def _pick(choice: int, mask: np.ndarray) -> int:
    """The wanted (named) action if legal, else the first legal action."""
    legal = _legal(mask)
    return choice if choice in legal else legal[0]


def _pick_spend(k: int, mask: np.ndarray, spend_0: int) -> int:
    """The action "spend k pool dice" (ids from ``spend_0``) if allowed, else the closest allowed spend.

    Falls back to the first legal action when no spend is allowed at all.
    """
    legal = _legal(mask)
    want = spend_0 + k
    if want in legal:
        return want
    spends = [a for a in legal if a >= spend_0]
    if spends:
        return min(spends, key=lambda a: abs(a - want))
    return legal[0]


def _session_spend(k: int, mask: np.ndarray) -> int:
    return _pick_spend(k, mask, SESSION_SPEND_0)


def _duel_spend(k: int, mask: np.ndarray) -> int:
    return _pick_spend(k, mask, DUEL_SPEND_0)


def _prefer(mask: np.ndarray, *choices: int) -> int:
    """The first of ``choices`` the mask allows (restricted play may forbid some), else the first legal action."""
    for c in choices:
        if mask[c]:
            return int(c)
    return _legal(mask)[0]


def fewest_for(chance: list[float], slack: float = NEAR_BEST, target: float | None = None) -> int:
    """Smallest spend k whose chance is within ``slack`` of the best (or reaches ``target``)."""
    best = max(chance)
    goal = best - slack if target is None else min(target, best)
    return next(k for k, p in enumerate(chance) if p >= goal - 1e-12)


# -- session helpers --------------------------------------------------------------------------------
def session_chances(state: SessionState) -> list[float]:
    return [state.pass_chance(k) for k in range(state.spendable() + 1)]


def best_trait_action(state: SessionState, mask: np.ndarray) -> int:
    """The legal trait choice with the best pass chance at no pool spend."""
    best, best_p = int(SessionAct.NO_TRAIT), -1.0
    for a in _legal(mask):
        t = None if a == SessionAct.NO_TRAIT else a - SessionAct.TRAIT_0
        p = state.pass_chance(0, trait=t)
        if p > best_p + 1e-12:
            best, best_p = a, p
    return best


def session_move(
    state: SessionState, mask: np.ndarray, *, spend: int, help_ok: bool, retry: bool, trait: int | None = None
) -> int:
    ph = state.phase
    if ph == SPhase.TRAIT:
        return _pick(best_trait_action(state, mask) if trait is None else trait, mask)
    if ph == SPhase.HELP:
        yes, no = SessionAct.ACCEPT_HELP, SessionAct.DECLINE_HELP
        return _prefer(mask, *((yes, no) if help_ok else (no, yes)))
    if ph == SPhase.RETRY:
        yes, no = SessionAct.RETRY, SessionAct.GIVE_UP
        return _prefer(mask, *((yes, no) if retry else (no, yes)))
    return _session_spend(spend, mask)


def _critical(state: SessionState) -> bool:
    return state.ob.stake == "critical"


# -- duel helpers ------------------------------------------------------------------------------------
def duel_spend_chances(state: DuelState) -> list[float]:
    """Exact chance of this seat passing the current roll for each spend (defender assumed to add nothing)."""
    so = state.cfg.dice.success_on
    seat = state.decider()
    ks = range(state.spendable(seat) + 1)
    if state.phase == DPhase.CHECK_SPEND:
        diff = max(
            1,
            state.cfg.combat.consciousness_difficulty
            + (0 if state.cfg.pool.enabled else state.cfg.difficulty.without_pool_modifier),
        )
        base = state._roll_pool(seat, state.cfg.duel.stay_up, "stay up", 0, 0).total
        return [pass_probability(base + k, so, diff) for k in ks]
    ex = state.ex
    assert ex is not None
    a, d = ex.attacker, 1 - ex.attacker
    if state.phase == DPhase.ATTACK_SPEND:
        att = state.attack_pool(a, ex.maneuver).total
        if not state.f[d].all_out_attack:
            dfn = state.defense_pool(d, ex.maneuver == Maneuver.CALLED_SHOT).total
            return [beat_probability(att + k, dfn, so, state.penalty(a), state.penalty(d)) for k in ks]
        need = state.cfg.combat.all_out_attack_defense + 1
        return [pass_probability(att + k, so, need, state.penalty(a)) for k in ks]
    att = ex.att_dice.total
    dfn = state.defense_pool(d, ex.maneuver == Maneuver.CALLED_SHOT).total
    return [1.0 - beat_probability(att, dfn + k, so, state.penalty(a), state.penalty(d)) for k in ks]


def plain_attack(state: DuelState, mask: np.ndarray) -> int:
    """Attack if in reach, else close in with move & attack, else move."""
    return _prefer(mask, Maneuver.ATTACK, Maneuver.MOVE_ATTACK, Maneuver.MOVE)


# -- personas ------------------------------------------------------------------------------------------
class Greedy:
    """Spends the fewest pool dice that bring this roll's pass chance within 1 point of its best, every roll."""

    name = "greedy"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if isinstance(state, SessionState):
            spend = fewest_for(session_chances(state)) if state.phase == SPhase.SPEND else 0
            return session_move(state, mask, spend=spend, help_ok=True, retry=True)
        assert isinstance(state, DuelState)
        if state.phase == DPhase.MANEUVER:
            return plain_attack(state, mask)
        return _duel_spend(fewest_for(duel_spend_chances(state)), mask)


class Hoarder:
    """Saves pool dice and help for critical stakes (or, in a fight, for defence when badly hurt and staying up)."""

    name = "hoarder"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if isinstance(state, SessionState):
            crit = _critical(state) if state.obstacle is not None else False
            spend = fewest_for(session_chances(state)) if crit and state.phase == SPhase.SPEND else 0
            return session_move(state, mask, spend=spend, help_ok=crit, retry=crit)
        assert isinstance(state, DuelState)
        if state.phase == DPhase.MANEUVER:
            return plain_attack(state, mask)
        seat = state.decider()
        critical = state.phase == DPhase.CHECK_SPEND or (
            state.phase == DPhase.DEFENSE_SPEND and state.f[seat].hp <= state.cfg.combat.hit_points // 2
        )
        return _duel_spend(fewest_for(duel_spend_chances(state)) if critical else 0, mask)


class Farmer:
    """Throws the first try at each ordinary stake (no trait, pool, help) to grow the pool, then retries in earnest."""

    name = "farmer"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if isinstance(state, SessionState):
            full = state.pool >= state.cfg.pool.cap
            if state.phase == SPhase.RETRY:  # a thrown roll is retried in earnest
                return _prefer(mask, SessionAct.RETRY)
            if state.obstacle is not None and not _critical(state) and not full and state.attempt == 0:
                return session_move(state, mask, spend=0, help_ok=False, retry=True, trait=int(SessionAct.NO_TRAIT))
            spend = fewest_for(session_chances(state)) if state.phase == SPhase.SPEND else 0
            return session_move(state, mask, spend=spend, help_ok=True, retry=True)
        assert isinstance(state, DuelState)
        seat = state.decider()
        full = state.f[seat].pool >= state.cfg.pool.cap
        if state.phase == DPhase.MANEUVER:
            if full:
                return _prefer(mask, Maneuver.ALL_OUT_ATTACK, Maneuver.ATTACK, Maneuver.MOVE_ATTACK, Maneuver.MOVE)
            return plain_attack(state, mask)
        if state.phase == DPhase.ATTACK_SPEND and not full:
            return _duel_spend(0, mask)
        return _duel_spend(state.spendable(seat), mask)


class Aggressor:
    """Goes all-out: all-out attacks (move & attack to close), every pool die on offence, none on defence."""

    name = "aggressor"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if isinstance(state, SessionState):
            spend = state.spendable() if state.phase == SPhase.SPEND else 0
            return session_move(state, mask, spend=spend, help_ok=True, retry=True)
        assert isinstance(state, DuelState)
        seat = state.decider()
        if state.phase == DPhase.MANEUVER:
            return _prefer(mask, Maneuver.ALL_OUT_ATTACK, Maneuver.MOVE_ATTACK, Maneuver.MOVE, Maneuver.ATTACK)
        if state.phase == DPhase.DEFENSE_SPEND:
            return _duel_spend(0, mask)
        return _duel_spend(state.spendable(seat), mask)


class Defender:
    """Counter-puncher: readies out of reach, defends all-out against an aimed blow, spends pool dice only to defend."""

    name = "defender"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if isinstance(state, SessionState):
            spend = fewest_for(session_chances(state), target=0.75) if state.phase == SPhase.SPEND else 0
            return session_move(state, mask, spend=spend, help_ok=True, retry=True)
        assert isinstance(state, DuelState)
        seat = state.decider()
        me, foe = state.f[seat], state.f[1 - seat]
        c = state.cfg.combat
        if state.phase == DPhase.MANEUVER:
            if not state.in_reach():
                return _prefer(mask, Maneuver.READY, Maneuver.MOVE_ATTACK, Maneuver.MOVE)
            if foe.aim >= 2 and not foe.all_out_attack and me.aim < c.aim_max:
                return _prefer(mask, Maneuver.ALL_OUT_DEFENSE, Maneuver.ATTACK)
            return _prefer(mask, Maneuver.ATTACK, Maneuver.CALLED_SHOT, Maneuver.ALL_OUT_DEFENSE)
        if state.phase == DPhase.ATTACK_SPEND:
            return _duel_spend(0, mask)
        return _duel_spend(fewest_for(duel_spend_chances(state), target=DEFENDER_SAFETY), mask)


PERSONAS: dict[str, type] = {
    "greedy": Greedy,
    "hoarder": Hoarder,
    "farmer": Farmer,
    "aggressor": Aggressor,
    "defender": Defender,
}

"""Hallownest personas: four ways to spend Stamina in the duel (attack big, attack often, defend, mix)."""

from __future__ import annotations

import numpy as np

from envs.core.dice import Rng
from envs.core.game import State
from envs.hallownest import rules as R
from envs.hallownest.actions import ACTIONS, DIRECTIONS, Kind, Phase, action_id
from envs.hallownest.duel import DuelState


def _legal(mask: np.ndarray) -> set[int]:
    return {int(a) for a in np.flatnonzero(mask)}


def _first_legal(legal: set[int], candidates: list[int]) -> int | None:
    for a in candidates:
        if a in legal:
            return a
    return None


def _approach(st: DuelState, legal: set[int]) -> int | None:
    """The legal step that brings the active bug closest to its foe (None if already in reach)."""
    me, foe = st.bugs[st.active], st.bugs[1 - st.active]
    reach = me.p.weapon.range if me.p.weapon.ranged else 1
    dist = R.chebyshev(me.pos, foe.pos)
    if dist <= reach:
        return None
    best, best_d = None, dist
    for d in range(8):
        a = action_id(Kind.STEP, 0, d)
        if a in legal:
            dx, dy = DIRECTIONS[d]
            nd = R.chebyshev((me.x + dx, me.y + dy), foe.pos)
            if nd < best_d:
                best, best_d = a, nd
    return best


def _best_defense(st: DuelState, legal: set[int], budget: int) -> int:
    """The parry or dodge with the most dice the bug can buy investing at most ``budget`` extra Stamina."""
    atk = st.atk
    assert atk is not None
    me, foe = st.bugs[atk.target], st.bugs[atk.attacker]
    cfg = st.cfg
    best, best_dice = action_id(Kind.NO_DEFENSE), -1.0
    weight = R.dodge_weight(foe.p.weapon, cfg.dodge.light_weapon_weight)
    for a in legal:
        s = ACTIONS[a]
        if s.amount > budget:
            continue
        if me.at_dd and s.amount + cfg.defense.base_cost >= me.stamina:  # Stamina 0 at Death's Door kills
            continue
        if s.kind == Kind.PARRY:
            dice, rr = R.parry_dice(
                me.p.might,
                me.p.weapon,
                me.p.shield_quality,
                s.amount,
                cfg.parry.weapon_dice_per_stamina,
                cfg.parry.weapon_quality_adds_dice,
                cfg.parry.weapon_reroll_applies,
            )
        elif s.kind == Kind.DODGE:
            dice, rr = R.dodge_dice(me.p.grace, s.amount, weight)
        else:
            continue
        score = dice + 0.5 * rr - 0.01 * s.amount
        if score > best_dice:
            best, best_dice = a, score
    return best


class _Persona:
    """Shared play: walk into reach, then the persona's own turn, defense and reaction choices."""

    name = "base"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        assert isinstance(state, DuelState)
        legal = _legal(mask)
        ph = state.phase
        if ph == Phase.TURN:
            a = self.turn(state, legal)
        elif ph == Phase.DEFENSE:
            a = self.defense(state, legal)
        elif ph == Phase.HEART_ZERO:
            a = _first_legal(legal, [action_id(Kind.DEATHS_DOOR), action_id(Kind.UNCONSCIOUS)])
        elif ph == Phase.DODGE_MOVE:
            a = action_id(Kind.STAY)
        elif ph == Phase.PROVOKED:
            a = self.provoked(state, legal)
        elif ph == Phase.RESIST:
            a = max(legal, key=lambda x: ACTIONS[x].amount)
        else:
            a = None
        if a is None or a not in legal:
            a = min(legal)
        return int(a)

    def attack_plan(self, st: DuelState, legal: set[int]) -> int | None:
        raise NotImplementedError

    def turn(self, st: DuelState, legal: set[int]) -> int | None:
        me = st.bugs[st.active]
        if me.grappled_by >= 0:
            esc = _first_legal(legal, [action_id(Kind.ESCAPE, 0)])
            if esc is not None and me.stamina >= 3:
                return esc
        step = _approach(st, legal)
        if step is not None:
            return step
        plan = self.attack_plan(st, legal)
        if plan is not None:
            return plan
        return action_id(Kind.END_TURN)

    def defense(self, st: DuelState, legal: set[int]) -> int | None:
        me = st.bugs[st.current_player()]
        return _best_defense(st, legal, me.stamina)

    def provoked(self, st: DuelState, legal: set[int]) -> int | None:
        return _first_legal(legal, [action_id(Kind.PROVOKED, 0), action_id(Kind.DECLINE)])


class AllIn(_Persona):
    """Puts all its Stamina into one big attack each turn and defends only with what is left (nothing)."""

    name = "all_in"

    def attack_plan(self, st: DuelState, legal: set[int]) -> int | None:
        me = st.bugs[st.active]
        if me.attacks_made:
            return None
        if me.at_dd:  # spending the last Stamina at Death's Door kills: keep 1
            return _first_legal(legal, [action_id(Kind.ATTACK, k) for k in range(me.stamina - 1, 0, -1)])
        return _first_legal(legal, [action_id(Kind.ATTACK, k) for k in range(me.stamina, 0, -1)])


class Flurry(_Persona):
    """Makes as many small 1-Stamina attacks as the tax allows, then dodges with anything left."""

    name = "flurry"

    def attack_plan(self, st: DuelState, legal: set[int]) -> int | None:
        me = st.bugs[st.active]
        a = action_id(Kind.ATTACK, 1)
        if me.at_dd and 1 + me.attacks_made * st.cfg.stamina.tax_per_attack >= me.stamina:
            return None
        return a if a in legal else None

    def defense(self, st: DuelState, legal: set[int]) -> int | None:
        return _first_legal(legal, [action_id(Kind.DODGE, 0), action_id(Kind.NO_DEFENSE)])


class Turtle(_Persona):
    """Keeps 2 Stamina in reserve for defense, attacks lightly, defends every hit in full and focuses when hurt."""

    name = "turtle"
    reserve = 2

    def turn(self, st: DuelState, legal: set[int]) -> int | None:
        me, foe = st.bugs[st.active], st.bugs[1 - st.active]
        focus = action_id(Kind.FOCUS, min(me.soul, 3)) if me.soul else None
        if focus in legal and me.heart <= me.p.heart // 2 and me.attacks_made == 0 and R.chebyshev(me.pos, foe.pos) > 1:
            return focus
        return super().turn(st, legal)

    def attack_plan(self, st: DuelState, legal: set[int]) -> int | None:
        me = st.bugs[st.active]
        if me.imbalance > 0 and me.stamina > self.reserve:
            return _first_legal(legal, [action_id(Kind.CLEAR_IMBALANCE)])
        if me.attacks_made == 0 and me.stamina - 1 >= self.reserve:
            return _first_legal(legal, [action_id(Kind.ATTACK, 1)])
        return None


class Balanced(_Persona):
    """Invests about half its Stamina in one attack, defends only strong attacks, clears heavy Imbalance."""

    name = "balanced"

    def attack_plan(self, st: DuelState, legal: set[int]) -> int | None:
        me = st.bugs[st.active]
        if me.imbalance >= 2:
            a = _first_legal(legal, [action_id(Kind.CLEAR_IMBALANCE)])
            if a is not None:
                return a
        if me.attacks_made:
            return None
        k = max(1, (me.stamina + 1) // 2)
        if me.at_dd:
            k = min(k, me.stamina - 1)
        return _first_legal(legal, [action_id(Kind.ATTACK, j) for j in range(k, 0, -1)])

    def defense(self, st: DuelState, legal: set[int]) -> int | None:
        atk = st.atk
        assert atk is not None
        me = st.bugs[atk.target]
        if atk.att_succ >= 2 or me.heart <= 3 or me.at_dd:
            budget = 1 if not me.at_dd else max(0, me.stamina - 2)
            return _best_defense(st, legal, budget)
        return action_id(Kind.NO_DEFENSE)


PERSONAS: dict[str, type[_Persona]] = {
    "all_in": AllIn,
    "flurry": Flurry,
    "turtle": Turtle,
    "balanced": Balanced,
}

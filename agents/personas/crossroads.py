"""Crossroads personas: builder, schemer, attacker (plus the built-in random).

Each reads the full :class:`~envs.crossroads.episode.CrossroadsState` and returns a legal action id.
All three assign dice optimally (preferring successes on goal stats still unmarked); they differ in
what they spend on, which scenes they frame and how they use +C. Every -C they give is named to bring the
victim closest to a kill (Rule 12: only "wounded" and "dying" together make a character killable):
"wounded" if it lacks it, else "dying", else another (plain) one; a faction only takes plain ones. Naming
never hurts the giver, so all three name the same way (:data:`GIVE_MINUS_C`, filtered by the mask).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from envs.core.dice import Rng
from envs.crossroads.actions import Act, Phase, Purpose
from envs.crossroads.dice import PERMUTATIONS, max_successes, success_flags
from envs.crossroads.episode import Character, CrossroadsState

GIVE_MINUS_C = (Act.ADD_WOUNDED, Act.ADD_DYING, Act.ADD_MINUS_C)
"""The order a persona names a -C in: legal only while the victim lacks that name, so the first legal one
completes (or starts) the "wounded" + "dying" pair."""


def _first(mask: np.ndarray, prefs: Iterable[int]) -> int | None:
    for a in prefs:
        if 0 <= a < len(mask) and mask[a]:
            return int(a)
    return None


def _any(mask: np.ndarray, rng: Rng) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[int(rng.random() * len(legal))])


def best_assignment(state: CrossroadsState) -> int:
    """The assignment with the most successes; ties broken by successes on unmarked goal stats."""
    roll = state.current_roll()
    assert roll is not None
    dice, stats = roll
    roller = state.entity(state.sides[state.side_i].eid if state.purpose == Purpose.CONFRONT else state.chk_eid)
    assert isinstance(roller, Character)
    goals = roller.goals
    best, best_key = 0, (-1, -1)
    for k, p in enumerate(PERMUTATIONS):
        f = success_flags(dice, p, stats)
        key = (sum(f), sum(1 for i in range(3) if f[i] and not goals[i]))
        if key > best_key:
            best, best_key = k, key
    return Act.ASSIGN_0 + best


def _own_character(state: CrossroadsState, seat: int) -> Character | None:
    for c in state.chars:
        if c.alive and c.personal and c.owner == seat:
            return c
    return None


def _stat_order(state: CrossroadsState, lowest_first: bool) -> list[int]:
    """Stat indices of the roller (spend) / buyer (outcome) ordered by value."""
    e = state.entity(state.chk_eid) if state.phase == Phase.SPEND else state.entity(state.sides[state.side_i].eid)
    if not isinstance(e, Character):
        return [0, 1, 2]
    stats = e.stats
    return sorted(range(3), key=lambda i: (stats[i] if lowest_first else -stats[i], i))


def _build(state: CrossroadsState, mask: np.ndarray, spike: bool) -> int:
    legal = [int(a) for a in np.flatnonzero(mask)]
    target = state.cfg.character.creation_points / 3
    if spike:  # as high as possible on the first stats
        return legal[-1]
    return min(legal, key=lambda a: (abs(a - Act.VALUE_1 + 1 - target), a))


def _lower_influence(state: CrossroadsState, mask: np.ndarray, seat: int) -> int:
    """Cut the Influence of another player's faction, lowest first (to write it off)."""
    others = sorted((f for f in state.factions if f.alive and f.owner != seat), key=lambda f: f.influence)
    pick = _first(mask, [state.faction_target(f.idx) for f in others])
    return pick if pick is not None else int(Act.PASS)


def _common(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    """Decisions every persona makes the same way."""
    p = state.phase
    if p == Phase.ASSIGN:
        return best_assignment(state)
    if p == Phase.LOWER_INFLUENCE:
        return _lower_influence(state, mask, state.actor)
    if p == Phase.LOSER_MARK:
        return _first(mask, [Act.MARK_G, Act.MARK_G + 1, Act.MARK_G + 2, Act.PASS])
    if p == Phase.DEAL_FACTION:
        mine = [
            state.faction_target(f.idx)
            for f in state.factions
            if f.alive and f.owner == state.actor and f.influence < state.cfg.faction.writeoff_high - 1
        ]
        return _first(mask, mine) if _first(mask, mine) is not None else _any(mask, rng)
    if p == Phase.DEAL_AGAINST:
        return _any(mask, rng)
    return None


def _mark_first(state: CrossroadsState) -> list[int]:
    return [Act.MARK_G, Act.MARK_G + 1, Act.MARK_G + 2]


class _Persona:
    """Shared shape: a persona's own choice when the (possibly narrowed) mask allows it, else any allowed move."""

    name = "persona"

    def act(self, state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int:
        pick = self._choose(state, mask, rng)
        return pick if pick is not None and mask[pick] else _any(mask, rng)

    def _choose(self, state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
        raise NotImplementedError


class Builder(_Persona):
    """Grows its character: spends every success on its lowest stat, frames deals, introductions and scenes for
    beauty, buys goal marks and stats."""

    name = "builder"

    def _choose(self, state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
        p = state.phase
        common = _common(state, mask, rng)
        if common is not None:
            return common
        if p == Phase.BUILD:
            return _build(state, mask, spike=False)
        if p == Phase.SPEND:
            return _first(
                mask,
                [Act.STAT_UP_G + i for i in _stat_order(state, True)] + [Act.REMOVE_MINUS_C, Act.GAIN_PLUS_C, Act.PASS],
            )
        if p == Phase.ADMIN_SCENE:
            return _first(
                mask, [Act.SCENE_DEAL, Act.SCENE_INTRO_FACTION, Act.SCENE_INTRO_CHARACTER, Act.SCENE_CONFRONT, Act.PASS]
            )
        if p == Phase.ADMIN_OPPOSITION:  # its own character, which then gets a beauty outcome too
            me = _own_character(state, state.actor)
            return _first(mask, [Act.NO_OPPOSITION, *([Act.TARGET_0 + me.idx] if me else [])])
        if p == Phase.ADMIN_TARGET:
            return _any(mask, rng)
        if p == Phase.ADMIN_AIM:  # no counteraction: a scene for beauty
            return _first(mask, [Act.NO_OPPOSITION, *GIVE_MINUS_C])
        if p == Phase.TARGET_AIM:
            return _first(mask, [*_mark_first(state), *GIVE_MINUS_C, Act.GAIN_PLUS_C])
        if p in (Phase.BURN_BEFORE, Phase.BURN_AFTER):
            return int(Act.PASS)
        if p == Phase.LOSER_TRADE:
            return _first(mask, [Act.TRADE, Act.PASS])
        if p == Phase.BUY_OUTCOME:
            return _first(
                mask,
                [
                    *_mark_first(state),
                    *[Act.STAT_UP_G + i for i in _stat_order(state, True)],
                    Act.INFLUENCE_UP,
                    Act.REMOVE_MINUS_C,
                    Act.GAIN_PLUS_C,
                    Act.PASS,
                ],
            )
        return None


class Schemer(_Persona):
    """Hoards +C: spends successes on +C and burns them only in confrontations, for successes before the roll and
    to reroll bad rolls."""

    name = "schemer"

    def _choose(self, state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
        p = state.phase
        common = _common(state, mask, rng)
        if common is not None:
            return common
        seat = state.actor
        if p == Phase.BUILD:
            return _build(state, mask, spike=False)
        if p == Phase.SPEND:
            return _first(
                mask,
                [Act.GAIN_PLUS_C, Act.REMOVE_MINUS_C, *[Act.STAT_UP_G + i for i in _stat_order(state, True)], Act.PASS],
            )
        if p == Phase.ADMIN_SCENE:
            me = _own_character(state, seat)
            if me is not None and me.plus >= 2:
                return _first(mask, [Act.SCENE_CONFRONT, Act.SCENE_DEAL, Act.SCENE_INTRO_FACTION])
            return _first(
                mask, [Act.SCENE_DEAL, Act.SCENE_INTRO_FACTION, Act.SCENE_INTRO_CHARACTER, Act.SCENE_CONFRONT, Act.PASS]
            )
        if p == Phase.ADMIN_TARGET:
            weakest = sorted(
                (c for c in state.chars if c.alive and c.personal and c.owner != seat),
                key=lambda c: (c.plus, sum(c.stats)),
            )
            return _first(mask, [Act.TARGET_0 + c.idx for c in weakest])
        if p == Phase.ADMIN_OPPOSITION:
            me = _own_character(state, seat)
            return _first(mask, ([Act.TARGET_0 + me.idx] if me else []) + [Act.NO_OPPOSITION])
        if p == Phase.ADMIN_AIM:
            return _first(mask, [Act.UNMARK_G, Act.UNMARK_G + 1, Act.UNMARK_G + 2, *GIVE_MINUS_C])
        if p == Phase.TARGET_AIM:
            return _first(mask, [*_mark_first(state), Act.GAIN_PLUS_C])
        if p == Phase.BURN_BEFORE:
            s = state.sides[state.side_i]
            return _first(mask, [Act.BURN] if s.burned < 2 else [Act.PASS])
        if p == Phase.BURN_AFTER:
            s = state.sides[state.side_i]
            e = state.entity(s.eid)
            if isinstance(e, Character):
                bad = max_successes(s.dice, e.stats) < 2
            else:
                bad = sum(1 for d in s.dice if d <= e.influence) < 2
            return _first(mask, [Act.BURN] if bad else [Act.PASS])
        if p == Phase.LOSER_TRADE:
            return int(Act.PASS)  # +C are never spent on a lost fight
        if p == Phase.BUY_OUTCOME:
            return _first(
                mask,
                [*_mark_first(state), Act.GAIN_PLUS_C, Act.REMOVE_PLUS_C, *GIVE_MINUS_C, Act.INFLUENCE_UP, Act.PASS],
            )
        return None


class Attacker(_Persona):
    """Always confronts the leader: as Admin it sends its own character (or the strongest faction) against the
    leading player and buys harm, unmarks and kills."""

    name = "attacker"

    def _choose(self, state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
        p = state.phase
        common = _common(state, mask, rng)
        if common is not None:
            return common
        seat = state.actor
        if p == Phase.BUILD:
            return _build(state, mask, spike=True)
        if p == Phase.SPEND:
            return _first(
                mask,
                [*[Act.STAT_UP_G + i for i in _stat_order(state, True)], Act.GAIN_PLUS_C, Act.REMOVE_MINUS_C, Act.PASS],
            )
        if p == Phase.ADMIN_SCENE:
            return _first(
                mask, [Act.SCENE_CONFRONT, Act.SCENE_DEAL, Act.SCENE_INTRO_FACTION, Act.SCENE_INTRO_CHARACTER, Act.PASS]
            )
        if p == Phase.ADMIN_TARGET:
            return _first(mask, [Act.TARGET_0 + c.idx for c in self.leaders(state, seat)])
        if p == Phase.ADMIN_OPPOSITION:
            me = _own_character(state, seat)
            prefs = [Act.TARGET_0 + me.idx] if me else []
            facs = sorted((f for f in state.factions if f.alive), key=lambda f: -f.influence)
            prefs += [state.faction_target(f.idx) for f in facs]
            return _first(mask, [*prefs, Act.NO_OPPOSITION])
        if p == Phase.ADMIN_AIM:
            return _first(mask, [Act.UNMARK_G, Act.UNMARK_G + 1, Act.UNMARK_G + 2, *GIVE_MINUS_C])
        if p == Phase.TARGET_AIM:
            return _first(mask, [*GIVE_MINUS_C])
        if p == Phase.BURN_BEFORE:
            s = state.sides[state.side_i]
            return _first(mask, [Act.BURN] if s.burned < 1 else [Act.PASS])
        if p == Phase.BURN_AFTER:
            return int(Act.PASS)
        if p == Phase.LOSER_TRADE:
            return int(Act.PASS)
        if p == Phase.BUY_OUTCOME:
            return _first(mask, self.harm_order(state))
        return None

    @staticmethod
    def leaders(state: CrossroadsState, seat: int) -> list[Character]:
        """Other players' personal characters, the leader's first (most goal boxes, then stats)."""
        return sorted(
            (c for c in state.chars if c.alive and c.personal and c.owner != seat),
            key=lambda c: (-sum(c.goals), -sum(c.stats), c.idx),
        )

    @staticmethod
    def harm_order(state: CrossroadsState) -> list[int]:
        prefs: list[int] = [Act.KILL, Act.UNMARK_G, Act.UNMARK_G + 1, Act.UNMARK_G + 2, *GIVE_MINUS_C]
        opp = state.opponent_side(state.side_i)
        o = state.entity(opp.eid) if opp is not None else None
        if isinstance(o, Character):
            stats = o.stats
            low = sorted(range(3), key=lambda i: stats[i])
            prefs += [Act.HARM2_G + i for i in low] + [Act.HARM_G + i for i in low]
        prefs += [
            Act.INFLUENCE_DOWN,
            Act.REMOVE_PLUS_C,
            *_mark_first(state),
            Act.STAT_UP_G,
            Act.STAT_UP_G + 1,
            Act.STAT_UP_G + 2,
            Act.INFLUENCE_UP,
            Act.PASS,
        ]
        return prefs


PERSONAS = {"builder": Builder, "schemer": Schemer, "attacker": Attacker}

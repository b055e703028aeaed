"""Crossroads personas: builder, schemer, attacker (plus the built-in random).

Each reads the full :class:`~envs.crossroads.episode.CrossroadsState` and returns a legal action id.
All three assign dice optimally (preferring successes on goal stats still unmarked); they differ in
what they spend on, which scenes they frame and how they use +C. Every -C they give is named to bring the
victim closest to a kill (Rule 12: only "wounded" and "dying" together make a character killable):
"wounded" if it lacks it, else "dying", else another (plain) one; a faction only takes plain ones. Naming
never hurts the giver, so all three name the same way (:data:`GIVE_MINUS_C`, filtered by the mask).

A persona plays every decision of a search agent's playouts, so it is written for speed: each one
dispatches on the decision phase through a table, reads action ids as plain ints (an enum member read
costs ~0.1 us in Python 3.11), stops at its first allowed preference without building the rest of the
list, and memoises the two pure computations it repeats (the best assignment of a roll, a stat order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

import numpy as np

from envs.core.dice import Rng
from envs.crossroads.actions import Act, Phase, Purpose
from envs.crossroads.dice import PERMUTATIONS, max_successes, success_flags
from envs.crossroads.episode import Character, CrossroadsState

GIVE_MINUS_C = (Act.ADD_WOUNDED, Act.ADD_DYING, Act.ADD_MINUS_C)
"""The order a persona names a -C in: legal only while the victim lacks that name, so the first legal one
completes (or starts) the "wounded" + "dying" pair."""

# action ids as plain ints (hot path: see the module docstring)
_VALUE_1 = int(Act.VALUE_1)
_ASSIGN_0 = int(Act.ASSIGN_0)
_STAT_UP = tuple(int(Act.STAT_UP_G) + i for i in range(3))
_HARM = tuple(int(Act.HARM_G) + i for i in range(3))
_HARM2 = tuple(int(Act.HARM2_G) + i for i in range(3))
_MARKS = tuple(int(Act.MARK_G) + i for i in range(3))
_UNMARKS = tuple(int(Act.UNMARK_G) + i for i in range(3))
_GIVE = tuple(int(a) for a in GIVE_MINUS_C)
_GAIN_PLUS_C = int(Act.GAIN_PLUS_C)
_REMOVE_MINUS_C = int(Act.REMOVE_MINUS_C)
_REMOVE_PLUS_C = int(Act.REMOVE_PLUS_C)
_KILL = int(Act.KILL)
_INFLUENCE_UP = int(Act.INFLUENCE_UP)
_INFLUENCE_DOWN = int(Act.INFLUENCE_DOWN)
_PASS = int(Act.PASS)
_BURN = int(Act.BURN)
_TRADE = int(Act.TRADE)
_SCENE_INTRO_CHARACTER = int(Act.SCENE_INTRO_CHARACTER)
_SCENE_INTRO_FACTION = int(Act.SCENE_INTRO_FACTION)
_SCENE_DEAL = int(Act.SCENE_DEAL)
_SCENE_CONFRONT = int(Act.SCENE_CONFRONT)
_NO_OPPOSITION = int(Act.NO_OPPOSITION)
_TARGET_0 = int(Act.TARGET_0)
_SPEND_PHASE = int(Phase.SPEND)
_CONFRONT = int(Purpose.CONFRONT)

_SCENES_QUIET = (_SCENE_DEAL, _SCENE_INTRO_FACTION, _SCENE_INTRO_CHARACTER, _SCENE_CONFRONT, _PASS)
_SCENES_ARMED = (_SCENE_CONFRONT, _SCENE_DEAL, _SCENE_INTRO_FACTION)
_SCENES_ATTACK = (_SCENE_CONFRONT, _SCENE_DEAL, _SCENE_INTRO_FACTION, _SCENE_INTRO_CHARACTER, _PASS)
_LOSER_MARKS = (*_MARKS, _PASS)
_SCHEMER_AIM = (*_UNMARKS, *_GIVE)
_SCHEMER_TARGET_AIM = (*_MARKS, _GAIN_PLUS_C)
_SCHEMER_OUTCOMES = (*_MARKS, _GAIN_PLUS_C, _REMOVE_PLUS_C, *_GIVE, _INFLUENCE_UP, _PASS)
_BUILDER_TARGET_AIM = (*_MARKS, *_GIVE, _GAIN_PLUS_C)
_BUILDER_AIM = (_NO_OPPOSITION, *_GIVE)
_BUILDER_OUTCOME_TAIL = (_INFLUENCE_UP, _REMOVE_MINUS_C, _GAIN_PLUS_C, _PASS)
_ATTACK_HARM_HEAD = (_KILL, *_UNMARKS, *_GIVE)
_ATTACK_HARM_TAIL = (_INFLUENCE_DOWN, _REMOVE_PLUS_C, *_MARKS, *_STAT_UP, _INFLUENCE_UP, _PASS)

Choice = Callable[[CrossroadsState, np.ndarray, Rng], "int | None"]


def _first(mask: np.ndarray, prefs: Iterable[int]) -> int | None:
    n = len(mask)
    for a in prefs:
        if 0 <= a < n and mask[a]:
            return int(a)
    return None


def _first_fixed(mask: np.ndarray, prefs: tuple[int, ...]) -> int | None:
    """:func:`_first` over a tuple of non-negative int ids (a mask may be shorter than the action table)."""
    n = len(mask)
    for a in prefs:
        if a < n and mask[a]:
            return a
    return None


def _allows(mask: np.ndarray, a: int) -> bool:
    """Whether ``mask`` allows action ``a`` (false beyond its end, as :func:`_first` reads it)."""
    return a < len(mask) and bool(mask[a])


def _any(mask: np.ndarray, rng: Rng) -> int:
    legal = mask.nonzero()[0]  # the allowed ids in increasing order (np.flatnonzero of a 1-d mask)
    return int(legal[int(rng.random() * len(legal))])


def _best_assignment(dice: tuple[int, ...], stats: tuple[int, int, int], goals: tuple[bool, bool, bool]) -> int:
    """The index into ``PERMUTATIONS`` with the most successes; ties: most successes on unmarked goal stats."""
    best, best_key = 0, (-1, -1)
    for k, p in enumerate(PERMUTATIONS):
        f = success_flags(dice, p, stats)
        key = (sum(f), sum(1 for i in range(3) if f[i] and not goals[i]))
        if key > best_key:
            best, best_key = k, key
    return best


_BEST: dict[tuple[object, ...], int] = {}
"""Memo of :func:`_best_assignment` by (dice, stats, goal boxes)."""
_BEST_LIMIT = 1 << 16


def best_assignment(state: CrossroadsState) -> int:
    """The assignment with the most successes; ties broken by successes on unmarked goal stats."""
    if state.purpose == _CONFRONT:  # the roll being assigned (``state.current_roll()``), read directly
        s = state.sides[state.side_i]
        dice, roller = s.dice, state.entity(s.eid)
    else:
        dice, roller = state.dice, state.entity(state.chk_eid)
    assert isinstance(roller, Character)
    if type(dice) is not tuple:
        dice = tuple(dice)
    g, kh, m = roller.stats
    goals = roller.goals
    key = (dice, g, kh, m, goals[0], goals[1], goals[2])
    k = _BEST.get(key)
    if k is None:
        if len(_BEST) >= _BEST_LIMIT:
            _BEST.clear()
        k = _BEST[key] = _best_assignment(dice, (g, kh, m), (goals[0], goals[1], goals[2]))
    return _ASSIGN_0 + k


def _own_character(state: CrossroadsState, seat: int) -> Character | None:
    for c in state.chars:
        if c.alive and c.personal and c.owner == seat:
            return c
    return None


@lru_cache(maxsize=4096)
def _order(g: int, kh: int, m: int, lowest_first: bool) -> tuple[int, int, int]:
    """Stat indices ordered by value (lowest or highest first), ties in sheet order."""
    stats = (g, kh, m)
    a, b, c = sorted(range(3), key=lambda i: (stats[i] if lowest_first else -stats[i], i))
    return a, b, c


def _stat_order(state: CrossroadsState, lowest_first: bool) -> tuple[int, int, int]:
    """Stat indices of the roller (spend) / buyer (outcome) ordered by value."""
    e = state.entity(state.chk_eid) if state.phase == _SPEND_PHASE else state.entity(state.sides[state.side_i].eid)
    if not isinstance(e, Character):
        return (0, 1, 2)
    g, kh, m = e.stats
    return _order(g, kh, m, lowest_first)


def _stat_ups(state: CrossroadsState, lowest_first: bool) -> list[int]:
    """The +1 stat actions of the roller / buyer, in :func:`_stat_order`."""
    a, b, c = _stat_order(state, lowest_first)
    up = _STAT_UP
    return [up[a], up[b], up[c]]


def _build(state: CrossroadsState, mask: np.ndarray, spike: bool) -> int:
    legal = mask.nonzero()[0].tolist()
    if spike:  # as high as possible on the first stats
        return int(legal[-1])
    target = state.cfg.character.creation_points / 3
    return int(min(legal, key=lambda a: (abs(a - _VALUE_1 + 1 - target), a)))


def _assign(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    return best_assignment(state)


def _lower_influence(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    """Cut the Influence of another player's faction, lowest first (to write it off)."""
    seat = state.actor
    others = sorted((f for f in state.factions if f.alive and f.owner != seat), key=lambda f: f.influence)
    pick = _first(mask, [state.faction_target(f.idx) for f in others])
    return pick if pick is not None else _PASS


def _loser_mark(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    return _first_fixed(mask, _LOSER_MARKS)


def _deal_faction(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    """A deal with one's own faction while it is not about to be written off by it; else any."""
    high = state.settings.writeoff_high - 1
    seat, t0 = state.actor, state.faction_target_0  # faction k is target ``state.faction_target(k)`` = t0 + k
    mine = [t0 + f.idx for f in state.factions if f.alive and f.owner == seat and f.influence < high]
    pick = _first(mask, mine)
    return pick if pick is not None else _any(mask, rng)


def _random_choice(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    return _any(mask, rng)


def _pass(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    return _PASS


_COMMON: dict[int, Choice] = {
    Phase.ASSIGN: _assign,
    Phase.LOWER_INFLUENCE: _lower_influence,
    Phase.LOSER_MARK: _loser_mark,
    Phase.DEAL_FACTION: _deal_faction,
    Phase.DEAL_AGAINST: _random_choice,
}
"""Decisions every persona makes the same way."""


class _Persona:
    """Shared shape: a persona's own choice when the (possibly narrowed) mask allows it, else any allowed move.

    ``choices`` maps each decision phase the persona has a view on to its choice (the common ones too).
    """

    name = "persona"
    choices: dict[int, Choice] = {}

    def act(self, state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int:
        choose = self.choices.get(state.phase)
        pick = choose(state, mask, rng) if choose is not None else None
        return pick if pick is not None and mask[pick] else _any(mask, rng)

    def _choose(self, state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
        """The persona's own choice (``None``: no view; :meth:`act` then plays any allowed move)."""
        choose = self.choices.get(state.phase)
        return choose(state, mask, rng) if choose is not None else None


# -- builder ----------------------------------------------------------------------------------------
def _builder_spend(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    pick = _first(mask, _stat_ups(state, True))
    return pick if pick is not None else _first(mask, (_REMOVE_MINUS_C, _GAIN_PLUS_C, _PASS))


def _builder_opposition(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    """Its own character, which then gets a beauty outcome too."""
    if _allows(mask, _NO_OPPOSITION):
        return _NO_OPPOSITION
    me = _own_character(state, state.actor)
    return _first(mask, (_TARGET_0 + me.idx,)) if me else None


def _builder_outcome(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    pick = _first_fixed(mask, _MARKS)
    if pick is None:
        pick = _first(mask, _stat_ups(state, True))
    return pick if pick is not None else _first_fixed(mask, _BUILDER_OUTCOME_TAIL)


class Builder(_Persona):
    """Grows its character: spends every success on its lowest stat, frames deals, introductions and scenes for
    beauty, buys goal marks and stats."""

    name = "builder"
    choices = {
        **_COMMON,
        Phase.BUILD: lambda state, mask, rng: _build(state, mask, spike=False),
        Phase.SPEND: _builder_spend,
        Phase.ADMIN_SCENE: lambda state, mask, rng: _first_fixed(mask, _SCENES_QUIET),
        Phase.ADMIN_OPPOSITION: _builder_opposition,
        Phase.ADMIN_TARGET: _random_choice,
        Phase.ADMIN_AIM: lambda state, mask, rng: _first_fixed(mask, _BUILDER_AIM),  # no counteraction: beauty
        Phase.TARGET_AIM: lambda state, mask, rng: _first_fixed(mask, _BUILDER_TARGET_AIM),
        Phase.BURN_BEFORE: _pass,
        Phase.BURN_AFTER: _pass,
        Phase.LOSER_TRADE: lambda state, mask, rng: _first(mask, (_TRADE, _PASS)),
        Phase.BUY_OUTCOME: _builder_outcome,
    }


# -- schemer ----------------------------------------------------------------------------------------
def _schemer_spend(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    if _allows(mask, _GAIN_PLUS_C):
        return _GAIN_PLUS_C
    if _allows(mask, _REMOVE_MINUS_C):
        return _REMOVE_MINUS_C
    pick = _first(mask, _stat_ups(state, True))
    return pick if pick is not None else _first(mask, (_PASS,))


def _schemer_scene(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    me = _own_character(state, state.actor)
    return _first_fixed(mask, _SCENES_ARMED if me is not None and me.plus >= 2 else _SCENES_QUIET)


def _schemer_target(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    """The weakest other player's character: fewest +C, then lowest stats."""
    seat = state.actor
    weakest = sorted(
        (c for c in state.chars if c.alive and c.personal and c.owner != seat), key=lambda c: (c.plus, sum(c.stats))
    )
    return _first(mask, [_TARGET_0 + c.idx for c in weakest])


def _schemer_opposition(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    me = _own_character(state, state.actor)
    return _first(mask, (_TARGET_0 + me.idx, _NO_OPPOSITION) if me else (_NO_OPPOSITION,))


def _schemer_burn_before(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    a = _BURN if state.sides[state.side_i].burned < 2 else _PASS
    return a if _allows(mask, a) else None


def _schemer_burn_after(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    """Reroll a bad roll (fewer than two successes)."""
    s = state.sides[state.side_i]
    e = state.entity(s.eid)
    if isinstance(e, Character):
        bad = max_successes(s.dice, e.stats) < 2
    else:
        bad = sum(1 for d in s.dice if d <= e.influence) < 2
    a = _BURN if bad else _PASS
    return a if _allows(mask, a) else None


class Schemer(_Persona):
    """Hoards +C: spends successes on +C and burns them only in confrontations, for successes before the roll and
    to reroll bad rolls."""

    name = "schemer"
    choices = {
        **_COMMON,
        Phase.BUILD: lambda state, mask, rng: _build(state, mask, spike=False),
        Phase.SPEND: _schemer_spend,
        Phase.ADMIN_SCENE: _schemer_scene,
        Phase.ADMIN_TARGET: _schemer_target,
        Phase.ADMIN_OPPOSITION: _schemer_opposition,
        Phase.ADMIN_AIM: lambda state, mask, rng: _first_fixed(mask, _SCHEMER_AIM),
        Phase.TARGET_AIM: lambda state, mask, rng: _first_fixed(mask, _SCHEMER_TARGET_AIM),
        Phase.BURN_BEFORE: _schemer_burn_before,
        Phase.BURN_AFTER: _schemer_burn_after,
        Phase.LOSER_TRADE: _pass,  # +C are never spent on a lost fight
        Phase.BUY_OUTCOME: lambda state, mask, rng: _first_fixed(mask, _SCHEMER_OUTCOMES),
    }


# -- attacker ---------------------------------------------------------------------------------------
def _attacker_spend(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    pick = _first(mask, _stat_ups(state, True))
    return pick if pick is not None else _first(mask, (_GAIN_PLUS_C, _REMOVE_MINUS_C, _PASS))


def _attacker_target(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    return _first(mask, [_TARGET_0 + c.idx for c in Attacker.leaders(state, state.actor)])


def _attacker_opposition(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    """Its own character, else the strongest faction."""
    me = _own_character(state, state.actor)
    prefs = [_TARGET_0 + me.idx] if me else []
    facs = sorted((f for f in state.factions if f.alive), key=lambda f: -f.influence)
    prefs += [state.faction_target(f.idx) for f in facs]
    prefs.append(_NO_OPPOSITION)
    return _first(mask, prefs)


def _attacker_burn_before(state: CrossroadsState, mask: np.ndarray, rng: Rng) -> int | None:
    a = _BURN if state.sides[state.side_i].burned < 1 else _PASS
    return a if _allows(mask, a) else None


class Attacker(_Persona):
    """Always confronts the leader: as Admin it sends its own character (or the strongest faction) against the
    leading player and buys harm, unmarks and kills."""

    name = "attacker"
    choices = {
        **_COMMON,
        Phase.BUILD: lambda state, mask, rng: _build(state, mask, spike=True),
        Phase.SPEND: _attacker_spend,
        Phase.ADMIN_SCENE: lambda state, mask, rng: _first_fixed(mask, _SCENES_ATTACK),
        Phase.ADMIN_TARGET: _attacker_target,
        Phase.ADMIN_OPPOSITION: _attacker_opposition,
        Phase.ADMIN_AIM: lambda state, mask, rng: _first_fixed(mask, _SCHEMER_AIM),
        Phase.TARGET_AIM: lambda state, mask, rng: _first_fixed(mask, _GIVE),
        Phase.BURN_BEFORE: _attacker_burn_before,
        Phase.BURN_AFTER: _pass,
        Phase.LOSER_TRADE: _pass,
        Phase.BUY_OUTCOME: lambda state, mask, rng: _first(mask, Attacker.harm_order(state)),
    }

    @staticmethod
    def leaders(state: CrossroadsState, seat: int) -> list[Character]:
        """Other players' personal characters, the leader's first (most goal boxes, then stats)."""
        return sorted(
            (c for c in state.chars if c.alive and c.personal and c.owner != seat),
            key=lambda c: (-sum(c.goals), -sum(c.stats), c.idx),
        )

    @staticmethod
    def harm_order(state: CrossroadsState) -> list[int]:
        """Kill, unmark, name a -C, then harm the lowest stats (-2 first), then the rest."""
        prefs: list[int] = list(_ATTACK_HARM_HEAD)
        opp = state.opponent_side(state.side_i)
        o = state.entity(opp.eid) if opp is not None else None
        if isinstance(o, Character):
            stats = o.stats
            low = sorted(range(3), key=lambda i: stats[i])
            prefs += [_HARM2[i] for i in low] + [_HARM[i] for i in low]
        prefs += _ATTACK_HARM_TAIL
        return prefs


PERSONAS = {"builder": Builder, "schemer": Schemer, "attacker": Attacker}

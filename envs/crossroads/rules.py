"""Crossroads rule functions: one per numbered rule of docs/rules/crossroads.md.

Pure functions over plain values and small records; the episode (``episode.py``) sequences them and
applies what they decide to its characters and factions. Every configurable number is passed in.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeVar

from envs.core.game import EndReason
from envs.crossroads.dice import PERMUTATIONS, Crossroads, faction_successes, success_flags

E = TypeVar("E", bound=enum.Enum)


def fast_members(enum_cls: type[E]) -> type[E]:
    """A namespace holding the members of ``enum_cls`` as attributes (typed as the enum).

    Reading a member from an enum class (``Phase.SPEND``) costs about 0.4 us in Python 3.11; the value read is the
    enum member itself, so nothing else changes. Hot paths read ``_Phase.SPEND`` from ``_Phase = fast_members(Phase)``.
    The namespace is a module object: Python 3.11 specialises an attribute read from a module (a cached dict slot),
    not one from a class (a type's lookup at every read).
    """
    return _namespace(f"{enum_cls.__name__}Members", dict(enum_cls.__members__))


def int_members(enum_cls: type[E]) -> type[E]:
    """:func:`fast_members` holding each member's plain ``int`` value (typed as the enum).

    For the values the engine stores and compares at every step (its phase, the check's purpose, the scene):
    an ``IntEnum`` member is an ``int`` subclass, so comparing or indexing with it misses the interpreter's
    exact-``int`` fast paths; equal and hashing alike, a plain int reads the same everywhere else.
    """
    return _namespace(f"{enum_cls.__name__}Ints", {name: member.value for name, member in enum_cls.__members__.items()})


def _namespace(name: str, values: dict[str, object]) -> Any:
    """A module object named ``name`` with ``values`` as its attributes (see :func:`fast_members`)."""
    space = types.ModuleType(name)
    space.__dict__.update(values)
    return space


class Stat(enum.IntEnum):
    """Rule 1: the three stats of a character (and the three boxes of its goal), in sheet order."""

    G = 0
    KH = 1
    M = 2


ALL_STATS = tuple(Stat)
"""The three stats in sheet order (a tuple: iterating the enum class itself is slower)."""
STAT_COUNT = len(ALL_STATS)
"""Rule 1: a character has three stats; a check rolls one die per stat (Rule 3)."""

Flags = tuple[bool, bool, bool]
"""Rule 3: per-stat success flags of a check, indexed by :class:`Stat`."""

NO_FLAGS: Flags = (False, False, False)


class MinusC(enum.Enum):
    """Rule 12: what a -C is: "wounded", "dying" or another (plain) condition."""

    WOUNDED = "wounded"
    DYING = "dying"
    PLAIN = "plain"


class EntryKind(enum.Enum):
    """Rule 7: what a player presents at one step of the setup."""

    CHARACTER = "character"
    FACTION = "faction"


class SetupStep(NamedTuple):
    """Rule 7: one step of the setup: a player presents a character or a faction."""

    kind: EntryKind
    seat: int


class Check(NamedTuple):
    """Rules 3/4: the reading of a roll: per-stat success flags and the success count."""

    flags: Flags
    successes: int


class Resolution(NamedTuple):
    """Rules 11.4/11.5: who won a two-sided confrontation and by what degree."""

    won: tuple[bool, bool]
    degree: int

    @property
    def tie(self) -> bool:
        """Both sides won: a shared win."""
        return self.won[0] and self.won[1]


_MinusC = fast_members(MinusC)
_EntryKind = fast_members(EntryKind)
_EndReason = fast_members(EndReason)


# -- Rule 1: characters ---------------------------------------------------------------------------
def stat_values(points_left: int, stats_after: int, stat_min: int, stat_max: int) -> range:
    """Rule 1: the values a stat may take so that the stats still to fill fit in ``stat_min..stat_max``."""
    lo = max(stat_min, points_left - stats_after * stat_max)
    hi = min(stat_max, points_left - stats_after * stat_min)
    return range(lo, hi + 1)


def last_stat(creation_points: int, chosen: Sequence[int]) -> int:
    """Rule 1: the last stat (M) takes the creation points the others left."""
    return creation_points - sum(chosen)


# -- Rules 3 and 4: checks ------------------------------------------------------------------------
def stat_check(dice: Sequence[int], perm: int, stats: Sequence[int]) -> Check:
    """Rule 3: with assignment ``perm`` (see ``dice.PERMUTATIONS``) a die at or below its stat succeeds."""
    flags = success_flags(dice, PERMUTATIONS[perm], stats)
    return Check(flags, sum(flags))


def faction_check(dice: Sequence[int], influence: int, rolls: bool, bonus: int, gate_on_any: bool) -> Check:
    """Rule 4: each die at or below Influence + bonus succeeds; with any success a faction passes every gate.

    ``rolls`` false (``faction.check = "none"``): factions do not roll and get no success.
    """
    if not rolls:
        return Check(NO_FLAGS, 0)
    n = faction_successes(dice, influence + bonus)
    gate = n > 0 and gate_on_any
    return Check((gate, gate, gate), n)


def check_successes(successes: int, burned: int, burn_bonus: int, advantage: int, crossroads: int) -> int:
    """Rules 3, 5, 11.3 and 11.4: a roll's successes plus burnt +C, Advantage and crossroads, never below 0."""
    return max(0, successes + burned * burn_bonus + advantage + crossroads)


# -- Rule 5: crossroads ---------------------------------------------------------------------------
def crossroads_times(kind: Crossroads, triple_twice: bool) -> int:
    """Rule 5: how often a crossroads' effect applies: once, twice for a triple if ``crossroads.triple_twice``."""
    if not kind:  # Crossroads.NONE is 0
        return 0
    return 2 if triple_twice and kind is Crossroads.TRIPLE else 1


def crossroads_success_change(effect: str) -> int:
    """Rule 5: the change in successes of one application of ``crossroads.effect``."""
    if effect == "extra_success":
        return 1
    if effect == "lose_success":
        return -1
    return 0


def missed_matching_stats(dice: Sequence[int], perm: int, flags: Flags) -> list[Stat]:
    """Rule 5 (``goal_box_on_miss``): the stats whose assigned die matches another die and failed."""
    p = PERMUTATIONS[perm]
    return [s for s in ALL_STATS if dice.count(dice[p[s]]) > 1 and not flags[s]]


# -- Rule 6: spending successes -------------------------------------------------------------------
def raised_stat(value: int, by: int, stat_cap: int) -> int:
    """Rule 6: a stat raised by ``by``, never above ``character.stat_cap``."""
    raised = value + by
    return raised if raised < stat_cap else stat_cap  # min() as a comparison (a builtin call parses its arguments)


def double_step_payment(double_step: str, own: bool, plus: int, minus: int) -> int:
    """Rules 6/11.7: the conditions that can pay for a +-2 step (``spend.double_step``).

    ``same_sign``: +2 on oneself costs one of one's +C, -2 on an opponent removes one of its -C;
    ``opposite_sign``: the other sign; ``off``: nothing can pay.
    """
    if double_step == "same_sign":
        return plus if own else minus
    if double_step == "opposite_sign":
        return minus if own else plus
    return 0


def may_gain(count: int, max_conditions: int) -> bool:
    """Rule 1: an entity holds at most ``character.max_conditions`` +C (and as many -C)."""
    return count < max_conditions


def next_minus_c(is_character: bool, wounded: bool, dying: bool) -> MinusC:
    """Rule 12 (``writeoffs.minus_c_names = "automatic"``): a character's first -C is "wounded", then "dying"."""
    if is_character and not wounded:
        return _MinusC.WOUNDED
    if is_character and not dying:
        return _MinusC.DYING
    return _MinusC.PLAIN


def minus_c_choices(automatic: bool, is_character: bool, wounded: bool, dying: bool) -> list[MinusC]:
    """Rule 12: the -C a buyer may name: "wounded" or "dying" if the character lacks it, or another (plain) one.

    A faction's -C are plain; with ``writeoffs.minus_c_names = "automatic"`` nobody names them.
    """
    if automatic or not is_character:
        return [_MinusC.PLAIN]
    out = [_MinusC.PLAIN]
    if not wounded:
        out.append(_MinusC.WOUNDED)
    if not dying:
        out.append(_MinusC.DYING)
    return out


def minus_c_taken(named: MinusC, automatic: bool, is_character: bool, wounded: bool, dying: bool) -> MinusC | None:
    """Rule 12: the -C an entity takes when ``named`` is given; ``None`` if it already holds that one.

    ``automatic`` [decision]: the name is ignored, a character's first -C is "wounded", its second "dying".
    """
    if not is_character:
        return _MinusC.PLAIN
    if automatic:
        return next_minus_c(True, wounded, dying)
    if (named is _MinusC.WOUNDED and wounded) or (named is _MinusC.DYING and dying):
        return None
    return named


def shed_minus_c(minus: int, wounded: bool, dying: bool) -> MinusC:
    """Rule 6: removing a -C removes a plain one first, then "dying", then "wounded"."""
    if minus - wounded - dying > 0:
        return _MinusC.PLAIN
    return _MinusC.DYING if dying else _MinusC.WOUNDED


# -- Rule 7: setup --------------------------------------------------------------------------------
def setup_order(first: int, players: int, factions_per_player: int) -> list[SetupStep]:
    """Rule 7: from the first player, passing left, everyone presents a character; then, in order, factions."""
    order = [(first + k) % players for k in range(players)]
    steps = [SetupStep(_EntryKind.CHARACTER, s) for s in order]
    steps += [SetupStep(_EntryKind.FACTION, s) for s in order for _ in range(factions_per_player)]
    return steps


# -- Rule 8: the Admin ----------------------------------------------------------------------------
def next_admin(admin: int, players: int) -> int:
    """Rule 8: after each scene the Admin role passes left."""
    return (admin + 1) % players


# -- Rule 9: introduction -------------------------------------------------------------------------
def introduced_is_personal(admin_has_personal: bool) -> bool:
    """Rule 9 [decision]: a new character is personal if the Admin has none in play, otherwise common."""
    return not admin_has_personal


# -- Rule 11: confrontation -----------------------------------------------------------------------
def may_reroll(plus: int, repeatable: bool, rerolls: int) -> bool:
    """Rule 11.3: a side with a +C may burn it to reroll; again only if ``confrontation.reroll_repeatable``."""
    return plus > 0 and (repeatable or rerolls == 0)


def resolve(successes: tuple[int, int], tie_degree: int) -> Resolution:
    """Rules 11.4/11.5: the most successes win (a tie is a shared win); degree = the winner's lead.

    With no loser the degree is ``confrontation.tie_degree``.
    """
    a, b = successes
    if a == b:
        return Resolution((True, True), tie_degree)
    return Resolution((True, False), a - b) if a > b else Resolution((False, True), b - a)  # max()/abs() as comparisons


def earns_advantage(enabled: bool, won: bool, alive: bool, personal_character: bool) -> bool:
    """Rule 11.4 [decision]: a faction or common character that wins earns an Advantage."""
    return enabled and won and alive and not personal_character


def may_trade(winner_minus: int, degree: int) -> bool:
    """Rule 11.6: the loser may remove one of the winner's -C to cut the degree, while both remain."""
    return winner_minus > 0 and degree > 0


def markable_boxes(flags: Flags, goals: Sequence[bool]) -> list[Stat]:
    """Rules 11.7/11.8: own goal boxes that may be marked: unmarked, and the roller's die on that stat succeeded."""
    return [s for s in ALL_STATS if flags[s] and not goals[s]]


def unmarkable_boxes(flags: Flags, opponent_goals: Sequence[bool]) -> list[Stat]:
    """Rule 11.7: the opponent's goal boxes a winner may unmark: marked, and the winner's die on the stat succeeded."""
    return [s for s in ALL_STATS if opponent_goals[s] and flags[s]]


# -- Rule 12: write-offs --------------------------------------------------------------------------
def killable(kill_outcome: bool, wounded: bool, dying: bool) -> bool:
    """Rule 12: an outcome may kill a character holding both "wounded" and "dying" (``writeoffs.kill_outcome``)."""
    return kill_outcome and wounded and dying


def lowered_stat(value: int, by: int) -> int:
    """Rule 12: a stat lowered by ``by``, never below 0 (at 0 the character is written off)."""
    lowered = value - by
    return lowered if lowered > 0 else 0  # max() as a comparison


def influence_exit(influence: int, writeoff_low: int, writeoff_high: int) -> str | None:
    """Rule 12: a faction is written off when its Influence falls to ``writeoff_low`` or reaches ``writeoff_high``."""
    if influence <= writeoff_low:
        return "Influence fell to 0"
    if influence >= writeoff_high:
        return f"Influence reached {writeoff_high}"
    return None


def goal_achieved(goals: Sequence[bool]) -> bool:
    """Rule 12: a character that marks all three goal boxes achieves its goal (an exit)."""
    return all(goals)


# -- Rule 13: end of the episode ------------------------------------------------------------------
def episode_end(exits: int, exits_to_end: int, scene_no: int, max_scenes: int) -> EndReason | None:
    """Rule 13: the episode ends after ``episode.exits_to_end`` exits, or at the scene limit (a time limit)."""
    if exits >= exits_to_end:
        return _EndReason.COMPLETED
    if scene_no >= max_scenes:
        return _EndReason.TIME_LIMIT
    return None


# -- the scenario's reward ------------------------------------------------------------------------
def seat_return(
    personal_exits: Sequence[bool],
    influences: Sequence[int],
    start_influence: int,
    goal: float,
    written_off: float,
    faction_weight: float,
) -> float:
    """The episode's return for a seat (docs/rules/crossroads.md, scenario ``episode``).

    ``personal_exits``: one entry per written-off personal character, true if it achieved its goal;
    ``influences``: the Influence of each of the seat's factions (at its exit or now).
    """
    char = sum(goal if achieved else written_off for achieved in personal_exits)
    bound = max(goal, -written_off)
    char = max(-bound, min(bound, char))
    fac = 0.0
    if influences:
        fac = sum(max(-1.0, min(1.0, (i - start_influence) / 4)) for i in influences) / len(influences)
    return char + faction_weight * fac


def winner_of(returns: Sequence[float]) -> int | None:
    """The seat with the single highest return, if it is positive; otherwise nobody."""
    best = max(returns)
    return list(returns).index(best) if best > 0 and list(returns).count(best) == 1 else None

"""Hallownest actions: the action kinds, directions, decision phases, the action table and its labels.

Every action of the duel is one row of :data:`ACTIONS` (a kind, an amount of invested Stamina or Soul,
a direction); its id is its index. The first :data:`NUM_ACTIONS` rows are the table of every config whose
bugs have at most 7 Stamina and Soul (the Rule 5 cap as written) and invest at most 3 in a grapple, a pogo,
an escape or a resistance (the default ``grapple.max_*`` / ``pogo.max_investment``): ``Discrete(82)``.
A config that lets a bug invest more plays a longer prefix of the table, the further rows after the first
ones so that every id keeps its meaning: Stamina or Soul up to 10 (:data:`~envs.hallownest.config.MAX_POOL`)
in an attack, a defense, a provoked attack or a focus, ``Discrete(POOL_NUM_ACTIONS)`` (100); more than 3
in a grapple, pogo, escape or resistance, the whole table, ``Discrete(FULL_NUM_ACTIONS)`` (128). Which
rows are legal is decided by the duel (``duel.py``) from the rules (``rules.py``); the table never caps an
investment the rules allow.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple

from envs.hallownest.config import MAX_POOL


class Kind(enum.IntEnum):
    """What an action does (docs/rules/hallownest.md, the rule in the comment)."""

    END_TURN = 0
    ATTACK = 1  # Rule 11
    GRAPPLE = 2  # Rule 16
    POGO = 3  # Rule 21
    STEP = 4  # Rule 15 (also the dodge move of Rule 12)
    DASH = 5  # Rule 15
    RETREAT = 6  # Rule 15
    CLEAR_IMBALANCE = 7  # Rule 10
    CLEAR_DELAYED = 8  # Rule 17
    CLEAR_STATUS = 9  # Rule 18
    ESCAPE = 10  # Rule 16
    FOCUS = 11  # Rule 20
    NO_DEFENSE = 12  # Rule 12
    PARRY = 13  # Rule 12
    DODGE = 14  # Rule 12
    DEATHS_DOOR = 15  # Rule 14
    UNCONSCIOUS = 16  # Rule 14
    DECLINE = 17  # Rule 15: let a provoking bug pass
    PROVOKED = 18  # Rule 15: the provoked attack
    RESIST = 19  # Rule 16: the grappler resists an escape
    STAY = 20  # Rule 12: a dodging bug stays where it is


class Direction(enum.IntEnum):
    """Rule 15: the eight directions of the grid; a track uses only the first two (east, west)."""

    EAST = 0
    WEST = 1
    NORTH = 2
    SOUTH = 3
    NORTH_EAST = 4
    NORTH_WEST = 5
    SOUTH_EAST = 6
    SOUTH_WEST = 7

    @property
    def delta(self) -> tuple[int, int]:
        """The cell offset ``(dx, dy)`` of one step this way (north is -y)."""
        return DIRECTIONS[self]

    @property
    def label(self) -> str:
        """The direction in the narration (``north-east``)."""
        return DIR_NAMES[self]


DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (-1, 0), (0, -1), (0, 1), (1, -1), (-1, -1), (1, 1), (-1, 1))
DIR_NAMES: tuple[str, ...] = tuple(d.name.lower().replace("_", "-") for d in Direction)
TRACK_DIRECTIONS: tuple[Direction, ...] = (Direction.EAST, Direction.WEST)
GRID_DIRECTIONS: tuple[Direction, ...] = tuple(Direction)


class Phase(enum.IntEnum):
    """Where the duel stands: whose decision it is, or which roll is pending."""

    INITIATIVE = 0  # chance: one bug's initiative total
    TURN = 1  # decision of the active bug
    ATTACK_ROLL = 2  # chance
    DEFENSE = 3  # decision of the target
    DEFENSE_ROLL = 4  # chance
    SOAK_ROLL = 5  # chance
    HEART_ZERO = 6  # decision of the bug at Heart 0
    DODGE_MOVE = 7  # decision of the bug that dodged
    PROVOKED = 8  # decision of the provoked enemy
    RESIST = 9  # decision of the grappler
    ESCAPE_ROLL = 10  # chance
    RESIST_ROLL = 11  # chance
    FOCUS_ROLL = 12  # chance
    OVER = 13


DECISION_CONTEXT: dict[Phase, str] = {
    Phase.TURN: "turn",
    Phase.DEFENSE: "defense",
    Phase.HEART_ZERO: "heart_zero",
    Phase.DODGE_MOVE: "dodge_move",
    Phase.PROVOKED: "provoked",
    Phase.RESIST: "resist_escape",
}
CHANCE_PHASES: frozenset[Phase] = frozenset(
    {
        Phase.INITIATIVE,
        Phase.ATTACK_ROLL,
        Phase.DEFENSE_ROLL,
        Phase.SOAK_ROLL,
        Phase.ESCAPE_ROLL,
        Phase.RESIST_ROLL,
        Phase.FOCUS_ROLL,
    }
)


@dataclass(frozen=True)
class ActionSpec:
    """One row of the action table: a kind, the Stamina (or Soul) it invests, a direction for a move."""

    kind: Kind
    amount: int = 0
    direction: Direction | None = None


MAX_ATTACK_INVEST = 7  # the first rows: a bug's 7 Stamina at most (Rule 5's cap as written)
MAX_SMALL_INVEST = 3  # grapple, pogo (1..3) and escape / resist (0..3) in the first rows: the default keys
MAX_DEFENSE_INVEST = 6  # parry, dodge and provoked attack (0..6): 7 Stamina less the 1 the defense costs
MAX_FOCUS = 7  # 7 Soul at most (Rule 5)

#: the invested amounts each kind offers, in table order
AMOUNTS: dict[Kind, range] = {
    Kind.ATTACK: range(1, MAX_ATTACK_INVEST + 1),
    Kind.GRAPPLE: range(1, MAX_SMALL_INVEST + 1),
    Kind.POGO: range(1, MAX_SMALL_INVEST + 1),
    Kind.ESCAPE: range(0, MAX_SMALL_INVEST + 1),
    Kind.FOCUS: range(1, MAX_FOCUS + 1),
    Kind.PARRY: range(0, MAX_DEFENSE_INVEST + 1),
    Kind.DODGE: range(0, MAX_DEFENSE_INVEST + 1),
    Kind.PROVOKED: range(0, MAX_DEFENSE_INVEST + 1),
    Kind.RESIST: range(0, MAX_SMALL_INVEST + 1),
}
#: the further amounts of the whole table: up to all the Stamina (Soul) a bug can have (Rules 11, 12, 15, 20)
EXTENDED_AMOUNTS: dict[Kind, range] = {
    Kind.ATTACK: range(MAX_ATTACK_INVEST + 1, MAX_POOL + 1),
    Kind.FOCUS: range(MAX_FOCUS + 1, MAX_POOL + 1),
    Kind.PARRY: range(MAX_DEFENSE_INVEST + 1, MAX_POOL + 1),
    Kind.DODGE: range(MAX_DEFENSE_INVEST + 1, MAX_POOL + 1),
    Kind.PROVOKED: range(MAX_DEFENSE_INVEST + 1, MAX_POOL + 1),
}
#: and the last rows: grapple, pogo, escape and resistance past 3, up to all the Stamina a bug can have (Rule 16, 21)
SMALL_EXTENDED_AMOUNTS: dict[Kind, range] = {
    Kind.GRAPPLE: range(MAX_SMALL_INVEST + 1, MAX_POOL + 1),
    Kind.POGO: range(MAX_SMALL_INVEST + 1, MAX_POOL + 1),
    Kind.ESCAPE: range(MAX_SMALL_INVEST + 1, MAX_POOL + 1),
    Kind.RESIST: range(MAX_SMALL_INVEST + 1, MAX_POOL + 1),
}
MOVES: tuple[Kind, ...] = (Kind.STEP, Kind.DASH, Kind.RETREAT)


class InvestCaps(NamedTuple):
    """The most an attack, a defense (parry, dodge, provoked attack) and a focus can invest in a table."""

    attack: int
    defense: int
    focus: int


FIRST_CAPS = InvestCaps(MAX_ATTACK_INVEST, MAX_DEFENSE_INVEST, MAX_FOCUS)
"""What the first :data:`NUM_ACTIONS` rows offer."""
FULL_CAPS = InvestCaps(MAX_POOL, MAX_POOL, MAX_POOL)
"""What the whole table offers: every investment a bug's Stamina and Soul allow."""


def _build_actions() -> tuple[tuple[ActionSpec, ...], tuple[ActionSpec, ...], tuple[ActionSpec, ...]]:
    def invest(kind: Kind) -> list[ActionSpec]:
        return [ActionSpec(kind, k) for k in AMOUNTS[kind]]

    def moves(kind: Kind) -> list[ActionSpec]:
        return [ActionSpec(kind, 0, d) for d in Direction]

    acts: list[ActionSpec] = [ActionSpec(Kind.END_TURN)]
    acts += invest(Kind.ATTACK) + invest(Kind.GRAPPLE) + invest(Kind.POGO)
    acts += moves(Kind.STEP) + moves(Kind.DASH) + moves(Kind.RETREAT)
    acts += [ActionSpec(Kind.CLEAR_IMBALANCE), ActionSpec(Kind.CLEAR_DELAYED), ActionSpec(Kind.CLEAR_STATUS)]
    acts += invest(Kind.ESCAPE) + invest(Kind.FOCUS)
    acts += [ActionSpec(Kind.NO_DEFENSE)] + invest(Kind.PARRY) + invest(Kind.DODGE)
    acts += [ActionSpec(Kind.DEATHS_DOOR), ActionSpec(Kind.UNCONSCIOUS), ActionSpec(Kind.DECLINE)]
    acts += invest(Kind.PROVOKED) + invest(Kind.RESIST)
    acts += [ActionSpec(Kind.STAY)]
    first = len(acts)
    for kind, amounts in EXTENDED_AMOUNTS.items():
        acts += [ActionSpec(kind, k) for k in amounts]
    pool = len(acts)
    for kind, amounts in SMALL_EXTENDED_AMOUNTS.items():
        acts += [ActionSpec(kind, k) for k in amounts]
    return tuple(acts[:first]), tuple(acts[first:pool]), tuple(acts[pool:])


_FIRST, _EXTENDED, _SMALL_EXTENDED = _build_actions()
ACTIONS: tuple[ActionSpec, ...] = _FIRST + _EXTENDED + _SMALL_EXTENDED
NUM_ACTIONS = len(_FIRST)
"""The first rows: the table of a config whose bugs invest at most 7 (the rules as written, Rule 5), and at
most 3 in a grapple, pogo, escape or resistance (the default keys)."""
POOL_NUM_ACTIONS = NUM_ACTIONS + len(_EXTENDED)
"""The first rows and the next: a config whose bugs may invest up to 10 Stamina or Soul (3 in the small kinds)."""
FULL_NUM_ACTIONS = len(ACTIONS)
"""The whole table: a config whose bugs may also invest more than 3 in a grapple, pogo, escape or resistance."""
ACTION_ID: dict[tuple[Kind, int, Direction | None], int] = {
    (s.kind, s.amount, s.direction): i for i, s in enumerate(ACTIONS)
}


def action_id(kind: Kind, amount: int = 0, direction: int | None = None) -> int:
    """The id of a named action (``action_id(Kind.ATTACK, 2)``, ``action_id(Kind.STEP, 0, Direction.WEST)``)."""
    d = None if direction is None or direction < 0 else Direction(direction)
    return ACTION_ID[(kind, amount, d)]


#: ``AMOUNT_BASE[kind] + amount`` is the id of ``kind`` investing ``amount`` of the first rows (consecutive)
AMOUNT_BASE: dict[Kind, int] = {kind: ACTION_ID[(kind, a.start, None)] - a.start for kind, a in AMOUNTS.items()}
assert all(ACTION_ID[(kind, k, None)] == AMOUNT_BASE[kind] + k for kind, a in AMOUNTS.items() for k in a)
#: the same for the further amounts of the whole table (each kind has further rows in one block)
_MORE_AMOUNTS: dict[Kind, range] = {**EXTENDED_AMOUNTS, **SMALL_EXTENDED_AMOUNTS}
assert len(_MORE_AMOUNTS) == len(EXTENDED_AMOUNTS) + len(SMALL_EXTENDED_AMOUNTS)
EXTENDED_BASE: dict[Kind, int] = {kind: ACTION_ID[(kind, a.start, None)] - a.start for kind, a in _MORE_AMOUNTS.items()}
assert all(ACTION_ID[(k, n, None)] == EXTENDED_BASE[k] + n for k, a in _MORE_AMOUNTS.items() for n in a)


def invest_ids(kind: Kind, low: int, high: int) -> list[int]:
    """The ids of ``kind`` investing ``low`` to ``high`` (inclusive, clipped to what the whole table offers).

    Amounts of the first rows come first, then those of the further rows (each part in increasing id).
    """
    amounts = AMOUNTS[kind]
    lo, hi = max(low, amounts.start), min(high, amounts.stop - 1)
    base = AMOUNT_BASE[kind]
    out = list(range(base + lo, base + hi + 1))
    more = _MORE_AMOUNTS.get(kind)
    if more is not None and high >= more.start:
        base = EXTENDED_BASE[kind]
        out.extend(range(base + max(low, more.start), base + min(high, more.stop - 1) + 1))
    return out


def move_id(kind: Kind, direction: Direction) -> int:
    """The id of a step, dash or retreat in ``direction``."""
    return ACTION_ID[(kind, 0, direction)]


END_TURN_ID = action_id(Kind.END_TURN)
CLEAR_IMBALANCE_ID = action_id(Kind.CLEAR_IMBALANCE)
CLEAR_DELAYED_ID = action_id(Kind.CLEAR_DELAYED)
CLEAR_STATUS_ID = action_id(Kind.CLEAR_STATUS)
NO_DEFENSE_ID = action_id(Kind.NO_DEFENSE)
DEATHS_DOOR_ID = action_id(Kind.DEATHS_DOOR)
UNCONSCIOUS_ID = action_id(Kind.UNCONSCIOUS)
DECLINE_ID = action_id(Kind.DECLINE)
STAY_ID = action_id(Kind.STAY)


def action_label(action: int) -> str:
    """The action as the narration names it (``attack invest 2``, ``dash east``, ``focus 3 soul``)."""
    s = ACTIONS[action]
    k = s.kind
    if s.direction is not None:
        return f"{k.name.lower()} {s.direction.label}"
    if k == Kind.FOCUS:
        return f"focus {s.amount} soul"
    if k in AMOUNTS:
        return f"{k.name.lower()} invest {s.amount}"
    return k.name.lower()


# -- option groups (what the discovery stages count and restrict) ---------------------------------
OPTION_OF_KIND: dict[Kind, str] = {
    Kind.END_TURN: "end_turn",
    Kind.GRAPPLE: "grapple",
    Kind.POGO: "pogo",
    Kind.DASH: "dash",
    Kind.RETREAT: "retreat",
    Kind.CLEAR_IMBALANCE: "clear_imbalance",
    Kind.CLEAR_DELAYED: "clear_delayed",
    Kind.CLEAR_STATUS: "clear_status",
    Kind.ESCAPE: "escape",
    Kind.FOCUS: "focus",
    Kind.NO_DEFENSE: "no_defense",
    Kind.PARRY: "parry",
    Kind.DODGE: "dodge",
    Kind.DEATHS_DOOR: "deaths_door",
    Kind.UNCONSCIOUS: "unconscious",
    Kind.DECLINE: "decline_provoked",
    Kind.PROVOKED: "provoked_attack",
    Kind.RESIST: "resist",
    Kind.STAY: "dodge_stay",
    Kind.ATTACK: "attack",
    Kind.STEP: "move",
}
OPTION_GROUPS: tuple[str, ...] = (
    "invest_all",
    "invest_1",
    "invest_some",
    "multi_attack",
    "grapple",
    "pogo",
    "move",
    "dash",
    "retreat",
    "clear_imbalance",
    "clear_delayed",
    "clear_status",
    "escape",
    "focus",
    "end_turn",
    "no_defense",
    "parry",
    "dodge",
    "deaths_door",
    "unconscious",
    "decline_provoked",
    "provoked_attack",
    "resist",
    "dodge_move",
    "dodge_stay",
)


def option_of(action: int, phase: Phase, attacks_made: int, stamina: int) -> str:
    """The option group of ``action``: an attack is grouped by how much it invests, a step by its phase."""
    s = ACTIONS[action]
    if s.kind == Kind.ATTACK:
        if attacks_made >= 1:
            return "multi_attack"
        if s.amount >= stamina:
            return "invest_all"
        return "invest_1" if s.amount == 1 else "invest_some"
    if s.kind == Kind.STEP:
        return "dodge_move" if phase == Phase.DODGE_MOVE else "move"
    return OPTION_OF_KIND[s.kind]

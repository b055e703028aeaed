"""The Storyteller scenarios' action tables, decision phases, option groups and labels.

Heist: ``Discrete(heist_action_count(max_actions))`` (``ACTION_COUNT`` = 22 when at most 3 actions may be
declared, as the rules as written have it; each further action adds two ids at the end: declaring that
many actions, and Willpower on that action); duel: ``Discrete(duel_action_count(max_actions))``
(``DUEL_ACTIONS`` = 8 for one action or two, as the rules as written have it; likewise two ids at the end
per action beyond 2, used when ``extended.one_roll_per_task`` is false). Each action id decodes to
a kind and its arguments (a task slot, an approach, an action number) by the helpers below, so the
states never do arithmetic on raw ids. Rule numbers refer to docs/rules/storyteller.md.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

# -- heist ----------------------------------------------------------------------------------------
SLOTS = 3
"""Task slots of the heist's action table (a job has 1..3 tasks)."""
APPROACHES = 2
"""Approaches per task slot in the action table: the main one and the alternative (bigger pool, higher D)."""
MAX_DECLARED = 3
"""Rule 9: the most actions the first 22 ids of the heist's table declare in one turn (the rules as written)."""


class Act(enum.IntEnum):
    """The heist's action table (see :data:`ACTION_COUNT`)."""

    RETRY = 0
    ABANDON = 1
    ONE_ACTION = 2
    TWO_ACTIONS = 3
    THREE_ACTIONS = 4
    ROLL = 5  # ROLL + 2 * slot + approach   (5..10)
    AUTO = 11  # AUTO + slot                  (11..13)
    NO_WILLPOWER = 14
    WILLPOWER = 15  # WILLPOWER + k-1 (action k)  (15..17)
    ALLY = 18  # ALLY + slot                  (18..20)
    ALLY_REST = 21


ACTION_COUNT = 22
"""Size of the heist's action table when at most :data:`MAX_DECLARED` actions may be declared."""


def heist_action_count(max_actions: int) -> int:
    """Rule 9: the heist's table for up to ``max_actions`` actions a turn: 2 more ids per action beyond 3."""
    return ACTION_COUNT + 2 * max(0, max_actions - MAX_DECLARED)


class Phase(enum.IntEnum):
    """The heist's decision phases (SETUP and RESOLVE are chance nodes)."""

    SETUP = 0
    RETRY = 1
    COUNT = 2
    PICK = 3
    WILLPOWER = 4
    ALLY = 5
    RESOLVE = 6
    OVER = 7


class Status(enum.IntEnum):
    """A heist task's state."""

    ACTIVE = 0
    DONE = 1
    LOST = 2
    PENDING = 3  # reset or failed: waiting for the retry / abandon decision


HEIST_CONTEXTS: dict[Phase, str] = {
    Phase.RETRY: "retry",
    Phase.COUNT: "actions",
    Phase.PICK: "task",
    Phase.WILLPOWER: "willpower",
    Phase.ALLY: "ally",
}
"""The decision context of each heist phase (analysis groups decisions by it)."""
# hot-path aliases (a ``Act.X`` lookup is a descriptor call in Python 3.11)
_ACT_ABANDON, _ACT_ALLY, _ACT_ALLY_REST, _ACT_AUTO = Act.ABANDON, Act.ALLY, Act.ALLY_REST, Act.AUTO
_ACT_NO_WILLPOWER, _ACT_ONE_ACTION, _ACT_RETRY, _ACT_ROLL = Act.NO_WILLPOWER, Act.ONE_ACTION, Act.RETRY, Act.ROLL
_ACT_THREE_ACTIONS, _ACT_WILLPOWER = Act.THREE_ACTIONS, Act.WILLPOWER

HEIST_OPTION_GROUPS: tuple[str, ...] = (
    "single_action",
    "multiple_actions",
    "approach_main",
    "approach_alt",
    "auto_success",
    "willpower",
    "no_willpower",
    "retry",
    "abandon",
    "teamwork",
    "no_teamwork",
)


def count_action(n: int) -> int:
    """The action that declares ``n`` actions this turn (Rule 9; beyond 3: id 22 + 2 (n - 4))."""
    if n <= MAX_DECLARED:
        return _ACT_ONE_ACTION + n - 1
    return ACTION_COUNT + 2 * (n - MAX_DECLARED - 1)


def declared_count(action: int) -> int:
    """How many actions a COUNT action declares (Rule 9)."""
    if action < ACTION_COUNT:
        return action - _ACT_ONE_ACTION + 1
    return MAX_DECLARED + 1 + (action - ACTION_COUNT) // 2


def is_count(action: int) -> bool:
    """An action that declares how many actions the turn has (Rule 9)."""
    if action < ACTION_COUNT:
        return _ACT_ONE_ACTION <= action <= _ACT_THREE_ACTIONS
    return (action - ACTION_COUNT) % 2 == 0


def roll_action(slot: int, approach: int) -> int:
    """The action that rolls task ``slot`` by ``approach``."""
    return _ACT_ROLL + APPROACHES * slot + approach


def roll_target(action: int) -> tuple[int, int]:
    """(slot, approach) of a roll action."""
    slot, approach = divmod(action - _ACT_ROLL, APPROACHES)
    return slot, approach


def auto_action(slot: int) -> int:
    """The action that takes an automatic success on task ``slot`` (Rule 7)."""
    return _ACT_AUTO + slot


def willpower_action(k: int) -> int:
    """The action that spends Willpower on the turn's action ``k`` (0-based, Rule 8; beyond 3: 23 + 2 (k - 3))."""
    if k < MAX_DECLARED:
        return _ACT_WILLPOWER + k
    return ACTION_COUNT + 2 * (k - MAX_DECLARED) + 1


def willpower_index(action: int) -> int:
    """The turn's action (0-based) a Willpower action spends the point on (Rule 8)."""
    if action < ACTION_COUNT:
        return action - _ACT_WILLPOWER
    return MAX_DECLARED + (action - ACTION_COUNT) // 2


def ally_action(slot: int) -> int:
    """The action that sends the ally to task ``slot`` (Rule 14)."""
    return _ACT_ALLY + slot


def is_roll(action: int) -> bool:
    """A roll action (task and approach)."""
    return _ACT_ROLL <= action < _ACT_AUTO


def is_auto(action: int) -> bool:
    """An automatic-success action."""
    return _ACT_AUTO <= action < _ACT_NO_WILLPOWER


def is_willpower(action: int) -> bool:
    """A Willpower action (on some action of the turn)."""
    if action < ACTION_COUNT:
        return _ACT_WILLPOWER <= action < _ACT_ALLY
    return (action - ACTION_COUNT) % 2 == 1


def is_ally(action: int) -> bool:
    """An ally action (on some task)."""
    return _ACT_ALLY <= action < _ACT_ALLY_REST


def heist_option(action: int) -> str:
    """The option group of a heist action."""
    a = int(action)
    if a == _ACT_RETRY:
        return "retry"
    if a == _ACT_ABANDON:
        return "abandon"
    if a == _ACT_ONE_ACTION:
        return "single_action"
    if is_count(a):
        return "multiple_actions"
    if is_roll(a):
        return "approach_alt" if roll_target(a)[1] else "approach_main"
    if is_auto(a):
        return "auto_success"
    if a == _ACT_NO_WILLPOWER:
        return "no_willpower"
    if is_willpower(a):
        return "willpower"
    if is_ally(a):
        return "teamwork"
    return "no_teamwork"


def heist_label(action: int, task_name: Callable[[int], str], approach_label: Callable[[int, int], str]) -> str:
    """A heist action in words; ``task_name(slot)`` and ``approach_label(slot, approach)`` name the job's parts."""
    a = int(action)
    if a == _ACT_RETRY:
        return "retry"
    if a == _ACT_ABANDON:
        return "abandon"
    if is_count(a):
        n = declared_count(a)
        return "one action" if n == 1 else f"{n} actions"
    if is_roll(a):
        s, ap = roll_target(a)
        return f"roll {task_name(s)} ({approach_label(s, ap)})"
    if is_auto(a):
        return f"automatic success on {task_name(a - _ACT_AUTO)}"
    if a == _ACT_NO_WILLPOWER:
        return "no willpower"
    if is_willpower(a):
        return f"willpower on action {willpower_index(a) + 1}"
    if is_ally(a):
        return f"ally helps with {task_name(a - _ACT_ALLY)}"
    if a == _ACT_ALLY_REST:
        return "ally keeps watch"
    return f"action {a}"


# -- duel -----------------------------------------------------------------------------------------
class DAct(enum.IntEnum):
    """The duel's action table."""

    ONE_ACTION = 0
    TWO_ACTIONS = 1
    ATTACK = 2
    ATTACK_ALT = 3
    DEFEND = 4
    NO_WILLPOWER = 5
    WILLPOWER = 6  # Willpower on action 1
    WILLPOWER_2 = 7  # Willpower on action 2


DUEL_ACTIONS = 8
"""Size of the duel's action table when at most :data:`DUEL_MAX_ACTIONS` actions may be declared."""
DUEL_MAX_ACTIONS = 2
"""Rule 9: the most actions the first 8 ids of the duel's table declare (one action, or attack and defend)."""


def duel_action_count(max_actions: int) -> int:
    """Rule 9: the duel's table for up to ``max_actions`` actions a turn: 2 more ids per action beyond 2."""
    return DUEL_ACTIONS + 2 * max(0, max_actions - DUEL_MAX_ACTIONS)


class DPhase(enum.IntEnum):
    """The duel's phases (RESOLVE and TIEBREAK are chance nodes)."""

    COUNT = 0
    PICK = 1
    WILLPOWER = 2
    RESOLVE = 3
    TIEBREAK = 4
    OVER = 5


class Kind(enum.IntEnum):
    """The three rolls a duellist may declare; the index of its pool and difficulty."""

    ATTACK_MAIN = 0
    ATTACK_ALT = 1
    DEFEND = 2

    @property
    def is_attack(self) -> bool:
        """An attack roll (Rule 11: one attack a turn)."""
        return self is not _KIND_DEFEND


ATTACK_MAIN, ATTACK_ALT, DEFEND = Kind.ATTACK_MAIN, Kind.ATTACK_ALT, Kind.DEFEND
KINDS: tuple[Kind, ...] = tuple(Kind)
KIND_NAMES: dict[Kind, str] = {Kind.ATTACK_MAIN: "attack", Kind.ATTACK_ALT: "wild attack", Kind.DEFEND: "defence"}

DUEL_CONTEXTS: dict[DPhase, str] = {DPhase.COUNT: "actions", DPhase.PICK: "action", DPhase.WILLPOWER: "willpower"}
"""The decision context of each duel phase."""
# hot-path aliases (a ``DAct.X`` lookup is a descriptor call in Python 3.11)
_DACT_ATTACK, _DACT_ONE_ACTION, _DACT_WILLPOWER = DAct.ATTACK, DAct.ONE_ACTION, DAct.WILLPOWER
_KIND_DEFEND = Kind.DEFEND

DUEL_OPTION_GROUPS: tuple[str, ...] = (
    "single_action",
    "multiple_actions",
    "attack",
    "approach_alt",
    "defend",
    "willpower",
    "no_willpower",
)

DUEL_LABELS: dict[DAct, str] = {
    DAct.ONE_ACTION: "one action",
    DAct.TWO_ACTIONS: "two actions (split)",
    DAct.ATTACK: "attack",
    DAct.ATTACK_ALT: "wild attack (bigger pool, higher difficulty)",
    DAct.DEFEND: "defend",
    DAct.NO_WILLPOWER: "no willpower",
    DAct.WILLPOWER: "willpower on action 1",
    DAct.WILLPOWER_2: "willpower on action 2",
}

DUEL_OPTIONS: dict[DAct, str] = {
    DAct.ONE_ACTION: "single_action",
    DAct.TWO_ACTIONS: "multiple_actions",
    DAct.ATTACK: "attack",
    DAct.ATTACK_ALT: "approach_alt",
    DAct.DEFEND: "defend",
    DAct.NO_WILLPOWER: "no_willpower",
    DAct.WILLPOWER: "willpower",
    DAct.WILLPOWER_2: "willpower",
}


def duel_count_action(n: int) -> int:
    """The duel action that declares ``n`` actions (Rule 9; beyond 2: id 8 + 2 (n - 3))."""
    if n <= DUEL_MAX_ACTIONS:
        return _DACT_ONE_ACTION + n - 1
    return DUEL_ACTIONS + 2 * (n - DUEL_MAX_ACTIONS - 1)


def duel_declared_count(action: int) -> int:
    """How many actions a duel COUNT action declares (Rule 9)."""
    if action < DUEL_ACTIONS:
        return action - _DACT_ONE_ACTION + 1
    return DUEL_MAX_ACTIONS + 1 + (action - DUEL_ACTIONS) // 2


def duel_willpower_action(k: int) -> int:
    """The duel action that spends Willpower on the turn's action ``k`` (0-based, Rule 8; beyond 2: 9 + 2 (k - 2))."""
    if k < DUEL_MAX_ACTIONS:
        return _DACT_WILLPOWER + k
    return DUEL_ACTIONS + 2 * (k - DUEL_MAX_ACTIONS) + 1


def duel_willpower_index(action: int) -> int:
    """The turn's action (0-based) a duel Willpower action spends the point on (Rule 8)."""
    if action < DUEL_ACTIONS:
        return action - _DACT_WILLPOWER
    return DUEL_MAX_ACTIONS + (action - DUEL_ACTIONS) // 2


def duel_label(action: int) -> str:
    """The label of a duel action id (the first 8 from :data:`DUEL_LABELS`)."""
    if action < DUEL_ACTIONS:
        return DUEL_LABELS[DAct(action)]
    if (action - DUEL_ACTIONS) % 2 == 0:
        return f"{duel_declared_count(action)} actions (split)"
    return f"willpower on action {duel_willpower_index(action) + 1}"


def duel_option(action: int) -> str:
    """The option group of a duel action id (beyond the first 8: multiple actions or Willpower)."""
    if action < DUEL_ACTIONS:
        return DUEL_OPTIONS[DAct(action)]
    return "multiple_actions" if (action - DUEL_ACTIONS) % 2 == 0 else "willpower"


def pick_action(kind: Kind) -> int:
    """The duel action that declares a roll of ``kind``."""
    return _DACT_ATTACK + kind


def picked_kind(action: int) -> Kind:
    """The roll a duel PICK action declares."""
    return KINDS[action - _DACT_ATTACK]  # the member by its value (KINDS is in value order), without Kind(...)

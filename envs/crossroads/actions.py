"""Crossroads actions: the action table, the decision phases and their labels.

One table of action ids serves every decision (69 as written); the decision context (:class:`Phase`)
says which subset is legal. Entities are named by an *entity id*: characters ``0..9`` and factions
``FACTION_BASE + 0..7``, the same numbering as the ``TARGET_0`` actions. A config allowing more characters
or factions (``episode.max_characters`` > 10, ``max_factions`` > 8) gets more target ids: its factions then
start at the state's ``faction_base`` (:func:`num_actions`, ``CrossroadsState.faction_target``).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from envs.crossroads.config import MAX_CHARACTER_SLOTS, MAX_FACTION_SLOTS
from envs.crossroads.dice import PERMUTATIONS, STATS
from envs.crossroads.rules import MinusC

CHARACTER_NAMES = ("Ash", "Bran", "Cora", "Dov", "Eda", "Fen", "Gil", "Hana", "Ivo", "Juno")
FACTION_NAMES = (
    "the Guild",
    "the Watch",
    "the Syndicate",
    "the Temple",
    "the Docks",
    "the Council",
    "the Cartel",
    "the Circle",
)
FACTION_BASE = MAX_CHARACTER_SLOTS
"""Entity id of faction ``k`` is ``FACTION_BASE + k``."""
NUM_ENTITIES = MAX_CHARACTER_SLOTS + MAX_FACTION_SLOTS


def is_faction(eid: int, faction_base: int = FACTION_BASE) -> bool:
    """Whether an entity id names a faction (else a character); ``faction_base``: the config's character slots."""
    return eid >= faction_base


def num_actions(char_slots: int, faction_slots: int) -> int:
    """The size of the action table with ``char_slots`` character and ``faction_slots`` faction targets."""
    return Act.TARGET_0 + char_slots + faction_slots


class Act(enum.IntEnum):
    """The fixed action table. The decision context says which subset is legal."""

    VALUE_1 = 0  # build: the value of the stat being set (VALUE_1 + v - 1)
    ASSIGN_0 = 9  # assign: dice permutation k (ASSIGN_0 + k), see dice.PERMUTATIONS
    STAT_UP_G = 15  # +1 to own stat
    STAT_UP2_G = 18  # +2 to own stat, paying a condition (spend.double_step)
    GAIN_PLUS_C = 21  # own +C
    REMOVE_MINUS_C = 22  # remove own -C
    MARK_G = 23  # mark own goal box (gated on this roll's success on the stat)
    HARM_G = 26  # -1 to the opponent's stat
    HARM2_G = 29  # -2 to the opponent's stat, with a condition (spend.double_step)
    ADD_MINUS_C = 32  # opponent gets a -C: another (plain) condition
    ADD_WOUNDED = 33  # opponent gets the -C "wounded" (Rule 12: the buyer names it)
    ADD_DYING = 34  # opponent gets the -C "dying"
    REMOVE_PLUS_C = 35  # opponent loses a +C
    UNMARK_G = 36  # unmark the opponent's goal box (gated)
    KILL = 39  # kill an opponent holding both "wounded" and "dying"
    INFLUENCE_UP = 40  # own faction +1 Influence
    INFLUENCE_DOWN = 41  # opposing faction -1 Influence
    PUSH_INFLUENCE = 42  # opposing faction +1 Influence (towards its write-off at 8)
    PASS = 43  # stop / forgo / no more
    BURN = 44  # burn a +C (before the roll: +1 success; after: reroll)
    TRADE = 45  # loser removes a -C from the winner: degree -1
    SCENE_INTRO_CHARACTER = 46
    SCENE_INTRO_FACTION = 47
    SCENE_DEAL = 48
    SCENE_CONFRONT = 49
    NO_OPPOSITION = 50  # the opposition: nobody (a key) / in the Admin's aim: no counteraction, a scene for beauty
    TARGET_0 = 51  # entity id e is TARGET_0 + e


NUM_ACTIONS = Act.TARGET_0 + NUM_ENTITIES

MINUS_C_ACTIONS: dict[int, MinusC] = {
    Act.ADD_MINUS_C: MinusC.PLAIN,
    Act.ADD_WOUNDED: MinusC.WOUNDED,
    Act.ADD_DYING: MinusC.DYING,
}
"""Rule 12: the -C a buyer names with each "give -C" action."""
MINUS_C_OF = {kind: act for act, kind in MINUS_C_ACTIONS.items()}

STAT_ACTIONS = (Act.STAT_UP_G, Act.STAT_UP2_G, Act.MARK_G, Act.HARM_G, Act.HARM2_G, Act.UNMARK_G)
"""Actions that come in three, one per stat (``base + Stat``)."""
ASSIGN_ACTIONS = tuple(range(Act.ASSIGN_0, Act.ASSIGN_0 + len(PERMUTATIONS)))


def stat_of(action: int, base: Act) -> int | None:
    """The stat index of ``action`` within the three-action group starting at ``base``, else ``None``."""
    k = action - base
    return k if 0 <= k < len(STATS) else None


def target(eid: int) -> int:
    """The TARGET action naming entity ``eid``."""
    return Act.TARGET_0 + eid


class Phase(enum.IntEnum):
    """Where the game is; decision phases double as decision contexts."""

    BUILD = 0
    ASSIGN = 1
    SPEND = 2
    ADMIN_SCENE = 3
    ADMIN_TARGET = 4
    ADMIN_OPPOSITION = 5
    ADMIN_AIM = 6
    TARGET_AIM = 7
    DEAL_FACTION = 8
    DEAL_AGAINST = 9
    BURN_BEFORE = 10
    BURN_AFTER = 11
    LOSER_TRADE = 12
    BUY_OUTCOME = 13
    LOSER_MARK = 14
    LOWER_INFLUENCE = 15
    ROLL = 16  # chance: 3d10
    FIRST_PLAYER = 17  # chance: who starts
    OVER = 18


NUM_CONTEXTS = 16
"""The decision phases (``Phase.BUILD`` .. ``Phase.LOWER_INFLUENCE``)."""
CONTEXT_NAMES = (
    "build",
    "assign",
    "spend",
    "admin_scene",
    "admin_target",
    "admin_opposition",
    "admin_aim",
    "target_aim",
    "deal_faction",
    "deal_against",
    "burn_before",
    "burn_after",
    "loser_trade",
    "buy_outcome",
    "loser_mark",
    "lower_influence",
)


class Purpose(enum.IntEnum):
    """Why a check is rolled."""

    SPEND = 0  # setup, introduction, deal: spend successes (Rule 6)
    GOAL = 1  # goal achieved: successes lower Influence (Rule 12)
    CONFRONT = 2  # a side of a confrontation (Rule 11)
    BEAUTY = 3  # the target of a confrontation without opposition (Rule 11.2)


class Scene(enum.IntEnum):
    """Rule 8: the scene being played (setup before the first Admin)."""

    SETUP = 0
    INTRO_CHARACTER = 1
    INTRO_FACTION = 2
    DEAL = 3
    CONFRONT = 4
    SKIPPED = 5


_LABELS = {
    Act.GAIN_PLUS_C: "gain +C",
    Act.REMOVE_MINUS_C: "remove -C",
    Act.ADD_MINUS_C: "give -C",
    Act.ADD_WOUNDED: 'give -C "wounded"',
    Act.ADD_DYING: 'give -C "dying"',
    Act.REMOVE_PLUS_C: "strip +C",
    Act.KILL: "kill",
    Act.INFLUENCE_UP: "Influence +1",
    Act.INFLUENCE_DOWN: "their Influence -1",
    Act.PUSH_INFLUENCE: "their Influence +1",
    Act.PASS: "pass",
    Act.BURN: "burn +C",
    Act.TRADE: "remove winner's -C (degree -1)",
    Act.SCENE_INTRO_CHARACTER: "introduce a character",
    Act.SCENE_INTRO_FACTION: "introduce a faction",
    Act.SCENE_DEAL: "deal",
    Act.SCENE_CONFRONT: "confrontation",
    Act.NO_OPPOSITION: "no opposition",
}
_STAT_LABELS = (
    (Act.STAT_UP_G, "+1 {}"),
    (Act.STAT_UP2_G, "+2 {}"),
    (Act.MARK_G, "mark {}"),
    (Act.HARM_G, "their {} -1"),
    (Act.HARM2_G, "their {} -2"),
    (Act.UNMARK_G, "unmark their {}"),
)


def character_name(idx: int) -> str:
    """The name of character slot ``idx`` (fixed names by slot; numbered beyond them)."""
    return CHARACTER_NAMES[idx] if idx < len(CHARACTER_NAMES) else f"character {idx + 1}"


def faction_name(idx: int) -> str:
    """The name of faction slot ``idx`` (fixed names by slot; numbered beyond them)."""
    return FACTION_NAMES[idx] if idx < len(FACTION_NAMES) else f"faction {idx + 1}"


def entity_name(eid: int, faction_base: int = FACTION_BASE) -> str:
    """The name of entity ``eid`` (characters and factions have fixed names by slot)."""
    if not is_faction(eid, faction_base):
        return character_name(eid)
    return faction_name(eid - faction_base)


def label(action: int, roll: Sequence[int] | None = None, faction_base: int = FACTION_BASE) -> str:
    """A short label of ``action``; an assignment names the dice of ``roll`` when one is being assigned."""
    a = int(action)
    if Act.VALUE_1 <= a < Act.ASSIGN_0:
        return f"value {a - Act.VALUE_1 + 1}"
    if Act.ASSIGN_0 <= a < Act.STAT_UP_G:
        p = PERMUTATIONS[a - Act.ASSIGN_0]
        if roll is not None:
            return "assign " + " ".join(f"{name}={roll[p[i]]}" for i, name in enumerate(STATS))
        return f"assign dice {p}"
    if a >= Act.TARGET_0:
        return entity_name(a - Act.TARGET_0, faction_base)
    if a in _LABELS:
        return _LABELS[a]  # type: ignore[index]
    for base, text in _STAT_LABELS:
        i = stat_of(a, base)
        if i is not None:
            return text.format(STATS[i])
    return f"action {a}"

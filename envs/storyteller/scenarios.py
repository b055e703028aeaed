"""The Storyteller scenario setups: the heist's task catalogue, and the rule knobs analysis perturbs.

The task catalogue is the seed's example list (docs/rules/storyteller.md, Scenarios); the duel's two
fighters are config (``[[duel.fighters]]``). ``envs/storyteller/__init__.py`` assembles the
scenarios from these setups, the state modules and the action tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from envs.core.game import Knob
from envs.storyteller.config import TASK_KEYS

HEIST_OPTION_RULES: dict[str, str] = {
    **dict.fromkeys(("single_action", "multiple_actions"), "9"),
    **dict.fromkeys(("approach_main", "approach_alt"), "1"),
    "auto_success": "7",
    **dict.fromkeys(("willpower", "no_willpower"), "8"),
    **dict.fromkeys(("retry", "abandon"), "10"),
    **dict.fromkeys(("teamwork", "no_teamwork"), "14"),
}
"""The rule of docs/rules/storyteller.md each heist option group plays (the report names it)."""
DUEL_OPTION_RULES: dict[str, str] = {
    **dict.fromkeys(("single_action", "multiple_actions"), "9"),
    "attack": "13",
    "approach_alt": "1",
    "defend": "12",
    **dict.fromkeys(("willpower", "no_willpower"), "8"),
}
"""The rule of docs/rules/storyteller.md each duel option group plays."""


@dataclass(frozen=True)
class Approach:
    """A way to work on a task: Attribute + Ability against a difficulty (``None`` = the default)."""

    label: str
    attribute: str
    ability: str
    difficulty: int | None


@dataclass(frozen=True)
class TaskSpec:
    """A task from the seed's example list."""

    key: str
    title: str
    approaches: tuple[Approach, ...]
    target: int  # successes needed (1 = a simple action)
    retryable: bool  # Rule 10: False for one-chance tasks
    calm: bool  # Rule 7: an automatic success is possible (no stress)

    @property
    def extended(self) -> bool:
        """Rule 11: a task that needs more than one success is an extended action."""
        return self.target > 1


DIRECTOR_PERCEPTION, DIRECTOR_ETIQUETTE = 3, 3
"""Rule 2: the gallery director's Perception + Etiquette is the difficulty of impressing him."""

CATALOGUE: dict[str, TaskSpec] = {
    t.key: t
    for t in (
        TaskSpec(
            "documents",
            "Find the documents",
            (
                Approach("search the files", "wits", "computer", 8),
                Approach("crack the encryption", "intelligence", "computer", 9),
            ),
            12,
            True,
            False,
        ),
        TaskSpec(
            "house",
            "Find the house",
            (
                Approach("ask around", "perception", "streetwise", 7),
                Approach("check the records", "intelligence", "investigation", 8),
            ),
            10,
            True,
            True,
        ),
        TaskSpec("drive", "The long drive", (Approach("drive on", "stamina", "drive", 7),), 12, True, True),
        TaskSpec(
            "autopsy",
            "Autopsy",
            (
                Approach("open the body", "stamina", "investigation", None),
                Approach("by the book", "intelligence", "investigation", 7),
            ),
            15,
            True,
            True,
        ),
        TaskSpec(
            "virus",
            "Kill the virus",
            (
                Approach("Wits + Computer", "wits", "computer", 6),
                Approach("Intelligence + Computer", "intelligence", "computer", 7),
            ),
            10,
            True,
            False,
        ),
        TaskSpec("tree", "Move the fallen tree", (Approach("heave", "strength", "athletics", 8),), 1, True, True),
        TaskSpec("phone", "Fix the phone", (Approach("repair", "dexterity", "technology", 8),), 1, True, True),
        TaskSpec(
            "director",
            "Impress the gallery director",
            (Approach("charm", "manipulation", "etiquette", DIRECTOR_PERCEPTION + DIRECTOR_ETIQUETTE),),
            1,
            True,
            False,
        ),
        TaskSpec("shoot", "Shoot out the camera", (Approach("shoot", "dexterity", "firearms", 6),), 1, False, False),
    )
}
"""The heist's tasks by key (``heist.tasks`` names them)."""

assert tuple(CATALOGUE) == TASK_KEYS

KNOBS: list[Knob] = [
    Knob("willpower.points", (1, 6), "fewer / more Willpower points per scene (Rule 8)"),
    Knob("willpower.successes", (0, 2), "Willpower buys no success / two successes (Rule 8)"),
    Knob("extended.reset_on", ("failure", "never"), "extended progress resets on any failure / never (Rule 11)"),
    Knob("auto_success.enabled", (False,), "no automatic successes (Rule 7)", ("heist",)),
    Knob("multiple_actions.enabled", (False,), "one action per turn only (Rule 9)"),
    Knob("retry.difficulty_step", (0, 2), "retries are not harder / two steps harder (Rule 10)", ("heist",)),
    Knob("resisted.actor_wins_ties", (True,), "a tied resisted roll gives the actor one success (Rule 12)", ("duel",)),
]
"""The rule knobs that rule-sensitivity analysis perturbs."""

"""storyteller: the Storyteller d10 system as printed in Demon: The Fallen (rules chapter).

Rules reference: docs/rules/storyteller.md. Scenarios: ``heist`` (timed extended tasks, one player)
and ``duel`` (extended + resisted contest, two players).
"""

from __future__ import annotations

from pathlib import Path

from envs.core.game import Knob, Ruleset
from envs.storyteller.config import StorytellerConfig
from envs.storyteller.scenarios import SCENARIOS

RULESET = Ruleset(
    name="storyteller",
    title="Storyteller",
    description="Storyteller d10 dice pools (Demon: The Fallen): difficulty, rule of one, botches, willpower, "
    "multiple actions, retries, extended and resisted actions",
    config_model=StorytellerConfig,
    rules_path=Path(__file__).with_name("rules.toml"),
    scenarios=SCENARIOS,
    variants_dir=Path(__file__).with_name("variants"),
    knobs=[
        Knob("willpower.points", (1, 6), "fewer / more Willpower points per scene (Rule 8)"),
        Knob("willpower.successes", (0, 2), "Willpower buys no success / two successes (Rule 8)"),
        Knob("extended.reset_on", ("failure", "never"), "extended progress resets on any failure / never (Rule 11)"),
        Knob("auto_success.enabled", (False,), "no automatic successes (Rule 7)", ("heist",)),
        Knob("multiple_actions.enabled", (False,), "one action per turn only (Rule 9)"),
        Knob("retry.difficulty_step", (0, 2), "retries are not harder / two steps harder (Rule 10)",
             ("heist",)),
        Knob("resisted.actor_wins_ties", (True,), "a tied resisted roll gives the actor one success (Rule 12)",
             ("duel",)),
    ],
)

__all__ = ["RULESET"]

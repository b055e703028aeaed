"""The duel and melee scenarios of In a Wicked Age: their Scenario records and option groups.

The setups (characters from the config) and the rules cards are in ``duel.py`` and ``melee.py``; the
conflict both play is ``conflict.py``.
"""

from __future__ import annotations

from envs.core.game import Scenario
from envs.wicked_age.actions import NUM_ACTIONS
from envs.wicked_age.config import PC_FORMS
from envs.wicked_age.duel import DUEL_NAMES, new_duel
from envs.wicked_age.melee import (
    MELEE_NPC_NAME,
    MELEE_PC_NAMES,
    melee_actions,
    melee_observation_size,
    melee_players,
    new_melee,
)
from envs.wicked_age.observation import OBS_SIZE

__all__ = ["DUEL", "MELEE", "MELEE_GROUPS", "OPTION_GROUPS", "new_duel", "new_melee"]

OPTION_GROUPS: tuple[str, ...] = (
    *(f"form_{f}" for f in PC_FORMS),
    "form_action",
    "form_maneuvering",
    "form_self_protection",
    "use_strength",
    "no_strength",
    "cash_owe",
    "roll_on",
    "negotiate",
    "take_default",
    "accept_offer",
    "insist",
    "avoid_tie",
    "fight_tie",
    "exhaust",
    "injure",
    "offer_form",
    *(f"build_d12_{f}" for f in PC_FORMS),
    "build_other",
    "build_npc",
)
"""The option groups of the duel (restricted play may forbid any of them)."""

OPTION_RULES: dict[str, str] = {
    **{g: "4" for g in OPTION_GROUPS if g.startswith("form_")},
    **{g: "1" for g in OPTION_GROUPS if g.startswith("build_")},
    **dict.fromkeys(("use_strength", "no_strength"), "5"),
    **dict.fromkeys(("cash_owe", "roll_on"), "19"),
    **dict.fromkeys(("negotiate", "take_default", "accept_offer", "insist", "offer_form", "offer_target"), "17"),
    **dict.fromkeys(("avoid_tie", "fight_tie"), "8"),
    **dict.fromkeys(("exhaust", "injure"), "15"),
    **dict.fromkeys(("challenge_pc", "challenge_npc", "challenge_several"), "9"),
}
"""The rule of docs/rules/wicked_age.md each option group plays (the report names it)."""
MELEE_GROUPS = (*OPTION_GROUPS, "challenge_pc", "challenge_npc", "challenge_several", "offer_target")
"""The melee adds whom to challenge and whom to address an offer to."""

DUEL = Scenario(
    name="duel",
    title="Duel",
    description="A chapter of conflicts between two characters (PC vs PC, or PC vs NPC by config) until one is out "
    "of the chapter or the conflict limit: build, pick forms, avoid or fight ties, cash the owe list, negotiate, "
    "exhaust or injure.",
    num_players=2,
    num_actions=NUM_ACTIONS,
    observation_size=OBS_SIZE,
    new_game=new_duel,
    max_episode_steps=3000,
    player_names=DUEL_NAMES,
    observation_bounds=(0.0, 1.0),
    observation_in_bounds=True,
    clone_start=True,
    option_groups=OPTION_GROUPS,
    option_rules=OPTION_RULES,
)

MELEE = Scenario(
    name="melee",
    title="Melee",
    description="3-8 parties (the last an NPC) in a chapter of conflicts; movers choose whom to challenge.",
    num_players=melee_players,
    num_actions=melee_actions,
    observation_size=melee_observation_size,
    new_game=new_melee,
    max_episode_steps=5000,
    player_names=(*MELEE_PC_NAMES, MELEE_NPC_NAME),
    observation_bounds=(0.0, 1.0),
    observation_in_bounds=True,
    clone_start=True,
    option_groups=MELEE_GROUPS,
    option_rules=OPTION_RULES,
)

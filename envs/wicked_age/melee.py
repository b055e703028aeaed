"""WickedAgeMelee: a chapter of In a Wicked Age conflicts among 3-4 parties (``rulebreaker/WickedAgeMelee-v0``).

Description:
    Mekha, Taye (and Amek with four parties) are PCs, Esan — always the last seat — an NPC; they fight a
    chapter of conflicts (docs/rules/wicked_age.md, rule 21) with the duel's rules (rules 1-19: simultaneous
    builds first, ``melee.build_phase``; 3 of 6 forms fit each PC's action, ``melee.forms_available``), plus the
    choices three or more parties bring: a mover names one or several opponents as answerers (rule 9),
    advantage is held per pair of opponents (rule 13), offers before a roll are addressed to one opponent
    (rule 17), and ties among three or more are always rerolled (rule 8).

Actions:
    ``Discrete(45)``, the table of ``actions.Act`` (see ``duel.py``); here CHALLENGE_m names the seats of
    bitmask m as answerers and TARGET_i addresses an offer to seat i.

Observation:
    ``Box(0, 1, (123,), float32)`` from ``observation.encode_observation`` (as in the duel; absent parties
    are zeros).

Rewards:
    At the chapter's end: +1 per opponent a party put out of the chapter (rule 16), -1 if put out, plus
    ``owe_list.end_value`` per owe-list entry kept.

Episode end:
    Knockout when one party is left in the chapter; time limit after ``melee.max_conflicts`` conflicts.

Arguments:
    ``melee.parties`` (3-4), ``melee.build_phase``, ``melee.max_conflicts``, ``melee.forms_available``,
    ``melee.pc_assignment`` / ``melee.npc_assignment`` (the sheets without a build phase), ``melee.strengths``;
    every rule key of ``rules.toml``.
"""

from __future__ import annotations

from pydantic import BaseModel

from envs.wicked_age.config import WickedAgeConfig
from envs.wicked_age.conflict import Character, WickedAgeState
from envs.wicked_age.duel import seat_strengths
from envs.wicked_age.rules import assign_npc_pairs, assign_pc_dice

MELEE_PC_NAMES = ("Mekha", "Taye", "Amek")
MELEE_NPC_NAME = "Esan"


class MeleeState(WickedAgeState):
    """The melee's chapter (see the module docstring: the rules card)."""


def melee_players(config: BaseModel) -> int:
    """The number of parties (``melee.parties``)."""
    assert isinstance(config, WickedAgeConfig)
    return config.melee.parties


def new_melee(config: BaseModel) -> WickedAgeState:
    """3-4 parties, the last an NPC; every mover chooses whom to challenge."""
    cfg = config
    assert isinstance(cfg, WickedAgeConfig)
    m = cfg.melee
    chars = [
        Character(
            MELEE_PC_NAMES[i],
            False,
            assign_pc_dice(cfg.forms.pc_dice, m.pc_assignment[i]),
            seat_strengths(cfg, m.strengths, i),
        )
        for i in range(m.parties - 1)
    ]
    chars.append(
        Character(
            MELEE_NPC_NAME,
            True,
            assign_npc_pairs(cfg.forms.npc_pairs, m.npc_assignment),
            seat_strengths(cfg, m.strengths, m.parties - 1),
        )
    )
    return MeleeState(cfg, chars, max_conflicts=m.max_conflicts, forms_available=m.forms_available, build=m.build_phase)

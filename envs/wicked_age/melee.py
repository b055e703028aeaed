"""WickedAgeMelee: a chapter of In a Wicked Age conflicts among 3-8 parties (``rulebreaker/WickedAgeMelee-v0``).

Description:
    Mekha, Taye (Amek with four parties, then Ruhan, Ilsa, Oket and Sabin) are PCs, Esan — always the last
    seat — an NPC; they fight a chapter of conflicts (docs/rules/wicked_age.md, rule 21) with the duel's
    rules (rules 1-19: simultaneous
    builds first, ``melee.build_phase``; 3 of 6 forms fit each PC's action, ``melee.forms_available``), plus the
    choices three or more parties bring: a mover names one or several opponents as answerers (rule 9),
    advantage is held per pair of opponents (rule 13), offers before a roll are addressed to one opponent
    (rule 17), and ties among three or more are always rerolled (rule 8).

Actions:
    ``Discrete(45)`` for up to four parties, ``Discrete(2^p + p + 25)`` for p > 4 (``actions.action_count``):
    the table of ``actions.Act`` (see ``duel.py``); here CHALLENGE_m names the seats of bitmask m as answerers
    and TARGET_i addresses an offer to seat i (the challenges of bitmasks above 15 follow the targets).

Observation:
    ``Box(0, 1, (123,), float32)`` for up to four parties, ``22 p + 35`` features for p > 4, from
    ``observation.encode_observation`` (as in the duel; absent parties are zeros).

Rewards:
    At the chapter's end: +1 per opponent a party put out of the chapter (rule 16), -1 if put out, plus
    ``owe_list.end_value`` per owe-list entry kept.

Episode end:
    Knockout when one party is left in the chapter; time limit after ``melee.max_conflicts`` conflicts.

Arguments:
    ``melee.parties`` (3-8), ``melee.build_phase``, ``melee.max_conflicts``, ``melee.forms_available``,
    ``melee.pc_assignment`` / ``melee.npc_assignment`` (the sheets without a build phase), ``melee.strengths``;
    every rule key of ``rules.toml``.
"""

from __future__ import annotations

from pydantic import BaseModel

from envs.wicked_age.actions import action_count
from envs.wicked_age.config import MAX_PARTIES, WickedAgeConfig
from envs.wicked_age.conflict import Character, WickedAgeState, characters_of
from envs.wicked_age.duel import seat_strengths
from envs.wicked_age.observation import observation_size
from envs.wicked_age.rules import assign_npc_pairs, assign_pc_dice

MELEE_PC_NAMES = ("Mekha", "Taye", "Amek", "Ruhan", "Ilsa", "Oket", "Sabin")
"""The PCs of the melee, in seat order (the seed's three, then four more for larger melees)."""
MELEE_NPC_NAME = "Esan"
assert len(MELEE_PC_NAMES) == MAX_PARTIES - 1


class MeleeState(WickedAgeState):
    """The melee's chapter (see the module docstring: the rules card)."""

    __slots__ = ()  # no instance dict of its own (see WickedAgeState.FIELDS)


def melee_players(config: BaseModel) -> int:
    """The number of parties (``melee.parties``)."""
    assert isinstance(config, WickedAgeConfig)
    return config.melee.parties


def melee_actions(config: BaseModel) -> int:
    """The size of the action table for ``melee.parties`` parties (45 up to four)."""
    return action_count(melee_players(config))


def melee_observation_size(config: BaseModel) -> int:
    """The observation length for ``melee.parties`` parties (123 up to four)."""
    return observation_size(melee_players(config))


def new_melee(config: BaseModel) -> WickedAgeState:
    """3 or more parties, the last an NPC; every mover chooses whom to challenge."""
    cfg = config
    assert isinstance(cfg, WickedAgeConfig)
    m = cfg.melee
    chars = characters_of(cfg, "melee", melee_characters)
    return MeleeState(cfg, chars, max_conflicts=m.max_conflicts, forms_available=m.forms_available, build=m.build_phase)


def melee_characters(cfg: WickedAgeConfig) -> list[Character]:
    """The melee's parties: ``melee.parties - 1`` PCs, then the NPC (their sheets before any build)."""
    m = cfg.melee
    chars = [
        Character(
            MELEE_PC_NAMES[i],
            False,
            assign_pc_dice(cfg.forms.pc_dice, m.pc_assignment[i % len(m.pc_assignment)]),
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
    return chars

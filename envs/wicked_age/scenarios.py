"""The duel and melee scenarios of In a Wicked Age (setups only; the rules live in engine.py)."""

from __future__ import annotations

from pydantic import BaseModel

from envs.core.game import Scenario
from envs.wicked_age.config import PC_FORMS, WickedAgeConfig, assign_npc_pairs, assign_pc_dice
from envs.wicked_age.engine import NUM_ACTIONS, OBS_SIZE, Character, Strength, WickedAgeState

DUEL_NAMES = ("Amek", "Mekha")
DUEL_NPC_NAME = "Esan"
MELEE_PC_NAMES = ("Mekha", "Taye", "Amek")
MELEE_NPC_NAME = "Esan"

OPTION_GROUPS: tuple[str, ...] = (
    *(f"form_{f}" for f in PC_FORMS), "form_action", "form_maneuvering", "form_self_protection",
    "use_strength", "no_strength", "cash_owe", "roll_on", "negotiate", "take_default", "accept_offer", "insist",
    "avoid_tie", "fight_tie", "exhaust", "injure", "offer_form",
    *(f"build_d12_{f}" for f in PC_FORMS), "build_other", "build_npc",
)
MELEE_GROUPS = (*OPTION_GROUPS, "challenge_pc", "challenge_npc", "challenge_several", "offer_target")


def _strengths(cfg: WickedAgeConfig, specs: list[list[str]], seat: int) -> tuple[Strength, ...]:
    if seat >= len(specs):
        return ()
    return tuple(Strength.parse(s, cfg) for s in specs[seat])


def new_duel(config: BaseModel) -> WickedAgeState:
    """Two characters (seat 1 a PC or an NPC by ``duel.opponent``), a chapter of conflicts."""
    cfg = config
    assert isinstance(cfg, WickedAgeConfig)
    d = cfg.duel
    orders = d.pc_assignment
    a = Character(DUEL_NAMES[0], False, assign_pc_dice(cfg.forms.pc_dice, orders[0]), _strengths(cfg, d.strengths, 0))
    if d.opponent == "npc":
        b = Character(DUEL_NPC_NAME, True, assign_npc_pairs(cfg.forms.npc_pairs, d.npc_assignment),
                      _strengths(cfg, d.strengths, 1))
    else:
        b = Character(DUEL_NAMES[1], False, assign_pc_dice(cfg.forms.pc_dice, orders[1 % len(orders)]),
                      _strengths(cfg, d.strengths, 1))
    return WickedAgeState(cfg, [a, b], max_conflicts=d.max_conflicts, forms_available=d.forms_available,
                          build=d.build_phase, conflict_win_bonus=d.conflict_win_bonus)


def melee_players(config: BaseModel) -> int:
    assert isinstance(config, WickedAgeConfig)
    return config.melee.parties


def new_melee(config: BaseModel) -> WickedAgeState:
    """3-4 parties, the last an NPC; every mover chooses whom to challenge."""
    cfg = config
    assert isinstance(cfg, WickedAgeConfig)
    m = cfg.melee
    chars = [Character(MELEE_PC_NAMES[i], False, assign_pc_dice(cfg.forms.pc_dice, m.pc_assignment[i]),
                       _strengths(cfg, m.strengths, i)) for i in range(m.parties - 1)]
    chars.append(Character(MELEE_NPC_NAME, True, assign_npc_pairs(cfg.forms.npc_pairs, m.npc_assignment),
                           _strengths(cfg, m.strengths, m.parties - 1)))
    return WickedAgeState(cfg, chars, max_conflicts=m.max_conflicts, forms_available=m.forms_available)


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
    option_groups=OPTION_GROUPS,
)

MELEE = Scenario(
    name="melee",
    title="Melee",
    description="3-4 parties (the last an NPC) in a chapter of conflicts; movers choose whom to challenge.",
    num_players=melee_players,
    num_actions=NUM_ACTIONS,
    observation_size=OBS_SIZE,
    new_game=new_melee,
    max_episode_steps=5000,
    player_names=(*MELEE_PC_NAMES, MELEE_NPC_NAME),
    observation_bounds=(0.0, 1.0),
    option_groups=MELEE_GROUPS,
)

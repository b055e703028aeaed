"""WickedAgeDuel: a chapter of In a Wicked Age conflicts between two characters (``rulebreaker/WickedAgeDuel-v0``).

Description:
    Two characters — Amek (seat 0, a PC) and Mekha (seat 1, a PC) or Esan (seat 1, an NPC, ``duel.opponent``)
    — fight a chapter of conflicts (docs/rules/wicked_age.md, rule 20). First each seat builds its sheet
    (rules 1-2, ``duel.build_phase``): it places d12, d10, d8, d6, d6, d4 (an NPC its three die pairs) on its
    forms, largest first, on a hidden draft; the sheets are shown when both are done. Each conflict: the
    forms that fit each PC's action are drawn (rule 4, ``duel.forms_available``, 3 of 6 by default), each
    side picks the forms it rolls (a PC two forms, an NPC one) and whether a particular strength joins them
    (rules 4-5), offers may be made before a round's roll (rule 17), both decide on cashing owe-list entries
    and then roll, simultaneously (rules 7, 19), exact ties are avoided or rerolled (rule 8), the standing
    roll challenges and the other answers (rules 9-12) for at most three rounds, advantage dice pass
    (rule 13) and an absolute result ends the conflict with a consequence, which either side may offer to
    negotiate (rules 14-17). The owe list (rules 18-19) carries over from conflict to conflict.

Actions:
    ``Discrete(45)``, the table of ``actions.Act``: FORM_0..5 (a PC form: build, pick, or lose a size on
    it), NPC_FORM_0..2, STRENGTH_0..3 / NO_STRENGTH, ROLL (roll on, make no offer), CASH_OWE, the three
    offers, TAKE_DEFAULT, ACCEPT / INSIST, AVOID / FIGHT, EXHAUST / INJURE, CHALLENGE_m (unused in the
    duel: one opponent is named automatically) and TARGET_i. Only the actions of ``legal_actions()`` are
    legal; ``decision_context()`` names the decision (``actions.Ctx``).

Observation:
    ``Box(0, 1, (123,), float32)`` from ``observation.encode_observation``: per party (self first) its
    sheet, rolled dice, advantage, owe entries, turn flags and opening roll; then round and conflict
    progress, the decision kind one-hot, the forms that fit, the first picked form, the standing
    challenge, a pending offer and a pending consequence.

Rewards:
    At the chapter's end: +1 for putting the other out of the chapter (rule 16), -1 for being put out,
    0 at the conflict limit; plus ``duel.conflict_win_bonus`` x (conflicts won - lost) and
    ``owe_list.end_value`` per owe-list entry kept.

Episode end:
    Knockout when a character is out of the chapter; time limit after ``duel.max_conflicts`` conflicts.

Arguments:
    ``duel.opponent`` ("pc" | "npc"), ``duel.build_phase``, ``duel.max_conflicts``, ``duel.forms_available``,
    ``duel.conflict_win_bonus``, ``duel.pc_assignment`` / ``duel.npc_assignment`` (the sheets without a
    build phase), ``duel.strengths``, ``duel.npc_strengths`` (seat 1's when it is the NPC); every rule key
    of ``rules.toml``.
"""

from __future__ import annotations

from pydantic import BaseModel

from envs.wicked_age.config import WickedAgeConfig
from envs.wicked_age.conflict import Character, WickedAgeState, characters_of
from envs.wicked_age.rules import Strength, assign_npc_pairs, assign_pc_dice

DUEL_NAMES = ("Amek", "Mekha")
DUEL_NPC_NAME = "Esan"


def seat_strengths(cfg: WickedAgeConfig, specs: list[list[str]], seat: int) -> tuple[Strength, ...]:
    """Rule 5: the particular strengths a seat's sheet lists (none past the end of the list)."""
    if seat >= len(specs):
        return ()
    return tuple(Strength.parse(s, cfg) for s in specs[seat])


class DuelState(WickedAgeState):
    """The duel's chapter (see the module docstring: the rules card)."""

    __slots__ = ()  # no instance dict of its own (see WickedAgeState.FIELDS)


def new_duel(config: BaseModel) -> WickedAgeState:
    """Two characters (seat 1 a PC or an NPC by ``duel.opponent``), a chapter of conflicts."""
    cfg = config
    assert isinstance(cfg, WickedAgeConfig)
    d = cfg.duel
    return DuelState(
        cfg,
        characters_of(cfg, "duel", duel_characters),
        max_conflicts=d.max_conflicts,
        forms_available=d.forms_available,
        build=d.build_phase,
        conflict_win_bonus=d.conflict_win_bonus,
    )


def duel_characters(cfg: WickedAgeConfig) -> list[Character]:
    """The duel's two characters: Amek, and Mekha or Esan by ``duel.opponent`` (their sheets before any build)."""
    d = cfg.duel
    orders = d.pc_assignment
    a = Character(
        DUEL_NAMES[0], False, assign_pc_dice(cfg.forms.pc_dice, orders[0]), seat_strengths(cfg, d.strengths, 0)
    )
    if d.opponent == "npc":
        b = Character(
            DUEL_NPC_NAME,
            True,
            assign_npc_pairs(cfg.forms.npc_pairs, d.npc_assignment),
            seat_strengths(cfg, [d.npc_strengths], 0),
        )
    else:
        b = Character(
            DUEL_NAMES[1],
            False,
            assign_pc_dice(cfg.forms.pc_dice, orders[1 % len(orders)]),
            seat_strengths(cfg, d.strengths, 1),
        )
    return [a, b]

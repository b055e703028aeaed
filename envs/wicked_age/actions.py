"""In a Wicked Age actions: the action table (ids shared by both scenarios), decision kinds, labels.

The table holds :func:`party_slots` parties (at least four): ids 0..40 are fixed (forms, strengths, the
plain choices and ``CHALLENGE_m`` for the bitmasks m = 1..15 of the first four seats), ``TARGET_i`` = 41 + i
for every seat, and with more than four parties the challenges of the larger bitmasks follow the targets.
A conflict of up to four parties uses exactly the 45 ids of the four-party table (``NUM_ACTIONS``).
Rule numbers cite docs/rules/wicked_age.md.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from envs.wicked_age.config import NPC_FORMS, PC_FORMS
from envs.wicked_age.rules import NpcForm, Offer, PcForm

MIN_PARTY_SLOTS = 4
"""The action table and the observation always hold at least four parties: the ids and the observation of the
duel and of a three-party melee are those of a four-party table."""


def party_slots(parties: int) -> int:
    """The parties the action table and the observation hold for a conflict of ``parties`` parties."""
    return max(parties, MIN_PARTY_SLOTS)


MAX_STRENGTHS = 4
"""Strength actions per character (``STRENGTH_0`` .. ``STRENGTH_3``); further strengths are never offered."""


class Act(enum.IntEnum):
    """The named action table (fixed ids shared by every scenario)."""

    FORM_0 = 0  # PC form i (build: put the next die there; pick: roll it; offers: lose a size there)
    FORM_1 = 1
    FORM_2 = 2
    FORM_3 = 3
    FORM_4 = 4
    FORM_5 = 5
    NPC_FORM_0 = 6  # NPC form i (build: put the next pair there; pick: roll its two dice)
    NPC_FORM_1 = 7
    NPC_FORM_2 = 8
    STRENGTH_0 = 9
    STRENGTH_1 = 10
    STRENGTH_2 = 11
    STRENGTH_3 = 12
    NO_STRENGTH = 13
    ROLL = 14  # go on: roll the dice / make no offer now
    CASH_OWE = 15  # Rule 19
    OFFER_LOSER_CHOICE = 16  # Rule 17 menu
    OFFER_WINNER_CHOICE = 17
    OFFER_CONCEDE_STAKE = 18
    TAKE_DEFAULT = 19  # the loser accepts the default consequence
    ACCEPT = 20
    INSIST = 21  # break off: insist on the whip
    AVOID = 22  # Rule 8
    FIGHT = 23
    EXHAUST = 24  # Rule 15
    INJURE = 25
    CHALLENGE_1 = 26  # CHALLENGE_m: name the seats in bitmask m (1..15) as answerers (larger m: after the targets)
    CHALLENGE_15 = 40
    TARGET_0 = 41  # TARGET_0 + i: address an offer to seat i
    TARGET_3 = 44


_FIXED_MASKS = Act.CHALLENGE_15 - Act.CHALLENGE_1 + 1
"""The bitmasks (1..15) whose challenges have fixed ids: those naming only the first four seats."""


def action_count(parties: int) -> int:
    """The size of the action table of a conflict of ``parties`` parties (45 for up to four)."""
    slots = party_slots(parties)
    return int(Act.TARGET_0) + slots + (1 << slots) - 1 - _FIXED_MASKS


NUM_ACTIONS = action_count(MIN_PARTY_SLOTS)
"""The action table of the duel and of a melee of up to four parties (45 ids)."""
FORM_ACTIONS: tuple[int, ...] = tuple(Act.FORM_0 + f for f in PcForm)
"""Rule 1: one action per PC form (also one per sheet slot, for an NPC's single dice)."""
NPC_FORM_ACTIONS: tuple[int, ...] = tuple(Act.NPC_FORM_0 + f for f in NpcForm)
"""Rule 2: one action per NPC form."""
OFFER_ACTIONS: tuple[Act, ...] = (Act.OFFER_LOSER_CHOICE, Act.OFFER_WINNER_CHOICE, Act.OFFER_CONCEDE_STAKE)
"""Rule 17: one action per offer of the menu, in ``Offer`` order."""


class Ctx(enum.IntEnum):
    """Kinds of decision (``decision_context``) and of chance node."""

    BUILD = 0
    PICK_FORM = 1
    PICK_SECOND_FORM = 2
    PICK_STRENGTH = 3
    WINDOW = 4  # Rule 17: offer to concede before a round's roll, or roll on
    OFFER_TARGET = 5
    OFFER_RESPONSE = 6
    OFFER_FORM = 7
    PRE_ROLL = 8  # Rule 19: cash owe-list entries before rolling
    TIE_AVOID = 9  # Rule 8
    CHALLENGE = 10  # Rule 9
    CONSEQ_OFFER = 11  # Rule 17 after an absolute result
    CONSEQ_RESPONSE = 12
    CONSEQ_DEFAULT = 13  # Rule 15
    # chance kinds
    FORMS_DRAW = 20
    OPENING_ROLL = 21
    TIE_REROLL = 22
    MOVER_ROLL = 23
    ANSWER_ROLL = 24
    CASH_ROLL = 25  # Rule 19: advantage dice cashed before a tie reroll
    END = 30

    @property
    def is_decision(self) -> bool:
        """A seat decides here (the others are chance nodes or the end)."""
        return self < Ctx.FORMS_DRAW


DECISION_CONTEXTS: tuple[Ctx, ...] = tuple(c for c in Ctx if c.is_decision)


def offer_action(offer: Offer) -> int:
    """Rule 17: the action that makes ``offer``."""
    return OFFER_ACTIONS[offer]


OFFER_BY_ACTION: dict[int, Offer] = {int(a): Offer(i) for i, a in enumerate(OFFER_ACTIONS)}


def offer_of(action: int) -> Offer:
    """Rule 17: the offer an offer action makes."""
    offer = OFFER_BY_ACTION.get(action)
    if offer is None:
        raise ValueError(f"action {action} makes no offer")
    return offer


def challenge_action(targets: Sequence[int], parties: int = MIN_PARTY_SLOTS) -> int:
    """Rule 9: the action naming ``targets`` as answerers (``CHALLENGE_m``, m the seats' bitmask)."""
    m = sum(1 << t for t in set(targets))
    if m <= _FIXED_MASKS:
        return Act.CHALLENGE_1 - 1 + m
    return Act.TARGET_0 + party_slots(parties) + m - _FIXED_MASKS - 1


def _challenge_mask(action: int, parties: int) -> int:
    """The bitmask a challenge action names (0: not a challenge)."""
    if Act.CHALLENGE_1 <= action <= Act.CHALLENGE_15:
        return action - Act.CHALLENGE_1 + 1
    first = Act.TARGET_0 + party_slots(parties)  # the first challenge of a larger bitmask
    if first <= action < action_count(parties):
        return action - first + _FIXED_MASKS + 1
    return 0


def challenge_targets(action: int, num_players: int) -> tuple[int, ...]:
    """Rule 9: the seats a challenge action names."""
    m = _challenge_mask(action, num_players)
    return tuple(t for t in range(num_players) if m >> t & 1)


def is_challenge(action: int, parties: int = MIN_PARTY_SLOTS) -> bool:
    """Whether ``action`` is a challenge (in the table of ``parties`` parties)."""
    return _challenge_mask(action, parties) != 0


def target_action(seat: int) -> int:
    """Rule 17: the action that addresses an offer to ``seat``."""
    return Act.TARGET_0 + seat


def is_target(action: int, parties: int = MIN_PARTY_SLOTS) -> bool:
    """Whether ``action`` addresses an offer to a seat (in the table of ``parties`` parties)."""
    return Act.TARGET_0 <= action < Act.TARGET_0 + party_slots(parties)


def action_label(action: int, names: Sequence[str], strength_specs: Sequence[str], offer_form_npc: bool) -> str:
    """A short label of ``action``: ``offer_form_npc`` when a form action picks one die of an NPC loser."""
    a = int(action)
    if Act.FORM_0 <= a <= Act.FORM_5:
        if offer_form_npc:
            return f"die_{a}_{NPC_FORMS[a // 2]}"
        return PC_FORMS[a]
    if Act.NPC_FORM_0 <= a <= Act.NPC_FORM_2:
        return NPC_FORMS[a - Act.NPC_FORM_0]
    if Act.STRENGTH_0 <= a <= Act.STRENGTH_3:
        i = a - Act.STRENGTH_0
        return f"strength_{strength_specs[i]}" if i < len(strength_specs) else f"strength_{i}"
    if is_challenge(a, len(names)):
        return "challenge_" + "+".join(names[t] for t in challenge_targets(a, len(names)))
    if is_target(a, len(names)):
        t = a - Act.TARGET_0
        return f"offer_to_{names[t]}" if t < len(names) else f"offer_to_{t}"
    if 0 <= a < NUM_ACTIONS:
        return Act(a).name.lower()
    return f"action_{a}"


_PLAIN_OPTIONS: dict[Act, str] = {
    Act.ROLL: "roll_on",
    Act.CASH_OWE: "cash_owe",
    Act.TAKE_DEFAULT: "take_default",
    Act.ACCEPT: "accept_offer",
    Act.INSIST: "insist",
    Act.AVOID: "avoid_tie",
    Act.FIGHT: "fight_tie",
    Act.EXHAUST: "exhaust",
    Act.INJURE: "injure",
}


def option_of(action: int, ctx: int, npc: Sequence[bool], build_die: tuple[int, int] | None) -> str | None:
    """The option group of ``action`` at node ``ctx``.

    ``ctx`` is a ``Ctx`` id, ``npc`` per seat, ``build_die`` = (next die, largest die).
    """
    a = int(action)
    if ctx == Ctx.BUILD:
        if build_die is None:
            return "build_npc"
        size, top = build_die
        return f"build_d{size}_{PC_FORMS[a]}" if size == top else "build_other"
    if ctx in (Ctx.PICK_FORM, Ctx.PICK_SECOND_FORM):
        if Act.NPC_FORM_0 <= a <= Act.NPC_FORM_2:
            return f"form_{NPC_FORMS[a - Act.NPC_FORM_0]}"
        return f"form_{PC_FORMS[a]}"
    if ctx == Ctx.PICK_STRENGTH:
        return "no_strength" if a == Act.NO_STRENGTH else "use_strength"
    if a in OFFER_ACTIONS:
        return "negotiate"
    if ctx == Ctx.OFFER_FORM:
        return "offer_form"
    if is_challenge(a, len(npc)):
        targets = challenge_targets(a, len(npc))
        if len(targets) > 1:
            return "challenge_several"
        return "challenge_npc" if npc[targets[0]] else "challenge_pc"
    if is_target(a, len(npc)):
        return "offer_target"

    return _PLAIN_OPTIONS.get(Act(a)) if 0 <= a < NUM_ACTIONS else None

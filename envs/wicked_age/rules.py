"""In a Wicked Age rule functions: one per numbered rule of docs/rules/wicked_age.md.

Pure functions over plain values and small records (enums, frozen dataclasses, named tuples); the
conflict state (``conflict.py``) only sequences them. Reading and comparing rolls (Rules 3, 6, 11, 12,
18) lives in ``dice.py``, the one source of the odds.
"""

from __future__ import annotations

import enum
import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from envs.wicked_age.config import (
    NPC_FORMS,
    OFFER_KINDS,
    PC_FORMS,
    ConsequenceRules,
    StrengthRules,
    WickedAgeConfig,
    parse_strength,
)
from envs.wicked_age.dice import KEY_LENGTH, Result, Roll, size_key, step_down


# -- the forms (Rules 1-2) -------------------------------------------------------------------------
class PcForm(enum.IntEnum):
    """Rule 1: the six forms of a player's character (one die each)."""

    COVERTLY = 0
    DIRECTLY = 1
    FOR_MYSELF = 2
    FOR_OTHERS = 3
    WITH_LOVE = 4
    WITH_VIOLENCE = 5

    @property
    def key(self) -> str:
        """The form's config name, e.g. ``"with_violence"``."""
        return PC_FORMS[self]


class NpcForm(enum.IntEnum):
    """Rule 2: the three forms of a non-player character (two dice each)."""

    ACTION = 0
    MANEUVERING = 1
    SELF_PROTECTION = 2

    @property
    def key(self) -> str:
        """The form's config name, e.g. ``"maneuvering"``."""
        return NPC_FORMS[self]

    @property
    def slots(self) -> tuple[int, int]:
        """Where the form's two dice sit on an NPC sheet (sheet slots ``2f`` and ``2f + 1``)."""
        return (2 * self, 2 * self + 1)


assert tuple(f.key for f in PcForm) == PC_FORMS and tuple(f.key for f in NpcForm) == NPC_FORMS

NPC_FORM_SLOTS: tuple[tuple[int, int], ...] = tuple(f.slots for f in NpcForm)
"""``NpcForm(f).slots`` by form id, read without an enum call."""
SHEET_SLOTS: tuple[int, ...] = tuple(PcForm)

"""A sheet holds six dice: a PC one per form (Rule 1), an NPC two per form (Rule 2, see ``NpcForm.slots``)."""

ONE_ON_ONE = 2
"""Rules 8 and 13: a conflict between exactly two parties."""
PC_FORMS_ROLLED = 2
"""Rule 4: a PC rolls exactly two forms."""

FORM_TITLES: dict[str, str] = {f: f.replace("_", " ").title() for f in PC_FORMS + NPC_FORMS}
"""The rulebook's name of each form ("With Violence")."""


def form_titles(npc: bool) -> tuple[str, ...]:
    """Rules 1-2: the titles of a character's forms, in form order."""
    return tuple(FORM_TITLES[f] for f in (NPC_FORMS if npc else PC_FORMS))


def form_keys(npc: bool) -> tuple[str, ...]:
    """Rules 1-2: the config names of a character's forms, in form order."""
    return NPC_FORMS if npc else PC_FORMS


def assign_pc_dice(dice: Sequence[int], order: Sequence[str]) -> list[int]:
    """Rule 1: the dice, largest first, to the forms in ``order``; one die per form, in form order."""
    sheet = [0] * len(PcForm)
    for size, form in zip(sorted(dice, reverse=True), order, strict=True):
        sheet[PC_FORMS.index(form)] = size
    return sheet


def npc_pairs_largest_first(pairs: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """Rule 2: the NPC die pairs, each sorted high to low, the largest pair first."""
    ranked = sorted((tuple(sorted(p, reverse=True)) for p in pairs), reverse=True)
    return [(p[0], p[1]) for p in ranked]


def assign_npc_pairs(pairs: Sequence[Sequence[int]], order: Sequence[str]) -> list[int]:
    """Rule 2: the pairs, largest first, to the NPC forms in ``order``; a sheet of six dice (``NpcForm.slots``)."""
    dice = [0] * len(SHEET_SLOTS)
    for pair, form in zip(npc_pairs_largest_first(pairs), order, strict=True):
        hi, lo = NpcForm[form.upper()].slots
        dice[hi], dice[lo] = pair
    return dice


def form_dice(dice: Sequence[int], npc: bool, form: int) -> list[int]:
    """Rules 1-3: the dice one form rolls (PC: its die; NPC: both its dice); a die at 0 rolls nothing."""
    slots = NPC_FORM_SLOTS[form] if npc else (form,)
    return [dice[i] for i in slots if dice[i] > 0]


# -- particular strengths (Rules 4-5) --------------------------------------------------------------
@dataclass(frozen=True)
class Strength:
    """Rule 5: a particular strength (its die, required form, general, consequential form)."""

    spec: str
    form: str
    die: int
    general: bool
    consequential: str | None

    @classmethod
    def parse(cls, spec: str, cfg: WickedAgeConfig) -> Strength:
        """Rule 5: a strength from its spec ``form[:potent|twice_potent][:general][:consequential=FORM]``."""
        form, level, general, conseq = parse_strength(spec)
        return cls(spec, form, strength_die(level, cfg.strength), general, conseq)

    @property
    def title(self) -> str:
        """The strength's required form as the rulebook says it ("with violence")."""
        return self.spec.split(":")[0].replace("_", " ")


def strength_die(level: str, rules: StrengthRules) -> int:
    """Rule 5: a particular strength rolls a d8; potent a d10; twice potent a d12 (all configurable)."""
    return {"base": rules.base_die, "potent": rules.potent_die, "twice_potent": rules.twice_potent_die}[level]


def usable_strengths(strengths: Sequence[Strength], picked_forms: Sequence[str], limit: int) -> list[int]:
    """Rules 4-5: a strength is usable when the action uses its required form, or when it is general."""
    picked = set(picked_forms)
    return [i for i, st in enumerate(strengths[:limit]) if st.general or st.form in picked]


def dice_for_roll(dice: Sequence[int], npc: bool, picks: Sequence[int], strength: Strength | None) -> tuple[int, ...]:
    """Rule 4: the dice of the picked forms (a PC two forms, an NPC one form) plus the strength's die."""
    if not npc and len(picks) == PC_FORMS_ROLLED:  # a PC's two forms, both with a die: no comprehension
        a, b = dice[picks[0]], dice[picks[1]]
        if a > 0 and b > 0:
            return (a, b) if strength is None else (a, b, strength.die)
    if npc and len(picks) == 1:  # an NPC's form, both dice live: no comprehension
        hi, lo = NPC_FORM_SLOTS[picks[0]]
        a, b = dice[hi], dice[lo]
        if a > 0 and b > 0:
            return (a, b) if strength is None else (a, b, strength.die)
    # ``form_dice`` of each pick, in one comprehension (a pick per call and a list per form cost more)
    if npc:
        out = [d for f in picks for i in NPC_FORM_SLOTS[f] if (d := dice[i]) > 0]
    else:
        out = [d for f in picks if (d := dice[f]) > 0]
    if strength is not None:
        out.append(strength.die)
    return tuple(out)


def consequential_slot(
    strength: Strength | None, loser_npc: bool, loser_dice: Sequence[int], agreed: Offer | None = None
) -> int | None:
    """Rule 5: the sheet slot a winner's consequential strength costs the loser, if any.

    A PC loser loses a size on the named form; an NPC loser one die of that form (the engine takes the
    smaller live die, the choice that brings the NPC nearest to out). A loser who conceded the stake by
    agreement (Rule 17, ``agreed``) loses no dice at all, so the strength does not bite.
    """
    if strength is None or strength.consequential is None or agreed is _CONCEDE_STAKE:
        return None
    if loser_npc:
        if strength.consequential not in NPC_FORMS:
            return None
        live = [i for i in NpcForm[strength.consequential.upper()].slots if loser_dice[i] > 0]
        return min(live, key=lambda j: loser_dice[j]) if live else None
    if strength.consequential not in PC_FORMS:
        return None
    return PC_FORMS.index(strength.consequential)


# -- the opening roll (Rules 7-8) ------------------------------------------------------------------
def turn_order(keys: Sequence[tuple[int, ...] | None], parties: Sequence[int]) -> list[int]:
    """Rule 7: turn order is the opening rolls high to low; the highest stands (seat order breaks a capped tie)."""
    if len(parties) == ONE_ON_ONE:  # two parties with readings of one length (the duel): one comparison, no sort
        a, b = parties
        ka, kb = keys[a], keys[b]
        if ka is not None and kb is not None and len(ka) == len(kb):
            return [a, b] if ka > kb or (ka == kb and a < b) else [b, a]
    neg = operator.neg
    return sorted(parties, key=lambda s: (tuple(map(neg, keys[s] or ())), s))


def compared_readings(a: Roll, b: Roll, pad_short_rolls: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Rule 6: the two readings as compared: padded with 0, or cut to the dice both rolls have.

    Padded (the default), a roll with fewer dice that matches a longer one on all its dice is lower; cut,
    the dice only the longer roll has are ignored, so the two are a full tie.
    """
    if pad_short_rolls:
        return a.key, b.key
    n = min(max(1, len(a.faces)), max(1, len(b.faces)))
    cut = (0,) * (KEY_LENGTH - n)
    return a.key[:n] + cut, b.key[:n] + cut


def opening_ties(
    rolls: Sequence[Roll | None], parties: Sequence[int], pad_short_rolls: bool = True, only_top: bool = False
) -> list[int]:
    """Rule 8: the parties whose opening rolls exactly equal another party's (``only_top``: ties for the top only).

    With ``only_top`` and three or more parties only a tie for the highest roll is rerolled; lower ties
    are left to seat order (Rule 7).
    """
    if pad_short_rolls and len(parties) == ONE_ON_ONE:  # two parties that rolled: tied when the keys are equal
        a, b = parties
        ra, rb = rolls[a], rolls[b]
        if ra is not None and rb is not None:
            return ([a, b] if a < b else [b, a]) if ra.key == rb.key else []
    live = [s for s in parties if rolls[s] is not None]

    def tie(s: int, t: int) -> bool:
        a, b = rolls[s], rolls[t]
        assert a is not None and b is not None
        ka, kb = compared_readings(a, b, pad_short_rolls)
        return ka == kb

    if pad_short_rolls:  # padded readings tie exactly when the keys are equal: count them
        keys = [rolls[s].key for s in live]  # type: ignore[union-attr]  # live: the parties that rolled
        if len(set(keys)) == len(keys):  # all different (the common case): no tie
            return []
        tied = sorted([s for s, k in zip(live, keys, strict=True) if keys.count(k) > 1])
    else:
        tied = sorted(s for s in live if any(t != s and tie(s, t) for t in live))
    if only_top and len(parties) > ONE_ON_ONE and tied:
        top = max(live, key=lambda s: (_reading(rolls[s]), -s))
        tied = [s for s in tied if s == top or tie(s, top)]
        return tied if len(tied) > 1 else []
    return tied


def _reading(roll: Roll | None) -> tuple[int, ...]:
    return roll.key if roll is not None else ()


def may_avoid_tie(tied: Sequence[int], parties: Sequence[int], round_no: int, avoid_rounds: str) -> bool:
    """Rule 8: the tied parties may agree to avoid only when they are the only two (on round 1 unless "any")."""
    return (avoid_rounds == "any" or round_no == 1) and set(tied) == set(parties) and len(parties) == ONE_ON_ONE


def lowest_die_slot(faces: Sequence[int], dice: Sequence[int]) -> int:
    """Rule 8: the die a tied party rerolls: the one showing the lowest value (on equal values, the smaller die)."""
    best = 0
    for i, f in enumerate(faces):
        if f < faces[best] or (f == faces[best] and dice[i] < dice[best]):
            best = i
    return best


def reroll_lowest_die(faces: Sequence[int], dice: Sequence[int], face: int) -> tuple[int, ...]:
    """Rule 8: the faces after rerolling the lowest die to ``face``."""
    slot = lowest_die_slot(faces, dice)
    if not 1 <= face <= dice[slot]:
        raise ValueError(f"bad reroll face {face} for a d{dice[slot]}")
    out = list(faces)
    out[slot] = face
    return tuple(out)


# -- turns and answers (Rules 9-14) ----------------------------------------------------------------
def challenge_choices(opponents: Sequence[int]) -> list[tuple[int, ...]]:
    """Rule 9: a mover names one or several of the opponents still in as answerers."""
    return [c for r in range(1, len(opponents) + 1) for c in itertools.combinations(opponents, r)]


def answer_order(order: Sequence[int], named: Sequence[int]) -> list[int]:
    """Rule 10: the named answerers answer in turn order."""
    if len(named) == 1:  # one answerer (always in the duel): no comprehension
        t = named[0]
        return [t] if t in order else []
    return [t for t in order if t in named]


def loses_move(moved: bool, challenged: bool) -> bool:
    """Rule 9: a party that has to answer before its own turn loses its move."""
    return not moved and not challenged


class Decided(NamedTuple):
    """Rule 14: who won and who lost an absolute result."""

    winner: int
    loser: int


# the enum members the hot rules compare with, read once (an enum member read costs about a small call: see dice.py)
_ABSOLUTE_LOSS = Result.ABSOLUTE_LOSS
_LOSES_ADVANTAGE = Result.LOSES_ADVANTAGE
_WINS_ADVANTAGE = Result.WINS_ADVANTAGE
_ABSOLUTE_WIN = Result.ABSOLUTE_WIN


def advantage_gainer(result: Result, answerer: int, challenger: int) -> tuple[int, int] | None:
    """Rules 11 and 13: (holder, other) when the result moves the advantage between the pair, else None."""
    if result is _LOSES_ADVANTAGE:
        return (challenger, answerer)
    if result is _WINS_ADVANTAGE:
        return (answerer, challenger)
    return None


def absolute_outcome(result: Result, answerer: int, challenger: int, challenger_in: bool) -> Decided | None:
    """Rule 14: the winner and loser of an absolute result (a challenger already out suffers once only)."""
    if result is _ABSOLUTE_LOSS:
        return Decided(challenger, answerer)
    if result is _ABSOLUTE_WIN and challenger_in:
        return Decided(answerer, challenger)
    return None


def pass_advantage(adv: Sequence[Sequence[bool]], holder: int, other: int, per_pair: bool) -> list[list[bool]]:
    """Rule 13: the advantage between ``holder`` and ``other`` goes to ``holder``.

    Tracked per pair of opponents (the default), only that pair's advantage changes; with a single
    advantage per conflict (``per_pair`` false) the holder takes it from whoever held it.
    """
    out = [list(row) for row in adv] if per_pair else [[False] * len(row) for row in adv]
    out[holder][other] = True
    out[other][holder] = False
    return out


def unresolved_advantage(
    order: Sequence[int], in_conflict: Sequence[bool], adv: Sequence[Sequence[bool]]
) -> list[Decided]:
    """Rule 12 ("advantage_wins"): after the last round, each holder of an advantage over a party still in wins."""
    return [Decided(h, o) for h in order for o in order if h != o and in_conflict[h] and in_conflict[o] and adv[h][o]]


def advantage_dice(holds_over: Sequence[bool], opponent_in: Sequence[bool], keep_when_out: bool, cashed: int) -> int:
    """Rules 13 and 19: one die per opponent held the advantage over, plus the dice of cashed owe-list entries."""
    if len(holds_over) != len(opponent_in):
        raise ValueError("one advantage flag per party")
    if keep_when_out:
        return holds_over.count(True) + cashed

    return sum(map(operator.and_, holds_over, opponent_in)) + cashed


# -- consequences (Rules 3, 15-17) -----------------------------------------------------------------
def lose_size(size: int, ladder: Sequence[int], min_die_hit: int) -> int:
    """Rule 3: a die loses one size along the ladder, unless a variant shields dice below ``min_die_hit``."""
    if size < min_die_hit:
        return size
    return step_down(size, ladder)


def default_consequence_slots(npc: bool, exhausted: bool, cons: ConsequenceRules) -> tuple[int, ...]:
    """Rule 15: the sheet slots the default consequence hits, exhausted or injured.

    Exhausted hits Directly and With Violence (NPC: both Action dice); injured hits Covertly and For Others
    (NPC: both Maneuvering dice).
    """
    if npc:
        return NpcForm[(cons.npc_exhausted_form if exhausted else cons.npc_injured_form).upper()].slots
    names = cons.exhausted_forms if exhausted else cons.injured_forms
    return tuple(PC_FORMS.index(n) for n in names)


def is_out_of_chapter(dice: list[int], npc: bool, cons: ConsequenceRules) -> bool:
    """Rule 16: a PC with two forms at 0, or an NPC with any two dice at 0, is out of the chapter."""
    zeros = dice.count(0)  # sizes are never negative: the forms (NPC: dice) at 0
    return zeros >= (cons.npc_out_zero_dice if npc else cons.pc_out_zero_forms)


class Offer(enum.IntEnum):
    """Rule 17: the menu of negotiated outcomes a proposer may offer."""

    LOSER_CHOICE = 0  # the proposer loses a size on one form of its own choice, and concedes
    WINNER_CHOICE = 1  # the same, the form chosen by the other side
    CONCEDE_STAKE = 2  # the proposer concedes the stake and loses no dice

    @property
    def key(self) -> str:
        """The offer's config name (``negotiation.offers``)."""
        return OFFER_KINDS[self]


assert tuple(o.key for o in Offer) == OFFER_KINDS
_LOSER_CHOICE = Offer.LOSER_CHOICE  # read once (see the Result members above)
_CONCEDE_STAKE = Offer.CONCEDE_STAKE


def offer_menu(offers: Sequence[str]) -> list[Offer]:
    """Rule 17: the offers of the configured menu, in menu order."""
    return [Offer(OFFER_KINDS.index(k)) for k in offers]


def negotiation_open(
    enabled: bool, offers: Sequence[str], round_no: int, before_rolls: bool, between_rounds: bool
) -> bool:
    """Rule 17: offers may be made before round 1's roll and instead of continuing into a later round."""
    return enabled and bool(offers) and (before_rolls if round_no == 1 else between_rounds)


def winner_may_offer(enabled: bool, after_absolute: bool, winner_offers: bool, already_offered: bool) -> bool:
    """Rule 17: instead of naming exhausted or injured, the winner may propose a negotiated outcome, once."""
    return enabled and after_absolute and winner_offers and not already_offered


def form_loss_choices(dice: Sequence[int]) -> list[int]:
    """Rule 17: a negotiated loss of one size falls on a form (NPC: one die) that still has a size to lose."""
    return [i for i in SHEET_SLOTS if dice[i] > 0]


def offer_chooser(offer: Offer, winner: int, loser: int) -> int:
    """Rule 17: who picks the form the loser loses a size on."""
    return loser if offer is _LOSER_CHOICE else winner


# -- the owe list (Rules 18-19) --------------------------------------------------------------------
def owe_check_due(round_no: int, check_rounds: str) -> bool:
    """Rule 18: names go on the owe list at the end of round 1 only (a variant: every round)."""
    return round_no == 1 or check_rounds == "every"


def stronger_opponents(mine: Sequence[int], against: Sequence[int], rolled: Sequence[Sequence[int]]) -> list[int]:
    """Rule 18: the opponents in ``against`` who rolled bigger dice than ``mine`` (die sizes, largest first)."""
    mine_key = size_key(mine)  # rolled_lesser_dice(mine, theirs), with mine read once
    return [t for t in against if mine_key < size_key(rolled[t])]


def dice_compared_for_owing(
    dice: Sequence[int], advantage_dice: int, advantage_sides: int, count_advantage: bool
) -> tuple[int, ...]:
    """Rule 18: the dice a party rolled, as the lesser-dice test sees them (advantage dice excluded by default)."""
    return tuple(dice) + ((advantage_sides,) * advantage_dice if count_advantage else ())


# -- the chapter's end (Rules 20-21) ---------------------------------------------------------------
def chapter_returns(
    put_out: Sequence[int],
    in_chapter: Sequence[bool],
    conflict_score: Sequence[int],
    conflict_win_bonus: float,
    owe_entries: Sequence[int],
    end_value: float,
) -> list[float]:
    """Rules 20-21: +1 per opponent put out of the chapter, -1 for being put out, the conflict bonus, owe entries."""
    return [
        put_out[s] - (0 if in_chapter[s] else 1) + conflict_win_bonus * conflict_score[s] + end_value * owe_entries[s]
        for s in range(len(put_out))
    ]


def chapter_winner(returns: Sequence[float]) -> int | None:
    """Rules 20-21: the seat with the single best return wins; a shared best is no winner."""
    best = max(returns)
    return list(returns).index(best) if list(returns).count(best) == 1 else None

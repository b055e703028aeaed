"""The In a Wicked Age conflict state: a chapter of conflicts between PCs and NPCs.

Both scenarios (``duel.py``, ``melee.py``) play this machine; their rules cards say what each decides.
Rule numbers cite docs/rules/wicked_age.md; the rules themselves are the functions of ``rules.py`` and
``dice.py`` — this module only sequences them and narrates. A ``stage`` says where the chapter is (build,
forms draw, form picks, the negotiation window, opening rolls, ties, turns) and :meth:`WickedAgeState._proceed`
runs rules until a seat must decide or dice must be rolled; a pending consequence (``conseq``) or offer
(``offer``) takes precedence over the stage.

Chance outcomes (all small and enumerable, see :meth:`WickedAgeState.chance_outcomes`):
- a roll: ``(faces, advantage_sum)`` — one face per form/strength die in the order of
  ``roll_dice[seat]`` and the sum of the advantage dice;
- a tie reroll: the new face of the rerolled (lowest) die;
- a forms draw: the sorted tuple of the forms that fit this conflict's action.
"""

from __future__ import annotations

import enum
import functools
import itertools
import operator
import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import comb
from typing import Any, ClassVar, NamedTuple

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State
from envs.core.slots import slot_copier
from envs.wicked_age.actions import (
    DECISION_CONTEXTS,
    FORM_ACTIONS,
    MAX_STRENGTHS,
    NPC_FORM_ACTIONS,
    OFFER_BY_ACTION,
    Act,
    Ctx,
    action_label,
    challenge_action,
    challenge_targets,
    offer_action,
    offer_of,
    option_of,
)
from envs.wicked_age.config import MAX_DIE, MAX_PARTIES, ResolvedRules, WickedAgeConfig
from envs.wicked_age.dice import (
    Result,
    Roll,
    advantage_sum_distribution,
    compare_answer,
    roll_outcomes,
    roll_with_advantage,
)
from envs.wicked_age.observation import encode_observation, progress_table
from envs.wicked_age.rules import (
    FORM_TITLES,
    NPC_FORM_SLOTS,
    ONE_ON_ONE,
    SHEET_SLOTS,
    Decided,
    NpcForm,
    Offer,
    PcForm,
    Strength,
    absolute_outcome,
    advantage_dice,
    advantage_gainer,
    answer_order,
    challenge_choices,
    chapter_returns,
    chapter_winner,
    compared_readings,
    consequential_slot,
    default_consequence_slots,
    dice_compared_for_owing,
    dice_for_roll,
    form_dice,
    form_keys,
    form_loss_choices,
    is_out_of_chapter,
    lose_size,
    loses_move,
    lowest_die_slot,
    may_avoid_tie,
    negotiation_open,
    npc_pairs_largest_first,
    offer_chooser,
    offer_menu,
    opening_ties,
    owe_check_due,
    pass_advantage,
    reroll_lowest_die,
    stronger_opponents,
    turn_order,
    unresolved_advantage,
    usable_strengths,
    winner_may_offer,
)
from envs.wicked_age.stages import Stage, Terms

PC_FORM_IDS: tuple[int, ...] = tuple(int(f) for f in PcForm)
"""Rule 4: the six PC forms as plain ids (a forms draw is a sorted tuple of them)."""
_DRAWS: dict[tuple[int, ...], tuple[int, ...]] = {
    c: c for k in range(len(PC_FORM_IDS) + 1) for c in itertools.combinations(PC_FORM_IDS, k)
}
"""Rule 4: every sorted forms draw, mapped to itself (a valid sampled draw is found, not rebuilt and checked)."""
_SHUFFLE_DRAWS: tuple[tuple[int, int], ...] = tuple(
    (i + 1, (i + 1).bit_length()) for i in reversed(range(1, len(PC_FORM_IDS)))
)
"""``random.Random.shuffle`` of the six forms: for each place from the last, the bound ``n`` it draws below and the
bits ``_randbelow`` asks ``getrandbits`` for (redrawn while not below ``n``)."""
_DRAW_TABLES: dict[int, tuple[tuple[int, ...], ...]] = {}
"""Rule 4: by the number of forms drawn, the sorted draw of every sequence of shuffle draws (by its mixed-radix
index, see :func:`forms_draw`)."""


def _draw_table(available: int) -> tuple[tuple[int, ...], ...]:
    """The sorted forms draw of each sequence of ``_SHUFFLE_DRAWS`` outcomes, by index (built once per count)."""
    table = []
    for js in itertools.product(*(range(n) for n, _ in _SHUFFLE_DRAWS)):
        forms = list(PC_FORM_IDS)
        for (n, _), j in zip(_SHUFFLE_DRAWS, js, strict=True):
            forms[n - 1], forms[j] = forms[j], forms[n - 1]
        table.append(_DRAWS[tuple(sorted(forms[:available]))])
    return _DRAW_TABLES.setdefault(available, tuple(table))


assert _SHUFFLE_DRAWS == ((6, 3), (5, 3), (4, 3), (3, 2), (2, 2))  # the draws :func:`forms_draw` makes, written out


def forms_draw(rng: Rng, available: int) -> tuple[int, ...]:
    """Rule 4: ``available`` of the six forms, sorted: the first ones of ``rng.shuffle`` of them, with its draws.

    The shuffle's own draws are made here, written out: for each place from the last, ``random.Random._randbelow``
    of its bound ``n`` (``getrandbits`` of ``n``'s bit length, drawn again while not below ``n``: the same calls on
    the same outputs of the generator), and the draw is read from a table of every outcome by the mixed-radix index
    of the five draws (:data:`_DRAW_TABLES`): no shuffle, slice and sort per conflict and no Python frame per draw.
    An ``Rng`` of another kind (a subclass) shuffles as it would.
    """
    r = rng._r
    if type(rng) is not Rng or type(r) is not random.Random:
        forms = list(PC_FORM_IDS)
        rng.shuffle(forms)
        return tuple(sorted(forms[:available]))
    # written out, not a loop over _SHUFFLE_DRAWS: the loop measured 0.4k instructions a melee step more (99.2k
    # against 98.8k, `python -m training.bench.instructions`)
    g = r.getrandbits
    j0 = g(3)
    while j0 >= 6:  # noqa: PLR2004  (the bounds and bits of _SHUFFLE_DRAWS, asserted above)
        j0 = g(3)
    j1 = g(3)
    while j1 >= 5:  # noqa: PLR2004
        j1 = g(3)
    j2 = g(3)
    while j2 >= 4:  # noqa: PLR2004
        j2 = g(3)
    j3 = g(2)
    while j3 >= 3:  # noqa: PLR2004
        j3 = g(2)
    j4 = g(2)
    while j4 >= 2:  # noqa: PLR2004
        j4 = g(2)
    table = _DRAW_TABLES.get(available) or _draw_table(available)
    return table[(((j0 * 5 + j1) * 4 + j2) * 3 + j3) * 2 + j4]


EMPTY_SHEET: tuple[int, ...] = tuple(0 for _ in SHEET_SLOTS)
"""A sheet not (yet) shown: every die at 0."""
_LE = operator.le
_FIRST_CHANCE = int(Ctx.FORMS_DRAW)
"""Contexts below this one are decisions: ``node < _FIRST_CHANCE`` is ``Ctx(node).is_decision`` without a property
call."""
_CONTEXT_NAMES: dict[int, str] = {int(c): c.name.lower() for c in Ctx}
"""``decision_context()`` of each node id (the ``Ctx`` member's name, lower case)."""
_OTHER_CHANCE = (int(Ctx.FORMS_DRAW), int(Ctx.TIE_REROLL), int(Ctx.CASH_ROLL))
"""The chance nodes that draw something else (Rules 4, 8, 19): ``sample_chance`` rolls at any other node."""


class PickStep(enum.IntEnum):
    """Rule 4: the steps of one party's pick."""

    FIRST_FORM = 0
    SECOND_FORM = 1
    STRENGTH = 2
    DONE = 3


class TurnStep(enum.IntEnum):
    """Rules 9-10: the steps of one party's turn."""

    START = 0
    REROLL = 1  # the mover rerolls (unless its dice stand)
    CHALLENGE = 2  # the mover names its answerers
    ANSWERS = 3  # the named answerers answer


class OpenStep(enum.IntEnum):
    """Rules 7 and 19: the opening roll is simultaneous — every party decides on cashing, then all roll."""

    CASH = 0
    ROLL = 1


class TieStep(enum.IntEnum):
    """Rules 8 and 19: an opening tie — avoid or fight, decide on cashing (all tied parties), reroll low dice."""

    VOTE = 0
    CASH = 1
    REROLL = 2


assert PickStep.FIRST_FORM == TurnStep.START == OpenStep.CASH == TieStep.VOTE == 0  # the cursors' starts (_enter)


# Reading an enum member (``Ctx.BUILD``) costs about a quarter of a microsecond in Python 3.11, a module global a
# few tens of nanoseconds: the machine reads the values it uses at every step from these module names. The action ids,
# the node (``node``, ``roll_purpose``: a ``Ctx`` id) and the cursors of the stages are plain ints: Python 3.11
# specialises a comparison, an addition and a tuple index only for exact ints, not for an IntEnum member. (The legal
# lists hold the ``Act`` members themselves: callers keep the actions they are handed.) The stage stays a ``Stage``
# member, always one of the ``_STAGE_*`` names below, so the machine compares it by identity.
_ACT_ACCEPT = int(Act.ACCEPT)
_ACT_AVOID = int(Act.AVOID)
_ACT_CASH_OWE = int(Act.CASH_OWE)
_ACT_EXHAUST = int(Act.EXHAUST)
_ACT_FIGHT = int(Act.FIGHT)
_ACT_FORM_0 = int(Act.FORM_0)
_ACT_INJURE = int(Act.INJURE)
_ACT_INSIST = int(Act.INSIST)
_ACT_NO_STRENGTH = int(Act.NO_STRENGTH)
_ACT_NPC_FORM_0 = int(Act.NPC_FORM_0)
_ACT_ROLL = int(Act.ROLL)
_ACT_STRENGTH_0 = int(Act.STRENGTH_0)
_ACT_TAKE_DEFAULT = int(Act.TAKE_DEFAULT)
_ACT_TARGET_0 = int(Act.TARGET_0)
_CTX_ANSWER_ROLL = int(Ctx.ANSWER_ROLL)
_CTX_BUILD = int(Ctx.BUILD)
_CTX_CASH_ROLL = int(Ctx.CASH_ROLL)
_CTX_CHALLENGE = int(Ctx.CHALLENGE)
_CTX_CONSEQ_DEFAULT = int(Ctx.CONSEQ_DEFAULT)
_CTX_CONSEQ_OFFER = int(Ctx.CONSEQ_OFFER)
_CTX_CONSEQ_RESPONSE = int(Ctx.CONSEQ_RESPONSE)
_CTX_END = int(Ctx.END)
_CTX_FORMS_DRAW = int(Ctx.FORMS_DRAW)
_CTX_MOVER_ROLL = int(Ctx.MOVER_ROLL)
_CTX_OFFER_FORM = int(Ctx.OFFER_FORM)
_CTX_OFFER_RESPONSE = int(Ctx.OFFER_RESPONSE)
_CTX_OFFER_TARGET = int(Ctx.OFFER_TARGET)
_CTX_OPENING_ROLL = int(Ctx.OPENING_ROLL)
_CTX_PICK_FORM = int(Ctx.PICK_FORM)
_CTX_PICK_SECOND_FORM = int(Ctx.PICK_SECOND_FORM)
_CTX_PICK_STRENGTH = int(Ctx.PICK_STRENGTH)
_CTX_PRE_ROLL = int(Ctx.PRE_ROLL)
_CTX_TIE_AVOID = int(Ctx.TIE_AVOID)
_CTX_TIE_REROLL = int(Ctx.TIE_REROLL)
_CTX_WINDOW = int(Ctx.WINDOW)
_END_KNOCKOUT = EndReason.KNOCKOUT
_END_TIME_LIMIT = EndReason.TIME_LIMIT
_OFFER_CONCEDE_STAKE = Offer.CONCEDE_STAKE
_OFFER_LOSER_CHOICE = Offer.LOSER_CHOICE
_OFFER_WINNER_CHOICE = Offer.WINNER_CHOICE
_OPEN_CASH = int(OpenStep.CASH)
_OPEN_ROLL = int(OpenStep.ROLL)
_PICK_DONE = int(PickStep.DONE)
_PICK_FIRST_FORM = int(PickStep.FIRST_FORM)
_PICK_SECOND_FORM = int(PickStep.SECOND_FORM)
_PICK_STRENGTH = int(PickStep.STRENGTH)
_RESULT_ABSOLUTE_LOSS = Result.ABSOLUTE_LOSS
_RESULT_ABSOLUTE_WIN = Result.ABSOLUTE_WIN
_RESULT_LOSES_ADVANTAGE = Result.LOSES_ADVANTAGE
_STAGE_BUILD = Stage.BUILD
_STAGE_DRAW = Stage.DRAW
_STAGE_OPEN = Stage.OPEN
_STAGE_PICK = Stage.PICK
_STAGE_SETTLE = Stage.SETTLE
_STAGE_TIE = Stage.TIE
_STAGE_TURN = Stage.TURN
_STAGE_WINDOW = Stage.WINDOW
_TERMS_AGREED = Terms.AGREED
_TERMS_ASK = Terms.ASK
_TERMS_DEFAULT = Terms.DEFAULT
_TERMS_OFFERED = Terms.OFFERED
_TIE_CASH = int(TieStep.CASH)
_TIE_REROLL = int(TieStep.REROLL)
_TIE_VOTE = int(TieStep.VOTE)
_TURN_ANSWERS = int(TurnStep.ANSWERS)
_TURN_CHALLENGE = int(TurnStep.CHALLENGE)
_TURN_REROLL = int(TurnStep.REROLL)
_TURN_START = int(TurnStep.START)


class PendingOffer(NamedTuple):
    """Rule 17: an offer made before a round's roll: proposer, offer, addressee (None: not chosen yet)."""

    proposer: int
    kind: Offer
    target: int | None
    announced: bool = False


class Exchange(NamedTuple):
    """One answer of a conflict: who answered whom, with what result (Rule 11)."""

    answerer: int
    challenger: int
    result: Result


# A named tuple's ``__new__`` is a Python function (a frame per record); ``tuple.__new__`` bound to the class makes the
# same record from a tuple of its fields in C. The machine makes its offers and results at most steps this way.
_new_offer: Callable[[tuple[int, Offer, int | None, bool]], PendingOffer] = functools.partial(
    tuple.__new__, PendingOffer
)
_new_exchange: Callable[[tuple[int, int, Result]], Exchange] = functools.partial(tuple.__new__, Exchange)
_new_decided: Callable[[tuple[int, int]], Decided] = functools.partial(tuple.__new__, Decided)


_ROLLS: dict[tuple[tuple[int, ...], int], Roll] = {}
"""Rule 6: the reading of each roll as rolled, by ``(faces, advantage_sum)`` (a ``Roll`` is immutable: shared by every
state that rolls the same; cleared at :data:`_ROLLS_LIMIT`)."""
_ROLLS_LIMIT = 1 << 14


def _read(outcome: tuple[tuple[int, ...], int]) -> Roll:
    """The ``Roll`` of a roll as rolled, made and kept in :data:`_ROLLS`."""
    if len(_ROLLS) >= _ROLLS_LIMIT:
        _ROLLS.clear()
    roll = _ROLLS[outcome] = Roll(*outcome)
    return roll


@lru_cache(maxsize=4096)
def _challenge_menu(opponents: tuple[int, ...], parties: int) -> tuple[int, ...]:
    """Rule 9: the challenge actions naming any of the opponents, sorted (built once per set of opponents)."""
    return tuple(sorted(challenge_action(c, parties) for c in challenge_choices(opponents)))


@lru_cache(maxsize=4096)
def _named_answerers(action: int, parties: int) -> tuple[int, ...]:
    """Rule 9: the seats a challenge action names (``challenge_targets``, decoded once per action)."""
    return challenge_targets(action, parties)


_PartySets = tuple[tuple[int, ...], tuple[tuple[int, ...], ...], tuple[int, ...], list["_PartySets | None"]]
_PARTY_SETS: dict[tuple[bool, ...], _PartySets] = {}
"""By the conflict flags of the seats: the seats in the conflict, for each seat the others in it, for each cursor
``0..n`` the first seat in it at or after the cursor (``n``: none), and by seat the entry of the flags once that seat
has left (None until asked: see :meth:`WickedAgeState._leave_conflict`) (at most 2^8 keys per party count: the table
is never cleared)."""


def _party_sets(flags: tuple[bool, ...]) -> _PartySets:
    """The seats whose flag is set, the others for each seat, the next-seat table (from :data:`_PARTY_SETS`)."""
    hit = _PARTY_SETS.get(flags)
    if hit is None:
        n = len(flags)
        parties = tuple(s for s, f in enumerate(flags) if f)
        hit = _PARTY_SETS[flags] = (
            parties,
            tuple(tuple(t for t in parties if t != s) for s in range(n)),
            tuple(next((t for t in parties if t >= i), n) for i in range(n + 1)),
            [None] * n,
        )
    return hit


_TARGET_MENUS: dict[tuple[int, ...], tuple[int, ...]] = {}
"""Rule 17: the offer-target menu by the proposer's opponents in the conflict (shared menus; at most 2^8 keys
per party count, like :data:`_PARTY_SETS`)."""
_NO_PICKS: tuple[tuple[tuple[()], ...], ...] = tuple(((),) * n for n in range(MAX_PARTIES + 1))
"""By party count, an empty pick per seat (``list(map(list, ...))`` makes the fresh lists of a conflict's start)."""
_NO_ADVANTAGE: tuple[tuple[tuple[bool, ...], ...], ...] = tuple(((False,) * n,) * n for n in range(MAX_PARTIES + 1))
"""By party count, a row of no advantage per seat (Rule 13: none is held at a conflict's start)."""
_MENUS: dict[Hashable, tuple[int, ...]] = {}
"""Legal lists that depend on a few small values only, by the decision's name and those values: a build by the
kind and the filled forms (a negotiated loss: :data:`_LOSS_MENUS`; the picks of forms: :data:`_FIRST_PICK_MENUS`, of
a strength: :data:`_USABLE`).
The menus are tuples of plain ints, shared (``legal_tuple`` hands them out as they are, ``legal_actions`` as new
lists). The keys are
few (subsets of six forms, sheets of six dice); the cache is cleared at :data:`_MENUS_LIMIT`
all the same."""
_MENUS_LIMIT = 4096
_LOSS_MENUS: dict[tuple[bool, ...], tuple[int, ...]] = {}
"""Rule 17: the negotiated-loss menu by which dice of the loser's sheet are live (see
:meth:`WickedAgeState._form_loss_actions`; at most 2^6 keys: never cleared)."""
_TRUTH = operator.truth
_NO_LEGAL: tuple[int, ...] = ()
"""The legal ids of a chance node and of the end."""
_NPC_FORM_MENU: tuple[int, ...] = NPC_FORM_ACTIONS
"""Rule 4: an NPC picks any one of its three forms (a shared menu)."""
_RESPONSE_MENU: tuple[int, ...] = (int(Act.ACCEPT), int(Act.INSIST))
"""Rule 17: accept an offer or insist on the whip (a shared menu)."""
_PRE_ROLL_MENU: tuple[int, ...] = (int(Act.ROLL), int(Act.CASH_OWE))
"""Rule 19: roll, or cash an owe-list entry first (a shared menu)."""
_TIE_AVOID_MENU: tuple[int, ...] = (int(Act.AVOID), int(Act.FIGHT))
"""Rule 8: avoid the conflict or fight on (a shared menu)."""
_DEFAULT_CHOICES: tuple[int, int] = (int(Act.EXHAUST), int(Act.INJURE))
"""Rule 15: the winner's default consequences (the members read once: see the ``_ACT_*`` names)."""
_LANDED = None
assert _LANDED is None  # apply_action and apply_chance test for it as ``is None`` (no global read)
"""What a decision's or chance outcome's effect returns when it ran the machine on to the next node and set that
node's protocol fields itself (``node``, ``actor``, ``_player``, ``_legal``, each only where it changes): the
busiest transitions, whose next node and legal menu are known where they happen, land there without the generic
reading of the node in :meth:`WickedAgeState.apply_action` (its ``_LEGAL_AT`` call) or a :meth:`_proceed` call
(see :data:`_DECIDE_AT`)."""
_BUILD_NEXT: dict[tuple[int, ...], dict[int, tuple[int, ...]]] = {}
"""Rules 1-2: by a build menu (the forms still empty, as actions) and the form filled, the next menu: the same ids
without that one (at most 2^6 + 2^3 menus: never cleared)."""


def _first_pick_menu(available: tuple[int, ...]) -> tuple[int, ...]:
    """Rule 4: a PC's first pick: any of the forms that fit its action."""
    return tuple([FORM_ACTIONS[f] for f in available])


def _second_pick_menu(available: tuple[int, ...], first: int) -> tuple[int, ...]:
    """Rule 4: a PC's second pick: any other of the forms that fit its action."""
    return tuple([FORM_ACTIONS[f] for f in available if f != first])


_FIRST_PICK_MENUS: dict[tuple[int, ...], tuple[int, ...]] = {d: _first_pick_menu(d) for d in _DRAWS}
"""The first-pick menu of every sorted forms draw (shared menus)."""
_SECOND_PICK_MENUS: dict[tuple[int, ...], dict[int, tuple[int, ...]]] = {
    d: {f: _second_pick_menu(d, f) for f in d} for d in _DRAWS
}
"""By forms draw and first pick, the second-pick menu (shared in the same way)."""


def _menu(key: Hashable, menu: tuple[int, ...]) -> tuple[int, ...]:
    """Store ``menu`` in :data:`_MENUS` under ``key`` (bounded) and return it."""
    if len(_MENUS) >= _MENUS_LIMIT:
        _MENUS.clear()
    _MENUS[key] = menu
    return menu


# -- characters ------------------------------------------------------------------------------------
@dataclass
class Character:
    """A PC (six forms, one die each) or an NPC (three forms, two dice each, see ``NpcForm.slots``)."""

    name: str
    npc: bool
    dice: list[int]
    strengths: tuple[Strength, ...] = ()

    def form_dice(self, form: int) -> list[int]:
        """Rules 1-2: the dice one form rolls (a form at 0 rolls nothing)."""
        return form_dice(self.dice, self.npc, form)

    def form_names(self) -> tuple[str, ...]:
        return form_keys(self.npc)

    def copy(self) -> Character:
        """An independent copy (the dice change; name, kind and strengths are immutable and shared)."""
        return Character(self.name, self.npc, list(self.dice), self.strengths)

    def sheet(self) -> str:
        dice = self.dice
        if self.npc:
            return ", ".join([f"{title} {_d(dice[a])}+{_d(dice[b])}" for title, a, b in _NPC_SHEET])
        return ", ".join([f"{title} {_d(dice[slot])}" for title, slot in _PC_SHEET])


_PC_SHEET: tuple[tuple[str, int], ...] = tuple((FORM_TITLES[f.key], int(f)) for f in PcForm)
"""A PC sheet in reading order: each form's title and slot (read once, not per narration)."""
_NPC_SHEET: tuple[tuple[str, int, int], ...] = tuple((FORM_TITLES[f.key], *f.slots) for f in NpcForm)
"""An NPC sheet in reading order: each form's title and its two dice's slots."""


def _d(size: int) -> str:
    return f"d{size}" if size > 0 else "0"


def dice_text(sizes: Sequence[int]) -> str:
    """Die sizes as the rulebook says them ("d12, d10")."""
    return ", ".join(_d(s) for s in sizes) if sizes else "no dice"


class _Setup(NamedTuple):
    """What a config fixes for every game: the resolved rules, Rule 17's menus, the ladder, the build dice."""

    config: WickedAgeConfig
    rules: ResolvedRules
    offer_ids: tuple[int, ...]
    window_menu: tuple[int, ...]  # Rule 17: roll on or offer (a shared legal tuple)
    conseq_offer_menu: tuple[int, ...]  # Rule 17 after an absolute result (shared in the same way)
    fixed_menus: tuple[tuple[int, ...] | None, ...]  # by ``Ctx``: the menus fixed for a game (:func:`_fixed_menus`)
    round_stages: tuple[Stage, Stage]  # Rule 17: the stage a round starts in, by ``round_no == 1`` (window or rolls)
    ladder: tuple[int, ...]
    lose: dict[int, int]  # Rule 3 with the config's ladder and shield: each size up to MAX_DIE and the size it drops to
    default_slots: tuple[tuple[tuple[int, ...], ...], ...]  # Rule 15's slots by ``[npc][exhausted]``
    pc_build_dice: tuple[tuple[int, ...], ...]  # Rule 1: the PC dice, largest first, one per placement
    npc_build_dice: tuple[tuple[int, int], ...]  # Rule 2: the NPC die pairs, largest first


_SETUPS: dict[int, _Setup] = {}
"""Setups already read, by config identity (configs are frozen models; the entry keeps its config alive)."""
_SETUPS_LIMIT = 64
_PC_FORM_COUNT = len(PcForm)
_NPC_FORM_COUNT = len(NpcForm)


def _round_stage(rules: ResolvedRules, round_no: int) -> Stage:
    """Rule 17: the stage round ``round_no`` starts in: the negotiation window if offers may be made, else the rolls."""
    r = rules
    window = negotiation_open(r.negotiation_enabled, r.offers, round_no, r.offers_before_rolls, r.offers_between_rounds)
    return _STAGE_WINDOW if window else _STAGE_OPEN


def _setup_of(cfg: WickedAgeConfig) -> _Setup:
    """The setup of ``cfg``, read once per config (a new game reads no config attributes)."""
    setup = _SETUPS.get(id(cfg))
    if setup is not None and setup.config is cfg:
        return setup
    rules = ResolvedRules.from_config(cfg)
    # in increasing id order, as every legal tuple of this engine is (``legal_sorted``); the menu is a set of offers
    offer_ids = tuple(sorted(int(offer_action(o)) for o in offer_menu(rules.offers)))
    window_menu = (_ACT_ROLL, *offer_ids)
    conseq_offer_menu = (*offer_ids, _ACT_TAKE_DEFAULT)
    setup = _Setup(
        cfg,
        rules,
        offer_ids,
        window_menu,
        conseq_offer_menu,
        _fixed_menus(window_menu, conseq_offer_menu),
        (_round_stage(rules, 2), _round_stage(rules, 1)),  # ``negotiation_open`` reads ``round_no == 1`` only
        tuple(cfg.forms.ladder),
        {size: lose_size(size, cfg.forms.ladder, rules.min_die_hit) for size in range(MAX_DIE + 1)},
        tuple(
            tuple(default_consequence_slots(npc, ex, cfg.consequences) for ex in (False, True)) for npc in (False, True)
        ),
        tuple((d,) for d in sorted(cfg.forms.pc_dice, reverse=True)),
        tuple(npc_pairs_largest_first(cfg.forms.npc_pairs)),
    )
    if len(_SETUPS) >= _SETUPS_LIMIT:
        _SETUPS.clear()
    _SETUPS[id(cfg)] = setup
    return setup


_USABLE: dict[tuple[int | bool, ...], tuple[tuple[Strength, ...], tuple[int, ...] | None]] = {}
"""Rules 4-5: the strength pick's menu (None: no strength usable) by the identity of a sheet's strengths tuple
(kept alive by the entry and checked, so a reused id cannot hit), its kind and its picks: a pick asks twice (whether
to stop, then the menu), and the same few sheets recur. The lists are shared, like those of :data:`_MENUS`."""

_CHARACTERS: dict[tuple[int, str], tuple[WickedAgeConfig, tuple[Character, ...]]] = {}
"""The characters each scenario sets up from a config, by config identity and scenario (kept as templates)."""


def characters_of(
    cfg: WickedAgeConfig, scenario: str, build: Callable[[WickedAgeConfig], list[Character]]
) -> list[Character]:
    """Fresh copies of the characters ``build(cfg)`` sets up for ``scenario`` (built once per config)."""
    key = (id(cfg), scenario)
    hit = _CHARACTERS.get(key)
    if hit is None or hit[0] is not cfg:
        if len(_CHARACTERS) >= _SETUPS_LIMIT:
            _CHARACTERS.clear()
        hit = _CHARACTERS[key] = (cfg, tuple(build(cfg)))
    return [c.copy() for c in hit[1]]


# -- the state -------------------------------------------------------------------------------------
CLONE_COPIED: tuple[str, ...] = (
    "log",
    "in_chapter",
    "owe",
    "put_out",
    "conflict_score",
    "in_conflict",
    "available",
    "strength_used",
    "roll_dice",
    "cashed",
    "rolls",
    "order",
    "moved",
    "challenged",
    "tied",
    "results",
    "pending_cash",
    "fresh_adv",
    "adv_rolled",
    "settle",
    "build_filled",
    "answerers",
    "avoid_votes",
    "_rows",
    "_heads",
    "_forms",
)
"""The flat lists of the state that :meth:`WickedAgeState.clone` copies (the machine changes them in place)."""
CLONE_NESTED: tuple[str, ...] = ("picks", "adv", "drafts", "chars")
"""The lists of lists (and characters) that :meth:`WickedAgeState.clone` copies one level deeper."""
CLONE_SHARED: tuple[str, ...] = (
    "build_dice",
    "_names",
    "_legal",
    "_window_menu",
    "_conseq_offer_menu",
    "_fixed_menus",
    "_lose",
)
"""Containers that are only ever replaced, never changed in place: clones share them (the legal ids and the menus
are shared tuples, and ``_lose`` is the config's table of Rule 3)."""


class WickedAgeState(State):
    """A chapter of In a Wicked Age conflicts (see the module docstring)."""

    legal_sorted = True  # every legal tuple lists its ids in increasing order (``rulebreaker check`` verifies it)
    player_kept = True  # current_player() is the kept _player (``rulebreaker check`` verifies it at every node)
    legal_kept = True  # legal_tuple() is the kept _legal (``rulebreaker check`` verifies it at every node)

    FIELDS: ClassVar[tuple[str, ...]] = (
        "_chapter_sets",
        "_conseq_offer_menu",
        "_default_slots",
        "_fixed_menus",
        "_forms",
        "_heads",
        "_keep_advantage",
        "_legal",
        "_lose",
        "_names",
        "_next_in",
        "_offer_ids",
        "_opponents_of",
        "_outcome",
        "_parties_in",
        "_player",
        "_progress",
        "_progress_table",
        "_round_stages",
        "_rows",
        "_rows_seat",
        "_sampled",
        "_sampled_adv",
        "_sampled_dice",
        "_sets",
        "_window_menu",
        "actor",
        "adv",
        "adv_rolled",
        "answer_idx",
        "answerers",
        "available",
        "avoid_votes",
        "build_dice",
        "build_filled",
        "cash_done",
        "cashed",
        "cfg",
        "challenged",
        "challenger",
        "chars",
        "conflict_no",
        "conflict_score",
        "conflict_win_bonus",
        "conseq",
        "drafts",
        "exchanged",
        "forms_available",
        "fresh_adv",
        "idx",
        "in_chapter",
        "in_conflict",
        "ladder",
        "last_result",
        "log",
        "max_conflicts",
        "moved",
        "narrating",
        "node",
        "num_players",
        "offer",
        "open_step",
        "order",
        "owe",
        "pending_cash",
        "pick_step",
        "picks",
        "put_out",
        "results",
        "roll_dice",
        "roll_purpose",
        "rolls",
        "round_no",
        "rules",
        "settle",
        "stage",
        "strength_used",
        "terms",
        "terms_by",
        "terms_offer",
        "tie_idx",
        "tie_rerolls",
        "tie_step",
        "tied",
        "turn_step",
        "winner_offered",
    )
    """Every attribute of a state (the protocol's ``num_players``, ``log``, ``_outcome`` and ``narrating`` too), all
    set by ``__init__``."""
    # Slots, not an instance dict: Python 3.11 shares an instance dict's keys with the class only up to 30 keys,
    # and an unshared dict defeats the specialisation of every ``self.method()`` call. (The protocol's State has
    # no __slots__, so an instance still has an empty __dict__ nothing writes to.)
    __slots__ = FIELDS

    def __init__(
        self,
        cfg: WickedAgeConfig,
        characters: list[Character],
        *,
        max_conflicts: int,
        forms_available: int = len(PcForm),
        build: bool = False,
        conflict_win_bonus: float = 0.0,
        owe_list: Sequence[int] = (),
        start: bool = True,
    ) -> None:
        super().__init__(len(characters))
        self.narrating = True  # the protocol's class default, which the slot hides
        if not ONE_ON_ONE <= len(characters) <= MAX_PARTIES:
            raise ValueError(f"a conflict needs 2..{MAX_PARTIES} parties")
        self.cfg = cfg
        setup = _setup_of(cfg)  # the values read at every step, resolved once per config
        self.rules = rules = setup.rules
        self.chars = characters
        self._names: list[str] | None = None
        self._keep_advantage = rules.keep_advantage  # Rule 13, read at every observation
        self._offer_ids = setup.offer_ids  # Rule 17's menu
        # the menus fixed for the game: shared tuples, the same for every game of the config
        self._window_menu = setup.window_menu  # Rule 17: roll on or offer
        self._conseq_offer_menu = setup.conseq_offer_menu  # Rule 17 after an absolute result
        self._fixed_menus = setup.fixed_menus
        self._round_stages = setup.round_stages  # Rule 17: whether a round opens with the negotiation window
        n = len(characters)
        self.max_conflicts = max_conflicts
        self.forms_available = forms_available
        self.conflict_win_bonus = conflict_win_bonus
        self.ladder = setup.ladder
        self._lose = setup.lose  # Rule 3's sizes, read from a table (see :meth:`_lose_size`)
        self._default_slots = setup.default_slots  # Rule 15 (``default_consequence_slots``) by kind and consequence
        self.in_chapter = [True] * n
        self.owe: list[int] = list(owe_list)
        self.put_out = [0] * n  # opponents this seat put out of the chapter
        self.conflict_score = [0] * n  # conflicts won minus lost
        self.conflict_no = 0
        # conflict state
        self.in_conflict = [False] * n
        # the party sets (:data:`_PARTY_SETS`) of ``in_conflict`` and of ``in_chapter``, kept where either changes
        self._sets = _party_sets(tuple(self.in_conflict))
        self._chapter_sets = _party_sets(tuple(self.in_chapter))
        # the seats in the conflict, by seat the others in it, by cursor the first seat in it from it (n: none)
        self._parties_in, self._opponents_of, self._next_in, _ = self._sets
        self.available: list[tuple[int, ...]] = [PC_FORM_IDS] * n
        self.picks: list[list[int]] = [[] for _ in range(n)]
        self.strength_used: list[int | None] = [None] * n
        self.roll_dice: list[tuple[int, ...]] = [()] * n
        self.cashed = [0] * n
        self.adv = [[False] * n for _ in range(n)]
        self.round_no = 0
        self.rolls: list[Roll | None] = [None] * n
        self.order: list[int] = []
        self.moved = [False] * n
        self.challenged = [False] * n
        self.exchanged: set[tuple[int, int]] = set()
        self.tie_rerolls = 0
        self.tied: list[int] = []
        self.last_result: Result | None = None
        self.results: list[Exchange] = []  # the answers of this conflict
        # machine
        self.stage = _STAGE_BUILD if build else _STAGE_DRAW
        self.idx = 0  # seat / order index within the stage
        self.pick_step = _PICK_FIRST_FORM
        self.turn_step = _TURN_START
        self.tie_idx = 0  # which tied party decides / rerolls next
        self.open_step = _OPEN_CASH
        self.tie_step = _TIE_VOTE
        self.pending_cash = [0] * n  # Rule 19: entries cashed in a simultaneous decision, applied once all decided
        self.fresh_adv = [0] * n  # Rule 19: advantage dice cashed before a tie reroll, still to be rolled
        self.adv_rolled = [0] * n  # Rule 18: advantage dice in each party's latest roll
        self.settle: list[Decided] = []  # Rule 12: advantages that win after the last round
        self.node = _CTX_END
        self.actor = 0
        self.build_dice: list[tuple[int, ...]] = []  # the dice (PC) or die pairs (NPC) still to place, largest first
        self.build_filled: list[bool] = []
        self.cash_done = False
        self.roll_purpose = _CTX_OPENING_ROLL
        self.challenger: int | None = None
        self.answerers: list[int] = []
        self.answer_idx = 0
        self.offer: PendingOffer | None = None
        self.conseq: Decided | None = None  # (winner, loser) awaiting consequences
        self.terms = _TERMS_ASK
        self.terms_offer: Offer | None = None
        self.terms_by: int | None = None  # who proposed the pending or agreed offer
        self.winner_offered = False  # the winner has made its one offer for this consequence
        self.avoid_votes: list[bool] = []
        self._legal: tuple[int, ...] = _NO_LEGAL  # the legal ids of the node (see :meth:`_proceed`)
        self._player = CHANCE  # ``current_player()``: node END without an outcome reads as chance until started
        # The observation's kept blocks (``observation.py``), None when stale: each is dropped wherever a value it
        # reads changes, and packed again by the next observation that needs it.
        self._rows: list[bytes | None] = [None] * n
        """Each party's 22 features as seat ``_rows_seat`` sees them (``observation.party_rows``): dropped wherever
        one of them changes — a sheet die, a chapter or conflict flag or the rolled dice (:meth:`_sheet_changed`),
        an advantage passing, an entry cashed or listed, an opponent leaving when advantage is not kept, an answer,
        a move, a roll, a challenger named, a round's start, the turns begun or over (the challenger's flag); during
        the build they show hidden sheets, and the conflict the build ends in drops them all."""
        self._rows_seat = 0
        """The seat ``_rows`` are seen by (an observation of another seat drops them all and keeps its own)."""
        self._heads: list[bytes | None] = [None] * n
        """Each party's first ten row features, the same for every observer (``observation.party_rows``): dropped
        with its row where its sheet dice or its chapter or conflict flag change (:meth:`_sheet_changed`, a lost
        size, leaving the conflict, a conflict's start, which ends the build's hidden sheets), and kept where only
        the rest of its row changes (a roll, a move, an answer, an advantage, the owe list, a round's start)."""
        self._forms: list[bytes | None] = [None] * n
        """Each seat's fitting-forms and first-pick block (``observation.forms_block``): dropped at a forms draw, a
        first pick and a conflict's start."""
        self._progress: bytes | None = None
        """The round and conflict progress block (``observation.progress_block``): dropped where either changes."""
        self._progress_table = progress_table(n, rules.max_rounds, max_conflicts)  # every block of the game, shared
        self._sampled: Any = None  # the roll sample_chance last drew, its dice and advantage dice (see _apply_roll)
        self._sampled_dice: tuple[int, ...] = ()
        self._sampled_adv = 0
        self.drafts: list[list[int]] = []  # Rules 1-2: the hidden sheets being built
        if build:
            self.drafts = [[0] * len(SHEET_SLOTS) for _ in characters]
            for ch in characters:
                ch.dice = [0] * len(SHEET_SLOTS)
            self._start_build(0)
        if start:
            self._begin()

    # -- setup helpers --------------------------------------------------------------------------
    def _begin(self) -> None:
        if self.stage is _STAGE_DRAW:
            self._start_conflict()
        self._proceed()

    @property
    def names(self) -> list[str]:
        """The parties' names, in seat order (built once: names never change)."""
        names = self._names
        if names is None:
            names = self._names = [c.name for c in self.chars]
        return names

    @property
    def in_turns(self) -> bool:
        """The conflict is in its turns (Rules 9-13)."""
        return self.stage is _STAGE_TURN

    @property
    def in_build(self) -> bool:
        """The sheets are being built (Rules 1-2): each seat sees only its own draft."""
        return self.stage is _STAGE_BUILD

    def _sheet_changed(self, s: int) -> None:
        """``s``'s sheet dice, chapter or conflict flag or rolled dice changed: its kept row and head are stale."""
        self._rows[s] = None
        self._heads[s] = None

    def strength_of(self, s: int) -> Strength | None:
        """The particular strength seat ``s`` rolls in this conflict, if any."""
        i = self.strength_used[s]
        return None if i is None else self.chars[s].strengths[i]

    def pending_offer_kind(self) -> Offer | None:
        """The offer awaiting an answer (before a roll, or instead of the default consequence)."""
        if self.offer is not None:
            return self.offer.kind
        if self.terms is _TERMS_OFFERED:
            return self.terms_offer
        return None

    # == Protocol =================================================================================
    def current_player(self) -> int:
        return self._player  # kept by :meth:`_proceed` wherever the machine stops

    def decision_context(self) -> str:
        return _CONTEXT_NAMES[self.node]

    def legal_actions(self) -> list[int]:
        return list(self._legal)  # found where the machine stopped (:meth:`_proceed`); a list for the caller

    def legal_tuple(self) -> tuple[int, ...]:
        return self._legal  # the kept tuple itself (immutable: no copy)

    def _legal_here(self) -> tuple[int, ...]:
        """The legal actions of the seat to move: :data:`_LEGAL_AT` holds one function per decision kind."""
        return _LEGAL_AT[self.node](self, self.actor)

    # the legal actions of each decision kind (``s`` the seat to move), in the order of ``Ctx``: tuples of plain ints
    # (shared menus, see :data:`_MENUS`), which ``legal_tuple`` hands out as they are; plain ints, not ``Act`` members,
    # so an action picked from them needs no ``int()`` in :meth:`apply_action` and sorts by the exact-int fast path
    def _legal_build(self, s: int) -> tuple[int, ...]:
        key = ("build", self.chars[s].npc, *self.build_filled)
        menu = _MENUS.get(key)
        if menu is None:
            acts = NPC_FORM_ACTIONS if self.chars[s].npc else FORM_ACTIONS
            menu = _menu(key, tuple([a for i, a in enumerate(acts) if not self.build_filled[i]]))
        return menu

    def _legal_pick_form(self, s: int) -> tuple[int, ...]:
        if self.chars[s].npc:
            return _NPC_FORM_MENU
        available = self.available[s]
        menu = _FIRST_PICK_MENUS.get(available)  # every sorted draw (any other tuple: built as the table builds it)
        return menu if menu is not None else _first_pick_menu(available)

    def _legal_pick_second_form(self, s: int) -> tuple[int, ...]:
        available, first = self.available[s], self.picks[s][0]
        menus = _SECOND_PICK_MENUS.get(available)
        return menus[first] if menus is not None and first in menus else _second_pick_menu(available, first)

    def _legal_pick_strength(self, s: int) -> tuple[int, ...]:
        menu = self._strength_menu(s)
        assert menu is not None  # the pick stops here only with a strength to use
        return menu

    def _legal_window(self, s: int) -> tuple[int, ...]:
        return self._window_menu

    def _legal_offer_target(self, s: int) -> tuple[int, ...]:
        opponents = self._opponents_of[s]  # a kept tuple of :data:`_PARTY_SETS`: few distinct ones
        menu = _TARGET_MENUS.get(opponents)
        if menu is None:
            menu = _TARGET_MENUS[opponents] = tuple([_ACT_TARGET_0 + t for t in opponents])
        return menu

    def _legal_response(self, s: int) -> tuple[int, ...]:
        return _RESPONSE_MENU

    def _legal_offer_form(self, s: int) -> tuple[int, ...]:
        assert self.conseq is not None
        return self._form_loss_actions(self.conseq.loser)

    def _legal_pre_roll(self, s: int) -> tuple[int, ...]:
        return _PRE_ROLL_MENU

    def _legal_tie_avoid(self, s: int) -> tuple[int, ...]:
        return _TIE_AVOID_MENU

    def _legal_challenge(self, s: int) -> tuple[int, ...]:
        return _challenge_menu(self._opponents_of[s], self.num_players)

    def _legal_conseq_offer(self, s: int) -> tuple[int, ...]:
        return self._conseq_offer_menu

    def _legal_conseq_default(self, s: int) -> tuple[int, ...]:
        r = self.rules
        may_offer = winner_may_offer(
            r.negotiation_enabled, r.offers_after_absolute, r.winner_offers, self.winner_offered
        )
        # the offers (Rule 17, ids below EXHAUST's) first: the tuple in increasing order (``legal_sorted``)
        return (*self._offer_ids, *_DEFAULT_CHOICES) if may_offer else _DEFAULT_CHOICES

    def _opponents(self, s: int) -> tuple[int, ...]:
        """The others still in the conflict, in seat order (kept by :meth:`_leave_conflict`)."""
        return self._opponents_of[s]

    def _leave_conflict(self, s: int) -> None:
        """``s`` is out of this conflict: its public block is stale, the kept party sets are read anew.

        ``in_conflict`` changes only here and at a conflict's start; the seats in it, each seat's opponents and the
        next seat in it from each cursor are read at most machine steps, kept as tuples from :data:`_PARTY_SETS`
        rather than rebuilt (or scanned for) per step. The entry after ``s`` leaves is kept in the entry before
        (its last item, by seat): found there, the flags are neither copied nor hashed.
        """
        self.in_conflict[s] = False
        self._heads[s] = None  # its conflict flag
        if self._keep_advantage:
            self._rows[s] = None
        else:  # the advantage dice of whoever held an advantage over ``s`` change too
            self._rows = [None] * self.num_players
        after = self._sets[3]
        sets = after[s]
        if sets is None:
            sets = after[s] = _party_sets(tuple(self.in_conflict))
        self._sets = sets
        self._parties_in, self._opponents_of, self._next_in, _ = sets

    def action_label(self, action: int) -> str:
        s = self.actor if self.node < _FIRST_CHANCE else 0
        offer_form_npc = self.node == _CTX_OFFER_FORM and self.conseq is not None and self.chars[self.conseq.loser].npc
        return action_label(action, self.names, [st.spec for st in self.chars[s].strengths], offer_form_npc)

    def option_of(self, action: int) -> str | None:
        build_die: tuple[int, int] | None = None
        if self.node == _CTX_BUILD and not self.chars[self.actor].npc:
            build_die = (self.build_dice[sum(self.build_filled)][0], self.build_dice[0][0])
        return option_of(action, self.node, [c.npc for c in self.chars], build_die)

    def resources(self, seat: int) -> dict[str, float]:
        """Dice sizes total, owe-list entries, advantage dice (held now)."""
        return {
            "dice_total": float(sum(self.chars[seat].dice)),
            "owe_entries": float(self.owe.count(seat)),
            "advantage_dice": float(self.advantage_dice(seat)),
        }

    def returns(self) -> list[float]:
        if self._outcome is None:
            return [0.0] * self.num_players
        return list(self._outcome.returns)

    def clone(self) -> WickedAgeState:
        """A structural copy: fresh containers for everything the machine mutates, the rest shared.

        The config, the resolved rules, the log's events, rolls, offers, results and tuples are immutable and
        shared; the lists of :data:`CLONE_COPIED` are copied (those of :data:`CLONE_NESTED` one level deeper),
        the set of exchanges too, and the characters are copied because consequences change their dice. The
        lists of :data:`CLONE_SHARED` are only ever replaced, never changed in place, so they are shared.
        """
        new = object.__new__(type(self))
        _copy_slots(new, self)  # every slot, those of CLONE_COPIED and the exchanges as copies
        new.picks = [p.copy() for p in self.picks]
        new.adv = [row.copy() for row in self.adv]
        if self.drafts:
            new.drafts = [x.copy() for x in self.drafts]
        new.chars = [c.copy() for c in self.chars]
        return new

    def key(self) -> Hashable:
        return (
            int(self.stage),
            self.idx,
            int(self.pick_step),
            int(self.turn_step),
            self.tie_idx,
            int(self.open_step),
            int(self.tie_step),
            tuple(self.pending_cash),
            tuple(self.fresh_adv),
            tuple(self.adv_rolled),
            tuple(self.settle),
            int(self.node),
            self.actor,
            self.conflict_no,
            self.round_no,
            tuple([tuple(c.dice) for c in self.chars]),
            tuple(self.in_chapter),
            tuple(self.in_conflict),
            tuple(self.owe),
            tuple(self.put_out),
            tuple(self.conflict_score),
            tuple(self.available),
            tuple([tuple(p) for p in self.picks]),
            tuple(self.strength_used),
            tuple(self.cashed),
            tuple([tuple(r) for r in self.adv]),
            tuple([(r.faces, r.advantage) if r is not None else None for r in self.rolls]),
            tuple(self.order),
            tuple(self.moved),
            tuple(self.challenged),
            tuple(sorted(self.exchanged)),
            self.tie_rerolls,
            tuple(self.tied),
            self.cash_done,
            int(self.roll_purpose),
            self.challenger,
            tuple(self.answerers),
            self.answer_idx,
            self.offer,
            self.conseq,
            self.terms._value_,  # Terms.value without the enum property
            self.terms_offer,
            self.terms_by,
            self.winner_offered,
            tuple(self.avoid_votes),
            tuple(self.build_dice),
            tuple(self.build_filled),
            tuple([tuple(d) for d in self.drafts]),
            self._outcome is not None,
        )

    # == Chance ===================================================================================
    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        node, s = self.node, self.actor
        if node == _CTX_FORMS_DRAW:
            combos = list(itertools.combinations(PC_FORM_IDS, self.forms_available))
            return [(c, 1.0 / len(combos)) for c in combos]
        if node == _CTX_TIE_REROLL:
            die = self.roll_dice[s][self._lowest_slot(s)]
            return [(f, 1.0 / die) for f in range(1, die + 1)]
        if node == _CTX_CASH_ROLL:
            return [(t, float(q)) for t, q in advantage_sum_distribution(self.fresh_adv[s], self.rules.advantage_sides)]
        if node in (_CTX_OPENING_ROLL, _CTX_MOVER_ROLL, _CTX_ANSWER_ROLL):
            return list(roll_outcomes(self.roll_dice[s], self.advantage_dice(s), self.rules.advantage_sides))
        raise ValueError("not a chance node")

    def sample_chance(self, rng: Rng) -> Hashable:
        node, s = self.node, self.actor
        if node not in _OTHER_CHANCE:  # a roll (the commonest chance node) first, without three comparisons
            # the same roll `odds wicked_age --simulate` samples; its advantage dice by :meth:`advantage_dice`, whose
            # no-advantage shortcut is inlined (most rolls hold none: no call)
            dice, holds, cashed = self.roll_dice[s], self.adv[s], self.cashed[s]
            if cashed or True in holds:
                k = advantage_dice(holds, self.in_conflict, self._keep_advantage, cashed)
                outcome = roll_with_advantage(rng, dice, k, self.rules.advantage_sides)
            elif len(dice) == 2:  # noqa: PLR2004  (the commonest roll: two dice, no advantage dice)
                # ``roll_with_advantage``'s draws for it, inlined (no call): a face per die in order, no advantage sum
                rnd = rng.random
                d0, d1 = dice
                k, outcome = 0, ((int(rnd() * d0) + 1, int(rnd() * d1) + 1), 0)
            else:
                k, outcome = 0, roll_with_advantage(rng, dice, 0, self.rules.advantage_sides)
            self._sampled, self._sampled_dice, self._sampled_adv = outcome, dice, k  # valid as drawn: see _apply_roll
            return outcome
        if node == _CTX_FORMS_DRAW:
            return forms_draw(rng, self.forms_available)
        if node == _CTX_TIE_REROLL:
            return rng.d(self.roll_dice[s][self._lowest_slot(s)])
        return sum(rng.roll(self.fresh_adv[s], self.rules.advantage_sides))  # CASH_ROLL

    def apply_chance(self, outcome: Hashable) -> None:
        if self._player != CHANCE:
            raise ValueError("apply_chance at a decision node")
        # as for decisions (see :meth:`apply_action`): True when the outcome ran the next step and it stopped
        stopped = _CHANCE_AT[self.node](self, self.actor, outcome)
        if stopped is None:  # :data:`_LANDED` (None), the commonest return, tested first: nothing left to read
            return
        if stopped:
            node = self.node  # :meth:`_proceed`'s reading of the node it stopped at, inlined (no call for it)
            if node >= _FIRST_CHANCE:
                self._player = CHANCE
                self._legal = _NO_LEGAL
            else:
                self._player = s = self.actor
                self._legal = self._fixed_menus[node] or _LEGAL_AT[node](self, s)
        else:
            self._proceed()

    # the effect of each chance kind (``s`` the seat it is drawn for), by node id in :data:`_CHANCE_AT`; a roll is
    # :meth:`_apply_roll`
    def _on_forms_draw(self, s: int, outcome: Any) -> bool | None:
        """Rule 4: the forms that fit ``s``'s action are drawn; the draw stage goes on (nothing is pending)."""
        # a sorted draw as sampled is found as itself; anything else is rebuilt and checked
        forms = _DRAWS.get(outcome) if type(outcome) is tuple else None
        if forms is None or len(forms) != self.forms_available:
            forms = tuple(sorted(int(f) for f in outcome))
            if len(forms) != self.forms_available or not set(forms) <= set(PC_FORM_IDS):
                raise ValueError(f"bad forms draw {outcome!r}")
        self.available[s] = forms
        self._forms[s] = None
        if self.narrating:
            self.narrate(
                "forms",
                f"For {self.names[s]}'s action these forms fit: "
                + ", ".join(FORM_TITLES[PcForm(f).key] for f in forms)
                + ".",
                s,
                forms=forms,
            )
        # :meth:`_draw_step` for the next PC in the conflict, written out and landed when it is one (the same chance
        # node, another actor)
        n = self.num_players
        next_in, chars = self._next_in, self.chars
        t = next_in[s + 1]
        while t < n:
            if not chars[t].npc:
                self.idx = self.actor = t
                return _LANDED
            t = next_in[t + 1]
        # no PC left to draw for: the picks begin (:meth:`_draw_step`'s end, inlined), landed at the first party's
        # first pick (:meth:`_pick_step`'s first stop, which :meth:`_proceed` would run next: nothing is pending during
        # the draws; a conflict has two or more parties, and ``pick_step`` is at its start)
        self.stage = _STAGE_PICK
        t = self.idx = next_in[0]
        self.node = _CTX_PICK_FORM
        self.actor = self._player = t
        self._legal = self._legal_pick_form(t)
        return _LANDED

    def _on_tie_reroll(self, s: int, outcome: Any) -> bool:
        """Rule 8: ``s`` rerolls its lowest die."""
        self._reroll_lowest_die(s, int(outcome))
        self.tie_idx += 1
        return False

    def _on_cash_roll(self, s: int, outcome: Any) -> bool:
        """Rule 19: ``s`` rolls the advantage dice it cashed before a tie reroll."""
        self._roll_fresh_advantage(s, int(outcome))
        return False

    def _apply_roll(self, s: int, outcome: Any) -> bool | None:
        """Rules 6-7 and 10: ``s``'s roll ``(faces, advantage_sum)`` is read and stands, or answers."""
        dice = self.roll_dice[s]
        if outcome is self._sampled and dice is self._sampled_dice:
            # the outcome this very roll drew (sample_chance): Python ints in range, its advantage dice counted
            faces, adv = outcome
            k = self._sampled_adv
        else:
            faces = tuple(map(int, outcome[0]))
            adv = int(outcome[1])
            # one face per die, each in 1..its size (checked by C-level calls)
            if len(faces) != len(dice) or (faces and (min(faces) < 1 or not all(map(_LE, faces, dice)))):
                raise ValueError(f"{self.names[s]} rolls {dice_text(dice)}; bad faces {faces}")
            k = self.advantage_dice(s)
            if not k <= adv <= k * self.rules.advantage_sides:
                raise ValueError(f"{self.names[s]} rolls {k} advantage dice; bad sum {adv}")
            outcome = (faces, adv)
        self._sampled = None
        roll = _ROLLS.get(outcome) or _read(outcome)
        self.rolls[s] = roll
        self._rows[s] = None
        self.adv_rolled[s] = k
        self.cash_done = False
        # the roll is read: an opening roll or a mover's reroll runs the stage's next step (True: it stopped)
        purpose = self.roll_purpose
        if purpose == _CTX_OPENING_ROLL:
            if self.narrating:
                ch = self.chars[s]
                self.narrate(
                    "roll",
                    f"{ch.name} rolls {dice_text(self.roll_dice[s])}{self._adv_text(s)}: {roll.text()}.",
                    s,
                    faces=roll.faces,
                    advantage=roll.advantage,
                    key=roll.key,
                )
            # :meth:`_open_step`'s roll step for the next party, written out and landed when there is one (the same
            # chance node and purpose, another actor); else the step runs on (nothing is pending during the rolls)
            t = self._next_in[self.idx + 1]
            if t < self.num_players:
                self.idx = self.actor = t
                return _LANDED
            # the rolls are done: the ties are found (:meth:`_open_step`'s end, written out); without one the turn
            # order follows and the turns begin here (:meth:`_tie_step`'s first branch and the turns' first step, as
            # :meth:`_proceed` would run them: nothing is pending during the opening rolls)
            self.stage, self.idx, self.open_step = _STAGE_TIE, 0, _OPEN_CASH
            self.tie_rerolls = 0
            tied = self.tied = self._find_ties()
            self.avoid_votes = []
            if tied:
                return False  # Rule 8: the tie step
            self._establish_order()
            if self.challenger is not None:
                self._rows[self.challenger] = None  # the turns flag the standing challenger again (:meth:`_enter`)
            self.stage = _STAGE_TURN
            return self._turn_step()
        if purpose == _CTX_MOVER_ROLL:
            if self.narrating:
                self.narrate(
                    "reroll",
                    f"{self.chars[s].name} rerolls{self._adv_text(s)}: {roll.text()}.",
                    s,
                    faces=roll.faces,
                    advantage=roll.advantage,
                    key=roll.key,
                )
            self.turn_step = _TURN_CHALLENGE
            return self._turn_step()  # the mover challenges (nothing is pending before an answer)
        # ANSWER_ROLL: an absolute result leaves a consequence pending, else the turns go on; either step runs here, as
        # :meth:`_proceed` would run it first (the game is never over after an answer, and no offer is pending in the
        # turns)
        self._resolve_answer(s, roll)
        return self._consequence_step() if self.conseq is not None else self._turn_step()

    # == Decisions ================================================================================
    def apply_action(self, action: int) -> None:
        if type(action) is not int:  # ``type(x) is int``: a specialised call, cheaper than int()
            action = int(action)
        if action not in self._legal:  # empty at a chance node and at the end
            raise IllegalActionError(
                f"illegal action {action} ({self.action_label(action)}) at {self.decision_context()}"
            )
        stopped = _DECIDE_AT[self.node](self, self.actor, action)
        if stopped is None:  # :data:`_LANDED` (None), the commonest return, tested first: nothing left to read
            return
        if stopped:  # True: the decision ran the next step, and it stopped
            node = self.node  # :meth:`_proceed`'s reading of the node it stopped at, inlined (no call for it)
            if node >= _FIRST_CHANCE:
                self._player = CHANCE
                self._legal = _NO_LEGAL
            else:
                self._player = s = self.actor
                self._legal = self._fixed_menus[node] or _LEGAL_AT[node](self, s)
        else:  # False: the machine runs on
            self._proceed()

    # the effect of each decision kind (``s`` the seat that decided, ``a`` its legal action), in the order of ``Ctx``.
    # Each returns True when it ran the machine's next step itself and that step stopped (:meth:`apply_action` then
    # reads the node it stopped at without :meth:`_proceed`), False to let :meth:`_proceed` run on, or :data:`_LANDED`
    # when it also set the new node's ``_player`` and ``_legal`` (nothing left to read). A decision may run that
    # step only where it is the one :meth:`_proceed` would run first: no pending consequence or offer (they
    # come first), or the offer step for a pending offer; the game is never over at a decision.
    # a build decision is :meth:`_build_step` itself (its entry in :data:`_DECIDE_AT`: no wrapper frame)

    def _on_pick_form(self, s: int, a: int) -> bool | None:
        self._forms[s] = None
        self.pick_step = _PICK_SECOND_FORM
        ch = self.chars[s]
        if ch.npc:
            picks = self.picks[s] = [a - _ACT_NPC_FORM_0]
            if ch.strengths and self._strength_menu(s) is not None:
                return self._pick_step()  # the strength pick
            return self._roll_picked(s, ch, True, picks)  # no strength to pick
        self.picks[s] = [a]  # a PC's form id is its action id
        # :meth:`_pick_step` for the same PC, landed: its second form (same actor and player), the menu of
        # :meth:`_legal_pick_second_form` read here
        self.node = _CTX_PICK_SECOND_FORM
        available = self.available[s]
        menus = _SECOND_PICK_MENUS.get(available)
        self._legal = menus[a] if menus is not None and a in menus else _second_pick_menu(available, a)
        return _LANDED

    def _on_pick_second_form(self, s: int, a: int) -> bool | None:
        picks = self.picks[s]
        picks.append(a)
        ch = self.chars[s]
        if ch.strengths and self._strength_menu(s) is not None:
            self.pick_step = _PICK_STRENGTH
            return self._pick_step()  # the strength pick
        return self._roll_picked(s, ch, False, picks)  # no strength to pick

    def _roll_picked(self, s: int, ch: Character, npc: bool, picks: list[int]) -> bool | None:
        """:meth:`_pick_step` for ``s``, whose forms are picked and who has no strength to pick, written out.

        The commonest pick transition (a PC's second form, an NPC's form): its dice, then the next party's first pick
        (landed there) or round 1's start.
        """
        self.strength_used[s] = None
        self.roll_dice[s] = dice_for_roll(ch.dice, npc, picks, None)
        self._rows[s] = None  # its rolled dice (not in its kept head: see ``_heads``)
        if self.narrating:
            self._narrate_roll_dice(s, ch)
        self.pick_step = _PICK_FIRST_FORM
        t = self.idx = self._next_in[s + 1]  # the next party in the conflict
        if t >= self.num_players:  # every party picked: round 1 starts (as :meth:`_pick_step` starts it)
            self.round_no = 1
            self._progress = None
            return self._start_round()
        self.node = _CTX_PICK_FORM
        self.actor = self._player = t
        self._legal = self._legal_pick_form(t)
        return _LANDED

    def _on_pick_strength(self, s: int, a: int) -> bool | None:
        self.strength_used[s] = None if a == _ACT_NO_STRENGTH else a - _ACT_STRENGTH_0
        self.pick_step = _PICK_DONE
        return self._pick_step()

    def _on_window(self, s: int, a: int) -> bool | None:
        if a == _ACT_ROLL:
            # :meth:`_window_step` for the next party, inlined without its test for the conflict's end: a party
            # rolling on leaves the parties in the conflict as they were when the window stopped for it (two or more);
            # landed: the same node and menu, another actor
            t = self.idx = self._next_in[self.idx + 1]
            if t < self.num_players:
                self.actor = self._player = t
                return _LANDED
            self.stage, self.idx = _STAGE_OPEN, 0  # :meth:`_enter`, inlined: the window moves ``idx`` only
            return self._open_step()  # the step :meth:`_proceed` would run next (nothing is pending)
        opp = self._opponents_of[s]
        # :meth:`_offer_step` for the offer made, inlined and landed: it waits for its addressee's answer (a fixed
        # menu) or for one to be named (:meth:`_legal_offer_target`'s menu, read here)
        if len(opp) == 1:
            t = opp[0]
            self._make_offer(s, OFFER_BY_ACTION[a], t)
            self.node = _CTX_OFFER_RESPONSE
            self.actor = self._player = t
            self._legal = _RESPONSE_MENU
            return _LANDED
        self._make_offer(s, OFFER_BY_ACTION[a], None)
        self.node = _CTX_OFFER_TARGET  # the same actor and player
        menu = _TARGET_MENUS.get(opp)
        if menu is None:
            menu = _TARGET_MENUS[opp] = tuple([_ACT_TARGET_0 + t for t in opp])
        self._legal = menu
        return _LANDED

    def _on_offer_target(self, s: int, a: int) -> bool | None:
        offer = self.offer
        assert offer is not None
        t = a - _ACT_TARGET_0
        self._make_offer(offer.proposer, offer.kind, t)
        # :meth:`_offer_step`, inlined and landed: the addressee answers (a fixed menu)
        self.node = _CTX_OFFER_RESPONSE
        self.actor = self._player = t
        self._legal = _RESPONSE_MENU
        return _LANDED

    def _on_offer_response(self, s: int, a: int) -> bool | None:
        if a == _ACT_ACCEPT:
            self._answer_offer(True)  # a consequence follows, run here as :meth:`_proceed` would run it first
            return self._consequence_step() if self.conseq is not None else False
        # :meth:`_answer_offer` refused, written out: the window goes on (offers are made in the window, Rule 17)
        offer = self.offer
        assert offer is not None
        self.offer = None
        if self.narrating:
            self.narrate("insist", f"{self.names[s]} insists: forget it, we roll.", s)
        # :meth:`_window_step` for the next party, inlined without its test for the conflict's end (a refusal leaves
        # the parties in the conflict as they were when the window stopped for the proposer) and landed
        t = self.idx = self._next_in[self.idx + 1]
        if t < self.num_players:
            self.node = _CTX_WINDOW
            self.actor = self._player = t
            self._legal = self._window_menu
            return _LANDED
        self.stage, self.idx = _STAGE_OPEN, 0  # :meth:`_enter`, inlined: the window moves ``idx`` only
        return self._open_step()  # the step :meth:`_proceed` would run next (nothing is pending)

    def _on_offer_form(self, s: int, a: int) -> bool | None:
        self._resolve_form_offer(a)
        # the consequence is settled and no offer is pending (it was answered before the consequence): the stage's step
        # is the one :meth:`_proceed` would run first, run here (unless the consequence ended the chapter)
        return False if self._outcome is not None else _STAGE_STEPS[self.stage](self)

    def _on_pre_roll(self, s: int, a: int) -> bool | None:
        simultaneous = self.stage is _STAGE_OPEN or self.stage is _STAGE_TIE
        if a == _ACT_CASH_OWE and simultaneous:
            self.pending_cash[s] += 1  # shown to the others only when everyone has decided
        elif a == _ACT_CASH_OWE:
            self._cash_owe_entry(s)
        elif simultaneous:
            if self.stage is _STAGE_OPEN:
                self.idx += 1
            else:
                self.tie_idx += 1
        else:
            self.cash_done = True
        # before a roll nothing is pending (a consequence and an offer come before any roll), and the game is on: the
        # stage's step is the one :meth:`_proceed` would run first, run here
        return _STAGE_STEPS[self.stage](self)

    def _on_tie_avoid(self, s: int, a: int) -> bool:
        self.avoid_votes.append(a == _ACT_AVOID)
        if self.narrating:
            self.narrate(
                "tie_vote",
                f"{self.names[s]} " + ("would avoid the conflict." if a == _ACT_AVOID else "decides to fight."),
                s,
            )
        return False

    def _on_challenge(self, s: int, a: int) -> bool | None:
        named = _named_answerers(a, self.num_players)
        self._name_answerers(s, [t for t in self.order if t in named])
        return self._turn_step()  # the answers: the step :meth:`_proceed` would run next (nothing is pending)

    # while a consequence stays pending, its step is the one :meth:`_proceed` would run first (the game is not over
    # with a consequence pending): the consequence decisions run it here, and it lands at its next decision
    def _on_conseq_offer(self, s: int, a: int) -> bool | None:
        if a == _ACT_TAKE_DEFAULT:
            self.terms = _TERMS_DEFAULT
        else:
            self._propose_terms(s, offer_of(a))
        return self._consequence_step()

    def _on_conseq_response(self, s: int, a: int) -> bool | None:
        self._answer_conseq_offer(a == _ACT_ACCEPT)
        return self._consequence_step() if self.conseq is not None else False

    def _on_conseq_default(self, s: int, a: int) -> bool | None:
        assert self.conseq is not None
        if a in (_ACT_EXHAUST, _ACT_INJURE):
            self._apply_default_consequence(exhausted=(a == _ACT_EXHAUST))
            self._finish_consequence()
            # settled, and no offer is pending: the stage's step, as in :meth:`_on_offer_form`
            return False if self._outcome is not None else _STAGE_STEPS[self.stage](self)
        self.winner_offered = True
        self._propose_terms(s, offer_of(a))
        return self._consequence_step()

    # == The machine ==============================================================================
    def _decide(self, ctx: int, seat: int) -> bool:
        """Stop at decision ``ctx`` of ``seat`` (the machine's hot steps set the two fields themselves)."""
        self.node, self.actor = ctx, seat
        return True

    def _enter(self, stage: Stage) -> None:
        """Move the machine to ``stage``, its cursors at their start.

        The hot entries are written out where they happen (one call less at ~0.9 stage changes per env step), each
        resetting only the cursors the stage being left moves: every other cursor is at its start already (the
        cursors each stage moves: ``STAGE_CURSORS`` in the tests, checked at every node of random play).
        """
        if (stage is _STAGE_TURN) is not (self.stage is _STAGE_TURN) and self.challenger is not None:
            self._rows[self.challenger] = None  # the challenger is flagged in the turns only
        self.stage = stage
        # every cursor at its start (0 each, asserted below the step enums)
        self.idx = self.pick_step = self.turn_step = self.tie_idx = self.open_step = self.tie_step = 0

    def _proceed(self) -> None:
        """Run rules until a seat must decide, dice must be rolled, or the game ends; then read the new node.

        A decision or chance outcome that already ran the machine's next step itself, which stopped (see
        :meth:`apply_action`), reads the node as this does at its end, without this call. Every change of ``node``,
        ``actor`` or the outcome ends here or there, which keeps what the protocol reads at every transition:
        ``_player`` (``TERMINAL``, ``CHANCE`` at a chance node, else the actor) and ``_legal``, the decision's
        legal ids (:data:`_LEGAL_AT`), found once per node (every decision node is asked for them, by a policy or for
        the mask) and empty at chance and the end; the kinds whose menu never changes within a game are read from
        ``_fixed_menus`` (:func:`_fixed_menus`).
        """
        steps = _STAGE_STEPS
        while self._outcome is None:  # the body is :meth:`_step`, inlined (one call less per machine step)
            stopped: bool | None
            if self.conseq is not None:
                stopped = self._consequence_step()
            elif self.offer is not None:
                stopped = self._offer_step()
            else:
                stopped = steps[self.stage](self)
            if stopped:
                break
            if stopped is _LANDED:  # the step set the node's player and menu itself
                return
        else:  # the game is over (a step that stops never ends it: a stop is read below without this test)
            self.node = _CTX_END
            self._player = TERMINAL
            self._legal = _NO_LEGAL
            return
        node = self.node
        if node >= _FIRST_CHANCE:
            self._player = CHANCE
            self._legal = _NO_LEGAL
        else:
            self._player = s = self.actor
            self._legal = self._fixed_menus[node] or _LEGAL_AT[node](self, s)  # a fixed menu without a call

    def _step(self) -> bool | None:
        """One step of the machine; True when it stopped at a decision or chance node.

        A pending consequence or offer comes first; otherwise :data:`_STAGE_STEPS` holds the step of each stage.
        """
        if self.conseq is not None:
            return self._consequence_step()
        if self.offer is not None:
            return self._offer_step()
        return _STAGE_STEPS[self.stage](self)

    def _no_step(self) -> bool:  # pragma: no cover - the machine never steps after the end
        raise AssertionError(f"stage {self.stage!r}")

    # -- build ---------------------------------------------------------------------------------
    def _build_turn(self) -> bool:
        """Rules 1-2: the seat whose draft is being built places its next die."""
        self.node, self.actor = _CTX_BUILD, self.idx  # :meth:`_decide`, inlined
        return True

    def _start_build(self, seat: int) -> None:
        """Rules 1-2: ``seat`` assigns its dice (PC) or die pairs (NPC), largest first, on a hidden draft."""
        ch = self.chars[seat]
        setup = _setup_of(self.cfg)
        if ch.npc:
            self.build_dice = list(setup.npc_build_dice)
            self.build_filled = [False] * _NPC_FORM_COUNT
        else:
            self.build_dice = list(setup.pc_build_dice)
            self.build_filled = [False] * _PC_FORM_COUNT
        self.idx = seat

    def _build_step(self, s: int, a: int) -> bool | None:
        """Rules 1-2: assign the next (largest remaining) die or die pair to a form of the seat's draft.

        Builds are simultaneous: the drafts are revealed only when every seat has completed its own.
        """
        draft = self.drafts[s]
        menu = self._legal  # the build menu (``a`` is legal here): the forms still empty, one per die left
        placed = self.build_dice[len(self.build_dice) - len(menu)]  # the dice placed: ``sum(self.build_filled)``
        if self.chars[s].npc:
            form = a - _ACT_NPC_FORM_0  # an NpcForm id: its two dice go to its two slots
            for slot, size in zip(NPC_FORM_SLOTS[form], placed, strict=True):
                draft[slot] = size
            self.build_filled[form] = True
        else:  # a PcForm id: the form's slot
            draft[a] = placed[0]
            self.build_filled[a] = True
        # the next menu is this one without ``a`` (:meth:`_legal_build` of the filled forms), from a table
        nxt = _BUILD_NEXT.get(menu)
        if nxt is None:
            nxt = _BUILD_NEXT[menu] = {x: tuple([y for y in menu if y != x]) for x in menu}
        menu = nxt[a]
        if menu:  # not ``all(self.build_filled)``: the same seat places its next die (:meth:`_build_turn`)
            self._legal = menu  # landed: the same node, actor and player
            return _LANDED
        if self.narrating:
            self.narrate("build_done", f"{self.names[s]} has assigned their dice.", s)
        if s + 1 < self.num_players:
            self._start_build(s + 1)
            return False
        for seat, ch in enumerate(self.chars):  # everyone is done: the sheets are shown
            ch.dice = list(self.drafts[seat])
            if self.narrating:
                self.narrate("build", f"{ch.name} is built: {ch.sheet()}.", seat)
        self.drafts = []
        self._start_conflict()
        return False

    def sheet_seen_by(self, party: int, seat: int) -> Sequence[int]:
        """The sheet of ``party`` as ``seat`` sees it: during the (simultaneous) build only its own draft."""
        if self.stage is _STAGE_BUILD:
            return self.drafts[party] if party == seat else EMPTY_SHEET
        return self.chars[party].dice

    # -- conflict start --------------------------------------------------------------------------
    def _start_conflict(self) -> None:
        """A new conflict: every party still in the chapter is in it; forms are picked afresh."""
        n = self.num_players
        self.conflict_no += 1
        self.in_conflict = list(self.in_chapter)
        sets = self._sets = self._chapter_sets  # the parties still in the chapter
        self._parties_in, self._opponents_of, self._next_in, _ = sets
        self.available = [PC_FORM_IDS] * n
        self.picks = list(map(list, _NO_PICKS[n]))  # a fresh empty list per seat (no comprehension frame)
        self.strength_used = [None] * n
        self.roll_dice = [()] * n
        self._rows = [None] * n  # every conflict flag and rolled die changed
        self._heads = [None] * n  # every conflict flag, and the build's hidden sheets shown
        self._forms = [None] * n  # every forms draw and pick
        self._progress = None
        self.cashed = [0] * n
        self.adv = list(map(list, _NO_ADVANTAGE[n]))  # a fresh row of False per seat (no comprehension frame)
        self.round_no = 0
        self.results = []
        self.exchanged = set()
        self.adv_rolled = [0] * n
        self.settle = []
        # :meth:`_enter`, inlined (from any stage: every cursor reset; every row was dropped above, the challenger's)
        self.stage = _STAGE_DRAW
        self.idx = self.pick_step = self.turn_step = self.tie_idx = self.open_step = self.tie_step = 0
        if self.narrating:
            self.narrate(
                "conflict",
                f"Conflict {self.conflict_no}: "
                + " vs ".join(self.names[s] for s in range(n) if self.in_conflict[s])
                + ".",
            )

    def _draw_step(self) -> bool:
        """Rule 4: for each PC still in, draw the forms that fit its action (all six: no draw)."""
        if self.forms_available < _PC_FORM_COUNT:
            while True:
                s = self.idx = self._next_in[self.idx]  # the next party in the conflict (the cursor skips the others)
                if s >= self.num_players:
                    break
                if not self.chars[s].npc:
                    self.node, self.actor = _CTX_FORMS_DRAW, s  # :meth:`_decide`, inlined
                    return True
                self.idx = s + 1
        self.stage, self.idx = _STAGE_PICK, 0  # :meth:`_enter`, inlined: the draw moves ``idx`` only
        return False

    def _pick_step(self) -> bool | None:
        """Rule 4: each party picks two forms (an NPC one form) and whether its strength is used.

        A party's pick done, the next party's begins here, in this call (nothing is pending during the picks:
        :meth:`_proceed` would call this again).
        """
        while True:
            s = self.idx = self._next_in[self.idx]  # the next party in the conflict (the cursor skips the others)
            if s >= self.num_players:
                self.round_no = 1
                self._progress = None
                return self._start_round()
            ch = self.chars[s]
            if self.pick_step == _PICK_FIRST_FORM:  # (:meth:`_decide`, inlined)
                self.node, self.actor = _CTX_PICK_FORM, s
                return True
            if self.pick_step == _PICK_SECOND_FORM and not ch.npc:
                self.node, self.actor = _CTX_PICK_SECOND_FORM, s
                return True
            if self.pick_step <= _PICK_STRENGTH:
                if ch.strengths and self._strength_menu(s) is not None:
                    self.node, self.actor = _CTX_PICK_STRENGTH, s  # :meth:`_decide`, inlined
                    return True
                self.strength_used[s] = st = None
            else:  # the strength was picked
                used = self.strength_used[s]  # :meth:`strength_of`, inlined
                st = None if used is None else ch.strengths[used]
            self.roll_dice[s] = dice_for_roll(ch.dice, ch.npc, self.picks[s], st)
            self._rows[s] = None  # its rolled dice (not in its kept head: see ``_heads``)
            if self.narrating:
                self._narrate_roll_dice(s, ch)
            self.idx, self.pick_step = s + 1, _PICK_FIRST_FORM

    def _strength_menu(self, s: int) -> tuple[int, ...] | None:
        """Rules 4-5: the menu of ``s``'s strength pick, None when no strength is usable (from :data:`_USABLE`).

        The pick uses one of the strengths its forms allow (``usable_strengths``) or none.
        """
        ch = self.chars[s]
        strengths = ch.strengths
        key = (id(strengths), ch.npc, *self.picks[s])
        hit = _USABLE.get(key)
        if hit is None or hit[0] is not strengths:
            names = ch.form_names()
            usable = usable_strengths(strengths, [names[f] for f in self.picks[s]], MAX_STRENGTHS)
            if len(_USABLE) >= _SETUPS_LIMIT * 64:
                _USABLE.clear()
            menu = (*[_ACT_STRENGTH_0 + i for i in usable], _ACT_NO_STRENGTH) if usable else None
            hit = _USABLE[key] = (strengths, menu)
        return hit[1]

    def _narrate_roll_dice(self, s: int, ch: Character) -> None:
        """The line of ``s``'s picks and the dice they make (called only while narrating: no call on a silent step)."""
        self.narrate(
            "forms",
            f"{ch.name} acts {self._forms_text(s)}: rolls {dice_text(self.roll_dice[s])}.",
            s,
            dice=self.roll_dice[s],
        )

    def _forms_text(self, s: int) -> str:
        ch = self.chars[s]
        names = ch.form_names()
        txt = " and ".join(FORM_TITLES[names[f]] for f in self.picks[s])
        st = self.strength_of(s)
        if st is not None:
            txt += f" using {st.title} strength"
        return txt

    # -- rounds ----------------------------------------------------------------------------------
    def _start_round(self) -> bool | None:
        """A round starts (its rolls, its turns' flags); landed at the window's first party, else False (the rolls)."""
        n = self.num_players
        self.rolls = [None] * n
        self.moved = [False] * n
        self.challenged = [False] * n
        self._rows = [None] * n  # the challenger's row too (:meth:`_enter` drops it when the turns end)
        self.order = []
        if self.narrating:
            self.narrate("round", f"Round {self.round_no}.", round=self.round_no)
        # :meth:`_enter`, inlined: the window, if offers may be made before this roll; a round starts after the picks
        # (their ``pick_step`` back at its start once the last party picked) or the turns (``turn_step`` back at its
        # start once the last party moved): ``idx`` is the one cursor to reset
        self.cash_done = False
        stage = self.stage = self._round_stages[self.round_no == 1]
        if stage is _STAGE_WINDOW:
            # :meth:`_window_step` for the first party, landed there, without its test for the conflict's end: a round
            # starts with two or more parties in (after the picks, or after turns that found the conflict not over)
            t = self.idx = self._next_in[0]
            self.node = _CTX_WINDOW
            self.actor = self._player = t
            self._legal = self._window_menu
            return _LANDED
        self.idx = 0
        return False

    def _window_step(self) -> bool:
        """Rule 17: before the round's roll each party may offer to concede instead of rolling on."""
        if len(self._parties_in) < ONE_ON_ONE:  # :meth:`_conflict_over`, inlined
            self._end_conflict()
            return False
        s = self.idx = self._next_in[self.idx]  # the next party still in (the cursor skips the others)
        if s < self.num_players:
            self.node, self.actor = _CTX_WINDOW, s  # :meth:`_decide`, inlined
            return True
        self.stage, self.idx = _STAGE_OPEN, 0  # :meth:`_enter`, inlined: the window moves ``idx`` only
        return False

    def _may_cash(self, s: int) -> bool:
        """Rule 19: ``s`` holds an owe-list entry it has not already cashed in this decision."""
        return self.rules.owe_enabled and self.owe.count(s) > self.pending_cash[s]

    def _cash_round(self, parties: Sequence[int], cursor: int, purpose: int) -> int | None:
        """Rule 19 before a simultaneous roll: the next party (from ``cursor``) that may still cash, if any."""
        self.roll_purpose = purpose
        if not self.owe:  # nobody holds an entry: nobody may cash
            return None
        while cursor < len(parties) and not self._may_cash(parties[cursor]):
            cursor += 1
        return cursor if cursor < len(parties) else None

    def _apply_pending_cash(self, fresh: bool) -> None:
        """Rule 19: once every party has decided, the cashed entries are erased together.

        ``fresh``: the new advantage dice are rolled on their own, before a tie reroll.
        """
        if not any(self.pending_cash):
            return
        for s in range(self.num_players):
            for _ in range(self.pending_cash[s]):
                self._cash_owe_entry(s)
                if fresh:
                    self.fresh_adv[s] += self.rules.dice_per_entry
            self.pending_cash[s] = 0

    def _open_step(self) -> bool:
        """Rule 7: everyone still in rolls, simultaneously: all decide on cashing first (Rule 19), then all roll."""
        if self.open_step == _OPEN_CASH:
            parties = self._parties_in
            cursor = self._cash_round(parties, self.idx, _CTX_OPENING_ROLL)
            if cursor is not None:
                self.idx = cursor
                return self._decide(_CTX_PRE_ROLL, parties[cursor])
            self._apply_pending_cash(fresh=False)
            self.open_step, self.idx = _OPEN_ROLL, 0
        s = self.idx = self._next_in[self.idx]  # the next party still in (the cursor skips the others)
        if s < self.num_players:
            self.roll_purpose = _CTX_OPENING_ROLL
            self.node, self.actor = _CTX_OPENING_ROLL, s
            return True
        self.stage, self.idx, self.open_step = _STAGE_TIE, 0, _OPEN_CASH  # :meth:`_enter`, inlined (what OPEN moves)
        self.tie_rerolls = 0
        self.tied, self.avoid_votes = self._find_ties(), []
        return False

    def _roll_step(self, s: int, purpose: int) -> bool:
        """Rule 19 then the roll: cash owe-list entries (any time before rolling), then roll."""
        self.roll_purpose = purpose
        if not self.cash_done and self.rules.owe_enabled and s in self.owe:
            return self._decide(_CTX_PRE_ROLL, s)
        self.node, self.actor = purpose, s
        return True

    def _adv_text(self, s: int) -> str:
        k = self.advantage_dice(s)
        return f" and {k} advantage {'die' if k == 1 else 'dice'}" if k else ""

    # -- opening ties ------------------------------------------------------------------------------
    def _parties(self) -> tuple[int, ...]:
        """The seats in the conflict, in seat order (kept by :meth:`_leave_conflict`)."""
        return self._parties_in

    def _keys(self) -> list[tuple[int, ...] | None]:
        return [None if r is None else r.key for r in self.rolls]

    def _find_ties(self) -> list[int]:
        r = self.rules
        return opening_ties(self.rolls, self._parties_in, r.pad_short_rolls, r.top_ties_only)

    def _tie_step(self) -> bool:
        """Rule 8: exact ties on the opening roll — avoid by agreement, or reroll the low dice."""
        if not self.tied or self.tie_rerolls >= self.rules.max_tie_rerolls:
            self._establish_order()
            # :meth:`_enter`, inlined: the turns flag the standing challenger (of an earlier round) again; every
            # cursor is at its start (the ties move ``tie_idx`` and ``tie_step`` only and reset both before they look
            # for ties again, and ``idx`` is still at its start from the opening rolls' end)
            if self.challenger is not None:
                self._rows[self.challenger] = None
            self.stage = _STAGE_TURN
            return False
        may_avoid = may_avoid_tie(self.tied, self._parties_in, self.round_no, self.rules.tie_avoid_rounds)
        if may_avoid and len(self.avoid_votes) < len(self.tied) and all(self.avoid_votes):
            return self._decide(_CTX_TIE_AVOID, self.tied[len(self.avoid_votes)])
        if may_avoid and len(self.avoid_votes) == len(self.tied) and all(self.avoid_votes):
            if self.narrating:
                self.narrate(
                    "avoid",
                    "An exact tie: "
                    + " and ".join(self.names[t] for t in self.tied)
                    + " agree to avoid the conflict. No more rolls; each goes their own way.",
                )
            self._end_conflict(avoided=True)
            return False
        if self.tie_step == _TIE_VOTE:
            if self.narrating:
                self.narrate(
                    "tie",
                    "An exact tie: "
                    + " and ".join(f"{self.names[t]} {self._roll(t).text()}" for t in self.tied)
                    + ". They fight: each rerolls the die with the lowest value.",
                )
            self.tie_step, self.tie_idx = _TIE_CASH, 0
        if self.tie_step == _TIE_CASH:
            cursor = self._cash_round(self.tied, self.tie_idx, _CTX_TIE_REROLL)
            if cursor is not None:
                self.tie_idx = cursor
                return self._decide(_CTX_PRE_ROLL, self.tied[cursor])
            self._apply_pending_cash(fresh=True)
            self.tie_step, self.tie_idx = _TIE_REROLL, 0
        while (
            self.tie_idx < len(self.tied)
            and not self.roll_dice[self.tied[self.tie_idx]]
            and not self.fresh_adv[self.tied[self.tie_idx]]
        ):
            self.tie_idx += 1  # Rule 8: a tied party with no dice to roll keeps its empty roll (nothing to reroll)
        if self.tie_idx < len(self.tied):
            s = self.tied[self.tie_idx]
            self.node, self.actor = (_CTX_CASH_ROLL if self.fresh_adv[s] else _CTX_TIE_REROLL), s
            return True
        self.tie_rerolls += 1
        self.tie_idx, self.tie_step = 0, _TIE_VOTE
        self.avoid_votes = []
        self.tied = self._find_ties()
        return False

    def _roll(self, s: int) -> Roll:
        r = self.rolls[s]
        assert r is not None
        return r

    def _lowest_slot(self, s: int) -> int:
        return lowest_die_slot(self._roll(s).faces, self.roll_dice[s])

    def _reroll_lowest_die(self, s: int, face: int) -> None:
        roll = self._roll(s)
        new = Roll(reroll_lowest_die(roll.faces, self.roll_dice[s], face), roll.advantage)
        self.rolls[s] = new
        self._rows[s] = None
        if self.narrating:
            self.narrate("reroll", f"{self.names[s]} rerolls the low die: now {new.text()}.", s, key=new.key)

    def _roll_fresh_advantage(self, s: int, total: int) -> None:
        """Rule 19: advantage dice cashed before a tie reroll are rolled and added to the standing reading."""
        k, sides = self.fresh_adv[s], self.rules.advantage_sides
        if not k <= total <= k * sides:
            raise ValueError(f"{self.names[s]} rolls {k} new advantage dice; bad sum {total}")
        roll = self._roll(s)
        self.rolls[s] = new = Roll(roll.faces, roll.advantage + total)
        self._rows[s] = None
        self.adv_rolled[s] += k
        self.fresh_adv[s] = 0
        if self.narrating:
            self.narrate(
                "reroll",
                f"{self.names[s]} rolls the new advantage {'die' if k == 1 else 'dice'}: now {new.text()}.",
                s,
                key=new.key,
            )

    def _establish_order(self) -> None:
        self.order = turn_order(self._keys(), self._parties_in)
        if self.narrating:
            self.narrate(
                "order",
                "Order: " + ", ".join(f"{self.names[s]} ({self._roll(s).text()})" for s in self.order) + ".",
                order=tuple(self.order),
            )

    # -- turns -------------------------------------------------------------------------------------
    def _turn_step(self) -> bool | None:
        """Rules 9-10: in turn order, each party not yet challenged moves; answerers answer.

        The steps that stop nowhere and leave nothing pending (a party skipped, a turn's start, a challenge of the
        one opponent, a move done) go straight on to the next here, in this call, not through :meth:`_proceed`
        (which would find nothing pending and call this again).
        """
        while True:
            if len(self._parties_in) < ONE_ON_ONE:  # :meth:`_conflict_over`, inlined: this runs at every turn step
                if self.round_no == 1 and self.rules.owe_enabled:
                    self._check_owe_list()  # round 1 ends with the conflict (Rule 18)
                self._end_conflict()
                return False
            if self.idx >= len(self.order):
                return self._end_round()
            s = self.order[self.idx]
            if self.turn_step == _TURN_START:
                if not self.in_conflict[s] or self.challenged[s]:
                    self.idx += 1
                    continue
                self.turn_step = _TURN_REROLL
                if self.idx == 0:
                    if self.narrating:
                        self.narrate(
                            "stand",
                            f"{self.names[s]}'s {self._roll(s).text()} stand; "
                            f"{self.names[s]} moves first. The others pick up their dice.",
                            s,
                        )
                    self.turn_step = _TURN_CHALLENGE
            if self.turn_step == _TURN_REROLL:  # reroll unless the dice stand (Rule 9)
                return self._roll_step(s, _CTX_MOVER_ROLL)
            if self.turn_step == _TURN_CHALLENGE:
                opp = self._opponents_of[s]
                if len(opp) != 1:
                    self.node, self.actor = _CTX_CHALLENGE, s  # :meth:`_decide`, inlined
                    return True
                self._name_answerers(s, opp)  # the answers follow
            while self.answer_idx < len(self.answerers):
                t = self.answerers[self.answer_idx]
                if not self.in_conflict[t]:
                    self.answer_idx += 1
                    continue
                if not self.in_conflict[s] and self.rules.skip_answers_after_challenger_out:
                    self.answer_idx = len(self.answerers)
                    break
                return self._roll_step(t, _CTX_ANSWER_ROLL)
            self.moved[s] = True
            self._rows[s] = None
            self.idx, self.turn_step = self.idx + 1, _TURN_START

    def _name_answerers(self, s: int, targets: Sequence[int]) -> None:
        """Rule 9: the mover challenges and names who must answer (answers go in turn order)."""
        if self.challenger is not None:
            self._rows[self.challenger] = None
        self.challenger = s
        self._rows[s] = None
        self.answerers = answer_order(self.order, targets)
        self.answer_idx = 0
        self.turn_step = _TURN_ANSWERS
        if self.narrating:
            self.narrate(
                "challenge",
                f"{self.names[s]} challenges with {self._roll(s).text()}: "
                + " and ".join(self.names[t] for t in self.answerers)
                + " must answer.",
                s,
                answerers=tuple(self.answerers),
            )

    def _resolve_answer(self, t: int, roll: Roll) -> None:
        """Rules 10-14: compare the answer with the challenge and apply the result."""
        c = self.challenger
        assert c is not None
        croll = self._roll(c)
        r = self.rules
        answer, standing = compared_readings(roll, croll, r.pad_short_rolls)
        res = compare_answer(answer, standing, self.round_no, r.max_rounds, r.absolute_multiple)
        self.last_result = res
        self.results.append(_new_exchange((t, c, res)))
        self.exchanged.add((t, c) if t < c else (c, t))  # the pair, lower seat first
        lost_move = loses_move(self.moved[t], self.challenged[t])
        self.challenged[t] = True
        self._rows[t] = None
        self.answer_idx += 1
        if self.narrating:
            self.narrate(
                "answer",
                f"{self.names[t]} answers: {roll.text()} against {croll.text()} — "
                f"{self._describe_result(t, roll, croll, res)}",
                t,
                result=res.label,
                round=self.round_no,
                answerer=t,
                challenger=c,
                answer_dice=self.roll_dice[t],
                challenge_dice=self.roll_dice[c],
                answer_adv=self.advantage_dice(t),
                challenge_adv=self.advantage_dice(c),
                fresh_challenge=self.order.index(c) != 0,
                answer_key=roll.key,
                challenge_key=croll.key,
            )
        gain = advantage_gainer(res, t, c)
        if gain is not None:
            self._gain_advantage(*gain)
        if self.narrating and lost_move and self.in_conflict[t] and not res.is_absolute:
            self.narrate("lose_move", f"{self.names[t]} had to answer before their turn: they lose their move.", t)
        decided = absolute_outcome(res, t, c, self.in_conflict[c])
        if decided is not None:
            self._absolute(decided)

    def _describe_result(self, t: int, roll: Roll, croll: Roll, res: Result) -> str:
        """The rulebook's words for a comparison (Rules 11-12)."""
        m = self.rules.absolute_multiple
        last = self.round_no >= self.rules.max_rounds
        double = m == 2  # the rulebook's "double" / "half"
        word = "half" if double else f"1/{m}"
        times = "double" if double else f"{m} times"
        if res == _RESULT_ABSOLUTE_LOSS:
            if m * roll.high <= croll.high:
                return f"{roll.high} is {word} of {croll.high} or less: {self.names[t]} loses absolutely."
            return f"lower, not {word}, but round {self.round_no} is the last: {self.names[t]} loses absolutely."
        if res == _RESULT_ABSOLUTE_WIN:
            if roll.high >= m * croll.high:
                return f"{roll.high} is {times} {croll.high} or more: {self.names[t]} wins absolutely."
            return f"equal or higher, and round {self.round_no} is the last: {self.names[t]} wins absolutely."
        if res == _RESULT_LOSES_ADVANTAGE:
            return f"lower, but not {word}: {self.names[t]} loses the advantage."
        assert not last
        return f"equal or higher, not {times}: {self.names[t]} wins the advantage."

    def _gain_advantage(self, holder: int, other: int) -> None:
        """Rule 13: the advantage between two opponents goes to ``holder`` (1-on-1 the die passes)."""
        had = self.adv[holder][other]
        per_pair = self.rules.per_pair_advantage
        self.adv = pass_advantage(self.adv, holder, other, per_pair)
        if per_pair:  # the two parties' advantage dice change (one advantage per conflict: everyone's may)
            self._rows[holder] = self._rows[other] = None
        else:
            self._rows = [None] * self.num_players
        if self.narrating:
            verb = "keeps" if had else "takes"
            k = self.advantage_dice(holder)
            self.narrate(
                "advantage",
                f"{self.names[holder]} {verb} the advantage over {self.names[other]} "
                f"({k} advantage {'die' if k == 1 else 'dice'}).",
                holder,
                holder=holder,
                other=other,
            )

    def _absolute(self, decided: Decided) -> None:
        """Rule 14: the loser is out of this conflict; the winner applies consequences."""
        w, loser = decided
        self._leave_conflict(loser)
        self.conflict_score[w] += 1
        self.conflict_score[loser] -= 1
        if self.narrating:
            self.narrate("out", f"{self.names[loser]} is out of the conflict; {self.names[w]} sets the terms.", loser)
        self.conseq = decided
        self.terms, self.terms_offer, self.terms_by, self.winner_offered = _TERMS_ASK, None, None, False

    def _end_round(self) -> bool | None:
        """Rules 12 and 18: the owe list after round 1; no round after the last."""
        r = self.rules
        if r.owe_enabled and owe_check_due(self.round_no, r.owe_check_rounds):
            self._check_owe_list()
        if self.round_no >= r.max_rounds:
            if r.after_last_round_advantage_wins:
                self.settle = unresolved_advantage(self.order, self.in_conflict, self.adv)
                self._enter(_STAGE_SETTLE)
                return False
            if self.narrating:
                self.narrate("end_conflict", f"Round {self.round_no} was the last: the conflict is over.")
            self._end_conflict()
            return False
        self.round_no += 1
        self._progress = None
        return self._start_round()

    def _settle_step(self) -> bool:
        """Rule 12 ("advantage_wins"): after the last round each advantage over a party still in wins absolutely."""
        while self.settle:
            decided = self.settle.pop(0)
            if self.in_conflict[decided.winner] and self.in_conflict[decided.loser]:
                if self.narrating:
                    self.narrate(
                        "settle",
                        f"Round {self.round_no} was the last: {self.names[decided.winner]} holds the "
                        f"advantage over {self.names[decided.loser]} and wins.",
                        decided.winner,
                    )
                self._absolute(decided)
                return False
        if self.narrating:
            self.narrate("end_conflict", f"Round {self.round_no} was the last: the conflict is over.")
        self._end_conflict()
        return False

    def _conflict_over(self) -> bool:
        return len(self._parties_in) < ONE_ON_ONE

    def _end_conflict(self, avoided: bool = False) -> None:
        if self._outcome is not None:
            return
        if self.conflict_no >= self.max_conflicts:
            self.finish_chapter(
                _END_TIME_LIMIT,
                f"the chapter's limit of {self.max_conflicts} "
                f"conflict{'s' if self.max_conflicts > 1 else ''} is reached",
            )
            return
        self._start_conflict()

    # -- the owe list ----------------------------------------------------------------------------
    def _check_owe_list(self) -> None:
        """Rule 18: a PC still in the conflict that rolled lesser dice than an opponent it rolled against is listed.

        The name goes to the end of the owe list (advantage dice excluded from the comparison).
        """
        r = self.rules
        seen: list[tuple[int, ...]] | None = None  # the dice as the test sees them: the same for every PC checked
        for s in range(self.num_players):
            if self.chars[s].npc or not self.in_conflict[s]:
                continue
            if r.owe_against_all:
                against = [t for t in range(self.num_players) if t != s and self.roll_dice[t]]
            else:
                exchanged = self.exchanged
                against = [t for t in range(self.num_players) if ((s, t) if s < t else (t, s)) in exchanged]
            if seen is None:
                sides = r.advantage_sides
                seen = (
                    [
                        dice_compared_for_owing(self.roll_dice[t], self.adv_rolled[t], sides, r.owe_count_advantage)
                        for t in range(self.num_players)
                    ]
                    if r.owe_count_advantage
                    else self.roll_dice  # advantage dice excluded: the dice as rolled (``dice_compared_for_owing``)
                )
            bigger = stronger_opponents(seen[s], against, seen)
            if bigger:
                self.owe.append(s)
                self._rows[s] = None
                if self.narrating:
                    self.narrate(
                        "owe",
                        f"End of round {self.round_no}: {self.names[s]} rolled lesser dice "
                        f"({dice_text(self.roll_dice[s])} against {dice_text(self.roll_dice[bigger[0]])}) and "
                        f"still stands: {self.names[s]} goes on the owe list.",
                        s,
                    )

    def _cash_owe_entry(self, s: int) -> None:
        """Rule 19: erase one of your entries from the owe list; gain advantage dice for this conflict."""
        self.owe.remove(s)
        self.cashed[s] += self.rules.dice_per_entry
        self._rows[s] = None  # its owe entries and advantage dice
        if self.narrating:
            self.narrate("cash", f"{self.names[s]} erases their name from the owe list and takes an advantage die.", s)

    # -- negotiation -----------------------------------------------------------------------------
    def _offer_text(self, kind: Offer, p: int, target: int) -> str:
        if kind is _OFFER_LOSER_CHOICE:
            return f"{self.names[p]} loses a size on one form of {self.names[p]}'s choice, and concedes"
        if kind is _OFFER_WINNER_CHOICE:
            return f"{self.names[p]} loses a size on one form of {self.names[target]}'s choice, and concedes"
        return f"{self.names[p]} concedes the stake but loses no dice"

    def _make_offer(self, proposer: int, kind: Offer, target: int | None) -> None:
        """Rule 17: ``proposer`` offers ``kind`` before the round's roll to ``target`` (None: not chosen yet).

        An offer is announced as soon as its addressee is known (here: the offer step that follows stops for the
        answer), so it is made announced then, once, rather than made and then remade announced.
        """
        if target is None:
            self.offer = _new_offer((proposer, kind, None, False))
            return
        if self.narrating:
            self.narrate(
                "offer",
                f"{self.names[proposer]} offers {self.names[target]}: {self._offer_text(kind, proposer, target)}.",
                proposer,
            )
        self.offer = _new_offer((proposer, kind, target, True))

    def _offer_step(self) -> bool:
        """Rule 17: a pending offer waits for its addressee to be named, then for the addressee's answer."""
        offer = self.offer
        assert offer is not None
        if offer.target is None:
            self.node, self.actor = _CTX_OFFER_TARGET, offer.proposer  # :meth:`_decide`, inlined
            return True
        self.node, self.actor = _CTX_OFFER_RESPONSE, offer.target  # :meth:`_decide`, inlined (announced when made)
        return True

    def _answer_offer(self, accept: bool) -> None:
        """Rule 17: accept the offer (the proposer concedes) or insist on the whip (fight on)."""
        offer = self.offer
        assert offer is not None and offer.target is not None
        p, kind, target = offer.proposer, offer.kind, offer.target
        self.offer = None
        if not accept:
            if self.narrating:
                self.narrate("insist", f"{self.names[target]} insists: forget it, we roll.", target)
            self.idx += 1
            return
        if self.narrating:
            self.narrate("accept", f"{self.names[target]} accepts.", target)
        self._leave_conflict(p)
        self.conflict_score[target] += 1
        self.conflict_score[p] -= 1
        self.conseq = _new_decided((target, p))
        self.terms, self.terms_offer, self.terms_by, self.winner_offered = _TERMS_AGREED, kind, p, False
        self.idx += 1
        if kind is _OFFER_CONCEDE_STAKE:
            if self.narrating:
                self.narrate("concede", f"{self.names[p]} concedes the stake and loses no dice.", p)
            self._finish_consequence()

    def _consequence_step(self) -> bool | None:
        """Rules 14-17: the pending consequence's next decision, landed there, or False once it is settled.

        Each branch sets the node's player and menu (:meth:`_decide` and the node's reading written out).
        """
        assert self.conseq is not None
        w, loser = self.conseq
        r = self.rules
        terms = self.terms
        if terms is _TERMS_ASK:
            if r.negotiation_enabled and r.offers_after_absolute and r.offers:
                self.node = _CTX_CONSEQ_OFFER
                self.actor = self._player = loser
                self._legal = self._conseq_offer_menu
                return _LANDED
            terms = self.terms = _TERMS_DEFAULT
        if terms is _TERMS_DEFAULT:
            self.node = _CTX_CONSEQ_DEFAULT
            self.actor = self._player = w
            self._legal = self._legal_conseq_default(w)
            return _LANDED
        if terms is _TERMS_OFFERED:
            self.node = _CTX_CONSEQ_RESPONSE
            self.actor = self._player = loser if self.terms_by == w else w
            self._legal = _RESPONSE_MENU
            return _LANDED
        kind = self.terms_offer
        assert kind is not None
        if kind is _OFFER_CONCEDE_STAKE:  # pragma: no cover - resolved on acceptance
            self._finish_consequence()
            return False
        # the negotiated loss: :meth:`_form_loss_actions`'s menu read here; empty when no form has a size to lose
        menu = _LOSS_MENUS.get(tuple(map(_TRUTH, self.chars[loser].dice)))
        if menu is None:
            menu = self._form_loss_actions(loser)
        if not menu:  # ``form_loss_choices`` empty: nothing to lose
            self._finish_consequence()
            return False
        self.node = _CTX_OFFER_FORM
        self.actor = self._player = offer_chooser(kind, w, loser)
        self._legal = menu
        return _LANDED

    def _propose_terms(self, proposer: int, kind: Offer) -> None:
        """Rule 17: after an absolute result either side may propose a negotiated outcome instead of the default."""
        assert self.conseq is not None
        w, loser = self.conseq
        self.terms, self.terms_offer, self.terms_by = _TERMS_OFFERED, kind, proposer
        other = loser if proposer == w else w
        if self.narrating:
            self.narrate(
                "offer",
                f"{self.names[proposer]} offers {self.names[other]} instead: {self._offer_text(kind, loser, w)}.",
                proposer,
            )

    def _answer_conseq_offer(self, accept: bool) -> None:
        """Rule 17: the other side accepts the offer, or breaks off and insists on the whip."""
        assert self.conseq is not None
        w, loser = self.conseq
        responder = loser if self.terms_by == w else w
        if accept:
            if self.narrating:
                self.narrate("accept", f"{self.names[responder]} accepts.", responder)
            self.terms = _TERMS_AGREED
            if self.terms_offer is _OFFER_CONCEDE_STAKE:
                if self.narrating:
                    self.narrate("concede", f"{self.names[loser]} concedes the stake and loses no dice.", loser)
                self._finish_consequence()
        elif responder == w:
            if self.narrating:
                self.narrate("insist", f'{self.names[w]} breaks off: "Forget it. You\'re exhausted or injured."', w)
            self.terms = _TERMS_DEFAULT
        else:
            if self.narrating:
                self.narrate("insist", f"{self.names[loser]} breaks off: {self.names[w]} may do their worst.", loser)
            self.terms = _TERMS_DEFAULT

    def _form_loss_actions(self, loser: int) -> tuple[int, ...]:
        """Rule 17: the forms (NPC: dice) the loser may lose a size on, as actions (a shared menu).

        The menu depends only on which of the sheet's dice are above 0 (sizes are never negative: ``truth`` of a die
        is ``die > 0``), so it is kept by those six flags (at most 64 keys), not by the whole sheet, which nearly every
        consequence changes.
        """
        dice = self.chars[loser].dice
        key = tuple(map(_TRUTH, dice))
        menu = _LOSS_MENUS.get(key)
        if menu is None:
            menu = _LOSS_MENUS[key] = tuple([FORM_ACTIONS[i] for i in form_loss_choices(dice)])
        return menu

    def _lose_size(self, s: int, slot: int) -> None:
        """Rule 3: the die in ``slot`` of ``s``'s sheet loses a size.

        ``lose_size`` read from the config's table of every size a config may name (any other size: the rule itself).
        """
        dice = self.chars[s].dice
        size = dice[slot]
        down = self._lose.get(size)
        dice[slot] = down if down is not None else lose_size(size, self.ladder, self.rules.min_die_hit)
        self._rows[s] = self._heads[s] = None  # :meth:`_sheet_changed`, inlined

    def _resolve_form_offer(self, a: int) -> None:
        assert self.conseq is not None
        loser = self.conseq.loser
        ch = self.chars[loser]
        i = a - _ACT_FORM_0
        self._lose_size(loser, i)
        if self.narrating:
            what = f"one {FORM_TITLES[NpcForm(i // 2).key]} die" if ch.npc else FORM_TITLES[PcForm(i).key]
            self.narrate("consequence", f"As agreed, {ch.name} loses a size on {what}: {ch.sheet()}.", loser)
        self._finish_consequence()

    def _apply_default_consequence(self, exhausted: bool) -> None:
        """Rule 15: the winner leaves the loser exhausted or injured."""
        assert self.conseq is not None
        w, loser = self.conseq
        ch = self.chars[loser]
        for i in self._default_slots[ch.npc][exhausted]:  # ``default_consequence_slots``, read once per config
            self._lose_size(loser, i)
        if self.narrating:
            cons = self.cfg.consequences
            word = "exhausted" if exhausted else "injured"
            if ch.npc:
                form = cons.npc_exhausted_form if exhausted else cons.npc_injured_form
                what = f"both {FORM_TITLES[form]} dice"
            else:
                what = " and ".join(FORM_TITLES[n] for n in (cons.exhausted_forms if exhausted else cons.injured_forms))
            self.narrate(
                "consequence",
                f"{self.names[w]} leaves {ch.name} {word}: {what} lose a size ({ch.sheet()}).",
                loser,
                consequence=word,
            )

    def _finish_consequence(self) -> None:
        """Rules 5 and 16: a consequential strength bites too; then check who is out of the chapter."""
        assert self.conseq is not None
        w, loser = self.conseq
        agreed = self.terms_offer if self.terms is _TERMS_AGREED else None
        self.conseq = None
        self.terms, self.terms_offer, self.terms_by, self.winner_offered = _TERMS_ASK, None, None, False
        ch = self.chars[loser]
        used = self.strength_used[w]  # :meth:`strength_of`, inlined: a winner without a strength has nothing to bite
        st = None if used is None else self.chars[w].strengths[used]
        slot = None if st is None else consequential_slot(st, ch.npc, ch.dice, agreed)  # (None without a strength)
        if st is not None and st.consequential is not None and slot is not None:
            self._lose_size(loser, slot)
            if self.narrating:
                self.narrate(
                    "consequence",
                    f"{self.names[w]}'s strength is consequential: {ch.name} also loses a size "
                    f"on {FORM_TITLES[st.consequential]} ({ch.sheet()}).",
                    loser,
                )
        if self.in_chapter[loser] and is_out_of_chapter(ch.dice, ch.npc, self.cfg.consequences):
            self.in_chapter[loser] = False
            self._chapter_sets = _party_sets(tuple(self.in_chapter))
            self._sheet_changed(loser)
            self.put_out[w] += 1
            if self.narrating:
                self.narrate(
                    "chapter_out",
                    f"{self.names[loser]} is out until the end of the chapter: killed, broken or otherwise gone.",
                    loser,
                )
            if sum(self.in_chapter) < ONE_ON_ONE:
                self.finish_chapter(_END_KNOCKOUT, f"{self.names[w]} put {self.names[loser]} out")

    def finish_chapter(self, reason: EndReason, detail: str) -> None:
        """Rules 20-21: +1 per opponent put out of the chapter, -1 for being put out, plus the conflict bonus."""
        rets = chapter_returns(
            self.put_out,
            self.in_chapter,
            self.conflict_score,
            self.conflict_win_bonus,
            [self.owe.count(s) for s in range(self.num_players)],
            self.cfg.owe_list.end_value,
        )
        self.finish(chapter_winner(rets), reason, rets, detail)

    # == Observation ==============================================================================
    def advantage_dice(self, s: int) -> int:
        """Rules 13 and 19: one die per opponent s holds the advantage over, plus cashed owe entries."""
        holds, cashed = self.adv[s], self.cashed[s]
        if not cashed and True not in holds:  # no advantage held, nothing cashed: no dice (the rule's 0, uncalled)
            return 0
        return advantage_dice(holds, self.in_conflict, self._keep_advantage, cashed)

    # the encoder is the method itself (``state.observation(seat)`` calls ``encode_observation(state, seat)``): no
    # wrapper frame at every env step
    observation = encode_observation


_LEGAL_AT: tuple[Callable[[WickedAgeState, int], tuple[int, ...]], ...] = (
    WickedAgeState._legal_build,
    WickedAgeState._legal_pick_form,
    WickedAgeState._legal_pick_second_form,
    WickedAgeState._legal_pick_strength,
    WickedAgeState._legal_window,
    WickedAgeState._legal_offer_target,
    WickedAgeState._legal_response,
    WickedAgeState._legal_offer_form,
    WickedAgeState._legal_pre_roll,
    WickedAgeState._legal_tie_avoid,
    WickedAgeState._legal_challenge,
    WickedAgeState._legal_conseq_offer,
    WickedAgeState._legal_response,
    WickedAgeState._legal_conseq_default,
)
"""The legal actions of each decision kind, indexed by ``Ctx`` (a scenario state that overrides one of these
methods must extend the table)."""
_DECIDE_AT: tuple[Callable[[WickedAgeState, int, int], bool | None], ...] = (
    WickedAgeState._build_step,
    WickedAgeState._on_pick_form,
    WickedAgeState._on_pick_second_form,
    WickedAgeState._on_pick_strength,
    WickedAgeState._on_window,
    WickedAgeState._on_offer_target,
    WickedAgeState._on_offer_response,
    WickedAgeState._on_offer_form,
    WickedAgeState._on_pre_roll,
    WickedAgeState._on_tie_avoid,
    WickedAgeState._on_challenge,
    WickedAgeState._on_conseq_offer,
    WickedAgeState._on_conseq_response,
    WickedAgeState._on_conseq_default,
)
"""The effect of each decision kind, indexed by ``Ctx`` (a scenario state that overrides one must extend the table);
True when it ran the machine's next step itself and that step stopped."""


def _not_chance(state: WickedAgeState, s: int, outcome: Any) -> bool:  # pragma: no cover - apply_chance refuses
    raise AssertionError(f"node {state.node} is not a chance node")


_CHANCE_AT: tuple[Callable[[WickedAgeState, int, Any], bool | None], ...] = tuple(
    {
        _CTX_FORMS_DRAW: WickedAgeState._on_forms_draw,
        _CTX_OPENING_ROLL: WickedAgeState._apply_roll,
        _CTX_TIE_REROLL: WickedAgeState._on_tie_reroll,
        _CTX_MOVER_ROLL: WickedAgeState._apply_roll,
        _CTX_ANSWER_ROLL: WickedAgeState._apply_roll,
        _CTX_CASH_ROLL: WickedAgeState._on_cash_roll,
    }.get(node, _not_chance)
    for node in range(_CTX_END + 1)
)
"""The effect of each chance kind's outcome, by node id (none at the decisions and the end); True when it ran the
machine's next step itself and that step stopped (see :data:`_DECIDE_AT`)."""
_STAGE_STEPS: tuple[Callable[[WickedAgeState], bool | None], ...] = (
    WickedAgeState._build_turn,
    WickedAgeState._draw_step,
    WickedAgeState._pick_step,
    WickedAgeState._window_step,
    WickedAgeState._open_step,
    WickedAgeState._tie_step,
    WickedAgeState._turn_step,
    WickedAgeState._no_step,
    WickedAgeState._settle_step,
)
"""The step of each ``Stage``, indexed by the stage (a scenario state that overrides one must extend the table)."""
assert len(_LEGAL_AT) == len(_DECIDE_AT) == len(DECISION_CONTEXTS) and len(_STAGE_STEPS) == len(Stage)
assert all(int(c) == i for i, c in enumerate(DECISION_CONTEXTS)) and all(int(st) == i for i, st in enumerate(Stage))


def _fixed_menus(window: tuple[int, ...], conseq_offer: tuple[int, ...]) -> tuple[tuple[int, ...] | None, ...]:
    """By ``Ctx``: the menu of each decision kind that is fixed for the game, else None.

    These are the very tuples the kinds' :data:`_LEGAL_AT` functions return (the state's window and consequence
    offer menus, the shared menus); the kinds whose menu depends on the position map to None.
    """
    fixed: dict[int, tuple[int, ...]] = {
        _CTX_WINDOW: window,
        _CTX_OFFER_RESPONSE: _RESPONSE_MENU,
        _CTX_PRE_ROLL: _PRE_ROLL_MENU,
        _CTX_TIE_AVOID: _TIE_AVOID_MENU,
        _CTX_CONSEQ_OFFER: conseq_offer,
        _CTX_CONSEQ_RESPONSE: _RESPONSE_MENU,
    }
    return tuple(fixed.get(c) for c in DECISION_CONTEXTS)


def forms_draw_count(available: int) -> int:
    """Rule 4: how many different draws of ``available`` fitting forms there are."""
    return comb(len(PcForm), available)


# == Direct setup (tests, odds, solvers) ==========================================================
def pc(name: str, strengths: Sequence[Strength] = (), **forms: int) -> Character:
    """A PC with the given form dice (unnamed forms default to 0), e.g. ``pc("Amek", with_violence=12)``."""
    for f in forms:
        if f not in form_keys(False):
            raise ValueError(f"unknown PC form '{f}'; forms: {', '.join(form_keys(False))}")
    return Character(name, False, [forms.get(f.key, 0) for f in PcForm], tuple(strengths))


def npc(name: str, strengths: Sequence[Strength] = (), **forms: tuple[int, int]) -> Character:
    """An NPC with die pairs per form, e.g. ``npc("Esan", maneuvering=(10, 6))``."""
    for f in forms:
        if f not in form_keys(True):
            raise ValueError(f"unknown NPC form '{f}'; forms: {', '.join(form_keys(True))}")
    dice: list[int] = []
    for form in NpcForm:
        a, b = forms.get(form.key, (0, 0))
        dice += [a, b]
    return Character(name, True, dice, tuple(strengths))


def start_conflict(
    characters: list[Character],
    picks: Sequence[Sequence[str]],
    cfg: WickedAgeConfig | None = None,
    *,
    strengths_used: Sequence[int | None] | None = None,
    owe_list: Sequence[int] = (),
    max_conflicts: int = 1,
) -> WickedAgeState:
    """A conflict between ``characters`` with their forms already chosen (by name), at round 1.

    ``strengths_used`` names each seat's strength by index (``None`` or a negative index: none). The chapter
    is ``max_conflicts`` long (default: this one conflict). Later conflicts, if any, are picked by the seats
    as usual.
    """
    cfg = cfg or WickedAgeConfig()
    state = WickedAgeState(cfg, characters, max_conflicts=max_conflicts, owe_list=owe_list, start=False)
    state._start_conflict()
    for s, (ch, forms) in enumerate(zip(characters, picks, strict=True)):
        names = ch.form_names()
        state.picks[s] = [names.index(f) for f in forms]
        used = strengths_used[s] if strengths_used is not None else None
        state.strength_used[s] = used if used is not None and used >= 0 else None
        state.roll_dice[s] = dice_for_roll(ch.dice, ch.npc, state.picks[s], state.strength_of(s))
        state._sheet_changed(s)
        state._forms[s] = None
        if state.narrating:
            state.narrate("forms", f"{ch.name} acts {state._forms_text(s)}: rolls {dice_text(state.roll_dice[s])}.", s)
    state.round_no = 1
    state._progress = None
    state._start_round()
    state._proceed()
    return state


_copy_slots = slot_copier(WickedAgeState.FIELDS, {*CLONE_COPIED, "exchanged"})
"""Every slot of a state onto a new one (for :meth:`WickedAgeState.clone`)."""

"""In a Wicked Age personas: styles of picking forms, using the owe list, negotiating and hurting.

Every persona plays the duel and the melee, PCs and NPCs alike; each decision kind of the engine
(``state.node``) has a default here that a persona overrides where its style differs.
"""

from __future__ import annotations

import itertools
from typing import Any, cast

import numpy as np

from envs.core.dice import Rng
from envs.core.game import State
from envs.wicked_age.actions import FORM_ACTIONS, NPC_FORM_ACTIONS, Act, Ctx, challenge_action
from envs.wicked_age.conflict import WickedAgeState
from envs.wicked_age.dice import size_key
from envs.wicked_age.rules import NpcForm, Offer, PcForm, default_consequence_slots

# Enum members read at every decision, as module names (a member read costs several times a global read)
_ACT_ACCEPT = Act.ACCEPT
_ACT_AVOID = Act.AVOID
_ACT_CASH_OWE = Act.CASH_OWE
_ACT_EXHAUST = Act.EXHAUST
_ACT_FIGHT = Act.FIGHT
_ACT_INJURE = Act.INJURE
_ACT_INSIST = Act.INSIST
_ACT_NO_STRENGTH = Act.NO_STRENGTH
_ACT_OFFER_CONCEDE_STAKE = Act.OFFER_CONCEDE_STAKE
_ACT_OFFER_LOSER_CHOICE = Act.OFFER_LOSER_CHOICE
_ACT_ROLL = Act.ROLL
_ACT_TAKE_DEFAULT = Act.TAKE_DEFAULT
_ACT_TARGET_0 = Act.TARGET_0
_CTX_ANSWER_ROLL = Ctx.ANSWER_ROLL
_OFFER_CONCEDE_STAKE = Offer.CONCEDE_STAKE
_OFFER_WINNER_CHOICE = Offer.WINNER_CHOICE


def _legal(mask: np.ndarray) -> list[int]:
    """The ids where ``mask`` is set, increasing, as Python ints (``nonzero`` of a 1-d mask, one C call)."""
    return mask.nonzero()[0].tolist()


def _first(wanted: list[int], mask: np.ndarray) -> int:
    for a in wanted:
        if 0 <= a < len(mask) and mask[a]:
            return int(a)
    return _legal(mask)[0]


def form_size(state: WickedAgeState, seat: int, action: int) -> int:
    """Total die size a pick action would roll (PC form die, or an NPC form's pair)."""
    ch = state.chars[seat]
    if _NPC_FORM_0 <= action <= _NPC_FORM_2:
        return sum(ch.form_dice(action - _NPC_FORM_0))
    return ch.dice[action]


def harm_of(state: WickedAgeState, loser: int, exhausted: bool) -> tuple[int, int]:
    """How hard exhausted/injured hits: (dice sent to 0, total size lost)."""
    ch = state.chars[loser]
    idx = default_consequence_slots(ch.npc, exhausted, state.cfg.consequences)
    zeros = sum(1 for i in idx if 0 < ch.dice[i] <= min(state.ladder))
    return zeros, sum(ch.dice[i] for i in idx)


def strongest_opponent(state: WickedAgeState, seat: int, targets: list[int]) -> int:
    return max(targets, key=lambda t: (sum(state.roll_dice[t]), -t))


_NPC_FORM_0 = int(Act.NPC_FORM_0)
_NPC_FORM_2 = int(Act.NPC_FORM_2)
_HANDLER_SLOTS = max(int(c) for c in Ctx) + 1


def _handlers(cls: type) -> tuple[Any, ...]:
    """The ``on_<node>`` functions of a persona class indexed by ``int(node)`` (None: no handler).

    The functions are the class's own (looked up along its MRO), called with the persona as their first argument:
    one tuple index per decision instead of a name lookup and a bound method.
    """
    slots: list[Any] = [None] * _HANDLER_SLOTS
    for node in Ctx:
        slots[int(node)] = getattr(cls, f"on_{node.name.lower()}", None)
    return tuple(slots)


class WickedAgePersona:
    """Base: rolls its biggest dice, fights ties, takes the whip, hurts where it hurts most."""

    name = "base"
    _handler_table: tuple[Any, ...] = ()
    """The class's ``on_<node>`` functions by node id (:func:`_handlers`), built once per class."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._handler_table = _handlers(cls)

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        state = cast(WickedAgeState, state)  # no isinstance: an ABC check per decision is measurable
        handler = self._handler_table[state.node]
        if handler is not None:
            a = int(handler(self, state, state.actor, mask))
            if 0 <= a < len(mask) and mask[a]:
                return a
            # its preferred move is forbidden (restricted play narrows the mask): at the two-way choices
            # (roll/cash, accept/insist, fight/avoid, exhaust/injure) this is the other option
        return _legal(mask)[0]

    # -- defaults ---------------------------------------------------------------------------------
    # Build (Rules 1-2): the next-largest die (pair) goes to the first form of the order still empty. The base
    # build is forceful: d12 With Violence, d10 Directly, d8 For Myself, d6 With Love, d6 Covertly, d4 For Others;
    # an NPC puts d12+d8 on Action, d10+d6 on Self-protection, d6+d4 on Maneuvering.
    build_order: tuple[PcForm, ...] = (
        PcForm.WITH_VIOLENCE,
        PcForm.DIRECTLY,
        PcForm.FOR_MYSELF,
        PcForm.WITH_LOVE,
        PcForm.COVERTLY,
        PcForm.FOR_OTHERS,
    )
    npc_build_order: tuple[NpcForm, ...] = (NpcForm.ACTION, NpcForm.SELF_PROTECTION, NpcForm.MANEUVERING)

    def on_build(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        if state.chars[s].npc:
            return _first([NPC_FORM_ACTIONS[f] for f in self.npc_build_order], mask)
        return _first([FORM_ACTIONS[f] for f in self.build_order], mask)

    def biggest(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        # the first (lowest) legal action of the largest total size: max over (size, -a) without a key tuple each
        legal = _legal(mask)
        best = legal[0]
        best_size = form_size(state, s, best)
        for a in legal[1:]:
            size = form_size(state, s, a)
            if size > best_size:
                best, best_size = a, size
        return best

    def smallest(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        legal = _legal(mask)
        live = [a for a in legal if form_size(state, s, a) > 0] or legal
        return min(live, key=lambda a: (form_size(state, s, a), a))

    def on_pick_form(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return self.biggest(state, s, mask)

    def on_pick_second_form(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return self.biggest(state, s, mask)

    def on_pick_strength(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _first([a for a in _legal(mask) if a != _ACT_NO_STRENGTH] + [_ACT_NO_STRENGTH], mask)

    def on_window(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_ROLL

    def on_offer_target(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        targets = [a - _ACT_TARGET_0 for a in _legal(mask)]
        return _ACT_TARGET_0 + strongest_opponent(state, s, targets)

    def on_offer_response(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        assert state.offer is not None
        # dice lost beat a bare concession
        return _ACT_ACCEPT if state.offer.kind is not _OFFER_CONCEDE_STAKE else _ACT_INSIST

    def on_offer_form(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        loser = state.conseq[1] if state.conseq else s
        dice = state.chars[loser].dice
        legal = _legal(mask)
        if loser == s:  # lose a size where it hurts least: the biggest die
            return max(legal, key=lambda a: (dice[a], -a))
        return min(legal, key=lambda a: (dice[a], a))  # push the loser's smallest die to 0

    def on_pre_roll(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        last = state.round_no >= state.rules.max_rounds  # contest.max_rounds, resolved
        return _ACT_CASH_OWE if last and state.roll_purpose == _CTX_ANSWER_ROLL else _ACT_ROLL

    def on_tie_avoid(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_FIGHT

    def on_challenge(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        """Name the single weakest opponent."""
        opp = [t for t in range(state.num_players) if t != s and state.in_conflict[t]]
        weakest = min(opp, key=lambda t: (sum(state.roll_dice[t]), t))
        return challenge_action((weakest,), state.num_players)

    def on_conseq_offer(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _first([_ACT_OFFER_LOSER_CHOICE, _ACT_TAKE_DEFAULT], mask)

    def on_conseq_response(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        assert state.conseq is not None
        if s == state.conseq.loser:  # the winner offers: any offer costs less than the default's two sizes
            return _ACT_ACCEPT
        return _ACT_ACCEPT if state.terms_offer is _OFFER_WINNER_CHOICE else _ACT_INSIST

    def on_conseq_default(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        assert state.conseq is not None
        loser = state.conseq[1]
        ex, inj = harm_of(state, loser, True), harm_of(state, loser, False)
        return _ACT_EXHAUST if ex >= inj else _ACT_INJURE


WickedAgePersona._handler_table = _handlers(WickedAgePersona)


class Highest(WickedAgePersona):
    """Always rolls its two biggest dice (plus any strength), fights every tie, cashes the owe list only to
    survive a last-round answer, and hurts the loser where it brings them closest to out. Builds forcefully:
    d12 With Violence, d10 Directly, d8 For Myself, d6 With Love, d6 Covertly, d4 For Others."""

    name = "highest"


class OweFarmer(WickedAgePersona):
    """Rolls lesser dice (the strongest pair still lesser than the opponent's) to get on the owe list when it
    has no entry, then rolls its biggest dice and cashes every entry before the next conflict's first roll.
    Builds for farming: d12 For Myself, d10 With Love, d8 Directly, d6 Covertly, d6 With Violence, d4 For
    Others — the d10 and d8 make a strong pair that is still lesser than any pair with a d12, and the d12
    sits where no default consequence reaches it."""

    name = "owe_farmer"
    build_order = (
        PcForm.FOR_MYSELF,
        PcForm.WITH_LOVE,
        PcForm.DIRECTLY,
        PcForm.COVERTLY,
        PcForm.WITH_VIOLENCE,
        PcForm.FOR_OTHERS,
    )

    def farming(self, state: WickedAgeState, s: int) -> bool:
        return state.rules.owe_enabled and not state.chars[s].npc and s not in state.owe

    def on_pick_form(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        if self.farming(state, s):
            return _first([FORM_ACTIONS[f] for f in self.farm_pair(state, s, None)], mask)
        return self.biggest(state, s, mask)

    def on_pick_second_form(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        if self.farming(state, s):
            first = state.picks[s][0]
            return _first([FORM_ACTIONS[f] for f in self.farm_pair(state, s, first) if f != first], mask)
        return self.biggest(state, s, mask)

    @staticmethod
    def farm_pair(state: WickedAgeState, s: int, first: int | None) -> tuple[int, ...]:
        """The strongest pair of forms whose dice are still lesser than the biggest opponent's dice
        (its picked dice if known, else its two biggest forms)."""
        targets = []
        for t in range(state.num_players):
            if t == s or not state.in_conflict[t]:
                continue
            if state.roll_dice[t]:
                targets.append(size_key(state.roll_dice[t]))
            elif state.chars[t].npc:
                targets.append(max(size_key(state.chars[t].form_dice(f)) for f in NpcForm))
            else:  # its two biggest forms among those that fit its action (Rule 4)
                fit = [state.chars[t].dice[f] for f in state.available[t]]
                targets.append(size_key(sorted(fit, reverse=True)[:2]))
        target = max(targets)
        dice = state.chars[s].dice
        pairs = [p for p in itertools.combinations(state.available[s], 2) if first is None or first in p]
        lesser = [p for p in pairs if size_key([dice[f] for f in p]) < target]
        if lesser:
            best = max(lesser, key=lambda p: size_key([dice[f] for f in p]))
        else:
            best = min(pairs, key=lambda p: size_key([dice[f] for f in p]))
        return tuple(sorted(best, key=lambda f: -dice[f]))

    def on_pick_strength(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        if self.farming(state, s):
            return _ACT_NO_STRENGTH
        return super().on_pick_strength(state, s, mask)

    def on_pre_roll(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_CASH_OWE  # entries exist only when farming is over: cash them all at once


class Pacifist(WickedAgePersona):
    """Negotiates early: offers to concede before round 1's roll, accepts every offer, agrees to avoid ties,
    as a loser offers a one-form loss instead of the default, and as a winner proposes that one-form loss
    (the loser's choice) before settling for the milder of exhausted and injured. Builds to last: its
    biggest dice where exhausted and injured hit (d12 Directly, d10 Covertly, d8 With Violence, d6 For
    Others), the rest (d6 For Myself, d4 With Love) where no default consequence reaches, so losses take
    longest to bring two forms to 0; as an NPC the big pairs on Action and Maneuvering likewise."""

    name = "pacifist"
    build_order = (
        PcForm.DIRECTLY,
        PcForm.COVERTLY,
        PcForm.WITH_VIOLENCE,
        PcForm.FOR_OTHERS,
        PcForm.FOR_MYSELF,
        PcForm.WITH_LOVE,
    )
    npc_build_order = (NpcForm.ACTION, NpcForm.MANEUVERING, NpcForm.SELF_PROTECTION)

    def on_window(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        if state.round_no == 1 or any(state.adv[t][s] for t in range(state.num_players)):
            return _first([_ACT_OFFER_CONCEDE_STAKE, _ACT_OFFER_LOSER_CHOICE, _ACT_ROLL], mask)
        return _ACT_ROLL

    def on_offer_response(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_ACCEPT

    def on_conseq_response(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_ACCEPT

    def on_tie_avoid(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_AVOID

    def on_pre_roll(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_ROLL

    def on_conseq_default(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        assert state.conseq is not None
        loser = state.conseq[1]
        if mask[_ACT_OFFER_LOSER_CHOICE]:  # as the winner it proposes the mild outcome first (Rule 17)
            return _ACT_OFFER_LOSER_CHOICE
        ex, inj = harm_of(state, loser, True), harm_of(state, loser, False)
        return _ACT_EXHAUST if ex < inj else _ACT_INJURE  # the milder of the two


class Brute(WickedAgePersona):
    """Never negotiates (takes and gives the whip), always exhausts, challenges every opponent at once,
    and cashes owe-list entries at the first chance. Builds all force: d12 With Violence, d10 Directly,
    d8 Covertly, d6 For Myself, d6 For Others, d4 With Love."""

    name = "brute"
    build_order = (
        PcForm.WITH_VIOLENCE,
        PcForm.DIRECTLY,
        PcForm.COVERTLY,
        PcForm.FOR_MYSELF,
        PcForm.FOR_OTHERS,
        PcForm.WITH_LOVE,
    )

    def on_offer_response(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_INSIST

    def on_conseq_offer(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_TAKE_DEFAULT

    def on_conseq_response(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_INSIST

    def on_conseq_default(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_EXHAUST

    def on_pre_roll(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return _ACT_CASH_OWE

    def on_challenge(self, state: WickedAgeState, s: int, mask: np.ndarray) -> int:
        return max(_legal(mask))  # the largest bitmask: everyone still in


PERSONAS: dict[str, type[WickedAgePersona]] = {
    "highest": Highest,
    "owe_farmer": OweFarmer,
    "pacifist": Pacifist,
    "brute": Brute,
}

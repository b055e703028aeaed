"""The In a Wicked Age conflict engine: a chapter of conflicts between PCs and NPCs.

Rule numbers cite docs/rules/wicked_age.md. The state is a small machine: a ``stage`` says where the
chapter is (build, form picks, the negotiation window, opening rolls, ties, turns, consequences) and
:meth:`WickedAgeState._proceed` runs rules until a seat must decide or dice must be rolled.

Chance outcomes (all small and enumerable, see :meth:`WickedAgeState.chance_outcomes`):
- a roll: ``(faces, advantage_sum)`` — one face per form/strength die in the order of
  ``roll_dice[seat]`` and the sum of the advantage dice;
- a tie reroll: the new face of the rerolled (lowest) die;
- a forms draw: the sorted tuple of the forms that fit this conflict's action.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State
from envs.wicked_age.config import (
    ALL_FORMS,
    NPC_FORMS,
    OFFER_KINDS,
    PC_FORMS,
    WickedAgeConfig,
    parse_strength,
)
from envs.wicked_age.dice import (
    Result,
    Roll,
    advantage_sum_distribution,
    compare_answer,
    rolled_lesser_dice,
    step_down,
)

MAX_PARTIES = 4
NO_STRENGTH_USED = -1


# -- actions ---------------------------------------------------------------------------------------
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
    CHALLENGE_1 = 26  # CHALLENGE_m: name the seats in bitmask m (1..15) as answerers
    CHALLENGE_15 = 40
    TARGET_0 = 41  # address an offer to seat i
    TARGET_3 = 44


NUM_ACTIONS = 45
FORM_ACTIONS = tuple(range(Act.FORM_0, Act.FORM_5 + 1))
NPC_FORM_ACTIONS = tuple(range(Act.NPC_FORM_0, Act.NPC_FORM_2 + 1))
OFFER_ACTIONS = (Act.OFFER_LOSER_CHOICE, Act.OFFER_WINNER_CHOICE, Act.OFFER_CONCEDE_STAKE)
FORM_TITLES = {f: f.replace("_", " ").title() for f in ALL_FORMS}


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
    END = 30


DECISION_CONTEXTS = tuple(c for c in Ctx if c < Ctx.FORMS_DRAW)


class Stage(enum.IntEnum):
    BUILD = 0
    DRAW = 1
    PICK = 2
    WINDOW = 3
    OPEN = 4
    TIE = 5
    TURN = 6
    END = 7


# -- characters ------------------------------------------------------------------------------------
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
        form, level, general, conseq = parse_strength(spec)
        die = {"base": cfg.strength.base_die, "potent": cfg.strength.potent_die,
               "twice_potent": cfg.strength.twice_potent_die}[level]
        return cls(spec, form, die, general, conseq)


@dataclass
class Character:
    """A PC (six forms, one die each) or an NPC (three forms, two dice each: dice[2f], dice[2f+1])."""

    name: str
    npc: bool
    dice: list[int]
    strengths: tuple[Strength, ...] = ()

    def form_dice(self, form: int) -> list[int]:
        """Rules 1-2: the dice one form rolls (a form at 0 rolls nothing)."""
        if self.npc:
            return [d for d in (self.dice[2 * form], self.dice[2 * form + 1]) if d > 0]
        return [self.dice[form]] if self.dice[form] > 0 else []

    def form_names(self) -> tuple[str, ...]:
        return NPC_FORMS if self.npc else PC_FORMS

    def sheet(self) -> str:
        if self.npc:
            return ", ".join(f"{FORM_TITLES[n]} {_d(self.dice[2 * i])}+{_d(self.dice[2 * i + 1])}"
                             for i, n in enumerate(NPC_FORMS))
        return ", ".join(f"{FORM_TITLES[n]} {_d(self.dice[i])}" for i, n in enumerate(PC_FORMS))


def _d(size: int) -> str:
    return f"d{size}" if size > 0 else "0"


def dice_text(sizes: Sequence[int]) -> str:
    return ", ".join(_d(s) for s in sizes) if sizes else "no dice"


# -- the state -------------------------------------------------------------------------------------
class WickedAgeState(State):
    """A chapter of In a Wicked Age conflicts (see the module docstring)."""

    def __init__(self, cfg: WickedAgeConfig, characters: list[Character], *, max_conflicts: int,
                 forms_available: int = 6, build: bool = False, conflict_win_bonus: float = 0.0,
                 owe_list: Sequence[int] = (), start: bool = True) -> None:
        super().__init__(len(characters))
        if not 2 <= len(characters) <= MAX_PARTIES:
            raise ValueError(f"a conflict needs 2..{MAX_PARTIES} parties")
        self.cfg = cfg
        self.chars = characters
        n = len(characters)
        self.max_conflicts = max_conflicts
        self.forms_available = forms_available
        self.conflict_win_bonus = conflict_win_bonus
        self.ladder = tuple(cfg.forms.ladder)
        self.in_chapter = [True] * n
        self.owe: list[int] = list(owe_list)
        self.put_out = [0] * n  # opponents this seat put out of the chapter
        self.conflict_score = [0] * n  # conflicts won minus lost
        self.conflict_no = 0
        # conflict state
        self.in_conflict = [False] * n
        self.available: list[tuple[int, ...]] = [tuple(range(6))] * n
        self.picks: list[list[int]] = [[] for _ in range(n)]
        self.strength_used = [NO_STRENGTH_USED] * n
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
        self.results: list[tuple[int, int, Result]] = []  # (answerer, challenger, result) this conflict
        # machine
        self.stage = Stage.BUILD if build else Stage.DRAW
        self.idx = 0  # seat / order index within the stage
        self.sub = 0  # step within the current item
        self.node = Ctx.END
        self.actor = 0
        self.build_dice: list[int] = []
        self.build_filled: list[bool] = []
        self.cash_done = False
        self.roll_purpose = Ctx.OPENING_ROLL
        self.challenger = -1
        self.answerers: list[int] = []
        self.answer_idx = 0
        self.offer: tuple[int, int, int] | None = None  # (proposer, kind index, target)
        self.conseq: tuple[int, int] | None = None  # (winner, loser) awaiting consequences
        self.conseq_offer = -1
        self.avoid_votes: list[bool] = []
        self._legal_cache: list[int] | None = None
        if build:
            self._start_build(0)
        if start:
            self._begin()

    # -- setup helpers --------------------------------------------------------------------------
    def _begin(self) -> None:
        if self.stage == Stage.DRAW:
            self._start_conflict()
        self._proceed()

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.chars]

    # == Protocol =================================================================================
    def current_player(self) -> int:
        if self._outcome is not None:
            return TERMINAL
        if self.node >= Ctx.FORMS_DRAW:
            return CHANCE
        return self.actor

    def decision_context(self) -> str:
        return self.node.name.lower()

    def legal_actions(self) -> list[int]:
        if self._outcome is not None or self.node >= Ctx.FORMS_DRAW:
            return []
        if self._legal_cache is None:
            self._legal_cache = self._legal()
        return list(self._legal_cache)

    def _legal(self) -> list[int]:
        node, s = self.node, self.actor
        ch = self.chars[s]
        if node == Ctx.BUILD:
            acts = NPC_FORM_ACTIONS if ch.npc else FORM_ACTIONS
            return [a for i, a in enumerate(acts) if not self.build_filled[i]]
        if node == Ctx.PICK_FORM:
            if ch.npc:
                return list(NPC_FORM_ACTIONS)
            return [FORM_ACTIONS[f] for f in self.available[s]]
        if node == Ctx.PICK_SECOND_FORM:
            return [FORM_ACTIONS[f] for f in self.available[s] if f != self.picks[s][0]]
        if node == Ctx.PICK_STRENGTH:
            return [Act.STRENGTH_0 + i for i in self._usable_strengths(s)] + [Act.NO_STRENGTH]
        if node == Ctx.WINDOW:
            return [Act.ROLL, *self._offer_actions()]
        if node == Ctx.OFFER_TARGET:
            return [Act.TARGET_0 + t for t in self._opponents(s)]
        if node in (Ctx.OFFER_RESPONSE, Ctx.CONSEQ_RESPONSE):
            return [Act.ACCEPT, Act.INSIST]
        if node == Ctx.OFFER_FORM:
            return self._form_loss_choices(self._form_loser())
        if node == Ctx.PRE_ROLL:
            return [Act.ROLL, Act.CASH_OWE]
        if node == Ctx.TIE_AVOID:
            return [Act.AVOID, Act.FIGHT]
        if node == Ctx.CHALLENGE:
            opp = self._opponents(s)
            out = []
            for r in range(1, len(opp) + 1):
                for combo in itertools.combinations(opp, r):
                    out.append(Act.CHALLENGE_1 - 1 + sum(1 << t for t in combo))
            return sorted(out)
        if node == Ctx.CONSEQ_OFFER:
            return [*self._offer_actions(), Act.TAKE_DEFAULT]
        if node == Ctx.CONSEQ_DEFAULT:
            return [Act.EXHAUST, Act.INJURE]
        raise AssertionError(f"no decision at {node!r}")  # pragma: no cover

    def _offer_actions(self) -> list[int]:
        return [OFFER_ACTIONS[OFFER_KINDS.index(k)] for k in self.cfg.negotiation.offers]

    def _opponents(self, s: int) -> list[int]:
        return [t for t in range(self.num_players) if t != s and self.in_conflict[t]]

    def action_label(self, action: int) -> str:
        a = int(action)
        s = self.actor if self.node < Ctx.FORMS_DRAW else 0
        ch = self.chars[s]
        if Act.FORM_0 <= a <= Act.FORM_5:
            if self.node == Ctx.OFFER_FORM and self.chars[self._form_loser()].npc:
                return f"die_{a}_{NPC_FORMS[a // 2]}"
            return PC_FORMS[a]
        if Act.NPC_FORM_0 <= a <= Act.NPC_FORM_2:
            return NPC_FORMS[a - Act.NPC_FORM_0]
        if Act.STRENGTH_0 <= a <= Act.STRENGTH_3:
            i = a - Act.STRENGTH_0
            return f"strength_{ch.strengths[i].spec}" if i < len(ch.strengths) else f"strength_{i}"
        if Act.CHALLENGE_1 <= a <= Act.CHALLENGE_15:
            m = a - Act.CHALLENGE_1 + 1
            return "challenge_" + "+".join(self.names[t] for t in range(self.num_players) if m >> t & 1)
        if Act.TARGET_0 <= a <= Act.TARGET_3:
            t = a - Act.TARGET_0
            return f"offer_to_{self.names[t]}" if t < self.num_players else f"offer_to_{t}"
        if 0 <= a < NUM_ACTIONS:
            return Act(a).name.lower()
        return f"action_{a}"

    def option_of(self, action: int) -> str | None:
        a = int(action)
        node = self.node
        if node == Ctx.BUILD:
            if self.chars[self.actor].npc:
                return "build_npc"
            size = self.build_dice[sum(self.build_filled)]
            top = max(self.build_dice)
            return f"build_d{size}_{PC_FORMS[a]}" if size == top else "build_other"
        if node in (Ctx.PICK_FORM, Ctx.PICK_SECOND_FORM):
            if Act.NPC_FORM_0 <= a <= Act.NPC_FORM_2:
                return f"form_{NPC_FORMS[a - Act.NPC_FORM_0]}"
            return f"form_{PC_FORMS[a]}"
        if node == Ctx.PICK_STRENGTH:
            return "no_strength" if a == Act.NO_STRENGTH else "use_strength"
        if a in OFFER_ACTIONS:
            return "negotiate"
        if node == Ctx.OFFER_FORM:
            return "offer_form"
        if Act.CHALLENGE_1 <= a <= Act.CHALLENGE_15:
            m = a - Act.CHALLENGE_1 + 1
            targets = [t for t in range(self.num_players) if m >> t & 1]
            if len(targets) > 1:
                return "challenge_several"
            return "challenge_npc" if self.chars[targets[0]].npc else "challenge_pc"
        if Act.TARGET_0 <= a <= Act.TARGET_3:
            return "offer_target"
        return {
            Act.ROLL: "roll_on", Act.CASH_OWE: "cash_owe", Act.TAKE_DEFAULT: "take_default",
            Act.ACCEPT: "accept_offer", Act.INSIST: "insist", Act.AVOID: "avoid_tie", Act.FIGHT: "fight_tie",
            Act.EXHAUST: "exhaust", Act.INJURE: "injure",
        }.get(Act(a)) if 0 <= a < NUM_ACTIONS else None

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

    def key(self) -> Hashable:
        return (
            int(self.stage), self.idx, self.sub, int(self.node), self.actor, self.conflict_no, self.round_no,
            tuple(tuple(c.dice) for c in self.chars), tuple(self.in_chapter), tuple(self.in_conflict),
            tuple(self.owe), tuple(self.put_out), tuple(self.conflict_score), tuple(self.available),
            tuple(tuple(p) for p in self.picks), tuple(self.strength_used), tuple(self.cashed),
            tuple(tuple(r) for r in self.adv),
            tuple((r.faces, r.advantage) if r is not None else None for r in self.rolls),
            tuple(self.order), tuple(self.moved), tuple(self.challenged), tuple(sorted(self.exchanged)),
            self.tie_rerolls, tuple(self.tied), self.cash_done, int(self.roll_purpose), self.challenger,
            tuple(self.answerers), self.answer_idx, self.offer, self.conseq, self.conseq_offer,
            tuple(self.avoid_votes), tuple(self.build_dice), tuple(self.build_filled), self._outcome is not None,
        )

    # == Chance ===================================================================================
    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        node, s = self.node, self.actor
        if node == Ctx.FORMS_DRAW:
            combos = list(itertools.combinations(range(6), self.forms_available))
            return [(c, 1.0 / len(combos)) for c in combos]
        if node == Ctx.TIE_REROLL:
            die = self.roll_dice[s][self._lowest_slot(s)]
            return [(f, 1.0 / die) for f in range(1, die + 1)]
        if node in (Ctx.OPENING_ROLL, Ctx.MOVER_ROLL, Ctx.ANSWER_ROLL):
            dice = self.roll_dice[s]
            total = 1
            for d in dice:
                total *= d
            advd = advantage_sum_distribution(self.advantage_dice(s), self.cfg.advantage.die_sides)
            return [((faces, adv), float(q) / total)
                    for faces in itertools.product(*(range(1, d + 1) for d in dice)) for adv, q in advd]
        raise ValueError("not a chance node")

    def sample_chance(self, rng: Rng) -> Hashable:
        node, s = self.node, self.actor
        if node == Ctx.FORMS_DRAW:
            forms = list(range(6))
            rng.shuffle(forms)
            return tuple(sorted(forms[: self.forms_available]))
        if node == Ctx.TIE_REROLL:
            return rng.d(self.roll_dice[s][self._lowest_slot(s)])
        faces = rng.roll_dice(self.roll_dice[s])
        sides = self.cfg.advantage.die_sides
        adv = sum(rng.roll(self.advantage_dice(s), sides))
        return (faces, adv)

    def apply_chance(self, outcome: Hashable) -> None:
        node, s = self.node, self.actor
        if node < Ctx.FORMS_DRAW or self._outcome is not None:
            raise ValueError("apply_chance at a decision node")
        if node == Ctx.FORMS_DRAW:
            forms = tuple(sorted(int(f) for f in outcome))  # type: ignore[attr-defined]
            if len(forms) != self.forms_available or not set(forms) <= set(range(6)):
                raise ValueError(f"bad forms draw {outcome!r}")
            self.available[s] = forms
            self.narrate("forms", f"For {self.names[s]}'s action these forms fit: "
                         + ", ".join(FORM_TITLES[PC_FORMS[f]] for f in forms) + ".", s, forms=forms)
            self.idx += 1
        elif node == Ctx.TIE_REROLL:
            self._reroll_lowest_die(s, int(outcome))  # type: ignore[call-overload]
            self.sub += 1
        else:
            pair: Any = outcome
            faces: tuple[int, ...] = tuple(int(f) for f in pair[0])
            adv = int(pair[1])
            if len(faces) != len(self.roll_dice[s]) or any(
                    not 1 <= f <= d for f, d in zip(faces, self.roll_dice[s], strict=True)):
                raise ValueError(f"{self.names[s]} rolls {dice_text(self.roll_dice[s])}; bad faces {faces}")
            k = self.advantage_dice(s)
            if not k <= int(adv) <= k * self.cfg.advantage.die_sides:
                raise ValueError(f"{self.names[s]} rolls {k} advantage dice; bad sum {adv}")
            roll = Roll(faces, int(adv))
            self.rolls[s] = roll
            self.cash_done = False
            self._on_roll(s, roll)
        self._proceed()

    # == Decisions ================================================================================
    def apply_action(self, action: int) -> None:
        a = int(action)
        if self._outcome is not None or self.node >= Ctx.FORMS_DRAW or a not in self.legal_actions():
            raise IllegalActionError(f"illegal action {a} ({self.action_label(a)}) at {self.decision_context()}")
        node, s = self.node, self.actor
        if node == Ctx.BUILD:
            self._build_step(s, a)
        elif node == Ctx.PICK_FORM:
            self.picks[s] = [a - Act.NPC_FORM_0 if self.chars[s].npc else a]
            self.sub = 1
        elif node == Ctx.PICK_SECOND_FORM:
            self.picks[s].append(a)
            self.sub = 2
        elif node == Ctx.PICK_STRENGTH:
            self.strength_used[s] = NO_STRENGTH_USED if a == Act.NO_STRENGTH else a - Act.STRENGTH_0
            self.sub = 3
        elif node == Ctx.WINDOW:
            if a == Act.ROLL:
                self.idx += 1
            else:
                kind = OFFER_ACTIONS.index(Act(a))
                opp = self._opponents(s)
                self.offer = (s, kind, opp[0] if len(opp) == 1 else -1)
        elif node == Ctx.OFFER_TARGET:
            assert self.offer is not None
            self.offer = (self.offer[0], self.offer[1], a - Act.TARGET_0)
        elif node == Ctx.OFFER_RESPONSE:
            self._answer_offer(a == Act.ACCEPT)
        elif node == Ctx.OFFER_FORM:
            self._resolve_form_offer(a)
        elif node == Ctx.PRE_ROLL:
            if a == Act.CASH_OWE:
                cash_owe_entry(self, s)
            else:
                self.cash_done = True
        elif node == Ctx.TIE_AVOID:
            self.avoid_votes.append(a == Act.AVOID)
            self.narrate("tie_vote", f"{self.names[s]} " + ("would avoid the conflict." if a == Act.AVOID
                                                              else "decides to fight."), s)
        elif node == Ctx.CHALLENGE:
            m = a - Act.CHALLENGE_1 + 1
            self._name_answerers(s, [t for t in self.order if m >> t & 1])
        elif node == Ctx.CONSEQ_OFFER:
            if a == Act.TAKE_DEFAULT:
                self.conseq_offer = -2
            else:
                assert self.conseq is not None
                kind = OFFER_ACTIONS.index(Act(a))
                self.conseq_offer = 10 + kind
                w, loser = self.conseq
                self.narrate("offer", f"{self.names[loser]} offers {self.names[w]} instead: "
                             f"{offer_text(self, OFFER_KINDS[kind], loser, w)}.", loser)
        elif node == Ctx.CONSEQ_RESPONSE:
            self._answer_conseq_offer(a == Act.ACCEPT)
        elif node == Ctx.CONSEQ_DEFAULT:
            assert self.conseq is not None
            w, loser = self.conseq
            apply_default_consequence(self, w, loser, exhausted=(a == Act.EXHAUST))
            self._finish_consequence()
        self._proceed()

    # == The machine ==============================================================================
    def _decide(self, ctx: Ctx, seat: int) -> bool:
        self.node, self.actor = ctx, seat
        return True

    def _proceed(self) -> None:
        """Run rules until a seat must decide, dice must be rolled, or the game ends."""
        self._legal_cache = None
        while self._outcome is None and not self._step():
            pass
        if self._outcome is not None:
            self.node = Ctx.END

    def _step(self) -> bool:
        """One step of the machine; True when it stopped at a decision or chance node."""
        if self.conseq is not None:
            return self._consequence_step()
        if self.offer is not None:
            return self._offer_step()
        st = self.stage
        if st == Stage.BUILD:
            return self._decide(Ctx.BUILD, self.idx)
        if st == Stage.DRAW:
            while self.idx < self.num_players and (self.chars[self.idx].npc or not self.in_conflict[self.idx]
                                                   or self.forms_available >= 6):
                self.idx += 1
            if self.idx < self.num_players:
                return self._decide(Ctx.FORMS_DRAW, self.idx)
            self.stage, self.idx, self.sub = Stage.PICK, 0, 0
            return False
        if st == Stage.PICK:
            return self._pick_step()
        if st == Stage.WINDOW:
            return self._window_step()
        if st == Stage.OPEN:
            while self.idx < self.num_players and not self.in_conflict[self.idx]:
                self.idx += 1
            if self.idx < self.num_players:
                return self._roll_step(self.idx, Ctx.OPENING_ROLL)
            self.stage, self.tie_rerolls, self.sub = Stage.TIE, 0, 0
            self.tied, self.avoid_votes = find_opening_ties(self), []
            return False
        if st == Stage.TIE:
            return self._tie_step()
        if st == Stage.TURN:
            return self._turn_step()
        raise AssertionError(f"stage {st!r}")  # pragma: no cover

    # -- build ---------------------------------------------------------------------------------
    def _start_build(self, seat: int) -> None:
        ch = self.chars[seat]
        if ch.npc:
            pairs = sorted((sorted(p, reverse=True) for p in self.cfg.forms.npc_pairs), reverse=True)
            self.build_dice = [p[0] * 100 + p[1] for p in pairs]  # encoded pairs, largest first
            self.build_filled = [False] * 3
        else:
            self.build_dice = sorted(self.cfg.forms.pc_dice, reverse=True)
            self.build_filled = [False] * 6
        ch.dice = [0] * 6
        self.idx = seat

    def _build_step(self, s: int, a: int) -> None:
        """Rules 1-2: assign the next (largest remaining) die or die pair to a form."""
        ch = self.chars[s]
        k = sum(self.build_filled)
        if ch.npc:
            f = a - Act.NPC_FORM_0
            code = self.build_dice[k]
            ch.dice[2 * f], ch.dice[2 * f + 1] = code // 100, code % 100
        else:
            f = a
            ch.dice[f] = self.build_dice[k]
        self.build_filled[f] = True
        if all(self.build_filled):
            self.narrate("build", f"{ch.name} is built: {ch.sheet()}.", s)
            if s + 1 < self.num_players:
                self._start_build(s + 1)
            else:
                self._start_conflict()

    # -- conflict start --------------------------------------------------------------------------
    def _start_conflict(self) -> None:
        """A new conflict: every party still in the chapter is in it; forms are picked afresh."""
        n = self.num_players
        self.conflict_no += 1
        self.in_conflict = list(self.in_chapter)
        self.available = [tuple(range(6))] * n
        self.picks = [[] for _ in range(n)]
        self.strength_used = [NO_STRENGTH_USED] * n
        self.roll_dice = [()] * n
        self.cashed = [0] * n
        self.adv = [[False] * n for _ in range(n)]
        self.round_no = 0
        self.results = []
        self.exchanged = set()
        self.stage, self.idx, self.sub = Stage.DRAW, 0, 0
        self.narrate("conflict", f"Conflict {self.conflict_no}: "
                     + " vs ".join(self.names[s] for s in range(n) if self.in_conflict[s]) + ".")

    def _pick_step(self) -> bool:
        """Rule 4: each party picks two forms (an NPC one form) and whether its strength is used."""
        while self.idx < self.num_players and not self.in_conflict[self.idx]:
            self.idx += 1
        s = self.idx
        if s >= self.num_players:
            self.round_no = 1
            self._start_round()
            return False
        ch = self.chars[s]
        if self.sub == 0:
            return self._decide(Ctx.PICK_FORM, s)
        if self.sub == 1 and not ch.npc:
            return self._decide(Ctx.PICK_SECOND_FORM, s)
        if self.sub <= 2:
            if self._usable_strengths(s):
                return self._decide(Ctx.PICK_STRENGTH, s)
            self.strength_used[s] = NO_STRENGTH_USED
        self.roll_dice[s] = dice_for_roll(self, s)
        self.narrate("forms", f"{ch.name} acts {self._forms_text(s)}: rolls {dice_text(self.roll_dice[s])}.", s,
                     dice=self.roll_dice[s])
        self.idx, self.sub = s + 1, 0
        return False

    def _usable_strengths(self, s: int) -> list[int]:
        """Rule 4-5: a strength is usable when the action uses its required form, or it is general."""
        ch = self.chars[s]
        names = ch.form_names()
        picked = {names[f] for f in self.picks[s]}
        return [i for i, st in enumerate(ch.strengths[:4]) if st.general or st.form in picked]

    def _forms_text(self, s: int) -> str:
        ch = self.chars[s]
        names = ch.form_names()
        txt = " and ".join(FORM_TITLES[names[f]] for f in self.picks[s])
        if self.strength_used[s] >= 0:
            txt += f" using {ch.strengths[self.strength_used[s]].spec.split(':')[0].replace('_', ' ')} strength"
        return txt

    # -- rounds ----------------------------------------------------------------------------------
    def _start_round(self) -> None:
        n = self.num_players
        self.rolls = [None] * n
        self.moved = [False] * n
        self.challenged = [False] * n
        self.order = []
        self.narrate("round", f"Round {self.round_no}.", round=self.round_no)
        neg = self.cfg.negotiation
        window = neg.enabled and bool(neg.offers) and (
            neg.before_rolls if self.round_no == 1 else neg.between_rounds)
        self.stage, self.idx, self.sub = (Stage.WINDOW if window else Stage.OPEN), 0, 0
        self.cash_done = False

    def _window_step(self) -> bool:
        """Rule 17: before the round's roll each party may offer to concede instead of rolling on."""
        if self._conflict_over():
            self._end_conflict()
            return False
        while self.idx < self.num_players and not self.in_conflict[self.idx]:
            self.idx += 1
        if self.idx < self.num_players:
            return self._decide(Ctx.WINDOW, self.idx)
        self.stage, self.idx = Stage.OPEN, 0
        return False

    def _roll_step(self, s: int, purpose: Ctx) -> bool:
        """Rule 19 then the roll: cash owe-list entries (any time before rolling), then roll."""
        self.roll_purpose = purpose
        if not self.cash_done and self.cfg.owe_list.enabled and s in self.owe:
            return self._decide(Ctx.PRE_ROLL, s)
        self.node, self.actor = purpose, s
        return True

    def _on_roll(self, s: int, roll: Roll) -> None:
        purpose = self.roll_purpose
        ch = self.chars[s]
        adv = f" and {self.advantage_dice(s)} advantage {'die' if self.advantage_dice(s) == 1 else 'dice'}" \
            if self.advantage_dice(s) else ""
        if purpose == Ctx.OPENING_ROLL:
            self.narrate("roll", f"{ch.name} rolls {dice_text(self.roll_dice[s])}{adv}: {roll.text()}.", s,
                         faces=roll.faces, advantage=roll.advantage, key=roll.key)
            self.idx += 1
        elif purpose == Ctx.MOVER_ROLL:
            self.narrate("reroll", f"{ch.name} rerolls{adv}: {roll.text()}.", s, faces=roll.faces,
                         advantage=roll.advantage, key=roll.key)
            self.sub = 2
        else:  # ANSWER_ROLL
            self._resolve_answer(s, roll)

    # -- opening ties ------------------------------------------------------------------------------
    def _tie_step(self) -> bool:
        """Rule 8: exact ties on the opening roll — avoid by agreement, or reroll the low dice."""
        if not self.tied or self.tie_rerolls >= self.cfg.roll.max_tie_rerolls:
            establish_order(self)
            self.stage, self.idx, self.sub = Stage.TURN, 0, 0
            return False
        parties = [s for s in range(self.num_players) if self.in_conflict[s]]
        may_avoid = (self.cfg.roll.tie_avoid_rounds == "any" or self.round_no == 1) and set(self.tied) == set(
            parties) and len(parties) == 2
        if may_avoid and len(self.avoid_votes) < len(self.tied) and all(self.avoid_votes):
            return self._decide(Ctx.TIE_AVOID, self.tied[len(self.avoid_votes)])
        if may_avoid and len(self.avoid_votes) == len(self.tied) and all(self.avoid_votes):
            self.narrate("avoid", "An exact tie: " + " and ".join(self.names[t] for t in self.tied)
                         + " agree to avoid the conflict. No more rolls; each goes their own way.")
            self._end_conflict(avoided=True)
            return False
        if self.sub == 0:
            self.narrate("tie", "An exact tie: " + " and ".join(f"{self.names[t]} {self.rolls[t].text()}"  # type: ignore[union-attr]
                                                              for t in self.tied)
                         + ". They fight: each rerolls the die with the lowest value.")
        if self.sub < len(self.tied):
            self.node, self.actor = Ctx.TIE_REROLL, self.tied[self.sub]
            return True
        self.tie_rerolls += 1
        self.sub = 0
        self.avoid_votes = []
        self.tied = find_opening_ties(self)
        return False

    def _lowest_slot(self, s: int) -> int:
        """Rule 8: the slot of the die showing the lowest value (on equal values, the smaller die)."""
        roll = self.rolls[s]
        assert roll is not None
        best = 0
        for i, f in enumerate(roll.faces):
            bf, bd = roll.faces[best], self.roll_dice[s][best]
            if f < bf or (f == bf and self.roll_dice[s][i] < bd):
                best = i
        return best

    def _reroll_lowest_die(self, s: int, face: int) -> None:
        roll = self.rolls[s]
        assert roll is not None
        slot = self._lowest_slot(s)
        if not 1 <= face <= self.roll_dice[s][slot]:
            raise ValueError(f"bad reroll face {face} for a d{self.roll_dice[s][slot]}")
        faces = list(roll.faces)
        faces[slot] = face
        self.rolls[s] = Roll(tuple(faces), roll.advantage)
        self.narrate("reroll", f"{self.names[s]} rerolls the low die: now {self.rolls[s].text()}.", s,  # type: ignore[union-attr]
                     key=self.rolls[s].key)  # type: ignore[union-attr]

    # -- turns -------------------------------------------------------------------------------------
    def _turn_step(self) -> bool:
        """Rules 9-10: in turn order, each party not yet challenged moves; answerers answer."""
        if self._conflict_over():
            if self.round_no == 1 and self.cfg.owe_list.enabled:
                check_owe_list(self)  # round 1 ends with the conflict (Rule 18)
            self._end_conflict()
            return False
        if self.idx >= len(self.order):
            return self._end_round()
        s = self.order[self.idx]
        if self.sub == 0:
            if not self.in_conflict[s] or self.challenged[s]:
                self.idx += 1
                return False
            self.sub = 1
            if self.idx == 0:
                self.narrate("stand", f"{self.names[s]}'s {self.rolls[s].text()} stand; "  # type: ignore[union-attr]
                             f"{self.names[s]} moves first. The others pick up their dice.", s)
                self.sub = 2
            return False
        if self.sub == 1:  # reroll unless the dice stand (Rule 9)
            return self._roll_step(s, Ctx.MOVER_ROLL)
        if self.sub == 2:
            opp = self._opponents(s)
            if len(opp) == 1:
                self._name_answerers(s, opp)
                return False
            return self._decide(Ctx.CHALLENGE, s)
        # sub == 3: answers
        while self.answer_idx < len(self.answerers):
            t = self.answerers[self.answer_idx]
            if not self.in_conflict[t]:
                self.answer_idx += 1
                continue
            if not self.in_conflict[s] and self.cfg.contest.skip_answers_after_challenger_out:
                self.answer_idx = len(self.answerers)
                break
            return self._roll_step(t, Ctx.ANSWER_ROLL)
        self.moved[s] = True
        self.idx, self.sub = self.idx + 1, 0
        return False

    def _name_answerers(self, s: int, targets: list[int]) -> None:
        """Rule 9: the mover challenges and names who must answer (answers go in turn order)."""
        self.challenger = s
        self.answerers = [t for t in self.order if t in targets]
        self.answer_idx = 0
        self.sub = 3
        self.narrate("challenge", f"{self.names[s]} challenges with {self.rolls[s].text()}: "  # type: ignore[union-attr]
                     + " and ".join(self.names[t] for t in self.answerers) + " must answer.", s,
                     answerers=tuple(self.answerers))

    def _resolve_answer(self, t: int, roll: Roll) -> None:
        """Rules 10-13: compare the answer with the challenge and apply the result."""
        c = self.challenger
        croll = self.rolls[c]
        assert croll is not None
        cfg = self.cfg
        res = compare_answer(roll.key, croll.key, self.round_no, cfg.contest.max_rounds,
                             cfg.contest.absolute_multiple)
        self.last_result = res
        self.results.append((t, c, res))
        self.exchanged.add((min(t, c), max(t, c)))
        lost_move = not self.moved[t] and not self.challenged[t]
        self.challenged[t] = True
        self.answer_idx += 1
        self.narrate("answer", f"{self.names[t]} answers: {roll.text()} against {croll.text()} — "
                     f"{describe_result(self, t, c, roll, croll, res)}", t,
                     result=res.label, round=self.round_no, answerer=t, challenger=c,
                     answer_dice=self.roll_dice[t], challenge_dice=self.roll_dice[c],
                     answer_adv=self.advantage_dice(t), challenge_adv=self.advantage_dice(c),
                     fresh_challenge=self.order.index(c) != 0,
                     answer_key=roll.key, challenge_key=croll.key)
        if res == Result.LOSES_ADVANTAGE:
            gain_advantage(self, c, t)
        elif res == Result.WINS_ADVANTAGE:
            gain_advantage(self, t, c)
        if lost_move and self.in_conflict[t] and not res.is_absolute:
            self.narrate("lose_move", f"{self.names[t]} had to answer before their turn: they lose their move.", t)
        if res == Result.ABSOLUTE_LOSS:
            self._absolute(c, t)
        elif res == Result.ABSOLUTE_WIN and self.in_conflict[c]:  # a challenger already out suffers once
            self._absolute(t, c)

    def _absolute(self, w: int, loser: int) -> None:
        """Rule 14: the loser is out of this conflict; the winner applies consequences."""
        self.in_conflict[loser] = False
        self.conflict_score[w] += 1
        self.conflict_score[loser] -= 1
        self.narrate("out", f"{self.names[loser]} is out of the conflict; {self.names[w]} sets the terms.", loser)
        self.conseq = (w, loser)
        self.conseq_offer = -1

    def _end_round(self) -> bool:
        """Rules 12 and 18: the owe list after round 1; no round after the last."""
        if self.cfg.owe_list.enabled and (self.round_no == 1 or self.cfg.owe_list.check_rounds == "every"):
            check_owe_list(self)
        if self.round_no >= self.cfg.contest.max_rounds:
            self.narrate("end_conflict", f"Round {self.round_no} was the last: the conflict is over.")
            self._end_conflict()
            return False
        self.round_no += 1
        self._start_round()
        return False

    def _conflict_over(self) -> bool:
        return sum(self.in_conflict) < 2

    def _end_conflict(self, avoided: bool = False) -> None:
        if self._outcome is not None:
            return
        if self.conflict_no >= self.max_conflicts:
            self.finish_chapter(EndReason.TIME_LIMIT, f"the chapter's limit of {self.max_conflicts} "
                                f"conflict{'s' if self.max_conflicts > 1 else ''} is reached")
            return
        self._start_conflict()

    # -- negotiation -----------------------------------------------------------------------------
    def _offer_step(self) -> bool:
        assert self.offer is not None
        p, kind, target = self.offer
        if target < 0:
            return self._decide(Ctx.OFFER_TARGET, p)
        if self.sub != -1:
            self.narrate("offer", f"{self.names[p]} offers {self.names[target]}: "
                         f"{offer_text(self, OFFER_KINDS[kind], p, target)}.", p)
            self.sub = -1
        return self._decide(Ctx.OFFER_RESPONSE, target)

    def _answer_offer(self, accept: bool) -> None:
        """Rule 17: accept the offer (the proposer concedes) or insist on the whip (fight on)."""
        assert self.offer is not None
        p, kind, target = self.offer
        self.sub = 0
        if not accept:
            self.narrate("insist", f"{self.names[target]} insists: forget it, we roll.", target)
            self.offer = None
            self.idx += 1
            return
        self.narrate("accept", f"{self.names[target]} accepts.", target)
        self.offer = None
        self.in_conflict[p] = False
        self.conflict_score[target] += 1
        self.conflict_score[p] -= 1
        self.conseq = (target, p)
        self.conseq_offer = kind
        self.idx += 1
        if OFFER_KINDS[kind] == "concede_stake":
            self.narrate("concede", f"{self.names[p]} concedes the stake and loses no dice.", p)
            self._finish_consequence()

    def _consequence_step(self) -> bool:
        assert self.conseq is not None
        w, loser = self.conseq
        neg = self.cfg.negotiation
        if self.conseq_offer == -1:
            if neg.enabled and neg.after_absolute and neg.offers:
                return self._decide(Ctx.CONSEQ_OFFER, loser)
            self.conseq_offer = -2
        if self.conseq_offer == -2:
            return self._decide(Ctx.CONSEQ_DEFAULT, w)
        if self.conseq_offer >= 10:  # offer made, awaiting the winner
            return self._decide(Ctx.CONSEQ_RESPONSE, w)
        kind = OFFER_KINDS[self.conseq_offer]
        if kind == "concede_stake":  # pragma: no cover - resolved on acceptance
            self._finish_consequence()
            return False
        chooser = loser if kind == "loser_choice" else w
        if not self._form_loss_choices(loser):
            self._finish_consequence()
            return False
        return self._decide(Ctx.OFFER_FORM, chooser)

    def _answer_conseq_offer(self, accept: bool) -> None:
        assert self.conseq is not None
        w, loser = self.conseq
        kind = self.conseq_offer - 10
        if accept:
            self.narrate("accept", f"{self.names[w]} accepts.", w)
            self.conseq_offer = kind
            if OFFER_KINDS[kind] == "concede_stake":
                self.narrate("concede", f"{self.names[loser]} concedes the stake and loses no dice.", loser)
                self._finish_consequence()
        else:
            self.narrate("insist", f"{self.names[w]} breaks off: \"Forget it. You're exhausted or injured.\"", w)
            self.conseq_offer = -2

    def _form_loser(self) -> int:
        assert self.conseq is not None
        return self.conseq[1]

    def _form_loss_choices(self, loser: int) -> list[int]:
        """Rule 17 offers: one form (NPC: one die) that still has a size to lose."""
        ch = self.chars[loser]
        return [FORM_ACTIONS[i] for i in range(6) if ch.dice[i] > 0]

    def _resolve_form_offer(self, a: int) -> None:
        assert self.conseq is not None
        w, loser = self.conseq
        ch = self.chars[loser]
        i = a - Act.FORM_0
        lose_size(self, loser, i)
        what = f"one {FORM_TITLES[NPC_FORMS[i // 2]]} die" if ch.npc else FORM_TITLES[PC_FORMS[i]]
        self.narrate("consequence", f"As agreed, {ch.name} loses a size on {what}: {ch.sheet()}.", loser)
        self._finish_consequence()

    def _finish_consequence(self) -> None:
        """Rules 5 and 16: a consequential strength bites too; then check who is out of the chapter."""
        assert self.conseq is not None
        w, loser = self.conseq
        self.conseq = None
        self.conseq_offer = -1
        apply_consequential_strength(self, w, loser)
        if self.in_chapter[loser] and is_out_of_chapter(self, loser):
            self.in_chapter[loser] = False
            self.put_out[w] += 1
            self.narrate("chapter_out", f"{self.names[loser]} is out until the end of the chapter: killed, broken "
                         "or otherwise gone.", loser)
            if sum(self.in_chapter) < 2:
                self.finish_chapter(EndReason.KNOCKOUT, f"{self.names[w]} put {self.names[loser]} out")

    def finish_chapter(self, reason: EndReason, detail: str) -> None:
        """Rules 20-21: +1 per opponent put out of the chapter, -1 for being put out, plus the conflict bonus."""
        keep = self.cfg.owe_list.end_value
        rets = [self.put_out[s] - (0 if self.in_chapter[s] else 1) + self.conflict_win_bonus * self.conflict_score[s]
                + keep * self.owe.count(s) for s in range(self.num_players)]
        best = max(rets)
        winner = rets.index(best) if rets.count(best) == 1 else None
        self.finish(winner, reason, rets, detail)

    # == Observation ==============================================================================
    def advantage_dice(self, s: int) -> int:
        """Rule 13 and 19: one die per opponent s holds the advantage over, plus cashed owe entries."""
        n = sum(1 for t in range(self.num_players) if self.adv[s][t] and (
            self.in_conflict[t] or self.cfg.advantage.keep_when_opponent_out))
        return n + self.cashed[s]

    def observation(self, seat: int) -> np.ndarray:
        return encode_observation(self, seat)


# == Rule functions ===============================================================================
def dice_for_roll(state: WickedAgeState, s: int) -> tuple[int, ...]:
    """Rule 4: the dice of the two picked forms (NPC: the one form's two dice) plus the strength die."""
    ch = state.chars[s]
    dice: list[int] = []
    for f in state.picks[s]:
        dice.extend(ch.form_dice(f))
    if state.strength_used[s] >= 0:
        dice.append(ch.strengths[state.strength_used[s]].die)
    return tuple(dice)


def find_opening_ties(state: WickedAgeState) -> list[int]:
    """Rule 8: parties whose opening rolls are exactly equal to another party's."""
    keys: dict[tuple[int, ...], list[int]] = {}
    for s in range(state.num_players):
        r = state.rolls[s]
        if state.in_conflict[s] and r is not None:
            keys.setdefault(r.key, []).append(s)
    return sorted(s for group in keys.values() if len(group) > 1 for s in group)


def establish_order(state: WickedAgeState) -> None:
    """Rule 7: turn order is the opening rolls high to low; the highest stands (seat order breaks a capped tie)."""
    parties = [s for s in range(state.num_players) if state.in_conflict[s]]
    state.order = sorted(parties, key=lambda s: (tuple(-k for k in state.rolls[s].key), s))  # type: ignore[union-attr]
    state.narrate("order", "Order: " + ", ".join(f"{state.names[s]} ({state.rolls[s].text()})"  # type: ignore[union-attr]
                                                 for s in state.order) + ".", order=tuple(state.order))


def gain_advantage(state: WickedAgeState, holder: int, other: int) -> None:
    """Rule 13: the advantage between two opponents goes to ``holder`` (1-on-1 the die passes)."""
    had = state.adv[holder][other]
    state.adv[holder][other] = True
    state.adv[other][holder] = False
    verb = "keeps" if had else "takes"
    k = state.advantage_dice(holder)
    state.narrate("advantage", f"{state.names[holder]} {verb} the advantage over {state.names[other]} "
                  f"({k} advantage {'die' if k == 1 else 'dice'}).",
                  holder, holder=holder, other=other)


def describe_result(state: WickedAgeState, t: int, c: int, roll: Roll, croll: Roll, res: Result) -> str:
    """The rulebook's words for a comparison (Rule 11)."""
    m = state.cfg.contest.absolute_multiple
    last = state.round_no >= state.cfg.contest.max_rounds
    word = "half" if m == 2 else f"1/{m}"
    if res == Result.ABSOLUTE_LOSS:
        if m * roll.high <= croll.high:
            return f"{roll.high} is {word} of {croll.high} or less: {state.names[t]} loses absolutely."
        return f"lower, not {word}, but round {state.round_no} is the last: {state.names[t]} loses absolutely."
    if res == Result.ABSOLUTE_WIN:
        if roll.high >= m * croll.high:
            times = "double" if m == 2 else f"{m} times"
            return f"{roll.high} is {times} {croll.high} or more: {state.names[t]} wins absolutely."
        return f"equal or higher, and round {state.round_no} is the last: {state.names[t]} wins absolutely."
    if res == Result.LOSES_ADVANTAGE:
        return f"lower, but not {word}: {state.names[t]} loses the advantage."
    assert not last
    return f"equal or higher, not {'double' if m == 2 else f'{m} times'}: {state.names[t]} wins the advantage."


def lose_size(state: WickedAgeState, s: int, die_index: int) -> None:
    """Rule 3: one die (PC: one form) loses a size along the ladder, unless a variant shields it."""
    ch = state.chars[s]
    if ch.dice[die_index] < state.cfg.consequences.min_die_hit:
        return
    ch.dice[die_index] = step_down(ch.dice[die_index], state.ladder)


def apply_default_consequence(state: WickedAgeState, w: int, loser: int, exhausted: bool) -> None:
    """Rule 15: exhausted (PC: Directly, With Violence; NPC: both Action dice) or injured
    (PC: Covertly, For Others; NPC: both Maneuvering dice)."""
    ch = state.chars[loser]
    cons = state.cfg.consequences
    word = "exhausted" if exhausted else "injured"
    if ch.npc:
        f = NPC_FORMS.index(cons.npc_exhausted_form if exhausted else cons.npc_injured_form)
        idx = [2 * f, 2 * f + 1]
        what = f"both {FORM_TITLES[NPC_FORMS[f]]} dice"
    else:
        names = cons.exhausted_forms if exhausted else cons.injured_forms
        idx = [PC_FORMS.index(n) for n in names]
        what = " and ".join(FORM_TITLES[n] for n in names)
    for i in idx:
        lose_size(state, loser, i)
    state.narrate("consequence", f"{state.names[w]} leaves {ch.name} {word}: {what} lose a size ({ch.sheet()}).",
                  loser, consequence=word)


def apply_consequential_strength(state: WickedAgeState, w: int, loser: int) -> None:
    """Rule 5: a winner who used a consequential strength costs the loser a size on the named form too
    (an NPC loser: one die of that form — the engine takes the smaller live die, the harsher choice)."""
    si = state.strength_used[w]
    if si < 0:
        return
    st = state.chars[w].strengths[si]
    if st.consequential is None:
        return
    ch = state.chars[loser]
    if ch.npc:
        if st.consequential not in NPC_FORMS:
            return
        f = NPC_FORMS.index(st.consequential)
        live = [i for i in (2 * f, 2 * f + 1) if ch.dice[i] > 0]
        if not live:
            return
        i = min(live, key=lambda j: ch.dice[j])
    else:
        if st.consequential not in PC_FORMS:
            return
        i = PC_FORMS.index(st.consequential)
    lose_size(state, loser, i)
    state.narrate("consequence", f"{state.names[w]}'s strength is consequential: {ch.name} also loses a size on "
                  f"{FORM_TITLES[st.consequential]} ({ch.sheet()}).", loser)


def is_out_of_chapter(state: WickedAgeState, s: int) -> bool:
    """Rule 16: a PC with two forms at 0, or an NPC with any two dice at 0, is out of the chapter."""
    ch = state.chars[s]
    zeros = sum(1 for d in ch.dice if d == 0)
    cons = state.cfg.consequences
    return zeros >= (cons.npc_out_zero_dice if ch.npc else cons.pc_out_zero_forms)


def check_owe_list(state: WickedAgeState) -> None:
    """Rule 18: a PC still in the conflict that rolled lesser dice than an opponent it rolled against
    goes to the end of the owe list (advantage dice excluded)."""
    for s in range(state.num_players):
        if state.chars[s].npc or not state.in_conflict[s]:
            continue
        if state.cfg.owe_list.against == "all":
            against = [t for t in range(state.num_players) if t != s and state.roll_dice[t]]
        else:
            against = [t for t in range(state.num_players) if (min(s, t), max(s, t)) in state.exchanged]
        bigger = [t for t in against if rolled_lesser_dice(state.roll_dice[s], state.roll_dice[t])]
        if bigger:
            state.owe.append(s)
            state.narrate("owe", f"End of round {state.round_no}: {state.names[s]} rolled lesser dice "
                          f"({dice_text(state.roll_dice[s])} against {dice_text(state.roll_dice[bigger[0]])}) and "
                          f"still stands: {state.names[s]} goes on the owe list.", s)


def cash_owe_entry(state: WickedAgeState, s: int) -> None:
    """Rule 19: erase one of your entries from the owe list; gain advantage dice for this conflict."""
    state.owe.remove(s)
    state.cashed[s] += state.cfg.owe_list.dice_per_entry
    state.narrate("cash", f"{state.names[s]} erases their name from the owe list and takes an "
                  "advantage die.", s)


def offer_text(state: WickedAgeState, kind: str, p: int, target: int) -> str:
    if kind == "loser_choice":
        return f"{state.names[p]} loses a size on one form of {state.names[p]}'s choice, and concedes"
    if kind == "winner_choice":
        return f"{state.names[p]} loses a size on one form of {state.names[target]}'s choice, and concedes"
    return f"{state.names[p]} concedes the stake but loses no dice"


# == Observation encoding =========================================================================
PARTY_FEATURES = 22
GLOBAL_FEATURES = 2 + len(DECISION_CONTEXTS) + 6 + 6 + 2 + 3 + 2
OBS_SIZE = MAX_PARTIES * PARTY_FEATURES + GLOBAL_FEATURES
DIE_NORM = 12.0
ROLL_NORM = 40.0


def encode_observation(state: WickedAgeState, seat: int) -> np.ndarray:
    """Flat float32 in [0, 1]: parties (self first), then the round, decision and pending offer."""
    v = [0.0] * OBS_SIZE
    n = state.num_players
    in_turns = state.stage == Stage.TURN
    for k in range(n):
        p = (seat + k) % n
        base = k * PARTY_FEATURES
        ch = state.chars[p]
        v[base] = 1.0
        v[base + 1] = float(state.in_chapter[p])
        v[base + 2] = float(state.in_conflict[p])
        v[base + 3] = float(ch.npc)
        for i, d in enumerate(ch.dice):
            v[base + 4 + i] = d / DIE_NORM
        for i, d in enumerate(state.roll_dice[p][:3]):
            v[base + 10 + i] = d / DIE_NORM
        v[base + 13] = state.advantage_dice(p) / 6.0
        v[base + 14] = float(state.adv[p][seat])
        v[base + 15] = float(state.adv[seat][p])
        v[base + 16] = state.owe.count(p) / 5.0
        v[base + 17] = float(state.challenged[p])
        v[base + 18] = float(state.moved[p])
        r = state.rolls[p]
        if r is not None:
            v[base + 19] = r.key[0] / ROLL_NORM
            v[base + 20] = r.key[1] / ROLL_NORM
        v[base + 21] = float(in_turns and state.challenger == p)
    g = MAX_PARTIES * PARTY_FEATURES
    v[g] = state.round_no / state.cfg.contest.max_rounds
    v[g + 1] = state.conflict_no / state.max_conflicts
    g += 2
    if state.node < Ctx.FORMS_DRAW:
        v[g + DECISION_CONTEXTS.index(state.node)] = 1.0
    g += len(DECISION_CONTEXTS)
    for f in state.available[seat]:
        v[g + f] = 1.0
    g += 6
    for f in state.picks[seat][:1]:
        v[g + f] = 1.0
    g += 6
    c = state.challenger
    if in_turns and c >= 0:
        cr = state.rolls[c]
        if cr is not None:
            v[g] = cr.key[0] / ROLL_NORM
            v[g + 1] = cr.key[1] / ROLL_NORM
    g += 2
    kind = -1
    if state.offer is not None:
        kind = state.offer[1]
    elif state.conseq_offer >= 10:
        kind = state.conseq_offer - 10
    if kind >= 0:
        v[g + kind] = 1.0
    g += 3
    if state.conseq is not None:
        v[g] = float(state.conseq[0] == seat)
        v[g + 1] = float(state.conseq[1] == seat)
    obs = np.array(v, dtype=np.float32)
    np.minimum(obs, 1.0, out=obs)
    return obs


def forms_draw_count(available: int) -> int:
    return comb(6, available)


# == Direct setup (tests, odds, solvers) ==========================================================
def pc(name: str, strengths: Sequence[Strength] = (), **forms: int) -> Character:
    """A PC with the given form dice (unnamed forms default to 0), e.g. ``pc("Amek", with_violence=12)``."""
    for f in forms:
        if f not in PC_FORMS:
            raise ValueError(f"unknown PC form '{f}'; forms: {', '.join(PC_FORMS)}")
    return Character(name, False, [forms.get(f, 0) for f in PC_FORMS], tuple(strengths))


def npc(name: str, strengths: Sequence[Strength] = (), **forms: tuple[int, int]) -> Character:
    """An NPC with die pairs per form, e.g. ``npc("Esan", maneuvering=(10, 6))``."""
    dice: list[int] = []
    for f in NPC_FORMS:
        a, b = forms.get(f, (0, 0))
        dice += [a, b]
    for f in forms:
        if f not in NPC_FORMS:
            raise ValueError(f"unknown NPC form '{f}'; forms: {', '.join(NPC_FORMS)}")
    return Character(name, True, dice, tuple(strengths))


def start_conflict(characters: list[Character], picks: Sequence[Sequence[str]], cfg: WickedAgeConfig | None = None,
                   *, strengths_used: Sequence[int] | None = None, owe_list: Sequence[int] = (),
                   max_conflicts: int = 1) -> WickedAgeState:
    """A conflict between ``characters`` with their forms already chosen (by name), at round 1.

    The chapter is ``max_conflicts`` long (default: this one conflict). Later conflicts, if any,
    are picked by the seats as usual.
    """
    cfg = cfg or WickedAgeConfig()
    state = WickedAgeState(cfg, characters, max_conflicts=max_conflicts, owe_list=owe_list, start=False)
    state._start_conflict()
    for s, (ch, forms) in enumerate(zip(characters, picks, strict=True)):
        names = ch.form_names()
        state.picks[s] = [names.index(f) for f in forms]
        state.strength_used[s] = strengths_used[s] if strengths_used is not None else NO_STRENGTH_USED
        state.roll_dice[s] = dice_for_roll(state, s)
        state.narrate("forms", f"{ch.name} acts {state._forms_text(s)}: rolls {dice_text(state.roll_dice[s])}.", s)
    state.round_no = 1
    state._start_round()
    state._proceed()
    return state

"""The typed rules config of In a Wicked Age (every [decision] of docs/rules/wicked_age.md is a key).

Bounds: a number the rules fix or limit keeps the rules' own range (cited in its description); where the
rules name no limit, its range is a generous [decision] that keeps play finite (any config inside the
ranges loads and plays: tests/envs/test_config_fuzz.py). The models are strict (envs/core/config.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from envs.core.config import RulesModel

PC_FORMS: tuple[str, ...] = ("covertly", "directly", "for_myself", "for_others", "with_love", "with_violence")
"""Rule 1: the six PC forms, in this fixed order (form ids 0..5)."""
NPC_FORMS: tuple[str, ...] = ("action", "maneuvering", "self_protection")
"""Rule 2: the three NPC forms (form ids 0..2; each holds two dice)."""
ALL_FORMS = PC_FORMS + NPC_FORMS

MAX_DIE = 30
"""Rules 1-3 [decision]: the largest die size a config may name (the rules use d4..d12; a designer's d20 or
d30 plays)."""
MAX_PARTIES = 8
"""Rules 9-13 [decision]: the most parties a conflict (the melee) may have. The rules set no maximum ("two on
one and more"): eight keeps the table of named answerers (every subset of the opponents, Rule 9) at 289
actions."""
MAX_STRENGTHS = 8
"""Rule 5 [decision]: the most particular strengths one seat's sheet may list (the seed's sheets hold 1-2)."""
DieSize = Annotated[int, Field(ge=1, le=MAX_DIE)]
"""Rules 1-3: a die size, 1..30. Every form starts with a real die (Rule 1: one die to each form; Rule 2: two to
each NPC form) and the ladder lists real dice (Rule 3: below its last is 0, the only "no die")."""
Strengths = Annotated[list[str], Field(max_length=MAX_STRENGTHS)]
"""Rule 5: one seat's particular strengths."""

OfferKind = Literal["loser_choice", "winner_choice", "concede_stake"]
OFFER_KINDS: tuple[str, ...] = ("loser_choice", "winner_choice", "concede_stake")


def parse_strength(spec: str) -> tuple[str, str, bool, str | None]:
    """Parse 'form[:potent|twice_potent][:general][:consequential=FORM]' (Rule 5).

    Returns (required form, level, general, consequential form or None). Raises ValueError.
    """
    parts = [p.strip() for p in spec.split(":") if p.strip()]
    if not parts or parts[0] not in ALL_FORMS:
        raise ValueError(f"strength '{spec}': first part must be a form, one of {', '.join(ALL_FORMS)}")
    level, general, conseq = "base", False, None
    for p in parts[1:]:
        if p in ("potent", "twice_potent"):
            level = p
        elif p == "general":
            general = True
        elif p.startswith("consequential="):
            conseq = p.split("=", 1)[1]
            if conseq not in ALL_FORMS:
                raise ValueError(f"strength '{spec}': consequential form must be one of {', '.join(ALL_FORMS)}")
        elif p in ("unique", "far_reaching"):
            continue  # Rule 5: no dice effect
        else:
            raise ValueError(
                f"strength '{spec}': unknown part '{p}' (potent, twice_potent, general, "
                "consequential=FORM, unique, far_reaching)"
            )
    return parts[0], level, general, conseq


def _check_strengths(v: list[list[str]]) -> list[list[str]]:
    for seat in v:
        for s in seat:
            parse_strength(s)
    return v


class FormsRules(RulesModel):
    """Rules 1-3: the forms and the die ladder."""

    pc_dice: list[DieSize] = Field(
        default=[12, 10, 8, 6, 6, 4],
        min_length=6,
        max_length=6,
        description="Rule 1: the six dice a PC assigns to its forms",
    )
    npc_pairs: list[Annotated[list[DieSize], Field(min_length=2, max_length=2)]] = Field(
        default=[[12, 8], [10, 6], [6, 4]],
        min_length=3,
        max_length=3,
        description="Rule 2: the three die pairs an NPC assigns to its forms",
    )
    ladder: list[DieSize] = Field(
        default=[12, 10, 8, 6, 4],
        min_length=1,
        max_length=MAX_DIE,
        description="Rule 3: the die ladder, largest first; below the last is 0",
    )

    @field_validator("ladder")
    @classmethod
    def _descending(cls, v: list[int]) -> list[int]:
        if list(v) != sorted(v, reverse=True) or len(set(v)) != len(v):
            raise ValueError("the ladder lists distinct sizes, largest first")
        return v


class StrengthRules(RulesModel):
    """Rule 5: the dice of particular strengths."""

    base_die: int = Field(default=8, ge=1, le=30, description="Rule 5: a particular strength's die")
    potent_die: int = Field(default=10, ge=1, le=30, description="Rule 5: a potent strength's die")
    twice_potent_die: int = Field(default=12, ge=1, le=30, description="Rule 5: a twice-potent strength's die")


class RollRules(RulesModel):
    """Rules 6-8: reading a roll and the opening roll."""

    tie_avoid_rounds: Literal["first", "any"] = Field(
        default="first", description="Rule 8 [decision]: on which rounds' opening ties the parties may agree to avoid"
    )
    pad_short_rolls: bool = Field(
        default=True,
        description="Rule 6 [decision]: shorter rolls are padded with 0 (false: compared only over the dice both "
        "rolls have, so the longer roll's extra dice are ignored)",
    )
    multi_party_ties: Literal["all", "top"] = Field(
        default="all",
        description="Rule 8 [decision]: with 3+ parties every tied party rerolls ('all'), or only a tie for the "
        "highest roll, lower ties going by seat order ('top')",
    )
    max_tie_rerolls: int = Field(
        default=50, ge=1, le=1000, description="Rule 8 [decision]: safety cap on low-die rerolls, then seat order"
    )


class ContestRules(RulesModel):
    """Rules 9-12: turns, answers, comparison, round limit."""

    max_rounds: int = Field(default=3, ge=1, le=10, description="Rule 12: the last round (advantage becomes absolute)")
    absolute_multiple: int = Field(default=2, ge=2, le=5, description="Rule 11: 'double' / 'half' for absolute results")
    after_last_round: Literal["no_consequences", "advantage_wins"] = Field(
        default="no_consequences",
        description="Rule 12 [decision]: pairs left unresolved by the last round get no consequences, or the "
        "holder of an advantage over a party still in wins absolutely ('advantage_wins')",
    )
    skip_answers_after_challenger_out: bool = Field(
        default=True,
        description="Rule 10 [decision]: remaining named answerers need not answer a challenger who is out",
    )


class AdvantageRules(RulesModel):
    """Rule 13: advantage dice."""

    die_sides: int = Field(default=6, ge=2, le=20, description="Rule 13: the advantage die (a d6)")
    tracking: Literal["per_pair", "single"] = Field(
        default="per_pair",
        description="Rule 13 [decision]: advantage is held per pair of opponents, or as one advantage per "
        "conflict that the latest gainer takes ('single')",
    )
    keep_when_opponent_out: bool = Field(
        default=True, description="Rule 13 [decision]: advantage over a party that left the conflict is kept"
    )


class ConsequenceRules(RulesModel):
    """Rules 14-16: consequences and leaving the chapter."""

    exhausted_forms: list[str] = Field(
        default=["directly", "with_violence"],
        min_length=1,
        max_length=len(PC_FORMS),
        description="Rule 15: PC forms that lose a size when exhausted",
    )
    injured_forms: list[str] = Field(
        default=["covertly", "for_others"],
        min_length=1,
        max_length=len(PC_FORMS),
        description="Rule 15: PC forms that lose a size when injured",
    )
    npc_exhausted_form: Literal["action", "maneuvering", "self_protection"] = Field(
        default="action", description="Rule 15: the NPC form whose two dice lose a size when exhausted"
    )
    npc_injured_form: Literal["action", "maneuvering", "self_protection"] = Field(
        default="maneuvering", description="Rule 15: the NPC form whose two dice lose a size when injured"
    )
    min_die_hit: int = Field(
        default=0, ge=0, le=30, description="variant hook: dice smaller than this never lose a size (0 = every die)"
    )
    pc_out_zero_forms: int = Field(default=2, ge=1, le=6, description="Rule 16: a PC with this many forms at 0 is out")
    npc_out_zero_dice: int = Field(default=2, ge=1, le=6, description="Rule 16: an NPC with this many dice at 0 is out")

    @field_validator("exhausted_forms", "injured_forms")
    @classmethod
    def _forms(cls, v: list[str]) -> list[str]:
        for f in v:
            if f not in PC_FORMS:
                raise ValueError(f"'{f}' is not a PC form; allowed: {', '.join(PC_FORMS)}")
        return v


class NegotiationRules(RulesModel):
    """Rule 17: negotiation as a menu of offers, the default consequence as the whip."""

    enabled: bool = Field(default=True, description="Rule 17: negotiation is allowed")
    offers: list[OfferKind] = Field(
        default=["loser_choice", "winner_choice", "concede_stake"],
        max_length=len(OFFER_KINDS),
        description="Rule 17 [decision]: the menu of offers a proposer may make",
    )
    before_rolls: bool = Field(default=True, description="Rule 17: offers may be made before round 1's roll")
    between_rounds: bool = Field(default=True, description="Rule 17: offers may be made instead of continuing a round")
    after_absolute: bool = Field(default=True, description="Rule 17: the loser may offer instead of the default")
    winner_offers: bool = Field(
        default=True, description="Rule 17: after an absolute result the winner may propose an offer too (example D)"
    )


class OweListRules(RulesModel):
    """Rules 18-19: the owe list."""

    enabled: bool = Field(default=True, description="Rule 18: the owe list is kept")
    check_rounds: Literal["first", "every"] = Field(
        default="first", description="Rule 18: at the end of which rounds names are added ('first' only, as written)"
    )
    against: Literal["exchanged", "all"] = Field(
        default="exchanged",
        description="Rule 18 [decision]: 'rolled against' = had a challenge/answer with (or: any party)",
    )
    count_advantage_dice: bool = Field(
        default=False,
        description="Rule 18 [decision]: the lesser-dice test counts the advantage d6s each side rolled "
        "(default: advantage dice excluded)",
    )
    dice_per_entry: int = Field(default=1, ge=0, le=6, description="Rule 19: advantage dice gained per cashed entry")
    end_value: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="Rule 18 [decision]: return per entry left at the chapter's end (the "
        "future chapters an entry guarantees are not simulated; 0 = worthless)",
    )


class DuelSetup(RulesModel):
    """The duel scenario: a chapter of conflicts between two characters."""

    opponent: Literal["pc", "npc"] = Field(default="pc", description="seat 1 is a PC or an NPC")
    build_phase: bool = Field(
        default=True,
        description="Rule 1: each seat assigns its dice to its forms as its first decisions (simultaneous builds); "
        "false: the fixed sheets of pc_assignment / npc_assignment",
    )
    max_conflicts: int = Field(
        default=8, ge=1, le=50, description="conflict limit of the chapter (then a time-limit draw)"
    )
    forms_available: int = Field(
        default=3,
        ge=2,
        le=6,
        description="Rule 4 [decision]: how many of a PC's six forms fit its action, drawn at random per conflict "
        "(6 = every form fits, no draw)",
    )
    conflict_win_bonus: float = Field(
        default=0.0, ge=0.0, le=1.0, description="return per conflict won minus lost (0 = only out counts)"
    )
    pc_assignment: list[list[str]] = Field(
        default=[
            ["with_violence", "directly", "covertly", "for_myself", "for_others", "with_love"],
            ["with_violence", "for_myself", "directly", "covertly", "with_love", "for_others"],
        ],
        max_length=2,
        description="without a build phase: per PC seat, the forms that get forms.pc_dice, largest die first",
    )
    npc_assignment: list[str] = Field(
        default=["action", "self_protection", "maneuvering"],
        max_length=len(NPC_FORMS),
        description="the NPC forms that get forms.npc_pairs, largest pair first",
    )
    strengths: list[Strengths] = Field(
        default=[["with_violence:potent"], ["directly:consequential=for_others"]],
        max_length=2,
        description="particular strengths per seat: 'form[:potent|twice_potent][:general][:consequential=FORM]'",
    )
    npc_strengths: list[str] = Field(
        default=["maneuvering:consequential=for_others"],
        max_length=MAX_STRENGTHS,
        description="Rule 5: the NPC's particular strengths when seat 1 is an NPC (instead of strengths[1])",
    )

    @field_validator("strengths")
    @classmethod
    def _strengths(cls, v: list[list[str]]) -> list[list[str]]:
        return _check_strengths(v)

    @field_validator("npc_strengths")
    @classmethod
    def _npc_strengths(cls, v: list[str]) -> list[str]:
        _check_strengths([v])
        return v


class MeleeSetup(RulesModel):
    """The melee scenario: 3 or more parties, the last of them an NPC."""

    parties: int = Field(
        default=3,
        ge=3,
        le=MAX_PARTIES,
        description=f"number of parties (the last one is the NPC); [decision] at most {MAX_PARTIES}: the rules set "
        "no maximum, and every subset of the opponents is a challenge a mover may name (Rule 9), so the action "
        "table grows as 2^parties",
    )
    build_phase: bool = Field(
        default=True,
        description="Rule 1: each seat assigns its dice to its forms as its first decisions (simultaneous builds); "
        "false: the fixed sheets of pc_assignment / npc_assignment",
    )
    max_conflicts: int = Field(default=6, ge=1, le=50, description="conflict limit of the chapter")
    forms_available: int = Field(
        default=3,
        ge=2,
        le=6,
        description="Rule 4 [decision]: how many of a PC's six forms fit its action, drawn at random per conflict "
        "(6 = every form fits, no draw)",
    )
    pc_assignment: list[list[str]] = Field(
        default=[
            ["for_myself", "directly", "for_others", "covertly", "with_violence", "with_love"],
            ["for_myself", "with_violence", "covertly", "for_others", "with_love", "directly"],
            ["for_others", "covertly", "with_violence", "directly", "for_myself", "with_love"],
        ],
        min_length=3,
        max_length=MAX_PARTIES - 1,
        description="per PC seat, the forms that get forms.pc_dice, largest die first (more PCs than entries: "
        "the list starts over)",
    )
    npc_assignment: list[str] = Field(
        default=["action", "maneuvering", "self_protection"],
        max_length=len(NPC_FORMS),
        description="the NPC forms that get forms.npc_pairs, largest pair first",
    )
    strengths: list[Strengths] = Field(
        default=[[], [], [], []],
        max_length=MAX_PARTIES,
        description="particular strengths per seat (seats past the end of the list have none)",
    )

    @field_validator("strengths")
    @classmethod
    def _strengths(cls, v: list[list[str]]) -> list[list[str]]:
        return _check_strengths(v)


class WickedAgeConfig(RulesModel):
    """In a Wicked Age: every rule of docs/rules/wicked_age.md as config."""

    forms: FormsRules = FormsRules()
    strength: StrengthRules = StrengthRules()
    roll: RollRules = RollRules()
    contest: ContestRules = ContestRules()
    advantage: AdvantageRules = AdvantageRules()
    consequences: ConsequenceRules = ConsequenceRules()
    negotiation: NegotiationRules = NegotiationRules()
    owe_list: OweListRules = OweListRules()
    duel: DuelSetup = DuelSetup()
    melee: MeleeSetup = MeleeSetup()

    @model_validator(mode="after")
    def _sheets(self) -> WickedAgeConfig:
        for name, orders in (
            ("duel.pc_assignment", self.duel.pc_assignment),
            ("melee.pc_assignment", self.melee.pc_assignment),
        ):
            if not orders:
                raise ValueError(f"{name}: give at least one form order")
            for order in orders:
                if sorted(order) != sorted(PC_FORMS):
                    raise ValueError(f"{name}: each entry lists the six PC forms once: {', '.join(PC_FORMS)}")
        for name, order in (
            ("duel.npc_assignment", self.duel.npc_assignment),
            ("melee.npc_assignment", self.melee.npc_assignment),
        ):
            if sorted(order) != sorted(NPC_FORMS):
                raise ValueError(f"{name}: lists the three NPC forms once: {', '.join(NPC_FORMS)}")
        d, m = self.duel, self.melee
        duel_specs = [
            d.strengths[0] if d.strengths else [],
            d.npc_strengths if d.opponent == "npc" else (d.strengths[1] if len(d.strengths) > 1 else []),
        ]
        duel_names = ["duel.strengths[0]", "duel.npc_strengths" if d.opponent == "npc" else "duel.strengths[1]"]
        _check_strength_kinds(duel_names, duel_specs, [False, d.opponent == "npc"])
        melee_npc = [False] * (m.parties - 1) + [True]
        _check_strength_kinds(
            [f"melee.strengths[{i}]" for i in range(m.parties)],
            [m.strengths[i] if i < len(m.strengths) else [] for i in range(m.parties)],
            melee_npc,
        )
        return self


def _check_strength_kinds(names: list[str], specs: list[list[str]], npc: list[bool]) -> None:
    """Rule 5: refuse at load a strength that could never be rolled, or whose consequence could never bite.

    A seat's strengths need a form of its own kind (unless general) and, when consequential, a form that some
    opponent of the seat has.
    """
    for seat, (name, seat_specs) in enumerate(zip(names, specs, strict=True)):
        own = NPC_FORMS if npc[seat] else PC_FORMS
        kind = "an NPC" if npc[seat] else "a PC"
        opponents = {npc[t] for t in range(len(npc)) if t != seat}
        bitten = [f for is_npc in sorted(opponents) for f in (NPC_FORMS if is_npc else PC_FORMS)]
        for spec in seat_specs:
            form, _, general, conseq = parse_strength(spec)
            if form not in own and not general:
                raise ValueError(
                    f"{name}: strength '{spec}' needs the form '{form}', which {kind} does not have "
                    f"(Rule 5); use one of {', '.join(own)} or make it general"
                )
            if conseq is not None and conseq not in bitten:
                raise ValueError(
                    f"{name}: strength '{spec}' is consequential on '{conseq}', a form no opponent of "
                    f"{kind} seat has, so it could never bite (Rule 5); use one of {', '.join(bitten)}"
                )


@dataclass(frozen=True, slots=True)
class ResolvedRules:
    """The rule values the conflict machine reads at every step, resolved once from a config into plain attributes.

    A config model's nested attribute reads (``cfg.advantage.die_sides``) cost several lookups each; the
    machine reads these instead (:meth:`from_config`, once per game; clones share the record).
    """

    max_rounds: int  # Rule 12
    absolute_multiple: int  # Rule 11
    after_last_round_advantage_wins: bool  # Rule 12 [decision]
    skip_answers_after_challenger_out: bool  # Rule 10 [decision]
    pad_short_rolls: bool  # Rule 6 [decision]
    top_ties_only: bool  # Rule 8 [decision]: multi_party_ties == "top"
    max_tie_rerolls: int  # Rule 8 [decision]
    tie_avoid_rounds: str  # Rule 8 [decision]
    advantage_sides: int  # Rule 13
    per_pair_advantage: bool  # Rule 13 [decision]: tracking == "per_pair"
    keep_advantage: bool  # Rule 13 [decision]: keep_when_opponent_out
    owe_enabled: bool  # Rule 18
    owe_check_rounds: str  # Rule 18
    owe_against_all: bool  # Rule 18 [decision]: against == "all"
    owe_count_advantage: bool  # Rule 18 [decision]
    dice_per_entry: int  # Rule 19
    min_die_hit: int  # variant hook of Rule 3
    negotiation_enabled: bool  # Rule 17
    offers: tuple[str, ...]  # Rule 17 [decision]: the menu
    offers_before_rolls: bool  # Rule 17
    offers_between_rounds: bool  # Rule 17
    offers_after_absolute: bool  # Rule 17
    winner_offers: bool  # Rule 17

    @classmethod
    def from_config(cls, cfg: WickedAgeConfig) -> ResolvedRules:
        """The plain values of ``cfg``."""
        contest, roll, adv, owe, neg = cfg.contest, cfg.roll, cfg.advantage, cfg.owe_list, cfg.negotiation
        return cls(
            max_rounds=contest.max_rounds,
            absolute_multiple=contest.absolute_multiple,
            after_last_round_advantage_wins=contest.after_last_round == "advantage_wins",
            skip_answers_after_challenger_out=contest.skip_answers_after_challenger_out,
            pad_short_rolls=roll.pad_short_rolls,
            top_ties_only=roll.multi_party_ties == "top",
            max_tie_rerolls=roll.max_tie_rerolls,
            tie_avoid_rounds=roll.tie_avoid_rounds,
            advantage_sides=adv.die_sides,
            per_pair_advantage=adv.tracking == "per_pair",
            keep_advantage=adv.keep_when_opponent_out,
            owe_enabled=owe.enabled,
            owe_check_rounds=owe.check_rounds,
            owe_against_all=owe.against == "all",
            owe_count_advantage=owe.count_advantage_dice,
            dice_per_entry=owe.dice_per_entry,
            min_die_hit=cfg.consequences.min_die_hit,
            negotiation_enabled=neg.enabled,
            offers=tuple(neg.offers),
            offers_before_rolls=neg.before_rolls,
            offers_between_rounds=neg.between_rounds,
            offers_after_absolute=neg.after_absolute,
            winner_offers=neg.winner_offers,
        )

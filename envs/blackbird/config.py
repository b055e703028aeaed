"""The typed config of Blackbird Pie: every [decision] of docs/rules/blackbird.md is a named key.

Rule numbers in the field descriptions refer to ``docs/rules/blackbird.md``.

Bounds: a number the rules fix or limit keeps the rules' own range (cited in its description); where the
rules name no limit, its range is a generous [decision] that keeps play finite (any config inside the
ranges loads and plays: tests/envs/test_config_fuzz.py). The models are strict (envs/core/config.py).
"""

from __future__ import annotations

import enum
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from envs.core.config import RulesModel

MIN_TRAITS = 3
"""Rule 1: at least three traits."""
MAX_TRAITS = 7
"""Rule 1: at most seven traits (fixes the size of the trait-choice action range)."""
CREATION_POINTS = 10
"""Rule 1: ten points spread over the traits, each one tag."""
MAX_FLAGS = 3
"""Rule 1: three flags (keys)."""
MAX_POOL = 100
"""Rule 5 [decision]: the most any pool setting may be. The rules cap the pool at 10 (Lady Blackbird) but a
designer may raise ``pool.cap`` (issue 15: 40 must play); 100 keeps the "spend k pool dice" range finite."""
MAX_LEVEL = 10
"""Rule 9 [decision]: the highest level a sheet may start a trait or tag at. The rules price every level
(1, 2, 4, 8 … XP) and name no top; ten levels give at most 30 dice per item (3 dice per level)."""
MAX_LIST = 32
"""[decision] the most entries of a list of names (tags, traits, conditions, obstacles): far above any sheet."""
TagLevel = Annotated[int, Field(ge=1, le=MAX_LEVEL)]
"""Rule 9: a tag's level (a level-L tag gives L dice); never 0 or negative (that would cancel dice)."""


class DiceRules(RulesModel):
    """Rule 3: reading the dice."""

    success_on: int = Field(default=4, ge=2, le=6, description="Rule 3: a d6 showing this or more is a success")


class DifficultyRules(RulesModel):
    """Rule 4: difficulties."""

    default: int = Field(default=3, ge=1, le=20, description="Rule 4: the usual difficulty (medium)")
    without_pool_modifier: int = Field(
        default=-1, ge=-3, le=0, description="Rule 4: difficulty change when the game is played without pool dice"
    )


class PoolRules(RulesModel):
    """Rule 5: the personal pool dice."""

    enabled: bool = Field(default=True, description="Rule 4/5: play with personal pool dice (off: difficulties drop)")
    start: int = Field(
        default=10,
        ge=0,
        le=MAX_POOL,
        description="Rule 5: pool dice at the start of play (clamped to the cap); ≤ 100 [decision]",
    )
    session_reset: int = Field(
        default=7,
        ge=0,
        le=MAX_POOL,
        description="Rule 5: the pool returns to this at session end (clamped to the cap); ≤ 100 [decision]",
    )
    cap: int = Field(
        default=10,
        ge=1,
        le=MAX_POOL,
        description="Rule 5: the pool never holds more than this (it also sizes the 'spend k pool dice' actions); "
        "10 as written, a designer's cap up to 100 [decision]",
    )
    failure_bonus: int = Field(default=1, ge=0, le=10, description="Rule 5: dice gained on a failed roll")
    zero_spend_failure_bonus: int = Field(
        default=0,
        ge=0,
        le=10,
        description="Rule 5 (variant hook): extra dice for failing a roll on which no pool dice were spent",
    )
    lost_on_pass: bool = Field(default=True, description="Rule 5: pool dice spent on a passed roll are lost")


class HelpRules(RulesModel):
    """Rule 6: help from another player."""

    dice_per_helper: int = Field(default=1, ge=0, le=3, description="Rule 6: dice a helper gives from their pool")
    returned_on_failure: bool = Field(
        default=True, description="Rule 6: the helper gets the die back if the roll fails"
    )


class CharacterRules(RulesModel):
    """Rule 2: the dice each part of a character sheet adds to a roll."""

    flag_dice: int = Field(
        default=1, ge=0, le=3, description="Rule 2: dice for acting on a flag (never more than once)"
    )
    trait_dice: int = Field(default=1, ge=0, le=3, description="Rule 2: dice per level of the one trait used")
    tag_dice: int = Field(default=1, ge=0, le=3, description="Rule 2: dice per level of each relevant tag")
    base_dice: int = Field(default=1, ge=0, le=3, description="Rule 2: the base die every roll starts with")


class AdvancementRules(RulesModel):
    """Rule 9: advancement costs and what a level is worth."""

    tag_base_cost: int = Field(default=1, ge=1, le=20, description="Rule 9: XP for tag level 1 (doubles per level)")
    trait_base_cost: int = Field(default=5, ge=1, le=50, description="Rule 9: XP for trait level 1 (doubles per level)")
    growth: int = Field(default=2, ge=1, le=4, description="Rule 9: cost multiplier per further level")
    level_adds_dice: bool = Field(
        default=True, description="Rule 9 [decision]: a level-L item gives L dice (false: one die whatever its level)"
    )


class FieldRules(RulesModel):
    """Rule 8: skills learnt in the field."""

    learn_tag: bool = Field(
        default=True, description="Rule 8: passing with no trait or tag dice earns the obstacle's tag"
    )


class PerkRules(RulesModel):
    """Rule 10: perks."""

    award: bool = Field(default=True, description="Rule 10: a perk-eligible roll earns a perk for that kind of roll")
    dice: int = Field(default=1, ge=0, le=3, description="Rule 10: dice a perk adds to similar rolls")
    max_per_kind: int = Field(default=1, ge=0, le=5, description="Rule 10 [decision]: perks one kind of roll can hold")


class ConditionRule(RulesModel):
    """Rule 7: one named condition."""

    difficulty: int = Field(default=1, ge=-3, le=5, description="Rule 7: difficulty change while the condition holds")
    forbids_tags: list[str] = Field(
        default_factory=list, max_length=MAX_LIST, description="Rule 7: tags unusable while it holds"
    )


class ContestRules(RulesModel):
    """Rule 11: contested rolls."""

    rolloff_on_tie: bool = Field(default=True, description="Rule 11: a tie is settled by 1d6 roll-offs")


class WoundRow(RulesModel):
    """Rule 16: one row of the damage table."""

    name: str
    margin: int = Field(ge=1, le=20, description="Rule 16: smallest margin giving this wound")
    hp_loss: int = Field(ge=0, le=20, description="Rule 16: hit points lost")
    penalty: int = Field(ge=0, le=6, description="Rule 16: successes lost on every roll while it is the worst")


def _wound_table() -> list[WoundRow]:
    return [
        WoundRow(name="light", margin=1, hp_loss=1, penalty=0),
        WoundRow(name="medium", margin=2, hp_loss=2, penalty=1),
        WoundRow(name="heavy", margin=3, hp_loss=4, penalty=2),
        WoundRow(name="critical", margin=4, hp_loss=6, penalty=3),
    ]


class PoolSettlement(enum.StrEnum):
    """Rule 18 [decision]: how Rule 5 settles the pool dice used in an attack."""

    EACH_SIDE = "each_side"  # each side passes or fails for itself: the attacker iff it hits, the defender iff not hit
    SPENT = "spent"  # an attack is no pass/fail roll: the pool dice used are lost either way, no failure bonus


class CombatRules(RulesModel):
    """Rules 13-18: the combat fork."""

    hit_points: int = Field(default=6, ge=1, le=20, description="Rule 15: hit points of every character")
    tie_misses: bool = Field(default=True, description="Rule 13: an attack hits only with MORE successes (no roll-off)")
    called_shot_defender_dice: int = Field(
        default=1, ge=0, le=3, description="Rule 13 [decision]: extra defender dice against a called shot"
    )
    called_shot_margin_bonus: int = Field(
        default=0,
        ge=0,
        le=3,
        description="Rule 13 [decision]: a called shot that hits lands this much harder (margin); the seed names "
        "only its cost, so 0 as written",
    )
    aim_dice: int = Field(default=1, ge=0, le=3, description="Rule 14: attack dice per turn spent aiming")
    aim_max: int = Field(default=3, ge=0, le=6, description="Rule 14 [decision]: most aim dice that can be stored")
    all_out_attack_dice: int = Field(
        default=1, ge=0, le=3, description="Rule 14: extra attack dice of an all-out attack"
    )
    all_out_attack_defense: int = Field(
        default=0, ge=0, le=3, description="Rule 14 [decision]: defence successes after an all-out attack (0: none)"
    )
    all_out_defense_dice: int = Field(
        default=1, ge=0, le=3, description="Rule 14: extra defence dice of all-out defence"
    )
    move_attack_base_die: bool = Field(default=False, description="Rule 14: move & attack keeps the base die")
    move_metres: int = Field(default=8, ge=1, le=30, description="Rule 14: how far a Move goes")
    move_attack_metres: int = Field(default=4, ge=0, le=30, description="Rule 14: how far a Move & attack goes")
    cover_dice: int = Field(default=1, ge=0, le=3, description="Rule 14: defence dice from cover (ranged fights only)")
    heavy_stuns: bool = Field(default=False, description="Rule 16 [decision]: a heavy wound also costs the next turn")
    wounds: list[WoundRow] = Field(
        default_factory=_wound_table, max_length=20, description="Rule 16: the damage table (margins 1..20)"
    )
    worst_wound_only: bool = Field(default=True, description="Rule 16: only the worst wound's penalty applies")
    consciousness_difficulty: int = Field(default=4, ge=1, le=10, description="Rule 17: difficulty to stay conscious")
    consciousness_pool_dice: bool = Field(
        default=True, description="Rule 17 [decision]: pool dice may be spent to stay up"
    )
    check_after_each_hit: bool = Field(
        default=True, description="Rule 17 [decision]: a new check after every hit taken while below zero"
    )
    death_at: int = Field(
        default=-4, ge=-20, le=0, description="Rule 17: hit points at or below which the character dies"
    )
    check_at_zero_hp: bool = Field(
        default=False,
        description="Rule 17 [decision, literal]: exactly 0 HP (a critical from full HP) is not below zero, no check; "
        "true: 0 HP counts as below zero",
    )
    pool_settlement: PoolSettlement = Field(
        default=PoolSettlement.EACH_SIDE,
        strict=False,  # read from its string value (the model is strict otherwise)
        description="Rule 18 [decision]: pool dice in an attack — each side passes/fails for itself, or are spent",
    )
    undefended_hit_is_failure: bool = Field(
        default=False,
        description="Rule 18 [decision]: a defender who could not defend (all-out attack) and is hit counts as "
        "failing a roll and gains the failure bonus (false: no roll, so Rule 5 does not apply)",
    )

    @model_validator(mode="after")
    def _sorted_table(self) -> CombatRules:
        margins = [w.margin for w in self.wounds]
        if not margins or margins != sorted(set(margins)) or margins[0] != 1:
            raise ValueError("combat.wounds must start at margin 1 and have strictly increasing margins")
        return self


class TraitSheet(RulesModel):
    """Rule 1: a trait, its level and its tags."""

    name: str
    level: int = Field(default=1, ge=1, le=MAX_LEVEL, description="Rule 9: the trait's level (L dice); ≤ 10 [decision]")
    tags: dict[str, TagLevel] = Field(
        default_factory=dict,
        max_length=CREATION_POINTS,
        description="tag name → level, 1..10 (Rule 9; the top is a [decision])",
    )


class CharacterSheet(RulesModel):
    """Rule 1: a character — 3 to 7 traits, 10 creation points (one tag each), up to 3 flags.

    Of the flags only one is required at the start: a positive relationship (``relationship`` names it).
    Every sheet in the config is checked: the session's character and the duel's fighters alike.
    """

    name: str
    traits: list[TraitSheet] = Field(min_length=MIN_TRAITS, max_length=MAX_TRAITS, description="Rule 1: 3 to 7 traits")
    flags: list[str] = Field(default_factory=list, max_length=MAX_FLAGS, description="Rule 1: up to 3 flags")
    relationship: str = Field(
        default="",
        description="Rule 1: the flag that is a positive relationship with another character (required, one of flags)",
    )

    @model_validator(mode="after")
    def _creation_rules(self) -> CharacterSheet:
        """Rule 1: exactly ten points (tags) spread over the traits, and the positive relationship flag."""
        points = sum(len(t.tags) for t in self.traits)
        if points != CREATION_POINTS:
            raise ValueError(f"{self.name} has {points} tags; Rule 1 spreads exactly {CREATION_POINTS} points")
        if not self.relationship or self.relationship not in self.flags:
            raise ValueError(
                f"{self.name} needs a positive relationship flag at the start (Rule 1): relationship = "
                f"'{self.relationship}' must name one of its flags {self.flags}"
            )
        return self


class ObstacleRow(RulesModel):
    """An obstacle of the session scenario (Rules 4, 7, 11, 12)."""

    name: str = Field(description="also the kind of roll a perk earned on it applies to")
    weight: float = Field(
        default=1.0,
        ge=1e-6,
        le=1e6,
        description="relative chance of drawing this obstacle; 1e-6..1e6 [decision] (finite, and no weight so "
        "small against the others that it could never be drawn)",
    )
    difficulty: int | None = Field(
        default=None, ge=1, le=20, description="Rule 4: successes needed (unset: difficulty.default)"
    )
    opposition: int = Field(
        default=0, ge=0, le=20, description="Rule 11: dice of an opposing NPC (0: fixed difficulty)"
    )
    stake: Literal["ordinary", "critical"] = "ordinary"
    traits: list[str] = Field(default_factory=list, max_length=MAX_LIST, description="traits that apply")
    tags: list[str] = Field(default_factory=list, max_length=MAX_LIST, description="tags that apply")
    flag: bool = Field(default=False, description="whether acting on a flag is possible")
    joint: bool = Field(
        default=False, description="Rule 12: the helper joins in (successes summed) instead of giving a die"
    )
    condition_on_failure: str = Field(default="", description="Rule 7: condition the character gets on failing")


def _sample_character() -> CharacterSheet:
    return CharacterSheet(
        name="Naomi Bishop",
        traits=[
            TraitSheet(name="Mercenary", tags={"fist-fighting": 1, "strongman": 1, "intimidate": 1}),
            TraitSheet(name="Zen monk", tags={"kung fu": 1, "meditation": 1, "agile": 1}),
            TraitSheet(name="Scoundrel", tags={"sneak": 1, "lie": 1, "cheat": 1, "locks": 1}),
        ],
        flags=["Loyal to Lady Blackbird"],
        relationship="Loyal to Lady Blackbird",
    )


def _sample_obstacles() -> list[ObstacleRow]:
    return [
        ObstacleRow(
            name="brawl",
            traits=["Mercenary", "Zen monk"],
            tags=["fist-fighting", "strongman", "kung fu"],
            condition_on_failure="wounded",
        ),
        ObstacleRow(name="locked door", difficulty=2, traits=["Scoundrel"], tags=["locks"]),
        ObstacleRow(
            name="sneak past the guard",
            opposition=3,
            traits=["Scoundrel", "Zen monk"],
            tags=["sneak", "agile"],
            condition_on_failure="pursued",
        ),
        ObstacleRow(name="talk our way out", difficulty=3, traits=["Scoundrel"], tags=["lie"], flag=True),
        ObstacleRow(name="repair the engine", tags=["mechanic"]),
        ObstacleRow(
            name="haul the cargo",
            difficulty=5,
            traits=["Mercenary"],
            tags=["strongman"],
            joint=True,
            condition_on_failure="tired",
        ),
        ObstacleRow(
            name="rescue the Lady",
            weight=0.75,
            difficulty=4,
            stake="critical",
            traits=["Mercenary", "Zen monk"],
            tags=["fist-fighting", "kung fu", "agile"],
            flag=True,
            condition_on_failure="wounded",
        ),
        ObstacleRow(
            name="escape the Hand",
            weight=0.75,
            difficulty=5,
            stake="critical",
            traits=["Scoundrel", "Zen monk"],
            tags=["sneak", "agile", "meditation"],
            flag=True,
            condition_on_failure="pursued",
        ),
    ]


def _conditions() -> dict[str, ConditionRule]:
    return {
        "wounded": ConditionRule(difficulty=1),
        "tired": ConditionRule(difficulty=1, forbids_tags=["strongman"]),
        "pursued": ConditionRule(difficulty=1),
        "lost": ConditionRule(difficulty=1),
        "trapped": ConditionRule(difficulty=1, forbids_tags=["agile"]),
    }


class SessionRules(RulesModel):
    """The session scenario: sessions, obstacles, the helper, XP, the character."""

    sessions: int = Field(default=3, ge=1, le=10, description="sessions played (the pool resets between them)")
    obstacles_per_session: int = Field(default=4, ge=1, le=20, description="obstacles drawn per session")
    retries: int = Field(default=1, ge=0, le=3, description="Rule 4: extra attempts after a failed roll")
    ordinary_value: float = Field(default=1.0, gt=0, le=10, description="reward for winning an ordinary stake")
    critical_value: float = Field(default=3.0, gt=0, le=10, description="reward for winning a critical stake")
    helper_pool: int = Field(
        default=3,
        ge=0,
        le=MAX_POOL,
        description="Rule 6: dice a fellow player can spare per session (0: no helper); ≤ 100 [decision]",
    )
    helper_joint_dice: int = Field(
        default=2, ge=0, le=12, description="Rule 12: the helper's own dice in a joint action"
    )
    xp_per_session: int = Field(default=3, ge=0, le=40, description="Rule 9: XP earned at the end of each session")
    character: CharacterSheet = Field(default_factory=_sample_character)

    obstacles: list[ObstacleRow] = Field(default_factory=_sample_obstacles, min_length=1, max_length=32)


def _fighters() -> list[CharacterSheet]:
    return [
        CharacterSheet(
            name="Kale the Mercenary",
            traits=[
                TraitSheet(name="Mercenary", tags={"fist-fighting": 1, "strongman": 1, "intimidate": 1, "tactics": 1}),
                TraitSheet(name="Survivor", tags={"tough": 1, "scavenge": 1, "first aid": 1}),
                TraitSheet(name="Gambler", tags={"bluff": 1, "cards": 1, "read people": 1}),
            ],
            flags=["Loyal to Cyrus"],
            relationship="Loyal to Cyrus",
        ),
        CharacterSheet(
            name="Snargle the Monk",
            traits=[
                TraitSheet(name="Zen monk", tags={"kung fu": 1, "agile": 1, "balance": 1, "breathing": 1}),
                TraitSheet(name="Ascetic", tags={"meditation": 1, "fasting": 1, "calligraphy": 1}),
                TraitSheet(name="Scholar", tags={"lore": 1, "languages": 1, "herbs": 1}),
            ],
            flags=["Sworn to protect Naomi", "Seeks enlightenment"],
            relationship="Sworn to protect Naomi",
        ),
    ]


class RollUse(RulesModel):
    """Rule 2: what helps one kind of roll in the duel (traits, tags, a flag)."""

    traits: list[str] = Field(default_factory=list, max_length=MAX_LIST)
    tags: list[str] = Field(default_factory=list, max_length=MAX_LIST)
    flag: bool = False


class DuelRules(RulesModel):
    """The duel scenario: distance, reach, the fighters and what helps their rolls."""

    max_turns: int = Field(default=40, ge=2, le=200, description="turn limit (0 reward to both when reached)")
    start_distance: int = Field(default=4, ge=0, le=50, description="metres between the fighters at the start")
    reach: int = Field(default=1, ge=0, le=10, description="metres within which a melee attack lands")
    ranged: bool = Field(default=False, description="Rule 14: a ranged fight (cover is available)")
    fighters: list[CharacterSheet] = Field(default_factory=_fighters, min_length=2, max_length=2)
    attack: RollUse = Field(
        default_factory=lambda: RollUse(
            traits=["Mercenary", "Zen monk"], tags=["fist-fighting", "kung fu", "strongman"], flag=True
        )
    )
    defense: RollUse = Field(
        default_factory=lambda: RollUse(traits=["Zen monk", "Mercenary"], tags=["agile", "kung fu", "fist-fighting"])
    )
    stay_up: RollUse = Field(
        default_factory=lambda: RollUse(traits=["Survivor", "Ascetic"], tags=["tough", "meditation"], flag=True)
    )


class BlackbirdConfig(RulesModel):
    """The whole Blackbird Pie rules config (``rules.toml``)."""

    dice: DiceRules = DiceRules()
    difficulty: DifficultyRules = DifficultyRules()
    pool: PoolRules = PoolRules()
    help: HelpRules = HelpRules()
    character: CharacterRules = CharacterRules()
    advancement: AdvancementRules = AdvancementRules()
    field: FieldRules = FieldRules()
    perk: PerkRules = PerkRules()
    conditions: dict[str, ConditionRule] = Field(default_factory=_conditions, max_length=MAX_LIST)
    contest: ContestRules = ContestRules()
    combat: CombatRules = CombatRules()
    session: SessionRules = SessionRules()
    duel: DuelRules = DuelRules()

    @field_validator("session")
    @classmethod
    def _known_conditions(cls, session: SessionRules, info: ValidationInfo) -> SessionRules:
        """Rule 7: an obstacle can only inflict a condition of the conditions table."""
        known = info.data.get("conditions", {})
        for ob in session.obstacles:
            if ob.condition_on_failure and ob.condition_on_failure not in known:
                raise ValueError(
                    f"obstacle '{ob.name}' inflicts unknown condition '{ob.condition_on_failure}'; "
                    f"known: {', '.join(known)}"
                )
        return session

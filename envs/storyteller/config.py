"""The typed rules config of the Storyteller d10 system (docs/rules/storyteller.md).

Every [decision] of the rules reference is a named key here; each field's description cites its rule.
``rules.toml`` holds the rules as written; variants override any subset of keys.

Bounds: a number the rules fix or limit keeps the rules' own range (cited in its description); where the
rules name no limit, its range is a generous [decision] that keeps play finite (any config inside the
ranges loads and plays: tests/envs/test_config_fuzz.py). The models are strict (envs/core/config.py).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from envs.core.config import RulesModel

TRAITS: tuple[str, ...] = (
    # Attributes (Rule 1)
    "strength",
    "dexterity",
    "stamina",
    "charisma",
    "manipulation",
    "appearance",
    "perception",
    "intelligence",
    "wits",
    # Abilities used by the seed's examples (Rule 1)
    "athletics",
    "brawl",
    "computer",
    "drive",
    "etiquette",
    "firearms",
    "investigation",
    "streetwise",
    "technology",
    "dodge",
    "politics",
    "occultism",
    "subterfuge",
    "performance",
    "security",
    "stealth",
    "alertness",
    "expression",
    "medicine",
)


MAX_RATING = 10
"""Rule 1: an Attribute or Ability rating runs 0..10 (the book's dots; 10 is its top)."""
Rating = Annotated[int, Field(ge=0, le=MAX_RATING)]
"""Rule 1: one Attribute or Ability rating (dice it adds to a pool)."""
MAX_ACTIONS = MAX_RATING
"""Rule 9: the most actions any character can declare in a turn: an Attribute + Ability pool of at most
2 x MAX_RATING = 20 dice fills 10 actions (the 10th rolls 20 - 10 - 9 = 1 die), never 11."""
DUEL_ONE_EACH = 2
"""Rules 9 and 11: with one roll per task a duellist declares at most two actions (one attack, one defence)."""

TASK_KEYS: tuple[str, ...] = ("documents", "house", "drive", "autopsy", "virus", "tree", "phone", "director", "shoot")
"""Keys of the heist's task catalogue (``envs.storyteller.heist.CATALOGUE``), from the seed's example list."""


class DiceRules(RulesModel):
    """Rules 2-5: difficulties and the successes a simple action needs."""

    default_difficulty: int = Field(default=6, ge=2, le=10, description="Rule 2: difficulty when none is given")
    min_difficulty: int = Field(
        default=2, ge=2, le=10, description="Rule 2 [decision]: difficulties are clamped up to this"
    )
    max_difficulty: int = Field(
        default=10, ge=2, le=10, description="Rule 2 [decision]: difficulties are clamped down to this"
    )
    required_successes: int = Field(default=1, ge=1, le=5, description="Rule 5: net successes a simple action needs")

    @model_validator(mode="after")
    def _order(self) -> DiceRules:
        if self.min_difficulty > self.max_difficulty:
            raise ValueError("dice.min_difficulty must not exceed dice.max_difficulty")
        return self


class AutoSuccessRules(RulesModel):
    """Rule 7: automatic successes."""

    enabled: bool = Field(default=True, description="Rule 7: pool >= difficulty may take one success without rolling")


class WillpowerRules(RulesModel):
    """Rule 8: Willpower."""

    points: int = Field(default=3, ge=0, le=10, description="Rule 8: Willpower points per scene")
    successes: int = Field(default=1, ge=0, le=5, description="Rule 8: automatic successes one point buys")
    per_turn: int = Field(
        default=1, ge=0, le=1, description="Rule 8: points that may be spent per turn (once per turn)"
    )
    prevents_botch: bool = Field(default=True, description="Rule 8: a roll with Willpower spent cannot botch")
    declared: Literal["before_each_roll", "before_the_turn"] = Field(
        default="before_each_roll",
        description="Rule 8 [decision]: Willpower is declared before each roll, after seeing the turn's earlier "
        "rolls (before_each_roll), or for one of the turn's rolls before any is made (before_the_turn)",
    )


class MultipleActionRules(RulesModel):
    """Rule 9: multiple actions in one turn."""

    enabled: bool = Field(default=True, description="Rule 9: several actions may be declared in one turn")
    max_actions: int = Field(
        default=3,
        ge=1,
        le=MAX_ACTIONS,
        description="Rule 9: most actions a character may declare per turn [decision]; the rules set no maximum "
        "but the pool (each action's pool - N - (k - 1) must stay >= 1), so up to 10, the most a 20-die pool "
        "allows (10 = no cap); the duel declares at most duel.max_actions (two with one roll per task)",
    )


class RetryRules(RulesModel):
    """Rule 10: retrying a failed task."""

    enabled: bool = Field(default=True, description="Rule 10: a failed retryable task may be tried again")
    difficulty_step: int = Field(default=1, ge=0, le=3, description="Rule 10: difficulty rise per repeated attempt")
    restart_is_retry: bool = Field(
        default=True, description="Rule 10/11: restarting a reset extended action counts as a new attempt"
    )


class ExtendedRules(RulesModel):
    """Rule 11: extended actions."""

    reset_on: Literal["botch", "failure", "never"] = Field(
        default="botch", description="Rule 11 [decision]: which roll result wipes the accumulated successes"
    )
    abandon_on_reset: bool = Field(
        default=False, description="Rule 11 [decision]: the Storyteller ends the attempt instead of allowing a restart"
    )
    one_roll_per_task: bool = Field(default=True, description="Rule 11 [decision]: one roll per task per interval")


class ResistedRules(RulesModel):
    """Rule 12: resisted actions."""

    actor_wins_ties: bool = Field(
        default=False,
        description="Rule 12 [decision]: false = a tie is a failure / status quo; true = a tie is 1 success",
    )


class ContestRules(RulesModel):
    """Rule 13: extended and resisted contests."""

    simultaneous: Literal["higher_total", "draw"] = Field(
        default="higher_total",
        description="Rule 13 [decision]: both reach the total in one roll: higher total wins (equal: roll again)",
    )


class TeamworkRules(RulesModel):
    """Rule 14: teamwork."""

    enabled: bool = Field(default=True, description="Rule 14: helpers roll separately and add their successes")
    simple_tasks: Literal["add", "separate"] = Field(
        default="add",
        description="Rule 14 [decision]: on a simple task the successes of the turn's rolls add up (add), or each "
        "roll is judged alone, a failure ending the attempt (separate)",
    )


class SpecialtyRules(RulesModel):
    """Rule 15: specialties (from the book, not in the seed)."""

    enabled: bool = Field(
        default=False, description="Rule 15: a 10 on a specialty roll is rerolled for an extra success"
    )


class HeistRules(RulesModel):
    """The heist scenario's setup."""

    tasks: list[str] = Field(
        default=["documents", "house", "drive", "autopsy", "virus"],
        min_length=1,
        max_length=9,
        description="Heist: catalogue keys of the job's tasks (documents, house, drive, autopsy, virus, tree, "
        "phone, director, shoot)",
    )
    draw: int = Field(
        default=3, ge=0, le=3, description="Heist: draw this many tasks at random (0 = use tasks as listed)"
    )
    turns: int = Field(default=10, ge=1, le=30, description="Heist: turns until the guards arrive (time limit)")
    botch_costs_turns: int = Field(
        default=1, ge=0, le=5, description="Heist: a botch brings the guards this much sooner"
    )
    ally_pool: int = Field(default=3, ge=0, le=10, description="Heist: the ally's dice pool for teamwork (0 = no ally)")
    character: dict[str, Rating] = Field(
        default={
            "strength": 3,
            "dexterity": 3,
            "stamina": 3,
            "charisma": 2,
            "manipulation": 3,
            "appearance": 2,
            "perception": 3,
            "intelligence": 4,
            "wits": 3,
            "athletics": 2,
            "computer": 4,
            "drive": 3,
            "etiquette": 2,
            "firearms": 2,
            "investigation": 3,
            "streetwise": 3,
            "technology": 3,
        },
        description="Heist: the character's Attribute and Ability ratings (0..10; missing traits are 0)",
    )
    specialties: list[str] = Field(
        default=["computer"],
        max_length=len(TRAITS),
        description="Heist: abilities the character has a specialty in",
    )

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, v: list[str]) -> list[str]:
        bad = [t for t in v if t not in TASK_KEYS]
        if bad:
            raise ValueError(f"unknown task(s) {bad}; known: {', '.join(TASK_KEYS)}")
        if len(set(v)) != len(v):
            raise ValueError("heist.tasks must not repeat a task")
        return v

    @field_validator("character")
    @classmethod
    def _known_traits(cls, v: dict[str, int]) -> dict[str, int]:
        bad = [k for k in v if k not in TRAITS]
        if bad:
            raise ValueError(f"unknown trait(s) {bad}; known: {', '.join(TRAITS)}")
        return v

    @field_validator("specialties")
    @classmethod
    def _known_specialties(cls, v: list[str]) -> list[str]:
        bad = [k for k in v if k not in TRAITS]
        if bad:
            raise ValueError(f"unknown trait(s) {bad}; known: {', '.join(TRAITS)}")
        return v

    @model_validator(mode="after")
    def _sizes(self) -> HeistRules:
        if self.draw == 0 and len(self.tasks) > 3:
            raise ValueError("heist.tasks lists more than 3 tasks; set heist.draw (1..3) or list at most 3")
        if self.draw > len(self.tasks):
            raise ValueError("heist.draw exceeds the number of heist.tasks")
        return self


class Fighter(RulesModel):
    """A duellist: pools and difficulties of the main attack, the wild attack and the defence."""

    name: str = Field(..., min_length=1, max_length=20, description="Duel: the character's name")
    attack_pool: int = Field(..., ge=1, le=20, description="Duel: Attribute + Ability of the main approach")
    attack_difficulty: int = Field(..., ge=1, le=12, description="Duel: difficulty of the main approach")
    alt_attack_pool: int = Field(..., ge=1, le=20, description="Duel: pool of the alternative approach")
    alt_attack_difficulty: int = Field(..., ge=1, le=12, description="Duel: difficulty of the alternative approach")
    defence_pool: int = Field(..., ge=1, le=20, description="Duel: Attribute + Ability of the resisting roll")
    defence_difficulty: int = Field(..., ge=1, le=12, description="Duel: difficulty of the resisting roll")
    specialty: bool = Field(default=False, description="Duel: the main approach uses a specialty (Rule 15)")


class DuelRules(RulesModel):
    """The duel scenario's setup."""

    target: int = Field(
        default=6, ge=1, le=30, description="Duel: accumulated successes that win the contest (Rule 13)"
    )
    turns: int = Field(default=10, ge=1, le=30, description="Duel: turn limit; a draw (0) when it runs out")
    max_actions: int = Field(
        default=DUEL_ONE_EACH,
        ge=1,
        le=MAX_ACTIONS,
        description="Duel, Rule 9 [decision]: most actions a duellist declares per turn when "
        "extended.one_roll_per_task is false (up to 10, the most a 20-die pool allows; with one roll per task "
        "the duel keeps one attack and one defence, 2); never more than multiple_actions.max_actions (the smaller "
        "of the two applies; a value above 2 that exceeds it is an error)",
    )
    fighters: list[Fighter] = Field(
        default=[
            Fighter(
                name="Asha",
                attack_pool=6,
                attack_difficulty=6,
                alt_attack_pool=8,
                alt_attack_difficulty=8,
                defence_pool=6,
                defence_difficulty=6,
            ),
            Fighter(
                name="Bram",
                attack_pool=6,
                attack_difficulty=6,
                alt_attack_pool=8,
                alt_attack_difficulty=8,
                defence_pool=6,
                defence_difficulty=6,
            ),
        ],
        min_length=2,
        max_length=2,
        description="Duel: the two contestants",
    )


class StorytellerConfig(RulesModel):
    """The whole Storyteller rules config (``rules.toml``), one table per rule group."""

    dice: DiceRules = DiceRules()
    auto_success: AutoSuccessRules = AutoSuccessRules()
    willpower: WillpowerRules = WillpowerRules()
    multiple_actions: MultipleActionRules = MultipleActionRules()
    retry: RetryRules = RetryRules()
    extended: ExtendedRules = ExtendedRules()
    resisted: ResistedRules = ResistedRules()
    contest: ContestRules = ContestRules()
    teamwork: TeamworkRules = TeamworkRules()
    specialties: SpecialtyRules = SpecialtyRules()
    heist: HeistRules = HeistRules()
    duel: DuelRules = DuelRules()

    @model_validator(mode="after")
    def _duel_actions(self) -> StorytellerConfig:
        n, cap = self.duel.max_actions, self.multiple_actions.max_actions
        if n > DUEL_ONE_EACH and n > cap:  # 1..2 only narrow the duel (the rules as written allow two)
            raise ValueError(f"duel.max_actions = {n} exceeds multiple_actions.max_actions = {cap} (Rule 9)")
        return self

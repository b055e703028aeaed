"""The typed config of Crossroads. Every [decision] of docs/rules/crossroads.md is a named key.

Rule numbers in the descriptions refer to ``docs/rules/crossroads.md``.

Bounds: a number the rules fix or limit keeps the rules' own range (cited in its description); where the
rules name no limit, its range is a generous [decision] that keeps play finite (any config inside the
ranges loads and plays: tests/envs/test_config_fuzz.py). The models are strict (envs/core/config.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pydantic import Field, model_validator

from envs.core.config import RulesModel

MAX_CHARACTER_SLOTS = 10
MAX_FACTION_SLOTS = 8
MAX_SEATS = 5
"""The slot counts of the rules as written (action table and observation); a config asking for more gets more."""
MAX_PLAYERS = 12
"""Rules 7/8 name no table size: 12 seats is a generous [decision] (every seat builds, presents and frames)."""
MAX_CHARACTERS = 24
"""Rule 9 names no limit: 24 characters in play is a generous [decision] (two per seat at the largest table)."""
MAX_FACTIONS = 24
"""Rules 2/9 name no limit: 24 factions in play is a generous [decision] (two per seat at the largest table)."""


class CharacterRules(RulesModel):
    """Rules 1 and 6: how characters are built and how far their stats and conditions go."""

    creation_points: int = Field(default=12, ge=3, le=27, description="Rule 1: points spread over G, KH, M at creation")
    stat_min: int = Field(default=1, ge=1, le=9, description="Rule 1 [decision]: lowest stat allowed at creation")
    stat_max: int = Field(default=9, ge=1, le=9, description="Rule 1 [decision]: highest stat allowed at creation")
    stat_cap: int = Field(
        default=10, ge=1, le=10, description="Rule 6 [decision]: highest a stat can be raised in play"
    )
    max_conditions: int = Field(
        default=6, ge=1, le=9, description="Rule 1 [decision]: most +C (and most -C) one character or faction can hold"
    )

    @model_validator(mode="after")
    def _feasible(self) -> CharacterRules:
        if self.stat_min > self.stat_max:
            raise ValueError(f"stat_min {self.stat_min} exceeds stat_max {self.stat_max}")
        if not 3 * self.stat_min <= self.creation_points <= 3 * self.stat_max:
            raise ValueError(
                f"creation_points {self.creation_points} cannot be spread over three stats in "
                f"[{self.stat_min}, {self.stat_max}]"
            )
        return self


class FactionRules(RulesModel):
    """Rules 2, 4 and 12: a faction's Influence, its check and its write-offs."""

    start_influence: int = Field(default=4, ge=1, le=7, description="Rule 2: a new faction's Influence")
    per_player: int = Field(
        default=1, ge=0, le=2, description="Rule 2 [decision]: factions each player presents at setup"
    )
    check: Literal["influence", "none"] = Field(
        default="influence",
        description="Rule 4 [decision]: 'influence' = 3d10, each die <= Influence succeeds; 'none' = no faction roll",
    )
    check_bonus: int = Field(
        default=0, ge=-5, le=5, description="Rule 4 [decision]: added to Influence as the target number"
    )
    writeoff_low: int = Field(
        default=0, ge=0, le=3, description="Rule 12: Influence at or below this writes a faction off"
    )
    writeoff_high: int = Field(
        default=8, ge=5, le=12, description="Rule 12: Influence at or above this writes a faction off"
    )


class CheckRules(RulesModel):
    """Rule 3: how a stat check's dice are assigned."""

    assignment: Literal["one_each", "in_order"] = Field(
        default="one_each",
        description="Rule 3 [decision]: 'one_each' = the roller assigns one die per stat; "
        "'in_order' = dice go to G, KH, M as rolled (no choice)",
    )
    chance_detail: Literal["faces", "classes"] = Field(
        default="faces",
        description="Engine, not a rule: 'faces' = a check's chance outcomes are its dice faces (220 sorted rolls); "
        "'classes' = one outcome per class of rolls no rule tells apart (each die by the stats or Influence it "
        "meets; needs crossroads.effect = 'none', which reads no doubles): every rule's odds unchanged, far "
        "fewer branches for the exact solver; a rolled die shows its class's highest face",
    )


class CrossroadsRules(RulesModel):
    """Rule 5: what a crossroads (a double or triple) does."""

    effect: Literal["none", "extra_success", "lose_success", "gain_plus_c", "gain_minus_c", "goal_box_on_miss"] = Field(
        default="none",
        description="Rule 5 [decision]: what a crossroads (double/triple) does to the roller; 'goal_box_on_miss' "
        "marks the goal box of an unmarked stat whose matching die failed",
    )
    triple_twice: bool = Field(default=False, description="Rule 5 [decision]: a triple applies the effect twice")


class SpendRules(RulesModel):
    """Rule 6: what a success buys."""

    outcomes_per_success: int = Field(default=1, ge=1, le=3, description="Rule 6: spends bought by one success")
    double_step: Literal["same_sign", "opposite_sign", "off"] = Field(
        default="same_sign",
        description="Rules 6/11.7 [decision] the '+-2' option: 'same_sign' = +2 costs one of the character's +C and "
        "-2 costs one of its -C; 'opposite_sign' = +2 removes one of its -C, -2 removes one of its +C; 'off'",
    )


class DealRules(RulesModel):
    """Rule 10: the deal scene."""

    influence_gain: int = Field(default=1, ge=0, le=3, description="Rule 10: Influence the deal's faction gains")


class ConfrontationRules(RulesModel):
    """Rule 11: the confrontation scene."""

    burn_before_bonus: int = Field(
        default=1, ge=0, le=3, description="Rule 11.3: successes per +C burnt before the roll"
    )
    reroll_repeatable: bool = Field(
        default=True, description="Rule 11.3 [decision]: a side may burn +C to reroll more than once"
    )
    nobody_opposes: bool = Field(
        default=False,
        description="Rule 11.1 [decision]: the Admin may oppose the target with nobody (not in the seed's list); "
        "only the target then gets the beauty outcomes",
    )
    beauty_outcomes: int = Field(
        default=1, ge=0, le=3, description="Rule 11.2: outcomes each side gets in a scene for beauty (no counteraction)"
    )
    beauty_against_other: bool = Field(
        default=True,
        description="Rule 11.2 [decision]: a beauty outcome may be spent against the other side (Rule 11.7's list), "
        "not only on oneself",
    )
    tie_degree: int = Field(default=0, ge=0, le=2, description="Rule 11.5 [decision]: degree when nobody loses (a tie)")
    loser_trade: Literal["remove_winner_minus_c", "off"] = Field(
        default="remove_winner_minus_c",
        description="Rule 11.6 [decision]: losers cut the degree by 1 per -C they remove from a winner, or 'off'",
    )
    faction_gate: Literal["any_success", "never"] = Field(
        default="any_success",
        description="Rule 11.7 [decision]: when a faction counts as succeeding on a stat for goal-box gating",
    )
    free_scene_goal: bool = Field(
        default=True, description="Rule 11.7: winners get their scene goal without spending degree"
    )
    loser_mark: bool = Field(
        default=True, description="Rule 11.8: losers may burn a +C to mark a goal box they succeeded on"
    )


class AdvantageRules(RulesModel):
    """Rule 11.4: Advantage for a winning faction or common character."""

    enabled: bool = Field(
        default=True, description="Rule 11.4 [decision]: a faction/common character that wins earns Advantage"
    )
    bonus: int = Field(
        default=1, ge=0, le=3, description="Rule 11.4 [decision]: successes Advantage adds to its next roll"
    )


class WriteoffRules(RulesModel):
    """Rule 12: write-offs (exits)."""

    kill_outcome: bool = Field(
        default=True, description="Rule 12: an outcome may kill a character that is wounded and dying"
    )
    goal_check: bool = Field(default=True, description="Rule 12: achieving a goal grants a check that lowers Influence")
    minus_c_names: Literal["chosen", "automatic"] = Field(
        default="chosen",
        description='Rule 12 [decision]: \'chosen\' = the giver of a -C names it ("wounded", "dying" or another); '
        '\'automatic\' = a character\'s first -C is "wounded", its second "dying"',
    )


class SetupRules(RulesModel):
    """Rule 7: the setup."""

    first_player: Literal["seat0", "roll"] = Field(
        default="seat0", description="Rule 7 [decision]: who starts: seat 0, or a die roll among the seats"
    )


class EpisodeRules(RulesModel):
    """Rules 9 and 13: the table, the room for new entities and the end of the episode."""

    players: int = Field(
        default=3,
        ge=2,
        le=MAX_PLAYERS,
        description="Rules 7/8: seats at the table; 2..12 [decision] (the rules name no table size; the observation "
        "and the action table grow with the seats, characters and factions a config allows)",
    )
    exits_to_end: int = Field(default=3, ge=1, le=10, description="Rule 13: exits (write-offs) that end the episode")
    max_scenes: int = Field(
        default=40, ge=1, le=200, description="Rule 13 [decision]: scene limit (ends with time_limit)"
    )
    max_characters: int = Field(
        default=MAX_CHARACTER_SLOTS,
        ge=2,
        le=MAX_CHARACTERS,
        description="Rule 9 [decision]: most characters in play (2..24; the rules name no limit)",
    )
    max_factions: int = Field(
        default=MAX_FACTION_SLOTS,
        ge=1,
        le=MAX_FACTIONS,
        description="Rule 9 [decision]: most factions in play (1..24; the rules name no limit)",
    )

    @model_validator(mode="after")
    def _room(self) -> EpisodeRules:
        if self.max_characters < self.players:
            raise ValueError(f"max_characters {self.max_characters} is below players {self.players}")
        if self.max_factions < self.players:
            raise ValueError(f"max_factions {self.max_factions} is below players {self.players}")
        return self


class RewardRules(RulesModel):
    """The scenario's reward (docs/rules/crossroads.md, scenario ``episode``)."""

    goal: float = Field(default=1.0, ge=0.0, le=10.0, description="return for a personal character achieving its goal")
    written_off: float = Field(
        default=-1.0, ge=-10.0, le=0.0, description="return for a personal character written off"
    )
    faction_weight: float = Field(
        default=0.25,
        ge=0.0,
        le=1.0,
        description="weight of the faction term (Influence - start) / 4, clipped to [-1, 1]",
    )


class CrossroadsConfig(RulesModel):
    """The resolved Crossroads rules: every section of ``rules.toml``."""

    character: CharacterRules = CharacterRules()
    faction: FactionRules = FactionRules()
    check: CheckRules = CheckRules()
    crossroads: CrossroadsRules = CrossroadsRules()
    spend: SpendRules = SpendRules()
    deal: DealRules = DealRules()
    confrontation: ConfrontationRules = ConfrontationRules()
    advantage: AdvantageRules = AdvantageRules()
    writeoffs: WriteoffRules = WriteoffRules()
    setup: SetupRules = SetupRules()
    episode: EpisodeRules = EpisodeRules()
    reward: RewardRules = RewardRules()

    @model_validator(mode="after")
    def _classes_need_no_crossroads_effect(self) -> CrossroadsConfig:
        if self.check.chance_detail == "classes" and self.crossroads.effect != "none":
            raise ValueError(
                f"check.chance_detail 'classes' needs crossroads.effect 'none' (the effect "
                f"'{self.crossroads.effect}' reads doubles and triples, which classes do not keep)"
            )
        return self

    @model_validator(mode="after")
    def _faction_room(self) -> CrossroadsConfig:
        need = self.faction.per_player * self.episode.players
        if need > self.episode.max_factions:
            raise ValueError(
                f"faction.per_player x episode.players = {need} exceeds "
                f"episode.max_factions {self.episode.max_factions}"
            )
        return self


@dataclass(frozen=True, slots=True)
class Settings:
    """The resolved rules as plain attributes: what the engine reads on its hot paths (see :func:`settings_of`).

    Pydantic attribute chains cost several times a plain slot read, and a string compared per decision
    is a flag here; every value is the config's own (rule numbers as in :class:`CrossroadsConfig`).
    """

    players: int
    creation_points: int
    stat_min: int
    stat_max: int
    stat_cap: int
    max_conditions: int
    start_influence: int
    factions_per_player: int
    faction_rolls: bool  # Rule 4: faction.check != "none"
    faction_bonus: int
    writeoff_low: int
    writeoff_high: int
    one_each: bool  # Rule 3: check.assignment == "one_each"
    dice_classes: bool  # check.chance_detail == "classes"
    crossroads_effect: str
    triple_twice: bool
    outcomes_per_success: int
    double_step: str
    deal_gain: int
    burn_bonus: int
    reroll_repeatable: bool
    nobody_opposes: bool
    beauty_outcomes: int
    beauty_against_other: bool
    tie_degree: int
    loser_trade: bool  # Rule 11.6: confrontation.loser_trade != "off"
    faction_gate_any: bool  # Rule 11.7: confrontation.faction_gate == "any_success"
    free_scene_goal: bool
    loser_mark: bool
    advantage: bool
    advantage_bonus: int
    kill_outcome: bool
    goal_check: bool
    minus_c_automatic: bool  # Rule 12: writeoffs.minus_c_names == "automatic"
    exits_to_end: int
    max_scenes: int
    max_characters: int
    max_factions: int
    reward_goal: float
    reward_written_off: float
    faction_weight: float


@lru_cache(maxsize=64)
def settings_of(cfg: CrossroadsConfig) -> Settings:
    """The :class:`Settings` of a resolved config, built once per config."""
    ch, fa, co, ep = cfg.character, cfg.faction, cfg.confrontation, cfg.episode
    return Settings(
        players=ep.players,
        creation_points=ch.creation_points,
        stat_min=ch.stat_min,
        stat_max=ch.stat_max,
        stat_cap=ch.stat_cap,
        max_conditions=ch.max_conditions,
        start_influence=fa.start_influence,
        factions_per_player=fa.per_player,
        faction_rolls=fa.check != "none",
        faction_bonus=fa.check_bonus,
        writeoff_low=fa.writeoff_low,
        writeoff_high=fa.writeoff_high,
        one_each=cfg.check.assignment == "one_each",
        dice_classes=cfg.check.chance_detail == "classes",
        crossroads_effect=cfg.crossroads.effect,
        triple_twice=cfg.crossroads.triple_twice,
        outcomes_per_success=cfg.spend.outcomes_per_success,
        double_step=cfg.spend.double_step,
        deal_gain=cfg.deal.influence_gain,
        burn_bonus=co.burn_before_bonus,
        reroll_repeatable=co.reroll_repeatable,
        nobody_opposes=co.nobody_opposes,
        beauty_outcomes=co.beauty_outcomes,
        beauty_against_other=co.beauty_against_other,
        tie_degree=co.tie_degree,
        loser_trade=co.loser_trade != "off",
        faction_gate_any=co.faction_gate == "any_success",
        free_scene_goal=co.free_scene_goal,
        loser_mark=co.loser_mark,
        advantage=cfg.advantage.enabled,
        advantage_bonus=cfg.advantage.bonus,
        kill_outcome=cfg.writeoffs.kill_outcome,
        goal_check=cfg.writeoffs.goal_check,
        minus_c_automatic=cfg.writeoffs.minus_c_names == "automatic",
        exits_to_end=ep.exits_to_end,
        max_scenes=ep.max_scenes,
        max_characters=ep.max_characters,
        max_factions=ep.max_factions,
        reward_goal=cfg.reward.goal,
        reward_written_off=cfg.reward.written_off,
        faction_weight=cfg.reward.faction_weight,
    )

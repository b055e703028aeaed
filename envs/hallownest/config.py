"""The typed rules config of Hallownest (docs/rules/hallownest.md). Every [decision] is a named key.

Bounds: a number the rules fix or limit keeps the rules' own range (cited in its description); where the
rules name no limit, its range is a generous [decision] that keeps play finite (any config inside the
ranges loads and plays: tests/envs/test_config_fuzz.py). The models are strict (envs/core/config.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from envs.core.config import RULES_DIR_CONTEXT, RulesModel, read_data_table, resolve_data_path

HERE = Path(__file__).parent
DATA_DIR = HERE / "data"
"""The ruleset's data folder: a relative data path resolves inside it (or next to the rules file naming it)."""
Side = Literal["player", "ally", "enemy"]
MAX_POOL = 10
"""The most Stamina or Soul a bug can have under any config (the bound of the templates and overrides, Rule 6)."""
TIE_ORDER: tuple[Side, ...] = ("player", "ally", "enemy")


class DiceRules(RulesModel):
    """Rules 1, 4 and 5: successes, modifiers and caps (Rule 3's difficulties have no check in the duel)."""

    success_on: int = Field(default=5, ge=2, le=6, description="Rule 1: a d6 showing this or more is a success")
    modifiers_are_dice: bool = Field(
        default=True, description="Rule 4 [decision]: every +-N to a roll is +-N dice (false: +-N successes)"
    )
    max_characteristic: float = Field(
        default=7, ge=1, le=20, description="Rule 5: cap of characteristics and pools (not Heart)"
    )


class TemplateRow(RulesModel):
    """Rule 6: one size template of the templates data file (the starting values of a bug of that size)."""

    might: float = Field(ge=0, le=10, description="Rule 6: Might (x.5 allowed, Rule 2)")
    grace: float = Field(ge=0, le=10, description="Rule 6: Grace (x.5 allowed, Rule 2)")
    shell: float = Field(ge=0, le=10, description="Rule 6: Shell (x.5 allowed, Rule 2)")
    insight: float = Field(ge=0, le=10, description="Rule 6: Insight (x.5 allowed, Rule 2)")
    heart: int = Field(ge=1, le=30, description="Rule 6: Heart")
    stamina: int = Field(ge=1, le=MAX_POOL, description="Rule 6: Stamina")
    soul: int = Field(ge=0, le=MAX_POOL, description="Rule 6: Soul")
    speed: int = Field(ge=0, le=10, description="Rule 6: Speed (cells per turn)")


class WeaponRow(RulesModel):
    """Rule 8: one weapon of the weapons data file; bounds are [decision]s well above the book's table."""

    damage: int = Field(ge=0, le=20, description="Rule 8: base damage (the book: 1-4)")
    weight: int = Field(ge=0, le=5, description="Rule 8: weight, 0 = Light (the book: 0-2)")
    quality: int = Field(default=1, ge=0, le=5, description="Rule 8: Quality (the book: 1)")
    rerolls: int = Field(default=0, ge=0, le=6, description="Rule 8: failed dice rerolled on every roll with it")
    two_handed: bool = Field(default=False, description="Rule 8: two-handed (no shield)")
    ranged: bool = Field(default=False, description="Rule 11: the attack uses Grace")
    range: int = Field(default=1, ge=1, le=24, description="Rule 11: reach in cells")
    initiative_dice: int = Field(default=0, ge=0, le=10, description="Rule 9: extra Grace dice on initiative")
    next_roll_penalty: int = Field(default=0, ge=0, le=10, description="Rule 8: dice the target loses next roll")
    delayed_damage: int = Field(default=0, ge=0, le=20, description="Rule 17: delayed damage on a hit")
    delayed_type: str = Field(default="", max_length=32, description="Rule 17: its type (same type: no stacking)")
    status: str = Field(default="", max_length=32, description="Rule 18: status effect on a hit")
    status_pool: int = Field(default=0, ge=0, le=20, description="Rule 18: its pool")
    status_dice_penalty: int = Field(default=0, ge=0, le=10, description="Rule 18: dice it costs the target")
    source: str = Field(default="", max_length=200, description="where the row comes from (not a rule)")


class DataFiles(RulesModel):
    """Rules 6 and 8: the data files of size templates and weapons.

    A relative path resolves inside ``envs/hallownest/data`` (written ``data/<file>``) or else next to the
    rules file that names it; an absolute path must lie in one of those folders. Each file is at most 1 MB
    and every row is typed (:class:`TemplateRow`, :class:`WeaponRow`).
    """

    templates: str = Field(
        default="data/templates.toml",
        max_length=4096,
        description="Rule 6: size templates file (data/<file> in envs/hallownest, or next to the rules file)",
    )
    weapons: str = Field(
        default="data/weapons.toml",
        max_length=4096,
        description="Rule 8: weapon table file (data/<file> in envs/hallownest, or next to the rules file)",
    )

    @field_validator("templates", "weapons")
    @classmethod
    def _inside_data_folders(cls, value: str, info: ValidationInfo) -> str:
        rules_dir = (info.context or {}).get(RULES_DIR_CONTEXT)
        return resolve_data_path(f"data.{info.field_name}", value, HERE, DATA_DIR, rules_dir)


class BugSpec(RulesModel):
    """Rules 6-8, 12-14, 16: one duellist: template, weapon, side, armour, shield, appendages, overrides."""

    name: str = Field(default="Bug", min_length=1, max_length=24, description="name used in the narration")
    template: str = Field(default="medium", description="Rule 6: a size template of the templates file")
    weapon: str = Field(default="nail", description="Rule 8: a weapon of the weapons file")
    side: Side = Field(default="player", description="Rule 9: initiative tie order side")
    important: bool = Field(default=True, description="Rule 14: player bug / important NPC (chooses at Heart 0)")
    shield_quality: int = Field(default=0, ge=0, le=3, description="Rule 12: Quality of a shield (0 = no shield)")
    damage_reduction: int = Field(default=0, ge=0, le=5, description="Rule 13: damage reduction from armour")
    appendages: int = Field(default=0, ge=0, le=4, description="Rule 16: extra appendages used to grapple")
    might: float | None = Field(default=None, ge=0, le=10, description="override of the template (x.5 allowed)")
    grace: float | None = Field(default=None, ge=0, le=10, description="override of the template (x.5 allowed)")
    shell: float | None = Field(default=None, ge=0, le=10, description="override of the template (x.5 allowed)")
    insight: float | None = Field(default=None, ge=0, le=10, description="override of the template (x.5 allowed)")
    heart: int | None = Field(default=None, ge=1, le=30, description="override of the template")
    stamina: int | None = Field(default=None, ge=1, le=MAX_POOL, description="override of the template")
    soul: int | None = Field(default=None, ge=0, le=MAX_POOL, description="override of the template")
    speed: int | None = Field(default=None, ge=0, le=10, description="override of the template")


def _default_bugs() -> list[BugSpec]:
    return [
        BugSpec(name="Nailbug", template="medium", weapon="nail", side="player"),
        BugSpec(name="Greatbug", template="medium", weapon="great_nail", side="enemy"),
    ]


class DuelRules(RulesModel):
    """Rule 22: the duel scenario: its round limit and its two bugs."""

    max_rounds: int = Field(default=20, ge=1, le=60, description="Rule 22: rounds before the duel ends by time limit")
    bugs: list[BugSpec] = Field(
        default_factory=_default_bugs, min_length=2, max_length=2, description="the two duellists (seat 0, seat 1)"
    )


MAX_CELLS = 12 * 12
"""The most cells an arena has (width and height at most 12)."""
Coordinate = Annotated[int, Field(ge=0, le=12)]
"""A cell coordinate or a number of covered quarters (checked against the arena by the config)."""


class ArenaRules(RulesModel):
    """Rules 15 and 19: the arena (track or grid), start cells and cover."""

    kind: Literal["track", "grid"] = Field(default="track", description="Rule 15: 1-D track or square grid")
    width: int = Field(default=7, ge=3, le=12, description="cells along x (the track's length)")
    height: int = Field(default=5, ge=1, le=12, description="cells along y (grid only; a track has 1 row)")
    start: list[Annotated[list[Coordinate], Field(min_length=2, max_length=2)]] = Field(
        default_factory=lambda: [[1, 0], [5, 0]],
        min_length=2,
        max_length=2,
        description="start cells [x, y] of seat 0 and seat 1",
    )
    cover: list[Annotated[list[Coordinate], Field(min_length=3, max_length=3)]] = Field(
        default_factory=list,
        max_length=MAX_CELLS,
        description="Rule 19: cover cells [x, y, quarters 1-4] (grid or track)",
    )


class InitiativeRules(RulesModel):
    """Rule 9: initiative ties."""

    tie_order: list[Side] = Field(
        default_factory=lambda: list(TIE_ORDER),
        max_length=len(TIE_ORDER),
        description="Rule 9: who acts first on a tie",
    )


class StaminaRules(RulesModel):
    """Rules 10-11: the attack tax, the least investment and the turn-start refill."""

    tax_per_attack: int = Field(
        default=1, ge=0, le=3, description="Rule 11: extra cost of each further attack in a turn"
    )
    min_attack_investment: int = Field(default=1, ge=0, le=2, description="Rule 11: an attack invests at least this")
    refill_never_lowers: bool = Field(
        default=True,
        description="Rule 10 [decision]: the turn-start refill never lowers Stamina below its current value",
    )


class ImbalanceRules(RulesModel):
    """Rules 8 and 10: Imbalance: its cap, clearing, recovery and heavy weapons."""

    max: int = Field(default=3, ge=0, le=7, description="Rule 10: maximum Imbalance")
    clear_cost: int = Field(default=1, ge=0, le=3, description="Rule 10: Stamina spent to remove 1 Imbalance")
    heavy_weapon_gain: int = Field(
        default=1, ge=0, le=3, description="Rule 8: Imbalance per attack with a heavy weapon"
    )
    heavy_weight: int = Field(default=2, ge=1, le=5, description="Rule 8: weight from which a weapon is heavy")
    recovery_per_turn: int = Field(default=1, ge=0, le=3, description="Rule 10: Imbalance lost after the refill")


class DefenseRules(RulesModel):
    """Rule 12: what every defense costs and when it is chosen."""

    base_cost: int = Field(default=1, ge=0, le=3, description="Rule 12: Stamina a defense costs (not invested)")
    after_attack_roll: bool = Field(
        default=True, description="Rule 12 [decision, gap]: the defender chooses after seeing the attack's successes"
    )


class ParryRules(RulesModel):
    """Rule 12: parries with a weapon or a shield."""

    weapon_dice_per_stamina: int = Field(
        default=2, ge=1, le=4, description="Rule 12: dice per invested Stamina (weapon parry)"
    )
    weapon_invest_max_is_quality: bool = Field(
        default=True, description="Rule 12: weapon parry invests at most weapon Quality"
    )
    weapon_quality_adds_dice: bool = Field(
        default=False,
        description="Rule 12 [decision, gap]: a parrying weapon's Quality adds dice (only a shield's does)",
    )
    weapon_reroll_applies: bool = Field(
        default=True, description="Rule 8 [decision]: a weapon's reroll also applies to parries"
    )
    ranged_penalty: int = Field(default=1, ge=0, le=3, description="Rule 12: dice lost parrying a ranged attack")
    max_shield_investment: int = Field(
        default=6,
        ge=0,
        le=MAX_POOL,
        description="Rule 12: most Stamina invested in a shield parry [decision]; the rules set no maximum but "
        "the Stamina the bug has, so up to 10 (the most Stamina a bug can have: no cap)",
    )


class DodgeRules(RulesModel):
    """Rule 12: dodges and the dodge move."""

    light_weapon_weight: int = Field(
        default=1, ge=0, le=3, description="Rule 12 [decision]: a Light weapon's weight for dodge dice"
    )
    move_cells: int = Field(default=1, ge=0, le=2, description="Rule 12: cells a dodging bug may move")
    imbalance_gain: int = Field(default=1, ge=0, le=3, description="Rule 12: Imbalance from the dodge move")
    imbalance_only_if_moved: bool = Field(
        default=True, description="Rule 12 [decision]: the Imbalance comes with the dodge move, not with every dodge"
    )
    max_investment: int = Field(
        default=6,
        ge=0,
        le=MAX_POOL,
        description="Rule 12: most Stamina invested in a dodge [decision]; the rules set no maximum but the "
        "Stamina the bug has, so up to 10 (the most Stamina a bug can have: no cap)",
    )


class DamageRules(RulesModel):
    """Rule 13: extra damage, damage reduction and the Shell soak."""

    extra_cap: Literal["max_base_invested", "base", "invested", "none"] = Field(
        default="max_base_invested", description="Rule 13: cap of extra damage (as written: max(base damage, invested))"
    )
    min_after_reduction: int = Field(
        default=1, ge=0, le=2, description="Rule 13: damage reduction cannot go below this"
    )
    soak_floor: int = Field(
        default=0, ge=0, le=2, description="Rule 13 [decision, literal]: damage after the Shell soak never below this"
    )
    soak_enabled: bool = Field(default=True, description="Rule 13: the Shell soak check")


class DeathsDoorRules(RulesModel):
    """Rule 14: Death's Door at Heart 0."""

    enabled: bool = Field(default=True, description="Rule 14: Death's Door is an option at Heart 0")
    once_per_rest: bool = Field(
        default=True, description="Rule 14: Death's Door restores Stamina only the first time per Rest"
    )
    stamina_refills: bool = Field(default=False, description="Rule 14: Stamina refills at turn start at Death's Door")


class UnconsciousRules(RulesModel):
    """Rule 14: unconsciousness at Heart 0."""

    enabled: bool = Field(default=True, description="Rule 14: voluntary unconsciousness is an option at Heart 0")
    restores_stamina: bool = Field(default=True, description="Rule 14: unconsciousness restores all Stamina, always")
    can_defend: bool = Field(default=False, description="Rule 14: an unconscious bug may defend")
    targetable: bool = Field(
        default=True, description="Rule 14: an unconscious bug can still be attacked (only a lower-priority target)"
    )


class MovementRules(RulesModel):
    """Rule 15: retreat, dash / jump and provoked attacks."""

    retreat_cost: int = Field(default=1, ge=0, le=3, description="Rule 15: Stamina a retreat costs")
    retreat_cells: int = Field(default=2, ge=1, le=4, description="Rule 15: cells a retreat moves (costs Speed too)")
    retreat_imbalance: int = Field(default=1, ge=0, le=3, description="Rule 15: Imbalance from a retreat")
    dash_cost: int = Field(default=1, ge=0, le=3, description="Rule 15: Stamina a dash / jump costs")
    dash_cells: int = Field(default=2, ge=1, le=4, description="Rule 15: cells of a dash / jump (no Speed)")
    provoked_cost: int = Field(default=1, ge=0, le=3, description="Rule 15: non-invested Stamina of a provoked attack")
    provoked_attacks: bool = Field(default=True, description="Rule 15: moving past an enemy provokes an attack")


class GrappleRules(RulesModel):
    """Rule 16: grapples and escapes."""

    enabled: bool = Field(default=True, description="Rule 16: the grapple action is available")
    unarmed_quality: int = Field(default=1, ge=0, le=3, description="Rule 16: Quality used by a grapple")
    max_appendage_bonus: int = Field(default=2, ge=0, le=4, description="Rule 16: most bonus dice from appendages")
    penalty: int = Field(default=1, ge=0, le=3, description="Rule 16: dice a grappled bug loses on attack and defense")
    escape_cost: int = Field(default=1, ge=0, le=3, description="Rule 16: Stamina of an escape attempt")
    max_investment: int = Field(
        default=3,
        ge=1,
        le=MAX_POOL,
        description="Rule 16: most Stamina invested in a grapple [decision]; a grapple is an attack, so the rules "
        "set no maximum but the Stamina the bug has: up to 10 (the most Stamina a bug can have: no cap)",
    )
    max_escape_investment: int = Field(
        default=3,
        ge=0,
        le=MAX_POOL,
        description="Rule 16: most Stamina invested in an escape beyond its cost [decision]; the rules set no "
        "maximum but the Stamina the bug has ('invest more Stamina, as in an attack'): up to 10 (no cap)",
    )
    max_resist_investment: int = Field(
        default=3,
        ge=0,
        le=MAX_POOL,
        description="Rule 16: most Stamina the grappler invests resisting an escape [decision]; the rules set no "
        "maximum but the Stamina the bug has: up to 10 (no cap)",
    )
    blocks_dodge: bool = Field(
        default=False, description="Rule 16 [decision]: a grappled bug counts as immobilised and cannot dodge"
    )


class DelayedRules(RulesModel):
    """Rule 17: delayed damage."""

    removal_cost: int = Field(
        default=1, ge=1, le=3, description="Rule 17: Stamina that removes 1 point of delayed damage"
    )


class StatusRules(RulesModel):
    """Rule 18: status effects."""

    max_pool: int = Field(default=10, ge=1, le=20, description="Rule 18: most points in one status effect's pool")
    decay_per_turn: int = Field(default=1, ge=0, le=3, description="Rule 18: pool lost at the end of the target's turn")
    removal_cost: int = Field(default=1, ge=1, le=3, description="Rule 18: Stamina that removes 1 point of a pool")


class CoverRules(RulesModel):
    """Rule 19: cover."""

    dice_per_quarter: int = Field(default=1, ge=0, le=3, description="Rule 19: attack dice lost per covered quarter")


class FocusRules(RulesModel):
    """Rule 20: Soul focus."""

    enabled: bool = Field(default=True, description="Rule 20: Soul focus is available")
    auto_success_per: int = Field(
        default=3, ge=1, le=10, description="Rule 20 [decision]: 1 automatic success per this much Soul"
    )
    auto_dice_within_x: bool = Field(
        default=True, description="Rule 20 [decision, gap]: automatic dice are part of the X dice"
    )
    reroll_divisor: int = Field(default=2, ge=1, le=4, description="Rule 20: rerolls = floor(Insight / this)")


class PogoRules(RulesModel):
    """Rule 21: the pogo strike."""

    enabled: bool = Field(default=True, description="Rule 21: pogo strike after a jump")
    needs_pass_over: bool = Field(
        default=True,
        description="Rule 21 [decision]: a pogo needs a jump over the target's cell just before it "
        "(false: any dash / jump earlier in the turn)",
    )
    free_move: int = Field(
        default=2, ge=0, le=4, description="Rule 21: free cells after a pogo that hit or was parried"
    )
    miss_imbalance: int = Field(
        default=1, ge=0, le=3, description="Rule 21: Imbalance after a pogo that missed or was dodged"
    )
    max_investment: int = Field(
        default=3,
        ge=1,
        le=MAX_POOL,
        description="Rule 21: most Stamina invested in a pogo strike [decision]; it is a melee attack, so the rules "
        "set no maximum but the Stamina the bug has: up to 10 (the most Stamina a bug can have: no cap)",
    )


class HallownestConfig(RulesModel):
    """The whole rules config of Hallownest, one section per group of rules (rules.toml)."""

    dice: DiceRules = DiceRules()
    data: DataFiles = DataFiles()
    duel: DuelRules = DuelRules()
    arena: ArenaRules = ArenaRules()
    initiative: InitiativeRules = InitiativeRules()
    stamina: StaminaRules = StaminaRules()
    imbalance: ImbalanceRules = ImbalanceRules()
    defense: DefenseRules = DefenseRules()
    parry: ParryRules = ParryRules()
    dodge: DodgeRules = DodgeRules()
    damage: DamageRules = DamageRules()
    deaths_door: DeathsDoorRules = DeathsDoorRules()
    unconscious: UnconsciousRules = UnconsciousRules()
    movement: MovementRules = MovementRules()
    grapple: GrappleRules = GrappleRules()
    delayed: DelayedRules = DelayedRules()
    status: StatusRules = StatusRules()
    cover: CoverRules = CoverRules()
    focus: FocusRules = FocusRules()
    pogo: PogoRules = PogoRules()

    @model_validator(mode="after")
    def _check_references(self) -> HallownestConfig:
        templates = load_table(self.data.templates, "templates")
        weapons = load_table(self.data.weapons, "weapons")
        height = 1 if self.arena.kind == "track" else self.arena.height
        for i, bug in enumerate(self.duel.bugs):
            if bug.template not in templates:
                raise ValueError(f"duel.bugs[{i}].template '{bug.template}' unknown; valid: {', '.join(templates)}")
            if bug.weapon not in weapons:
                raise ValueError(f"duel.bugs[{i}].weapon '{bug.weapon}' unknown; valid: {', '.join(weapons)}")
            if bug.shield_quality and weapons[bug.weapon].get("two_handed", False):
                raise ValueError(f"duel.bugs[{i}]: a two-handed {bug.weapon} cannot be used with a shield")
        if len(self.arena.start) != 2 or any(len(c) != 2 for c in self.arena.start):
            raise ValueError("arena.start must be two cells [x, y]")
        cells = [tuple(c) for c in self.arena.start]
        if cells[0] == cells[1]:
            raise ValueError("arena.start: the two bugs need different cells")
        for x, y in cells:
            if not (0 <= x < self.arena.width and 0 <= y < height):
                raise ValueError(f"arena.start cell [{x}, {y}] is outside the {self.arena.width}x{height} arena")
        for c in self.arena.cover:
            if len(c) != 3 or not (0 <= c[0] < self.arena.width and 0 <= c[1] < height) or not 1 <= c[2] <= 4:
                raise ValueError(f"arena.cover entry {c} must be [x, y, quarters 1-4] inside the arena")
        return self


@dataclass(frozen=True, slots=True)
class DuelSettings:
    """The scalar rules the duel reads on every step, resolved once from the config into plain attributes.

    Each field is ``<section>_<key>`` of :class:`HallownestConfig` (``stamina_tax_per_attack`` is
    ``stamina.tax_per_attack``); the typed config stays the one source and the docs of every key.
    """

    dice_success_on: int
    dice_modifiers_are_dice: bool
    duel_max_rounds: int
    stamina_tax_per_attack: int
    stamina_min_attack_investment: int
    stamina_refill_never_lowers: bool
    imbalance_max: int
    imbalance_clear_cost: int
    imbalance_heavy_weapon_gain: int
    imbalance_heavy_weight: int
    imbalance_recovery_per_turn: int
    defense_base_cost: int
    defense_after_attack_roll: bool
    parry_weapon_dice_per_stamina: int
    parry_weapon_invest_max_is_quality: bool
    parry_weapon_quality_adds_dice: bool
    parry_weapon_reroll_applies: bool
    parry_ranged_penalty: int
    parry_max_shield_investment: int
    dodge_light_weapon_weight: int
    dodge_move_cells: int
    dodge_imbalance_gain: int
    dodge_imbalance_only_if_moved: bool
    dodge_max_investment: int
    damage_extra_cap: str
    damage_min_after_reduction: int
    damage_soak_floor: int
    damage_soak_enabled: bool
    deaths_door_enabled: bool
    deaths_door_once_per_rest: bool
    deaths_door_stamina_refills: bool
    unconscious_enabled: bool
    unconscious_restores_stamina: bool
    unconscious_can_defend: bool
    unconscious_targetable: bool
    movement_retreat_cost: int
    movement_retreat_cells: int
    movement_retreat_imbalance: int
    movement_dash_cost: int
    movement_dash_cells: int
    movement_provoked_cost: int
    movement_provoked_attacks: bool
    grapple_enabled: bool
    grapple_unarmed_quality: int
    grapple_max_appendage_bonus: int
    grapple_penalty: int
    grapple_escape_cost: int
    grapple_blocks_dodge: bool
    grapple_max_investment: int
    grapple_max_escape_investment: int
    grapple_max_resist_investment: int
    delayed_removal_cost: int
    status_max_pool: int
    status_decay_per_turn: int
    status_removal_cost: int
    cover_dice_per_quarter: int
    focus_enabled: bool
    focus_auto_success_per: int
    focus_auto_dice_within_x: bool
    focus_reroll_divisor: int
    pogo_enabled: bool
    pogo_needs_pass_over: bool
    pogo_free_move: int
    pogo_miss_imbalance: int
    pogo_max_investment: int

    @classmethod
    def of(cls, cfg: HallownestConfig) -> DuelSettings:
        """The settings of a resolved config."""
        values = {}
        for name, (section, key) in _SETTING_KEYS.items():
            values[name] = getattr(getattr(cfg, section), key)
        return cls(**values)


def _setting_keys() -> dict[str, tuple[str, str]]:
    sections = sorted(HallownestConfig.model_fields, key=len, reverse=True)
    out: dict[str, tuple[str, str]] = {}
    for name in DuelSettings.__dataclass_fields__:
        section = next(s for s in sections if name.startswith(s + "_"))
        out[name] = (section, name[len(section) + 1 :])
    return out


_SETTING_KEYS = _setting_keys()


_ROW_MODELS: dict[str, type[RulesModel]] = {"templates": TemplateRow, "weapons": WeaponRow}
_KIND_OF: dict[str, str] = {}
"""The kind (templates / weapons) of each data path a validated config named."""


@lru_cache(maxsize=16)
def _load(path: str, kind: str) -> dict[str, dict[str, object]]:
    p = Path(path)
    return read_data_table(f"data.{kind}", p if p.is_absolute() else HERE / p, _ROW_MODELS[kind])


def load_table(path: str, kind: str | None = None) -> dict[str, dict[str, object]]:
    """A data table by its checked path (a value of ``data.templates`` / ``data.weapons``), its rows typed.

    ``kind`` is ``"templates"`` or ``"weapons"``; left out, it is the kind under which a validated config
    named the path. Rows come back as plain dicts of the keys the file sets (typed and bounded by
    :class:`TemplateRow` / :class:`WeaponRow`); every error is one line naming the key.
    """
    if kind is None:
        kind = _KIND_OF.get(path, "weapons")
    table = _load(path, kind)
    _KIND_OF[path] = kind
    return table

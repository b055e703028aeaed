"""Hallownest rule functions: one per numbered rule of docs/rules/hallownest.md.

Pure functions over numbers and small frozen records; the engine (``engine.py``) sequences them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from envs.hallownest.config import BugSpec, HallownestConfig, load_table

SIDE_NAMES = ("player", "ally", "enemy")


# -- data records ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Weapon:
    """Rule 8: one row of the weapon table."""

    key: str
    damage: int
    weight: int  # 0 = Light
    quality: int = 1
    rerolls: int = 0
    two_handed: bool = False
    ranged: bool = False
    range: int = 1
    initiative_dice: int = 0
    next_roll_penalty: int = 0
    delayed_damage: int = 0
    delayed_type: str = ""
    status: str = ""
    status_pool: int = 0
    status_dice_penalty: int = 0

    @property
    def light(self) -> bool:
        return self.weight == 0

    @property
    def label(self) -> str:
        return self.key.replace("_", " ")


@dataclass(frozen=True)
class Profile:
    """Rules 5-7: a duellist's fixed numbers (template, overrides, caps, weapon)."""

    name: str
    side: int  # index in initiative.tie_order
    important: bool
    might: float
    grace: float
    shell: float
    insight: float
    heart: int
    stamina: int
    soul: int
    speed: int
    weight: int
    weapon: Weapon
    shield_quality: int
    damage_reduction: int
    appendages: int


def load_weapon(cfg: HallownestConfig, key: str) -> Weapon:
    """Rule 8: a weapon from the weapons data file."""
    row = load_table(cfg.data.weapons)[key]
    fields = {k: v for k, v in row.items() if k in Weapon.__dataclass_fields__}
    return Weapon(key=key, **fields)  # type: ignore[arg-type]


def build_profile(cfg: HallownestConfig, spec: BugSpec) -> Profile:
    """Rules 5-6: template values, per-bug overrides, then the cap on characteristics and pools."""
    t = load_table(cfg.data.templates)[spec.template]
    cap = cfg.dice.max_characteristic

    def stat(name: str) -> float:
        v = getattr(spec, name)
        return cap_characteristic(float(t[name] if v is None else v), cap)  # type: ignore[arg-type]

    def pool(name: str) -> int:
        v = getattr(spec, name)
        return int(cap_characteristic(float(t[name] if v is None else v), cap))  # type: ignore[arg-type]

    heart = int(t["heart"] if spec.heart is None else spec.heart)  # type: ignore[call-overload]
    tie = list(cfg.initiative.tie_order)
    side = tie.index(spec.side) if spec.side in tie else len(tie)
    return Profile(
        name=spec.name,
        side=side,
        important=spec.important,
        might=stat("might"),
        grace=stat("grace"),
        shell=stat("shell"),
        insight=stat("insight"),
        heart=heart,
        stamina=pool("stamina"),
        soul=pool("soul"),
        speed=int(t["speed"] if spec.speed is None else spec.speed),  # type: ignore[call-overload]
        weight=int(t["weight"]),  # type: ignore[call-overload]
        weapon=load_weapon(cfg, spec.weapon),
        shield_quality=spec.shield_quality,
        damage_reduction=spec.damage_reduction,
        appendages=spec.appendages,
    )


# -- Rules 1-5: core dice -------------------------------------------------------------------------
def dice_of(characteristic: float) -> int:
    """Rule 2: an x.5 characteristic rolls its whole part in dice."""
    return int(math.floor(characteristic))


def rerolls_of(characteristic: float) -> int:
    """Rule 2: an x.5 characteristic gives 1 reroll of a failed die on every check using it."""
    return 1 if characteristic - math.floor(characteristic) >= 0.5 else 0


def successes_needed(difficulty: str) -> int:
    """Rule 3: normal 1, hard 2, Path of Pain 3 successes; trivial is 1 success counting 4+."""
    return {"trivial": 1, "normal": 1, "hard": 2, "path_of_pain": 3}[difficulty]


def apply_modifier(dice: int, modifier: int, as_dice: bool, floor: int = 0) -> tuple[int, int]:
    """Rule 4: a +-N to a roll changes the dice (or, by config, the successes after the roll).

    Returns ``(dice, success_modifier)``; dice never drop below ``floor``.
    """
    if as_dice:
        return max(floor, dice + modifier), 0
    return dice, modifier


def cap_characteristic(value: float, cap: float = 7) -> float:
    """Rule 5: characteristics and pools (Heart excepted) are capped."""
    return min(value, cap)


def maneuverability(grace: float) -> int:
    """Rule 7: Maneuverability = Grace / 2, rounded up."""
    return math.ceil(grace / 2)


# -- Rule 8: weapons ------------------------------------------------------------------------------
def heavy_weapon_imbalance(weapon: Weapon, heavy_weight: int, gain: int) -> int:
    """Rule 8: attacking with a weapon of weight >= heavy_weight gives the attacker Imbalance."""
    return gain if weapon.weight >= heavy_weight else 0


# -- Rule 9: initiative ---------------------------------------------------------------------------
def initiative_dice(grace: float, weapon: Weapon) -> tuple[int, int]:
    """Rule 9: initiative rolls Grace dice (plus the weapon's initiative dice); x.5 gives a reroll."""
    return dice_of(grace) + weapon.initiative_dice, rerolls_of(grace)


def initiative_order(totals: list[int], sides: list[int]) -> list[int]:
    """Rule 9: highest total first; ties go player, then ally, then enemy (then seat order)."""
    return sorted(range(len(totals)), key=lambda s: (-totals[s], sides[s], s))


# -- Rule 10: turn start ---------------------------------------------------------------------------
def turn_start_refill(
    stamina: int, max_stamina: int, imbalance: int, never_lowers: bool, recovery: int = 1
) -> tuple[int, int]:
    """Rule 10: Stamina refills to max - Imbalance (not below the current value [decision]), then Imbalance -1."""
    target = max(0, max_stamina - imbalance)
    new = max(stamina, target) if never_lowers else target
    return new, max(0, imbalance - recovery)


def add_imbalance(imbalance: int, gain: int, maximum: int) -> int:
    """Rule 10: Imbalance grows by ``gain`` up to its maximum."""
    return min(maximum, imbalance + gain)


# -- Rule 11: attack ------------------------------------------------------------------------------
def attack_cost(invested: int, attacks_made: int, tax_per_attack: int) -> int:
    """Rule 11: invested Stamina plus the tax: each earlier attack this turn adds ``tax_per_attack``."""
    return invested + attacks_made * tax_per_attack


def attack_dice(weapon: Weapon, might: float, grace: float, invested: int) -> tuple[int, int]:
    """Rule 11: Might (ranged: Grace) + weapon Quality + invested Stamina; rerolls from the weapon and x.5."""
    stat = grace if weapon.ranged else might
    return dice_of(stat) + weapon.quality + invested, weapon.rerolls + rerolls_of(stat)


# -- Rule 12: defense -----------------------------------------------------------------------------
def defense_cost(invested: int, base_cost: int) -> int:
    """Rule 12: a defense costs ``base_cost`` (not invested) plus the invested Stamina."""
    return base_cost + invested


def max_parry_investment(weapon: Weapon, shield_quality: int, cap_is_quality: bool, shield_cap: int) -> int:
    """Rule 12: a weapon parry invests at most the weapon's Quality; a shield parry is not capped so."""
    if shield_quality > 0:
        return shield_cap
    return weapon.quality if cap_is_quality else shield_cap


def parry_dice(
    might: float,
    weapon: Weapon,
    shield_quality: int,
    invested: int,
    dice_per_stamina: int,
    weapon_quality_adds: bool,
    reroll_applies: bool,
) -> tuple[int, int]:
    """Rule 12: Might + shield Quality + invested; with a weapon each invested Stamina gives 2 dice."""
    if shield_quality > 0:
        return dice_of(might) + shield_quality + invested, rerolls_of(might)
    dice = dice_of(might) + invested * dice_per_stamina + (weapon.quality if weapon_quality_adds else 0)
    return dice, rerolls_of(might) + (weapon.rerolls if reroll_applies else 0)


def dodge_weight(attacker_weapon: Weapon, light_weight: int) -> int:
    """Rule 12 [decision]: the attacker's weapon weight for dodge dice; a Light weapon counts as ``light_weight``."""
    return light_weight if attacker_weapon.light else attacker_weapon.weight


def dodge_dice(grace: float, invested: int, attacker_weight: int) -> tuple[int, int]:
    """Rule 12: Grace + invested Stamina x the attacker's weapon weight."""
    return dice_of(grace) + invested * attacker_weight, rerolls_of(grace)


# -- Rule 13: damage ------------------------------------------------------------------------------
def net_successes(attack: int, defense: int) -> int:
    """Rule 13 (and Rule 1's opposed checks): each defense success cancels one attack success."""
    return attack - defense


def extra_damage(net: int, base_damage: int, invested: int, cap_mode: str) -> int:
    """Rule 13: successes beyond the first add damage, up to max(base damage, invested Stamina)."""
    extra = max(0, net - 1)
    if cap_mode == "max_base_invested":
        return min(extra, max(base_damage, invested))
    if cap_mode == "base":
        return min(extra, base_damage)
    if cap_mode == "invested":
        return min(extra, invested)
    return extra


def potential_damage(net: int, base_damage: int, invested: int, cap_mode: str) -> int:
    """Rule 13: a hit (net >= 1) deals base damage plus capped extra damage; a miss deals nothing."""
    if net < 1:
        return 0
    return base_damage + extra_damage(net, base_damage, invested, cap_mode)


def reduce_damage(potential: int, reduction: int, minimum: int = 1) -> int:
    """Rule 13: damage reduction is subtracted before the soak but cannot bring damage below 1."""
    if potential <= 0 or reduction <= 0:
        return potential
    return max(minimum, potential - reduction)


def soak_damage(damage: int, soak_successes: int, floor: int = 0) -> int:
    """Rule 13: each Shell success soaks 1 damage; as written nothing stops it at 0."""
    return max(floor, damage - soak_successes) if damage > 0 else 0


# -- Rule 14: Heart 0 -----------------------------------------------------------------------------
def deaths_door_stamina(stamina: int, max_stamina: int, used_before: bool, once_per_rest: bool) -> int:
    """Rule 14: Death's Door restores all Stamina only the first time since the last Rest."""
    if used_before and once_per_rest:
        return stamina
    return max_stamina


def unconscious_stamina(stamina: int, max_stamina: int, restores: bool) -> int:
    """Rule 14: falling unconscious restores all Stamina, even after Death's Door."""
    return max_stamina if restores else stamina


def stamina_damage(stamina: int, damage: int) -> tuple[int, bool]:
    """Rule 14: at Death's Door or unconscious, damage hits Stamina; Stamina 0 is death."""
    new = max(0, stamina - damage)
    return new, new <= 0


# -- Rule 15: movement ----------------------------------------------------------------------------
def provokes(adjacent_cells_moved: int, maneuverability_value: int) -> bool:
    """Rule 15: moving through more enemy-adjacent cells than one's Maneuverability provokes an attack."""
    return adjacent_cells_moved > maneuverability_value


def chebyshev(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Rule 15: diagonal steps cost 1, so distance is the Chebyshev distance."""
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


# -- Rule 16: grapple -----------------------------------------------------------------------------
def grapple_dice(might: float, quality: int, invested: int, appendages: int, max_bonus: int) -> tuple[int, int]:
    """Rule 16: a grapple is a Might attack with bonus dice for extra appendages (at most 2)."""
    return dice_of(might) + quality + invested + min(appendages, max_bonus), rerolls_of(might)


def grapple_holds(net: int) -> bool:
    """Rule 16: a grapple with at least one success left after the defense grapples the target."""
    return net >= 1


def escape_dice(might: float, grace: float, invested: int) -> tuple[int, int]:
    """Rule 16: an escape uses Might or Grace (the better) plus invested Stamina."""
    stat = might if dice_of(might) >= dice_of(grace) else grace
    return dice_of(stat) + invested, rerolls_of(stat)


def resist_dice(might: float, invested: int, appendages: int, max_bonus: int) -> tuple[int, int]:
    """Rule 16: the grappler resists with Might plus its appendage bonus plus invested Stamina."""
    return dice_of(might) + min(appendages, max_bonus) + invested, rerolls_of(might)


# -- Rule 17: delayed damage ----------------------------------------------------------------------
def add_delayed(current: int, new: int) -> int:
    """Rule 17: delayed damage of one type does not stack: keep the higher value."""
    return max(current, new)


def delayed_tick(value: int) -> tuple[int, int]:
    """Rule 17: at turn start take natural damage equal to the value, then the value drops by 1."""
    return value, max(0, value - 1)


# -- Rule 18: status effects ----------------------------------------------------------------------
def add_status(pool: int, amount: int, maximum: int) -> int:
    """Rule 18: the same effect applied again adds to its pool, up to the maximum (10)."""
    return min(maximum, pool + amount)


def status_tick(pool: int, decay: int) -> int:
    """Rule 18: a status pool loses 1 at the end of each of the target's turns."""
    return max(0, pool - decay)


# -- Rule 19: cover -------------------------------------------------------------------------------
def can_be_targeted(quarters: int) -> bool:
    """Rule 19: a fully covered bug cannot be targeted directly."""
    return quarters < 4


def cover_penalty(dice: int, quarters: int, per_quarter: int) -> int:
    """Rule 19: -1 attack die per covered quarter, never down to 0 dice."""
    if quarters <= 0:
        return dice
    return max(min(dice, 1), dice - quarters * per_quarter)


# -- Rule 20: focus -------------------------------------------------------------------------------
def focus_dice(soul: int, auto_per: int, auto_within: bool) -> tuple[int, int]:
    """Rule 20: X Soul rolls X dice; 1 die per 3 Soul is an automatic success. Returns (rolled, automatic)."""
    auto = soul // auto_per
    rolled = soul - auto if auto_within else soul
    return rolled, auto


def focus_rerolls(insight: float, divisor: int) -> int:
    """Rule 20: rerolls on a focus check = Insight / 2, rounded down."""
    return int(math.floor(insight / divisor))


# -- Rule 21: pogo --------------------------------------------------------------------------------
def pogo_outcome(hit: bool, parried: bool) -> str:
    """Rule 21: a pogo that hits or is parried bounces (free move); one that misses or is dodged lands off balance."""
    return "bounce" if hit or parried else "land"

"""Hallownest rule functions: one per numbered rule of docs/rules/hallownest.md.

Pure functions over numbers and small frozen records; the duel (``duel.py``) sequences them.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable
from dataclasses import dataclass

from envs.hallownest.config import BugSpec, HallownestConfig, load_table

SIDE_NAMES = ("player", "ally", "enemy")
HALF = 0.5  # Rule 2: the ".5" of a characteristic written x.5
MELEE_REACH = 1  # Rule 11: a melee attack reaches the adjacent cells (diagonals count)
FULL_COVER = 4  # Rule 19: quarters of a fully covered bug
ADJACENT = 1  # Rule 15: the distance of an adjacent cell


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
    """Rules 5-8: a duellist's fixed numbers (template, overrides, caps, weapon)."""

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
    weapon: Weapon
    shield_quality: int
    damage_reduction: int
    appendages: int


class AttackKind(enum.IntEnum):
    """Rules 11, 15, 16 and 21: the kinds of attack a bug can make."""

    WEAPON = 0  # Rule 11
    GRAPPLE = 1  # Rule 16
    POGO = 2  # Rule 21
    PROVOKED = 3  # Rule 15

    @property
    def phrase(self) -> str:
        """The attack in the narration (``a pogo strike``)."""
        return _ATTACK_PHRASES[self]


_ATTACK_PHRASES = {
    AttackKind.WEAPON: "an attack",
    AttackKind.GRAPPLE: "a grapple",
    AttackKind.POGO: "a pogo strike",
    AttackKind.PROVOKED: "a provoked attack",
}


class Defense(enum.IntEnum):
    """Rule 12: how the target of an attack defends."""

    NONE = 0
    PARRY = 1
    DODGE = 2


def load_weapon(cfg: HallownestConfig, key: str) -> Weapon:
    """Rule 8: a weapon from the weapons data file."""
    row = load_table(cfg.data.weapons, "weapons")[key]
    fields = {k: v for k, v in row.items() if k in Weapon.__dataclass_fields__}
    return Weapon(key=key, **fields)  # type: ignore[arg-type]


def build_profile(cfg: HallownestConfig, spec: BugSpec) -> Profile:
    """Rules 5-6: template values, per-bug overrides, then the cap on characteristics and pools."""
    t = load_table(cfg.data.templates, "templates")[spec.template]
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
    return 1 if characteristic - math.floor(characteristic) >= HALF else 0


def apply_modifier(dice: int, modifier: int, as_dice: bool, floor: int = 0) -> tuple[int, int]:
    """Rule 4: a +-N to a roll changes the dice (or, by config, the successes after the roll).

    Returns ``(dice, success_modifier)``; dice never drop below ``floor``.
    """
    if as_dice:
        dice += modifier
        return (dice if dice > floor else floor), 0
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


def fang_penalty(current: int, weapon_penalty: int) -> int:
    """Rule 8: a Fang's hit costs the target dice on its next roll; a second hit does not add to it."""
    return max(current, weapon_penalty)


def roll_penalty(next_roll_penalty: int, status: int, status_penalty: int) -> int:
    """Rules 8 and 18: the dice a bug loses on a roll: a pending next-roll penalty, and a status while it lasts."""
    return next_roll_penalty + (status_penalty if status > 0 else 0)


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
    # comparisons in place of max(): the same ints without a builtin's call (this runs every turn)
    target = max_stamina - imbalance
    if target < 0:
        target = 0
    left = imbalance - recovery
    return (stamina if never_lowers and stamina > target else target), (left if left > 0 else 0)


def add_imbalance(imbalance: int, gain: int, maximum: int) -> int:
    """Rule 10: Imbalance grows by ``gain`` up to its maximum."""
    imbalance += gain
    return imbalance if imbalance < maximum else maximum


def recover_imbalance(imbalance: int, recovery: int) -> int:
    """Rule 10: after the refill (or in its place, at Death's Door) Imbalance drops by ``recovery``."""
    imbalance -= recovery
    return imbalance if imbalance > 0 else 0


# -- Rule 11: attack ------------------------------------------------------------------------------
def attack_cost(invested: int, attacks_made: int, tax_per_attack: int) -> int:
    """Rule 11: invested Stamina plus the tax: each earlier attack this turn adds ``tax_per_attack``."""
    return invested + attacks_made * tax_per_attack


def attack_budget(stamina: int, attacks_made: int, tax_per_attack: int) -> int:
    """Rule 11: the most Stamina an attack can invest now, after paying this turn's tax."""
    return max(0, stamina - attacks_made * tax_per_attack)


def attack_reach(weapon: Weapon) -> int:
    """Rule 11: melee weapons reach the adjacent cells (diagonals count); a thrown weapon reaches its range."""
    return weapon.range if weapon.ranged else MELEE_REACH


def can_target(dead: bool, cover_quarters: int, unconscious: bool, unconscious_targetable: bool) -> bool:
    """Rules 14 and 19: a living bug can be attacked unless in full cover or (by config) unconscious."""
    return not dead and can_be_targeted(cover_quarters) and (unconscious_targetable or not unconscious)


def attack_dice(weapon: Weapon, might: float, grace: float, invested: int) -> tuple[int, int]:
    """Rule 11: Might (ranged: Grace) + weapon Quality + invested Stamina; rerolls from the weapon and x.5."""
    stat = grace if weapon.ranged else might
    return dice_of(stat) + weapon.quality + invested, weapon.rerolls + rerolls_of(stat)


# -- Rule 12: defense -----------------------------------------------------------------------------
def defense_cost(invested: int, base_cost: int) -> int:
    """Rule 12: a defense costs ``base_cost`` (not invested) plus the invested Stamina."""
    return base_cost + invested


def can_defend(dead: bool, unconscious: bool, unconscious_can_defend: bool, stamina: int, base_cost: int) -> bool:
    """Rules 12 and 14: a defense needs its base Stamina cost, and an unconscious bug cannot defend."""
    if dead or (unconscious and not unconscious_can_defend):
        return False
    return stamina >= base_cost


def defense_offered(attack_successes: int, attack_rolled: bool) -> bool:
    """Rule 12 [decision]: deciding after the attack roll, there is nothing to defend against no success."""
    return not attack_rolled or attack_successes >= 1


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


def dodge_move_offered(dodged: bool, move_cells: int, can_act: bool, grappled: bool, room: bool) -> bool:
    """Rule 12: after a dodge a bug that can act, is not held and has a free cell beside it may move."""
    return dodged and move_cells > 0 and can_act and not grappled and room


# -- Rule 13: damage ------------------------------------------------------------------------------
def net_successes(attack: int, defense: int) -> int:
    """Rule 13 (and Rule 1's opposed checks): each defense success cancels one attack success."""
    return attack - defense


def is_hit(net: int) -> bool:
    """Rule 13: an attack hits with at least one net success."""
    return net >= 1


def was_parried(defense: Defense, attack_successes: int, hit: bool) -> bool:
    """Rules 12 and 21: a parry that cancelled every success of an attack that had some."""
    return defense == Defense.PARRY and attack_successes >= 1 and not hit


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
    if damage <= 0:
        return 0
    damage -= soak_successes
    return damage if damage > floor else floor


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
    new = stamina - damage
    if new < 0:
        new = 0
    return new, new <= 0


def spend_stamina(stamina: int, amount: int, at_deaths_door_or_unconscious: bool) -> tuple[int, bool]:
    """Rule 14: spending Stamina; at Death's Door or unconscious, spending the last of it is death."""
    new = stamina - amount
    if at_deaths_door_or_unconscious and new <= 0:
        return 0, True
    return new, False


def heart_damage(heart: int, damage: int) -> int:
    """Rules 13-14: damage comes off Heart, which stops at 0."""
    heart -= damage
    return heart if heart > 0 else 0


class HeartZero(enum.Enum):
    """Rule 14: what Heart 0 means for a bug."""

    DIES = "dies"
    CHOOSES = "chooses"  # Death's Door or unconscious


def heart_zero_fate(important: bool, deaths_door: bool, unconscious: bool) -> HeartZero:
    """Rule 14: an ordinary bug dies at Heart 0; an important one chooses, if any choice is allowed."""
    if important and (deaths_door or unconscious):
        return HeartZero.CHOOSES
    return HeartZero.DIES


def leaves_deaths_door(at_deaths_door: bool, heart: int) -> bool:
    """Rule 14 (our ruling): healing Heart above 0 takes a bug back from Death's Door."""
    return at_deaths_door and heart > 0


# -- Rule 15: movement ----------------------------------------------------------------------------
def provokes(adjacent_cells_moved: int, maneuverability_value: int) -> bool:
    """Rule 15: moving through more enemy-adjacent cells than one's Maneuverability provokes an attack."""
    return adjacent_cells_moved > maneuverability_value


def chebyshev(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Rule 15: diagonal steps cost 1, so distance is the Chebyshev distance."""
    dx, dy = a[0] - b[0], a[1] - b[1]
    if dx < 0:
        dx = -dx
    if dy < 0:
        dy = -dy
    return dx if dx > dy else dy


def adjacent_cells_entered(cells: Iterable[tuple[int, int]], foe: tuple[int, int]) -> int:
    """Rule 15: how many of the cells entered are adjacent to the foe (its own cell is not counted)."""
    return sum(1 for c in cells if c != foe and chebyshev(c, foe) == ADJACENT)


def passes_through(cells: Iterable[tuple[int, int]], foe: tuple[int, int]) -> bool:
    """Rule 15: a move whose path enters the foe's own cell (a dash / jump over it) passes through its space."""
    return foe in cells


def provoking_move(adjacent_cells_moved: int, maneuverability_value: int, through_foe: bool) -> bool:
    """Rule 15: passing through a hostile bug's space provokes it, as do more adjacent cells than Maneuverability."""
    return through_foe or adjacent_cells_moved > maneuverability_value  # provokes(), inlined: this runs every move


def provoked_attack_offered(
    provoking: bool, enabled: bool, foe_can_act: bool, foe_used: bool, foe_stamina: int, cost: int
) -> bool:
    """Rule 15: a provoked foe may attack (with any weapon) once per round, if it can act and has the Stamina."""
    return provoking and enabled and foe_can_act and not foe_used and foe_stamina >= cost


def provoked_attack_cost(invested: int, provoked_cost: int) -> int:
    """Rule 15: a provoked attack costs 1 Stamina not invested, plus the invested (no tax)."""
    return provoked_cost + invested


def dash_path(start: tuple[int, int], delta: tuple[int, int], cells: int) -> list[tuple[int, int]]:
    """Rule 15: a dash / jump moves exactly ``cells`` cells in a line; the last one is the landing."""
    return [(start[0] + delta[0] * i, start[1] + delta[1] * i) for i in range(1, cells + 1)]


def retreat_distance(max_cells: int, speed_left: int, open_cells: int) -> int:
    """Rule 15: a retreat moves up to ``max_cells``, each paid in Speed, and stops at the first blocked cell."""
    most = max_cells if max_cells < speed_left else speed_left
    if open_cells < most:
        most = open_cells
    return most if most > 0 else 0


# -- Rule 16: grapple -----------------------------------------------------------------------------
def grapple_dice(might: float, quality: int, invested: int, appendages: int, max_bonus: int) -> tuple[int, int]:
    """Rule 16: a grapple is a Might attack with bonus dice for extra appendages (at most 2)."""
    return dice_of(might) + quality + invested + min(appendages, max_bonus), rerolls_of(might)


def grapple_holds(net: int) -> bool:
    """Rule 16: a grapple with at least one success left after the defense grapples the target."""
    return net >= 1


def grapple_persists(grappler_can_act: bool, distance: int) -> bool:
    """Rule 16: a grapple ends when the two are no longer adjacent or the grappler cannot act."""
    return grappler_can_act and distance <= ADJACENT


def escape_dice(might: float, grace: float, invested: int) -> tuple[int, int]:
    """Rule 16: an escape uses Might or Grace (the better) plus invested Stamina."""
    stat = might if dice_of(might) >= dice_of(grace) else grace
    return dice_of(stat) + invested, rerolls_of(stat)


def resist_dice(might: float, invested: int, appendages: int, max_bonus: int) -> tuple[int, int]:
    """Rule 16: the grappler resists with Might plus its appendage bonus plus invested Stamina."""
    return dice_of(might) + min(appendages, max_bonus) + invested, rerolls_of(might)


def escape_succeeds(escape_successes: int, resist_successes: int) -> bool:
    """Rule 16: an escape needs at least one success more than the grappler's resistance."""
    return net_successes(escape_successes, resist_successes) >= 1


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
    return quarters < FULL_COVER


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


def focus_heal(heart: int, max_heart: int, successes: int, automatic: int) -> int:
    """Rule 20: each success of a Soul focus (automatic ones included) heals 1 Heart, up to the maximum."""
    return min(max_heart, heart + max(0, successes + automatic))


# -- Rule 21: pogo --------------------------------------------------------------------------------
def pogo_allowed(jumped: bool, over_target: bool, needs_pass_over: bool, weapon: Weapon) -> bool:
    """Rule 21: a pogo is a melee strike made moving over the target: right after a jump over its cell.

    With ``needs_pass_over`` off [decision], any dash / jump earlier in the turn is enough.
    """
    return not weapon.ranged and (over_target if needs_pass_over else jumped)


class Pogo(enum.Enum):
    """Rule 21: how a pogo strike ends."""

    BOUNCE = "bounce"  # hit or parried: a free move
    LAND = "land"  # missed or dodged: lands beside the target, off balance


def pogo_outcome(hit: bool, parried: bool) -> Pogo:
    """Rule 21: a pogo that hits or is parried bounces (free move); one that misses or is dodged lands off balance."""
    return Pogo.BOUNCE if hit or parried else Pogo.LAND


# -- Rule 22: the duel ----------------------------------------------------------------------------
def time_limit_reached(round_no: int, max_rounds: int) -> bool:
    """Rule 22: the duel ends without a winner once ``max_rounds`` rounds are over."""
    return round_no > max_rounds

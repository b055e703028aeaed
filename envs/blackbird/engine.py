"""Blackbird Pie rules: one function per numbered rule of ``docs/rules/blackbird.md``.

The two scenario states (:mod:`envs.blackbird.session`, :mod:`envs.blackbird.duel`) are built from
these functions; nothing here knows about agents or rewards.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from envs.blackbird.config import (
    MAX_POOL,
    MAX_TRAITS,
    AdvancementRules,
    BlackbirdConfig,
    CharacterSheet,
    CombatRules,
    ConditionRule,
    PoolRules,
    WoundRow,
)
from envs.blackbird.dice import Roll

# -- action tables -----------------------------------------------------------------------------------
SPEND_ACTIONS = MAX_POOL + 1
"""Action ids 0..MAX_POOL mean "spend k pool dice on this roll" in both scenarios."""


class SessionAct(enum.IntEnum):
    """Non-spending actions of the session (ids after the spend range)."""

    TRAIT_0 = SPEND_ACTIONS  # TRAIT_0 + i: build the pool on trait i (Rule 2)
    NO_TRAIT = SPEND_ACTIONS + MAX_TRAITS  # roll without a trait (base die, flag, perks, pool only)
    ACCEPT_HELP = NO_TRAIT + 1  # Rule 6
    DECLINE_HELP = NO_TRAIT + 2
    RETRY = NO_TRAIT + 3  # Rule 4: try again after a failure
    GIVE_UP = NO_TRAIT + 4


SESSION_ACTIONS = int(SessionAct.GIVE_UP) + 1


class Maneuver(enum.IntEnum):
    """Rule 13/14: the maneuvers of a combat turn (ids after the spend range)."""

    ATTACK = SPEND_ACTIONS
    CALLED_SHOT = SPEND_ACTIONS + 1
    AIM = SPEND_ACTIONS + 2
    ALL_OUT_ATTACK = SPEND_ACTIONS + 3
    ALL_OUT_DEFENSE = SPEND_ACTIONS + 4
    MOVE_ATTACK = SPEND_ACTIONS + 5
    MOVE = SPEND_ACTIONS + 6
    READY = SPEND_ACTIONS + 7
    COVER = SPEND_ACTIONS + 8


DUEL_ACTIONS = int(Maneuver.COVER) + 1
ATTACKS = frozenset({Maneuver.ATTACK, Maneuver.CALLED_SHOT, Maneuver.ALL_OUT_ATTACK, Maneuver.MOVE_ATTACK})


# -- characters (Rule 1) ----------------------------------------------------------------------------
@dataclass
class Character:
    """A character sheet in play: traits with levels, their tags with levels, flags, perks, XP."""

    name: str
    traits: list[str]
    trait_levels: list[int]
    tags: list[dict[str, int]]  # per trait: tag name -> level
    flags: tuple[str, ...]
    perks: dict[str, int] = field(default_factory=dict)  # kind of roll -> perks held
    xp: int = 0

    def copy(self) -> Character:
        return Character(self.name, list(self.traits), list(self.trait_levels), [dict(t) for t in self.tags],
                         self.flags, dict(self.perks), self.xp)

    def key(self) -> tuple[object, ...]:
        return (tuple(self.trait_levels), tuple(tuple(sorted(t.items())) for t in self.tags),
                tuple(sorted(self.perks.items())), self.xp)

    @property
    def short(self) -> str:
        return self.name.split()[0]


def create_character(sheet: CharacterSheet) -> Character:
    """Rule 1: a character from its sheet — traits, a tag per creation point, flags (limits checked by config)."""
    return Character(sheet.name, [t.name for t in sheet.traits], [t.level for t in sheet.traits],
                     [dict(t.tags) for t in sheet.traits], tuple(sheet.flags))


# -- Rule 2: building the pool ------------------------------------------------------------------------
@dataclass(frozen=True)
class Pool:
    """Rule 2: where the dice of one roll come from."""

    base: int = 0
    trait: int = 0
    tags: int = 0
    flag: int = 0
    perks: int = 0
    pool: int = 0
    help: int = 0
    maneuver: int = 0

    @property
    def total(self) -> int:
        return self.base + self.trait + self.tags + self.flag + self.perks + self.pool + self.help + self.maneuver

    def describe(self) -> str:
        parts = [f"{v} {k}" for k, v in (("base", self.base), ("trait", self.trait), ("tag", self.tags),
                                         ("flag", self.flag), ("perk", self.perks), ("pool", self.pool),
                                         ("help", self.help), ("maneuver", self.maneuver)) if v]
        return " + ".join(parts) or "0"


def item_dice(level: int, per_level: int, adv: AdvancementRules) -> int:
    """Rule 9 [decision]: a level-L trait or tag gives L dice (``advancement.level_adds_dice``), else one."""
    return per_level * (level if adv.level_adds_dice else 1)


def trait_applies(char: Character, i: int, traits: Iterable[str], tags: Iterable[str]) -> bool:
    """Rule 2: a trait is relevant if it is named for the roll or carries a tag that is."""
    tag_set = set(tags)
    return char.traits[i] in set(traits) or any(t in tag_set for t in char.tags[i])


def build_pool(cfg: BlackbirdConfig, char: Character, trait: int | None, traits: Sequence[str],
               tags: Sequence[str], on_flag: bool, kind: str, forbidden: Iterable[str] = (),
               pool_dice: int = 0, help_dice: int = 0, maneuver_dice: int = 0, base_die: bool = True) -> Pool:
    """Rule 2: 1 base die + the ONE trait used + its relevant tags + 1 for a flag + perks + pool + help + maneuvers.

    Only the tags of the chosen trait count (clarification No. 1); forbidden tags (Rule 7) do not.
    """
    ch = cfg.character
    trait_d = tag_d = 0
    if trait is not None and trait_applies(char, trait, traits, tags):
        trait_d = item_dice(char.trait_levels[trait], ch.trait_dice, cfg.advancement)
        wanted = set(tags) - set(forbidden)
        tag_d = sum(item_dice(lvl, ch.tag_dice, cfg.advancement) for t, lvl in char.tags[trait].items() if t in wanted)
    flag_d = ch.flag_dice if on_flag and char.flags else 0
    perk_d = cfg.perk.dice * char.perks.get(kind, 0)
    return Pool(ch.base_dice if base_die else 0, trait_d, tag_d, flag_d, perk_d, pool_dice, help_dice, maneuver_dice)


def best_trait(cfg: BlackbirdConfig, char: Character, traits: Sequence[str], tags: Sequence[str],
               forbidden: Iterable[str] = ()) -> int | None:
    """Rule 2: the trait giving the most dice for a roll (None if no trait applies); used where no one chooses."""
    best, best_d = None, 0
    for i in range(len(char.traits)):
        p = build_pool(cfg, char, i, traits, tags, False, "", forbidden)
        if p.trait + p.tags > best_d:
            best, best_d = i, p.trait + p.tags
    return best


# -- Rule 3/4: successes and passing -------------------------------------------------------------------
def net_successes(roll: Roll, penalty: int) -> int:
    """Rule 3: successes minus the current wound penalty, never below zero."""
    return max(0, roll.successes - penalty)


def effective_difficulty(cfg: BlackbirdConfig, base: int, conditions: Iterable[str]) -> int:
    """Rule 4/7: the obstacle's difficulty, raised by conditions, lowered by 1 when playing without pool dice."""
    d = base + condition_modifier(cfg.conditions, conditions)
    if not cfg.pool.enabled:
        d += cfg.difficulty.without_pool_modifier
    return max(1, d)


def passes(successes: int, difficulty: int) -> bool:
    """Rule 4: a roll passes when its successes reach the difficulty."""
    return successes >= difficulty


# -- Rule 5: the personal pool ------------------------------------------------------------------------
def settle_pool(pool: int, spent: int, passed: bool, rules: PoolRules) -> int:
    """Rule 5: pass → the spent pool dice are lost; fail → keep them and gain the failure bonus (up to the cap)."""
    if passed:
        return pool - spent if rules.lost_on_pass else pool
    bonus = rules.failure_bonus + (rules.zero_spend_failure_bonus if spent == 0 else 0)
    return max(pool, min(rules.cap, pool + bonus))


def reset_pool_at_session_end(rules: PoolRules) -> int:
    """Rule 5: at the end of each session the pool returns to ``pool.session_reset`` (up or down)."""
    return min(rules.session_reset, rules.cap)


def starting_pool(rules: PoolRules) -> int:
    """Rule 5: every player starts with ``pool.start`` dice (never above the cap); none without the pool rule."""
    return min(rules.start, rules.cap) if rules.enabled else 0


# -- Rule 6: help ----------------------------------------------------------------------------------
def settle_help(helper_pool: int, given: int, passed: bool, returned_on_failure: bool) -> int:
    """Rule 6: the helper's die is lost if the roll passes and comes back if it fails."""
    if passed or not returned_on_failure:
        return helper_pool - given
    return helper_pool


# -- Rule 7: conditions ------------------------------------------------------------------------------
def condition_modifier(table: dict[str, ConditionRule], conditions: Iterable[str]) -> int:
    """Rule 7: the summed difficulty modifiers of the conditions a character has."""
    return sum(table[c].difficulty for c in conditions if c in table)


def forbidden_tags(table: dict[str, ConditionRule], conditions: Iterable[str]) -> set[str]:
    """Rule 7: tags a character's conditions forbid."""
    out: set[str] = set()
    for c in conditions:
        if c in table:
            out.update(table[c].forbids_tags)
    return out


# -- Rule 8: skill from the field ----------------------------------------------------------------------
def learn_from_field(char: Character, pool: Pool, passed: bool, traits: Sequence[str], tags: Sequence[str]) -> str:
    """Rule 8: a roll passed with no trait or tag dice earns one of the roll's tags (first not yet held).

    The new tag joins the first of the roll's traits the character has, else the first trait.
    Returns the tag learnt, or "" if none.
    """
    if not passed or pool.trait or pool.tags:
        return ""
    held = {t for tt in char.tags for t in tt}
    new = next((t for t in tags if t not in held), "")
    if not new:
        return ""
    home = next((i for i, name in enumerate(char.traits) if name in set(traits)), 0)
    char.tags[home][new] = 1
    return new


# -- Rule 9: advancement --------------------------------------------------------------------------------
def tag_cost(level: int, adv: AdvancementRules) -> int:
    """Rule 9: XP to buy tag level L — 1, 2, 4, 8… (2^(L−1))."""
    return adv.tag_base_cost * adv.growth ** (level - 1)


def trait_cost(level: int, adv: AdvancementRules) -> int:
    """Rule 9: XP to buy trait level L — 5, 10, 20, 40… (5·2^(L−1)); the seed's table, not its formula."""
    return adv.trait_base_cost * adv.growth ** (level - 1)


def spend_experience(char: Character, adv: AdvancementRules) -> list[str]:
    """Rule 9: spend XP on the cheapest next level (tags before traits, sheet order on ties) while affordable.

    The choice of what to raise is a fixed rule here, not a scenario decision. Returns what was bought.
    """
    bought: list[str] = []
    while True:
        options: list[tuple[int, int, int, str]] = []
        for i, tags in enumerate(char.tags):
            for name, lvl in tags.items():
                options.append((tag_cost(lvl + 1, adv), 0, i, name))
        for i, lvl in enumerate(char.trait_levels):
            options.append((trait_cost(lvl + 1, adv), 1, i, ""))
        if not options:
            return bought
        cost, is_trait, i, name = min(options, key=lambda o: (o[0], o[1]))
        if cost > char.xp:
            return bought
        char.xp -= cost
        if is_trait:
            char.trait_levels[i] += 1
            bought.append(f"{char.traits[i]} {char.trait_levels[i]}")
        else:
            char.tags[i][name] += 1
            bought.append(f"{name} {char.tags[i][name]}")


# -- Rule 10: perks -------------------------------------------------------------------------------------
def perk_eligible(roll: Roll, difficulty: int) -> bool:
    """Rule 10: as many sixes as the difficulty makes the roll perk-eligible."""
    return roll.sixes >= difficulty


def award_perk(char: Character, kind: str, cfg: BlackbirdConfig) -> bool:
    """Rule 10: a perk for this kind of roll (+``perk.dice`` on similar rolls), up to ``perk.max_per_kind``."""
    if not cfg.perk.award or char.perks.get(kind, 0) >= cfg.perk.max_per_kind:
        return False
    char.perks[kind] = char.perks.get(kind, 0) + 1
    return True


# -- Rule 11/12: contested and joint rolls --------------------------------------------------------------
def contest_winner(first: int, second: int) -> int | None:
    """Rule 11: the side with more successes wins (0 or 1); None is a tie, settled by a d6 roll-off."""
    if first > second:
        return 0
    if second > first:
        return 1
    return None


def joint_successes(successes: Iterable[int]) -> int:
    """Rule 12: a joint action sums every participant's successes against the one difficulty."""
    return sum(successes)


# -- Rule 13/14: combat ---------------------------------------------------------------------------------
def attack_hits(attacker: int, defender: int) -> bool:
    """Rule 13: an attack hits only with strictly more successes than the defence (a tie misses)."""
    return attacker > defender


def attack_maneuver_dice(maneuver: Maneuver, aim: int, combat: CombatRules) -> int:
    """Rule 14: extra attack dice — stored aim, plus the all-out attack die."""
    extra = aim
    if maneuver == Maneuver.ALL_OUT_ATTACK:
        extra += combat.all_out_attack_dice
    return extra


def defense_maneuver_dice(all_out_defense: bool, cover: bool, called_shot: bool, combat: CombatRules) -> int:
    """Rule 13/14: extra defence dice — all-out defence, cover, and a called shot against you."""
    return ((combat.all_out_defense_dice if all_out_defense else 0) + (combat.cover_dice if cover else 0)
            + (combat.called_shot_defender_dice if called_shot else 0))


def add_aim(aim: int, combat: CombatRules) -> int:
    """Rule 14: a turn spent aiming stores ``combat.aim_dice`` more attack dice, never above ``combat.aim_max``."""
    return min(combat.aim_max, aim + combat.aim_dice)


# -- Rule 15/16/17: hit points and wounds -----------------------------------------------------------------
def wound_for_margin(margin: int, combat: CombatRules) -> WoundRow | None:
    """Rule 16: the damage table row for a margin (the largest row not above it); None below 1."""
    row = None
    for w in combat.wounds:
        if margin >= w.margin:
            row = w
    return row


def wound_penalty(penalties: Sequence[int], combat: CombatRules) -> int:
    """Rule 16: only the worst current wound's penalty applies (or all of them, if configured)."""
    if not penalties:
        return 0
    return max(penalties) if combat.worst_wound_only else sum(penalties)


class Standing(enum.Enum):
    """Rule 17: where hit points leave a character."""

    UP = "up"
    BELOW_ZERO = "below zero"
    DEAD = "dead"


def standing_after(hp: int, combat: CombatRules) -> Standing:
    """Rule 17: at or below ``combat.death_at`` the character dies; below zero they must check to stay up.

    Exactly zero is not below zero [decision, literal].
    """
    if hp <= combat.death_at:
        return Standing.DEAD
    if hp < 0:
        return Standing.BELOW_ZERO
    return Standing.UP


def combat_pass(hit: bool, attacking: bool) -> bool:
    """Rule 18: in an attack the attacker passes iff it hits, the defender iff it is not hit."""
    return hit if attacking else not hit


def spend_label(k: int) -> str:
    return f"spend {k} pool {'die' if k == 1 else 'dice'}"


def spend_option(k: int, available: int) -> str:
    """Option group of a spend action: none, some, or all of the pool dice that can be spent."""
    if k == 0:
        return "spend_0_pool"
    return "spend_all_pool" if k >= available else "spend_some_pool"

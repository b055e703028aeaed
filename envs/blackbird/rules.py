"""Blackbird Pie rules: one pure function per numbered rule of ``docs/rules/blackbird.md``.

The functions take plain values and small records (a :class:`Character` sheet, a :class:`Pool`, a roll,
a config section) and return values; every configurable number comes from the config. The scenario
states (:mod:`envs.blackbird.session`, :mod:`envs.blackbird.duel`) only sequence them; nothing here knows
about agents or rewards.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from envs.blackbird.actions import Maneuver
from envs.blackbird.config import (
    AdvancementRules,
    BlackbirdConfig,
    CharacterSheet,
    CombatRules,
    ConditionRule,
    ContestRules,
    PoolRules,
    PoolSettlement,
    WoundRow,
)
from envs.blackbird.dice import Roll, beat_probability

STUN_PENALTY = 2
"""Rule 16: a wound with this penalty or worse (heavy, critical) is the one that may stun."""


# -- Rule 1: characters ---------------------------------------------------------------------------------
@dataclass
class Character:
    """Rule 1: a character sheet in play — traits with levels, their tags with levels, flags, perks, XP."""

    name: str
    traits: list[str]
    trait_levels: list[int]
    tags: list[dict[str, int]]  # per trait: tag name -> level
    flags: tuple[str, ...]
    perks: dict[str, int] = field(default_factory=dict)  # kind of roll -> perks held
    xp: int = 0

    def copy(self) -> Character:
        return Character(
            self.name,
            list(self.traits),
            list(self.trait_levels),
            [dict(t) for t in self.tags],
            self.flags,
            dict(self.perks),
            self.xp,
        )

    def key(self) -> tuple[object, ...]:
        """What of the sheet can change in play (levels, tags, perks, XP), hashable."""
        return (
            tuple(self.trait_levels),
            tuple(tuple(sorted(t.items())) for t in self.tags),
            tuple(sorted(self.perks.items())),
            self.xp,
        )

    @cached_property
    def short(self) -> str:
        """The first word of the name, for narration (the name never changes in play)."""
        return self.name.split()[0]


def create_character(sheet: CharacterSheet) -> Character:
    """Rule 1: a character from its sheet — traits, a tag per creation point, flags (limits checked by config)."""
    return Character(
        sheet.name,
        [t.name for t in sheet.traits],
        [t.level for t in sheet.traits],
        [dict(t.tags) for t in sheet.traits],
        tuple(sheet.flags),
    )


# -- Rule 2: building the pool ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
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
    #: All the dice of the roll, summed once at construction (pools are immutable); not part of equality or hash.
    total: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "total",
            self.base + self.trait + self.tags + self.flag + self.perks + self.pool + self.help + self.maneuver,
        )

    @property
    def description(self) -> str:
        """:meth:`describe`, worked out once per distinct pool (duel narration reads the same few again and again)."""
        d = _DESCRIPTIONS.get(self)
        if d is None:
            d = _DESCRIPTIONS[self] = self.describe()
        return d

    def describe(self) -> str:
        """Where the dice come from, for narration: "1 base + 1 trait + 2 tag"."""
        parts = [
            f"{v} {k}"
            for k, v in (
                ("base", self.base),
                ("trait", self.trait),
                ("tag", self.tags),
                ("flag", self.flag),
                ("perk", self.perks),
                ("pool", self.pool),
                ("help", self.help),
                ("maneuver", self.maneuver),
            )
            if v
        ]
        return " + ".join(parts) or "0"


#: Pool -> its description (a few distinct pools occur in a game; equal pools share one).
_DESCRIPTIONS: dict[Pool, str] = {}


def item_dice(level: int, per_level: int, adv: AdvancementRules) -> int:
    """Rule 9 [decision]: a level-L trait or tag gives L dice (``advancement.level_adds_dice``), else one."""
    return per_level * (level if adv.level_adds_dice else 1)


def trait_applies(char: Character, i: int, traits: Collection[str], tags: Collection[str]) -> bool:
    """Rule 2: a trait is relevant if it is named for the roll or carries a tag that is."""
    return char.traits[i] in traits or any(t in tags for t in char.tags[i])


def build_pool(
    cfg: BlackbirdConfig,
    char: Character,
    trait: int | None,
    traits: Sequence[str],
    tags: Sequence[str],
    on_flag: bool,
    kind: str,
    forbidden: Collection[str] = (),
    pool_dice: int = 0,
    help_dice: int = 0,
    maneuver_dice: int = 0,
    base_die: bool = True,
) -> Pool:
    """Rule 2: 1 base die + the ONE trait used + its relevant tags + 1 for a flag + perks + pool + help + maneuvers.

    Only the tags of the chosen trait count (clarification No. 1); forbidden tags (Rule 7) do not.
    """
    ch = cfg.character
    trait_d = tag_d = 0
    if trait is not None and trait_applies(char, trait, traits, tags):
        trait_d = item_dice(char.trait_levels[trait], ch.trait_dice, cfg.advancement)
        tag_d = sum(
            item_dice(lvl, ch.tag_dice, cfg.advancement)
            for t, lvl in char.tags[trait].items()
            if t in tags and t not in forbidden
        )
    flag_d = ch.flag_dice if on_flag and char.flags else 0
    perk_d = cfg.perk.dice * char.perks.get(kind, 0)
    return Pool(ch.base_dice if base_die else 0, trait_d, tag_d, flag_d, perk_d, pool_dice, help_dice, maneuver_dice)


def best_trait(
    cfg: BlackbirdConfig, char: Character, traits: Sequence[str], tags: Sequence[str], forbidden: Collection[str] = ()
) -> int | None:
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


def base_difficulty(named: int | None, default: int) -> int:
    """Rule 4: an obstacle's own difficulty, or ``difficulty.default`` (medium) when it names none."""
    return named if named is not None else default


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
def spendable(pool: int, rules: PoolRules) -> int:
    """Rule 5: any number of the pool dice held (never more than the cap) may go on a roll; none without the pool."""
    return min(pool, rules.cap) if rules.enabled else 0


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
def help_offered(helper_pool: int, dice_per_helper: int, pool_enabled: bool, joint: bool) -> bool:
    """Rule 6: a helper can give a die from their pool — not without pool dice, nor when they join the roll.

    (A joint action, Rule 12, has the helper roll with the character instead.)
    """
    return pool_enabled and not joint and helper_pool >= dice_per_helper > 0


def settle_help(helper_pool: int, given: int, passed: bool, returned_on_failure: bool) -> int:
    """Rule 6: the helper's die is lost if the roll passes and comes back if it fails."""
    if passed or not returned_on_failure:
        return helper_pool - given
    return helper_pool


# -- Rule 7: conditions ------------------------------------------------------------------------------
def condition_modifier(table: dict[str, ConditionRule], conditions: Iterable[str]) -> int:
    """Rule 7: the summed difficulty modifiers of the conditions a character has."""
    return sum(table[c].difficulty for c in conditions if c in table)


def contest_condition_penalty(table: dict[str, ConditionRule], conditions: Iterable[str]) -> int:
    """Rule 7: in a contested roll the conditions' modifier comes off the character's successes (never a bonus)."""
    return max(0, condition_modifier(table, conditions))


def forbidden_tags(table: dict[str, ConditionRule], conditions: Iterable[str]) -> set[str]:
    """Rule 7: tags a character's conditions forbid."""
    out: set[str] = set()
    for c in conditions:
        if c in table:
            out.update(table[c].forbids_tags)
    return out


# -- Rule 8: skill from the field ----------------------------------------------------------------------
def field_lesson(
    char: Character, pool: Pool, passed: bool, traits: Sequence[str], tags: Sequence[str]
) -> tuple[str, int] | None:
    """Rule 8: what a roll teaches — the first of its tags not yet held, and the trait it joins — or None.

    Only a roll passed with no trait or tag dice teaches. The new tag joins the first of the roll's traits
    the character has, else the first trait.
    """
    if not passed or pool.trait or pool.tags:
        return None
    held = {t for tt in char.tags for t in tt}
    new = next((t for t in tags if t not in held), "")
    if not new:
        return None
    named = set(traits)
    home = next((i for i, name in enumerate(char.traits) if name in named), 0)
    return new, home


def learn_from_field(char: Character, pool: Pool, passed: bool, traits: Sequence[str], tags: Sequence[str]) -> str:
    """Rule 8: a roll passed with no trait or tag dice earns one of the roll's tags (:func:`field_lesson`).

    Returns the tag learnt, or "" if none.
    """
    lesson = field_lesson(char, pool, passed, traits, tags)
    if lesson is None:
        return ""
    tag, home = lesson
    char.tags[home][tag] = 1
    return tag


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


def contest_win_chance(n: int, opposition: int, success_on: int, penalty: int, contest: ContestRules) -> float:
    """Rule 11: exact chance that ``n`` dice (less ``penalty`` successes) beat ``opposition`` dice.

    With the roll-off a tie is a coin flip (either d6 is higher first with probability 1/2); without it a tie fails.
    """
    win = beat_probability(n, opposition, success_on, penalty, 0)
    if contest.rolloff_on_tie:
        lose = beat_probability(opposition, n, success_on, 0, penalty)
        win += (1 - win - lose) * 0.5
    return win


def joint_successes(successes: Iterable[int]) -> int:
    """Rule 12: a joint action sums every participant's successes against the one difficulty."""
    return sum(successes)


# -- Rule 13/14: combat ---------------------------------------------------------------------------------
class AttackResult(enum.Enum):
    """Rule 13: what an attack's comparison leads to."""

    HIT = "hit"
    MISS = "miss"
    ROLL_OFF = "roll-off"  # only when ties do not miss and contests roll off (a variant)


# enum members as module globals for the rules read on every exchange (a member lookup on the class costs more)
_HIT, _MISS, _ROLL_OFF = AttackResult.HIT, AttackResult.MISS, AttackResult.ROLL_OFF
_ALL_OUT_ATTACK, _MOVE_ATTACK = Maneuver.ALL_OUT_ATTACK, Maneuver.MOVE_ATTACK


def attack_hits(attacker: int, defender: int) -> bool:
    """Rule 13: an attack hits only with strictly more successes than the defence (a tie misses)."""
    return attacker > defender


def attack_result(attacker: int, defender: int, combat: CombatRules, contest: ContestRules) -> AttackResult:
    """Rule 13: more successes hit; a tie misses (``combat.tie_misses``), else goes to Rule 11's roll-off."""
    if attack_hits(attacker, defender):
        return _HIT
    if attacker == defender and not combat.tie_misses and contest.rolloff_on_tie:
        return _ROLL_OFF
    return _MISS


def can_defend(all_out_attacked: bool) -> bool:
    """Rule 14: a fighter who attacked all-out cannot defend until their next turn."""
    return not all_out_attacked


def defence_successes(roll: Roll | None, penalty: int, combat: CombatRules) -> int:
    """Rule 13/14: the defence's successes — its roll less wound penalties, or a set number if it cannot defend."""
    if roll is None:
        return combat.all_out_attack_defense
    return net_successes(roll, penalty)


def wound_margin(margin: int, called_shot: bool, combat: CombatRules) -> int:
    """Rule 13 [decision]: a called shot that hits lands ``combat.called_shot_margin_bonus`` steps harder."""
    return margin + combat.called_shot_margin_bonus if called_shot else margin


def attack_maneuver_dice(maneuver: Maneuver, aim: int, combat: CombatRules) -> int:
    """Rule 14: extra attack dice — stored aim, plus the all-out attack die."""
    extra = aim
    if maneuver == _ALL_OUT_ATTACK:
        extra += combat.all_out_attack_dice
    return extra


def attack_base_die(maneuver: Maneuver, combat: CombatRules) -> bool:
    """Rule 14: move & attack rolls without the base die (unless ``combat.move_attack_base_die``)."""
    return maneuver != _MOVE_ATTACK or combat.move_attack_base_die


def defense_maneuver_dice(all_out_defense: bool, cover: bool, called_shot: bool, combat: CombatRules) -> int:
    """Rule 13/14: extra defence dice — all-out defence, cover, and a called shot against you."""
    return (
        (combat.all_out_defense_dice if all_out_defense else 0)
        + (combat.cover_dice if cover else 0)
        + (combat.called_shot_defender_dice if called_shot else 0)
    )


def add_aim(aim: int, combat: CombatRules) -> int:
    """Rule 14: a turn spent aiming stores ``combat.aim_dice`` more attack dice, never above ``combat.aim_max``."""
    return min(combat.aim_max, aim + combat.aim_dice)


def in_reach(distance: int, reach: int) -> bool:
    """Rule 14: a melee attack needs the fighters within ``duel.reach`` metres."""
    return distance <= reach


def distance_after_move(distance: int, move_metres: int, reach: int) -> int:
    """Rule 14 (Move): close in by up to ``combat.move_metres``, stopping at reach."""
    return max(reach, distance - move_metres)


def available_maneuvers(distance: int, reach: int, move_attack_metres: int, ranged: bool) -> list[int]:
    """Rule 14: the maneuvers open to a fighter at a distance (action ids, in id order).

    Aim and all-out defence always; in reach the attacks; out of reach Move and Ready, and Move & attack
    when its shorter move brings the foe into reach; Cover only in a ranged fight.
    """
    acts = [Maneuver.AIM, Maneuver.ALL_OUT_DEFENSE]
    if in_reach(distance, reach):
        acts += [Maneuver.ATTACK, Maneuver.CALLED_SHOT, Maneuver.ALL_OUT_ATTACK]
    else:
        acts += [Maneuver.MOVE, Maneuver.READY]
        if distance - move_attack_metres <= reach:
            acts.append(Maneuver.MOVE_ATTACK)
    if ranged:
        acts.append(Maneuver.COVER)
    return sorted(int(a) for a in acts)


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


def wound_stuns(row: WoundRow, combat: CombatRules) -> bool:
    """Rule 16 [decision]: "−2 successes / stun" — a heavy or worse wound costs a turn (``combat.heavy_stuns``)."""
    return combat.heavy_stuns and row.penalty >= STUN_PENALTY


class Standing(enum.Enum):
    """Rule 17: where hit points leave a character."""

    UP = "up"
    BELOW_ZERO = "below zero"
    DEAD = "dead"


_UP, _BELOW_ZERO, _DEAD = Standing.UP, Standing.BELOW_ZERO, Standing.DEAD  # module globals, as above


def standing_after(hp: int, combat: CombatRules) -> Standing:
    """Rule 17: at or below ``combat.death_at`` the character dies; below zero they must check to stay up.

    Exactly zero is not below zero [decision, literal: ``combat.check_at_zero_hp`` off], so a critical hit from
    full hit points lands on 0 with no check.
    """
    if hp <= combat.death_at:
        return _DEAD
    if hp < 0 or (hp == 0 and combat.check_at_zero_hp):
        return _BELOW_ZERO
    return _UP


def consciousness_check_due(standing: Standing, was_below_zero: bool, combat: CombatRules) -> bool:
    """Rule 17 [decision]: a check when HP first drop below zero, then after each hit (``check_after_each_hit``)."""
    return standing is _BELOW_ZERO and (not was_below_zero or combat.check_after_each_hit)


def combat_pass(hit: bool, attacking: bool) -> bool:
    """Rule 18: in an attack the attacker passes iff it hits, the defender iff it is not hit."""
    return hit if attacking else not hit


def settle_combat_pool(pool: int, spent: int, passed: bool, rules: PoolRules, combat: CombatRules) -> int:
    """Rule 18 [decision]: Rule 5 for one side of an attack (``combat.pool_settlement``).

    Each side passes or fails for itself (as written), or the pool dice used are simply spent.
    """
    if combat.pool_settlement == PoolSettlement.SPENT:
        return pool - spent
    return settle_pool(pool, spent, passed, rules)


def defender_settles(could_defend: bool, hit: bool, combat: CombatRules) -> bool:
    """Rule 18 [decision]: a defender who rolled settles its pool; one who could not defend made no roll.

    With ``combat.undefended_hit_is_failure`` a hit on an undefended fighter counts as their failed roll.
    """
    return could_defend or (hit and combat.undefended_hit_is_failure)

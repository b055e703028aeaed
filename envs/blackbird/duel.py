"""Blackbird Duel: two combatants trade maneuvers until one dies, passes out, or time runs out.

Rules card of ``rulebreaker/BlackbirdDuel-v0``; rule numbers are those of ``docs/rules/blackbird.md``.
The state below only sequences the rules of :mod:`envs.blackbird.rules`.

Description:
    The two ``duel.fighters`` start ``duel.start_distance`` metres apart with ``combat.hit_points`` (Rule 15)
    and ``pool.start`` pool dice each; seat 0 moves first. Each turn the active fighter picks a maneuver
    (Rule 14). An attack (Rule 13) is a contested roll: the attacker, then the defender, choose how many
    pool dice to add; the attack hits only with more successes, and the margin sets the wound (Rule 16),
    whose penalty comes off every later roll. Below zero hit points a fighter rolls to stay conscious
    (Rule 17), and may add pool dice to it. Each side settles its pool for itself (Rule 18). The best trait
    for each roll is used automatically (``duel.attack``, ``duel.defense``, ``duel.stay_up``).

Actions:
    ``Maneuver.ATTACK``, ``CALLED_SHOT``, ``AIM``, ``ALL_OUT_ATTACK``, ``ALL_OUT_DEFENSE``, ``MOVE_ATTACK``,
    ``MOVE``, ``READY``, ``COVER`` (ids 0-8; Rule 14: attacks only in reach, Move / Ready / Move & attack only
    out of it, Cover only with ``duel.ranged``); ``DUEL_SPEND_0 + k`` (9 + k, k = 0..``pool.cap``) spend k pool
    dice at the attack, defence and consciousness decisions, up to the pool held. The action space has
    9 + cap + 1 ids.

Observation:
    39 floats in [-1, 1] (:func:`envs.blackbird.observation.duel_observation`): for the seat and then its
    foe, hit points, pool, stored aim, all-out attack / defence, ready, cover, wound penalty, below zero,
    stunned; the distance and whether in reach; the decision phase (one-hot); whose turn; the turn count;
    the attack in progress (attack dice, defence dice, maneuver one-hot).

Rewards:
    At the end only: +1 to the winner and −1 to the loser (the loser died or fell unconscious), 0 to both at
    the turn limit.

Episode end:
    Death at ``combat.death_at`` HP or a failed consciousness check (``EndReason.KNOCKOUT``), or
    ``duel.max_turns`` turns (``EndReason.TIME_LIMIT``).

Arguments:
    The resolved ``BlackbirdConfig``: ``combat.*``, ``duel.*``, ``pool.*``, ``dice.*``, ``perk.*`` and the
    roll-building keys (``character.*``, ``advancement.level_adds_dice``); see ``rules.toml``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from envs.blackbird.actions import (
    ATTACK_VERBS,
    CHANCE_CONTEXT,
    DUEL_CONTEXTS,
    DUEL_SPEND_0,
    Maneuver,
    dice_phrase,
    maneuver_label,
    maneuver_option,
    successes_phrase,
)
from envs.blackbird.actions import DuelPhase as Phase
from envs.blackbird.config import BlackbirdConfig, RollUse, WoundRow
from envs.blackbird.dice import (
    ROLL_OFF_OUTCOMES,
    Roll,
    RollOff,
    read_faces,
    roll_distribution,
    sample_roll,
    sample_roll_off,
)
from envs.blackbird.observation import DUEL_OBS_SIZE, duel_observation
from envs.blackbird.rules import (
    AttackResult,
    Character,
    Pool,
    Standing,
    add_aim,
    attack_base_die,
    attack_maneuver_dice,
    attack_result,
    available_maneuvers,
    award_perk,
    best_trait,
    build_pool,
    can_defend,
    combat_pass,
    consciousness_check_due,
    create_character,
    defence_successes,
    defender_settles,
    defense_maneuver_dice,
    distance_after_move,
    effective_difficulty,
    in_reach,
    net_successes,
    passes,
    perk_eligible,
    settle_combat_pool,
    settle_pool,
    spendable,
    standing_after,
    starting_pool,
    wound_for_margin,
    wound_margin,
    wound_penalty,
    wound_stuns,
)
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, Event, IllegalActionError, State

STAY_UP = "stay up"
"""The kind of roll of a consciousness check (its perks apply to later checks, Rule 10)."""
OBS_SIZE = DUEL_OBS_SIZE


@dataclass(slots=True)
class Fighter:
    """A combatant's state: sheet, hit points, pool, wounds, and the maneuvers still in effect.

    Every field is a value or immutable (the wounds are a tuple), so a copy is shallow; the sheet is shared
    between copies until a perk changes it (the duel then gives the fighter its own copy first).
    """

    char: Character
    hp: int
    pool: int
    wounds: tuple[int, ...] = ()  # penalties of the wounds taken
    aim: int = 0
    all_out_attack: bool = False  # cannot defend until their next turn
    all_out_defense: bool = False
    ready: bool = False
    cover: bool = False
    stunned: bool = False
    below_zero: bool = False
    penalty: int = 0  # Rule 16: what the wounds take off each roll (worked out when a wound is taken)

    def copy(self) -> Fighter:
        """A shallow copy (slots, no instance dict: every field passed on, the sheet shared)."""
        return Fighter(
            self.char,
            self.hp,
            self.pool,
            self.wounds,
            self.aim,
            self.all_out_attack,
            self.all_out_defense,
            self.ready,
            self.cover,
            self.stunned,
            self.below_zero,
            self.penalty,
        )

    def key(self, sheet: tuple[object, ...] | None = None) -> tuple[object, ...]:
        """The fighter's position, hashable (``sheet``: ``char.key()`` if the caller knows it)."""
        return (
            self.char.key() if sheet is None else sheet,
            self.hp,
            self.pool,
            tuple(self.wounds),
            self.aim,
            self.all_out_attack,
            self.all_out_defense,
            self.ready,
            self.cover,
            self.stunned,
            self.below_zero,
        )


NO_DICE = Pool()
"""The dice of a roll not built yet."""


@dataclass(slots=True)
class Exchange:
    """One attack in progress (Rule 13); in slots, so opening one allocates no instance dict."""

    attacker: int
    maneuver: Maneuver
    ready_attack: bool = False  # a readied fighter striking a mover (Rule 14)
    follow_up: bool = False  # the mover's own move & attack comes after the ready attack
    att_dice: Pool = NO_DICE  # pools are immutable: one empty pool serves every exchange
    def_dice: Pool = NO_DICE
    att_spent: int = 0
    def_spent: int = 0
    att_roll: Roll | None = None
    def_roll: Roll | None = None
    can_defend: bool = True

    def copy(self) -> Exchange:
        """A shallow copy (the pools and rolls are immutable, so they are shared)."""
        return Exchange(
            self.attacker,
            self.maneuver,
            self.ready_attack,
            self.follow_up,
            self.att_dice,
            self.def_dice,
            self.att_spent,
            self.def_spent,
            self.att_roll,
            self.def_roll,
            self.can_defend,
        )

    def key(self) -> tuple[object, ...]:
        """The exchange's position, hashable."""
        return (
            self.attacker,
            self.maneuver,
            self.ready_attack,
            self.follow_up,
            self.att_dice,
            self.def_dice,
            self.att_spent,
            self.def_spent,
            self.att_roll,
            self.def_roll,
            self.can_defend,
        )


class _DuelSetup:
    """What a duel reads on every step, worked out once per config object (the config is frozen).

    Shared by every duel of the config and their clones: the fighters' sheets (shared until a perk copies one),
    their short names, the starting pool, the observation scales, the maneuvers open at each distance,
    the spend actions open at each pool, the dice of each kind of roll (in a duel a sheet gains only perks,
    so a fighter's dice for a roll follow from its seat, the kind of roll, the base die, the perks held for
    that kind, the pool dice spent and the maneuver dice), and the config values read on every step,
    resolved into plain attributes.
    """

    def __init__(self, cfg: BlackbirdConfig) -> None:
        self.characters = tuple(create_character(s) for s in cfg.duel.fighters)  # shared until a perk (copy on write)
        self.names = tuple(c.short for c in self.characters)
        self.pool0 = starting_pool(cfg.pool)
        a, b = self.characters
        self.start_text = (  # every duel of the config opens with this line
            f"{a.name} faces {b.name}, {cfg.duel.start_distance} m apart; "
            f"{cfg.combat.hit_points} hit points and {self.pool0} pool dice each."
        )
        # the start line's event, what ``narrate("start", start_text, None)`` records: an event is immutable and
        # nothing writes to its data, so every duel of the config logs this one (as clones share their events)
        self.start_event = Event("start", self.start_text, None, {})
        c, d = cfg.combat, cfg.duel
        # observation scales (envs.blackbird.observation.duel_observation)
        self.hit_points, self.cap, self.aim_max, self.max_turns = c.hit_points, cfg.pool.cap, c.aim_max, d.max_turns
        self.distance_span = max(1, d.start_distance, d.reach)
        # the observation's distance / phase / turn slots by (distance, phase, seat's turn, turn) (duel_tail)
        self.obs_tails: dict[tuple[int, Phase, bool, int], np.ndarray] = {}
        self.maneuvers: dict[int, tuple[int, ...]] = {}
        self.spend_actions: dict[int, tuple[int, ...]] = {}  # pool held -> the legal "spend k" ids
        self.pools: dict[tuple[int, str, bool, int, int, int], Pool] = {}
        # the same pools by what decides them for an attack or a defence (DuelState.attack_pool / defense_pool)
        self.attack_pools: dict[tuple[int, Maneuver, int, int, int], Pool] = {}
        self.defense_pools: dict[tuple[int, bool, bool, bool, int, int], Pool] = {}
        self.combat, self.contest, self.pool_rules = c, cfg.contest, cfg.pool
        self.pool_enabled = cfg.pool.enabled
        self.success_on = cfg.dice.success_on
        self.reach, self.ranged = d.reach, d.ranged
        self.attack_use, self.defense_use, self.stay_up_use = d.attack, d.defense, d.stay_up
        # Rule 17: the stay-up roll's difficulty (no conditions in a duel) and whether pool dice may go on it
        self.check_difficulty = effective_difficulty(cfg, c.consciousness_difficulty, ())
        self.check_pool_dice = c.consciousness_pool_dice and cfg.pool.enabled
        # Rule 18 per side: (pool, spent, hit) -> the attacker's pool after; (pool, spent, could defend, hit) -> the
        # defender's (each side settles for itself, so two small memos warm far sooner than one over both sides)
        self._attacker_pools: dict[tuple[int, int, bool], int] = {}
        self._defender_pools: dict[tuple[int, int, bool, bool], int] = {}
        # Rule 2's trait, tag, flag and perk dice of a roll by (seat, kind, base die, perks held): what the best
        # trait decides, before the pool and maneuver dice are added (DuelState._roll_pool)
        self.trait_pools: dict[tuple[int, str, bool, int], Pool] = {}
        self._rows: dict[int, WoundRow | None] = {}
        self._results: dict[tuple[int, int | None, bool], tuple[int, int, AttackResult, int, WoundRow | None]]
        self._results = {}
        self._sheet_keys: dict[int, tuple[Character, tuple[object, ...]]] = {}

    def exchange_pools(
        self, att_pool: int, att_spent: int, def_pool: int, def_spent: int, could_defend: bool, hit: bool
    ) -> tuple[int, int]:
        """Rule 18 for both sides of an exchange: the attacker's and the defender's pools after it.

        Each side settles as in :func:`settle_combat_pool` (the attacker passes iff it hits, the defender iff it
        is not hit, :func:`combat_pass`); a defender who made no roll keeps its pool unless
        :func:`defender_settles` says otherwise. A side's settlement reads only its own pool and spend, so each
        side is worked out once per (pool, spent, [could defend,] hit) under this config, in a memo of its own
        (a few hundred entries at the default cap, bounded all the same).
        """
        att_key = (att_pool, att_spent, hit)
        att = self._attacker_pools.get(att_key)
        if att is None:
            if len(self._attacker_pools) >= _EXCHANGE_POOLS_LIMIT:
                self._attacker_pools.clear()
            att = settle_combat_pool(att_pool, att_spent, combat_pass(hit, True), self.pool_rules, self.combat)
            self._attacker_pools[att_key] = att
        def_key = (def_pool, def_spent, could_defend, hit)
        dfn = self._defender_pools.get(def_key)
        if dfn is None:
            if len(self._defender_pools) >= _EXCHANGE_POOLS_LIMIT:
                self._defender_pools.clear()
            dfn = def_pool
            if defender_settles(could_defend, hit, self.combat):
                dfn = settle_combat_pool(def_pool, def_spent, combat_pass(hit, False), self.pool_rules, self.combat)
            self._defender_pools[def_key] = dfn
        return att, dfn

    def exchange_result(
        self, att_successes: int, def_successes: int | None, att_penalty: int, def_penalty: int, called_shot: bool
    ) -> tuple[int, int, AttackResult, int, WoundRow | None]:
        """Rule 13 for one exchange's dice under this config, worked out once per (successes, penalties, called).

        ``def_successes`` is None when the defender could not defend. The attack's and the defence's net
        successes (:func:`net_successes`, :func:`defence_successes`), the result (:func:`attack_result`) and,
        on a hit, the margin it lands with and its wound row (:meth:`wound`). Net successes read a roll's
        successes only less its penalty, so the memo is keyed by those differences (:func:`result_key`): far
        fewer keys than (successes, penalties), small and bounded all the same.
        """
        key = result_key(att_successes, def_successes, att_penalty, def_penalty, called_shot)
        known = self._results.get(key)
        if known is None:
            if len(self._results) >= _RESULTS_LIMIT:
                self._results.clear()
            c = self.combat
            att = net_successes(Roll(att_successes, 0), att_penalty)
            dfn = defence_successes(None if def_successes is None else Roll(def_successes, 0), def_penalty, c)
            result = attack_result(att, dfn, c, self.contest)
            margin, row = self.wound(att - dfn, called_shot) if result is HIT else (0, None)
            known = self._results[key] = (att, dfn, result, margin, row)
        return known

    def wound(self, margin: int, called_shot: bool) -> tuple[int, WoundRow | None]:
        """Rules 13 and 16: the margin a hit by ``margin`` lands with (:func:`wound_margin`) and its wound row."""
        landed = wound_margin(margin, called_shot, self.combat)
        return landed, self.wound_row(landed)

    def wound_row(self, margin: int) -> WoundRow | None:
        """Rule 16 (:func:`wound_for_margin`) under this config, worked out once per margin."""
        if margin in self._rows:
            return self._rows[margin]
        row = self._rows[margin] = wound_for_margin(margin, self.combat)
        return row

    def sheet_key(self, char: Character) -> tuple[object, ...]:
        """``char.key()``, worked out once per sheet object.

        A duel never changes a sheet once it is keyed: a perk goes on a fresh copy.
        """
        hit = self._sheet_keys.get(id(char))
        if hit is None or hit[0] is not char:
            if len(self._sheet_keys) >= _SHEET_KEYS_LIMIT:
                self._sheet_keys.clear()
            hit = self._sheet_keys[id(char)] = (char, char.key())
        return hit[1]


def result_key(
    att_successes: int, def_successes: int | None, att_penalty: int, def_penalty: int, called_shot: bool
) -> tuple[int, int | None, bool]:
    """The key of :meth:`_DuelSetup.exchange_result`'s memo: each side's successes less its wound penalty.

    Rule 3's net successes (:func:`net_successes`, and :func:`defence_successes` for a defender who rolled) are
    read from that difference alone, and a defender who could not defend (None) gets a set number whatever its
    penalty; the called shot sets the margin. (:meth:`DuelState.apply_chance` builds the same key inline.)
    """
    return (att_successes - att_penalty, None if def_successes is None else def_successes - def_penalty, called_shot)


_SETUPS: dict[int, tuple[BlackbirdConfig, _DuelSetup]] = {}
_SETUPS_LIMIT = 64
_EXCHANGE_POOLS_LIMIT = 16384  # (pools, spends) of both sides: a few thousand at the default cap
_RESULTS_LIMIT = 16384  # (successes, penalties, called shot) of an exchange: a few hundred in practice
_SHEET_KEYS_LIMIT = 4096  # sheets whose key a setup keeps (each entry keeps its sheet alive, so ids stay unique)


def _setup(cfg: BlackbirdConfig) -> _DuelSetup:
    """The setup of ``cfg``, from the cache (keyed by identity; the entry keeps the config alive)."""
    hit = _SETUPS.get(id(cfg))
    if hit is not None and hit[0] is cfg:
        return hit[1]
    if len(_SETUPS) >= _SETUPS_LIMIT:
        _SETUPS.clear()
    setup = _DuelSetup(cfg)
    _SETUPS[id(cfg)] = (cfg, setup)
    return setup


# Hot-path aliases: in Python 3.11 every ``Phase.MANEUVER``-style member lookup is a descriptor call.
MANEUVER, ATTACK_SPEND, DEFENSE_SPEND, CHECK_SPEND = (
    Phase.MANEUVER,
    Phase.ATTACK_SPEND,
    Phase.DEFENSE_SPEND,
    Phase.CHECK_SPEND,
)
ATTACK_ROLL, DEFENSE_ROLL, ROLL_OFF, CHECK_ROLL = (
    Phase.ATTACK_ROLL,
    Phase.DEFENSE_ROLL,
    Phase.ROLL_OFF,
    Phase.CHECK_ROLL,
)
ATTACK, CALLED_SHOT, AIM, ALL_OUT_ATTACK, ALL_OUT_DEFENSE, MOVE_ATTACK, MOVE, READY, COVER = tuple(Maneuver)
HIT, TIE_ROLL_OFF = AttackResult.HIT, AttackResult.ROLL_OFF
DEAD, BELOW_ZERO = Standing.DEAD, Standing.BELOW_ZERO
MANEUVERS = tuple(Maneuver)
"""The maneuvers by action id."""


class DuelState(State):
    """Two Blackbird combatants in a melee (or, with ``duel.ranged``, a firefight with cover)."""

    legal_sorted = True  # every legal tuple lists its ids in increasing order (``rulebreaker check`` verifies it)
    player_kept = True  # current_player() is the kept _player (``rulebreaker check`` verifies it at every node)

    def __init__(self, cfg: BlackbirdConfig) -> None:
        super().__init__(2)
        self.cfg = cfg
        self.setup = setup = _setup(cfg)
        self._names = setup.names
        pool0 = setup.pool0
        self.f = [Fighter(c, setup.hit_points, pool0) for c in setup.characters]  # sheets copied before a perk
        self.distance = cfg.duel.start_distance
        self.turn = 0
        self.active = 0
        self._player = 0  # current_player(), set with every change of phase
        self._legal: tuple[int, ...] | None = None  # this node's legal ids once asked (legal_actions)
        self.ex: Exchange | None = None
        self.checker: int | None = None  # who is rolling to stay conscious
        self.check_spent = 0
        self.check_dice = NO_DICE
        # read on every step: resolved once per config (pools by seat and kind of roll, maneuvers by distance)
        self._pools = setup.pools
        self._attack_pools = setup.attack_pools
        self._defense_pools = setup.defense_pools
        self._maneuvers = setup.maneuvers
        if self.narrating:
            self.log.append(setup.start_event)  # narrate("start", ...), the config's one event
        # the first turn (seat 0's): fresh fighters hold no effects to end and are not stunned (Rule 14)
        self.phase = MANEUVER
        self._player = 0

    # -- the position, read through the rules -----------------------------------------------------------
    def name(self, seat: int) -> str:
        """A fighter's short name, for narration."""
        return self._names[seat]

    def in_reach(self) -> bool:
        """Rule 14: whether a melee attack can land."""
        return in_reach(self.distance, self.setup.reach)

    def penalty(self, seat: int) -> int:
        """Rule 16: the successes a fighter's wounds take off each roll."""
        return self.f[seat].penalty

    def _roll_pool(self, seat: int, use: RollUse, kind: str, spend: int, extra: int, base: bool = True) -> Pool:
        """Rule 2 with the best trait: a fighter's dice for one kind of roll, with pool and maneuver dice.

        In a duel a sheet gains only perks, so a roll's dice follow from the seat, the kind of roll, the base
        die, the perks held for that kind, the pool dice and the maneuver dice: each such pool is built once
        per config (:class:`_DuelSetup`).
        """
        char = self.f[seat].char
        perks = char.perks.get(kind, 0)
        key = (seat, kind, base, perks, spend, extra)
        pool = self._pools.get(key)
        if pool is None:
            # the best trait's dice do not depend on the pool or maneuver dice: built once per (seat, kind, base,
            # perks) and reused for every spend and maneuver
            trait_key = (seat, kind, base, perks)
            known = self.setup.trait_pools.get(trait_key)
            if known is None:
                t = best_trait(self.cfg, char, use.traits, use.tags)
                known = build_pool(self.cfg, char, t, use.traits, use.tags, use.flag, kind, (), 0, 0, 0, base)
                self.setup.trait_pools[trait_key] = known
            pool = Pool(known.base, known.trait, known.tags, known.flag, known.perks, spend, 0, extra)
            self._pools[key] = pool
        return pool

    def attack_pool(self, seat: int, maneuver: Maneuver, spend: int = 0) -> Pool:
        """Rule 2 + 14: the attacker's dice for a maneuver (move & attack drops the base die).

        Read from the setup's table by what decides it (seat, maneuver, stored aim, attack perks, pool dice):
        one lookup per roll; a miss builds the pool through Rule 14's maneuver dice and :meth:`_roll_pool`.
        """
        fi = self.f[seat]
        key = (seat, maneuver, fi.aim, fi.char.perks.get("attack", 0), spend)
        pool = self._attack_pools.get(key)
        if pool is None:
            c = self.setup.combat
            extra = attack_maneuver_dice(maneuver, fi.aim, c)
            base = attack_base_die(maneuver, c)
            pool = self._roll_pool(seat, self.setup.attack_use, "attack", spend, extra, base)
            self._attack_pools[key] = pool
        return pool

    def defense_pool(self, seat: int, called_shot: bool, spend: int = 0) -> Pool:
        """Rule 2 + 13/14: the defender's dice (all-out defence, cover, a called shot against them).

        Read from the setup's table by (seat, all-out defence, cover, called shot, defence perks, pool dice), as
        :meth:`attack_pool` does.
        """
        fi = self.f[seat]
        key = (seat, fi.all_out_defense, fi.cover, called_shot, fi.char.perks.get("defense", 0), spend)
        pool = self._defense_pools.get(key)
        if pool is None:
            extra = defense_maneuver_dice(fi.all_out_defense, fi.cover, called_shot, self.setup.combat)
            pool = self._defense_pools[key] = self._roll_pool(seat, self.setup.defense_use, "defense", spend, extra)
        return pool

    def spendable(self, seat: int) -> int:
        """Rule 5: the pool dice a fighter can add to the current roll."""
        return spendable(self.f[seat].pool, self.setup.pool_rules)

    def decider(self) -> int:
        """The seat deciding now, or ``CHANCE``."""
        ph = self.phase
        if ph is MANEUVER:
            return self.active
        if ph is ATTACK_SPEND:
            assert self.ex is not None
            return self.ex.attacker
        if ph is DEFENSE_SPEND:
            assert self.ex is not None
            return 1 - self.ex.attacker
        if ph is CHECK_SPEND:
            assert self.checker is not None
            return self.checker
        return CHANCE

    # -- protocol -------------------------------------------------------------------------------------
    def current_player(self) -> int:
        """The seat to move, ``CHANCE`` or ``TERMINAL``: ``_player``, which every change of phase sets.

        The adapter and the playouts ask it several times a step, so it is kept up to date by the code that
        moves the phase (``_end_turn``, ``_open_attack``, the spends, the resolutions and ``finish``) rather
        than re-derived; :meth:`decider` derives it from the phase (the fast-path test compares the two).
        """
        return self._player

    def decision_context(self) -> str:
        return DUEL_CONTEXTS.get(self.phase, CHANCE_CONTEXT)

    def legal_maneuvers(self) -> list[int]:
        """Rule 14: what the active fighter may do from where they stand."""
        return list(self._maneuvers_here())

    def _maneuvers_here(self) -> tuple[int, ...]:
        acts = self._maneuvers.get(self.distance)
        if acts is None:
            k = self.setup
            acts = tuple(available_maneuvers(self.distance, k.reach, k.combat.move_attack_metres, k.ranged))
            self._maneuvers[self.distance] = acts
        return acts

    def _spend_actions(self, seat: int) -> tuple[int, ...]:
        """Rule 5: the "spend k pool dice" ids open to a fighter, k = 0 up to the pool dice that can be spent."""
        pool = self.f[seat].pool
        table = self.setup.spend_actions
        acts = table.get(pool)
        if acts is None:
            acts = table[pool] = tuple(range(DUEL_SPEND_0, DUEL_SPEND_0 + self.spendable(seat) + 1))
        return acts

    def legal_actions(self) -> list[int]:
        return list(self.legal_tuple())

    def legal_tuple(self) -> tuple[int, ...]:
        """The legal ids, from ``_legal``: the node's legal tuple, worked out on the first ask at the node.

        ``apply_action`` and ``apply_chance`` clear it (``None``) before they move the game, so it never
        outlives its node; a tuple of ids is immutable, so clones may share it. Worked out from the phase
        (Rule 14 maneuvers, Rule 5 spends) with the tables of :meth:`_maneuvers_here` and :meth:`_spend_actions`
        read here directly, one call per first ask; their methods fill an entry the first time it is missed.
        """
        legal = self._legal
        if legal is None:
            if self._outcome is not None:
                legal = ()
            elif self.phase is MANEUVER:  # (a kept tuple is never empty: Aim is always open, a spend of 0 too)
                legal = self._maneuvers.get(self.distance) or self._maneuvers_here()
            elif (seat := self._player) >= 0:
                legal = self.setup.spend_actions.get(self.f[seat].pool) or self._spend_actions(seat)
            else:
                legal = ()
            self._legal = legal
        return legal  # the node's kept tuple itself

    def action_label(self, action: int) -> str:
        return maneuver_label(action)

    def option_of(self, action: int) -> str | None:
        seat = self.decider()
        return maneuver_option(action, self.spendable(seat) if seat >= 0 else 0)

    def apply_action(self, action: int) -> None:
        """Check the id against the node's legal tuple, then apply it: a maneuver (Rule 14) or a spend.

        The attack and defence spends, one small step each, are written here rather than in methods of their
        own (one call fewer for every spend).
        """
        legal = self._legal
        if legal is None:
            legal = self.legal_tuple()
        if action not in legal:
            raise IllegalActionError(f"illegal action {action} ({self.action_label(action)}) in {self.phase.name}")
        self._legal = None
        ph = self.phase
        if ph is MANEUVER:
            self._maneuver(MANEUVERS[action])
        elif ph is ATTACK_SPEND:  # Rules 2, 5, 14: the attacker's dice with k pool dice; stored aim goes on it
            ex = self.ex
            assert ex is not None
            k = ex.att_spent = action - DUEL_SPEND_0
            a = ex.attacker
            ex.att_dice = self.attack_pool(a, ex.maneuver, k)
            self.f[a].aim = 0  # Rule 14: stored aim is used on this attack
            defender = 1 - a
            ex.can_defend = open_to_defence = can_defend(self.f[defender].all_out_attack)
            if open_to_defence:
                self.phase = DEFENSE_SPEND
                self._player = defender
            else:
                if self.narrating:
                    self.narrate("open", f"{self.name(defender)} attacked all-out and cannot defend.", defender)
                self.phase = ATTACK_ROLL
                self._player = CHANCE
        elif ph is DEFENSE_SPEND:  # Rules 2, 5, 13/14: the defender's dice with k pool dice
            ex = self.ex
            assert ex is not None
            k = ex.def_spent = action - DUEL_SPEND_0
            ex.def_dice = self.defense_pool(1 - ex.attacker, ex.maneuver is CALLED_SHOT, k)
            self.phase = ATTACK_ROLL
            self._player = CHANCE
        else:  # CHECK_SPEND: the only other phase with legal actions
            self._check_spend(action - DUEL_SPEND_0)

    def finish(self, winner: int | None, reason: EndReason, returns: Sequence[float], detail: str = "") -> None:
        """The game ends (:meth:`State.finish`); nobody moves any more."""
        super().finish(winner, reason, returns, detail)
        self._player = TERMINAL

    # -- turns ------------------------------------------------------------------------------------------
    def _end_turn(self) -> None:
        """The turn passes (Rule 14): effects lasting "until your next turn" end; a stunned fighter loses it.

        One loop rather than a turn-start method calling back here for every lost turn: a turn change is one
        call. The first turn needs none of it (fresh fighters hold no effects and are not stunned).
        """
        f, max_turns = self.f, self.setup.max_turns
        while True:
            self.ex = None
            self.turn += 1
            if self.turn >= max_turns:
                self.phase = Phase.OVER
                self.finish(None, EndReason.TIME_LIMIT, [0.0, 0.0], f"both still standing after {self.turn} turns")
                return
            self.active = me = 1 - self.active
            fi = f[me]
            fi.all_out_attack = fi.all_out_defense = fi.ready = fi.cover = False
            if not fi.stunned:
                self.phase = MANEUVER
                self._player = me
                return
            fi.stunned = False
            if self.narrating:
                self.narrate("stun", f"{self.name(me)} is stunned and loses the turn.", me)

    def _maneuver(self, m: Maneuver) -> None:
        """Rule 14: apply a maneuver; attacks open an exchange (Rule 13)."""
        me = self.active
        fi = self.f[me]
        talk = self.narrating
        if m is ATTACK or m is CALLED_SHOT or m is ALL_OUT_ATTACK:  # the maneuvers picked most: tested first
            self._open_attack(me, m)
            return
        if m is AIM:
            fi.aim = add_aim(fi.aim, self.setup.combat)
            if talk:
                self.narrate("aim", f"{self.name(me)} aims (+{fi.aim} attack dice stored).", me)
        elif m is ALL_OUT_DEFENSE:
            fi.all_out_defense = True
            if talk:
                self.narrate("defend", f"{self.name(me)} goes all-out on defence.", me)
        elif m is READY:
            fi.ready = True
            if talk:
                self.narrate("ready", f"{self.name(me)} readies to strike first.", me)
        elif m is COVER:
            fi.cover = True
            if talk:
                self.narrate("cover", f"{self.name(me)} takes cover.", me)
        elif m is MOVE:
            self.distance = distance_after_move(self.distance, self.setup.combat.move_metres, self.setup.reach)
            if talk:
                self.narrate("move", f"{self.name(me)} moves in ({self.distance} m apart).", me)
            if self._ready_strike(me, follow_up=False):
                return
        else:
            if m is MOVE_ATTACK:
                self.distance = self.setup.reach
                if talk:
                    self.narrate("move", f"{self.name(me)} closes in to attack.", me)
                if self._ready_strike(me, follow_up=True):
                    return
            self._open_attack(me, m)
            return
        self._end_turn()

    def _ready_strike(self, mover: int, follow_up: bool) -> bool:
        """Rule 14 (Ready): a readied opponent strikes first when the mover comes into reach."""
        other = 1 - mover
        if not (self.f[other].ready and self.in_reach()):
            return False
        self.f[other].ready = False
        if self.narrating:
            self.narrate("ready", f"{self.name(other)} was ready and strikes first.", other)
        self._open_attack(other, ATTACK, ready_attack=True, follow_up=follow_up)
        return True

    def _open_attack(self, attacker: int, m: Maneuver, ready_attack: bool = False, follow_up: bool = False) -> None:
        self.ex = Exchange(attacker, m, ready_attack, follow_up)
        if m is ALL_OUT_ATTACK:
            self.f[attacker].all_out_attack = True
        if self.narrating:
            self.narrate("attack", f"{self.name(attacker)} {ATTACK_VERBS[m]}.", attacker, maneuver=m.name.lower())
        self.phase = ATTACK_SPEND
        self._player = attacker

    def _check_spend(self, k: int) -> None:
        """Rule 17: the stay-up roll, built as in Rule 2, with k pool dice."""
        self.check_spent = k
        assert self.checker is not None
        self.check_dice = self._roll_pool(self.checker, self.setup.stay_up_use, STAY_UP, k, 0)
        self.phase = CHECK_ROLL
        self._player = CHANCE

    # -- chance ---------------------------------------------------------------------------------------
    def _dice_now(self) -> int:
        ph = self.phase
        if ph is CHECK_ROLL:
            return self.check_dice.total
        assert self.ex is not None
        return self.ex.att_dice.total if ph is ATTACK_ROLL else self.ex.def_dice.total

    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        if self.phase == Phase.ROLL_OFF:
            return list(ROLL_OFF_OUTCOMES)
        if self.phase in (Phase.ATTACK_ROLL, Phase.DEFENSE_ROLL, Phase.CHECK_ROLL):
            return list(roll_distribution(self._dice_now(), self.setup.success_on))
        raise ValueError("not a chance node")

    def sample_chance(self, rng: Rng) -> Hashable:
        ph = self.phase  # _dice_now() inlined: one chance node a step
        if ph is ATTACK_ROLL:
            n = self.ex.att_dice.total  # type: ignore[union-attr]
        elif ph is DEFENSE_ROLL:
            n = self.ex.def_dice.total  # type: ignore[union-attr]
        elif ph is CHECK_ROLL:
            n = self.check_dice.total
        elif ph is ROLL_OFF:
            return sample_roll_off(rng)
        else:
            n = self._dice_now()
        return sample_roll(rng, n, self.setup.success_on)

    def force_faces(self, faces: tuple[int, ...] | list[int]) -> None:
        """Apply a roll given as d6 faces (golden tests)."""
        if self.phase == Phase.ROLL_OFF:
            a, b = faces
            self.apply_chance(RollOff(0) if a > b else RollOff(1) if b > a else RollOff(None))
            return
        if len(faces) != self._dice_now():
            raise ValueError(f"expected {self._dice_now()} faces, got {len(faces)}")
        self.apply_chance(read_faces(faces, self.setup.success_on))

    def apply_chance(self, outcome: Hashable) -> None:
        """Apply a roll: the attack's, the defence's, a roll-off's or a stay-up check's.

        Once an exchange's dice are in (both rolls, or the attack's alone against a fighter who cannot defend)
        Rule 13 resolves it here, not in a method of its own: one call fewer per exchange.
        """
        self._legal = None  # a chance node's (empty) legal tuple ends with it
        ph = self.phase
        roll = outcome if type(outcome) is Roll else None
        ex = self.ex
        if ph is ATTACK_ROLL:
            assert ex is not None
            att_roll = ex.att_roll = roll or Roll(*outcome)  # type: ignore[misc]
            if ex.can_defend:
                self.phase = DEFENSE_ROLL
                return
            def_successes = None
        elif ph is DEFENSE_ROLL:
            assert ex is not None and ex.att_roll is not None
            att_roll = ex.att_roll
            def_roll = ex.def_roll = roll or Roll(*outcome)  # type: ignore[misc]
            def_successes = def_roll.successes
        elif ph is ROLL_OFF:
            ro = outcome if isinstance(outcome, RollOff) else RollOff(outcome)  # type: ignore[arg-type]
            if ro.winner is None:
                self.narrate("roll_off", "The roll-off is tied; roll again.", None)
                return
            if ro.winner == 0:  # the attacker wins the roll-off: a hit by 1 (Rule 11 settles Rule 13's tie)
                self._land(True, *self.setup.wound(1, ex.maneuver is CALLED_SHOT))  # type: ignore[union-attr]
            else:
                self._land(False)
            return
        elif ph is CHECK_ROLL:
            self._resolve_check(roll or Roll(*outcome))  # type: ignore[misc]
            return
        else:
            raise ValueError("not a chance node")
        # Rule 13: compare successes after wound penalties; only MORE successes hit. The comparison and the
        # wound it deals come from _DuelSetup.exchange_result, whose memo is read here directly.
        k = self.setup
        a = ex.attacker
        d = 1 - a
        f = self.f
        att_penalty, def_penalty, called = f[a].penalty, f[d].penalty, ex.maneuver is CALLED_SHOT
        known = k._results.get(  # result_key(), inlined
            (
                att_roll.successes - att_penalty,
                None if def_successes is None else def_successes - def_penalty,
                called,
            )
        )
        if known is None:
            known = k.exchange_result(att_roll.successes, def_successes, att_penalty, def_penalty, called)
        att, dfn, result, margin, row = known
        if self.narrating:
            attack = f"{self.name(a)} rolls {dice_phrase(ex.att_dice.total)} ({ex.att_dice.description})"
            defence = (
                f"{self.name(d)} defends with {dice_phrase(ex.def_dice.total)} ({ex.def_dice.description})"
                if ex.can_defend
                else f"{self.name(d)} cannot defend"
            )
            self.narrate(
                "exchange",
                f"{attack}: {successes_phrase(att)}; {defence}: {successes_phrase(dfn)}.",
                a,
                attack=att,
                defense=dfn,
            )
        if result is HIT:
            self._land(True, margin, row)
        elif result is TIE_ROLL_OFF:
            self.phase = ROLL_OFF
        else:
            self._land(False)

    # -- resolution -------------------------------------------------------------------------------------
    def _land(self, hit: bool, margin: int = 0, row: WoundRow | None = None) -> None:
        """Rules 16–18: settle both pools, apply the wound, check death and consciousness.

        A hit comes with the margin it lands by (a called shot's bonus included) and its wound row.
        """
        ex, k = self.ex, self.setup
        c = k.combat
        assert ex is not None
        a, d = ex.attacker, 1 - ex.attacker
        fa, fd = self.f[a], self.f[d]
        if k.pool_enabled:  # Rule 18 from the setup's two memos, read here directly (its method fills a miss)
            att = k._attacker_pools.get((fa.pool, ex.att_spent, hit))
            dfn = k._defender_pools.get((fd.pool, ex.def_spent, ex.can_defend, hit))
            if att is None or dfn is None:
                att, dfn = k.exchange_pools(fa.pool, ex.att_spent, fd.pool, ex.def_spent, ex.can_defend, hit)
            fa.pool, fd.pool = att, dfn
        talk = self.narrating
        if not hit:
            if talk:
                pools = f"pools {self.name(0)} {self.f[0].pool}, {self.name(1)} {self.f[1].pool}"
                self.narrate("miss", f"{self.name(a)} misses ({pools}).", a)
            self._after_exchange()
            return
        assert row is not None
        fd.hp -= row.hp_loss
        fd.wounds = (*fd.wounds, row.penalty)
        fd.penalty = wound_penalty(fd.wounds, c)
        if wound_stuns(row, c):
            fd.stunned = True
        if talk:
            pools = f"pools {self.name(0)} {self.f[0].pool}, {self.name(1)} {self.f[1].pool}"
            self.narrate(
                "wound",
                f"Hit by {margin}: a {row.name} wound, −{row.hp_loss} HP "
                f"({self.name(d)} at {fd.hp} HP, −{self.penalty(d)} on rolls; {pools}).",
                a,
                margin=margin,
                wound=row.name,
            )
        standing = standing_after(fd.hp, c)
        if standing is DEAD:
            self.phase = Phase.OVER
            if talk:
                self.narrate("dead", f"{self.name(d)} is dead.", d)
            self.finish(a, EndReason.KNOCKOUT, self._win_for(a), f"{self.name(d)} died at {fd.hp} HP")
            return
        if consciousness_check_due(standing, fd.below_zero, c):
            fd.below_zero = True
            self._open_check(d)
            return
        fd.below_zero = standing is BELOW_ZERO
        self._after_exchange()

    def _open_check(self, seat: int) -> None:
        """Rule 17: below zero, roll to stay up (pool dice allowed if configured), ignoring wound penalties."""
        self.checker = seat
        if self.narrating:
            self.narrate("check", f"{self.name(seat)} is below zero and rolls to stay conscious.", seat)
        if self.setup.check_pool_dice:
            self.phase = CHECK_SPEND
            self._player = seat
        else:
            self._check_spend(0)

    def _resolve_check(self, roll: Roll) -> None:
        """Rule 17: pass and stay up (Rule 5 settles the pool, Rule 10 may give a perk), fail and fall."""
        seat, k = self.checker, self.setup
        assert seat is not None
        diff = k.check_difficulty
        ok = passes(roll.successes, diff)  # Rule 17: wound penalties are ignored
        fi = self.f[seat]
        if k.pool_enabled:
            fi.pool = settle_pool(fi.pool, self.check_spent, ok, k.pool_rules)
        if self.narrating:
            self.narrate(
                "check",
                f"{self.name(seat)} rolls {dice_phrase(self.check_dice.total)} to stay up: "
                f"{successes_phrase(roll.successes)} vs difficulty {diff} — "
                f"{'stays up' if ok else 'passes out'}.",
                seat,
            )
        if ok and perk_eligible(roll, diff):
            fi.char = fi.char.copy()  # the fighter's own sheet before it changes (copies share one until then)
            if award_perk(fi.char, STAY_UP, self.cfg):
                self.narrate("perk", f"{self.name(seat)} earns a perk for staying up (Rule 10).", seat)
        self.checker = None
        if not ok:
            self.phase = Phase.OVER
            w = 1 - seat
            self.finish(w, EndReason.KNOCKOUT, self._win_for(w), f"{self.name(seat)} fell unconscious")
            return
        self._after_exchange()

    def _after_exchange(self) -> None:
        ex = self.ex
        assert ex is not None
        if ex.ready_attack and ex.follow_up:
            mover = 1 - ex.attacker
            self._open_attack(mover, MOVE_ATTACK)
            return
        self._end_turn()

    @staticmethod
    def _win_for(winner: int) -> list[float]:
        return [1.0 if s == winner else -1.0 for s in range(2)]

    # -- analysis ------------------------------------------------------------------------------------
    def resources(self, seat: int) -> dict[str, float]:
        fi = self.f[seat]
        return {"pool": float(fi.pool), "hp": float(fi.hp), "aim": float(fi.aim)}

    def key(self) -> Hashable:
        return (
            self.phase,
            self.turn,
            self.active,
            self.distance,
            self.f[0].key(self.setup.sheet_key(self.f[0].char)),
            self.f[1].key(self.setup.sheet_key(self.f[1].char)),
            None if self.ex is None else self.ex.key(),
            self.checker,
            self.check_spent,
            self._outcome,
        )

    def clone(self) -> DuelState:
        # shallow: the config and the logged events are immutable, the caches hold values valid for every copy;
        # the fighters and the exchange in progress are copied (their sheets are shared until a perk changes one)
        cls = self.__class__
        new = cls.__new__(cls)
        new.__dict__.update(self.__dict__)
        new.f = [self.f[0].copy(), self.f[1].copy()]
        if self.ex is not None:
            new.ex = self.ex.copy()
        new.log = list(self.log)
        return new

    observation = duel_observation
    """The seat's view (:func:`duel_observation` is the method itself: one call per observation, not two)."""


def new_duel(cfg: BaseModel) -> DuelState:
    """The scenario's deterministic start (setup randomness comes through chance nodes)."""
    if not isinstance(cfg, BlackbirdConfig):
        raise TypeError(f"expected a BlackbirdConfig, got {type(cfg).__name__}")
    return DuelState(cfg)


__all__ = ["OBS_SIZE", "DuelState", "Fighter", "Phase", "new_duel"]

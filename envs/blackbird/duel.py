"""The Duel scenario: two combatants trade maneuvers until one dies, passes out, or time runs out.

Each turn the active fighter picks a maneuver (Rule 14); in an attack (Rule 13) the attacker and
then the defender choose how many pool dice to add (Rule 18). Wounds (Rule 16) take successes off
every roll; below zero hit points a fighter rolls to stay conscious (Rule 17).
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel

from envs.blackbird.config import MAX_POOL, BlackbirdConfig, RollUse
from envs.blackbird.dice import (
    ROLL_OFF_OUTCOMES,
    Roll,
    RollOff,
    read_faces,
    roll_distribution,
    sample_roll,
    sample_roll_off,
)
from envs.blackbird.engine import (
    DUEL_ACTIONS,
    SPEND_ACTIONS,
    Character,
    Maneuver,
    Pool,
    Standing,
    add_aim,
    attack_hits,
    attack_maneuver_dice,
    award_perk,
    best_trait,
    build_pool,
    combat_pass,
    create_character,
    defense_maneuver_dice,
    effective_difficulty,
    net_successes,
    passes,
    perk_eligible,
    settle_pool,
    spend_label,
    spend_option,
    standing_after,
    starting_pool,
    wound_for_margin,
    wound_penalty,
)
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State

STAY_UP = "stay up"


def successes(n: int) -> str:
    return f"{n} success{'' if n == 1 else 'es'}"


def dice(n: int) -> str:
    return f"{n} {'die' if n == 1 else 'dice'}"


class Phase(enum.IntEnum):
    MANEUVER = 0
    ATTACK_SPEND = 1
    DEFENSE_SPEND = 2
    CHECK_SPEND = 3
    ATTACK_ROLL = 4  # chance
    DEFENSE_ROLL = 5  # chance
    ROLL_OFF = 6  # chance (only if combat.tie_misses is off)
    CHECK_ROLL = 7  # chance
    OVER = 8


DECISIONS = (Phase.MANEUVER, Phase.ATTACK_SPEND, Phase.DEFENSE_SPEND, Phase.CHECK_SPEND)
OBS_SIZE = 39
FIGHTER_OBS = 10


@dataclass
class Fighter:
    """A combatant's state: sheet, hit points, pool, wounds, and the maneuvers still in effect."""

    char: Character
    hp: int
    pool: int
    wounds: list[int] = field(default_factory=list)  # penalties of the wounds taken
    aim: int = 0
    all_out_attack: bool = False  # cannot defend until their next turn
    all_out_defense: bool = False
    ready: bool = False
    cover: bool = False
    stunned: bool = False
    below_zero: bool = False

    def copy(self) -> Fighter:
        return Fighter(self.char.copy(), self.hp, self.pool, list(self.wounds), self.aim, self.all_out_attack,
                       self.all_out_defense, self.ready, self.cover, self.stunned, self.below_zero)

    def key(self) -> tuple[object, ...]:
        return (self.char.key(), self.hp, self.pool, tuple(self.wounds), self.aim, self.all_out_attack,
                self.all_out_defense, self.ready, self.cover, self.stunned, self.below_zero)


@dataclass
class Exchange:
    """One attack in progress (Rule 13)."""

    attacker: int
    maneuver: Maneuver
    ready_attack: bool = False  # a readied fighter striking a mover (Rule 14)
    follow_up: bool = False  # the mover's own move & attack comes after the ready attack
    att_dice: Pool = field(default_factory=Pool)
    def_dice: Pool = field(default_factory=Pool)
    att_spent: int = 0
    def_spent: int = 0
    att_roll: Roll | None = None
    def_roll: Roll | None = None
    can_defend: bool = True

    def copy(self) -> Exchange:
        return copy.copy(self)

    def key(self) -> tuple[object, ...]:
        return (self.attacker, self.maneuver, self.ready_attack, self.follow_up, self.att_dice, self.def_dice,
                self.att_spent, self.def_spent, self.att_roll, self.def_roll, self.can_defend)


class DuelState(State):
    """Two Blackbird combatants in a melee (or, with ``duel.ranged``, a firefight with cover)."""

    def __init__(self, cfg: BlackbirdConfig) -> None:
        super().__init__(2)
        self.cfg = cfg
        pool0 = starting_pool(cfg.pool)
        self.f = [Fighter(create_character(s), cfg.combat.hit_points, pool0) for s in cfg.duel.fighters]
        self.distance = cfg.duel.start_distance
        self.turn = 0
        self.active = 0
        self.phase = Phase.MANEUVER
        self.ex: Exchange | None = None
        self.checker = -1  # who is rolling to stay conscious
        self.check_spent = 0
        self.check_dice = Pool()
        self.narrate("start", f"{self.f[0].char.name} faces {self.f[1].char.name}, {self.distance} m apart; "
                              f"{cfg.combat.hit_points} hit points and {pool0} pool dice each.", None)
        self._start_turn()

    # -- helpers --------------------------------------------------------------------------------------
    def name(self, seat: int) -> str:
        return self.f[seat].char.short

    def in_reach(self) -> bool:
        return self.distance <= self.cfg.duel.reach

    def penalty(self, seat: int) -> int:
        return wound_penalty(self.f[seat].wounds, self.cfg.combat)

    def _roll_pool(self, seat: int, use: RollUse, kind: str, spend: int, extra: int, base: bool = True) -> Pool:
        char = self.f[seat].char
        t = best_trait(self.cfg, char, use.traits, use.tags)
        return build_pool(self.cfg, char, t, use.traits, use.tags, use.flag, kind, (), spend, 0, extra, base)

    def attack_pool(self, seat: int, maneuver: Maneuver, spend: int = 0) -> Pool:
        """Rule 2 + 14: the attacker's dice for a maneuver (move & attack drops the base die)."""
        extra = attack_maneuver_dice(maneuver, self.f[seat].aim, self.cfg.combat)
        base = maneuver != Maneuver.MOVE_ATTACK or self.cfg.combat.move_attack_base_die
        return self._roll_pool(seat, self.cfg.duel.attack, "attack", spend, extra, base)

    def defense_pool(self, seat: int, called_shot: bool, spend: int = 0) -> Pool:
        """Rule 2 + 13/14: the defender's dice (all-out defence, cover, a called shot against them)."""
        fi = self.f[seat]
        extra = defense_maneuver_dice(fi.all_out_defense, fi.cover, called_shot, self.cfg.combat)
        return self._roll_pool(seat, self.cfg.duel.defense, "defense", spend, extra)

    def spendable(self, seat: int) -> int:
        return min(self.f[seat].pool, MAX_POOL) if self.cfg.pool.enabled else 0

    def decider(self) -> int:
        if self.phase == Phase.MANEUVER:
            return self.active
        if self.phase == Phase.ATTACK_SPEND:
            assert self.ex is not None
            return self.ex.attacker
        if self.phase == Phase.DEFENSE_SPEND:
            assert self.ex is not None
            return 1 - self.ex.attacker
        if self.phase == Phase.CHECK_SPEND:
            return self.checker
        return CHANCE

    # -- protocol -------------------------------------------------------------------------------------
    def current_player(self) -> int:
        if self._outcome is not None:
            return TERMINAL
        return self.decider()

    def decision_context(self) -> str:
        return {Phase.MANEUVER: "maneuver", Phase.ATTACK_SPEND: "attack_spend", Phase.DEFENSE_SPEND: "defense_spend",
                Phase.CHECK_SPEND: "consciousness_spend"}.get(self.phase, "chance")

    def legal_maneuvers(self) -> list[int]:
        """Rule 14: what the active fighter may do from where they stand."""
        c, d = self.cfg, self.cfg.duel
        acts = [Maneuver.AIM, Maneuver.ALL_OUT_DEFENSE]
        if self.in_reach():
            acts += [Maneuver.ATTACK, Maneuver.CALLED_SHOT, Maneuver.ALL_OUT_ATTACK]
        else:
            acts += [Maneuver.MOVE, Maneuver.READY]
            if self.distance - c.combat.move_attack_metres <= d.reach:
                acts.append(Maneuver.MOVE_ATTACK)
        if d.ranged:
            acts.append(Maneuver.COVER)
        return sorted(int(a) for a in acts)

    def legal_actions(self) -> list[int]:
        if self._outcome is not None:
            return []
        ph = self.phase
        if ph == Phase.MANEUVER:
            return self.legal_maneuvers()
        if ph in (Phase.ATTACK_SPEND, Phase.DEFENSE_SPEND, Phase.CHECK_SPEND):
            return list(range(self.spendable(self.decider()) + 1))
        return []

    def action_label(self, action: int) -> str:
        if 0 <= action < SPEND_ACTIONS:
            return spend_label(action)
        return Maneuver(action).name.lower().replace("_", " ")

    def option_of(self, action: int) -> str | None:
        if 0 <= action < SPEND_ACTIONS:
            seat = self.decider()
            return spend_option(action, self.spendable(seat) if seat >= 0 else 0)
        return Maneuver(action).name.lower()

    def apply_action(self, action: int) -> None:
        if action not in self.legal_actions():
            raise IllegalActionError(f"illegal action {action} ({self.action_label(action)}) in {self.phase.name}")
        ph = self.phase
        if ph == Phase.MANEUVER:
            self._maneuver(Maneuver(action))
        elif ph == Phase.ATTACK_SPEND:
            self._attack_spend(action)
        elif ph == Phase.DEFENSE_SPEND:
            self._defense_spend(action)
        elif ph == Phase.CHECK_SPEND:
            self._check_spend(action)

    # -- turns ------------------------------------------------------------------------------------------
    def _start_turn(self) -> None:
        """Rule 14: effects lasting "until your next turn" end; a stunned fighter loses this turn."""
        fi = self.f[self.active]
        fi.all_out_attack = fi.all_out_defense = fi.ready = fi.cover = False
        if fi.stunned:
            fi.stunned = False
            self.narrate("stun", f"{self.name(self.active)} is stunned and loses the turn.", self.active)
            self._end_turn()
            return
        self.phase = Phase.MANEUVER

    def _end_turn(self) -> None:
        self.ex = None
        self.turn += 1
        if self.turn >= self.cfg.duel.max_turns:
            self.phase = Phase.OVER
            self.finish(None, EndReason.TIME_LIMIT, [0.0, 0.0], f"both still standing after {self.turn} turns")
            return
        self.active = 1 - self.active
        self._start_turn()

    def _maneuver(self, m: Maneuver) -> None:
        """Rule 14: apply a maneuver; attacks open an exchange (Rule 13)."""
        me, fi, c = self.active, self.f[self.active], self.cfg.combat
        who = self.name(me)
        if m == Maneuver.AIM:
            fi.aim = add_aim(fi.aim, c)
            self.narrate("aim", f"{who} aims (+{fi.aim} attack dice stored).", me)
        elif m == Maneuver.ALL_OUT_DEFENSE:
            fi.all_out_defense = True
            self.narrate("defend", f"{who} goes all-out on defence.", me)
        elif m == Maneuver.READY:
            fi.ready = True
            self.narrate("ready", f"{who} readies to strike first.", me)
        elif m == Maneuver.COVER:
            fi.cover = True
            self.narrate("cover", f"{who} takes cover.", me)
        elif m == Maneuver.MOVE:
            self.distance = max(self.cfg.duel.reach, self.distance - c.move_metres)
            self.narrate("move", f"{who} moves in ({self.distance} m apart).", me)
            if self._ready_strike(me, follow_up=False):
                return
        else:
            if m == Maneuver.MOVE_ATTACK:
                self.distance = self.cfg.duel.reach
                self.narrate("move", f"{who} closes in to attack.", me)
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
        self.narrate("ready", f"{self.name(other)} was ready and strikes first.", other)
        self._open_attack(other, Maneuver.ATTACK, ready_attack=True, follow_up=follow_up)
        return True

    def _open_attack(self, attacker: int, m: Maneuver, ready_attack: bool = False, follow_up: bool = False) -> None:
        self.ex = Exchange(attacker, m, ready_attack, follow_up)
        fa = self.f[attacker]
        if m == Maneuver.ALL_OUT_ATTACK:
            fa.all_out_attack = True
        what = {Maneuver.ATTACK: "attacks", Maneuver.CALLED_SHOT: "makes a called shot",
                Maneuver.ALL_OUT_ATTACK: "attacks all-out", Maneuver.MOVE_ATTACK: "attacks on the move"}[m]
        self.narrate("attack", f"{self.name(attacker)} {what}.", attacker, maneuver=m.name.lower())
        self.phase = Phase.ATTACK_SPEND

    def _attack_spend(self, k: int) -> None:
        ex = self.ex
        assert ex is not None
        ex.att_spent = k
        ex.att_dice = self.attack_pool(ex.attacker, ex.maneuver, k)
        self.f[ex.attacker].aim = 0  # Rule 14: stored aim is used on this attack
        defender = 1 - ex.attacker
        ex.can_defend = not self.f[defender].all_out_attack
        if ex.can_defend:
            self.phase = Phase.DEFENSE_SPEND
        else:
            self.narrate("open", f"{self.name(defender)} attacked all-out and cannot defend.", defender)
            self.phase = Phase.ATTACK_ROLL

    def _defense_spend(self, k: int) -> None:
        ex = self.ex
        assert ex is not None
        ex.def_spent = k
        ex.def_dice = self.defense_pool(1 - ex.attacker, ex.maneuver == Maneuver.CALLED_SHOT, k)
        self.phase = Phase.ATTACK_ROLL

    def _check_spend(self, k: int) -> None:
        self.check_spent = k
        self.check_dice = self._roll_pool(self.checker, self.cfg.duel.stay_up, STAY_UP, k, 0)
        self.phase = Phase.CHECK_ROLL

    # -- chance ---------------------------------------------------------------------------------------
    def _dice_now(self) -> int:
        if self.phase == Phase.CHECK_ROLL:
            return self.check_dice.total
        assert self.ex is not None
        return self.ex.att_dice.total if self.phase == Phase.ATTACK_ROLL else self.ex.def_dice.total

    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        if self.phase == Phase.ROLL_OFF:
            return list(ROLL_OFF_OUTCOMES)
        if self.phase in (Phase.ATTACK_ROLL, Phase.DEFENSE_ROLL, Phase.CHECK_ROLL):
            return list(roll_distribution(self._dice_now(), self.cfg.dice.success_on))
        raise ValueError("not a chance node")

    def sample_chance(self, rng: Rng) -> Hashable:
        if self.phase == Phase.ROLL_OFF:
            return sample_roll_off(rng)
        return sample_roll(rng, self._dice_now(), self.cfg.dice.success_on)

    def force_faces(self, faces: tuple[int, ...] | list[int]) -> None:
        """Apply a roll given as d6 faces (golden tests)."""
        if self.phase == Phase.ROLL_OFF:
            a, b = faces
            self.apply_chance(RollOff(0) if a > b else RollOff(1) if b > a else RollOff(None))
            return
        if len(faces) != self._dice_now():
            raise ValueError(f"expected {self._dice_now()} faces, got {len(faces)}")
        self.apply_chance(read_faces(faces, self.cfg.dice.success_on))

    def apply_chance(self, outcome: Hashable) -> None:
        ph = self.phase
        if ph == Phase.ATTACK_ROLL:
            ex = self.ex
            assert ex is not None
            ex.att_roll = Roll(*outcome)  # type: ignore[misc]
            if ex.can_defend:
                self.phase = Phase.DEFENSE_ROLL
            else:
                self._resolve_attack()
        elif ph == Phase.DEFENSE_ROLL:
            assert self.ex is not None
            self.ex.def_roll = Roll(*outcome)  # type: ignore[misc]
            self._resolve_attack()
        elif ph == Phase.ROLL_OFF:
            ro = outcome if isinstance(outcome, RollOff) else RollOff(outcome)  # type: ignore[arg-type]
            if ro.winner is None:
                self.narrate("roll_off", "The roll-off is tied; roll again.", None)
                return
            self._land(ro.winner == 0, 1)
        elif ph == Phase.CHECK_ROLL:
            self._resolve_check(Roll(*outcome))  # type: ignore[misc]
        else:
            raise ValueError("not a chance node")

    # -- resolution -------------------------------------------------------------------------------------
    def _resolve_attack(self) -> None:
        """Rule 13: compare successes after wound penalties; only MORE successes hit."""
        ex = self.ex
        assert ex is not None and ex.att_roll is not None
        a, d = ex.attacker, 1 - ex.attacker
        att = net_successes(ex.att_roll, self.penalty(a))
        if ex.can_defend:
            assert ex.def_roll is not None
            dfn = net_successes(ex.def_roll, self.penalty(d))
        else:
            dfn = self.cfg.combat.all_out_attack_defense
        defence = (f"{self.name(d)} defends with {dice(ex.def_dice.total)} ({ex.def_dice.describe()}): "
                   f"{successes(dfn)}" if ex.can_defend else f"{self.name(d)} cannot defend: {successes(dfn)}")
        self.narrate("exchange", f"{self.name(a)} rolls {dice(ex.att_dice.total)} ({ex.att_dice.describe()}): "
                                 f"{successes(att)}; {defence}.", a, attack=att, defense=dfn)
        if attack_hits(att, dfn):
            self._land(True, att - dfn)
        elif att == dfn and not self.cfg.combat.tie_misses and self.cfg.contest.rolloff_on_tie:
            self.phase = Phase.ROLL_OFF
        else:
            self._land(False, 0)

    def _land(self, hit: bool, margin: int) -> None:
        """Rules 16–18: settle both pools, apply the wound, check death and consciousness."""
        ex, c = self.ex, self.cfg.combat
        assert ex is not None
        a, d = ex.attacker, 1 - ex.attacker
        if self.cfg.pool.enabled:
            self.f[a].pool = settle_pool(self.f[a].pool, ex.att_spent, combat_pass(hit, True), self.cfg.pool)
            if ex.can_defend:
                self.f[d].pool = settle_pool(self.f[d].pool, ex.def_spent, combat_pass(hit, False), self.cfg.pool)
        pools = f"pools {self.name(0)} {self.f[0].pool}, {self.name(1)} {self.f[1].pool}"
        if not hit:
            self.narrate("miss", f"{self.name(a)} misses ({pools}).", a)
            self._after_exchange()
            return
        if ex.maneuver == Maneuver.CALLED_SHOT:
            margin += c.called_shot_margin_bonus
        row = wound_for_margin(margin, c)
        assert row is not None
        fd = self.f[d]
        fd.hp -= row.hp_loss
        fd.wounds.append(row.penalty)
        if c.heavy_stuns and row.penalty >= 2:
            fd.stunned = True
        self.narrate("wound", f"Hit by {margin}: a {row.name} wound, −{row.hp_loss} HP "
                              f"({self.name(d)} at {fd.hp} HP, −{self.penalty(d)} on rolls; {pools}).", a,
                     margin=margin, wound=row.name)
        standing = standing_after(fd.hp, c)
        if standing == Standing.DEAD:
            self.phase = Phase.OVER
            self.narrate("dead", f"{self.name(d)} is dead.", d)
            self.finish(a, EndReason.KNOCKOUT, [1.0 if s == a else -1.0 for s in range(2)],
                        f"{self.name(d)} died at {fd.hp} HP")
            return
        if standing == Standing.BELOW_ZERO and (not fd.below_zero or c.check_after_each_hit):
            fd.below_zero = True
            self._open_check(d)
            return
        fd.below_zero = standing == Standing.BELOW_ZERO
        self._after_exchange()

    def _open_check(self, seat: int) -> None:
        """Rule 17: below zero, roll to stay up (pool dice allowed if configured), ignoring wound penalties."""
        self.checker = seat
        self.narrate("check", f"{self.name(seat)} is below zero and rolls to stay conscious.", seat)
        if self.cfg.combat.consciousness_pool_dice and self.cfg.pool.enabled:
            self.phase = Phase.CHECK_SPEND
        else:
            self._check_spend(0)

    def _resolve_check(self, roll: Roll) -> None:
        seat, c = self.checker, self.cfg.combat
        diff = effective_difficulty(self.cfg, c.consciousness_difficulty, ())
        ok = passes(roll.successes, diff)  # Rule 17: wound penalties are ignored
        fi = self.f[seat]
        if self.cfg.pool.enabled:
            fi.pool = settle_pool(fi.pool, self.check_spent, ok, self.cfg.pool)
        self.narrate("check", f"{self.name(seat)} rolls {dice(self.check_dice.total)} to stay up: "
                              f"{successes(roll.successes)} vs difficulty {diff} — "
                              f"{'stays up' if ok else 'passes out'}.", seat)
        if ok and perk_eligible(roll, diff) and award_perk(fi.char, STAY_UP, self.cfg):
            self.narrate("perk", f"{self.name(seat)} earns a perk for staying up (Rule 10).", seat)
        self.checker = -1
        if not ok:
            self.phase = Phase.OVER
            w = 1 - seat
            self.finish(w, EndReason.KNOCKOUT, [1.0 if s == w else -1.0 for s in range(2)],
                        f"{self.name(seat)} fell unconscious")
            return
        self._after_exchange()

    def _after_exchange(self) -> None:
        ex = self.ex
        assert ex is not None
        if ex.ready_attack and ex.follow_up:
            mover = 1 - ex.attacker
            self._open_attack(mover, Maneuver.MOVE_ATTACK)
            return
        self._end_turn()

    # -- analysis ------------------------------------------------------------------------------------
    def resources(self, seat: int) -> dict[str, float]:
        fi = self.f[seat]
        return {"pool": float(fi.pool), "hp": float(fi.hp), "aim": float(fi.aim)}

    def key(self) -> Hashable:
        return (self.phase, self.turn, self.active, self.distance, self.f[0].key(), self.f[1].key(),
                None if self.ex is None else self.ex.key(), self.checker, self.check_spent, self._outcome)

    def clone(self) -> DuelState:
        new = copy.copy(self)
        new.f = [fi.copy() for fi in self.f]
        new.ex = None if self.ex is None else self.ex.copy()
        new.log = list(self.log)
        return new

    def _fighter_obs(self, o: np.ndarray, at: int, seat: int) -> None:
        fi, c = self.f[seat], self.cfg.combat
        o[at] = max(-1.0, fi.hp / c.hit_points)
        o[at + 1] = fi.pool / self.cfg.pool.cap
        o[at + 2] = fi.aim / c.aim_max if c.aim_max else 0.0
        o[at + 3] = float(fi.all_out_attack)
        o[at + 4] = float(fi.all_out_defense)
        o[at + 5] = float(fi.ready)
        o[at + 6] = float(fi.cover)
        o[at + 7] = min(1.0, self.penalty(seat) / 3)
        o[at + 8] = float(fi.below_zero)
        o[at + 9] = float(fi.stunned)

    def observation(self, seat: int) -> np.ndarray:
        o = np.zeros(OBS_SIZE, dtype=np.float32)
        self._fighter_obs(o, 0, seat)
        self._fighter_obs(o, FIGHTER_OBS, 1 - seat)
        d = self.cfg.duel
        o[20] = min(1.0, self.distance / max(1, d.start_distance, d.reach))
        o[21] = float(self.in_reach())
        if self.phase in DECISIONS:
            o[22 + DECISIONS.index(self.phase)] = 1.0
        o[26] = float(self.active == seat)
        o[27] = self.turn / d.max_turns
        if self.ex is not None:
            o[28] = min(1.0, self.ex.att_dice.total / 20) if self.phase != Phase.ATTACK_SPEND else \
                min(1.0, self.attack_pool(self.ex.attacker, self.ex.maneuver).total / 20)
            o[29] = min(1.0, self.ex.def_dice.total / 20)
            o[30 + (self.ex.maneuver - Maneuver.ATTACK)] = 1.0
        return o


def new_duel(cfg: BaseModel) -> DuelState:
    """The scenario's deterministic start (setup randomness comes through chance nodes)."""
    if not isinstance(cfg, BlackbirdConfig):
        raise TypeError(f"expected a BlackbirdConfig, got {type(cfg).__name__}")
    return DuelState(cfg)


__all__ = ["DUEL_ACTIONS", "OBS_SIZE", "DuelState", "Phase", "new_duel"]

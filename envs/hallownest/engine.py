"""The Hallownest combat engine: a duel of two bugs, move by move (docs/rules/hallownest.md).

The state machine sequences the rule functions of :mod:`envs.hallownest.rules`. Reactions are
decisions of the defender's seat inside the attacker's turn: ``current_player()`` switches to the
defender for a defense, to a bug at Heart 0 for Death's Door vs unconscious, to the enemy for a
provoked attack, to the grappler to resist an escape, and to a dodging bug for its dodge move.
Every roll is a chance node whose outcome is a success count (or, for initiative, a face total).
"""

from __future__ import annotations

import enum
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State
from envs.hallownest import rules as R
from envs.hallownest.config import HallownestConfig
from envs.hallownest.dice import (
    initiative_outcomes,
    sample_initiative,
    sample_successes,
    success_outcomes,
)


# -- the action table ------------------------------------------------------------------------------
class Kind(enum.IntEnum):
    END_TURN = 0
    ATTACK = 1
    GRAPPLE = 2
    POGO = 3
    STEP = 4
    DASH = 5
    RETREAT = 6
    CLEAR_IMBALANCE = 7
    CLEAR_DELAYED = 8
    CLEAR_STATUS = 9
    ESCAPE = 10
    FOCUS = 11
    NO_DEFENSE = 12
    PARRY = 13
    DODGE = 14
    DEATHS_DOOR = 15
    UNCONSCIOUS = 16
    DECLINE = 17
    PROVOKED = 18
    RESIST = 19
    STAY = 20


@dataclass(frozen=True)
class ActionSpec:
    kind: Kind
    amount: int = 0  # invested Stamina / Soul
    direction: int = -1  # index into DIRECTIONS


DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (-1, 0), (0, -1), (0, 1), (1, -1), (-1, -1), (1, 1), (-1, 1))
DIR_NAMES = ("east", "west", "north", "south", "north-east", "north-west", "south-east", "south-west")
MAX_ATTACK_INVEST = 7
MAX_SMALL_INVEST = 3  # grapple, pogo (1..3) and escape / resist (0..3)
MAX_DEFENSE_INVEST = 6
MAX_FOCUS = 7


def _build_actions() -> tuple[ActionSpec, ...]:
    acts: list[ActionSpec] = [ActionSpec(Kind.END_TURN)]
    acts += [ActionSpec(Kind.ATTACK, k) for k in range(1, MAX_ATTACK_INVEST + 1)]
    acts += [ActionSpec(Kind.GRAPPLE, k) for k in range(1, MAX_SMALL_INVEST + 1)]
    acts += [ActionSpec(Kind.POGO, k) for k in range(1, MAX_SMALL_INVEST + 1)]
    acts += [ActionSpec(Kind.STEP, 0, d) for d in range(8)]
    acts += [ActionSpec(Kind.DASH, 0, d) for d in range(8)]
    acts += [ActionSpec(Kind.RETREAT, 0, d) for d in range(8)]
    acts += [ActionSpec(Kind.CLEAR_IMBALANCE), ActionSpec(Kind.CLEAR_DELAYED), ActionSpec(Kind.CLEAR_STATUS)]
    acts += [ActionSpec(Kind.ESCAPE, k) for k in range(0, MAX_SMALL_INVEST + 1)]
    acts += [ActionSpec(Kind.FOCUS, x) for x in range(1, MAX_FOCUS + 1)]
    acts += [ActionSpec(Kind.NO_DEFENSE)]
    acts += [ActionSpec(Kind.PARRY, k) for k in range(0, MAX_DEFENSE_INVEST + 1)]
    acts += [ActionSpec(Kind.DODGE, k) for k in range(0, MAX_DEFENSE_INVEST + 1)]
    acts += [ActionSpec(Kind.DEATHS_DOOR), ActionSpec(Kind.UNCONSCIOUS), ActionSpec(Kind.DECLINE)]
    acts += [ActionSpec(Kind.PROVOKED, k) for k in range(0, MAX_DEFENSE_INVEST + 1)]
    acts += [ActionSpec(Kind.RESIST, k) for k in range(0, MAX_SMALL_INVEST + 1)]
    acts += [ActionSpec(Kind.STAY)]
    return tuple(acts)


ACTIONS: tuple[ActionSpec, ...] = _build_actions()
NUM_ACTIONS = len(ACTIONS)
ACTION_ID: dict[tuple[Kind, int, int], int] = {(s.kind, s.amount, s.direction): i for i, s in enumerate(ACTIONS)}


def action_id(kind: Kind, amount: int = 0, direction: int = -1) -> int:
    """The id of a named action (e.g. ``action_id(Kind.ATTACK, 2)``)."""
    return ACTION_ID[(kind, amount, direction)]


def _ids(kind: Kind, amounts: range) -> list[int]:
    """Ids indexed by amount (entries below the first amount are unused placeholders)."""
    return [ACTION_ID.get((kind, k, -1), -1) for k in range(amounts.stop)]


END_TURN_ID = action_id(Kind.END_TURN)
ATTACK_IDS = _ids(Kind.ATTACK, range(1, MAX_ATTACK_INVEST + 1))
GRAPPLE_IDS = _ids(Kind.GRAPPLE, range(1, MAX_SMALL_INVEST + 1))
POGO_IDS = _ids(Kind.POGO, range(1, MAX_SMALL_INVEST + 1))
ESCAPE_IDS = _ids(Kind.ESCAPE, range(0, MAX_SMALL_INVEST + 1))
FOCUS_IDS = _ids(Kind.FOCUS, range(1, MAX_FOCUS + 1))
STEP_IDS = [action_id(Kind.STEP, 0, d) for d in range(8)]
DASH_IDS = [action_id(Kind.DASH, 0, d) for d in range(8)]
RETREAT_IDS = [action_id(Kind.RETREAT, 0, d) for d in range(8)]
CLEAR_IMBALANCE_ID = action_id(Kind.CLEAR_IMBALANCE)
CLEAR_DELAYED_ID = action_id(Kind.CLEAR_DELAYED)
CLEAR_STATUS_ID = action_id(Kind.CLEAR_STATUS)


def _n(count: int, word: str) -> str:
    """``1 success`` / ``2 successes`` for the narration."""
    if count == 1:
        return f"1 {word}"
    return f"{count} {word}es" if word.endswith("s") else f"{count} {word}s"


class Phase(enum.IntEnum):
    INITIATIVE = 0  # chance: one bug's initiative total
    TURN = 1  # decision of the active bug
    ATTACK_ROLL = 2  # chance
    DEFENSE = 3  # decision of the target
    DEFENSE_ROLL = 4  # chance
    SOAK_ROLL = 5  # chance
    HEART_ZERO = 6  # decision of the bug at Heart 0
    DODGE_MOVE = 7  # decision of the bug that dodged
    PROVOKED = 8  # decision of the provoked enemy
    RESIST = 9  # decision of the grappler
    ESCAPE_ROLL = 10  # chance
    RESIST_ROLL = 11  # chance
    FOCUS_ROLL = 12  # chance
    OVER = 13


DECISION_CONTEXT = {
    Phase.TURN: "turn",
    Phase.DEFENSE: "defense",
    Phase.HEART_ZERO: "heart_zero",
    Phase.DODGE_MOVE: "dodge_move",
    Phase.PROVOKED: "provoked",
    Phase.RESIST: "resist_escape",
}
CHANCE_PHASES = frozenset(
    {
        Phase.INITIATIVE,
        Phase.ATTACK_ROLL,
        Phase.DEFENSE_ROLL,
        Phase.SOAK_ROLL,
        Phase.ESCAPE_ROLL,
        Phase.RESIST_ROLL,
        Phase.FOCUS_ROLL,
    }
)


class Defense(enum.IntEnum):
    NONE = 0
    PARRY = 1
    DODGE = 2


class AttackKind(enum.IntEnum):
    WEAPON = 0
    GRAPPLE = 1
    POGO = 2
    PROVOKED = 3


class Resume(enum.IntEnum):
    ATTACK = 0  # continue after an attack's damage
    TURN_START = 1  # continue a turn start after delayed damage


# -- mutable records -------------------------------------------------------------------------------
class Bug:
    """A duellist's changing numbers (the fixed ones are its :class:`~envs.hallownest.rules.Profile`)."""

    __slots__ = (
        "p",
        "x",
        "y",
        "heart",
        "stamina",
        "imbalance",
        "soul",
        "at_dd",
        "unconscious",
        "dead",
        "dd_used",
        "focus_pending",
        "delayed",
        "delayed_type",
        "status",
        "status_name",
        "status_penalty",
        "next_roll_penalty",
        "grappled_by",
        "grappling",
        "attacks_made",
        "speed_left",
        "jumped",
        "free_move",
        "adj_moved",
        "provoked_used",
        "initiative",
    )

    def __init__(self, profile: R.Profile, x: int, y: int) -> None:
        self.p = profile
        self.x, self.y = x, y
        self.heart = profile.heart
        self.stamina = profile.stamina
        self.imbalance = 0
        self.soul = profile.soul
        self.at_dd = False
        self.unconscious = False
        self.dead = False
        self.dd_used = False
        self.focus_pending = 0
        self.delayed = 0
        self.delayed_type = ""
        self.status = 0
        self.status_name = ""
        self.status_penalty = 0
        self.next_roll_penalty = 0
        self.grappled_by = -1
        self.grappling = -1
        self.attacks_made = 0
        self.speed_left = profile.speed
        self.jumped = False
        self.free_move = 0
        self.adj_moved = 0
        self.provoked_used = False  # made its provoked attack this round
        self.initiative = 0

    def fields(self) -> tuple[Hashable, ...]:
        return tuple(getattr(self, s) for s in self.__slots__[1:])

    def copy(self) -> Bug:
        b = Bug.__new__(Bug)
        for s in self.__slots__:
            setattr(b, s, getattr(self, s))
        return b

    @property
    def name(self) -> str:
        return self.p.name

    @property
    def pos(self) -> tuple[int, int]:
        return (self.x, self.y)

    @property
    def can_act(self) -> bool:
        return not self.dead and not self.unconscious


class Attack:
    """An attack (or grapple) being resolved."""

    __slots__ = (
        "kind",
        "attacker",
        "target",
        "invested",
        "dice",
        "rerolls",
        "mod",
        "att_succ",
        "att_rolled",
        "defense",
        "def_invested",
        "def_dice",
        "def_rerolls",
        "def_mod",
        "def_succ",
        "def_rolled",
        "defense_decided",
        "damage",
    )

    def __init__(self, kind: AttackKind, attacker: int, target: int, invested: int) -> None:
        self.kind = kind
        self.attacker = attacker
        self.target = target
        self.invested = invested
        self.dice = 0
        self.rerolls = 0
        self.mod = 0
        self.att_succ = 0
        self.att_rolled = False
        self.defense = Defense.NONE
        self.def_invested = 0
        self.def_dice = 0
        self.def_rerolls = 0
        self.def_mod = 0
        self.def_succ = 0
        self.def_rolled = False
        self.defense_decided = False
        self.damage = 0

    def fields(self) -> tuple[Hashable, ...]:
        return tuple(getattr(self, s) for s in self.__slots__)

    def copy(self) -> Attack:
        a = Attack.__new__(Attack)
        for s in self.__slots__:
            setattr(a, s, getattr(self, s))
        return a


# -- the state -------------------------------------------------------------------------------------
class DuelState(State):
    """A Hallownest duel. See the env card in ``scenarios.py`` for the decisions and the encoding."""

    def __init__(self, cfg: HallownestConfig) -> None:
        super().__init__(2)
        self.cfg = cfg
        self.track = cfg.arena.kind == "track"
        self.width = cfg.arena.width
        self.height = 1 if self.track else cfg.arena.height
        self.dirs = 2 if self.track else 8
        self.cover: dict[tuple[int, int], int] = {(c[0], c[1]): c[2] for c in cfg.arena.cover}
        self.bugs = [Bug(R.build_profile(cfg, spec), *cfg.arena.start[i]) for i, spec in enumerate(cfg.duel.bugs)]
        self.phase = Phase.INITIATIVE
        self.init_seat = 0
        self.order: list[int] = [0, 1]
        self.turn_idx = 0
        self.round = 0
        self.active = 0
        self.atk: Attack | None = None
        self.roll: tuple[int, int, int] = (0, 0, 5)  # dice, rerolls, success_on of the pending roll
        self.decider = -1  # seat deciding in a reaction phase
        self.resume = Resume.ATTACK
        self.escape_succ = 0
        self.escape_roll: tuple[int, int] = (0, 0)
        self.resist_invested = 0
        self._escape_rerolls = 0
        self._resist_mod = 0
        self._soak_mod = 0
        self._focus_auto = 0
        self._legal: list[int] | None = None
        self.narrate(
            "start",
            f"{self.bugs[0].name} ({self.bugs[0].p.weapon.label}) faces "
            f"{self.bugs[1].name} ({self.bugs[1].p.weapon.label}). Roll initiative.",
        )

    # ---------------------------------------------------------------------------------------------
    # protocol
    def current_player(self) -> int:
        ph = self.phase
        if ph == Phase.OVER:
            return TERMINAL
        if ph in CHANCE_PHASES:
            return CHANCE
        if ph == Phase.TURN:
            return self.active
        return self.decider

    def clone(self) -> DuelState:
        new = DuelState.__new__(DuelState)
        new.__dict__.update(self.__dict__)
        new.log = list(self.log)
        new.bugs = [b.copy() for b in self.bugs]
        new.order = list(self.order)
        new.atk = self.atk.copy() if self.atk is not None else None
        new._legal = None
        return new

    def key(self) -> Hashable:
        return (
            int(self.phase),
            self.init_seat,
            tuple(self.order),
            self.turn_idx,
            self.round,
            self.active,
            self.atk.fields() if self.atk else None,
            self.roll,
            self.decider,
            int(self.resume),
            self.escape_succ,
            self.escape_roll,
            self.resist_invested,
            self._escape_rerolls,
            self._resist_mod,
            self._soak_mod,
            self._focus_auto,
            tuple(b.fields() for b in self.bugs),
        )

    def decision_context(self) -> str:
        return DECISION_CONTEXT.get(self.phase, "chance")

    def resources(self, seat: int) -> dict[str, float]:
        b = self.bugs[seat]
        return {
            "stamina": float(b.stamina),
            "heart": float(b.heart),
            "imbalance": float(b.imbalance),
            "soul": float(b.soul),
            "delayed": float(b.delayed),
            "status": float(b.status),
        }

    # -- legal actions ---------------------------------------------------------------------------
    def legal_actions(self) -> list[int]:
        if self._legal is None:
            self._legal = self._compute_legal()
        return list(self._legal)

    def _compute_legal(self) -> list[int]:
        ph = self.phase
        if ph == Phase.TURN:
            return self._legal_turn()
        if ph == Phase.DEFENSE:
            return self._legal_defense()
        if ph == Phase.HEART_ZERO:
            out = []
            if self.cfg.deaths_door.enabled:
                out.append(action_id(Kind.DEATHS_DOOR))
            if self.cfg.unconscious.enabled:
                out.append(action_id(Kind.UNCONSCIOUS))
            return out
        if ph == Phase.DODGE_MOVE:
            b = self.bugs[self.decider]
            out = [
                action_id(Kind.STEP, 0, d)
                for d in range(self.dirs)
                if self._free(b.x + DIRECTIONS[d][0], b.y + DIRECTIONS[d][1])
            ]
            return [*out, action_id(Kind.STAY)]
        if ph == Phase.PROVOKED:
            b = self.bugs[self.decider]
            cost = self.cfg.movement.provoked_cost
            out = [action_id(Kind.DECLINE)]
            out += [action_id(Kind.PROVOKED, j) for j in range(MAX_DEFENSE_INVEST + 1) if cost + j <= b.stamina]
            return out
        if ph == Phase.RESIST:
            b = self.bugs[self.decider]
            return [action_id(Kind.RESIST, j) for j in range(MAX_SMALL_INVEST + 1) if j <= b.stamina]
        return []

    def _legal_turn(self) -> list[int]:
        """The active bug's options, in increasing action id (the table's order)."""
        cfg = self.cfg
        me = self.bugs[self.active]
        foe = self.bugs[1 - self.active]
        st = me.stamina
        out = [END_TURN_ID]
        w = me.p.weapon
        dist = max(abs(me.x - foe.x), abs(me.y - foe.y))
        tax = me.attacks_made * cfg.stamina.tax_per_attack
        budget = max(0, st - tax)  # most Stamina an attack can invest now
        targetable = (
            not foe.dead
            and (not self.cover or R.can_be_targeted(self.cover.get(foe.pos, 0)))
            and (cfg.unconscious.targetable or not foe.unconscious)
        )
        if targetable and dist <= (w.range if w.ranged else 1):
            lo = max(1, cfg.stamina.min_attack_investment)
            out.extend(ATTACK_IDS[lo : min(budget, MAX_ATTACK_INVEST) + 1])
        if targetable and dist == 1:
            if cfg.grapple.enabled and foe.grappled_by != self.active:
                out.extend(GRAPPLE_IDS[1 : min(budget, MAX_SMALL_INVEST) + 1])
            if cfg.pogo.enabled and me.jumped and not w.ranged:
                out.extend(POGO_IDS[1 : min(budget, MAX_SMALL_INVEST) + 1])
        if me.grappled_by < 0:
            mv = cfg.movement
            free = [self._free(me.x + dx, me.y + dy) for dx, dy in DIRECTIONS[: self.dirs]]
            if me.speed_left > 0 or me.free_move > 0:
                out.extend(STEP_IDS[d] for d in range(self.dirs) if free[d])
            if st >= mv.dash_cost:
                out.extend(DASH_IDS[d] for d in range(self.dirs) if self._dash_landing(me, d) is not None)
            if st >= mv.retreat_cost and me.speed_left > 0:
                out.extend(RETREAT_IDS[d] for d in range(self.dirs) if free[d])
        if me.imbalance > 0 and st >= cfg.imbalance.clear_cost:
            out.append(CLEAR_IMBALANCE_ID)
        if me.delayed > 0 and st >= cfg.delayed.removal_cost:
            out.append(CLEAR_DELAYED_ID)
        if me.status > 0 and st >= cfg.status.removal_cost:
            out.append(CLEAR_STATUS_ID)
        if me.grappled_by >= 0:
            out.extend(ESCAPE_IDS[: max(0, min(st - cfg.grapple.escape_cost, MAX_SMALL_INVEST) + 1)])
        if cfg.focus.enabled and me.focus_pending == 0:
            out.extend(FOCUS_IDS[1 : min(me.soul, MAX_FOCUS) + 1])
        return out

    def _legal_defense(self) -> list[int]:
        atk = self.atk
        assert atk is not None
        me = self.bugs[atk.target]
        cfg = self.cfg
        out = [action_id(Kind.NO_DEFENSE)]
        base = cfg.defense.base_cost
        cap = R.max_parry_investment(
            me.p.weapon, me.p.shield_quality, cfg.parry.weapon_invest_max_is_quality, cfg.parry.max_shield_investment
        )
        for j in range(min(cap, MAX_DEFENSE_INVEST) + 1):
            if base + j <= me.stamina:
                out.append(action_id(Kind.PARRY, j))
        can_dodge = not (cfg.grapple.blocks_dodge and me.grappled_by >= 0)
        for j in range(min(cfg.dodge.max_investment, MAX_DEFENSE_INVEST) + 1):
            if can_dodge and base + j <= me.stamina:
                out.append(action_id(Kind.DODGE, j))
        return out

    # -- geometry --------------------------------------------------------------------------------
    def _inside(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    def _free(self, x: int, y: int) -> bool:
        if not (0 <= x < self.width and 0 <= y < self.height):
            return False
        a, b = self.bugs
        return (a.dead or a.x != x or a.y != y) and (b.dead or b.x != x or b.y != y)

    def _dash_landing(self, me: Bug, d: int) -> tuple[int, int] | None:
        """Rule 15: a dash / jump moves exactly ``dash_cells`` in a line; it may leap over a bug."""
        dx, dy = DIRECTIONS[d]
        n = self.cfg.movement.dash_cells
        for i in range(1, n):
            if not self._inside(me.x + dx * i, me.y + dy * i):
                return None
        lx, ly = me.x + dx * n, me.y + dy * n
        return (lx, ly) if self._free(lx, ly) else None

    # -- applying decisions ----------------------------------------------------------------------
    def action_label(self, action: int) -> str:
        s = ACTIONS[action]
        k = s.kind
        if k in (Kind.STEP, Kind.DASH, Kind.RETREAT):
            return f"{k.name.lower()} {DIR_NAMES[s.direction]}"
        if k in (Kind.ATTACK, Kind.GRAPPLE, Kind.POGO, Kind.PARRY, Kind.DODGE, Kind.PROVOKED, Kind.RESIST, Kind.ESCAPE):
            return f"{k.name.lower()} invest {s.amount}"
        if k == Kind.FOCUS:
            return f"focus {s.amount} soul"
        return k.name.lower()

    def option_of(self, action: int) -> str | None:
        s = ACTIONS[action]
        k = s.kind
        if k == Kind.ATTACK:
            me = self.bugs[self.active]
            if me.attacks_made >= 1:
                return "multi_attack"
            if s.amount >= me.stamina:
                return "invest_all"
            return "invest_1" if s.amount == 1 else "invest_some"
        if k == Kind.STEP:
            return "dodge_move" if self.phase == Phase.DODGE_MOVE else "move"
        return OPTION_OF_KIND[k]

    def apply_action(self, action: int) -> None:
        if self.current_player() < 0 or action not in self.legal_actions():
            raise IllegalActionError(f"illegal action {action} in phase {self.phase.name}")
        self._legal = None
        s = ACTIONS[action]
        ph = self.phase
        if ph == Phase.TURN:
            self._turn_action(s)
        elif ph == Phase.DEFENSE:
            self._declare_defense(s)
        elif ph == Phase.HEART_ZERO:
            self._choose_at_heart_zero(s.kind)
        elif ph == Phase.DODGE_MOVE:
            self._dodge_move(s)
        elif ph == Phase.PROVOKED:
            self._provoked_choice(s)
        elif ph == Phase.RESIST:
            self._resist_escape(s.amount)

    def _turn_action(self, s: ActionSpec) -> None:
        k = s.kind
        me = self.bugs[self.active]
        if k == Kind.END_TURN:
            self.narrate("end_turn", f"{me.name} ends the turn.", self.active)
            self._end_turn()
        elif k == Kind.ATTACK:
            self._declare_attack(AttackKind.WEAPON, s.amount)
        elif k == Kind.GRAPPLE:
            self._declare_attack(AttackKind.GRAPPLE, s.amount)
        elif k == Kind.POGO:
            self._declare_attack(AttackKind.POGO, s.amount)
        elif k == Kind.STEP:
            self._step(s.direction)
        elif k == Kind.DASH:
            self._dash(s.direction)
        elif k == Kind.RETREAT:
            self._retreat(s.direction)
        elif k == Kind.CLEAR_IMBALANCE:
            self._clear_imbalance()
        elif k == Kind.CLEAR_DELAYED:
            self._clear_delayed()
        elif k == Kind.CLEAR_STATUS:
            self._clear_status()
        elif k == Kind.ESCAPE:
            self._attempt_escape(s.amount)
        elif k == Kind.FOCUS:
            self._focus(s.amount)

    # -- chance ----------------------------------------------------------------------------------
    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        if self.phase == Phase.INITIATIVE:
            dice, rr = self._initiative_pool(self.init_seat)
            return list(initiative_outcomes(dice, rr))
        if self.phase in CHANCE_PHASES:
            return list(success_outcomes(*self.roll))
        raise ValueError("not a chance node")

    def sample_chance(self, rng: Rng) -> Hashable:
        if self.phase == Phase.INITIATIVE:
            return sample_initiative(rng, *self._initiative_pool(self.init_seat))
        if self.phase in CHANCE_PHASES:
            return sample_successes(rng, *self.roll)
        raise ValueError("not a chance node")

    def apply_chance(self, outcome: Hashable) -> None:
        if self.phase not in CHANCE_PHASES:
            raise ValueError(f"apply_chance in phase {self.phase.name}")
        n = int(outcome)  # type: ignore[call-overload]
        self._legal = None
        ph = self.phase
        if ph == Phase.INITIATIVE:
            dice = self._initiative_pool(self.init_seat)[0]
            if not dice <= n <= 6 * dice:
                raise ValueError(f"an initiative total of {n} is impossible with {dice} dice")
            self._initiative_result(n)
            return
        if not 0 <= n <= self.roll[0]:
            raise ValueError(f"{n} successes are impossible with {self.roll[0]} dice")
        if ph == Phase.ATTACK_ROLL:
            atk = self.atk
            assert atk is not None
            atk.att_succ = max(0, n + atk.mod)
            atk.att_rolled = True
            self.narrate(
                "roll",
                f"The attack rolls {atk.dice} dice: {_n(atk.att_succ, 'success')}.",
                atk.attacker,
                successes=atk.att_succ,
            )
            self._attack_continue()
        elif ph == Phase.DEFENSE_ROLL:
            atk = self.atk
            assert atk is not None
            atk.def_succ = max(0, n + atk.def_mod)
            atk.def_rolled = True
            verb = "parry" if atk.defense == Defense.PARRY else "dodge"
            self.narrate(
                "roll",
                f"The {verb} rolls {atk.def_dice} dice: {_n(atk.def_succ, 'success')}.",
                atk.target,
                successes=atk.def_succ,
            )
            self._attack_continue()
        elif ph == Phase.SOAK_ROLL:
            self._after_soak(max(0, n + self._soak_mod))
        elif ph == Phase.ESCAPE_ROLL:
            self.escape_succ = max(0, n)
            self._start_resist_roll()
        elif ph == Phase.RESIST_ROLL:
            self._resolve_escape(max(0, n))
        elif ph == Phase.FOCUS_ROLL:
            self._resolve_focus(n)

    # -- helpers ---------------------------------------------------------------------------------
    def _set_roll(self, phase: Phase, dice: int, rerolls: int, success_on: int | None = None) -> None:
        self.phase = phase
        self.roll = (max(0, dice), max(0, rerolls), self.cfg.dice.success_on if success_on is None else success_on)

    def _roll_penalty(self, b: Bug) -> int:
        """Rules 8, 18: penalties a bug suffers on its next roll (Fang) and while a status lasts (consumes Fang's)."""
        pen = b.next_roll_penalty + (b.status_penalty if b.status > 0 else 0)
        b.next_roll_penalty = 0
        return pen

    def _modified(self, dice: int, penalty: int, floor: int = 0) -> tuple[int, int]:
        return R.apply_modifier(dice, -penalty, self.cfg.dice.modifiers_are_dice, floor)

    def _spend(self, seat: int, amount: int) -> bool:
        """Spend Stamina. Spending cancels a pending focus (Rule 20); Stamina 0 at Death's Door kills (Rule 14).

        Returns False if the bug died of it.
        """
        if amount <= 0:
            return True
        b = self.bugs[seat]
        b.stamina -= amount
        if b.focus_pending:
            self.narrate("focus", f"{b.name} spends Stamina: the focus is lost.", seat)
            b.focus_pending = 0
        if (b.at_dd or b.unconscious) and b.stamina <= 0:
            b.stamina = 0
            self._kill(seat, "Stamina ran out at Death's Door")
            return False
        return True

    def _kill(self, seat: int, why: str) -> None:
        b = self.bugs[seat]
        b.dead = True
        winner = 1 - seat
        self.narrate("death", f"{b.name} dies ({why}).", seat)
        self.phase = Phase.OVER
        self.finish(
            winner,
            EndReason.KNOCKOUT,
            [1.0 if s == winner else -1.0 for s in range(2)],
            f"{self.bugs[winner].name} wins",
        )

    # -- Rule 9: initiative ------------------------------------------------------------------------
    def _initiative_pool(self, seat: int) -> tuple[int, int]:
        p = self.bugs[seat].p
        return R.initiative_dice(p.grace, p.weapon)

    def _initiative_result(self, total: int) -> None:
        """Rule 9: store the total; when both have rolled, order the bugs and start round 1."""
        b = self.bugs[self.init_seat]
        b.initiative = total
        self.narrate("initiative", f"{b.name} rolls {total} for initiative.", self.init_seat, total=total)
        if self.init_seat == 0:
            self.init_seat = 1
            return
        self.order = R.initiative_order([x.initiative for x in self.bugs], [x.p.side for x in self.bugs])
        self.narrate("initiative", f"{self.bugs[self.order[0]].name} acts first.", self.order[0])
        self.round = 1
        self.turn_idx = 0
        self._begin_turn(self.order[0])

    # -- Rule 10: turn start -----------------------------------------------------------------------
    def _begin_turn(self, seat: int) -> None:
        self.active = seat
        b = self.bugs[seat]
        b.attacks_made = 0
        b.speed_left = b.p.speed
        b.jumped = False
        b.free_move = 0
        b.adj_moved = 0
        self.narrate("turn", f"Round {self.round}: {b.name}'s turn.", seat)
        if b.focus_pending and b.can_act:
            rolled, auto = R.focus_dice(
                b.focus_pending, self.cfg.focus.auto_success_per, self.cfg.focus.auto_dice_within_x
            )
            dice, mod = self._modified(rolled, self._roll_penalty(b))
            self._focus_auto = auto + mod
            self._set_roll(Phase.FOCUS_ROLL, dice, R.focus_rerolls(b.p.insight, self.cfg.focus.reroll_divisor))
            return
        b.focus_pending = 0
        self._turn_start_delayed()

    def _resolve_focus(self, successes: int) -> None:
        """Rule 20: a focus takes effect at the start of the next turn: each success heals 1 Heart."""
        b = self.bugs[self.active]
        heal = max(0, successes + self._focus_auto)
        before = b.heart
        b.heart = min(b.p.heart, b.heart + heal)
        b.focus_pending = 0
        self.narrate(
            "focus",
            f"{b.name}'s focus heals {b.heart - before} Heart ({b.heart}/{b.p.heart}).",
            self.active,
            healed=b.heart - before,
        )
        if b.at_dd and b.heart > 0:
            b.at_dd = False
            self.narrate("focus", f"{b.name} steps back from Death's Door.", self.active)
        self._turn_start_delayed()

    def _turn_start_delayed(self) -> None:
        """Rule 17: delayed damage strikes at turn start (natural damage: no soak, no reduction), then -1."""
        b = self.bugs[self.active]
        if b.delayed > 0:
            dmg, b.delayed = R.delayed_tick(b.delayed)
            self.narrate("delayed", f"{b.name} takes {dmg} {b.delayed_type or 'delayed'} damage.", self.active)
            if self._apply_damage(self.active, dmg, Resume.TURN_START):
                return
        self._turn_start_refill()

    def _turn_start_refill(self) -> None:
        """Rule 10 (and 14): refill Stamina to max - Imbalance, then lose 1 Imbalance."""
        b = self.bugs[self.active]
        if b.dead:
            return
        if b.unconscious:
            self.narrate("turn", f"{b.name} lies unconscious.", self.active)
            self._end_turn()
            return
        cfg = self.cfg
        if b.at_dd and not cfg.deaths_door.stamina_refills:
            b.imbalance = max(0, b.imbalance - cfg.imbalance.recovery_per_turn)
        else:
            b.stamina, b.imbalance = R.turn_start_refill(
                b.stamina, b.p.stamina, b.imbalance, cfg.stamina.refill_never_lowers, cfg.imbalance.recovery_per_turn
            )
        self._check_grapple()
        self.phase = Phase.TURN

    def _end_turn(self) -> None:
        """Rules 11, 18: the tax resets; status pools drop by 1; the next bug in initiative order acts."""
        b = self.bugs[self.active]
        if b.status > 0:
            b.status = R.status_tick(b.status, self.cfg.status.decay_per_turn)
        b.attacks_made = 0
        b.jumped = False
        b.free_move = 0
        self.turn_idx += 1
        if self.turn_idx >= len(self.order):
            self.turn_idx = 0
            self.round += 1
            for x in self.bugs:
                x.provoked_used = False
            if self.round > self.cfg.duel.max_rounds:
                self.phase = Phase.OVER
                self.finish(None, EndReason.TIME_LIMIT, [0.0, 0.0], f"{self.cfg.duel.max_rounds} rounds")
                return
        self._begin_turn(self.order[self.turn_idx])

    def _clear_imbalance(self) -> None:
        """Rule 10: spend Stamina on your turn to remove Imbalance 1 for 1."""
        b = self.bugs[self.active]
        if not self._spend(self.active, self.cfg.imbalance.clear_cost):
            return
        b.imbalance -= 1
        self.narrate("imbalance", f"{b.name} regains balance (Imbalance {b.imbalance}).", self.active)

    def _clear_delayed(self) -> None:
        """Rule 17: Stamina removes delayed damage 1 for 1."""
        b = self.bugs[self.active]
        if not self._spend(self.active, self.cfg.delayed.removal_cost):
            return
        b.delayed -= 1
        self.narrate("delayed", f"{b.name} tends the wound (delayed damage {b.delayed}).", self.active)

    def _clear_status(self) -> None:
        """Rule 18: Stamina reduces a status pool 1 for 1."""
        b = self.bugs[self.active]
        if not self._spend(self.active, self.cfg.status.removal_cost):
            return
        b.status -= 1
        self.narrate("status", f"{b.name} shakes off {b.status_name} (pool {b.status}).", self.active)

    # -- Rule 11: attacks ------------------------------------------------------------------------
    def _declare_attack(self, kind: AttackKind, invested: int, attacker: int | None = None) -> None:
        cfg = self.cfg
        a_seat = self.active if attacker is None else attacker
        t_seat = 1 - a_seat
        me, foe = self.bugs[a_seat], self.bugs[t_seat]
        w = me.p.weapon
        if kind == AttackKind.PROVOKED:
            cost = cfg.movement.provoked_cost + invested
            tax = 0
        else:
            tax = me.attacks_made * cfg.stamina.tax_per_attack
            cost = R.attack_cost(invested, me.attacks_made, cfg.stamina.tax_per_attack)
            me.attacks_made += 1
        if kind == AttackKind.GRAPPLE:
            dice, rr = R.grapple_dice(
                me.p.might, cfg.grapple.unarmed_quality, invested, me.p.appendages, cfg.grapple.max_appendage_bonus
            )
            what = "a grapple"
        else:
            dice, rr = R.attack_dice(w, me.p.might, me.p.grace, invested)
            what = {
                AttackKind.WEAPON: "an attack",
                AttackKind.POGO: "a pogo strike",
                AttackKind.PROVOKED: "a provoked attack",
            }[kind] + f" with the {w.label}"
        self.narrate(
            "attack",
            f"{me.name} invests {invested} Stamina in {what} (spends {cost}{f', tax {tax}' if tax else ''}).",
            a_seat,
            invested=invested,
            cost=cost,
            tax=tax,
        )
        if not self._spend(a_seat, cost):
            return
        if kind != AttackKind.GRAPPLE:
            gain = R.heavy_weapon_imbalance(w, cfg.imbalance.heavy_weight, cfg.imbalance.heavy_weapon_gain)
            if gain:
                me.imbalance = R.add_imbalance(me.imbalance, gain, cfg.imbalance.max)
        pen = self._roll_penalty(me) + (cfg.grapple.penalty if me.grappled_by >= 0 else 0)
        dice, mod = self._modified(dice, pen)
        quarters = self.cover.get(foe.pos, 0)
        if quarters:
            dice = R.cover_penalty(dice, quarters, cfg.cover.dice_per_quarter)
        atk = Attack(kind, a_seat, t_seat, invested)
        atk.dice, atk.rerolls, atk.mod = dice, rr, mod
        self.atk = atk
        self._attack_continue()

    def _can_defend(self, seat: int) -> bool:
        b = self.bugs[seat]
        if b.dead or (b.unconscious and not self.cfg.unconscious.can_defend):
            return False
        return b.stamina >= self.cfg.defense.base_cost

    def _attack_continue(self) -> None:
        atk = self.atk
        assert atk is not None
        if self.cfg.defense.after_attack_roll:
            if not atk.att_rolled:
                self._set_roll(Phase.ATTACK_ROLL, atk.dice, atk.rerolls)
                return
            if not atk.defense_decided:
                if atk.att_succ >= 1 and self._can_defend(atk.target):
                    self.phase, self.decider = Phase.DEFENSE, atk.target
                    return
                atk.defense_decided = True
        else:
            if not atk.defense_decided:
                if self._can_defend(atk.target):
                    self.phase, self.decider = Phase.DEFENSE, atk.target
                    return
                atk.defense_decided = True
            if not atk.att_rolled:
                self._set_roll(Phase.ATTACK_ROLL, atk.dice, atk.rerolls)
                return
        if atk.defense != Defense.NONE and not atk.def_rolled:
            self._set_roll(Phase.DEFENSE_ROLL, atk.def_dice, atk.def_rerolls)
            return
        self._resolve_attack()

    # -- Rule 12: defense ------------------------------------------------------------------------
    def _declare_defense(self, s: ActionSpec) -> None:
        """Rule 12: parry, dodge (1 Stamina plus the invested) or take the blow."""
        atk = self.atk
        assert atk is not None
        cfg = self.cfg
        me = self.bugs[atk.target]
        attacker = self.bugs[atk.attacker]
        atk.defense_decided = True
        if s.kind == Kind.NO_DEFENSE:
            self.narrate("defense", f"{me.name} does not defend.", atk.target)
            self._attack_continue()
            return
        j = s.amount
        if not self._spend(atk.target, R.defense_cost(j, cfg.defense.base_cost)):
            return
        pen = self._roll_penalty(me) + (cfg.grapple.penalty if me.grappled_by >= 0 else 0)
        if s.kind == Kind.PARRY:
            dice, rr = R.parry_dice(
                me.p.might,
                me.p.weapon,
                me.p.shield_quality,
                j,
                cfg.parry.weapon_dice_per_stamina,
                cfg.parry.weapon_quality_adds_dice,
                cfg.parry.weapon_reroll_applies,
            )
            if attacker.p.weapon.ranged and atk.kind != AttackKind.GRAPPLE:
                pen += cfg.parry.ranged_penalty
            atk.defense = Defense.PARRY
            verb = "parries"
        else:
            weapon = attacker.p.weapon if atk.kind != AttackKind.GRAPPLE else R.load_weapon(cfg, "unarmed")
            weight = R.dodge_weight(weapon, cfg.dodge.light_weapon_weight)
            dice, rr = R.dodge_dice(me.p.grace, j, weight)
            atk.defense = Defense.DODGE
            verb = "dodges"
            if not cfg.dodge.imbalance_only_if_moved:
                me.imbalance = R.add_imbalance(me.imbalance, cfg.dodge.imbalance_gain, cfg.imbalance.max)
        dice, mod = self._modified(dice, pen)
        atk.def_dice, atk.def_rerolls, atk.def_mod, atk.def_invested = dice, rr, mod, j
        self.narrate(
            "defense", f"{me.name} {verb}, investing {j} more Stamina: {dice} dice.", atk.target, invested=j, dice=dice
        )
        self._attack_continue()

    # -- Rule 13: damage -------------------------------------------------------------------------
    def _resolve_attack(self) -> None:
        cfg = self.cfg
        atk = self.atk
        assert atk is not None
        me, foe = self.bugs[atk.attacker], self.bugs[atk.target]
        net = R.net_successes(atk.att_succ, atk.def_succ)
        hit = net >= 1
        parried = atk.defense == Defense.PARRY and atk.att_succ >= 1 and not hit
        if atk.kind == AttackKind.GRAPPLE:
            if R.grapple_holds(net):
                foe.grappled_by, me.grappling = atk.attacker, atk.target
                self.narrate("grapple", f"{me.name} grapples {foe.name}.", atk.attacker)
            else:
                self.narrate("grapple", f"{foe.name} slips the grapple.", atk.target)
            self._attack_done()
            return
        if atk.kind == AttackKind.POGO:
            if R.pogo_outcome(hit, parried) == "bounce":
                me.free_move = cfg.pogo.free_move
                self.narrate("pogo", f"{me.name} bounces off {foe.name} (free move {me.free_move}).", atk.attacker)
            else:
                me.imbalance = R.add_imbalance(me.imbalance, cfg.pogo.miss_imbalance, cfg.imbalance.max)
                self.narrate("pogo", f"{me.name} lands off balance.", atk.attacker)
        if not hit:
            word = (
                "is parried"
                if parried
                else ("is dodged" if atk.defense == Defense.DODGE and atk.att_succ else "misses")
            )
            self.narrate("miss", f"The attack {word}.", atk.attacker)
            self._attack_done()
            return
        w = me.p.weapon
        potential = R.potential_damage(net, w.damage, atk.invested, cfg.damage.extra_cap)
        atk.damage = R.reduce_damage(potential, foe.p.damage_reduction, cfg.damage.min_after_reduction)
        self.narrate(
            "hit",
            f"A hit with {_n(net, 'net success')}: {potential} potential damage"
            f"{f', {atk.damage} after reduction' if atk.damage != potential else ''}.",
            atk.attacker,
            net=net,
            potential=potential,
        )
        if cfg.damage.soak_enabled:
            dice, rr = R.dice_of(foe.p.shell), R.rerolls_of(foe.p.shell)
            dice, self._soak_mod = self._modified(dice, self._roll_penalty(foe))
            self._set_roll(Phase.SOAK_ROLL, dice, rr)
            return
        self._after_soak(0)

    def _after_soak(self, soaked: int) -> None:
        cfg = self.cfg
        atk = self.atk
        assert atk is not None
        me, foe = self.bugs[atk.attacker], self.bugs[atk.target]
        dmg = R.soak_damage(atk.damage, soaked, cfg.damage.soak_floor)
        self.narrate(
            "damage", f"{foe.name}'s Shell soaks {min(soaked, atk.damage)}: {dmg} damage.", atk.target, damage=dmg
        )
        w = me.p.weapon
        if w.next_roll_penalty:
            foe.next_roll_penalty = max(foe.next_roll_penalty, w.next_roll_penalty)
        if w.delayed_damage:
            foe.delayed = R.add_delayed(foe.delayed, w.delayed_damage)
            foe.delayed_type = w.delayed_type
        if w.status:
            foe.status = R.add_status(foe.status, w.status_pool, cfg.status.max_pool)
            foe.status_name, foe.status_penalty = w.status, w.status_dice_penalty
        if self._apply_damage(atk.target, dmg, Resume.ATTACK):
            return
        self._attack_done()

    def _apply_damage(self, seat: int, dmg: int, resume: Resume) -> bool:
        """Rules 13-14: damage hits Heart; at Death's Door or unconscious it hits Stamina.

        Returns True when the flow stops here (a Heart 0 decision, or a death).
        """
        if dmg <= 0:
            return False
        b = self.bugs[seat]
        if b.at_dd or b.unconscious:
            b.stamina, dead = R.stamina_damage(b.stamina, dmg)
            self.narrate("damage", f"{b.name} loses {dmg} Stamina (Stamina {b.stamina}).", seat)
            if dead:
                self._kill(seat, "Stamina 0 at Death's Door" if b.at_dd else "Stamina 0 while unconscious")
                return True
            return False
        b.heart = max(0, b.heart - dmg)
        self.narrate("damage", f"{b.name} loses {dmg} Heart (Heart {b.heart}).", seat)
        if b.heart > 0:
            return False
        cfg = self.cfg
        if not b.p.important or not (cfg.deaths_door.enabled or cfg.unconscious.enabled):
            self._kill(seat, "Heart 0")
            return True
        self.phase, self.decider, self.resume = Phase.HEART_ZERO, seat, resume
        return True

    # -- Rule 14: Heart 0 ------------------------------------------------------------------------
    def _choose_at_heart_zero(self, kind: Kind) -> None:
        """Rule 14: Death's Door (Stamina restored once per Rest) or unconscious (restored always, helpless)."""
        seat = self.decider
        b = self.bugs[seat]
        cfg = self.cfg
        if kind == Kind.DEATHS_DOOR:
            b.stamina = R.deaths_door_stamina(b.stamina, b.p.stamina, b.dd_used, cfg.deaths_door.once_per_rest)
            b.dd_used = True
            b.at_dd = True
            self.narrate("deaths_door", f"{b.name} stands at Death's Door (Stamina {b.stamina}).", seat)
        else:
            b.stamina = R.unconscious_stamina(b.stamina, b.p.stamina, cfg.unconscious.restores_stamina)
            b.unconscious = True
            b.focus_pending = 0
            self.narrate("unconscious", f"{b.name} falls unconscious (Stamina {b.stamina}).", seat)
            if b.grappling >= 0:
                self.bugs[b.grappling].grappled_by = -1
                b.grappling = -1
        if b.stamina <= 0:
            self._kill(seat, "no Stamina left at Heart 0")
            return
        if self.resume == Resume.TURN_START:
            self._turn_start_refill()
        else:
            self._attack_done()

    def _attack_done(self) -> None:
        atk = self.atk
        self.atk = None
        if self.phase == Phase.OVER or atk is None:
            return
        tgt = self.bugs[atk.target]
        if (
            atk.defense == Defense.DODGE
            and self.cfg.dodge.move_cells > 0
            and tgt.can_act
            and tgt.grappled_by < 0
            and any(self._free(tgt.x + dx, tgt.y + dy) for dx, dy in DIRECTIONS[: self.dirs])
        ):
            self.phase, self.decider = Phase.DODGE_MOVE, atk.target
            return
        self._back_to_turn()

    def _back_to_turn(self) -> None:
        if self.phase == Phase.OVER:
            return
        self._check_grapple()
        if self.bugs[self.active].can_act:
            self.phase = Phase.TURN
        else:
            self._end_turn()

    def _dodge_move(self, s: ActionSpec) -> None:
        """Rule 12: a dodging bug may move 1 cell without provoking, gaining 1 Imbalance."""
        b = self.bugs[self.decider]
        if s.kind == Kind.STEP:
            dx, dy = DIRECTIONS[s.direction]
            b.x, b.y = b.x + dx, b.y + dy
            if self.cfg.dodge.imbalance_only_if_moved:
                b.imbalance = R.add_imbalance(b.imbalance, self.cfg.dodge.imbalance_gain, self.cfg.imbalance.max)
            self.narrate("move", f"{b.name} dodges {DIR_NAMES[s.direction]} (Imbalance {b.imbalance}).", self.decider)
        self._back_to_turn()

    # -- Rule 15: movement -----------------------------------------------------------------------
    def _moved_through(self, seat: int, cells: list[tuple[int, int]]) -> None:
        """Rule 15: count enemy-adjacent cells entered; past Maneuverability the enemy may attack."""
        me = self.bugs[seat]
        foe = self.bugs[1 - seat]
        for c in cells:
            if c != foe.pos and R.chebyshev(c, foe.pos) == 1:
                me.adj_moved += 1
        cfg = self.cfg
        if (
            cfg.movement.provoked_attacks
            and R.provokes(me.adj_moved, R.maneuverability(me.p.grace))
            and foe.can_act
            and not foe.provoked_used
            and not foe.p.weapon.ranged
            and foe.stamina >= cfg.movement.provoked_cost
        ):
            foe.provoked_used = True
            self.narrate("provoke", f"{me.name} moves past {foe.name} and provokes an attack.", seat)
            self.phase, self.decider = Phase.PROVOKED, 1 - seat

    def _step(self, d: int) -> None:
        me = self.bugs[self.active]
        dx, dy = DIRECTIONS[d]
        me.x, me.y = me.x + dx, me.y + dy
        if me.free_move > 0:
            me.free_move -= 1
            self.narrate("move", f"{me.name} bounces {DIR_NAMES[d]}.", self.active)
        else:
            me.speed_left -= 1
            self.narrate("move", f"{me.name} moves {DIR_NAMES[d]}.", self.active)
            self._moved_through(self.active, [me.pos])
        self._check_grapple()

    def _dash(self, d: int) -> None:
        """Rule 15: dash / jump: 1 Stamina, 2 cells, no Speed; the bug counts as airborne for a pogo (Rule 21)."""
        me = self.bugs[self.active]
        landing = self._dash_landing(me, d)
        assert landing is not None
        if not self._spend(self.active, self.cfg.movement.dash_cost):
            return
        dx, dy = DIRECTIONS[d]
        path = [(me.x + dx * i, me.y + dy * i) for i in range(1, self.cfg.movement.dash_cells + 1)]
        me.x, me.y = landing
        me.jumped = True
        self.narrate("move", f"{me.name} dashes {DIR_NAMES[d]}.", self.active)
        self._moved_through(self.active, path)
        self._check_grapple()

    def _retreat(self, d: int) -> None:
        """Rule 15: retreat: 1 Stamina, up to 2 cells of Speed, no provoked attack, +1 Imbalance."""
        cfg = self.cfg
        me = self.bugs[self.active]
        if not self._spend(self.active, cfg.movement.retreat_cost):
            return
        dx, dy = DIRECTIONS[d]
        moved = 0
        while moved < cfg.movement.retreat_cells and me.speed_left > 0 and self._free(me.x + dx, me.y + dy):
            me.x, me.y = me.x + dx, me.y + dy
            me.speed_left -= 1
            moved += 1
        me.imbalance = R.add_imbalance(me.imbalance, cfg.movement.retreat_imbalance, cfg.imbalance.max)
        self.narrate(
            "move", f"{me.name} retreats {_n(moved, 'cell')} {DIR_NAMES[d]} (Imbalance {me.imbalance}).", self.active
        )
        self._check_grapple()

    def _provoked_choice(self, s: ActionSpec) -> None:
        seat = self.decider
        if s.kind == Kind.DECLINE:
            self.narrate("provoke", f"{self.bugs[seat].name} lets it pass.", seat)
            self._back_to_turn()
            return
        self._declare_attack(AttackKind.PROVOKED, s.amount, attacker=seat)

    # -- Rule 16: grapple ------------------------------------------------------------------------
    def _check_grapple(self) -> None:
        """Rule 16: a grapple ends when the two are no longer adjacent or the grappler cannot act."""
        for i, b in enumerate(self.bugs):
            g = b.grappled_by
            if g >= 0:
                gb = self.bugs[g]
                if not gb.can_act or R.chebyshev(b.pos, gb.pos) > 1:
                    b.grappled_by = -1
                    gb.grappling = -1
                    self.narrate("grapple", f"{b.name} is free of the grapple.", i)

    def _attempt_escape(self, invested: int) -> None:
        """Rule 16: 1 Stamina (+ invested) to break free, Might or Grace against the grappler's Might."""
        cfg = self.cfg
        me = self.bugs[self.active]
        if not self._spend(self.active, cfg.grapple.escape_cost + invested):
            return
        dice, rr = R.escape_dice(me.p.might, me.p.grace, invested)
        dice, mod = self._modified(dice, self._roll_penalty(me))
        self.escape_roll = (dice, mod)
        self.narrate("escape", f"{me.name} struggles to break free ({dice} dice).", self.active)
        self.phase, self.decider = Phase.RESIST, me.grappled_by
        self._escape_rerolls = rr

    def _resist_escape(self, invested: int) -> None:
        seat = self.decider
        if not self._spend(seat, invested):
            return
        self.resist_invested = invested
        self._set_roll(Phase.ESCAPE_ROLL, self.escape_roll[0], self._escape_rerolls)

    def _start_resist_roll(self) -> None:
        g = self.bugs[self.decider]
        dice, rr = R.resist_dice(g.p.might, self.resist_invested, g.p.appendages, self.cfg.grapple.max_appendage_bonus)
        dice, self._resist_mod = self._modified(dice, self._roll_penalty(g))
        self.escape_succ = max(0, self.escape_succ + self.escape_roll[1])
        self._set_roll(Phase.RESIST_ROLL, dice, rr)

    def _resolve_escape(self, resist: int) -> None:
        me = self.bugs[self.active]
        resist = max(0, resist + self._resist_mod)
        if R.net_successes(self.escape_succ, resist) >= 1:
            g = self.bugs[me.grappled_by]
            g.grappling = -1
            me.grappled_by = -1
            self.narrate("escape", f"{me.name} breaks free ({self.escape_succ} vs {resist}).", self.active)
        else:
            self.narrate("escape", f"{me.name} stays grappled ({self.escape_succ} vs {resist}).", self.active)
        self._back_to_turn()

    # -- Rule 20: focus --------------------------------------------------------------------------
    def _focus(self, soul: int) -> None:
        """Rule 20: invest Soul in a focus; it ends the turn and heals at the next turn start."""
        me = self.bugs[self.active]
        me.soul -= soul
        me.focus_pending = soul
        self.narrate("focus", f"{me.name} focuses {soul} Soul.", self.active, soul=soul)
        self._end_turn()

    # -- observation -----------------------------------------------------------------------------
    def observation(self, seat: int) -> np.ndarray:
        return encode_observation(self, seat)


OPTION_OF_KIND: dict[Kind, str] = {
    Kind.END_TURN: "end_turn",
    Kind.GRAPPLE: "grapple",
    Kind.POGO: "pogo",
    Kind.DASH: "dash",
    Kind.RETREAT: "retreat",
    Kind.CLEAR_IMBALANCE: "clear_imbalance",
    Kind.CLEAR_DELAYED: "clear_delayed",
    Kind.CLEAR_STATUS: "clear_status",
    Kind.ESCAPE: "escape",
    Kind.FOCUS: "focus",
    Kind.NO_DEFENSE: "no_defense",
    Kind.PARRY: "parry",
    Kind.DODGE: "dodge",
    Kind.DEATHS_DOOR: "deaths_door",
    Kind.UNCONSCIOUS: "unconscious",
    Kind.DECLINE: "decline_provoked",
    Kind.PROVOKED: "provoked_attack",
    Kind.RESIST: "resist",
    Kind.STAY: "dodge_stay",
    Kind.ATTACK: "attack",
    Kind.STEP: "move",
}
OPTION_GROUPS: tuple[str, ...] = (
    "invest_all",
    "invest_1",
    "invest_some",
    "multi_attack",
    "grapple",
    "pogo",
    "move",
    "dash",
    "retreat",
    "clear_imbalance",
    "clear_delayed",
    "clear_status",
    "escape",
    "focus",
    "end_turn",
    "no_defense",
    "parry",
    "dodge",
    "deaths_door",
    "unconscious",
    "decline_provoked",
    "provoked_attack",
    "resist",
    "dodge_move",
    "dodge_stay",
)

BUG_FEATURES = 30
SHARED_FEATURES = 20
OBSERVATION_SIZE = 2 * BUG_FEATURES + SHARED_FEATURES
CONTEXTS = (Phase.TURN, Phase.DEFENSE, Phase.HEART_ZERO, Phase.PROVOKED, Phase.DODGE_MOVE, Phase.RESIST)


def _bug_features(st: DuelState, b: Bug, seat: int) -> list[float]:
    p = b.p
    w = p.weapon
    return [
        b.heart / max(1, p.heart),
        p.heart / 20.0,
        b.stamina / 7.0,
        p.stamina / 7.0,
        b.imbalance / max(1, st.cfg.imbalance.max),
        b.soul / 7.0,
        b.focus_pending / 7.0,
        float(b.at_dd),
        float(b.unconscious),
        float(b.dd_used),
        b.delayed / 10.0,
        b.status / 10.0,
        b.next_roll_penalty / 3.0,
        float(b.grappled_by >= 0),
        float(b.grappling >= 0),
        p.might / 7.0,
        p.grace / 7.0,
        p.shell / 7.0,
        w.damage / 5.0,
        w.weight / 3.0,
        float(w.ranged),
        w.rerolls / 2.0,
        b.attacks_made / 4.0,
        b.speed_left / 10.0,
        float(b.jumped),
        b.free_move / 4.0,
        b.x / max(1, st.width - 1),
        b.y / max(1, st.height - 1),
        st.cover.get(b.pos, 0) / 4.0,
        float(st.order[0] == seat),
    ]


def encode_observation(st: DuelState, seat: int) -> np.ndarray:
    """The flat, normalised view of ``seat`` (its own bug first); every entry in [-1, 1]."""
    me, foe = st.bugs[seat], st.bugs[1 - seat]
    span = max(1, st.width - 1, st.height - 1)
    shared = [
        (foe.x - me.x) / span,
        (foe.y - me.y) / span,
        R.chebyshev(me.pos, foe.pos) / span,
        st.round / max(1, st.cfg.duel.max_rounds),
        float(st.active == seat),
    ]
    shared += [float(st.phase == c) for c in CONTEXTS]
    atk = st.atk
    if atk is not None:
        aw = st.bugs[atk.attacker].p.weapon
        shared += [
            atk.att_succ / 10.0,
            atk.invested / 7.0,
            atk.dice / 14.0,
            aw.weight / 3.0,
            float(aw.ranged),
            float(atk.kind == AttackKind.POGO),
            float(atk.kind == AttackKind.GRAPPLE),
            float(atk.attacker == seat),
            float(atk.att_rolled),
        ]
    else:
        shared += [0.0] * 9
    vec = np.array(_bug_features(st, me, seat) + _bug_features(st, foe, 1 - seat) + shared, dtype=np.float32)
    np.clip(vec, -1.0, 1.0, out=vec)
    return vec

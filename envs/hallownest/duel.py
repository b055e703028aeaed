"""The Hallownest duel: two bugs fight to the death (``rulebreaker/HallownestDuel-v0``).

## Description
A duel of the Unofficial Hollow Knight RPG's combat chapter (docs/rules/hallownest.md, Rule 22). By
default a Medium bug with a Nail (seat 0, the player's side) faces a Medium bug with a Great nail
(seat 1, enemy side) on a 7-cell track; templates, weapons and the arena (``arena.kind = "track" |
"grid"``) come from the config. Initiative (Rule 9, summed Grace dice) is rolled once; each round both
bugs act in that order. Reactions are decisions of the other seat inside the active bug's turn:
``current_player()`` switches to the defender for a defense, to a bug at Heart 0 for Death's Door vs
unconscious, to the foe for a provoked attack, to the grappler to resist an escape, and to a dodging
bug for its dodge move. Every roll is a chance node whose outcome is a success count (for initiative,
a face total). This module only sequences the rules; each decision is a function of ``rules.py``.

## Actions
``Discrete(82)``, masked (the table is ``actions.ACTIONS``). On its turn a bug may attack investing
1-7 Stamina (each further attack in the turn costs 1 more: the tax, Rule 11), grapple or pogo (invest
1-3), step / dash / retreat in a direction (2 on a track, 8 on a grid), clear Imbalance, delayed damage
or a status, try to escape a grapple (invest 0-3), focus 1-7 Soul (ends the turn) or end the turn.
When attacked it chooses no defense, parry (invest 0-6) or dodge (invest 0-6), and after a dodge
whether to move 1 cell; at Heart 0 Death's Door or unconscious; when provoked whether to attack
(invest 0-6); when its grappled foe tries to escape, how much to invest resisting (0-3).
The table never caps what the rules allow: a config whose bugs may invest more (Stamina or Soul up to
10, under a raised ``dice.max_characteristic``) plays ``Discrete(100)``, the 82 ids above unchanged and
then attack 8-10, focus 8-10, parry, dodge and provoked attack 7-10; one whose bugs may also invest
more than 3 in a grapple, pogo, escape or resistance (``grapple.max_investment``,
``grapple.max_escape_investment``, ``grapple.max_resist_investment``, ``pogo.max_investment``: 3 by
default, up to 10) plays ``Discrete(128)``, then grapple, pogo, escape and resist 4-10
(``scenario.action_count(config)``).

## Observation
``Box(-1, 1, (80,), float32)`` (``observation.py``): 30 features of the seat's own bug (Heart, Stamina,
Imbalance, Soul, states, characteristics, weapon, position...), 30 of the opponent's, 20 shared
(relative position, round, decision context one-hot, the pending attack's successes and investment).

## Rewards
+1 for the bug left alive, -1 for the dead one; 0 each when the round limit ends the duel.

## Episode end
A bug dies (Heart 0 for an ordinary bug; Stamina 0 at Death's Door or unconscious: ``knockout``) or
``duel.max_rounds`` (20) rounds pass (``time_limit``).

## Arguments
``rules`` (a variant TOML) or ``config``; every key is in ``envs/hallownest/rules.toml``, commented
with its rule number.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Sequence
from functools import lru_cache
from operator import attrgetter
from typing import Any, Final, NamedTuple

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State
from envs.core.slots import slot_copier
from envs.hallownest import rules as R
from envs.hallownest.actions import (
    ACTIONS,
    CHANCE_PHASES,
    CLEAR_DELAYED_ID,
    CLEAR_IMBALANCE_ID,
    CLEAR_STATUS_ID,
    DEATHS_DOOR_ID,
    DECISION_CONTEXT,
    DECLINE_ID,
    DIRECTIONS,
    END_TURN_ID,
    FIRST_CAPS,
    FULL_CAPS,
    FULL_NUM_ACTIONS,
    GRID_DIRECTIONS,
    MAX_SMALL_INVEST,
    NO_DEFENSE_ID,
    NUM_ACTIONS,
    POOL_NUM_ACTIONS,
    STAY_ID,
    TRACK_DIRECTIONS,
    UNCONSCIOUS_ID,
    ActionSpec,
    Direction,
    Kind,
    Phase,
    action_label,
    invest_ids,
    move_id,
    option_of,
)
from envs.hallownest.config import MAX_POOL, DuelSettings, HallownestConfig
from envs.hallownest.dice import SIDES, initiative_outcomes, sample_initiative, sample_successes, success_outcomes
from envs.hallownest.observation import Encoder, encode_observation, statics
from envs.hallownest.rules import AttackKind, Defense

NOBODY: Final = -1  # the seat in ``grappled_by`` / ``grappling`` / ``decider`` when there is none


class Resume(enum.IntEnum):
    """Where the flow continues after a Heart 0 decision (Rule 14)."""

    ATTACK = 0  # after an attack's damage
    TURN_START = 1  # a turn start, after delayed damage (Rule 17)


class PendingRoll(NamedTuple):
    """The roll of the current chance node (Rules 1-2)."""

    dice: int
    rerolls: int
    success_on: int


_new_tuple = tuple.__new__
# Hot-path aliases: in Python 3.11 every ``Phase.TURN``-style member lookup is a descriptor call.
TURN, DEFENSE, HEART_ZERO, DODGE_MOVE = Phase.TURN, Phase.DEFENSE, Phase.HEART_ZERO, Phase.DODGE_MOVE
PROVOKED, RESIST, OVER = Phase.PROVOKED, Phase.RESIST, Phase.OVER
STEP, DASH = Kind.STEP, Kind.DASH
K_ATTACK, K_FOCUS, K_GRAPPLE, K_POGO, K_ESCAPE = Kind.ATTACK, Kind.FOCUS, Kind.GRAPPLE, Kind.POGO, Kind.ESCAPE
A_GRAPPLE, A_POGO, A_PROVOKED, A_WEAPON = AttackKind.GRAPPLE, AttackKind.POGO, AttackKind.PROVOKED, AttackKind.WEAPON
D_DODGE, D_NONE, D_PARRY = Defense.DODGE, Defense.NONE, Defense.PARRY
K_DEATHS_DOOR, K_DECLINE, K_DODGE, K_NO_DEFENSE, K_PARRY, K_PROVOKED, K_RESIST = (
    Kind.DEATHS_DOOR,
    Kind.DECLINE,
    Kind.DODGE,
    Kind.NO_DEFENSE,
    Kind.PARRY,
    Kind.PROVOKED,
    Kind.RESIST,
)
ATTACK_ROLL, DEFENSE_ROLL, ESCAPE_ROLL, FOCUS_ROLL, INITIATIVE, RESIST_ROLL, SOAK_ROLL = (
    Phase.ATTACK_ROLL,
    Phase.DEFENSE_ROLL,
    Phase.ESCAPE_ROLL,
    Phase.FOCUS_ROLL,
    Phase.INITIATIVE,
    Phase.RESIST_ROLL,
    Phase.SOAK_ROLL,
)
HEART_ZERO_DIES = R.HeartZero.DIES
POGO_BOUNCE = R.Pogo.BOUNCE
RESUME_ATTACK, RESUME_TURN_START = Resume.ATTACK, Resume.TURN_START
STEP_IDS = tuple(move_id(Kind.STEP, d) for d in Direction)
DASH_IDS = tuple(move_id(Kind.DASH, d) for d in Direction)
RETREAT_IDS = tuple(move_id(Kind.RETREAT, d) for d in Direction)

Cell = tuple[int, int]


class Arena:
    """Rule 15: the arena's fixed geometry, worked out once per config and shared by every clone.

    ``steps[cell]`` lists ``(direction, neighbour)`` inside the arena; ``dashes[cell]`` lists
    ``(direction, path)`` of the dashes / jumps whose whole line stays inside (the last cell is the
    landing), and ``dash_paths[cell][direction]`` holds the same paths by direction; ``lines[cell][direction]``
    holds the cells a retreat could cross, nearest first.
    ``contact_table`` holds what :meth:`contacts` worked out (the duel's move path reads it directly), and
    ``step_contacts[x][y][fx][fy]`` what it gives a one-cell step into ``(x, y)`` with the foe at ``(fx, fy)``, for
    every pair of cells (nested lists: a step looks its contacts up without building a key).
    """

    def __init__(self, width: int, height: int, directions: tuple[Direction, ...], dash: int, retreat: int) -> None:
        cells = [(x, y) for y in range(height) for x in range(width)]
        inside = set(cells)
        self.steps: dict[Cell, tuple[tuple[Direction, Cell], ...]] = {}
        self.dashes: dict[Cell, tuple[tuple[Direction, tuple[Cell, ...]], ...]] = {}
        self.lines: dict[Cell, dict[Direction, tuple[Cell, ...]]] = {}
        for c in cells:
            steps, dashes, lines = [], [], {}
            for d in directions:
                step = R.dash_path(c, d.delta, 1)[0]
                if step in inside:
                    steps.append((d, step))
                path = tuple(R.dash_path(c, d.delta, dash))
                if all(x in inside for x in path):
                    dashes.append((d, path))
                lines[d] = tuple(x for x in R.dash_path(c, d.delta, retreat) if x in inside)
            self.steps[c], self.dashes[c], self.lines[c] = tuple(steps), tuple(dashes), lines
        self.dash_paths: dict[Cell, dict[Direction, tuple[Cell, ...]]] = {c: dict(d) for c, d in self.dashes.items()}
        self._moves: dict[tuple[Cell, tuple[Cell, ...]], tuple[list[int], list[int], list[int]]] = {}
        self.contact_table: dict[tuple[tuple[Cell, ...], Cell], tuple[int, bool]] = {}
        self.step_contacts: list[list[list[list[tuple[int, bool]]]]] = [
            [
                [
                    [
                        (R.adjacent_cells_entered(((x, y),), (fx, fy)), R.passes_through(((x, y),), (fx, fy)))
                        for fy in range(height)
                    ]
                    for fx in range(width)
                ]
                for y in range(height)
            ]
            for x in range(width)
        ]

    def moves(self, here: Cell, occupied: tuple[Cell, ...]) -> tuple[list[int], list[int], list[int]]:
        """The step, dash and retreat ids open from ``here`` with ``occupied`` cells held (memoised)."""
        key = (here, occupied)
        found = self._moves.get(key)
        if found is None:
            free = [d for d, c in self.steps[here] if c not in occupied]
            dashes = [DASH_IDS[d] for d, path in self.dashes[here] if path[-1] not in occupied]
            found = self._moves[key] = ([STEP_IDS[d] for d in free], dashes, [RETREAT_IDS[d] for d in free])
        return found

    def contacts(self, cells: tuple[Cell, ...], foe: Cell) -> tuple[int, bool]:
        """Rule 15: the foe-adjacent cells a move enters and whether it passes through the foe's (memoised)."""
        key = (cells, foe)
        found = self.contact_table.get(key)
        if found is None:
            if len(self.contact_table) >= _CONTACTS_LIMIT:
                self.contact_table.clear()
            found = self.contact_table[key] = (R.adjacent_cells_entered(cells, foe), R.passes_through(cells, foe))
        return found


@lru_cache(maxsize=64)
def _arena(width: int, height: int, directions: tuple[Direction, ...], dash: int, retreat: int) -> Arena:
    return Arena(width, height, directions, dash, retreat)


Place = tuple[bool, bool, list[int], list[int], list[int], list[int]]
"""TurnRows.place: in reach, adjacent, the step, dash and retreat ids, and those three rows joined in that order."""


class TurnRows:
    """What :meth:`DuelState._turn_legal` reads besides the two bugs, fixed per config (shared by every duel).

    The id rows of each invested amount are worked out once: ``attack[n]`` holds the attack ids investing up
    to ``n`` (from the least an attack may invest), ``grapple``, ``pogo`` and ``focus`` from 1, ``escape``
    from 0 (each row is ``invest_ids`` of its kind up to ``min(n, cap)``). There is a row for every ``n`` up to
    the most Stamina or Soul a bug may hold, so the Stamina left (or the Soul) indexes a row as it is: the cap
    is already in the rows.
    """

    __slots__ = (
        "attack",
        "dash_cost",
        "delayed_cost",
        "escape",
        "escape_cost",
        "focus",
        "focus_enabled",
        "grapple",
        "grapple_enabled",
        "cover",
        "imbalance_cost",
        "move_cost",
        "needs_pass_over",
        "pogo",
        "places",
        "pogo_enabled",
        "ranged",
        "reach",
        "retreat_cost",
        "sort",
        "status_cost",
        "tax",
        "unconscious_targetable",
    )

    def __init__(
        self,
        k: DuelSettings,
        caps: Any,
        profiles: Sequence[R.Profile],
        cover: dict[Cell, int],
        sort: bool,
        size: tuple[int, int],
    ) -> None:
        most = max(MAX_POOL, *(p.stamina for p in profiles), *(p.soul for p in profiles))  # Stamina / Soul held

        def rows(kind: Kind, low: int, cap: int) -> tuple[tuple[int, ...], ...]:
            return tuple(tuple(invest_ids(kind, low, min(n, cap))) for n in range(most + 1))

        self.tax = k.stamina_tax_per_attack
        self.attack = rows(K_ATTACK, max(1, k.stamina_min_attack_investment), caps.attack)
        self.grapple_enabled = k.grapple_enabled
        self.grapple = rows(K_GRAPPLE, 1, k.grapple_max_investment)
        self.pogo_enabled = k.pogo_enabled
        self.pogo = rows(K_POGO, 1, k.pogo_max_investment)
        self.needs_pass_over = k.pogo_needs_pass_over
        self.escape_cost = k.grapple_escape_cost
        self.escape = rows(K_ESCAPE, 0, k.grapple_max_escape_investment)
        self.focus_enabled = k.focus_enabled
        self.focus = rows(K_FOCUS, 1, caps.focus)
        self.unconscious_targetable = k.unconscious_targetable
        self.cover = cover  # Rule 19: quarters by cell (the config's, never changed)
        self.reach = tuple(R.attack_reach(p.weapon) for p in profiles)  # per seat
        self.ranged = tuple(p.weapon.ranged for p in profiles)  # per seat: a ranged weapon cannot pogo
        self.dash_cost, self.retreat_cost = k.movement_dash_cost, k.movement_retreat_cost
        self.move_cost = max(self.dash_cost, self.retreat_cost)  # the Stamina that opens a dash and a retreat
        self.imbalance_cost, self.delayed_cost = k.imbalance_clear_cost, k.delayed_removal_cost
        self.status_cost = k.status_removal_cost
        self.sort = sort
        # by seat, its cell's x and y, the foe's x and y: nested lists (one subscript per number, no key tuple to
        # hash), every cell pair of the arena's ``size`` (width, height) held from the start (None until met)
        width, height = size
        self.places: list[Any] = [
            [[[[None] * height for _ in range(width)] for _ in range(height)] for _ in range(width)] for _ in profiles
        ]

    def place(self, seat: int, mx: int, my: int, fx: int, fy: int, arena: Arena) -> Place:
        """What the two cells give the bug of ``seat`` at ``(mx, my)``, the foe (living) at ``(fx, fy)`` (memoised).

        Whether its weapon reaches the foe (Rule 11) and whether they are adjacent (Rules 16, 21), each only
        when the foe's cell is not in full cover (Rule 19), and its step, dash and retreat ids with both cells
        held (Rule 15): the part of a turn's options the cells fix; last, the three move rows joined (a bug with
        Speed left and the Stamina for both a dash and a retreat has all of them open).
        """
        dist = R.chebyshev((mx, my), (fx, fy))
        open_to_attack = R.can_be_targeted(self.cover.get((fx, fy), 0))  # Rule 19: full cover shields the foe
        steps, dashes, retreats = arena.moves((mx, my), ((mx, my), (fx, fy)))
        found = self.places[seat][mx][my][fx][fy] = (
            open_to_attack and dist <= self.reach[seat],
            open_to_attack and dist == R.ADJACENT,
            steps,
            dashes,
            retreats,
            [*steps, *dashes, *retreats],
        )
        return found


class _Setup:
    """What a new duel reads from its config, worked out once per config object (the config is frozen).

    Every part is immutable or never changed by a game (the cover table, the arena), so every duel of the
    config and every clone share it.
    """

    def __init__(self, cfg: HallownestConfig) -> None:
        self.k = k = DuelSettings.of(cfg)
        self.unarmed = R.load_weapon(cfg, "unarmed")
        self.track = cfg.arena.kind == "track"
        self.width = cfg.arena.width
        self.height = 1 if self.track else cfg.arena.height
        self.directions = TRACK_DIRECTIONS if self.track else GRID_DIRECTIONS
        self.cover: dict[Cell, int] = {(c[0], c[1]): c[2] for c in cfg.arena.cover}
        self.arena = _arena(self.width, self.height, self.directions, k.movement_dash_cells, k.movement_retreat_cells)
        self.profiles = tuple(R.build_profile(cfg, spec) for spec in cfg.duel.bugs)
        self.starts: tuple[Cell, ...] = tuple((c[0], c[1]) for c in cfg.arena.start[: len(self.profiles)])
        self.maneuverability = tuple(R.maneuverability(p.grace) for p in self.profiles)  # Rule 7, per seat
        self.obs_encoder: Encoder | None = None  # filled by the first duel (observation.statics reads a state)
        self.full_table = _needs_full_table(self.profiles, k)
        self.small_rows = _needs_small_rows(self.profiles, k)
        self.num_actions = FULL_NUM_ACTIONS if self.small_rows else POOL_NUM_ACTIONS if self.full_table else NUM_ACTIONS
        self.sort_legal = self.full_table or self.small_rows  # further rows come after the first ones
        self.caps = FULL_CAPS if self.full_table else FIRST_CAPS
        self.defense_options: dict[tuple[int, int, int], tuple[int, ...]] = {}  # DuelState._legal_defense, memoised
        self.turn_rows = TurnRows(k, self.caps, self.profiles, self.cover, self.sort_legal, (self.width, self.height))
        self.fresh: DuelState | None = None  # a duel of the config as DuelState() leaves it, cloned by new_duel_state


def _needs_full_table(profiles: Sequence[R.Profile], k: DuelSettings) -> bool:
    """Whether a bug may invest more than the first rows of the action table offer (Rules 11, 12, 15, 20).

    Stamina never rises above a bug's maximum and Soul only falls, so the first rows are enough when the
    most Stamina an attack, a defense (less its cost) or a provoked attack (less its cost) can invest and
    the most Soul a focus can invest fit them; otherwise the duel plays the whole table.
    """
    stamina = max(p.stamina for p in profiles)
    soul = max(p.soul for p in profiles)
    defense = max(stamina - k.defense_base_cost, stamina - k.movement_provoked_cost)
    return stamina > FIRST_CAPS.attack or defense > FIRST_CAPS.defense or soul > FIRST_CAPS.focus


def _needs_small_rows(profiles: Sequence[R.Profile], k: DuelSettings) -> bool:
    """Whether a bug may invest more than 3 in a grapple, pogo, escape or resistance (Rules 16, 21).

    Each is bounded by its key and by the Stamina the bug has (an escape's less its cost); the first
    rows hold 0-3 (1-3 for the two attacks), the last rows of the table the rest.
    """
    stamina = max(p.stamina for p in profiles)
    most = max(
        min(stamina, k.grapple_max_investment) if k.grapple_enabled else 0,
        min(stamina, k.pogo_max_investment) if k.pogo_enabled else 0,
        min(stamina - k.grapple_escape_cost, k.grapple_max_escape_investment) if k.grapple_enabled else 0,
        min(stamina, k.grapple_max_resist_investment) if k.grapple_enabled else 0,
    )
    return most > MAX_SMALL_INVEST


def duel_action_count(cfg: HallownestConfig) -> int:
    """The duel's number of action ids under ``cfg``: the first 82 rows, the first 100, or all 128 (``actions``)."""
    return _setup(cfg).num_actions


_SETUPS: dict[int, tuple[HallownestConfig, _Setup]] = {}
_SETUPS_LIMIT = 16  # configs whose setup is kept (a sweep plays many configs one after another)
_CONTACTS_LIMIT = 16384  # memoised (move, foe cell) contacts per arena
_OPTIONS_LIMIT = 16384  # memoised defense option lists per config before the table starts afresh


def _memo_options(table: dict[Any, tuple[int, ...]], key: Any, compute: Callable[[], list[int]]) -> tuple[int, ...]:
    """The options ``compute`` gives, memoised in ``table`` under ``key`` (cleared at ``_OPTIONS_LIMIT``)."""
    found = table.get(key)
    if found is None:
        if len(table) >= _OPTIONS_LIMIT:
            table.clear()
        found = table[key] = tuple(compute())
    return found


def _setup(cfg: HallownestConfig) -> _Setup:
    """The setup of ``cfg``, from the cache (keyed by identity; the entry keeps the config alive)."""
    hit = _SETUPS.get(id(cfg))
    if hit is not None and hit[0] is cfg:
        return hit[1]
    if len(_SETUPS) >= _SETUPS_LIMIT:
        _SETUPS.clear()
    setup = _Setup(cfg)
    _SETUPS[id(cfg)] = (cfg, setup)
    return setup


def new_duel_state(cfg: HallownestConfig) -> DuelState:
    """A fresh duel of ``cfg``: a clone of the one ``DuelState(cfg)`` built first for the config.

    A new duel depends on nothing but the (frozen) config, so the clone is that duel, with its opening
    narration, at the cost of a :meth:`DuelState.clone`; the kept duel itself is never played.
    """
    setup = _setup(cfg)
    fresh = setup.fresh
    if fresh is None:
        fresh = setup.fresh = DuelState(cfg)
    return fresh.clone()


def _n(count: int, word: str) -> str:
    """``1 success`` / ``2 successes`` for the narration."""
    if count == 1:
        return f"1 {word}"
    return f"{count} {word}es" if word.endswith("s") else f"{count} {word}s"


# -- mutable records -------------------------------------------------------------------------------
class Bug:
    """A duellist's changing numbers (the fixed ones are its :class:`~envs.hallownest.rules.Profile`)."""

    FIELDS = (
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
        "over_target",
        "free_move",
        "adj_moved",
        "provoked_used",
        "initiative",
        "conditions_piece",
    )
    """The slots; every one but the last (the kept observation piece) is a number of the rules."""
    __slots__ = FIELDS  # no instance dict: attribute reads stay the interpreter's fast slot reads, clones too

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
        self.grappled_by: int = NOBODY
        self.grappling: int = NOBODY
        self.attacks_made = 0
        self.speed_left = profile.speed
        self.jumped = False  # made a dash / jump this turn (Rule 15)
        self.over_target = False  # its last move was a jump over the foe's cell (Rule 21)
        self.free_move = 0
        self.adj_moved = 0
        self.provoked_used = False  # made its provoked attack this round
        self.initiative = 0
        # observation.py's packed piece of the nine conditions (focus_pending, at_dd, unconscious, dd_used, delayed,
        # status, next_roll_penalty, grappled_by, grappling), kept until one of them changes: each rule that changes
        # one sets it back to None (test_fast_paths checks the kept piece after every transition of random duels);
        # code outside the rules that sets one of the nine by hand (a test's set-up) must set it back to None too
        self.conditions_piece: bytes | None = None

    def fields(self) -> tuple[Hashable, ...]:
        """The changing numbers, for :meth:`DuelState.key`."""
        return _BUG_CHANGING(self)

    def copy(self) -> Bug:
        """A copy sharing the (frozen) profile (every other value is an int, bool or str).

        Every slot is assigned, in ``FIELDS`` order (test_fast_paths checks that none is missed).
        """
        b = _new_object(Bug)
        (
            b.p,
            b.x,
            b.y,
            b.heart,
            b.stamina,
            b.imbalance,
            b.soul,
            b.at_dd,
            b.unconscious,
            b.dead,
            b.dd_used,
            b.focus_pending,
            b.delayed,
            b.delayed_type,
            b.status,
            b.status_name,
            b.status_penalty,
            b.next_roll_penalty,
            b.grappled_by,
            b.grappling,
            b.attacks_made,
            b.speed_left,
            b.jumped,
            b.over_target,
            b.free_move,
            b.adj_moved,
            b.provoked_used,
            b.initiative,
            b.conditions_piece,
        ) = _BUG_ALL(self)
        return b

    @property
    def name(self) -> str:
        """The bug's name in the narration."""
        return self.p.name

    @property
    def pos(self) -> tuple[int, int]:
        """The bug's cell ``(x, y)``."""
        return (self.x, self.y)

    @property
    def can_act(self) -> bool:
        """Rule 14: a dead or unconscious bug cannot act."""
        return not self.dead and not self.unconscious

    @property
    def grappled(self) -> bool:
        """Rule 16: held by the other bug."""
        return self.grappled_by != NOBODY

    @property
    def holds(self) -> bool:
        """Rule 16: grappling the other bug."""
        return self.grappling != NOBODY

    @property
    def near_death(self) -> bool:
        """Rule 14: at Death's Door or unconscious, where damage and spending hit Stamina."""
        return self.at_dd or self.unconscious


class Attack:
    """An attack (or grapple, pogo, provoked attack) being resolved (Rules 11-13, 16, 21)."""

    FIELDS = (
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
    __slots__ = FIELDS  # as Bug: fast slot reads, in every copy

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
        """The attack's numbers, for :meth:`DuelState.key`."""
        return _ATTACK_ALL(self)

    def copy(self) -> Attack:
        """An independent copy (every slot assigned, in ``FIELDS`` order)."""
        a = _new_object(Attack)
        (
            a.kind,
            a.attacker,
            a.target,
            a.invested,
            a.dice,
            a.rerolls,
            a.mod,
            a.att_succ,
            a.att_rolled,
            a.defense,
            a.def_invested,
            a.def_dice,
            a.def_rerolls,
            a.def_mod,
            a.def_succ,
            a.def_rolled,
            a.defense_decided,
            a.damage,
        ) = _ATTACK_ALL(self)
        return a


_new_object = object.__new__
_BUG_ALL = attrgetter(*Bug.FIELDS)  # a bug's slots as a tuple, in FIELDS order (one C call)
_BUG_CHANGING = attrgetter(*Bug.FIELDS[1:-1])  # all but the profile and the kept observation piece
_ATTACK_ALL = attrgetter(*Attack.FIELDS)


# -- the state -------------------------------------------------------------------------------------
class DuelState(State[int]):
    """A Hallownest duel; the module docstring is its rules card."""

    legal_sorted = True  # every legal tuple lists its ids in increasing order (``rulebreaker check`` verifies it)
    player_kept = True  # current_player() is the kept _player (``rulebreaker check`` verifies it at every node)

    FIELDS = (
        "cfg",
        "k",
        "unarmed",
        "track",
        "width",
        "height",
        "directions",
        "cover",
        "arena",
        "sort_legal",
        "caps",
        "maneuverability",
        "bugs",
        "phase",
        "init_seat",
        "order",
        "turn_idx",
        "round",
        "active",
        "atk",
        "roll",
        "decider",
        "resume",
        "escape_succ",
        "escape_roll",
        "resist_invested",
        "_escape_rerolls",
        "_resist_mod",
        "_soak_mod",
        "_focus_auto",
        "_legal",
        "_player",
        "grapple_on",
        "obs_encoder",
        "_defense_options",
        "_rows",
        "num_players",
        "log",
        "_outcome",
        "narrating",
    )
    # slots, not the instance dict: a clone's dict (filled by ``__dict__.update``) falls off the interpreter's fast
    # attribute reads, and every rule reads ``self``. The base State's fields are slots too (its ``narrating`` is a
    # class default, which Python 3.11 never specialises a read of: every ``if self.narrating`` was a generic
    # lookup); the protocol's State has no __slots__, so an instance still has a __dict__, which nothing fills.
    __slots__ = FIELDS

    def __init__(self, cfg: HallownestConfig) -> None:
        super().__init__(2)
        self.narrating = True  # the protocol's class default, which the slot hides
        self.cfg = cfg
        setup = _setup(cfg)
        self.k = k = setup.k  # the scalar rules, resolved once (shared by clones)
        self.unarmed = setup.unarmed  # Rule 16: the "weapon" of a grapple
        self.track = setup.track
        self.width = setup.width
        self.height = setup.height
        self.directions = setup.directions
        self.cover: dict[tuple[int, int], int] = setup.cover
        self.arena = setup.arena
        self.sort_legal = setup.sort_legal  # the config plays further rows of the action table (actions.py)
        self.caps = setup.caps  # the most the table lets an attack, a defense and a focus invest
        self.maneuverability = setup.maneuverability
        self.bugs = [Bug(profile, x, y) for profile, (x, y) in zip(setup.profiles, setup.starts, strict=True)]
        self.phase = INITIATIVE
        self._player = CHANCE  # current_player(), kept with the phase (an initiative roll comes first)
        self.init_seat = 0
        self.order: list[int] = [0, 1]
        self.turn_idx = 0
        self.round = 0
        self.active = 0
        self.atk: Attack | None = None
        self.roll = PendingRoll(0, 0, k.dice_success_on)
        self.decider: int = NOBODY  # seat deciding in a reaction phase
        self.resume = RESUME_ATTACK
        self.escape_succ = 0
        self.escape_roll: tuple[int, int] = (0, 0)  # dice, success modifier of the escape
        self.resist_invested = 0
        self._escape_rerolls = 0
        self._resist_mod = 0
        self._soak_mod = 0
        self._focus_auto = 0
        self._legal: Sequence[int] | None = None  # this decision's legal ids, until the state moves
        self.grapple_on = False  # a bug is grappled (Rule 16): kept by _grapples_changed, read before _check_grapple
        if setup.obs_encoder is None:
            setup.obs_encoder = Encoder(statics(self))
        self.obs_encoder = setup.obs_encoder  # observation.py: the fixed features and the blocks built
        self._defense_options = setup.defense_options
        self._rows = setup.turn_rows
        if self.narrating:
            self.narrate(
                "start",
                f"{self.bugs[0].name} ({self.bugs[0].p.weapon.label}) faces "
                f"{self.bugs[1].name} ({self.bugs[1].p.weapon.label}). Roll initiative.",
            )

    @property
    def dirs(self) -> int:
        """How many directions a move may take (2 on a track, 8 on a grid)."""
        return len(self.directions)

    # ---------------------------------------------------------------------------------------------
    # protocol
    def current_player(self) -> int:
        """The seat to move (the active bug in a turn, the deciding one in a reaction), ``CHANCE`` or ``TERMINAL``.

        Kept in ``_player`` where the phase changes, as each phase says: the adapter asks it about five times per
        step, and a slot read is a third of the phase tests (test_fast_paths checks it after every transition).
        """
        return self._player

    def clone(self) -> DuelState:
        new = DuelState.__new__(DuelState)
        _copy_slots(new, self)  # every slot (test_fast_paths checks that none is missed), the log as a copy
        new.bugs = [b.copy() for b in self.bugs]
        new.atk = self.atk.copy() if self.atk is not None else None
        return new  # ``order`` is only ever replaced, and ``_legal`` (never changed in place) still holds

    def key(self) -> Hashable:
        return (
            int(self.phase),
            self.init_seat,
            tuple(self.order),
            self.turn_idx,
            self.round,
            self.active,
            self.atk.fields() if self.atk else None,
            tuple(self.roll),
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

    # State.observation(seat) is the encoder itself, bound as the method: one Python call fewer per step
    observation = encode_observation

    def action_label(self, action: int) -> str:
        return action_label(action)

    def option_of(self, action: int) -> str | None:
        me = self.bugs[self.active]
        return option_of(action, self.phase, me.attacks_made, me.stamina)

    # -- legal actions ---------------------------------------------------------------------------
    def legal_actions(self) -> list[int]:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._turn_legal() if self.phase is TURN else self._compute_legal()
        return list(legal)

    def legal_tuple(self) -> tuple[int, ...]:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._turn_legal() if self.phase is TURN else self._compute_legal()
        return legal if type(legal) is tuple else tuple(legal)  # a kept tuple as it is: nobody can change it

    def _compute_legal(self) -> Sequence[int]:
        ph = self.phase
        if ph is TURN:
            return self._turn_legal()
        if ph is DEFENSE:
            atk = self.atk
            assert atk is not None
            me = self.bugs[atk.target]
            key = (atk.target, me.stamina, me.grappled_by)  # all _legal_defense reads that a config does not fix
            return _memo_options(self._defense_options, key, self._legal_defense)
        if ph is HEART_ZERO:
            out = []
            if self.k.deaths_door_enabled:
                out.append(DEATHS_DOOR_ID)
            if self.k.unconscious_enabled:
                out.append(UNCONSCIOUS_ID)
            return out
        if ph is DODGE_MOVE:
            b = self.bugs[self.decider]
            occupied = self._occupied()
            steps = [STEP_IDS[d] for d, c in self.arena.steps[(b.x, b.y)] if c not in occupied]
            return [*steps, STAY_ID]
        if ph is PROVOKED:
            b = self.bugs[self.decider]
            cost = self.k.movement_provoked_cost
            return [DECLINE_ID, *invest_ids(K_PROVOKED, 0, min(self.caps.defense, b.stamina - cost))]
        if ph is RESIST:
            b = self.bugs[self.decider]
            return invest_ids(K_RESIST, 0, min(self.k.grapple_max_resist_investment, b.stamina))
        return []

    def _turn_legal(self) -> list[int]:
        """:meth:`_legal_turn` in one pass: the same ids in the same order (test_fast_paths compares them).

        A turn's options are asked once per turn decision (``legal_actions`` keeps them until the state
        moves) and most turn states are new, so they are worked out here rather than memoised: one flat
        function instead of three parts and their rule calls, reading each field once, with the id rows of
        each invested amount and what the two cells give (reach, adjacency, moves) taken from :class:`TurnRows`.
        """
        t = self._rows
        seat = self.active
        me, foe = self.bugs[seat], self.bugs[1 - seat]
        st = me.stamina
        place = t.places[seat][me.x][me.y][foe.x][foe.y]  # the cells read in the subscripts (no locals for them)
        if place is None:
            place = t.place(seat, me.x, me.y, foe.x, foe.y, self.arena)
        in_reach, adjacent, steps, dashes, retreats, every_move = place
        out = [END_TURN_ID]
        # no bug is dead in a turn (a death ends the duel): the dead bugs' part of the plain rules is left out
        # Rules 11, 16, 21 (_turn_attacks): R.can_target (the cover part in the place), R.attack_budget,
        # R.pogo_allowed; out of reach (the common case) the foe's conditions are not read
        if (in_reach or adjacent) and (t.unconscious_targetable or not foe.unconscious):
            budget = st - me.attacks_made * t.tax
            if budget < 0:
                budget = 0
            if in_reach:
                out += t.attack[budget]
            if adjacent:
                if t.grapple_enabled and foe.grappled_by != seat:
                    out += t.grapple[budget]
                if t.pogo_enabled and not t.ranged[seat] and (me.over_target if t.needs_pass_over else me.jumped):
                    out += t.pogo[budget]
        # Rule 15 (_turn_moves); the two flags set by compare-and-jump (a comparison kept as a value is a generic op)
        grappled = True
        if me.grappled_by == NOBODY:
            grappled = False
            if me.speed_left > 0 and st >= t.move_cost:  # the common case: every step, dash and retreat is open
                out += every_move
            else:
                speed = False
                if me.speed_left > 0:
                    speed = True
                if speed or me.free_move > 0:
                    out += steps
                if st >= t.dash_cost:
                    out += dashes
                if speed and st >= t.retreat_cost:
                    out += retreats
        # Rules 10, 16, 17, 18, 20 (_turn_others)
        if me.imbalance > 0 and st >= t.imbalance_cost:
            out.append(CLEAR_IMBALANCE_ID)
        if me.delayed > 0 and st >= t.delayed_cost:
            out.append(CLEAR_DELAYED_ID)
        if me.status > 0 and st >= t.status_cost:
            out.append(CLEAR_STATUS_ID)
        if grappled:
            most = st - t.escape_cost
            if most >= 0:
                out += t.escape[most]
        if me.soul > 0 and me.focus_pending == 0 and t.focus_enabled:  # Soul first: it runs out, and stays out
            out += t.focus[me.soul]
        return sorted(out) if t.sort else out

    def _legal_turn(self) -> list[int]:
        """The active bug's options, in increasing action id (the table's order): the plain computation."""
        out = [END_TURN_ID, *self._turn_attacks(), *self._turn_moves(), *self._turn_others()]
        return sorted(out) if self.sort_legal else out  # the table's further rows come last

    def _turn_attacks(self) -> list[int]:
        """Rules 11, 16, 21: the attacks, grapples and pogos the active bug can make."""
        k = self.k
        me = self.bugs[self.active]
        foe = self.bugs[1 - self.active]
        out: list[int] = []
        w = me.p.weapon
        dist = R.chebyshev((me.x, me.y), (foe.x, foe.y))
        budget = R.attack_budget(me.stamina, me.attacks_made, k.stamina_tax_per_attack)
        quarters = self.cover.get((foe.x, foe.y), 0) if self.cover else 0
        targetable = R.can_target(foe.dead, quarters, foe.unconscious, k.unconscious_targetable)
        if targetable and dist <= R.attack_reach(w):
            lo = max(1, k.stamina_min_attack_investment)
            out.extend(invest_ids(K_ATTACK, lo, min(budget, self.caps.attack)))
        if targetable and dist == R.ADJACENT:
            if k.grapple_enabled and foe.grappled_by != self.active:
                out.extend(invest_ids(K_GRAPPLE, 1, min(budget, k.grapple_max_investment)))
            if k.pogo_enabled and R.pogo_allowed(me.jumped, me.over_target, k.pogo_needs_pass_over, w):
                out.extend(invest_ids(K_POGO, 1, min(budget, k.pogo_max_investment)))
        return out

    def _turn_moves(self) -> list[int]:
        """Rule 15: the steps, dashes and retreats open to the active bug."""
        k = self.k
        me = self.bugs[self.active]
        if me.grappled:
            return []
        st = me.stamina
        out: list[int] = []
        steps, dashes, retreats = self.arena.moves((me.x, me.y), self._occupied())
        if me.speed_left > 0 or me.free_move > 0:
            out += steps
        if st >= k.movement_dash_cost:
            out += dashes
        if st >= k.movement_retreat_cost and me.speed_left > 0:
            out += retreats
        return out

    def _turn_others(self) -> list[int]:
        """Rules 10, 16, 17, 18, 20: clearing Imbalance, delayed damage or a status; escaping; focusing."""
        k = self.k
        me = self.bugs[self.active]
        st = me.stamina
        out: list[int] = []
        if me.imbalance > 0 and st >= k.imbalance_clear_cost:
            out.append(CLEAR_IMBALANCE_ID)
        if me.delayed > 0 and st >= k.delayed_removal_cost:
            out.append(CLEAR_DELAYED_ID)
        if me.status > 0 and st >= k.status_removal_cost:
            out.append(CLEAR_STATUS_ID)
        if me.grappled:
            out.extend(invest_ids(K_ESCAPE, 0, min(st - k.grapple_escape_cost, k.grapple_max_escape_investment)))
        if k.focus_enabled and me.focus_pending == 0:
            out.extend(invest_ids(K_FOCUS, 1, min(me.soul, self.caps.focus)))
        return out

    def _legal_defense(self) -> list[int]:
        atk = self.atk
        assert atk is not None
        me = self.bugs[atk.target]
        k = self.k
        out = [NO_DEFENSE_ID]
        spare = me.stamina - k.defense_base_cost  # most Stamina the defense can invest
        cap = R.max_parry_investment(
            me.p.weapon, me.p.shield_quality, k.parry_weapon_invest_max_is_quality, k.parry_max_shield_investment
        )
        most = self.caps.defense
        out.extend(invest_ids(K_PARRY, 0, min(cap, most, spare)))
        if not (k.grapple_blocks_dodge and me.grappled):
            out.extend(invest_ids(K_DODGE, 0, min(k.dodge_max_investment, most, spare)))
        return sorted(out) if self.sort_legal else out  # the table's further rows come last

    # -- geometry --------------------------------------------------------------------------------
    def _occupied(self) -> tuple[Cell, ...]:
        """The cells living bugs hold (cells hold one bug, Rule 15)."""
        a, b = self.bugs
        if a.dead or b.dead:
            return tuple((x.x, x.y) for x in self.bugs if not x.dead)
        return ((a.x, a.y), (b.x, b.y))

    def _dash_path(self, me: Bug, d: Direction) -> tuple[Cell, ...] | None:
        """Rule 15: the cells of a dash / jump, if the line stays inside and the landing is free."""
        occupied = self._occupied()
        for direction, path in self.arena.dashes[(me.x, me.y)]:
            if direction is d:
                return path if path[-1] not in occupied else None
        return None

    # -- applying decisions ----------------------------------------------------------------------
    def apply_action(self, action: int) -> None:
        # a chance node or the end has no legal action (_compute_legal is empty there)
        if action not in (self._legal or self._compute_legal()):
            raise IllegalActionError(f"illegal action {action} in phase {self.phase.name}")
        self._legal = None
        ph = self.phase
        if ph is TURN:
            self.bugs[self.active].over_target = False  # Rule 21: any action ends a move over the target
            _TURN_HANDLERS[action](self)
            return
        s = ACTIONS[action]
        if ph is DEFENSE:
            self._declare_defense(s)
        elif ph is HEART_ZERO:
            self._choose_at_heart_zero(s.kind)
        elif ph is DODGE_MOVE:
            self._dodge_move(s)
        elif ph is PROVOKED:
            self._provoked_choice(s)
        elif ph is RESIST:
            self._resist_escape(s.amount)

    def _end_turn_action(self) -> None:
        if self.narrating:
            self.narrate("end_turn", f"{self.bugs[self.active].name} ends the turn.", self.active)
        self._end_turn()

    # -- chance ----------------------------------------------------------------------------------
    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.phase == INITIATIVE:
            dice, rr = self._initiative_pool(self.init_seat)
            return list(initiative_outcomes(dice, rr))
        if self.phase in CHANCE_PHASES:
            return list(success_outcomes(*self.roll))
        raise ValueError("not a chance node")

    def sample_chance(self, rng: Rng) -> int:
        ph = self.phase
        if ph is INITIATIVE:
            return sample_initiative(rng, *self._initiative_pool(self.init_seat))
        if ph in CHANCE_PHASES:
            dice, rerolls, success_on = self.roll
            return sample_successes(rng, dice, rerolls, success_on)
        raise ValueError("not a chance node")

    def apply_chance(self, outcome: int) -> None:
        ph = self.phase
        step = _CHANCE_STEPS.get(ph)
        if step is None:
            raise ValueError(f"apply_chance in phase {ph.name}")
        n = int(outcome)
        self._legal = None
        if ph is INITIATIVE:
            dice = self._initiative_pool(self.init_seat)[0]
            if not dice <= n <= SIDES * dice:
                raise ValueError(f"an initiative total of {n} is impossible with {dice} dice")
        elif not 0 <= n <= self.roll[0]:
            raise ValueError(f"{n} successes are impossible with {self.roll.dice} dice")
        step(self, n)

    def _attack_rolled(self, n: int) -> None:
        """Rule 11: the attack's successes (after its modifier); the attack goes on."""
        atk = self.atk
        assert atk is not None
        n += atk.mod
        atk.att_succ = n if n > 0 else 0  # max(0, n) without the builtin's call
        atk.att_rolled = True
        if self.narrating:
            self.narrate(
                "roll",
                f"The attack rolls {atk.dice} dice: {_n(atk.att_succ, 'success')}.",
                atk.attacker,
                successes=atk.att_succ,
            )
        self._attack_continue()

    def _defense_rolled(self, n: int) -> None:
        """Rule 12: the parry's or dodge's successes (after its modifier); the attack goes on."""
        atk = self.atk
        assert atk is not None
        n += atk.def_mod
        atk.def_succ = n if n > 0 else 0
        atk.def_rolled = True
        if self.narrating:
            verb = "parry" if atk.defense == D_PARRY else "dodge"
            self.narrate(
                "roll",
                f"The {verb} rolls {atk.def_dice} dice: {_n(atk.def_succ, 'success')}.",
                atk.target,
                successes=atk.def_succ,
            )
        self._attack_continue()

    def _soak_rolled(self, n: int) -> None:
        n += self._soak_mod
        self._after_soak(n if n > 0 else 0)

    def _escape_rolled(self, n: int) -> None:
        self.escape_succ = max(0, n)
        self._start_resist_roll()

    def _resist_rolled(self, n: int) -> None:
        self._resolve_escape(max(0, n))

    # -- helpers ---------------------------------------------------------------------------------
    def _set_roll(self, phase: Phase, dice: int, rerolls: int) -> None:
        self.phase, self._player = phase, CHANCE
        # tuple.__new__ builds the same PendingRoll without the NamedTuple's Python-level __new__
        # (comparisons in place of max(0, ...): the same ints without two builtin calls)
        self.roll = _new_tuple(
            PendingRoll, (dice if dice > 0 else 0, rerolls if rerolls > 0 else 0, self.k.dice_success_on)
        )

    def _roll_penalty(self, b: Bug) -> int:
        """Rules 8, 18: the bug's roll penalty now; a Fang's next-roll penalty is used up by it."""
        pen = R.roll_penalty(b.next_roll_penalty, b.status, b.status_penalty)
        if b.next_roll_penalty:  # used up: a condition changes (else it stays 0 and the kept piece holds)
            b.next_roll_penalty = 0
            b.conditions_piece = None
        return pen

    def _grapple_penalty(self, b: Bug) -> int:
        """Rule 16: a grappled bug loses dice on its attacks and defenses."""
        return self.k.grapple_penalty if b.grappled_by != NOBODY else 0

    def _modified(self, dice: int, penalty: int) -> tuple[int, int]:
        return R.apply_modifier(dice, -penalty, self.k.dice_modifiers_are_dice)

    def _spend(self, seat: int, amount: int) -> bool:
        """Spend Stamina. Spending cancels a pending focus (Rule 20); Stamina 0 at Death's Door kills (Rule 14).

        Returns False if the bug died of it.
        """
        if amount <= 0:
            return True
        b = self.bugs[seat]
        if b.at_dd or b.unconscious:  # Bug.near_death: spending the last Stamina may kill (R.spend_stamina)
            b.stamina, dies = R.spend_stamina(b.stamina, amount, True)
        else:  # R.spend_stamina away from Death's Door is the plain difference, never a death: no call for it
            b.stamina -= amount
            dies = False
        if b.focus_pending:
            if self.narrating:
                self.narrate("focus", f"{b.name} spends Stamina: the focus is lost.", seat)
            b.focus_pending = 0
            b.conditions_piece = None
        if dies:
            self._kill(seat, "Stamina ran out at Death's Door")
            return False
        return True

    def _kill(self, seat: int, why: str) -> None:
        b = self.bugs[seat]
        b.dead = True
        winner = 1 - seat
        if self.narrating:
            self.narrate("death", f"{b.name} dies ({why}).", seat)
        self.phase, self._player = OVER, TERMINAL
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
        if self.narrating:
            self.narrate("initiative", f"{b.name} rolls {total} for initiative.", self.init_seat, total=total)
        if self.init_seat == 0:
            self.init_seat = 1
            return
        self.order = R.initiative_order([x.initiative for x in self.bugs], [x.p.side for x in self.bugs])
        if self.narrating:
            self.narrate("initiative", f"{self.bugs[self.order[0]].name} acts first.", self.order[0])
        self.round = 1
        self.turn_idx = 0
        self._begin_turn(self.order[0])

    # -- Rule 10: turn start -----------------------------------------------------------------------
    def _begin_turn(self, seat: int) -> None:
        self.active = seat
        b = self.bugs[seat]
        # this turn's attacks, jump, move over the target and free move are already 0 / False: the bug's last turn
        # ended in _end_turn, which clears them, and only a turn of the bug's own sets them (test_fast_paths checks)
        b.speed_left = b.p.speed
        b.adj_moved = 0
        if self.narrating:
            self.narrate("turn", f"Round {self.round}: {b.name}'s turn.", seat)
        if b.focus_pending and not (b.dead or b.unconscious):  # Bug.can_act
            rolled, auto = R.focus_dice(b.focus_pending, self.k.focus_auto_success_per, self.k.focus_auto_dice_within_x)
            dice, mod = self._modified(rolled, self._roll_penalty(b))
            self._focus_auto = auto + mod
            self._set_roll(FOCUS_ROLL, dice, R.focus_rerolls(b.p.insight, self.k.focus_reroll_divisor))
            return
        if b.focus_pending:  # a focus of a bug that cannot act is lost (else it stays 0 and the kept piece holds)
            b.focus_pending = 0
            b.conditions_piece = None
        if b.delayed > 0:
            self._turn_start_delayed()
        else:  # nothing for Rule 17 to strike (the common case): straight on to the refill
            self._turn_start_refill()

    def _resolve_focus(self, successes: int) -> None:
        """Rule 20: a focus takes effect at the start of the next turn: each success heals 1 Heart."""
        b = self.bugs[self.active]
        before = b.heart
        b.heart = R.focus_heal(b.heart, b.p.heart, successes, self._focus_auto)
        b.focus_pending = 0
        b.conditions_piece = None  # the focus (and maybe Death's Door) is over
        if self.narrating:
            self.narrate(
                "focus",
                f"{b.name}'s focus heals {b.heart - before} Heart ({b.heart}/{b.p.heart}).",
                self.active,
                healed=b.heart - before,
            )
        if R.leaves_deaths_door(b.at_dd, b.heart):
            b.at_dd = False
            if self.narrating:
                self.narrate("focus", f"{b.name} steps back from Death's Door.", self.active)
        self._turn_start_delayed()

    def _turn_start_delayed(self) -> None:
        """Rule 17: delayed damage strikes at turn start (natural damage: no soak, no reduction), then -1."""
        b = self.bugs[self.active]
        if b.delayed > 0:
            dmg, b.delayed = R.delayed_tick(b.delayed)
            b.conditions_piece = None
            if self.narrating:
                self.narrate("delayed", f"{b.name} takes {dmg} {b.delayed_type or 'delayed'} damage.", self.active)
            if self._apply_damage(self.active, dmg, RESUME_TURN_START):
                return
        self._turn_start_refill()

    def _turn_start_refill(self) -> None:
        """Rule 10 (and 14): refill Stamina to max - Imbalance, then lose 1 Imbalance."""
        b = self.bugs[self.active]
        if b.dead:
            return
        if b.unconscious:
            if self.narrating:
                self.narrate("turn", f"{b.name} lies unconscious.", self.active)
            self._end_turn()
            return
        k = self.k
        if b.at_dd and not k.deaths_door_stamina_refills:
            b.imbalance = R.recover_imbalance(b.imbalance, k.imbalance_recovery_per_turn)
        else:
            b.stamina, b.imbalance = R.turn_start_refill(
                b.stamina, b.p.stamina, b.imbalance, k.stamina_refill_never_lowers, k.imbalance_recovery_per_turn
            )
        if self.grapple_on:
            self._check_grapple()
        self.phase, self._player = TURN, self.active

    def _end_turn(self) -> None:
        """Rules 11, 18, 22: the tax resets; status pools drop; the next bug acts; the round limit ends the duel."""
        b = self.bugs[self.active]
        if b.status > 0:
            b.status = R.status_tick(b.status, self.k.status_decay_per_turn)
            b.conditions_piece = None
        b.attacks_made = 0
        b.jumped = False
        b.over_target = False
        b.free_move = 0
        self.turn_idx += 1
        if self.turn_idx >= len(self.order):
            self.turn_idx = 0
            self.round += 1
            for x in self.bugs:
                x.provoked_used = False
            if R.time_limit_reached(self.round, self.k.duel_max_rounds):
                self.phase, self._player = OVER, TERMINAL
                self.finish(None, EndReason.TIME_LIMIT, [0.0, 0.0], f"{self.k.duel_max_rounds} rounds")
                return
        self._begin_turn(self.order[self.turn_idx])

    def _clear_imbalance(self) -> None:
        """Rule 10: spend Stamina on your turn to remove Imbalance 1 for 1."""
        b = self.bugs[self.active]
        if not self._spend(self.active, self.k.imbalance_clear_cost):
            return
        b.imbalance -= 1
        if self.narrating:
            self.narrate("imbalance", f"{b.name} regains balance (Imbalance {b.imbalance}).", self.active)

    def _clear_delayed(self) -> None:
        """Rule 17: Stamina removes delayed damage 1 for 1."""
        b = self.bugs[self.active]
        if not self._spend(self.active, self.k.delayed_removal_cost):
            return
        b.delayed -= 1
        b.conditions_piece = None
        if self.narrating:
            self.narrate("delayed", f"{b.name} tends the wound (delayed damage {b.delayed}).", self.active)

    def _clear_status(self) -> None:
        """Rule 18: Stamina reduces a status pool 1 for 1."""
        b = self.bugs[self.active]
        if not self._spend(self.active, self.k.status_removal_cost):
            return
        b.status -= 1
        b.conditions_piece = None
        if self.narrating:
            self.narrate("status", f"{b.name} shakes off {b.status_name} (pool {b.status}).", self.active)

    # -- Rule 11: attacks ------------------------------------------------------------------------
    def _declare_attack(self, kind: AttackKind, invested: int, attacker: int | None = None) -> None:
        k = self.k
        a_seat = self.active if attacker is None else attacker
        t_seat = 1 - a_seat
        me, foe = self.bugs[a_seat], self.bugs[t_seat]
        w = me.p.weapon
        if kind == A_PROVOKED:
            cost = R.provoked_attack_cost(invested, k.movement_provoked_cost)
            tax = 0
        else:
            cost = R.attack_cost(invested, me.attacks_made, k.stamina_tax_per_attack)
            tax = cost - invested
            me.attacks_made += 1
        if kind == A_GRAPPLE:
            dice, rr = R.grapple_dice(
                me.p.might, k.grapple_unarmed_quality, invested, me.p.appendages, k.grapple_max_appendage_bonus
            )
        else:
            dice, rr = R.attack_dice(w, me.p.might, me.p.grace, invested)
        if self.narrating:
            what = "a grapple" if kind is A_GRAPPLE else f"{kind.phrase} with the {w.label}"
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
        if kind != A_GRAPPLE:
            gain = R.heavy_weapon_imbalance(w, k.imbalance_heavy_weight, k.imbalance_heavy_weapon_gain)
            if gain:
                me.imbalance = R.add_imbalance(me.imbalance, gain, k.imbalance_max)
        dice, mod = self._modified(dice, self._roll_penalty(me) + self._grapple_penalty(me))
        quarters = self.cover.get((foe.x, foe.y), 0) if self.cover else 0
        if quarters:
            dice = R.cover_penalty(dice, quarters, k.cover_dice_per_quarter)
        atk = Attack(kind, a_seat, t_seat, invested)
        atk.dice, atk.rerolls, atk.mod = dice, rr, mod
        self.atk = atk
        self._attack_continue()

    def _can_defend(self, seat: int) -> bool:
        b = self.bugs[seat]
        k = self.k
        return R.can_defend(b.dead, b.unconscious, k.unconscious_can_defend, b.stamina, k.defense_base_cost)

    def _attack_continue(self) -> None:
        """Rules 11-13: the attack roll, the defense decision and roll (in the configured order), then damage."""
        atk = self.atk
        assert atk is not None
        if self.k.defense_after_attack_roll and not atk.att_rolled:
            self._set_roll(ATTACK_ROLL, atk.dice, atk.rerolls)
            return
        if not atk.defense_decided:
            if R.defense_offered(atk.att_succ, atk.att_rolled) and self._can_defend(atk.target):
                self.phase, self.decider = DEFENSE, atk.target
                self._player = atk.target
                return
            atk.defense_decided = True
        if not atk.att_rolled:
            self._set_roll(ATTACK_ROLL, atk.dice, atk.rerolls)
            return
        if atk.defense != D_NONE and not atk.def_rolled:
            self._set_roll(DEFENSE_ROLL, atk.def_dice, atk.def_rerolls)
            return
        self._resolve_attack()

    # -- Rule 12: defense ------------------------------------------------------------------------
    def _declare_defense(self, s: ActionSpec) -> None:
        """Rule 12: parry, dodge (1 Stamina plus the invested) or take the blow."""
        atk = self.atk
        assert atk is not None
        k = self.k
        me = self.bugs[atk.target]
        attacker = self.bugs[atk.attacker]
        atk.defense_decided = True
        if s.kind == K_NO_DEFENSE:
            if self.narrating:
                self.narrate("defense", f"{me.name} does not defend.", atk.target)
            self._attack_continue()
            return
        j = s.amount
        if not self._spend(atk.target, R.defense_cost(j, k.defense_base_cost)):
            return
        pen = self._roll_penalty(me) + self._grapple_penalty(me)
        if s.kind == K_PARRY:
            dice, rr = R.parry_dice(
                me.p.might,
                me.p.weapon,
                me.p.shield_quality,
                j,
                k.parry_weapon_dice_per_stamina,
                k.parry_weapon_quality_adds_dice,
                k.parry_weapon_reroll_applies,
            )
            if attacker.p.weapon.ranged and atk.kind != A_GRAPPLE:
                pen += k.parry_ranged_penalty
            atk.defense = D_PARRY
            verb = "parries"
        else:
            weapon = attacker.p.weapon if atk.kind != A_GRAPPLE else self.unarmed
            weight = R.dodge_weight(weapon, k.dodge_light_weapon_weight)
            dice, rr = R.dodge_dice(me.p.grace, j, weight)
            atk.defense = D_DODGE
            verb = "dodges"
            if not k.dodge_imbalance_only_if_moved:
                me.imbalance = R.add_imbalance(me.imbalance, k.dodge_imbalance_gain, k.imbalance_max)
        dice, mod = self._modified(dice, pen)
        atk.def_dice, atk.def_rerolls, atk.def_mod, atk.def_invested = dice, rr, mod, j
        if self.narrating:
            self.narrate(
                "defense",
                f"{me.name} {verb}, investing {j} more Stamina: {dice} dice.",
                atk.target,
                invested=j,
                dice=dice,
            )
        self._attack_continue()

    # -- Rule 13: damage -------------------------------------------------------------------------
    def _resolve_attack(self) -> None:
        k = self.k
        atk = self.atk
        assert atk is not None
        me, foe = self.bugs[atk.attacker], self.bugs[atk.target]
        net = R.net_successes(atk.att_succ, atk.def_succ)
        hit = R.is_hit(net)
        parried = R.was_parried(atk.defense, atk.att_succ, hit)
        if atk.kind == A_GRAPPLE:
            if R.grapple_holds(net):
                foe.grappled_by, me.grappling = atk.attacker, atk.target
                self._grapples_changed()
                if self.narrating:
                    self.narrate("grapple", f"{me.name} grapples {foe.name}.", atk.attacker)
            else:
                if self.narrating:
                    self.narrate("grapple", f"{foe.name} slips the grapple.", atk.target)
            self._attack_done()
            return
        if atk.kind == A_POGO:
            if R.pogo_outcome(hit, parried) is POGO_BOUNCE:
                me.free_move = k.pogo_free_move
                if self.narrating:
                    self.narrate("pogo", f"{me.name} bounces off {foe.name} (free move {me.free_move}).", atk.attacker)
            else:
                me.imbalance = R.add_imbalance(me.imbalance, k.pogo_miss_imbalance, k.imbalance_max)
                if self.narrating:
                    self.narrate("pogo", f"{me.name} lands off balance.", atk.attacker)
        if not hit:
            word = "is parried" if parried else ("is dodged" if atk.defense == D_DODGE and atk.att_succ else "misses")
            if self.narrating:
                self.narrate("miss", f"The attack {word}.", atk.attacker)
            self._attack_done()
            return
        w = me.p.weapon
        potential = R.potential_damage(net, w.damage, atk.invested, k.damage_extra_cap)
        atk.damage = R.reduce_damage(potential, foe.p.damage_reduction, k.damage_min_after_reduction)
        if self.narrating:
            self.narrate(
                "hit",
                f"A hit with {_n(net, 'net success')}: {potential} potential damage"
                f"{f', {atk.damage} after reduction' if atk.damage != potential else ''}.",
                atk.attacker,
                net=net,
                potential=potential,
            )
        if k.damage_soak_enabled:
            dice, rr = R.dice_of(foe.p.shell), R.rerolls_of(foe.p.shell)
            dice, self._soak_mod = self._modified(dice, self._roll_penalty(foe))
            self._set_roll(SOAK_ROLL, dice, rr)
            return
        self._after_soak(0)

    def _after_soak(self, soaked: int) -> None:
        k = self.k
        atk = self.atk
        assert atk is not None
        me, foe = self.bugs[atk.attacker], self.bugs[atk.target]
        dmg = R.soak_damage(atk.damage, soaked, k.damage_soak_floor)
        if self.narrating:
            self.narrate(
                "damage", f"{foe.name}'s Shell soaks {min(soaked, atk.damage)}: {dmg} damage.", atk.target, damage=dmg
            )
        w = me.p.weapon
        if w.next_roll_penalty or w.delayed_damage or w.status:  # the weapon leaves a condition on the foe
            foe.conditions_piece = None
        if w.next_roll_penalty:
            foe.next_roll_penalty = R.fang_penalty(foe.next_roll_penalty, w.next_roll_penalty)
        if w.delayed_damage:
            foe.delayed = R.add_delayed(foe.delayed, w.delayed_damage)
            foe.delayed_type = w.delayed_type
        if w.status:
            foe.status = R.add_status(foe.status, w.status_pool, k.status_max_pool)
            foe.status_name, foe.status_penalty = w.status, w.status_dice_penalty
        if self._apply_damage(atk.target, dmg, RESUME_ATTACK):
            return
        self._attack_done()

    def _apply_damage(self, seat: int, dmg: int, resume: Resume) -> bool:
        """Rules 13-14: damage hits Heart; at Death's Door or unconscious it hits Stamina.

        Returns True when the flow stops here (a Heart 0 decision, or a death).
        """
        if dmg <= 0:
            return False
        b = self.bugs[seat]
        if b.at_dd or b.unconscious:  # Bug.near_death
            b.stamina, dead = R.stamina_damage(b.stamina, dmg)
            if self.narrating:
                self.narrate("damage", f"{b.name} loses {dmg} Stamina (Stamina {b.stamina}).", seat)
            if dead:
                self._kill(seat, "Stamina 0 at Death's Door" if b.at_dd else "Stamina 0 while unconscious")
                return True
            return False
        b.heart = R.heart_damage(b.heart, dmg)
        if self.narrating:
            self.narrate("damage", f"{b.name} loses {dmg} Heart (Heart {b.heart}).", seat)
        if b.heart > 0:
            return False
        k = self.k
        if R.heart_zero_fate(b.p.important, k.deaths_door_enabled, k.unconscious_enabled) is HEART_ZERO_DIES:
            self._kill(seat, "Heart 0")
            return True
        self.phase, self.decider, self.resume = HEART_ZERO, seat, resume
        self._player = seat
        return True

    # -- Rule 14: Heart 0 ------------------------------------------------------------------------
    def _choose_at_heart_zero(self, kind: Kind) -> None:
        """Rule 14: Death's Door (Stamina restored once per Rest) or unconscious (restored always, helpless)."""
        seat = self.decider
        b = self.bugs[seat]
        k = self.k
        b.conditions_piece = None  # Death's Door or unconscious
        if kind == K_DEATHS_DOOR:
            b.stamina = R.deaths_door_stamina(b.stamina, b.p.stamina, b.dd_used, k.deaths_door_once_per_rest)
            b.dd_used = True
            b.at_dd = True
            if self.narrating:
                self.narrate("deaths_door", f"{b.name} stands at Death's Door (Stamina {b.stamina}).", seat)
        else:
            b.stamina = R.unconscious_stamina(b.stamina, b.p.stamina, k.unconscious_restores_stamina)
            b.unconscious = True
            b.focus_pending = 0
            if self.narrating:
                self.narrate("unconscious", f"{b.name} falls unconscious (Stamina {b.stamina}).", seat)
            if b.grappling != NOBODY:
                self.bugs[b.grappling].grappled_by = NOBODY
                b.grappling = NOBODY
                self._grapples_changed()
        if b.stamina <= 0:
            self._kill(seat, "no Stamina left at Heart 0")
            return
        if self.resume == RESUME_TURN_START:
            self._turn_start_refill()
        else:
            self._attack_done()

    def _attack_done(self) -> None:
        atk = self.atk
        self.atk = None
        if self.phase == OVER or atk is None:
            return
        if atk.defense == D_DODGE:  # R.dodge_move_offered is False for any other defense: no cells to look at
            tgt = self.bugs[atk.target]
            room = bool(self.arena.moves((tgt.x, tgt.y), self._occupied())[0])  # a free cell to step to
            can_act, grappled = not (tgt.dead or tgt.unconscious), tgt.grappled_by != NOBODY  # Bug.can_act, .grappled
            if R.dodge_move_offered(True, self.k.dodge_move_cells, can_act, grappled, room):
                self.phase, self.decider = DODGE_MOVE, atk.target
                self._player = atk.target
                return
        self._back_to_turn()

    def _back_to_turn(self) -> None:
        if self.phase == OVER:
            return
        if self.grapple_on:
            self._check_grapple()
        b = self.bugs[self.active]
        if not (b.dead or b.unconscious):  # Bug.can_act
            self.phase, self._player = TURN, self.active
        else:
            self._end_turn()

    def _dodge_move(self, s: ActionSpec) -> None:
        """Rule 12: a dodging bug may move 1 cell without provoking, gaining 1 Imbalance."""
        b = self.bugs[self.decider]
        if s.kind == STEP:
            assert s.direction is not None
            dx, dy = s.direction.delta
            b.x, b.y = b.x + dx, b.y + dy
            if self.k.dodge_imbalance_only_if_moved:
                b.imbalance = R.add_imbalance(b.imbalance, self.k.dodge_imbalance_gain, self.k.imbalance_max)
            if self.narrating:
                self.narrate("move", f"{b.name} dodges {s.direction.label} (Imbalance {b.imbalance}).", self.decider)
        self._back_to_turn()

    # -- Rule 15: movement -----------------------------------------------------------------------
    def _moved_through(self, seat: int, adjacent: int, through: bool) -> None:
        """Rule 15: passing through the foe's cell, or more enemy-adjacent cells than Maneuverability, provokes.

        ``adjacent`` and ``through`` are the move's contacts (:meth:`Arena.contacts`): the foe-adjacent cells it
        entered and whether it passed through the foe's cell.
        """
        me = self.bugs[seat]
        foe = self.bugs[1 - seat]
        me.adj_moved += adjacent
        provoking = R.provoking_move(me.adj_moved, self.maneuverability[seat], through)
        if not provoking:  # the common case: provoked_attack_offered needs a provoking move
            return
        k = self.k
        if R.provoked_attack_offered(
            provoking,
            k.movement_provoked_attacks,
            foe.can_act,
            foe.provoked_used,
            foe.stamina,
            k.movement_provoked_cost,
        ):
            foe.provoked_used = True
            if self.narrating:
                self.narrate("provoke", f"{me.name} moves past {foe.name} and provokes an attack.", seat)
            self.phase, self.decider = PROVOKED, 1 - seat
            self._player = self.decider

    def _step(self, d: Direction) -> None:
        me = self.bugs[self.active]
        dx, dy = DIRECTIONS[d]
        me.x, me.y = me.x + dx, me.y + dy
        if me.free_move > 0:
            me.free_move -= 1
            if self.narrating:
                self.narrate("move", f"{me.name} bounces {d.label}.", self.active)
        else:
            me.speed_left -= 1
            if self.narrating:
                self.narrate("move", f"{me.name} moves {d.label}.", self.active)
            foe = self.bugs[1 - self.active]
            adjacent, through = self.arena.step_contacts[me.x][me.y][foe.x][foe.y]  # Arena.contacts of the one cell
            # a step entering no foe-adjacent cell and not passing through the foe's leaves adj_moved as it is, so
            # _moved_through's provoking_move is False unless adj_moved is already past Maneuverability: the call
            # is made only when it can do something (the same check R.provoking_move makes, on the same values)
            if adjacent or through or me.adj_moved > self.maneuverability[self.active]:
                self._moved_through(self.active, adjacent, through)
        if self.grapple_on:
            self._check_grapple()

    def _dash(self, d: Direction) -> None:
        """Rule 15: dash / jump: 1 Stamina, 2 cells, no Speed; the bug counts as airborne for a pogo (Rule 21)."""
        me = self.bugs[self.active]
        # _dash_path without its search and its landing test: the dash was legal, so its line stays inside and
        # its landing is free (the legal dashes are the arena's with the landing free, Arena.moves)
        path = self.arena.dash_paths[(me.x, me.y)][d]
        if not self._spend(self.active, self.k.movement_dash_cost):
            return
        me.x, me.y = path[-1]
        me.jumped = True
        foe = self.bugs[1 - self.active]
        me.over_target = R.passes_through(path, (foe.x, foe.y))
        if self.narrating:
            self.narrate("move", f"{me.name} dashes {d.label}.", self.active)
        arena, foe_cell = self.arena, (foe.x, foe.y)
        # the memoised contacts read here (a call only for a new pair)
        adjacent, through = arena.contact_table.get((path, foe_cell)) or arena.contacts(path, foe_cell)
        if adjacent or through or me.adj_moved > self.maneuverability[self.active]:  # as in _step: else a no-op
            self._moved_through(self.active, adjacent, through)
        if self.grapple_on:
            self._check_grapple()

    def _retreat(self, d: Direction) -> None:
        """Rule 15: retreat: 1 Stamina, up to 2 cells of Speed, no provoked attack, +1 Imbalance."""
        k = self.k
        me = self.bugs[self.active]
        if not self._spend(self.active, k.movement_retreat_cost):
            return
        line = self.arena.lines[(me.x, me.y)][d]
        # the open cells are those before the foe's: the line starts next to the bug, and in a turn both bugs live
        # (the living bugs' cells, _occupied, are the two)
        foe = self.bugs[1 - self.active]
        foe_cell = (foe.x, foe.y)
        open_cells = line.index(foe_cell) if foe_cell in line else len(line)
        moved = R.retreat_distance(k.movement_retreat_cells, me.speed_left, open_cells)
        if moved:
            me.x, me.y = line[moved - 1]
        me.speed_left -= moved
        me.imbalance = R.add_imbalance(me.imbalance, k.movement_retreat_imbalance, k.imbalance_max)
        if self.narrating:
            self.narrate(
                "move", f"{me.name} retreats {_n(moved, 'cell')} {d.label} (Imbalance {me.imbalance}).", self.active
            )
        if self.grapple_on:
            self._check_grapple()

    def _provoked_choice(self, s: ActionSpec) -> None:
        seat = self.decider
        if s.kind == K_DECLINE:
            if self.narrating:
                self.narrate("provoke", f"{self.bugs[seat].name} lets it pass.", seat)
            self._back_to_turn()
            return
        self._declare_attack(A_PROVOKED, s.amount, attacker=seat)

    # -- Rule 16: grapple ------------------------------------------------------------------------
    def _grapples_changed(self) -> None:
        """Keep ``grapple_on`` (whether a bug is grappled) after a grapple starts or ends; the kept conditions go."""
        a, b = self.bugs
        self.grapple_on = a.grappled_by != NOBODY or b.grappled_by != NOBODY
        a.conditions_piece = b.conditions_piece = None  # grappled_by and grappling are conditions

    def _check_grapple(self) -> None:
        """Rule 16: a grapple ends when the two are no longer adjacent or the grappler cannot act.

        Its callers skip it while ``grapple_on`` is False (no grapple to check: the common case, one call fewer).
        """
        bugs = self.bugs
        for i, b in enumerate(bugs):
            if b.grappled_by != NOBODY:  # Bug.grappled (field reads: a property is a call each)
                gb = bugs[b.grappled_by]
                if not R.grapple_persists(not (gb.dead or gb.unconscious), R.chebyshev((b.x, b.y), (gb.x, gb.y))):
                    b.grappled_by = NOBODY
                    gb.grappling = NOBODY
                    if self.narrating:
                        self.narrate("grapple", f"{b.name} is free of the grapple.", i)
        self._grapples_changed()

    def _attempt_escape(self, invested: int) -> None:
        """Rule 16: 1 Stamina (+ invested) to break free, Might or Grace against the grappler's Might."""
        k = self.k
        me = self.bugs[self.active]
        if not self._spend(self.active, k.grapple_escape_cost + invested):
            return
        dice, rr = R.escape_dice(me.p.might, me.p.grace, invested)
        dice, mod = self._modified(dice, self._roll_penalty(me))
        self.escape_roll = (dice, mod)
        if self.narrating:
            self.narrate("escape", f"{me.name} struggles to break free ({dice} dice).", self.active)
        self.phase, self.decider = RESIST, me.grappled_by
        self._player = self.decider
        self._escape_rerolls = rr

    def _resist_escape(self, invested: int) -> None:
        seat = self.decider
        if not self._spend(seat, invested):
            return
        self.resist_invested = invested
        self._set_roll(ESCAPE_ROLL, self.escape_roll[0], self._escape_rerolls)

    def _start_resist_roll(self) -> None:
        g = self.bugs[self.decider]
        dice, rr = R.resist_dice(g.p.might, self.resist_invested, g.p.appendages, self.k.grapple_max_appendage_bonus)
        dice, self._resist_mod = self._modified(dice, self._roll_penalty(g))
        self.escape_succ = max(0, self.escape_succ + self.escape_roll[1])
        self._set_roll(RESIST_ROLL, dice, rr)

    def _resolve_escape(self, resist: int) -> None:
        me = self.bugs[self.active]
        resist = max(0, resist + self._resist_mod)
        if R.escape_succeeds(self.escape_succ, resist):
            g = self.bugs[me.grappled_by]
            g.grappling = NOBODY
            me.grappled_by = NOBODY
            self._grapples_changed()
            if self.narrating:
                self.narrate("escape", f"{me.name} breaks free ({self.escape_succ} vs {resist}).", self.active)
        else:
            if self.narrating:
                self.narrate("escape", f"{me.name} stays grappled ({self.escape_succ} vs {resist}).", self.active)
        self._back_to_turn()

    # -- Rule 20: focus --------------------------------------------------------------------------
    def _focus(self, soul: int) -> None:
        """Rule 20: invest Soul in a focus; it ends the turn and heals at the next turn start."""
        me = self.bugs[self.active]
        me.soul -= soul
        me.focus_pending = soul
        me.conditions_piece = None
        if self.narrating:
            self.narrate("focus", f"{me.name} focuses {soul} Soul.", self.active, soul=soul)
        self._end_turn()


_copy_slots = slot_copier(DuelState.FIELDS, copied=("log",))
"""Every slot of a duel onto a new one (:meth:`DuelState.clone`)."""


def _turn_handler(s: ActionSpec) -> Callable[[DuelState], None]:
    """What a turn action does, bound to its amount or direction (``apply_action`` indexes them by id)."""
    kind, n, d = s.kind, s.amount, s.direction
    if kind is Kind.END_TURN:
        return DuelState._end_turn_action
    if kind is Kind.ATTACK:
        return lambda st: st._declare_attack(A_WEAPON, n)
    if kind is Kind.GRAPPLE:
        return lambda st: st._declare_attack(A_GRAPPLE, n)
    if kind is Kind.POGO:
        return lambda st: st._declare_attack(A_POGO, n)
    if kind is Kind.CLEAR_IMBALANCE:
        return DuelState._clear_imbalance
    if kind is Kind.CLEAR_DELAYED:
        return DuelState._clear_delayed
    if kind is Kind.CLEAR_STATUS:
        return DuelState._clear_status
    if kind is Kind.ESCAPE:
        return lambda st: st._attempt_escape(n)
    if kind is Kind.FOCUS:
        return lambda st: st._focus(n)
    if d is not None and kind is Kind.STEP:
        return lambda st: st._step(d)
    if d is not None and kind is Kind.DASH:
        return lambda st: st._dash(d)
    if d is not None and kind is Kind.RETREAT:
        return lambda st: st._retreat(d)

    def not_a_turn_action(st: DuelState) -> None:  # never legal in a turn (a reaction's row)
        raise IllegalActionError(f"{s} is not a turn action")

    return not_a_turn_action


_TURN_HANDLERS: tuple[Callable[[DuelState], None], ...] = tuple(_turn_handler(s) for s in ACTIONS)


_CHANCE_STEPS: dict[Phase, Callable[[DuelState, int], None]] = {
    INITIATIVE: DuelState._initiative_result,
    ATTACK_ROLL: DuelState._attack_rolled,
    DEFENSE_ROLL: DuelState._defense_rolled,
    SOAK_ROLL: DuelState._soak_rolled,
    ESCAPE_ROLL: DuelState._escape_rolled,
    RESIST_ROLL: DuelState._resist_rolled,
    FOCUS_ROLL: DuelState._resolve_focus,
}
"""What a roll's outcome does, by the phase of the pending roll (``apply_chance``); its keys are ``CHANCE_PHASES``."""

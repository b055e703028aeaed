"""The Duel scenario, ``rulebreaker/StorytellerDuel-v0``: an extended + resisted contest (Rules 9, 11-13).

## Description
Two characters struggle ("someone dodges, a wrestling match"), first to ``duel.target``
accumulated successes (docs/rules/storyteller.md, Duel). Each turn both characters, in secret,
declare one action or two (Rule 9: dice -2 and -3 in the declared order; more, see below): ATTACK (the extended roll
that accumulates successes, by the main approach or the wild one: a bigger pool at a higher
difficulty) and/or DEFEND (the resisting roll that cancels the opponent's attack successes,
Rule 12). Seat 0 declares, then seat 1 (neither sees the other's declaration); the rolls follow in
declared order, seat 0's first, and before each roll its side decides on Willpower, knowing the
rolls made so far this turn (Rule 8; under ``willpower.declared = "before_the_turn"`` each side puts
its point on one of its rolls when declaring). One
attack and one defence per turn (Rule 11's one roll per task per interval); with
``extended.one_roll_per_task = false`` up to ``duel.max_actions`` rolls of any kinds (Rule 9: the
k-th of n rolls pool - n - (k - 1) dice, at least one). A defence botch counts
as 0 successes. An attack's successes minus the opponent's defence successes accumulate
(Rules 11-13); a botched attack loses everything accumulated. No automatic successes: it is a
contest under stress (Rule 7).

## Actions
``Discrete(8)`` (``actions.DAct``): 0 one action, 1 two actions (dice -2, -3 in the declared
order, Rule 9); 2 attack (main approach), 3 wild attack (alternative: bigger pool, higher
difficulty), 4 defend (the resisting roll, Rule 12); 5 no Willpower, 6/7 Willpower on action 1/2
(Rule 8: before each roll only that roll's is legal). With one roll per task (the rules as written)
a turn holds at most two actions; otherwise up to ``duel.max_actions`` (1..10, [decision], never more
than ``multiple_actions.max_actions``), and each action beyond 2 adds two ids after these:
8 + 2 (n - 3) declares n actions, 9 + 2 (n - 3) spends Willpower on action n
(``Discrete(8 + 2 (max_actions - 2))``).

## Observation
``Box(0, 1, (40,))`` from the seat's side (``observation.encode_duel``): both progresses / target,
both Willpower / 10, turn, own decision phase and declared actions, both fighters' pools / 20 and
difficulties / 10, last turn's gains and defence successes, the seat index; then, while the turn's
rolls are made, own attack successes kept so far / 10, own defence / 10, the opponent's two, the
kind of own roll a Willpower decision is about (one-hot), and whether own attack was reset this turn
(40 values); with more than 2 actions a turn, own declared actions are divided by that most, and the
kinds of own picks 3..n follow as 3 one-hot values each (``40 + 3 (max_actions - 2)`` values).

## Rewards
+1 to the winner, -1 to the loser, 0 each on a draw.

## Episode end
A side reaches the target (``KNOCKOUT``; both at once: the higher total, equal: a roll-off chance
node, Rule 13); under ``extended.abandon_on_reset`` a botched attack loses the duel; a draw after
``duel.turns`` turns (``TIME_LIMIT``).

## Arguments
The config's ``[duel]`` table: ``target``, ``turns``, ``max_actions``, ``fighters`` (pools and difficulties of the
main attack, the wild attack and the defence; a specialty on the main attack); and every rule key
the rules above name.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from functools import lru_cache, partial
from typing import Any, ClassVar, NamedTuple

import numpy as np

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State
from envs.core.slots import slot_copier
from envs.storyteller import rules
from envs.storyteller.actions import (
    DUEL_CONTEXTS,
    KIND_NAMES,
    KINDS,
    DAct,
    DPhase,
    Kind,
    duel_action_count,
    duel_count_action,
    duel_declared_count,
    duel_label,
    duel_option,
    duel_willpower_action,
    duel_willpower_index,
    pick_action,
)
from envs.storyteller.config import Fighter, StorytellerConfig
from envs.storyteller.dice import BOTCH, _sampler, degree_of, outcome_distribution, outcome_of_faces
from envs.storyteller.observation import (
    DUEL_NO_ROLLS,
    DUEL_PLAN_PLACES,
    DUEL_PLAN_SCALE,
    duel_fighters_part,
    duel_observation_size,
    duel_plan_blocks,
    duel_rolls_block,
    duel_turn_blocks,
)

DuelChance = int | tuple[int, ...]
"""A duel chance outcome: a roll's outcome (or forced faces), or the seat that wins the roll-off."""
SEATS = (0, 1)


# Hot-path aliases: in Python 3.11 every ``DPhase.PICK``-style member lookup is a descriptor call.
COUNT, PICK, WILLPOWER, RESOLVE, TIEBREAK = DPhase.COUNT, DPhase.PICK, DPhase.WILLPOWER, DPhase.RESOLVE, DPhase.TIEBREAK
ACT_NO_WILLPOWER = DAct.NO_WILLPOWER
ATTACK_ALT, ATTACK_MAIN, DEFEND = Kind.ATTACK_ALT, Kind.ATTACK_MAIN, Kind.DEFEND
OVER = DPhase.OVER
FIRST_PICK = DAct.ATTACK  # PICK action ids: FIRST_PICK + kind (actions.pick_action)
_F32 = np.float32
_frombuffer = np.frombuffer  # a module global: no numpy attribute lookup per observation


class DuelRoll(NamedTuple):  # a NamedTuple: built on every roll, several times cheaper than a dataclass
    """A declared roll waiting to be resolved (a chance node)."""

    seat: int
    kind: Kind
    pool: int
    difficulty: int
    willpower: int
    specialty: bool
    index: int = 0  # type: ignore[assignment]  # (shadows tuple.index) the roll's place in its side's declared order (0-based)
    willpower_decided: bool = False  # Rule 8: the side's Willpower decision before this roll was made


class Side:
    """A fighter's pools and difficulties (Rules 1-2, 15), indexed by :class:`~envs.storyteller.actions.Kind`."""

    __slots__ = ("name", "pools", "difficulties", "specialty")

    def __init__(self, f: Fighter, cfg: StorytellerConfig) -> None:
        self.name = f.name
        self.pools = (f.attack_pool, f.alt_attack_pool, f.defence_pool)
        self.difficulties = tuple(
            rules.difficulty_of(d, cfg) for d in (f.attack_difficulty, f.alt_attack_difficulty, f.defence_difficulty)
        )
        self.specialty = (cfg.specialties.enabled and f.specialty, False, False)


def _usable(pools: tuple[int, ...], one_roll: bool, kind: Kind, n: int, k: int, used: tuple[Kind, ...]) -> bool:
    """Rule 9: the k-th of n actions needs a pool >= 1; Rule 11: one attack and one defence a turn."""
    if not rules.can_attempt(rules.multiple_action_pool(pools[kind], n, k)):
        return False
    if not one_roll:
        return True
    if kind == DEFEND:
        return DEFEND not in used
    return ATTACK_MAIN not in used and ATTACK_ALT not in used


def _feasible(pools: tuple[int, ...], one_roll: bool, n: int, k0: int, used: tuple[Kind, ...]) -> bool:
    """Rules 9 and 11: actions k0+1..n of an n-action turn can still be declared."""
    if k0 >= n:
        return True
    if not one_roll:  # any roll may fill any place, and the last place has the smallest pools
        return rules.can_attempt(rules.multiple_action_pool(max(pools), n, n))
    return any(
        _usable(pools, one_roll, kind, n, k0 + 1, used) and _feasible(pools, one_roll, n, k0 + 1, (*used, kind))
        for kind in KINDS
    )


@lru_cache(maxsize=1024)
def declaration_table(
    pools: tuple[int, ...], max_actions: int, one_roll: bool, n: int, used: tuple[Kind, ...]
) -> tuple[int, ...]:
    """Rules 9 and 11: a fighter's legal declarations: how many actions (``n`` = 0), or the next pick.

    They depend only on the fighter's pools and the rules, so they are worked out once per fighter.
    """
    if n == 0:
        return tuple(duel_count_action(m) for m in range(1, max_actions + 1) if _feasible(pools, one_roll, m, 0, ()))
    k0 = len(used)
    return tuple(
        pick_action(kind)
        for kind in KINDS
        if _usable(pools, one_roll, kind, n, k0 + 1, used) and _feasible(pools, one_roll, n, k0 + 1, (*used, kind))
    )


class _DuelSetup:
    """What a new duel reads from its config, worked out once per config object (the config is frozen)."""

    def __init__(self, cfg: StorytellerConfig) -> None:
        self.sides = tuple(Side(f, cfg) for f in cfg.duel.fighters)
        self.max_actions = rules.duel_max_actions(cfg)
        self.action_count = duel_action_count(self.max_actions)
        self.obs_size = duel_observation_size(self.max_actions)
        self.plan_scale = max(DUEL_PLAN_SCALE, float(self.max_actions))  # observation: actions declared / this
        self.willpower_per_roll = rules.willpower_before_each_roll(cfg)
        # Rule 8, Willpower before each roll: the legal decision before the roll of action k
        self.willpower_on = tuple((ACT_NO_WILLPOWER, duel_willpower_action(k)) for k in range(self.max_actions))
        # Rule 8, Willpower before the turn: the legal decision after n picks (no point, or on one of them)
        self.willpower_any = tuple(
            (ACT_NO_WILLPOWER, *(duel_willpower_action(k) for k in range(n))) for n in range(self.max_actions + 1)
        )
        # Rules 9 and 11 per seat: declaration_table(n, used) of its fighter (a partial: one C call to the lru)
        one_roll = cfg.extended.one_roll_per_task
        self.declare = tuple(partial(declaration_table, side.pools, self.max_actions, one_roll) for side in self.sides)
        self.count_legal = tuple(declare(0, ()) for declare in self.declare)  # each seat's legal counts
        self.count_of = tuple(duel_declared_count(a) for a in range(self.action_count))  # by COUNT action id
        self.wp_index = tuple(duel_willpower_index(a) for a in range(self.action_count))  # by Willpower action id
        # Rule 8: may_spend_willpower(points, spent) is points > 0 and spent < wp_limit (no successes: never)
        self.wp_limit = cfg.willpower.per_turn if cfg.willpower.successes > 0 else 0
        self.queues: dict[tuple[int, int, tuple[Kind, ...], int | None], tuple[DuelRoll, ...]] = {}
        """A seat's declared rolls by (seat, actions declared, the kinds picked, the action Willpower is on): a
        roll reads only these and the config (bounded: 2 seats x the plans x max_actions + 1)."""
        self.settled: dict[tuple[tuple[int, ...], int | None], tuple[bool, int]] = {}
        """Rules 11-12 of a side's turn by (its attack outcomes, the opponent's defence): (reset, gain)."""
        self.decided: dict[tuple[DuelRoll, bool], DuelRoll] = {}
        """A queued roll once its side decided on Willpower (Rule 8), by (the roll, a point spent)."""
        self.fresh: DuelState | None = None  # a new duel of the config, never played (new_duel clones it)
        self.tiebreak_odds: float | None = None  # Rule 13's roll-off, from the fixed fighters (worked out once)
        self.fighters_part: tuple[list[float], list[float]] | None = None  # filled by the first duel
        # observation blocks memoised on what they read (bounded: _BLOCKS_LIMIT entries each)
        self.extra_obs = self.obs_size - duel_observation_size(DUEL_PLAN_PLACES)  # values after the 40
        self.no_plan = (bytes(4 * 10), bytes(4 * self.extra_obs))  # the plan blocks off one's own decision
        self.plan_blocks: dict[tuple[int, int, tuple[Kind, ...]], tuple[bytes, bytes]] = {}
        self.rolls_blocks: dict[tuple[Any, ...], bytes] = {}
        self.attack_turns: dict[tuple[int, ...], rules.AttackTurn] = {}  # Rule 11 by a turn's attack outcomes


_SETUPS: dict[int, tuple[StorytellerConfig, _DuelSetup]] = {}
_SETUPS_LIMIT = 64
_BLOCKS_LIMIT = 4096  # memoised observation blocks per config and kind before the memo starts afresh


def _setup(cfg: StorytellerConfig) -> _DuelSetup:
    """The setup of ``cfg``, from the cache (keyed by identity; the entry keeps the config alive)."""
    hit = _SETUPS.get(id(cfg))
    if hit is None or hit[0] is not cfg:
        if len(_SETUPS) >= _SETUPS_LIMIT:
            _SETUPS.clear()
        hit = _SETUPS[id(cfg)] = (cfg, _DuelSetup(cfg))
    return hit[1]


class DuelState(State[DuelChance]):
    """A duel in progress (the module docstring is its rules card)."""

    legal_sorted = True  # every legal tuple lists its ids in increasing order (``rulebreaker check`` verifies it)
    player_kept = True  # current_player() is the kept _player (``rulebreaker check`` verifies it at every node)
    legal_kept = True  # legal_tuple() is the kept _legal (``rulebreaker check`` verifies it at every node)

    FIELDS: ClassVar[tuple[str, ...]] = (
        "num_players",
        "log",
        "_outcome",
        "cfg",
        "sides",
        "target",
        "progress",
        "willpower",
        "turn",
        "phase",
        "seat",
        "n_actions",
        "plans",
        "wp_action",
        "wp_spent",
        "queue",
        "attack",
        "defence",
        "last",
        "max_actions",
        "action_count",
        "obs_size",
        "plan_scale",
        "willpower_per_roll",
        "one_roll_per_task",
        "prevents_botch",
        "_player",
        "_legal",
        "fighters_part",
        "_setup",
        "_turn_obs",
        "narrating",
    )
    """Every attribute of a state (the protocol's ``num_players``, ``log``, ``_outcome`` and ``narrating`` too), all
    set by ``__init__``."""
    # Slots, not an instance dict: Python 3.11 shares an instance dict's keys with its class only up to 30 keys, and
    # an unshared dict defeats the specialisation of every attribute read and ``self.method()`` call. (The
    # protocol's State has no __slots__, so an instance still has an empty __dict__ nothing writes to.)
    __slots__ = FIELDS

    def __init__(self, cfg: StorytellerConfig) -> None:
        super().__init__(2)
        self.narrating = True  # the protocol's class default, which the slot hides
        self.cfg = cfg
        setup = _setup(cfg)
        self.sides = list(setup.sides)  # a Side is never changed: every duel of the config shares them
        self.target = cfg.duel.target
        self.progress = [0, 0]
        self.willpower = [cfg.willpower.points, cfg.willpower.points]
        self.turn = 0
        self.phase = COUNT
        self.seat = 0
        self.n_actions = [0, 0]
        self.plans: list[tuple[Kind, ...]] = [(), ()]  # tuples: a pick makes a new one (clones share them)
        self.wp_action: list[int | None] = [None, None]
        self.wp_spent = [0, 0]  # Willpower points spent this turn (Rule 8)
        self.queue: list[DuelRoll] = []
        self.attack: list[tuple[int, ...]] = [(), ()]  # this turn's attack outcomes per seat (tuples, as plans)
        self.defence: list[int | None] = [None, None]
        self.last = (0, 0, 0, 0)  # last turn: gains and defence nets, for observations
        self.max_actions = setup.max_actions
        self.action_count, self.obs_size, self.plan_scale = setup.action_count, setup.obs_size, setup.plan_scale
        self.willpower_per_roll = setup.willpower_per_roll
        # the config keys read on every step, resolved once into plain attributes
        self.one_roll_per_task = cfg.extended.one_roll_per_task
        self.prevents_botch = cfg.willpower.prevents_botch
        # Who moves and this node's legal actions are set by every transition, when it enters the node (the
        # adapter asks current_player ~7 times and the legal actions once or twice a step, the transition
        # knows both at no cost): _player and _legal are what current_player() and _compute_legal() give.
        self._player = 0
        self._legal: tuple[int, ...] = setup.count_legal[0]
        if setup.fighters_part is None:
            setup.fighters_part = (duel_fighters_part(self, 0), duel_fighters_part(self, 1))
        self.fighters_part = setup.fighters_part
        self._setup = setup
        self._turn_obs: list[tuple[bytes, bytes] | None] = [None, None]
        """Per seat, the packed head and middle observation blocks (:func:`duel_turn_blocks`), or ``None``
        once a value they read (progress, Willpower, turn, last turn's results) has changed: every such
        change goes through :meth:`_turn_changed`. Copied by :meth:`clone`."""
        if self.narrating:
            self.narrate(
                "setup",
                f"{self.sides[0].name} and {self.sides[1].name} struggle: first to {self.target} "
                f"successes wins, within {cfg.duel.turns} turns.",
            )

    # -- protocol --------------------------------------------------------------------------------
    def current_player(self) -> int:
        return self._player  # kept by every transition (see __init__); _current_player is the plain rule

    def _current_player(self) -> int:
        """Who moves, worked out from the phase (the reference of the kept ``_player``)."""
        if self._outcome is not None:
            return TERMINAL
        ph = self.phase
        if ph is RESOLVE or ph is TIEBREAK:
            return CHANCE
        return self.seat

    def finish(self, winner: int | None, reason: EndReason, returns: Sequence[float], detail: str = "") -> None:
        """End the duel (:meth:`State.finish`); nobody moves any more."""
        self._player = TERMINAL
        self._legal = ()
        super().finish(winner, reason, returns, detail)

    def chance_outcomes(self) -> list[tuple[DuelChance, float]]:
        if self.phase is TIEBREAK:
            p = self._tiebreak_odds()
            return [(0, p), (1, 1.0 - p)]
        r = self.queue[0]
        return [(k, p) for k, p in rules.roll_chance_outcomes(r.pool, r.difficulty, r.willpower, r.specialty, self.cfg)]

    def sample_chance(self, rng: Rng) -> DuelChance:
        if self.phase is TIEBREAK:
            return 0 if rng.random() < self._tiebreak_odds() else 1
        r = self.queue[0]
        # dice.sample_outcome inlined (one call fewer per roll): the same table and the same single draw
        keys, cum = _sampler(r.pool, r.difficulty, r.willpower, self.prevents_botch, r.specialty)
        return keys[bisect_right(cum, rng.random())]

    def apply_chance(self, outcome: DuelChance) -> None:
        """Apply a chance outcome.

        RESOLVE: an outcome (``BOTCH`` or net successes) or a tuple of faces (+ specialty rerolls).
        TIEBREAK: the winning seat.
        """
        if self.phase is TIEBREAK:
            assert not isinstance(outcome, tuple)
            w = int(outcome)
            if self.narrating:
                self.narrate(
                    "tiebreak",
                    f"Both reach {self.target} with equal totals; they roll again and {self.sides[w].name} wins.",
                    w,
                )
            self._win(w)
            return
        r = self.queue.pop(0)
        if type(outcome) is int:  # a sampled outcome (the common case, without isinstance and int() calls)
            value = outcome
        elif isinstance(outcome, tuple):
            value = outcome_of_faces(
                outcome[: r.pool],
                r.difficulty,
                r.willpower,
                self.cfg.willpower.prevents_botch,
                r.specialty,
                outcome[r.pool :],
            )
        else:
            value = int(outcome)
        if self.narrating:
            name = self.sides[r.seat].name
            wp = " with Willpower" if r.willpower else ""
            text = "botches" if value == BOTCH else f"scores {value} ({degree_of(value)})"
            self.narrate(
                "roll",
                f"{name} rolls {KIND_NAMES[r.kind]}{wp} ({r.pool} dice at difficulty {r.difficulty}): {text}.",
                r.seat,
                roll=r.kind,
                outcome=value,
            )
        if r.kind == DEFEND:
            self.defence[r.seat] = rules.resisting_total(self.defence[r.seat], value)
        else:
            self.attack[r.seat] = (*self.attack[r.seat], value)
        if self.queue:
            self._next_roll()
        else:
            self._settle()

    def legal_actions(self) -> list[int]:
        return [*self._legal]  # set when the state entered this node (see __init__); [*t] skips list()'s call

    def legal_tuple(self) -> tuple[int, ...]:
        return self._legal  # the node's kept tuple itself

    def _compute_legal(self) -> tuple[int, ...]:
        """This node's legal actions worked out from the phase (the reference of the kept ``_legal``)."""
        if self._current_player() < 0:
            return ()
        s = self.seat
        ph = self.phase
        if ph is COUNT:
            return self._declaration(s, 0, ())
        if ph is PICK:
            return self._declaration(s, self.n_actions[s], self.plans[s])
        if ph is WILLPOWER:
            if self.willpower_per_roll:  # Rule 8: on the roll about to be made
                return self._setup.willpower_on[self.queue[0].index]
            return (ACT_NO_WILLPOWER, *(duel_willpower_action(k) for k in range(len(self.plans[s]))))
        return ()

    def apply_action(self, action: int) -> None:
        if action not in self._legal:  # empty at chance nodes and at the end
            raise IllegalActionError(f"illegal duel action {action} in phase {self.phase.name}")
        s = self.seat
        ph = self.phase
        setup = self._setup
        if ph is PICK:
            plan = self.plans[s] = (*self.plans[s], KINDS[action - FIRST_PICK])
            n = self.n_actions[s]
            if len(plan) < n:
                self._legal = setup.declare[s](n, plan)
            elif not self.willpower_per_roll and self.willpower[s] > 0 and setup.wp_limit > 0:  # Rule 8, 0 spent
                self.phase = WILLPOWER
                self._legal = setup.willpower_any[n]
            else:
                self._declared()
        elif ph is COUNT:
            n = self.n_actions[s] = setup.count_of[action]
            self.plans[s] = ()
            self.phase = PICK
            self._legal = setup.declare[s](n, ())
        else:  # WILLPOWER
            wp = self.wp_action[s] = None if action == ACT_NO_WILLPOWER else setup.wp_index[action]
            if self.willpower_per_roll:
                self._willpower_on_next_roll(wp is not None)
            else:
                self._declared()

    def action_label(self, action: int) -> str:
        return duel_label(action) if 0 <= action < self.action_count else f"action {action}"

    def option_of(self, action: int) -> str | None:
        return duel_option(action) if 0 <= action < self.action_count else None

    def decision_context(self) -> str:
        return DUEL_CONTEXTS.get(self.phase, "none")

    def resources(self, seat: int) -> dict[str, float]:
        return {"willpower": float(self.willpower[seat]), "progress": float(self.progress[seat])}

    # -- declaring -------------------------------------------------------------------------------
    def _declaration(self, s: int, n: int, used: tuple[Kind, ...]) -> tuple[int, ...]:
        """The legal declaration actions of seat ``s``: how many actions (``n`` = 0), or the next pick."""
        return declaration_table(self.sides[s].pools, self.max_actions, self.one_roll_per_task, n, used)

    def _declare(self, s: int) -> None:
        """Seat ``s`` declares how many actions it takes (Rule 9)."""
        self.seat = self._player = s
        self.phase = COUNT
        self._legal = self._setup.count_legal[s]

    def _declared(self) -> None:
        """Rules 8-9: both have declared; queue the rolls (pools after the split, Willpower where spent)."""
        if self.seat == 0:
            self._declare(1)
            return
        queue: list[DuelRoll] = []
        queues = self._setup.queues
        for s in SEATS:
            wp_k = self.wp_action[s]
            if wp_k is not None:
                self.willpower[s] -= 1
                self.wp_spent[s] += 1
                self._turn_changed()
            key = (s, self.n_actions[s], self.plans[s], wp_k)
            rolls = queues.get(key)
            if rolls is None:
                rolls = queues[key] = self._declared_rolls(*key)
            queue += rolls
        self.queue = queue
        self.attack = [(), ()]
        self.defence = [None, None]
        self.phase = RESOLVE
        if self.narrating:
            plans = "; ".join(
                f"{self.sides[s].name}: "
                + ", ".join(KIND_NAMES[k] for k in self.plans[s])
                + (_split_text(self.n_actions[s]) if self.n_actions[s] > 1 else "")
                for s in SEATS
            )
            self.narrate("declare", f"Turn {self.turn + 1}. {plans}.")
        self._next_roll()

    def _declared_rolls(self, s: int, n: int, plan: tuple[Kind, ...], wp_k: int | None) -> tuple[DuelRoll, ...]:
        """Rules 8-9: seat ``s``'s rolls of its ``n`` declared actions ``plan``, Willpower on action ``wp_k``."""
        return tuple(self._declared_roll(s, kind, n, k, k == wp_k) for k, kind in enumerate(plan))

    def _declared_roll(self, s: int, kind: Kind, n: int, k: int, willpower: bool) -> DuelRoll:
        """Rules 8-9: the roll of seat ``s``'s k-th (0-based) of ``n`` declared actions, of ``kind``."""
        side = self.sides[s]
        wp = rules.willpower_successes(willpower, self.cfg)
        pool = rules.multiple_action_pool(side.pools[kind], n, k + 1)
        return DuelRoll(s, kind, pool, side.difficulties[kind], wp, side.specialty[kind], k)

    def _next_roll(self) -> None:
        """Rule 8: before each roll its side may spend Willpower, having seen the turn's earlier rolls."""
        r = self.queue[0]
        s = r.seat
        if (  # rules.may_spend_willpower, with the config's part resolved once (_DuelSetup.wp_limit)
            self.willpower_per_roll
            and not r.willpower_decided
            and self.willpower[s] > 0
            and self.wp_spent[s] < self._setup.wp_limit
        ):
            self.seat = self._player = s
            self.phase = WILLPOWER
            self._legal = self._setup.willpower_on[r.index]
        else:
            self.phase = RESOLVE
            self._player = CHANCE
            self._legal = ()

    def _willpower_on_next_roll(self, spend: bool) -> None:
        """Rule 8: spend a point on the roll about to be made (one automatic success), or not."""
        r = self.queue[0]
        if spend:
            self.willpower[r.seat] -= 1
            self.wp_spent[r.seat] += 1
            self._turn_changed()
        decided = self._setup.decided
        roll = decided.get((r, spend))
        if roll is None:
            wp = rules.willpower_successes(spend, self.cfg)
            roll = decided[r, spend] = DuelRoll(r.seat, r.kind, r.pool, r.difficulty, wp, r.specialty, r.index, True)
        self.queue[0] = roll
        self.phase = RESOLVE
        self._player = CHANCE
        self._legal = ()

    def rolling(self) -> bool:
        """The turn's rolls are being made (a per-roll Willpower decision included)."""
        return self.phase is RESOLVE or (self.phase is WILLPOWER and self.willpower_per_roll)

    def attack_so_far(self, seat: int) -> tuple[int, bool]:
        """Rule 11: the seat's attack successes kept this turn so far, and whether a roll reset them."""
        turn = self._attack_turn(self.attack[seat])
        return turn.kept, turn.reset

    def _attack_turn(self, outcomes: tuple[int, ...]) -> rules.AttackTurn:
        """Rule 11 (:func:`~envs.storyteller.rules.attack_turn`) of a turn's attack outcomes, memoised per config."""
        memo = self._setup.attack_turns
        turn = memo.get(outcomes)
        if turn is None:
            if len(memo) >= _BLOCKS_LIMIT:
                memo.clear()
            turn = memo[outcomes] = rules.attack_turn(outcomes, self.cfg)
        return turn

    # -- resolving -------------------------------------------------------------------------------
    def _settle(self) -> None:
        """Rules 11-13: resets, resisted gains, and the first to the target."""
        self._turn_changed()
        attack, (d0, d1) = self.attack, self.defence
        settled = self._setup.settled
        resets, gains = [False, False], [0, 0]
        for s, d in ((0, d1), (1, d0)):
            if attack[s]:
                key = (attack[s], d)
                hit = settled.get(key)
                if hit is None:
                    if len(settled) >= _BLOCKS_LIMIT:
                        settled.clear()
                    hit = settled[key] = self._settled_side(*key)
                resets[s], gains[s] = hit
        # last turn's results, defence botches as 0 (max(d or 0, 0) without two builtin calls)
        last = (gains[0], gains[1], d0 if d0 is not None and d0 > 0 else 0, d1 if d1 is not None and d1 > 0 else 0)
        progress = self.progress
        if resets[0] or resets[1]:
            for s in SEATS:
                if resets[s]:
                    if progress[s] and self.narrating:
                        self.narrate("reset", f"{self.sides[s].name} loses all {progress[s]} accumulated successes.", s)
                    progress[s] = 0
            if self.cfg.extended.abandon_on_reset:  # Rule 11 [decision]: the Storyteller ends a reset attempt
                self.phase = OVER
                if resets[0] and resets[1]:
                    self.finish(None, EndReason.COMPLETED, [0.0, 0.0], "both attempts ended by botches")
                else:
                    keeper = 0 if resets[1] else 1
                    self.finish(
                        keeper,
                        EndReason.KNOCKOUT,
                        [1.0 if i == keeper else -1.0 for i in SEATS],
                        f"{self.sides[1 - keeper].name}'s attempt ends with a botch",
                    )
                return
        progress[0] += last[0]
        progress[1] += last[1]
        if self.narrating:
            for s in SEATS:
                if attack[s]:
                    self.narrate(
                        "gain",
                        f"{self.sides[s].name} gains {last[s]} (total {progress[s]}/{self.target}).",
                        s,
                        gain=last[s],
                    )
        self.last = last
        p0, p1 = self.progress
        target = self.target  # Rule 13: nobody at the target (most turns) needs no contest_winner call
        w = None if p0 < target and p1 < target else rules.contest_winner(self.progress, target, self.cfg)
        if w is None:
            self.turn += 1
            if self.turn >= self.cfg.duel.turns:
                self.phase = OVER
                self.finish(None, EndReason.TIME_LIMIT, [0.0, 0.0], "time ran out")
                return
            self._new_turn()
        elif w != rules.STILL_EQUAL:
            self._win(w)
        elif self.cfg.contest.simultaneous == rules.Simultaneous.HIGHER_TOTAL:
            self.phase = TIEBREAK
            self._player = CHANCE
            self._legal = ()
        else:
            self.phase = OVER
            self.finish(None, EndReason.COMPLETED, [0.0, 0.0], "both reached the total together")

    def _settled_side(self, outcomes: tuple[int, ...], defence: int | None) -> tuple[bool, int]:
        """Rules 11-12: whether a side's turn of attack ``outcomes`` reset it, and its gain against ``defence``."""
        turn = self._attack_turn(outcomes)
        return turn.reset, rules.resisted_result(turn.kept, defence or 0, self.cfg) if turn.rolled else 0

    def _new_turn(self) -> None:
        self.n_actions = [0, 0]
        self.plans = [(), ()]
        self.wp_action = [None, None]
        self.wp_spent = [0, 0]
        self._declare(0)

    def _win(self, w: int) -> None:
        self.phase = OVER
        self.finish(
            w,
            EndReason.KNOCKOUT,
            [1.0 if s == w else -1.0 for s in SEATS],
            f"{self.sides[w].name} reaches {self.target} successes",
        )

    def _tiebreak_odds(self) -> float:
        """Rule 13: the chance that seat 0 wins the roll-off of the main attacks (fixed per config: kept)."""
        odds = self._setup.tiebreak_odds
        if odds is None:
            odds = self._setup.tiebreak_odds = self._roll_off_odds()
        return odds

    def _roll_off_odds(self) -> float:
        """Rule 13: the chance that seat 0 wins the roll-off of the main attacks, worked out."""
        a, b = (
            outcome_distribution(
                side.pools[ATTACK_MAIN],
                side.difficulties[ATTACK_MAIN],
                specialty=side.specialty[ATTACK_MAIN],
            )
            for side in self.sides
        )
        return float(rules.roll_off_chance(a, b))

    # -- analysis hooks --------------------------------------------------------------------------
    def observation(self, seat: int) -> np.ndarray:
        """The same vector as :func:`~envs.storyteller.observation.encode_duel`, joined from packed blocks."""
        turn = self._turn_obs[seat]
        setup = self._setup
        if turn is None:  # packed afresh: a memo on what they read (progress, Willpower, turn, last) rarely hit
            turn = self._turn_obs[seat] = duel_turn_blocks(self, seat)
        ph = self.phase
        if self.seat == seat and ph <= WILLPOWER:
            memo = setup.plan_blocks
            key = (ph, self.n_actions[seat], self.plans[seat])
            plan = memo.get(key)
            if plan is None:
                if len(memo) >= _BLOCKS_LIMIT:
                    memo.clear()
                plan = memo[key] = duel_plan_blocks(ph, key[1], key[2], self.plan_scale, setup.extra_obs)
        else:
            plan = setup.no_plan
        if ph is RESOLVE or (ph is WILLPOWER and self.willpower_per_roll):
            rolls = self._rolls_block(seat)
        else:
            rolls = DUEL_NO_ROLLS
        # observation.join_blocks inlined (one call fewer per observation)
        return _frombuffer(bytearray(b"".join((turn[0], plan[0], turn[1], rolls, plan[1]))), _F32)

    def _rolls_block(self, seat: int) -> bytes:
        """The turn's rolls block from ``seat``'s side, memoised per config on the rolls it reads."""
        o = 1 - seat
        kind = self.queue[0].kind if self.phase is WILLPOWER and self.seat == seat else -1
        key = (self.attack[seat], self.defence[seat], self.attack[o], self.defence[o], kind)
        memo = self._setup.rolls_blocks
        block = memo.get(key)
        if block is None:
            if len(memo) >= _BLOCKS_LIMIT:
                memo.clear()
            kept, reset = self.attack_so_far(seat)
            block = memo[key] = duel_rolls_block(
                kept, self.defence[seat], self.attack_so_far(o)[0], self.defence[o], reset, kind
            )
        return block

    def _turn_changed(self) -> None:
        """A progress, Willpower, the turn or last turn's results changed: drop the cached head/middle blocks."""
        self._turn_obs = [None, None]

    def key(self) -> tuple[Any, ...]:
        return (
            self.phase,
            self.seat,
            self.turn,
            tuple(self.progress),
            tuple(self.willpower),
            tuple(self.n_actions),
            tuple(tuple(p) for p in self.plans),
            tuple(self.wp_action),
            tuple(self.wp_spent),
            tuple(self.queue),
            tuple(tuple(a) for a in self.attack),
            tuple(self.defence),
            self.last,
        )

    def clone(self) -> DuelState:
        new = _new_object(DuelState)
        _copy_slots(new, self)  # every slot; the containers changed in place as copies
        return new

    def describe(self) -> dict[str, Any]:
        """A compact summary (tests and personas)."""
        return {"turn": self.turn, "progress": list(self.progress), "willpower": list(self.willpower)}


_new_object = object.__new__
_copy_slots = slot_copier(
    DuelState.FIELDS,
    copied=(
        "log",
        "progress",
        "willpower",
        "n_actions",
        "plans",
        "wp_action",
        "wp_spent",
        "queue",
        "attack",
        "_turn_obs",
        "defence",
    ),
)
"""Every slot of a state onto a new one, the containers it changes in place as copies (:meth:`DuelState.clone`)."""


def _split_text(n: int) -> str:
    """Rule 9: the dice penalties of an n-action split, in the declared order (2: "dice -2, -3")."""
    return " (split: dice " + ", ".join(f"-{n + k}" for k in range(n)) + ")"


def duel_actions(cfg: Any) -> int:
    """The duel's number of action ids under ``cfg`` (Rule 9: two more per action beyond 2 a turn)."""
    assert isinstance(cfg, StorytellerConfig)
    return duel_action_count(rules.duel_max_actions(cfg))


def duel_observation_length(cfg: Any) -> int:
    """The duel's observation length under ``cfg`` (3 more values per action beyond 2 a turn)."""
    assert isinstance(cfg, StorytellerConfig)
    return duel_observation_size(rules.duel_max_actions(cfg))


def new_duel(cfg: Any) -> DuelState:
    """Scenario setup (deterministic): a clone of the config's fresh duel (an env resets every ~18 steps)."""
    assert isinstance(cfg, StorytellerConfig)
    setup = _setup(cfg)
    fresh = setup.fresh
    if fresh is None:
        fresh = setup.fresh = DuelState(cfg)
    return fresh.clone()

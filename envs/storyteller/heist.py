"""The Heist scenario, ``rulebreaker/StorytellerHeist-v0``: timed extended tasks, one character and an ally.

## Description
One character (seat 0) works on 1..3 extended or simple tasks from the seed's example list
(``scenarios.CATALOGUE``) before the guards arrive (docs/rules/storyteller.md, Heist). Each turn is
one interval of every task. A turn: retry or abandon each task that was reset or failed last turn
(Rule 10); declare one, two or three actions (Rule 9); for each, a task and an approach, or its
automatic success (Rule 7); where the ally helps (Rule 14). The rolls follow in the declared order,
the ally's last (Rules 2-6, 11); before each of the character's rolls, while a point may be spent
this turn, the character decides on Willpower, knowing the turn's earlier rolls (Rule 8; under
``willpower.declared = "before_the_turn"`` the point goes on one roll, chosen right after the picks).
A botch wipes an extended task (Rule 11) and brings the guards ``heist.botch_costs_turns`` sooner.
The ally's roll adds its successes to the task it helps (Rule 14): on an extended task as any roll of
it, on a simple task together with the character's roll of the turn (``teamwork.simple_tasks``).

## Actions
``Discrete(22)``, taken as a sequence of small decisions per turn (legal subset by mask):
0 RETRY / 1 ABANDON a task reset or failed last turn (Rule 10); 2..4 declare one, two or three
actions (Rule 9); 5..10 roll task slot s by approach a (``5 + 2s + a``; a = 1 is the alternative,
bigger-pool-higher-difficulty approach); 11..13 automatic success on slot s (Rule 7); 14 no
Willpower, 15..17 Willpower on action k (Rule 8: before each roll only that roll's k is legal);
18..20 the ally helps slot s, 21 the ally rests (Rule 14). The table is ``actions.Act``. Rule 9 sets
no maximum but the pools: ``multiple_actions.max_actions`` takes up to 10 (a 20-die pool's 10th action
rolls 1 die), and each action beyond 3 adds two ids after these: 22 + 2 (n - 4) declares n actions,
23 + 2 (n - 4) spends Willpower on action n (``Discrete(22 + 2 (max_actions - 3))``).

## Observation
``Box(0, 1, (73,))`` (``observation.encode_heist``): per task slot (20 values): present, status
one-hot (active, done, lost, awaiting retry), progress / target, target / 20, pools / 20 and
difficulties / 10 of both approaches, attempt, calm, retryable, its place in this turn's plan (first,
second, third or later), ally, pending retry; then turn, turns left, Willpower / 10, the decision phase
one-hot, actions declared and picked; then, at a Willpower decision before a roll, that roll's action
number, pool / 20 and difficulty / 10 (73 values; action counts are divided by 3, or by
``multiple_actions.max_actions`` when it is more).

## Rewards
At the end: the fraction of the job's tasks completed (0..1).

## Episode end
All tasks done or lost (``COMPLETED``), or the guards arrive after ``heist.turns`` turns, one turn
sooner per botch (``TIME_LIMIT``), or no task can be attempted any more (``STALL``).

## Arguments
The config's ``[heist]`` table: ``tasks``, ``draw`` (random draw at a chance node; 0 = as listed),
``turns``, ``botch_costs_turns``, ``ally_pool``, ``character``, ``specialties``; and every rule key
the rules above name.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from functools import cache
from itertools import combinations
from typing import Any, ClassVar, NamedTuple

import numpy as np

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State
from envs.core.slots import slot_copier
from envs.storyteller import rules
from envs.storyteller.actions import (
    HEIST_CONTEXTS,
    MAX_DECLARED,
    SLOTS,
    Act,
    Phase,
    Status,
    ally_action,
    auto_action,
    count_action,
    declared_count,
    heist_action_count,
    heist_label,
    heist_option,
    roll_action,
    roll_target,
    willpower_action,
    willpower_index,
)
from envs.storyteller.config import StorytellerConfig
from envs.storyteller.dice import BOTCH, degree_of, outcome_of_faces, sample_outcome
from envs.storyteller.observation import (
    HEIST_NO_TASK,
    PLAN_SCALE,
    heist_globals,
    heist_slot_head,
    heist_slot_tails,
    heist_task_part,
)
from envs.storyteller.scenarios import CATALOGUE, TaskSpec

_F32 = np.float32
_frombuffer = np.frombuffer  # a module global: no numpy attribute lookup per observation

HeistChance = int | tuple[int, ...]
"""A heist chance outcome: the drawn task indices (setup), or a roll's outcome or forced faces."""


class Pick(NamedTuple):
    """One declared action of the turn: a task slot and its approach (``None``: the automatic success)."""

    slot: int
    approach: int | None

    @property
    def auto(self) -> bool:
        """Rule 7: the action takes the automatic success instead of rolling."""
        return self.approach is None


class PendingRoll(NamedTuple):  # a NamedTuple: built on every roll, several times cheaper than a dataclass
    """A declared action waiting to be resolved (a roll is a chance node)."""

    slot: int
    pool: int
    difficulty: int
    willpower: int  # successes bought with Willpower
    specialty: bool
    ally: bool
    approach: int | None  # None: the automatic success (Rule 7)
    index: int = 0  # type: ignore[assignment]  # (shadows tuple.index) the action's place in the turn's plan (0-based)
    willpower_decided: bool = False  # Rule 8: the Willpower decision before this roll was made


# Hot-path aliases: in Python 3.11 every ``Phase.PICK``-style member lookup is a descriptor call.
SETUP, RETRY, COUNT, PICK, WILLPOWER = Phase.SETUP, Phase.RETRY, Phase.COUNT, Phase.PICK, Phase.WILLPOWER
ALLY, RESOLVE = Phase.ALLY, Phase.RESOLVE
ACTIVE, DONE, LOST, PENDING = Status.ACTIVE, Status.DONE, Status.LOST, Status.PENDING
ACT_ABANDON, ACT_ALLY, ACT_ALLY_REST, ACT_AUTO = Act.ABANDON, Act.ALLY, Act.ALLY_REST, Act.AUTO
ACT_NO_WILLPOWER, ACT_RETRY = Act.NO_WILLPOWER, Act.RETRY
OVER = Phase.OVER
RETRY_OR_ABANDON = (ACT_RETRY, ACT_ABANDON)
"""Rule 10: the decision on a task reset or failed last turn."""
ALLY_ACTIONS = tuple(ally_action(s) for s in range(SLOTS))
"""Rule 14: the action that sends the ally to each task slot."""


@cache
def _willpower_on(k: int) -> tuple[int, int]:
    """Rule 8, Willpower before each roll: the legal decision before the roll of action ``k`` (bounded by 10)."""
    return (ACT_NO_WILLPOWER, willpower_action(k))


PICKS: dict[int, Pick] = {
    **{a: Pick(*roll_target(a)) for a in range(Act.ROLL, Act.AUTO)},
    **{a: Pick(a - ACT_AUTO, None) for a in range(Act.AUTO, Act.NO_WILLPOWER)},
}
"""The pick each PICK action declares (a roll of a slot by an approach, or its automatic success); picks are
immutable, so a plan shares them."""

_DERIVED: dict[int, tuple[StorytellerConfig, dict[tuple[int, int | None], tuple[Any, ...]]]] = {}
_DERIVED_LIMIT = 64


def _derived_table(cfg: StorytellerConfig) -> dict[tuple[int, int | None], tuple[Any, ...]]:
    """The table of what each task spec allows at each attempt under ``cfg``.

    The config is frozen; the table is keyed by its identity and the entry keeps it alive. Keys are
    ``(id(spec), attempt)``, and ``(id(spec), None)`` for the spec's pools, difficulties and specialties;
    each value starts with the spec itself (checked on a hit).
    """
    hit = _DERIVED.get(id(cfg))
    if hit is None or hit[0] is not cfg:
        if len(_DERIVED) >= _DERIVED_LIMIT:
            _DERIVED.clear()
        hit = _DERIVED[id(cfg)] = (cfg, {})
    return hit[1]


_DECLARATIONS: dict[int, tuple[StorytellerConfig, dict[Hashable, tuple[int, ...]]]] = {}
_DECLARATIONS_LIMIT = 16384  # memoised declarations per config before the table starts afresh


_BLOCKS: dict[int, tuple[StorytellerConfig, dict[Hashable, tuple[bytes, ...]], dict[Hashable, bytes]]] = {}
_BLOCKS_LIMIT = 16384  # memoised observation blocks per config and kind before the memo starts afresh


def _block_memos(cfg: StorytellerConfig) -> tuple[dict[Hashable, tuple[bytes, ...]], dict[Hashable, bytes]]:
    """The memos of the heist's packed observation tails and globals for ``cfg`` (by identity; keeps it alive).

    Tails are keyed by (plan, ally task, pending task), globals by everything :func:`heist_globals` reads; the
    config's constants they read (``heist.turns``, the plan scale) are fixed per config.
    """
    hit = _BLOCKS.get(id(cfg))
    if hit is None or hit[0] is not cfg:
        if len(_BLOCKS) >= _DERIVED_LIMIT:
            _BLOCKS.clear()
        hit = _BLOCKS[id(cfg)] = (cfg, {}, {})
    return hit[1], hit[2]


def _declaration_table(cfg: StorytellerConfig) -> dict[Hashable, tuple[int, ...]]:
    """The memo of :meth:`HeistState._memo_declaration` for ``cfg`` (keyed by identity; keeps it alive)."""
    hit = _DECLARATIONS.get(id(cfg))
    if hit is None or hit[0] is not cfg:
        if len(_DECLARATIONS) >= _DERIVED_LIMIT:
            _DECLARATIONS.clear()
        hit = _DECLARATIONS[id(cfg)] = (cfg, {})
    return hit[1]


class Task:
    """A task of the job in play: its spec, pools, progress and attempt number.

    The current attempt's difficulties, which approaches are still possible, and how late in a turn of
    n actions the task can still be attempted are worked out whenever ``attempt`` changes (Rules 9-10).
    """

    __slots__ = (
        "spec",
        "extended",
        "pools",
        "difficulties",
        "specialty",
        "progress",
        "status",
        "cfg",
        "_attempt",
        "current_difficulty",
        "current_possible",
        "capacity",
        "fits",
        "auto_fits",
        "obs_part",
        "obs_heads",
        "_derived",
    )
    current_possible: tuple[bool, ...]
    current_difficulty: tuple[int, ...]
    capacity: tuple[int, ...]
    fits: tuple[tuple[tuple[int, ...], ...], ...]
    auto_fits: tuple[tuple[bool, ...], ...]
    obs_part: list[float]
    obs_heads: dict[tuple[int, int], bytes]
    """The packed observation head block of this spec and attempt per (status, progress), shared by every task
    of the spec at the attempt (a pure function of them under the config); at most 4 statuses x the progresses."""

    def __init__(self, spec: TaskSpec, cfg: StorytellerConfig) -> None:
        self.spec = spec
        self.extended = spec.extended  # Rule 11 (the spec's property, read on every roll)
        self.cfg = cfg
        self._derived = _derived_table(cfg)
        fixed = self._derived.get((id(spec), None))
        if fixed is None or fixed[0] is not spec:
            sheet = cfg.heist.character
            pools = tuple(rules.dice_pool(sheet.get(a.attribute, 0), sheet.get(a.ability, 0)) for a in spec.approaches)
            difficulties = tuple(rules.difficulty_of(a.difficulty, cfg) for a in spec.approaches)
            specialty = tuple(cfg.specialties.enabled and a.ability in cfg.heist.specialties for a in spec.approaches)
            fixed = self._derived[(id(spec), None)] = (spec, pools, difficulties, specialty)
        _, self.pools, self.difficulties, self.specialty = fixed
        self.progress = 0
        self.attempt = rules.FIRST_ATTEMPT
        self.status = ACTIVE

    @property
    def attempt(self) -> int:
        """Rule 10: the attempt number (1 = the first)."""
        return self._attempt

    @attempt.setter
    def attempt(self, n: int) -> None:
        self._attempt = n
        hit = self._derived.get((id(self.spec), n))
        if hit is None or hit[0] is not self.spec:
            self._derive(n)
            self._derived[(id(self.spec), n)] = (
                self.spec,
                self.current_possible,
                self.current_difficulty,
                self.capacity,
                self.fits,
                self.auto_fits,
                self.obs_part,
                self.obs_heads,
            )
            return
        (
            _,
            self.current_possible,
            self.current_difficulty,
            self.capacity,
            self.fits,
            self.auto_fits,
            self.obs_part,
            self.obs_heads,
        ) = hit

    def _derive(self, n: int) -> None:
        """Rules 7, 9-10: what attempt ``n`` of this task allows (a function of the config, spec and attempt)."""
        raised = tuple(rules.retry_difficulty(d, n, self.cfg) for d in self.difficulties)
        self.current_possible = tuple(d is not None for d in raised)
        self.current_difficulty = tuple(self.cfg.dice.max_difficulty if d is None else d for d in raised)
        # capacity[n]: the last place k (1..n) of an n-action turn this task can still fill (0: none)
        self.capacity = tuple(
            max(
                (
                    k
                    for k in range(1, n_actions + 1)
                    if any(
                        ok and rules.can_attempt(rules.multiple_action_pool(p, n_actions, k))
                        for p, ok in zip(self.pools, self.current_possible, strict=True)
                    )
                ),
                default=0,
            )
            for n_actions in range(self._most_declared() + 1)
        )
        # fits[n][k]: the approaches that can fill place k of an n-action turn (Rules 9-10);
        # auto_fits[n][k]: one of them allows the automatic success there (Rule 7)
        fits: list[tuple[tuple[int, ...], ...]] = [()]
        auto_fits: list[tuple[bool, ...]] = [()]
        for n_actions in range(1, self._most_declared() + 1):
            row: list[tuple[int, ...]] = [()]
            auto_row = [False]
            for k in range(1, n_actions + 1):
                pools = [rules.multiple_action_pool(p, n_actions, k) for p in self.pools]
                aps = tuple(
                    ap for ap, pool in enumerate(pools) if rules.can_attempt(pool) and self.current_possible[ap]
                )
                row.append(aps)
                auto_row.append(
                    any(
                        rules.automatic_success_allowed(
                            pools[ap], self.current_difficulty[ap], self.spec.calm, self.cfg
                        )
                        for ap in aps
                    )
                )
            fits.append(tuple(row))
            auto_fits.append(tuple(auto_row))
        self.fits, self.auto_fits = tuple(fits), tuple(auto_fits)
        self.obs_part = heist_task_part(self)
        self.obs_heads = {}

    def _most_declared(self) -> int:
        """Rule 9: the most actions a turn of this config declares (the tables cover at least the first 3)."""
        return max(MAX_DECLARED, rules.max_actions(self.cfg))

    def copy(self) -> Task:
        t = Task.__new__(Task)
        t.spec, t.pools, t.difficulties, t.specialty = self.spec, self.pools, self.difficulties, self.specialty
        t.extended = self.extended
        t.progress, t.status, t.cfg, t._attempt = self.progress, self.status, self.cfg, self._attempt
        t.current_difficulty, t.current_possible, t.capacity = (
            self.current_difficulty,
            self.current_possible,
            self.capacity,
        )
        t.fits, t.auto_fits, t.obs_part, t._derived = self.fits, self.auto_fits, self.obs_part, self._derived
        t.obs_heads = self.obs_heads
        return t

    def possible(self, approach: int, cfg: StorytellerConfig | None = None) -> bool:
        """Rule 10: this approach's difficulty at the current attempt does not exceed the maximum."""
        return self.current_possible[approach]

    def difficulty(self, approach: int, cfg: StorytellerConfig | None = None) -> int:
        """Rule 10: the current attempt's difficulty (10 at most; impossible attempts never get here)."""
        return self.current_difficulty[approach]


class HeistState(State[HeistChance]):
    """A heist in progress (the module docstring is its rules card)."""

    legal_sorted = True  # every legal tuple lists its ids in increasing order (``rulebreaker check`` verifies it)
    player_kept = True  # current_player() is the kept _player (``rulebreaker check`` verifies it at every node)

    FIELDS: ClassVar[tuple[str, ...]] = (
        "num_players",
        "log",
        "_outcome",
        "cfg",
        "tasks",
        "turn",
        "turn_limit",
        "willpower",
        "phase",
        "_player",
        "pending_slot",
        "n_actions",
        "plan",
        "wp_action",
        "wp_spent",
        "ally_slot",
        "queue",
        "turn_rolls",
        "botches",
        "max_actions",
        "plan_scale",
        "willpower_per_roll",
        "teamwork_adds",
        "wp_limit",
        "one_roll_per_task",
        "prevents_botch",
        "_legal",
        "_tasks_key",
        "_heads",
        "_declarations",
        "_tail_blocks",
        "_global_blocks",
        "narrating",
    )
    """Every attribute of a state (the protocol's ``num_players``, ``log``, ``_outcome`` and ``narrating`` too), all
    set by ``__init__``."""
    # Slots, not an instance dict: Python 3.11 shares an instance dict's keys with its class only up to 30 keys, and
    # an unshared dict defeats the specialisation of every attribute read and ``self.method()`` call. (The
    # protocol's State has no __slots__, so an instance still has an empty __dict__ nothing writes to.)
    __slots__ = FIELDS

    def __init__(self, cfg: StorytellerConfig) -> None:
        super().__init__(1)
        self.narrating = True  # the protocol's class default, which the slot hides
        self.cfg = cfg
        self.tasks: list[Task] = []
        self.turn = 0
        self.turn_limit = cfg.heist.turns
        self.willpower = cfg.willpower.points
        self.phase = SETUP
        self._player = CHANCE
        """Who moves: set with every change of phase (a decision phase: 0; SETUP and RESOLVE: chance) and by
        :meth:`finish`; the adapter asks ~5 times a step. :meth:`_current_player` is the plain rule."""
        self.pending_slot: int | None = None
        self.n_actions = 0
        self.plan: list[Pick] = []
        self.wp_action: int | None = None  # index into plan
        self.wp_spent = 0  # Willpower points spent this turn (Rule 8)
        self.ally_slot: int | None = None
        self.queue: list[PendingRoll] = []
        self.turn_rolls: dict[int, tuple[int, ...]] = {}  # Rule 14: this turn's outcomes on each simple task
        self.botches = 0
        self.max_actions = rules.max_actions(cfg)
        self.plan_scale = max(PLAN_SCALE, float(self.max_actions))  # observation: actions declared / this
        self.willpower_per_roll = rules.willpower_before_each_roll(cfg)
        self.teamwork_adds = rules.simple_teamwork_adds(cfg)
        # Rule 8: may_spend_willpower(points, spent) is points > 0 and spent < wp_limit (no successes: never)
        self.wp_limit = cfg.willpower.per_turn if cfg.willpower.successes > 0 else 0
        # the config keys read on every step, resolved once into plain attributes
        self.one_roll_per_task = cfg.extended.one_roll_per_task
        self.prevents_botch = cfg.willpower.prevents_botch
        self._legal: tuple[int, ...] | None = None  # this decision's legal actions, until the state moves
        self._tasks_key: tuple[tuple[str, int, Status], ...] | None = None
        """Every task's (spec key, attempt, status), what Rules 9-11's declarations read of the tasks."""
        self._heads: tuple[bytes, ...] | None = None
        """Every slot's packed observation head block (an empty slot's is zero).

        This and ``_tasks_key`` are worked out on demand and dropped by :meth:`_tasks_changed`, which every change
        of a task's status, progress or attempt goes through; a clone shares them (they are immutable)."""
        self._declarations = _declaration_table(cfg)
        self._tail_blocks, self._global_blocks = _block_memos(cfg)
        if cfg.heist.draw == 0:
            self._deal(tuple(range(len(cfg.heist.tasks))))

    # -- setup -----------------------------------------------------------------------------------
    def _deal(self, picks: tuple[int, ...]) -> None:
        names = self.cfg.heist.tasks
        self.tasks = [Task(CATALOGUE[names[i]], self.cfg) for i in picks]
        self._tasks_changed()
        for t in self.tasks:
            if self.narrating:
                extra = f", {t.spec.target} successes" if t.spec.extended else ""
                self.narrate(
                    "setup",
                    f"Task: {t.spec.title} ({t.spec.approaches[0].attribute.title()} + "
                    f"{t.spec.approaches[0].ability.title()}, difficulty {t.difficulties[0]}{extra}).",
                )
        if self.narrating:
            self.narrate("setup", f"The guards arrive in {self.turn_limit} turns; Willpower {self.willpower}.")
        self._start_turn()

    # -- protocol --------------------------------------------------------------------------------
    def current_player(self) -> int:
        return self._player

    def _current_player(self) -> int:
        """Who moves, worked out from the phase (the reference of the kept ``_player``)."""
        if self._outcome is not None:
            return TERMINAL
        ph = self.phase
        if ph is SETUP or ph is RESOLVE:
            return CHANCE
        return 0

    def finish(self, winner: int | None, reason: EndReason, returns: Sequence[float], detail: str = "") -> None:
        """End the heist (:meth:`State.finish`); nobody moves any more."""
        self._player = TERMINAL
        super().finish(winner, reason, returns, detail)

    def chance_outcomes(self) -> list[tuple[HeistChance, float]]:
        if self.phase is SETUP:
            combos = list(combinations(range(len(self.cfg.heist.tasks)), self.cfg.heist.draw))
            return [(c, 1.0 / len(combos)) for c in combos]
        r = self.queue[0]
        return [(k, p) for k, p in rules.roll_chance_outcomes(r.pool, r.difficulty, r.willpower, r.specialty, self.cfg)]

    def sample_chance(self, rng: Rng) -> HeistChance:
        if self.phase is SETUP:
            outs = self.chance_outcomes()
            return outs[int(rng.random() * len(outs))][0]
        r = self.queue[0]
        return sample_outcome(rng, r.pool, r.difficulty, r.willpower, self.prevents_botch, r.specialty)

    def apply_chance(self, outcome: HeistChance) -> None:
        """Apply a chance outcome.

        SETUP: a tuple of task indices. RESOLVE: an outcome (``BOTCH`` or net successes) or a tuple of
        faces (plus specialty rerolls after the pool's dice) for golden tests.
        """
        self._legal = None
        if self.phase is SETUP:
            assert isinstance(outcome, tuple)
            self._deal(tuple(int(i) for i in outcome))
            return
        r = self.queue.pop(0)
        if type(outcome) is int:  # a sampled outcome (the common case, without isinstance and int() calls)
            value = outcome
        elif isinstance(outcome, tuple):
            faces = outcome[: r.pool]
            value = outcome_of_faces(
                faces, r.difficulty, r.willpower, self.cfg.willpower.prevents_botch, r.specialty, outcome[r.pool :]
            )
        else:
            value = int(outcome)
        self._apply_roll(r, value)
        self._resolve()

    def legal_actions(self) -> list[int]:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return [*legal]  # [*t] skips list()'s call

    def legal_tuple(self) -> tuple[int, ...]:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal  # the node's kept tuple itself

    def _compute_legal(self) -> tuple[int, ...]:
        if self._player != 0:  # kept with every phase change (tests check it against _current_player)
            return ()
        ph = self.phase
        if ph is RETRY:
            return RETRY_OR_ABANDON
        if ph is COUNT or ph is PICK:
            return self._memo_declaration()
        if ph is WILLPOWER:
            if self.willpower_per_roll:  # Rule 8: on the roll about to be made
                return _willpower_on(self.queue[0].index)
            return (ACT_NO_WILLPOWER, *(willpower_action(i) for i, p in enumerate(self.plan) if not p.auto))
        if ph is ALLY:
            return (*[ALLY_ACTIONS[s] for s, t in enumerate(self.tasks) if t.status == ACTIVE], ACT_ALLY_REST)
        return ()

    def apply_action(self, action: int) -> None:
        legal = self._legal  # this decision's legal actions, worked out at most once (legal_actions keeps them)
        if legal is None:
            legal = self._compute_legal()
        if action not in legal:
            raise IllegalActionError(f"illegal heist action {action} in phase {self.phase.name}")
        self._legal = None
        ph = self.phase
        if ph is RETRY:
            self._retry_or_abandon(action == ACT_RETRY)
        elif ph is COUNT:
            self.n_actions = declared_count(action)
            self.plan = []
            if self.narrating and self.n_actions > 1:
                pens = ", ".join(f"-{self.n_actions + k}" for k in range(self.n_actions))
                self.narrate("declare", f"Turn {self.turn + 1}: {self.n_actions} actions declared (dice {pens}).", 0)
            elif self.narrating:
                self.narrate("declare", f"Turn {self.turn + 1}: one action.", 0)
            self.phase = PICK
            self._player = 0
        elif ph is PICK:
            self.plan.append(PICKS[action])
            if len(self.plan) == self.n_actions:
                self._after_picks()
        elif ph is WILLPOWER:
            self.wp_action = None if action == ACT_NO_WILLPOWER else willpower_index(action)
            if self.willpower_per_roll:
                self._willpower_on_next_roll(self.wp_action is not None)
            else:
                self._after_willpower()
        elif ph is ALLY:
            self.ally_slot = None if action == ACT_ALLY_REST else action - ACT_ALLY
            self._begin_resolve()

    def action_label(self, action: int) -> str:
        return heist_label(action, self._task_name, self._approach_label)

    def option_of(self, action: int) -> str | None:
        return heist_option(action)

    def decision_context(self) -> str:
        return HEIST_CONTEXTS.get(self.phase, "none")

    def resources(self, seat: int) -> dict[str, float]:
        out: dict[str, float] = {"willpower": float(self.willpower), "turns_left": float(self.turn_limit - self.turn)}
        for t in self.tasks:
            out[f"progress_{t.spec.key}"] = float(t.progress)
        return out

    # -- turn structure --------------------------------------------------------------------------
    def _start_turn(self) -> None:
        if self._check_end():
            return
        self.plan = []
        self.n_actions = 0
        self.wp_action = None
        self.wp_spent = 0
        self.ally_slot = None
        for s, t in enumerate(self.tasks):
            if t.status == PENDING:
                self.pending_slot = s
                self.phase = RETRY
                self._player = 0
                return
        self.pending_slot = None
        self.phase = COUNT
        self._player = 0
        counts = self._memo_declaration()  # the legal counts: some n-action turn is feasible (Rules 9-11)
        if not counts:
            self.phase = OVER
            if self.narrating:
                self.narrate("stall", "No task can be attempted any more.")
            self._finish(EndReason.STALL)
            return
        self._legal = counts

    def _check_end(self) -> bool:
        if all(t.status in (DONE, LOST) for t in self.tasks):
            self.phase = OVER
            self._finish(EndReason.COMPLETED)
            return True
        if self.turn >= self.turn_limit:
            self.phase = OVER
            if self.narrating:
                self.narrate("guards", "The guards arrive: time is up.")
            self._finish(EndReason.TIME_LIMIT)
            return True
        return False

    def _finish(self, reason: EndReason) -> None:
        done = sum(1 for t in self.tasks if t.status == DONE)
        n = len(self.tasks)
        self.finish(0 if done == n else None, reason, [done / n], f"{done} of {n} tasks completed")

    def _retry_or_abandon(self, retry: bool) -> None:
        """Rule 10: after a failure (or a reset extended action) try again at a higher difficulty, or give up."""
        assert self.pending_slot is not None
        t = self.tasks[self.pending_slot]
        self._tasks_changed()
        if retry:
            t.status = ACTIVE
            if self.narrating:
                self.narrate("retry", f"{t.spec.title}: tries again at difficulty {t.difficulty(0, self.cfg)}.", 0)
        else:
            t.status = LOST
            if self.narrating:
                self.narrate("abandon", f"{t.spec.title}: abandoned.", 0)
        self._start_turn()

    # -- declaring -------------------------------------------------------------------------------
    def _usable(self, slot: int, used: tuple[int, ...]) -> bool:
        """Rule 11: an active task, not yet rolled this turn when one roll per task per interval applies."""
        t = self.tasks[slot]
        if t.status != ACTIVE:
            return False
        return not (self.one_roll_per_task and slot in used)

    def _feasible(self, n: int, k0: int, used: tuple[int, ...]) -> bool:
        """Can actions k0+1..n of an n-action turn still be filled (Rule 9: a pool of 1 or more; Rule 11)?

        A task that can fill place k can fill every earlier place (its pool only shrinks with k), so
        with one roll per task the places n, n-1, ... k0+1 need tasks of capacity at least n, n-1, ...
        (Hall's condition for nested sets); without it, one task that can fill place n is enough.
        """
        if k0 >= n:
            return True
        caps = sorted((t.capacity[n] for s, t in enumerate(self.tasks) if self._usable(s, used)), reverse=True)
        if not self.one_roll_per_task:
            return bool(caps) and caps[0] >= n
        places = n - k0
        return len(caps) >= places and all(caps[i] >= n - i for i in range(places))

    def _memo_declaration(self) -> tuple[int, ...]:
        """The legal counts (COUNT) or picks (PICK), memoised per config on everything they read.

        Rules 9-11 read each task's spec, attempt and status, the turn's action count and the slots
        already picked (the plan's order and automatic successes do not matter to them).
        """
        used = tuple([p.slot for p in self.plan]) if self.phase is PICK else None
        tasks = self._tasks_key
        if tasks is None:  # specs come from CATALOGUE by key
            tasks = self._tasks_key = tuple([(t.spec.key, t._attempt, t.status) for t in self.tasks])
        key = (self.n_actions, used, tasks)
        table = self._declarations
        found = table.get(key)
        if found is None:
            if len(table) >= _DECLARATIONS_LIMIT:
                table.clear()
            if used is None:
                legal = [count_action(n) for n in range(1, self.max_actions + 1) if self._feasible(n, 0, ())]
            else:
                legal = self._legal_picks()
            found = table[key] = tuple(legal)
        return found

    def _legal_picks(self) -> list[int]:
        n, k0 = self.n_actions, len(self.plan)
        used = tuple(p.slot for p in self.plan)
        out: list[int] = []
        autos: list[int] = []
        for s, t in enumerate(self.tasks):
            if not self._usable(s, used) or not self._feasible(n, k0 + 1, (*used, s)):
                continue
            out.extend(roll_action(s, ap) for ap in t.fits[n][k0 + 1])
            if t.auto_fits[n][k0 + 1]:
                autos.append(auto_action(s))
        return out + autos

    def _after_picks(self) -> None:
        if (
            not self.willpower_per_roll
            and any(not p.auto for p in self.plan)
            and rules.may_spend_willpower(self.willpower, 0, self.cfg)
        ):
            self.phase = WILLPOWER
            self._player = 0
        else:
            self._after_willpower()

    def _after_willpower(self) -> None:
        if self.cfg.teamwork.enabled and self.cfg.heist.ally_pool > 0:
            self.phase = ALLY
            self._player = 0
        else:
            self._begin_resolve()

    def _begin_resolve(self) -> None:
        """Rules 7-9, 14: the turn's rolls in the declared order (pools after the split), the ally's last."""
        n = self.n_actions
        self.queue = []
        self.turn_rolls = {}
        if self.wp_action is not None:
            self.willpower -= 1
            self.wp_spent += 1
        for k, (s, ap) in enumerate(self.plan):
            t = self.tasks[s]
            if ap is None:
                self.queue.append(PendingRoll(s, 0, 0, 0, False, False, None, k))
                continue
            pool = rules.multiple_action_pool(t.pools[ap], n, k + 1)
            wp = rules.willpower_successes(k == self.wp_action, self.cfg)
            self.queue.append(PendingRoll(s, pool, t.difficulty(ap, self.cfg), wp, t.specialty[ap], False, ap, k))
        if self.ally_slot is not None:
            t = self.tasks[self.ally_slot]
            self.queue.append(
                PendingRoll(self.ally_slot, self.cfg.heist.ally_pool, t.difficulty(0, self.cfg), 0, False, True, 0)
            )
        self.phase = RESOLVE
        self._player = CHANCE
        self._resolve()

    # -- resolving -------------------------------------------------------------------------------
    def _resolve(self) -> None:
        """Play the declared actions in order; stop at the next roll (a chance node)."""
        while self.queue:
            r = self.queue[0]
            t = self.tasks[r.slot]
            if t.status != ACTIVE:  # finished or reset earlier this turn: the action lapses
                self.queue.pop(0)
                continue
            if r.approach is None:
                self.queue.pop(0)
                self._take_automatic_success(t)
                continue
            if (
                self.willpower_per_roll
                and not r.ally
                and not r.willpower_decided
                and self.willpower > 0  # rules.may_spend_willpower with the config's part resolved once
                and self.wp_spent < self.wp_limit
            ):
                self.phase = WILLPOWER  # Rule 8: decided before this roll, the earlier ones seen
                self._player = 0
                return
            return  # a roll: chance node
        self.turn += 1
        self._start_turn()

    def _willpower_on_next_roll(self, spend: bool) -> None:
        """Rule 8: spend a point on the roll about to be made (one automatic success), or not."""
        r = self.queue[0]
        if spend:
            self.willpower -= 1
            self.wp_spent += 1
        wp = rules.willpower_successes(spend, self.cfg)
        self.queue[0] = PendingRoll(r.slot, r.pool, r.difficulty, wp, r.specialty, r.ally, r.approach, r.index, True)
        self.phase = RESOLVE
        self._player = CHANCE

    def _take_automatic_success(self, t: Task) -> None:
        """Rule 7: one success without rolling."""
        self._tasks_changed()
        t.progress += 1
        if self.narrating:
            self.narrate("auto", f"{t.spec.title}: automatic success ({t.progress}/{t.spec.target}).", 0)
        self._check_done(t)

    def _apply_roll(self, r: PendingRoll, outcome: int) -> None:
        """Rules 5, 10, 11, 14: add the roll to its task, reset it, or fail it."""
        self._tasks_changed()  # its progress, status or attempt may change below
        t = self.tasks[r.slot]
        if self.narrating:
            who, verb = ("The ally", "s") if r.ally else ("You", "")
            wp = " (Willpower spent)" if r.willpower else ""
        if outcome == BOTCH:
            self.botches += 1
            self.turn_limit = max(self.turn, self.turn_limit - self.cfg.heist.botch_costs_turns)
            if self.narrating:
                self.narrate(
                    "botch",
                    f"{who} botch{'es' if r.ally else ''} {t.spec.title} "
                    f"({r.pool} dice at difficulty {r.difficulty}){wp}: "
                    f"the guards are coming sooner (turn limit {self.turn_limit}).",
                    0,
                    outcome=outcome,
                )
        else:
            if self.narrating:
                self.narrate(
                    "roll",
                    f"{who} roll{verb} {t.spec.title} ({r.pool} dice at difficulty {r.difficulty}){wp}: "
                    f"{outcome} net success{'es' if outcome != 1 else ''} ({degree_of(outcome)}).",
                    0,
                    outcome=outcome,
                )
        if not t.extended:
            self._simple_roll(r, t, outcome)
            return
        progress, reset = rules.extended_progress(t.progress, outcome, self.cfg)
        if reset:
            t.progress = 0
            if self.narrating:
                self.narrate("reset", f"{t.spec.title}: all accumulated successes are lost.", 0)
            self._failed_attempt(t)
            return
        t.progress = progress
        self._check_done(t)

    def _simple_roll(self, r: PendingRoll, t: Task, outcome: int) -> None:
        """Rules 5 and 14: a roll on a simple task: success, a failed attempt, or (teamwork) wait for the others.

        Under ``teamwork.simple_tasks = "add"`` the turn's rolls on the task add their successes, so a
        roll that falls short waits for the rest of the turn's rolls on it (the ally's); under
        ``"separate"`` each roll is judged alone.
        """
        if not self.teamwork_adds:
            if rules.simple_action_succeeds(outcome, self.cfg):
                t.progress = 1
                self._check_done(t)
            else:
                self._failed_attempt(t)
            return
        outcomes = (*self.turn_rolls.get(r.slot, ()), outcome)
        self.turn_rolls[r.slot] = outcomes
        if rules.simple_task_succeeds(outcomes, self.cfg):
            if len(outcomes) > 1:
                total = rules.teamwork_successes(outcomes)
                if self.narrating:
                    self.narrate(
                        "teamwork", f"{t.spec.title}: together {total} success{'es' if total != 1 else ''}.", 0
                    )
            t.progress = 1
            self._check_done(t)
        elif not any(q.slot == r.slot and q.approach is not None for q in self.queue):
            self._failed_attempt(t)

    def _failed_attempt(self, t: Task) -> None:
        """Rules 10-11: a failed attempt: a retry decision, or the task is lost.

        Lost: a one-chance task, an impossible difficulty, or the Storyteller ends a reset extended action.
        """
        if t.extended and self.cfg.extended.abandon_on_reset:
            t.status = LOST
            if self.narrating:
                self.narrate("lost", f"{t.spec.title}: the Storyteller ends the attempt.", 0)
            return
        attempt = rules.next_attempt(t.attempt, t.extended, self.cfg)
        if rules.can_retry(t.spec.retryable, attempt, min(t.difficulties), self.cfg):
            t.attempt = attempt
            t.status = PENDING
        else:
            t.status = LOST
            if self.narrating:
                self.narrate("lost", f"{t.spec.title}: no second chance.", 0)

    def _tasks_changed(self) -> None:
        """A task's status, progress or attempt changes: drop what was worked out from them."""
        self._tasks_key = None
        self._heads = None

    def _check_done(self, t: Task) -> None:
        if t.progress >= t.spec.target:
            t.status = DONE
            if self.narrating:
                self.narrate("done", f"{t.spec.title}: done.", 0)

    # -- analysis hooks --------------------------------------------------------------------------
    def observation(self, seat: int) -> np.ndarray:
        """The same vector as :func:`~envs.storyteller.observation.encode_heist`, joined from packed blocks.

        A slot's head comes from its spec and attempt's memo (:attr:`Task.obs_heads`), the slots' tails and
        the globals from the config's memos (:func:`_block_memos`), each keyed by everything it reads.
        """
        plan = tuple(self.plan)
        key: Hashable = (plan, self.ally_slot, self.pending_slot)
        memo = self._tail_blocks
        tails = memo.get(key)
        if tails is None:
            if len(memo) >= _BLOCKS_LIMIT:
                memo.clear()
            tails = memo[key] = heist_slot_tails(plan, self.ally_slot, self.pending_slot)
        heads = self._heads
        if heads is None:
            heads = self._heads = self._head_blocks()
        phase = self.phase
        roll = None
        if phase is WILLPOWER and self.willpower_per_roll:
            r = self.queue[0]
            roll = (r.index, r.pool, r.difficulty)
        key = (self.turn, self.turn_limit, self.willpower, phase, self.n_actions, len(plan), roll)
        gmemo = self._global_blocks
        glob = gmemo.get(key)
        if glob is None:
            if len(gmemo) >= _BLOCKS_LIMIT:
                gmemo.clear()
            clock = (self.turn, self.turn_limit, self.cfg.heist.turns, self.willpower)
            glob = gmemo[key] = heist_globals(clock, phase, (self.n_actions, len(plan)), self.plan_scale, roll)
        # observation.join_blocks inlined (one call fewer per observation), the SLOTS slots and the globals
        return _frombuffer(
            bytearray(b"".join((heads[0], tails[0], heads[1], tails[1], heads[2], tails[2], glob))), _F32
        )

    def _head_blocks(self) -> tuple[bytes, ...]:
        """Every slot's packed head block, from each task's memo (:attr:`Task.obs_heads`); empty slots zero."""
        out: list[bytes] = []
        for t in self.tasks:
            memo = t.obs_heads
            key = (t.status, t.progress)
            head = memo.get(key)
            if head is None:
                head = memo[key] = heist_slot_head(t.obs_part, t.status, t.progress, t.spec.target)
            out.append(head)
        return (*out, *(HEIST_NO_TASK,) * (SLOTS - len(out)))

    def key(self) -> tuple[Any, ...]:
        return (
            self.phase,
            self.turn,
            self.turn_limit,
            self.willpower,
            self.pending_slot,
            self.n_actions,
            tuple(self.plan),
            self.wp_action,
            self.wp_spent,
            self.ally_slot,
            tuple(self.queue),
            tuple(sorted(self.turn_rolls.items())),
            tuple((t.spec.key, t.progress, t.attempt, t.status) for t in self.tasks),
        )

    def clone(self) -> HeistState:
        new = _new_object(HeistState)
        _copy_slots(new, self)  # every slot; the containers changed in place as copies
        new.tasks = [t.copy() for t in self.tasks]
        return new

    # -- labels ----------------------------------------------------------------------------------
    def _task_name(self, slot: int) -> str:
        return self.tasks[slot].spec.title if slot < len(self.tasks) else f"task {slot + 1}"

    def _approach_label(self, slot: int, ap: int) -> str:
        if slot >= len(self.tasks) or ap >= len(self.tasks[slot].spec.approaches):
            return f"approach {ap + 1}"
        t = self.tasks[slot]
        return f"{t.spec.approaches[ap].label}, {t.pools[ap]} dice, difficulty {t.difficulty(ap, self.cfg)}"

    def describe(self) -> dict[str, Any]:
        """A compact summary (tests and personas)."""
        return {
            "turn": self.turn,
            "limit": self.turn_limit,
            "willpower": self.willpower,
            "tasks": [(t.spec.key, t.progress, t.spec.target, t.status.name) for t in self.tasks],
        }


_new_object = object.__new__
_copy_slots = slot_copier(HeistState.FIELDS, copied=("log", "plan", "queue", "turn_rolls"))
"""Every slot of a state onto a new one, the containers it changes in place as copies (:meth:`HeistState.clone`)."""


def heist_actions(cfg: Any) -> int:
    """The heist's number of action ids under ``cfg`` (Rule 9: two more per action beyond 3 a turn)."""
    assert isinstance(cfg, StorytellerConfig)
    return heist_action_count(rules.max_actions(cfg))


def new_heist(cfg: Any) -> HeistState:
    """Scenario setup (deterministic; a random draw of tasks is a chance node)."""
    assert isinstance(cfg, StorytellerConfig)
    return HeistState(cfg)

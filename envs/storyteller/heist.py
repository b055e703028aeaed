"""The Heist scenario: timed extended tasks from the seed's example list, one character (and an ally).

Each turn the character declares how many actions to take (Rule 9), which task each works on and by
which approach, or takes an automatic success (Rule 7); then whether to spend Willpower on one roll
(Rule 8) and where the ally helps (Rule 14). The rolls follow in the declared order (Rules 2-6, 11).
A task reset by a botch (Rule 11) may be retried at a higher difficulty or abandoned (Rule 10).
Each turn is one interval of every task. The guards arrive after ``heist.turns`` turns, sooner after
botches. Reward: the fraction of the job's tasks completed.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State
from envs.storyteller import engine as rules
from envs.storyteller.config import TASK_KEYS, StorytellerConfig
from envs.storyteller.dice import BOTCH, degree_of, outcome_of_faces, sample_outcome

SLOTS = 3
"""Task slots of the action table (a job has 1..3 tasks)."""


@dataclass(frozen=True)
class Approach:
    """A way to work on a task: Attribute + Ability against a difficulty (``None`` = the default)."""

    label: str
    attribute: str
    ability: str
    difficulty: int | None


@dataclass(frozen=True)
class TaskSpec:
    """A task from the seed's example list."""

    key: str
    title: str
    approaches: tuple[Approach, ...]
    target: int  # successes needed (1 = a simple action)
    retryable: bool  # Rule 10: False for one-chance tasks
    calm: bool  # Rule 7: an automatic success is possible (no stress)


CATALOGUE: dict[str, TaskSpec] = {
    t.key: t
    for t in (
        TaskSpec(
            "documents",
            "Find the documents",
            (
                Approach("search the files", "wits", "computer", 8),
                Approach("crack the encryption", "intelligence", "computer", 9),
            ),
            12,
            True,
            False,
        ),
        TaskSpec(
            "house",
            "Find the house",
            (
                Approach("ask around", "perception", "streetwise", 7),
                Approach("check the records", "intelligence", "investigation", 8),
            ),
            10,
            True,
            True,
        ),
        TaskSpec("drive", "The long drive", (Approach("drive on", "stamina", "drive", 7),), 12, True, True),
        TaskSpec(
            "autopsy",
            "Autopsy",
            (
                Approach("open the body", "stamina", "investigation", None),
                Approach("by the book", "intelligence", "investigation", 7),
            ),
            15,
            True,
            True,
        ),
        TaskSpec(
            "virus",
            "Kill the virus",
            (
                Approach("Wits + Computer", "wits", "computer", 6),
                Approach("Intelligence + Computer", "intelligence", "computer", 7),
            ),
            10,
            True,
            False,
        ),
        TaskSpec("tree", "Move the fallen tree", (Approach("heave", "strength", "athletics", 8),), 1, True, True),
        TaskSpec("phone", "Fix the phone", (Approach("repair", "dexterity", "technology", 8),), 1, True, True),
        # Rule 2: the director's Perception 3 + Etiquette 3 is the difficulty.
        TaskSpec(
            "director",
            "Impress the gallery director",
            (Approach("charm", "manipulation", "etiquette", 3 + 3),),
            1,
            True,
            False,
        ),
        TaskSpec("shoot", "Shoot out the camera", (Approach("shoot", "dexterity", "firearms", 6),), 1, False, False),
    )
}


assert tuple(CATALOGUE) == TASK_KEYS


class Act(enum.IntEnum):
    """The heist's action table (see :data:`ACTION_COUNT`)."""

    RETRY = 0
    ABANDON = 1
    ONE_ACTION = 2
    TWO_ACTIONS = 3
    THREE_ACTIONS = 4
    ROLL = 5  # ROLL + 2 * slot + approach   (5..10)
    AUTO = 11  # AUTO + slot                  (11..13)
    NO_WILLPOWER = 14
    WILLPOWER = 15  # WILLPOWER + k-1 (action k)  (15..17)
    ALLY = 18  # ALLY + slot                  (18..20)
    ALLY_REST = 21


ACTION_COUNT = 22


class Phase(enum.IntEnum):
    SETUP = 0
    RETRY = 1
    COUNT = 2
    PICK = 3
    WILLPOWER = 4
    ALLY = 5
    RESOLVE = 6
    OVER = 7


class Status(enum.IntEnum):
    ACTIVE = 0
    DONE = 1
    LOST = 2
    PENDING = 3  # reset or failed: waiting for the retry / abandon decision


AUTO_APPROACH = -1


@dataclass(frozen=True)
class PendingRoll:
    slot: int
    pool: int
    difficulty: int
    willpower: int  # successes bought with Willpower
    specialty: bool
    ally: bool
    approach: int


class Task:
    """A task of the job in play: its spec, pools, progress and attempt number."""

    __slots__ = ("spec", "pools", "difficulties", "specialty", "progress", "attempt", "status")

    def __init__(self, spec: TaskSpec, cfg: StorytellerConfig) -> None:
        sheet = cfg.heist.character
        self.spec = spec
        self.pools = tuple(rules.dice_pool(sheet.get(a.attribute, 0), sheet.get(a.ability, 0)) for a in spec.approaches)
        self.difficulties = tuple(rules.difficulty_of(a.difficulty, cfg) for a in spec.approaches)
        self.specialty = tuple(cfg.specialties.enabled and a.ability in cfg.heist.specialties for a in spec.approaches)
        self.progress = 0
        self.attempt = 1
        self.status = Status.ACTIVE

    def copy(self) -> Task:
        t = Task.__new__(Task)
        t.spec, t.pools, t.difficulties, t.specialty = self.spec, self.pools, self.difficulties, self.specialty
        t.progress, t.attempt, t.status = self.progress, self.attempt, self.status
        return t

    def possible(self, approach: int, cfg: StorytellerConfig) -> bool:
        """Rule 10: this approach's difficulty at the current attempt does not exceed the maximum."""
        return rules.retry_difficulty(self.difficulties[approach], self.attempt, cfg) is not None

    def difficulty(self, approach: int, cfg: StorytellerConfig) -> int:
        """Rule 10: the current attempt's difficulty (10 at most; impossible attempts never get here)."""
        d = rules.retry_difficulty(self.difficulties[approach], self.attempt, cfg)
        return d if d is not None else cfg.dice.max_difficulty


class HeistState(State):
    """A heist in progress: ``rulebreaker/StorytellerHeist-v0``.

    ## Description
    One character (seat 0) works on 1..3 extended or simple tasks from the seed's example list before
    the guards arrive (docs/rules/storyteller.md, Heist). Each turn is one interval of every task.

    ## Action Space
    ``Discrete(22)``, taken as a sequence of small decisions per turn (legal subset by mask):
    0 RETRY / 1 ABANDON a task reset or failed last turn (Rule 10); 2..4 declare one, two or three
    actions (Rule 9); 5..10 roll task slot s by approach a (``5 + 2s + a``; a = 1 is the alternative,
    bigger-pool-higher-difficulty approach); 11..13 automatic success on slot s (Rule 7); 14 no
    Willpower, 15..17 Willpower on action k (Rule 8); 18..20 the ally helps slot s, 21 the ally rests
    (Rule 14).

    ## Observation Space
    ``Box(0, 1, (70,))``: per task slot (20 values): present, status one-hot (active, done, lost,
    awaiting retry), progress / target, target / 20, pools / 20 and difficulties / 10 of both
    approaches, attempt, calm, retryable, its place in this turn's plan, ally, pending retry; then
    turn, turns left, Willpower / 10, the decision phase one-hot, actions declared and picked.

    ## Rewards
    At the end: the fraction of the job's tasks completed (0..1).

    ## Episode End
    All tasks done or lost (``COMPLETED``), or the guards arrive after ``heist.turns`` turns, one turn
    sooner per botch (``TIME_LIMIT``).

    ## Arguments
    The config's ``[heist]`` table: ``tasks``, ``draw`` (random draw at a chance node; 0 = as listed),
    ``turns``, ``botch_costs_turns``, ``ally_pool``, ``character``, ``specialties``.
    """

    def __init__(self, cfg: StorytellerConfig) -> None:
        super().__init__(1)
        self.cfg = cfg
        self.tasks: list[Task] = []
        self.turn = 0
        self.turn_limit = cfg.heist.turns
        self.willpower = cfg.willpower.points
        self.phase = Phase.SETUP
        self.pending_slot = -1
        self.n_actions = 0
        self.plan: list[tuple[int, int]] = []  # (slot, approach or AUTO_APPROACH)
        self.wp_action = -1  # index into plan
        self.ally_slot = -1
        self.queue: list[PendingRoll] = []
        self.botches = 0
        self.max_actions = rules.max_actions(cfg)
        if cfg.heist.draw == 0:
            self._deal(tuple(range(len(cfg.heist.tasks))))

    # -- setup -----------------------------------------------------------------------------------
    def _deal(self, picks: tuple[int, ...]) -> None:
        names = self.cfg.heist.tasks
        self.tasks = [Task(CATALOGUE[names[i]], self.cfg) for i in picks]
        for t in self.tasks:
            extra = f", {t.spec.target} successes" if t.spec.target > 1 else ""
            self.narrate(
                "setup",
                f"Task: {t.spec.title} ({t.spec.approaches[0].attribute.title()} + "
                f"{t.spec.approaches[0].ability.title()}, difficulty {t.difficulties[0]}{extra}).",
            )
        self.narrate("setup", f"The guards arrive in {self.turn_limit} turns; Willpower {self.willpower}.")
        self._start_turn()

    # -- protocol --------------------------------------------------------------------------------
    def current_player(self) -> int:
        if self._outcome is not None:
            return TERMINAL
        if self.phase in (Phase.SETUP, Phase.RESOLVE):
            return CHANCE
        return 0

    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        if self.phase == Phase.SETUP:
            combos = list(combinations(range(len(self.cfg.heist.tasks)), self.cfg.heist.draw))
            return [(c, 1.0 / len(combos)) for c in combos]
        r = self.queue[0]
        return rules.roll_chance_outcomes(r.pool, r.difficulty, r.willpower, r.specialty, self.cfg)

    def sample_chance(self, rng: Rng) -> Hashable:
        if self.phase == Phase.SETUP:
            outs = self.chance_outcomes()
            return outs[int(rng.random() * len(outs))][0]
        r = self.queue[0]
        return sample_outcome(rng, r.pool, r.difficulty, r.willpower, self.cfg.willpower.prevents_botch, r.specialty)

    def apply_chance(self, outcome: Hashable) -> None:
        """SETUP: a tuple of task indices. RESOLVE: an outcome (``BOTCH`` or net successes) or a tuple of
        faces (plus specialty rerolls after the pool's dice) for golden tests."""
        if self.phase == Phase.SETUP:
            assert isinstance(outcome, tuple)
            self._deal(tuple(int(i) for i in outcome))
            return
        r = self.queue.pop(0)
        if isinstance(outcome, tuple):
            faces = outcome[: r.pool]
            value = outcome_of_faces(
                faces, r.difficulty, r.willpower, self.cfg.willpower.prevents_botch, r.specialty, outcome[r.pool :]
            )
        else:
            value = int(outcome)  # type: ignore[call-overload]
        self._apply_roll(r, value)
        self._resolve()

    def legal_actions(self) -> list[int]:
        if self.current_player() != 0:
            return []
        ph = self.phase
        if ph == Phase.RETRY:
            return [Act.RETRY, Act.ABANDON]
        if ph == Phase.COUNT:
            return [Act.ONE_ACTION + n - 1 for n in range(1, self.max_actions + 1) if self._feasible(n, 0, ())]
        if ph == Phase.PICK:
            return self._legal_picks()
        if ph == Phase.WILLPOWER:
            return [Act.NO_WILLPOWER] + [Act.WILLPOWER + i for i, (_, a) in enumerate(self.plan) if a >= 0]
        if ph == Phase.ALLY:
            return [Act.ALLY + s for s, t in enumerate(self.tasks) if t.status == Status.ACTIVE] + [Act.ALLY_REST]
        return []

    def apply_action(self, action: int) -> None:
        if action not in self.legal_actions():
            raise IllegalActionError(f"illegal heist action {action} in phase {self.phase.name}")
        ph = self.phase
        if ph == Phase.RETRY:
            self._retry_or_abandon(action == Act.RETRY)
        elif ph == Phase.COUNT:
            self.n_actions = action - Act.ONE_ACTION + 1
            self.plan = []
            if self.n_actions > 1:
                pens = ", ".join(f"-{self.n_actions + k}" for k in range(self.n_actions))
                self.narrate("declare", f"Turn {self.turn + 1}: {self.n_actions} actions declared (dice {pens}).", 0)
            else:
                self.narrate("declare", f"Turn {self.turn + 1}: one action.", 0)
            self.phase = Phase.PICK
        elif ph == Phase.PICK:
            if action >= Act.AUTO:
                self.plan.append((action - Act.AUTO, AUTO_APPROACH))
            else:
                self.plan.append(((action - Act.ROLL) // 2, (action - Act.ROLL) % 2))
            if len(self.plan) == self.n_actions:
                self._after_picks()
        elif ph == Phase.WILLPOWER:
            self.wp_action = -1 if action == Act.NO_WILLPOWER else action - Act.WILLPOWER
            self._after_willpower()
        elif ph == Phase.ALLY:
            self.ally_slot = -1 if action == Act.ALLY_REST else action - Act.ALLY
            self._begin_resolve()

    def action_label(self, action: int) -> str:
        a = int(action)
        if a == Act.RETRY:
            return "retry"
        if a == Act.ABANDON:
            return "abandon"
        if Act.ONE_ACTION <= a <= Act.THREE_ACTIONS:
            n = a - Act.ONE_ACTION + 1
            return "one action" if n == 1 else f"{n} actions"
        if Act.ROLL <= a < Act.AUTO:
            s, ap = divmod(a - Act.ROLL, 2)
            return f"roll {self._task_name(s)} ({self._approach_label(s, ap)})"
        if Act.AUTO <= a < Act.NO_WILLPOWER:
            return f"automatic success on {self._task_name(a - Act.AUTO)}"
        if a == Act.NO_WILLPOWER:
            return "no willpower"
        if Act.WILLPOWER <= a < Act.ALLY:
            return f"willpower on action {a - Act.WILLPOWER + 1}"
        if Act.ALLY <= a < Act.ALLY_REST:
            return f"ally helps with {self._task_name(a - Act.ALLY)}"
        if a == Act.ALLY_REST:
            return "ally keeps watch"
        return f"action {a}"

    def option_of(self, action: int) -> str | None:
        a = int(action)
        if a == Act.RETRY:
            return "retry"
        if a == Act.ABANDON:
            return "abandon"
        if a == Act.ONE_ACTION:
            return "single_action"
        if a in (Act.TWO_ACTIONS, Act.THREE_ACTIONS):
            return "multiple_actions"
        if Act.ROLL <= a < Act.AUTO:
            return "approach_alt" if (a - Act.ROLL) % 2 else "approach_main"
        if Act.AUTO <= a < Act.NO_WILLPOWER:
            return "auto_success"
        if a == Act.NO_WILLPOWER:
            return "no_willpower"
        if Act.WILLPOWER <= a < Act.ALLY:
            return "willpower"
        if Act.ALLY <= a < Act.ALLY_REST:
            return "teamwork"
        return "no_teamwork"

    def decision_context(self) -> str:
        return {
            Phase.RETRY: "retry",
            Phase.COUNT: "actions",
            Phase.PICK: "task",
            Phase.WILLPOWER: "willpower",
            Phase.ALLY: "ally",
        }.get(self.phase, "none")

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
        self.wp_action = -1
        self.ally_slot = -1
        for s, t in enumerate(self.tasks):
            if t.status == Status.PENDING:
                self.pending_slot = s
                self.phase = Phase.RETRY
                return
        self.pending_slot = -1
        if not any(self._feasible(n, 0, ()) for n in range(1, self.max_actions + 1)):
            self.phase = Phase.OVER
            self.narrate("stall", "No task can be attempted any more.")
            self._finish(EndReason.STALL)
            return
        self.phase = Phase.COUNT

    def _check_end(self) -> bool:
        if all(t.status in (Status.DONE, Status.LOST) for t in self.tasks):
            self.phase = Phase.OVER
            self._finish(EndReason.COMPLETED)
            return True
        if self.turn >= self.turn_limit:
            self.phase = Phase.OVER
            self.narrate("guards", "The guards arrive: time is up.")
            self._finish(EndReason.TIME_LIMIT)
            return True
        return False

    def _finish(self, reason: EndReason) -> None:
        done = sum(1 for t in self.tasks if t.status == Status.DONE)
        n = len(self.tasks)
        self.finish(0 if done == n else None, reason, [done / n], f"{done} of {n} tasks completed")

    def _retry_or_abandon(self, retry: bool) -> None:
        """Rule 10: after a failure (or a reset extended action) the player tries again at a higher
        difficulty, or gives the task up."""
        t = self.tasks[self.pending_slot]
        if retry:
            t.status = Status.ACTIVE
            self.narrate("retry", f"{t.spec.title}: tries again at difficulty {t.difficulty(0, self.cfg)}.", 0)
        else:
            t.status = Status.LOST
            self.narrate("abandon", f"{t.spec.title}: abandoned.", 0)
        self._start_turn()

    # -- declaring -------------------------------------------------------------------------------
    def _usable(self, slot: int, used: tuple[int, ...]) -> bool:
        t = self.tasks[slot]
        if t.status != Status.ACTIVE:
            return False
        return not (self.cfg.extended.one_roll_per_task and slot in used)

    def _feasible(self, n: int, k0: int, used: tuple[int, ...]) -> bool:
        """Can actions k0+1..n of an n-action turn still be filled (Rule 9: no pool <= 0; Rule 11: one
        roll per task)?"""
        if k0 >= n:
            return True
        for s, t in enumerate(self.tasks):
            if (
                self._usable(s, used)
                and any(
                    rules.multiple_action_pool(p, n, k0 + 1) >= 1 and t.possible(ap, self.cfg)
                    for ap, p in enumerate(t.pools)
                )
                and self._feasible(n, k0 + 1, (*used, s))
            ):
                return True
        return False

    def _legal_picks(self) -> list[int]:
        n, k0 = self.n_actions, len(self.plan)
        used = tuple(s for s, _ in self.plan)
        out: list[int] = []
        autos: list[int] = []
        for s, t in enumerate(self.tasks):
            if not self._usable(s, used) or not self._feasible(n, k0 + 1, (*used, s)):
                continue
            auto_ok = False
            for ap, p in enumerate(t.pools):
                pool = rules.multiple_action_pool(p, n, k0 + 1)
                if pool >= 1 and t.possible(ap, self.cfg):
                    out.append(Act.ROLL + 2 * s + ap)
                    if rules.automatic_success_allowed(pool, t.difficulty(ap, self.cfg), t.spec.calm, self.cfg):
                        auto_ok = True
            if auto_ok:
                autos.append(Act.AUTO + s)
        return out + autos

    def _after_picks(self) -> None:
        if any(a >= 0 for _, a in self.plan) and rules.may_spend_willpower(self.willpower, 0, self.cfg):
            self.phase = Phase.WILLPOWER
        else:
            self._after_willpower()

    def _after_willpower(self) -> None:
        if self.cfg.teamwork.enabled and self.cfg.heist.ally_pool > 0:
            self.phase = Phase.ALLY
        else:
            self._begin_resolve()

    def _begin_resolve(self) -> None:
        n = self.n_actions
        self.queue = []
        if self.wp_action >= 0:
            self.willpower -= 1
        for k, (s, ap) in enumerate(self.plan):
            t = self.tasks[s]
            if ap == AUTO_APPROACH:
                self.queue.append(PendingRoll(s, 0, 0, 0, False, False, AUTO_APPROACH))
                continue
            pool = rules.multiple_action_pool(t.pools[ap], n, k + 1)
            wp = self.cfg.willpower.successes if k == self.wp_action else 0
            self.queue.append(PendingRoll(s, pool, t.difficulty(ap, self.cfg), wp, t.specialty[ap], False, ap))
        if self.ally_slot >= 0:
            t = self.tasks[self.ally_slot]
            self.queue.append(
                PendingRoll(self.ally_slot, self.cfg.heist.ally_pool, t.difficulty(0, self.cfg), 0, False, True, 0)
            )
        self.phase = Phase.RESOLVE
        self._resolve()

    # -- resolving -------------------------------------------------------------------------------
    def _resolve(self) -> None:
        """Play the declared actions in order; stop at the next roll (a chance node)."""
        while self.queue:
            r = self.queue[0]
            t = self.tasks[r.slot]
            if t.status != Status.ACTIVE:  # finished or reset earlier this turn: the action lapses
                self.queue.pop(0)
                continue
            if r.approach == AUTO_APPROACH:
                self.queue.pop(0)
                self._take_automatic_success(t)
                continue
            return  # a roll: chance node
        self.turn += 1
        self._start_turn()

    def _take_automatic_success(self, t: Task) -> None:
        """Rule 7: one success without rolling."""
        t.progress += 1
        self.narrate("auto", f"{t.spec.title}: automatic success ({t.progress}/{t.spec.target}).", 0)
        self._check_done(t)

    def _apply_roll(self, r: PendingRoll, outcome: int) -> None:
        """Rules 5, 10, 11, 14: add the roll to its task, reset it, or fail it."""
        t = self.tasks[r.slot]
        who, verb = ("The ally", "s") if r.ally else ("You", "")
        wp = " (Willpower spent)" if r.willpower else ""
        if outcome == BOTCH:
            self.botches += 1
            self.turn_limit = max(self.turn, self.turn_limit - self.cfg.heist.botch_costs_turns)
            self.narrate(
                "botch",
                f"{who} botch{'es' if r.ally else ''} {t.spec.title} ({r.pool} dice at difficulty {r.difficulty}){wp}: "
                f"the guards are coming sooner (turn limit {self.turn_limit}).",
                0,
                outcome=outcome,
            )
        else:
            self.narrate(
                "roll",
                f"{who} roll{verb} {t.spec.title} ({r.pool} dice at difficulty {r.difficulty}){wp}: "
                f"{outcome} net success{'es' if outcome != 1 else ''} ({degree_of(outcome)}).",
                0,
                outcome=outcome,
            )
        if t.spec.target <= 1:  # a simple action: success, or a failed attempt
            if outcome >= self.cfg.dice.required_successes:
                t.progress = 1
                self._check_done(t)
            else:
                self._failed_attempt(t)
            return
        progress, reset = rules.extended_progress(t.progress, outcome, self.cfg)
        if reset:
            t.progress = 0
            self.narrate("reset", f"{t.spec.title}: all accumulated successes are lost.", 0)
            self._failed_attempt(t)
            return
        t.progress = progress
        self._check_done(t)

    def _failed_attempt(self, t: Task) -> None:
        """Rules 10-11: a failed attempt: a retry decision, or the task is lost (one-chance task,
        impossible difficulty, or the Storyteller ends a reset extended action)."""
        if t.spec.target > 1 and self.cfg.extended.abandon_on_reset:
            t.status = Status.LOST
            self.narrate("lost", f"{t.spec.title}: the Storyteller ends the attempt.", 0)
            return
        next_attempt = t.attempt + 1 if (t.spec.target <= 1 or self.cfg.retry.restart_is_retry) else t.attempt
        if rules.can_retry(t.spec.retryable, next_attempt, min(t.difficulties), self.cfg):
            t.attempt = next_attempt
            t.status = Status.PENDING
        else:
            t.status = Status.LOST
            self.narrate("lost", f"{t.spec.title}: no second chance.", 0)

    def _check_done(self, t: Task) -> None:
        if t.progress >= t.spec.target:
            t.status = Status.DONE
            self.narrate("done", f"{t.spec.title}: done.", 0)

    # -- analysis hooks --------------------------------------------------------------------------
    def observation(self, seat: int) -> np.ndarray:
        obs = np.zeros(OBS_SIZE, dtype=np.float32)
        for s, t in enumerate(self.tasks):
            b = s * PER_TASK
            obs[b] = 1.0
            obs[b + 1 + int(t.status)] = 1.0
            obs[b + 5] = min(t.progress / t.spec.target, 1.0)
            obs[b + 6] = min(t.spec.target / 20.0, 1.0)
            obs[b + 7] = min(t.pools[0] / 20.0, 1.0)
            obs[b + 8] = t.difficulty(0, self.cfg) / 10.0
            if len(t.pools) > 1:
                obs[b + 9] = 1.0
                obs[b + 10] = min(t.pools[1] / 20.0, 1.0)
                obs[b + 11] = t.difficulty(1, self.cfg) / 10.0
            obs[b + 12] = min((t.attempt - 1) / 5.0, 1.0)
            obs[b + 13] = float(t.spec.calm)
            obs[b + 14] = float(t.spec.retryable)
            for k, (ps, ap) in enumerate(self.plan):
                if ps == s:
                    obs[b + 15 + k] = 0.5 if ap == AUTO_APPROACH else 1.0
            obs[b + 18] = float(self.ally_slot == s)
            obs[b + 19] = float(self.pending_slot == s)
        g = SLOTS * PER_TASK
        limit = max(self.cfg.heist.turns, 1)
        obs[g] = min(self.turn / limit, 1.0)
        obs[g + 1] = min(max(self.turn_limit - self.turn, 0) / limit, 1.0)
        obs[g + 2] = min(self.willpower / 10.0, 1.0)
        if Phase.RETRY <= self.phase <= Phase.ALLY:
            obs[g + 3 + int(self.phase) - int(Phase.RETRY)] = 1.0
        obs[g + 8] = self.n_actions / 3.0
        obs[g + 9] = len(self.plan) / 3.0
        return obs

    def key(self) -> Hashable:
        return (
            self.phase,
            self.turn,
            self.turn_limit,
            self.willpower,
            self.pending_slot,
            self.n_actions,
            tuple(self.plan),
            self.wp_action,
            self.ally_slot,
            tuple(self.queue),
            tuple((t.spec.key, t.progress, t.attempt, t.status) for t in self.tasks),
        )

    def clone(self) -> HeistState:
        new = HeistState.__new__(HeistState)
        new.__dict__.update(self.__dict__)
        new.log = list(self.log)
        new.tasks = [t.copy() for t in self.tasks]
        new.plan = list(self.plan)
        new.queue = list(self.queue)
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


PER_TASK = 20
OBS_SIZE = SLOTS * PER_TASK + 10


def new_heist(cfg: Any) -> HeistState:
    """Scenario setup (deterministic; a random draw of tasks is a chance node)."""
    return HeistState(cfg)

"""Heuristic personas of the storyteller ruleset; each plays both the heist and the duel.

They read the full state (allowed for heuristics) and always return a legal action.

Willpower (Rule 8). Under ``willpower.declared = "before_each_roll"`` (the default) the decision comes
before each roll, with the turn's earlier rolls already made: each persona answers for the roll about
to be made (``_heist_willpower_now`` / ``_duel_willpower_now``), so a botch earlier in the turn or an
opponent's big attack is taken into account. Under ``"before_the_turn"`` they pick the roll at the
declaration as they always did (action 1).
"""

from __future__ import annotations

import numpy as np

from envs.core.dice import Rng
from envs.core.game import State
from envs.storyteller.actions import (
    Act,
    DAct,
    DPhase,
    Phase,
    Status,
    ally_action,
    duel_willpower_action,
    willpower_action,
)
from envs.storyteller.dice import botch_chance, expected_net
from envs.storyteller.duel import DuelState
from envs.storyteller.heist import HeistState, Task


def _first_legal(prefs: list[int], mask: np.ndarray) -> int:
    for a in prefs:
        if 0 <= a < len(mask) and mask[a]:
            return int(a)
    return int(np.flatnonzero(mask)[0])


def _roll_value(state: HeistState, t: Task, ap: int, n: int, k: int) -> float:
    pool = t.pools[ap] if n <= 1 else t.pools[ap] - n - (k - 1)
    if pool < 1 or not t.possible(ap, state.cfg):
        return -1.0
    d = t.difficulty(ap, state.cfg)
    # expected successes, minus the expected loss of the progress a botch would wipe
    return expected_net(pool, d, 0, t.specialty[ap]) - botch_chance(pool, d, 0, t.specialty[ap]) * t.progress


def _best_roll(state: HeistState, slot: int, n: int, k: int) -> tuple[int, float]:
    t = state.tasks[slot]
    vals = [(_roll_value(state, t, ap, n, k), ap) for ap in range(len(t.pools))]
    v, ap = max(vals)
    return Act.ROLL + 2 * slot + ap, v


def _active(state: HeistState) -> list[int]:
    return [s for s, t in enumerate(state.tasks) if t.status == Status.ACTIVE]


def _need(t: Task) -> int:
    return t.spec.target - t.progress


def _turns_left(state: HeistState) -> int:
    return max(state.turn_limit - state.turn, 1)


def _heist_behind(state: HeistState) -> bool:
    """The job is behind schedule: more successes needed per turn than one full-pool roll brings.

    A task reset earlier this turn (awaiting its retry) still counts as work to do.
    """
    need = sum(_need(t) for t in state.tasks if t.status in (Status.ACTIVE, Status.PENDING))
    best = max((_best_roll(state, s, 1, 1)[1] for s in _active(state)), default=0.0)
    return need > best * _turns_left(state)


def _ally_pref(state: HeistState) -> list[int]:
    """Send the ally to the least dangerous active task (lowest difficulty), unless every task is hard.

    Teamwork on a simple task (Rule 14, ``teamwork.simple_tasks = "add"``): a simple task the character
    rolls on this turn comes first, since the ally rolls there only if the character's roll fell short,
    and then its successes add to the character's.
    """
    if state.teamwork_adds:
        helped = [p.slot for p in state.plan if not p.auto and not state.tasks[p.slot].spec.extended]
        if helped:
            return [ally_action(helped[0]), Act.ALLY_REST]
    act = sorted(_active(state), key=lambda s: state.tasks[s].difficulty(0, state.cfg))
    if act and state.tasks[act[0]].difficulty(0, state.cfg) <= 7:
        return [Act.ALLY + act[0], Act.ALLY_REST]
    return [Act.ALLY_REST]


def _later_own_roll(state: HeistState) -> bool:
    """Another roll of the character (not the ally's) is still to come this turn."""
    return any(not r.ally and r.approach is not None for r in state.queue[1:])


def _heist_willpower_now(state: HeistState, spend: bool) -> list[int]:
    """Preferences at a Willpower decision: spend on the roll about to be made, or not."""
    if not spend:
        return [Act.NO_WILLPOWER]
    if state.willpower_per_roll:
        return [willpower_action(state.queue[0].index), Act.NO_WILLPOWER]
    return [Act.WILLPOWER, Act.NO_WILLPOWER]


def _duel_willpower_now(state: DuelState, spend: bool) -> list[int]:
    """Preferences at a duel Willpower decision: spend on the roll about to be made (per roll), or on action 1."""
    if not spend:
        return [DAct.NO_WILLPOWER]
    if state.willpower_per_roll:
        return [duel_willpower_action(state.queue[0].index), DAct.NO_WILLPOWER]
    return [DAct.WILLPOWER, DAct.NO_WILLPOWER]


def _splitter_heist_spends(state: HeistState) -> bool:
    """Splitter, last turn: before the turn, on action 1; per roll, on the roll whose task one more success
    could finish, else on the turn's last roll."""
    if _turns_left(state) > 1:
        return False
    if not state.willpower_per_roll:
        return True
    r = state.queue[0]
    need = _need(state.tasks[r.slot])
    return need <= expected_net(r.pool, r.difficulty, 0, r.specialty) + 1 or not _later_own_roll(state)


def _splitter_duel_spends(state: DuelState) -> bool:
    """Splitter, last turn: on action 1 before the turn; per roll, on its attack (on the defence only when no
    attack of its own is left to roll)."""
    if state.turn != state.cfg.duel.turns - 1:
        return False
    if not state.willpower_per_roll:
        return True
    s = state.seat
    return state.queue[0].kind.is_attack or not any(r.seat == s and r.kind.is_attack for r in state.queue)


def _focus(state: HeistState) -> int:
    """The active task closest to done (fewest successes missing)."""
    return min(_active(state), key=lambda s: (_need(state.tasks[s]), s))


class Steady:
    """One action a turn on the task nearest completion, the safe automatic success when it finishes the
    task or a roll is worth little more, Willpower only when behind schedule (heist) or behind the
    opponent (duel), judged again before each roll after the turn's earlier rolls"""

    name = "steady"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if isinstance(state, DuelState):
            s = state.seat
            if state.phase == DPhase.COUNT:
                return _first_legal([DAct.ONE_ACTION], mask)
            if state.phase == DPhase.PICK:
                return _first_legal([DAct.ATTACK, DAct.ATTACK_ALT, DAct.DEFEND], mask)
            behind = state.progress[s] < state.progress[1 - s]
            return _first_legal(_duel_willpower_now(state, behind), mask)
        assert isinstance(state, HeistState)
        ph = state.phase
        if ph == Phase.RETRY:
            return _first_legal([Act.RETRY], mask)
        if ph == Phase.COUNT:
            return _first_legal([Act.ONE_ACTION], mask)
        if ph == Phase.PICK:
            s = _focus(state)
            roll, value = _best_roll(state, s, state.n_actions, len(state.plan) + 1)
            sure = _need(state.tasks[s]) <= 1  # one automatic success finishes it: no risk taken
            prefs = [Act.AUTO + s, roll] if sure or value <= 1.25 else [roll, Act.AUTO + s]
            return _first_legal(prefs, mask)
        if ph == Phase.WILLPOWER:
            return _first_legal(_heist_willpower_now(state, _heist_behind(state)), mask)
        return _first_legal(_ally_pref(state), mask)


class Splitter:
    """Always splits the pool into two actions (two tasks in the heist; attack and defend in the duel),
    keeping Willpower for the last turn (on the roll that one more success could finish a task with, else
    the turn's last roll; in the duel on its attack)"""

    name = "splitter"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if isinstance(state, DuelState):
            if state.phase == DPhase.COUNT:
                return _first_legal([DAct.TWO_ACTIONS, DAct.ONE_ACTION], mask)
            if state.phase == DPhase.PICK:
                return _first_legal([DAct.ATTACK, DAct.DEFEND, DAct.ATTACK_ALT], mask)
            return _first_legal(_duel_willpower_now(state, _splitter_duel_spends(state)), mask)
        assert isinstance(state, HeistState)
        ph = state.phase
        if ph == Phase.RETRY:
            return _first_legal([Act.RETRY], mask)
        if ph == Phase.COUNT:
            return _first_legal([Act.TWO_ACTIONS, Act.ONE_ACTION, Act.THREE_ACTIONS], mask)
        if ph == Phase.PICK:
            k = len(state.plan) + 1
            used = {s for s, _ in state.plan}
            # the task needing most first (it gets the bigger pool), then the next
            order = sorted(_active(state), key=lambda s: (-_need(state.tasks[s]), s))
            prefs = [_best_roll(state, s, state.n_actions, k)[0] for s in order if s not in used]
            return _first_legal(prefs + [Act.AUTO + s for s in order], mask)
        if ph == Phase.WILLPOWER:
            return _first_legal(_heist_willpower_now(state, _splitter_heist_spends(state)), mask)
        return _first_legal(_ally_pref(state), mask)


class Spender:
    """Spends a Willpower point on every turn's first roll while any are left; one action on the task where
    a roll brings the most, never takes the automatic success"""

    name = "spender"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if isinstance(state, DuelState):
            if state.phase == DPhase.COUNT:
                return _first_legal([DAct.ONE_ACTION], mask)
            if state.phase == DPhase.PICK:
                return _first_legal([DAct.ATTACK, DAct.ATTACK_ALT, DAct.DEFEND], mask)
            return _first_legal(_duel_willpower_now(state, True), mask)
        assert isinstance(state, HeistState)
        ph = state.phase
        if ph == Phase.RETRY:
            return _first_legal([Act.RETRY], mask)
        if ph == Phase.COUNT:
            return _first_legal([Act.ONE_ACTION], mask)
        if ph == Phase.PICK:
            k = len(state.plan) + 1
            best = sorted((_best_roll(state, s, state.n_actions, k) for s in _active(state)), key=lambda x: -x[1])
            return _first_legal([a for a, _ in best], mask)
        if ph == Phase.WILLPOWER:
            return _first_legal(_heist_willpower_now(state, True), mask)
        return _first_legal(_ally_pref(state), mask)


class Retrier:
    """Never gives up: retries every failed task, keeps hammering the same task with the bigger-pool
    approach until it is done, never takes the automatic success; in the duel, all-out wild attacks."""

    name = "retrier"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if isinstance(state, DuelState):
            if state.phase == DPhase.COUNT:
                return _first_legal([DAct.ONE_ACTION], mask)
            if state.phase == DPhase.PICK:
                return _first_legal([DAct.ATTACK_ALT, DAct.ATTACK, DAct.DEFEND], mask)
            return _first_legal([DAct.NO_WILLPOWER], mask)
        assert isinstance(state, HeistState)
        ph = state.phase
        if ph == Phase.RETRY:
            return _first_legal([Act.RETRY], mask)
        if ph == Phase.COUNT:
            return _first_legal([Act.ONE_ACTION], mask)
        if ph == Phase.PICK:
            s = min(_active(state))  # the first unfinished task, until it is done
            t = state.tasks[s]
            big = max(range(len(t.pools)), key=lambda ap: (t.pools[ap], ap))
            return _first_legal([Act.ROLL + 2 * s + big, Act.ROLL + 2 * s, Act.ROLL + 2 * s + 1], mask)
        if ph == Phase.WILLPOWER:
            return _first_legal([Act.NO_WILLPOWER], mask)
        return _first_legal([Act.ALLY + min(_active(state)), Act.ALLY_REST], mask)


PERSONAS = {"steady": Steady, "splitter": Splitter, "spender": Spender, "retrier": Retrier}

__all__ = ["PERSONAS", "Retrier", "Spender", "Splitter", "Steady"]

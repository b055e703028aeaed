"""Storyteller rule functions: one per numbered rule of docs/rules/storyteller.md (Rules 1, 2, 5, 7-14).

Pure functions over numbers and small records; the scenario states (``heist.py``, ``duel.py``) only
sequence them. Reading a roll (Rules 2-6, 8, 15) lives in ``dice.py``. The config is passed in and
only read; every number the rules name is a named constant here or a config key.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import NamedTuple

from envs.storyteller.config import DUEL_ONE_EACH, StorytellerConfig
from envs.storyteller.dice import BOTCH, FAILURE, clamp_difficulty, outcome_distribution

SINGLE_ACTION = 1
"""Rule 9: one action a turn; the multiple-action penalty starts at two."""
MIN_POOL = 1
"""Rule 9: a roll needs at least one die; an action whose pool drops to 0 or below cannot be attempted."""
FIRST_ATTEMPT = 1
"""Rule 10: attempt 1 is at the task's own difficulty."""
STILL_EQUAL = -1
"""Rule 13: :func:`contest_winner`'s answer when both reach the total with equal totals."""
TIE_SUCCESSES = 1
"""Rule 12 [decision]: the successes a tie gives the actor under ``resisted.actor_wins_ties``."""


class ResetOn(enum.StrEnum):
    """Rule 11 [decision]: the roll results that wipe an extended action (``extended.reset_on``)."""

    BOTCH = "botch"
    FAILURE = "failure"
    NEVER = "never"


class Simultaneous(enum.StrEnum):
    """Rule 13 [decision]: both sides reach the total in one roll (``contest.simultaneous``)."""

    HIGHER_TOTAL = "higher_total"
    DRAW = "draw"


class WillpowerTiming(enum.StrEnum):
    """Rule 8 [decision]: when Willpower is declared (``willpower.declared``)."""

    BEFORE_EACH_ROLL = "before_each_roll"
    BEFORE_THE_TURN = "before_the_turn"


class SimpleTeamwork(enum.StrEnum):
    """Rule 14 [decision]: how helpers' rolls on a simple task combine (``teamwork.simple_tasks``)."""

    ADD = "add"
    SEPARATE = "separate"


class AttackTurn(NamedTuple):
    """Rules 11-12: one side's attack rolls of a turn: the successes kept, and whether a roll reset it."""

    kept: int
    rolled: bool  # some attack roll was kept (after the last reset)
    reset: bool


def dice_pool(attribute: int, ability: int) -> int:
    """Rule 1: a dice pool is an Attribute plus an Ability, in d10s."""
    return attribute + ability


def difficulty_of(raw: int | None, cfg: StorytellerConfig) -> int:
    """Rule 2: the difficulty (the default when none is given), clamped to the configured range."""
    d = cfg.dice.default_difficulty if raw is None else raw
    return clamp_difficulty(d, cfg.dice.min_difficulty, cfg.dice.max_difficulty)


def simple_action_succeeds(outcome: int, cfg: StorytellerConfig) -> bool:
    """Rule 5: a simple action succeeds iff its net successes reach the successes required."""
    return outcome >= cfg.dice.required_successes


def automatic_success_allowed(pool: int, difficulty: int, calm: bool, cfg: StorytellerConfig) -> bool:
    """Rule 7: a character may take exactly one success without rolling.

    Only with a pool at least the difficulty, and only outside combat or stress.
    """
    return cfg.auto_success.enabled and calm and pool >= difficulty


def may_spend_willpower(points: int, spent_this_turn: int, cfg: StorytellerConfig) -> bool:
    """Rule 8: one Willpower point per turn (declared before the roll) while points remain."""
    return cfg.willpower.successes > 0 and points > 0 and spent_this_turn < cfg.willpower.per_turn


def willpower_before_each_roll(cfg: StorytellerConfig) -> bool:
    """Rule 8 [decision]: Willpower is declared before each roll, after the turn's earlier rolls are seen.

    Otherwise (``willpower.declared = "before_the_turn"``) it is declared for one of the turn's rolls
    before any of them is made.
    """
    return cfg.willpower.declared == WillpowerTiming.BEFORE_EACH_ROLL


def willpower_successes(spent: bool, cfg: StorytellerConfig) -> int:
    """Rule 8: the automatic successes a roll gets from Willpower (none when no point is spent on it)."""
    return cfg.willpower.successes if spent else 0


def multiple_action_pool(pool: int, actions: int, k: int) -> int:
    """Rule 9: of ``actions`` >= 2 declared actions, the k-th (1-based) rolls pool - actions - (k - 1).

    A single action takes no penalty. A result <= 0 cannot be attempted (:func:`can_attempt`).
    """
    if actions <= SINGLE_ACTION:
        return pool
    return pool - actions - (k - 1)


def can_attempt(pool: int) -> bool:
    """Rule 9: an action whose pool drops to 0 or below cannot be attempted."""
    return pool >= MIN_POOL


def max_actions(cfg: StorytellerConfig) -> int:
    """Rule 9: how many actions a character may declare in one turn."""
    return cfg.multiple_actions.max_actions if cfg.multiple_actions.enabled else SINGLE_ACTION


def duel_max_actions(cfg: StorytellerConfig) -> int:
    """Rules 9 and 11: how many actions a duellist may declare in one turn.

    With one roll per task a turn holds one attack and one defence (two actions); without it,
    ``duel.max_actions``; never more than Rule 9's :func:`max_actions`.
    """
    cap = DUEL_ONE_EACH if cfg.extended.one_roll_per_task else cfg.duel.max_actions
    return min(max_actions(cfg), cap)


def retry_difficulty(base: int, attempt: int, cfg: StorytellerConfig) -> int | None:
    """Rule 10: attempt n >= 2 of a retryable task is at D + (n - 1) x step.

    ``None`` once that exceeds the highest difficulty (the task has become impossible).
    """
    d = base + (attempt - FIRST_ATTEMPT) * cfg.retry.difficulty_step
    return None if d > cfg.dice.max_difficulty else d


def can_retry(retryable: bool, next_attempt: int, base: int, cfg: StorytellerConfig) -> bool:
    """Rule 10: a failed task may be tried again.

    Only if it is retryable (not a one-chance task), retries are in use, and the raised difficulty is
    still possible.
    """
    return cfg.retry.enabled and retryable and retry_difficulty(base, next_attempt, cfg) is not None


def next_attempt(attempt: int, extended: bool, cfg: StorytellerConfig) -> int:
    """Rules 10-11: the attempt number after a failure.

    A failed simple action is always a new attempt; restarting a reset extended action is one only
    under ``retry.restart_is_retry``.
    """
    return attempt + 1 if (not extended or cfg.retry.restart_is_retry) else attempt


def resets_progress(outcome: int, cfg: StorytellerConfig) -> bool:
    """Rule 11 [decision]: the roll results that wipe an extended action's accumulated successes."""
    mode = cfg.extended.reset_on
    if mode == ResetOn.BOTCH:
        return outcome == BOTCH
    if mode == ResetOn.FAILURE:
        return outcome <= FAILURE
    return False


def extended_progress(progress: int, outcome: int, cfg: StorytellerConfig) -> tuple[int, bool]:
    """Rule 11: one interval of an extended action: add the net successes, or start over on a reset.

    Returns (new progress, whether it reset).
    """
    if resets_progress(outcome, cfg):
        return 0, True
    return progress + (outcome if outcome > 0 else 0), False  # max(outcome, 0), without the builtin's call


def attack_turn(outcomes: Iterable[int], cfg: StorytellerConfig) -> AttackTurn:
    """Rule 11: a side's attack rolls of one turn, in order; a roll that resets wipes what came before it."""
    kept: list[int] = []
    reset = False
    for v in outcomes:
        gain, wiped = extended_progress(0, v, cfg)
        if wiped:
            reset = True
            kept = []
        else:
            kept.append(gain)
    return AttackTurn(sum(kept), bool(kept), reset)


def resisted_result(actor: int, opponent: int, cfg: StorytellerConfig) -> int:
    """Rule 12: the actor's successes minus the opponent's (a botch counts as 0).

    Only a positive difference is a success. A tie is a failure (status quo) unless
    ``resisted.actor_wins_ties``.
    """
    diff = max(actor, 0) - max(opponent, 0)
    if diff > 0:
        return diff
    if diff == 0 and cfg.resisted.actor_wins_ties and actor > 0:
        return TIE_SUCCESSES
    return 0


def resisting_total(previous: int | None, outcome: int) -> int:
    """Rule 12: a side's resisting successes this turn; a second resisting roll adds (a botch counts as 0)."""
    return outcome if previous is None else max(previous, 0) + max(outcome, 0)


def contest_winner(totals: Sequence[int], target: int, cfg: StorytellerConfig) -> int | None:
    """Rule 13: the first side to reach the target wins.

    Both in the same roll: the higher total wins; :data:`STILL_EQUAL` when they are still equal (roll
    again, or a draw under ``contest.simultaneous = draw``); ``None`` while nobody has reached it.
    """
    reached = [i for i, t in enumerate(totals) if t >= target]
    if not reached:
        return None
    if len(reached) == 1:
        return reached[0]
    a, b = totals[0], totals[1]
    if a != b and cfg.contest.simultaneous == Simultaneous.HIGHER_TOTAL:
        return 0 if a > b else 1
    return STILL_EQUAL


def roll_off_chance(first: dict[int, Fraction], second: dict[int, Fraction]) -> Fraction:
    """Rule 13: equal totals: both roll again until one scores more (a botch counts as 0).

    Given both rolls' exact tables, the chance that the first side wins: P(A > B) / (1 - P(A = B)).
    """
    tabs = []
    for table in (first, second):
        t: dict[int, Fraction] = {}
        for k, p in table.items():
            t[max(k, 0)] = t.get(max(k, 0), Fraction(0)) + p
        tabs.append(t)
    win = sum((pa * pb for a, pa in tabs[0].items() for b, pb in tabs[1].items() if a > b), Fraction(0))
    tie = sum((pa * tabs[1].get(a, Fraction(0)) for a, pa in tabs[0].items()), Fraction(0))
    return win / (1 - tie)


def teamwork_successes(outcomes: Iterable[int]) -> int:
    """Rule 14: characters roll independently and add their successes (ratings are never pooled)."""
    return sum(max(o, 0) for o in outcomes)


def simple_teamwork_adds(cfg: StorytellerConfig) -> bool:
    """Rule 14 [decision]: on a simple task the successes of the turn's rolls add up (``teamwork.simple_tasks``)."""
    return cfg.teamwork.simple_tasks == SimpleTeamwork.ADD


def simple_task_succeeds(outcomes: Iterable[int], cfg: StorytellerConfig) -> bool:
    """Rules 14 and 5: the turn's independent rolls on a simple task add their successes (a botch counts as 0).

    The task succeeds iff the sum reaches the successes required.
    """
    return simple_action_succeeds(teamwork_successes(outcomes), cfg)


def roll_chance_outcomes(
    pool: int, difficulty: int, willpower: int, specialty: bool, cfg: StorytellerConfig
) -> list[tuple[int, float]]:
    """Rules 3-5, 8, 15: the exact (outcome, probability) list of one pending roll (a chance node's branches)."""
    table = outcome_distribution(
        pool,
        difficulty,
        willpower > 0,
        willpower_successes=willpower,
        prevents_botch=cfg.willpower.prevents_botch,
        specialty=specialty,
    )
    return [(k, float(p)) for k, p in table.items()]

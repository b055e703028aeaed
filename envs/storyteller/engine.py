"""The Storyteller rules that sit above a single roll (docs/rules/storyteller.md, Rules 1, 7-14).

Pure functions, one per rule; the scenario states (``heist.py``, ``duel.py``) call them. Roll reading
(Rules 2-6, 8, 15) lives in ``dice.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envs.storyteller.config import StorytellerConfig
from envs.storyteller.dice import BOTCH, clamp_difficulty, outcome_distribution


def dice_pool(attribute: int, ability: int) -> int:
    """Rule 1: a dice pool is an Attribute plus an Ability, in d10s."""
    return attribute + ability


def difficulty_of(raw: int | None, cfg: StorytellerConfig) -> int:
    """Rule 2: the difficulty (the default when none is given), clamped to the configured range."""
    d = cfg.dice.default_difficulty if raw is None else raw
    return clamp_difficulty(d, cfg.dice.min_difficulty, cfg.dice.max_difficulty)


def automatic_success_allowed(pool: int, difficulty: int, calm: bool, cfg: StorytellerConfig) -> bool:
    """Rule 7: with a pool at least the difficulty, and only outside combat or stress, a character may
    take exactly one success without rolling."""
    return cfg.auto_success.enabled and calm and pool >= difficulty


def may_spend_willpower(points: int, spent_this_turn: int, cfg: StorytellerConfig) -> bool:
    """Rule 8: one Willpower point per turn (declared before the roll) while points remain."""
    return cfg.willpower.successes > 0 and points > 0 and spent_this_turn < cfg.willpower.per_turn


def multiple_action_pool(pool: int, actions: int, k: int) -> int:
    """Rule 9: of ``actions`` >= 2 declared actions, the k-th (1-based) rolls pool - actions - (k - 1);
    a single action takes no penalty. A result <= 0 cannot be attempted."""
    if actions <= 1:
        return pool
    return pool - actions - (k - 1)


def max_actions(cfg: StorytellerConfig) -> int:
    """Rule 9: how many actions a character may declare in one turn."""
    return cfg.multiple_actions.max_actions if cfg.multiple_actions.enabled else 1


def retry_difficulty(base: int, attempt: int, cfg: StorytellerConfig) -> int | None:
    """Rule 10: attempt n >= 2 of a retryable task is at D + (n - 1) x step; ``None`` once that
    exceeds the highest difficulty (the task has become impossible)."""
    d = base + (attempt - 1) * cfg.retry.difficulty_step
    return None if d > cfg.dice.max_difficulty else d


def can_retry(retryable: bool, next_attempt: int, base: int, cfg: StorytellerConfig) -> bool:
    """Rule 10: a failed task may be tried again if it is retryable (not a one-chance task), retries
    are in use, and the raised difficulty is still possible."""
    return cfg.retry.enabled and retryable and retry_difficulty(base, next_attempt, cfg) is not None


def resets_progress(outcome: int, cfg: StorytellerConfig) -> bool:
    """Rule 11 [decision]: the roll results that wipe an extended action's accumulated successes."""
    mode = cfg.extended.reset_on
    if mode == "botch":
        return outcome == BOTCH
    if mode == "failure":
        return outcome <= 0
    return False


def extended_progress(progress: int, outcome: int, cfg: StorytellerConfig) -> tuple[int, bool]:
    """Rule 11: one interval of an extended action: add the net successes, or start over when the
    roll resets it. Returns (new progress, whether it reset)."""
    if resets_progress(outcome, cfg):
        return 0, True
    return progress + max(outcome, 0), False


def resisted_result(actor: int, opponent: int, cfg: StorytellerConfig) -> int:
    """Rule 12: the actor's successes minus the opponent's (a botch counts as 0); only a positive
    difference is a success. A tie is a failure (status quo) unless ``resisted.actor_wins_ties``."""
    diff = max(actor, 0) - max(opponent, 0)
    if diff > 0:
        return diff
    if diff == 0 and cfg.resisted.actor_wins_ties and actor > 0:
        return 1
    return 0


def contest_winner(totals: Sequence[int], target: int, cfg: StorytellerConfig) -> int | None:
    """Rule 13: the first side to reach the target wins. Both in the same roll: the higher total wins;
    returns -1 when they are still equal (roll again, or a draw under ``contest.simultaneous = draw``)
    and ``None`` while nobody has reached it."""
    reached = [i for i, t in enumerate(totals) if t >= target]
    if not reached:
        return None
    if len(reached) == 1:
        return reached[0]
    a, b = totals[0], totals[1]
    if a != b and cfg.contest.simultaneous == "higher_total":
        return 0 if a > b else 1
    return -1


def teamwork_successes(outcomes: Iterable[int]) -> int:
    """Rule 14: characters roll independently and add their successes (ratings are never pooled)."""
    return sum(max(o, 0) for o in outcomes)


def roll_chance_outcomes(pool: int, difficulty: int, willpower: int, specialty: bool,
                         cfg: StorytellerConfig) -> list[tuple[int, float]]:
    """Rules 3-5, 8, 15: the exact (outcome, probability) list of one pending roll (a chance node's branches)."""
    table = outcome_distribution(pool, difficulty, willpower > 0, willpower_successes=willpower,
                                 prevents_botch=cfg.willpower.prevents_botch, specialty=specialty)
    return [(k, float(p)) for k, p in table.items()]

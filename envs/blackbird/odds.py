"""The blackbird core mechanic for ``rulebreaker odds blackbird``: N d6 counting successes, pass at a difficulty.

The exact table is the engine's (:func:`envs.blackbird.dice.exact_success_distribution`) and the sampler the
engine's own roll (:func:`envs.blackbird.dice.sample_roll`, Rule 4's :func:`envs.blackbird.rules.passes`),
registered as ``RULESET.odds``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from envs.blackbird import dice, rules
from envs.core.dice import Rng
from envs.core.odds import Odds, OddsParam, OddsProvider, check_range, rule

MAX_POOL = 60
"""The largest pool the odds command accepts."""
MAX_DIFFICULTY = 20
"""The largest difficulty the odds command accepts."""


def blackbird_odds(n_dice: int, difficulty: int | None = None, *, success_on: int = 4) -> Odds:
    """Rules 3-4: ``0``..``N`` successes (a d6 showing ``success_on``+), ``pass`` iff at least the difficulty."""
    dist = dice.exact_success_distribution(n_dice, success_on)
    labels = [str(s) for s in range(n_dice + 1)]
    probs = dict(zip(labels, dist, strict=True))
    query: dict[str, Any] = {"dice": n_dice, "success_on": success_on}
    title = f"{n_dice}d6, success on {success_on}+"
    if difficulty is not None:
        probs["pass"] = sum(dist[difficulty:], Fraction(0))
        query["difficulty"] = difficulty
        title += f", pass at {difficulty}+ successes"

    def sampler(rng: Rng) -> Iterable[str]:
        roll = dice.sample_roll(rng, n_dice, success_on)
        labels = [str(roll.successes)]
        if difficulty is not None and rules.passes(roll.successes, difficulty):
            labels.append("pass")
        return labels

    return Odds(probs, labels, title, query, sampler)


def odds_query(config: Any, args: Mapping[str, Any]) -> Odds:
    """``odds blackbird --dice N [--difficulty D]`` under the rules ``config``."""
    check_range("--dice", args["dice"], 1, MAX_POOL)
    if args.get("difficulty") is not None:
        check_range("--difficulty", args["difficulty"], 1, MAX_DIFFICULTY)
    return blackbird_odds(args["dice"], args.get("difficulty"), success_on=rule(config, "dice.success_on", 4))


ODDS = OddsProvider(
    summary="0..N successes of N d6 (4+ as written), and the chance to pass a difficulty.",
    params=(
        OddsParam("dice", "Dice in the pool.", required=True),
        OddsParam("difficulty", "Successes needed to pass (1-20)."),
    ),
    odds=odds_query,
    examples=({"dice": 4, "difficulty": 2},),
)

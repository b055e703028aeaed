"""The storyteller core mechanic for ``rulebreaker odds storyteller``: a d10 pool against a difficulty.

The exact table is the engine's (:func:`envs.storyteller.dice.outcome_distribution`) and the sampler the
engine's own roll (:func:`envs.storyteller.dice.sample_outcome`), registered as ``RULESET.odds``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from envs.core.dice import Rng
from envs.core.odds import Odds, OddsParam, OddsProvider, check_range, rule
from envs.storyteller import dice

MAX_POOL = 60
"""The largest pool the odds command accepts (exact tables stay fast far beyond any real pool)."""


def storyteller_odds(
    pool: int,
    difficulty: int,
    willpower: bool = False,
    *,
    willpower_successes: int = 1,
    willpower_prevents_botch: bool = True,
) -> Odds:
    """Rules 3-5 and 8: outcomes ``botch``, ``0``, ``1``..``N`` (+ Willpower successes) of a d10 pool.

    A die succeeds on ``difficulty`` or more (a 10 always does); each 1 cancels a success; a botch is
    no successes and at least one 1. Willpower adds uncancellable successes and (as written) prevents
    the botch.
    """
    n, d = pool, difficulty
    wp = willpower_successes if willpower else 0
    exact = dice.outcome_distribution(
        n, d, willpower, willpower_successes=willpower_successes, prevents_botch=willpower_prevents_botch
    )
    labels = ["botch", *(str(k) for k in range(n + wp + 1))]
    probs = {lab: exact.get(dice.BOTCH if lab == "botch" else int(lab), Fraction(0)) for lab in labels}
    notes = [
        f"net successes = max(0, successes - ones){' + ' + str(wp) + ' Willpower' if wp else ''}; "
        f"botch = no successes and at least one 1"
        + (" (impossible with Willpower)" if wp and willpower_prevents_botch else "")
    ]

    def sampler(rng: Rng) -> Iterable[str]:
        k = dice.sample_outcome(rng, n, d, wp, willpower_prevents_botch, False)
        return ("botch",) if k == dice.BOTCH else (str(k),)

    title = f"{n}d10 at difficulty {d}" + (" + Willpower" if willpower else "")
    return Odds(probs, labels, title, {"pool": n, "difficulty": d, "willpower": willpower}, sampler, notes)


def odds_query(config: Any, args: Mapping[str, Any]) -> Odds:
    """``odds storyteller --pool N [--difficulty D] [--willpower]`` under the rules ``config``."""
    lo, hi = rule(config, "dice.min_difficulty", 2), rule(config, "dice.max_difficulty", 10)
    d = args["difficulty"] if args.get("difficulty") is not None else rule(config, "dice.default_difficulty", 6)
    check_range("--pool", args["pool"], 1, MAX_POOL)
    check_range("--difficulty", d, lo, hi)
    return storyteller_odds(
        args["pool"],
        d,
        bool(args.get("willpower")),
        willpower_successes=rule(config, "willpower.successes", 1),
        willpower_prevents_botch=rule(config, "willpower.prevents_botch", True),
    )


ODDS = OddsProvider(
    summary="botch, 0, 1..N net successes of a d10 pool (rule of one, Willpower).",
    params=(
        OddsParam("pool", "Dice in the pool (Attribute + Ability).", required=True),
        OddsParam("difficulty", "Difficulty 2-10 (default: rules)."),
        OddsParam("willpower", "Spend a Willpower point (+1 auto success).", kind=bool),
    ),
    odds=odds_query,
    examples=({"pool": 4, "difficulty": 6}, {"pool": 3, "difficulty": 8, "willpower": True}),
)

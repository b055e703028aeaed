"""The hallownest core mechanic for ``rulebreaker odds hallownest``: N d6 at 5+ with rerolls of failed dice.

The exact table is the engine's (:func:`envs.hallownest.dice.success_distribution`) and the sampler the
engine's own roll (:func:`envs.hallownest.dice.sample_successes`), registered as ``RULESET.odds``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from envs.core.dice import Rng
from envs.core.odds import Odds, OddsParam, OddsProvider, check_range, rule
from envs.hallownest import dice

MAX_POOL = 60
"""The largest pool (and number of rerolls) the odds command accepts."""
FACES = (2, 6)
"""The success faces a d6 can have (lowest, highest)."""


def hallownest_odds(n_dice: int, rerolls: int = 0, *, success_on: int = 5) -> Odds:
    """Rules 1-2: ``0``..``N`` successes; up to ``rerolls`` failed dice are rerolled (the better kept)."""
    exact = dice.success_distribution(n_dice, rerolls, success_on)
    labels = [str(s) for s in range(n_dice + 1)]
    probs = {lab: exact.get(int(lab), Fraction(0)) for lab in labels}

    def sampler(rng: Rng) -> Iterable[str]:
        return (str(dice.sample_successes(rng, n_dice, rerolls, success_on)),)

    title = f"{n_dice}d6, success on {success_on}+, {rerolls} reroll{'s' if rerolls != 1 else ''} of failed dice"
    return Odds(probs, labels, title, {"dice": n_dice, "rerolls": rerolls, "success_on": success_on}, sampler)


def odds_query(config: Any, args: Mapping[str, Any]) -> Odds:
    """``odds hallownest --dice N [--rerolls K] [--success-on F]`` under the rules ``config``."""
    check_range("--dice", args["dice"], 1, MAX_POOL)
    rerolls = args.get("rerolls") or 0
    check_range("--rerolls", rerolls, 0, MAX_POOL)
    face = args["success_on"] if args.get("success_on") is not None else rule(config, "dice.success_on", 5)
    check_range("--success-on", face, *FACES)
    return hallownest_odds(args["dice"], rerolls, success_on=face)


ODDS = OddsProvider(
    summary="0..N successes of N d6 at 5+, with rerolls of failed dice.",
    params=(
        OddsParam("dice", "Dice in the pool.", required=True),
        OddsParam("rerolls", "Failed dice that may be rerolled.", default=0),
        OddsParam("success_on", "Success face (default: rules, 5)."),
    ),
    odds=odds_query,
    examples=({"dice": 4, "rerolls": 2},),
)

"""The wicked_age core mechanic for ``rulebreaker odds wicked_age``: an answer against a standing roll.

The exact table is the engine's (:func:`envs.wicked_age.dice.comparison_table`) and the sampler the engine's
own dice functions (roll with advantage, read, compare), registered as ``RULESET.odds``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from envs.core.dice import Rng
from envs.core.odds import Odds, OddsParam, OddsProvider, check_range, parse_dice, rule
from envs.wicked_age import dice

MAX_DICE = 4
"""The most dice a side rolls in the odds command."""
MAX_ADVANTAGE = 8
"""The most advantage dice a side adds in the odds command."""
LAST_ROUND = 3
"""The round in which advantage results become absolute (Rule 12)."""


def wicked_age_odds(
    answer: Sequence[int],
    vs: Sequence[int],
    advantage: int = 0,
    vs_advantage: int = 0,
    *,
    last_round: bool = False,
    adv_sides: int = 6,
    multiple: int = 2,
) -> Odds:
    """Rules 6, 11, 12: the answerer's result against a standing roll, both rolled.

    ``absolute_loss`` iff multiple x a <= c (a, c the high dice with advantage); otherwise ``loses_advantage``
    iff the answer's reading is lower; ``absolute_win`` iff a >= multiple x c; else ``wins_advantage`` (ties
    included). In the last round the advantage results become absolute.
    """
    exact = dice.comparison_table(answer, vs, advantage, vs_advantage, adv_sides, last_round, multiple)
    probs = {r.label: exact[r] for r in dice.Result}
    text = ",".join(f"d{d}" for d in answer) + (f"+{advantage} adv" if advantage else "")
    vtext = ",".join(f"d{d}" for d in vs) + (f"+{vs_advantage} adv" if vs_advantage else "")
    query = {
        "dice": [f"d{d}" for d in answer],
        "vs": [f"d{d}" for d in vs],
        "advantage": advantage,
        "vs_advantage": vs_advantage,
        "last_round": last_round,
    }
    rounds = (LAST_ROUND, LAST_ROUND) if last_round else (1, LAST_ROUND)

    def reading(rng: Rng, d: Sequence[int], k: int) -> tuple[int, ...]:
        faces, adv = dice.roll_with_advantage(rng, d, k, adv_sides)
        return dice.read_roll(faces, adv)

    def sampler(rng: Rng) -> Iterable[str]:
        standing = reading(rng, vs, vs_advantage)
        mine = reading(rng, answer, advantage)
        return (dice.compare_answer(mine, standing, rounds[0], rounds[1], multiple).label,)

    title = f"answer {text} against a standing {vtext}" + (" (round 3)" if last_round else "")
    return Odds(probs, [r.label for r in dice.Result], title, query, sampler)


def odds_query(config: Any, args: Mapping[str, Any]) -> Odds:
    """``odds wicked_age --dice d12,d10 --vs d10,d8 [--advantage K] [--vs-advantage K] [--last-round]``."""
    ladder = tuple(x for x in rule(config, "forms.ladder", [12, 10, 8, 6, 4]) if x > 0)
    a_dice = parse_dice(args["dice"], ladder, "--dice")
    c_dice = parse_dice(args["vs"], ladder, "--vs")
    check_range("--dice (number of dice)", len(a_dice), 1, MAX_DICE)
    check_range("--vs (number of dice)", len(c_dice), 1, MAX_DICE)
    adv, vs_adv = args.get("advantage") or 0, args.get("vs_advantage") or 0
    check_range("--advantage", adv, 0, MAX_ADVANTAGE)
    check_range("--vs-advantage", vs_adv, 0, MAX_ADVANTAGE)
    return wicked_age_odds(
        a_dice,
        c_dice,
        adv,
        vs_adv,
        last_round=bool(args.get("last_round")),
        adv_sides=rule(config, "advantage.die_sides", 6),
        multiple=rule(config, "contest.absolute_multiple", 2),
    )


ODDS = OddsProvider(
    summary="The answerer's result against a standing roll: absolute_loss, loses/wins_advantage, absolute_win.",
    params=(
        OddsParam("dice", "The answerer's dice, e.g. d12,d10.", kind=str, required=True),
        OddsParam("vs", "The standing roll's dice, e.g. d10,d8.", kind=str, required=True),
        OddsParam("advantage", "The answerer's advantage d6s.", default=0),
        OddsParam("vs_advantage", "The standing side's advantage d6s.", default=0),
        OddsParam("last_round", "Round 3: advantage results are absolute.", kind=bool),
    ),
    odds=odds_query,
    examples=({"dice": "d12,d8", "vs": "d10,d6", "advantage": 1},),
)

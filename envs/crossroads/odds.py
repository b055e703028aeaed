"""The crossroads core mechanic for ``rulebreaker odds crossroads``: 3d10 roll-under, doubles and triples.

The exact tables are the engine's (:func:`envs.crossroads.dice.odds`, :func:`envs.crossroads.dice.faction_odds`)
and the sampler the engine's own dice functions, registered as ``RULESET.odds``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from envs.core.dice import Rng
from envs.core.errors import UserError
from envs.core.odds import Odds, OddsParam, OddsProvider, check_range, parse_ints, rule
from envs.crossroads import dice

STATS = ("G", "KH", "M")
"""The three stats a check assigns one die each to."""
MAX_INFLUENCE = 10
"""The largest Influence a faction check can be made at."""


def crossroads_odds(stats: Sequence[int] | None = None, *, influence: int | None = None) -> Odds:
    """Rules 3-5 (or 4 with ``influence``): ``0``..``3`` successes of 3d10 roll-under, doubles and triples.

    ``crossroads_double`` is exactly two dice equal, ``crossroads_triple`` all three equal.
    A stat check assigns one die to each of G, KH, M; the table is for the assignment with the most
    successes. A faction check counts every die at or under the Influence.
    """
    if stats is not None:
        probs = dice.odds(stats)
        query: dict[str, Any] = {"stats": dict(zip(STATS, stats, strict=True))}
        title = "3d10 stat check G={} KH={} M={} (best assignment)".format(*stats)
    else:
        probs = dice.faction_odds(influence or 0)
        query = {"influence": influence}
        title = f"3d10 faction check at Influence {influence}"

    def sampler(rng: Rng) -> Iterable[str]:
        faces = dice.roll_check_dice(rng)
        k = dice.max_successes(faces, stats) if stats is not None else dice.faction_successes(faces, influence or 0)
        labels = [str(k)]
        cr = dice.crossroads_of(faces)
        if cr is dice.Crossroads.DOUBLE:
            labels.append("crossroads_double")
        elif cr is dice.Crossroads.TRIPLE:
            labels.append("crossroads_triple")
        return labels

    return Odds(dict(probs), ["0", "1", "2", "3"], title, query, sampler)


def odds_query(config: Any, args: Mapping[str, Any]) -> Odds:
    """``odds crossroads --stats G,KH,M`` or ``--influence I`` under the rules ``config``."""
    stats: str | None = args.get("stats")
    influence: int | None = args.get("influence")
    if (stats is None) == (influence is None):
        raise UserError("give exactly one of --stats G,KH,M (a stat check) or --influence I (a faction check)")
    if stats is not None:
        parsed = parse_ints(stats, len(STATS), "--stats", "4,4,4")
        for name, v in zip(STATS, parsed, strict=True):
            check_range(f"--stats {name}", v, 1, rule(config, "character.stat_cap", 10))
        return crossroads_odds(parsed)
    assert influence is not None
    check_range("--influence", influence, 1, MAX_INFLUENCE)
    return crossroads_odds(None, influence=influence)


ODDS = OddsProvider(
    summary="0..3 successes of 3d10 roll-under (best assignment), crossroads doubles and triples.",
    params=(
        OddsParam("stats", "G,KH,M for a stat check, e.g. 4,4,4.", kind=str),
        OddsParam("influence", "A faction check at this Influence."),
    ),
    odds=odds_query,
    examples=({"stats": "3,5,7"}, {"influence": 4}),
)

"""The Pool fast paths (total summed at construction, cached description) against the plain computation."""

from __future__ import annotations

import random
from dataclasses import fields

from envs.blackbird.rules import Pool


def _plain_describe(p: Pool) -> str:
    names = ("base", "trait", "tag", "flag", "perk", "pool", "help", "maneuver")
    vals = (p.base, p.trait, p.tags, p.flag, p.perks, p.pool, p.help, p.maneuver)
    return " + ".join(f"{v} {k}" for k, v in zip(names, vals, strict=True) if v) or "0"


def test_total_and_description_match_plain() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        vals = [rng.choice((0, 0, 1, 2, 3)) for _ in range(8)]
        p = Pool(*vals)
        assert p.total == sum(vals)
        assert p.description == _plain_describe(p) == p.describe()
        assert p.description == _plain_describe(p)  # the cached reading
        q = Pool(*vals)
        assert p == q and hash(p) == hash(q)
        assert p != Pool(*[v + 1 for v in vals])


def test_total_is_not_a_compared_field() -> None:
    assert [f.name for f in fields(Pool) if f.compare] == [
        "base",
        "trait",
        "tags",
        "flag",
        "perks",
        "pool",
        "help",
        "maneuver",
    ]
    assert Pool().total == 0 and Pool().description == "0"
    assert not hasattr(Pool(), "__dict__")

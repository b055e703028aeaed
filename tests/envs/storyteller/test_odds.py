"""Exact roll tables against independent oracles: the seed's numbers, face enumeration, multinomial
enumeration over face classes, icepool; and the engine's sampled rolls against the exact table."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import factorial

import icepool
import pytest

from envs.core.dice import Rng
from envs.storyteller.dice import BOTCH, labelled_distribution, outcome_distribution, roll_outcome, sample_outcome


def brute_faces(pool: int, d: int, wp: int = 0) -> dict[int, Fraction]:
    """Every one of the 10**pool face tuples, read by hand."""
    out: dict[int, Fraction] = {}
    for faces in itertools.product(range(1, 11), repeat=pool):
        s = sum(1 for f in faces if f >= d)
        o = faces.count(1)
        k = -1 if s == 0 and o > 0 and wp == 0 else max(0, s - o) + wp
        out[k] = out.get(k, Fraction(0)) + Fraction(1, 10**pool)
    return out


def brute_classes(pool: int, d: int, wp: int = 0) -> dict[int, Fraction]:
    """Counts of (successes, ones, blanks) with multinomial coefficients over the three face classes."""
    ps, po, pb = Fraction(11 - d, 10), Fraction(1, 10), Fraction(d - 2, 10)
    out: dict[int, Fraction] = {}
    for s in range(pool + 1):
        for o in range(pool - s + 1):
            b = pool - s - o
            if pb == 0 and b:
                continue
            w = Fraction(factorial(pool), factorial(s) * factorial(o) * factorial(b)) * ps**s * po**o * pb**b
            k = -1 if (s == 0 and o > 0 and wp == 0) else max(0, s - o) + wp
            out[k] = out.get(k, Fraction(0)) + w
    return {k: v for k, v in out.items() if v}


def test_seed_numbers_5d10_difficulty_6():
    t = outcome_distribution(5, 6)
    pct = {k: float(v) * 100 for k, v in t.items()}
    assert pct[BOTCH] == pytest.approx(2.101, abs=1e-9)
    assert pct[0] == pytest.approx(13.499, abs=1e-9)
    for k, want in zip(range(1, 6), (19.65, 26.0, 23.125, 12.5, 3.125), strict=True):
        assert pct[k] == pytest.approx(want, abs=1e-9)
    assert sum(t.values()) == 1


def test_labelled_table_for_the_odds_command():
    t = labelled_distribution(5, 6)
    assert list(t) == ["botch", "0", "1", "2", "3", "4", "5"]
    assert t["botch"] == Fraction(2101, 100000)


@pytest.mark.parametrize("pool", [1, 2, 3, 4])
@pytest.mark.parametrize("d", range(2, 11))
def test_small_pools_match_face_enumeration(pool, d):
    assert outcome_distribution(pool, d) == brute_faces(pool, d)
    assert outcome_distribution(pool, d, True) == brute_faces(pool, d, 1)


def test_pools_1_to_20_difficulties_2_to_10_match_class_enumeration():
    for pool in range(1, 21):
        for d in range(2, 11):
            assert outcome_distribution(pool, d) == brute_classes(pool, d), (pool, d)
            assert outcome_distribution(pool, d, True) == brute_classes(pool, d, 1), (pool, d)


@pytest.mark.parametrize(("pool", "d"), [(1, 2), (5, 6), (8, 8), (12, 10), (20, 7)])
def test_matches_icepool(pool, d):
    die = icepool.d10.map(lambda f: icepool.Vector((int(f >= d), int(f == 1))))
    res = (pool @ die).map(lambda v: -1 if v[0] == 0 and v[1] > 0 else max(0, v[0] - v[1]))
    want = {k: Fraction(res.probability(k)) for k in res.outcomes() if res.probability(k)}
    assert outcome_distribution(pool, d) == want


def test_willpower_makes_a_botch_impossible_for_every_pool():
    for pool in range(1, 21):
        for d in range(2, 11):
            assert BOTCH not in outcome_distribution(pool, d, True)
            assert min(outcome_distribution(pool, d, True)) == 1


def test_specialty_table_matches_face_enumeration():
    """Rule 15: each 10 rerolled once; a rerolled success adds one success."""
    for pool, d in ((1, 6), (2, 8), (3, 7)):
        want: dict[int, Fraction] = {}
        for faces in itertools.product(range(1, 11), repeat=pool):
            tens = faces.count(10)
            for rer in itertools.product(range(1, 11), repeat=tens):
                s = sum(1 for f in faces if f >= d) + sum(1 for f in rer if f >= d)
                o = faces.count(1)
                k = -1 if s == 0 and o > 0 else max(0, s - o)
                want[k] = want.get(k, Fraction(0)) + Fraction(1, 10**pool) * Fraction(1, 10**tens)
        assert outcome_distribution(pool, d, specialty=True) == want


def _chi_square(counts: dict[int, int], table: dict[int, Fraction], n: int) -> float:
    return sum((counts.get(k, 0) - n * float(p)) ** 2 / (n * float(p)) for k, p in table.items())


def test_sampled_outcomes_agree_with_exact_table():
    """sample_chance's fast path (one uniform per roll) and real dice both fit the exact 5d10 @ 6 table."""
    table = outcome_distribution(5, 6)
    n = 40_000
    for draw in (sample_outcome, roll_outcome):
        rng = Rng(1234)
        counts: dict[int, int] = {}
        for _ in range(n):
            k = draw(rng, 5, 6)
            counts[k] = counts.get(k, 0) + 1
        assert set(counts) <= set(table)
        # 7 outcomes, 6 degrees of freedom: the 99.99% quantile is 27.9
        assert _chi_square(counts, table, n) < 27.9
        for k, p in table.items():  # and every cell within 4 sigma
            sd = (n * float(p) * (1 - float(p))) ** 0.5
            assert abs(counts.get(k, 0) - n * float(p)) < 4 * sd


def test_matches_the_odds_command_table():
    """results.odds.storyteller_odds is a separate implementation (the `rulebreaker odds` command)."""
    from results.odds import storyteller_odds

    for pool, d, wp in ((5, 6, False), (9, 8, True), (14, 4, False)):
        table = storyteller_odds(pool, d, wp)
        mine = {("botch" if k == BOTCH else str(k)): v for k, v in outcome_distribution(pool, d, wp).items()}
        theirs = {k: Fraction(v) for k, v in table.probabilities.items() if v}
        assert mine == theirs

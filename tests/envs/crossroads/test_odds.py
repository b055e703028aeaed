"""Exact odds (Rules 3 and 5) against enumeration of all 1,000 ordered rolls and all six assignments."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import icepool
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.crossroads.dice import PERMUTATIONS, max_successes, odds, optimal_permutations, parse_stats

from .helpers import brute_best

ROLLS = list(product(range(1, 11), repeat=3))


def enumerate_odds(stats: tuple[int, int, int]) -> dict[str, Fraction]:
    """The oracle: every ordered roll, every assignment, the best one counted; crossroads by equal faces."""
    out = {k: Fraction(0) for k in ("0", "1", "2", "3", "crossroads_double", "crossroads_triple")}
    for r in ROLLS:
        best, _ = brute_best(r, stats)
        out[str(best)] += Fraction(1, 1000)
        distinct = len(set(r))
        if distinct == 2:
            out["crossroads_double"] += Fraction(1, 1000)
        elif distinct == 1:
            out["crossroads_triple"] += Fraction(1, 1000)
    return out


@pytest.mark.parametrize("stats", [(4, 4, 4), (9, 2, 1), (1, 1, 10), (6, 3, 3), (10, 10, 10), (0, 5, 7)])
def test_odds_agree_with_enumeration_of_1000_rolls(stats):
    assert odds(stats) == enumerate_odds(stats)


@settings(max_examples=15, deadline=None)
@given(st.tuples(st.integers(0, 10), st.integers(0, 10), st.integers(0, 10)))
def test_odds_agree_with_enumeration_for_any_stats(stats):
    assert odds(stats) == enumerate_odds(stats)


def test_odds_sum_to_one_and_known_values():
    o = odds((4, 4, 4))
    assert sum(o[k] for k in "0123") == 1
    # 3 successes with 4/4/4: every die <= 4 -> (4/10)^3
    assert o["3"] == Fraction(64, 1000)
    # 0 successes: every die >= 5 -> (6/10)^3
    assert o["0"] == Fraction(216, 1000)


def test_crossroads_odds_agree_with_icepool():
    distinct = icepool.map(lambda a, b, c: len({a, b, c}), icepool.d10, icepool.d10, icepool.d10)
    o = odds((5, 5, 5))
    assert o["crossroads_double"] == Fraction(distinct.probability(2))
    assert o["crossroads_triple"] == Fraction(distinct.probability(1))
    assert o["crossroads_double"] == Fraction(27, 100) and o["crossroads_triple"] == Fraction(1, 100)


@pytest.mark.parametrize("stats", [(7, 2, 3), (5, 5, 1), (9, 1, 2)])
def test_greedy_optimum_matches_brute_force_on_every_roll(stats):
    for r in ROLLS:
        best, perms = brute_best(r, stats)
        assert max_successes(r, stats) == best
        assert sorted(PERMUTATIONS[k] for k in optimal_permutations(r, stats)) == sorted(perms)


def test_parse_stats():
    assert parse_stats("4, 5,3") == (4, 5, 3)
    with pytest.raises(ValueError, match="three integers"):
        parse_stats("4,4")


def _class_of(face: int, thresholds: tuple[int, ...]) -> int:
    """The test's own reading of a die: how many of the targets it exceeds (a die <= a target succeeds on it)."""
    return sum(1 for t in thresholds if t < face)


@pytest.mark.parametrize(
    "thresholds", [(5, 5, 5), (1, 2, 10), (3, 7, 7), (9, 2, 1), (4,), (), (0, 5, 10), (10, 10, 10)]
)
@pytest.mark.parametrize("ordered", [False, True])
def test_class_outcomes_agree_with_icepool(thresholds, ordered):
    """check.chance_detail = "classes": the grouped outcomes carry the exact odds icepool gives for the dice's
    classes (sorted: a pool of three; ordered: three dice in a row), and each representative die meets exactly
    the targets of every face it stands for."""
    from envs.crossroads.dice import class_outcomes, face_classes

    rep = face_classes(thresholds)
    for face in range(1, 11):
        assert all((face <= t) == (rep[face] <= t) for t in thresholds), (face, rep[face])
    die = icepool.d10.map(lambda f: _class_of(f, thresholds))
    oracle = icepool.tupleize(die, die, die) if ordered else icepool.Pool([die] * 3).expand()
    got: dict[tuple[int, ...], float] = {}
    for dice, p in class_outcomes(thresholds, ordered):
        assert ordered or list(dice) == sorted(dice)
        k = tuple(_class_of(d, thresholds) for d in dice)
        assert k not in got  # one outcome per class combination
        got[k] = p
    assert sum(got.values()) == pytest.approx(1.0, abs=1e-12)
    assert set(got) == {tuple(o) for o in oracle.outcomes()}
    for o in oracle.outcomes():
        assert got[tuple(o)] == pytest.approx(float(oracle.probability(o)), abs=1e-12)


@pytest.mark.parametrize("stats", [(5, 5, 5), (1, 4, 9), (2, 2, 7)])
def test_class_outcomes_keep_the_odds_of_successes(stats):
    """Under grouped chance the best assignment's successes have the odds of the 1,000-roll enumeration."""
    from envs.crossroads.dice import class_outcomes

    table = {k: Fraction(0) for k in ("0", "1", "2", "3")}
    for dice, p in class_outcomes(stats, False):
        table[str(max_successes(dice, stats))] += Fraction(p).limit_denominator(1000)
    oracle = enumerate_odds(stats)
    assert table == {k: oracle[k] for k in table}

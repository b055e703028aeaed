"""Reading Blackbird rolls: d6 pools summarised as (successes, sixes) — pure functions.

A roll only matters through how many dice show ``success_on`` or more (Rule 3) and how many of
those are sixes (Rule 10, perks), so a chance node's outcome is that pair. Its exact distribution
is a multinomial over three kinds of face: a failure, a success that is not a six, a six.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from math import comb
from typing import NamedTuple

from envs.core.dice import Rng

SIDES = 6


class Roll(NamedTuple):
    """Rule 3/10: what a rolled pool shows — its successes and how many of them are sixes."""

    successes: int
    sixes: int


def read_faces(faces: tuple[int, ...] | list[int], success_on: int) -> Roll:
    """Rule 3: count the faces showing ``success_on`` or more, and the sixes among them."""
    return Roll(sum(1 for f in faces if f >= success_on), sum(1 for f in faces if f == SIDES))


@lru_cache(maxsize=4096)
def roll_distribution(n: int, success_on: int) -> tuple[tuple[Roll, float], ...]:
    """Exact distribution of :class:`Roll` for ``n`` d6 (multinomial over fail / plain success / six)."""
    p_fail = (success_on - 1) / SIDES
    p_plain = (SIDES - success_on) / SIDES
    p_six = 1 / SIDES
    out: list[tuple[Roll, float]] = []
    for six in range(n + 1):
        for plain in range(n - six + 1):
            fail = n - six - plain
            if (plain and p_plain == 0.0) or (fail and p_fail == 0.0):
                continue
            p = comb(n, six) * comb(n - six, plain) * p_six**six * p_plain**plain * p_fail**fail
            out.append((Roll(plain + six, six), p))
    return tuple(out)


@lru_cache(maxsize=4096)
def success_distribution(n: int, success_on: int) -> tuple[float, ...]:
    """P(exactly s successes) for s = 0..n (a binomial with p = (7 - success_on) / 6)."""
    p = (SIDES + 1 - success_on) / SIDES
    return tuple(comb(n, s) * p**s * (1 - p) ** (n - s) for s in range(n + 1))


@lru_cache(maxsize=65536)
def pass_probability(n: int, success_on: int, needed: int, penalty: int = 0) -> float:
    """P(successes − penalty ≥ needed) for ``n`` dice (Rule 3/4)."""
    if needed + penalty <= 0:
        return 1.0
    dist = success_distribution(max(n, 0), success_on)
    return sum(dist[needed + penalty :])


@lru_cache(maxsize=65536)
def beat_probability(n: int, m: int, success_on: int, pen_a: int = 0, pen_b: int = 0) -> float:
    """P(side A's successes after penalty strictly exceed side B's) — a hit in Rule 13."""
    da = success_distribution(max(n, 0), success_on)
    db = success_distribution(max(m, 0), success_on)
    total = 0.0
    for a, pa in enumerate(da):
        sa = max(0, a - pen_a)
        for b, pb in enumerate(db):
            if sa > max(0, b - pen_b):
                total += pa * pb
    return total


ROLLS_KEPT = 64
"""Rolls of up to this many successes come from :data:`ROLLS` (bigger ones are built when rolled)."""
ROLLS: tuple[tuple[Roll, ...], ...] = tuple(tuple(Roll(s, six) for six in range(s + 1)) for s in range(ROLLS_KEPT + 1))
"""``ROLLS[s][six]`` is ``Roll(s, six)``: one shared (immutable) value per outcome, not a new tuple per roll."""


def _uniform_at_least(k: int) -> float:
    """The least ``u`` in [0, 1] with ``u * 6 >= k`` in floating point (1.0 if no draw reaches it).

    A rounded product ``u * 6`` never decreases as ``u`` grows, so ``u * 6 >= k`` holds exactly for the draws
    ``u >= _uniform_at_least(k)``: a die's face can be read off the draw itself, without the multiplication.
    """
    if k <= 0:
        return 0.0
    u = min(1.0, k / SIDES)
    while u > 0.0 and u * SIDES >= k:
        u = math.nextafter(u, 0.0)
    while u < 1.0 and u * SIDES < k:
        u = math.nextafter(u, 1.0)
    return u


AT_LEAST: tuple[float, ...] = tuple(_uniform_at_least(face - 1) for face in range(SIDES + 2))
"""``AT_LEAST[f]``: the draws ``u >= AT_LEAST[f]`` are those whose die ``int(u * 6) + 1`` shows ``f`` or more."""


def sample_roll(rng: Rng, n: int, success_on: int) -> Roll:
    """Roll ``n`` d6 and read them (Rule 3).

    A die shows ``int(u * 6) + 1`` for a uniform draw ``u``; it reaches ``success_on`` exactly when
    ``u * 6 >= success_on - 1`` and shows a six when ``u * 6 >= 5`` (``int(x) >= k`` iff ``x >= k`` for a whole
    ``k``), that is when ``u`` reaches :data:`AT_LEAST` of the face: the same draws read the same way, one float
    comparison or two per die (no face made, no multiplication).
    """
    rnd = rng.random  # the bound uniform source (what ``rng.uniform`` hands out), without the property call
    hit, top = AT_LEAST[success_on], AT_LEAST[SIDES]
    s = six = 0
    for _ in range(n):
        u = rnd()
        if u >= hit:
            s += 1
            if u >= top:
                six += 1
    return ROLLS[s][six] if s <= ROLLS_KEPT else Roll(s, six)


class RollOff(NamedTuple):
    """Rule 11: one round of a d6 roll-off; ``winner`` is 0 (first side), 1 (second) or None (tie)."""

    winner: int | None


ROLL_OFF_ROUND: tuple[tuple[RollOff, float], ...] = (
    (RollOff(0), 15 / 36),
    (RollOff(1), 15 / 36),
    (RollOff(None), 6 / 36),
)
"""One round of d6 vs d6."""
ROLL_OFF_OUTCOMES: tuple[tuple[RollOff, float], ...] = ((RollOff(0), 0.5), (RollOff(1), 0.5))
"""The whole roll-off, repeated until one die is higher: either side with probability 1/2."""


def read_roll_off(first: int, second: int) -> RollOff:
    """Rule 11: the higher d6 wins the roll-off; equal faces roll again."""
    if first > second:
        return RollOff(0)
    if second > first:
        return RollOff(1)
    return RollOff(None)


def sample_roll_off(rng: Rng) -> RollOff:
    """Rule 11: roll d6 vs d6 until one is higher; the final round's winner."""
    while True:
        ro = read_roll_off(rng.d(SIDES), rng.d(SIDES))
        if ro.winner is not None:
            return ro


@lru_cache(maxsize=4096)
def exact_success_distribution(n: int, success_on: int) -> tuple[Fraction, ...]:
    """Rule 3, exactly: P(exactly s successes) for s = 0..n as fractions (the odds command's table)."""
    good = SIDES + 1 - success_on
    bad = SIDES - good
    total = SIDES**n
    return tuple(Fraction(comb(n, s) * good**s * bad ** (n - s), total) for s in range(n + 1))

"""Hallownest dice: d6 pools, successes on 5+, rerolls of failed dice, initiative sums.

Pure functions (docs/rules/hallownest.md, Rules 1-2 and 9). The exact distributions are
cached; the engine's chance nodes enumerate them and sample faces with the :class:`Rng`.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import lru_cache
from math import comb, factorial

from envs.core.dice import Rng

SIDES = 6


def is_success(face: int, success_on: int = 5) -> bool:
    """Rule 1: a die showing ``success_on`` or more is a success."""
    return face >= success_on


def count_successes(faces: tuple[int, ...] | list[int], success_on: int = 5) -> int:
    """Rule 1: the number of successes among rolled faces."""
    return sum(1 for f in faces if f >= success_on)


def reroll_failed(
    faces: tuple[int, ...], rerolls: int, new_faces: tuple[int, ...], success_on: int = 5
) -> tuple[int, ...]:
    """Rule 2: reroll up to ``rerolls`` failed dice and keep the better result of each.

    ``new_faces`` are the faces of the rerolled dice, used in order for the failed dice from left to
    right (a failed die is always worth rerolling, so all of the first ``rerolls`` failures are).
    """
    out = list(faces)
    it = iter(new_faces)
    used = 0
    for i, f in enumerate(out):
        if used >= rerolls:
            break
        if f < success_on:
            out[i] = max(f, next(it))
            used += 1
    return tuple(out)


def _p_success(success_on: int) -> Fraction:
    good = max(0, min(SIDES, SIDES - success_on + 1))
    return Fraction(good, SIDES)


@lru_cache(maxsize=4096)
def _success_distribution(dice: int, rerolls: int, success_on: int) -> tuple[tuple[int, Fraction], ...]:
    p = _p_success(success_on)
    q = 1 - p
    out: dict[int, Fraction] = {}
    n = max(0, dice)
    for s1 in range(n + 1):
        p1 = comb(n, s1) * p**s1 * q ** (n - s1)
        r = min(max(0, rerolls), n - s1)
        for s2 in range(r + 1):
            p2 = comb(r, s2) * p**s2 * q ** (r - s2)
            out[s1 + s2] = out.get(s1 + s2, Fraction(0)) + p1 * p2
    return tuple(sorted((k, v) for k, v in out.items() if v))


def success_distribution(dice: int, rerolls: int = 0, success_on: int = 5) -> dict[int, Fraction]:
    """Rules 1-2: the exact distribution of the success count of ``dice`` d6 with ``rerolls``.

    A success is a face of ``success_on`` or more; after the roll up to ``rerolls`` failed dice are
    rerolled and the better face kept. ``dice <= 0`` rolls nothing (0 successes for sure).
    """
    return dict(_success_distribution(int(dice), int(rerolls), int(success_on)))


@lru_cache(maxsize=4096)
def success_outcomes(dice: int, rerolls: int, success_on: int) -> tuple[tuple[int, float], ...]:
    """The distribution as ``(successes, probability)`` floats for chance nodes."""
    return tuple((k, float(v)) for k, v in _success_distribution(dice, rerolls, success_on))


@lru_cache(maxsize=64)
def success_threshold(success_on: int) -> float:
    """The least draw ``u`` in [0, 1) whose face ``int(u * SIDES) + 1`` is a success (Rule 1); ``inf`` if none.

    The face of a draw is a success exactly when ``u * SIDES`` (as float arithmetic rounds it) reaches
    ``success_on - 1``, and that product never falls as ``u`` grows, so the draws that succeed are exactly
    those at or above this threshold: :func:`sample_successes` compares each draw with it instead of
    working out the face, and still counts the same successes from the same draws.
    """
    need = success_on - 1
    if need <= 0:
        return 0.0
    below_one = math.nextafter(1.0, 0.0)
    if below_one * SIDES < need:  # even the largest draw fails
        return math.inf
    t = min(need / SIDES, below_one)
    while t * SIDES < need:
        t = math.nextafter(t, 1.0)
    while t > 0.0 and math.nextafter(t, 0.0) * SIDES >= need:
        t = math.nextafter(t, 0.0)
    return t


_THRESHOLDS: dict[int, float] = {}
""":func:`success_threshold` of each ``success_on`` met (a handful of values)."""


def sample_successes(rng: Rng, dice: int, rerolls: int, success_on: int) -> int:
    """Rules 1-2: roll ``dice`` d6, reroll up to ``rerolls`` failures, count successes.

    One draw per die and then one per rerolled failure, in that order; a draw succeeds when it reaches
    :func:`success_threshold` (the same as its face reaching ``success_on``).
    """
    rnd = rng.random  # the bound draw itself (a slot, not the ``uniform`` property's call): one call fewer per die
    t = _THRESHOLDS.get(success_on)  # a dict read: cheaper than the lru_cache's call on every roll
    if t is None:
        t = _THRESHOLDS[success_on] = success_threshold(success_on)
    succ = 0
    for _ in range(dice):
        if rnd() >= t:
            succ += 1
    r = dice - succ
    if rerolls < r:
        r = rerolls
    for _ in range(r):
        if rnd() >= t:
            succ += 1
    return succ


def initiative_total(faces: tuple[int, ...], rerolls: int, new_faces: tuple[int, ...]) -> int:
    """Rule 9: the sum of the faces; each reroll rerolls the lowest not-yet-rerolled die, keep the better."""
    order = sorted(range(len(faces)), key=lambda i: faces[i])
    out = list(faces)
    for j, i in enumerate(order[: max(0, rerolls)]):
        out[i] = max(out[i], new_faces[j])
    return sum(out)


@lru_cache(maxsize=256)
def _initiative_distribution(dice: int, rerolls: int) -> tuple[tuple[int, Fraction], ...]:
    n = max(0, dice)
    if n == 0:
        return ((0, Fraction(1)),)

    # max(d, U) for a rerolled die showing d: P(value = v) for v >= d
    def better(d: int) -> dict[int, Fraction]:
        dist = {d: Fraction(d, SIDES)}
        for v in range(d + 1, SIDES + 1):
            dist[v] = Fraction(1, SIDES)
        return dist

    out: dict[int, Fraction] = {}
    total_ways = SIDES**n
    for combo in itertools.combinations_with_replacement(range(1, SIDES + 1), n):  # sorted ascending
        ways = factorial(n)
        for face in set(combo):
            ways //= factorial(combo.count(face))
        weight = Fraction(ways, total_ways)
        k = min(rerolls, n)
        base = sum(combo[k:])
        dist: dict[int, Fraction] = {base: Fraction(1)}
        for d in combo[:k]:
            nxt: dict[int, Fraction] = {}
            for s, ps in dist.items():
                for v, pv in better(d).items():
                    nxt[s + v] = nxt.get(s + v, Fraction(0)) + ps * pv
            dist = nxt
        for s, ps in dist.items():
            out[s] = out.get(s, Fraction(0)) + weight * ps
    return tuple(sorted(out.items()))


def initiative_distribution(dice: int, rerolls: int = 0) -> dict[int, Fraction]:
    """Rule 9: the exact distribution of an initiative total (sum of the faces, rerolls on the lowest)."""
    return dict(_initiative_distribution(int(dice), int(rerolls)))


@lru_cache(maxsize=256)
def initiative_outcomes(dice: int, rerolls: int) -> tuple[tuple[int, float], ...]:
    """Rule 9: the initiative distribution as ``(total, probability)`` floats for chance nodes."""
    return tuple((k, float(v)) for k, v in _initiative_distribution(dice, rerolls))


def sample_initiative(rng: Rng, dice: int, rerolls: int) -> int:
    """Rule 9: roll ``dice`` d6 and sum them, rerolling the lowest ``rerolls`` dice (keep better).

    The draws are those of :func:`initiative_total` fed by ``rng.roll``: the ``dice`` faces, then one face per
    reroll. The total only depends on the face values, so the rerolls pair with the faces in increasing order
    (as the lowest-first reroll order does, whichever of equal faces it takes first).
    """
    rnd = rng.random
    faces = [int(rnd() * SIDES) + 1 for _ in range(max(0, dice))]
    k = min(max(0, rerolls), len(faces))
    if not k:
        return sum(faces)
    faces.sort()
    total = sum(faces[k:])
    for face in faces[:k]:
        new = int(rnd() * SIDES) + 1
        total += new if new > face else face
    return total

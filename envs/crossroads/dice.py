"""Crossroads dice: 3d10 roll-under with one die assigned to each stat (Rules 3-5), pure functions.

:func:`odds` is the exact distribution a ``rulebreaker odds crossroads --stats G,KH,M`` command
prints: the number of successes under the optimal assignment ("0".."3") and the chance of a
crossroads ("crossroads_double", "crossroads_triple"). It walks the 220 sorted multisets of 3d10 with
their multinomial weights and a greedy matching, so it is independent of the brute-force enumeration
over 1,000 ordered rolls x 6 assignments that the tests use as its oracle.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Sequence
from fractions import Fraction
from functools import lru_cache
from itertools import combinations_with_replacement
from math import factorial

from envs.core.dice import Rng

DICE = 3
SIDES = 10
STATS = ("G", "KH", "M")

PERMUTATIONS: tuple[tuple[int, int, int], ...] = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
"""Assignment ``p``: stat ``i`` (G, KH, M) gets die ``dice[p[i]]``."""


class Crossroads(enum.IntEnum):
    """Rule 5: what a 3d10 roll shows besides its faces."""

    NONE = 0
    DOUBLE = 1
    TRIPLE = 2


_NONE, _DOUBLE, _TRIPLE = Crossroads.NONE, Crossroads.DOUBLE, Crossroads.TRIPLE  # (enum reads are slow in 3.11)


def crossroads_of(dice: Sequence[int]) -> Crossroads:
    """Rule 5: two equal dice are a double, three a triple."""
    a, b, c = dice
    if a == b == c:
        return _TRIPLE
    if a in (b, c) or b == c:
        return _DOUBLE
    return _NONE


def success_flags(dice: Sequence[int], perm: Sequence[int], stats: Sequence[int]) -> tuple[bool, bool, bool]:
    """Rule 3: per-stat success flags of an assignment: the die given to a stat succeeds if <= the stat."""
    return (dice[perm[0]] <= stats[0], dice[perm[1]] <= stats[1], dice[perm[2]] <= stats[2])


def successes(dice: Sequence[int], perm: Sequence[int], stats: Sequence[int]) -> int:
    """Rule 3: the number of successes of an assignment."""
    return sum(success_flags(dice, perm, stats))


def max_successes(dice: Sequence[int], stats: Sequence[int]) -> int:
    """Rule 3: the most successes any assignment of ``dice`` to ``stats`` can give (greedy matching).

    Stats in ascending order each take the smallest unused die if it fits; that matching is maximal
    for roll-under pairs (a smaller die fits every stat a larger one fits).
    """
    ds = sorted(dice)
    i = 0
    for s in sorted(stats):
        if i < len(ds) and ds[i] <= s:
            i += 1
    return i


def optimal_permutations(dice: Sequence[int], stats: Sequence[int]) -> list[int]:
    """Indices into :data:`PERMUTATIONS` that reach :func:`max_successes`."""
    best = max_successes(dice, stats)
    return [k for k, p in enumerate(PERMUTATIONS) if successes(dice, p, stats) == best]


def faction_successes(dice: Sequence[int], target: int) -> int:
    """Rule 4: each die at or below the faction's target (its Influence) is a success."""
    return len([d for d in dice if d <= target])  # a list comprehension: no generator frames


def multisets() -> list[tuple[tuple[int, ...], Fraction]]:
    """The 220 sorted 3d10 outcomes with their exact probabilities (multinomial weight / 1000)."""
    out = []
    total = SIDES**DICE
    for combo in combinations_with_replacement(range(1, SIDES + 1), DICE):
        weight = factorial(DICE)
        for v in set(combo):
            weight //= factorial(combo.count(v))
        out.append((combo, Fraction(weight, total)))
    return out


_MULTISETS = multisets()
CHANCE_OUTCOMES: list[tuple[Hashable, float]] = [(m, float(p)) for m, p in _MULTISETS]
"""Rules 3-5 chance node: sorted dice and probability (floats, for solvers)."""


def odds(stats: Sequence[int]) -> dict[str, Fraction]:
    """Exact odds of one stat check (Rules 3 and 5) for stats ``(G, KH, M)`` under optimal assignment.

    Keys "0".."3": probability of exactly k successes; "crossroads_double" / "crossroads_triple":
    probability of a double (exactly two equal dice) / a triple.
    """
    if len(stats) != DICE:
        raise ValueError(f"need three stats (G, KH, M), got {len(stats)}")
    return _check_table(lambda dice: max_successes(dice, stats))


def _check_table(successes: Callable[[tuple[int, ...]], int]) -> dict[str, Fraction]:
    """Exact odds of one check, given how its three dice count successes: the keys of :func:`odds`."""
    table: dict[str, Fraction] = {str(k): Fraction(0) for k in range(DICE + 1)}
    table["crossroads_double"] = Fraction(0)
    table["crossroads_triple"] = Fraction(0)
    for dice, p in _MULTISETS:
        table[str(successes(dice))] += p
        cr = crossroads_of(dice)
        if cr is Crossroads.DOUBLE:
            table["crossroads_double"] += p
        elif cr is Crossroads.TRIPLE:
            table["crossroads_triple"] += p
    return table


def parse_stats(text: str) -> tuple[int, int, int]:
    """Parse ``"4,4,4"`` (G,KH,M) for the odds command; a clear ValueError otherwise."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != DICE or not all(p.lstrip("-").isdigit() for p in parts):
        raise ValueError(f"--stats needs three integers G,KH,M (e.g. 4,4,4), got '{text}'")
    g, kh, m = (int(p) for p in parts)
    return g, kh, m


def faction_odds(influence: int) -> dict[str, Fraction]:
    """Exact odds of one faction check (Rules 4 and 5) at ``influence``: the keys of :func:`odds`."""
    return _check_table(lambda dice: faction_successes(dice, influence))


@lru_cache(maxsize=4096)
def face_classes(thresholds: tuple[int, ...]) -> tuple[int, ...]:
    """Rules 3/4 read a die only against the targets it meets (a die <= a stat or Influence succeeds).

    Faces that meet exactly the same ``thresholds`` are one class; each face maps to its class's
    representative, the class's highest face. Returns ``rep`` with ``rep[face]`` for faces 1..10
    (``rep[0]`` unused). With no thresholds every face is one class (represented by 10).
    """
    cuts = sorted({t for t in thresholds if 1 <= t < SIDES} | {SIDES})
    rep = [0] * (SIDES + 1)
    lo = 1
    for t in cuts:
        for face in range(lo, t + 1):
            rep[face] = t
        lo = t + 1
    return tuple(rep)


@lru_cache(maxsize=4096)
def class_outcomes(thresholds: tuple[int, ...], ordered: bool) -> tuple[tuple[tuple[int, ...], float], ...]:
    """The chance outcomes of a 3d10 check grouped by :func:`face_classes`: (dice, probability).

    ``ordered`` false: sorted dice (the roller assigns them, or only counts them); true: dice in rolled
    order (``check.assignment = "in_order"``). Every die is its class's representative, so a rule that
    compares dice with these thresholds reads the same result as from any roll of the class; the
    probability is the class's share of the 1,000 ordered rolls.
    """
    rep = face_classes(thresholds)
    size: dict[int, int] = {}
    for face in range(1, SIDES + 1):
        size[rep[face]] = size.get(rep[face], 0) + 1
    reps = sorted(size)
    total = SIDES**DICE
    out: list[tuple[tuple[int, ...], float]] = []
    if ordered:
        for a in reps:
            for b in reps:
                for c in reps:
                    out.append(((a, b, c), size[a] * size[b] * size[c] / total))
        return tuple(out)
    for combo in combinations_with_replacement(reps, DICE):
        weight = factorial(DICE)
        for v in set(combo):
            weight //= factorial(combo.count(v))
        for v in combo:
            weight *= size[v]
        out.append((combo, weight / total))
    return tuple(out)


def roll_check_dice(rng: Rng) -> tuple[int, ...]:
    """Rules 3-4: roll the three d10 of a check, in rolled order.

    The draws of ``rng.roll(DICE, SIDES)``, one uniform per die in order, without its loop (the search
    agent's playouts roll a check every few steps).
    """
    u = rng.uniform
    return (int(u() * SIDES) + 1, int(u() * SIDES) + 1, int(u() * SIDES) + 1)

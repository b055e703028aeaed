"""Reading a Storyteller d10 roll, and its exact outcome table (docs/rules/storyteller.md, Rules 2-8, 15).

A roll's outcome is summarised by one integer: ``BOTCH`` (-1) or the net successes ``0..N`` (0 is a
failure). That is all any later rule needs, so it is also the outcome of the engine's chance nodes.

:func:`outcome_distribution` is the exact table (``rulebreaker odds storyteller --pool N --difficulty D
[--willpower]`` can call it); it enumerates the counts of the face classes (ones, blanks, successes,
tens) with multinomial coefficients, so it is exact in :class:`~fractions.Fraction`.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from math import comb, factorial

from envs.core.dice import Rng

BOTCH = -1
"""The outcome of a botched roll (no successes and at least one 1)."""
FAILURE = 0
"""The outcome of a failed roll (no net successes, not a botch)."""
SIDES = 10
DEGREES: tuple[str, ...] = ("failure", "marginal", "moderate", "complete", "exceptional", "phenomenal")


class Result(enum.IntEnum):
    """Rule 5: the three kinds of result of a roll."""

    BOTCH = -1
    FAILURE = 0
    SUCCESS = 1


def clamp_difficulty(difficulty: int, lowest: int = 2, highest: int = 10) -> int:
    """Rule 2: a difficulty (possibly an opponent's Attribute + Ability) is clamped to lowest..highest."""
    return lowest if difficulty < lowest else highest if difficulty > highest else difficulty


def is_success(face: int, difficulty: int) -> bool:
    """Rule 3: a die showing the difficulty or more is a success; a 10 always succeeds."""
    return face >= difficulty or face == SIDES


def count_successes_and_ones(faces: Sequence[int], difficulty: int) -> tuple[int, int]:
    """Rules 3-4: raw successes S and ones O of a set of faces."""
    s = sum(1 for f in faces if is_success(f, difficulty))
    o = sum(1 for f in faces if f == 1)
    return s, o


def net_successes(successes: int, ones: int) -> int:
    """Rule 4: each 1 cancels one success; net = max(0, S - O)."""
    return successes - ones if successes > ones else 0


def read_roll(successes: int, ones: int, willpower_successes: int = 0, prevents_botch: bool = True) -> int:
    """Rules 5 and 8: the outcome of a roll.

    ``BOTCH`` iff S = 0 and O >= 1 and no Willpower protects it, else the net successes plus the
    Willpower successes (which ones cannot cancel).
    """
    if successes == 0 and ones > 0 and not (willpower_successes > 0 and prevents_botch):
        return BOTCH
    return net_successes(successes, ones) + willpower_successes


def result_of(outcome: int, required: int = 1) -> Result:
    """Rule 5: botch, failure (fewer net successes than required) or success."""
    if outcome == BOTCH:
        return Result.BOTCH
    return Result.SUCCESS if outcome >= required else Result.FAILURE


def degree_of(net: int) -> str:
    """Rule 6: 1 marginal, 2 moderate, 3 complete, 4 exceptional, 5+ phenomenal (0 or a botch: failure)."""
    return DEGREES[min(max(net, 0), 5)]


def specialty_extra(tens: int, reroll_faces: Sequence[int], difficulty: int) -> int:
    """Rule 15: each 10 of a specialty roll is rerolled once; a reroll that succeeds adds one success.

    A rerolled 1 cancels nothing, a rerolled 10 is not rerolled again.
    """
    return sum(1 for f in reroll_faces[:tens] if is_success(f, difficulty))


def outcome_of_faces(
    faces: Sequence[int],
    difficulty: int,
    willpower_successes: int = 0,
    prevents_botch: bool = True,
    specialty: bool = False,
    reroll_faces: Sequence[int] = (),
) -> int:
    """Rules 3-5, 8, 15 applied to actual faces (golden tests force dice through this)."""
    s, o = count_successes_and_ones(faces, difficulty)
    if specialty:
        s += specialty_extra(sum(1 for f in faces if f == SIDES), reroll_faces, difficulty)
    return read_roll(s, o, willpower_successes, prevents_botch)


def roll_outcome(
    rng: Rng,
    pool: int,
    difficulty: int,
    willpower_successes: int = 0,
    prevents_botch: bool = True,
    specialty: bool = False,
) -> int:
    """Roll ``pool`` d10s (and specialty rerolls) with real dice and read the outcome."""
    faces = rng.roll(pool, SIDES)
    rerolls: tuple[int, ...] = ()
    if specialty:
        rerolls = rng.roll(sum(1 for f in faces if f == SIDES), SIDES)
    return outcome_of_faces(faces, difficulty, willpower_successes, prevents_botch, specialty, rerolls)


@lru_cache(maxsize=4096)
def _distribution(
    pool: int, difficulty: int, willpower_successes: int, prevents_botch: bool, specialty: bool
) -> tuple[tuple[int, Fraction], ...]:
    # Every face class has a probability of (an integer) / 10, so each outcome's probability is an integer
    # count over 10^pool (10^(2 pool) with specialty rerolls): summed in integers and made a Fraction once per
    # outcome, the table holds the same exact values as multiplying Fractions term by term (a cold table of an
    # 8-die pool costs ~50x less, which the heist's first games pay for every new pool and difficulty).
    # _reference_distribution is the Fraction-by-Fraction original (tests compare them).
    if pool <= 0:
        return ((willpower_successes, Fraction(1)),)
    d = difficulty
    w_mid = max(0, SIDES - max(d, 2))  # faces d..9 (a 1 is never a success); a 1 and a 10 weigh 1 each
    w_blank = SIDES - 2 - w_mid
    out: dict[int, int] = {}
    n_fact = factorial(pool)
    if not specialty:
        # without rerolls a 10 is one more success face: the terms of t tens and m middles with t + m = s sum
        # to s! / (t! m!) w_mid^m over m, i.e. (1 + w_mid)^s (every one of them positive, as each term is)
        w_success = 1 + w_mid
        for s in range(pool + 1):
            for o in range(pool - s + 1):
                b = pool - s - o
                if w_blank == 0 and b:
                    continue
                k = read_roll(s, o, willpower_successes, prevents_botch)
                term = n_fact // (factorial(s) * factorial(o) * factorial(b)) * w_success**s * w_blank**b
                out[k] = out.get(k, 0) + term
        return tuple(sorted((k, Fraction(v, SIDES**pool)) for k, v in out.items()))
    w_reroll = SIDES + 1 - d if d <= SIDES else 1
    for t in range(pool + 1):
        up = SIDES ** (pool - t)  # a term with t rerolls is over 10^(pool + t): bring it to 10^(2 pool)
        for m in range(pool - t + 1):
            for o in range(pool - t - m + 1):
                b = pool - t - m - o
                if (w_blank == 0 and b) or (w_mid == 0 and m):
                    continue
                p = n_fact // (factorial(t) * factorial(m) * factorial(o) * factorial(b)) * w_mid**m * w_blank**b
                if t:
                    for r in range(t + 1):
                        pr = comb(t, r) * w_reroll**r * (SIDES - w_reroll) ** (t - r)
                        k = read_roll(t + m + r, o, willpower_successes, prevents_botch)
                        out[k] = out.get(k, 0) + p * pr * up
                else:
                    k = read_roll(m, o, willpower_successes, prevents_botch)
                    out[k] = out.get(k, 0) + p * up
    return tuple(sorted((k, Fraction(v, SIDES ** (2 * pool))) for k, v in out.items()))


def _reference_distribution(
    pool: int, difficulty: int, willpower_successes: int, prevents_botch: bool, specialty: bool
) -> tuple[tuple[int, Fraction], ...]:
    """:func:`_distribution` multiplied out Fraction by Fraction (the plain computation the tests compare with)."""
    if pool <= 0:
        return ((willpower_successes, Fraction(1)),)
    d = difficulty
    p_one = Fraction(1, SIDES)
    p_ten = Fraction(1, SIDES)
    p_mid = Fraction(max(0, SIDES - max(d, 2)), SIDES)  # faces d..9 (a 1 is never a success)
    p_blank = 1 - p_one - p_ten - p_mid
    p_reroll = Fraction(SIDES + 1 - d, SIDES) if d <= SIDES else Fraction(1, SIDES)
    out: dict[int, Fraction] = {}
    n_fact = factorial(pool)
    for t in range(pool + 1):
        for m in range(pool - t + 1):
            for o in range(pool - t - m + 1):
                b = pool - t - m - o
                if (p_blank == 0 and b) or (p_mid == 0 and m):
                    continue
                coef = n_fact // (factorial(t) * factorial(m) * factorial(o) * factorial(b))
                p = coef * p_ten**t * p_mid**m * p_one**o * p_blank**b
                if specialty and t:
                    for r in range(t + 1):
                        pr = comb(t, r) * p_reroll**r * (1 - p_reroll) ** (t - r)
                        k = read_roll(t + m + r, o, willpower_successes, prevents_botch)
                        out[k] = out.get(k, Fraction(0)) + p * pr
                else:
                    k = read_roll(t + m, o, willpower_successes, prevents_botch)
                    out[k] = out.get(k, Fraction(0)) + p
    return tuple(sorted(out.items()))


def outcome_distribution(
    pool: int,
    difficulty: int,
    willpower: bool = False,
    *,
    willpower_successes: int = 1,
    prevents_botch: bool = True,
    specialty: bool = False,
) -> dict[int, Fraction]:
    """Exact table of a roll: ``{BOTCH: p, 0: p, 1: p, ...}`` (outcomes with probability 0 omitted).

    ``difficulty`` is used as given (clamp it with :func:`clamp_difficulty` first, Rule 2). With
    ``willpower`` the roll gets ``willpower_successes`` uncancellable successes (Rule 8).
    """
    wp = willpower_successes if willpower else 0
    return dict(_distribution(pool, difficulty, wp, prevents_botch, specialty))


def labelled_distribution(pool: int, difficulty: int, willpower: bool = False, **kw: object) -> dict[str, Fraction]:
    """The exact table keyed ``"botch"``, ``"0"``, ``"1"``… for display (the odds command)."""
    table = outcome_distribution(pool, difficulty, willpower, **kw)  # type: ignore[arg-type]
    return {("botch" if k == BOTCH else str(k)): v for k, v in table.items()}


@lru_cache(maxsize=4096)
def _sampler(
    pool: int, difficulty: int, willpower_successes: int, prevents_botch: bool, specialty: bool
) -> tuple[tuple[int, ...], tuple[float, ...]]:
    items = _distribution(pool, difficulty, willpower_successes, prevents_botch, specialty)
    acc = 0.0
    cum: list[float] = []
    for _, p in items:
        acc += float(p)
        cum.append(acc)
    cum[-1] = 1.0
    return tuple(k for k, _ in items), tuple(cum)


def sample_outcome(
    rng: Rng,
    pool: int,
    difficulty: int,
    willpower_successes: int = 0,
    prevents_botch: bool = True,
    specialty: bool = False,
) -> int:
    """One roll's outcome drawn from the exact table with a single uniform number (the fast path)."""
    keys, cum = _sampler(pool, difficulty, willpower_successes, prevents_botch, specialty)
    return keys[bisect.bisect_right(cum, rng.random())]


@lru_cache(maxsize=4096)
def expected_net(pool: int, difficulty: int, willpower_successes: int = 0, specialty: bool = False) -> float:
    """Mean successes of a roll, a botch counting as 0 (personas use it)."""
    return float(sum(max(k, 0) * p for k, p in _distribution(pool, difficulty, willpower_successes, True, specialty)))


@lru_cache(maxsize=4096)
def botch_chance(pool: int, difficulty: int, willpower_successes: int = 0, specialty: bool = False) -> float:
    """Probability of a botch."""
    return float(dict(_distribution(pool, difficulty, willpower_successes, True, specialty)).get(BOTCH, 0))

"""Exact odds (Rules 1, 2, 9) against brute-force enumeration written here, and the engine's sampling."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import icepool
import pytest

from envs.core.dice import Rng
from envs.hallownest.dice import (
    count_successes,
    initiative_distribution,
    initiative_total,
    reroll_failed,
    sample_initiative,
    sample_successes,
    success_distribution,
)

FACES = range(1, 7)


def brute_successes(dice: int, rerolls: int, success_on: int) -> dict[int, Fraction]:
    """Enumerate every face of every die, then every face of every rerolled failed die (keep the better)."""
    out: Counter[int] = Counter()
    total = Fraction(0)
    for faces in itertools.product(FACES, repeat=dice):
        failed = [f for f in faces if f < success_on]
        k = min(rerolls, len(failed))
        weight = Fraction(1, 6**dice) / 6**k
        base = sum(1 for f in faces if f >= success_on)
        for new in itertools.product(FACES, repeat=k):
            kept = [max(old, n) for old, n in zip(failed[:k], new, strict=True)]
            out[base + sum(1 for f in kept if f >= success_on)] += weight  # type: ignore[assignment]
            total += weight
    assert total == 1
    return {s: Fraction(p) for s, p in out.items() if p}


@pytest.mark.parametrize("dice", range(0, 6))
@pytest.mark.parametrize("rerolls", range(0, 3))
def test_success_distribution_matches_enumeration(dice: int, rerolls: int) -> None:
    assert success_distribution(dice, rerolls) == brute_successes(dice, rerolls, 5)


@pytest.mark.parametrize("success_on", [4, 6])
def test_success_distribution_other_targets(success_on: int) -> None:
    assert success_distribution(4, 1, success_on) == brute_successes(4, 1, success_on)


@pytest.mark.parametrize("dice", [1, 3, 7, 9])
def test_no_reroll_distribution_matches_icepool(dice: int) -> None:
    """Without rerolls the success count is a sum of d6-at-5+ indicators; icepool computes it independently."""
    total = icepool.d6.map(lambda f: 1 if f >= 5 else 0).pool(dice).sum()
    expected = {int(k): Fraction(total.quantity(k), total.denominator()) for k in total.outcomes()}
    assert success_distribution(dice, 0) == expected


def test_reroll_one_failed_die_example() -> None:
    """Rule 2 example: 3 dice show 6, 2, 1 with one reroll: the 2 is rerolled; a 5 makes 2 successes."""
    faces = (6, 2, 1)
    assert count_successes(faces) == 1
    after = reroll_failed(faces, 1, (5,))
    assert after == (6, 5, 1)
    assert count_successes(after) == 2


def brute_initiative(dice: int, rerolls: int) -> dict[int, Fraction]:
    out: Counter[int] = Counter()
    for faces in itertools.product(FACES, repeat=dice):
        low = sorted(faces)
        k = min(rerolls, dice)
        for new in itertools.product(FACES, repeat=k):
            total = sum(low[k:]) + sum(max(a, b) for a, b in zip(low[:k], new, strict=True))
            out[total] += Fraction(1, 6 ** (dice + k))  # type: ignore[assignment]
    return {s: Fraction(p) for s, p in out.items()}


@pytest.mark.parametrize(("dice", "rerolls"), [(1, 0), (3, 0), (3, 1), (4, 1), (2, 2)])
def test_initiative_distribution_matches_enumeration(dice: int, rerolls: int) -> None:
    assert initiative_distribution(dice, rerolls) == brute_initiative(dice, rerolls)


def test_initiative_reroll_replaces_lowest_if_better() -> None:
    """Rule 9: 5, 1, 3 with a reroll: the 1 is rerolled; a 4 gives 12, a 1 keeps 9."""
    assert initiative_total((5, 1, 3), 1, (4,)) == 12
    assert initiative_total((5, 1, 3), 1, (1,)) == 9


@pytest.mark.parametrize(("dice", "rerolls"), [(5, 1), (7, 2)])
def test_sampled_successes_agree_with_exact(dice: int, rerolls: int) -> None:
    """Chi-square goodness of fit of 20,000 engine rolls against the exact distribution (fixed seed)."""
    rng = Rng(12345)
    n = 20_000
    counts = Counter(sample_successes(rng, dice, rerolls, 5) for _ in range(n))
    exact = success_distribution(dice, rerolls)
    chi2 = 0.0
    cells = 0
    for k, p in exact.items():
        e = n * float(p)
        if e < 5:
            continue
        chi2 += (counts.get(k, 0) - e) ** 2 / e
        cells += 1
    # 99.99% quantile of chi-square with <= 9 degrees of freedom is below 34
    assert chi2 < 34, (chi2, cells)


def test_sampled_initiative_agrees_with_exact() -> None:
    rng = Rng(7)
    n = 20_000
    counts = Counter(sample_initiative(rng, 3, 1) for _ in range(n))
    exact = initiative_distribution(3, 1)
    mean_exact = float(sum(k * p for k, p in exact.items()))
    mean = sum(k * c for k, c in counts.items()) / n
    var = float(sum((k - mean_exact) ** 2 * p for k, p in exact.items()))
    assert abs(mean - mean_exact) < 4 * (var / n) ** 0.5


def test_engine_chance_node_samples_its_own_distribution() -> None:
    """At an attack roll (6 dice, 1 reroll) the state's sampler agrees with its chance_outcomes (4 sigma)."""
    from envs.hallownest.actions import Kind
    from tests.envs.hallownest.helpers import act, duel

    st = duel()
    act(st, Kind.ATTACK, 2)
    outs = st.chance_outcomes()
    assert dict(outs) == pytest.approx({k: float(v) for k, v in success_distribution(6, 1).items()})
    rng = Rng(99)
    n = 20_000
    mean = sum(int(st.sample_chance(rng)) for _ in range(n)) / n  # type: ignore[call-overload]
    mu = sum(k * p for k, p in outs)  # type: ignore[misc]
    var = sum((k - mu) ** 2 * p for k, p in outs)  # type: ignore[operator]
    assert abs(mean - mu) < 4 * (var / n) ** 0.5


def test_impossible_forced_outcomes_are_refused() -> None:
    from envs.hallownest.actions import Kind
    from tests.envs.hallownest.helpers import act, duel

    st = duel()
    act(st, Kind.ATTACK, 1)
    with pytest.raises(ValueError):
        st.apply_chance(6)  # 5 dice cannot show 6 successes

"""Exact success distributions against independent oracles (icepool, brute-force enumeration)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import icepool
import pytest

from envs.blackbird.dice import (
    ROLL_OFF_OUTCOMES,
    ROLL_OFF_ROUND,
    Roll,
    RollOff,
    beat_probability,
    pass_probability,
    read_faces,
    read_roll_off,
    roll_distribution,
    sample_roll,
    sample_roll_off,
    success_distribution,
)
from envs.core.dice import Rng


@pytest.mark.parametrize("success_on", [3, 4, 5, 6])
@pytest.mark.parametrize("n", range(1, 13))
def test_success_counts_match_icepool(n: int, success_on: int) -> None:
    oracle = n @ (icepool.d6 >= success_on)
    denom = oracle.denominator()
    exact = success_distribution(n, success_on)
    for s in range(n + 1):
        assert exact[s] == pytest.approx(oracle.quantity(s) / denom, abs=1e-12)
    # the (successes, sixes) summary marginalises to the same thing
    marg = Counter()
    for roll, p in roll_distribution(n, success_on):
        marg[roll.successes] += p
    for s in range(n + 1):
        assert marg[s] == pytest.approx(oracle.quantity(s) / denom, abs=1e-12)


@pytest.mark.parametrize("success_on", [4, 5])
@pytest.mark.parametrize("n", range(0, 7))
def test_successes_and_sixes_match_brute_force(n: int, success_on: int) -> None:
    """Every face combination of n d6, counted by hand: the multinomial must agree exactly."""
    counts: Counter[tuple[int, int]] = Counter()
    for faces in itertools.product(range(1, 7), repeat=n):
        counts[(sum(f >= success_on for f in faces), sum(f == 6 for f in faces))] += 1
    total = 6**n
    got = dict(roll_distribution(n, success_on))
    assert set(got) == {Roll(*k) for k in counts}
    for k, c in counts.items():
        assert got[Roll(*k)] == pytest.approx(c / total, abs=1e-12)
    assert sum(got.values()) == pytest.approx(1.0)


def test_golden_five_dice_three_successes_is_one_half() -> None:
    """The rules file's exact value: 5d6 counting 4+, P(at least 3 successes) = 1/2."""
    assert pass_probability(5, 4, 3) == pytest.approx(0.5, abs=1e-15)
    assert (5 @ (icepool.d6 >= 4)).probability(">=", 3) == Fraction(1, 2)


def test_beat_probability_by_enumeration() -> None:
    """3 dice vs 2 dice, strictly more successes, by brute force."""
    wins = sum(
        1
        for a in itertools.product(range(1, 7), repeat=3)
        for b in itertools.product(range(1, 7), repeat=2)
        if sum(f >= 4 for f in a) > sum(f >= 4 for f in b)
    )
    assert beat_probability(3, 2, 4) == pytest.approx(wins / 6**5, abs=1e-12)
    # a wound penalty of 1 on the attacker: max(0, a-1) > b
    wins = sum(
        1
        for a in itertools.product(range(1, 7), repeat=3)
        for b in itertools.product(range(1, 7), repeat=2)
        if max(0, sum(f >= 4 for f in a) - 1) > sum(f >= 4 for f in b)
    )
    assert beat_probability(3, 2, 4, 1, 0) == pytest.approx(wins / 6**5, abs=1e-12)


def test_roll_off_outcomes_by_enumeration() -> None:
    c = Counter(read_roll_off(a, b) for a in range(1, 7) for b in range(1, 7))
    table = dict(ROLL_OFF_ROUND)
    for k in (RollOff(0), RollOff(1), RollOff(None)):
        assert table[k] == pytest.approx(c[k] / 36)
    # repeated until one is higher: 15/30 each
    final = dict(ROLL_OFF_OUTCOMES)
    assert final == {RollOff(0): pytest.approx(c[RollOff(0)] / 30), RollOff(1): pytest.approx(c[RollOff(1)] / 30)}
    rng = Rng(7)
    wins = sum(sample_roll_off(rng).winner == 0 for _ in range(20_000))
    assert abs(wins - 10_000) <= 4 * math.sqrt(20_000 * 0.25)


@pytest.mark.parametrize("n", [1, 3, 5, 9])
def test_sampled_rolls_agree_with_exact_distribution(n: int) -> None:
    """Every (successes, sixes) cell of the engine's sampler within 4 sigma of the exact count, fixed seed."""
    rng = Rng(12345 + n)
    draws = 20_000
    seen = Counter(sample_roll(rng, n, 4) for _ in range(draws))
    dist = dict(roll_distribution(n, 4))
    assert sum(seen.values()) == draws and set(seen) <= set(dist)
    for roll, p in dist.items():
        sigma = math.sqrt(draws * p * (1 - p))
        assert abs(seen[roll] - draws * p) <= 4 * sigma + 1, (roll, seen[roll], draws * p)
    # and the success marginal as a whole: Pearson chi-square below the 99.99% point of chi2(n) (< 40 here)
    marg = success_distribution(n, 4)
    obs = Counter(r.successes for r in seen.elements())
    chi2 = sum((obs[s] - draws * p) ** 2 / (draws * p) for s, p in enumerate(marg) if draws * p >= 5)
    assert chi2 < 40


def test_state_chance_nodes_sample_their_own_outcome_table() -> None:
    """A session roll node: sample_chance frequencies within 4 sigma of chance_outcomes(), fixed seed."""
    from envs.blackbird import RULESET
    from envs.blackbird.actions import SessionAct, session_spend
    from envs.blackbird.session import SessionState

    s = SessionState(RULESET.default_config())  # type: ignore[arg-type]
    s.apply_chance(0)
    s.apply_action(SessionAct.TRAIT_0)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(2))  # 6 dice
    table = dict(s.chance_outcomes())
    rng = Rng(99)
    draws = 20_000
    seen = Counter(s.sample_chance(rng) for _ in range(draws))
    assert set(seen) <= set(table)
    for o, p in table.items():
        assert abs(seen[o] - draws * p) <= 4 * math.sqrt(draws * p * (1 - p)) + 1


@pytest.mark.parametrize("success_on", [2, 3, 4, 5, 6])
def test_sampled_roll_reads_the_same_draws_as_the_faces(success_on: int) -> None:
    """The sampler reads each draw by comparison; the same draws rolled as faces and read by Rule 3 agree."""
    for seed in range(40):
        for n in range(16):
            faces = Rng(seed).roll(n, 6)  # int(u * 6) + 1 for each draw u, in order
            assert sample_roll(Rng(seed), n, success_on) == read_faces(faces, success_on), (seed, n, faces)

"""Exact comparison odds (envs.wicked_age.dice.comparison_odds) against an independent brute force,
and sampled conflicts against the exact odds (chi-square, fixed seed)."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from fractions import Fraction

import pytest

from envs.core.dice import Rng
from envs.core.play import advance
from envs.core.policy import UniformRandom
from envs.wicked_age.actions import NUM_ACTIONS
from envs.wicked_age.conflict import start_conflict
from envs.wicked_age.dice import Result, comparison_odds
from tests.envs.wicked_age.helpers import config, seed_four


def brute_force(answer, standing, k_answer, k_standing, last_round=False, sides=6):
    """Every face of every die (each advantage d6 separately), classified by the seed's four bullets."""

    def rolls(dice, k):
        for faces in itertools.product(*(range(1, d + 1) for d in dice), *([range(1, sides + 1)] * k)):
            main = sorted(faces[: len(dice)], reverse=True)
            main[0] += sum(faces[len(dice) :])
            yield main + [0] * (4 - len(main))

    counts = Counter()
    for c in rolls(standing, k_standing):
        for a in rolls(answer, k_answer):
            if a[0] * 2 <= c[0]:
                counts["absolute_loss"] += 1
            elif a < c:
                counts["absolute_loss" if last_round else "loses_advantage"] += 1
            elif a[0] >= 2 * c[0]:
                counts["absolute_win"] += 1
            else:
                counts["absolute_win" if last_round else "wins_advantage"] += 1
    total = sum(counts.values())
    return {k: Fraction(v, total) for k, v in counts.items()}


CASES = [
    ((12, 10), (10, 8), 0, 0, False),
    ((12, 10), (10, 8), 1, 1, False),
    ((10, 8), (12, 10), 0, 1, True),
    ((6, 4), (12, 8), 2, 0, False),
    ((12, 6, 8), (10, 6), 0, 1, False),
    ((4,), (12, 12), 1, 0, True),
]


@pytest.mark.parametrize("answer,standing,ka,kc,last", CASES)
def test_exact_odds_match_brute_force(answer, standing, ka, kc, last):
    exact = comparison_odds(answer, standing, ka, kc, last_round=last)
    brute = brute_force(answer, standing, ka, kc, last)
    assert sum(exact.values()) == 1
    for r in Result:
        assert exact[r] == brute.get(r.label, 0), r


def test_exact_odds_known_value():
    """d4 against a standing d12: 2a <= c holds for 11 + 9 + 7 + 5 = 32 of the 48 pairs (by hand)."""
    odds = comparison_odds((4,), (12,))
    assert odds[Result.ABSOLUTE_LOSS] == Fraction(32, 48)


def test_sampled_conflicts_agree_with_exact_odds():
    """Every answer to a freshly rerolled challenge in random melee games (both sides rolled
    independently) is bucketed by its dice and advantage; each big bucket fits the exact odds."""
    cfg = config(negotiation={"enabled": False})
    rng = Rng(20261129)
    buckets: dict[tuple, Counter] = defaultdict(Counter)
    for _ in range(2500):
        chars = seed_four()[1:]  # Taye, Amek and Esan
        state = start_conflict(chars, [("for_myself", "covertly"), ("directly", "for_others"), ("maneuvering",)], cfg)
        advance(state, rng, [UniformRandom()] * state.num_players, NUM_ACTIONS)
        for e in state.log:
            if e.kind == "answer" and e.data["fresh_challenge"]:
                d = e.data
                last = d["round"] >= 3
                key = (d["answer_dice"], d["answer_adv"], d["challenge_dice"], d["challenge_adv"], last)
                buckets[key][d["result"]] += 1
    big = [(k, c) for k, c in buckets.items() if sum(c.values()) >= 150]
    assert len(big) >= 3, "too few well-filled buckets to test"
    for (ad, ka, cd, kc, last), counts in big:
        n = sum(counts.values())
        exact = comparison_odds(ad, cd, ka, kc, last_round=last)
        chi2, dof = 0.0, -1
        for r in Result:
            e = float(exact[r]) * n
            if e >= 5:
                chi2 += (counts.get(r.label, 0) - e) ** 2 / e
                dof += 1
            else:
                assert counts.get(r.label, 0) <= e + 6 * max(e, 1) ** 0.5 + 3
        # chi-square critical value at p = 0.001 for dof <= 3: 16.27
        assert chi2 < 16.27, ((ad, ka, cd, kc, last), counts, exact)

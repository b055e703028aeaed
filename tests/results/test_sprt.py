import random

from results.sprt import Verdict, fixed_sample_size_unpaired, paired_sprt


def test_identical_games_conclude_unchanged():
    assert paired_sprt([0.0] * 400, delta=0.03).verdict is Verdict.UNCHANGED


def test_too_few_games_is_undecided():
    assert paired_sprt([0.0] * 10, delta=0.03).verdict is Verdict.UNDECIDED


def test_clear_shift_is_changed_in_both_directions():
    rng = random.Random(1)
    up = [1.0 if rng.random() < 0.15 else 0.0 for _ in range(600)]
    assert paired_sprt(up, delta=0.03).verdict is Verdict.CHANGED
    assert paired_sprt([-x for x in up], delta=0.03).verdict is Verdict.CHANGED


def test_noise_without_shift_is_not_changed():
    rng = random.Random(2)
    noise = [rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0]) for _ in range(3000)]
    assert paired_sprt(noise, delta=0.03).verdict is not Verdict.CHANGED


def test_fixed_sample_size_matches_textbook():
    # 50% vs 60%, two-sided alpha 0.05, power 0.80: 388 per group (Fleiss, no continuity correction)
    assert fixed_sample_size_unpaired(0.5, 0.1, alpha=0.05, beta=0.2) == 388

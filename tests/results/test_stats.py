import pytest

from results.stats import mean_interval, paired_difference, wilson


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    # reference values of the Wilson score interval (95%, z=1.96) from the literature
    [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (81, 263, 0.2553, 0.3662)],
)
def test_wilson_matches_reference(k, n, low, high):
    iv = wilson(k, n)
    assert iv.low == pytest.approx(low, abs=6e-4)
    assert iv.high == pytest.approx(high, abs=6e-4)


def test_mean_interval_contains_mean():
    iv = mean_interval([1, 2, 3, 4])
    assert iv.low < 2.5 < iv.high


def test_paired_difference_zero_for_identical():
    iv = paired_difference([1, 0, 1], [1, 0, 1])
    assert iv.value == 0 and iv.low == 0 and iv.high == 0

"""Statistics for playtests: Wilson intervals, mean intervals, paired comparisons."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float

    def as_list(self) -> list[float]:
        return [round(self.low, 6), round(self.high, 6)]

    def excludes(self, x: float) -> bool:
        return x < self.low or x > self.high

    def fmt_pct(self) -> str:
        return f"{100 * self.value:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"


def wilson(successes: float, n: int, z: float = Z95) -> Interval:
    """Wilson score interval for a binomial proportion (draws may count as half successes)."""
    if n <= 0:
        return Interval(float("nan"), 0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], z: float = Z95) -> Interval:
    """Mean with a normal-approximation 95% interval (fine for the hundreds of games we play)."""
    n = len(values)
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"))
    m = sum(values) / n
    if n == 1:
        return Interval(m, m, m)
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return Interval(m, m - half, m + half)


def paired_difference(a: Sequence[float], b: Sequence[float], z: float = Z95) -> Interval:
    """Mean of b − a over paired observations (common random numbers) with its 95% interval."""
    if len(a) != len(b):
        raise ValueError("paired samples must have equal length")
    return mean_interval([y - x for x, y in zip(a, b, strict=True)], z)


def quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    idx = min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))
    return float(s[idx])

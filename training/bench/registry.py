"""The benchmark registry: named functions ``fn(opts: BenchOptions) -> dict`` and the scenario they measure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envs.core.errors import UserError
from envs.core.registry import all_rulesets

PREFERRED_SCENARIOS: tuple[tuple[str, str], ...] = (
    ("blackbird", "session"),
    ("storyteller", "heist"),
    ("blackbird", "duel"),
    ("hallownest", "duel"),
)


@dataclass
class BenchOptions:
    ruleset: str | None = None
    scenario: str | None = None
    steps: int = 16_384  # training timesteps per measurement
    decisions: int = 5_000  # decisions per inference measurement
    n_envs: int = 4
    seed: int = 0
    torch_threads: int = 1
    quick: bool = False  # short timed blocks and budgets (a minute or two instead of several)
    search_spec: str = "search"  # the search agent measured by ``search``
    on_progress: Callable[[str, int, int], None] | None = None  # (stage, done, total) as a benchmark proceeds


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    fn: Callable[[BenchOptions], dict[str, Any]]


BENCHMARKS: dict[str, Benchmark] = {}


def register_benchmark(
    name: str, description: str
) -> Callable[[Callable[[BenchOptions], dict[str, Any]]], Callable[[BenchOptions], dict[str, Any]]]:
    """Decorator: ``@register_benchmark("odds", "exact odds tables per second")``."""

    def deco(fn: Callable[[BenchOptions], dict[str, Any]]) -> Callable[[BenchOptions], dict[str, Any]]:
        BENCHMARKS[name] = Benchmark(name, description, fn)
        return fn

    return deco


def pick_scenario(opts: BenchOptions) -> tuple[str, str]:
    rss = all_rulesets()
    if opts.ruleset:
        if opts.ruleset not in rss:
            raise UserError(f"unknown ruleset '{opts.ruleset}'; valid: {', '.join(sorted(rss))}")
        rs = rss[opts.ruleset]
        return rs.name, rs.scenario(opts.scenario or next(iter(rs.scenarios))).name
    for r, s in PREFERRED_SCENARIOS:
        if r in rss and s in rss[r].scenarios:
            return r, s
    if not rss:
        raise UserError("no ruleset is registered to benchmark")
    name = sorted(rss)[0]
    return name, next(iter(rss[name].scenarios))

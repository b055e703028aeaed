"""Exact reach (issue 17, item 7) on the crossroads episode's small variant (``envs/crossroads/small.toml``).

The method, the oracle and the bar are those of ``tests/training/test_exact_reach.py`` (its ``Case``,
``exact``, ``measure_reach``, ``discovery`` and ``check_restricted``): the subject
``search:<best persona>@<n>`` in that file's mode (``Case.mode``) against the exact best response to the
base persona at the other seat (both seats in turn), reach measured above uniform random play,
``>= REACH``; restricted-play changes within their interval or ``SLACK`` of the exact restricted-optimum
change.

The small game: two players, two scenes (each player the Admin once), every stat 5, no faction at setup, the
first exit ends it, and the rolls' chance outcomes grouped by what the rules read (``check.chance_detail =
"classes"``: a die is read only against the stats it meets). The exact solve takes 10-25 s per seat.

Fast test (CI): the small variant loads, differs from the rules as written, and solves. The reach and
restricted-play checks are ``slow``. Run all:
``.venv/bin/python -m pytest -q -p no:cacheprovider tests/training/test_exact_reach_crossroads.py -s``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envs.core.config import load_config
from envs.core.registry import get_ruleset
from envs.crossroads.config import CrossroadsConfig
from tests.training.test_exact_reach import (
    REACH,
    Case,
    check_restricted,
    discovery,
    exact,
    measure_reach,
    small_path,
)
from training.discover.budgets import BUDGETS
from training.discover.exact import fits_exactly
from training.discover.verdicts import stage_verdicts, subject_spec

CASE = Case("crossroads", "episode", "builder", 32, 60, mode="#rollout#exact#steps=2#z=2")
"""The base is the persona with the highest mean exact value over both seats against itself on the small game
(measured: builder 0.0312, schemer 0.0312, attacker -0.0136: a tie, builder listed first; see
test_best_persona_is_the_base)."""

SHORT_OF_97: dict[str, str] = {
    # passing since 14:20 (60 games, seats alternating): search:builder@32#rollout#exact#steps=2#z=2 0.0596 ± 0,
    # 100% (#steps=2 alone also 100%). Before: search:builder@32#rollout 0.0307 ± 0.0078 of 0.0596 (random
    # 0.0157, builder 0.0312), 34.2%; @128 36.8%; #rollout#exact 34.2%. Why (scratch diagnostics, exact regrets
    # per decision): all of the loss (0.0289 per game) is at one decision, seat 1's admin_scene (the second
    # scene), and it was already exact: the one-step values there are an exact tie (introduce/deal/confrontation
    # all 0 when builder plays on), so one step of policy iteration cannot see that confrontation is worth 0.0625
    # once the seat itself plays its later decisions well; two steps see it (1,045 positions, over the 512 of
    # @32's first step: the second step's own budget pays it).
}
"""Measured short of the bar (an honest xfail with the figures; the bar is not lowered)."""

RESTRICTED_OFF: dict[str, str] = {
    # measured 2026-12-01 16:20 (quick budget's 16 playouts, 20 deals, six restrictions): 6 of 6 within, exact.
    # The small variant (22,429 positions) now fits the pipeline's probe (40,000), so the subject is the
    # whole-game exact agent search:builder@16#rollout#exact#whole#steps=2 and every change is its exact change
    # (forbid build, optimal_assignment, pass; force aim_plus_c, aim_goal, burn_after: all 0 as the restricted
    # optima). Before (13:45, search:builder@16#rollout): 2 of 6 (force deal / pass measured 0 vs -0.0283: the
    # second policy-iteration step at admin_scene needs 1,045 positions, over @16's budget).
}
"""Restricted-play changes measured outside their interval and SLACK of the exact change."""


def _mark(reasons: dict[str, str], prefix: str) -> Any:
    if CASE.name in reasons:
        return pytest.mark.xfail(reason=f"{prefix}: {reasons[CASE.name]}", strict=False)
    return lambda test: test


def test_small_variant_loads_and_differs() -> None:
    """envs/crossroads/small.toml exists outside variants/, loads, and is not the rules as written."""
    rs = get_ruleset("crossroads")
    path = small_path("crossroads")
    assert path.exists(), path
    assert rs.variants_dir is None or path.parent != rs.variants_dir
    cfg = load_config(rs, path)
    default = rs.default_config()
    assert isinstance(cfg, CrossroadsConfig) and isinstance(default, CrossroadsConfig)
    assert cfg != default
    assert cfg.check.chance_detail == "classes" and default.check.chance_detail == "faces"


@pytest.mark.slow
@_mark(SHORT_OF_97, "measured short")
def test_exact_reach_crossroads() -> None:
    spec = f"search:{CASE.base}@{CASE.simulations}{CASE.mode}"
    r = measure_reach(CASE, spec, CASE.games)
    print(f"{CASE.name}: " + r.line(spec))
    assert r.reach >= REACH, r


@pytest.mark.slow
def test_pipeline_subject_reach_crossroads() -> None:
    """The verdict stage's subject on this game (``subject_spec`` where ``fits_exactly``: the whole-game exact
    agent at the quick budget's playouts) reaches the bar, its regrets read from the solver (measured 16:20:
    0.0596 of 0.0596, 100%)."""
    sims = BUDGETS["quick"].search_simulations
    d = discovery(CASE, Path("/nonexistent"), simulations=sims, deals=1, restrictions=1)
    assert fits_exactly(d, CASE.base)
    spec = subject_spec(CASE.base, sims, exact=True)
    r = measure_reach(CASE, spec, 40)
    print(f"{CASE.name}: " + r.line(spec))
    assert r.reach >= REACH, r


@pytest.mark.slow
@_mark(RESTRICTED_OFF, "measured off")
def test_restricted_play_matches_exact_crossroads(tmp_path: Path) -> None:
    """The pipeline's verdict stage (quick budget's simulations, 20 deals, six restrictions) against the exact
    restricted optima on the same seat schedule."""
    sims = BUDGETS["quick"].search_simulations
    d = discovery(CASE, tmp_path, simulations=sims, deals=20, restrictions=6)
    sec = stage_verdicts(d, CASE.base)
    check_restricted(CASE, sec)


@pytest.mark.slow
def test_best_persona_is_the_base() -> None:
    """Every persona at each seat against itself elsewhere: the base has the highest mean exact value."""
    from agents.registry import agent_names, make_agent
    from agents.solver import solve

    ex = exact(CASE)
    values = {}
    for p in agent_names("crossroads"):
        if p == "random" or p.startswith("rl"):
            continue
        per_seat = []
        for seat in range(ex.n):
            pols = {s: make_agent("crossroads", p, "episode") for s in range(ex.n)}
            per_seat.append(solve(ex.root, seat, pols, key=ex.key, num_actions=ex.num_actions).value[seat])
        values[p] = sum(per_seat) / len(per_seat)
    print({k: round(v, 4) for k, v in values.items()})
    assert max(values, key=lambda p: values[p]) == CASE.base, values

"""The hallownest duel as written (issue 17's must-show): with dodge forbidden, the re-optimizing subject
parries instead of taking hits undefended, and there is no "dodge dominates" finding.

The old method (the persona ``flurry`` with dodge masked out by ``RestrictedPolicy``) turned 311 of 315
dodges into no defence at all and reported that forbidding dodge costs 0.36 of value. The subject now is
``search:flurry@<n>#forbid=dodge``; its usage under the ban is what these tests read.
"""

from __future__ import annotations

import pytest

from envs.core.registry import get_ruleset
from results.findings import Kind
from training.discover.budgets import BUDGETS, Budget
from training.discover.pipeline import make_discovery
from training.discover.verdicts import stage_verdicts


def _run(tmp_path, budget: Budget, groups=None):  # type: ignore[no-untyped-def]
    d = make_discovery(get_ruleset("hallownest"), "duel", None, budget, 0, 2, tmp_path, rl=False)
    sec = stage_verdicts(d, "flurry", groups)
    return d, sec


def _small(sims: int, deals: int) -> Budget:
    return BUDGETS["quick"].model_copy(update={"name": "test", "search_simulations": sims, "search_deals": deals})


def test_dodge_forbidden_subject_parries_reduced(tmp_path):
    d, sec = _run(tmp_path, _small(8, 12), ("dodge", "parry", "no_defense"))
    row = sec["options"]["dodge"]
    assert row["available"] and row["chosen"] > 0
    instead = row["instead"]
    parries = sum(u.get("parry", 0.0) for u in instead.values())
    assert parries > 0, instead  # the persona's fallback never parries; the search subject does
    assert not any(f.kind == Kind.DOMINANT_STRATEGY and f.subject == "dodge" for f in d.findings)


@pytest.mark.slow
def test_dodge_forbidden_subject_parries_quick_budget(tmp_path):
    d, sec = _run(tmp_path, BUDGETS["quick"])
    instead = sec["options"]["dodge"]["instead"]
    parry = sum(u.get("parry", 0.0) for u in instead.values())
    none = sum(u.get("no_defense", 0.0) for u in instead.values())
    assert parry > 0.2 * (parry + none), instead
    assert not any(f.kind == Kind.DOMINANT_STRATEGY and f.subject == "dodge" for f in d.findings)

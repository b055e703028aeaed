"""Discovery catches the planted variants and stays quiet on the controls.

The fast test covers one ruleset's variants (hallownest: a windfall, a distinctive exploit, a control)
with the personas-only pipeline; the slow test covers every ruleset with the full quick budget (RL
included). Recall and false alarms are also printed by `python -m training.discover.variant_check`.
"""

import pytest

from envs import get_ruleset
from training.discover import BUDGETS
from training.discover.variant_check import check_ruleset, variant_files


def _assert_rows(rows):
    assert rows, "no variants found"
    for r in rows:
        if r["kind"] == "control":
            assert r["clean"], f"{r['variant']}: false alarm {r['false_alarms']}"
        else:
            assert r["caught"], f"{r['variant']} ({r['kind']}) not caught; new findings: {r['new_findings']}"


@pytest.mark.slow  # four hallownest discoveries with the search subject: ~5 minutes on the 2-core machine
def test_hallownest_variants_personas_only():
    rs = get_ruleset("hallownest")
    kinds = {p.stem.split("_")[0] for p in variant_files(rs)}
    assert {"windfall", "exploit", "control"} <= kinds
    _assert_rows(check_ruleset(rs, BUDGETS["quick"], seed=0, workers=2, rl=False, log=lambda s: None))


@pytest.mark.slow
@pytest.mark.parametrize("ruleset", ["blackbird", "storyteller", "crossroads", "hallownest", "wicked_age"])
def test_every_planted_variant_is_caught_quick_budget(ruleset):
    _assert_rows(check_ruleset(get_ruleset(ruleset), BUDGETS["quick"], seed=0, workers=2, rl=True, log=print))

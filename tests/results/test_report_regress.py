"""``regress`` writes its comparison page from its verdict, and ``rulebreaker report`` renders it again."""

import json
import sys

from results.sprt import Verdict
from training.regress import MetricResult, RegressResult, regress_json, write_regress_run


def _result():
    metrics = [
        MetricResult(
            "win[a vs b]",
            "a's win rate against b",
            "rate",
            True,
            120,
            0.6,
            0.45,
            -0.15,
            (-0.2, -0.1),
            0.03,
            Verdict.CHANGED,
            0.3,
        ),
        MetricResult(
            "length", "mean game length", "value", False, 120, 30.0, 30.5, 0.5, (-0.1, 1.1), 0.9, Verdict.UNCHANGED, 0.3
        ),
    ]
    return RegressResult("toy_pig", "race", "aaaa", "bbbb", 120, 200, True, metrics)


def test_regress_json_is_what_the_cli_prints():
    data = regress_json([_result()])
    assert data["exit_code"] == 1 and data["scenarios"][0]["changed"] == ["win[a vs b]"]


def test_write_regress_run_and_rerender(tmp_path):
    md, html = write_regress_run(tmp_path, [_result()])
    text = html.read_text(encoding="utf-8")
    assert "a&#39;s win rate against b fell from 60.0% to 45.0% (-15.0 points [-20.0, -10.0])" in text
    assert json.loads((tmp_path / "regress.json").read_text(encoding="utf-8"))["exit_code"] == 1
    html.unlink()
    from training.cli import main

    old = sys.argv
    sys.argv = ["rulebreaker", "report", str(tmp_path)]
    try:
        main()
    except SystemExit as e:
        assert e.code in (0, None)
    finally:
        sys.argv = old
    assert "fell from 60.0% to 45.0%" in html.read_text(encoding="utf-8")

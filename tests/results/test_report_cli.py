"""``rulebreaker report DIR`` renders a sweep folder from its records, in the sweep's variant order."""

import json
import sys


def test_report_renders_a_sweep_folder(tmp_path):
    (tmp_path / "records").mkdir()
    variants = ["v/b.toml", "v/a.toml"]
    for name, v, code in (("b", variants[0], 1), ("a", variants[1], 0)):
        rec = {
            "name": name,
            "variant": v,
            "variant_meta": {"kind": "control"},
            "exit_code": code,
            "summary": {"games": 10.0},
            "findings": ["moved"] if code else [],
            "error": None,
        }
        (tmp_path / "records" / f"{name}.json").write_text(json.dumps(rec), encoding="utf-8")
    summary = {
        "ruleset": "blackbird",
        "job": "regress",
        "backend": "local",
        "seed": 0,
        "variants": variants,
        "exit_codes": {"b": 1, "a": 0},
    }
    (tmp_path / "sweep.json").write_text(json.dumps(summary), encoding="utf-8")
    from training.cli import main

    old = sys.argv
    sys.argv = ["rulebreaker", "report", str(tmp_path)]
    try:
        main()
    except SystemExit as e:
        assert e.code in (0, None)
    finally:
        sys.argv = old
    text = (tmp_path / "sweep.html").read_text(encoding="utf-8")
    assert "1 of 2 variant(s) changed the game (b)." in text
    assert text.index(">b</td>") < text.index(">a</td>")  # the sweep's own order


def test_report_renders_each_scenario_of_a_whole_ruleset_run(tmp_path):
    import shutil

    from tests.results.test_report_render import DATA

    for sc in ("duel", "session"):
        d = tmp_path / sc
        d.mkdir()
        (d / "findings.json").write_text(json.dumps(DATA["findings"]), encoding="utf-8")
        (d / "sections.json").write_text(json.dumps(DATA["sections"]), encoding="utf-8")
    from training.cli import main

    old = sys.argv
    sys.argv = ["rulebreaker", "report", str(tmp_path), "--no-replays"]
    try:
        main()
    except SystemExit as e:
        assert e.code in (0, None)
    finally:
        sys.argv = old
    assert (tmp_path / "duel" / "report.html").exists() and (tmp_path / "session" / "report.html").exists()
    shutil.rmtree(tmp_path)

"""regress on the toy game: exit codes, exact zero on identical rules, bad inputs."""

import json

import pytest

from tests.cli_helpers import run_cli


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    d = tmp_path_factory.mktemp("rg")
    path = d / "base.json"
    import sys

    from training.cli import main

    old = sys.argv
    sys.argv = [
        "rulebreaker",
        "regress",
        "toy_pig",
        "--scenario",
        "race",
        "--update-baseline",
        "--baseline",
        str(path),
        "--games",
        "300",
        "--workers",
        "1",
    ]
    try:
        main()
    except SystemExit as e:
        assert e.code in (0, None)
    finally:
        sys.argv = old
    return path


def variant(tmp_path, text):
    p = tmp_path / "v.toml"
    p.write_text(text)
    return p


def regress(capsys, baseline, rules, *extra):
    return run_cli(
        capsys,
        "regress",
        "toy_pig",
        "--scenario",
        "race",
        "--baseline",
        str(baseline),
        "--rules",
        str(rules),
        "--json",
        "--workers",
        "1",
        *extra,
    )


def test_identical_rules_exit_0_and_every_change_exactly_zero(capsys, baseline, tmp_path):
    r = regress(capsys, baseline, variant(tmp_path, "[game]\ntarget = 20\n"))
    assert r.code == 0, r.err
    data = json.loads(r.out)["scenarios"][0]
    assert data["verdict"] == "unchanged"
    assert data["metrics"] and all(m["change"] == 0 and m["ci"] == [0, 0] for m in data["metrics"])


def test_large_effect_exits_1_naming_metrics(capsys, baseline, tmp_path):
    r = regress(capsys, baseline, variant(tmp_path, "[game]\ntarget = 35\n"))
    assert r.code == 1
    data = json.loads(r.out)["scenarios"][0]
    assert "length" in data["changed"]


def test_harmless_change_exits_0(capsys, baseline, tmp_path):
    # no random game of Pig to 20 lasts 59 turns, so allowing 61 changes no game
    r = regress(capsys, baseline, variant(tmp_path, "[game]\nmax_turns = 61\n"))
    assert r.code == 0
    assert json.loads(r.out)["scenarios"][0]["changed"] == []


def test_human_output_leads_with_plain_words(capsys, baseline, tmp_path):
    r = run_cli(
        capsys,
        "regress",
        "toy_pig",
        "--scenario",
        "race",
        "--baseline",
        str(baseline),
        "--rules",
        str(variant(tmp_path, "[game]\ntarget = 35\n")),
        "--workers",
        "1",
    )
    assert r.code == 1
    assert "game length (decisions) rose from" in r.out


@pytest.mark.parametrize(
    ("setup", "needle"),
    [
        ("missing_rules", "not found"),
        ("bad_rules", "game.target"),
        ("corrupt_baseline", "corrupt"),
        ("foreign_baseline", "not a rulebreaker baseline"),
        ("other_scenario", "made for"),
        ("old_format", "format"),
        ("stale_baseline", "no longer reproduces"),
        ("no_rules", "--rules"),
    ],
)
def test_bad_input_exits_2_with_a_clear_line(capsys, baseline, tmp_path, setup, needle):
    rules = variant(tmp_path, "[game]\ntarget = 20\n")
    base = tmp_path / "b.json"
    data = json.loads(baseline.read_text())
    if setup == "missing_rules":
        rules = tmp_path / "nope.toml"
    elif setup == "bad_rules":
        rules = variant(tmp_path, "[game]\ntarget = -1\n")
    if setup == "corrupt_baseline":
        base.write_text(baseline.read_text()[:500])
    elif setup == "foreign_baseline":
        base.write_text(json.dumps({"hello": "world"}))
    elif setup == "other_scenario":
        data["scenario"] = "sprint"
        base.write_text(json.dumps(data))
    elif setup == "old_format":
        data["format"] = 99
        base.write_text(json.dumps(data))
    elif setup == "stale_baseline":
        data["features"]["length"]["0"] += 1
        base.write_text(json.dumps(data))
    else:
        base.write_text(baseline.read_text())
    args = ["regress", "toy_pig", "--scenario", "race", "--baseline", str(base), "--workers", "1"]
    if setup != "no_rules":
        args += ["--rules", str(rules)]
    r = run_cli(capsys, *args)
    assert r.code == 2, (r.out, r.err)
    assert needle in r.err
    assert "Traceback" not in r.err


def test_out_writes_the_comparison_page_beside_the_printed_verdict(capsys, baseline, tmp_path):
    out = tmp_path / "page"
    r = regress(capsys, baseline, variant(tmp_path, "[game]\ntarget = 35\n"), "--out", str(out))
    assert r.code == 1
    printed = json.loads(r.out)
    saved = json.loads((out / "regress.json").read_text())
    assert saved["exit_code"] == printed["exit_code"] == 1
    html = (out / "regress.html").read_text()
    assert "length" in html and "toy_pig" in html
    assert "report:" in r.err


def test_out_that_is_a_file_is_refused_before_any_game(capsys, baseline, tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("x")
    r = regress(capsys, baseline, variant(tmp_path, "[game]\ntarget = 35\n"), "--out", str(blocker))
    assert r.code == 2 and r.out == ""
    assert str(blocker) in r.err and "Traceback" not in r.err

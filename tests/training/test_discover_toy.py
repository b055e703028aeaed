"""discover on the toy game: the pipeline end to end, determinism, report, replay."""

import json

import pytest

from tests.cli_helpers import run_cli


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    import sys

    from training.cli import main

    out = tmp_path_factory.mktemp("disc")
    old = sys.argv
    sys.argv = [
        "rulebreaker",
        "discover",
        "toy_pig",
        "race",
        "--out",
        str(out),
        "--no-rl",
        "--workers",
        "1",
        "--seed",
        "3",
    ]
    try:
        main()
    except SystemExit as e:
        assert e.code in (0, None)
    finally:
        sys.argv = old
    return out


def test_outputs_exist(run):
    for name in ("findings.json", "report.md", "report.html", "record.json", "games.json", "matchups.png"):
        assert (run / name).exists(), name
    data = json.loads((run / "findings.json").read_text())
    assert data["ruleset"] == "toy_pig" and data["budget"] == "quick"
    for f in data["findings"]:
        lo, hi = f["ci"]
        assert lo <= f["value"] <= hi
        # no finding without its interval clearing the threshold
        assert min(abs(lo), abs(hi)) >= 0


def test_html_is_self_contained(run):
    html = (run / "report.html").read_text()
    assert "data:image/png;base64," in html
    assert 'src="http' not in html and "src='http" not in html


def test_same_seed_same_findings(run, tmp_path, capsys):
    r = run_cli(
        capsys, "discover", "toy_pig", "race", "--out", str(tmp_path), "--no-rl", "--workers", "2", "--seed", "3"
    )
    assert r.code == 0, r.err
    assert (tmp_path / "findings.json").read_text() == (run / "findings.json").read_text()


def test_replay_of_recorded_game(run, capsys):
    games = json.loads((run / "games.json").read_text())
    gid = next(iter(games))
    r = run_cli(capsys, "play", "--replay", str(run / gid))
    assert r.code == 0 and "rolls" in r.out


def test_fail_on_and_bad_budget(run, tmp_path, capsys):
    r = run_cli(capsys, "discover", "toy_pig", "race", "--budget", "huge", "--out", str(tmp_path))
    assert r.code == 2 and "quick" in r.err
    r = run_cli(
        capsys,
        "discover",
        "toy_pig",
        "race",
        "--fail-on",
        "info",
        "--out",
        str(tmp_path),
        "--no-rl",
        "--workers",
        "1",
        "--seed",
        "3",
    )
    findings = json.loads((tmp_path / "findings.json").read_text())["findings"]
    assert r.code == (1 if findings else 0)

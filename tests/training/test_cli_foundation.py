import json

import pytest

from tests.cli_helpers import run_cli


def test_rulesets_lists_toy(capsys):
    r = run_cli(capsys, "rulesets")
    assert r.code == 0
    assert "rulebreaker/ToyPigRace-v0" in r.out


def test_rules_show_json_has_hash(capsys):
    r = run_cli(capsys, "rules", "show", "toy_pig", "--json")
    data = json.loads(r.out)
    assert data["config"]["game"]["target"] == 20 and len(data["rules_hash"]) == 12


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[game]\nbogus = 1\n", "game.bogus"),
        ('[game]\ntarget = "x"\n', "game.target"),
        ("[game]\ntarget = 0\n", "game.target"),
    ],
)
def test_rules_show_bad_file_exits_2_with_one_line(capsys, tmp_path, text, key):
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    r = run_cli(capsys, "rules", "show", "toy_pig", "--rules", str(bad))
    assert r.code == 2
    assert key in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert "Traceback" not in r.err


def test_unknown_ruleset_exits_2_listing_valid(capsys):
    r = run_cli(capsys, "rules", "show", "nope")
    assert r.code == 2 and "toy_pig" in r.err


def test_unknown_agent_exits_2_listing_valid(capsys, tmp_path):
    r = run_cli(
        capsys, "evaluate", "toy_pig", "race", "--agents", "random,wizard", "--games", "2", "--out", str(tmp_path)
    )
    assert r.code == 2 and "wizard" in r.err and "random" in r.err


def test_unknown_scenario_exits_2(capsys):
    r = run_cli(capsys, "play", "toy_pig", "sprint")
    assert r.code == 2 and "race" in r.err


def test_play_narrates(capsys):
    r = run_cli(capsys, "play", "toy_pig", "race", "--agents", "random,random", "--seed", "4")
    assert r.code == 0
    assert "rolls" in r.out and "winner" in r.out


def _eval(capsys, tmp_path, *extra):
    r = run_cli(
        capsys,
        "evaluate",
        "toy_pig",
        "race",
        "--agents",
        "random",
        "--games",
        "40",
        "--json",
        "--out",
        str(tmp_path),
        *extra,
    )
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_evaluate_same_seed_same_json_different_seed_differs(capsys, tmp_path):
    a = _eval(capsys, tmp_path, "--seed", "3")
    b = _eval(capsys, tmp_path, "--seed", "3")
    c = _eval(capsys, tmp_path, "--seed", "4")
    assert a == b
    assert a["metrics"] != c["metrics"]


def test_evaluate_workers_2_equals_workers_1(capsys, tmp_path):
    a = _eval(capsys, tmp_path, "--seed", "5", "--workers", "1", "--games", "100")
    b = _eval(capsys, tmp_path, "--seed", "5", "--workers", "2", "--games", "100")
    assert a == b


def test_evaluate_writes_record(capsys, tmp_path):
    _eval(capsys, tmp_path, "--seed", "1")
    rec = json.loads((tmp_path / "record.json").read_text())
    assert rec["ruleset"] == "toy_pig" and rec["rules_hash"] and rec["versions"]["gymnasium"]
    assert len(rec["games_detail"]) == 40


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[pool]\nstrat = 10\n", "pool.strat"),
        ('[pool]\ncap = "ten"\n', "pool.cap"),
        ("[dice]\nsuccess_on = 9\n", "dice.success_on"),
    ],
)
def test_blackbird_bad_rules_file_exits_2_naming_the_key(capsys, tmp_path, text, key):
    """The issue's own example: unknown key, wrong type, out of range — one line, exit 2."""
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    r = run_cli(capsys, "rules", "show", "blackbird", "--rules", str(bad))
    assert r.code == 2
    assert key in r.err and len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err


def test_blackbird_evaluate_workers_2_equals_workers_1(capsys, tmp_path):
    def ev(w):
        r = run_cli(
            capsys,
            "evaluate",
            "blackbird",
            "duel",
            "--agents",
            "greedy,aggressor",
            "--games",
            "60",
            "--seed",
            "9",
            "--workers",
            w,
            "--json",
            "--out",
            str(tmp_path / w),
        )
        assert r.code == 0, r.err
        return json.loads(r.out)

    assert ev("1") == ev("2")


@pytest.mark.parametrize(
    "args",
    [("odds", "storyteller", "--pool", "x"), ("nosuchcommand",), ("evaluate", "toy_pig", "race", "--games", "0")],
)
def test_usage_errors_exit_2_without_a_traceback(capsys, args):
    r = run_cli(capsys, *args)
    assert r.code == 2
    assert "Traceback" not in r.err + r.out

"""The step-through trace of a game is the game ``play --replay`` shows: same narration, one step a decision.

Oracle: the toy Pig rules (tests/toy) — the winner's banked score reaches the target (20) and every step's
resources are the two players' scores.
"""

from envs.core.config import config_dict
from envs.core.registry import get_ruleset
from training.replays import ahead, trace_game, wanted_games
from training.runner import GameJob, play_game


def _job(seed):
    rs = get_ruleset("toy_pig")
    return GameJob("toy_pig", "race", config_dict(rs.default_config()), ("random", "random"), seed, narrate=True)


def test_trace_is_the_played_game_step_by_step():
    for seed in range(5):
        job = _job(seed)
        rec = play_game(job)
        tr = trace_game(job, "t", "r")
        assert len(tr["steps"]) == rec.length + 1  # the opening, then one step per decision
        assert [e["text"] for s in tr["steps"] for e in s["events"]] == rec.log
        assert tr["outcome"]["winner"] == rec.winner and tr["outcome"]["returns"] == list(rec.returns)
        assert all(len(s["resources"]) == 2 and set(s["resources"][0]) == {"score"} for s in tr["steps"])
        assert {s["action"] for s in tr["steps"][1:]} <= {"roll", "hold"}
        if rec.winner is not None:
            assert tr["steps"][-1]["resources"][rec.winner]["score"] >= 20
            assert tr["steps"][-1]["ahead"].startswith("Game over:")
        rolls = [e for s in tr["steps"] for e in s["events"] if "rolls" in e["text"]]
        assert rolls and all(e["dice"] for e in rolls)  # a roll is marked as dice


def test_who_is_ahead():
    names = ["Ann", "Bob"]
    assert ahead([{"hp": 4, "pool": 9}, {"hp": 6, "pool": 1}], names) == "Bob ahead on hp (Ann 4, Bob 6)."
    assert ahead([{"score": 3}, {"score": 3}], names) == "Level on score (Ann 3, Bob 3)."
    assert ahead([{"pool": 3}, {"pool": 1}], names) == ""  # no lead resource: nothing claimed
    assert ahead([{"hp": 3}], names[:1]) == ""  # one seat: nobody to be ahead of


def test_wanted_games_follow_the_report_order_and_skip_unknown_ids():
    findings = [
        {"kind": "seat_advantage", "subject": "seat 0", "severity": "low", "value": 0.1, "evidence": "g1"},
        {"kind": "dominated_option", "subject": "aim", "severity": "high", "value": -1.0, "evidence": "g2"},
        {"kind": "dead_rule", "subject": "k", "severity": "medium", "value": 0.0, "evidence": "missing"},
    ]
    games = {"g1": {}, "g2": {}}
    assert [g for g, _ in wanted_games(findings, games, 5)] == ["g2", "g1"]
    assert wanted_games([], games, 5) == [("g1", "a round-robin game")]


def test_a_trace_holds_its_job_so_it_replays_alone():
    from training.replays import job_of

    job = _job(3)
    tr = trace_game(job)
    again = job_of(tr)  # a trace file is a games.json entry too
    assert again.seed == job.seed and again.agents == job.agents and dict(again.config) == dict(job.config)
    assert play_game(again).log == play_game(job).log


def test_a_stale_trace_is_traced_again(tmp_path):
    import json

    from envs.core.config import config_dict
    from training.replays import write_replays

    cfg = config_dict(get_ruleset("toy_pig").default_config())
    games = {
        "g": {
            "ruleset": "toy_pig",
            "scenario": "race",
            "config": cfg,
            "agents": ["random", "random"],
            "seed": 1,
            "forbid": [],
        }
    }
    finding = [{"kind": "dead_rule", "subject": "k", "severity": "low", "value": 0.0, "evidence": "g"}]
    first = write_replays(tmp_path, finding, games)[0]
    assert write_replays(tmp_path, finding, games)[0] == first  # kept: the same game
    games["g"]["seed"] = 2  # a re-run recorded another game under the same id
    again = write_replays(tmp_path, finding, games)[0]
    assert again["seed"] == 2 and again["log"] == play_game(_job(2)).log
    assert json.loads((tmp_path / "replays" / "g.json").read_text(encoding="utf-8"))["seed"] == 2


def test_plain_agent_names_the_restriction():
    from training.replays import plain_agent

    assert plain_agent("search:greedy@16#force=all_out_defense") == (
        "search:greedy@16, forced to all out defense wherever legal"
    )
    assert plain_agent("search:flurry@16#forbid=dodge") == "search:flurry@16, never allowed to dodge"
    assert plain_agent("greedy") == "greedy"
    assert plain_agent("search:x@8#maxn#forbid=aim") == "search:x@8#maxn, never allowed to aim"


def test_play_replay_reads_a_trace_file_of_the_report(tmp_path, capsys):
    from envs.core.config import config_dict
    from tests.cli_helpers import run_cli
    from training.replays import write_replays

    cfg = config_dict(get_ruleset("toy_pig").default_config())
    games = {"g": {"ruleset": "toy_pig", "scenario": "race", "config": cfg, "agents": ["random", "random"], "seed": 4}}
    finding = [{"kind": "dead_rule", "subject": "k", "severity": "low", "value": 0.0, "evidence": "g"}]
    write_replays(tmp_path, finding, games)
    r = run_cli(capsys, "play", "--replay", str(tmp_path / "replays" / "g.json"))
    assert r.code == 0, r.err
    assert all(line in r.out for line in play_game(_job(4)).log[-3:])
    (tmp_path / "replays" / "bad.json").write_text("[1]")
    bad = run_cli(capsys, "play", "--replay", str(tmp_path / "replays" / "bad.json"))
    assert bad.code == 2 and "not a recorded game" in bad.err and "Traceback" not in bad.err

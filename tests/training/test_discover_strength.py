"""The strength certificate and what it does to findings (issue 17 item 6): finding ids, severity honesty
when the certificate is not converged, and the best-response edge in a multi-seat scenario (toy Pig)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from results.findings import (
    Finding,
    Kind,
    Severity,
    Thresholds,
    assign_ids,
    finding_by_id,
    finding_id,
    provisional,
)
from tests.toy import RULESET as TOY
from training.discover.budgets import Budget
from training.discover.pipeline import make_discovery
from training.discover.verdicts import best_response, stage_verdicts, strength_certificate


def _finding(kind: Kind, subject: str, severity: Severity = Severity.HIGH, metric: str = "m") -> Finding:
    return Finding(kind, subject, severity, metric, -0.3, 0.05, (-0.4, -0.2), "g-1", f"{subject} summary.")


def test_finding_id_is_short_stable_and_names_its_subject():
    fid = finding_id("hallownest", "duel", Kind.DOMINANT_STRATEGY, "dodge")
    assert re.fullmatch(r"F-[0-9a-f]{6}", fid)
    assert fid == "F-" + hashlib.sha1(b"hallownest/duel/dominant_strategy/dodge").hexdigest()[:6]
    assert fid == finding_id("hallownest", "duel", "dominant_strategy", "dodge")
    assert fid != finding_id("hallownest", "duel", Kind.DOMINANT_STRATEGY, "parry")
    assert fid != finding_id("hallownest", "melee", Kind.DOMINANT_STRATEGY, "dodge")
    fs = [_finding(Kind.DEAD_RULE, "a.b"), _finding(Kind.DEAD_RULE, "a.b"), _finding(Kind.SNOWBALL, "heart")]
    assign_ids("r", "s", fs)
    assert fs[0].id == finding_id("r", "s", Kind.DEAD_RULE, "a.b") and fs[1].id == fs[0].id + "-2"
    doc = {"findings": [f.to_json() for f in fs]}
    assert list(doc["findings"][0])[0] == "id"
    assert finding_by_id(doc, fs[2].id)["subject"] == "heart"
    assert finding_by_id(doc, "F-000000") is None


def test_not_converged_caps_strength_findings_and_says_by_how_much():
    fs = [
        _finding(Kind.DOMINANT_STRATEGY, "dodge"),
        _finding(Kind.DOMINATED_OPTION, "dash", Severity.LOW),
        _finding(Kind.EXPLOIT, "trained agent"),
        _finding(Kind.FRAGILE_RULE, "cap", metric="return[search:flurry@16 adapting]"),
        _finding(Kind.SEAT_ADVANTAGE, "seat 0"),  # measured on the round-robin: no subject's strength in it
        _finding(Kind.FRAGILE_RULE, "tax", metric="win[flurry vs guard]"),
    ]
    out = provisional(fs, {"converged": False, "provisional_by": 0.4237})
    by = {f.subject: f for f in out}
    for s in ("dodge", "trained agent", "cap"):
        assert by[s].severity == Severity.MEDIUM, s
        assert "Provisional by 0.424" in by[s].summary and "capped" in by[s].summary
        assert by[s].details["severity_uncapped"] == "high"
    assert by["dash"].severity == Severity.LOW and "Provisional by 0.424" in by["dash"].summary
    assert by["seat 0"].severity == Severity.HIGH and "Provisional" not in by["seat 0"].summary
    assert by["tax"].severity == Severity.HIGH
    assert fs[0].severity == Severity.HIGH  # the input is not mutated
    same = provisional(fs, {"converged": True, "provisional_by": 0.0})
    assert [f.severity for f in same] == [f.severity for f in fs]
    assert all("Provisional" not in f.summary for f in same)


def _budget() -> Budget:
    return Budget(
        name="test",
        round_robin_games=10,
        sensitivity_games=10,
        rl_steps=0,
        rl_eval_games=0,
        search_simulations=8,
        search_deals=12,
        max_restrictions=2,
        sensitivity_search_games=4,
        build_candidates=0,
        build_games=0,
    )


@pytest.fixture(scope="module")
def pig(tmp_path_factory):
    out = tmp_path_factory.mktemp("pig")
    d = make_discovery(TOY, "race", None, _budget(), 0, 1, Path(out), rl=False)
    stage_verdicts(d, "random")
    return d


def test_best_response_edge_is_paired_against_the_subject(pig):
    d = pig
    sec = d.sections["verdicts"]
    # an "exploiter" that is the subject itself plays the very games of the subject's self-play: every paired
    # change is zero, and the interval is the rule of three's (± the returns' span × 3/n), never zero-width
    d.sections["rl"] = {"exploiter": {"agent": sec["subject"], "opponent": "random", "steps": 0}}
    br = best_response(d)
    assert br is not None and br["games"] == sec["deals"]
    span = 2.0  # Pig: +1 for the winner, -1 for the loser
    half = span * min(1.0, 3 / sec["deals"])
    assert br["edge"]["value"] == 0.0 and abs(br["edge"]["high"] - half) < 1e-6 and abs(br["edge"]["low"] + half) < 1e-6
    # the subject's own usage, seen through the exploiter's games, covers the contexts the subject met
    assert set(br["usage"]) == set(sec["usage"])
    # the exploiter's opponent is the subject: its games seat the subject at every other seat
    d.sections["rl"] = {"exploiter": {"agent": "random", "opponent": "random", "steps": 0}}
    br = best_response(d)
    assert br is not None
    game = d.games[br["example"]]
    g = int(br["example"].rsplit("-", 1)[1])
    assert game["agents"][g % 2] == "random" and game["agents"][1 - g % 2] == sec["subject"]
    assert br["finetune"]["steps"] == 0  # not an RL model: nothing to fine-tune
    st = strength_certificate(d)
    assert st["best_response_edge"] == br["edge"]["value"]
    assert st["best_response_ci"] == [br["edge"]["low"], br["edge"]["high"]]
    assert st["best_response_trained"] == [{"opponent": "random", "steps": 0}]
    assert "exploiter" in st["best_response_note"] and "self-play" in st["best_response_note"]


def test_converged_considers_the_best_response_edge(pig):
    d = pig
    t = Thresholds()
    d.sections["verdicts"] = {**d.sections["verdicts"], "doubling": {"value": 0.0, "low": -0.01, "high": 0.01}}
    d.sections["exact"] = {"tractable": False}
    d.sections["best_response"] = {
        "edge": {"value": 0.01, "low": -0.02, "high": 0.03},
        "steps": 100,
        "opponent": "random",
        "games": 12,
    }
    assert strength_certificate(d)["converged"]
    d.sections["best_response"]["edge"] = {"value": 0.2, "low": 0.1, "high": 0.3}
    st = strength_certificate(d)
    assert not st["converged"] and st["provisional_by"] == pytest.approx(0.3)
    assert st["provisional_by"] > t.dominant_loss
    d.sections.pop("best_response")
    st = strength_certificate(d)
    assert st["converged"] and st["best_response_edge"] is None and "no exploiter" in st["best_response_note"]


def test_restricted_play_that_beats_the_subject_unsettles_the_certificate(pig):
    from results.report import _strength_text

    d = pig
    d.sections["verdicts"] = {**d.sections["verdicts"], "doubling": {"value": 0.0, "low": -0.01, "high": 0.01}}
    d.sections["exact"] = {"tractable": False}
    d.sections.pop("best_response", None)
    options = {k: dict(v) for k, v in d.sections["verdicts"]["options"].items()}
    for row in options.values():
        row["forbid"], row["force"] = None, None
    d.sections["verdicts"]["options"] = options
    assert strength_certificate(d)["converged"] and strength_certificate(d)["restricted_gain"] is None
    first, second = list(options)[:2]
    options[first]["forbid"] = {"value": 0.05, "low": -0.01, "high": 0.11}  # a gain within noise: no evidence
    options[second]["force"] = {"value": 0.22, "low": 0.08, "high": 0.36}  # forcing it plays better than the subject
    st = strength_certificate(d)
    assert st["restricted_gain"] == {"option": second, "mode": "force", "value": 0.22, "low": 0.08, "high": 0.36}
    assert not st["converged"] and st["provisional_by"] == pytest.approx(0.08)
    text = _strength_text(st)
    assert text is not None and text["level"] == "provisional"
    assert f"forcing {second.replace('_', ' ')} raises its value by +0.220 [+0.080, +0.360]" in text["text"]
    options[second]["force"] = {"value": 0.03, "low": 0.01, "high": 0.05}  # beyond noise but under dominant_loss
    st = strength_certificate(d)
    assert st["restricted_gain"]["low"] == 0.01 and st["converged"]


def _work_discovery(tmp_path, mean_length=None, **update):
    """A toy discovery whose budget caps the search work (``update``: the budget fields under test)."""
    b = _budget().model_copy(update={"max_restrictions": 12, "min_restrictions": 4, **update})
    d = make_discovery(TOY, "race", None, b, 0, 1, tmp_path, rl=False)
    if mean_length is not None:
        d.sections["round_robin"] = {"mean_length": mean_length}
    return d


def test_search_work_cap_shrinks_long_scenarios_only(tmp_path):
    from training.discover.verdicts import deal_count, restriction_cap

    d = _work_discovery(tmp_path, search_deals=10, search_work=30_000, planned_restrictions=4)
    assert deal_count(d) == 10 and restriction_cap(d, 10) == 12  # no round-robin yet: no length, no cap
    d.sections["round_robin"] = {"mean_length": 17.0}  # a short duel: 17² / 2 = 144.5 per game
    assert deal_count(d) == 10  # 30000 / (144.5 * 7) = 29.6 deals would fit
    assert restriction_cap(d, 10) == 12  # 30000 / 1445 = 20.7 games per deal: 17 restrictions would fit
    d.sections["round_robin"] = {"mean_length": 54.0}  # a long duel: 54² / 2 = 1458
    assert deal_count(d) == 6  # 30000 / (1458 * 7) = 2.9: the floor of 6 deals
    assert restriction_cap(d, 6) == 4  # 30000 / (1458 * 6) = 3.4 games per deal: the floor of 4
    d.sections["round_robin"] = {"mean_length": 30.0}  # 450 per game
    assert deal_count(d) == 9  # 30000 / 3150 = 9.5
    assert restriction_cap(d, 9) == 4  # 30000 / 4050 = 7.4 -> 7 - 3


def test_verdict_work_pays_restricted_play_only(tmp_path):
    from training.discover.rl import subject_steps
    from training.discover.verdicts import deal_count, restriction_cap

    d = _work_discovery(tmp_path, 30.0, search_deals=40, search_work=30_000, planned_restrictions=4)  # 450/game
    b = d.budget
    before = (deal_count(d), restriction_cap(d, 9), subject_steps(d))
    assert before[:2] == (9, 4)
    d.budget = b.model_copy(update={"verdict_work": 90_000})
    assert deal_count(d) == 28  # 90000 / 3150 = 28.6
    assert restriction_cap(d, 28) == 4  # 90000 / (450 * 28) = 7.1 -> 7 - 3
    assert restriction_cap(d, 9) == 12  # 90000 / 4050 = 22.2 -> 19, capped by max_restrictions
    assert subject_steps(d) == before[2]  # the exploiter's fine-tune keeps to search_work


def test_deals_leave_work_for_the_planned_restrictions(tmp_path):
    from training.discover.verdicts import deal_count, restriction_cap

    d = _work_discovery(tmp_path, 30.0, search_deals=100, max_restrictions=60, search_work=90_000)  # 450 per game
    b = d.budget
    assert b.planned_restrictions == 8
    assert deal_count(d) == 18  # 90000 / (450 * (3 + 8)) = 18.2
    assert restriction_cap(d, 18) == 8  # 90000 / (450 * 18) = 11.1 -> 11 - 3
    d.budget = b.model_copy(update={"planned_restrictions": 4})
    assert deal_count(d) == 28 and restriction_cap(d, 28) == 4  # every unit of work on deals, the floor of options
    d.budget = b.model_copy(update={"max_restrictions": 6})
    assert deal_count(d) == 22  # plans no more restrictions than the cap: 90000 / (450 * 9) = 22.2


def test_fragile_rule_on_a_return_is_worded_per_game():
    from results.findings import sensitivity_findings

    row = {
        "key": "pool.cap",
        "value": 15,
        "was": 10,
        "description": "a looser cap",
        "example": "g",
        "metrics": {"return[search:greedy@16 adapting]": {"change": -0.5, "low": -0.8, "high": -0.2, "games": 8}},
    }
    (f,) = sensitivity_findings([row], Thresholds())
    assert f.kind == Kind.FRAGILE_RULE
    assert "by -0.500 [-0.800, -0.200] per game (over 8 paired games)" in f.summary and "points" not in f.summary


def test_forcing_an_option_the_subject_never_meets_is_no_dead_verdict():
    from results.findings import verdict_of

    zero = {"value": 0.0, "low": 0.0, "high": 0.0}
    row = {"available": True, "chosen": 0, "usage_in_context": 0.0, "forbid": None, "force": zero}
    assert verdict_of({**row, "forced_uses": 0}, Thresholds()) == "not_met"  # it never came up for the subject
    assert verdict_of({**row, "forced_uses": 5}, Thresholds()) == "dead"  # taken 5 times, and nothing moved


# -- the exploiter fine-tuned against the subject ----------------------------------------------------


@pytest.fixture(scope="module")
def warm_exploiter(tmp_path_factory):
    """A tiny MaskablePPO run on Pig against random: the warm start the RL stage's exploiter would be."""
    from training.train import TrainConfig, train

    out = tmp_path_factory.mktemp("warm")
    hp = {"n_steps": 128, "batch_size": 256, "eval_episodes": 4}
    cfg = TrainConfig(ruleset="toy_pig", scenario="race", steps=512, opponent="random", seed=0, out=out, hp=hp)
    cfg.final_eval = False
    cfg.n_envs = 2
    return f"rl:{train(cfg).run_dir}"


def _finetuned(tmp_path: Path, warm: str, monkeypatch: pytest.MonkeyPatch | None = None) -> tuple:
    import training.train.vec as vec

    seen: list[str] = []
    if monkeypatch is not None:  # a spy on the fine-tune's envs: who plays the other seats
        plain = vec.make_vec_env

        def spy(ruleset, scenario, config, opponents, kind="dummy"):
            seen.extend(o.name for o in opponents)
            return plain(ruleset, scenario, config, opponents, kind)

        monkeypatch.setattr(vec, "make_vec_env", spy)
    budget = _budget().model_copy(update={"rl_steps": 5_120, "search_deals": 8, "max_restrictions": 1})
    d = make_discovery(TOY, "race", None, budget, 0, 1, tmp_path, rl=False)
    stage_verdicts(d, "random")
    d.sections["rl"] = {"exploiter": {"agent": warm, "opponent": "random", "steps": 512}}
    br = best_response(d)
    return d, br, seen


@pytest.mark.slow  # two fine-tunes of 512 steps against the search subject, and their games
def test_exploiter_is_fine_tuned_against_the_subject_deterministically(tmp_path, warm_exploiter, monkeypatch):
    from agents.rl import read_meta
    from training.discover.rl import SUBJECT_RUN, subject_steps

    d, br, seen = _finetuned(tmp_path / "a", warm_exploiter, monkeypatch)
    subject = d.sections["verdicts"]["subject"]
    assert subject_steps(d)[0] == 512  # 10% of the 5,120 RL steps, two 256-step rollouts
    assert br is not None
    assert seen and all(name == subject for name in seen)  # the subject plays every other seat while it trains
    assert br["trained"] == [{"opponent": "random", "steps": 512}, {"opponent": subject, "steps": 512}]
    assert br["agent"] == f"rl:{tmp_path / 'a' / 'rl' / SUBJECT_RUN}" and br["warm_start"] == warm_exploiter
    assert read_meta(br["agent"].removeprefix("rl:"))["opponent"] == subject
    g = int(br["example"].rsplit("-", 1)[1])
    assert d.games[br["example"]]["agents"] == [br["agent"], subject][:: 1 if g % 2 == 0 else -1]
    st = strength_certificate(d)
    assert st["best_response_trained"][-1] == {"opponent": subject, "steps": 512}
    assert f"512 steps against {subject}" in st["best_response_note"]
    # the same seed, another folder: the same fine-tune, the same edge, the same certificate
    d2, br2, _ = _finetuned(tmp_path / "b", warm_exploiter)
    assert br2 is not None and br2["edge"] == br["edge"]
    assert strength_certificate(d2) == st


def test_fine_tune_steps_follow_the_budget_and_the_work_cap(tmp_path):
    from training.discover.rl import subject_steps

    b = _budget().model_copy(update={"name": "quick", "rl_steps": 20_000, "search_work": 60_000})
    d = make_discovery(TOY, "race", None, b, 0, 1, tmp_path, rl=False)
    d.sections["round_robin"] = {"mean_length": 20.0}  # 60,000 / (1 x 20) = 3,000 steps fit; 10% is 2,000
    assert subject_steps(d)[0] == 1_792  # 2,000 in whole 256-step rollouts
    d.sections["round_robin"] = {"mean_length": 40.0}  # 1,500 fit
    steps, why = subject_steps(d)
    assert steps == 1_280 and "work cap" in why
    d.sections["round_robin"] = {"mean_length": 200.0}  # 300 fit: under two rollouts, no fine-tune
    steps, why = subject_steps(d)
    assert steps == 0 and "no fine-tune" in why

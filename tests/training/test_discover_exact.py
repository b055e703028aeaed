"""discover's exact stage on a scenario small enough to solve: the optimum bounds every agent, and each
agent's exact value agrees with its sampled mean return from the round-robin."""

import json
import math
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

SMALL_HEIST = Path(__file__).with_name("solve_storyteller_heist.toml")


@pytest.fixture(scope="module")
def sections(tmp_path_factory):
    import sys

    from training.cli import main

    out = tmp_path_factory.mktemp("exact")
    old = sys.argv
    sys.argv = [
        "rulebreaker",
        "discover",
        "storyteller",
        "heist",
        "--rules",
        str(SMALL_HEIST),
        "--no-rl",
        "--out",
        str(out),
        "--workers",
        "1",
    ]
    try:
        main()
    except SystemExit as e:
        assert e.code in (0, None)
    finally:
        sys.argv = old
    return json.loads((out / "sections.json").read_text()), (out / "report.md").read_text()


def test_optimum_bounds_every_agent(sections):
    ex = sections[0]["exact"]
    assert ex["tractable"]
    for a, g in ex["agents"].items():
        assert g["value"] <= ex["optimal_value"] + 1e-9, a
        assert g["gap"] >= -1e-9
    st = sections[0]["strength"]  # the certificate measures the subject against the optimum (report: lane REPORT)
    assert st["exact_gap"] is not None
    assert math.isclose(st["exact_gap"], ex["optimal_value"] - sections[0]["verdicts"]["value"]["value"], abs_tol=1e-5)


def test_exact_values_agree_with_sampled_returns(sections):
    ex = sections[0]["exact"]["agents"]
    vals = sections[0]["round_robin"]["values"]
    for a in ("steady", "spender", "retrier"):
        v = vals[a]
        se = (v["high"] - v["low"]) / (2 * 1.96)
        assert abs(v["value"] - ex[a]["value"]) <= 4 * se + 1e-9, (a, v, ex[a])


@pytest.mark.slow  # a whole heist discovery: with the search subject it takes minutes
def test_large_scenario_is_not_explored(capsys, tmp_path):
    r = run_cli(capsys, "discover", "storyteller", "heist", "--no-rl", "--out", str(tmp_path), "--workers", "2")
    assert r.code == 0
    ex = json.loads((tmp_path / "sections.json").read_text())["exact"]
    assert not ex["tractable"] and "too large" in ex["reason"]
    assert math.isfinite(ex["estimate"])


# -- the certificate's exact figures, against solves made here (issue 17 item 6) ------------------------


def _tiny_hallownest_duel():
    """hallownest's small duel with Stamina 1 and Heart 1 on both bugs: two seats, ~7,000 positions per seat."""
    import envs
    from envs.core.config import config_dict, load_config, with_override
    from envs.core.registry import get_ruleset

    rs = get_ruleset("hallownest")
    cfg = load_config(rs, Path(envs.__file__).parent / "hallownest" / "small.toml")
    bugs = config_dict(cfg)["duel"]["bugs"]
    for b in bugs:
        b.update({"stamina": 1, "heart": 1})
    return rs, with_override(cfg, "duel.bugs", bugs)


def _discovery(rs, cfg, out: Path, scenario: str):
    from results.findings import Thresholds
    from training.discover.budgets import BUDGETS
    from training.discover.discovery import Discovery

    return Discovery(rs, scenario, cfg, rs.default_config(), None, BUDGETS["quick"], 0, 1, Thresholds(), out)


def _verdicts(base: str, deals: int, value: float, options: dict | None = None) -> dict:
    """The verdict section's fields the exact stage and the certificate read (the verdict games not played)."""
    zero = {"value": 0.0, "low": -0.01, "high": 0.01}
    return {
        "subject": f"search:{base}@16#rollout",
        "base": base,
        "deals": deals,
        "value": {"value": value, "low": value - 0.1, "high": value + 0.1},
        "options": options or {},
        "doubling": zero,
        "over_base": zero,
        "games": 3 * deals,
        "simulations": 16,
    }


def test_multi_seat_exact_gap_is_the_best_response_to_the_base(tmp_path):
    """Two seats: the optimum is each seat's best response to the base at the other seat (solved here with the
    solver directly), averaged over the verdict deals' seat schedule g -> g mod 2 (5 deals: seats 0,1,0,1,0)."""
    from agents.registry import make_agent
    from agents.solver import solve
    from training.discover.exact import exact_stage
    from training.discover.verdicts import strength_certificate
    from training.solve import solver_key

    rs, cfg = _tiny_hallownest_duel()
    sc = rs.scenario("duel")
    d = _discovery(rs, cfg, tmp_path, "duel")
    d.sections["verdicts"] = _verdicts("balanced", 5, 0.1)
    ex = exact_stage(d, ["balanced"])
    assert ex["tractable"], ex
    root = sc.new_game(cfg)
    key = solver_key("hallownest", "duel", root)
    best = {}
    for seat in (0, 1):
        other = {1 - seat: make_agent("hallownest", "balanced", "duel")}
        best[seat] = solve(root, seat, other, key=key, num_actions=sc.action_count(cfg)).value[seat]
    truth = (3 * best[0] + 2 * best[1]) / 5
    assert best[0] != pytest.approx(best[1], abs=1e-3)  # the schedule's weights matter
    assert ex["optimal_value"] == pytest.approx(truth, abs=1e-6)
    assert ex["per_seat"]["0"]["deals"] == 3 and ex["per_seat"]["1"]["deals"] == 2
    assert ex["opponents"] == "balanced"
    # the base against itself can do no better than the best response to it
    assert ex["agents"]["balanced"]["gap"] >= -1e-9
    st = strength_certificate(d)
    assert st["exact_gap"] == pytest.approx(truth - 0.1, abs=1e-6)
    assert st["converged"] is (truth - 0.1 <= d.thresholds.dominant_loss)


def test_restricted_exact_is_the_restricted_optimum_change(tmp_path):
    """One seat (the one-task heist): each restriction the verdict stage played gets the exact restricted optimum
    (a RestrictedState view solved here) minus the optimum; the certificate puts the measured change beside it,
    and a measured change far from the exact one keeps the certificate from converging."""
    from agents.search import RestrictedState, Restriction
    from agents.solver import solve
    from envs.core.config import load_config
    from envs.core.registry import get_ruleset
    from training.discover.exact import exact_stage
    from training.discover.verdicts import strength_certificate
    from training.solve import solver_key

    rs = get_ruleset("storyteller")
    cfg = load_config(rs, SMALL_HEIST)
    sc = rs.scenario("heist")
    d = _discovery(rs, cfg, tmp_path, "heist")
    near = {"value": -0.3, "low": -0.5, "high": -0.1}  # around the exact change (below)
    options = {"approach_main": {"forbid": near, "force": None}, "abandon": {"forbid": None, "force": None}}
    d.sections["verdicts"] = _verdicts("spender", 4, 0.85, options)
    ex = exact_stage(d, [])
    assert ex["tractable"] and set(ex["restricted"]) == {"forbid=approach_main"}  # only what was played
    root = sc.new_game(cfg)
    key = solver_key("storyteller", "heist", root)
    n_act = sc.action_count(cfg)
    free = solve(root, 0, key=key, num_actions=n_act).value[0]
    view = RestrictedState(root, 0, Restriction("forbid", "approach_main"))
    truth = solve(view, 0, key=key, num_actions=n_act).value[0] - free
    assert truth < -0.1  # the main approach matters in the one-task heist
    assert ex["restricted"]["forbid=approach_main"]["change"] == pytest.approx(truth, abs=1e-6)
    st = strength_certificate(d)
    row = st["restricted_exact"]["forbid=approach_main"]
    assert row["measured"] == -0.3 and row["ci"] == [-0.5, -0.1]
    assert row["exact"] == pytest.approx(truth, abs=1e-6) and row["within"]
    assert row["off"] == pytest.approx(abs(-0.3 - truth), abs=1e-6)
    # a measured change 0.3 away from the exact one: not converged, provisional by at least that much
    far = {"value": truth + 0.3, "low": truth + 0.25, "high": truth + 0.35}
    d.sections["verdicts"]["options"]["approach_main"]["forbid"] = far
    d.sections["verdicts"]["value"] = {"value": free, "low": free, "high": free}  # no exact gap left
    st = strength_certificate(d)
    row = st["restricted_exact"]["forbid=approach_main"]
    assert not row["within"] and row["off"] == pytest.approx(0.3, abs=1e-5)
    assert not st["converged"] and st["provisional_by"] >= 0.3 - 1e-5

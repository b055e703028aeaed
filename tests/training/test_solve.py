"""``rulebreaker solve``: exact values against independent hand computations from the rules text,
the optimal policy played out, refusals and one-line errors."""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest

from tests.cli_helpers import run_cli

HERE = Path(__file__).parent
BB_SESSION = HERE / "solve_blackbird_session.toml"


def pass_chance(dice: int, difficulty: int) -> Fraction:
    """Blackbird Rules 3-4: P(at least ``difficulty`` of ``dice`` d6 show 4+)."""
    return sum((Fraction(comb(dice, s), 2**dice) for s in range(difficulty, dice + 1)), Fraction(0))


def blackbird_one_obstacle_value() -> Fraction:
    """The short session with one obstacle, by hand from docs/rules/blackbird.md.

    With a single obstacle nothing is worth saving, so the best play takes the best trait, the helper's
    die and all 4 pool dice; a failure keeps the pool and adds 1 (Rule 5), the helper's die comes back
    (Rule 6), and a retry (once) follows, one step harder if the obstacle wounds (Rule 7).
    Pools (Rule 2): locked door: base + Scoundrel + locks = 3; brawl: base + Mercenary + fist-fighting +
    strongman = 4; rescue the Lady: base + Zen monk + kung fu + agile + flag = 5.
    """
    value = Fraction(0)
    for own, difficulty, wound in ((3, 2, 0), (4, 3, 1), (5, 4, 1)):
        first = pass_chance(own + 1 + 4, difficulty)
        retry = pass_chance(own + 1 + 5, difficulty + wound)
        value += Fraction(1, 3) * (1 - (1 - first) * (1 - retry))
    return value


def solve_json(capsys, *args: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    r = run_cli(capsys, "solve", *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_blackbird_one_obstacle_matches_hand_computation(capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("envs.blackbird")
    data = solve_json(
        capsys, "blackbird", "session", "--rules", str(BB_SESSION), "--set", "session.obstacles_per_session=1"
    )
    assert data["value"][0] == pytest.approx(float(blackbird_one_obstacle_value()), abs=1e-12)
    assert data["acyclic"] and data["num_states"] < 2000
    spend = [p for p in data["policy"] if p["context"].startswith("spend_") and p["reach"] > 0.3]
    assert spend and all(p["best"] == "spend 4 pool dice" for p in spend)  # nothing to save for


def test_blackbird_key_adapter_changes_nothing_but_the_size() -> None:
    """The solver's canonical key for blackbird session merges positions without changing any value."""
    pytest.importorskip("envs.blackbird")
    from agents.solver import solve
    from envs import get_ruleset
    from envs.core.config import load_config, with_override
    from training.solve import solver_key

    rs = get_ruleset("blackbird")
    cfg = with_override(load_config(rs, BB_SESSION), "session.obstacles_per_session", 1)
    root = rs.new_game(cfg, "session")
    merged = solve(root, 0, key=solver_key("blackbird", "session", root))
    plain = solve(root, 0)
    assert merged.value[0] == pytest.approx(plain.value[0], abs=1e-12)
    assert merged.num_states <= plain.num_states


def test_optimal_policy_plays_to_its_value() -> None:
    """Sampled games of the solver's policy in the engine land within 4 SE of the exact value."""
    pytest.importorskip("envs.blackbird")
    from envs.core.dice import Rng
    from envs.core.play import advance
    from training.solve import solve_scenario

    res = solve_scenario("blackbird", "session", BB_SESSION, ["session.obstacles_per_session=1", "pool.start=1"])
    pol = res.policy()
    rng = Rng(5)
    rets = []
    for _ in range(1500):
        s = res.root.clone()
        advance(s, rng, [pol], num_actions=64)
        rets.append(s.returns()[0])
    mean, se = float(np.mean(rets)), float(np.std(rets) / np.sqrt(len(rets)))
    assert abs(mean - res.value[0]) <= 4 * se + 1e-9


def test_human_table(capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("envs.blackbird")
    r = run_cli(
        capsys,
        "solve",
        "blackbird",
        "session",
        "--rules",
        str(BB_SESSION),
        "--set",
        "session.obstacles_per_session=1",
        "--limit",
        "5",
    )
    assert r.code == 0, r.err
    v = float(blackbird_one_obstacle_value())
    assert f"{v:.6f}" in r.out
    assert "spend_critical" in r.out and "accept help" in r.out and "optimal (value)" in r.out


def test_refuses_a_large_scenario_with_an_estimate(capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("envs.blackbird")
    r = run_cli(capsys, "solve", "blackbird", "session", "--max-states", "300")
    assert r.code == 2
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "too large to solve exactly" in lines[0]
    assert "more than 300 distinct positions" in lines[0] and "estimate" in lines[0]


def test_toy_game_without_key_is_refused(capsys, toy) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(capsys, "solve", "toy_pig", "race")
    assert r.code == 2
    assert "cannot solve exactly" in r.err and len([ln for ln in r.err.splitlines() if ln.strip()]) == 1


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["blackbird", "session", "--set", "session.nope=1"], "unknown key 'session.nope'"),
        (["blackbird", "session", "--set", "session.sessions"], "--set needs KEY=VALUE"),
        (["blackbird", "session", "--set", "session.sessions=0"], "session.sessions"),
        (["blackbird", "session", "--opponent", "random"], "has one seat"),
        (["blackbird", "session", "--seat", "1"], "--seat must be between 0 and 0"),
        (["blackbird", "nowhere"], "unknown scenario 'nowhere'"),
        (["nothing", "session"], "unknown ruleset 'nothing'"),
        (["blackbird", "session", "--max-states", "0"], "--max-states must be at least 1"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, args: list[str], fragment: str) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("envs.blackbird")
    r = run_cli(capsys, "solve", *args)
    assert r.code == 2, r.out
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and fragment in lines[0], r.err


def test_estimate_only(capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("envs.blackbird")
    r = run_cli(capsys, "solve", "blackbird", "session", "--estimate", "--json")
    assert r.code == 0
    data = json.loads(r.out)
    assert data["tree_nodes"] > 1e6 and data["probes"] == 200


@pytest.mark.slow
def test_blackbird_short_session_value(capsys) -> None:  # type: ignore[no-untyped-def]
    """The shipped short run (2 obstacles): saving pool dice for later is a real choice here."""
    pytest.importorskip("envs.blackbird")
    data = solve_json(capsys, "blackbird", "session", "--rules", str(BB_SESSION))
    # one obstacle's value bounds each obstacle's pass chance; two obstacles cannot do better on average
    assert 0.5 < data["value"][0] < float(blackbird_one_obstacle_value())
    opts = {(o["context"], o["option"]): o["share"] for o in data["options"]}
    assert opts.get(("spend_ordinary", "spend_0_pool"), 0) > 0  # saves dice for the second obstacle sometimes


@pytest.mark.parametrize("stop_at", ["turn", "conseq"])
def test_wicked_age_key_adapter_blanks_only_what_the_future_cannot_see(stop_at: str) -> None:
    """Once the order is set (and again after an absolute result), blanking what the solver's key
    blanks changes nothing that follows: the same choices and dice give the same legal actions at
    every step and the same returns."""
    pytest.importorskip("envs.wicked_age")
    from agents.solver_keys import wicked_age_duel_blanks
    from envs import get_ruleset
    from envs.core.dice import Rng
    from envs.core.game import CHANCE, TERMINAL

    rs = get_ruleset("wicked_age")
    cfg = rs.default_config()
    checked = 0
    for seed in range(40):
        rng = Rng(seed)
        s = rs.new_game(cfg, "duel")
        while s.current_player() != TERMINAL and (
            wicked_age_duel_blanks(s) is None or (stop_at == "conseq" and s.conseq is None)
        ):
            if s.current_player() == CHANCE:
                s.apply_chance(s.sample_chance(rng))
            else:
                legal = s.legal_actions()
                s.apply_action(legal[int(rng.random() * len(legal))])
        if s.current_player() == TERMINAL:
            continue
        a, b = s.clone(), s.clone()
        blanks = wicked_age_duel_blanks(b)
        assert blanks is not None
        for attr, value in blanks.items():
            setattr(b, attr, value)
        ra, rb = Rng(1000 + seed), Rng(1000 + seed)
        while a.current_player() != TERMINAL:
            assert a.current_player() == b.current_player()
            if a.current_player() == CHANCE:
                o = a.sample_chance(ra)
                rb.random()
                a.apply_chance(o)
                b.apply_chance(o)
            else:
                assert a.legal_actions() == b.legal_actions()
                legal = a.legal_actions()
                x = legal[int(ra.random() * len(legal))]
                rb.random()
                a.apply_action(x)
                b.apply_action(x)
        assert b.current_player() == TERMINAL and a.returns() == b.returns()
        checked += 1
    assert checked >= 10


def test_no_persona_beats_the_optimum_exactly() -> None:
    """Exact evaluation of every storyteller persona on the one-task heist never exceeds the optimum,
    and the optimal policy evaluated exactly reproduces the optimum."""
    pytest.importorskip("envs.storyteller")
    from agents.registry import personas
    from agents.solver import evaluate_exactly
    from training.solve import solve_scenario

    res = solve_scenario(
        "storyteller", "heist", HERE / "solve_storyteller_heist.toml", ["heist.turns=4", 'heist.tasks=["virus"]']
    )
    assert evaluate_exactly(res.root, {0: res.policy()}).value[0] == pytest.approx(res.value[0], abs=1e-12)
    values = {name: evaluate_exactly(res.root, {0: cls()}).value[0] for name, cls in personas("storyteller").items()}
    assert values and all(v <= res.value[0] + 1e-12 for v in values.values()), values
    assert min(values.values()) < res.value[0]  # the decisions matter: someone plays worse than the optimum


@pytest.mark.slow
def test_wicked_age_one_conflict_against_a_persona() -> None:
    """The shipped one-conflict duel against `highest`: the optimum is at least every persona's exact value."""
    pytest.importorskip("envs.wicked_age")
    from agents.registry import personas
    from agents.solver import evaluate_exactly
    from training.solve import solve_scenario

    res = solve_scenario("wicked_age", "duel", HERE / "solve_wicked_age_duel.toml", opponent="highest")
    assert res.fixed == {1: "highest"} and res.stochastic_fixed_nodes == 0
    assert res.value[0] == pytest.approx(-res.value[1], abs=1e-12)
    opp = personas("wicked_age")["highest"]()
    for name, cls in personas("wicked_age").items():
        v = evaluate_exactly(res.root, {0: cls(), 1: opp}).value[0]
        assert v <= res.value[0] + 1e-12, name

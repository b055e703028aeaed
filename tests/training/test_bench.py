"""rulebreaker bench: a registry of named benchmarks; figures are reported, never asserted as speeds."""

from __future__ import annotations

import json

import pytest

from envs.core.errors import UserError
from tests.cli_helpers import run_cli
from training.bench import BENCHMARKS, BenchOptions, register_benchmark, run_benchmarks

TOY = BenchOptions(ruleset="toy_pig", scenario="race", steps=256, decisions=300, n_envs=2)


def test_builtin_benchmarks_are_registered():
    assert {"train", "inference", "vec"} <= set(BENCHMARKS)


def test_other_modules_can_register_a_benchmark(toy):
    @register_benchmark("unit-probe", "a benchmark registered by a test")
    def probe(opts: BenchOptions) -> dict:
        return {"scenario": f"{opts.ruleset} {opts.scenario}", "ratio": 1.0}

    try:
        assert run_benchmarks(["unit-probe"], TOY) == {"unit-probe": {"scenario": "toy_pig race", "ratio": 1.0}}
    finally:
        BENCHMARKS.pop("unit-probe")


def test_unknown_benchmark_is_a_user_error():
    with pytest.raises(UserError, match="valid: .*inference"):
        run_benchmarks(["warp-speed"], TOY)


def test_inference_benchmark_reports_ratios_and_agreement(toy):
    res = run_benchmarks(["inference"], TOY)["inference"]
    assert res["decisions"] == 300
    assert res["same_actions_as_predict"] == 1.0 and res["same_actions_batched"] == 1.0
    assert res["ratio"] > 0 and res["batched_ratio"] > 0  # a figure, not a speed requirement


def test_train_benchmark_reports_a_ratio_to_blackjack(toy):
    res = run_benchmarks(["train"], TOY)["train"]
    assert "Blackjack-v1" in res["reference"]
    assert res["reference_steps_per_s"] > 0 and res["steps_per_s"] > 0
    assert res["ratio"] == pytest.approx(res["steps_per_s"] / res["reference_steps_per_s"], rel=0.01)


def test_cli_bench_list_and_json(capsys, toy):
    r = run_cli(capsys, "bench", "--list")
    assert r.code == 0 and "inference" in r.out and "train" in r.out
    r = run_cli(
        capsys,
        "bench",
        "inference",
        "--ruleset",
        "toy_pig",
        "--scenario",
        "race",
        "--decisions",
        "50",
        "--steps",
        "256",
        "--json",
    )
    assert r.code == 0, r.err
    assert json.loads(r.out)["inference"]["same_actions_as_predict"] == 1.0
    r = run_cli(capsys, "bench", "nope")
    assert r.code == 2 and "nope" in r.err


def test_odds_benchmark_times_every_exact_table():
    res = run_benchmarks(["odds"], TOY)["odds"]
    from results.odds import odds_benchmarks

    assert set(res["median_ms_per_table"]) == set(odds_benchmarks())
    assert all(v >= 0 for v in res["median_ms_per_table"].values())

"""The Episode scenario as an environment: bounds, invariants, clone/key, sampling, seat counts."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason
from envs.core.gym_adapter import GameEnv
from envs.crossroads import RULESET
from envs.crossroads.actions import NUM_ACTIONS, Phase
from envs.crossroads.dice import odds
from envs.crossroads.episode import CrossroadsState
from envs.crossroads.observation import OBS_SIZE
from envs.crossroads.scenarios import DECISION_CONTEXTS, EPISODE, OPTION_GROUPS

from .helpers import brute_best, build, config


def random_play(st: CrossroadsState, rng: Rng, check=None, max_decisions: int = 20_000) -> int:
    n = 0
    while not st.is_terminal():
        if st.current_player() == CHANCE:
            st.apply_chance(st.sample_chance(rng))
            continue
        legal = st.legal_actions()
        assert legal, f"no legal action in {st.decision_context()}"
        if check is not None:
            check(st, legal)
        st.apply_action(legal[int(rng.random() * len(legal))])
        n += 1
        assert n < max_decisions
    return n


def invariants(st: CrossroadsState, legal: list[int]) -> None:
    cfg = st.cfg
    cap = cfg.character.max_conditions
    assert st.decision_context() in DECISION_CONTEXTS
    assert all(0 <= a < NUM_ACTIONS for a in legal)
    for a in legal:
        assert st.option_of(a) in OPTION_GROUPS
    for c in st.chars:
        assert all(0 <= s <= cfg.character.stat_cap for s in c.stats)
        assert 0 <= c.plus <= cap and 0 <= c.minus <= cap
        assert c.minus >= c.wounded + c.dying
        if c.alive and not (st.phase == Phase.BUILD and c.idx == st.chk_eid):
            assert all(s > 0 for s in c.stats) and not all(c.goals)
    for f in st.factions:
        assert 0 <= f.plus <= cap and 0 <= f.minus <= cap
        if f.alive:
            assert cfg.faction.writeoff_low < f.influence < cfg.faction.writeoff_high
    dead = sum(not c.alive for c in st.chars) + sum(not f.alive for f in st.factions)
    assert dead == st.exits
    for seat in range(st.num_players):
        obs = st.observation(seat)
        assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
        assert obs.min() >= 0.0 and obs.max() <= 1.0


@settings(max_examples=12, deadline=None)
@given(seed=st_.integers(0, 2**31), players=st_.integers(2, 5))
def test_random_play_keeps_invariants_and_ends(seed, players):
    st = CrossroadsState(config(episode__players=players))
    random_play(st, Rng(seed), invariants)
    out = st.outcome()
    assert out.reason in (EndReason.COMPLETED, EndReason.TIME_LIMIT)
    if out.reason == EndReason.COMPLETED:
        assert st.exits >= 3
    else:
        assert st.scene_no == st.cfg.episode.max_scenes
    assert len(out.returns) == players and all(-1.25 <= r <= 1.25 for r in out.returns)


def test_clone_is_independent_and_keys_match():
    rng = Rng(3)
    st = CrossroadsState(config())
    for _ in range(120):
        if st.is_terminal():
            break
        if st.current_player() == CHANCE:
            st.apply_chance(st.sample_chance(rng))
        else:
            st.apply_action(st.legal_actions()[0])
    cl = st.clone()
    assert cl.key() == st.key()
    hash(st.key())
    before = st.key()
    random_play(cl, Rng(5))
    assert st.key() == before and cl.key() != before


def test_chance_outcomes_sum_to_one():
    st = CrossroadsState(config(setup__first_player="roll"))
    assert math.isclose(sum(p for _, p in st.chance_outcomes()), 1.0)
    st.apply_chance(0)
    build(st, 4, 4)
    outs = st.chance_outcomes()
    assert len(outs) == 220 and math.isclose(sum(p for _, p in outs), 1.0)
    st2 = CrossroadsState(config(check__assignment="in_order"))
    build(st2, 4, 4)
    assert len(st2.chance_outcomes()) == 1000


def test_sampled_rolls_agree_with_exact_odds():
    """20,000 engine-sampled rolls: best successes for 6/3/3 and crossroads within 4 sigma of the exact odds."""
    stats = (6, 3, 3)
    exact = odds(stats)
    st = CrossroadsState(config())
    build(st, 6, 3)
    rng = Rng(2024)
    n = 20_000
    counts = {k: 0 for k in exact}
    for _ in range(n):
        d = st.sample_chance(rng)
        best, _ = brute_best(d, stats)
        counts[str(best)] += 1
        distinct = len(set(d))
        if distinct == 2:
            counts["crossroads_double"] += 1
        elif distinct == 1:
            counts["crossroads_triple"] += 1
    for k, p in exact.items():
        pf = float(p)
        sigma = math.sqrt(n * pf * (1 - pf))
        assert abs(counts[k] - n * pf) <= 4 * sigma + 1, (k, counts[k], n * pf)
    assert exact["crossroads_double"] == Fraction(27, 100)


@pytest.mark.parametrize("players", [2, 5])
def test_gym_env_with_other_seat_counts(players):
    cfg = config(episode__players=players)
    env = GameEnv(RULESET, "episode", config=cfg, seat=players - 1)
    assert env.num_players == players
    obs, info = env.reset(seed=1)
    steps = 0
    for _ in range(3):
        done = False
        while not done:
            mask = env.action_masks()
            a = int(np.flatnonzero(mask)[steps % mask.sum()])
            obs, r, term, trunc, info = env.step(a)
            assert env.observation_space.contains(obs)
            assert not info["illegal_action"]
            steps += 1
            done = term or trunc
        assert "outcome" in info and steps < EPISODE.max_episode_steps * 3
        obs, info = env.reset()


def test_scene_limit_is_reported_as_time_limit():
    st = CrossroadsState(config(episode__max_scenes=3))
    random_play(st, Rng(1))
    out = st.outcome()
    assert out.reason in (EndReason.TIME_LIMIT, EndReason.COMPLETED)
    assert st.scene_no <= 3


def test_env_sizes_and_terminal():
    cfg = RULESET.default_config()
    assert EPISODE.action_count(cfg) == NUM_ACTIONS and EPISODE.observation_length(cfg) == OBS_SIZE
    assert EPISODE.players(config(episode__players=4)) == 4
    st = CrossroadsState(config())
    random_play(st, Rng(0))
    assert st.current_player() == TERMINAL and st.legal_actions() == [] and st.phase == Phase.OVER


@pytest.mark.parametrize("path", sorted((RULESET.variants_dir).glob("*.toml")), ids=lambda p: p.stem)
def test_variants_load_and_play(path):
    from envs.core.config import load_config, variant_meta

    meta = variant_meta(path)
    assert meta["kind"] in ("windfall", "exploit", "control") and meta["description"]
    assert meta["kind"] != "control" or meta["expect"] == []
    cfg = load_config(RULESET, path)
    assert cfg != RULESET.default_config()
    st = CrossroadsState(cfg)
    random_play(st, Rng(11), invariants)


def test_variant_kinds_present():
    from envs.core.config import variant_meta

    kinds = sorted(variant_meta(p)["kind"] for p in RULESET.variants_dir.glob("*.toml"))
    assert kinds == ["control", "exploit", "windfall"]


def test_knobs_are_valid_overrides():
    from envs.core.config import with_override

    assert 4 <= len(RULESET.knobs) <= 8
    for knob in RULESET.knobs:
        for v in knob.values:
            with_override(RULESET.default_config(), knob.key, v)


def test_grouped_chance_samples_what_it_lists():
    """check.chance_detail = "classes" (the small variant): every sampled roll is one of the listed outcomes,
    whose probabilities sum to 1, and a game plays to the end."""
    from pathlib import Path

    from envs.core.config import load_config

    cfg = load_config(RULESET, Path(RULESET.rules_path).parent / "small.toml")
    rng = Rng(7)
    for _ in range(20):
        st = CrossroadsState(cfg)
        while not st.is_terminal():
            if st.current_player() == CHANCE:
                outcomes = dict(st.chance_outcomes())
                assert math.isclose(sum(outcomes.values()), 1.0, abs_tol=1e-12)
                o = st.sample_chance(rng)
                assert o in outcomes, (o, sorted(outcomes))
                st.apply_chance(o)
                continue
            legal = st.legal_actions()
            st.apply_action(legal[int(rng.random() * len(legal))])


def test_a_table_of_twelve_plays_to_the_end_with_masks_from_the_legal_list():
    """Issue 21: the rules name no table size, so episode.players reaches 12 (a [decision]) and the action table
    and observation grow with the seats, characters and factions the config allows. A 12-seat game with 16
    character and 14 faction slots: every mask the env gives is the legal list, observations stay in
    [0, 1] at the grown length, labels name the slots past the default ones, and games end."""
    from gymnasium.utils.env_checker import check_env

    cfg = config(episode__max_characters=16, episode__max_factions=14, episode__players=12)
    n_actions, n_obs = EPISODE.action_count(cfg), EPISODE.observation_length(cfg)
    # the layout of the rules card: 51 fixed ids + one target per slot; 17 + seats + 30 global features
    assert n_actions == 51 + 16 + 14
    assert n_obs == (17 + 12 + 30) + 16 * 18 + 14 * 9
    env = GameEnv(RULESET, "episode", config=cfg, seat=11)
    check_env(env, skip_render_check=True)
    rng = Rng(3)
    labels: set[str] = set()
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            st = env.state
            legal = st.legal_actions()
            assert [int(a) for a in np.flatnonzero(env.action_masks())] == sorted(legal)
            assert [int(a) for a in np.flatnonzero(info["action_mask"])] == sorted(legal)
            assert obs.shape == (n_obs,) and obs.min() >= 0.0 and obs.max() <= 1.0
            labels.update(st.action_label(a) for a in legal)
            obs, _, term, trunc, info = env.step(legal[int(rng.random() * len(legal))])
            done = term or trunc
        assert info["outcome"]["reason"] in ("completed", "time_limit") and len(info["outcome"]["returns"]) == 12
    st = CrossroadsState(cfg)
    random_play(st, Rng(11))
    assert len(st.factions) >= 12 and len(st.chars) >= 12  # slots past the default 10 / 8 were used
    assert st.factions[11].name == "faction 12" and st.chars[11].name == "character 12"


def _one_scene_small():
    from pathlib import Path

    from envs.core.config import load_config, with_override

    cfg = load_config(RULESET, Path(RULESET.rules_path).parent / "small.toml")
    return with_override(cfg, "episode.max_scenes", 1)


@pytest.mark.slow  # about 40 s per seat on the loaded 2-core machine (the full key's solve is the slow one)
@pytest.mark.parametrize("seat", [0, 1])
def test_key_leaves_out_only_what_no_rule_reads_again(seat):
    """State.key drops the leftovers of finished checks and scenes (State.full_key keeps every field): the exact
    solve over the canonical key gives the same values as over the full key, for the optimum and for random
    play, in fewer positions."""
    from agents.registry import make_agent
    from agents.solver import solve
    from envs.core.policy import UniformRandom

    cfg = _one_scene_small()
    root = CrossroadsState(cfg)
    n = EPISODE.action_count(cfg)
    for mine in (None, UniformRandom()):
        opp = {1 - seat: make_agent("crossroads", "builder", "episode")}
        if mine is not None:
            opp[seat] = mine
        short = solve(root, seat, opp, key=lambda s: s.key(), num_actions=n)
        full = solve(root, seat, opp, key=lambda s: s.full_key(), num_actions=n)
        assert short.value == pytest.approx(full.value, abs=1e-12)
        assert short.num_states < full.num_states

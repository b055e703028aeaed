"""Protocol properties of both scenarios: observations, chance nodes, clone/key, analysis hooks, variants."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envs  # noqa: F401  (registers the ids)
from envs.blackbird import RULESET
from envs.blackbird.actions import Maneuver, SessionAct, duel_spend, session_spend
from envs.blackbird.duel import DuelState
from envs.blackbird.session import SessionState
from envs.core.config import load_config, variant_meta, with_override
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason

FINDING_KINDS = {
    "dominant_strategy",
    "dead_option",
    "dead_rule",
    "fragile_rule",
    "seat_advantage",
    "resource_runaway",
    "non_termination",
    "snowball",
    "exploit",
}


def play_random(scenario: str, seed: int, check=None, cfg=None):  # type: ignore[no-untyped-def]
    cfg = cfg or RULESET.default_config()
    sc = RULESET.scenario(scenario)
    s = sc.new_game(cfg)
    rng = Rng(seed)
    steps = 0
    while True:
        p = s.current_player()
        if p == TERMINAL:
            return s, steps
        if p == CHANCE:
            outs = s.chance_outcomes()
            assert sum(pr for _, pr in outs) == pytest.approx(1.0)
            o = s.sample_chance(rng)
            assert o in {x for x, _ in outs}
            s.apply_chance(o)
            continue
        legal = s.legal_actions()
        assert legal and all(0 <= a < sc.action_count(cfg) for a in legal)
        obs = s.observation(p)
        lo, hi = sc.observation_bounds
        assert obs.shape == (sc.observation_length(cfg),) and obs.dtype == np.float32
        assert np.all(obs >= lo) and np.all(obs <= hi), obs
        for a in legal:
            assert s.option_of(a) in sc.option_groups
        if check:
            check(s)
        s.apply_action(legal[int(rng.random() * len(legal))])
        steps += 1
        assert steps < sc.max_episode_steps


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), scenario=st.sampled_from(["session", "duel"]))
def test_random_play_keeps_invariants(seed: int, scenario: str) -> None:
    cfg = RULESET.default_config()

    def check(s) -> None:  # type: ignore[no-untyped-def]
        res = s.resources(s.current_player())
        assert 0 <= res["pool"] <= cfg.pool.cap  # type: ignore[attr-defined]
        if scenario == "duel":
            assert res["hp"] > cfg.combat.death_at  # type: ignore[attr-defined]
        else:
            assert 0 <= res["helper_pool"] <= cfg.session.helper_pool  # type: ignore[attr-defined]

    s, _ = play_random(scenario, seed, check)
    out = s.outcome()
    assert out is not None
    if scenario == "session":
        assert out.reason == EndReason.COMPLETED and 0.0 <= out.returns[0] <= 1.0
    else:
        assert out.reason in (EndReason.KNOCKOUT, EndReason.TIME_LIMIT)
        assert sorted(out.returns) in ([-1.0, 1.0], [0.0, 0.0])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), scenario=st.sampled_from(["session", "duel"]), cut=st.integers(0, 40))
def test_clone_is_independent_and_key_tracks_position(seed: int, scenario: str, cut: int) -> None:
    cfg = RULESET.default_config()
    s = RULESET.new_game(cfg, scenario)
    rng = Rng(seed)
    for _ in range(cut):
        if s.is_terminal():
            break
        if s.is_chance():
            s.apply_chance(s.sample_chance(rng))
        else:
            la = s.legal_actions()
            s.apply_action(la[int(rng.random() * len(la))])
    c = s.clone()
    assert c.key() == s.key() and hash(c.key()) == hash(s.key())
    before = s.key()
    r2 = Rng(seed + 1)
    while not c.is_terminal():
        if c.is_chance():
            c.apply_chance(c.sample_chance(r2))
        else:
            c.apply_action(c.legal_actions()[0])
    assert s.key() == before


def test_a_perk_earned_by_a_session_clone_stays_with_the_clone() -> None:
    """Clones share the sheet until play changes it: Rule 10 on a clone leaves the original's sheet and key."""
    cfg = RULESET.default_config()
    s = SessionState(cfg)  # type: ignore[arg-type]
    s.apply_chance(0)  # the brawl, difficulty 3
    s.apply_action(SessionAct.TRAIT_0)  # Mercenary: 4 dice
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(1))  # 5 dice
    before = s.key()
    c = s.clone()
    c.force_faces([6, 6, 6, 2, 1])  # three sixes against difficulty 3: a perk for the brawl
    assert c.char.perks == {"brawl": 1} and s.char.perks == {} and s.key() == before
    s.force_faces([6, 5, 4, 2, 1])  # a pass without a perk
    for state, dice in ((c, 5), (s, 4)):
        state.apply_chance(0)  # the brawl again
        assert state.pool_for(0).total == dice  # the perk's die only on the clone's roll
    assert SessionState(cfg).char.perks == {}  # type: ignore[arg-type]  # a new session starts from the sheet


def test_a_perk_earned_by_a_duel_clone_stays_with_the_clone() -> None:
    """Rule 10 on a stay-up roll of a clone: the original fighter's sheet, a new duel's and the key are unchanged."""
    cfg = with_override(RULESET.default_config(), "duel.start_distance", 1)
    d = DuelState(cfg)  # type: ignore[arg-type]
    d.f[1].hp = 1
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))
    d.apply_action(duel_spend(0))
    d.force_faces([6, 5, 4, 1, 1])
    d.force_faces([4, 1, 1, 1])  # margin 2: -2 HP, below zero: a stay-up roll
    before = d.key()
    c = d.clone()
    c.apply_action(duel_spend(0))  # 4 dice vs difficulty 4
    c.force_faces([6, 6, 6, 6])  # four sixes: stays up with a perk
    assert c.f[1].char.perks == {"stay up": 1} and not c.is_terminal()
    assert d.f[1].char.perks == {} and d.key() == before
    assert DuelState(cfg).f[1].char.perks == {}  # type: ignore[arg-type]


@pytest.mark.parametrize("scenario", ["session", "duel"])
def test_observations_are_fresh_arrays(scenario: str) -> None:
    """Each observation is the caller's to keep: changing one changes neither the state nor the next one."""
    seen = 0

    def check(s) -> None:  # type: ignore[no-untyped-def]
        nonlocal seen
        first = s.observation(s.current_player())
        kept = first.copy()
        first += 0.25
        again = s.observation(s.current_player())
        assert again is not first and np.array_equal(again, kept) and again.flags.writeable
        seen += 1

    for seed in range(3):
        play_random(scenario, seed, check=check)
    assert seen > 30


def test_rule9_at_session_end_is_the_same_for_every_session_that_reaches_it() -> None:
    """Two sessions reaching the end of a session with the same sheet advance alike (Rule 9: 3 XP buys the first
    tag's level 2 for 2 XP; the next level costs 2, so 1 XP is left)."""
    cfg = with_override(RULESET.default_config(), "session.obstacles_per_session", 1)
    runs = []
    for _ in range(2):
        s = SessionState(cfg)  # type: ignore[arg-type]
        s.apply_chance(0)
        s.apply_action(SessionAct.TRAIT_0)
        s.apply_action(SessionAct.DECLINE_HELP)
        s.apply_action(session_spend(0))
        s.force_faces([4, 5, 1, 1])  # 2 successes vs 3: a failure
        s.apply_action(SessionAct.GIVE_UP)  # the session's one obstacle is over
        assert s.session_no == 1 and s.char.xp == 1 and s.char.tags[0]["fist-fighting"] == 2
        runs.append((s.char.key(), s.key(), [e.text for e in s.log]))
    assert runs[0] == runs[1]
    assert SessionState(cfg).char.xp == 0  # type: ignore[arg-type]


def test_time_limit_ends_a_stalled_duel() -> None:
    cfg = with_override(RULESET.default_config(), "duel.max_turns", 6)
    s = RULESET.new_game(cfg, "duel")

    while not s.is_terminal():
        s.apply_action(Maneuver.AIM)
    out = s.outcome()
    assert out is not None and out.reason == EndReason.TIME_LIMIT and out.returns == (0.0, 0.0)


def test_short_session_is_small_enough_to_enumerate() -> None:
    """A 1×2 session's whole game tree over chance_outcomes() is finite and its values are in [0, 1]."""
    cfg = RULESET.default_config()
    for k, v in (("session.sessions", 1), ("session.obstacles_per_session", 1), ("session.retries", 0)):
        cfg = with_override(cfg, k, v)
    memo: dict[object, float] = {}

    def value(s: SessionState) -> float:
        k = s.key()
        if k in memo:
            return memo[k]
        if s.is_terminal():
            v = s.returns()[0]
        elif s.is_chance():
            v = 0.0
            for o, p in s.chance_outcomes():
                c = s.clone()
                c.apply_chance(o)
                v += p * value(c)  # type: ignore[arg-type]
        else:
            v = max(value(_after(s, a)) for a in s.legal_actions())
        memo[k] = v
        return v

    def _after(s: SessionState, a: int) -> SessionState:
        c = s.clone()
        c.apply_action(a)
        return c

    best = value(SessionState(cfg))  # type: ignore[arg-type]
    assert 0.5 < best < 1.0


def test_resources_and_contexts() -> None:
    cfg = RULESET.default_config()
    s = RULESET.new_game(cfg, "duel")
    assert {"pool", "hp"} <= set(s.resources(0))
    assert s.decision_context() == "maneuver"
    t = RULESET.new_game(cfg, "session")
    assert "pool" in t.resources(0)


@pytest.mark.parametrize("path", sorted((RULESET.variants_dir or ".").glob("*.toml")), ids=lambda p: p.stem)
def test_variants_load_and_document_themselves(path) -> None:  # type: ignore[no-untyped-def]
    cfg = load_config(RULESET, path)
    assert cfg != RULESET.default_config()
    meta = variant_meta(path)
    assert meta["kind"] in {"windfall", "exploit", "control"} and meta["description"]
    assert set(meta["expect"]) <= FINDING_KINDS
    assert (meta["kind"] == "control") == (meta["expect"] == [])


def test_variant_kinds_present() -> None:
    kinds = {variant_meta(p)["kind"] for p in (RULESET.variants_dir or ".").glob("*.toml")}  # type: ignore[union-attr]
    assert kinds == {"windfall", "exploit", "control"}


def test_knobs_are_valid_overrides() -> None:
    cfg = RULESET.default_config()
    assert 4 <= len(RULESET.knobs) <= 8
    for knob in RULESET.knobs:
        for v in knob.values:
            with_override(cfg, knob.key, v)


def test_control_condition_is_never_inflicted() -> None:
    cfg = RULESET.default_config()
    assert all(o.condition_on_failure != "trapped" for o in cfg.session.obstacles)  # type: ignore[attr-defined]


@pytest.mark.parametrize("env_id", ["rulebreaker/BlackbirdSession-v0", "rulebreaker/BlackbirdDuel-v0"])
def test_gym_env_runs(env_id: str) -> None:
    env = gym.make(env_id)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    done = False
    rng = np.random.default_rng(3)
    while not done:
        mask = env.unwrapped.action_masks()
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        done = term or trunc
    assert "outcome" in info


# -- Issue 15 item 14: bounds come from the rules, not from the action space ------------------------------
CAP40 = "[pool]\ncap = 40\n"


@pytest.mark.parametrize("scenario", ["session", "duel"])
def test_cap40_variant_loads_and_sizes_the_spend_range(tmp_path, scenario: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "cap40.toml"
    path.write_text(CAP40)
    cfg = load_config(RULESET, path)
    sc = RULESET.scenario(scenario)
    assert cfg.pool.cap == 40  # type: ignore[attr-defined]
    base = RULESET.default_config()
    assert sc.action_count(cfg) == sc.action_count(base) + 30  # one "spend k" id per pool die the cap allows
    s = sc.new_game(cfg)
    rng = Rng(5)
    while not s.is_terminal():  # give the first decider 40 pool dice and reach a spend decision
        if s.is_chance():
            s.apply_chance(s.sample_chance(rng))
            continue
        if "spend" in s.decision_context():
            break
        legal = s.legal_actions()
        attacks = [a for a in (Maneuver.ATTACK, Maneuver.MOVE_ATTACK) if a in legal]  # the duel: go for it
        s.apply_action(attacks[0] if attacks else legal[0])
    seat = s.current_player()
    if scenario == "session":
        s.pool = 40  # type: ignore[attr-defined]
    else:
        s.f[seat].pool = 40  # type: ignore[attr-defined]
    legal = s.legal_actions()
    assert len(legal) == 41 and max(legal) < sc.action_count(cfg)
    assert s.action_label(max(legal)) == "spend 40 pool dice" and s.option_of(max(legal)) == "spend_all_pool"
    s.apply_action(max(legal))
    while not s.is_chance():  # the duel's defender decides too
        s.apply_action(s.legal_actions()[0])
    assert sum(p for _, p in s.chance_outcomes()) == pytest.approx(1.0)
    pool = s.breakdown if scenario == "session" else s.ex.att_dice  # type: ignore[attr-defined]
    assert pool.pool == 40


@pytest.mark.parametrize("env_id", ["rulebreaker/BlackbirdSession-v0", "rulebreaker/BlackbirdDuel-v0"])
def test_cap40_variant_plays_through_gym_make_and_passes_check_env(tmp_path, env_id: str) -> None:  # type: ignore[no-untyped-def]
    from gymnasium.utils.env_checker import check_env

    path = tmp_path / "cap40.toml"
    path.write_text(CAP40 + "start = 40\n")
    env = gym.make(env_id, rules=path)
    n = env.action_space.n  # type: ignore[attr-defined]
    assert n == gym.make(env_id).action_space.n + 30  # type: ignore[attr-defined]
    check_env(env.unwrapped, skip_render_check=True)
    rng = np.random.default_rng(7)
    most = 0
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()  # type: ignore[attr-defined]
            assert mask.shape == (n,)
            most = max(most, int(mask.sum()))
            obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert env.observation_space.contains(obs)
            done = term or trunc
        assert "outcome" in info
    assert most > 21  # spend decisions with more than the old 0..20 range were offered


def test_cap40_variant_plays_random_games_through_the_engine(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "cap40.toml"
    path.write_text(CAP40 + "start = 40\n")
    cfg = load_config(RULESET, path)
    for scenario in ("session", "duel"):
        for seed in range(5):
            s, _ = play_random(scenario, seed, cfg=cfg)
            assert s.outcome() is not None

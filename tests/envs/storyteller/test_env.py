"""Scenario-level properties: observation bounds (raw vector), legal actions, chance tables, clone/key,
termination, option groups; hypothesis over random legal play; the one-task heist solved exactly."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.core.dice import Rng
from envs.core.game import CHANCE, EndReason
from envs.storyteller import RULESET
from envs.storyteller.duel import DuelState
from envs.storyteller.heist import HeistState, Status

from .helpers import make_cfg

SCEN = {"heist": RULESET.scenarios["heist"], "duel": RULESET.scenarios["duel"]}


def random_game(name: str, seed: int, cfg=None, check=None):
    cfg = cfg or make_cfg()
    sc = SCEN[name]
    state = sc.new_game(cfg)
    rng = Rng(seed)
    decisions = 0
    while not state.is_terminal():
        p = state.current_player()
        if p == CHANCE:
            outs = state.chance_outcomes()
            assert sum(pr for _, pr in outs) == pytest.approx(1.0)
            o = state.sample_chance(rng)
            assert o in dict(outs)
            state.apply_chance(o)
        else:
            legal = state.legal_actions()
            assert legal and all(0 <= a < sc.action_count(cfg) for a in legal)
            for a in legal:
                assert state.option_of(a) in sc.option_groups
                assert state.action_label(a)
            obs = state.observation(p)
            lo, hi = sc.observation_bounds
            assert obs.shape == (sc.observation_length(cfg),) and obs.dtype == np.float32
            assert (obs >= lo).all() and (obs <= hi).all()
            if check:
                check(state)
            state.apply_action(legal[int(rng.random() * len(legal))])
            decisions += 1
        assert decisions <= sc.max_episode_steps
    return state, decisions


def _invariants(state):
    cfg = state.cfg
    if isinstance(state, HeistState):
        assert 0 <= state.willpower <= cfg.willpower.points
        assert state.turn <= state.turn_limit <= cfg.heist.turns
        # the limit reaches the turn in play only by a botch in it (the turn's plan still finishes)
        assert state.turn < state.turn_limit or state.botches > 0
        for t in state.tasks:
            assert t.progress >= 0 and (t.progress < t.spec.target or t.status == Status.DONE)
        assert state.resources(0)["willpower"] == state.willpower
    else:
        assert all(0 <= w <= cfg.willpower.points for w in state.willpower)
        assert all(0 <= p < cfg.duel.target for p in state.progress)
        assert state.turn < cfg.duel.turns


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), name=st.sampled_from(["heist", "duel"]))
def test_random_play_keeps_invariants_and_ends_by_itself(seed, name):
    state, _ = random_game(name, seed, check=_invariants)
    out = state.outcome()
    assert out is not None
    if name == "heist":
        assert out.reason in (EndReason.COMPLETED, EndReason.TIME_LIMIT)
        assert 0.0 <= out.returns[0] <= 1.0
    else:
        assert out.reason in (EndReason.KNOCKOUT, EndReason.TIME_LIMIT)
        assert sum(out.returns) == 0


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), variant=st.sampled_from(sorted(p.name for p in RULESET.variants_dir.glob("*.toml"))))
def test_variants_play_to_the_end(seed, variant):
    from envs.core.config import load_config

    cfg = load_config(RULESET, RULESET.variants_dir / variant)
    for name in SCEN:
        random_game(name, seed, cfg=cfg, check=_invariants)


def test_clone_is_independent_and_key_matches():
    for name in SCEN:
        state = SCEN[name].new_game(make_cfg())
        rng = Rng(3)
        for _ in range(25):
            if state.is_terminal():
                break
            c = state.clone()
            assert c.key() == state.key()
            hash(c.key())
            if state.current_player() == CHANCE:
                o = state.sample_chance(rng)
                c.apply_chance(o)
                state.apply_chance(o)
            else:
                a = state.legal_actions()[-1]
                snapshot = state.key()
                c.apply_action(a)
                assert state.key() == snapshot  # the original did not move
                state.apply_action(a)
            assert c.key() == state.key()


def test_heist_time_limit_ends_the_game_well_inside_max_steps():
    lengths = [random_game("heist", s)[1] for s in range(200)]
    assert max(lengths) < SCEN["heist"].max_episode_steps // 2
    reasons = {random_game("heist", s)[0].outcome().reason for s in range(200)}
    assert EndReason.TIME_LIMIT in reasons


def test_duel_observation_hides_the_opponents_declaration():
    s = DuelState(make_cfg())
    before = s.observation(1).copy()
    s.apply_action(1)  # Asha declares two actions
    s.apply_action(2)
    assert np.array_equal(s.observation(1)[5:15], np.zeros(10)) or s.current_player() == 0
    assert np.array_equal(s.observation(1)[:5], before[:5])


def test_duel_seats_are_mirrored_in_observations():
    s = DuelState(make_cfg())
    s.progress = [2, 5]
    s.willpower = [1, 3]
    a, b = s.observation(0), s.observation(1)
    assert a[0] == b[1] and a[1] == b[0] and a[2] == b[3]


def test_one_task_heist_solved_exactly_matches_brute_force():
    """A one-task, one-turn heist (move the tree: 5 dice at 8) without Willpower: the optimal value is
    P(net >= 1), counted over all 10**5 faces."""
    from agents.solver import solve

    cfg = make_cfg(heist__tasks=["tree"], heist__draw=0, heist__turns=1, heist__ally_pool=0, willpower__points=0)
    hits = sum(1 for f in itertools.product(range(1, 11), repeat=5) if sum(x >= 8 for x in f) - f.count(1) >= 1)
    res = solve(HeistState(cfg))
    assert res.value[0] == pytest.approx(float(Fraction(hits, 10**5)), abs=1e-12)
    with_wp = solve(HeistState(make_cfg(heist__tasks=["tree"], heist__draw=0, heist__turns=1, heist__ally_pool=0)))
    assert with_wp.value[0] == pytest.approx(1.0)  # Willpower guarantees the one success


def test_one_task_documents_heist_is_small_enough_to_solve():
    from agents.solver import solve

    cfg = make_cfg(heist__tasks=["documents"], heist__draw=0, heist__turns=5, heist__ally_pool=0)
    res = solve(HeistState(cfg))
    assert 0.0 < res.value[0] < 1.0 and res.num_states < 200_000


def _feasible_by_search(state, n, k0, used):
    """Brute-force twin of HeistState._feasible: fill places k0+1..n one by one, trying every task."""
    if k0 >= n:
        return True
    for s, t in enumerate(state.tasks):
        if t.status != Status.ACTIVE or (state.cfg.extended.one_roll_per_task and s in used):
            continue
        fits = any(t.possible(ap) and p - (n + k0 if n > 1 else 0) >= 1 for ap, p in enumerate(t.pools))
        if fits and _feasible_by_search(state, n, k0 + 1, (*used, s)):
            return True
    return False


@settings(max_examples=300, deadline=None)
@given(
    tasks=st.lists(
        st.sampled_from(["documents", "house", "drive", "autopsy", "virus", "tree", "phone", "shoot"]),
        min_size=1,
        max_size=3,
        unique=True,
    ),
    attempts=st.lists(st.integers(1, 6), min_size=3, max_size=3),
    statuses=st.lists(st.sampled_from(list(Status)), min_size=3, max_size=3),
    one_roll=st.booleans(),
    n=st.integers(1, 3),
    k0=st.integers(0, 3),
    used=st.lists(st.integers(0, 2), max_size=2),
    strength=st.integers(0, 5),
)
def test_feasibility_by_capacities_matches_brute_force(tasks, attempts, statuses, one_roll, n, k0, used, strength):
    """Rules 9 and 11: the capacity check (Hall's condition) agrees with trying every assignment."""
    character = dict(make_cfg().heist.character, strength=strength, wits=strength)
    cfg = make_cfg(heist__tasks=tasks, heist__draw=0, extended__one_roll_per_task=one_roll, heist__character=character)
    s = HeistState(cfg)
    for t, a, stt in zip(s.tasks, attempts, statuses, strict=False):
        t.attempt, t.status = a, stt
    used_t = tuple(u for u in used if u < len(s.tasks))
    assert s._feasible(n, k0, used_t) == _feasible_by_search(s, n, k0, used_t)

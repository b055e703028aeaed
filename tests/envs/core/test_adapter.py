import dataclasses
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from hypothesis import given, settings
from hypothesis import strategies as st
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from envs.core.dice import Rng
from envs.core.game import TERMINAL
from envs.core.gym_adapter import GameEnv
from envs.core.play import advance
from envs.core.policy import UniformRandom


def rollout(env: GameEnv, seed: int, steps: int = 200) -> list[tuple]:
    obs, info = env.reset(seed=seed)
    traj = [tuple(obs)]
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        legal = np.flatnonzero(env.action_masks())
        a = int(rng.choice(legal))
        obs, r, term, trunc, info = env.step(a)
        traj.append((a, r, term, tuple(obs)))
        if term or trunc:
            obs, info = env.reset()
            traj.append(tuple(obs))
    return traj


def test_toy_passes_both_checkers(toy):
    env = GameEnv(toy, "race")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env, skip_render_check=True)
        sb3_check_env(env, warn=True)


def test_registered_toy_id_makes_env(toy):
    env = gym.make("rulebreaker/ToyPigRace-v0")
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert info["action_mask"].dtype == bool


def test_same_seed_same_trajectory_different_seed_differs(toy):
    a = rollout(GameEnv(toy, "race"), seed=7)
    b = rollout(GameEnv(toy, "race"), seed=7)
    c = rollout(GameEnv(toy, "race"), seed=8)
    assert a == b
    assert a != c


def test_illegal_action_ends_episode_with_penalty(toy):
    env = GameEnv(toy, "race", illegal_action_penalty=-2.5)
    env.reset(seed=0)

    class OnlyRoll:
        pass

    # make ROLL illegal by asking for an action id outside the legal set: id 5 does not exist
    obs, r, term, trunc, info = env.step(5)
    assert term and not trunc
    assert r == -2.5
    assert info["illegal_action"] is True


def test_terminal_reward_is_the_seats_return(toy):
    env = GameEnv(toy, "race", seat=1)
    total_wins = 0
    for ep in range(30):
        env.reset(seed=ep)
        term = False
        while not term:
            obs, r, term, trunc, info = env.step(0 if env.state.turn_total < 10 else 1)
        out = info["outcome"]
        assert r == out["returns"][1]
        total_wins += out["winner"] == 1
    assert 0 < total_wins < 30


def test_chance_outcomes_sum_to_one_and_advance_reaches_terminal(toy):
    state = toy.new_game(toy.default_config(), "race")
    state.apply_action(0)
    assert abs(sum(p for _, p in state.chance_outcomes()) - 1) < 1e-12
    advance(state, Rng(1), [UniformRandom(), UniformRandom()], 2)
    assert state.current_player() == TERMINAL
    assert state.outcome() is not None


def test_clone_is_independent(toy):
    s = toy.new_game(toy.default_config(), "race")
    s.apply_action(0)
    c = s.clone()
    c.apply_chance(4)
    assert s.turn_total == 0 and c.turn_total == 4


@pytest.mark.parametrize("seat", [0, 1])
def test_env_seat_gets_decisions(toy, seat):
    env = GameEnv(toy, "race", seat=seat)
    env.reset(seed=1)
    assert env.state.current_player() == seat


def test_step_after_illegal_action_raises_until_reset(toy):
    env = GameEnv(toy, "race")
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(env.action_space.n)  # an id outside the action space

    assert terminated and info["illegal_action"]
    legal = int(np.flatnonzero(env.action_masks())[0])
    with pytest.raises(RuntimeError, match="reset"):
        env.step(legal)
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # playable again after reset


def test_registered_ids_check_the_order_themselves():
    """The ids register without gymnasium's OrderEnforcing and PassiveEnvChecker: GameEnv's own check raises what
    OrderEnforcing would (gymnasium's ResetNeeded), and the wrapper stack is TimeLimit around the env alone."""
    import envs  # noqa: F401  (registers the ids)
    from envs.core.registry import all_rulesets

    for rs in all_rulesets().values():
        for name in rs.scenarios:
            env = gym.make(rs.env_id(name))
            assert isinstance(env, gym.wrappers.TimeLimit) and env.env is env.unwrapped, env
            with pytest.raises(gym.error.ResetNeeded, match="reset"):
                env.step(0)
            with pytest.raises(gym.error.ResetNeeded, match="reset"):
                env.unwrapped.action_masks()
            assert env.render() is None  # nothing to narrate before reset(): no error either
            env.close()


@pytest.mark.parametrize("env_id", ["rulebreaker/WickedAgeMelee-v0", "rulebreaker/HallownestDuel-v0"])
def test_legality_is_the_engines_not_the_users_copy_of_the_mask(env_id):
    """The mask handed out is the caller's: changing it changes nothing. A legal id it clears stays legal, and an id
    it sets stays illegal."""
    import envs  # noqa: F401  (registers the ids)

    env = gym.make(env_id)
    env.reset(seed=0)
    for _ in range(50):
        mask = env.unwrapped.action_masks()
        legal = np.flatnonzero(mask)
        illegal = np.flatnonzero(~mask)
        mask[:] = ~mask  # the caller's own array
        if len(illegal):
            assert len(illegal) < env.action_space.n
            break
        _, _, terminated, truncated, info = env.step(int(legal[0]))
        assert not info["illegal_action"]
        if terminated or truncated:
            env.reset()
    else:
        pytest.fail("no decision with an illegal id in 50 steps")
    _, _, terminated, _, info = env.step(int(legal[0]))  # the one the caller's mask now forbids
    assert not info["illegal_action"]
    if not terminated:
        mask = env.unwrapped.action_masks()
        forbidden = int(np.flatnonzero(~mask)[0])
        mask[:] = True
        _, _, terminated, _, info = env.step(forbidden)
        assert terminated and info["illegal_action"] and info["illegal_action_id"] == forbidden


def test_step_after_the_game_ended_raises_until_reset(toy):
    """A game that reached its end by the rules (not by an illegal action) takes no more steps either."""
    env = GameEnv(toy, "race")
    env.reset(seed=3)
    term = False
    while not term:
        _, _, term, trunc, info = env.step(0 if env.state.turn_total < 10 else 1)
        assert not trunc
    assert "outcome" in info and not info["illegal_action"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=4)
    env.step(0)  # playable again after reset


def test_action_and_observation_sizes_may_follow_the_config(toy):
    from dataclasses import replace

    race = toy.scenarios["race"]
    sized = replace(
        race, num_actions=lambda cfg: race.num_actions + 3, observation_size=lambda cfg: race.observation_size
    )
    cfg = toy.default_config()
    assert sized.action_count(cfg) == race.num_actions + 3
    assert sized.observation_length(cfg) == race.observation_size
    assert race.action_count(cfg) == race.num_actions


@pytest.mark.parametrize("bad", [0.0, 1.9, float("nan"), True, "0", None, np.float32(1.0), np.array([1])])
def test_anything_but_an_integral_action_id_is_illegal(toy, bad):
    env = GameEnv(toy, "race")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(bad)
    assert terminated and info["illegal_action"] and reward == env.illegal_action_penalty


@pytest.mark.parametrize("good", [0, np.int64(0), np.array(0)])
def test_integral_action_ids_of_any_integer_type_are_played(toy, good):
    env = GameEnv(toy, "race")
    env.reset(seed=0)
    _, _, _, _, info = env.step(good)
    assert not info["illegal_action"]


def _quiet_and_narrating_play(env_id: str, seed: int, steps: int) -> tuple[list, list, list[int]]:
    """The same seeded random legal play through a quiet env (the default) and one that keeps the log."""
    quiet, loud = gym.make(env_id), gym.make(env_id, narrate=True)
    trajectories: list[list] = [[], []]
    grown = [0, 0]  # events each env's engine logged after reset
    for k, env in enumerate((quiet, loud)):
        rng = np.random.default_rng(seed)
        obs, info = env.reset(seed=seed)
        start = len(env.unwrapped.state.log)
        traj = trajectories[k]
        traj.append((obs.tobytes(), info["action_mask"].tobytes()))
        for _ in range(steps):
            a = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
            obs, r, term, trunc, info = env.step(a)
            traj.append((a, obs.tobytes(), r, term, trunc, info["action_mask"].tobytes(), repr(info.get("outcome"))))
            grown[k] += len(env.unwrapped.state.log) - start
            start = len(env.unwrapped.state.log)
            if term or trunc:
                obs, info = env.reset()
                start = len(env.unwrapped.state.log)
                traj.append((obs.tobytes(), info["action_mask"].tobytes()))
    assert not quiet.unwrapped.narrate and loud.unwrapped.narrate
    return trajectories[0], trajectories[1], grown


@pytest.mark.parametrize("env_id", sorted(i for i in gym.registry if i.startswith("rulebreaker/")))
def test_a_quiet_env_plays_the_same_games_as_a_narrating_one_and_logs_nothing(toy, env_id):
    quiet, loud, grown = _quiet_and_narrating_play(env_id, seed=11, steps=300)
    assert quiet == loud
    assert any(step[3] for step in loud[1:] if len(step) > 2), "no episode ended: the comparison saw no outcome"
    assert grown[0] == 0 < grown[1]  # State.narrating is off: the engine built no event while the env stepped


def test_render_mode_keeps_the_narration_on(toy):
    env = GameEnv(toy, "race", render_mode="ansi")
    env.reset(seed=0)
    env.step(0)
    assert env.narrate and env.state.narrating and env.state.log
    assert env.render()


def test_infos_and_observations_are_fresh_and_the_mask_is_the_decisions(toy):
    env = GameEnv(toy, "race")
    obs0, info0 = env.reset(seed=2)
    obs1, _, _, _, info1 = env.step(0)
    assert info1["action_mask"] is env.action_masks()  # the mask of this decision, built once
    assert info0["action_mask"] is not info1["action_mask"] and obs0 is not obs1
    _, _, term, _, info2 = env.step(env.action_space.n)  # illegal: ends the episode
    assert term and info2["action_mask"] is not info1["action_mask"]
    assert info2["action_mask"].tolist() == info1["action_mask"].tolist()


def test_each_decisions_mask_is_a_writable_copy_that_matches_its_legal_list(toy):
    """Masks come from kept read-only ones: what a user writes into one changes no later decision's mask."""
    env = GameEnv(toy, "race")
    rng = np.random.default_rng(0)
    for game in range(3):
        _, info = env.reset(seed=game)
        done = False
        while not done:
            mask = info["action_mask"]
            legal = env.state.legal_actions()
            assert mask.flags.writeable and mask.tolist() == [a in legal for a in range(env.action_space.n)]
            mask[:] = True  # scribbled on by the user: the kept mask of this legal list must not change
            _, _, term, trunc, info = env.step(int(rng.choice(legal)))
            done = term or trunc


@settings(max_examples=200, deadline=None)
@given(legal=st.sets(st.integers(0, 63), min_size=1).map(list).flatmap(st.permutations), seed=st.integers(0, 2**32))
def test_uniform_pick_from_the_legal_list_is_its_pick_from_the_mask(legal, seed):
    """advance plays uniform opponents from the legal list (in any order): the same id as from the mask."""

    class _Stub:
        def legal_actions(self):
            return legal

    mask = np.zeros(64, dtype=bool)
    mask[legal] = True
    a, b = Rng(seed), Rng(seed)
    for _ in range(5):
        assert UniformRandom.act_legal(legal, a) == UniformRandom().act(_Stub(), mask, b)


def test_a_uniform_subclass_is_asked_through_its_own_act(toy):
    """Only UniformRandom itself takes the maskless path: a subclass that picks otherwise is honoured."""

    class Lowest(UniformRandom):
        def act(self, state, mask, rng):
            return int(mask.nonzero()[0][0])

    rs = toy
    sc = rs.scenario("race")
    cfg = rs.default_config()
    state = sc.new_game(cfg)
    seen = []
    advance(
        state,
        Rng(0),
        [Lowest()] * sc.players(cfg),
        sc.action_count(cfg),
        hook=lambda s, p, a: seen.append((s.legal_actions(), a)),
    )
    assert seen and all(a == min(legal) for legal, a in seen)


@pytest.mark.parametrize("seed", range(5))
def test_advance_plays_uniform_opponents_as_their_act_would(toy, seed):
    """advance picks for UniformRandom itself from the legal list (inlined): the same games as through ``act``."""

    class ThroughAct(UniformRandom):  # a subclass: advance asks its act() with the mask
        pass

    sc = toy.scenario("race")
    cfg = toy.default_config()
    games = []
    for policy in (UniformRandom(), ThroughAct()):
        state = sc.new_game(cfg)
        moves: list[tuple[int, int]] = []
        advance(
            state,
            Rng(seed),
            [policy] * sc.players(cfg),
            sc.action_count(cfg),
            hook=lambda s, p, a, moves=moves: moves.append((p, a)),
        )
        games.append((moves, state.returns()))
    assert len(games[0][0]) > 5 and games[0] == games[1]


def _raw_observations(monkeypatch, toy, values, dtype):
    """The toy's observation replaced by fixed ``values`` of ``dtype`` (fresh each call)."""
    monkeypatch.setattr(type(toy.scenario("race").new_game(toy.default_config())), "observation",
                        lambda self, seat: np.array(values, dtype=dtype))  # fmt: skip


@pytest.mark.parametrize("in_bounds", [False, True])
@pytest.mark.parametrize(
    "values, dtype",
    [([-1.0, 0.5, 2.5, np.nan], np.float64), ([-1.0, 0.5, 2.5, 1.0], np.float32), ([0.0, 0.5, 2.0, 1.0], np.float64)],
)
def test_observations_are_float32_within_the_bounds_whatever_the_engine_returns(
    monkeypatch, toy, in_bounds, values, dtype
):
    """reset() and step() give float32 clipped to the bounds (NaN stays NaN); ``observation_in_bounds`` skips only
    the clip of a float32 array (the promise covers the values, not the type)."""
    _raw_observations(monkeypatch, toy, values, dtype)
    race = dataclasses.replace(toy.scenario("race"), observation_in_bounds=in_bounds)
    env = GameEnv(dataclasses.replace(toy, scenarios={"race": race}), "race")
    low, high = env.observation_space.low, env.observation_space.high
    raw = np.array(values, dtype=np.float32)
    want = raw if in_bounds and dtype is np.float32 else np.clip(raw, low, high)
    obs, _ = env.reset(seed=0)
    seen = [obs]
    for _ in range(6):
        obs, _, term, trunc, _ = env.step(int(env.action_masks().nonzero()[0][0]))
        seen.append(obs)
        if term or trunc:
            break
    for o in seen:
        assert o.dtype == np.float32
        np.testing.assert_array_equal(o, want)

"""Self-play: snapshot pools, per-game resampling, seat rotation, 3-seat scenarios, pool persistence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.rl import NumpyNet
from envs.core.config import RulesModel
from envs.core.dice import Rng
from envs.core.game import TERMINAL, EndReason, IllegalActionError, Ruleset, Scenario, State
from envs.core.registry import register_ruleset
from training.train import TrainConfig, train
from training.train.selfplay import PoolOpponent, RotatingSeatEnv


class RaceRules(RulesModel):
    target: int = 12
    seats: int = 3


class RaceConfig(RulesModel):
    race: RaceRules = RaceRules()


class RaceState(State):
    """Three seats in turn add 1, 2 or 3 to a shared count; whoever reaches the target wins (a Nim race)."""

    def __init__(self, cfg: RaceConfig) -> None:
        super().__init__(cfg.race.seats)
        self.target = cfg.race.target
        self.count = 0
        self.to_move = 0

    def current_player(self) -> int:
        return TERMINAL if self._outcome is not None else self.to_move

    def legal_actions(self) -> list[int]:
        return [] if self._outcome is not None else [0, 1, 2]

    def apply_action(self, action: int) -> None:
        if action not in self.legal_actions():
            raise IllegalActionError(str(action))
        self.count += action + 1
        if self.count >= self.target:
            w = self.to_move
            self.finish(w, EndReason.COMPLETED, [1.0 if s == w else -0.5 for s in range(self.num_players)])
        else:
            self.to_move = (self.to_move + 1) % self.num_players

    def apply_chance(self, outcome) -> None:  # no chance nodes
        raise AssertionError

    def action_label(self, action: int) -> str:
        return f"add {action + 1}"

    def observation(self, seat: int) -> np.ndarray:
        return np.array([self.count / self.target, float(self.to_move == seat), seat / 2], dtype=np.float32)


RACE = Ruleset(
    "race3",
    "Race3",
    "3-seat Nim race (test-only)",
    RaceConfig,
    Path(__file__).with_name("none.toml"),
    {
        "race": Scenario(
            "race",
            "Race",
            "to the target",
            lambda c: c.race.seats,
            3,
            3,
            RaceState,
            max_episode_steps=50,
            observation_bounds=(0.0, 1.0),
        )
    },
)


@pytest.fixture
def race3(tmp_path_factory):
    rules = tmp_path_factory.mktemp("race3") / "rules.toml"
    rules.write_text("[race]\ntarget = 12\nseats = 3\n")
    RACE.rules_path = rules
    register_ruleset(RACE)
    yield RACE
    from envs.core import registry

    registry._RULESETS.pop("race3", None)  # other tests list the rulesets


def _constant_net(action: int, n_actions: int = 3, obs: int = 3) -> NumpyNet:
    """A snapshot that (almost surely) always plays ``action``."""
    b = np.full(n_actions, -30.0, np.float32)
    b[action] = 30.0
    return NumpyNet([np.zeros((obs, n_actions), np.float32)], [b], "tanh", "logits")


def test_seat_rotates_every_game_and_each_env_starts_elsewhere(race3):
    env = RotatingSeatEnv(race3, "race", config=RaceConfig(), seat_offset=1)
    seats = []
    for g in range(6):
        _, info = env.reset(seed=g)
        seats.append(info["learner_seat"])
        done = False
        while not done:
            _, _, done, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
            assert info["learner_seat"] == seats[-1]
    assert seats == [1, 2, 0, 1, 2, 0]


def test_pool_opponent_resamples_per_game_and_is_stable_within_a_game(race3):
    pool = PoolOpponent(pool_size=5, seed=4)
    pool.add_snapshot(_constant_net(0))
    pool.add_snapshot(_constant_net(2))
    env = RotatingSeatEnv(race3, "race", config=RaceConfig(), opponents=pool, rotate=False)
    seen = set()
    for g in range(40):
        env.reset(seed=g)
        first = None
        done = False
        while not done:
            picks = pool.current_picks()
            if first is None:
                first = dict(picks)
            assert all(first.get(s, v) == v for s, v in picks.items())
            _, _, done, _, _ = env.step(0)
        state = env.state
        # Opponent moves in this game: each seat kept one snapshot, so its adds are all equal.
        seen.add(tuple(sorted(pool.current_picks().items())))
        assert state is not None
    assert pool.games == 40
    assert all(v == "snapshot" for combo in seen for _, v in combo)
    # Both snapshots are drawn (as 1 or 3 adds): check with the actual play of a fresh game.
    adds = {0: 0, 2: 0}
    for g in range(30):
        st = RaceState(RaceConfig())
        rng = Rng(g)
        while st.current_player() != TERMINAL:
            seat = st.current_player()
            a = 1 if seat == 0 else pool.act(st, np.ones(3, bool), rng)
            if seat != 0:
                adds[a] += 1
            st.apply_action(a)
    assert adds[0] > 0 and adds[2] > 0


def test_pool_keeps_only_the_newest_snapshots():
    pool = PoolOpponent(pool_size=2)
    nets = [_constant_net(i % 3) for i in range(4)]
    for n in nets:
        pool.add_snapshot(n)
    assert pool.pool == nets[-2:]


def test_mix_draws_personas_and_snapshots(race3):
    from envs.core.policy import UniformRandom

    pool = PoolOpponent([UniformRandom()], persona_prob=0.5, seed=1)
    pool.add_snapshot(_constant_net(1))
    kinds = set()
    for g in range(40):
        st = RaceState(RaceConfig())
        st.apply_action(0)  # seat 0 moved; seat 1 is the pool's
        pool.act(st, np.ones(3, bool), Rng(g))
        kinds.add(pool.current_picks()[1])
    assert kinds == {"snapshot", "random"}


@pytest.mark.training
def test_self_play_on_three_seats_trains_resumes_and_keeps_its_pool(tmp_path, race3):
    hp = {
        "n_steps": 64,
        "batch_size": 64,
        "policy_kwargs": {"net_arch": [32]},
        "eval_freq": 256,
        "eval_episodes": 6,
        "snapshot_freq": 128,
        "pool_size": 3,
        "checkpoint_freq": 256,
        "final_eval_games": 30,
    }
    cfg = TrainConfig("race3", "race", opponent="self", steps=512, n_envs=2, seed=5, out=tmp_path / "sp", hp=hp)
    res = train(cfg)
    assert res.status == "completed" and res.num_timesteps == 512
    state = json.loads((res.run_dir / "train_state.json").read_text())
    assert state["pool"]["snapshots"] == 3  # snapshots at 0,128,256,384 (rollout starts), newest 3 kept
    with np.load(res.run_dir / "pool.npz") as z:
        assert {n.split("_")[0] for n in z.files} == {"s0", "s1", "s2"}
    fe = res.metrics["final_evaluation"]
    assert fe["num_players"] == 3 and set(fe["vs"]) == {"random"}
    assert fe["vs"]["random"]["fair_share"] == pytest.approx(1 / 3, abs=1e-6)
    edge = fe["vs"]["random"]
    assert edge["return_edge_ci"][0] <= edge["return_edge"] <= edge["return_edge_ci"][1]
    assert edge["beats_on_return"] == (edge["return_edge_ci"][0] > 0)
    # Every race ends with a winner (+1) and two losers (-0.5): a win is an edge of 1.5, a loss of -0.75.
    assert edge["return_edge"] == pytest.approx(2.25 * edge["win_rate"] - 0.75, abs=1e-4)
    points = json.loads((res.run_dir / "curves.json").read_text())["points"]
    assert points[0]["step"] == 0 and points[-1]["step"] == 512
    # Continue the same run further: the pool comes back from pool.npz.
    state["target"] = 768
    (res.run_dir / "train_state.json").write_text(json.dumps(state))
    more = train(TrainConfig("", "", resume=res.run_dir, final_eval=False))
    assert more.num_timesteps == 768
    assert json.loads((res.run_dir / "train_state.json").read_text())["pool"]["snapshots"] == 3


def test_mix_opponent_trains_on_three_seats(tmp_path, race3):
    hp = {
        "n_steps": 32,
        "batch_size": 32,
        "policy_kwargs": {"net_arch": [16]},
        "eval_freq": 10**6,
        "eval_episodes": 3,
        "snapshot_freq": 64,
    }
    res = train(
        TrainConfig("race3", "race", opponent="mix", steps=128, n_envs=2, out=tmp_path / "mix", hp=hp, final_eval=False)
    )
    assert res.status == "completed" and res.num_timesteps == 128


def test_one_seat_variant_trains_and_reports_against_each_persona_alone(tmp_path, race3):
    """With one seat (a variant sets seats = 1) the learner plays alone; the final evaluation compares returns."""
    variant = tmp_path / "solo.toml"
    variant.write_text("[race]\nseats = 1\n")
    hp = {
        "n_steps": 32,
        "batch_size": 32,
        "policy_kwargs": {"net_arch": [8]},
        "eval_freq": 10**6,
        "eval_episodes": 4,
        "final_eval_games": 12,
    }
    res = train(TrainConfig("race3", "race", rules=variant, steps=64, n_envs=2, out=tmp_path / "solo", hp=hp))
    fe = res.metrics["final_evaluation"]
    assert fe["num_players"] == 1 and set(fe["vs"]) == {"random"}
    v = fe["vs"]["random"]
    # Alone, every race is won (+1): nobody can beat anybody, and the paired edge is exactly zero.
    assert v["agent_mean_return"] == v["persona_mean_return"] == 1.0
    assert v["paired_edge"] == 0.0 and v["beats"] is False
    assert json.loads((res.run_dir / "curves.json").read_text())["points"][0]["vs"].keys() == {"solo"}


def test_persona_evaluation_replays_the_same_games(race3):
    """Two evaluations of the same model give identical figures (same deals, same seats)."""
    from sb3_contrib import MaskablePPO

    from training.train import PersonaEvaluator, make_vec_env

    env = make_vec_env("race3", "race", RaceConfig(), [None, None])
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=0, device="cpu")
    ev = PersonaEvaluator("race3", "race", RaceConfig(), episodes=7, seed=3, masked=True)
    first, second = ev(model), ev(model)
    ev.close()
    env.close()
    assert first == second and first["random"]["episodes"] == 7

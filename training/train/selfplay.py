"""Training environments: the learner's seat rotates, opponents may be its own past snapshots.

* :class:`RotatingSeatEnv` is the Gymnasium adapter whose learner seat changes every game (cycling
  through the seats, starting at a per-env offset), so one policy learns every seat of a scenario.
  ``info["learner_seat"]`` says which seat it played.
* :class:`PoolOpponent` is a :class:`~envs.core.policy.Policy` for the other seats: at the start of
  each game (it notices a new state object) it draws, for each seat it plays, either a snapshot from
  the pool of the learner's past policies or (``mix``) a persona of the ruleset. Snapshots are numpy
  copies of the network (:class:`agents.rl.NumpyNet`), so they are cheap to play and picklable for
  ``SubprocVecEnv``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.registry import agent_names, make_agent
from agents.rl import NumpyNet
from envs.core.dice import Rng, seed_for
from envs.core.game import State
from envs.core.gym_adapter import GameEnv
from envs.core.policy import Policy, UniformRandom


class PoolOpponent:
    """Plays other seats with a snapshot of the learner (or a persona, with ``persona_prob``)."""

    def __init__(
        self,
        personas: Sequence[Policy] = (),
        persona_prob: float = 0.0,
        pool_size: int = 10,
        bounds: tuple[float, float] = (-np.inf, np.inf),
        seed: int = 0,
    ) -> None:
        self.name = "self" if persona_prob <= 0 else "mix"
        self.personas = list(personas)
        self.persona_prob = persona_prob if self.personas else 0.0
        self.pool_size = pool_size
        self.pool: list[NumpyNet] = []
        self.low, self.high = bounds
        self._rng = Rng(seed)
        self._state: State | None = None
        self._picks: dict[int, NumpyNet | Policy] = {}
        self.games = 0

    def add_snapshot(self, net: NumpyNet) -> None:
        self.pool.append(net)
        if len(self.pool) > self.pool_size:
            self.pool.pop(0)

    def _pick(self) -> NumpyNet | Policy:
        if not self.pool or (self.persona_prob > 0 and self._rng.random() < self.persona_prob):
            if self.personas:
                return self.personas[int(self._rng.random() * len(self.personas))]
            return UniformRandom()
        return self.pool[int(self._rng.random() * len(self.pool))]

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if state is not self._state:  # a new game: draw again for every seat
            self._state = state
            self._picks.clear()
            self.games += 1
        seat = state.current_player()
        pick = self._picks.get(seat)
        if pick is None:
            pick = self._picks[seat] = self._pick()
        if isinstance(pick, NumpyNet):
            obs = np.clip(np.asarray(state.observation(seat), dtype=np.float32), self.low, self.high)
            return pick.sample(obs, mask, self._rng)
        return pick.act(state, mask, rng)

    def current_picks(self) -> dict[int, str]:
        return {s: ("snapshot" if isinstance(p, NumpyNet) else p.name) for s, p in self._picks.items()}


class RotatingSeatEnv(GameEnv):
    """The adapter with the learner's seat rotating game by game (see the module docstring).

    ``opponents`` is a single policy for every other seat (a persona, random, a :class:`PoolOpponent`).
    """

    def __init__(self, *args: Any, rotate: bool = True, seat_offset: int = 0, **kwargs: Any) -> None:
        opponents = kwargs.pop("opponents", None)
        super().__init__(*args, **kwargs)
        self.rotate = rotate and self.num_players > 1
        self._opponent_spec = opponents
        self._game_index = seat_offset
        self.set_opponents(opponents)

    def set_opponents(self, opponents: Policy | Sequence[Policy] | None) -> None:
        self._opponent_spec = opponents
        super().set_opponents(opponents)

    def add_snapshot(self, net: NumpyNet) -> None:
        """Self-play: give the pool opponent the learner's latest snapshot (called through ``env_method``)."""
        if isinstance(self._opponent_spec, PoolOpponent):
            self._opponent_spec.add_snapshot(net)

    def restart_rotation(self, offset: int) -> None:
        """Start the seat rotation again at ``offset`` (evaluations replay the same seats and deals)."""
        self._game_index = offset

    def pool_size(self) -> int:
        return len(self._opponent_spec.pool) if isinstance(self._opponent_spec, PoolOpponent) else 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if self.rotate:
            self.seat = self._game_index % self.num_players
            self._game_index += 1
            super().set_opponents(self._opponent_spec)
        obs, info = super().reset(seed=seed, options=options)
        info["learner_seat"] = self.seat
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, term, trunc, info = super().step(action)
        info["learner_seat"] = self.seat
        return obs, reward, term, trunc, info


def pool_opponent_for(
    ruleset: str, scenario: str, mode: str, persona_prob: float, pool_size: int, bounds: tuple[float, float], seed: int
) -> PoolOpponent:
    """The self-play opponent: ``self`` (snapshots only) or ``mix`` (snapshots and the persona suite)."""
    personas = [make_agent(ruleset, n, scenario) for n in agent_names(ruleset)] if mode == "mix" else []
    return PoolOpponent(personas, persona_prob if mode == "mix" else 0.0, pool_size, bounds, seed_for(seed, 77))

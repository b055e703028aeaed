"""The generic PettingZoo adapter: any ruleset + scenario becomes an AEC environment, one agent per seat.

The Gymnasium adapter (:mod:`envs.core.gym_adapter`) gives one seat an env and plays the others inside
``step``; this one gives every seat its own agent, as PettingZoo's classic games do, so multi-agent
trainers (RLlib, Tianshou, AgileRL, PettingZoo's SB3 self-play recipe) can drive every seat at once.
Both adapters step the game through the same loop, :func:`envs.core.play.advance`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pydantic import BaseModel

from envs.core.config import config_hash, load_config
from envs.core.dice import Rng
from envs.core.game import TERMINAL, Ruleset, State
from envs.core.play import ANY_SEAT, advance
from envs.core.policy import legal_mask

ILLEGAL_MOVE_REWARD = -1.0
"""The reward of a seat that makes an illegal move (PettingZoo's ``TerminateIllegalWrapper``)."""


def agent_name(player_name: str, seat: int) -> str:
    """PettingZoo's ``<descriptor>_<number>`` name of a seat: ``"Nailbug"``, seat 0 → ``"nailbug_0"``."""
    descriptor = re.sub("[^a-z]", "", player_name.lower()) or "player"
    return f"{descriptor}_{seat}"


class GameAEC(AECEnv[str, dict[str, np.ndarray], np.int64]):
    """Every seat of a rulebreaker game as a PettingZoo AEC environment.

    ## Description
    One agent per seat of ``scenario`` of ``ruleset``, named from the scenario's player names
    (``nailbug_0``, ``greatbug_1``…). Agents move when the rules say so (not round-robin): after each
    action, chance nodes are sampled from an rng seeded at ``reset`` and the agent whose decision comes
    next is selected.

    ## Action Space
    ``Discrete(scenario.action_count(config))`` for every agent; the legal ids are in the observation's
    ``action_mask``.

    ## Observation Space
    ``Dict({"observation": Box(low, high, (n,), float32), "action_mask": Box(0, 1, (actions,), int8)})``,
    the shape of PettingZoo's classic games. The observation is the engine's view of that seat, clipped
    to the scenario's bounds; the mask is all zeros for an agent that is not to move.

    ## Rewards
    Each seat's return when the game ends, 0 before. Through :func:`make_aec` an illegal move ends the
    game with ``ILLEGAL_MOVE_REWARD`` for its maker (PettingZoo's ``TerminateIllegalWrapper``); the raw
    env raises :class:`envs.core.game.IllegalActionError`.

    ## Episode End
    Every agent is terminated when the game ends (``infos[agent]["outcome"]`` holds winner, reason and
    returns); every agent is truncated once any seat has made ``max_cycles`` decisions (default: the
    scenario's ``max_episode_steps``).

    ## Arguments
    ``ruleset``, ``scenario``, ``rules`` (variant TOML path) or ``config`` (resolved model),
    ``max_cycles``, ``render_mode`` ("ansi" or "human": the narration since the last render).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "name": "rulebreaker", "is_parallelizable": False}

    def __init__(
        self,
        ruleset: Ruleset | str,
        scenario: str,
        rules: str | Path | None = None,
        config: BaseModel | None = None,
        max_cycles: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        from envs.core.registry import get_ruleset

        super().__init__()
        self.ruleset = get_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
        self.scenario = self.ruleset.scenario(scenario)
        self.config = config if config is not None else load_config(self.ruleset, rules)
        self.rules_hash = config_hash(self.config)
        self.metadata = {**self.metadata, "name": f"rulebreaker_{self.ruleset.name}_{self.scenario.name}_v0"}
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode '{render_mode}' is not one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        n_players = self.scenario.players(self.config)
        names = self.scenario.player_names
        self.possible_agents = [agent_name(names[s] if s < len(names) else "player", s) for s in range(n_players)]
        self._seat_of = {a: s for s, a in enumerate(self.possible_agents)}
        self.num_actions = self.scenario.action_count(self.config)
        self.max_cycles = max_cycles if max_cycles is not None else self.scenario.max_episode_steps
        low, high = self.scenario.observation_bounds
        obs_box = spaces.Box(
            np.float32(low), np.float32(high), (self.scenario.observation_length(self.config),), np.float32
        )
        self.observation_spaces = {
            a: spaces.Dict({"observation": obs_box, "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8)})
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in self.possible_agents}
        self._np_random: np.random.Generator | None = None
        self._rng = Rng(0)
        self.state: State | None = None
        self._decisions = [0] * n_players
        self._rendered = 0

    # -- spaces (the same object every call, as PettingZoo's seeding needs) ------------------------
    def observation_space(self, agent: str) -> gymnasium.Space[Any]:
        """The observation space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space[Any]:
        """The action space of ``agent``."""
        return self.action_spaces[agent]

    # -- the AEC API ---------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game; chance draws come from an rng seeded with ``seed``."""
        if seed is not None or self._np_random is None:
            self._np_random, _ = seeding.np_random(seed)
        self._rng = Rng.from_numpy(self._np_random)
        self.state = self.scenario.new_game(self.config)
        if self.render_mode is None:
            self.state.narrating = False  # nothing reads the log without a render mode
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._decisions = [0] * len(self.possible_agents)
        self._rendered = 0
        self._play_chance()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The observation and action mask of ``agent``."""
        state = self._require_state()
        seat = self._seat_of[agent]
        low, high = self.scenario.observation_bounds
        # np.clip's values (NaN stays NaN) in one fresh array, without its Python-level dispatch
        obs = np.maximum(np.asarray(state.observation(seat), dtype=np.float32), np.float32(low))
        np.minimum(obs, np.float32(high), out=obs)
        if state.current_player() == seat:
            mask = legal_mask(state, self.num_actions).astype(np.int8)
        else:
            mask = np.zeros(self.num_actions, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: Any) -> None:
        """Apply the selected agent's action, then play chance up to the next decision."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._require_state()
        seat = self._seat_of[agent]
        state.apply_action(int(action))
        self._decisions[seat] += 1
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._play_chance()
        if not self.terminations[self.agent_selection] and self._decisions[seat] >= self.max_cycles:
            self.truncations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The narration since the last render ("ansi" returns it, "human" prints it)."""
        if self.render_mode is None or self.state is None:
            return None
        text = "\n".join(e.text for e in self.state.log[self._rendered :])
        self._rendered = len(self.state.log)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""

    # -- internals -------------------------------------------------------------------------------
    def _require_state(self) -> State:
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        return self.state

    def _play_chance(self) -> None:
        """Sample chance until a seat is to move; at the end, hand out the returns and terminate everyone."""
        state = self._require_state()
        advance(state, self._rng, [None] * len(self.possible_agents), self.num_actions, stop_at=ANY_SEAT)
        player = state.current_player()
        if player == TERMINAL:
            out = state.outcome()
            assert out is not None
            outcome = {"winner": out.winner, "reason": out.reason.value, "returns": list(out.returns)}
            for agent in self.agents:
                self.rewards[agent] = float(out.returns[self._seat_of[agent]])
                self.terminations[agent] = True
                self.infos[agent] = {"outcome": outcome}
            # the agent to act on the dead step: whoever moved last keeps the selection
            if getattr(self, "agent_selection", None) not in self.agents:
                self.agent_selection: str = self.agents[0]
            return
        self.agent_selection = self.possible_agents[player]


def make_aec(
    ruleset: str,
    scenario: str,
    *,
    rules: str | Path | None = None,
    config: BaseModel | None = None,
    max_cycles: int | None = None,
    render_mode: str | None = None,
    illegal_reward: float = ILLEGAL_MOVE_REWARD,
) -> AECEnv[str, dict[str, np.ndarray], np.int64]:
    """A scenario as PettingZoo's classic games are shipped: illegal moves end the game, order enforced."""
    raw = GameAEC(ruleset, scenario, rules=rules, config=config, max_cycles=max_cycles, render_mode=render_mode)
    env: AECEnv[str, dict[str, np.ndarray], np.int64] = wrappers.TerminateIllegalWrapper(raw, illegal_reward)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


class SharedSeatsEnv(gymnasium.Env[np.ndarray, np.int64]):
    """A Gymnasium view of an AEC env in which one learner plays every seat (self-play at one table).

    Each ``step`` applies the action of the agent to move and returns the observation of the next agent
    to move (often another seat). The reward of a step is the return, at the game's end, of the seat that
    just moved; the episode ends with the game. ``action_masks()`` is the mask of the agent to move, as
    sb3-contrib's MaskablePPO reads it. This is the recipe of PettingZoo's SB3 action-mask tutorial, so
    single-agent trainers train both seats of any scenario through the AEC env.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, aec: AECEnv[str, dict[str, np.ndarray], np.int64]) -> None:
        self.aec = aec
        first = aec.possible_agents[0]
        space = aec.observation_space(first)
        actions = aec.action_space(first)
        assert isinstance(space, spaces.Dict) and isinstance(actions, spaces.Discrete)
        self.observation_space = space["observation"]
        self.action_space = actions
        self._mask: np.ndarray = np.ones(int(actions.n), dtype=np.bool_)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new game and return the first agent's observation."""
        super().reset(seed=seed)
        self.aec.reset(seed=seed, options=options)
        return self._observe(), {"agent": self.aec.agent_selection}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play ``action`` for the agent to move; return the next mover's view."""
        mover = self.aec.agent_selection
        self.aec.step(int(action))
        if all(self.aec.terminations.get(a, True) or self.aec.truncations.get(a, True) for a in self.aec.agents):
            reward = float(self.aec._cumulative_rewards.get(mover, 0.0))
            terminated = any(self.aec.terminations.values())
            obs = self._observe_agent(mover)
            return obs, reward, terminated, not terminated, {"agent": mover}
        return self._observe(), 0.0, False, False, {"agent": self.aec.agent_selection}

    def action_masks(self) -> np.ndarray:
        """The legal actions of the agent to move."""
        return self._mask

    def _observe(self) -> np.ndarray:
        return self._observe_agent(self.aec.agent_selection)

    def _observe_agent(self, agent: str) -> np.ndarray:
        obs = self.aec.observe(agent)
        assert obs is not None
        mask = obs["action_mask"].astype(bool)
        self._mask = mask if mask.any() else np.ones_like(mask)
        return obs["observation"]

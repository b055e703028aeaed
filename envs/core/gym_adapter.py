"""The generic Gymnasium adapter: any ruleset + scenario becomes an env for one seat."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pydantic import BaseModel

from envs.core.config import config_hash, load_config
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, Ruleset, State
from envs.core.play import advance
from envs.core.policy import Policy, UniformRandom, legal_mask, mask_cache, new_mask


class ResetNeeded(gym.error.ResetNeeded, RuntimeError):
    """``step()`` or ``action_masks()`` before ``reset()``, or ``step()`` after the episode ended.

    Gymnasium's ``ResetNeeded`` (what its ``OrderEnforcing`` wrapper raises; the ids register without that wrapper,
    whose check this is) and a ``RuntimeError``.
    """


ILLEGAL_ACTION_PENALTY = -1.0
MAX_DEALS = 100
_FLOAT32 = np.dtype(np.float32)


class GameEnv(gym.Env[np.ndarray, np.int64]):
    """One seat of a rulebreaker game as a Gymnasium environment.

    ## Description
    The agent plays ``seat`` of ``scenario`` of ``ruleset``. Other seats are played by ``opponents``
    (any :class:`~envs.core.policy.Policy`; uniform random by default) and chance nodes are sampled
    from an rng seeded from the env's ``np_random``, inside ``step``.

    ## Action Space
    ``Discrete(scenario.action_count(config))``; the legal subset at each decision is given by
    :meth:`action_masks` (the name sb3-contrib's MaskablePPO reads) and ``info["action_mask"]``.

    ## Observation Space
    ``Box(low, high, (scenario.observation_length(config),), float32)`` with the scenario's bounds; the engine's
    observation of the seat, clipped to the bounds (a scenario with ``observation_in_bounds`` promises, and the
    tests check, that they need no clipping).

    ## Rewards
    The seat's return when the game ends (0 on every other step). An illegal action ends the
    episode at once with reward ``illegal_action_penalty`` (default -1.0) and
    ``info["illegal_action"] = True``; anything that is not an integral action id (a float such as 23.9,
    a bool, a string, NaN, ``None``) is an illegal action.

    ## Episode End
    Terminated when the game ends (``info["outcome"]`` holds winner, reason and returns) or on an
    illegal action; truncated by the registered ``max_episode_steps``. ``step()`` before ``reset()`` and after either
    end raises :class:`ResetNeeded` until ``reset()``. The registered ids come without gymnasium's ``OrderEnforcing``
    (this is its check) and ``PassiveEnvChecker`` (gymnasium's full ``check_env`` passes on every scenario).
    If a deal ends before the seat ever moves, the env re-deals (at most 100 times).

    ## Arguments
    ``ruleset``, ``scenario``, ``rules`` (variant TOML path) or ``config`` (resolved model), ``seat``,
    ``opponents`` (one policy for every other seat or one per seat), ``illegal_action_penalty``,
    ``render_mode`` ("ansi" or "human": the narration since the last render), ``narrate`` (keep the game's
    event log in ``env.state.log``; default: only with a ``render_mode``, the one reader of the log here —
    without it the engine narrates nothing (``State.narrating = False``), which changes no game).

    Observations and info dicts are fresh on every call (users keep them); ``info["action_mask"]`` is the
    array :meth:`action_masks` returns until the next ``step``/``reset`` (one fresh array per decision, the caller's:
    changing it changes no legality, which ``step`` tests against the engine's legal ids).
    """

    metadata = {"render_modes": ["ansi", "human"]}

    def __init__(
        self,
        ruleset: Ruleset | str,
        scenario: str,
        rules: str | Path | None = None,
        config: BaseModel | None = None,
        seat: int = 0,
        opponents: Policy | Sequence[Policy] | None = None,
        illegal_action_penalty: float = ILLEGAL_ACTION_PENALTY,
        render_mode: str | None = None,
        narrate: bool | None = None,
    ) -> None:
        from envs.core.registry import get_ruleset

        self.ruleset = get_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
        self.scenario = self.ruleset.scenario(scenario)
        self.config = config if config is not None else load_config(self.ruleset, rules)
        self.rules_hash = config_hash(self.config)
        self.num_players = self.scenario.players(self.config)
        if not 0 <= seat < self.num_players:
            raise ValueError(f"seat {seat} out of range for {self.num_players} players")
        self.seat = seat
        self.illegal_action_penalty = float(illegal_action_penalty)
        self.render_mode = render_mode
        self.narrate = render_mode is not None if narrate is None else bool(narrate)
        n = self.num_actions = self.scenario.action_count(self.config)
        low, high = self.scenario.observation_bounds
        self.action_space = spaces.Discrete(n)
        self.observation_space = spaces.Box(
            low=np.float32(low),
            high=np.float32(high),
            shape=(self.scenario.observation_length(self.config),),
            dtype=np.float32,
        )
        self.set_opponents(opponents)
        self._low, self._high = self.observation_space.low, self.observation_space.high  # float32 bound vectors
        self._in_bounds = self.scenario.observation_in_bounds  # the engine's observations need no clipping
        self._mask = np.ones(n, dtype=bool)
        self._legal: tuple[int, ...] = ()  # the legal ids of the seat's decision (the mask's True ids), kept with it
        self._masks = mask_cache(n)  # kept read-only masks by legal ids, shared with every env of n actions
        self.state: State | None = None
        self._start: State | None = None  # the scenario's start under _start_config, cloned per reset (clone_start)
        self._start_config: BaseModel | None = None
        self._to_move = False  # the seat is to move: False before reset(), after the end and after an illegal action
        self._player_kept = self._legal_kept = False
        self._rng = Rng(0)
        self._rendered = 0

    # -- opponents -------------------------------------------------------------------------------
    def set_opponents(self, opponents: Policy | Sequence[Policy] | None) -> None:
        """Replace the policies of the other seats (self-play swaps snapshots in here)."""
        if opponents is None:
            opponents = UniformRandom()
        pols: list[Policy | None]
        if isinstance(opponents, Sequence):
            pols = list(opponents)
            if len(pols) == self.num_players - 1:
                pols.insert(self.seat, None)
            if len(pols) != self.num_players:
                raise ValueError(f"need {self.num_players - 1} opponents, got {len(opponents)}")
        else:
            pols = [opponents] * self.num_players
        pols[self.seat] = None
        self._policies = pols

    # -- gym API ---------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._rng = Rng.from_numpy(self.np_random)
        for _ in range(MAX_DEALS):
            self.state = self._new_game()
            if not self.narrate:
                self.state.narrating = False  # nobody reads the log: the engine need not build it
            self._advance()
            if self.state.current_player() == self.seat:
                break
        else:
            raise RuntimeError(f"seat {self.seat} never got a decision in {MAX_DEALS} deals")
        self._rendered = 0
        self._to_move = True
        # the state's promises (class flags), read per step from the env's own attributes (cheaper than the class's)
        self._player_kept, self._legal_kept = self.state.player_kept, self.state.legal_kept
        return self._obs(), self._info()

    def step(self, action):
        state = self.state
        if state is None:
            raise ResetNeeded("call reset() before step()")
        seat = self.seat
        if not self._to_move:  # kept by reset() and step() (one test instead of a current_player() call per step)
            raise ResetNeeded("step() called after the episode ended; call reset()")
        kind = type(action)
        a = action if kind is int else int(action) if kind is np.int64 else action_id(action)
        # legal: one of the decision's ids (a tuple test: no numpy indexing; None and ids out of range are not in it)
        if a not in self._legal:
            info = self._info()
            info["action_mask"] = self._mask.copy()  # the last info holds this decision's mask: a fresh one here
            info["illegal_action"] = True
            info["illegal_action_id"] = a if a is not None else repr(action)
            self._to_move = False
            return self._obs(), self.illegal_action_penalty, True, False, info
        state.apply_action(a)
        advance(state, self._rng, self._policies, self.num_actions, seat)
        # the common case, without _info's checks (_obs and legal_mask inlined); a kept player read, not asked
        if (state._player if self._player_kept else state.current_player()) == seat:
            legal = state._legal if self._legal_kept else state.legal_tuple()
            mask = self._masks.get(legal)
            mask = self._mask = mask.copy() if mask is not None else new_mask(self.num_actions, legal)
            self._legal = legal
            obs = state.observation(seat)
            if not self._in_bounds or type(obs) is not np.ndarray or obs.dtype is not _FLOAT32:
                obs = self._clip(obs)  # an observation the scenario does not promise fresh, float32, in bounds
            return obs, 0.0, False, False, {"illegal_action": False, "action_mask": mask}
        self._mask = np.ones(self.num_actions, dtype=bool)
        self._to_move = False  # advance stops at the seat or at the end
        terminated = state.current_player() == TERMINAL
        reward = state.returns()[seat] if terminated else 0.0
        return self._obs(), float(reward), terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal actions of the seat (all True once the episode is over)."""
        if self.state is None:
            raise ResetNeeded("call reset() before step()")
        return self._mask

    def render(self) -> str | None:
        if self.render_mode is None or self.state is None:
            return None
        lines = [e.text for e in self.state.log[self._rendered :]]
        self._rendered = len(self.state.log)
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # -- internals -------------------------------------------------------------------------------
    def _new_game(self) -> State:
        """A new game under ``self.config``: a clone of the start built once, where the scenario sets ``clone_start``.

        The start is built again when ``self.config`` is another object. Its observation for the seat is asked once
        when it is built: what an engine keeps of it (packed rows, blocks) the clones inherit.
        """
        if not self.scenario.clone_start:
            return self.scenario.new_game(self.config)
        start = self._start
        if start is None or self._start_config is not self.config:
            start = self._start = self.scenario.new_game(self.config)
            self._start_config = self.config
            start.observation(self.seat)
        return start.clone()

    def _require_state(self) -> State:
        if self.state is None:
            raise ResetNeeded("call reset() before step()")
        return self.state

    def _advance(self) -> None:
        """Play opponents and chance up to the seat's next decision; compute its mask once."""
        state = self._require_state()
        advance(state, self._rng, self._policies, self.num_actions, stop_at=self.seat)
        if state.current_player() == self.seat:
            self._mask = legal_mask(state, self.num_actions)
            self._legal = state.legal_tuple()
        else:
            self._mask = np.ones(self.num_actions, dtype=bool)

    def _obs(self) -> np.ndarray:
        """The seat's observation clipped to the bounds, as a fresh float32 array (callers may keep it)."""
        return self._clip(self._require_state().observation(self.seat))

    def _clip(self, obs: np.ndarray) -> np.ndarray:
        """``obs`` as float32 clipped to the bounds, in a fresh array.

        A scenario with ``observation_in_bounds`` promises float32 arrays within the bounds, fresh on every call:
        those pass as they are (clipping them would copy the same values). Otherwise ``np.maximum`` against the
        bound vector writes the one new array and ``np.minimum`` clips it in place: the same values as ``np.clip``
        of the float32 observation (NaN stays NaN) without its Python-level dispatch; vector bounds of the
        observation's own dtype cost half of scalar ones with a ``dtype`` argument. An observation that is not a
        float32 array is converted first (and clipped).
        """
        if type(obs) is not np.ndarray or obs.dtype is not _FLOAT32 and obs.dtype != _FLOAT32:
            obs = np.asarray(obs, dtype=np.float32)
        elif self._in_bounds:
            return obs
        out = np.maximum(obs, self._low)
        return np.minimum(out, self._high, out=out)

    def _info(self) -> dict[str, Any]:
        state = self._require_state()
        info: dict[str, Any] = {"illegal_action": False, "action_mask": self._mask}
        player = state.current_player()
        if player == TERMINAL:
            out = state.outcome()
            assert out is not None
            info["outcome"] = {"winner": out.winner, "reason": out.reason.value, "returns": list(out.returns)}
        elif player == CHANCE:  # pragma: no cover - advance never stops at chance
            raise RuntimeError("adapter stopped at a chance node")
        return info


def action_id(action: Any) -> int | None:
    """An action as an integral id, or ``None`` when it is not one (a float, a bool, a string, NaN, None…).

    Python and numpy integers and 0-d integer arrays are action ids; anything else is an illegal action.
    """
    if isinstance(action, bool | np.bool_):
        return None
    if isinstance(action, int | np.integer):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    return None


def make_env(ruleset: str, scenario: str, **kwargs: Any) -> GameEnv:
    """Entry point used by ``gymnasium.make`` for the registered ids."""
    return GameEnv(ruleset, scenario, **kwargs)

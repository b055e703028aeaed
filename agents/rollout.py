"""Rollout-based policy improvement over a base policy, on common random numbers (``search:<base>@<n>#rollout``).

At each decision of its seat with more than one allowed action, the agent estimates ``Q(s, a)`` for every
allowed action ``a`` (after the restriction and the caller's mask) as the mean return of ``k`` playouts:
take ``a``, then every seat plays the base policy to the end of the game (the agent's own seat under its
restriction). Playout ``j`` of every action draws its chance outcomes and the base's own random choices
from the same stream (common random numbers), so the comparison of two actions is a *paired* one.

The choice (one step of policy iteration from the base, Tesauro & Galperin 1996; Bertsekas, Tsitsiklis &
Wu 1997; Bertsekas, *Rollout, Policy Iteration, and Distributed Reinforcement Learning*, 2020):

* The **default** is the base's own choice on the seat's full legal list. The agent deviates from it only
  to the best-estimated action whose mean paired advantage over the default exceeds ``z`` standard errors
  (and is positive), so with a good base noise does not pull it off its base.
* When the base's own choice is not allowed (a restriction or the caller's mask removed it) there is no
  default: the agent plays the best estimate, so restricted play measures the option, not the base's
  fallback.

The budget ``@<n>`` is the number of playouts per decision, split evenly over the allowed actions (at
least :data:`MIN_PER_ACTION` each). Deterministic for a seed (the search's stream is seeded from one draw
of the rng handed to :meth:`RolloutAgent.act`); pickles as its spec when built by
:func:`agents.search.make_search_agent`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from agents.masking import allowed_actions, masked_groups
from agents.solver import SimulationCloner
from envs.core.dice import Rng, seed_for
from envs.core.errors import UserError
from envs.core.game import CHANCE, TERMINAL, State
from envs.core.policy import Policy, UniformRandom

DEFAULT_CONFIRM = 1.0
"""Confirmation playouts (for the best action and the default together) as a share of the budget."""
DEFAULT_Z = 1.0
"""Standard errors of paired advantage needed to deviate from the base's own choice."""
MIN_PER_ACTION = 2
"""Fewest playouts per allowed action (a paired standard error needs two)."""
MAX_ROLLOUT_STEPS = 100_000


class RolloutAgent:
    """One-step rollout improvement of ``base`` with paired (common random number) estimates."""

    def __init__(
        self,
        base: Policy | None = None,
        rollouts: int = 32,
        *,
        restriction: Any = None,
        z: float | None = None,
        name: str | None = None,
    ) -> None:
        if rollouts < 1:
            raise UserError(f"a rollout agent needs at least 1 playout per decision, got {rollouts}")
        self.base: Policy = base if base is not None else UniformRandom()
        self.simulations = rollouts
        self.restriction = restriction
        self.z = DEFAULT_Z if z is None else z
        self.confirm = DEFAULT_CONFIRM
        self.name = name or f"search:{self.base.name}@{rollouts}#rollout"
        from agents.search import SearchStats

        self.last = SearchStats()
        self._source: tuple[str, str, str | None] | None = None

    def __reduce__(self) -> Any:
        if self._source is not None:
            from agents.search import make_search_agent

            return (make_search_agent, self._source)
        return super().__reduce__()

    def _allowed(self, state: State, legal: list[int], forbid_extra: frozenset[str]) -> list[int]:
        return allowed_actions(state, legal, forbid_extra, self.restriction)

    def _base_act(self, state: State, allowed: list[int], num_actions: int, rng: Rng) -> int:
        m = np.zeros(max(num_actions, max(allowed) + 1), dtype=bool)
        m[allowed] = True
        a = int(self.base.act(state, m, rng))
        if not m[a]:
            raise RuntimeError(f"base policy '{self.base.name}' chose action {a} outside its mask")
        return a

    def _playout(self, state: State, me: int, forbid_extra: frozenset[str], num_actions: int, rng: Rng) -> float:
        steps = 0
        while (player := state.current_player()) != TERMINAL:
            steps += 1
            if steps > MAX_ROLLOUT_STEPS:
                raise RuntimeError(f"playout did not end within {MAX_ROLLOUT_STEPS} steps")
            if player == CHANCE:
                state.apply_chance(state.sample_chance(rng))
                continue
            legal = state.legal_actions()
            if player == me:
                legal = self._allowed(state, legal, forbid_extra)
            state.apply_action(self._base_act(state, legal, num_actions, rng) if len(legal) > 1 else legal[0])
        return float(state.returns()[me])

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        from agents.search import SearchStats

        t0 = time.perf_counter()
        allowed_root = [int(a) for a in np.flatnonzero(mask)]
        if not allowed_root:
            raise ValueError("rollout agent called with an empty mask")
        me = state.current_player()
        legal = state.legal_actions()
        forbid_extra = masked_groups(state, legal, mask, allowed_root)
        srng = Rng(int(rng.random() * 2**53))
        allowed = self.restriction.allowed(state, allowed_root) if self.restriction is not None else allowed_root
        if len(allowed) == 1:
            self.last = SearchStats(0, {allowed[0]: 0}, {}, time.perf_counter() - t0)
            return allowed[0]
        num_actions = len(mask)
        # the base's own choice, on the seat's full legal list: the default only if it is still allowed
        own = self._base_act(state, legal, num_actions, srng)
        default = own if own in allowed else None
        crn_seed = int(srng.random() * 2**53)
        k = max(MIN_PER_ACTION, math.ceil(self.simulations / len(allowed)))
        copier = SimulationCloner(state)

        def batch(a: int, first: int, count: int) -> np.ndarray:
            out = np.empty(count)
            for j in range(count):
                s = copier(state)
                s.apply_action(a)
                out[j] = self._playout(s, me, forbid_extra, num_actions, Rng(seed_for(crn_seed, first + j)))
            return out

        returns = {a: batch(a, 0, k) for a in allowed}
        spent = k * len(allowed)
        means = {a: float(r.mean()) for a, r in returns.items()}
        best = max(allowed, key=lambda a: (means[a], a == default))
        choice = best
        if default is not None and best != default:
            # the best of several noisy estimates is biased upwards: confirm its edge on fresh playouts
            m = max(MIN_PER_ACTION, math.ceil(self.simulations * self.confirm / 2))
            diff = batch(best, k, m) - batch(default, k, m)
            spent += 2 * m
            gain = float(diff.mean())
            se = float(diff.std(ddof=1)) / math.sqrt(m)
            if not (gain > 0.0 and gain > self.z * se):
                choice = default
        self.last = SearchStats(spent, dict.fromkeys(allowed, k), means, time.perf_counter() - t0)
        return int(choice)

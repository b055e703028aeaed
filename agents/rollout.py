"""Rollout-based policy improvement over a base policy (``search:<base>@<n>#rollout``, ``...#rollout#exact``).

At each decision of its seat with more than one allowed action (after the restriction and the caller's
mask), the agent needs ``Q(s, a)`` for every allowed action ``a``: the expected return of taking ``a``, then
every seat playing the base policy to the end of the game (the agent's own seat under its restriction).
It plays the best of them — one step of policy iteration from the base (Howard 1960), on line: the
rollout algorithm (Tesauro & Galperin 1996; Bertsekas, Tsitsiklis & Wu 1997; Bertsekas, *Rollout, Policy
Iteration, and Distributed Reinforcement Learning*, 2020). ``Q`` is obtained in one of two ways:

1. **Exactly, where it fits the budget** (only with ``#exact``, ``exact=True``: it costs more where it does
   not fit, see docs/search.md). With a (nearly) deterministic base the continuation from ``s`` after ``a``
   is a small game: an expectimax over ``chance_outcomes()`` (Michie 1966) and the base's action
   distribution, with a memo on ``State.key()``, gives ``Q`` with no sampling error. It may expand
   :data:`EXACT_NODES_PER_PLAYOUT` positions per playout of the budget ``@<n>``, for all the actions
   together (a position costs several playout steps: a failed attempt is the extra cost); if it runs out,
   or the engine offers no ``key()``/``chance_outcomes()``, the decision is sampled (2.). The memo lives for
   one decision only, so whether a decision is exact depends on the position and ``@<n>``, never on the
   games played before. The choice is the exact argmax; the base's own choice (below) wins every tie.
2. **By paired playouts** otherwise (and always without ``#exact``): ``k = max(2, ceil(n / #allowed))``
   playouts per action, playout ``j`` of every action drawing its chance outcomes and the base's random
   choices from the same stream (common random numbers), so the comparison of two actions is a *paired*
   one. The **default** is the base's own choice on the seat's full legal list; the agent deviates from it
   only to the best-estimated action whose mean paired advantage over the default, on *fresh* playouts,
   exceeds ``z`` standard errors (and is positive), so with a good base noise does not pull it off its base.

When the base's own choice is not allowed (a restriction or the caller's mask removed it) there is no
default: the agent plays the best value, so restricted play measures the option, not the base's fallback.

**Whole games** (``#whole``, ``whole=True``, with ``#exact``): no budget of positions, and the exact values
(and the base's answers) are kept across decisions for as long as the game's rules are the same (the engine
state's ``cfg``/``config`` object; an engine without one keeps them for one decision only). Every decision is
then exact, at the deepest level of ``steps``, whatever the budget ``@<n>``: the agent is the ``steps``-step
policy iteration from the base, computed once per position, so its play never depends on the games played
before it (the values are exact; only the cost does). For games small enough to solve (the discover
pipeline selects it where :func:`training.discover.exact.fits_exactly` holds); on a large game its first
decision would explore the whole game: past :data:`WHOLE_MAX_NEW` new positions in one decision (or deeper
than :data:`EXACT_MAX_DEPTH` moves) it falls back to the budgeted evaluation above.

``steps`` (default 1; ``#steps=<k>`` on the spec) is the number of policy-iteration steps of the exact
evaluation: with 2 the agent's own later decisions inside the evaluation play the one-step improvement
instead of the base. The levels are deepened in turn on one memo (one step within the base budget, each
further step with :data:`EXACT_DEEPER_NODES_PER_PLAYOUT` more positions per playout); the deepest that fits
is played, and if not even one step fits, playouts. Deterministic for a seed (the sampled
path's stream is seeded from one draw of the rng handed to :meth:`RolloutAgent.act`; the exact path uses
fixed probe seeds); pickles as its spec when built by :func:`agents.search.make_search_agent`.
docs/search.md "Rollout mode" has the measured reach and cost.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from agents.masking import allowed_actions, base_act, masked_groups
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
EXACT_NODES_PER_PLAYOUT = 16
"""Positions the exact evaluation may expand per playout of the budget (``@n`` buys ``16 n`` positions)."""
EXACT_DEEPER_NODES_PER_PLAYOUT = 32
"""Further positions per playout that each policy-iteration step beyond the first may expand (``steps > 1``)."""
EXACT_MAX_DEPTH = 400
"""Deepest line the exact evaluation follows (recursion); a deeper game is sampled."""
WHOLE_MAX_NEW = 400_000
"""Most new positions one ``#whole`` evaluation may expand: beyond it (a game far larger than the ones it is
for) the decision falls back to the budgeted exact evaluation and then to playouts, and ``exact_value`` gives
None. The positions it did expand stay kept (they are exact), so only on such a game may play depend on the
games before."""
WHOLE_MEMO_LIMIT = 3_000_000
"""Exact values a ``#whole`` agent keeps in all; beyond it they are dropped and recomputed (only a cost)."""
BASE_PROBES = 8
"""Probes of a base that answers differently on two seeds, to estimate its action distribution."""
TIE = 1e-12


class _TooLarge(Exception):
    """The exact evaluation ran out of its budget of positions (or depth): sample instead."""


_Store = tuple[dict[tuple[int, Hashable], float], dict[Hashable, list[tuple[int, float]]]]
"""Exact values by (level, position key) and the base's answers by position key, for one seat under one mask."""


def _plain_key(state: State) -> Hashable:
    return state.key()


def rules_token(state: State) -> Any:
    """The object that stands for the rules of ``state``'s game (its config), or None if the engine keeps none."""
    for name in ("cfg", "config"):
        cfg = getattr(state, name, None)
        if cfg is not None and not callable(cfg):
            return cfg
    return None


class _Exact:
    """Exact values, for the agent's seat, of ``steps`` steps of policy iteration from the base.

    ``value(s, 0)`` is the expected return when every seat plays the base from ``s`` to the end (the agent's
    seat under its restriction): an expectation over ``chance_outcomes()`` and the base's action distribution.
    ``value(s, L)`` lets the agent's seat play the greedy improvement of level ``L - 1`` at its own decisions
    (argmax of ``value(child, L - 1)``, ties to the base's own choice). One instance serves one decision: the
    memo never outlives it, so what is computed exactly does not depend on the games played before.
    """

    def __init__(
        self,
        agent: RolloutAgent,
        me: int,
        forbid_extra: frozenset[str],
        num_actions: int,
        cap: float,
        store: _Store | None = None,
        key: Callable[[State], Hashable] | None = None,
    ) -> None:
        self.agent = agent
        self.me = me
        self.forbid_extra = forbid_extra
        self.num_actions = num_actions
        self.left = cap
        self.copier: SimulationCloner | None = None
        self.key = key or _plain_key
        memo, dists = store if store is not None else ({}, {})
        self.memo: dict[tuple[int, Hashable], float] = memo
        self.dists: dict[Hashable, list[tuple[int, float]]] = dists

    def child(self, state: State, move: Any, chance: bool) -> State:
        assert self.copier is not None
        c = self.copier(state)
        if chance:
            c.apply_chance(move)
        else:
            c.apply_action(move)
        return c

    def allowed(self, state: State, player: int) -> list[int]:
        legal = state.legal_actions()
        return self.agent._allowed(state, legal, self.forbid_extra) if player == self.me else legal

    def base_dist(self, state: State, k: Hashable, allowed: list[int]) -> list[tuple[int, float]]:
        """The base's action distribution on ``allowed`` (deterministic if two probes agree; uniform exactly)."""
        d = self.dists.get(k)
        if d is not None:
            return d
        if len(allowed) == 1:
            d = [(allowed[0], 1.0)]
        elif isinstance(self.agent.base, UniformRandom):
            d = [(a, 1.0 / len(allowed)) for a in allowed]
        else:
            act = self.agent._base_act
            first = act(state, allowed, self.num_actions, Rng(1_000_003))
            if act(state, allowed, self.num_actions, Rng(2_000_006)) == first:
                d = [(first, 1.0)]
            else:
                counts: dict[int, int] = {}
                for i in range(BASE_PROBES):
                    a = act(state, allowed, self.num_actions, Rng(1_000_003 * (i + 1)))
                    counts[a] = counts.get(a, 0) + 1
                d = [(a, c / BASE_PROBES) for a, c in sorted(counts.items())]
        self.dists[k] = d
        return d

    def own_choice(self, state: State, k: Hashable, allowed: list[int]) -> int:
        """The base's most likely choice (the default a tie keeps)."""
        return max(self.base_dist(state, k, allowed), key=lambda ap: (ap[1], -ap[0]))[0]

    def value(self, state: State, level: int, depth: int = 0) -> float:
        player = state.current_player()
        if player == TERMINAL:
            return float(state.returns()[self.me])
        k = self.key(state)
        v = self.memo.get((level, k))
        if v is not None:
            return v
        self.left -= 1
        if self.left < 0 or depth > EXACT_MAX_DEPTH:
            raise _TooLarge
        if player == CHANCE:
            v = 0.0
            for o, p in state.chance_outcomes():
                if p > 0.0:
                    v += p * self.value(self.child(state, o, True), level, depth + 1)
        else:
            allowed = self.allowed(state, player)
            if player == self.me and level > 0 and len(allowed) > 1:
                q = self.q_values(state, allowed, level - 1, depth)
                best = self.greedy(q, allowed, self.own_choice(state, k, allowed))
                v = self.value(self.child(state, best, False), level, depth + 1)
            else:
                v = 0.0
                for a, p in self.base_dist(state, k, allowed):
                    v += p * self.value(self.child(state, a, False), level, depth + 1)
        self.memo[(level, k)] = v
        return v

    def q_values(self, state: State, allowed: list[int], level: int, depth: int = 0) -> dict[int, float]:
        return {a: self.value(self.child(state, a, False), level, depth + 1) for a in allowed}

    @staticmethod
    def greedy(q: dict[int, float], allowed: list[int], default: int | None) -> int:
        """The best action by ``q``; the default unless another beats it by more than a rounding error."""
        best = max(allowed, key=lambda a: q[a])
        if default is not None and default in q and q[best] <= q[default] + TIE:
            return default
        return best


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
        steps: int = 1,
        exact: bool = False,
        whole: bool = False,
    ) -> None:
        if rollouts < 1:
            raise UserError(f"a rollout agent needs at least 1 playout per decision, got {rollouts}")
        self.base: Policy = base if base is not None else UniformRandom()
        self.simulations = rollouts
        self.restriction = restriction
        self.z = DEFAULT_Z if z is None else z
        self.confirm = DEFAULT_CONFIRM
        if steps < 1:
            raise UserError(f"a rollout agent takes at least one step of policy iteration, got {steps}")
        self.steps = steps
        self.exact = exact
        if whole and not exact:
            raise UserError("a rollout agent keeps whole-game exact values only with exact=True (#exact#whole)")
        self.whole = whole
        self._stores: dict[int, tuple[Any, dict[tuple[int, frozenset[str]], _Store]]] = {}
        self._key: Callable[[State], Hashable] | None = None
        self._whole_default: int | None = None
        self.deeper_nodes = EXACT_DEEPER_NODES_PER_PLAYOUT
        self.last_level: int | None = None
        """The policy-iteration level of the last decision's exact values (None: sampled or a single action)."""
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
        return base_act(self.base, state, allowed, num_actions, rng)

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
        self.last_level = None
        if len(allowed) == 1:
            self.last = SearchStats(0, {allowed[0]: 0}, {}, time.perf_counter() - t0)
            return allowed[0]
        num_actions = len(mask)
        # the base's own choice, on the seat's full legal list: the default only if it is still allowed
        own = self._base_act(state, legal, num_actions, srng)
        default = own if own in allowed else None
        crn_seed = int(srng.random() * 2**53)
        copier = SimulationCloner(state)
        if self.exact:
            found = self._exact_values(state, allowed, me, forbid_extra, num_actions, copier)
            if found is not None:
                q, expanded = found
                if self.whole:  # the default the whole-game values assume (exact_value is this play's value)
                    default = self._whole_default
                choice = _Exact.greedy(q, allowed, default)
                self.last = SearchStats(expanded, dict.fromkeys(allowed, 0), q, time.perf_counter() - t0)
                return int(choice)
        k = max(MIN_PER_ACTION, math.ceil(self.simulations / len(allowed)))

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

    def _exact_values(
        self,
        state: State,
        allowed: list[int],
        me: int,
        forbid_extra: frozenset[str],
        num_actions: int,
        copier: SimulationCloner,
    ) -> tuple[dict[int, float], int] | None:
        """``Q(s, a)`` of every allowed action, exactly, at the highest level that fits the budget (else None).

        Iterative deepening over the levels on one memo: level 0 (the base's continuation) within ``16 n``
        positions, then each further level with :data:`EXACT_DEEPER_NODES_PER_PLAYOUT` ``n`` more, reusing the
        values already computed (level ``L`` reads level ``L - 1`` at the seat's own decisions); the deepest
        level that completes is played. With ``steps == 1`` this is the one level-0 attempt.
        """
        if self.whole:
            whole = self._whole_values(state, allowed, me, forbid_extra, num_actions, copier)
            if whole is not None:
                return whole
        cap = self.simulations * EXACT_NODES_PER_PLAYOUT
        ex = _Exact(self, me, forbid_extra, num_actions, cap)
        ex.copier = copier
        found: tuple[dict[int, float], int] | None = None
        for level in range(self.steps):
            if level > 0:
                ex.left += self.simulations * self.deeper_nodes
                cap += self.simulations * self.deeper_nodes
            try:
                q = ex.q_values(state, allowed, level)
            except _TooLarge:
                break
            except NotImplementedError:  # no key() or no chance_outcomes(): sample
                return None
            found = (q, int(cap - ex.left))
            self.last_level = level
        return found

    def _store(self, state: State, me: int, forbid_extra: frozenset[str]) -> _Store | None:
        """The kept exact values of this game's rules for ``me`` under ``forbid_extra`` (None: not kept)."""
        token = rules_token(state)
        if token is None:
            return None
        if sum(len(m) + len(d) for _, stores in self._stores.values() for m, d in stores.values()) > WHOLE_MEMO_LIMIT:
            self._stores.clear()
        held = self._stores.get(id(token))
        if held is None or held[0] is not token:  # each token is held, so its id is not reused while kept
            same = next((stores for tok, stores in self._stores.values() if tok == token), None)
            held = (token, same if same is not None else {})  # equal rules (another copy): the same values
            self._stores[id(token)] = held
        return held[1].setdefault((me, forbid_extra), ({}, {}))

    def _whole_values(
        self,
        state: State,
        allowed: list[int],
        me: int,
        forbid_extra: frozenset[str],
        num_actions: int,
        copier: SimulationCloner,
    ) -> tuple[dict[int, float], int] | None:
        """``#whole``: the deepest level's ``Q(s, a)``, exactly, with no budget and the values kept (else None)."""
        store = self._store(state, me, forbid_extra)
        if self._key is None:
            self._resolve_key(state)
        ex = _Exact(self, me, forbid_extra, num_actions, WHOLE_MAX_NEW, store, self._key)
        ex.copier = copier
        level = self.steps - 1
        before = len(ex.memo)
        try:
            q = ex.q_values(state, allowed, level)
        except _TooLarge:  # over WHOLE_MAX_NEW positions or deeper than EXACT_MAX_DEPTH: the budgeted path
            return None
        except NotImplementedError:
            return None
        self.last_level = level
        self._whole_default = ex.own_choice(state, ex.key(state), allowed)
        return q, len(ex.memo) - before

    def exact_value(self, state: State, seat: int, num_actions: int, *, base: bool = False) -> float | None:
        """``#whole``: the exact expected return of ``seat`` from ``state`` when it plays this agent (``base``:
        the base, under the agent's restriction) and every other seat plays the base, over every chance outcome.

        It is the value of the agent's own play: at each decision the agent plays the argmax this evaluates
        (ties to the base's most likely choice, as :meth:`act` does in this mode). None where the engine has no
        ``key()``/``chance_outcomes()`` or the game is deeper than :data:`EXACT_MAX_DEPTH`. The values are kept,
        so the games played afterwards in this process cost little.
        """
        if not self.whole:
            raise ValueError("exact_value needs a #whole agent (search:<base>@<n>#rollout#exact#whole)")
        if self._key is None:
            self._resolve_key(state)
        assert self._key is not None
        ex = _Exact(
            self, seat, frozenset(), num_actions, WHOLE_MAX_NEW, self._store(state, seat, frozenset()), self._key
        )
        ex.copier = SimulationCloner(state)
        try:
            return ex.value(state.clone(), 0 if base else self.steps)
        except (_TooLarge, NotImplementedError):
            return None

    def _resolve_key(self, state: State) -> None:
        """The exact solver's key for this scenario (it merges positions no later rule tells apart)."""
        from agents.solver_keys import solver_key

        src = self._source
        self._key = solver_key(src[0], src[2], state) if src is not None and src[2] is not None else _plain_key

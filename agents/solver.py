"""Exact optimal play: expectimax / value iteration over ``chance_outcomes()`` with a memo on ``State.key()``.

The solver explores every position reachable from a root state (merging positions with the same
``key()``), then backs values up:

* at a chance node the value is the probability-weighted mean over ``chance_outcomes()``;
* at a decision node of a seat the solver plays, the seat takes the action that maximises *its own*
  expected return (one seat: an MDP; several seats: max^n, which is minimax for two-seat zero-sum
  games);
* at a decision node of a seat played by a fixed :class:`~envs.core.policy.Policy` (a persona), the
  value is the mean over that policy's action distribution (probed with fixed seeds; a persona that
  answers the same on every probe is deterministic and exact; ``random`` is uniform over the legal
  actions, exactly);
* a finished game is merged with every other finished game of the same returns (and win), whatever
  bookkeeping its engine state still carries;
* a terminal node is worth ``returns()``.

An acyclic position graph is solved by one backward pass in reverse topological order (exact
expectimax); a cyclic one by Gauss-Seidel value iteration to a tolerance.

Exploration stops with :class:`TooLargeError` (a :class:`~envs.core.errors.UserError`, so the CLI
prints one line and exits 2) once more than ``max_states`` distinct positions are found; the error
carries an estimate of the game-tree size from Knuth's random-probe estimator.

The result yields a :class:`SolverPolicy` that plays the optimal policy, and :func:`evaluate_exactly`
computes the exact value of any fixed set of policies (e.g. a trained RL agent against a persona), so
the gap to the optimum can be measured without sampling noise.
"""

from __future__ import annotations

import copy
import math
import sys
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel

from envs.core.dice import Rng
from envs.core.errors import UserError
from envs.core.game import CHANCE, TERMINAL, State
from envs.core.policy import Policy, UniformRandom

KeyFn = Callable[[State], Hashable]

DEFAULT_MAX_STATES = 1_000_000
PERSONA_PROBES = 16
TIE_TOLERANCE = 1e-12


class TooLargeError(UserError):
    """The scenario has more reachable positions than the solver was allowed to explore."""

    def __init__(self, message: str, explored: int, estimate: float | None) -> None:
        super().__init__(message)
        self.explored = explored
        self.estimate = estimate


def default_key(state: State) -> Hashable:
    return state.key()


# ------------------------------------------------------------------------------------------------
# The explicit position graph
# ------------------------------------------------------------------------------------------------
@dataclass
class _Node:
    player: int  # a seat, CHANCE or TERMINAL
    parent: int = -1  # the node it was first reached from (for replaying a path)
    via: Any = None  # the action (decision) or outcome (chance) that led here from ``parent``
    via_chance: bool = False
    actions: list[int] = field(default_factory=list)  # decision nodes: legal action ids
    probs: list[float] = field(default_factory=list)  # chance / fixed-policy nodes: edge probabilities
    children: list[int] = field(default_factory=list)  # child node per action / outcome
    returns: tuple[float, ...] = ()
    win: float = 0.0  # terminal: 1 if the solved seat won
    context: str = ""
    options: list[str | None] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    fixed: bool = False  # decision node of a seat played by a fixed policy


@dataclass
class StateEstimate:
    """Knuth's estimate of the game-tree size (distinct positions can be fewer: the tree repeats them)."""

    tree_nodes: float
    mean_depth: float
    max_depth: int
    probes: int

    def describe(self) -> str:
        return (
            f"~{_sci(self.tree_nodes)} positions in the game tree (Knuth's estimator, {self.probes} random "
            f"probes; mean depth {self.mean_depth:.1f}, max {self.max_depth})"
        )


def _sci(x: float) -> str:
    if x < 1e6:
        return f"{x:,.0f}"
    return f"{x:.2g}".replace("e+", "e")


@dataclass
class PolicyRow:
    """One decision of the optimal policy, for the readable table."""

    reach: float  # probability that play under the solved policies reaches this decision
    seat: int
    context: str
    resources: dict[str, float]
    recent: list[str]  # the last narration lines before the decision
    best: int
    best_label: str
    q: list[tuple[str, float]]  # (action label, expected return of the seat) for every legal action


@dataclass
class SolveResult:
    """The solved game: values, the optimal policy, and the means to read them."""

    root: State
    seat: int  # the seat whose value is reported
    solved_seats: tuple[int, ...]  # seats that play optimally
    fixed: dict[int, str]  # seat -> name of the fixed policy
    value: tuple[float, ...]  # expected return of every seat at the root
    win_probability: float  # probability that ``seat`` wins under the solved policies
    num_states: int
    num_decisions: int
    acyclic: bool
    iterations: int
    residual: float
    seconds: float
    stochastic_fixed_nodes: int  # fixed-policy decisions whose distribution was estimated from probes
    config: Any = None  # the resolved rules config, when solved through a ruleset (solve_scenario)
    _index: dict[Hashable, int] = field(repr=False, default_factory=dict)
    _nodes: list[_Node] = field(repr=False, default_factory=list)
    _values: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0)))
    _best: dict[int, int] = field(repr=False, default_factory=dict)  # node -> best action
    _key: KeyFn = field(repr=False, default=default_key)
    _opponents: dict[int, Policy] = field(repr=False, default_factory=dict)

    # -- the optimal policy ----------------------------------------------------------------------
    def best_action(self, state: State) -> int | None:
        """The optimal action in ``state`` (``None`` if the solver never reached this position)."""
        idx = self._index.get(self._key(state))
        if idx is None:
            return None
        return self._best.get(idx)

    def action_values(self, state: State) -> dict[int, float]:
        """Expected return of the mover for each legal action in ``state`` (empty if unknown)."""
        idx = self._index.get(self._key(state))
        if idx is None:
            return {}
        node = self._nodes[idx]
        if node.player < 0:
            return {}
        return {a: float(self._values[c, node.player]) for a, c in zip(node.actions, node.children, strict=True)}

    def policy(self, name: str = "optimal") -> SolverPolicy:
        return SolverPolicy(self, name)

    # -- reading -----------------------------------------------------------------------------------
    def reach_probabilities(self) -> np.ndarray:
        """Expected visits of every node when every seat plays as solved (probabilities if acyclic)."""
        n = len(self._nodes)
        if self.acyclic:
            visits = np.zeros(n)
            visits[0] = 1.0
            for i in self._topo:
                if visits[i] != 0.0:
                    for c, p in self._edge_probs(i):
                        visits[c] += visits[i] * p
            return visits
        visits = np.zeros(n)
        for _sweep in range(10_000):
            new = np.zeros(n)
            new[0] = 1.0
            for i in range(n):
                if visits[i] != 0.0:
                    for c, p in self._edge_probs(i):
                        new[c] += visits[i] * p
            delta = float(np.max(np.abs(new - visits)))
            visits = new
            if delta < 1e-12:
                break
        return visits

    def _edge_probs(self, i: int) -> list[tuple[int, float]]:
        node = self._nodes[i]
        if node.player == TERMINAL:
            return []
        if node.player == CHANCE or node.fixed:
            return list(zip(node.children, node.probs, strict=True))
        best = self._best[i]
        return [(node.children[node.actions.index(best)], 1.0)]

    @property
    def _topo(self) -> list[int]:
        return self.__dict__.setdefault("_topo_cache", _topological_order(self._nodes)[0])

    def replay(self, idx: int) -> State:
        """The position of node ``idx``, rebuilt by replaying its first-found path from the root."""
        path: list[_Node] = []
        i = idx
        while i > 0:
            path.append(self._nodes[i])
            i = self._nodes[i].parent
        s = self.root.clone()
        for node in reversed(path):
            if node.via_chance:
                s.apply_chance(node.via)
            else:
                s.apply_action(node.via)
        return s

    def policy_rows(self, limit: int = 25, min_reach: float = 1e-9) -> list[PolicyRow]:
        """The most likely decisions of the solved seats under optimal play, most likely first."""
        reach = self.reach_probabilities()
        cand = [i for i in self._best if reach[i] > min_reach]
        cand.sort(key=lambda i: (-reach[i], i))
        rows: list[PolicyRow] = []
        for i in cand[:limit]:
            node = self._nodes[i]
            state = self.replay(i)
            best = self._best[i]
            q = [(lab, float(self._values[c, node.player])) for lab, c in zip(node.labels, node.children, strict=True)]
            recent = [e.text for e in state.log[-2:]]
            rows.append(
                PolicyRow(
                    float(reach[i]),
                    node.player,
                    node.context,
                    dict(state.resources(node.player)),
                    recent,
                    best,
                    node.labels[node.actions.index(best)],
                    q,
                )
            )
        return rows

    def option_summary(self) -> list[dict[str, Any]]:
        """How often optimal play picks each option, per decision context (weighted by reach)."""
        reach = self.reach_probabilities()
        table: dict[tuple[int, str, str], float] = {}
        totals: dict[tuple[int, str], float] = {}
        for i, best in self._best.items():
            r = float(reach[i])
            if r <= 0.0:
                continue
            node = self._nodes[i]
            opt = node.options[node.actions.index(best)] or node.labels[node.actions.index(best)]
            table[(node.player, node.context, opt)] = table.get((node.player, node.context, opt), 0.0) + r
            totals[(node.player, node.context)] = totals.get((node.player, node.context), 0.0) + r
        rows = []
        for (seat, ctx, opt), r in sorted(table.items(), key=lambda kv: (kv[0][0], kv[0][1], -kv[1])):
            rows.append(
                {"seat": seat, "context": ctx, "option": opt, "expected_times": r, "share": r / totals[(seat, ctx)]}
            )
        return rows

    def to_dict(self, limit: int = 25) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "solved_seats": list(self.solved_seats),
            "fixed": {str(k): v for k, v in self.fixed.items()},
            "value": list(self.value),
            "win_probability": self.win_probability,
            "num_states": self.num_states,
            "num_decisions": self.num_decisions,
            "acyclic": self.acyclic,
            "iterations": self.iterations,
            "residual": self.residual,
            "seconds": self.seconds,
            "stochastic_fixed_nodes": self.stochastic_fixed_nodes,
            "options": self.option_summary(),
            "policy": [
                {
                    "reach": r.reach,
                    "seat": r.seat,
                    "context": r.context,
                    "resources": r.resources,
                    "recent": r.recent,
                    "best": r.best_label,
                    "q": {lab: v for lab, v in r.q},
                }
                for r in self.policy_rows(limit)
            ],
        }


class SolverPolicy:
    """Plays the solved optimal policy; a position the solve never reached is solved on the spot."""

    def __init__(self, result: SolveResult, name: str = "optimal") -> None:
        self.result = result
        self.name = name
        self._extra: dict[Hashable, int] = {}

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        a = self.result.best_action(state)
        if a is None:
            k = self.result._key(state)
            if k not in self._extra:
                sub = solve(
                    state, seat=state.current_player(), opponents=self.result._opponents or None, key=self.result._key
                )
                a0 = sub.best_action(state)
                assert a0 is not None
                self._extra[k] = a0
            a = self._extra[k]
        if not mask[a]:  # never expected: the solve saw the same legal actions
            raise RuntimeError(f"solver's action {a} is not legal here")
        return int(a)


# ------------------------------------------------------------------------------------------------
# Exploration
# ------------------------------------------------------------------------------------------------
def _policy_distribution(policy: Policy, state: State, num_actions: int, probes: int) -> dict[int, float]:
    legal = state.legal_actions()
    if isinstance(policy, UniformRandom):  # known exactly: no probing (probes would only estimate it)
        return {a: 1.0 / len(legal) for a in legal}
    mask = np.zeros(max(num_actions, max(legal) + 1), dtype=bool)
    mask[legal] = True
    counts: dict[int, int] = {}
    for i in range(probes):
        a = int(policy.act(state, mask, Rng(1_000_003 * (i + 1))))
        if a not in legal:
            raise UserError(f"fixed policy '{policy.name}' chose illegal action {a}")
        counts[a] = counts.get(a, 0) + 1
    return {a: c / probes for a, c in counts.items()}


def frozen_models(obj: Any, found: dict[int, Any], depth: int = 0) -> None:
    """Every frozen pydantic model reachable from ``obj`` (immutable: clones may share them)."""
    if depth > 6:
        return
    if isinstance(obj, BaseModel):
        if not obj.model_config.get("frozen", False) or id(obj) in found:
            return
        found[id(obj)] = obj
        for name in type(obj).model_fields:
            frozen_models(getattr(obj, name), found, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            frozen_models(x, found, depth + 1)
    elif isinstance(obj, dict):
        for x in obj.values():
            frozen_models(x, found, depth + 1)


class SimulationCloner:
    """Fast clones for exploration and search: the narration log is dropped and narration is off (no engine
    reads it), and, for
    states that use the default deepcopy clone, frozen config models are shared instead of copied."""

    def __init__(self, root: State) -> None:
        self.default = type(root).clone is State.clone
        self.shared: dict[int, Any] = {}
        if self.default:
            for v in vars(root).values():
                frozen_models(v, self.shared)

    def __call__(self, state: State) -> State:
        if self.default:
            memo = dict(self.shared)
            memo[id(state.log)] = []
            child = copy.deepcopy(state, memo)
        else:
            child = state.clone()
            child.log = []
        child.narrating = False
        return child


def _explore(
    root: State, seat: int, opponents: Mapping[int, Policy], key: KeyFn, max_states: int, num_actions: int, probes: int
) -> tuple[list[_Node], dict[Hashable, int], int]:
    try:
        k0 = key(root)
    except NotImplementedError as e:
        raise UserError(f"cannot solve exactly: {e}") from None
    index: dict[Hashable, int] = {k0: 0}
    nodes: list[_Node] = [_Node(root.current_player())]
    clone = SimulationCloner(root)
    stack: list[tuple[State, int]] = [(clone(root), 0)]
    stochastic = 0
    while stack:
        state, idx = stack.pop()
        node = nodes[idx]
        player = state.current_player()
        edges: list[tuple[Any, float, bool]] = []  # (action or outcome, probability, is_chance)
        if player == TERMINAL:
            node.returns = tuple(float(r) for r in state.returns())
            out = state.outcome()
            node.win = 1.0 if out is not None and out.winner == seat else 0.0
            continue
        if player == CHANCE:
            try:
                outcomes = state.chance_outcomes()
            except NotImplementedError as e:
                raise UserError(f"cannot solve exactly: a chance node does not enumerate its outcomes ({e})") from None
            merged: dict[Hashable, float] = {}
            for o, p in outcomes:
                if p > 0.0:
                    merged[o] = merged.get(o, 0.0) + float(p)
            edges = [(o, p, True) for o, p in merged.items()]
        else:
            legal = list(state.legal_actions())
            if not legal:
                raise UserError(f"seat {player} has no legal action in context '{state.decision_context()}'")
            node.context = sys.intern(state.decision_context())
            node.labels = [sys.intern(state.action_label(a)) for a in legal]
            node.options = [None if (o := state.option_of(a)) is None else sys.intern(o) for a in legal]
            if player in opponents:
                node.fixed = True
                dist = _policy_distribution(opponents[player], state, num_actions, probes)
                if len(dist) > 1 and not isinstance(opponents[player], UniformRandom):
                    stochastic += 1  # estimated from probes (a uniform policy's distribution is exact)
                node.actions = legal
                edges = [(a, dist.get(a, 0.0), False) for a in legal]
            else:
                node.actions = legal
                edges = [(a, 1.0, False) for a in legal]
        last = len(edges) - 1
        for j, (move, p, is_chance) in enumerate(edges):
            if node.fixed and p == 0.0:  # an action the fixed policy never takes: do not explore it
                node.children.append(-1)
                node.probs.append(0.0)
                continue
            child = state if j == last else clone(state)
            if child is state:
                state.log.clear()
            if is_chance:
                child.apply_chance(move)
            else:
                child.apply_action(move)
            # a finished game is worth its returns (and whether the solved seat won): merge terminals by those,
            # so engine bookkeeping that outlives the game (last rolls, spent movement) does not multiply them
            k = _terminal_key(child, seat) if child.current_player() == TERMINAL else key(child)
            c = index.get(k)
            if c is None:
                c = len(nodes)
                index[k] = c
                nodes.append(_Node(child.current_player(), idx, move, is_chance))
                stack.append((child, c))
                if len(nodes) > max_states:
                    raise _Overflow(len(nodes))
            node.children.append(c)
            node.probs.append(p)
        if node.fixed:  # drop the never-taken actions' placeholders from the graph edges
            keep = [i for i, c in enumerate(node.children) if c >= 0]
            node.actions = [node.actions[i] for i in keep]
            node.children = [node.children[i] for i in keep]
            node.probs = [node.probs[i] for i in keep]
            node.labels = [node.labels[i] for i in keep]
            node.options = [node.options[i] for i in keep]
    return nodes, index, stochastic


def _terminal_key(state: State, seat: int) -> Hashable:
    """The merge key of a finished game: everything the backup reads from it (returns, the seat's win)."""
    out = state.outcome()
    return ("terminal", tuple(float(r) for r in state.returns()), out is not None and out.winner == seat)


class _Overflow(Exception):
    def __init__(self, explored: int) -> None:
        self.explored = explored


def _topological_order(nodes: list[_Node]) -> tuple[list[int], bool]:
    """Nodes with every parent before its children, and whether the graph is acyclic."""
    n = len(nodes)
    indeg = [0] * n
    for node in nodes:
        for c in node.children:
            indeg[c] += 1
    order = [i for i in range(n) if indeg[i] == 0]
    head = 0
    while head < len(order):
        i = order[head]
        head += 1
        for c in nodes[i].children:
            indeg[c] -= 1
            if indeg[c] == 0:
                order.append(c)
    if len(order) == n:
        return order, True
    seen = set(order)
    return order + [i for i in range(n) if i not in seen], False


# ------------------------------------------------------------------------------------------------
# Backing up values
# ------------------------------------------------------------------------------------------------
def _backup(nodes: list[_Node], i: int, values: np.ndarray, best: dict[int, int]) -> np.ndarray:
    node = nodes[i]
    if node.player == TERMINAL:
        return values[i]
    if node.player == CHANCE or node.fixed:
        acc = np.zeros(values.shape[1])
        for c, p in zip(node.children, node.probs, strict=True):
            acc += p * values[c]
        return acc
    s = node.player
    bi = 0
    bv = -math.inf
    for j, c in enumerate(node.children):
        v = values[c, s]
        if v > bv + TIE_TOLERANCE:
            bv = v
            bi = j
    best[i] = node.actions[bi]
    return values[node.children[bi]]


def solve(
    root: State,
    seat: int = 0,
    opponents: Mapping[int, Policy] | None = None,
    *,
    key: KeyFn = default_key,
    max_states: int = DEFAULT_MAX_STATES,
    num_actions: int = 0,
    probes: int = PERSONA_PROBES,
    tolerance: float = 1e-12,
    max_iterations: int = 100_000,
    estimate_probes: int = 200,
) -> SolveResult:
    """Solve the game from ``root`` exactly.

    ``seat`` is the seat whose value and win probability are reported. Seats in ``opponents`` play
    their fixed policy; every other seat plays optimally for its own return. Raises
    :class:`TooLargeError` (with a state-count estimate) beyond ``max_states`` distinct positions.
    """
    t0 = time.perf_counter()
    opponents = dict(opponents or {})
    num_players = root.num_players
    try:
        nodes, index, stochastic = _explore(root, seat, opponents, key, max_states, num_actions, probes)
    except _Overflow as e:
        est = estimate_states(root, opponents, probes=estimate_probes)
        raise TooLargeError(
            f"too large to solve exactly: more than {max_states:,} distinct positions reachable "
            f"(stopped after {e.explored:,}); estimate: {est.describe()}. Raise --max-states or shrink the "
            f"scenario with --rules/--set.",
            e.explored,
            est.tree_nodes,
        ) from None
    order, acyclic = _topological_order(nodes)
    n = len(nodes)
    # columns: each seat's return, then the solved seat's win indicator
    values = np.zeros((n, num_players + 1))
    for i, node in enumerate(nodes):
        if node.player == TERMINAL:
            values[i, :num_players] = node.returns
            values[i, num_players] = node.win
    best: dict[int, int] = {}
    iterations = 1
    residual = 0.0
    if acyclic:
        for i in reversed(order):
            if nodes[i].player != TERMINAL:
                values[i] = _backup(nodes, i, values, best)
    else:
        rev = list(reversed(order))
        for iterations in range(1, max_iterations + 1):  # noqa: B007 - reported below
            residual = 0.0
            for i in rev:
                if nodes[i].player == TERMINAL:
                    continue
                new = _backup(nodes, i, values, best)
                d = float(np.max(np.abs(new - values[i])))
                residual = max(residual, d)
                values[i] = new
            if residual < tolerance:
                break
    solved = tuple(s for s in range(num_players) if s not in opponents)
    num_decisions = sum(1 for nd in nodes if nd.player >= 0 and not nd.fixed)
    res = SolveResult(
        root=root.clone(),
        seat=seat,
        solved_seats=solved,
        fixed={s: getattr(p, "name", type(p).__name__) for s, p in opponents.items()},
        value=tuple(float(v) for v in values[0, :num_players]),
        win_probability=float(values[0, num_players]),
        num_states=n,
        num_decisions=num_decisions,
        acyclic=acyclic,
        iterations=iterations,
        residual=residual,
        seconds=time.perf_counter() - t0,
        stochastic_fixed_nodes=stochastic,
        _index=index,
        _nodes=nodes,
        _values=values,
        _best=best,
        _key=key,
        _opponents=opponents,
    )
    if acyclic:
        res.__dict__["_topo_cache"] = order
    return res


def evaluate_exactly(
    root: State,
    policies: Mapping[int, Policy],
    seat: int = 0,
    *,
    key: KeyFn = default_key,
    max_states: int = DEFAULT_MAX_STATES,
    probes: int = PERSONA_PROBES,
) -> SolveResult:
    """The exact expected returns when every seat plays the given fixed policy (no optimisation).

    Use it for the gap of an agent to the optimum: ``solve(...).value[seat] - evaluate_exactly(...).value[seat]``.
    A stochastic policy's action distribution is estimated from ``probes`` fixed-seed calls per position.
    """
    missing = [s for s in range(root.num_players) if s not in policies]
    if missing:
        raise ValueError(f"evaluate_exactly needs a policy for every seat; missing {missing}")
    return solve(root, seat, policies, key=key, max_states=max_states, probes=probes)


def estimate_states(
    root: State,
    opponents: Mapping[int, Policy] | None = None,
    probes: int = 200,
    seed: int = 0,
    max_depth: int = 100_000,
) -> StateEstimate:
    """Knuth's unbiased estimate of the number of positions in the game tree below ``root``.

    Each probe walks from the root choosing uniformly among the distinct children; the product of the
    branching factors along the path estimates the size of each level. Fixed-policy seats follow their
    policy (branching 1). The tree counts a position once per path, so distinct positions are fewer.
    """
    rng = Rng(seed)
    opponents = dict(opponents or {})
    total = 0.0
    depths: list[int] = []
    for _ in range(probes):
        s = root.clone()
        weight = 1.0
        est = 1.0
        depth = 0
        while s.current_player() != TERMINAL and depth < max_depth:
            p = s.current_player()
            if p == CHANCE:
                try:
                    outs = [o for o, q in s.chance_outcomes() if q > 0.0]
                except NotImplementedError:
                    outs = [s.sample_chance(rng)]
                b = len(set(outs))
                s.apply_chance(outs[int(rng.random() * len(outs))])
            elif p in opponents:
                legal = s.legal_actions()
                mask = np.zeros(max(legal) + 1, dtype=bool)
                mask[legal] = True
                b = 1
                s.apply_action(int(opponents[p].act(s, mask, rng)))
            else:
                legal = s.legal_actions()
                b = len(legal)
                s.apply_action(legal[int(rng.random() * b)])
            weight *= b
            est += weight
            depth += 1
        total += est
        depths.append(depth)
    return StateEstimate(total / probes, float(np.mean(depths)), int(max(depths)), probes)

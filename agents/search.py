"""A general search agent: Monte Carlo tree search over the engine itself, with a base policy as prior and rollout.

The agent needs no per-ruleset code. At each decision of its seat it runs ``simulations`` playouts from
a copy of the position through the game protocol only (``clone``, ``current_player``, ``legal_actions``,
``apply_action``, ``sample_chance``/``apply_chance``, ``returns``, ``option_of``) and plays the most
visited root action (``final="value"``: the best value among the well-visited ones).
The algorithm (see ``docs/search.md`` for the sources):

* **Tree.** Closed-loop UCT (Kocsis & Szepesvári 2006) with explicit chance nodes: a chance node's
  children are keyed by the sampled outcome (``sample_chance``), so values are expectations over the
  engine's own dice (sampled expectimax). One node is added per simulation.
* **Selection** at the searching seat's decisions is PUCT (Rosin 2011; Silver et al. 2017):
  ``Q(a) + c * P(a) * sqrt(N) / (1 + n(a))`` with ``Q`` normalised to [0, 1] by the returns seen so far,
  unvisited actions valued at their parent's mean, and the prior ``P`` putting weight ``prior_weight`` on
  the base policy's choice and spreading the rest uniformly. With a small budget the agent therefore
  plays the base unless simulations show a better action (rollout policy improvement, Tesauro & Galperin
  1996; Bertsekas' rollout algorithm); with a large one it converges to the optimum against its model of
  the other seats.
* **Rollout** from a new node: every seat plays the base policy to the end of the game.
* **Other seats** (``opponents="base"``, the default) are modelled by the base policy: their decisions are
  sampled like chance, so the search is a best response to base-playing opponents (the value the exact
  solver computes with ``opponents={seat: base}``). ``opponents="maxn"`` searches every seat's decisions
  with the same selection rule, each seat maximising its own return (max^n; minimax for two-seat zero-sum).
* **Restriction** of the agent's own seat (``forbid=<group>``: never an action of that option group unless
  it is the only legal move; ``force=<group>``: whenever an action of the group is legal, one of them) is
  applied to every decision of that seat inside the simulations as well as at the root, and the base
  policy is handed the restricted mask, so the values are those of restricted play. A root mask that is
  narrower than the legal actions (e.g. the runner's ``RestrictedPolicy``) is always respected, and an
  option group it masks out entirely is forbidden in the simulations too.

Determinism: the search's own :class:`~envs.core.dice.Rng` is seeded from one draw of the rng handed to
:meth:`SearchAgent.act`; no global randomness. An agent built by :func:`make_search_agent` pickles as its
spec and is rebuilt in a worker process.

Spec grammar (the CLI name)::

    search[:<base>][@<simulations>][#<option>]...
    <option> := forbid=<group> | force=<group> | maxn | c=<float> | rollout | exact | whole | steps=<k> | z=<float>

``<base>`` is any agent spec of :func:`agents.registry.make_agent` (a persona, ``random``, ``rl:<run dir>``;
default ``random``); ``<simulations>`` is the budget per decision (default :data:`DEFAULT_SIMULATIONS`).
Examples: ``search``, ``search:greedy``, ``search:greedy@64``, ``search:flurry@200#forbid=dodge``,
``search:rl:runs/x@32#maxn``. ``#rollout`` selects :class:`agents.rollout.RolloutAgent` (rollout policy
improvement over the base) instead of the tree; ``#rollout#exact`` computes its values exactly where the
base's continuation fits the budget, and ``#rollout#exact#steps=<k>`` (k >= 2) takes up to ``k`` steps of policy
iteration in that exact evaluation, and ``#rollout#exact#whole`` drops the per-decision budget of positions and keeps
the exact values across decisions (for games small enough to solve: every decision is then exact; docs/search.md
"Whole games"); ``#rollout#z=<x>`` sets the standard errors a sampled deviation from the
base must clear (default 1; docs/search.md "Rollout mode").
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from agents.masking import allowed_actions, base_act, masked_groups
from agents.solver import SimulationCloner
from envs.core.dice import Rng, seed_for
from envs.core.errors import UserError
from envs.core.game import CHANCE, TERMINAL, IllegalActionError, State
from envs.core.policy import Policy, UniformRandom

DEFAULT_SIMULATIONS = 32
"""Simulations per decision when the spec names no budget (the quick budget)."""
DEFAULT_C = 1.5
"""PUCT exploration constant on returns normalised to [0, 1]."""
DEFAULT_PRIOR_WEIGHT = 0.25
"""Share of the prior on the base policy's choice (the rest is uniform over the allowed actions)."""
MAX_ROLLOUT_STEPS = 100_000
MAX_ODDS = 512
"""Chance nodes with at most this many enumerated outcomes are backed up with their exact odds."""
ROBUST_SHARE = 0.25
"""Max backup: a decision node is worth its best child among those with at least this share of the
most-visited child's visits (a child seen once or twice is not trusted as the maximum)."""

RestrictionMode = Literal["forbid", "force"]
OpponentModel = Literal["base", "maxn"]
Backup = Literal["max", "mean"]
FinalChoice = Literal["value", "visits"]
SearchMode = Literal["mcts", "rollout"]


# ------------------------------------------------------------------------------------------------
# Restriction of one seat
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Restriction:
    """A restriction of one seat's play to measure an option group's worth (restricted play).

    ``forbid``: the seat never uses the group, unless its actions are the only legal moves (then one
    must be taken, as in the runner's ``RestrictedPolicy``). ``force``: whenever an action of the group
    is legal, the seat uses one of them.
    """

    mode: RestrictionMode
    group: str

    def allowed(self, state: State, legal: Sequence[int]) -> list[int]:
        """The subset of ``legal`` the restricted seat may pick in ``state`` (never empty if ``legal`` is not)."""
        mine = [state.option_of(a) == self.group for a in legal]  # one option_of per action (a hot path)
        inside = [a for a, m in zip(legal, mine, strict=True) if m]
        if self.mode == "force":
            return inside if inside else list(legal)
        if not inside:
            return list(legal)
        outside = [a for a, m in zip(legal, mine, strict=True) if not m]
        return outside if outside else list(legal)

    def spec(self) -> str:
        return f"{self.mode}={self.group}"


def parse_restriction(text: str) -> Restriction:
    """``forbid=<group>`` or ``force=<group>``."""
    mode, sep, group = text.partition("=")
    if not sep or mode not in ("forbid", "force") or not group:
        raise UserError(f"bad restriction '{text}': use forbid=<option group> or force=<option group>")
    return Restriction(mode, group)  # type: ignore[arg-type]


class RestrictedState(State):
    """A view of a :class:`State` in which one seat plays under a :class:`Restriction`.

    ``legal_actions()`` of the restricted seat drops what the restriction disallows; everything else
    (chance, returns, keys, labels, cloning, any engine attribute) passes through to the wrapped state,
    so an exact solver run on the view computes the exact *restricted* optimum without changes::

        solve(RestrictedState(root, seat=0, restriction=Restriction("forbid", "dodge")), seat=0)
    """

    _OWN = frozenset({"inner", "seat", "restriction"})

    def __init__(self, inner: State, seat: int, restriction: Restriction) -> None:  # noqa: D107
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "restriction", restriction)

    def __getattr__(self, name: str) -> Any:  # only called for names the view does not define
        if name in RestrictedState._OWN:
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in RestrictedState._OWN:
            object.__setattr__(self, name, value)
        else:  # e.g. the solver's cloner resetting ``log``, or a key adapter blanking an attribute
            setattr(self.inner, name, value)

    def __getstate__(self) -> dict[str, Any]:
        return {"inner": self.inner, "seat": self.seat, "restriction": self.restriction}

    def __setstate__(self, st: dict[str, Any]) -> None:
        for k, v in st.items():
            object.__setattr__(self, k, v)

    def current_player(self) -> int:
        return self.inner.current_player()

    def legal_actions(self) -> list[int]:
        legal = self.inner.legal_actions()
        if legal and self.inner.current_player() == self.seat:
            return self.restriction.allowed(self.inner, legal)
        return legal

    def apply_action(self, action: int) -> None:
        if self.inner.current_player() == self.seat and action not in self.legal_actions():
            raise IllegalActionError(f"action {action} is not allowed under {self.restriction.spec()}")
        self.inner.apply_action(action)

    def action_label(self, action: int) -> str:
        return self.inner.action_label(action)

    def chance_outcomes(self) -> list[tuple[Any, float]]:
        return self.inner.chance_outcomes()

    def sample_chance(self, rng: Rng) -> Any:
        return self.inner.sample_chance(rng)

    def apply_chance(self, outcome: Any) -> None:
        self.inner.apply_chance(outcome)

    def outcome(self) -> Any:
        return self.inner.outcome()

    def returns(self) -> list[float]:
        return self.inner.returns()

    def observation(self, seat: int) -> np.ndarray:
        return self.inner.observation(seat)

    def resources(self, seat: int) -> dict[str, float]:
        return self.inner.resources(seat)

    def option_of(self, action: int) -> str | None:
        return self.inner.option_of(action)

    def decision_context(self) -> str:
        return self.inner.decision_context()

    def narrate(self, kind: str, text: str, seat: int | None = None, **data: Any) -> None:
        self.inner.narrate(kind, text, seat, **data)

    def clone(self) -> RestrictedState:
        return RestrictedState(self.inner.clone(), self.seat, self.restriction)

    def key(self) -> Hashable:
        return self.inner.key()


# ------------------------------------------------------------------------------------------------
# The tree (simulation copies come from agents.solver.SimulationCloner)
# ------------------------------------------------------------------------------------------------
class _Node:
    """A position reached by one path from the root: visits, value estimate per seat, children by edge.

    ``own`` sums the returns of the simulations that ended here (the rollout from a new node, or a
    terminal position); ``s`` sums ``n * v`` over the children. A searched decision node (``seat`` >= 0)
    is worth its best well-visited child (max backup); any other node (chance, a seat played by the base,
    a forced move) the visit-weighted mean ``(own + s) / n`` (expectation backup).
    """

    __slots__ = ("actions", "children", "n", "own", "prior", "probs", "s", "seat", "v")

    def __init__(self, num_players: int) -> None:
        self.n = 0
        self.v = [0.0] * num_players
        self.own = [0.0] * num_players
        self.s = [0.0] * num_players
        self.seat = -1
        self.children: dict[Hashable, _Node] = {}
        self.actions: list[int] | None = None  # searched decision nodes: the allowed actions
        self.prior: list[float] = []
        self.probs: dict[Hashable, float] | None = None  # chance nodes that enumerate their outcomes

    def revalue(self, backup: str) -> None:
        n = self.n
        if self.seat >= 0 and self.children and backup == "max":
            seat = self.seat
            most = max(c.n for c in self.children.values())
            threshold = max(1.0, ROBUST_SHARE * most)
            best: _Node | None = None
            for c in self.children.values():
                if c.n >= threshold and (best is None or c.v[seat] > best.v[seat]):
                    best = c
            assert best is not None
            self.v = list(best.v)
        elif self.probs is not None and self.children:  # chance with known odds: weight outcomes by them
            probs = self.probs
            mass = 0.0
            acc = [0.0] * len(self.v)
            for o, c in self.children.items():
                p = probs.get(o, 0.0)
                if p > 0.0 and c.n:
                    mass += p
                    for i, x in enumerate(c.v):
                        acc[i] += p * x
            if mass > 0.0:
                self.v = [x / mass for x in acc]
            else:
                self.v = [(o + x) / n for o, x in zip(self.own, self.s, strict=True)]
        else:
            self.v = [(o + x) / n for o, x in zip(self.own, self.s, strict=True)]


def _outcome_odds(state: State) -> dict[Hashable, float] | None:
    """The chance node's ``{outcome: probability}`` where it enumerates at most :data:`MAX_ODDS` outcomes."""
    try:
        outcomes = state.chance_outcomes()
    except NotImplementedError:
        return None
    if len(outcomes) > MAX_ODDS:
        return None
    odds: dict[Hashable, float] = {}
    for o, p in outcomes:
        odds[o] = odds.get(o, 0.0) + float(p)
    return odds


@dataclass
class SearchStats:
    """What the last :meth:`SearchAgent.act` did (for tests and benchmarks)."""

    simulations: int = 0
    root_visits: dict[int, int] | None = None
    root_values: dict[int, float] | None = None
    seconds: float = 0.0


class SearchAgent:
    """MCTS over the engine with a base policy as prior and rollout policy (see the module docstring)."""

    def __init__(
        self,
        base: Policy | None = None,
        simulations: int = DEFAULT_SIMULATIONS,
        *,
        restriction: Restriction | None = None,
        opponents: OpponentModel = "base",
        c: float = DEFAULT_C,
        prior_weight: float | None = None,
        backup: Backup = "max",
        crn: bool = True,
        final: FinalChoice = "visits",
        final_share: float = ROBUST_SHARE,
        name: str | None = None,
    ) -> None:
        if simulations < 1:
            raise UserError(f"a search needs at least 1 simulation per decision, got {simulations}")
        if opponents not in ("base", "maxn"):
            raise UserError(f"unknown opponent model '{opponents}'; valid: base, maxn")
        self.base: Policy = base if base is not None else UniformRandom()
        self.simulations = simulations
        self.restriction = restriction
        self.opponents = opponents
        self.c = c
        # a uniform base's pick carries no information: its prior is uniform
        if prior_weight is None:
            prior_weight = 0.0 if isinstance(self.base, UniformRandom) else DEFAULT_PRIOR_WEIGHT
        self.prior_weight = prior_weight
        self.backup = backup
        self.crn = crn
        self.final = final
        self.final_share = final_share
        self.name = name or f"search:{self.base.name}@{simulations}"
        self.last = SearchStats()
        self._source: tuple[str, str, str | None] | None = None  # (ruleset, spec, scenario) when built from a spec

    def __reduce__(self) -> Any:
        if self._source is not None:
            return (make_search_agent, self._source)
        return super().__reduce__()

    # -- the allowed actions of a seat ----------------------------------------------------------------
    def _allowed(self, state: State, legal: list[int], seat: int, me: int, forbid_extra: frozenset[str]) -> list[int]:
        return legal if seat != me else allowed_actions(state, legal, forbid_extra, self.restriction)

    # -- the Policy protocol --------------------------------------------------------------------------
    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        t0 = time.perf_counter()
        allowed_root = [int(a) for a in np.flatnonzero(mask)]
        if not allowed_root:
            raise ValueError("search agent called with an empty mask")
        me = state.current_player()
        legal = state.legal_actions()
        forbid_extra = masked_groups(state, legal, mask, allowed_root)  # forbidden in simulations too
        srng = Rng(int(rng.random() * 2**53))
        restricted = self.restriction.allowed(state, allowed_root) if self.restriction is not None else allowed_root
        if len(restricted) == 1:
            self.last = SearchStats(0, {restricted[0]: 0}, {}, time.perf_counter() - t0)
            return restricted[0]
        num_actions = len(mask)
        copier = SimulationCloner(state)
        root = _Node(state.num_players)
        self._expand(root, state, restricted, num_actions, srng)
        root.seat = me
        bounds = [math.inf, -math.inf]
        crn_seed = int(srng.random() * 2**53) if self.crn else None
        for _ in range(self.simulations):
            self._simulate(root, copier(state), me, forbid_extra, num_actions, srng, bounds, crn_seed)
        assert root.actions is not None
        visits = {a: (root.children[a].n if a in root.children else 0) for a in root.actions}
        values = {a: root.children[a].v[me] for a in root.actions if a in root.children and root.children[a].n}
        prior = dict(zip(root.actions, root.prior, strict=True))
        choice = self._final_choice(root.actions, visits, values, prior)
        self.last = SearchStats(self.simulations, visits, values, time.perf_counter() - t0)
        return int(choice)

    def _final_choice(
        self, actions: list[int], visits: dict[int, int], values: dict[int, float], prior: dict[int, float]
    ) -> int:
        """The root action played: the most visited (ties: the higher value, then the prior), or with
        ``final="value"`` the best value among the actions with at least ``final_share`` of the most visits."""
        most = max(visits.values())
        if self.final == "visits":
            best = [a for a in actions if visits[a] == most]
            return max(best, key=lambda a: (values.get(a, -math.inf), prior[a]))
        threshold = max(1.0, self.final_share * most)
        trusted = [a for a in actions if visits[a] >= threshold and a in values]
        return max(trusted, key=lambda a: (values[a], visits[a], prior[a]))

    # -- internals ------------------------------------------------------------------------------------
    def _base_act(self, state: State, allowed: list[int], num_actions: int, rng: Rng) -> int:
        return base_act(self.base, state, allowed, num_actions, rng)

    def _expand(self, node: _Node, state: State, allowed: list[int], num_actions: int, rng: Rng) -> None:
        b = self._base_act(state, allowed, num_actions, rng)
        k = len(allowed)
        w = self.prior_weight
        node.actions = list(allowed)
        node.prior = [(1.0 - w) / k + (w if a == b else 0.0) for a in allowed]

    def _select(self, node: _Node, seat: int, bounds: list[float]) -> int:
        assert node.actions is not None
        lo, hi = bounds
        span = hi - lo if hi > lo else 0.0

        def norm(v: float) -> float:
            return (v - lo) / span if span > 0.0 else 0.5

        parent_q = norm(node.v[seat]) if node.n else 0.5
        sq = math.sqrt(max(node.n, 1))
        best_a, best_s = node.actions[0], -math.inf
        for a, p in zip(node.actions, node.prior, strict=True):
            child = node.children.get(a)
            if child is None or child.n == 0:
                q, n = parent_q, 0
            else:
                q, n = norm(child.v[seat]), child.n
            s = q + self.c * p * sq / (1 + n)
            if s > best_s:
                best_a, best_s = a, s
        return best_a

    def _simulate(
        self,
        root: _Node,
        state: State,
        me: int,
        forbid_extra: frozenset[str],
        num_actions: int,
        rng: Rng,
        bounds: list[float],
        crn_seed: int | None = None,
    ) -> None:
        path = [root]
        node = root
        expanded = False
        steps = 0
        while True:
            player = state.current_player()
            if player == TERMINAL:
                break
            steps += 1
            if steps > MAX_ROLLOUT_STEPS:
                raise RuntimeError(f"simulation did not end within {MAX_ROLLOUT_STEPS} steps")
            if player == CHANCE:
                if not expanded and node.seat == -1 and node.probs is None and node.n:
                    node.probs = _outcome_odds(state)
                    node.seat = -2  # odds looked up (or not offered): do not ask again
                edge: Hashable = state.sample_chance(rng)
                state.apply_chance(edge)
            else:
                legal = self._allowed(state, state.legal_actions(), player, me, forbid_extra)
                searched = not expanded and (player == me or self.opponents == "maxn") and len(legal) > 1
                if searched:
                    if node.actions is None:
                        self._expand(node, state, legal, num_actions, rng)
                        node.seat = player
                    edge = self._select(node, player, bounds)
                    if node is root and crn_seed is not None:
                        # common random numbers: the k-th playout of every root action sees the same stream
                        visited = root.children.get(edge)
                        rng = Rng(seed_for(crn_seed, visited.n if visited is not None else 0))
                else:
                    edge = self._base_act(state, legal, num_actions, rng) if len(legal) > 1 else legal[0]
                state.apply_action(int(edge))
            if expanded:
                continue  # rollout: no tree below the newly added node
            child = node.children.get(edge)
            if child is None:
                child = _Node(state.num_players)
                node.children[edge] = child
                expanded = True
            node = child
            path.append(node)
        ret = state.returns()
        for r in ret:
            bounds[0] = min(bounds[0], r)
            bounds[1] = max(bounds[1], r)
        leaf = path[-1]
        for i, r in enumerate(ret):
            leaf.own[i] += r
        for depth in range(len(path) - 1, -1, -1):
            nd = path[depth]
            old = [nd.n * x for x in nd.v]
            nd.n += 1
            nd.revalue(self.backup)
            if depth:
                ps = path[depth - 1].s
                for i, x in enumerate(nd.v):
                    ps[i] += nd.n * x - old[i]


# ------------------------------------------------------------------------------------------------
# Specs
# ------------------------------------------------------------------------------------------------
_BUDGET = re.compile(r"^(?P<head>.*?)(?:@(?P<sims>\d+))?$", re.DOTALL)


@dataclass(frozen=True)
class SearchSpec:
    """A parsed ``search[:<base>][@<simulations>][#<option>]...`` spec."""

    base: str
    simulations: int
    restriction: Restriction | None
    opponents: OpponentModel
    c: float
    mode: SearchMode = "mcts"
    exact: bool = False  # rollout mode: exact values where the base's continuation fits the budget
    steps: int = 1  # rollout mode with exact: policy-iteration steps of the exact evaluation
    z: float | None = None  # rollout mode: standard errors a sampled deviation must clear (None: the default)
    whole: bool = False  # rollout mode with exact: no position budget, exact values kept across decisions

    def text(self) -> str:
        """The canonical spec string (what :func:`parse_search_spec` reads back)."""
        out = f"search:{self.base}@{self.simulations}"
        if self.restriction is not None:
            out += f"#{self.restriction.spec()}"
        if self.opponents == "maxn":
            out += "#maxn"
        if self.c != DEFAULT_C:
            out += f"#c={self.c:g}"
        if self.mode == "rollout":
            out += "#rollout"
        if self.exact:
            out += "#exact"
        if self.whole:
            out += "#whole"
        if self.steps != 1:
            out += f"#steps={self.steps}"
        if self.z is not None:
            out += f"#z={self.z:g}"
        return out


def is_search_spec(spec: str) -> bool:
    """Whether an agent spec names the search agent."""
    s = spec.strip()
    return s == "search" or s.startswith(("search:", "search@", "search#"))


def parse_search_spec(spec: str) -> SearchSpec:
    """Parse ``search[:<base>][@<simulations>][#<option>]...``; a bad spec is a :class:`UserError`."""
    s = spec.strip()
    if not is_search_spec(s):
        raise UserError(f"not a search agent spec: '{spec}' (use search[:<base>][@<simulations>])")
    head, *options = s.split("#")
    m = _BUDGET.match(head)
    assert m is not None
    head, sims = m.group("head"), m.group("sims")
    simulations = int(sims) if sims is not None else DEFAULT_SIMULATIONS
    if simulations < 1:
        raise UserError(f"search budget must be at least 1 simulation per decision, got '{spec}'")
    if head == "search":
        base = "random"
    elif head.startswith("search:") and len(head) > len("search:"):
        base = head[len("search:") :]
    else:
        raise UserError(f"bad search spec '{spec}': use search[:<base>][@<simulations>][#forbid=<group>]")
    if is_search_spec(base):
        raise UserError(f"bad search spec '{spec}': the base of a search cannot be a search")
    restriction: Restriction | None = None
    opponents: OpponentModel = "base"
    c = DEFAULT_C
    mode: SearchMode = "mcts"
    exact = False
    whole = False
    steps = 1
    z: float | None = None
    for opt in options:
        if opt.startswith(("forbid=", "force=")):
            if restriction is not None:
                raise UserError(f"bad search spec '{spec}': at most one forbid=/force= restriction")
            restriction = parse_restriction(opt)
        elif opt == "maxn":
            opponents = "maxn"
        elif opt == "rollout":
            mode = "rollout"
        elif opt == "exact":
            exact = True
        elif opt == "whole":
            whole = True
        elif opt.startswith("steps="):
            try:
                steps = int(opt[len("steps=") :])
            except ValueError:
                raise UserError(f"bad search spec '{spec}': steps= needs a whole number") from None
            if steps < 1:
                raise UserError(f"bad search spec '{spec}': steps= needs at least 1, got {steps}")
        elif opt.startswith("z="):
            try:
                z = float(opt[2:])
            except ValueError:
                raise UserError(f"bad search spec '{spec}': z= needs a number") from None
            if not (z >= 0.0 and math.isfinite(z)):
                raise UserError(f"bad search spec '{spec}': z= needs a finite number >= 0, got {opt[2:]}")
        elif opt.startswith("c="):
            try:
                c = float(opt[2:])
            except ValueError:
                raise UserError(f"bad search spec '{spec}': c= needs a number") from None
        else:
            raise UserError(
                f"bad search option '{opt}' in '{spec}'; valid: forbid=<group>, force=<group>, maxn, c=<x>, "
                "rollout, exact, whole, steps=<k>, z=<x>"
            )
    if mode != "mcts" and opponents == "maxn":
        raise UserError(f"bad search spec '{spec}': #rollout models the other seats by the base (no #maxn)")
    if exact and mode != "rollout":
        raise UserError(f"bad search spec '{spec}': #exact is an option of #rollout")
    if whole and not exact:
        raise UserError(f"bad search spec '{spec}': #whole is an option of #rollout#exact")
    if steps != 1 and not exact:
        raise UserError(f"bad search spec '{spec}': #steps= is an option of #rollout#exact")
    if z is not None and mode != "rollout":
        raise UserError(f"bad search spec '{spec}': #z= is an option of #rollout")
    return SearchSpec(base, simulations, restriction, opponents, c, mode, exact, steps, z, whole)


def make_search_agent(
    ruleset: str, spec: str, scenario: str | None = None, *, forbid: str | None = None, force: str | None = None
) -> Policy:
    """The search agent named by ``spec`` (see the module docstring for the grammar).

    ``forbid``/``force`` add a restriction of the agent's seat (an option group), as ``#forbid=<group>``
    in the spec does; the returned agent pickles as its canonical spec, so worker processes rebuild it.
    """
    from agents.registry import make_agent  # the registry may import this module: import late

    parsed = parse_search_spec(spec)
    if forbid is not None or force is not None:
        if parsed.restriction is not None or (forbid is not None and force is not None):
            raise UserError("a search agent takes one restriction: forbid=<group> or force=<group>")
        parsed = SearchSpec(
            parsed.base,
            parsed.simulations,
            Restriction("forbid", forbid) if forbid is not None else Restriction("force", str(force)),
            parsed.opponents,
            parsed.c,
            parsed.mode,
            parsed.exact,
            parsed.steps,
            parsed.z,
            parsed.whole,
        )
    base = make_agent(ruleset, parsed.base, scenario)
    canonical = parsed.text()
    if parsed.mode != "mcts":
        from agents.rollout import RolloutAgent

        rollout = RolloutAgent(
            base,
            parsed.simulations,
            restriction=parsed.restriction,
            name=canonical,
            exact=parsed.exact,
            steps=parsed.steps,
            z=parsed.z,
            whole=parsed.whole,
        )
        rollout._source = (ruleset, canonical, scenario)
        return rollout
    agent = SearchAgent(
        base, parsed.simulations, restriction=parsed.restriction, opponents=parsed.opponents, c=parsed.c, name=canonical
    )
    agent._source = (ruleset, canonical, scenario)
    return agent


# ------------------------------------------------------------------------------------------------
# Throughput
# ------------------------------------------------------------------------------------------------
def measure_decisions_per_second(
    ruleset: str, scenario: str, spec: str, seconds: float = 10.0, seed: int = 0
) -> dict[str, float]:
    """Play seeded games with the search agent in every seat for about ``seconds``; searched decisions/s.

    Only decisions with more than one allowed action run a search; both counts are reported.
    """
    from envs.core.dice import seed_for
    from envs.core.registry import get_ruleset

    rs = get_ruleset(ruleset)
    cfg = rs.default_config()
    scen = rs.scenario(scenario)
    n_actions = scen.action_count(cfg)
    from agents.rollout import RolloutAgent

    agent = make_search_agent(ruleset, spec, scenario)
    assert isinstance(agent, (SearchAgent, RolloutAgent))
    searched = decisions = games = 0
    spent = 0.0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        state = rs.new_game(cfg, scenario)
        chance = Rng(seed_for(seed, games, 0))
        prng = Rng(seed_for(seed, games, 1))
        while state.current_player() != TERMINAL and time.perf_counter() - t0 < seconds:
            if state.current_player() == CHANCE:
                state.apply_chance(state.sample_chance(chance))
                continue
            mask = np.zeros(n_actions, dtype=bool)
            mask[state.legal_actions()] = True
            a = agent.act(state, mask, prng)
            decisions += 1
            if agent.last.simulations:
                searched += 1
                spent += agent.last.seconds
            state.apply_action(a)
        games += 1
    total = time.perf_counter() - t0
    return {
        "decisions_per_second": decisions / total,
        "searched_per_second": searched / spent if spent else 0.0,
        "decisions": float(decisions),
        "searched": float(searched),
        "games": float(games),
        "seconds": total,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m agents.search RULESET SCENARIO SPEC [SECONDS]``: print the measured decisions per second."""
    import sys

    import envs  # noqa: F401 - registers the shipped rulesets

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) not in (3, 4):
        raise SystemExit("usage: python -m agents.search RULESET SCENARIO SPEC [SECONDS]")
    r = measure_decisions_per_second(args[0], args[1], args[2], float(args[3]) if len(args) == 4 else 10.0)
    print(
        f"{args[0]} {args[1]} {args[2]}: {r['decisions_per_second']:.1f} decisions/s "
        f"({r['searched_per_second']:.1f} searched decisions/s; {int(r['decisions'])} decisions, "
        f"{int(r['searched'])} searched, {int(r['games'])} games in {r['seconds']:.1f} s)"
    )


if __name__ == "__main__":
    main()

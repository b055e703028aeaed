"""The game protocol every rules engine implements (OpenSpiel's shape, Python's idioms).

A :class:`Ruleset` owns a config model and its scenarios; a :class:`Scenario` creates the initial
:class:`State` of a concrete playtest situation. A state is at a decision node of one seat, at a
chance node (``CHANCE``) or finished (``TERMINAL``).

Chance is explicit: at a chance node ``sample_chance(rng)`` draws an outcome and ``apply_chance``
applies it; ``chance_outcomes()`` lists ``(outcome, probability)`` pairs where the branching is small
(exact solvers and odds use it). Tests force dice by applying chosen outcomes.
"""

from __future__ import annotations

import copy
import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import numpy as np

if TYPE_CHECKING:
    from pydantic import BaseModel

    from envs.core.dice import Rng

CHANCE = -1
"""``current_player()`` at a chance node."""
TERMINAL = -2
"""``current_player()`` once the game is over."""

ChanceT = TypeVar("ChanceT", bound=Hashable)
"""The type of a scenario's chance outcomes (dice faces, a card, a (successes, ones) summary…)."""


class EndReason(enum.StrEnum):
    """Why a game ended. "Why games end" is itself a balance signal, so it is typed."""

    KNOCKOUT = "knockout"  # a side was put out / killed / written off
    COMPLETED = "completed"  # the scenario ran its natural course (all obstacles, all tasks, episode end)
    TIME_LIMIT = "time_limit"  # the scenario's own turn / round limit
    AVOIDED = "avoided"  # the parties agreed to avoid the conflict
    CONCEDED = "conceded"  # a side gave up or a negotiation settled it
    STALL = "stall"  # nothing can change any more
    ILLEGAL_ACTION = "illegal_action"  # only used by the Gymnasium adapter


@dataclass(frozen=True)
class Outcome:
    """The typed result of a finished game."""

    winner: int | None
    reason: EndReason
    returns: tuple[float, ...]
    detail: str = ""


@dataclass(frozen=True)
class Event:
    """One line of the game's narration, in the rulebook's words, plus machine-readable data."""

    kind: str
    text: str
    seat: int | None = None
    data: dict[str, Any] = field(default_factory=dict)


class State(ABC, Generic[ChanceT]):
    """A position in a game. Subclasses implement the abstract methods; see the module docstring.

    ``State[T]`` is generic over its chance-outcome type ``T``: ``chance_outcomes`` lists ``T`` values,
    ``sample_chance`` returns one and ``apply_chance`` takes one.
    """

    num_players: int
    player_kept: ClassVar[bool] = False
    """True when the engine keeps :meth:`current_player`'s value in ``self._player`` at every node (it promises it;
    ``rulebreaker check`` and the check tests verify it at every node). :func:`~envs.core.play.advance` and the
    Gymnasium adapter then read the attribute instead of calling the method, several times a step."""
    _player: int
    """The kept :meth:`current_player` of a state that sets ``player_kept``."""
    legal_kept: ClassVar[bool] = False
    """True when the engine keeps :meth:`legal_tuple`'s value in ``self._legal`` at every node (the empty tuple at
    chance and terminal nodes; it promises it; ``rulebreaker check`` and the check tests verify it at every node).
    :func:`~envs.core.play.advance` and the Gymnasium adapter then read the attribute instead of calling the method,
    once per decision."""
    legal_sorted: ClassVar[bool] = False
    """True when :meth:`legal_tuple` is always in increasing order (the engine promises it; ``rulebreaker check``
    and the check tests verify it at every decision). :func:`~envs.core.play.advance` then picks a uniform
    opponent's move from the tuple as it is, without sorting a copy first (the same pick)."""
    narrating: bool = True
    """False in simulations (and wherever nobody reads the log): :meth:`narrate` then records nothing, and an
    engine may test it before building an expensive line. No rule may read the log."""

    def __init__(self, num_players: int) -> None:
        self.num_players = num_players
        self.log: list[Event] = []
        self._outcome: Outcome | None = None

    # -- who moves -------------------------------------------------------------------------------
    @abstractmethod
    def current_player(self) -> int:
        """A seat (0-based), ``CHANCE`` or ``TERMINAL``."""

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def is_chance(self) -> bool:
        return self.current_player() == CHANCE

    # -- decisions -------------------------------------------------------------------------------
    @abstractmethod
    def legal_actions(self) -> list[int]:
        """Legal action ids for the seat to move (empty at chance and terminal nodes)."""

    def legal_tuple(self) -> tuple[int, ...]:
        """The ids of :meth:`legal_actions` in the same order, as a tuple (hashable, nobody can change it).

        The adapter keys its masks by it and picks uniform opponents from it. An engine that keeps its legal ids
        as a tuple returns that tuple itself (no copy); this default copies :meth:`legal_actions`.
        """
        return tuple(self.legal_actions())

    @abstractmethod
    def apply_action(self, action: int) -> None:
        """Apply a seat's action. Raises :class:`IllegalActionError` for an illegal one."""

    @abstractmethod
    def action_label(self, action: int) -> str:
        """A short human label of an action id in the current context."""

    # -- chance ----------------------------------------------------------------------------------
    def chance_outcomes(self) -> list[tuple[ChanceT, float]]:
        """``(outcome, probability)`` pairs at a chance node, where the branching is small enough."""
        raise NotImplementedError(f"{type(self).__name__} does not enumerate this chance node")

    def sample_chance(self, rng: Rng) -> ChanceT:
        """Draw an outcome of the current chance node (does not apply it)."""
        outcomes = self.chance_outcomes()
        r = rng.random()
        acc = 0.0
        for outcome, p in outcomes:
            acc += p
            if r < acc:
                return outcome
        return outcomes[-1][0]

    @abstractmethod
    def apply_chance(self, outcome: ChanceT) -> None:
        """Apply a chance outcome (dice faces, a draw…). Tests use it to force dice."""

    # -- results ---------------------------------------------------------------------------------
    def outcome(self) -> Outcome | None:
        """The typed outcome once terminal, else ``None``."""
        return self._outcome

    def finish(self, winner: int | None, reason: EndReason, returns: Sequence[float], detail: str = "") -> None:
        """Engines call this once to end the game."""
        self._outcome = Outcome(winner, reason, tuple(float(r) for r in returns), detail)
        if self.narrating:
            self.narrate("end", f"Game over ({reason.value}){': ' + detail if detail else ''}.", winner)

    def returns(self) -> list[float]:
        """Each seat's return; zeros until the game ends."""
        if self._outcome is None:
            return [0.0] * self.num_players
        return list(self._outcome.returns)

    # -- observation -----------------------------------------------------------------------------
    @abstractmethod
    def observation(self, seat: int) -> np.ndarray:
        """A flat float32 vector of what ``seat`` knows, of the scenario's ``observation_size``."""

    def resources(self, seat: int) -> dict[str, float]:
        """Named resource levels of a seat (pool dice, willpower, stamina…) for trajectory analysis."""
        return {}

    def option_of(self, action: int) -> str | None:
        """The option group an action belongs to (for usage statistics and restricted play)."""
        return None

    def decision_context(self) -> str:
        """A short name of the kind of decision the seat to move faces (for usage per context)."""
        return "decision"

    # -- narration & copying ----------------------------------------------------------------------
    def narrate(self, kind: str, text: str, seat: int | None = None, **data: Any) -> None:
        if self.narrating:
            self.log.append(Event(kind, text, seat, data))

    def clone(self) -> State[ChanceT]:
        """An independent copy of the position (engines may override with a cheaper copy)."""
        return copy.deepcopy(self)

    def key(self) -> Hashable:
        """A hashable canonical form of the position (no log), for exact solvers' memo tables."""
        raise NotImplementedError(f"{type(self).__name__} has no canonical key; it cannot be solved exactly")


class IllegalActionError(ValueError):
    """An action id that is not legal in the current state."""


@dataclass(frozen=True)
class Knob:
    """A rule knob for sensitivity analysis: a config key and the perturbed values worth trying."""

    key: str  # dotted config key, e.g. "pool.failure_bonus"
    values: tuple[Any, ...]  # perturbed values (each replayed on the same seeds as the rules as written)
    description: str  # what the perturbation means in plain words
    scenarios: tuple[str, ...] = ()  # scenarios where the rule can matter (empty: all)


@dataclass(frozen=True)
class Scenario:
    """A concrete playtest situation of a ruleset: its setup and its fixed action/observation sizes."""

    name: str  # lower-case CLI name, e.g. "duel"
    title: str  # CamelCase for the env id, e.g. "Duel"
    description: str
    num_players: int | Callable[[BaseModel], int]
    num_actions: int | Callable[[BaseModel], int]  # a callable when the rules size an action range
    observation_size: int | Callable[[BaseModel], int]
    new_game: Callable[[BaseModel], State]
    max_episode_steps: int = 1000
    player_names: tuple[str, ...] = ()
    observation_bounds: tuple[float, float] = (-1.0, 1.0)
    observation_in_bounds: bool = False
    """The engine's observations are already float32 arrays within ``observation_bounds``, fresh on every call:
    the Gymnasium adapter passes them on without clipping (a test plays every such built-in scenario to check)."""
    clone_start: bool = False
    """``new_game(config)`` depends on the config alone (as the protocol asks: setup randomness comes through chance
    nodes) and ``clone()`` of its state costs less than building it: the Gymnasium adapter builds the start once per
    config and hands each ``reset()`` a clone (a test plays every such built-in scenario both ways, step for step)."""
    option_groups: tuple[str, ...] = ()  # option groups restricted play may forbid (see State.option_of)
    progress_resources: tuple[str, ...] = ()  # name prefixes of progress counters and clocks: never runaways
    time_limit_is_rule: bool = False  # the scenario's time limit is part of the game (a timed job), not a stall
    core_options: tuple[str, ...] = ()  # option groups that are the game's intended core: findings on them are info
    option_rules: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    """The rule number (of docs/rules/<ruleset>.md) that each option group plays, for the report: {"aim": "14"}."""

    def players(self, config: BaseModel) -> int:
        n = self.num_players
        return n(config) if callable(n) else n

    def action_count(self, config: BaseModel) -> int:
        """The number of action ids under ``config`` (a rule such as a pool cap may size a range)."""
        n = self.num_actions
        return n(config) if callable(n) else n

    def observation_length(self, config: BaseModel) -> int:
        """The length of the observation vector under ``config``."""
        n = self.observation_size
        return n(config) if callable(n) else n


@dataclass
class Ruleset:
    """A ruleset: name, typed config model, rules-as-written file, scenarios."""

    name: str  # CLI name, e.g. "wicked_age"
    title: str  # CamelCase for env ids, e.g. "WickedAge"
    description: str
    config_model: type[BaseModel]
    rules_path: Path
    scenarios: dict[str, Scenario]
    variants_dir: Path | None = None
    knobs: list[Knob] = field(default_factory=list)  # rule-sensitivity knobs for discovery
    personas: dict[str, Any] | None = None  # persona classes by CLI name; None: agents/personas/<name>.py
    odds: Any = None  # an envs.core.odds.OddsProvider: the core mechanic `rulebreaker odds <name>` shows (None: none)
    registry: ClassVar[dict[str, Ruleset]] = {}

    def default_config(self) -> BaseModel:
        from envs.core.config import load_config

        return load_config(self)

    def scenario(self, name: str) -> Scenario:
        from envs.core.errors import UserError

        if name not in self.scenarios:
            raise UserError(f"unknown scenario '{name}' for ruleset '{self.name}'; valid: {', '.join(self.scenarios)}")
        return self.scenarios[name]

    def new_game(self, config: BaseModel, scenario: str) -> State:
        return self.scenario(scenario).new_game(config)

    def env_id(self, scenario: str) -> str:
        return f"rulebreaker/{self.title}{self.scenario(scenario).title}-v0"

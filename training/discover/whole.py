"""The verdict stage on a game small enough to solve: the subject's values computed exactly, not sampled.

Where :func:`training.discover.exact.fits_exactly` holds, the verdict stage's subject is the whole-game exact
rollout agent (``search:<base>@<n>#rollout#exact#whole#steps=2``, :mod:`agents.rollout`): two steps of policy
iteration from the base, every decision exact. Its play is then a fixed policy whose expected return can be
computed over every chance outcome (:meth:`agents.rollout.RolloutAgent.exact_value`), so each restricted-play
change is known exactly instead of estimated from a few paired deals: the 95% interval of a sampled change
misses the truth one time in twenty, and a dozen restrictions would make a false verdict likely.

The games are still played (usage, what the subject does instead, example games), in this process, so that
they read the values the evaluation kept (a worker would compute them again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pydantic import BaseModel

from agents.registry import make_agent
from agents.rollout import RolloutAgent
from agents.search import is_search_spec, make_search_agent
from agents.solver import TooLargeError, solve
from agents.solver_keys import solver_key
from envs.core.policy import Policy
from results.records import GameRecord
from results.stats import Interval
from training.discover.discovery import Discovery
from training.runner import GameJob, play_game

EDGE_STATES = 200_000
"""The solver's limit for the exact evaluation of the exploiter against the subject (a game that solves within
the probe's 40,000 positions evaluates two fixed policies within far fewer)."""


class WholeGame:
    """Exact values of the verdict stage's whole-game subject and its restricted variants, one scenario."""

    def __init__(self, d: Discovery, config: BaseModel | None = None) -> None:
        self.d = d
        cfg = d.config if config is None else config
        sc = d.ruleset.scenario(d.scenario)
        self.root = sc.new_game(cfg)
        self.num_actions = sc.action_count(cfg)
        self.n = self.root.num_players
        self._agents: dict[str, Policy] = {}
        self._values: dict[tuple[str, bool], dict[int, float]] = {}

    def agent(self, spec: str) -> Policy:
        """The agent of ``spec``, built once (a search agent keeps its exact values across games)."""
        if spec not in self._agents:
            r, s = self.d.ruleset.name, self.d.scenario
            self._agents[spec] = make_search_agent(r, spec, s) if is_search_spec(spec) else make_agent(r, spec, s)
        return self._agents[spec]

    def seat_values(self, spec: str, *, base: bool = False) -> dict[int, float] | None:
        """Every seat's exact return when it plays ``spec`` (``base``: its base) and the others the base."""
        k = (spec, base)
        if k not in self._values:
            agent = self.agent(spec)
            if not isinstance(agent, RolloutAgent) or not agent.whole:
                return None
            out: dict[int, float] = {}
            for seat in range(self.n):
                v = agent.exact_value(self.root, seat, self.num_actions, base=base)
                if v is None:
                    return None
                out[seat] = v
            self._values[k] = out
        return self._values[k]

    def value(self, spec: str, deals: int, *, base: bool = False) -> Interval | None:
        """The exact mean return over the verdict seat schedule (deal ``g`` -> seat ``g mod n``), as a
        zero-width interval; None where the exact evaluation does not fit."""
        vals = self.seat_values(spec, base=base)
        if vals is None or deals <= 0:
            return None
        v = sum(vals[g % self.n] for g in range(deals)) / deals
        return Interval(v, v, v)

    def change(self, spec: str, reference: str, deals: int) -> Interval | None:
        """``spec``'s exact value minus ``reference``'s on the seat schedule (a zero-width interval)."""
        a, b = self.value(spec, deals), self.value(reference, deals)
        if a is None or b is None:
            return None
        c = a.value - b.value
        return Interval(c, c, c)

    def edge(self, exploiter: str, subject: str, deals: int) -> Interval | None:
        """The exploiter's exact edge over the subject on the seat schedule: its return at seat ``s`` with the
        subject at every other seat, minus the subject's own at ``s`` in self-play, both by the exact solver's
        evaluation of the agents' moves (every seat fixed: ``solve`` optimizes nothing); None where that does not
        fit the solver's limit."""
        if deals <= 0:
            return None
        key = solver_key(self.d.ruleset.name, self.d.scenario, self.root)
        na = self.num_actions  # full-width masks, as the env gives them (an RL policy needs its own width)
        edges: dict[int, float] = {}
        try:
            for seat in range(self.n):
                mine = {s: self.agent(subject) for s in range(self.n)}
                selfplay = solve(self.root, seat, mine, key=key, max_states=EDGE_STATES, num_actions=na).value[seat]
                mine[seat] = self.agent(exploiter)
                exploited = solve(self.root, seat, mine, key=key, max_states=EDGE_STATES, num_actions=na).value[seat]
                edges[seat] = exploited - selfplay
        except TooLargeError:
            return None
        e = sum(edges[g % self.n] for g in range(deals)) / deals
        return Interval(e, e, e)

    def play(self, stage: str, jobs: Sequence[GameJob]) -> list[GameRecord]:
        """Play ``jobs`` in this process with the agents built here (results as :meth:`Discovery.play`'s)."""
        out: list[GameRecord] = []
        for i, job in enumerate(jobs):
            pols = [self.agent(a) for a in job.agents]
            rec = play_game(replace(job, index=i), pols)
            if not job.keep_actions:
                rec.actions = []
            out.append(rec)
            if self.d.progress:
                self.d.progress(stage, i + 1, len(jobs))
        return out

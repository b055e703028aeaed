"""Playing many games: the only place that owns game seeds and worker processes.

A :class:`GameJob` names everything a game needs by value (ruleset name, scenario, resolved config
as a dict, agent names per seat, game seed), so jobs can be shipped to worker processes and every
game can be replayed exactly from its record.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from itertools import accumulate
from operator import attrgetter
from typing import Any

import numpy as np
from pydantic import BaseModel

from agents.registry import make_agent
from envs.core.config import validate_config
from envs.core.dice import Rng, seed_for
from envs.core.game import State
from envs.core.play import advance
from envs.core.policy import Policy
from envs.core.registry import get_ruleset
from results.records import GameRecord
from training.backends import ray_game_executor

CHANCE_STREAM = 0
POLICY_STREAM = 1000


@dataclass(frozen=True)
class GameJob:
    ruleset: str
    scenario: str
    config: tuple[tuple[str, Any], ...] | dict[str, Any]  # resolved config as a dict
    agents: tuple[str, ...]  # one agent name per seat
    seed: int
    index: int = 0  # position in the batch (results come back in this order)
    trace: bool = False  # keep decisions (context, option) and resource trajectories
    narrate: bool = False  # keep the event log text (without it the engine narrates nothing: State.narrating)
    forbid: tuple[tuple[int, str], ...] = ()  # (seat, option group) masked out: restricted play
    build: tuple[int, ...] = ()  # the actions seat ``build_seat`` plays at its decisions in context "build"
    build_seat: int = 0
    keep_actions: bool = True  # False: the record keeps no (seat, action) list (evaluate's large batches)


class RestrictedPolicy:
    """Wraps a policy so that it never picks actions of a forbidden option group (restricted play)."""

    def __init__(self, inner: Policy, forbidden: str) -> None:
        self.inner = inner
        self.forbidden = forbidden
        self.name = f"{inner.name}-no-{forbidden}"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        m = mask.copy()
        for a in state.legal_actions():
            if state.option_of(a) == self.forbidden:
                m[a] = False
        if not m.any():  # the forbidden option is the only legal move: it must be taken
            m = mask
        return self.inner.act(state, m, rng)


class FixedBuild:
    """Wraps a policy so that it plays a given whole build (its decisions in context ``build``) and then itself."""

    def __init__(self, inner: Policy, actions: tuple[int, ...]) -> None:
        self.inner = inner
        self.actions = actions
        self.step = 0
        self.name = f"{inner.name}-build"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        if state.decision_context() == "build" and self.step < len(self.actions):
            a = self.actions[self.step]
            self.step += 1
            if mask[a]:
                return a
        return self.inner.act(state, mask, rng)


@lru_cache(maxsize=64)
def _config_from_items(ruleset: str, items: str) -> tuple[BaseModel, Any]:
    """The model of a job config given as its JSON text, and a private copy of its items (parsed apart)."""
    rs = get_ruleset(ruleset)
    return validate_config(rs.config_model, json.loads(items), "job config"), json.loads(items)


_CONFIGS: dict[tuple[str, int], tuple[object, Any, BaseModel]] = {}
"""Job configs already read, by ruleset and object identity: (the object, kept so that its id stays its own; a copy
of its items, which catches an object changed in place; the model). A batch's jobs share a few config objects
(pickling keeps the sharing within a worker's chunk), so a model is found without serialising the config."""
_CONFIGS_LIMIT = 256


def _config(job: GameJob) -> BaseModel:
    seen = _CONFIGS.get((job.ruleset, id(job.config)))
    if seen is not None and seen[0] is job.config and seen[1] == job.config:
        return seen[2]
    cfg = job.config if isinstance(job.config, dict) else dict(job.config)
    model, items = _config_from_items(job.ruleset, json.dumps(cfg, sort_keys=True))
    # A worker meets a new object of the same items in every chunk: the items parsed from the JSON text serve as
    # its copy when they equal it (a deep copy per chunk cost a worker up to 0.5 ms); otherwise (tuples…) a copy.
    copied = items if items == job.config else copy.deepcopy(job.config)
    if len(_CONFIGS) >= _CONFIGS_LIMIT:
        _CONFIGS.clear()
    _CONFIGS[job.ruleset, id(job.config)] = (job.config, copied, model)
    return model


_AGENT_CACHE: dict[tuple[str, str, str], Policy] = {}


def forget_agent(ruleset: str, scenario: str, name: str) -> None:
    """Drop a cached agent, so that the next game builds it again (e.g. a model retrained in this process)."""
    _AGENT_CACHE.pop((ruleset, scenario, name), None)


def _agent(ruleset: str, scenario: str, name: str) -> Policy:
    if name.startswith("rl:"):  # agents.rl caches by model file and modification time: a retrained model reloads
        return make_agent(ruleset, name, scenario)
    key = (ruleset, scenario, name)
    if key not in _AGENT_CACHE:
        _AGENT_CACHE[key] = make_agent(ruleset, name, scenario)
    return _AGENT_CACHE[key]


def play_game(job: GameJob, policies: Sequence[Policy] | None = None) -> GameRecord:
    """Play one game to the end and return its record.

    The engine narrates only for a job with ``narrate`` (nothing else reads the log: ``State.narrating``), and
    the record lists the actions only with ``keep_actions`` (or ``trace``).
    """
    ruleset = get_ruleset(job.ruleset)
    scenario = ruleset.scenario(job.scenario)
    config = _config(job)
    if policies is None:
        policies = [_agent(job.ruleset, job.scenario, a) for a in job.agents]
    pols: list[Policy] = list(policies)
    for seat, group in job.forbid:
        pols[seat] = RestrictedPolicy(pols[seat], group)
    if job.build:
        pols[job.build_seat] = FixedBuild(pols[job.build_seat], job.build)
    state = scenario.new_game(config)
    if not job.narrate:
        state.narrating = False
    n = state.num_players
    if len(pols) != n:
        raise ValueError(f"{job.scenario} needs {n} agents, got {len(pols)}")
    chance = Rng(seed_for(job.seed, CHANCE_STREAM))
    prngs = [Rng(seed_for(job.seed, POLICY_STREAM + s)) for s in range(n)]
    rec = GameRecord(job.index, job.seed, tuple(job.agents), None, "", (), 0)

    def hook(st: State, seat: int, action: int) -> None:
        rec.actions.append((seat, action))
        if job.trace:
            rec.decisions.append((seat, st.decision_context(), st.option_of(action) or st.action_label(action)))
            for a in st.legal_actions():
                opt = st.option_of(a)
                if opt is not None:
                    rec.available.add(opt)
            rec.resources.append({"seat": seat, **st.resources(seat)})

    rec.length = advance(
        state,
        chance,
        pols,
        scenario.action_count(config),
        policy_rngs=prngs,
        hook=hook if job.keep_actions or job.trace else None,  # nothing to record per decision
        max_steps=max(10 * scenario.max_episode_steps, 10_000),
    )
    out = state.outcome()
    assert out is not None
    rec.winner, rec.reason, rec.returns = out.winner, out.reason.value, out.returns
    if job.narrate:
        rec.log = [e.text for e in state.log]
    return rec


def _batch_game(job: GameJob) -> GameRecord:
    """A game of a batch; without ``keep_actions`` its action list is dropped (large batches stay small)."""
    rec = play_game(job)
    if not job.keep_actions:
        rec.actions = []  # a traced game recorded them
    return rec


_SHAPE = attrgetter(*(f.name for f in fields(GameJob) if f.name not in ("seed", "index")))
"""Every field of a job but its seed and index: consecutive jobs of one matchup share them (the same objects)."""

Packed = tuple[list[GameJob], tuple[tuple[int, int, int], ...]]
"""A chunk of jobs as (one job of each shape, then per job in order: its shape's number, its seed, its index)."""


def _pack(jobs: Sequence[GameJob]) -> Packed:
    """A chunk of jobs with each matchup's fields sent once: a worker unpickles a few jobs and a list of seeds.

    A matchup's games share their field objects (a two-seat matchup alternates two lineups), so the shapes are
    told apart mostly by identity checks.
    """
    shapes: list[tuple[Any, ...]] = []
    firsts: list[GameJob] = []
    picks: list[tuple[int, int, int]] = []
    last = -1
    for j in jobs:
        shape = _SHAPE(j)
        if last < 0 or shapes[last] != shape:
            last = next((k for k, other in enumerate(shapes) if other == shape), -1)
            if last < 0:
                last = len(shapes)
                shapes.append(shape)
                firsts.append(j)
        picks.append((last, j.seed, j.index))
    return firsts, tuple(picks)


def _unpack(packed: Packed) -> list[GameJob]:
    firsts, picks = packed
    return [replace(firsts[k], seed=s, index=x) for k, s, x in picks]


def _play_chunk(packed: Packed) -> list[GameRecord]:
    return [_batch_game(j) for j in _unpack(packed)]


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


GUIDE = 4
"""Guided chunk sizes: each chunk is 1/(GUIDE x workers) of the jobs not yet dealt, so chunks shrink toward the
end of a batch and the workers finish together (guided self-scheduling, Polychronopoulos and Kuck 1987), while a
large batch goes over in few hand-overs (each costs the parent ~0.5 ms of CPU, which on a machine with as many
cores as workers is taken from the workers)."""
MAX_CHUNK = 512
"""The default cap on a chunk's games: the progress bar moves at least this often. Each hand-over costs the parent
and a worker CPU that two workers on two cores take from the games: on 18,480 persona games of every scenario (two
workers, quiet 2-core machine) a cap of 128 gave 1.83x the serial speed, 512 gave 1.89x, 2,048 1.91x; 512 keeps
the bar moving about every quarter second of persona play per worker."""


def chunk_sizes(jobs: int, workers: int, cap: int = MAX_CHUNK) -> list[int]:
    """The sizes of the consecutive chunks a batch of ``jobs`` games is cut into for ``workers`` workers.

    Each chunk takes 1/(:data:`GUIDE` x ``workers``) of the games left, at most ``cap`` and at least one: for
    two workers a batch of 10,000 goes in 63 chunks (512 games each until the last 3,900), one of 40 in 18.
    """
    sizes: list[int] = []
    left = jobs
    while left > 0:
        size = min(cap, max(1, -(-left // (GUIDE * workers))))
        sizes.append(size)
        left -= size
    return sizes


class GamesInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_games`: ``records`` holds the games that finished, in job order."""

    def __init__(self, records: list[GameRecord]) -> None:
        super().__init__(f"interrupted after {len(records)} game(s)")
        self.records = records


def run_games(
    jobs: Sequence[GameJob], workers: int = 1, progress: Callable[[int], None] | None = None, chunk: int = MAX_CHUNK
) -> list[GameRecord]:
    """Play every job; results in job order, identical whatever the number of workers.

    With ``workers > 1`` the jobs go to worker processes (at most one per core) in chunks of at most
    ``chunk`` games that shrink toward the end of the batch (:func:`chunk_sizes`: short batches run in
    parallel too and no worker waits on one long tail chunk), each sent with every matchup's fields once and
    then the seeds (:func:`_pack`). A chunk is a run of consecutive jobs: a worker plays one matchup's games
    one after another, as the serial loop does (dealing the jobs round-robin instead cost the workers 10–20%
    more CPU per game, each game on another engine's cold caches); workers take the next chunk as they finish
    one, which evens out matchups of unequal length.

    Ctrl-C raises :class:`GamesInterrupted` carrying the games already finished (pending chunks are cancelled).
    """
    jobs = list(jobs)
    workers = min(workers, os.cpu_count() or 1)
    if workers <= 1 or len(jobs) < 2 * workers:
        out: list[GameRecord] = []
        try:
            for j in jobs:
                out.append(_batch_game(j))
                if progress:
                    progress(1)
        except KeyboardInterrupt:
            raise GamesInterrupted(out) from None
        return out
    starts = [0, *accumulate(chunk_sizes(len(jobs), workers, chunk))]
    chunks = [_pack(jobs[a:b]) for a, b in zip(starts, starts[1:], strict=False)]
    placed: list[GameRecord | None] = [None] * len(jobs)
    pool = ray_game_executor() or ProcessPoolExecutor(max_workers=min(workers, len(chunks)))
    try:
        for i, batch in enumerate(pool.map(_play_chunk, chunks)):
            placed[starts[i] : starts[i] + len(batch)] = batch  # back to each job's position
            if progress:
                progress(len(batch))
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        raise GamesInterrupted([r for r in placed if r is not None]) from None
    except BaseException:
        pool.shutdown(cancel_futures=True)
        raise
    pool.shutdown()
    results = [r for r in placed if r is not None]
    results.sort(key=lambda r: r.index)  # stable: as before, job order and then by index
    return results


def seeds(base_seed: int, count: int) -> list[int]:
    return [seed_for(base_seed, i) for i in range(count)]


def iter_indexed(jobs: Iterable[GameJob]) -> list[GameJob]:
    return [replace(j, index=i) for i, j in enumerate(jobs)]

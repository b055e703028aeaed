"""Where work runs: local processes or Ray tasks, for whole jobs (sweep variants, balance trials) and game batches.

Two levels use the same backends:

- :func:`map_tasks` runs one function over a list of plain-value tasks (a sweep's variants, a batch of balance
  candidates) as local worker processes or as Ray tasks, retrying a task whose worker died.
- :func:`ray_game_executor` is looked up where :func:`training.runner.run_games` makes its process pool: inside
  :func:`games_on_ray` (a context variable, so it reaches every batch a job plays, discovery's stages included,
  without a parameter through each call; :func:`map_tasks` sets it in its Ray tasks) the chunks of games are
  Ray tasks on the same cluster instead.

A batch's results never depend on where it ran: every game owns its seeds, and results come back in job order.

The local Ray cluster is started in this process with Ray's public options (``ray.init(num_cpus=…,
include_dashboard=False)``) and Ray's documented environment switch ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
set before Ray is imported: with it, Ray takes the loopback address as the node's address, so every server
it starts listens on 127.0.0.1 only (checked after start: a node advertising another address is refused).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from envs.core.errors import UserError

BACKENDS = ("local", "ray")
RAY_INSTALL = 'pip install "rulebreaker[ray]"  (or: pip install "ray[default,tune]>=2.9,<3" "optuna>=3.5")'
RAY_CLUSTER_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's documented switch for multi-node clusters; "0" keeps a local node on the loopback address."""
TASK_RETRIES = 2
"""A task whose worker dies (killed, out of memory, a lost node) is run again this many times."""

T = TypeVar("T")
R = TypeVar("R")


def local_cpus(workers: int) -> int:
    """``workers`` clamped to this machine's cores (a local pool or cluster never forks more processes)."""
    return max(1, min(workers, os.cpu_count() or 1))


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise UserError(f"unknown backend '{backend}'; valid: {', '.join(BACKENDS)}")


def ray_module(local: bool = False) -> Any:
    """The ``ray`` module, or a :class:`UserError` with the install command.

    ``local``: Ray is about to start a local cluster; if this is the first import of Ray in the process, the
    loopback switch is set before it (Ray reads it once, at import; the processes it starts inherit it).
    """
    if local and "ray" not in sys.modules:
        os.environ[RAY_CLUSTER_SWITCH] = "0"
    try:
        import ray
    except ImportError:
        raise UserError(f"--backend ray needs Ray: {RAY_INSTALL}") from None
    return ray


@contextmanager
def ray_session(address: str | None, workers: int) -> Iterator[Any]:
    """Ray, connected to the cluster at ``address`` or to a local one bound to 127.0.0.1 that it stops after.

    Inside a session already open (``ray.is_initialized()``, e.g. within a Ray task) it only yields Ray.
    """
    ray = ray_module(local=not address)
    if ray.is_initialized():
        yield ray
        return
    if address:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
        try:
            yield ray
        finally:
            ray.shutdown()
        return
    ray.init(num_cpus=local_cpus(workers), include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        nodes = {n["NodeManagerAddress"] for n in ray.nodes()}
        if nodes != {"127.0.0.1"}:
            raise UserError(
                f"the local Ray node listens on {sorted(nodes)}, not 127.0.0.1 only; refused (Ray was imported "
                f"before rulebreaker could set {RAY_CLUSTER_SWITCH}=0: set it in the environment, or give --address)"
            )
        yield ray
    finally:
        ray.shutdown()


# -- whole tasks -----------------------------------------------------------------------------------------------


def map_tasks(
    fn: Callable[[T], R],
    items: Sequence[T],
    backend: str = "local",
    workers: int = 1,
    address: str | None = None,
    on_result: Callable[[int, R], None] | None = None,
    retries: int = TASK_RETRIES,
) -> list[R]:
    """``fn`` over ``items`` as local processes or Ray tasks; ``on_result(i, r)`` as each finishes; in order.

    ``fn`` must be a module-level function of picklable values. A task whose worker dies is run again up to
    ``retries`` times (Ray's ``max_retries``; locally, the unfinished tasks go to a fresh pool); an exception
    raised by ``fn`` itself is not retried (the same inputs would raise again).
    """
    check_backend(backend)
    results: dict[int, R] = {}

    def done(i: int, r: R) -> None:
        results[i] = r
        if on_result:
            on_result(i, r)

    if not items:
        return []
    if backend == "ray":
        with ray_session(address, workers) as ray:
            remote = ray.remote(max_retries=retries, retry_exceptions=False, num_cpus=1)(_with_games_on_ray)
            refs = {remote.remote(fn, it): i for i, it in enumerate(items)}
            pending = list(refs)
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    done(refs[ref], ray.get(ref))
    else:
        todo = list(range(len(items)))
        for attempt in range(retries + 1):
            try:
                _local_round(fn, items, todo, workers, done)
                break
            except BrokenProcessPool:
                todo = [i for i in todo if i not in results]
                if attempt == retries:
                    raise UserError(
                        f"a worker process died {retries + 1} time(s) with {len(todo)} task(s) unfinished "
                        f"(out of memory? killed?); what finished is kept — rerun to resume"
                    ) from None
    return [results[i] for i in range(len(items))]


def _local_round(
    fn: Callable[[T], R], items: Sequence[T], todo: list[int], workers: int, done: Callable[[int, R], None]
) -> None:
    with ProcessPoolExecutor(max_workers=max(1, min(local_cpus(workers), len(todo)))) as pool:
        futs: dict[Future[R], int] = {pool.submit(fn, items[i]): i for i in todo}
        waiting = set(futs)
        while waiting:
            finished, waiting = wait(waiting, return_when=FIRST_COMPLETED)
            for f in finished:
                done(futs[f], f.result())


def _with_games_on_ray(fn: Callable[[T], R], item: T) -> R:
    """A Ray task: ``fn(item)``, with the game batches it plays sent to Ray too (:func:`games_on_ray`)."""
    with games_on_ray():
        return fn(item)


# -- game batches ----------------------------------------------------------------------------------------------

_GAMES_ON_RAY: ContextVar[bool] = ContextVar("rulebreaker_games_on_ray", default=False)


@contextmanager
def games_on_ray() -> Iterator[None]:
    """Within this block (and in the Ray tasks of :func:`map_tasks`), parallel game batches are Ray tasks."""
    token = _GAMES_ON_RAY.set(True)
    try:
        yield
    finally:
        _GAMES_ON_RAY.reset(token)


def ray_game_executor() -> Executor | None:
    """The Ray executor :func:`training.runner.run_games` plays its chunks on inside :func:`games_on_ray` (with a
    Ray session open); ``None`` elsewhere (the runner then makes its process pool)."""
    if _GAMES_ON_RAY.get():
        ray = ray_module()
        if ray.is_initialized():
            return RayExecutor(ray)
    return None


class RayExecutor(Executor):
    """A :class:`concurrent.futures.Executor` whose calls are Ray tasks of the session already open.

    ``map`` waits with ``ray.get``, which lends the waiting task's CPU to the tasks it waits for (a Ray task that
    plays its games on Ray cannot deadlock a small cluster).
    """

    def __init__(self, ray: Any, retries: int = TASK_RETRIES) -> None:
        self.ray = ray
        self.retries = retries
        self._remote: dict[Callable[..., Any], Any] = {}

    def _as_remote(self, fn: Callable[..., Any]) -> Any:
        if fn not in self._remote:
            self._remote[fn] = self.ray.remote(max_retries=self.retries, retry_exceptions=False, num_cpus=1)(fn)
        return self._remote[fn]

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        fut: Future[R] = self._as_remote(fn).remote(*args, **kwargs).future()
        return fut

    def map(
        self, fn: Callable[..., R], *iterables: Iterable[Any], timeout: float | None = None, chunksize: int = 1
    ) -> Iterator[R]:
        remote = self._as_remote(fn)
        refs = [remote.remote(*args) for args in zip(*iterables, strict=False)]
        for ref in refs:
            yield self.ray.get(ref, timeout=timeout)

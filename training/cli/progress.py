"""A rich progress bar on stderr, silent when stderr is not a terminal or under CI."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


@contextmanager
def progress_bar(total: int, label: str) -> Iterator[Callable[[int], None]]:
    enabled = sys.stderr.isatty() and not os.environ.get("CI")
    if not enabled:
        yield lambda n: None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as p:
        task = p.add_task(label, total=total)
        yield lambda n: p.advance(task, n)


@contextmanager
def stage_progress(label: str) -> Iterator[Callable[[str, int, int], None]]:
    """A progress bar whose description follows the current stage: ``update(stage, done, total)``."""
    enabled = sys.stderr.isatty() and not os.environ.get("CI")
    if not enabled:
        yield lambda stage, done, total: None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as p:
        task = p.add_task(label, total=1)

        def update(stage: str, done: int, total: int) -> None:
            p.update(task, description=f"{label}: {stage}", completed=done, total=total)

        yield update

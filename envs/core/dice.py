"""Dice helpers shared by the engines: a fast seeded rng, die types and pools.

Engines take randomness only from an :class:`Rng` handed to them (seeded from Gymnasium's
``np_random`` by the adapter, or from a game seed by the experiment drivers). ``random.Random`` is
several times faster than numpy for the handful of dice a tabletop roll needs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from random import Random
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


class Rng:
    """A seeded random source for dice. Never use ``random``/``np.random`` globals in engines."""

    __slots__ = ("_r", "_random", "random")

    random: Callable[[], float]
    """A float in [0, 1): the generator's own bound method (a C call, no Python frame in between)."""

    def __init__(self, seed: int | None = None) -> None:
        self._r = random.Random(seed)
        self._random = self.random = self._r.random

    @classmethod
    def from_numpy(cls, np_random: np.random.Generator) -> Rng:
        """An Rng seeded from a numpy Generator (the Gymnasium env's ``np_random``)."""
        return cls(int(np_random.integers(0, 2**63 - 1)))

    @property
    def uniform(self) -> Callable[[], float]:
        """The bound uniform source itself, for hot loops that draw many dice.

        ``rng.uniform()`` draws what ``rng.random()`` draws (the same bound method).
        """
        return self._random

    def d(self, sides: int) -> int:
        """One die with ``sides`` faces, 1..sides."""
        return int(self._random() * sides) + 1

    def roll(self, n: int, sides: int) -> tuple[int, ...]:
        """``n`` dice with ``sides`` faces each."""
        rnd = self._random
        return tuple([int(rnd() * sides) + 1 for _ in range(n)])  # a list comprehension: no generator frames

    def roll_dice(self, dice: Iterable[int]) -> tuple[int, ...]:
        """One die of each given size (e.g. ``(12, 10)`` rolls a d12 and a d10)."""
        rnd = self._random
        return tuple([int(rnd() * s) + 1 for s in dice])

    def integers(self, low: int, high: int) -> int:
        """An integer in ``[low, high)``."""
        return low + int(self._random() * (high - low))

    def choice(self, items: Sequence[T]) -> T:
        return items[int(self._random() * len(items))]

    def shuffle(self, items: list[Any]) -> None:
        self._r.shuffle(items)

    def __getstate__(self) -> Random:
        """Copied and pickled as its generator: a copy draws its own stream, the same as the original's."""
        return self._r

    def __setstate__(self, r: Random) -> None:
        self._r = r
        self._random = self.random = r.random

    def getstate(self) -> object:
        return self._r.getstate()

    def setstate(self, state: object) -> None:
        self._r.setstate(state)  # type: ignore[arg-type]


@dataclass(frozen=True, order=True)
class Die:
    """A die type by its number of faces (d4, d6, d8, d10, d12…)."""

    sides: int

    def __post_init__(self) -> None:
        if self.sides < 1:
            raise ValueError(f"a die needs at least one face, got d{self.sides}")

    def __str__(self) -> str:
        return f"d{self.sides}"

    @classmethod
    def parse(cls, text: str) -> Die:
        """Parse ``"d10"`` / ``"D10"`` / ``"10"`` into a die."""
        t = text.strip().lower().removeprefix("d")
        if not t.isdigit() or int(t) < 1:
            raise ValueError(f"not a die: '{text}' (expected e.g. d6, d10)")
        return cls(int(t))


def count_at_least(faces: Iterable[int], target: int) -> int:
    """Number of faces showing ``target`` or more (a success count)."""
    return sum(1 for f in faces if f >= target)


def count_equal(faces: Iterable[int], value: int) -> int:
    """How many of ``faces`` show exactly ``value``."""
    return sum(1 for f in faces if f == value)


def seed_for(base_seed: int, *keys: int) -> int:
    """A well-mixed 63-bit seed derived from a base seed and keys (game index, seat…)."""
    ss = np.random.SeedSequence([base_seed & 0xFFFFFFFFFFFFFFFF, *keys])
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))

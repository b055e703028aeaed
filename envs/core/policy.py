"""The one small protocol everything that picks actions implements (personas, random, RL, solvers).

It lives in ``envs.core`` so that the Gymnasium adapter can host opponents without importing the
``agents`` layer; concrete policies live in ``agents``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from envs.core.dice import Rng
    from envs.core.game import State


@runtime_checkable
class Policy(Protocol):
    """Pick an action for the seat to move.

    ``state`` is the full game state (heuristics may read it; learned policies call
    ``state.observation(state.current_player())``), ``mask`` a boolean vector over the scenario's
    action ids, ``rng`` the policy's own random source.

    Contract: the returned action must be one where ``mask`` is True. The mask may be narrower than
    ``state.legal_actions()`` — restricted play forbids an option group by masking it out — so a
    policy must choose from the mask it is given, not from the state's legal actions.
    """

    name: str

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int: ...


_MASKS: dict[int, dict[tuple[int, ...], np.ndarray]] = {}
"""Masks already built, by number of actions and then legal ids: a game meets the same few legal lists again and
again. Read-only: callers get copies."""
_MASKS_LIMIT = 8192  # legal lists kept per number of actions (a game's distinct lists are far fewer)


def mask_cache(num_actions: int) -> dict[tuple[int, ...], np.ndarray]:
    """The kept masks over ``num_actions`` ids, by legal ids; a miss is built by :func:`new_mask`.

    The Gymnasium adapter looks its masks up here directly on its hot path; everyone else calls :func:`legal_mask`.
    """
    cache = _MASKS.get(num_actions)
    if cache is None:
        cache = _MASKS[num_actions] = {}
    return cache


def new_mask(num_actions: int, legal: tuple[int, ...]) -> np.ndarray:
    """A fresh mask of ``legal`` over ``num_actions`` ids, kept (read-only) in :func:`mask_cache` for the next time."""
    cache = mask_cache(num_actions)
    if len(cache) >= _MASKS_LIMIT:
        cache.clear()
    mask = np.zeros(num_actions, dtype=bool)
    mask[list(legal)] = True
    mask.flags.writeable = False
    cache[legal] = mask
    return mask.copy()


def legal_mask(state: State, num_actions: int) -> np.ndarray:
    """A boolean vector over ``num_actions`` ids, True where the action is legal in ``state``.

    The vector is fresh (the caller may change it); it is copied from a cache of the masks already built
    for the same legal list, which costs a fraction of building it.
    """
    legal = state.legal_tuple()  # the mask cache's key (an engine's kept tuple as it is)
    mask = mask_cache(num_actions).get(legal)
    return mask.copy() if mask is not None else new_mask(num_actions, legal)


class UniformRandom:
    """Picks uniformly among the legal actions."""

    name = "random"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        legal = mask.nonzero()[0]  # the ids in increasing order, as np.flatnonzero gives them
        return int(legal[int(rng.random() * len(legal))])

    @staticmethod
    def act_legal(legal: list[int], rng: Rng) -> int:
        """The action :meth:`act` picks from the mask of exactly ``legal`` (distinct ids), without the mask.

        :func:`~envs.core.play.advance` plays the uniform opponents this way: the same draw from the same ids in
        increasing order, without building a mask per decision.
        """
        ids = sorted(legal)
        return ids[int(rng.random() * len(ids))]

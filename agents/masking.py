"""What a simulating agent (search, rollout) may play at its own seat, shared by both.

A caller restricts an agent from outside by masking actions (restricted play); the option groups it masked
out entirely stay forbidden inside the agent's simulations too, together with the agent's own restriction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from envs.core.dice import Rng
from envs.core.game import State
from envs.core.policy import Policy


class AllowsActions(Protocol):
    """A restriction (``agents.search.Restriction``): which of the legal actions it allows."""

    def allowed(self, state: State, legal: list[int]) -> list[int]: ...


def masked_groups(state: State, legal: Sequence[int], mask: np.ndarray, allowed_root: Sequence[int]) -> frozenset[str]:
    """The option groups the caller's ``mask`` took out entirely (no allowed action of the group is left)."""
    masked = {state.option_of(a) for a in legal if not mask[a]} - {state.option_of(a) for a in allowed_root}
    return frozenset(g for g in masked if g is not None)


def allowed_actions(
    state: State, legal: list[int], forbid_extra: frozenset[str], restriction: AllowsActions | None
) -> list[int]:
    """``legal`` without the caller's masked groups (unless nothing would be left), then the restriction's."""
    if forbid_extra:
        legal = [a for a in legal if state.option_of(a) not in forbid_extra] or legal
    if restriction is not None:
        legal = restriction.allowed(state, legal)
    return legal


_MASKS: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}
_MASKS_LIMIT = 50_000


def base_act(base: Policy, state: State, allowed: list[int], num_actions: int, rng: Rng) -> int:
    """``base``'s choice among ``allowed`` (a mask of at least ``num_actions``); an action outside it is an error.

    The mask handed over is fresh (a copy of one cached per allowed list: building it costs about ten times
    the copy, and a search calls this at every playout decision)."""
    key = (max(num_actions, max(allowed) + 1), tuple(allowed))
    cached = _MASKS.get(key)
    if cached is None:
        if len(_MASKS) >= _MASKS_LIMIT:
            _MASKS.clear()
        cached = np.zeros(key[0], dtype=bool)
        cached[allowed] = True
        cached.flags.writeable = False
        _MASKS[key] = cached
    m = cached.copy()
    a = int(base.act(state, m, rng))
    if not m[a]:
        raise RuntimeError(f"base policy '{base.name}' chose action {a} outside its mask")
    return a

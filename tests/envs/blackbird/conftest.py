"""Shared fixtures for the Blackbird tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from envs.blackbird import RULESET
from envs.blackbird.config import BlackbirdConfig
from envs.core.config import with_override
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL


@pytest.fixture
def cfg() -> BlackbirdConfig:
    return RULESET.default_config()  # type: ignore[return-value]


def override(cfg: BlackbirdConfig, **kv: object) -> BlackbirdConfig:
    """``override(cfg, pool__cap=12)`` → a validated copy with ``pool.cap = 12``."""
    out = cfg
    for k, v in kv.items():
        out = with_override(out, k.replace("__", "."), v)  # type: ignore[assignment]
    return out


def walk(state: Any, rng: Rng, steps: int, check: Callable[[Any], None]) -> None:
    """Random legal play of a duel or session for ``steps`` nodes (or to the end), ``check`` at every node."""
    for _ in range(steps):
        check(state)
        p = state.current_player()
        if p == TERMINAL:
            return
        if p == CHANCE:
            state.apply_chance(state.sample_chance(rng))
        else:
            la = state.legal_actions()
            state.apply_action(la[int(rng.random() * len(la))])

"""Shared fixtures for the Blackbird tests."""

from __future__ import annotations

import pytest

from envs.blackbird import RULESET
from envs.blackbird.config import BlackbirdConfig
from envs.core.config import with_override


@pytest.fixture
def cfg() -> BlackbirdConfig:
    return RULESET.default_config()  # type: ignore[return-value]


def override(cfg: BlackbirdConfig, **kv: object) -> BlackbirdConfig:
    """``override(cfg, pool__cap=12)`` → a validated copy with ``pool.cap = 12``."""
    out = cfg
    for k, v in kv.items():
        out = with_override(out, k.replace("__", "."), v)  # type: ignore[assignment]
    return out

"""Shared helpers: a config with dotted overrides applied together."""

from __future__ import annotations

from typing import Any

from envs.core.config import config_dict, load_config, validate_config
from envs.storyteller import RULESET
from envs.storyteller.config import StorytellerConfig


def make_cfg(**overrides: Any) -> StorytellerConfig:
    """The rules as written with ``a__b=value`` overrides for key ``a.b`` (validated together)."""
    data = config_dict(load_config(RULESET))
    for k, v in overrides.items():
        node = data
        *parents, last = k.split("__")
        for p in parents:
            node = node[p]
        assert last in node, k
        node[last] = v
    cfg = validate_config(StorytellerConfig, data, "test overrides")
    assert isinstance(cfg, StorytellerConfig)
    return cfg

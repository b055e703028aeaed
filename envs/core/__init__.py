"""The game protocol, dice, rule configs, the Gymnasium adapter and registration."""

from envs.core.config import config_hash, load_config
from envs.core.dice import Die, Rng
from envs.core.errors import ConfigError, UserError
from envs.core.game import (
    CHANCE,
    TERMINAL,
    EndReason,
    Event,
    IllegalActionError,
    Knob,
    Outcome,
    Ruleset,
    Scenario,
    State,
)
from envs.core.policy import Policy, UniformRandom

__all__ = [
    "CHANCE",
    "TERMINAL",
    "ConfigError",
    "Die",
    "EndReason",
    "Event",
    "IllegalActionError",
    "Knob",
    "Outcome",
    "Policy",
    "Rng",
    "Ruleset",
    "Scenario",
    "State",
    "UniformRandom",
    "UserError",
    "config_hash",
    "load_config",
]

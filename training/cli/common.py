"""What every command shares: the two consoles, the common options, loading a ruleset and its rules."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel
from rich.console import Console

from envs.core.config import load_config
from envs.core.game import Ruleset
from envs.core.registry import get_ruleset

out = Console()
err = Console(stderr=True)

RulesOpt = Annotated[Path | None, typer.Option("--rules", help="A variant TOML overriding rules.toml.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Base seed; the same seed gives the same games.")]


def ruleset_and_config(name: str, rules: Path | None) -> tuple[Ruleset, BaseModel]:
    """The ruleset called ``name`` and its resolved rules (with a variant's overrides)."""
    rs = get_ruleset(name)
    return rs, load_config(rs, rules)

"""Rule configs: a typed model per ruleset, ``rules.toml`` defaults, TOML variants, a stable hash.

A variant file overrides any subset of the keys of ``rules.toml``. It may carry a top-level
``[variant]`` table (``description``, ``breaks``, ``expect``) that documents it and is not part of
the rules. Every problem becomes one :class:`ConfigError` line naming the key, the bad value and
what is allowed.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from envs.core.errors import ConfigError

if TYPE_CHECKING:
    from envs.core.game import Ruleset

VARIANT_META_KEY = "variant"


class RulesModel(BaseModel):
    """Base of every config section: frozen, no unknown keys."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


def read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML rules file; a missing or malformed file is a :class:`ConfigError` naming it."""
    if not path.exists():
        raise ConfigError(f"rules file not found: {path}")
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"rules file {path} is not valid TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"rules file {path} cannot be read: {e}") from None


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``override`` merged in, table by table (a variant overrides only the keys it names)."""
    out = dict(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def _allowed(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """Describe what a key allows, from the model's field annotations and constraints."""
    current: Any = model
    info = None
    for part in loc:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            if fields:
                return "one of the keys: " + ", ".join(fields)
            return ""
        info = fields[part]
        ann = info.annotation
        current = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
    if info is None:
        return ""
    ann = info.annotation
    name = getattr(ann, "__name__", None) or str(ann).replace("typing.", "")
    bounds = []
    for m in info.metadata:
        for attr, sym in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            v = getattr(m, attr, None)
            if v is not None:
                bounds.append(f"{sym} {v}")
    text = name + (" " + " and ".join(bounds) if bounds else "")
    if info.description:
        text += f" ({info.description})"
    return text


def validate_config(model: type[BaseModel], data: dict[str, Any], source: str) -> BaseModel:
    """Validate merged data; a failure becomes one line naming the key, value and what is allowed."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(err["loc"])
        key = ".".join(str(p) for p in loc)
        value = err.get("input")
        if err["type"] == "extra_forbidden":
            parent = loc[:-1]
            allowed = (
                _allowed(model, (*parent, "\0")) if parent else "one of the keys: " + ", ".join(model.model_fields)
            )
            msg = f"{source}: unknown key '{key}'; allowed: {allowed.removeprefix('one of the keys: ')}"
        elif isinstance(value, dict):  # a rule that ties several keys of a section (or the whole file) together
            where = f"section '{key}': " if key else ""
            msg = f"{source}: {where}{err['msg'].removeprefix('Value error, ')}"
        else:
            allowed = _allowed(model, loc)
            msg = f"{source}: key '{key}' has bad value {value!r}: {err['msg']}"
            if allowed:
                msg += f"; allowed: {allowed}"
        more = len(e.errors()) - 1
        if more:
            msg += f" (and {more} more problem{'s' if more > 1 else ''})"
        raise ConfigError(msg) from None


def load_config(ruleset: Ruleset, variant: Path | str | None = None) -> BaseModel:
    """The resolved config: ``rules.toml`` with the variant's overrides, validated."""
    data = read_toml(ruleset.rules_path)
    data.pop(VARIANT_META_KEY, None)
    source = str(ruleset.rules_path)
    if variant is not None:
        vpath = Path(variant)
        override = read_toml(vpath)
        meta = override.pop(VARIANT_META_KEY, None)
        if meta is not None and not isinstance(meta, dict):
            raise ConfigError(f"{vpath}: key 'variant' must be a table (description, breaks, expect)")
        data = deep_merge(data, override)
        source = str(vpath)
    return validate_config(ruleset.config_model, data, source)


def variant_meta(path: Path | str) -> dict[str, Any]:
    """The ``[variant]`` table of a variant file (empty if absent)."""
    meta = read_toml(Path(path)).get(VARIANT_META_KEY, {})
    return meta if isinstance(meta, dict) else {}


def config_dict(config: BaseModel) -> dict[str, Any]:
    """The resolved config as plain JSON-ready data."""
    return config.model_dump(mode="json")


def config_hash(config: BaseModel) -> str:
    """A stable 12-hex-digit hash of the resolved config (key order and formatting do not matter)."""
    blob = json.dumps(config_dict(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def flat_items(d: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Dotted keys and values of a nested dict, for display and diffs."""
    out: list[tuple[str, Any]] = []
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            out.extend(flat_items(v, key))
        else:
            out.append((key, v))
    return out


def with_override(config: BaseModel, dotted_key: str, value: Any) -> BaseModel:
    """A copy of ``config`` with one dotted key replaced (validated). Used by rule-sensitivity sweeps."""
    return with_overrides(config, [(dotted_key, value)])


def with_overrides(config: BaseModel, items: Sequence[tuple[str, Any]], source: str | None = None) -> BaseModel:
    """A copy of ``config`` with every dotted key of ``items`` replaced, validated once, together.

    Keys that are only valid in combination (a cap raised with the start it bounds) pass; an unknown key is
    a :class:`ConfigError` naming it. ``source`` names the overrides in a validation error.
    """
    data = config_dict(config)
    for dotted_key, value in items:
        node = data
        parts = dotted_key.split(".")
        for p in parts[:-1]:
            if p not in node or not isinstance(node[p], dict):
                raise ConfigError(f"unknown key '{dotted_key}'")
            node = node[p]
        if parts[-1] not in node:
            raise ConfigError(f"unknown key '{dotted_key}'")
        node[parts[-1]] = value
    if source is None:
        source = "override " + ", ".join(f"{k}={v!r}" for k, v in items)
    return validate_config(type(config), data, source)

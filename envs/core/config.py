"""Rule configs: a typed model per ruleset, ``rules.toml`` defaults, TOML variants, a stable hash.

A variant file overrides any subset of the keys of ``rules.toml``. It may carry a top-level
``[variant]`` table (``description``, ``breaks``, ``expect``) that documents it and is not part of
the rules. Every problem becomes one :class:`ConfigError` line naming the key, the bad value and
what is allowed.

Every config model is strict (:class:`RulesModel`): no bool or string is coerced to a number
(``start = true``, ``players = "3"`` are refused), no float is infinite or NaN, and every number of a
ruleset's model carries the bounds its rules allow. Rules files and the data files they name are read
through :func:`read_toml` / :func:`read_data_table`: regular files only, at most
:data:`MAX_FILE_BYTES`, and a data file only from the ruleset's data folder or next to the rules file
that names it.
"""

from __future__ import annotations

import hashlib
import json
import stat
import tomllib
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from envs.core.errors import ConfigError

if TYPE_CHECKING:
    from envs.core.game import Ruleset

VARIANT_META_KEY = "variant"
MAX_FILE_BYTES = 1_000_000
"""Largest rules file or data file read (1 MB): a device or a huge file is refused before it is read."""
MAX_VALUE_CHARS = 60
"""Longest rendering of a bad value in an error line (longer values are cut with an ellipsis)."""
RULES_DIR_CONTEXT = "rules_dir"
"""Validation-context key: the folder of the rules file being loaded (data paths may resolve next to it)."""

_TRUSTED_DIRS: set[Path] = set()
"""Folders of the rules files loaded in this process: a data path resolved next to one of them stays valid
when the resolved config is validated again (overrides, workers, records)."""


class RulesModel(BaseModel):
    """Base of every config section: frozen, no unknown keys, strict types, finite floats.

    Strict: a bool or a string is never read as a number (``start = true`` is refused, not 1), a float
    is never read as an int; an int is a valid float. ``inf`` and ``nan`` are refused everywhere.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True, strict=True, allow_inf_nan=False)


def _check_regular_file(path: Path, what: str) -> None:
    """Refuse a missing path, a directory, a device or FIFO, and a file over :data:`MAX_FILE_BYTES`."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ConfigError(f"{what} not found: {path}") from None
    except OSError as e:
        raise ConfigError(f"{what} {path} cannot be read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"{what} {path} is a directory; give a .toml file")
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{what} {path} is not a regular file (a device, FIFO or socket); give a .toml file")
    if st.st_size > MAX_FILE_BYTES:
        raise ConfigError(f"{what} {path} is {st.st_size} bytes; allowed: at most {MAX_FILE_BYTES} bytes")


def _parse_toml(path: Path, what: str) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{what} {path} cannot be read: {e.strerror or e}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(f"{what} {path} is over {MAX_FILE_BYTES} bytes; allowed: at most {MAX_FILE_BYTES} bytes")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{what} {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{what} {path} is not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{what} {path} nests too deeply") from None


def read_toml(path: Path, what: str = "rules file") -> dict[str, Any]:
    """Read a TOML rules file; a missing, unreadable, oversized or malformed file is a :class:`ConfigError`."""
    path = Path(path)
    _check_regular_file(path, what)
    return _parse_toml(path, what)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def trust_rules_dir(folder: Path) -> None:
    """Allow data files next to (inside) ``folder``, the folder of a rules file the user gave."""
    _TRUSTED_DIRS.add(folder.resolve())


def resolve_data_path(key: str, value: str, ruleset_dir: Path, data_dir: Path, rules_dir: Path | None) -> str:
    """A data path of a rules file, checked and normalised (``key`` names it in every error).

    A relative path resolves against ``ruleset_dir`` (``data/weapons.toml``) and must stay inside it (it is
    kept as written), or else against ``rules_dir``, the folder of the rules file that names it, and must
    stay inside that (it is kept relative to ``ruleset_dir`` when it lies there, as a variant's file does,
    so the config hash does not depend on the checkout; else as an absolute path). An absolute path must
    lie inside ``data_dir`` or inside the folder of a rules file loaded in this process. ``..`` and links
    cannot leave these folders.
    """
    if not value or "\0" in value or len(value) > 4096:
        raise ConfigError(f"key '{key}' has bad value {_show(value)}: allowed: a .toml file path")
    data_dir = data_dir.resolve()
    home = ruleset_dir.resolve()
    given = Path(value)
    if not given.is_absolute():
        in_data = (home / given).resolve()
        if _inside(in_data, home) and in_data.exists():
            return value
        if rules_dir is not None:
            here = rules_dir.resolve()
            beside = (here / given).resolve()
            if _inside(beside, here) and beside.exists():
                if _inside(beside, home):
                    return beside.relative_to(home).as_posix()
                _TRUSTED_DIRS.add(here)
                return str(beside)
        if _inside(in_data, data_dir):
            raise ConfigError(f"key '{key}': data file not found: {value} (looked in {data_dir})")
        where = f"{data_dir}" + (f" or next to the rules file in {rules_dir}" if rules_dir is not None else "")
        raise ConfigError(f"key '{key}' has bad value {_show(value)}: allowed: a file inside {where}")
    resolved = given.resolve()
    if _inside(resolved, data_dir) or any(_inside(resolved, d) for d in _TRUSTED_DIRS):
        return str(resolved)
    raise ConfigError(
        f"key '{key}' has bad value {_show(value)}: allowed: a file inside {data_dir} or next to the rules file"
    )


def read_data_table(key: str, path: Path, row_model: type[BaseModel], max_rows: int = 64) -> dict[str, dict[str, Any]]:
    """A data file of named rows (``[name]`` tables), each validated by ``row_model``.

    Errors name ``key`` and the row by its number, never the file's own keys or values (the path may
    point at a file that is no data table at all).
    """
    what = f"data file '{key}'"
    _check_regular_file(path, what)
    data = _parse_toml(path, what)
    if not data:
        raise ConfigError(f"{what} {path} holds no rows")
    if len(data) > max_rows:
        raise ConfigError(f"{what} {path} holds {len(data)} rows; allowed: at most {max_rows}")
    fields = ", ".join(row_model.model_fields)
    out: dict[str, dict[str, Any]] = {}
    for i, (name, row) in enumerate(data.items(), 1):
        if not isinstance(row, dict):
            raise ConfigError(f"{what} {path}: entry {i} is not a table of {fields}")
        try:
            out[name] = row_model.model_validate(row).model_dump(exclude_unset=True)
        except ValidationError as e:
            err = e.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                problem = f"has a key that is not one of {fields}"
            elif field in row_model.model_fields:
                said = "is missing" if err["type"] == "missing" else err["msg"][0].lower() + err["msg"][1:]
                problem = f"field '{field}' {said}; allowed: {_allowed(row_model, tuple(err['loc']))}"
            else:
                problem = err["msg"]
            raise ConfigError(f"{what} {path}: row {i} {problem}") from None
    return out


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``override`` merged in, table by table (a variant overrides only the keys it names)."""
    out = dict(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def _unwrap(ann: Any, metadata: list[Any]) -> tuple[Any, list[Any]]:
    """Strip ``Annotated`` and ``X | None`` from an annotation, collecting the constraints."""
    while True:
        origin = typing.get_origin(ann)
        if origin is typing.Annotated:
            ann, *extra = typing.get_args(ann)
            for m in extra:  # a pydantic Field(...) inside Annotated keeps its constraints in .metadata
                metadata = [*metadata, *getattr(m, "metadata", ()), m]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(ann) if a is not type(None)]
            if len(args) != 1:
                return ann, metadata
            ann = args[0]
        else:
            return ann, metadata


def _type_name(ann: Any) -> str:
    if typing.get_origin(ann) is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(ann))
    return getattr(ann, "__name__", None) or str(ann).replace("typing.", "")


def _bounds(metadata: list[Any]) -> list[str]:
    out = []
    for m in metadata:
        for attr, sym in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            v = getattr(m, attr, None)
            if v is not None:
                out.append(f"{sym} {v}")
        for attr, sym in (("min_length", "at least"), ("max_length", "at most")):
            v = getattr(m, attr, None)
            if v is not None:
                out.append(f"{sym} {v} items")
    return out


def _allowed(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """Describe what a key allows, from the model's field annotations and constraints.

    ``loc`` may run through lists and tables (``traits.0.tags.kung fu``): the item's own type and bounds
    are described, with the description of the field that holds it.
    """
    current: Any = model
    metadata: list[Any] = []
    description = None
    for part in loc:
        current, metadata = _unwrap(current, metadata)
        if isinstance(current, type) and issubclass(current, BaseModel):
            fields = current.model_fields
            if part not in fields:
                return "one of the keys: " + ", ".join(fields)
            info = fields[part]
            current, metadata, description = info.annotation, list(info.metadata), info.description
            continue
        origin = typing.get_origin(current)
        args = typing.get_args(current)
        if origin in (list, tuple, set) and args:
            current, metadata = args[0], []
        elif origin is dict and len(args) == 2:
            current, metadata = args[1], []
        else:
            return ""
    if current is model:
        return ""
    current, metadata = _unwrap(current, metadata)
    if isinstance(current, type) and issubclass(current, BaseModel):
        text = "a table of " + ", ".join(current.model_fields)
    else:
        bounds = _bounds(metadata)
        text = _type_name(current) + (" " + " and ".join(bounds) if bounds else "")
    if description:
        text += f" ({description})"
    return text


def _show(value: Any) -> str:
    """A bad value for an error line: its repr, on one line, cut to :data:`MAX_VALUE_CHARS` characters."""
    text = repr(value).replace("\n", " ")
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc)


def validate_config(
    model: type[BaseModel], data: dict[str, Any], source: str, *, rules_dir: Path | None = None
) -> BaseModel:
    """Validate merged data; a failure becomes one line naming the key, value and what is allowed.

    ``rules_dir`` is the folder of the rules file the data came from: data paths may resolve next to it.
    """
    try:
        return model.model_validate(data, context={RULES_DIR_CONTEXT: rules_dir})
    except ConfigError as e:  # raised inside a validator (a data file): already one line naming its key
        raise ConfigError(f"{source}: {e}") from None
    except RecursionError:
        raise ConfigError(f"{source}: the rules nest too deeply") from None
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(err["loc"])
        key = _dotted(loc)
        value = err.get("input")
        msg_text = str(err["msg"]).replace("\n", " ")
        if err["type"] == "extra_forbidden":
            parent = loc[:-1]
            allowed = (
                _allowed(model, (*parent, "\0")) if parent else "one of the keys: " + ", ".join(model.model_fields)
            )
            msg = f"{source}: unknown key '{key}'; allowed: {allowed.removeprefix('one of the keys: ')}"
        elif isinstance(value, dict) and err["type"] not in ("dict_type", "model_type"):
            # a rule that ties several keys of a section (or the whole file) together
            where = f"section '{key}': " if key else ""
            msg = f"{source}: {where}{msg_text.removeprefix('Value error, ')}"
        else:
            allowed = _allowed(model, loc)
            msg = f"{source}: key '{key}' has bad value {_show(value)}: {msg_text.removeprefix('Value error, ')}"
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
    rules_dir = ruleset.rules_path.parent
    if variant is not None:
        vpath = Path(variant)
        override = read_toml(vpath)
        meta = override.pop(VARIANT_META_KEY, None)
        if meta is not None and not isinstance(meta, dict):
            raise ConfigError(f"{vpath}: key 'variant' must be a table (description, breaks, expect)")
        data = deep_merge(data, override)
        source = str(vpath)
        rules_dir = vpath.parent
    return validate_config(ruleset.config_model, data, source, rules_dir=rules_dir)


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

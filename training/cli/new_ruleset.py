"""``rulebreaker new-ruleset NAME [--dir D]``: write a small working ruleset package to start a game from.

The template (``training/templates/ruleset/*.tmpl``, shipped as package data) is a separate installable
package: its own ``pyproject.toml`` declaring the ``rulebreaker.rulesets`` entry point, the one-shape
layout, a two-seat contest with one build choice, one decision per turn and one chance node, two personas,
two variants and tests. ``__NAME__`` and ``__TITLE__`` in the templates become the name and its CamelCase.
"""

from __future__ import annotations

import importlib.util
import keyword
import re
from pathlib import Path
from typing import Annotated

import typer

from envs.core.errors import UserError
from envs.core.registry import RULESET_NAMES, all_rulesets
from training.cli.common import out, say

TEMPLATE_DIR = Path(__file__).resolve().parents[1] / "templates" / "ruleset"
"""The template tree; ``package/`` becomes the package ``NAME/``."""
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")


def register(app: typer.Typer) -> None:
    app.command("new-ruleset")(new_ruleset)


def title_of(name: str) -> str:
    """``my_game`` -> ``MyGame`` (the env ids' CamelCase)."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def validate_name(name: str) -> None:
    """A new ruleset's name: a lower-case Python identifier, not shipped, not registered, not an importable module."""
    if not NAME_PATTERN.fullmatch(name) or keyword.iskeyword(name):
        raise UserError(
            f"ruleset name '{name}' is not a lower-case Python identifier (letters, digits, '_'; starting with a letter)"
        )
    if name in RULESET_NAMES or name in all_rulesets():
        raise UserError(f"ruleset name '{name}' is already taken by an installed ruleset; pick another")
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = True
    if found:
        raise UserError(f"ruleset name '{name}' is already an importable Python module; pick another")


def render(text: str, name: str) -> str:
    """Fill a template's placeholders."""
    return text.replace("__NAME__", name).replace("__TITLE__", title_of(name))


def write_template(name: str, target: Path) -> list[Path]:
    """Write the template package for ``name`` into the new directory ``target``; returns the files."""
    validate_name(name)
    if target.exists():
        raise UserError(f"{target} already exists; new-ruleset never overwrites: choose another --dir")
    written: list[Path] = []
    sources = sorted(p for p in TEMPLATE_DIR.rglob("*.tmpl") if p.is_file())
    if not sources:
        raise UserError(f"the ruleset template is missing from {TEMPLATE_DIR} (a broken rulebreaker install)")
    target.mkdir(parents=True)
    for src in sources:
        rel = src.relative_to(TEMPLATE_DIR).with_suffix("")  # drop .tmpl
        parts = [name if (i == 0 and p == "package") else p for i, p in enumerate(rel.parts)]
        if rel.parts[0] == "tests" and rel.name == "test_ruleset.py":
            parts[-1] = f"test_{name}.py"
        dest = target.joinpath(*parts)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(render(src.read_text(encoding="utf-8"), name), encoding="utf-8")
        written.append(dest)
    return written


def new_ruleset(
    name: Annotated[str, typer.Argument(help="The new ruleset's name: a lower-case Python identifier.")],
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Directory to create (default ./NAME); must not exist.")
    ] = None,
) -> None:
    """Write a small, working ruleset package NAME (its own pyproject.toml, entry point, engine, persona, tests)."""
    target = directory if directory is not None else Path(name)
    try:
        files = write_template(name, target)
    except OSError as e:
        raise UserError(f"cannot write the new ruleset to {e.filename or target}: {e.strerror or e}") from None
    say(out, f"wrote {len(files)} files to {target}")
    say(out, f"next: pip install -e {target} && rulebreaker check {name} && rulebreaker play {name} contest")

"""The odds protocol: how a ruleset shows its core mechanic to ``rulebreaker odds``.

A ruleset that has one sets ``Ruleset.odds`` to an :class:`OddsProvider`: the options the command takes
(:class:`OddsParam`) and one function from the resolved rules and those options to an :class:`Odds` — the
exact distribution (outcome -> :class:`~fractions.Fraction`) and a sampler that rolls once with the engine's
own roll code (what its chance nodes use), so ``odds --simulate`` can cross-check the two. The five shipped
rulesets and the ``new-ruleset`` template register theirs this way (``envs/<ruleset>/odds.py``).

Bad arguments are a :class:`~envs.core.errors.UserError` naming the option and what is allowed; the helpers
:func:`check_range`, :func:`parse_ints` and :func:`parse_dice` give the usual messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from envs.core.errors import UserError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from envs.core.dice import Rng

Sampler = Callable[["Rng"], Iterable[str]]
"""One roll by the engine's code -> the outcome labels it falls into (its partition label + events)."""


@dataclass(frozen=True)
class OddsParam:
    """One option of ``rulebreaker odds <ruleset>``: ``name`` ``dice`` is ``--dice`` (``_`` becomes ``-``)."""

    name: str
    help: str
    kind: type = int  # int, str or bool (a flag, False unless given)
    default: Any = None  # None and not required: the option may be left out (the provider picks the rules' value)
    required: bool = False

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass
class Odds:
    """One query's exact odds and the engine's own roll for it.

    ``probabilities`` is ordered; the outcomes in ``partition`` are mutually exclusive and sum to 1, the others
    (e.g. ``pass``) are events beside them. ``query`` holds the resolved arguments (shown and written in JSON).
    """

    probabilities: dict[str, Fraction]
    partition: list[str]
    title: str
    query: dict[str, Any]
    sampler: Sampler
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class OddsProvider:
    """A ruleset's core mechanic for ``rulebreaker odds``: its options and ``odds(config, args) -> Odds``."""

    summary: str  # one line: the help of ``odds <ruleset>``
    params: tuple[OddsParam, ...]
    odds: Callable[[BaseModel, Mapping[str, Any]], Odds]
    examples: tuple[Mapping[str, Any], ...] = ()  # queries the contract kit (``rulebreaker check``) cross-checks


# -- argument checks (each problem is one UserError line; the CLI exits 2) ----------------------------------------


def check_range(name: str, value: int, low: int, high: int) -> None:
    """A :class:`UserError` unless ``low <= value <= high``."""
    if not low <= value <= high:
        raise UserError(f"{name} must be between {low} and {high}, got {value}")


def parse_dice(text: str, allowed: Sequence[int], option: str) -> tuple[int, ...]:
    """``"d12,d10"`` -> ``(12, 10)``; unknown dice are one clear error naming the allowed ones."""
    valid = ", ".join(f"d{s}" for s in sorted(allowed, reverse=True))
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise UserError(f"{option} needs at least one die (e.g. d12,d10); allowed dice: {valid}")
    out = []
    for p in parts:
        t = p.lower().removeprefix("d")
        if not t.isdigit() or int(t) not in allowed:
            raise UserError(f"unknown die '{p}' in {option}; allowed dice: {valid}")
        out.append(int(t))
    return tuple(out)


def parse_ints(text: str, count: int, option: str, example: str) -> tuple[int, ...]:
    """``"4,4,4"`` -> ``(4, 4, 4)``: exactly ``count`` comma-separated integers, else one clear error."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != count or not all(p.lstrip("-").isdigit() for p in parts):
        raise UserError(f"{option} needs {count} comma-separated integers (e.g. {example}), got '{text}'")
    return tuple(int(p) for p in parts)


def rule(config: Any, dotted: str, default: Any) -> Any:
    """The value of the dotted key ``dotted`` of a resolved config, or ``default`` where the model has none."""
    node = config
    for part in dotted.split("."):
        if node is None or not hasattr(node, part):
            return default
        node = getattr(node, part)
    return node

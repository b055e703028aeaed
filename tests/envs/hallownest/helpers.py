"""Test helpers: a duel with config overrides, forced dice and named actions."""

from __future__ import annotations

from typing import Any

from envs.core.config import config_dict, deep_merge, validate_config
from envs.hallownest import RULESET
from envs.hallownest.actions import Kind, Phase, action_id
from envs.hallownest.config import HallownestConfig
from envs.hallownest.duel import DuelState


def config(**sections: Any) -> HallownestConfig:
    """The rules as written with nested overrides, e.g. ``config(stamina={"tax_per_attack": 0})``."""
    base = config_dict(RULESET.default_config())
    cfg = validate_config(HallownestConfig, deep_merge(base, sections), "test")
    assert isinstance(cfg, HallownestConfig)
    return cfg


def bugs(seat0: dict[str, Any] | None = None, seat1: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``duel`` section with per-seat overrides of the default Nailbug and Greatbug."""
    base = config_dict(RULESET.default_config())["duel"]["bugs"]
    return {"bugs": [{**base[0], **(seat0 or {})}, {**base[1], **(seat1 or {})}]}


def duel(
    first: int = 0,
    start: tuple[int, int] = (2, 3),
    seat0: dict[str, Any] | None = None,
    seat1: dict[str, Any] | None = None,
    **sections: Any,
) -> DuelState:
    """A duel where ``first`` won initiative (forced totals 12 vs 6), bugs adjacent on the track by default."""
    sections.setdefault("arena", {})
    sections["arena"] = {"start": [[start[0], 0], [start[1], 0]], **sections["arena"]}
    sections["duel"] = {**bugs(seat0, seat1), **sections.get("duel", {})}
    st = DuelState(config(**sections))
    hi, lo = 12, 6
    st.apply_chance(hi if first == 0 else lo)
    st.apply_chance(lo if first == 0 else hi)
    assert st.phase == Phase.TURN and st.active == first
    return st


def act(st: DuelState, kind: Kind, amount: int = 0, direction: int | None = None) -> None:
    st.apply_action(action_id(kind, amount, direction))


def force(st: DuelState, *outcomes: int) -> None:
    """Apply chance outcomes (success counts) in order; each must be at a chance node."""
    for n in outcomes:
        assert st.phase in (
            Phase.ATTACK_ROLL,
            Phase.DEFENSE_ROLL,
            Phase.SOAK_ROLL,
            Phase.ESCAPE_ROLL,
            Phase.RESIST_ROLL,
            Phase.FOCUS_ROLL,
            Phase.INITIATIVE,
        ), st.phase
        st.apply_chance(n)

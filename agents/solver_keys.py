"""Solver keys: how the exact solver (and the whole-game exact rollout agent) merges positions.

``State.key()`` identifies a position; for some scenarios it keeps apart positions whose futures are the same
(a past roll that no rule reads again), and the exact solve grows by orders of magnitude. A canonical key
here blanks what no later rule reads; :func:`solver_key` picks it for a scenario (``State.key`` otherwise).
Each is checked against the plain key on a small configuration in tests/training/test_solve.py.
"""

from __future__ import annotations

from typing import Any

from agents.solver import KeyFn, default_key


def _key_without(state: Any, blank: dict[str, Any]) -> Any:
    """``state.key()`` computed with some attributes temporarily blanked (restored afterwards)."""
    saved = {a: getattr(state, a) for a in blank}
    try:
        for a, v in blank.items():
            setattr(state, a, v)
        return state.key()
    finally:
        for a, v in saved.items():
            setattr(state, a, v)


def _blackbird_session_key(state: Any) -> Any:
    """blackbird session: ``key()`` keeps the last roll (``own``), the helper's and the opposition's
    successes after the roll is resolved, so positions that differ only in a past roll stay apart (the
    solve grows ~100x). They matter only while a roll is being resolved, so blank them otherwise."""
    phase = type(state.phase)  # the scenario's own Phase enum (read from the state: no engine import here)
    if state.phase in (phase.JOINT, phase.OPPOSE, phase.ROLL_OFF):
        return state.key()
    return _key_without(state, {"own": None, "partner": 0, "opposition": 0})


def wicked_age_duel_blanks(state: Any) -> dict[str, Any] | None:
    """What a two-party wicked_age conflict no longer needs (``None``: nothing to blank).

    Once the turn order is set (stage TURN) the others have picked up their opening dice, only the
    standing roll's reading (Rule 6: sorted faces, advantage on the highest) is compared again, and the
    tie bookkeeping is reset before any later tie; once an absolute result is in (``conseq`` set) no
    roll is compared again at all (the owe list reads die sizes, not faces). ``key()`` keeps all of it,
    so every roll history would carry its own copy of the rest of the round."""
    if state.num_players != 2 or state.stage != type(state.stage).TURN:  # the scenario's own Stage enum
        return None
    n = len(state.rolls)
    if state.conseq is not None:
        rolls: list[Any] = [None] * n
    else:
        rolls = [None] * n
        if state.order:
            first = state.order[0]
            r = state.rolls[first]
            rolls[first] = None if r is None else type(r)(tuple(x for x in r.key if x), 0)  # the same Roll type
    return {"rolls": rolls, "tie_rerolls": 0, "tied": [], "avoid_votes": []}


def _wicked_age_duel_key(state: Any) -> Any:
    """wicked_age duel: ``key()`` with :func:`wicked_age_duel_blanks` applied."""
    blanks = wicked_age_duel_blanks(state)
    return state.key() if blanks is None else _key_without(state, blanks)


CANONICAL_KEYS: dict[tuple[str, str], tuple[tuple[str, ...], Any]] = {
    ("blackbird", "session"): (("phase", "own", "partner", "opposition"), _blackbird_session_key),
    ("wicked_age", "duel"): (
        ("conseq", "rolls", "stage", "order", "tie_rerolls", "tied", "avoid_votes"),
        _wicked_age_duel_key,
    ),
}
"""Solver keys that merge positions a scenario's own ``key()`` keeps apart needlessly (used only when
the state has every attribute they touch; otherwise ``State.key()`` is used). Each is checked against
the plain key on a small configuration in tests/training/test_solve.py."""


def solver_key(ruleset: str, scenario: str, root: Any) -> KeyFn:
    """The key the solver merges positions by: a canonical key of :data:`CANONICAL_KEYS`, or ``State.key``."""
    entry = CANONICAL_KEYS.get((ruleset, scenario))
    if entry is None or not all(hasattr(root, a) for a in entry[0]):
        return default_key
    return entry[1]

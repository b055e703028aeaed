"""Test helpers: configs with overrides, forced setups, a brute-force assignment oracle, random play."""

from __future__ import annotations

from collections.abc import Callable
from itertools import permutations
from typing import Any

from envs.core.config import with_override
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL
from envs.crossroads import RULESET
from envs.crossroads.actions import FACTION_BASE, Act, Phase
from envs.crossroads.config import CrossroadsConfig
from envs.crossroads.episode import CrossroadsState

ALL_PERMS = list(permutations(range(3)))  # the test's own list, not the engine's


def config(**overrides: Any) -> CrossroadsConfig:
    """The rules as written with dotted overrides given as ``section__key=value``."""
    cfg = RULESET.default_config()
    for k, v in overrides.items():
        cfg = with_override(cfg, k.replace("__", "."), v)
    assert isinstance(cfg, CrossroadsConfig)
    return cfg


def brute_best(dice: tuple[int, ...], stats: tuple[int, ...] | list[int]) -> tuple[int, list[tuple[int, ...]]]:
    """Most successes over all six assignments, and the assignments (stat i gets dice[p[i]]) that reach it."""
    scores = {p: sum(1 for i in range(3) if dice[p[i]] <= stats[i]) for p in ALL_PERMS}
    best = max(scores.values())
    return best, [p for p, s in scores.items() if s == best]


def assign_action(perm: tuple[int, ...]) -> int:
    """The ASSIGN action for a permutation, found by the engine's label (stat i gets die perm[i])."""
    from envs.crossroads.dice import PERMUTATIONS

    return Act.ASSIGN_0 + PERMUTATIONS.index(tuple(perm))  # type: ignore[arg-type]


def build(st: CrossroadsState, g: int, kh: int) -> None:
    assert st.phase == Phase.BUILD
    st.apply_action(Act.VALUE_1 + g - 1)
    st.apply_action(Act.VALUE_1 + kh - 1)


def roll(st: CrossroadsState, dice: tuple[int, int, int]) -> None:
    assert st.current_player() == CHANCE, st.phase
    st.apply_chance(dice)


def pass_spends(st: CrossroadsState) -> None:
    while st.phase == Phase.SPEND:
        st.apply_action(Act.PASS)


def quick_setup(
    st: CrossroadsState, stats: tuple[tuple[int, int, int], ...] | None = None, dice: tuple[int, int, int] = (8, 9, 10)
) -> CrossroadsState:
    """Every seat builds its stats (default 4/4/4) and rolls ``dice``; every faction rolls ``dice``; all pass."""
    n = st.num_players
    stats = stats or ((4, 4, 4),) * n
    for s in range(n):
        assert st.actor == s and st.phase == Phase.BUILD
        build(st, stats[s][0], stats[s][1])
        roll(st, dice)
        if st.phase == Phase.ASSIGN:
            st.apply_action(Act.ASSIGN_0)
        pass_spends(st)
    while st.phase == Phase.ROLL:  # the factions
        roll(st, dice)
        pass_spends(st)
    assert st.phase == Phase.ADMIN_SCENE
    return st


def start_confrontation(
    st: CrossroadsState,
    target: int,
    opposition: int | None,
    admin_aim: int = Act.ADD_MINUS_C,
    target_aim: int = Act.GAIN_PLUS_C,
) -> None:
    """Admin frames a confrontation: target character id, opposition entity id (None = nobody), aims."""
    st.apply_action(Act.SCENE_CONFRONT)
    st.apply_action(Act.TARGET_0 + target)
    if opposition is None:
        st.apply_action(Act.NO_OPPOSITION)
        return
    st.apply_action(Act.TARGET_0 + opposition)
    st.apply_action(admin_aim)
    st.apply_action(target_aim)


def faction_id(k: int) -> int:
    return FACTION_BASE + k


def step(st: CrossroadsState, rng: Rng) -> None:
    """One random move: the sampled roll at a chance node, else a uniformly drawn legal action."""
    if st.current_player() == CHANCE:
        st.apply_chance(st.sample_chance(rng))
    else:
        legal = st.legal_actions()
        st.apply_action(legal[int(rng.random() * len(legal))])


def diverge(st: CrossroadsState, rng: Rng, steps: int, check: Callable[[CrossroadsState], None]) -> None:
    """Clone ``st`` and play the clone on with dice of its own for up to ``steps`` moves, ``check`` after each;
    then ``check`` the original, which must still read its own position."""
    cl = st.clone()
    other = Rng(int(rng.random() * 1000))
    for _ in range(steps):
        if cl.current_player() == TERMINAL:
            break
        step(cl, other)
        check(cl)
    check(st)

"""Issue 16: the fast paths against the plain computation (memoised declarations, cached observation blocks)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest

from envs.core.config import config_dict, deep_merge, validate_config
from envs.core.dice import Rng
from envs.core.game import State
from envs.storyteller import RULESET, dice, rules
from envs.storyteller.actions import Act, Phase, Status, ally_action, count_action, willpower_action
from envs.storyteller.config import StorytellerConfig
from envs.storyteller.duel import DuelState, new_duel
from envs.storyteller.heist import HeistState, Task
from envs.storyteller.observation import encode_duel, encode_heist


def _config(**sections: object) -> StorytellerConfig:
    cfg = validate_config(StorytellerConfig, deep_merge(config_dict(RULESET.default_config()), sections), "test")
    assert isinstance(cfg, StorytellerConfig)
    return cfg


@pytest.mark.parametrize(
    "sections",
    [{}, {"extended": {"one_roll_per_task": False}}, {"willpower": {"points": 0}}],
)
def test_memoised_declarations_agree_with_the_direct_rules(sections: dict[str, object]) -> None:
    """Counts and picks memoised per config equal Rules 9-11 worked out again, state by state."""
    cfg = _config(**sections)
    checked = 0
    for seed in range(60):
        st = HeistState(cfg)
        rng = Rng(200 + seed)
        while not st.is_terminal():
            if st.is_chance():
                st.apply_chance(st.sample_chance(rng))
                continue
            legal = st.legal_actions()
            if st.phase is Phase.PICK:
                assert legal == st._legal_picks()
                checked += 1
            elif st.phase is Phase.COUNT:
                assert legal == [count_action(n) for n in range(1, st.max_actions + 1) if st._feasible(n, 0, ())]
                checked += 1
            st.apply_action(legal[int(rng.random() * len(legal))])
    assert checked > 300


FAST_PATH_CONFIGS = [
    {},
    {"extended": {"one_roll_per_task": False}, "duel": {"max_actions": 4}, "multiple_actions": {"max_actions": 5}},
    {"willpower": {"declared": "before_the_turn"}},
    {"willpower": {"points": 0}, "extended": {"reset_on": "failure"}},
]


def _walk(state: State, rng: Rng, check: Callable[[State], None], clones: list[State]) -> None:
    """Play ``state`` to the end with random legal moves, checking every node; keep a few clones on the way."""
    while True:
        check(state)
        if state.is_terminal():
            return
        if rng.random() < 0.05:  # noqa: PLR2004 - the share of nodes cloned to diverge later
            clones.append(state.clone())
        if state.is_chance():
            state.apply_chance(state.sample_chance(rng))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.random() * len(legal))])


def _check_walks(cfg: StorytellerConfig, new: Callable[[], State], check: Callable[[State], None]) -> int:
    """Random games, and clones of their positions played on another way; returns the games played."""
    games = 0
    for seed in range(30):
        clones: list[State] = []
        _walk(new(), Rng(500 + seed), check, clones)
        for i, c in enumerate(clones):
            _walk(c, Rng(9000 + 31 * seed + i), check, [])
        games += 1 + len(clones)
    return games


@pytest.mark.parametrize("sections", FAST_PATH_CONFIGS)
def test_duel_block_observations_equal_the_plain_encoder(sections: dict[str, object]) -> None:
    """The duel's cached and memoised observation blocks give the plain encoder's bytes, both seats, clones too."""
    cfg = _config(**sections)

    def check(st: State) -> None:
        assert isinstance(st, DuelState)
        for seat in (0, 1):
            fast = st.observation(seat)
            assert fast.dtype == np.float32 and fast.flags.writeable
            assert fast.tobytes() == encode_duel(st, seat).tobytes()
        assert st.legal_actions() == list(st._compute_legal())  # the kept list is this node's
        assert st.current_player() == st._current_player()  # the kept player is this node's

    assert _check_walks(cfg, lambda: DuelState(cfg), check) > 30  # noqa: PLR2004
    assert _check_walks(cfg, lambda: new_duel(cfg), check) > 30  # noqa: PLR2004 - clones of the fresh duel
    _check_duel_memos(DuelState(cfg))


def _check_duel_memos(st: DuelState) -> None:
    """Every entry of the config's memos (filled by the games played) against the rules worked out again."""
    setup = st._setup
    assert setup.queues and setup.settled and setup.attack_turns
    for (s, n, plan, wp_k), rolls in setup.queues.items():  # the memoised declared rolls are the rules' rolls
        assert rolls == tuple(st._declared_roll(s, kind, n, k, k == wp_k) for k, kind in enumerate(plan))
    for outcomes, turn in setup.attack_turns.items():  # Rule 11 memoised by the turn's attack outcomes
        assert turn == rules.attack_turn(outcomes, st.cfg)
    for (outcomes, defence), (reset, gain) in setup.settled.items():  # Rules 11-12 memoised per side
        turn = rules.attack_turn(outcomes, st.cfg)
        assert (reset, gain) == (
            turn.reset,
            rules.resisted_result(turn.kept, defence or 0, st.cfg) if turn.rolled else 0,
        )
    for (roll, spend), decided in setup.decided.items():  # Rule 8's decision on a queued roll
        assert decided == roll._replace(willpower=rules.willpower_successes(spend, st.cfg), willpower_decided=True)
    assert setup.fresh is not None  # the duel new_duel clones is still a fresh one
    assert setup.fresh.key() == st.key() and setup.fresh.log == st.log
    if setup.tiebreak_odds is not None:  # Rule 13's roll-off, kept per config
        assert setup.tiebreak_odds == st._roll_off_odds()


@pytest.mark.parametrize("sections", [*FAST_PATH_CONFIGS, {"heist": {"draw": 2}}, {"teamwork": {"enabled": False}}])
def test_heist_block_observations_equal_the_plain_encoder(sections: dict[str, object]) -> None:
    """The heist's memoised observation blocks give the plain encoder's bytes at every node, clones too."""
    cfg = _config(**sections)

    def check(st: State) -> None:
        assert isinstance(st, HeistState)
        assert st.current_player() == st._current_player()  # the kept player is this node's
        assert all(t.extended == t.spec.extended for t in st.tasks)  # Rule 11's kept copy of the spec's property
        fast = st.observation(0)
        assert fast.dtype == np.float32 and fast.flags.writeable
        assert fast.tobytes() == encode_heist(st, 0).tobytes()
        if st._tasks_key is not None:  # the kept tasks' key is the tasks' present one
            assert st._tasks_key == tuple((t.spec.key, t.attempt, t.status) for t in st.tasks)
        if not st.is_chance():
            legal = st.legal_actions()
            st._legal, st._tasks_key = None, None
            assert legal == list(st._compute_legal())  # the kept list is this node's
            if st.phase is Phase.ALLY:  # Rule 14, from the action table
                active = [s for s, t in enumerate(st.tasks) if t.status == Status.ACTIVE]
                assert legal == [*(ally_action(s) for s in active), Act.ALLY_REST]
            elif st.phase is Phase.WILLPOWER and st.willpower_per_roll:  # Rule 8, on the roll about to be made
                assert legal == [Act.NO_WILLPOWER, willpower_action(st.queue[0].index)]

    assert _check_walks(cfg, lambda: HeistState(cfg), check) > 30  # noqa: PLR2004


@pytest.mark.parametrize("specialty", [False, True])
def test_integer_outcome_tables_equal_the_fraction_products(specialty: bool) -> None:
    """The exact roll tables summed in integers are the Fraction-by-Fraction tables, entry by entry."""
    for pool in range(-1, 10 if specialty else 13):
        for difficulty in range(0, 13):
            for wp in (0, 1, 2):
                for prevents in (False, True):
                    fast = dice._distribution.__wrapped__(pool, difficulty, wp, prevents, specialty)
                    assert fast == dice._reference_distribution(pool, difficulty, wp, prevents, specialty)
                    assert all(type(p) is Fraction for _, p in fast)


SHARED = {"sides", "_declarations", "_tail_blocks", "_global_blocks"}
"""Containers a clone shares: the duel's sides (never changed) and the heist's memos per config."""


@pytest.mark.parametrize("make", [DuelState, HeistState, new_duel])
def test_states_keep_every_attribute_in_a_slot_and_a_clone_copies_each(make: Callable[[StorytellerConfig], State]):
    """No attribute lands in an instance dict (a dict of more than 30 keys is not shared with the class in Python 3.11,
    which disables attribute and method specialisation), and ``clone`` assigns every slot: the clone reads the
    original's values, its mutable containers are fresh, and the original plays on unchanged by the clone's moves."""
    cfg = _config()
    cls = DuelState if make is new_duel else make
    assert isinstance(cls, type) and issubclass(cls, DuelState | HeistState)
    for seed in range(20):
        st = make(cfg)
        st.narrating = seed % 2 == 0
        rng = Rng(700 + seed)
        k = 0
        while not st.is_terminal():
            assert not st.__dict__
            if k % 4 == 0:
                cl = st.clone()
                assert type(cl) is cls and not cl.__dict__
                for name in cls.FIELDS:
                    mine, theirs = getattr(st, name), getattr(cl, name)
                    if name == "tasks":
                        slots = Task.__slots__
                        assert [[getattr(t, a) for a in slots] for t in theirs] == [
                            [getattr(t, a) for a in slots] for t in mine
                        ]
                        assert all(a is not b for a, b in zip(mine, theirs, strict=True))
                    else:
                        assert theirs == mine, name
                        if isinstance(mine, list | dict) and (mine or name == "log") and name not in SHARED:
                            assert theirs is not mine, name
                key, log = st.key(), list(st.log)
                _walk(cl, Rng(seed), lambda _s: None, [])  # the clone played to its end moves nothing of st
                assert st.key() == key and st.log == log
            k += 1
            if st.is_chance():
                st.apply_chance(st.sample_chance(rng))
            else:
                legal = st.legal_actions()
                st.apply_action(legal[int(rng.random() * len(legal))])

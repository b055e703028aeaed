"""The engine's and the personas' speed short cuts against brute-force twins (issue 16: no behaviour change).

Each fast path of the search agent's playouts (a one-pass roll, a 3-element sort, memoised stat checks and
-C action lists, no crossroads reading when nobody narrates, the personas' memoised best assignment) is
checked against a slow formulation written here, over every input or over whole seeded games.
"""

from __future__ import annotations

import random
from itertools import product

import numpy as np
import pytest

from agents.personas.crossroads import PERSONAS, best_assignment
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL
from envs.core.policy import legal_mask
from envs.crossroads import RULESET, rules
from envs.crossroads.actions import MINUS_C_OF, NUM_ACTIONS, Act, Phase, Purpose
from envs.crossroads.dice import PERMUTATIONS, roll_check_dice
from envs.crossroads.episode import Character, CrossroadsState, _sorted3
from envs.crossroads.rules import MinusC

from .helpers import ALL_PERMS, assign_action, config, diverge, step

FACES = range(1, 11)


def test_sorted3_sorts_every_roll():
    for d in product(FACES, repeat=3):
        assert _sorted3(d) == tuple(sorted(d))


def test_roll_check_dice_draws_what_rng_roll_draws():
    a, b = Rng(7), Rng(7)
    for _ in range(2000):
        assert roll_check_dice(a) == b.roll(3, 10)


def test_memoised_stat_check_reads_like_brute_force():
    st = CrossroadsState(config())
    rnd = random.Random(3)
    for _ in range(3000):
        dice = (rnd.randint(1, 10), rnd.randint(1, 10), rnd.randint(1, 10))
        stats = [rnd.randint(0, 10) for _ in range(3)]
        c = Character(0, 0, True, stats)
        for p in ALL_PERMS:
            perm = assign_action(p) - Act.ASSIGN_0
            flags = tuple(dice[p[i]] <= stats[i] for i in range(3))
            for _ in range(2):  # the second reading comes from the memo
                assert st.read_check(c, dice, perm) == (flags, sum(flags))
        assert st.read_check(c, list(dice), 0)[1] == sum(dice[i] <= stats[i] for i in range(3))  # unhashable dice


@pytest.mark.parametrize("names", ["chosen", "automatic"])
def test_minus_c_actions_are_the_names_a_giver_may_choose(names):
    st = CrossroadsState(config(writeoffs__minus_c_names=names))
    for wounded, dying in product((False, True), repeat=2):
        c = Character(0, 0, True, [4, 4, 4])
        c.wounded, c.dying = wounded, dying
        expected = [MINUS_C_OF[MinusC.PLAIN]]
        if names == "chosen":
            expected += [MINUS_C_OF[MinusC.WOUNDED]] * (not wounded) + [MINUS_C_OF[MinusC.DYING]] * (not dying)
        assert list(st._minus_c_actions(c)) == [int(a) for a in expected]


def _slow_best(dice: tuple[int, ...], stats: list[int], goals: list[bool]) -> tuple[int, ...]:
    """The assignment with the most successes, ties to the most on unmarked boxes, then the action table's order."""
    engine_order = list(PERMUTATIONS)
    assert sorted(engine_order) == sorted(ALL_PERMS)

    def score(p: tuple[int, ...]) -> tuple[int, int]:
        ok = [dice[p[i]] <= stats[i] for i in range(3)]
        return sum(ok), sum(1 for i in range(3) if ok[i] and not goals[i])

    best = max(score(p) for p in engine_order)
    return next(p for p in engine_order if score(p) == best)


def _play(lineup, seed: int, narrating: bool, watch=None) -> tuple[list[int], list[float], list[object]]:
    st = RULESET.new_game(config(), "episode")
    assert isinstance(st, CrossroadsState)
    st.narrating = narrating
    rng = Rng(seed)
    actions: list[int] = []
    keys: list[object] = []
    while (p := st.current_player()) != TERMINAL:
        if p == CHANCE:
            st.apply_chance(st.sample_chance(rng))
            continue
        mask = legal_mask(st, NUM_ACTIONS)
        if watch is not None:
            watch(st, mask)
        a = lineup[p].act(st, mask, rng)
        actions.append(a)
        keys.append(st.full_key())
        st.apply_action(a)
    return actions, st.returns(), keys


def test_best_assignment_matches_the_slow_rule_in_play():
    seen = {"n": 0}

    def watch(st: CrossroadsState, mask: np.ndarray) -> None:
        if st.phase != Phase.ASSIGN:
            return
        confront = st.purpose == Purpose.CONFRONT
        dice = st.sides[st.side_i].dice if confront else st.dice
        roller = st.entity(st.sides[st.side_i].eid if confront else st.chk_eid)
        assert isinstance(roller, Character)
        perm = _slow_best(dice, roller.stats, roller.goals)
        assert best_assignment(st) == assign_action(perm)
        seen["n"] += 1

    for seed in range(6):
        _play([PERSONAS[n]() for n in ("schemer", "builder", "attacker")], seed, True, watch)
    assert seen["n"] > 100


@pytest.mark.parametrize("seed", range(4))
def test_silent_games_play_like_narrated_ones(seed):
    """Without narration the engine skips work only the log reads (the crossroads of effect "none")."""
    lineup = [PERSONAS[n]() for n in ("schemer", "attacker", "builder")]
    loud = _play(lineup, seed, True)
    quiet = _play(lineup, seed, False)
    assert loud == quiet


@pytest.mark.parametrize("name", sorted(PERSONAS))
def test_personas_read_a_short_mask_like_the_full_one(name):
    """A mask may end at the highest legal id (agents.solver.estimate_states): the choice is the same."""
    persona = PERSONAS[name]()
    seen = {"n": 0}

    def watch(st: CrossroadsState, mask: np.ndarray) -> None:
        legal = st.legal_actions()
        short = np.zeros(max(legal) + 1, dtype=bool)
        short[legal] = True
        r1, r2 = Rng(seen["n"]), Rng(seen["n"])
        assert persona.act(st, short, r1) == persona.act(st, mask, r2)
        seen["n"] += 1

    for seed in range(4):
        _play([PERSONAS[n]() for n in ("schemer", "builder", "attacker")], seed, False, watch)
    assert seen["n"] > 300


def test_state_and_encoder_attributes_are_slots_and_a_clone_copies_each():
    """Every attribute of a state lives in a slot (an unshared instance dict of 46 keys disables Python 3.11's
    attribute and method specialisation), and ``clone`` assigns every slot: the clone reads the original's
    values, its containers are copies, and the two play on independently."""
    rng = Rng(3)
    for overrides in ({}, {"episode__players": 5, "setup__first_player": "roll"}):
        st = CrossroadsState(config(**overrides))
        st.narrating = False
        for k in range(400):
            if st.current_player() == TERMINAL:
                break
            step(st, rng)
            if k % 3 == 0:
                st.observation(0)
            assert not st.__dict__ and not hasattr(st.encoder, "__dict__")
            if k % 50 == 0:
                cl = st.clone()
                assert not cl.__dict__
                for name in CrossroadsState.FIELDS:
                    mine, theirs = getattr(st, name), getattr(cl, name)
                    if name in ("chars", "factions", "sides"):
                        assert [e.key() for e in mine] == [e.key() for e in theirs]
                    elif name == "ents":
                        assert sorted(mine) == sorted(theirs) and all(theirs[i] is not mine[i] for i in mine)
                    else:
                        assert theirs == mine
                        if isinstance(mine, list) and name != "log" or name == "log" and mine:
                            assert theirs is not mine
                key = st.key()
                diverge(st, rng, 30, lambda s: s.key())
                assert st.key() == key


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_the_admin_table_is_rule_8s_rotation(players):
    """The state's next-Admin table is ``rules.next_admin`` of every seat, and a played game follows it."""
    st = CrossroadsState(config(episode__players=players))
    assert st._next_admins == tuple(rules.next_admin(a, players) for a in range(players))
    rng, scene, admin = Rng(players), st.scene_no, st.admin
    while st.current_player() != TERMINAL:
        step(st, rng)
        if st.scene_no == scene + 1 and scene > 0:
            assert st.admin == rules.next_admin(admin, players)
        scene, admin = st.scene_no, st.admin


def test_caps_and_resolution_written_as_comparisons_match_min_max():
    """Rules 6, 11.4/11.5 and 12 with comparisons instead of min()/max()/abs(): the builtins' results everywhere."""
    for value, by, cap in product(range(12), (1, 2), range(1, 11)):
        assert rules.raised_stat(value, by, cap) == min(cap, value + by)
        assert rules.lowered_stat(value, by) == max(0, value - by)
    for a, b, tie_degree in product(range(10), range(10), (0, 1)):
        hi = max(a, b)
        won = (a == hi, b == hi)
        res = rules.resolve((a, b), tie_degree)
        assert res.won == won and res.degree == (tie_degree if a == b else abs(a - b))
        assert res.tie == (a == b)

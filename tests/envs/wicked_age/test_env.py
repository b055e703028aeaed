"""Scenario-level properties: observations in bounds, clone/key, chance outcomes, termination."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason
from envs.wicked_age import RULESET
from envs.wicked_age.actions import NUM_ACTIONS
from tests.envs.wicked_age.helpers import config

LADDER = {12, 10, 8, 6, 4, 0}


def _play(state, rng: Rng, check_chance: bool = False):
    steps = 0
    while state.current_player() != TERMINAL:
        p = state.current_player()
        if p == CHANCE:
            if check_chance:
                outs = state.chance_outcomes()
                assert abs(sum(q for _, q in outs) - 1.0) < 1e-9
                assert state.sample_chance(rng) in {o for o, _ in outs}
            state.apply_chance(state.sample_chance(rng))
            continue
        legal = state.legal_actions()
        assert legal and all(0 <= a < NUM_ACTIONS for a in legal)
        for seat in range(state.num_players):
            obs = state.observation(seat)
            assert obs.dtype == np.float32 and obs.shape == (RULESET.scenario("duel").observation_size,)
            assert obs.min() >= 0.0 and obs.max() <= 1.0
        assert state.option_of(legal[0]) is not None
        state.apply_action(legal[int(rng.random() * len(legal))])
        steps += 1
    return steps


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    scenario=st.sampled_from(["duel", "melee"]),
    build=st.booleans(),
    npc_opp=st.booleans(),
    forms=st.sampled_from([2, 3, 6]),
    parties=st.sampled_from([3, 4]),
)
def test_random_chapters_keep_invariants(seed, scenario, build, npc_opp, forms, parties):
    cfg = config(
        duel={"build_phase": build, "opponent": "npc" if npc_opp else "pc", "forms_available": forms},
        melee={"parties": parties, "forms_available": forms, "build_phase": build},
    )
    state = RULESET.new_game(cfg, scenario)
    before = [sum(c.dice) for c in state.chars]
    _play(state, Rng(seed), check_chance=(seed % 4 == 0))
    out = state.outcome()
    assert out.reason in (EndReason.KNOCKOUT, EndReason.TIME_LIMIT)
    for c in state.chars:
        assert set(c.dice) <= LADDER  # dice only move along the ladder
    if not build:
        assert all(sum(c.dice) <= b for c, b in zip(state.chars, before, strict=True))  # dice never grow
    assert state.owe.count(len(state.chars) - 1) == 0 or not state.chars[-1].npc  # NPCs never owe
    # returns: +1 per opponent put out, -1 when put out
    assert sum(out.returns) == 0.0


def test_clone_and_key_are_faithful():
    cfg = RULESET.default_config()
    state = RULESET.new_game(cfg, "duel")
    rng = Rng(7)
    for _ in range(60):
        if state.current_player() == TERMINAL:
            break
        twin = state.clone()
        assert twin.key() == state.key()
        hash(state.key())
        if state.current_player() == CHANCE:
            o = state.sample_chance(rng)
            state.apply_chance(o)
            twin.apply_chance(o)
        else:
            a = state.legal_actions()[0]
            state.apply_action(a)
            twin.apply_action(a)
        assert twin.key() == state.key()


def _finish(state, rng: Rng) -> list:
    """Play to the end with `rng`, recording each observation; return the trajectory."""
    seen = []
    while state.current_player() != TERMINAL:
        if state.current_player() == CHANCE:
            state.apply_chance(state.sample_chance(rng))
            continue
        seen.append(state.observation(state.current_player()).tobytes())
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.random() * len(legal))])
    return seen


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31), scenario=st.sampled_from(["duel", "melee"]), cut=st.integers(0, 40))
def test_structural_clone_continues_like_a_deep_copy_and_leaves_the_original_alone(seed, scenario, cut):
    import copy

    state = RULESET.new_game(RULESET.default_config(), scenario)
    rng = Rng(seed)
    for _ in range(cut):
        if state.current_player() == TERMINAL:
            break
        if state.current_player() == CHANCE:
            state.apply_chance(state.sample_chance(rng))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.random() * len(legal))])
    key, log = state.key(), [e.text for e in state.log]
    obs = [state.observation(s).tobytes() for s in range(state.num_players)]
    twin, deep = state.clone(), copy.deepcopy(state)
    a, b = _finish(twin, Rng(seed + 1)), _finish(deep, Rng(seed + 1))
    assert a == b
    assert twin.key() == deep.key() and [e.text for e in twin.log] == [e.text for e in deep.log]
    assert twin.returns() == deep.returns()
    # the original is untouched by playing its clone to the end
    assert state.key() == key and [e.text for e in state.log] == log
    assert [state.observation(s).tobytes() for s in range(state.num_players)] == obs


def test_one_conflict_duel_is_possible_and_scored():
    cfg = config(duel={"max_conflicts": 1, "conflict_win_bonus": 1.0})
    state = RULESET.new_game(cfg, "duel")
    _play(state, Rng(3))
    assert state.conflict_no == 1
    assert state.outcome().returns in ((1.0, -1.0), (-1.0, 1.0), (0.0, 0.0))


def test_narration_reads_like_the_seed():
    cfg = config(negotiation={"enabled": False})
    state = RULESET.new_game(cfg, "duel")
    _play(state, Rng(11))
    text = "\n".join(e.text for e in state.log)
    for phrase in ("Round 1.", " rolls ", " stand; ", " challenges with ", " answers: ", " against "):
        assert phrase in text


def test_every_option_group_is_declared_by_its_scenario():
    from envs.core.policy import UniformRandom

    seen: dict[str, set] = {"duel": set(), "melee": set()}
    for scenario, cfg in (
        ("duel", config(duel={"build_phase": True})),
        ("duel", config(duel={"opponent": "npc", "build_phase": True})),
        ("duel", config(negotiation={"enabled": False})),  # random play settles most conflicts by offers
        ("melee", config(melee={"parties": 4})),
    ):
        scen = RULESET.scenario(scenario)
        for seed in range(30):
            state = scen.new_game(cfg)
            rng = Rng(seed)
            pol = UniformRandom()
            while state.current_player() != TERMINAL:
                if state.current_player() == CHANCE:
                    state.apply_chance(state.sample_chance(rng))
                    continue
                for a in state.legal_actions():
                    seen[scenario].add(state.option_of(a))
                mask = np.zeros(NUM_ACTIONS, dtype=bool)
                mask[state.legal_actions()] = True
                state.apply_action(pol.act(state, mask, rng))
        assert seen[scenario] <= set(scen.option_groups), seen[scenario] - set(scen.option_groups)
    for groups in seen.values():
        assert {"cash_owe", "negotiate", "exhaust", "injure", "form_directly"} <= groups
    assert {"use_strength", "avoid_tie", "build_d12_with_violence"} <= seen["duel"]
    assert {"challenge_npc", "challenge_several"} <= seen["melee"]


def test_clone_names_every_container_of_the_state():
    """A new list or set on the state must be named in conflict.CLONE_* (copied, copied deeper, or shared)."""
    from envs.wicked_age.conflict import CLONE_COPIED, CLONE_NESTED, CLONE_SHARED, WickedAgeState

    named = set(CLONE_COPIED) | set(CLONE_NESTED) | set(CLONE_SHARED) | {"exchanged"}
    for scenario, build in (("duel", True), ("melee", True), ("duel", False)):
        state = RULESET.new_game(config(duel={"build_phase": build}), scenario)
        rng = Rng(11)
        for _ in range(80):
            containers = {k for k in WickedAgeState.FIELDS if isinstance(getattr(state, k), list | set | dict)}
            assert containers <= named, containers - named
            twin = state.clone()
            for k in containers - set(CLONE_SHARED):
                mine, theirs = getattr(state, k), getattr(twin, k)
                assert mine == theirs and (mine is not theirs or k == "drafts" and not mine)
                if k in CLONE_NESTED and k != "chars":
                    assert all(x is not y for x, y in zip(mine, theirs, strict=True))
            assert all(c.dice is not d.dice for c, d in zip(state.chars, twin.chars, strict=True))
            if state.current_player() == TERMINAL:
                break
            if state.current_player() == CHANCE:
                state.apply_chance(state.sample_chance(rng))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.random() * len(legal))])


def _play_random(state, rng, steps):
    """Play ``steps`` random steps (or to the end); the trajectory of actions and the states' keys."""
    seen = []
    for _ in range(steps):
        player = state.current_player()
        if player == TERMINAL:
            break
        if player == CHANCE:
            outcome = state.sample_chance(rng)
            state.apply_chance(outcome)
        else:
            outcome = rng.choice(state.legal_actions())
            state.apply_action(outcome)
        seen.append((player, outcome, state.key()))
    return seen


def test_slotted_clone_plays_on_like_its_original():
    """The state lives in __slots__: a mid-game clone plays on exactly as its original, independently of it."""
    from envs.wicked_age.conflict import WickedAgeState

    for scenario, build in (("duel", True), ("melee", True), ("duel", False), ("melee", False)):
        for seed in range(6):
            state = RULESET.new_game(config(duel={"build_phase": build}, melee={"build_phase": build}), scenario)
            _play_random(state, Rng(seed), 25 + seed)
            state.narrating = seed % 2 == 0  # as play_game sets it: a clone keeps it
            twin = state.clone()
            assert not vars(state) and not vars(twin)  # nothing outside the slots
            assert twin.narrating is state.narrating
            assert all(getattr(state, k) == getattr(twin, k) for k in WickedAgeState.FIELDS)
            before = (twin.key(), twin.observation(0).tolist(), [c.dice.copy() for c in twin.chars])
            mine = _play_random(state, Rng(100 + seed), 400)  # the original plays on first: the twin must not see it
            assert (twin.key(), twin.observation(0).tolist(), [c.dice for c in twin.chars]) == before
            theirs = _play_random(twin, Rng(100 + seed), 400)
            assert mine == theirs
            assert state.returns() == twin.returns()
            assert [c.dice for c in state.chars] == [c.dice for c in twin.chars]
            assert state.observation(0).tolist() == twin.observation(0).tolist()
            assert not vars(state) and not vars(twin)


def test_clone_copies_exactly_the_named_containers_and_shares_every_other_slot():
    """The generated slot copy (``conflict._copy_slots``) names every slot: copies where CLONE_* says, else shared."""
    from envs.wicked_age.conflict import CLONE_COPIED, CLONE_NESTED, WickedAgeState

    copied = {*CLONE_COPIED, *CLONE_NESTED, "exchanged"}
    for scenario in ("duel", "melee"):
        state = RULESET.new_game(config(), scenario)
        _play_random(state, Rng(3), 60)
        twin = state.clone()
        assert type(twin) is type(state)
        for k in WickedAgeState.FIELDS:
            mine, theirs = getattr(state, k), getattr(twin, k)
            assert mine == theirs, k
            if k in copied and not (k == "drafts" and not mine):
                assert mine is not theirs, k
            elif k not in copied:
                assert mine is theirs, k

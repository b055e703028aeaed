"""The engine's fast paths against brute-force twins written here (issue 16: speed work changes no result).

Each fast path of the engine (a reading without a sort, ties by counting keys, a roll applied as sampled,
a forms draw found as itself, setups cached by config) is checked against the plain definition of its rule.
"""

from __future__ import annotations

import itertools
import random
from typing import cast

import numpy as np
import pytest

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL
from envs.core.policy import UniformRandom, legal_mask
from envs.wicked_age import RULESET, conflict
from envs.wicked_age import dice as dice_rules
from envs.wicked_age import observation as obs
from envs.wicked_age.actions import DECISION_CONTEXTS, FORM_ACTIONS, MAX_STRENGTHS, NPC_FORM_ACTIONS, Act, Ctx
from envs.wicked_age.config import ResolvedRules
from envs.wicked_age.conflict import PC_FORM_IDS, WickedAgeState, forms_draw
from envs.wicked_age.dice import Roll, RollOutcome, read_roll, roll_with_advantage, size_key
from envs.wicked_age.rules import (
    Offer,
    PcForm,
    Strength,
    answer_order,
    default_consequence_slots,
    dice_compared_for_owing,
    dice_for_roll,
    form_dice,
    form_loss_choices,
    lose_size,
    negotiation_open,
    opening_ties,
    stronger_opponents,
    turn_order,
    usable_strengths,
)
from envs.wicked_age.stages import Stage
from tests.envs.wicked_age.helpers import config, new_game, random_step


def plain_reading(faces: tuple[int, ...], advantage: int) -> tuple[int, ...]:
    """Rule 6 as written: high to low, all advantage on the highest die, padded with 0 to four."""
    s = sorted(faces, reverse=True) or [0]
    s[0] += advantage
    return tuple(s + [0] * (4 - len(s)))


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_reading_matches_rule6_for_every_face_combination(n: int) -> None:
    for faces in itertools.product(range(1, 13), repeat=n) if n < 3 else itertools.product((1, 4, 9, 12), repeat=3):
        for adv in (0, 1, 5, 13):
            assert read_roll(faces, adv) == plain_reading(faces, adv), (faces, adv)
            assert Roll(faces, adv).key == plain_reading(faces, adv)


def test_size_key_largest_first_padded() -> None:
    """Rule 18's key, of tuples (kept in ``_SIZE_KEYS``: asked with the table emptied, then again) and of lists (read
    afresh), against the rule as written."""
    dice_rules._SIZE_KEYS.clear()
    for _ in range(2):
        for sizes in itertools.product((0, 4, 6, 8, 10, 12), repeat=3):
            live = sorted((x for x in sizes if x > 0), reverse=True)
            assert size_key(sizes) == tuple(live + [0] * (4 - len(live))) == size_key(list(sizes))
    assert size_key((12, 10, 8, 6, 4)) == (12, 10, 8, 6, 4)  # five dice: nothing cut, nothing padded


def test_roll_with_advantage_draws_what_the_rng_helpers_draw() -> None:
    for dice in ((), (8,), (12, 10), (12, 10, 8)):
        for k in (0, 1, 3):
            a, b = Rng(7), Rng(7)
            got = roll_with_advantage(a, dice, k, 6)
            assert got == (b.roll_dice(dice), sum(b.roll(k, 6)))
            assert a.random() == b.random()  # the same number of draws


def random_rolls(rnd: random.Random, parties: int, missing: float = 0.0) -> list[Roll | None]:
    """Small rolls (many exact ties), a share ``missing`` of the parties without a roll."""
    return [
        None
        if rnd.random() < missing
        else Roll(tuple(rnd.randint(1, 3) for _ in range(rnd.randint(0, 3))), rnd.randint(0, 1))
        for _ in range(parties)
    ]


def test_opening_ties_match_the_pairwise_definition() -> None:
    rnd = random.Random(3)
    for _ in range(2000):
        n = rnd.randint(2, 5)
        rolls = random_rolls(rnd, n, missing=0.1)
        parties = sorted(rnd.sample(range(n), rnd.randint(2, n)))
        live = [s for s in parties if rolls[s] is not None]
        if not live:
            continue
        pairwise = sorted(s for s in live if any(t != s and rolls[t].key == rolls[s].key for t in live))  # type: ignore[union-attr]
        assert opening_ties(rolls, parties) == pairwise
        top = max(live, key=lambda s: (rolls[s].key, -s))  # type: ignore[union-attr]
        top_tied = [s for s in pairwise if s == top or rolls[s].key == rolls[top].key]  # type: ignore[union-attr]
        expected_top = pairwise if len(parties) <= 2 or not pairwise else (top_tied if len(top_tied) > 1 else [])
        assert opening_ties(rolls, parties, only_top=True) == expected_top


def test_turn_order_is_highest_first_then_seat_order() -> None:
    rnd = random.Random(5)
    for _ in range(500):
        n = rnd.randint(2, 5)
        keys = [r.key if r is not None else None for r in random_rolls(rnd, n)]
        expected = sorted(range(n), key=lambda s: (tuple(-k for k in keys[s] or ()), s))  # the rule as first written
        assert turn_order(keys, list(range(n))) == expected


def test_stronger_opponents_compare_sizes_largest_first() -> None:
    rolled = [(10, 8), (12, 4), (10, 8), (8, 6, 6)]
    assert stronger_opponents(rolled[0], [1, 2, 3], rolled) == [1]  # (10,8) is lesser than (12,4) only


def at_node(node: Ctx, scenario: str = "melee", seed: int = 0) -> WickedAgeState:
    """A game of random play stopped at the first chance node ``node``."""
    cfg = RULESET.default_config()
    sc = RULESET.scenario(scenario)
    state, rng, pol = new_game(scenario, cfg), Rng(seed), UniformRandom()
    while not (state.current_player() == CHANCE and state.node == node):
        assert state.current_player() != TERMINAL
        if state.current_player() == CHANCE:
            state.apply_chance(state.sample_chance(rng))
        else:
            state.apply_action(pol.act(state, legal_mask(state, sc.action_count(cfg)), rng))
    return state


@pytest.mark.parametrize("node", [Ctx.OPENING_ROLL, Ctx.ANSWER_ROLL])
def test_a_sampled_roll_applies_as_an_equal_roll_given_from_outside(node: Ctx) -> None:
    state = at_node(node)
    sampled = state.sample_chance(Rng(11))
    given = state.clone()
    faces, adv = cast(RollOutcome, sampled)
    given.apply_chance(([np.int64(f) for f in faces], np.int64(adv)))  # checked and converted: the slow path
    state.apply_chance(sampled)
    assert state.key() == given.key()
    assert state.rolls == given.rolls and all(type(f) is int for r in state.rolls if r for f in r.faces)


def test_a_bad_roll_is_refused_even_right_after_a_sample() -> None:
    state = at_node(Ctx.OPENING_ROLL)
    faces, adv = cast(RollOutcome, state.sample_chance(Rng(11)))
    assert faces, "a party with dice to roll"
    bad = (tuple(f + 100 for f in faces), adv)  # not the sampled object: checked
    with pytest.raises(ValueError, match="bad faces"):
        state.clone().apply_chance(bad)
    with pytest.raises(ValueError, match="advantage"):
        state.clone().apply_chance((faces, adv + 99))


def test_forms_draws_in_any_shape_are_read_as_the_sorted_draw() -> None:
    state = at_node(Ctx.FORMS_DRAW)
    seat = state.actor
    k = state.forms_available
    draw = tuple(range(k))
    for shape in (draw, list(draw), tuple(reversed(draw)), tuple(np.int64(f) for f in draw)):
        c = state.clone()
        c.apply_chance(shape)  # type: ignore[arg-type]  # a list too
        assert c.available[seat] == draw and all(type(f) is int for f in c.available[seat])
    with pytest.raises(ValueError, match="bad forms draw"):
        state.clone().apply_chance(tuple(range(k + 1)))


@pytest.mark.parametrize("scenario", ["duel", "melee"])
def test_new_games_from_one_config_share_no_mutable_sheet(scenario: str) -> None:
    cfg = RULESET.default_config()
    first = new_game(scenario, cfg)
    for ch in first.chars:
        ch.dice[:] = [4] * len(ch.dice)
    second = new_game(scenario, cfg)
    assert all(a.dice is not b.dice for a, b in zip(first.chars, second.chars, strict=True))
    other = RULESET.default_config()  # an equal config read again: its own setup
    assert other is not cfg
    fresh = new_game(scenario, other)
    assert [c.dice for c in second.chars] == [c.dice for c in fresh.chars]
    assert second.key() == fresh.key()


def plain_observation(state: WickedAgeState, seat: int) -> np.ndarray:
    """The observation's layout (``observation.py``) computed feature by feature, nothing cached."""
    n, v = state.num_players, []
    for k in range(n):
        p = (seat + k) % n
        ch = state.chars[p]
        pending = state.pending_cash[seat] if k == 0 else 0
        sheet = state.sheet_seen_by(p, seat)
        rolled = list(state.roll_dice[p][: obs.ROLLED_DICE_SHOWN])
        r = state.rolls[p]
        v += [1.0, float(state.in_chapter[p]), float(state.in_conflict[p]), float(ch.npc)]
        v += [d / obs.DIE_NORM for d in sheet]
        v += [d / obs.DIE_NORM for d in rolled] + [0.0] * (obs.ROLLED_DICE_SHOWN - len(rolled))
        v += [
            (state.advantage_dice(p) + pending * state.rules.dice_per_entry) / obs.ADVANTAGE_NORM,
            float(state.adv[p][seat]),
            float(state.adv[seat][p]),
            (state.owe.count(p) - pending) / obs.OWE_NORM,
            float(state.challenged[p]),
            float(state.moved[p]),
            0.0 if r is None else r.key[0] / obs.ROLL_NORM,
            0.0 if r is None else r.key[1] / obs.ROLL_NORM,
            float(state.in_turns and state.challenger == p),
        ]
    v += [0.0] * (obs.observation_size(n) - obs.GLOBAL_FEATURES - len(v))
    v += [state.round_no / state.rules.max_rounds, state.conflict_no / state.max_conflicts]
    v += [float(state.node == c) for c in DECISION_CONTEXTS]
    v += [float(f in state.available[seat]) for f in PcForm]
    picks = state.picks[seat]
    v += [float(bool(picks) and picks[0] == f) for f in PcForm]
    cr = state.rolls[state.challenger] if state.in_turns and state.challenger is not None else None
    v += [0.0, 0.0] if cr is None else [cr.key[0] / obs.ROLL_NORM, cr.key[1] / obs.ROLL_NORM]
    v += [float(state.pending_offer_kind() == o) for o in Offer]
    conseq = state.conseq
    v += [0.0, 0.0] if conseq is None else [float(conseq.winner == seat), float(conseq.loser == seat)]
    return np.minimum(np.array(v, dtype=np.float32), np.float32(1.0))


def test_cached_observation_blocks_equal_the_plain_encoding() -> None:
    """The encoder's party and global block caches are keyed on everything the blocks read.

    Random games of several configs at once (round limit, owe dice, kept advantage, more parties) are encoded
    for every seat, with the caches warm and with them emptied, and compared with the plain encoding: a value
    missing from a key would let a block cached for another position (or config) stand in for this one.
    """
    configs = [
        ("duel", RULESET.default_config()),
        ("melee", RULESET.default_config()),
        ("duel", config(contest={"max_rounds": 2}, owe_list={"dice_per_entry": 2})),
        ("melee", config(melee={"parties": 5}, advantage={"keep_when_opponent_out": True})),
    ]
    states = [new_game(sc, cfg) for sc, cfg in configs]
    rngs = [Rng(i) for i in range(len(configs))]
    pol = UniformRandom()
    for step in range(600):
        for i, (sc, cfg) in enumerate(configs):
            state, rng = states[i], rngs[i]
            if state.current_player() == TERMINAL:
                state = states[i] = new_game(sc, cfg)
            for seat in range(state.num_players):
                plain = plain_observation(state, seat).tobytes()
                assert state.observation(seat).tobytes() == plain
                if step % 50 == 0:
                    for cache in obs._CACHES:
                        cache.clear()
                    assert state.observation(seat).tobytes() == plain
            if state.current_player() == CHANCE:
                state.apply_chance(state.sample_chance(rng))
            else:
                state.apply_action(pol.act(state, legal_mask(state, RULESET.scenario(sc).action_count(cfg)), rng))


def plain_player(state: WickedAgeState) -> int:
    """``current_player`` derived from scratch: the end, a chance node or the actor."""
    if state.outcome() is not None:
        return TERMINAL
    return CHANCE if not Ctx(state.node).is_decision else state.actor


def plain_menu(state: WickedAgeState) -> list[int] | None:
    """The memoised legal lists (build, picks, strength, offer target, negotiated loss) written out from their rules;
    else None."""
    s, ch = state.actor, state.chars[state.actor]
    if state.node == Ctx.BUILD:
        acts = NPC_FORM_ACTIONS if ch.npc else FORM_ACTIONS
        return [a for i, a in enumerate(acts) if not state.build_filled[i]]
    if state.node == Ctx.PICK_FORM:
        return list(NPC_FORM_ACTIONS) if ch.npc else [FORM_ACTIONS[f] for f in state.available[s]]
    if state.node == Ctx.PICK_SECOND_FORM:
        return [FORM_ACTIONS[f] for f in state.available[s] if f != state.picks[s][0]]
    if state.node == Ctx.PICK_STRENGTH:
        names = ch.form_names()
        usable = usable_strengths(ch.strengths, [names[f] for f in state.picks[s]], MAX_STRENGTHS)
        return [int(Act.STRENGTH_0) + i for i in usable] + [int(Act.NO_STRENGTH)]
    if state.node == Ctx.OFFER_TARGET:
        return [int(Act.TARGET_0) + t for t in range(state.num_players) if t != s and state.in_conflict[t]]
    if state.node == Ctx.OFFER_FORM:
        assert state.conseq is not None
        loser_dice = state.chars[state.conseq.loser].dice
        return [FORM_ACTIONS[i] for i in range(len(loser_dice)) if loser_dice[i] > 0]
    return None


def check_fast_state(state: WickedAgeState) -> None:
    """The kept player, the cached legal list and the dirty-tracked observation blocks against plain twins."""
    assert state.current_player() == plain_player(state)
    legal = state.legal_actions()
    menu = plain_menu(state)
    if menu is not None:
        assert legal == menu
    if state.current_player() >= 0:
        assert legal == list(state._legal_here())  # the ids kept where the machine stopped are the ones found now
        assert state.legal_tuple() == tuple(legal) and all(type(a) is int for a in legal)  # plain ints
        legal.append(-1)  # the caller's copy: changing it changes nothing in the state
        assert -1 not in state.legal_actions()
    else:
        assert legal == []
    if state.node in (Ctx.OPENING_ROLL, Ctx.MOVER_ROLL, Ctx.ANSWER_ROLL):
        twin = state.clone()
        seed = len(state.log) + state.round_no + 1000 * state.conflict_no
        faces, adv = twin.sample_chance(Rng(seed))
        k = state.advantage_dice(state.actor)  # the advantage dice the sampled roll rolled (inlined shortcut)
        assert twin._sampled_adv == k and k <= adv <= 6 * k and len(faces) == len(state.roll_dice[state.actor])
        # the draws of the plain roll (the inlined two-dice roll without advantage dice too)
        assert (faces, adv) == roll_with_advantage(Rng(seed), state.roll_dice[state.actor], k, 6)
    parties = [s for s in range(state.num_players) if state.in_conflict[s]]
    assert list(state._parties()) == parties  # the kept party sets follow ``in_conflict``
    for s in range(state.num_players):
        assert list(state._opponents(s)) == [t for t in parties if t != s]
    # the kept party sets are the entries of the flags as they are now (found by the flags: no stale entry kept)
    assert state._sets is conflict._party_sets(tuple(state.in_conflict))
    assert state._chapter_sets is conflict._party_sets(tuple(state.in_chapter))
    for cursor in range(state.num_players + 1):  # the next party in the conflict from each cursor (n: none)
        assert state._next_in[cursor] == min([t for t in parties if t >= cursor], default=state.num_players)
    check_stage_cursors(state)
    # seat 0 first and last: its kept rows carry over to the next node (as an env's seat's do), the others' not
    for seat in (*range(state.num_players), 0):
        assert state.observation(seat).tobytes() == plain_observation(state, seat).tobytes()


CURSORS = ("idx", "pick_step", "turn_step", "tie_idx", "open_step", "tie_step")
STAGE_CURSORS: dict[Stage, tuple[str, ...]] = {
    Stage.BUILD: ("idx",),
    Stage.DRAW: ("idx",),
    Stage.PICK: ("idx", "pick_step"),
    Stage.WINDOW: ("idx",),
    Stage.OPEN: ("idx", "open_step"),
    Stage.TIE: ("tie_idx", "tie_step"),
    Stage.TURN: ("idx", "turn_step"),
    Stage.SETTLE: (),
}
"""The cursors each stage moves: every other cursor is at its start (0) while the chapter is in that stage."""


def check_stage_cursors(state: WickedAgeState) -> None:
    """The machine enters a stage with every cursor at its start (``_enter``); where it enters one without resetting
    every cursor, the cursors it leaves alone are those no stage before it moved: each stage's other cursors are 0."""
    if state.current_player() == TERMINAL:
        return
    moved = STAGE_CURSORS[state.stage]
    assert {c: getattr(state, c) for c in CURSORS if c not in moved} == {c: 0 for c in CURSORS if c not in moved}
    if state.stage in (Stage.DRAW, Stage.PICK, Stage.WINDOW) and state.conseq is None and state.offer is None:
        assert state.idx == state.actor  # the stage's cursor is the seat it stopped for (it started at seat 0)
    if state.stage not in (Stage.BUILD, Stage.DRAW, Stage.PICK):  # the picks are done: every party in picked
        assert all(state.picks[s] for s in state._parties())


@pytest.mark.parametrize(
    ("scenario", "sections"),
    [
        ("duel", {}),
        ("melee", {}),
        ("duel", {"duel": {"build_phase": True, "opponent": "npc"}}),
        ("melee", {"melee": {"parties": 5, "build_phase": True}, "owe_list": {"dice_per_entry": 2}}),
        # one advantage per conflict, lost when the opponent is out: an advantage or a party leaving drops every row
        ("melee", {"advantage": {"tracking": "single", "keep_when_opponent_out": False}}),
    ],
)
def test_kept_player_menus_and_public_blocks_match_plain_after_clone_and_diverge(scenario: str, sections: dict) -> None:
    """Seeded random walks: at every node the kept ``_player``, the shared legal menus and the observation built from
    the kept rows and blocks (``_rows``, ``_forms``, ``_progress``: dropped where their values change) equal their
    from-scratch twins, for every seat (so rows kept for one observer are dropped for the next); clones taken along
    the way diverge (other dice, other choices) and are checked the same way, and the original is unchanged by its
    clones' moves."""
    cfg = config(**sections)
    actions = RULESET.scenario(scenario).action_count(cfg)
    state, rng = new_game(scenario, cfg), Rng(5)
    for step in range(1500):
        if state.current_player() == TERMINAL:
            state = new_game(scenario, cfg)
        check_fast_state(state)
        if step % 37 == 0:
            before = state.key(), [state.observation(s).tobytes() for s in range(state.num_players)]
            twin, twin_rng = state.clone(), Rng(1000 + step)
            for _ in range(25):
                if twin.current_player() == TERMINAL:
                    break
                random_step(twin, twin_rng, actions)
                check_fast_state(twin)
            assert (state.key(), [state.observation(s).tobytes() for s in range(state.num_players)]) == before
        random_step(state, rng, actions)


@pytest.mark.parametrize("available", range(len(PC_FORM_IDS) + 1))
def test_forms_draw_is_the_sorted_head_of_a_shuffle_with_its_draws(available: int) -> None:
    """Rule 4's draw from its table: the first forms of ``rng.shuffle`` of the six, sorted, with the same draws."""
    for seed in range(300):
        fast, plain = Rng(seed), Rng(seed)
        for _ in range(4):
            forms = list(PC_FORM_IDS)
            plain.shuffle(forms)
            assert forms_draw(fast, available) == tuple(sorted(forms[:available])), (seed, available)
        assert fast.random() == plain.random()  # the generator is where the shuffles left it


def test_forms_draw_of_another_rng_kind_shuffles_as_it_would() -> None:
    class Reversing(Rng):
        def shuffle(self, items: list) -> None:
            items.reverse()

    assert forms_draw(Reversing(0), 3) == (3, 4, 5)


def test_dice_for_roll_is_each_picked_forms_dice_then_the_strength() -> None:
    """Rule 4's roll (one comprehension over the picks) against ``form_dice`` of each pick, concatenated."""
    rnd = random.Random(11)
    strength = Strength("with_violence:potent", "with_violence", 10, False, None)
    for _ in range(3000):
        npc = rnd.random() < 0.5
        dice = [rnd.choice((0, 4, 6, 8, 10, 12)) for _ in range(6)]
        forms = 3 if npc else 6
        picks = rnd.sample(range(forms), 1 if npc else 2)
        st = strength if rnd.random() < 0.3 else None
        plain = [d for f in picks for d in form_dice(dice, npc, f)] + ([st.die] if st is not None else [])
        assert dice_for_roll(dice, npc, picks, st) == tuple(plain)
        assert any(dice) == bool(form_loss_choices(dice))  # the consequence step's check for a size to lose


@pytest.mark.parametrize(
    ("scenario", "sections"),
    [
        ("duel", {}),
        ("melee", {}),
        ("melee", {"melee": {"parties": 5}, "owe_list": {"dice_per_entry": 2}}),
        ("melee", {"advantage": {"tracking": "single", "keep_when_opponent_out": False}}),
    ],
)
@pytest.mark.parametrize("seat", [0, 1])
def test_kept_rows_of_a_seat_observing_only_at_its_own_decisions_match_plain(
    scenario: str, sections: dict, seat: int
) -> None:
    """The env's pattern: one seat observes only where it decides (as ``GameEnv.step`` does), so the kept rows see
    many changes between two observations (whole conflicts, other seats' turns) and must have been dropped for each;
    every such observation equals the plain encoding. (The walks of the test above observe every seat at every node,
    so there a row is dropped at most one node before it is read.)"""
    cfg = config(**sections)
    actions = RULESET.scenario(scenario).action_count(cfg)
    state, rng, observed = new_game(scenario, cfg), Rng(17 + seat), 0
    for _ in range(4000):
        if state.current_player() == TERMINAL:
            state = new_game(scenario, cfg)
        if state.current_player() == seat:
            assert state.observation(seat).tobytes() == plain_observation(state, seat).tobytes()
            observed += 1
        random_step(state, rng, actions)
    assert observed > 500


@pytest.mark.parametrize(
    "negotiation",
    [
        {},
        {"enabled": False},
        {"offers": []},
        {"before_rolls": False},
        {"between_rounds": False},
        {"before_rolls": False, "between_rounds": False},
    ],
)
def test_kept_round_stages_open_the_window_where_negotiation_is_open(negotiation: dict) -> None:
    """Rule 17: the stage each round starts in, kept per config, against ``negotiation_open`` for rounds 1-4; and a
    game's rounds start there (random play, the stage read right after each round's start)."""
    cfg = config(negotiation=negotiation)
    r = ResolvedRules.from_config(cfg)
    state = new_game("melee", cfg)
    for round_no in range(1, 5):
        is_open = negotiation_open(
            r.negotiation_enabled, r.offers, round_no, r.offers_before_rolls, r.offers_between_rounds
        )
        assert state._round_stages[round_no == 1] is (Stage.WINDOW if is_open else Stage.OPEN)
    starts, rng = 0, Rng(3)
    start_round = WickedAgeState._start_round

    def checked(st: WickedAgeState) -> bool | None:
        nonlocal starts
        landed = start_round(st)  # the window's first party (``_LANDED``), or False: the machine runs on
        is_open = negotiation_open(
            r.negotiation_enabled, r.offers, st.round_no, r.offers_before_rolls, r.offers_between_rounds
        )
        assert st.stage is (Stage.WINDOW if is_open else Stage.OPEN)
        starts += 1
        return landed

    actions = RULESET.scenario("melee").action_count(cfg)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(WickedAgeState, "_start_round", checked)
        for _ in range(3000):
            if state.current_player() == TERMINAL:
                state = new_game("melee", cfg)
            random_step(state, rng, actions)
    assert starts > 50


@pytest.mark.parametrize("scenario", ["duel", "melee"])
def test_rolls_read_from_the_kept_readings_equal_fresh_readings(scenario: str) -> None:
    """Rule 6: each roll applied (sampled or given from outside) is read from the shared readings by its outcome;
    the reading the machine goes on with equals a fresh ``Roll`` of the outcome, field by field and key, with the
    table warm and emptied."""
    cfg = RULESET.default_config()
    actions = RULESET.scenario(scenario).action_count(cfg)
    state, rng = new_game(scenario, cfg), Rng(23)
    read: list[Roll] = []

    class Recorded(list):  # the state's rolls, recording the reading stored (the machine goes on with it)
        def __setitem__(self, i, roll):  # type: ignore[no-untyped-def]
            read.append(roll)
            super().__setitem__(i, roll)

    rolls = 0
    for step in range(4000):
        if state.current_player() == TERMINAL:
            state = new_game(scenario, cfg)
        if state.current_player() == CHANCE and state.node in (Ctx.OPENING_ROLL, Ctx.MOVER_ROLL, Ctx.ANSWER_ROLL):
            faces, adv = cast(RollOutcome, state.sample_chance(rng))
            if step % 3 == 0:
                state._sampled = None  # as if given from outside: checked, then read
            if step % 500 == 0:
                conflict._ROLLS.clear()
            read.clear()
            state.rolls = Recorded(state.rolls)
            state.apply_chance((faces, adv))
            fresh = Roll(faces, adv)
            assert read == [fresh] and read[0].key == fresh.key and read[0].faces == faces
            rolls += 1
            continue
        random_step(state, rng, actions)
    assert rolls > 300


@pytest.mark.parametrize("scenario", ["duel", "melee"])
def test_an_offer_is_made_announced_once_its_addressee_is_known(scenario: str) -> None:
    """Rule 17: an offer before a roll is made announced where its addressee becomes known (not made and then remade
    announced by the offer step): at every stop a pending offer is announced exactly when it has an addressee, and
    each offer that reaches its answer was narrated once, before the answer, naming proposer and addressee."""
    cfg = RULESET.default_config()
    actions = RULESET.scenario(scenario).action_count(cfg)
    state, rng, answered = new_game(scenario, cfg), Rng(31), 0
    for _ in range(4000):
        if state.current_player() == TERMINAL:
            state = new_game(scenario, cfg)
        offer = state.offer
        if offer is not None:
            assert offer.announced is (offer.target is not None)
            if state.node == Ctx.OFFER_RESPONSE:
                assert state.actor == offer.target
                said = [e for e in state.log if e.kind == "offer"]
                names = state.names
                assert said and said[-1].seat == offer.proposer
                assert said[-1].text.startswith(f"{names[offer.proposer]} offers {names[offer.target]}: ")
                answered += 1
            else:
                assert state.node == Ctx.OFFER_TARGET and offer.target is None and state.actor == offer.proposer
        random_step(state, rng, actions)
    assert answered > 100


def test_owe_check_reads_the_rolled_dice_as_the_lesser_dice_test_sees_them() -> None:
    """Rule 18: without advantage dice counted (the default) the owe-list check reads each party's rolled dice as they
    are (``roll_dice``), which is what ``dice_compared_for_owing`` makes of them."""
    rnd = random.Random(13)
    for _ in range(2000):
        dice = tuple(rnd.choice((4, 6, 8, 10, 12)) for _ in range(rnd.randint(0, 3)))
        assert dice_compared_for_owing(dice, rnd.randint(0, 3), 6, False) == dice


def test_answer_order_is_the_named_answerers_in_turn_order() -> None:
    """Rule 10 (one answerer without a comprehension) against the rule as written, for every order and naming."""
    for n in range(2, 6):
        for order in itertools.permutations(range(n)):
            for k in range(1, n + 1):
                for named in itertools.combinations(range(n + 1), k):  # seat n: a seat not in the order
                    assert answer_order(list(order), list(named)) == [t for t in order if t in named]


def test_negotiated_loss_menu_is_the_live_dice_of_the_sheet() -> None:
    """Rule 17: the loss menu kept by which dice are live equals the forms (NPC: dice) with a size to lose, for every
    sheet of some sizes (menus kept for other sheets with the same live dice are the ones handed out)."""
    state = new_game("melee", RULESET.default_config())
    for sizes in ((0, 4, 12), (0, 6, 10)):
        for sheet in itertools.product(sizes, repeat=len(state.chars[0].dice)):
            state.chars[0].dice = list(sheet)
            assert state._form_loss_actions(0) == tuple(FORM_ACTIONS[i] for i, d in enumerate(sheet) if d > 0)


@pytest.mark.parametrize(
    "sections",
    [
        {},
        {"consequences": {"min_die_hit": 8}},
        {"forms": {"ladder": [20, 12, 8, 6]}, "consequences": {"min_die_hit": 7}},
    ],
)
def test_a_lost_size_read_from_the_table_is_rule_3(sections: dict) -> None:
    """Rule 3 as written (``lose_size`` with the config's ladder and shield) for every size the table holds and for
    sizes beyond it (read by the rule itself)."""
    cfg = config(**sections)
    state = new_game("melee", cfg)
    for size in range(0, 40):
        state.chars[0].dice[0] = size
        state._rows[0] = b""
        state._lose_size(0, 0)
        assert state.chars[0].dice[0] == lose_size(size, cfg.forms.ladder, cfg.consequences.min_die_hit)
        assert state._rows[0] is None  # the sheet changed: its kept row is dropped


@pytest.mark.parametrize(
    "sections",
    [
        {},
        {"consequences": {"exhausted_forms": ["with_love"], "injured_forms": ["for_myself", "covertly", "directly"]}},
        {"consequences": {"npc_exhausted_form": "self_protection", "npc_injured_form": "action"}},
    ],
)
def test_default_consequence_read_from_the_table_hits_rule_15s_slots(sections: dict) -> None:
    """Rule 15 as written (``default_consequence_slots`` of the config): the slots the table of the config's setup
    makes the default consequence hit, for a PC and an NPC loser, exhausted and injured."""
    cfg = config(**sections)
    for npc_loser in (False, True):
        for exhausted in (False, True):
            state = new_game("melee", cfg)
            loser = next(s for s, ch in enumerate(state.chars) if ch.npc == npc_loser)
            before = [12, 10, 8, 6, 6, 4]
            state.chars[loser].dice = list(before)
            state.conseq = conflict._new_decided(((loser + 1) % state.num_players, loser))
            state._apply_default_consequence(exhausted)
            hit = default_consequence_slots(npc_loser, exhausted, cfg.consequences)
            expected = [
                lose_size(d, cfg.forms.ladder, cfg.consequences.min_die_hit) if i in hit else d
                for i, d in enumerate(before)
            ]
            assert state.chars[loser].dice == expected

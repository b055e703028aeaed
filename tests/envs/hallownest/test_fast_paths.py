"""Issue 16: the duel's fast paths against brute-force twins (settings resolved once, arena tables, clone)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import pytest

from envs.core.dice import Rng
from envs.hallownest.actions import ACTIONS, DIRECTIONS, Direction, Kind, Phase, action_id
from envs.hallownest.config import DuelSettings, HallownestConfig
from envs.hallownest.duel import DuelState
from tests.envs.hallownest.helpers import config


def test_settings_mirror_every_key_they_hold() -> None:
    cfg = config(stamina={"tax_per_attack": 2}, deaths_door={"enabled": False}, damage={"extra_cap": "base"})
    k = DuelSettings.of(cfg)
    assert (k.stamina_tax_per_attack, k.deaths_door_enabled, k.damage_extra_cap) == (2, False, "base")
    for name in DuelSettings.__dataclass_fields__:
        section = next(s for s in HallownestConfig.model_fields if name.startswith(s + "_"))
        assert getattr(k, name) == getattr(getattr(cfg, section), name[len(section) + 1 :]), name


Hook = Callable[[DuelState], object]


def _walk(st: DuelState, rng: Rng, steps: int, seek: tuple[Kind, ...], bias: float, before: Hook, after: Hook) -> None:
    """Up to ``steps`` transitions of a random duel: chance from ``rng``, else a legal action, one of the kinds
    ``seek`` with probability ``bias`` when one is offered (rare moves sought out); ``before(st)`` runs before each
    transition (and at the end), ``after(st)`` after it."""
    for _ in range(steps):
        before(st)
        if st.is_terminal():
            return
        if st.is_chance():
            st.apply_chance(st.sample_chance(rng))
        else:
            legal = st.legal_actions()
            rare = [a for a in legal if ACTIONS[a].kind in seek]
            pick = rare if rare and rng.random() < bias else legal
            st.apply_action(pick[int(rng.random() * len(pick))])
        after(st)


def _walks_with_twins(
    cfg: HallownestConfig,
    seeds: Iterable[int],
    twin_seed: int,
    opening: int,
    seek: tuple[Kind, ...],
    bias: float,
    before: Hook = lambda st: None,
    after: Hook = lambda st: None,
) -> None:
    """For each seed a duel walked ``opening`` transitions (:func:`_walk`), then a clone of it walked on with its own
    rng (seed + ``twin_seed``) and the original walked on, 400 transitions each: kept values must hold in clones
    that go their own way too."""
    for seed in seeds:
        st, rng = DuelState(cfg), Rng(seed)
        _walk(st, rng, opening, seek, bias, before, after)
        twin = st.clone()
        _walk(twin, Rng(seed + twin_seed), 400, seek, bias, before, after)
        _walk(st, rng, 400, seek, bias, before, after)


def _random_decisions(cfg: HallownestConfig, seeds: Iterable[int]) -> Iterator[tuple[DuelState, list[int]]]:
    """Every decision of seeded random duels, as (state, its legal list); after each the walk plays a random legal
    action (chance is played from the same rng)."""
    for seed in seeds:
        st = DuelState(cfg)
        rng = Rng(seed)
        while not st.is_terminal():
            if st.is_chance():
                st.apply_chance(st.sample_chance(rng))
                continue
            legal = st.legal_actions()
            yield st, legal
            st.apply_action(legal[int(rng.random() * len(legal))])


def _brute_moves(st: DuelState) -> list[int]:
    """Step, dash and retreat ids of the active bug, straight from the geometry of Rule 15."""
    me = st.bugs[st.active]
    held = {(b.x, b.y) for b in st.bugs if not b.dead}
    n_dirs = 2 if st.track else 8

    def inside(x: int, y: int) -> bool:
        return 0 <= x < st.width and 0 <= y < st.height

    def free(x: int, y: int) -> bool:
        return inside(x, y) and (x, y) not in held

    out: list[int] = []
    if me.grappled:
        return out
    dirs = [Direction(d) for d in range(n_dirs)]
    open_dirs = [d for d in dirs if free(me.x + DIRECTIONS[d][0], me.y + DIRECTIONS[d][1])]
    if me.speed_left > 0 or me.free_move > 0:
        out += [action_id(Kind.STEP, 0, d) for d in open_dirs]
    n = st.k.movement_dash_cells
    if me.stamina >= st.k.movement_dash_cost:
        for d in dirs:
            dx, dy = DIRECTIONS[d]
            line_inside = all(inside(me.x + dx * i, me.y + dy * i) for i in range(1, n))
            if line_inside and free(me.x + dx * n, me.y + dy * n):
                out.append(action_id(Kind.DASH, 0, d))
    if me.stamina >= st.k.movement_retreat_cost and me.speed_left > 0:
        out += [action_id(Kind.RETREAT, 0, d) for d in open_dirs]
    return out


MOVE_KINDS = (Kind.STEP, Kind.DASH, Kind.RETREAT)


@pytest.mark.parametrize(
    "arena",
    [
        {},
        {"kind": "grid", "start": [[0, 0], [2, 1]]},
        {"kind": "grid", "width": 4, "height": 3, "start": [[0, 2], [3, 0]]},
    ],
)
def test_legal_moves_agree_with_brute_force_geometry(arena: dict[str, object]) -> None:
    from envs.hallownest.actions import ACTIONS

    checked = 0
    for st, legal in _random_decisions(config(arena=arena), range(40)):
        if st.phase == Phase.TURN:
            assert [a for a in legal if ACTIONS[a].kind in MOVE_KINDS] == _brute_moves(st)
            checked += 1
    assert checked > 500


def test_a_clone_is_independent_of_its_original() -> None:
    st = DuelState(config())
    rng = Rng(5)
    for _ in range(40):
        if st.is_chance():
            st.apply_chance(st.sample_chance(rng))
        else:
            legal = st.legal_actions()
            st.apply_action(legal[int(rng.random() * len(legal))])
    key, log, obs = st.key(), list(st.log), st.observation(0)
    twin = st.clone()
    for _ in range(40):
        if twin.is_terminal():
            break
        if twin.is_chance():
            twin.apply_chance(twin.sample_chance(rng))
        else:
            twin.apply_action(twin.legal_actions()[0])
    assert st.key() == key and st.log == log and (st.observation(0) == obs).all()


@pytest.mark.parametrize(
    "sections",
    [
        {},
        {
            "arena": {
                "kind": "grid",
                "width": 5,
                "height": 5,
                "start": [[0, 0], [4, 4]],
                "cover": [[2, 2, 2], [1, 3, 4]],
            }
        },
        {"stamina": {"tax_per_attack": 0}, "pogo": {"needs_pass_over": False}},
        {"unconscious": {"targetable": True}, "deaths_door": {"enabled": False}},
        {  # a thrown weapon (reach beyond adjacent), the whole table (further rows, sorted), a grid
            "arena": {"kind": "grid", "width": 4, "height": 4, "start": [[0, 0], [3, 3]]},
            "dice": {"max_characteristic": 10},
            "grapple": {"max_investment": 6, "max_escape_investment": 5},
            "pogo": {"max_investment": 5},
            "duel": {
                "bugs": [
                    {"name": "A", "weapon": "tack", "stamina": 10, "soul": 9},
                    {"name": "B", "weapon": "nail", "stamina": 9, "soul": 10},
                ]
            },
        },
    ],
)
def test_one_pass_turn_options_agree_with_the_direct_rules(sections: dict[str, object]) -> None:
    """The turn options worked out in one pass (_turn_legal, from the config's id rows and the place's joined move
    row) and the defense options memoised per config equal the plain _legal_turn / _legal_defense; no bug is dead in
    a turn (the one pass leaves the dead bugs' part of the rules out)."""
    cfg = config(**sections)
    checked = defenses = 0
    for st, legal in _random_decisions(cfg, range(100, 140)):
        if st.phase == Phase.TURN:
            assert not any(b.dead for b in st.bugs)
            assert legal == st._legal_turn() == st._turn_legal()
            checked += 1
        elif st.phase == Phase.DEFENSE:
            assert legal == st._legal_defense()
            defenses += 1
    assert checked > 500 and defenses > 10


def _brute_observation(st: DuelState, seat: int) -> list[float]:
    """The rules card's 80 features (observation.py), one plain float at a time, clipped to [-1, 1]."""
    from envs.hallownest import observation as O

    def bug(s: int) -> list[float]:
        p = st.bugs[s].p
        w = p.weapon
        x = st.bugs[s]
        cover = st.cover.get((x.x, x.y), 0) / 4 if st.cover else 0.0
        pogo = not w.ranged and (x.over_target if st.k.pogo_needs_pass_over else x.jumped)
        return [
            x.heart / max(1, p.heart), p.heart / 20, x.stamina / 7, p.stamina / 7,
            x.imbalance / max(1, st.k.imbalance_max), x.soul / 7, x.focus_pending / 7,
            float(x.at_dd), float(x.unconscious), float(x.dd_used), x.delayed / 10, x.status / 10,
            x.next_roll_penalty / 3, float(x.grappled_by >= 0), float(x.grappling >= 0),
            p.might / 7, p.grace / 7, p.shell / 7, w.damage / 5, w.weight / 3, float(w.ranged), w.rerolls / 2,
            x.attacks_made / 4, x.speed_left / 10, float(pogo), x.free_move / 4,
            x.x / max(1, st.width - 1), x.y / max(1, st.height - 1), cover, float(st.order[0] == s),
        ]  # fmt: skip

    me, foe = st.bugs[seat], st.bugs[1 - seat]
    span = max(1, st.width - 1, st.height - 1)
    out = bug(seat) + bug(1 - seat)
    out += [(foe.x - me.x) / span, (foe.y - me.y) / span, max(abs(foe.x - me.x), abs(foe.y - me.y)) / span]
    out += [st.round / max(1, st.k.duel_max_rounds), float(st.active == seat)]
    out += [float(st.phase == c) for c in O.CONTEXTS]
    a = st.atk
    if a is None:
        out += [0.0] * 9
    else:
        aw = st.bugs[a.attacker].p.weapon
        out += [a.att_succ / 10, a.invested / 7, a.dice / 14, aw.weight / 3, float(aw.ranged)]
        out += [float(a.kind == O.POGO), float(a.kind == O.GRAPPLE), float(a.attacker == seat), float(a.att_rolled)]
    return [min(1.0, max(-1.0, v)) for v in out]


@pytest.mark.parametrize(
    "sections",
    [
        {},
        {
            "arena": {
                "kind": "grid",
                "width": 5,
                "height": 5,
                "start": [[1, 2], [3, 2]],
                "cover": [[2, 1, 2], [3, 2, 1]],
            }
        },
        {
            "dice": {"max_characteristic": 10},
            "duel": {
                "bugs": [
                    {"name": "A", "weapon": "infected_nail", "stamina": 10, "soul": 10, "heart": 30},
                    {"name": "B", "weapon": "venom_pin", "template": "small", "shield_quality": 1, "stamina": 9},
                ]
            },
        },
        {  # a Fang's next-roll penalty, grapples, a grid whose relative positions run negative both ways
            "arena": {"kind": "grid", "width": 4, "height": 4, "start": [[3, 3], [0, 0]], "cover": [[1, 1, 1]]},
            "duel": {"bugs": [{"name": "A", "weapon": "fang", "appendages": 2}, {"name": "B", "weapon": "pin"}]},
        },
    ],
)
@pytest.mark.parametrize("limit", [1 << 14, 7])
def test_packed_observation_matches_the_plain_features(
    sections: dict[str, object], limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The encoder's pieces, found by one subscript per field in their trees and packed as float32 (observation.py),
    against the features built and clipped one by one; also with trees that start afresh every few pieces."""
    import numpy as np

    from envs.hallownest import observation

    monkeypatch.setattr(observation, "BLOCK_CACHE_LIMIT", limit)
    for seed in range(6):
        st = DuelState(config(**sections))
        st.obs_encoder = observation.Encoder(st.obs_encoder.fixed)  # trees of this test only
        rng = Rng(seed)
        for _ in range(400):
            if st.is_terminal():
                break
            for seat in (0, 1):
                got = st.observation(seat)
                want = np.array(_brute_observation(st, seat), dtype=np.float32)
                assert got.dtype == np.float32 and got.flags.writeable
                assert np.array_equal(got, want), (seat, np.flatnonzero(got != want))
            if st.is_chance():
                st.apply_chance(st.sample_chance(rng))
            else:
                legal = st.legal_actions()
                st.apply_action(legal[int(rng.random() * len(legal))])


def _faces_successes(rng: Rng, dice: int, rerolls: int, success_on: int) -> int:
    """Rules 1-2 the plain way: a face per die, then a face per rerolled failure."""
    succ = sum(1 for f in rng.roll(dice, 6) if f >= success_on)
    return succ + sum(1 for f in rng.roll(min(rerolls, dice - succ), 6) if f >= success_on)


@pytest.mark.parametrize("success_on", range(-1, 9))
def test_threshold_sampler_counts_the_faces_successes(success_on: int) -> None:
    """sample_successes (draws against a threshold) gives the faces' count from the same draws, and leaves the
    rng where the faces leave it; at and around the threshold a draw succeeds exactly when its face does."""
    import math

    from envs.hallownest.dice import sample_successes, success_threshold

    for seed in range(30):
        for dice in range(9):
            for rerolls in range(4):
                fast, plain = Rng(seed), Rng(seed)
                assert sample_successes(fast, dice, rerolls, success_on) == _faces_successes(
                    plain, dice, rerolls, success_on
                )
                assert fast.random() == plain.random()
    t = success_threshold(success_on)
    probes = [0.0, math.nextafter(1.0, 0.0), (success_on - 1) / 6]
    if math.isfinite(t):
        probes += [t, math.nextafter(t, 0.0), math.nextafter(t, 1.0)]
    for u in probes:
        if 0.0 <= u < 1.0:
            assert (u >= t) == (int(u * 6) + 1 >= success_on), u


def test_sample_initiative_sums_what_initiative_total_sums() -> None:
    """Rule 9's sampler against initiative_total over the same faces (the rng left in the same place)."""
    from envs.hallownest.dice import initiative_total, sample_initiative

    for seed in range(200):
        for dice in range(6):
            for rerolls in range(4):
                fast, plain = Rng(seed), Rng(seed)
                faces = plain.roll(dice, 6)
                k = min(rerolls, dice)
                assert sample_initiative(fast, dice, rerolls) == initiative_total(faces, k, plain.roll(k, 6))
                assert fast.random() == plain.random()


def test_every_chance_phase_has_its_outcome_step() -> None:
    from envs.hallownest.actions import CHANCE_PHASES
    from envs.hallownest.duel import _CHANCE_STEPS

    assert set(_CHANCE_STEPS) == CHANCE_PHASES


def test_copies_assign_every_slot() -> None:
    """Bug.copy and Attack.copy list their slots by hand: each slot of a copy is the original's."""
    from envs.hallownest.duel import Attack, Bug
    from envs.hallownest.rules import AttackKind

    st = DuelState(config())
    originals = (st.bugs[0], Attack(AttackKind.WEAPON, 0, 1, 2))
    for original in originals:
        names = type(original).FIELDS
        assert set(names) == set(type(original).__slots__)
        for i, name in enumerate(names):
            setattr(original, name, object() if i else getattr(original, name))
        twin = original.copy()
        assert all(getattr(twin, n) is getattr(original, n) for n in names)
    assert isinstance(originals[0], Bug)


@pytest.mark.parametrize(
    "sections",
    [{}, {"arena": {"kind": "grid", "width": 4, "height": 3, "start": [[0, 2], [3, 0]], "cover": [[1, 1, 2]]}}],
)
def test_new_duel_state_plays_as_a_newly_built_duel(sections: dict[str, object]) -> None:
    """The cloned fresh duel (new_duel_state) against DuelState(cfg): same key, log, observations, games;
    playing one never changes the next one handed out."""
    import numpy as np

    from envs.hallownest.duel import new_duel_state

    cfg = config(**sections)
    for seed in range(20):
        fast, plain = new_duel_state(cfg), DuelState(cfg)
        rng_f, rng_p = Rng(seed), Rng(seed)
        while True:
            assert fast.key() == plain.key() and fast.log == plain.log
            assert np.array_equal(fast.observation(seed % 2), plain.observation(seed % 2))
            if plain.is_terminal():
                break
            if plain.is_chance():
                fast.apply_chance(fast.sample_chance(rng_f))
                plain.apply_chance(plain.sample_chance(rng_p))
            else:
                assert fast.legal_actions() == plain.legal_actions()
                legal = plain.legal_actions()
                a = legal[int(rng_p.random() * len(legal))]
                assert legal[int(rng_f.random() * len(legal))] == a
                fast.apply_action(a)
                plain.apply_action(a)
        assert fast.returns() == plain.returns()
        assert new_duel_state(cfg).key() == DuelState(cfg).key()


def test_the_place_table_holds_what_the_cells_give() -> None:
    """TurnRows.places (nested lists by seat and both cells, filled when a pair is first met) holds, for every pair
    met, what TurnRows.place works out afresh; and every turn's options still equal the plain _legal_turn."""
    from envs.hallownest.duel import TurnRows

    cfg = config(arena={"kind": "grid", "width": 4, "height": 3, "start": [[0, 2], [3, 0]], "cover": [[2, 1, 4]]})
    checked = 0
    for st, legal in _random_decisions(cfg, range(300, 310)):
        if st.phase == Phase.TURN:
            assert legal == st._legal_turn()
            checked += 1
    t = st._rows
    fresh = TurnRows(st.k, st.caps, [b.p for b in st.bugs], st.cover, st.sort_legal, (st.width, st.height))
    met = 0
    for seat, by_x in enumerate(t.places):
        for mx, by_y in enumerate(by_x):
            for my, by_fx in enumerate(by_y):
                for fx, by_fy in enumerate(by_fx):
                    for fy, place in enumerate(by_fy):
                        if place is not None:
                            assert place == fresh.place(seat, mx, my, fx, fy, st.arena)
                            met += 1
    assert checked > 100 and met > 20


def test_rules_written_with_comparisons_equal_their_min_max_forms() -> None:
    """The hot rule functions compare instead of calling min()/max() (a builtin call each): over a grid of small
    ints (negative ones included) each gives what its min()/max() form gives."""
    from itertools import product

    from envs.hallownest import rules as R

    span = range(-3, 9)
    for a, b, c in product(span, repeat=3):
        assert R.apply_modifier(a, b, True, c) == (max(c, a + b), 0)
        assert R.add_imbalance(a, b, c) == min(c, a + b)
        assert R.recover_imbalance(a, b) == max(0, a - b)
        assert R.stamina_damage(a, b) == (max(0, a - b), max(0, a - b) <= 0)
        assert R.heart_damage(a, b) == max(0, a - b)
        assert R.retreat_distance(a, b, c) == max(0, min(a, b, c))
        assert R.soak_damage(a, b, c) == (max(c, a - b) if a > 0 else 0)
        assert R.chebyshev((a, b), (c, a)) == max(abs(a - c), abs(b - a))
        for d, never_lowers in product(range(0, 3), (False, True)):
            target = max(0, b - c)
            assert R.turn_start_refill(a, b, c, never_lowers, d) == (
                max(a, target) if never_lowers else target,
                max(0, c - d),
            )
        for a, m, through in product(span, span, (False, True)):
            assert R.provoking_move(a, m, through) == (through or R.provokes(a, m))


@pytest.mark.parametrize("sections", [{}, {"unconscious": {"targetable": True}, "deaths_door": {"enabled": False}}])
def test_kept_grapple_flag_equals_the_bugs_grapples(sections: dict[str, object]) -> None:
    """DuelState.grapple_on (read before every Rule 16 check) is kept where a grapple starts or ends: after every
    transition of many random duels it says whether a bug is grappled, in a clone that goes its own way too."""
    from envs.hallownest.duel import NOBODY

    cfg = config(**sections)

    def held(st: DuelState) -> bool:
        return any(b.grappled_by != NOBODY for b in st.bugs)

    on: list[bool] = []

    def check(st: DuelState) -> None:
        assert st.grapple_on == held(st)
        on.append(st.grapple_on)

    _walks_with_twins(cfg, range(400, 460), 500, 30, (Kind.GRAPPLE,), 0.5, after=check)  # seek grapples out
    assert sum(on) > 200


def test_a_duel_clone_copies_every_slot() -> None:
    """DuelState keeps its fields in slots, copied by hand in clone(): every field __init__ sets is a slot (the base
    State's too: the dict stays empty), and a clone holds each slot of its original (bugs, attack and log copied)."""
    st = DuelState(config())
    assert not st.__dict__  # the base State's fields are slots too
    assert set(DuelState.FIELDS) == set(DuelState.__slots__)
    rng = Rng(11)
    seen_attack = False
    for _ in range(300):
        if st.is_terminal():
            st = DuelState(config())
        if st.is_chance():
            st.apply_chance(st.sample_chance(rng))
        else:
            legal = st.legal_actions()
            st.apply_action(legal[int(rng.random() * len(legal))])
        twin = st.clone()
        for name in DuelState.FIELDS:
            mine, theirs = getattr(st, name), getattr(twin, name)
            if name == "bugs":
                assert [b.fields() for b in theirs] == [b.fields() for b in mine]
                assert all(t is not m for t, m in zip(theirs, mine, strict=True))
            elif name == "atk" and mine is not None:
                assert theirs is not mine and theirs.fields() == mine.fields()
                seen_attack = True
            elif name == "log":  # the clone's own list of the same events
                assert theirs is not mine and theirs == mine
            else:
                assert theirs is mine, name
        assert twin.key() == st.key() and twin.log == st.log and twin.log is not st.log
    assert seen_attack


@pytest.mark.parametrize("size", [(7, 1), (4, 3), (5, 5)])
def test_step_contacts_are_the_contacts_of_the_one_cell(size: tuple[int, int]) -> None:
    """Arena.step_contacts (what a one-cell step reads) against the plain Rule 15 contacts of that cell."""
    from envs.hallownest import rules as R
    from envs.hallownest.actions import GRID_DIRECTIONS
    from envs.hallownest.duel import Arena

    width, height = size
    arena = Arena(width, height, GRID_DIRECTIONS, 2, 2)
    pairs = [
        ((x, y), (fx, fy)) for x in range(width) for y in range(height) for fx in range(width) for fy in range(height)
    ]
    for (x, y), foe in pairs:
        want = (R.adjacent_cells_entered([(x, y)], foe), (x, y) == foe)
        assert arena.step_contacts[x][y][foe[0]][foe[1]] == want == arena.contacts(((x, y),), foe)
    assert sum(arena.step_contacts[x][y][fx][fy][0] for (x, y), (fx, fy) in pairs) > 0


def test_moves_skip_the_provoke_check_only_when_it_would_do_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """_step and _dash call _moved_through only when the move enters a foe-adjacent cell, passes through the foe
    or the bug is already past its Maneuverability. Every step and dash of seeded random duels is played on a
    clone; where the call was skipped, the move's plain Rule 15 contacts are none, and the plain _moved_through
    with them leaves the moved state exactly as it is; both the skipped and the made calls are met. A bug already past
    its Maneuverability is offered to the foe by any step or dash (Rule 15), wherever it goes."""
    from envs.hallownest import rules as R

    calls: list[int] = []
    plain = DuelState._moved_through

    def counted(self: DuelState, seat: int, adjacent: int, through: bool) -> None:
        calls.append(seat)
        plain(self, seat, adjacent, through)

    monkeypatch.setattr(DuelState, "_moved_through", counted)
    cfg = config(arena={"kind": "grid", "width": 5, "height": 4, "start": [[0, 3], [4, 0]]})
    skipped = made = provoked = 0
    for st, legal in _random_decisions(cfg, range(400, 415)):
        if st.phase != Phase.TURN:
            continue
        seat = st.active
        for action in legal:
            spec = ACTIONS[action]
            if spec.kind not in (Kind.STEP, Kind.DASH):
                continue
            before = st.bugs[seat]
            path = st._dash_path(before, spec.direction) if spec.kind == Kind.DASH else None
            if spec.kind == Kind.DASH or before.free_move == 0:  # past Maneuverability any such move provokes
                pushed = st.clone()
                pushed.bugs[seat].adj_moved = st.maneuverability[seat] + 1
                them = pushed.bugs[1 - seat]
                k = st.k
                offered = R.provoked_attack_offered(
                    True,
                    k.movement_provoked_attacks,
                    them.can_act,
                    them.provoked_used,
                    them.stamina,
                    k.movement_provoked_cost,
                )
                pushed.apply_action(action)
                if pushed.phase != Phase.OVER:
                    assert (pushed.phase == Phase.PROVOKED) == offered
                    provoked += offered
            moved = st.clone()
            calls.clear()
            moved.apply_action(action)
            if calls:
                made += 1
                continue
            me, foe = moved.bugs[seat], moved.bugs[1 - seat]
            if spec.kind == Kind.STEP and before.free_move > 0:
                continue  # a bounce (free move) never checks Rule 15's contacts
            cells = path if path is not None else ((me.x, me.y),)
            if moved.phase == Phase.OVER or (me.x, me.y) != cells[-1]:
                continue  # the dash's Stamina ended the duel before the move
            assert R.adjacent_cells_entered(cells, (foe.x, foe.y)) == 0
            assert not R.passes_through(cells, (foe.x, foe.y))
            twin = moved.clone()
            plain(twin, seat, 0, False)
            assert twin.key() == moved.key()
            skipped += 1
    assert skipped > 100 and made > 100 and provoked > 20


def test_spending_away_from_deaths_door_is_the_plain_rule() -> None:
    """_spend reaches R.spend_stamina only near death (at Death's Door or unconscious) and subtracts in place
    otherwise: over seeded random states, both seats, each near-death flag and amounts 0..4, the Stamina left and
    whether the bug died are what R.spend_stamina gives (and a death is met)."""
    from envs.hallownest import rules as R

    cfg = config()
    checked = deaths = 0
    for st, _ in _random_decisions(cfg, range(500, 506)):
        for seat in (0, 1):
            for at_dd, unconscious in ((False, False), (True, False), (False, True)):
                for amount in range(5):
                    twin = st.clone()
                    b = twin.bugs[seat]
                    b.at_dd, b.unconscious = at_dd, unconscious
                    left, dies = R.spend_stamina(b.stamina, amount, at_dd or unconscious)
                    if amount <= 0:
                        left, dies = b.stamina, False  # nothing spent (Rule 14 needs a spending)
                    assert twin._spend(seat, amount) is not dies
                    assert (b.stamina, b.dead) == (left, dies)
                    checked += 1
                    deaths += dies
    assert checked > 1000 and deaths > 50


def _plain_player(st: DuelState) -> int:
    """The seat to move read off the phase (the module docstring): the active bug in a turn, the deciding bug in a
    reaction, chance at a roll, the end once the duel is over."""
    from envs.core.game import CHANCE, TERMINAL
    from envs.hallownest.actions import CHANCE_PHASES

    if st.phase == Phase.TURN:
        return st.active
    if st.phase in CHANCE_PHASES:
        return CHANCE
    if st.phase == Phase.OVER:
        return TERMINAL
    return st.decider


@pytest.mark.parametrize(
    "sections",
    [
        {},
        {"unconscious": {"targetable": True}, "deaths_door": {"enabled": False}},
        {  # delayed damage and a status (turn starts that strike), a grid with room to dodge
            "arena": {"kind": "grid", "width": 4, "height": 3, "start": [[0, 2], [3, 0]]},
            "duel": {"bugs": [{"name": "A", "weapon": "venom_pin"}, {"name": "B", "weapon": "infected_nail"}]},
        },
    ],
)
def test_kept_player_to_move_equals_the_phase_rule(sections: dict[str, object]) -> None:
    """DuelState._player (what current_player() returns) is kept where the phase changes: after every transition of
    many random duels it is the seat the phase says, in clones that go their own way too, and every phase is met."""
    cfg = config(**sections)
    met: set[Phase] = set()

    def check(st: DuelState) -> None:
        assert st.current_player() == _plain_player(st), st.phase
        met.add(st.phase)

    # seek grapples, escapes, focus and dodges out
    _walks_with_twins(cfg, range(700, 760), 1000, 40, (Kind.GRAPPLE, Kind.ESCAPE, Kind.FOCUS, Kind.DODGE), 0.4, check)
    assert met == set(Phase)


@pytest.mark.parametrize(
    ("sections", "unmet"),
    [
        (  # a Fang's next-roll penalty, a status, grapples (two appendages), Death's Door and unconscious bugs
            {
                "duel": {
                    "bugs": [{"name": "A", "weapon": "fang", "appendages": 2}, {"name": "B", "weapon": "venom_pin"}]
                }
            },
            {"delayed"},
        ),
        (  # delayed damage and a status, unconscious bugs (no Death's Door), a grid
            {
                "arena": {"kind": "grid", "width": 4, "height": 3, "start": [[0, 2], [3, 0]]},
                "unconscious": {"targetable": True},
                "deaths_door": {"enabled": False},
                "duel": {"bugs": [{"name": "A", "weapon": "infected_nail"}, {"name": "B", "weapon": "venom_pin"}]},
            },
            {"next_roll_penalty", "at_dd", "dd_used"},
        ),
    ],
)
def test_kept_conditions_piece_is_the_piece_of_the_bugs_conditions(
    sections: dict[str, object], unmet: set[str]
) -> None:
    """Bug.conditions_piece (the observation's conditions piece, kept until a condition changes) is, after every
    transition of many random duels and in clones going their own way, None or the piece the encoder's tree holds
    for the bug's nine conditions (packed afresh from the plain features); every condition the config's weapons and
    Heart 0 choices allow changes on the way."""
    from envs.hallownest import observation as O

    cfg = config(**sections)
    changed: set[str] = set()
    names = ("focus_pending", "at_dd", "unconscious", "dd_used", "delayed", "status", "next_roll_penalty")
    names += ("grappled_by", "grappling")

    def plain(st: DuelState, s: int) -> bytes:
        return O._pack(O._bug_resources(st.bugs[s], st.obs_encoder.fixed.bugs[s], st.obs_encoder.fixed)[O.CONDITIONS])

    before: list[list[object]] = []

    def observe(st: DuelState) -> None:
        for seat in (0, 1):
            st.observation(seat)  # keeps both pieces
        before[:] = [[getattr(b, n) for n in names] for b in st.bugs]

    def check(st: DuelState) -> None:
        for s, b in enumerate(st.bugs):
            changed.update(n for n, v in zip(names, before[s], strict=True) if getattr(b, n) != v)
            assert b.conditions_piece is None or b.conditions_piece == plain(st, s), (s, st.phase)

    seek = (Kind.GRAPPLE, Kind.ESCAPE, Kind.FOCUS, Kind.ATTACK)
    _walks_with_twins(cfg, range(300, 380), 1000, 30, seek, 0.5, observe, check)
    assert changed == set(names) - unmet


MOVE_ARENAS: list[dict[str, object]] = [
    {},
    {"kind": "grid", "width": 5, "height": 4, "start": [[0, 3], [4, 0]]},
    {"kind": "grid", "start": [[0, 0], [1, 1]]},
]
"""The arenas of the dash and retreat tests: the default, a 5×4 grid, a grid whose bugs start a diagonal step apart."""


@pytest.mark.parametrize("arena", MOVE_ARENAS)
def test_a_legal_dash_takes_the_path_the_plain_rule_finds(arena: dict[str, object]) -> None:
    """_dash reads its path from Arena.dash_paths without _dash_path's landing test: for every dash offered in the
    turns of seeded random duels the table's path is the one _dash_path finds (inside, landing free), and the bug
    lands at its end."""
    checked = 0
    for st, legal in _random_decisions(config(arena=arena), range(500, 530)):
        if st.phase != Phase.TURN:
            continue
        me = st.bugs[st.active]
        for action in legal:
            spec = ACTIONS[action]
            if spec.kind == Kind.DASH:
                assert spec.direction is not None
                path = st.arena.dash_paths[(me.x, me.y)][spec.direction]
                assert path == st._dash_path(me, spec.direction)
                twin = st.clone()
                twin.apply_action(action)
                assert (twin.bugs[st.active].x, twin.bugs[st.active].y) == path[-1] or twin.is_terminal()
                checked += 1
    assert checked > 300


@pytest.mark.parametrize("arena", MOVE_ARENAS)
def test_a_retreat_stops_where_the_plain_rule_stops_it(arena: dict[str, object]) -> None:
    """_retreat counts the open cells of its line up to the foe's cell: for every retreat offered in the turns of
    seeded random duels the bug ends where Rule 15 puts it, the line's cells counted until one the living bugs hold
    (_occupied), at most its Speed left and the retreat's cells; a retreat the foe blocks is met."""
    from envs.hallownest import rules as R

    checked = blocked = 0
    for st, legal in _random_decisions(config(arena=arena), range(600, 640)):
        if st.phase != Phase.TURN:
            continue
        me = st.bugs[st.active]
        for action in legal:
            spec = ACTIONS[action]
            if spec.kind != Kind.RETREAT:
                continue
            assert spec.direction is not None
            line = st.arena.lines[(me.x, me.y)][spec.direction]
            held = st._occupied()
            open_cells = 0
            while open_cells < len(line) and line[open_cells] not in held:
                open_cells += 1
            moved = R.retreat_distance(st.k.movement_retreat_cells, me.speed_left, open_cells)
            want = line[moved - 1] if moved else (me.x, me.y)
            twin = st.clone()
            twin.apply_action(action)
            if not twin.is_terminal():
                assert (twin.bugs[st.active].x, twin.bugs[st.active].y) == want
                assert twin.bugs[st.active].speed_left == me.speed_left - moved
            checked += 1
            blocked += open_cells < len(line)
    assert checked > 300 and blocked > 10


@pytest.mark.parametrize(
    "sections",
    [
        {},
        {"pogo": {"needs_pass_over": False}, "arena": {"kind": "grid", "start": [[0, 0], [1, 1]]}},
        {"unconscious": {"targetable": True}, "deaths_door": {"enabled": False}},
    ],
)
def test_a_turn_starts_with_this_turns_moves_already_cleared(
    sections: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """_begin_turn leaves attacks_made, jumped, over_target and free_move as they are: at every turn start of many
    random duels (attacks, dashes, pogo bounces, provoked attacks, unconscious bugs) they are 0 / False already,
    since the bug's last turn ended in _end_turn and nothing outside its own turn sets them."""
    starts = []
    plain = DuelState._begin_turn

    def checked(self: DuelState, seat: int) -> None:
        b = self.bugs[seat]
        starts.append((b.attacks_made, b.jumped, b.over_target, b.free_move))
        plain(self, seat)

    monkeypatch.setattr(DuelState, "_begin_turn", checked)
    for st, _ in _random_decisions(config(**sections), range(700, 760)):
        assert st.phase is not None
    assert len(starts) > 1000 and set(starts) == {(0, False, False, 0)}

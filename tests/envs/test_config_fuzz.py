"""Issue 21 "Must show": any config a ruleset's model accepts plays random games without an exception.

Hypothesis draws configs from each model's own field bounds (ge/le, Literal and enum choices, bools),
extremes first: every number leaf of ``rules.toml`` (and every number of its lists, tables and rows) is
either kept or redrawn, with its minimum and maximum drawn often. A draw that breaks a rule tying
several keys together (a start cell outside a narrowed arena, stat_min above stat_max) is repaired by
putting the drawn values back to the rules as written one at a time, in a drawn order, until the model
accepts it; so every example is a config the model accepts. Then 200 random games per scenario
(uniform legal actions, sampled chance), each bounded in steps by :data:`STEP_BOUNDS` (from the
config's own limits) and in wall time by :data:`GAME_SECONDS`, with finite observations and returns.

The fast run draws a few configs per scenario (the rules as written, the all-minimum and all-maximum
configs, then hypothesis); the ``slow`` run draws many more.
"""

from __future__ import annotations

import enum
import json
import math
import signal
import tempfile
import threading
import time
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

import envs
from envs.core.config import config_dict
from envs.core.dice import Rng
from envs.core.errors import ConfigError
from envs.core.game import CHANCE, TERMINAL

GAMES = 200
"""Random games per drawn config and scenario (issue 21)."""
GAME_SECONDS = 10.0
"""Wall-time bound of one game (generous: the machine is shared)."""
FAST_EXAMPLES = 3
SLOW_EXAMPLES = 25
SLOW_PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
"""No shrinking in the slow run: a failure prints the drawn config at once (shrinking 200-game examples takes
many minutes)."""

Cfg = Any


def _bb_session(c: Cfg) -> int:
    s = c.session
    return 60 * s.sessions * s.obstacles_per_session * (s.retries + 1) + 200


def _bb_duel(c: Cfg) -> int:
    return 60 * c.duel.max_turns + 200


def _st_heist(c: Cfg) -> int:
    return 80 * c.heist.turns * c.multiple_actions.max_actions + 200


def _st_duel(c: Cfg) -> int:
    return 80 * c.duel.turns + 200


def _hn_duel(c: Cfg) -> int:
    return 200 * c.duel.max_rounds + 200


def _wa_duel(c: Cfg) -> int:
    return c.duel.max_conflicts * (c.contest.max_rounds * 60 + 4 * c.roll.max_tie_rerolls) + 200


def _wa_melee(c: Cfg) -> int:
    return c.melee.max_conflicts * (c.contest.max_rounds * 120 + 8 * c.roll.max_tie_rerolls) + 200


def _cr_episode(c: Cfg) -> int:
    return 150 * c.episode.players * (c.episode.max_scenes + c.episode.max_characters + c.episode.max_factions) + 200


STEP_BOUNDS: dict[tuple[str, str], Callable[[Cfg], int]] = {
    ("blackbird", "session"): _bb_session,
    ("blackbird", "duel"): _bb_duel,
    ("storyteller", "heist"): _st_heist,
    ("storyteller", "duel"): _st_duel,
    ("hallownest", "duel"): _hn_duel,
    ("wicked_age", "duel"): _wa_duel,
    ("wicked_age", "melee"): _wa_melee,
    ("crossroads", "episode"): _cr_episode,
}
"""Most steps (decisions and chance nodes) a game may take, from the config's own limits: the turn, round,
scene or conflict limit times a generous per-unit allowance. A game past it is a hang."""

CASES = sorted(STEP_BOUNDS)


# -- strategies from the model's own bounds ------------------------------------------------------------
def _unwrap(ann: Any, meta: list[Any]) -> tuple[Any, list[Any], bool]:
    optional = False
    while True:
        origin = typing.get_origin(ann)
        if origin is typing.Annotated:
            ann, *extra = typing.get_args(ann)
            meta = [*meta, *(x for m in extra for x in (*getattr(m, "metadata", ()), m))]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(ann) if a is not type(None)]
            optional = optional or len(args) < len(typing.get_args(ann))
            ann = args[0]
        else:
            return ann, meta, optional


def _bound(meta: list[Any], attr: str) -> Any:
    return next((getattr(m, attr) for m in meta if getattr(m, attr, None) is not None), None)


def _number(ann: type, meta: list[Any]) -> st.SearchStrategy[Any] | None:
    ge, gt, le, lt = (_bound(meta, a) for a in ("ge", "gt", "le", "lt"))
    if ann is int:
        lo = ge if ge is not None else gt + 1
        hi = le if le is not None else lt - 1
        return st.one_of(st.sampled_from([lo, hi]), st.integers(lo, hi))
    lo_f = float(ge if ge is not None else gt)
    hi_f = float(le if le is not None else lt)
    floats = st.floats(lo_f, hi_f, exclude_min=ge is None, exclude_max=le is None, allow_nan=False)
    edges = [x for x in (lo_f if ge is not None else math.nextafter(lo_f, math.inf), hi_f)]
    return st.one_of(st.sampled_from(edges), floats)


def _leaf(ann: Any, meta: list[Any]) -> st.SearchStrategy[Any] | None:
    if ann is bool:
        return st.booleans()
    if typing.get_origin(ann) is typing.Literal:
        return st.sampled_from(typing.get_args(ann))
    if isinstance(ann, type) and issubclass(ann, enum.Enum):
        return st.sampled_from([e.value for e in ann])
    if ann in (int, float):
        return _number(ann, meta)
    return None  # names, paths, lists of names: kept as written (they are references, not numbers)


def _strategy(ann: Any, meta: list[Any], default: Any) -> st.SearchStrategy[Any]:
    """Values shaped like ``default`` (the rules as written), each leaf kept or redrawn within its bounds."""
    ann, meta, optional = _unwrap(ann, meta)
    if isinstance(ann, type) and issubclass(ann, BaseModel) and isinstance(default, dict):
        fields = ann.model_fields
        return st.fixed_dictionaries(
            {k: _strategy(fields[k].annotation, list(fields[k].metadata), v) for k, v in default.items()}
        )
    origin = typing.get_origin(ann)
    if origin is list and isinstance(default, list):
        (item,) = typing.get_args(ann)
        return st.tuples(*(_strategy(item, [], v) for v in default)).map(list)
    if origin is dict and isinstance(default, dict):
        item = typing.get_args(ann)[1]
        return st.fixed_dictionaries({k: _strategy(item, [], v) for k, v in default.items()})
    leaf = _leaf(ann, meta)
    if leaf is None:
        return st.just(default)
    if optional and default is None:
        return st.one_of(st.just(None), leaf)
    return st.one_of(st.just(default), leaf)


def _leaves(d: Any, path: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], Any]:
    if isinstance(d, dict):
        return {p: v for k, x in d.items() for p, v in _leaves(x, (*path, k)).items()}
    if isinstance(d, list):
        return {p: v for i, x in enumerate(d) for p, v in _leaves(x, (*path, i)).items()}
    return {path: d}


def _put(d: Any, path: tuple[Any, ...], value: Any) -> None:
    for p in path[:-1]:
        d = d[p]
    d[path[-1]] = value


def _validate(model: type[BaseModel], data: dict[str, Any]) -> BaseModel | None:
    try:
        return model.model_validate(data)
    except (ValidationError, ConfigError):
        return None


def _extreme(model: type[BaseModel], default: dict[str, Any], pick: int) -> dict[str, Any]:
    """The config with every numeric leaf at its minimum (``pick=0``) or maximum (``pick=-1``) of its range."""
    data = json.loads(json.dumps(default))

    def walk(ann: Any, meta: list[Any], value: Any, path: tuple[Any, ...]) -> None:
        ann, meta, _ = _unwrap(ann, meta)
        if isinstance(ann, type) and issubclass(ann, BaseModel) and isinstance(value, dict):
            for k, v in value.items():
                f = ann.model_fields[k]
                walk(f.annotation, list(f.metadata), v, (*path, k))
        elif typing.get_origin(ann) in (list, dict) and isinstance(value, list | dict):
            item = typing.get_args(ann)[-1]
            for k, v in enumerate(value) if isinstance(value, list) else value.items():
                walk(item, [], v, (*path, k))
        elif ann in (int, float) and value is not None:
            ge, gt, le, lt = (_bound(meta, a) for a in ("ge", "gt", "le", "lt"))
            if pick == 0:
                x = ge if ge is not None else (gt + 1 if ann is int else math.nextafter(float(gt), math.inf))
            else:
                x = le if le is not None else (lt - 1 if ann is int else math.nextafter(float(lt), -math.inf))
            _put(data, path, x)

    walk(model, [], data, ())
    return data


def _repair(model: type[BaseModel], default: dict[str, Any], drawn: dict[str, Any], order: list[int]) -> BaseModel:
    """``drawn`` if the model accepts it, else with drawn leaves put back to the rules as written one by one."""
    cfg = _validate(model, drawn)
    if cfg is not None:
        return cfg
    base = _leaves(default)
    changed = [p for p, v in _leaves(drawn).items() if base.get(p, v) != v]
    data = json.loads(json.dumps(drawn))
    for i in order:
        if i < len(changed):
            _put(data, changed[i], base[changed[i]])
            cfg = _validate(model, data)
            if cfg is not None:
                return cfg
    for p in changed:
        _put(data, p, base[p])
        cfg = _validate(model, data)
        if cfg is not None:
            return cfg
    raise AssertionError("the rules as written do not validate")


# -- playing ---------------------------------------------------------------------------------------------
class GameTimeout(AssertionError):
    """A game ran past :data:`GAME_SECONDS` (inside one step, where the step bound cannot see it)."""


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Fail a game stuck inside one engine call: SIGALRM after ``seconds`` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, frame: object) -> None:
        raise GameTimeout(f"a game ran over {seconds} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def play_random_games(ruleset: str, scenario: str, cfg: BaseModel, games: int = GAMES, seed: int = 0) -> int:
    """Play ``games`` uniform-random games under ``cfg``; fail on an exception, a hang or a non-finite number."""
    json.dumps(config_dict(cfg), allow_nan=False)  # record.json must never hold Infinity
    sc = envs.get_ruleset(ruleset).scenario(scenario)
    n_actions = sc.action_count(cfg)
    n_players = sc.players(cfg)
    obs_len = sc.observation_length(cfg)
    bound = STEP_BOUNDS[(ruleset, scenario)](cfg)
    longest = 0
    for g in range(games):
        rng = Rng(seed * 100_003 + g)
        steps = 0
        t0 = time.perf_counter()
        with _time_limit(GAME_SECONDS):
            state = sc.new_game(cfg)
            while (p := state.current_player()) != TERMINAL:
                steps += 1
                assert steps <= bound, f"game {g} did not end within {bound} steps"
                if p == CHANCE:
                    state.apply_chance(state.sample_chance(rng))
                    continue
                legal = state.legal_actions()
                assert legal and all(0 <= a < n_actions for a in legal), legal
                obs = np.asarray(state.observation(p), dtype=np.float64)
                assert obs.shape == (obs_len,) and np.isfinite(obs).all()
                state.apply_action(legal[int(rng.random() * len(legal))])
        elapsed = time.perf_counter() - t0
        assert elapsed < GAME_SECONDS, f"game {g} took {elapsed:.1f} s"
        returns = state.returns()
        assert len(returns) == n_players and all(math.isfinite(r) for r in returns)
        longest = max(longest, steps)
    return longest


def test_every_scenario_has_a_step_bound() -> None:
    registered = {(r, s) for r in envs.all_rulesets() for s in envs.get_ruleset(r).scenarios}
    builtin = {(r, s) for r, s in registered if r in {r for r, _ in STEP_BOUNDS}}
    assert builtin == set(STEP_BOUNDS)


def test_wicked_age_tie_between_empty_rolls() -> None:
    """Found by the fuzz test: a PC still in with two forms at 0 can roll nothing and tie (Rule 8)."""
    rs = envs.get_ruleset("wicked_age")
    data = config_dict(rs.default_config())
    data["consequences"]["pc_out_zero_forms"] = 5
    data["duel"]["max_conflicts"] = 50
    cfg = rs.config_model.model_validate(data)
    for seed in range(5):
        play_random_games("wicked_age", "duel", cfg, seed=seed)


def _model_and_default(ruleset: str) -> tuple[type[BaseModel], dict[str, Any]]:
    rs = envs.get_ruleset(ruleset)
    return rs.config_model, config_dict(rs.default_config())


@pytest.mark.parametrize(("ruleset", "scenario"), CASES)
@pytest.mark.parametrize("pick", [0, -1], ids=["minimum", "maximum"])
def test_extreme_configs_play(ruleset: str, scenario: str, pick: int) -> None:
    """Every number at the bottom (or top) of its range at once, repaired where keys are tied together."""
    model, default = _model_and_default(ruleset)
    cfg = _repair(model, default, _extreme(model, default, pick), list(range(10_000)))
    play_random_games(ruleset, scenario, cfg, games=GAMES // 4)


def _fuzz(ruleset: str, scenario: str, data: st.DataObject) -> None:
    model, default = _model_and_default(ruleset)
    drawn = data.draw(_strategy(model, [], default), label="config")
    order = data.draw(st.permutations(range(len(_leaves(default)))), label="repair order")
    cfg = _repair(model, default, drawn, list(order))
    play_random_games(ruleset, scenario, cfg, seed=data.draw(st.integers(0, 2**32 - 1), label="seed"))


@pytest.mark.parametrize(("ruleset", "scenario"), CASES)
@settings(
    max_examples=FAST_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_any_accepted_config_plays(ruleset: str, scenario: str, data: st.DataObject) -> None:
    _fuzz(ruleset, scenario, data)


@pytest.mark.slow
@pytest.mark.parametrize(("ruleset", "scenario"), CASES)
@settings(
    max_examples=SLOW_EXAMPLES,
    deadline=None,
    database=None,
    phases=SLOW_PHASES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_any_accepted_config_plays_many(ruleset: str, scenario: str, data: st.DataObject) -> None:
    _fuzz(ruleset, scenario, data)


def _fuzz_hallownest_tables(data: st.DataObject, tmp: Path) -> None:
    """Hallownest's data files are rules too: draw every row of the shipped templates and weapons tables."""
    from envs.core.config import load_config
    from envs.hallownest.config import TemplateRow, WeaponRow, load_table

    rs = envs.get_ruleset("hallownest")
    written: dict[str, str] = {}
    for kind, row_model in (("templates", TemplateRow), ("weapons", WeaponRow)):
        rows = {k: row_model.model_validate(v).model_dump() for k, v in load_table(f"data/{kind}.toml", kind).items()}
        drawn = data.draw(st.fixed_dictionaries({k: _strategy(row_model, [], v) for k, v in rows.items()}), label=kind)
        lines = [
            f"[{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in row.items()) for name, row in drawn.items()
        ]
        (tmp / f"{kind}.toml").write_text("".join(lines))
        written[kind] = f"{kind}.toml"
    variant = tmp / "variant.toml"
    variant.write_text("[data]\n" + "".join(f'{k} = "{v}"\n' for k, v in written.items()))
    try:
        cfg = load_config(rs, variant)
    except ConfigError as e:  # a drawn table that breaks a tied rule (a two-handed weapon with a shield)
        assert "two-handed" in str(e), e
        return
    play_random_games("hallownest", "duel", cfg, games=GAMES, seed=data.draw(st.integers(0, 2**32 - 1)))


@settings(
    max_examples=FAST_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_any_accepted_hallownest_data_tables_play(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _fuzz_hallownest_tables(data, Path(tmp))


@pytest.mark.slow
@settings(
    max_examples=SLOW_EXAMPLES,
    deadline=None,
    database=None,
    phases=SLOW_PHASES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_any_accepted_hallownest_data_tables_play_many(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _fuzz_hallownest_tables(data, Path(tmp))

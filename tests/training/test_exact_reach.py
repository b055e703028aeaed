"""Exact reach (issue 17, item 7): on every ruleset's small variant (``envs/<ruleset>/small.toml``) the agent
the discover pipeline trusts — the search subject ``search:<best persona>@<n>`` — against the exact solver.

The oracle is :func:`agents.solver.solve` over the engine (full expectimax over ``chance_outcomes()``), run on
the plain game for the optimum and on :class:`agents.search.RestrictedState` views for restricted optima. It
never calls the search agent. Multi-seat scenarios are measured as the pipeline plays them: the subject sits
at seat ``g mod n`` of deal ``g`` and every other seat plays the base persona, so the exact optimum is the
best response of that seat against the base (``solve(root, seat, {others: base})``, what ``rulebreaker solve
--opponent <base>`` computes), averaged over the same seat schedule.

**How reach is measured (97%).** Returns can be negative (a duel is won +1 / lost -1), and a ratio of raw
values can be gamed by shifting the returns. Reach is therefore measured above the exact value of uniform
random play ``R`` (``random`` at the subject's seats, the base elsewhere; the solver evaluates it exactly):

    reach = (V - R) / (O - R)  >= 0.97

with ``O`` the exact optimum and ``V`` the search subject's value. It does not change when the returns are
shifted or scaled, and where ``R >= 0`` it is stricter than ``V / O >= 0.97`` (it implies it). ``V`` is
estimated from the subject's own games as ``O - mean(sum of exact regrets)``: at each of its decisions the
regret ``V*(s) - Q*(s, a)`` is read from the solve (the performance-difference identity makes the expected
sum exactly ``O - V``), so a lucky roll does not count as skill and the 95% half-width is small. The test
asserts the point estimate.

**Restricted play.** :func:`training.discover.verdicts.stage_verdicts` — the pipeline's own function, on its
own deals, pairing and plan (most-chosen options forbidden, least-chosen forced first) — measures each
forbid/force value change; the exact change is the restricted optimum minus the optimum, on the same seat
schedule. Each measured change must hold the exact one inside its 95% interval or lie within 0.02 of it.

Fast tests (CI): the small variants load, the bad-fallback must-show and the determinism must-show. The
reach and restricted-play checks on the small variants are ``slow`` (their exact solves take 10-30 s each,
the subject's games minutes).
Run all: ``.venv/bin/python -m pytest -q -p no:cacheprovider tests/training/test_exact_reach.py -s``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel

import envs
from agents.registry import make_agent
from agents.search import RestrictedState, Restriction, make_search_agent
from agents.solver import SolveResult, solve
from envs.core.config import load_config, with_override
from envs.core.dice import Rng, seed_for
from envs.core.game import CHANCE, TERMINAL, State
from envs.core.policy import Policy, UniformRandom, legal_mask
from envs.core.registry import get_ruleset
from results.findings import Thresholds
from training.discover.budgets import BUDGETS
from training.discover.discovery import Discovery
from training.discover.exact import fits_exactly
from training.discover.verdicts import stage_verdicts, subject_spec
from training.solve import solver_key

ENVS = Path(envs.__file__).parent
REACH = 0.97
SLACK = 0.02


def small_path(ruleset: str) -> Path:
    return ENVS / ruleset / "small.toml"


@dataclass(frozen=True)
class Case:
    """One small game: its ruleset, scenario, extra overrides, the base persona and the budget measured."""

    ruleset: str
    scenario: str
    base: str  # the best persona on this small game (see BEST_PERSONA_NOTE)
    simulations: int  # the search subject's budget in the reach test
    games: int  # paired games of the reach estimate
    sets: tuple[tuple[str, Any], ...] = ()
    mode: str = "#rollout#exact"  # the subject's search mode ("#rollout" sampled only, "" the MCTS of agents/search.py)

    @property
    def name(self) -> str:
        extra = "".join(f",{k}={v}" for k, v in self.sets)
        return f"{self.ruleset}-{self.scenario}{extra}"


def config_of(case: Case) -> BaseModel:
    rs = get_ruleset(case.ruleset)
    cfg = load_config(rs, small_path(case.ruleset))
    for k, v in case.sets:
        cfg = with_override(cfg, k, list(v) if isinstance(v, tuple) else v)
    return cfg


# ------------------------------------------------------------------------------------------------
# The oracle: exact values, cached per (game, seat, restriction, who plays the seat)
# ------------------------------------------------------------------------------------------------
class EngineState:
    """A policy handed the engine state inside a :class:`RestrictedState` view (the mask is unchanged)."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.name = inner.name

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        return self.inner.act(getattr(state, "inner", state), mask, rng)


class Exact:
    """Exact solves of one small game (cached: each one takes seconds)."""

    def __init__(self, case: Case) -> None:
        self.case = case
        rs = get_ruleset(case.ruleset)
        self.config = config_of(case)
        self.scenario = rs.scenario(case.scenario)
        self.root: State = self.scenario.new_game(self.config)
        self.n = self.root.num_players
        self.num_actions = self.scenario.action_count(self.config)
        self.key = solver_key(case.ruleset, case.scenario, self.root)
        self._solved: dict[tuple[int, Restriction | None, str], SolveResult] = {}

    def base(self) -> Policy:
        return make_agent(self.case.ruleset, self.case.base, self.case.scenario)

    def base_on_engine(self) -> Policy:
        """The base for a solve on a RestrictedState view: it is handed the engine state (personas check
        its type); the view only restricts the other seat, so its legal actions are the engine's."""
        return EngineState(self.base())

    def result(self, seat: int, restriction: Restriction | None = None, player: str = "optimal") -> SolveResult:
        """Seat ``seat`` optimal (``player="optimal"``) or fixed to ``random``/``base``; every other seat the base."""
        k = (seat, restriction, player)
        if k not in self._solved:
            root = self.root if restriction is None else RestrictedState(self.root, seat, restriction)
            fixed = self.base if restriction is None else self.base_on_engine
            opponents: dict[int, Policy] = {s: fixed() for s in range(self.n) if s != seat}
            if player == "random":
                opponents[seat] = UniformRandom()
            elif player == "base":
                opponents[seat] = self.base()
            self._solved[k] = solve(root, seat, opponents, key=self.key, num_actions=self.num_actions)
        return self._solved[k]

    def value(self, seat: int, restriction: Restriction | None = None, player: str = "optimal") -> float:
        return self.result(seat, restriction, player).value[seat]

    def schedule_value(
        self, seats: list[int], restriction: Restriction | None = None, player: str = "optimal"
    ) -> float:
        """The mean exact value over a seat schedule (deal g -> seat g mod n, as the pipeline seats its subject)."""
        return float(np.mean([self.value(s, restriction, player) for s in seats]))


@cache
def exact(case: Case) -> Exact:
    return Exact(case)


# ------------------------------------------------------------------------------------------------
# The search subject's value, paired with the optimal policy on common random numbers
# ------------------------------------------------------------------------------------------------
@dataclass
class Reach:
    value: float  # the subject's value (estimate)
    half_width: float
    optimum: float
    random: float
    base: float  # the base persona's exact value on the same schedule
    seconds: float

    @property
    def reach(self) -> float:
        return (self.value - self.random) / (self.optimum - self.random)

    def line(self, spec: str) -> str:
        return (
            f"{spec}: {self.value:.4f} ± {self.half_width:.4f}, optimum {self.optimum:.4f}, random {self.random:.4f}, "
            f"base {self.base:.4f}; reach (V-R)/(O-R) = {self.reach:.1%}, V/O = {self.value / self.optimum:.1%} "
            f"({self.seconds:.0f} s of games)"
        )


def regret_game(ex: Exact, agent: Policy, seat: int, seed: int) -> float:
    """One game with ``agent`` at ``seat`` (the base elsewhere): the sum over the agent's decisions of its
    exact regret ``V*(s) - Q*(s, a)`` (the solver's values of the seat's best response to the base)."""
    res = ex.result(seat)
    base = ex.base()
    policies: list[Policy] = [base] * ex.n
    policies[seat] = agent
    s = ex.root.clone()
    chance = Rng(seed_for(seed, 0))
    prngs = [Rng(seed_for(seed, 1 + i)) for i in range(ex.n)]
    regret = 0.0
    while (p := s.current_player()) != TERMINAL:
        if p == CHANCE:
            s.apply_chance(s.sample_chance(chance))
            continue
        mask = legal_mask(s, max(ex.num_actions, max(s.legal_actions()) + 1))
        a = policies[p].act(s, mask, prngs[p])
        assert mask[a]
        if p == seat:
            q = res.action_values(s)
            assert q, "a position the exact solve never reached"
            regret += max(q.values()) - q[a]
        s.apply_action(a)
    return regret


def measure_reach(case: Case, spec: str, games: int, seed: int = 11) -> Reach:
    """The subject's value as ``optimum - mean regret`` over ``games`` of its own games.

    By the performance-difference identity (Kakade & Langford 2002), the expected sum of the exact regrets
    ``V*(s) - Q*(s, a)`` over the decisions a policy meets in its own games is exactly ``V* - V``. The dice
    still decide which positions are met, but a lucky roll no longer counts as skill: the estimate is
    unbiased and far less noisy than mean returns.
    """
    ex = exact(case)
    agent = make_search_agent(case.ruleset, spec, case.scenario)
    seats = [g % ex.n for g in range(games)]
    t0 = time.perf_counter()
    regrets = np.asarray([regret_game(ex, agent, seat, seed_for(seed, g)) for g, seat in enumerate(seats)])
    optimum = ex.schedule_value(seats)
    return Reach(
        optimum - float(regrets.mean()),
        1.96 * float(regrets.std(ddof=1)) / np.sqrt(games),
        optimum,
        ex.schedule_value(seats, player="random"),
        ex.schedule_value(seats, player="base"),
        time.perf_counter() - t0,
    )


# ------------------------------------------------------------------------------------------------
# The pipeline's restricted play on a small game
# ------------------------------------------------------------------------------------------------
def discovery(case: Case, out: Path, simulations: int, deals: int, restrictions: int, workers: int = 1) -> Discovery:
    rs = get_ruleset(case.ruleset)
    budget = BUDGETS["quick"].model_copy(
        update={
            "name": "exact-reach",
            "search_simulations": simulations,
            "search_deals": deals,
            "max_restrictions": restrictions,
        }
    )
    return Discovery(
        rs,
        case.scenario,
        config_of(case),
        rs.default_config(),
        small_path(case.ruleset),
        budget,
        0,
        workers,
        Thresholds(),
        out,
    )


def check_restricted(case: Case, sec: dict[str, Any]) -> list[str]:
    """Every forbid/force change the verdict stage measured against the exact restricted-optimum change.

    Returns the printed lines; asserts each change holds the exact one in its interval or lies within SLACK.
    """
    ex = exact(case)
    seats = [g % ex.n for g in range(sec["deals"])]
    free = ex.schedule_value(seats)
    lines = []
    measured = 0
    bad = []
    for grp, row in sec["options"].items():
        for mode in ("forbid", "force"):
            iv = row[mode]
            if iv is None:
                continue
            measured += 1
            truth = ex.schedule_value(seats, Restriction(mode, grp)) - free
            ok = iv["low"] - 1e-9 <= truth <= iv["high"] + 1e-9 or abs(iv["value"] - truth) <= SLACK
            lines.append(
                f"{mode} {grp}: measured {iv['value']:+.4f} [{iv['low']:+.4f}, {iv['high']:+.4f}], "
                f"exact {truth:+.4f} {'ok' if ok else 'OFF'}"
            )
            if not ok:
                bad.append(lines[-1])
    for line in lines:
        print(f"{case.name}: {line}")
    assert measured, f"the verdict stage restricted nothing on {case.name}: {sec['options']}"
    assert not bad, bad
    return lines


# ------------------------------------------------------------------------------------------------
# The small games
# ------------------------------------------------------------------------------------------------
BEST_PERSONA_NOTE = """The base of each case is the persona with the highest exact value on the small game
(one seat; test_best_persona_is_the_base checks it), or, for multi-seat games, the persona the pipeline's
round-robin ranks first there."""

CASES = {
    c.name: c
    for c in (
        Case("storyteller", "heist", "spender", 128, 100),
        Case("blackbird", "session", "defender", 64, 100),
        Case("hallownest", "duel", "balanced", 128, 100),
        # two exact steps and a stricter confirmation of sampled deviations (docs/search.md "Rollout mode"):
        # #rollout#exact alone measured 96.6% here (false deviations at the sampled window decisions)
        Case("wicked_age", "duel", "highest", 32, 100, mode="#rollout#exact#steps=2#z=2"),
    )
}


def test_small_variants_load_and_stay_out_of_variants() -> None:
    """Every ruleset ships envs/<ruleset>/small.toml (outside variants/: sweeps and the variant check do not
    read it), it loads, and it differs from the rules as written."""
    for ruleset in ("blackbird", "storyteller", "hallownest", "wicked_age"):
        rs = get_ruleset(ruleset)
        path = small_path(ruleset)
        assert path.exists(), path
        assert rs.variants_dir is None or path.parent != rs.variants_dir
        assert load_config(rs, path) != rs.default_config()


SHORT_OF_97: dict[str, str] = {
    # measured 2026-12-01 13:24 on the loaded 2-core machine with this file's cases, subject #rollout#exact
    # (reach above random). Passing: heist search:spender@128#rollout#exact 0.8540 ± 0.0020, 98.8% (sampled
    # #rollout: 0.8368 ± 0.0026, 93.2%); blackbird session @64 0.8783 ± 0, 100% (#rollout 97.3%); hallownest duel
    # @128 0.0267 ± 0, 100% (#rollout 97.2%). Before the rollout mode (MCTS search:<base>@n): heist @64 85.2%,
    # blackbird @32 93.5%, hallownest @32 93.0%, wicked_age @32 83.6%.
    # wicked_age duel, passing since 14:20 with search:highest@32#rollout#exact#steps=2#z=2: 0.4950 ± 0.0098, 99.3%
    # (search:highest@32#rollout#exact: 0.4750 ± 0.0215, 96.6%: 5 of 100 games deviated at a sampled window
    # decision whose one-step values are an exact tie, 0.5 lost each; z=2 keeps 4 of them; #z=2 alone also 99.3%).
}
"""Cases where the search subject was measured short of 97% (an honest xfail: the bar is not lowered; an
XPASS means the agent got there)."""


def _reach_param(name: str) -> Any:
    if name in SHORT_OF_97:
        return pytest.param(name, marks=pytest.mark.xfail(reason=f"measured short: {SHORT_OF_97[name]}", strict=False))
    return name


@pytest.mark.slow
@pytest.mark.parametrize("name", [_reach_param(n) for n in CASES])
def test_exact_reach(name: str) -> None:
    case = CASES[name]
    spec = f"search:{case.base}@{case.simulations}{case.mode}"
    r = measure_reach(case, spec, case.games)
    print(f"{case.name}: " + r.line(spec))
    assert r.reach >= REACH, r


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_pipeline_subject_reach(name: str) -> None:
    """The subject the verdict stage plays on these games (``subject_spec`` with ``fits_exactly``: the whole-game
    exact agent at the quick budget's playouts) reaches the bar too, its regrets read from the solver."""
    case = CASES[name]
    d = discovery(case, Path("/nonexistent"), simulations=BUDGETS["quick"].search_simulations, deals=1, restrictions=1)
    assert fits_exactly(d, case.base)
    spec = subject_spec(case.base, BUDGETS["quick"].search_simulations, exact=True)
    r = measure_reach(case, spec, 40)
    print(f"{case.name}: " + r.line(spec))
    assert r.reach >= REACH, r


RESTRICTED_OFF: dict[str, str] = {
    # measured 2026-12-01 16:00 (quick budget's 16 playouts, 20 deals, six restrictions): every change of all
    # four cases within. On the small variants that solve within 40,000 positions (all four) the verdict stage's
    # subject is the whole-game exact agent search:<base>@16#rollout#exact#whole#steps=2 and its changes are
    # exact: heist 6/6, blackbird 6/6, wicked_age 6/6 equal to the exact restricted-optimum change to 4 decimals
    # (forbid roll_on +0.0000 vs +0.0000: the per-decision budget of #rollout#exact#steps=2#z=2 had sampled the
    # window decision, every offer tied at 0 under the base's continuation, and lost 0.325 per game), hallownest
    # 6/6 (measured with the sampled #rollout subject before PROBE_STATES rose from 20,000 to 40,000; its small
    # variant has 29,761 positions). Before (#rollout#exact, 12:54-13:12): blackbird 4/6, wicked_age 5/6.
}
"""Restricted-play changes measured outside their interval and 0.02 of the exact change (xfail, bar unchanged)."""


def _restricted_param(name: str) -> Any:
    if name in RESTRICTED_OFF:
        return pytest.param(name, marks=pytest.mark.xfail(reason=f"measured off: {RESTRICTED_OFF[name]}", strict=False))
    return name


@pytest.mark.slow
@pytest.mark.parametrize("name", [_restricted_param(n) for n in CASES])
def test_restricted_play_matches_exact(name: str, tmp_path: Path) -> None:
    """The pipeline's verdict stage (its subject at the quick budget's simulations, its deals, pairing and plan:
    most-chosen options forbidden and least-chosen forced first, six restrictions) against the exact
    restricted optima on the same seat schedule."""
    case = CASES[name]
    sims = BUDGETS["quick"].search_simulations
    d = discovery(case, tmp_path, simulations=sims, deals=20, restrictions=6)
    sec = stage_verdicts(d, case.base)
    check_restricted(case, sec)


@pytest.mark.slow
def test_best_persona_is_the_base() -> None:
    """One-seat cases: the base is the persona with the highest exact value on the small game."""
    from agents.registry import agent_names

    for case in CASES.values():
        ex = exact(case)
        if ex.n != 1:
            continue
        values = {}
        for p in agent_names(case.ruleset):
            if p == "random":
                continue
            pol = make_agent(case.ruleset, p, case.scenario)
            values[p] = solve(ex.root, 0, {0: pol}, key=ex.key, num_actions=ex.num_actions).value[0]
        print(case.name, {k: round(v, 4) for k, v in values.items()})
        assert max(values, key=lambda p: values[p]) == case.base, values


# ------------------------------------------------------------------------------------------------
# Must show: a base persona with a deliberately bad fallback
# ------------------------------------------------------------------------------------------------
ONE_OBSTACLE = Case("blackbird", "session", "bad_greedy", 64, 0, (("session.obstacles_per_session", 1),))


class WorstFallback:
    """``greedy`` with the worst possible fallback: when its choice is masked out (restricted play), it plays
    the allowed action of the lowest exact value (by the unrestricted solve) — the persona the old restricted
    play would have measured instead of the option."""

    name = "bad_greedy"

    def __init__(self, values: SolveResult) -> None:
        self.inner = make_agent("blackbird", "greedy", "session")
        self.values = values

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        state = getattr(state, "inner", state)  # a RestrictedState view hands the engine state over
        legal = state.legal_actions()
        full = np.zeros(max(len(mask), max(legal) + 1), dtype=bool)
        full[legal] = True
        a = int(self.inner.act(state, full, rng))
        if a < len(mask) and mask[a]:
            return a
        q = self.values.action_values(state)
        allowed = [int(x) for x in np.flatnonzero(mask)]
        return min(allowed, key=lambda x: (q.get(x, 0.0), x))


def test_bad_fallback_base_measures_the_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 17's must-show: forbidding 'spend all pool dice' in the one-obstacle small session. The bare
    persona under the restriction measures its fallback (far from the exact change); the pipeline's verdict
    stage, whose subject is the search over that same persona, measures the option's exact worth."""
    from agents import registry
    from training.runner import forget_agent

    case = ONE_OBSTACLE
    ex = exact(case)
    free = solve(ex.root, 0, key=ex.key, num_actions=ex.num_actions)
    bad = WorstFallback(free)
    group = "spend_all_pool"
    restriction = Restriction("forbid", group)
    truth = ex.value(0, restriction) - free.value[0]
    bare_free = solve(ex.root, 0, {0: bad}, key=ex.key, num_actions=ex.num_actions).value[0]
    view = RestrictedState(ex.root, 0, restriction)
    bare_forbid = solve(view, 0, {0: bad}, key=ex.key, num_actions=ex.num_actions).value[0]
    bare_change = bare_forbid - bare_free
    assert truth < -0.01  # the option matters
    assert bare_change < truth - 0.2  # the bug being fixed: the bare persona measures its fallback

    plain = registry.personas

    def with_bad(ruleset: str) -> dict[str, Any]:
        table = dict(plain(ruleset))
        if ruleset == "blackbird":
            table["bad_greedy"] = lambda **_: bad
        return table

    monkeypatch.setattr(registry, "personas", with_bad)
    d = discovery(case, tmp_path, simulations=64, deals=40, restrictions=1)
    try:
        sec = stage_verdicts(d, "bad_greedy", groups=[group])
    finally:
        for mode in ("", "#rollout"):
            for name in ("search:bad_greedy@64", "search:bad_greedy@128", f"search:bad_greedy@64#forbid={group}"):
                forget_agent("blackbird", "session", name + mode)
        forget_agent("blackbird", "session", "bad_greedy")
    iv = sec["options"][group]["forbid"]
    print(
        f"forbid {group}: bare persona {bare_change:+.4f}, verdict stage {iv['value']:+.4f} "
        f"[{iv['low']:+.4f}, {iv['high']:+.4f}], exact {truth:+.4f}"
    )
    assert iv["low"] - 1e-9 <= truth <= iv["high"] + 1e-9 or abs(iv["value"] - truth) <= SLACK
    assert abs(iv["value"] - truth) < abs(bare_change - truth) / 4


# ------------------------------------------------------------------------------------------------
# Must show: same seed -> same findings, with the search agent
# ------------------------------------------------------------------------------------------------
def _without_seconds(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _without_seconds(v) for k, v in obj.items() if k != "seconds"}
    if isinstance(obj, list):
        return [_without_seconds(v) for v in obj]
    return obj


def test_same_seed_same_findings(tmp_path: Path) -> None:
    """The verdict stage (search subject, restricted play, strength figures) run twice on the same seed —
    once in this process, once on two worker processes — gives the same findings.json content and sections
    (wall times aside)."""
    from training.discover.pipeline import result_json
    from training.discover.verdicts import strength_certificate

    case = Case("blackbird", "session", "greedy", 8, 0, (("session.obstacles_per_session", 1),))
    out = []
    for workers in (1, 2):
        d = discovery(case, tmp_path / f"w{workers}", simulations=8, deals=8, restrictions=4, workers=workers)
        stage_verdicts(d, case.base)
        strength_certificate(d)
        out.append((json.dumps(result_json(d), sort_keys=True), _without_seconds(d.sections)))
    assert out[0][0] == out[1][0]
    assert json.dumps(out[0][1], sort_keys=True) == json.dumps(out[1][1], sort_keys=True)
    sec = out[0][1]["verdicts"]
    assert sec["subject"].startswith("search:greedy@8") and sec["games"] > 3 * 8
    assert any(r["forbid"] is not None or r["force"] is not None for r in sec["options"].values())


@pytest.mark.slow
def test_exact_exploiter_edge_on_a_game_that_solves(tmp_path: Path) -> None:
    """The best-response edge on a game that solves is exact: the subject against itself gains nothing, and any
    exploiter's edge lies below the exact best response to the subject (the solver optimizing the seat with the
    subject fixed at the other one) minus the subject's self-play, on the same seat schedule."""
    from training.discover.whole import WholeGame

    case = CASES["wicked_age-duel"]
    ex = exact(case)
    d = discovery(case, tmp_path, simulations=16, deals=4, restrictions=1)
    subject = subject_spec(case.base, 16, exact=True)
    whole = WholeGame(d)
    same = whole.edge(subject, subject, 4)
    assert same is not None and same.value == pytest.approx(0.0, abs=1e-12)
    rnd = whole.edge("random", subject, 4)
    assert rnd is not None and rnd.low == rnd.high == rnd.value
    me = whole.agent(subject)
    bound = []
    for seat in range(ex.n):
        others = {s: me for s in range(ex.n) if s != seat}
        best = solve(ex.root, seat, others, key=ex.key, num_actions=ex.num_actions).value[seat]
        selfplay = solve(ex.root, seat, {s: me for s in range(ex.n)}, key=ex.key, num_actions=ex.num_actions)
        bound.append(best - selfplay.value[seat])
    cap = sum(bound[g % ex.n] for g in range(4)) / 4
    print(f"edge of random {rnd.value:+.4f}, best response to the subject {cap:+.4f}")
    assert rnd.value <= cap + 1e-9 and rnd.value < 0

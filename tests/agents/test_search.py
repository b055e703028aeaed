"""The search agent (agents/search.py): masks, restriction inside simulations, determinism, exact reach.

Exact values come from the exact solver (agents/solver.py, an independent oracle: full expectimax over
``chance_outcomes()``), never from the search itself. Monte Carlo values of the search agent are paired
with the solver's optimal policy on the same chance seeds (common random numbers): the search's value is
estimated as the exact optimum plus the mean per-game difference, with a 95% interval from the
differences' spread.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.registry import make_agent
from agents.search import (
    RestrictedState,
    Restriction,
    SearchAgent,
    make_search_agent,
    parse_search_spec,
)
from agents.solver import SolveResult, evaluate_exactly, solve
from envs.core.config import load_config, with_override
from envs.core.dice import Rng, seed_for
from envs.core.game import CHANCE, TERMINAL, State
from envs.core.policy import Policy, legal_mask
from envs.core.registry import get_ruleset
from tests.toy import RULESET as TOY
from tests.toy import Act, PigState

HERE = Path(__file__).parent
BB_SESSION = HERE.parent / "training" / "solve_blackbird_session.toml"
ST_HEIST = HERE.parent / "training" / "solve_storyteller_heist.toml"


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------
def bb_session_root(**sets: Any) -> State:
    """The shipped small blackbird session (tests/training/solve_blackbird_session.toml), one obstacle."""
    rs = get_ruleset("blackbird")
    cfg = with_override(load_config(rs, BB_SESSION), "session.obstacles_per_session", 1)
    for k, v in sets.items():
        cfg = with_override(cfg, k.replace("__", "."), v)
    return rs.new_game(cfg, "session")


def heist_root() -> State:
    """The one-task storyteller heist of tests/training/test_solve.py (virus, 4 turns)."""
    rs = get_ruleset("storyteller")
    cfg = load_config(rs, ST_HEIST)
    cfg = with_override(cfg, "heist.turns", 4)
    cfg = with_override(cfg, "heist.tasks", ["virus"])
    return rs.new_game(cfg, "heist")


def pig_root(target: int = 10, max_turns: int = 8) -> PigState:
    return PigState(TOY.config_model.model_validate({"game": {"target": target, "max_turns": max_turns}}))


def pig_key(s: State) -> Hashable:
    assert isinstance(s, PigState)
    return (tuple(s.scores), s.turn_total, s.to_move, s.turns, s.rolling, s.current_player())


class HoldAt:
    """Pig: roll until the turn total reaches ``k``, then hold (deterministic)."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.name = f"hold_at_{k}"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        inner = getattr(state, "inner", state)
        assert isinstance(inner, PigState)
        want = Act.HOLD if inner.turn_total >= self.k else Act.ROLL
        return int(want) if mask[want] else int(np.flatnonzero(mask)[0])


def play(root: State, policies: list[Policy], seed: int, num_actions: int) -> tuple[list[float], list[int]]:
    """One game from ``root``: chance from its own stream, each seat's policy from its own stream."""
    s = root.clone()
    chance = Rng(seed_for(seed, 0))
    prngs = [Rng(seed_for(seed, 1 + i)) for i in range(s.num_players)]
    actions: list[int] = []
    while (p := s.current_player()) != TERMINAL:
        if p == CHANCE:
            s.apply_chance(s.sample_chance(chance))
            continue
        mask = legal_mask(s, max(num_actions, max(s.legal_actions()) + 1))
        a = policies[p].act(s, mask, prngs[p])
        assert mask[a]
        actions.append(a)
        s.apply_action(a)
    return s.returns(), actions


def paired_value(
    root: State,
    res: SolveResult,
    agent: Policy,
    others: dict[int, Policy],
    games: int,
    num_actions: int,
    seat: int = 0,
    seed: int = 11,
    agent_root: State | None = None,
) -> tuple[float, float]:
    """The agent's value in ``seat`` as (estimate, 95% half-width), paired with the solver's policy.

    Every game is played twice on the same chance stream, once by the agent and once by the solver's
    optimal policy; estimate = exact optimum + mean difference. The agent plays from ``agent_root`` if
    given (the real game, where ``root`` is a restricted view the solver saw).
    """
    opt = res.policy()
    diffs = []
    for g in range(games):
        pa = [others.get(i, agent) for i in range(root.num_players)]
        po = [others.get(i, opt) for i in range(root.num_players)]
        pa[seat], po[seat] = agent, opt
        ra, _ = play(agent_root or root, pa, seed_for(seed, g), num_actions)
        ro, _ = play(root, po, seed_for(seed, g), num_actions)
        diffs.append(ra[seat] - ro[seat])
    d = np.asarray(diffs)
    return res.value[seat] + float(d.mean()), 1.96 * float(d.std(ddof=1)) / np.sqrt(games)


class SpyBase:
    """A base policy that records every (seat, allowed actions) it is asked about, then plays uniformly."""

    name = "spy"

    def __init__(self) -> None:
        self.calls: list[tuple[int, tuple[int, ...], tuple[str | None, ...], tuple[str | None, ...]]] = []

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        allowed = tuple(int(a) for a in np.flatnonzero(mask))
        self.calls.append(
            (
                state.current_player(),
                allowed,
                tuple(state.option_of(a) for a in allowed),
                tuple(state.option_of(a) for a in state.legal_actions()),
            )
        )
        return allowed[int(rng.random() * len(allowed))]


class BadFallback:
    """A persona with a deliberately bad fallback: it plays ``inner`` on the full legal list and, when that
    choice is masked out (restricted play), the lowest allowed action id — in a blackbird spend decision,
    "spend 0 pool dice"."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.name = f"bad-{inner.name}"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        state = getattr(state, "inner", state)  # a RestrictedState view hands the engine state to the persona
        legal = state.legal_actions()
        full = np.zeros(max(len(mask), max(legal) + 1), dtype=bool)
        full[legal] = True
        a = int(self.inner.act(state, full, rng))
        if a < len(mask) and mask[a]:
            return a
        return int(np.flatnonzero(mask)[0])


# ------------------------------------------------------------------------------------------------
# Specs
# ------------------------------------------------------------------------------------------------
def test_spec_grammar() -> None:
    s = parse_search_spec("search")
    assert (s.base, s.simulations, s.restriction, s.opponents) == ("random", 32, None, "base")
    s = parse_search_spec("search:greedy@64")
    assert (s.base, s.simulations) == ("greedy", 64)
    s = parse_search_spec("search:rl:runs/x-1@8#forbid=dodge#maxn")
    assert (s.base, s.simulations, s.restriction, s.opponents) == (
        "rl:runs/x-1",
        8,
        Restriction("forbid", "dodge"),
        "maxn",
    )
    assert parse_search_spec(s.text()) == s
    assert parse_search_spec("search@5#force=parry").restriction == Restriction("force", "parry")
    from envs.core.errors import UserError

    for bad in (
        "search:",
        "search@0",
        "search:greedy#nope",
        "search:search:greedy",
        "searching",
        "search#forbid=a#force=b",
        "search#forbid=",
    ):
        with pytest.raises(UserError):
            parse_search_spec(bad)


def test_built_from_spec_pickles_as_its_spec() -> None:
    agent = make_search_agent("blackbird", "search:greedy@4#forbid=spend_all_pool", "session")
    assert isinstance(agent, SearchAgent) and agent.name == "search:greedy@4#forbid=spend_all_pool"
    again = pickle.loads(pickle.dumps(agent))
    assert isinstance(again, SearchAgent) and again.name == agent.name
    assert again.restriction == Restriction("forbid", "spend_all_pool") and again.simulations == 4
    assert make_search_agent("blackbird", "search@3", "session", force="retry").name == "search:random@3#force=retry"


# ------------------------------------------------------------------------------------------------
# Masks and restriction
# ------------------------------------------------------------------------------------------------
def test_picks_only_masked_in_actions() -> None:
    root = bb_session_root()
    n = 64
    agent = SearchAgent(make_agent("blackbird", "greedy"), 8)
    rng = Rng(3)
    checked = 0
    for g in range(6):
        s = root.clone()
        crng = Rng(100 + g)
        while s.current_player() != TERMINAL:
            if s.current_player() == CHANCE:
                s.apply_chance(s.sample_chance(crng))
                continue
            legal = s.legal_actions()
            mask = legal_mask(s, n)
            if len(legal) > 1:  # mask out a random half (never all) of the legal actions
                drop = [a for a in legal if rng.random() < 0.5][: len(legal) - 1]
                mask[drop] = False
            a = agent.act(s, mask, rng)
            assert mask[a], (a, np.flatnonzero(mask))
            checked += len(legal) > 1
            s.apply_action(a)
    assert checked >= 10


@pytest.mark.parametrize(
    ("mode", "group"), [("forbid", "spend_all_pool"), ("force", "spend_0_pool"), ("force", "spend_some_pool")]
)
def test_restriction_holds_inside_simulations(monkeypatch: pytest.MonkeyPatch, mode: str, group: str) -> None:
    """Every action the restricted seat takes inside the simulations (tree and rollout) obeys the
    restriction, and the base policy is handed the restricted mask."""
    from envs.blackbird.session import SessionState

    applied: list[tuple[str | None, frozenset[str | None]]] = []
    plain = SessionState.apply_action

    def spying(self: SessionState, action: int) -> None:
        applied.append((self.option_of(action), frozenset(self.option_of(a) for a in self.legal_actions())))
        plain(self, action)

    root = bb_session_root()
    s = root.clone()
    rng = Rng(1)
    while s.current_player() == CHANCE:
        s.apply_chance(s.sample_chance(rng))
    assert len(s.legal_actions()) > 1 and s.decision_context() == "trait"
    spy = SpyBase()
    agent = SearchAgent(spy, 64, restriction=Restriction(mode, group))  # type: ignore[arg-type]
    monkeypatch.setattr(SessionState, "apply_action", spying)
    agent.act(s, legal_mask(s, 64), Rng(2))
    monkeypatch.undo()
    met = [(opt, legal) for opt, legal in applied if group in legal and len(legal) > 1]
    assert len(met) >= 20, "the simulations rarely met the restricted option"
    if mode == "forbid":
        assert all(opt != group for opt, _ in met)
    else:
        assert all(opt == group for opt, _ in met)
    spend_calls = [c for c in spy.calls if group in c[3]]
    if group == "spend_0_pool":  # one action is left: it is taken without asking the base
        assert not spend_calls
    else:
        assert spend_calls, "the base was never asked about a decision with the option legal"
    for _seat, _allowed, allowed_opts, _legal in spend_calls:
        assert (group not in allowed_opts) if mode == "forbid" else set(allowed_opts) == {group}
    free = SearchAgent(SpyBase(), 64)  # control: unrestricted, the same simulations use the option
    applied.clear()
    monkeypatch.setattr(SessionState, "apply_action", spying)
    free.act(s, legal_mask(s, 64), Rng(2))
    monkeypatch.undo()
    met = [opt for opt, legal in applied if group in legal and len(legal) > 1]
    assert any(o == group for o in met) and any(o != group for o in met)


def test_a_group_masked_out_at_the_root_is_forbidden_in_the_simulations(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's RestrictedPolicy masks a group out at the root only; the search carries it into the
    simulations of that decision (a retry after a failure meets the same group again)."""
    from envs.blackbird.session import SessionState

    s = bb_session_root(pool__start=4).clone()
    rng = Rng(4)
    while not (s.current_player() == 0 and s.decision_context().startswith("spend")):
        if s.current_player() == CHANCE:
            s.apply_chance(s.sample_chance(rng))
        else:
            s.apply_action(s.legal_actions()[-1] if s.decision_context() == "help" else s.legal_actions()[0])
    group = "spend_all_pool"
    mask = legal_mask(s, 64)
    for a in s.legal_actions():
        if s.option_of(a) == group:
            mask[a] = False
    applied: list[tuple[str | None, frozenset[str | None]]] = []
    plain = SessionState.apply_action

    def spying(self: SessionState, action: int) -> None:
        applied.append((self.option_of(action), frozenset(self.option_of(a) for a in self.legal_actions())))
        plain(self, action)

    monkeypatch.setattr(SessionState, "apply_action", spying)
    a = SearchAgent(SpyBase(), 128).act(s, mask, Rng(5))
    monkeypatch.undo()
    assert mask[a]
    met = [opt for opt, legal in applied if group in legal and len(legal) > 1]
    assert len(met) > 128 and group not in met  # the root and every retry's spend in the simulations


def test_restricted_state_view() -> None:
    """The view drops the forbidden group for its seat only, refuses it, and passes everything else through."""
    base = pig_root()
    v = RestrictedState(base.clone(), 1, Restriction("forbid", "roll"))
    assert v.current_player() == 0 and v.legal_actions() == [Act.ROLL, Act.HOLD]
    v.apply_action(Act.HOLD)
    assert v.current_player() == 1 and v.legal_actions() == [Act.HOLD]
    from envs.core.game import IllegalActionError

    with pytest.raises(IllegalActionError):
        v.apply_action(Act.ROLL)
    c = v.clone()
    assert isinstance(c, RestrictedState) and c.legal_actions() == [Act.HOLD] and c.inner is not v.inner
    assert v.scores == [0, 0] and v.turns == 1  # engine attributes read through
    f = RestrictedState(base.clone(), 0, Restriction("force", "hold"))
    assert f.legal_actions() == [Act.HOLD]


def test_restricted_solve_matches_hand_computation() -> None:
    """Pig to 2 with a d2 forced to hold at once: seat 0 banks nothing each turn, seat 1 plays optimally;
    with the view, the solver finds seat 0 cannot win: value -P(seat 1 wins within the turn limit)."""
    root = PigState(TOY.config_model.model_validate({"game": {"target": 2, "die_sides": 2, "max_turns": 2}}))
    v = RestrictedState(root, 0, Restriction("force", "hold"))
    res = solve(v, 0, key=lambda s: pig_key(s.inner))  # type: ignore[attr-defined]
    # seat 0 holds 0; seat 1 rolls once: a 2 (p 1/2) wins, a 1 ends the turn and the game (2 turns) drawn
    assert res.value[0] == pytest.approx(-0.5, abs=1e-12)
    free = solve(root, 0, key=pig_key)
    # unrestricted, seat 0 rolls: a 2 (p 1/2) wins at once; a 1 passes to seat 1, who wins with p 1/2, else a draw
    assert free.value[0] == pytest.approx(0.5 * 1 + 0.5 * (0.5 * -1 + 0.5 * 0), abs=1e-12)


# ------------------------------------------------------------------------------------------------
# Determinism
# ------------------------------------------------------------------------------------------------
def test_same_seed_same_actions_and_game() -> None:
    rs = get_ruleset("storyteller")
    cfg = rs.default_config()
    n = rs.scenario("duel").action_count(cfg)
    root = rs.new_game(cfg, "duel")
    a = make_search_agent("storyteller", "search:steady@6", "duel")
    b = pickle.loads(pickle.dumps(a))
    opp = make_agent("storyteller", "spender", "duel")
    g1 = play(root, [a, opp], 5, n)
    g2 = play(root, [b, opp], 5, n)
    g3 = play(root, [a, opp], 5, n)
    assert g1 == g2 == g3 and len(g1[1]) > 5
    s = root.clone()
    while s.current_player() == CHANCE:
        s.apply_chance(s.sample_chance(Rng(0)))
    mask = legal_mask(s, n)
    picks = {a.act(s, mask, Rng(42)) for _ in range(3)}
    assert len(picks) == 1


# ------------------------------------------------------------------------------------------------
# Exact reach: the search agent against the exact optimum
# ------------------------------------------------------------------------------------------------
def bb_short_run_root() -> State:
    """The shipped short blackbird run (two obstacles; its exact solve takes about a minute)."""
    rs = get_ruleset("blackbird")
    return rs.new_game(load_config(rs, BB_SESSION), "session")


SLOW_REACH_CASES: dict[str, tuple[Callable[[], State], str, int]] = {
    # case: (root, search spec, games); the bases' own exact values are in the comments
    "storyteller-heist-1-task": (heist_root, "search:spender@128", 200),  # spender 0.920 of 0.971
    # defender 0.891, greedy 0.821 of 0.912 (search:greedy@32 measured 0.840 ± 0.055: 92%, not enough)
    "blackbird-short-run": (bb_short_run_root, "search:defender@32", 100),
}


def _reach(case: tuple[Callable[[], State], str, int]) -> None:
    make_root, spec, games = case
    root = make_root()
    res = solve(root, 0)
    ruleset = "storyteller" if "spender" in spec else "blackbird"
    agent = make_search_agent(ruleset, spec, None)
    value, hw = paired_value(root, res, agent, {}, games, 64)
    opt = res.value[0]
    print(f"exact reach {spec}: {value:.4f} ± {hw:.4f} of {opt:.4f} = {value / opt:.1%}")
    assert value >= 0.97 * opt, (value, hw, opt)


def test_search_lifts_a_weak_base() -> None:
    """Over `hoarder` (exact 0.498 of 0.830 in the one-obstacle session with one pool die) the search gains
    most of the gap at a quick budget."""
    root = bb_session_root(pool__start=1)
    res = solve(root, 0)
    base = make_agent("blackbird", "hoarder")
    bare = evaluate_exactly(root, {0: base}).value[0]
    value, hw = paired_value(root, res, SearchAgent(base, 32), {}, 100, 64)
    print(f"hoarder {bare:.4f} -> search:hoarder@32 {value:.4f} ± {hw:.4f} of {res.value[0]:.4f}")
    assert value - hw > bare + 0.1


@pytest.mark.slow
@pytest.mark.parametrize("case", list(SLOW_REACH_CASES))
def test_exact_reach_single_seat(case: str) -> None:
    """The search agent over a persona reaches >= 97% of the exact optimum (estimate paired with the solver's
    policy on the same chance seeds; the 95% half-width is printed)."""
    _reach(SLOW_REACH_CASES[case])


@pytest.mark.slow
def test_exact_reach_pig_against_its_base() -> None:
    """Two-seat Pig to 6 (6 turns) against `hold at 3`: the search over the same policy (opponent modelled
    by its base) against the solver's exact best response to that opponent, on the win-probability scale
    (return + 1) / 2. The base alone wins 0.676 of the optimum's 0.879. (On Pig to 8 the search at 128-256
    simulations reaches about 95%: the rollouts' continuation is the weak base and the tree is shallow.)"""
    root = pig_root(target=6, max_turns=6)
    opp = HoldAt(3)
    res = solve(root, 0, {1: opp}, key=pig_key)
    agent = SearchAgent(HoldAt(3), 128)
    value, hw = paired_value(root, res, agent, {1: opp}, 200, 2)
    opt = (res.value[0] + 1) / 2
    print(f"exact reach pig: {(value + 1) / 2:.4f} ± {hw / 2:.4f} of {opt:.4f} (win-probability scale)")
    assert (value + 1) / 2 >= 0.97 * opt, (value, hw, res.value[0])


# ------------------------------------------------------------------------------------------------
# Restricted play over a persona with a bad fallback
# ------------------------------------------------------------------------------------------------
def test_bad_fallback_base_still_measures_the_option() -> None:
    """Forbidding 'spend all pool dice' in the one-obstacle session: the bare persona with a bad fallback
    then spends nothing (far below the exact restricted optimum); the search over the same persona, under
    the same restriction, lands on the exact restricted optimum computed by the solver through the view."""
    root = bb_session_root()
    group = "spend_all_pool"
    restriction = Restriction("forbid", group)
    view = RestrictedState(root, 0, restriction)
    exact = solve(view, 0)
    bad = BadFallback(make_agent("blackbird", "greedy"))
    bare = evaluate_exactly(view, {0: bad}).value[0]
    free = solve(root, 0).value[0]
    assert exact.value[0] < free - 0.01  # the option matters
    assert bare < exact.value[0] - 0.2  # the bug being fixed: the bare persona measures its fallback
    agent = SearchAgent(bad, 64, restriction=restriction)
    value, hw = paired_value(view, exact, agent, {}, 100, 64, agent_root=root)
    print(f"forbid {group}: bare {bare:.4f}, search {value:.4f} ± {hw:.4f}, exact restricted {exact.value[0]:.4f}")
    assert abs(value - exact.value[0]) <= max(hw, 0.02), (value, hw, exact.value[0], bare)


# ------------------------------------------------------------------------------------------------
# Search against its base on shipped scenarios
# ------------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    ("ruleset", "scenario", "base", "games"),
    [("storyteller", "duel", "steady", 100), ("hallownest", "duel", "balanced", 40)],
)
def test_search_beats_or_ties_its_base(ruleset: str, scenario: str, base: str, games: int) -> None:
    """Seat 0 played by search:<base>@16 against <base>, paired with <base> against <base> on the same seeds:
    the search's mean return is not below the base's (beyond the 95% interval of the paired difference)."""
    rs = get_ruleset(ruleset)
    cfg = rs.default_config()
    n = rs.scenario(scenario).action_count(cfg)
    root = rs.new_game(cfg, scenario)
    b = make_agent(ruleset, base, scenario)
    agent = make_search_agent(ruleset, f"search:{base}@16", scenario)
    diffs = []
    for g in range(games):
        ra, _ = play(root, [agent, b], seed_for(7, g), n)
        rb, _ = play(root, [b, b], seed_for(7, g), n)
        diffs.append(ra[0] - rb[0])
    d = np.asarray(diffs)
    hw = 1.96 * float(d.std(ddof=1)) / np.sqrt(games)
    print(f"{ruleset} {scenario}: search:{base}@16 - {base} = {d.mean():+.3f} ± {hw:.3f} (seat 0, {games} games)")
    assert d.mean() >= -hw


def test_hallownest_duel_without_dodge_the_search_parries() -> None:
    """Issue 17's must-show, in miniature: with dodge forbidden, `flurry` on its own takes every hit
    undefended (its fallback), while the search over `flurry` under the same restriction parries, and its
    games go better on the same seeds."""
    from training.runner import RestrictedPolicy

    rs = get_ruleset("hallownest")
    cfg = rs.default_config()
    n = rs.scenario("duel").action_count(cfg)
    root = rs.new_game(cfg, "duel")
    opp = make_agent("hallownest", "flurry", "duel")
    GAMES = 20  # noqa: N806
    subjects = {
        "bare": RestrictedPolicy(make_agent("hallownest", "flurry", "duel"), "dodge"),
        "search": make_search_agent("hallownest", "search:flurry@16#forbid=dodge", "duel"),
    }
    counts: dict[str, dict[str | None, int]] = {}
    means: dict[str, float] = {}
    for name, subject in subjects.items():
        seen: dict[str | None, int] = {}
        total = 0.0
        for g in range(GAMES):
            s = root.clone()
            chance = Rng(seed_for(3, g, 0))
            prngs = [Rng(seed_for(3, g, 1)), Rng(seed_for(3, g, 2))]
            while (p := s.current_player()) != TERMINAL:
                if p == CHANCE:
                    s.apply_chance(s.sample_chance(chance))
                    continue
                a = (subject if p == 0 else opp).act(s, legal_mask(s, n), prngs[p])
                if p == 0 and s.decision_context() == "defense":
                    seen[s.option_of(a)] = seen.get(s.option_of(a), 0) + 1
                s.apply_action(a)
            total += s.returns()[0]
        counts[name], means[name] = seen, total / GAMES
    print(f"dodge forbidden: {counts} mean return {means}")
    assert "dodge" not in counts["bare"] and "dodge" not in counts["search"]
    assert counts["bare"].get("parry", 0) == 0 and counts["bare"].get("no_defense", 0) > GAMES  # the fallback
    assert counts["search"].get("parry", 0) >= GAMES // 2
    assert means["search"] > means["bare"]

"""The rollout mode of the search agent (agents/rollout.py, ``search:<base>@<n>#rollout``).

Exact values come from the exact solver (agents/solver.py), never from the agent. The helpers (seeded games,
paired values, a spying base, a persona with a bad fallback) are those of tests/agents/test_search.py.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from agents.registry import make_agent
from agents.rollout import RolloutAgent
from agents.search import RestrictedState, Restriction, make_search_agent, parse_search_spec
from agents.solver import evaluate_exactly, solve
from envs.core.dice import Rng, seed_for
from envs.core.errors import UserError
from envs.core.game import CHANCE, TERMINAL, State
from envs.core.policy import legal_mask
from envs.core.registry import get_ruleset
from tests.agents.test_search import BadFallback, SpyBase, bb_session_root, paired_value, play


def _first_decision(root: State, seed: int = 1) -> State:
    s = root.clone()
    rng = Rng(seed)
    while s.current_player() == CHANCE:
        s.apply_chance(s.sample_chance(rng))
    return s


def test_spec_and_pickle() -> None:
    s = parse_search_spec("search:greedy@48#forbid=dodge#rollout")
    assert (s.base, s.simulations, s.mode, s.restriction) == ("greedy", 48, "rollout", Restriction("forbid", "dodge"))
    assert s.text() == "search:greedy@48#forbid=dodge#rollout"
    assert parse_search_spec("search:greedy@48").mode == "mcts"
    assert parse_search_spec("search:greedy@48#exact#rollout").text() == "search:greedy@48#rollout#exact"
    assert make_search_agent("blackbird", "search:greedy@8#rollout#exact", "session").exact  # type: ignore[attr-defined]
    with pytest.raises(UserError):
        parse_search_spec("search:greedy@8#exact")
    with pytest.raises(UserError):
        parse_search_spec("search:greedy@8#rollout#maxn")
    a = make_search_agent("blackbird", "search:greedy@8#rollout", "session", forbid="spend_all_pool")
    assert isinstance(a, RolloutAgent) and a.name == "search:greedy@8#forbid=spend_all_pool#rollout"
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b, RolloutAgent) and b.name == a.name and b.restriction == a.restriction
    assert isinstance(make_agent("blackbird", "search:greedy@8#rollout", "session"), RolloutAgent)


def test_picks_only_masked_in_actions_and_is_deterministic() -> None:
    root = bb_session_root()
    rng = np.random.default_rng(0)
    agent = make_search_agent("blackbird", "search:greedy@8#rollout", "session")
    checked = 0
    for g in range(6):
        s = _first_decision(root, g)
        while (p := s.current_player()) != TERMINAL:
            if p == CHANCE:
                s.apply_chance(s.sample_chance(Rng(seed_for(g, checked))))
                continue
            legal = s.legal_actions()
            mask = legal_mask(s, 64)
            if len(legal) > 2:
                for a in rng.choice(legal, size=len(legal) // 2, replace=False):
                    mask[a] = False
            a = agent.act(s, mask, Rng(seed_for(9, checked)))
            assert mask[a]
            assert a == agent.act(s, mask, Rng(seed_for(9, checked)))  # same rng state, same action
            checked += 1
            s.apply_action(a)
    assert checked >= 10


@pytest.mark.parametrize(("mode", "group"), [("forbid", "spend_all_pool"), ("force", "spend_some_pool")])
def test_restriction_holds_inside_the_playouts(monkeypatch: pytest.MonkeyPatch, mode: str, group: str) -> None:
    """Every action of the restricted seat inside the playouts obeys the restriction, the base is handed the
    restricted mask in the playouts, and the unrestricted control uses the option in the same playouts."""
    from envs.blackbird.session import SessionState

    applied: list[tuple[str | None, frozenset[str | None]]] = []
    plain = SessionState.apply_action

    def spying(self: SessionState, action: int) -> None:
        applied.append((self.option_of(action), frozenset(self.option_of(a) for a in self.legal_actions())))
        plain(self, action)

    s = _first_decision(bb_session_root())
    assert len(s.legal_actions()) > 1
    spy = SpyBase()
    agent = RolloutAgent(spy, 32, restriction=Restriction(mode, group))  # type: ignore[arg-type]
    monkeypatch.setattr(SessionState, "apply_action", spying)
    agent.act(s, legal_mask(s, 64), Rng(2))
    monkeypatch.undo()
    met = [opt for opt, legal in applied if group in legal and len(legal) > 1]
    assert len(met) >= 20
    assert all((o != group) if mode == "forbid" else (o == group) for o in met)
    # the base's calls with the option legal, after the root's one unrestricted question
    asked = [c for c in spy.calls[1:] if group in c[3]]
    assert asked and all((group not in c[2]) if mode == "forbid" else set(c[2]) == {group} for c in asked)
    free = RolloutAgent(SpyBase(), 32)
    applied.clear()
    monkeypatch.setattr(SessionState, "apply_action", spying)
    free.act(s, legal_mask(s, 64), Rng(2))
    monkeypatch.undo()
    met = [opt for opt, legal in applied if group in legal and len(legal) > 1]
    assert any(o == group for o in met) and any(o != group for o in met)


class Constant:
    """A base that always plays the highest allowed action id (deterministic)."""

    name = "last"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        return int(np.flatnonzero(mask)[-1])


def test_keeps_the_base_choice_unless_the_edge_is_clear() -> None:
    """With one playout's worth of budget per action the paired test cannot show an edge above noise on
    most decisions: the agent then plays its base's own choice; with the base's choice masked out it never
    does (there is no default), and it picks the best estimate."""
    s = _first_decision(bb_session_root(pool__start=4))
    rng = Rng(4)
    while s.current_player() == CHANCE or len(s.legal_actions()) < 3:
        s.apply_chance(s.sample_chance(rng)) if s.current_player() == CHANCE else s.apply_action(s.legal_actions()[-1])
    agent = RolloutAgent(Constant(), 4, z=1e9, exact=False)  # sampled; an edge is never clear: the base's choice
    legal = s.legal_actions()
    assert agent.act(s, legal_mask(s, 64), Rng(3)) == max(legal)
    mask = legal_mask(s, 64)
    mask[max(legal)] = False
    a = agent.act(s, mask, Rng(3))
    assert mask[a]
    values = agent.last.root_values
    assert values is not None and values[a] == max(values.values())


def test_exact_values_are_the_solvers_values_of_the_base_continuation() -> None:
    """Where the base's continuation fits the budget, ``Q(s, a)`` is exact: for every action at the first
    decisions of the small session, the solver's exact value of (the action, then the base) — an independent
    expectimax over the same engine — and the agent plays the argmax, the base's own choice on a tie."""
    greedy = make_agent("blackbird", "greedy")
    agent = RolloutAgent(greedy, 64, exact=True)
    s = _first_decision(bb_session_root(), 3)
    checked = 0
    while (p := s.current_player()) != TERMINAL and checked < 4:
        if p == CHANCE:
            s.apply_chance(s.sample_chance(Rng(checked)))
            continue
        legal = s.legal_actions()
        a = agent.act(s, legal_mask(s, 64), Rng(5))
        if len(legal) > 1:
            q, visits = agent.last.root_values, agent.last.root_visits
            assert q is not None and visits is not None and set(q) == set(legal)
            assert not any(visits.values())  # no playouts
            for b in legal:
                child = s.clone()
                child.apply_action(b)
                assert q[b] == pytest.approx(evaluate_exactly(child, {0: greedy}).value[0], abs=1e-9)
            own = greedy.act(s, legal_mask(s, 64), Rng(0))
            assert q[a] == max(q.values()) and (a == own or q[a] > q[own] + 1e-12)
            checked += 1
        s.apply_action(a)
    assert checked >= 2


def test_two_exact_steps_lie_between_the_base_continuation_and_the_optimum() -> None:
    """``#steps=2``: the values of the exact evaluation are those of the one-step improvement's continuation, so
    by the policy improvement theorem (Howard 1960) each lies between the base's continuation (the solver's
    exact evaluation of the base) and the optimum (the solver's best response); the spec round-trips and
    ``#steps=`` needs ``#rollout#exact``."""
    spec = parse_search_spec("search:greedy@64#rollout#exact#steps=2")
    assert spec.steps == 2 and spec.text() == "search:greedy@64#rollout#exact#steps=2"
    assert parse_search_spec("search:g@8#z=2#rollout").text() == "search:g@8#rollout#z=2"
    assert make_search_agent("blackbird", "search:greedy@8#rollout#z=2.5", "session").z == 2.5  # type: ignore[attr-defined]
    for bad in (
        "search:greedy@8#rollout#steps=2",
        "search:greedy@8#rollout#exact#steps=0",
        "search:g#steps=x",
        "search:g@8#z=2",
        "search:g@8#rollout#z=-1",
    ):
        with pytest.raises(UserError):
            parse_search_spec(bad)
    base = make_agent("blackbird", "random")  # a weak base: its one-step improvement is not yet the optimum
    agent = make_search_agent("blackbird", "search:random@64#rollout#exact#steps=2", "session")
    assert isinstance(agent, RolloutAgent) and agent.steps == 2
    s = _first_decision(bb_session_root(), 3)
    checked = above = 0
    while (p := s.current_player()) != TERMINAL and checked < 3:
        if p == CHANCE:
            s.apply_chance(s.sample_chance(Rng(checked)))
            continue
        legal = s.legal_actions()
        a = agent.act(s, legal_mask(s, 64), Rng(5))
        if len(legal) > 1:
            q, visits = agent.last.root_values, agent.last.root_visits
            assert q is not None and visits is not None and not any(visits.values())
            assert agent.last_level == 1
            best = solve(s, 0, {}).action_values(s)
            for b in legal:
                child = s.clone()
                child.apply_action(b)
                v0 = evaluate_exactly(child, {0: base}).value[0]
                assert v0 - 1e-9 <= q[b] <= best[b] + 1e-9
                above += q[b] > v0 + 1e-9
            checked += 1
        s.apply_action(a)
    assert checked >= 2 and above >= 1  # the second step saw something the base's continuation did not


def test_falls_back_to_playouts_when_exact_does_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a budget of one position per playout the exact evaluation of the session's first decision does not
    fit: the agent samples (playouts per action in ``last``), and its choice is the same for the same rng."""
    import agents.rollout

    monkeypatch.setattr(agents.rollout, "EXACT_NODES_PER_PLAYOUT", 1)
    s = _first_decision(bb_session_root(), 3)
    agent = RolloutAgent(make_agent("blackbird", "greedy"), 1, exact=True)
    a = agent.act(s, legal_mask(s, 64), Rng(5))
    visits = agent.last.root_visits
    assert visits is not None and all(v >= 2 for v in visits.values())
    assert a == agent.act(s, legal_mask(s, 64), Rng(5))


def test_bad_fallback_base_measures_the_option() -> None:
    """Issue 17's must-show for the rollout mode: forbidding 'spend all pool dice' in the one-obstacle session,
    over a persona whose fallback spends nothing, lands on the exact restricted optimum (solver on the view)."""
    root = bb_session_root()
    restriction = Restriction("forbid", "spend_all_pool")
    view = RestrictedState(root, 0, restriction)
    exact = solve(view, 0)
    bad = BadFallback(make_agent("blackbird", "greedy"))
    bare = evaluate_exactly(view, {0: bad}).value[0]
    assert bare < exact.value[0] - 0.2
    agent = RolloutAgent(bad, 32, restriction=restriction)
    value, hw = paired_value(view, exact, agent, {}, 40, 64, agent_root=root)
    print(f"forbid spend_all_pool: bare {bare:.4f}, rollout {value:.4f} ± {hw:.4f}, exact {exact.value[0]:.4f}")
    assert abs(value - exact.value[0]) <= max(hw, 0.02), (value, hw, exact.value[0], bare)


def test_hallownest_duel_without_dodge_the_rollout_parries() -> None:
    """Issue 17's must-show: with dodge forbidden, `flurry` alone never parries (its fallback is no defence);
    the rollout agent over `flurry` under the same restriction parries, and its games go better."""
    from training.runner import RestrictedPolicy

    rs = get_ruleset("hallownest")
    cfg = rs.default_config()
    n = rs.scenario("duel").action_count(cfg)
    root = rs.new_game(cfg, "duel")
    opp = make_agent("hallownest", "flurry", "duel")
    games = 12
    subjects = {
        "bare": RestrictedPolicy(make_agent("hallownest", "flurry", "duel"), "dodge"),
        "rollout": make_search_agent("hallownest", "search:flurry@16#forbid=dodge#rollout", "duel"),
    }
    counts: dict[str, dict[str | None, int]] = {}
    means: dict[str, float] = {}
    for name, subject in subjects.items():
        seen: dict[str | None, int] = {}
        total = 0.0
        for g in range(games):
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
        counts[name], means[name] = seen, total / games
    print(f"dodge forbidden: {counts} mean return {means}")
    assert "dodge" not in counts["rollout"]
    assert counts["bare"].get("parry", 0) == 0
    assert counts["rollout"].get("parry", 0) >= games // 2
    assert means["rollout"] >= means["bare"]


def test_same_seed_same_game() -> None:
    rs = get_ruleset("storyteller")
    cfg = rs.default_config()
    n = rs.scenario("duel").action_count(cfg)
    root = rs.new_game(cfg, "duel")
    a = make_search_agent("storyteller", "search:steady@6#rollout", "duel")
    b = pickle.loads(pickle.dumps(a))
    opp = make_agent("storyteller", "spender", "duel")
    assert play(root, [a, opp], 5, n) == play(root, [b, opp], 5, n) == play(root, [a, opp], 5, n)

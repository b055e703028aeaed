"""The whole-game exact rollout agent (``search:<base>@<n>#rollout#exact#whole#steps=<k>``, agents/rollout.py).

Oracles: the exact solver (agents/solver.py) — :func:`agents.solver.evaluate_exactly` walks the game tree and
asks the agent for its move at every position, so it computes the value of the agent's actual play
independently of the agent's own evaluation; :func:`agents.solver.solve` gives the optimum the agent may not
exceed. Games use the one-obstacle small blackbird session of tests/agents/test_search.py.
"""

from __future__ import annotations

import pickle

import pytest

from agents.registry import make_agent
from agents.rollout import RolloutAgent
from agents.search import RestrictedState, Restriction, make_search_agent, parse_search_spec
from agents.solver import evaluate_exactly, solve
from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from tests.agents.test_search import bb_session_root, play

SPEC = "search:greedy@4#rollout#exact#whole#steps=2"


def _actions() -> int:
    rs = get_ruleset("blackbird")
    return rs.scenario("session").action_count(bb_session_root().cfg)  # type: ignore[attr-defined]


def test_whole_spec() -> None:
    s = parse_search_spec("search:greedy@4#whole#rollout#exact")
    assert s.whole and s.exact and s.text() == "search:greedy@4#rollout#exact#whole"
    with pytest.raises(UserError, match="#whole is an option of #rollout#exact"):
        parse_search_spec("search:greedy@4#rollout#whole")
    a = make_search_agent("blackbird", SPEC, "session", forbid="spend_all_pool")
    assert isinstance(a, RolloutAgent) and a.whole and a.steps == 2
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b, RolloutAgent) and b.whole and b.name == a.name


@pytest.mark.parametrize("forbid", [None, "spend_all_pool", "use_trait"])
def test_exact_value_is_the_value_of_its_own_play(forbid: str | None) -> None:
    """``exact_value`` equals the solver's evaluation of the agent's moves, lies between the base and the
    (restricted) optimum, and the base's value equals the solver's evaluation of the base."""
    root = bb_session_root()
    n = _actions()
    agent = make_search_agent("blackbird", SPEC, "session", forbid=forbid)
    assert isinstance(agent, RolloutAgent)
    v = agent.exact_value(root, 0, n)
    vb = agent.exact_value(root, 0, n, base=True)
    assert v is not None and vb is not None
    played = evaluate_exactly(root, {0: agent}, 0).value[0]
    assert v == pytest.approx(played, abs=1e-9)
    view = root if forbid is None else RestrictedState(root, 0, Restriction("forbid", forbid))
    optimum = solve(view, 0, num_actions=n).value[0]
    assert vb - 1e-9 <= v <= optimum + 1e-9
    if forbid is None:
        greedy = make_agent("blackbird", "greedy", "session")
        assert vb == pytest.approx(evaluate_exactly(root, {0: greedy}, 0).value[0], abs=1e-9)


def test_play_does_not_depend_on_the_games_before() -> None:
    """The kept values change only the cost: a game played after others equals the same game played first."""
    root = bb_session_root()
    n = _actions()
    warm = make_search_agent("blackbird", SPEC, "session")
    for seed in (3, 4, 5):
        play(root, [warm], seed, n)
    after = play(root, [warm], 9, n)
    first = play(root, [make_search_agent("blackbird", SPEC, "session")], 9, n)
    assert after == first


def test_equal_rules_share_values_and_other_rules_do_not() -> None:
    """Values are kept per rules: a copy of the same config reuses them, a changed rule gets its own."""
    agent = make_search_agent("blackbird", SPEC, "session")
    assert isinstance(agent, RolloutAgent)
    n = _actions()
    a = bb_session_root()
    v = agent.exact_value(a, 0, n)
    copy = bb_session_root()
    assert copy.cfg is not a.cfg  # type: ignore[attr-defined]
    assert agent.exact_value(copy, 0, n) == v
    assert len({id(stores) for _, stores in agent._stores.values()}) == 1
    other = bb_session_root(session__obstacles_per_session=2)
    w = agent.exact_value(other, 0, n)
    assert w is not None and len({id(stores) for _, stores in agent._stores.values()}) == 2
    assert w == pytest.approx(evaluate_exactly(other, {0: agent}, 0).value[0], abs=1e-9)

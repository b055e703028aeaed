"""The exact solver against independent oracles: a separately written recursive Pig solution, an
analytic cyclic game, zero-sum symmetry, and sampled play of the solver's own policy."""

from __future__ import annotations

from collections.abc import Hashable
from fractions import Fraction
from functools import cache

import numpy as np
import pytest

from agents.solver import TooLargeError, estimate_states, evaluate_exactly, solve
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, State
from envs.core.play import advance
from envs.core.policy import legal_mask
from tests.toy import Act, PigConfig, PigRules, PigState


class KeyedPig(PigState):
    """The toy Pig with a canonical key (the toy itself has none)."""

    def key(self) -> Hashable:
        return (tuple(self.scores), self.turn_total, self.to_move, self.turns, self.rolling, self._outcome is not None)


def pig(target: int, max_turns: int, sides: int = 6) -> KeyedPig:
    return KeyedPig(PigConfig(game=PigRules(target=target, max_turns=max_turns, die_sides=sides)))


def pig_oracle(
    target: int, max_turns: int, sides: int = 6, opponent_hold_at: int | None = None, opponent_uniform: bool = False
):
    """Independent recursive solution of the toy Pig, in exact fractions, from the rules text.

    Returns value(me, opp, turn_total, turns, mover_is_seat0) = expected return of seat 0. Seat 0
    maximises; seat 1 either minimises (zero-sum optimal) or holds once its turn total reaches
    ``opponent_hold_at`` (a fixed persona), or (``opponent_uniform``) rolls or holds with probability 1/2 each.
    """
    inv = Fraction(1, sides)

    @cache
    def v(s0: int, s1: int, tt: int, turns: int, mover: int) -> Fraction:
        def end_turn(n0: int, n1: int) -> Fraction:
            if turns + 1 >= max_turns:
                return Fraction(0)
            return v(n0, n1, 0, turns + 1, 1 - mover)

        mine = s0 if mover == 0 else s1
        win = Fraction(1) if mover == 0 else Fraction(-1)
        roll = inv * end_turn(s0, s1)
        for f in range(2, sides + 1):
            roll += inv * (win if mine + tt + f >= target else v(s0, s1, tt + f, turns, mover))
        hold = end_turn(s0 + tt, s1) if mover == 0 else end_turn(s0, s1 + tt)
        if mover == 0:
            return max(roll, hold)
        if opponent_hold_at is not None:
            return hold if tt >= opponent_hold_at else roll
        if opponent_uniform:
            return (roll + hold) / 2
        return min(roll, hold)

    return v


class HoldAt:
    """Pig persona: roll until the turn total reaches ``n``, then hold."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.name = f"hold-at-{n}"

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        assert isinstance(state, PigState)
        return int(Act.HOLD if state.turn_total >= self.n else Act.ROLL)


@pytest.mark.parametrize(("target", "turns", "sides"), [(4, 6, 6), (6, 10, 6), (8, 8, 4), (5, 12, 3)])
def test_pig_value_matches_recursive_oracle(target: int, turns: int, sides: int) -> None:
    res = solve(pig(target, turns, sides), seat=0)
    exact = pig_oracle(target, turns, sides)(0, 0, 0, 0, 0)
    assert res.acyclic
    assert res.value[0] == pytest.approx(float(exact), abs=1e-12)
    assert res.value[1] == pytest.approx(-float(exact), abs=1e-12)  # zero-sum


def test_pig_against_fixed_persona_matches_oracle() -> None:
    res = solve(pig(8, 10), seat=0, opponents={1: HoldAt(3)})
    exact = pig_oracle(8, 10, opponent_hold_at=3)(0, 0, 0, 0, 0)
    assert res.value[0] == pytest.approx(float(exact), abs=1e-12)
    assert res.fixed == {1: "hold-at-3"}
    assert res.stochastic_fixed_nodes == 0


def test_uniform_random_opponent_is_exact_and_terminals_merge() -> None:
    """``random`` is evaluated as the uniform distribution over the legal actions, not from probes; finished
    games are merged by their returns (Pig ends in a win, a loss or a draw: three terminal nodes)."""
    from envs.core.policy import UniformRandom

    res = solve(pig(6, 6), seat=0, opponents={1: UniformRandom()})
    exact = pig_oracle(6, 6, opponent_uniform=True)(0, 0, 0, 0, 0)
    assert res.value[0] == pytest.approx(float(exact), abs=1e-12)
    assert res.stochastic_fixed_nodes == 0  # nothing was estimated
    terminals = [k for k in res._index if k[0] == "terminal"]
    assert sorted(k[1] for k in terminals) == [(-1.0, 1.0), (0.0, 0.0), (1.0, -1.0)]
    assert all(res._nodes[res._index[k]].player == TERMINAL for k in terminals)


def test_every_decision_value_matches_oracle() -> None:
    """Not only the root: the action values at every reachable decision agree with the oracle."""
    target, turns = 6, 8
    res = solve(pig(target, turns), seat=0)
    oracle = pig_oracle(target, turns)
    checked = 0
    for key, idx in res._index.items():
        if key[0] == "terminal":  # finished games are merged by their returns
            continue
        (s0, s1), tt, mover, t, rolling, over = key
        if over or rolling or mover != 0:
            continue
        state = res.replay(idx)
        assert state.key() == key
        best = res.best_action(state)
        q = res.action_values(state)
        assert max(q.values()) == pytest.approx(float(oracle(s0, s1, tt, t, 0)), abs=1e-12)
        assert q[best] == max(q.values())
        checked += 1
    assert checked > 100


def test_seat_symmetry_first_mover_advantage() -> None:
    """Pig favours the first mover: seat 0's optimal value is positive and equals seat 1's loss."""
    res = solve(pig(6, 12), seat=1)
    assert res.value[1] < 0 < res.value[0]
    assert res.value[0] == pytest.approx(-res.value[1], abs=1e-12)
    assert 1 - res.win_probability > 0.5  # reported for seat 1: it wins less than half


def test_solver_policy_plays_to_its_value() -> None:
    """Sampled games of the optimal policy against the persona land within 4 SE of the exact value."""
    root = pig(8, 10)
    res = solve(root, seat=0, opponents={1: HoldAt(3)})
    pol = res.policy()
    persona = HoldAt(3)
    rng = Rng(7)
    rets = []
    for _ in range(3000):
        s = root.clone()
        advance(s, rng, [pol, persona], num_actions=2)
        rets.append(s.returns()[0])
    mean, se = float(np.mean(rets)), float(np.std(rets) / np.sqrt(len(rets)))
    assert abs(mean - res.value[0]) < 4 * se


def test_policy_outside_the_solved_graph_is_solved_on_the_spot() -> None:
    res = solve(pig(6, 10), seat=0)
    s = pig(6, 10)
    s.scores = [5, 5]  # unreachable from the root in this exact form (turns = 0)
    a = res.policy().act(s, legal_mask(s, 2), Rng(0))
    assert a == Act.ROLL  # any roll but a 1 wins at once; holding 0 hands the opponent the same chance


def test_exact_policy_evaluation_gap() -> None:
    root = pig(8, 10)
    opt = solve(root, 0, {1: HoldAt(3)})
    always_hold_at_2 = evaluate_exactly(root, {0: HoldAt(2), 1: HoldAt(3)})
    exact = pig_oracle(8, 10, opponent_hold_at=3)
    # an independent evaluation of hold-at-2 vs hold-at-3 by recursion over the same rules
    inv = Fraction(1, 6)

    @cache
    def ev(s0: int, s1: int, tt: int, turns: int, mover: int) -> Fraction:
        def end(n0: int, n1: int) -> Fraction:
            return Fraction(0) if turns + 1 >= 10 else ev(n0, n1, 0, turns + 1, 1 - mover)

        mine = s0 if mover == 0 else s1
        if tt >= (2 if mover == 0 else 3):
            return end(s0 + tt, s1) if mover == 0 else end(s0, s1 + tt)
        r = inv * end(s0, s1)
        for f in range(2, 7):
            r += inv * ((1 if mover == 0 else -1) if mine + tt + f >= 8 else ev(s0, s1, tt + f, turns, mover))
        return r

    assert always_hold_at_2.value[0] == pytest.approx(float(ev(0, 0, 0, 0, 0)), abs=1e-12)
    assert opt.value[0] == pytest.approx(float(exact(0, 0, 0, 0, 0)), abs=1e-12)
    assert opt.value[0] > always_hold_at_2.value[0]


def test_refuses_when_too_large_with_an_estimate() -> None:
    with pytest.raises(TooLargeError) as ei:
        solve(pig(20, 60), seat=0, max_states=2000, estimate_probes=50)
    assert ei.value.explored > 2000
    assert ei.value.estimate is not None and ei.value.estimate > 2000
    assert "2,000" in str(ei.value) and "estimate" in str(ei.value)


def test_estimate_is_exact_on_a_fixed_width_tree() -> None:
    """Knuth's estimator is exact when every node at a depth has the same branching."""
    est = estimate_states(CoinFlips(3), probes=20)
    assert est.tree_nodes == pytest.approx(1 + 2 + 4 + 8)


class CoinFlips(State):
    """Flip n coins (chance only), then stop: a complete binary tree of depth n."""

    def __init__(self, n: int) -> None:
        super().__init__(1)
        self.left = n
        self.heads = 0

    def current_player(self) -> int:
        return CHANCE if self.left else TERMINAL

    def legal_actions(self) -> list[int]:
        return []

    def apply_action(self, action: int) -> None:
        raise AssertionError

    def action_label(self, action: int) -> str:
        return "?"

    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        return [(0, 0.5), (1, 0.5)]

    def apply_chance(self, outcome: Hashable) -> None:
        self.left -= 1
        self.heads += int(outcome)  # type: ignore[call-overload]
        if not self.left:
            self.finish(None, EndReason.COMPLETED, [float(self.heads)])

    def observation(self, seat: int) -> np.ndarray:
        return np.zeros(1, dtype=np.float32)

    def key(self) -> Hashable:
        return (self.left, self.heads)


class Gamble(State):
    """A cyclic game: stop for 0, or bet: 1/2 win (+1), 1/4 lose (-1), 1/4 back where you were.

    Value of betting V = 1/2 - 1/4 + V/4, so V = 1/3 > 0: bet.
    """

    def __init__(self) -> None:
        super().__init__(1)
        self.betting = False

    def current_player(self) -> int:
        if self._outcome is not None:
            return TERMINAL
        return CHANCE if self.betting else 0

    def legal_actions(self) -> list[int]:
        return [0, 1] if self.current_player() == 0 else []

    def apply_action(self, action: int) -> None:
        if action == 0:
            self.finish(None, EndReason.CONCEDED, [0.0])
        else:
            self.betting = True

    def action_label(self, action: int) -> str:
        return ("stop", "bet")[action]

    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        return [("win", 0.5), ("lose", 0.25), ("again", 0.25)]

    def apply_chance(self, outcome: Hashable) -> None:
        self.betting = False
        if outcome == "win":
            self.finish(0, EndReason.COMPLETED, [1.0])
        elif outcome == "lose":
            self.finish(None, EndReason.COMPLETED, [-1.0])

    def observation(self, seat: int) -> np.ndarray:
        return np.zeros(1, dtype=np.float32)

    def key(self) -> Hashable:
        return (self.betting, None if self._outcome is None else self._outcome.returns)


def test_cyclic_game_by_value_iteration() -> None:
    res = solve(Gamble(), seat=0)
    assert not res.acyclic
    assert res.value[0] == pytest.approx(1 / 3, abs=1e-10)
    assert res.win_probability == pytest.approx(2 / 3, abs=1e-10)  # 1/2 / (1 - 1/4)
    assert res.best_action(Gamble()) == 1
    rows = res.policy_rows()
    assert rows[0].best_label == "bet"
    assert rows[0].reach == pytest.approx(4 / 3, abs=1e-9)  # expected visits of the start: 1/(1 - 1/4)


def test_state_without_key_is_a_clear_user_error() -> None:
    from envs.core.errors import UserError

    with pytest.raises(UserError, match="cannot solve exactly"):
        solve(PigState(PigConfig()), seat=0)

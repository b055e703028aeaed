"""Verdicts from a re-optimizing subject (issue 17 items 2 and 4), on a tiny one-seat game with planted options.

The game ("dash", test-only): the player starts with 3 points and has 4 turns to reach 12. Before the first
turn it makes one style choice: ``wave`` or ``nod`` (no effect at all: a planted dead option, twice) or
``gift`` (give away the 3 points and the first two turns: a planted dominated option). Each turn: ``roll`` a d6
(a 1 loses the turn total and ends the turn, any other face adds to it), ``hold`` (bank the turn total, end the turn) or
``creep`` (bank 1 point, lose the turn total, end the turn). Return: min(score, 12) / 12.

The exact values come from ``agents.solver.solve`` (full expectimax), on the restricted view
``agents.search.RestrictedState`` for restricted optima, never from the verdict code.
"""

from __future__ import annotations

import enum
import json
import sys
import tempfile
import types
from pathlib import Path

import numpy as np
import pytest
from pydantic import Field

from agents.search import RestrictedState, Restriction
from agents.solver import solve
from envs.core.config import RulesModel
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, Ruleset, Scenario, State
from envs.core.registry import register_ruleset
from training.discover.budgets import Budget
from training.discover.pipeline import make_discovery
from training.discover.verdicts import stage_verdicts
from training.runner import RestrictedPolicy


class DashRules(RulesModel):
    target: int = Field(12, ge=2)
    start: int = Field(3, ge=0)
    turns: int = Field(4, ge=1)


class DashConfig(RulesModel):
    game: DashRules = DashRules()


class A(enum.IntEnum):
    WAVE = 0
    NOD = 1
    GIFT = 2
    ROLL = 3
    HOLD = 4
    CREEP = 5


class DashState(State):
    def __init__(self, cfg: DashConfig) -> None:
        super().__init__(1)
        self.cfg = cfg.game
        self.score = self.cfg.start
        self.total = 0
        self.turn = 0
        self.styled = False
        self.rolling = False

    def current_player(self) -> int:
        if self._outcome is not None:
            return TERMINAL
        return CHANCE if self.rolling else 0

    def legal_actions(self) -> list[int]:
        if self.current_player() != 0:
            return []
        if not self.styled:
            return [A.WAVE, A.NOD, A.GIFT]
        return [A.ROLL, A.HOLD, A.CREEP]

    def action_label(self, action: int) -> str:
        return A(action).name.lower()

    def option_of(self, action: int) -> str | None:
        return A(action).name.lower()

    def decision_context(self) -> str:
        return "style" if not self.styled else "turn"

    def chance_outcomes(self):  # type: ignore[no-untyped-def]
        return [(f, 1 / 6) for f in range(1, 7)]

    def apply_action(self, action: int) -> None:
        if action not in self.legal_actions():
            raise IllegalActionError(f"illegal action {action}")
        if not self.styled:
            self.styled = True
            if action == A.GIFT:
                self.score = 0
                self.turn = 2
            return
        if action == A.ROLL:
            self.rolling = True
            return
        self.score += self.total if action == A.HOLD else 1
        self._end_turn()

    def apply_chance(self, outcome) -> None:  # type: ignore[no-untyped-def]
        self.rolling = False
        if int(outcome) == 1:
            self._end_turn()
            return
        self.total += int(outcome)
        if self.score + self.total >= self.cfg.target:
            self.score += self.total
            self._finish()

    def _end_turn(self) -> None:
        self.total = 0
        self.turn += 1
        if self.turn >= self.cfg.turns:
            self._finish()

    def _finish(self) -> None:
        self.finish(0, EndReason.COMPLETED, [min(self.score, self.cfg.target) / self.cfg.target])

    def observation(self, seat: int) -> np.ndarray:
        return np.array([self.score / 12, self.total / 12, self.turn / 4, float(self.styled)], dtype=np.float32)

    def resources(self, seat: int) -> dict[str, float]:
        return {"score": float(self.score)}

    def key(self):  # type: ignore[no-untyped-def]
        return (self.score, self.total, self.turn, self.styled, self.rolling, self._outcome is not None)


class Roller:
    """Rolls until the turn total reaches 5, then holds. Its fallback is deliberately bad: with ``roll``
    masked out it holds at once (banking nothing), where creeping would bank a point."""

    name = "roller"

    def act(self, state, mask, rng):  # type: ignore[no-untyped-def]
        inner = getattr(state, "inner", state)
        if not inner.styled:
            return next(int(a) for a in (A.WAVE, A.NOD, A.GIFT) if mask[a])
        if mask[A.ROLL] and inner.total < 5:
            return int(A.ROLL)
        return next(int(a) for a in (A.HOLD, A.CREEP, A.ROLL) if mask[a])


_RULES = Path(tempfile.mkdtemp(prefix="dash-")) / "rules.toml"
_RULES.write_text("[game]\ntarget = 12\nstart = 3\nturns = 4\n")
DASH = Ruleset(
    name="toy_dash",
    title="ToyDash",
    description="one-seat push-your-luck with planted dead and dominated options (test-only)",
    config_model=DashConfig,
    rules_path=_RULES,
    scenarios={
        "dash": Scenario(
            "dash",
            "Dash",
            "reach 12 in 4 turns",
            1,
            6,
            4,
            DashState,
            max_episode_steps=200,
            observation_bounds=(0.0, 2.0),
            option_groups=("wave", "nod", "gift", "roll", "hold", "creep"),
        )
    },
)


@pytest.fixture(scope="module")
def dash():
    register_ruleset(DASH)
    module = types.ModuleType("agents.personas.toy_dash")
    module.PERSONAS = {"roller": Roller}  # type: ignore[attr-defined]
    sys.modules["agents.personas.toy_dash"] = module
    yield DASH
    sys.modules.pop("agents.personas.toy_dash", None)


def _budget(sims: int, deals: int) -> Budget:
    return Budget(
        name="test",
        round_robin_games=10,
        sensitivity_games=10,
        rl_steps=0,
        rl_eval_games=0,
        search_simulations=sims,
        search_deals=deals,
        sensitivity_search_games=4,
        build_candidates=0,
        build_games=0,
    )


def _verdicts(tmp_path: Path, sims: int, deals: int, seed: int = 0, workers: int = 1, groups=None) -> dict:  # type: ignore[no-untyped-def]
    d = make_discovery(DASH, "dash", None, _budget(sims, deals), seed, workers, tmp_path, rl=False)
    return stage_verdicts(d, "roller", groups)


def _exact(view: State) -> float:
    return solve(view, 0, {}, num_actions=6, key=lambda s: s.key()).value[0]


def test_planted_dead_and_dominated_options(dash, tmp_path):
    sec = _verdicts(tmp_path, 16, 30)
    # a tiny game: the whole-game exact subject (two policy-iteration steps, every decision exact) and its values
    # computed over every chance outcome; the persona itself is never the subject of a verdict
    assert sec["subject"] == "search:roller@16#rollout#exact#whole#steps=2"
    assert sec["values"] == "exact" and sec["doubling"] == {"value": 0.0, "low": 0.0, "high": 0.0}
    opts = sec["options"]
    for dead in ("wave", "nod"):  # identical and effect-free: forbidding or forcing changes no game at all ...
        row = opts[dead]
        measured = [iv for iv in (row["forbid"], row["force"]) if iv is not None]
        assert measured and all(iv == {"value": 0.0, "low": 0.0, "high": 0.0} for iv in measured), (dead, row)
        # ... and, computed exactly, that is no sampling accident: no rule of three widens it
        sampled = [row[f"{m}_sampled"] for m in ("forbid", "force") if row[m] is not None]
        assert sampled and all(sv["value"] == 0.0 for sv in sampled)  # the games agree
        assert row["verdict"] in ("dead", "not met"), (dead, row)
    assert opts["gift"]["verdict"] == "dominated", opts["gift"]
    assert opts["gift"]["chosen"] == 0 and opts["gift"]["forbid"] is None  # never chosen: not replayed forbidden
    exact_gift = _exact(RestrictedState(DashState(DashConfig()), 0, Restriction("force", "gift"))) - _exact(
        DashState(DashConfig())
    )
    fc = opts["gift"]["force"]
    assert exact_gift < -0.05  # the truth: giving away the start and a turn costs value (exactly -0.1753)
    assert fc["low"] - 0.05 <= exact_gift <= fc["high"] + 0.05, (fc, exact_gift)
    assert opts["roll"]["verdict"] == "essential"


@pytest.mark.slow
def test_effect_free_options_are_dead(dash, tmp_path):
    """With enough unchanged pairs (320: the rule of three's bound falls inside the 0.01 band) the two
    identical, effect-free options are dead: forbidding and forcing both change nothing."""
    opts = _verdicts(tmp_path, 16, 320, groups=("wave", "nod"))["options"]
    for dead in ("wave", "nod"):
        assert opts[dead]["verdict"] == "dead", (dead, opts[dead])


def test_bad_fallback_base_measures_the_true_worth(dash, tmp_path):
    """The subject is the search over a persona whose fallback under the ban is bad; the value change it
    measures for forbidding ``roll`` matches the exact restricted optimum's, the persona's fallback does not."""
    root = DashState(DashConfig())
    v_opt = _exact(root)
    v_forbid = _exact(RestrictedState(DashState(DashConfig()), 0, Restriction("forbid", "roll")))
    true_cost = v_opt - v_forbid  # 7/12 banked by creeping every turn once rolling is forbidden
    assert abs(v_forbid - 7 / 12) < 1e-9
    persona = Roller()
    v_p = solve(DashState(DashConfig()), 0, {0: persona}, num_actions=6, key=lambda s: s.key()).value[0]
    v_p_forbid = solve(
        DashState(DashConfig()), 0, {0: RestrictedPolicy(persona, "roll")}, num_actions=6, key=lambda s: s.key()
    ).value[0]
    persona_cost = v_p - v_p_forbid
    assert persona_cost - true_cost > 0.1  # the fallback's measure is far off the truth
    sec = _verdicts(tmp_path, 32, 40, groups=("roll",))
    fb = sec["options"]["roll"]["forbid"]
    measured = -fb["value"]
    assert abs(measured - true_cost) <= max((fb["high"] - fb["low"]) / 2, 0.02) + 0.02, (measured, true_cost, fb)
    assert abs(measured - true_cost) < abs(persona_cost - true_cost)
    # usage under the ban shows the re-optimization: the subject creeps instead of holding at nothing
    instead = sec["options"]["roll"]["instead"]["turn"]
    assert instead.get("creep", 0) > instead.get("hold", 0), instead


def test_same_seed_same_verdicts(dash, tmp_path):
    a = _verdicts(tmp_path / "a", 8, 12, seed=5, workers=1)
    b = _verdicts(tmp_path / "b", 8, 12, seed=5, workers=2)
    for sec in (a, b):
        sec.pop("seconds")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_adapting_rows_are_exact_on_a_game_that_solves(dash, tmp_path):
    """On a game that solves, the adapting sensitivity's change under a perturbed rule is the subject's exact
    change: the solver's evaluation of the same whole-game agent's moves under each rule set (independent of the
    agent's own evaluation), on the verdict seat schedule (one seat here)."""
    from agents.search import make_search_agent
    from agents.solver import evaluate_exactly
    from envs.core.config import with_override
    from training.discover.verdicts import adapting_rows

    d = make_discovery(DASH, "dash", None, _budget(16, 6), 0, 1, tmp_path, rl=False)
    sec = stage_verdicts(d, "roller", ("roll",))
    assert sec["values"] == "exact"
    shorter = with_override(d.config, "game.turns", 3)
    (row,) = adapting_rows(d, [shorter])
    (stats,) = row.values()
    agent = make_search_agent("toy_dash", sec["subject"], "dash")
    truth = (
        evaluate_exactly(DashState(shorter), {0: agent}, 0).value[0]
        - evaluate_exactly(DashState(d.config), {0: agent}, 0).value[0]
    )
    assert truth < -0.01  # one turn fewer costs the adapting player something
    assert stats["exact"] and stats["low"] == stats["high"] == stats["change"]
    assert stats["change"] == pytest.approx(truth, abs=1e-6)

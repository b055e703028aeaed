"""A test-only toy game (two-player Pig) that exercises the protocol and the adapter end to end.

Rules: on your turn either ROLL a die (a 1 loses this turn's total and passes the turn; any other
face adds to it) or HOLD (bank the turn total, pass the turn). First to ``target`` banked points wins;
the game is a draw after ``max_turns`` turns.
"""

from __future__ import annotations

import enum
from pathlib import Path

import numpy as np
from pydantic import Field

from envs.core.config import RulesModel
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, Ruleset, Scenario, State


class PigRules(RulesModel):
    target: int = Field(20, ge=2, le=100, description="points needed to win")
    die_sides: int = Field(6, ge=2, le=20)
    max_turns: int = Field(60, ge=1)


class PigConfig(RulesModel):
    game: PigRules = PigRules()


class Act(enum.IntEnum):
    ROLL = 0
    HOLD = 1


class PigState(State):
    def __init__(self, cfg: PigConfig) -> None:
        super().__init__(2)
        self.cfg = cfg.game
        self.scores = [0, 0]
        self.turn_total = 0
        self.to_move = 0
        self.turns = 0
        self.rolling = False

    def current_player(self) -> int:
        if self._outcome is not None:
            return TERMINAL
        return CHANCE if self.rolling else self.to_move

    def legal_actions(self) -> list[int]:
        if self.current_player() < 0:
            return []
        return [Act.ROLL, Act.HOLD]

    def action_label(self, action: int) -> str:
        return Act(action).name.lower()

    def option_of(self, action: int) -> str | None:
        return Act(action).name.lower()

    def chance_outcomes(self):  # type: ignore[no-untyped-def]
        n = self.cfg.die_sides
        return [(f, 1 / n) for f in range(1, n + 1)]

    def apply_action(self, action: int) -> None:
        if action not in self.legal_actions():
            raise IllegalActionError(f"illegal action {action}")
        if action == Act.ROLL:
            self.rolling = True
        else:
            self.scores[self.to_move] += self.turn_total
            self.narrate(
                "hold",
                f"Player {self.to_move} holds {self.turn_total} (score {self.scores[self.to_move]}).",
                self.to_move,
            )
            self._end_turn()

    def apply_chance(self, outcome) -> None:  # type: ignore[no-untyped-def]
        self.rolling = False
        face = int(outcome)
        self.narrate("roll", f"Player {self.to_move} rolls {face}.", self.to_move, face=face)
        if face == 1:
            self.turn_total = 0
            self._end_turn()
        else:
            self.turn_total += face
            if self.scores[self.to_move] + self.turn_total >= self.cfg.target:
                w = self.to_move
                self.scores[w] += self.turn_total
                self.finish(w, EndReason.COMPLETED, [1.0 if s == w else -1.0 for s in range(2)])

    def _end_turn(self) -> None:
        self.turn_total = 0
        self.to_move = 1 - self.to_move
        self.turns += 1
        if self.turns >= self.cfg.max_turns:
            self.finish(None, EndReason.TIME_LIMIT, [0.0, 0.0])

    def observation(self, seat: int) -> np.ndarray:
        t = self.cfg.target
        return np.array(
            [self.scores[seat] / t, self.scores[1 - seat] / t, self.turn_total / t, float(self.to_move == seat)],
            dtype=np.float32,
        )

    def resources(self, seat: int) -> dict[str, float]:
        return {"score": float(self.scores[seat])}


def _new(cfg) -> PigState:  # type: ignore[no-untyped-def]
    return PigState(cfg)


RULESET = Ruleset(
    name="toy_pig",
    title="ToyPig",
    description="Two-player Pig (test-only)",
    config_model=PigConfig,
    rules_path=Path(__file__).with_name("rules.toml"),
    scenarios={
        "race": Scenario(
            "race",
            "Race",
            "first to the target",
            2,
            2,
            4,
            _new,
            max_episode_steps=500,
            observation_bounds=(0.0, 2.0),
            option_groups=("roll", "hold"),
        )
    },
)

"""The Duel scenario: an extended + resisted contest between two characters (Rules 9, 11-13).

Each turn both characters, in secret, declare one action or two (Rule 9: dice -2 and -3 in the
declared order): ATTACK (the extended roll that accumulates successes, by the main approach or the
alternative one: a bigger pool at a higher difficulty) and/or DEFEND (the resisting roll that cancels
the opponent's attack successes, Rule 12), and whether to spend Willpower on one of them (Rule 8).
A botched attack loses the accumulated successes (Rule 11). The first to ``duel.target`` wins
(Rule 13); a draw when ``duel.turns`` run out. No automatic successes: it is a contest under stress
(Rule 7).
"""

from __future__ import annotations

import enum
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State
from envs.storyteller import engine as rules
from envs.storyteller.config import Fighter, StorytellerConfig
from envs.storyteller.dice import BOTCH, degree_of, outcome_distribution, outcome_of_faces, sample_outcome


class DAct(enum.IntEnum):
    """The duel's action table."""

    ONE_ACTION = 0
    TWO_ACTIONS = 1
    ATTACK = 2
    ATTACK_ALT = 3
    DEFEND = 4
    NO_WILLPOWER = 5
    WILLPOWER = 6  # Willpower on action 1
    WILLPOWER_2 = 7  # Willpower on action 2


DUEL_ACTIONS = 8
DUEL_MAX_ACTIONS = 2
"""The duel's action table offers one action or a two-action split (attack and defend)."""


class DPhase(enum.IntEnum):
    COUNT = 0
    PICK = 1
    WILLPOWER = 2
    RESOLVE = 3
    TIEBREAK = 4
    OVER = 5


ATTACK_MAIN, ATTACK_ALT, DEFEND = 0, 1, 2
KIND_NAMES = ("attack", "wild attack", "defence")


@dataclass(frozen=True)
class DuelRoll:
    seat: int
    kind: int  # ATTACK_MAIN / ATTACK_ALT / DEFEND
    pool: int
    difficulty: int
    willpower: int
    specialty: bool


class Side:
    """A fighter's pools and difficulties (Rules 1-2, 15)."""

    __slots__ = ("name", "pools", "difficulties", "specialty")

    def __init__(self, f: Fighter, cfg: StorytellerConfig) -> None:
        self.name = f.name
        self.pools = (f.attack_pool, f.alt_attack_pool, f.defence_pool)
        self.difficulties = tuple(
            rules.difficulty_of(d, cfg) for d in (f.attack_difficulty, f.alt_attack_difficulty, f.defence_difficulty)
        )
        self.specialty = (cfg.specialties.enabled and f.specialty, False, False)


class DuelState(State):
    """A duel in progress: ``rulebreaker/StorytellerDuel-v0``.

    ## Description
    Two characters in an extended + resisted contest (Rules 11-13), first to ``duel.target``
    accumulated successes. Seat 0 declares, then seat 1 (neither sees the other's declaration), then
    the rolls are made in declared order, seat 0's first.

    ## Action Space
    ``Discrete(8)``: 0 one action, 1 two actions (dice -2, -3 in the declared order, Rule 9);
    2 attack (main approach), 3 wild attack (alternative: bigger pool, higher difficulty), 4 defend
    (the resisting roll, Rule 12); 5 no Willpower, 6/7 Willpower on action 1/2 (Rule 8).
    One attack and one defence per turn (Rule 11's one roll per task per interval).

    ## Observation Space
    ``Box(0, 1, (32,))`` from the seat's side: both progresses / target, both Willpower / 10, turn,
    own decision phase and declared actions, both fighters' pools / 20 and difficulties / 10, last
    turn's gains and defence successes, the seat index.

    ## Rewards
    +1 to the winner, -1 to the loser, 0 each on a draw (turn limit).

    ## Episode End
    A side reaches the target (``KNOCKOUT``; both at once: higher total, equal: a roll-off chance
    node, Rule 13), or ``duel.turns`` turns pass (``TIME_LIMIT``).

    ## Arguments
    The config's ``[duel]`` table: ``target``, ``turns``, ``fighters`` (pools and difficulties).
    """

    def __init__(self, cfg: StorytellerConfig) -> None:
        super().__init__(2)
        self.cfg = cfg
        self.sides = [Side(f, cfg) for f in cfg.duel.fighters]
        self.target = cfg.duel.target
        self.progress = [0, 0]
        self.willpower = [cfg.willpower.points, cfg.willpower.points]
        self.turn = 0
        self.phase = DPhase.COUNT
        self.seat = 0
        self.n_actions = [0, 0]
        self.plans: list[list[int]] = [[], []]
        self.wp_action = [-1, -1]
        self.queue: list[DuelRoll] = []
        self.attack: list[list[int]] = [[], []]  # this turn's attack outcomes per seat
        self.defence: list[int | None] = [None, None]
        self.last = (0, 0, 0, 0)  # last turn: gains and defence nets, for observations
        self.max_actions = min(rules.max_actions(cfg), DUEL_MAX_ACTIONS)
        self.narrate(
            "setup",
            f"{self.sides[0].name} and {self.sides[1].name} struggle: first to {self.target} "
            f"successes wins, within {cfg.duel.turns} turns.",
        )

    # -- protocol --------------------------------------------------------------------------------
    def current_player(self) -> int:
        if self._outcome is not None:
            return TERMINAL
        if self.phase in (DPhase.RESOLVE, DPhase.TIEBREAK):
            return CHANCE
        return self.seat

    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        if self.phase == DPhase.TIEBREAK:
            p = float(self._tiebreak_odds())
            return [(0, p), (1, 1.0 - p)]
        r = self.queue[0]
        return rules.roll_chance_outcomes(r.pool, r.difficulty, r.willpower, r.specialty, self.cfg)

    def sample_chance(self, rng: Rng) -> Hashable:
        if self.phase == DPhase.TIEBREAK:
            return 0 if rng.random() < float(self._tiebreak_odds()) else 1
        r = self.queue[0]
        return sample_outcome(rng, r.pool, r.difficulty, r.willpower, self.cfg.willpower.prevents_botch, r.specialty)

    def apply_chance(self, outcome: Hashable) -> None:
        """RESOLVE: an outcome (``BOTCH`` or net successes) or a tuple of faces (+ specialty rerolls).
        TIEBREAK: the winning seat."""
        if self.phase == DPhase.TIEBREAK:
            w = int(outcome)  # type: ignore[call-overload]
            self.narrate(
                "tiebreak",
                f"Both reach {self.target} with equal totals; they roll again and {self.sides[w].name} wins.",
                w,
            )
            self._win(w)
            return
        r = self.queue.pop(0)
        if isinstance(outcome, tuple):
            value = outcome_of_faces(
                outcome[: r.pool],
                r.difficulty,
                r.willpower,
                self.cfg.willpower.prevents_botch,
                r.specialty,
                outcome[r.pool :],
            )
        else:
            value = int(outcome)  # type: ignore[call-overload]
        name = self.sides[r.seat].name
        wp = " with Willpower" if r.willpower else ""
        text = "botches" if value == BOTCH else f"scores {value} ({degree_of(value)})"
        self.narrate(
            "roll",
            f"{name} rolls {KIND_NAMES[r.kind]}{wp} ({r.pool} dice at difficulty {r.difficulty}): {text}.",
            r.seat,
            roll=r.kind,
            outcome=value,
        )
        if r.kind == DEFEND:
            prev = self.defence[r.seat]
            self.defence[r.seat] = value if prev is None else max(prev, 0) + max(value, 0)
        else:
            self.attack[r.seat].append(value)
        if not self.queue:
            self._settle()

    def legal_actions(self) -> list[int]:
        if self.current_player() < 0:
            return []
        s = self.seat
        if self.phase == DPhase.COUNT:
            return [DAct.ONE_ACTION + n - 1 for n in range(1, self.max_actions + 1) if self._feasible(s, n, 0, ())]
        if self.phase == DPhase.PICK:
            n, k0 = self.n_actions[s], len(self.plans[s])
            used = tuple(self.plans[s])
            return [
                DAct.ATTACK + kind
                for kind in (ATTACK_MAIN, ATTACK_ALT, DEFEND)
                if self._usable(s, kind, n, k0 + 1, used) and self._feasible(s, n, k0 + 1, (*used, kind))
            ]
        if self.phase == DPhase.WILLPOWER:
            return [DAct.NO_WILLPOWER] + [DAct.WILLPOWER + k for k in range(len(self.plans[s]))]
        return []

    def apply_action(self, action: int) -> None:
        if action not in self.legal_actions():
            raise IllegalActionError(f"illegal duel action {action} in phase {self.phase.name}")
        s = self.seat
        if self.phase == DPhase.COUNT:
            self.n_actions[s] = action - DAct.ONE_ACTION + 1
            self.plans[s] = []
            self.phase = DPhase.PICK
        elif self.phase == DPhase.PICK:
            self.plans[s].append(action - DAct.ATTACK)
            if len(self.plans[s]) == self.n_actions[s]:
                if rules.may_spend_willpower(self.willpower[s], 0, self.cfg):
                    self.phase = DPhase.WILLPOWER
                else:
                    self._declared()
        elif self.phase == DPhase.WILLPOWER:
            self.wp_action[s] = -1 if action == DAct.NO_WILLPOWER else action - DAct.WILLPOWER
            self._declared()

    def action_label(self, action: int) -> str:
        return {
            DAct.ONE_ACTION: "one action",
            DAct.TWO_ACTIONS: "two actions (split)",
            DAct.ATTACK: "attack",
            DAct.ATTACK_ALT: "wild attack (bigger pool, higher difficulty)",
            DAct.DEFEND: "defend",
            DAct.NO_WILLPOWER: "no willpower",
            DAct.WILLPOWER: "willpower on action 1",
            DAct.WILLPOWER_2: "willpower on action 2",
        }.get(DAct(action), f"action {action}")

    def option_of(self, action: int) -> str | None:
        return {
            DAct.ONE_ACTION: "single_action",
            DAct.TWO_ACTIONS: "multiple_actions",
            DAct.ATTACK: "attack",
            DAct.ATTACK_ALT: "approach_alt",
            DAct.DEFEND: "defend",
            DAct.NO_WILLPOWER: "no_willpower",
            DAct.WILLPOWER: "willpower",
            DAct.WILLPOWER_2: "willpower",
        }[DAct(action)]

    def decision_context(self) -> str:
        return {DPhase.COUNT: "actions", DPhase.PICK: "action", DPhase.WILLPOWER: "willpower"}.get(self.phase, "none")

    def resources(self, seat: int) -> dict[str, float]:
        return {"willpower": float(self.willpower[seat]), "progress": float(self.progress[seat])}

    # -- declaring -------------------------------------------------------------------------------
    def _usable(self, s: int, kind: int, n: int, k: int, used: tuple[int, ...]) -> bool:
        """Rule 9: the k-th of n actions needs a pool >= 1; Rule 11: one attack and one defence a turn."""
        if rules.multiple_action_pool(self.sides[s].pools[kind], n, k) < 1:
            return False
        if not self.cfg.extended.one_roll_per_task:
            return True
        if kind == DEFEND:
            return DEFEND not in used
        return ATTACK_MAIN not in used and ATTACK_ALT not in used

    def _feasible(self, s: int, n: int, k0: int, used: tuple[int, ...]) -> bool:
        if k0 >= n:
            return True
        return any(
            self._usable(s, kind, n, k0 + 1, used) and self._feasible(s, n, k0 + 1, (*used, kind))
            for kind in (ATTACK_MAIN, ATTACK_ALT, DEFEND)
        )

    def _declared(self) -> None:
        if self.seat == 0:
            self.seat = 1
            self.phase = DPhase.COUNT
            return
        self.queue = []
        for s in (0, 1):
            if self.wp_action[s] >= 0:
                self.willpower[s] -= 1
            side = self.sides[s]
            n = self.n_actions[s]
            for k, kind in enumerate(self.plans[s]):
                wp = self.cfg.willpower.successes if k == self.wp_action[s] else 0
                pool = rules.multiple_action_pool(side.pools[kind], n, k + 1)
                self.queue.append(DuelRoll(s, kind, pool, side.difficulties[kind], wp, side.specialty[kind]))
        self.attack = [[], []]
        self.defence = [None, None]
        self.phase = DPhase.RESOLVE
        plans = "; ".join(
            f"{self.sides[s].name}: "
            + ", ".join(KIND_NAMES[k] for k in self.plans[s])
            + (" (split: dice -2, -3)" if self.n_actions[s] > 1 else "")
            for s in (0, 1)
        )
        self.narrate("declare", f"Turn {self.turn + 1}. {plans}.")

    # -- resolving -------------------------------------------------------------------------------
    def _settle(self) -> None:
        """Rules 11-13: resets, resisted gains, and the first to the target."""
        gains = [0, 0]
        ended = [False, False]
        for s in (0, 1):
            o = 1 - s
            if not self.attack[s]:
                continue
            kept: list[int] = []
            for v in self.attack[s]:
                progress, reset = rules.extended_progress(0, v, self.cfg)
                if reset and self.cfg.extended.abandon_on_reset:
                    ended[s] = True
                if reset:
                    if self.progress[s]:
                        self.narrate(
                            "reset", f"{self.sides[s].name} loses all {self.progress[s]} accumulated successes.", s
                        )
                    self.progress[s] = 0
                    kept = []
                else:
                    kept.append(progress)
            gains[s] = rules.resisted_result(sum(kept), self.defence[o] or 0, self.cfg) if kept else 0
        if any(ended):  # Rule 11 [decision]: the Storyteller ends a reset attempt: that side loses
            self.phase = DPhase.OVER
            if all(ended):
                self.finish(None, EndReason.COMPLETED, [0.0, 0.0], "both attempts ended by botches")
            else:
                keeper = 0 if ended[1] else 1
                self.finish(
                    keeper,
                    EndReason.KNOCKOUT,
                    [1.0 if i == keeper else -1.0 for i in (0, 1)],
                    f"{self.sides[1 - keeper].name}'s attempt ends with a botch",
                )
            return
        for s in (0, 1):
            self.progress[s] += gains[s]
            if self.attack[s]:
                self.narrate(
                    "gain",
                    f"{self.sides[s].name} gains {gains[s]} (total {self.progress[s]}/{self.target}).",
                    s,
                    gain=gains[s],
                )
        d0, d1 = self.defence
        self.last = (gains[0], gains[1], max(d0 or 0, 0), max(d1 or 0, 0))
        w = rules.contest_winner(self.progress, self.target, self.cfg)
        if w is None:
            self.turn += 1
            if self.turn >= self.cfg.duel.turns:
                self.phase = DPhase.OVER
                self.finish(None, EndReason.TIME_LIMIT, [0.0, 0.0], "time ran out")
                return
            self._new_turn()
        elif w >= 0:
            self._win(w)
        elif self.cfg.contest.simultaneous == "higher_total":
            self.phase = DPhase.TIEBREAK
        else:
            self.phase = DPhase.OVER
            self.finish(None, EndReason.COMPLETED, [0.0, 0.0], "both reached the total together")

    def _new_turn(self) -> None:
        self.seat = 0
        self.phase = DPhase.COUNT
        self.n_actions = [0, 0]
        self.plans = [[], []]
        self.wp_action = [-1, -1]

    def _win(self, w: int) -> None:
        self.phase = DPhase.OVER
        self.finish(
            w,
            EndReason.KNOCKOUT,
            [1.0 if s == w else -1.0 for s in (0, 1)],
            f"{self.sides[w].name} reaches {self.target} successes",
        )

    def _tiebreak_odds(self) -> Fraction:
        """Rule 13: equal totals: both roll their main attack again until one scores more; the chance
        that seat 0 wins is P(A > B) / (1 - P(A = B)) (a botch counts as 0)."""
        tabs = []
        for side in self.sides:
            t: dict[int, Fraction] = {}
            for k, p in outcome_distribution(side.pools[0], side.difficulties[0], specialty=side.specialty[0]).items():
                t[max(k, 0)] = t.get(max(k, 0), Fraction(0)) + p
            tabs.append(t)
        win = sum((pa * pb for a, pa in tabs[0].items() for b, pb in tabs[1].items() if a > b), Fraction(0))
        tie = sum((pa * tabs[1].get(a, Fraction(0)) for a, pa in tabs[0].items()), Fraction(0))
        return win / (1 - tie)

    # -- analysis hooks --------------------------------------------------------------------------
    def observation(self, seat: int) -> np.ndarray:
        o = 1 - seat
        obs = np.zeros(DUEL_OBS, dtype=np.float32)
        tgt = float(self.target)
        obs[0] = min(self.progress[seat] / tgt, 1.0)
        obs[1] = min(self.progress[o] / tgt, 1.0)
        obs[2] = min(self.willpower[seat] / 10.0, 1.0)
        obs[3] = min(self.willpower[o] / 10.0, 1.0)
        obs[4] = min(self.turn / self.cfg.duel.turns, 1.0)
        if self.seat == seat and self.phase <= DPhase.WILLPOWER:
            obs[5 + int(self.phase)] = 1.0
            obs[8] = self.n_actions[seat] / 2.0
            for k, kind in enumerate(self.plans[seat][:2]):
                obs[9 + 3 * k + kind] = 1.0
        for i, side in enumerate((self.sides[seat], self.sides[o])):
            for j in range(3):
                obs[15 + 6 * i + j] = min(side.pools[j] / 20.0, 1.0)
                obs[18 + 6 * i + j] = side.difficulties[j] / 10.0
        g0, g1, d0, d1 = self.last
        mine, theirs = (g0, g1) if seat == 0 else (g1, g0)
        dm, dt = (d0, d1) if seat == 0 else (d1, d0)
        obs[27] = min(mine / tgt, 1.0)
        obs[28] = min(theirs / tgt, 1.0)
        obs[29] = min(dm / 10.0, 1.0)
        obs[30] = min(dt / 10.0, 1.0)
        obs[31] = float(seat)
        return obs

    def key(self) -> Hashable:
        return (
            self.phase,
            self.seat,
            self.turn,
            tuple(self.progress),
            tuple(self.willpower),
            tuple(self.n_actions),
            tuple(tuple(p) for p in self.plans),
            tuple(self.wp_action),
            tuple(self.queue),
            tuple(tuple(a) for a in self.attack),
            tuple(self.defence),
            self.last,
        )

    def clone(self) -> DuelState:
        new = DuelState.__new__(DuelState)
        new.__dict__.update(self.__dict__)
        new.log = list(self.log)
        new.progress = list(self.progress)
        new.willpower = list(self.willpower)
        new.n_actions = list(self.n_actions)
        new.plans = [list(p) for p in self.plans]
        new.wp_action = list(self.wp_action)
        new.queue = list(self.queue)
        new.attack = [list(a) for a in self.attack]
        new.defence = list(self.defence)
        return new

    def describe(self) -> dict[str, Any]:
        return {"turn": self.turn, "progress": list(self.progress), "willpower": list(self.willpower)}


DUEL_OBS = 32


def new_duel(cfg: Any) -> DuelState:
    """Scenario setup (deterministic)."""
    return DuelState(cfg)

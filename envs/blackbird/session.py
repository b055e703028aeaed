"""The Session scenario: one character against a run of obstacles over several sessions.

Decisions (the studied one is how many pool dice to spend): which trait to build the pool on,
whether to take a helper's die, how many pool dice to add, and whether to retry after a failure.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Hashable

import numpy as np
from pydantic import BaseModel

from envs.blackbird.config import MAX_POOL, MAX_TRAITS, BlackbirdConfig, ObstacleRow
from envs.blackbird.dice import (
    ROLL_OFF_OUTCOMES,
    Roll,
    RollOff,
    beat_probability,
    pass_probability,
    read_faces,
    roll_distribution,
    sample_roll,
    sample_roll_off,
)
from envs.blackbird.duel import dice, successes
from envs.blackbird.engine import (
    SESSION_ACTIONS,
    SPEND_ACTIONS,
    Character,
    Pool,
    SessionAct,
    award_perk,
    build_pool,
    condition_modifier,
    contest_winner,
    create_character,
    effective_difficulty,
    forbidden_tags,
    joint_successes,
    learn_from_field,
    net_successes,
    passes,
    perk_eligible,
    reset_pool_at_session_end,
    settle_help,
    settle_pool,
    spend_experience,
    spend_label,
    spend_option,
    starting_pool,
    trait_applies,
)
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State


class Phase(enum.IntEnum):
    DRAW = 0  # chance: which obstacle comes next
    TRAIT = 1
    HELP = 2
    SPEND = 3
    ROLL = 4  # chance: the character's dice
    JOINT = 5  # chance: the helper's dice in a joint action (Rule 12)
    OPPOSE = 6  # chance: the opposing NPC's dice (Rule 11)
    ROLL_OFF = 7  # chance: d6 vs d6 after a tie (Rule 11)
    RETRY = 8
    OVER = 9


DECISION_PHASES = (Phase.TRAIT, Phase.HELP, Phase.SPEND, Phase.RETRY)
OBS_SIZE = 37


class SessionState(State):
    """A Blackbird character meeting a run of obstacles over ``session.sessions`` sessions."""

    def __init__(self, cfg: BlackbirdConfig) -> None:
        super().__init__(1)
        self.cfg = cfg
        s = cfg.session
        self.char: Character = create_character(s.character)
        self.pool = starting_pool(cfg.pool)
        self.helper_pool = s.helper_pool
        self.conditions: tuple[str, ...] = ()
        self.session_no = 0
        self.obstacle_no = 0  # within the session
        self.obstacle = -1  # index into the obstacle table
        self.attempt = 0
        self.phase = Phase.DRAW
        self.trait: int | None = None
        self.help_given = 0
        self.spent = 0
        self.breakdown = Pool()
        self.own: Roll | None = None
        self.partner = 0
        self.opposition = 0
        self.won = 0.0
        self.at_stake = 0.0
        self.passed_count = 0
        self.failed_count = 0
        total_w = sum(o.weight for o in s.obstacles)
        self._draw = tuple((i, o.weight / total_w) for i, o in enumerate(s.obstacles))
        self._cum = tuple(np.cumsum([p for _, p in self._draw]).tolist())
        self.narrate("session", f"Session 1 begins. {self.char.name} has {self.pool} pool dice.", 0)

    # -- helpers --------------------------------------------------------------------------------------
    @property
    def ob(self) -> ObstacleRow:
        return self.cfg.session.obstacles[self.obstacle]

    def stake_value(self, ob: ObstacleRow) -> float:
        s = self.cfg.session
        return s.critical_value if ob.stake == "critical" else s.ordinary_value

    def has_helper(self) -> bool:
        return self.cfg.session.helper_pool > 0

    def difficulty(self) -> int:
        """Rule 4/7: the current obstacle's difficulty with the character's conditions."""
        base = self.ob.difficulty if self.ob.difficulty is not None else self.cfg.difficulty.default
        return effective_difficulty(self.cfg, base, self.conditions)

    def opposed_penalty(self) -> int:
        """Rule 7 in a contested roll: conditions take successes off the character's side."""
        return max(0, condition_modifier(self.cfg.conditions, self.conditions))

    def pool_for(self, trait: int | None, spend: int = 0, help_dice: int = 0) -> Pool:
        ob = self.ob
        return build_pool(self.cfg, self.char, trait, ob.traits, ob.tags, ob.flag, ob.name,
                          forbidden_tags(self.cfg.conditions, self.conditions), spend, help_dice)

    def spendable(self) -> int:
        return min(self.pool, MAX_POOL) if self.cfg.pool.enabled else 0

    def pass_chance(self, spend: int, trait: int | None = -1, help_dice: int = -1) -> float:
        """Exact P(pass) of the current obstacle for a choice of spend (and trait / help, default: as chosen)."""
        t = self.trait if trait == -1 else trait
        h = self.help_given if help_dice == -1 else help_dice
        n = self.pool_for(t, spend, h).total
        ob, so = self.ob, self.cfg.dice.success_on
        if ob.joint and self.has_helper():
            n += self.cfg.session.helper_joint_dice
        if ob.opposition:
            pen = self.opposed_penalty()
            win = beat_probability(n, ob.opposition, so, pen, 0)
            if self.cfg.contest.rolloff_on_tie:
                lose = beat_probability(ob.opposition, n, so, 0, pen)
                win += (1 - win - lose) * 0.5
            return win
        return pass_probability(n, so, self.difficulty())

    # -- protocol -------------------------------------------------------------------------------------
    def current_player(self) -> int:
        if self._outcome is not None:
            return TERMINAL
        return 0 if self.phase in DECISION_PHASES else CHANCE

    def decision_context(self) -> str:
        if self.phase == Phase.SPEND:
            return f"spend_{self.ob.stake}"
        return {Phase.TRAIT: "trait", Phase.HELP: "help", Phase.RETRY: "retry"}.get(self.phase, "chance")

    def legal_actions(self) -> list[int]:
        if self._outcome is not None:
            return []
        ph = self.phase
        if ph == Phase.TRAIT:
            ob = self.ob
            acts = [SessionAct.TRAIT_0 + i for i in range(len(self.char.traits))
                    if trait_applies(self.char, i, ob.traits, ob.tags)]
            return [*acts, int(SessionAct.NO_TRAIT)]
        if ph == Phase.HELP:
            return [int(SessionAct.ACCEPT_HELP), int(SessionAct.DECLINE_HELP)]
        if ph == Phase.SPEND:
            return list(range(self.spendable() + 1))
        if ph == Phase.RETRY:
            return [int(SessionAct.RETRY), int(SessionAct.GIVE_UP)]
        return []

    def action_label(self, action: int) -> str:
        if 0 <= action < SPEND_ACTIONS:
            return spend_label(action)
        a = SessionAct.TRAIT_0 + MAX_TRAITS
        if SessionAct.TRAIT_0 <= action < a:
            i = action - SessionAct.TRAIT_0
            return f"use {self.char.traits[i]}" if i < len(self.char.traits) else f"trait slot {i}"
        return SessionAct(action).name.lower().replace("_", " ")

    def option_of(self, action: int) -> str | None:
        if 0 <= action < SPEND_ACTIONS:
            return spend_option(action, self.spendable())
        if action == SessionAct.NO_TRAIT:
            return "no_trait"
        if SessionAct.TRAIT_0 <= action < SessionAct.NO_TRAIT:
            return "use_trait"
        return {SessionAct.ACCEPT_HELP: "accept_help", SessionAct.DECLINE_HELP: "decline_help",
                SessionAct.RETRY: "retry", SessionAct.GIVE_UP: "give_up"}.get(SessionAct(action))

    def apply_action(self, action: int) -> None:
        if action not in self.legal_actions():
            raise IllegalActionError(
                f"illegal action {action} ({self.action_label(action)}) in phase {self.phase.name}")
        ph = self.phase
        who = self.char.short
        if ph == Phase.TRAIT:
            self.trait = None if action == SessionAct.NO_TRAIT else action - SessionAct.TRAIT_0
            text = (f"{who} goes without a trait." if self.trait is None
                    else f"{who} builds the pool on {self.char.traits[self.trait]}.")
            self.narrate("trait", text, 0)
            self.help_given = 0
            ob = self.ob
            # Rule 6: help is a die from the helper's pool, so there is none when pool dice are not in play
            if (self.has_helper() and self.cfg.pool.enabled and not ob.joint
                    and self.helper_pool >= self.cfg.help.dice_per_helper > 0):
                self.phase = Phase.HELP
            else:
                self.phase = Phase.SPEND
        elif ph == Phase.HELP:
            if action == SessionAct.ACCEPT_HELP:
                self.help_given = self.cfg.help.dice_per_helper
                self.narrate("help", f"The helper gives {who} a die from their pool (Rule 6).", 0)
            self.phase = Phase.SPEND
        elif ph == Phase.SPEND:
            self.spent = action
            self.breakdown = self.pool_for(self.trait, action, self.help_given)
            ob = self.ob
            target = f"{ob.opposition} opposing dice" if ob.opposition else f"difficulty {self.difficulty()}"
            self.narrate("pool", f"{who} rolls {dice(self.breakdown.total)} ({self.breakdown.describe()}) "
                                 f"against {target}.", 0, spent=action)
            self.phase = Phase.ROLL
        elif ph == Phase.RETRY:
            if action == SessionAct.RETRY:
                self.attempt += 1
                self.narrate("retry", f"{who} tries again.", 0)
                self.phase = Phase.TRAIT
            else:
                self.narrate("give_up", f"{who} lets '{self.ob.name}' go.", 0)
                self._next_obstacle()

    # -- chance -----------------------------------------------------------------------------------------
    def _dice_now(self) -> int:
        if self.phase == Phase.ROLL:
            return self.breakdown.total
        if self.phase == Phase.JOINT:
            return self.cfg.session.helper_joint_dice
        return self.ob.opposition

    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        if self.phase == Phase.DRAW:
            return list(self._draw)
        if self.phase == Phase.ROLL_OFF:
            return list(ROLL_OFF_OUTCOMES)
        if self.phase in (Phase.ROLL, Phase.JOINT, Phase.OPPOSE):
            return list(roll_distribution(self._dice_now(), self.cfg.dice.success_on))
        raise ValueError("not a chance node")

    def sample_chance(self, rng: Rng) -> Hashable:
        ph = self.phase
        if ph == Phase.DRAW:
            r = rng.random()
            for (i, _), c in zip(self._draw, self._cum, strict=True):
                if r < c:
                    return i
            return self._draw[-1][0]
        if ph == Phase.ROLL_OFF:
            return sample_roll_off(rng)
        return sample_roll(rng, self._dice_now(), self.cfg.dice.success_on)

    def force_faces(self, faces: tuple[int, ...] | list[int]) -> None:
        """Apply a roll given as d6 faces (golden tests read like the rulebook's examples)."""
        if self.phase == Phase.ROLL_OFF:
            a, b = faces
            self.apply_chance(RollOff(0) if a > b else RollOff(1) if b > a else RollOff(None))
        else:
            if len(faces) != self._dice_now():
                raise ValueError(f"expected {self._dice_now()} faces, got {len(faces)}")
            self.apply_chance(read_faces(faces, self.cfg.dice.success_on))

    def apply_chance(self, outcome: Hashable) -> None:
        ph = self.phase
        if ph == Phase.DRAW:
            self.obstacle = int(outcome)  # type: ignore[call-overload]
            self.attempt = 0
            self.trait = None
            ob = self.ob
            self.at_stake += self.stake_value(ob)
            kind = "opposed" if ob.opposition else f"difficulty {self.difficulty()}"
            self.narrate("obstacle", f"Obstacle: {ob.name} ({kind}, {ob.stake} stake).", 0, obstacle=ob.name)
            self.phase = Phase.TRAIT
            return
        if ph == Phase.ROLL:
            self.own = Roll(*outcome)  # type: ignore[misc]
            self.narrate("roll", f"{self.char.short} rolls {successes(self.own.successes)} "
                                 f"({self.own.sixes} {'six' if self.own.sixes == 1 else 'sixes'}).", 0)
            if self.ob.joint and self.has_helper() and self.cfg.session.helper_joint_dice > 0:
                self.phase = Phase.JOINT
            elif self.ob.opposition:
                self.phase = Phase.OPPOSE
            else:
                self._resolve_fixed()
            return
        if ph == Phase.JOINT:
            self.partner = Roll(*outcome).successes  # type: ignore[misc]
            self.narrate("joint", f"The helper joins in: {successes(self.partner)} (Rule 12).", 0)
            if self.ob.opposition:
                self.phase = Phase.OPPOSE
            else:
                self._resolve_fixed()
            return
        if ph == Phase.OPPOSE:
            self.opposition = Roll(*outcome).successes  # type: ignore[misc]
            self._resolve_contest()
            return
        if ph == Phase.ROLL_OFF:
            ro = outcome if isinstance(outcome, RollOff) else RollOff(outcome)  # type: ignore[arg-type]
            if ro.winner is None:
                self.narrate("roll_off", "The roll-off is tied; roll again.", 0)
                return
            self.narrate("roll_off", f"{'The character' if ro.winner == 0 else 'The opposition'} wins the roll-off.", 0)
            self._resolve(ro.winner == 0, None)
            return
        raise ValueError("not a chance node")

    # -- resolution -----------------------------------------------------------------------------------
    def _total_successes(self) -> int:
        assert self.own is not None
        mine = net_successes(self.own, 0)
        return joint_successes([mine, self.partner]) if self.ob.joint else mine

    def _resolve_fixed(self) -> None:
        d = self.difficulty()
        self._resolve(passes(self._total_successes(), d), d)

    def _resolve_contest(self) -> None:
        mine = max(0, self._total_successes() - self.opposed_penalty())
        self.narrate("oppose", f"The opposition rolls {successes(self.opposition)} against {mine}.", 0)
        w = contest_winner(mine, self.opposition)
        if w is None:
            if self.cfg.contest.rolloff_on_tie:
                self.phase = Phase.ROLL_OFF
                return
            self._resolve(False, None)
            return
        self._resolve(w == 0, None)

    def _resolve(self, passed: bool, difficulty: int | None) -> None:
        """Rules 5, 6, 7, 8, 10: what a passed or failed roll does to the pool, the helper, the sheet."""
        cfg, ob, who = self.cfg, self.ob, self.char.short
        assert self.own is not None
        roll = self.own
        # the roll is spent: clear it so that positions after it share one key (exact solvers)
        self.own, self.partner, self.opposition = None, 0, 0
        before = self.pool
        if cfg.pool.enabled:
            self.pool = settle_pool(self.pool, self.spent, passed, cfg.pool)
        if self.help_given:
            self.helper_pool = settle_help(self.helper_pool, self.help_given, passed, cfg.help.returned_on_failure)
        if passed:
            self.passed_count += 1
            self.won += self.stake_value(ob)
            lost = f"; the {self.spent} pool dice are lost" if self.spent and cfg.pool.enabled else ""
            self.narrate("pass", f"Pass — {who} overcomes '{ob.name}'{lost} (pool {before} → {self.pool}).", 0,
                         passed=True, spent=self.spent)
            if difficulty is not None and perk_eligible(roll, difficulty) and award_perk(self.char, ob.name, cfg):
                self.narrate("perk", f"{roll.sixes} sixes against difficulty {difficulty}: "
                                     f"{who} earns a perk for '{ob.name}' (Rule 10).", 0)
            if cfg.field.learn_tag:
                tag = learn_from_field(self.char, self.breakdown, True, ob.traits, ob.tags)
                if tag:
                    self.narrate("field", f"{who} passed without trait or tag dice and learns the tag '{tag}' "
                                          "(Rule 8).", 0)
            self._next_obstacle()
            return
        self.failed_count += 1
        self.narrate("fail", f"Fail — {who} keeps the pool dice and gains {self.pool - before} "
                             f"(pool {before} → {self.pool}).", 0, passed=False, spent=self.spent)
        if ob.condition_on_failure and ob.condition_on_failure not in self.conditions:
            self.conditions = tuple(sorted((*self.conditions, ob.condition_on_failure)))
            self.narrate("condition", f"{who} is now {ob.condition_on_failure} (Rule 7).", 0)
        self.spent = self.help_given = 0
        self.trait = None
        if self.attempt < cfg.session.retries:
            self.phase = Phase.RETRY
        else:
            self._next_obstacle()

    def _next_obstacle(self) -> None:
        s = self.cfg.session
        self.obstacle_no += 1
        self.spent = self.help_given = 0
        self.trait = None
        self.obstacle = -1
        if self.obstacle_no >= s.obstacles_per_session:
            self._end_session()
            return
        self.phase = Phase.DRAW

    def _end_session(self) -> None:
        """Rules 5, 7, 9: the pool resets, conditions clear, XP is earned and spent."""
        s, cfg = self.cfg.session, self.cfg
        self.session_no += 1
        self.obstacle_no = 0
        if cfg.pool.enabled:
            self.pool = reset_pool_at_session_end(cfg.pool)
        self.helper_pool = s.helper_pool
        self.conditions = ()
        self.char.xp += s.xp_per_session
        bought = spend_experience(self.char, cfg.advancement)
        extra = f" Advances: {', '.join(bought)}." if bought else ""
        self.narrate("session", f"Session {self.session_no} ends; the pool returns to {self.pool}.{extra}", 0)
        if self.session_no >= s.sessions:
            share = self.won / self.at_stake if self.at_stake else 0.0
            winner = 0 if share > 0.5 else None
            self.phase = Phase.OVER
            self.finish(winner, EndReason.COMPLETED, [share],
                        f"{self.char.short} won {self.won:g} of {self.at_stake:g} at stake "
                        f"({self.passed_count} passes, {self.failed_count} failures)")
            return
        self.narrate("session", f"Session {self.session_no + 1} begins.", 0)
        self.phase = Phase.DRAW

    # -- analysis ------------------------------------------------------------------------------------
    def resources(self, seat: int) -> dict[str, float]:
        return {"pool": float(self.pool), "helper_pool": float(self.helper_pool)}

    def key(self) -> Hashable:
        return (self.phase, self.session_no, self.obstacle_no, self.obstacle, self.attempt, self.pool,
                self.helper_pool, self.conditions, self.trait, self.help_given, self.spent, self.own,
                self.partner, self.opposition, self.won, self.at_stake, self.char.key(), self._outcome)

    def clone(self) -> SessionState:
        new = copy.copy(self)
        new.char = self.char.copy()
        new.log = list(self.log)
        return new

    def observation(self, seat: int) -> np.ndarray:
        cfg, s = self.cfg, self.cfg.session
        o = np.zeros(OBS_SIZE, dtype=np.float32)
        o[0] = self.pool / cfg.pool.cap
        o[1] = self.helper_pool / max(1, s.helper_pool)
        if self.phase in DECISION_PHASES:
            o[2 + DECISION_PHASES.index(self.phase)] = 1.0
        if self.obstacle >= 0 and self._outcome is None:
            ob = self.ob
            o[6] = min(1.0, self.difficulty() / 10)
            o[7] = min(1.0, ob.opposition / 12)
            o[8] = float(ob.stake == "critical")
            o[9] = float(ob.flag)
            o[10] = float(ob.joint)
            for i in range(len(self.char.traits)):
                p = self.pool_for(i)
                o[11 + i] = min(1.0, (p.trait + p.tags) / 6)
            o[18 + (MAX_TRAITS if self.trait is None else self.trait)] = 1.0
            o[26] = float(self.help_given > 0)
            o[27] = min(1.0, self.pool_for(self.trait, 0, self.help_given).total / 20)
            o[28] = min(1.0, self.char.perks.get(ob.name, 0) / 3)
            if self.phase == Phase.SPEND:
                o[35] = self.pass_chance(0)
                o[36] = self.pass_chance(self.spendable())
        o[29] = self.attempt / 4
        o[30] = max(-1.0, min(1.0, condition_modifier(cfg.conditions, self.conditions) / 5))
        o[31] = self.session_no / s.sessions
        o[32] = self.obstacle_no / s.obstacles_per_session
        o[33] = self.won / self.at_stake if self.at_stake else 0.0
        o[34] = min(1.0, self.char.xp / 40)
        return o


def new_session(cfg: BaseModel) -> SessionState:
    """The scenario's deterministic start (setup randomness comes through chance nodes)."""
    if not isinstance(cfg, BlackbirdConfig):
        raise TypeError(f"expected a BlackbirdConfig, got {type(cfg).__name__}")
    return SessionState(cfg)


__all__ = ["OBS_SIZE", "SESSION_ACTIONS", "Phase", "SessionState", "new_session"]

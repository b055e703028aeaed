"""Blackbird Session: one character against a run of obstacles over several sessions.

Rules card of ``rulebreaker/BlackbirdSession-v0``; rule numbers are those of ``docs/rules/blackbird.md``.
The state below only sequences the rules of :mod:`envs.blackbird.rules`.

Description:
    The sample character (``session.character``) meets ``session.obstacles_per_session`` obstacles in
    each of ``session.sessions`` sessions, each drawn at a chance node from ``session.obstacles`` (by
    weight). An obstacle has a difficulty (Rule 4) or opposing dice (Rule 11), an ordinary or critical
    stake, the traits and tags that apply, whether a flag applies, and may be a joint action (Rule 12) or
    inflict a condition on failure (Rule 7). The studied decision is how many pool dice to spend (Rule 5):
    a pass loses them, a failure keeps them and adds one. The pool resets at each session's end, conditions
    clear and XP is spent (Rule 9).

Actions:
    ``SessionAct.TRAIT_0 + i`` (ids 0-6) build the pool on trait i (Rule 2; only traits that apply),
    ``NO_TRAIT`` (7); ``ACCEPT_HELP`` / ``DECLINE_HELP`` (8, 9) the helper's die (Rule 6); ``RETRY`` /
    ``GIVE_UP`` (10, 11) after a failure (Rule 4, ``session.retries``); ``SESSION_SPEND_0 + k`` (12 + k,
    k = 0..``pool.cap``) spend k pool dice, up to the pool held. The action space has 12 + cap + 1 ids.
    Decisions come in the order trait → help (if offered) → spend, then retry after a failure.

Observation:
    37 floats in [-1, 1] (:func:`envs.blackbird.observation.session_observation`): pool and helper pool,
    the phase (one-hot), the obstacle (difficulty, opposition, critical, flag, joint), each trait's dice,
    the trait chosen, help taken, the roll's dice so far, perks, attempt, conditions, progress through the
    sessions, the share won so far, XP, and at the spend decision the exact pass chance with no pool dice
    and with all of them.

Rewards:
    At the end only: the stakes won divided by the stakes drawn (``session.ordinary_value`` 1,
    ``session.critical_value`` 3), in [0, 1]. The "winner" is the character if more than half was won.

Episode end:
    After the last obstacle of the last session (``EndReason.COMPLETED``). Every obstacle ends in a pass,
    a failure without retries left, or giving up, so a session always ends.

Arguments:
    The resolved ``BlackbirdConfig``: ``pool.*``, ``help.*``, ``difficulty.*``, ``conditions``, ``perk.*``,
    ``field.*``, ``advancement.*``, ``contest.*`` and ``session.*`` (see ``rules.toml``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Hashable

import numpy as np
from pydantic import BaseModel

from envs.blackbird.actions import (
    CHANCE_CONTEXT,
    SESSION_CONTEXTS,
    SESSION_DECISIONS,
    SESSION_SPEND_0,
    SessionAct,
    dice_phrase,
    session_label,
    session_option,
    spend_context,
    successes_phrase,
)
from envs.blackbird.actions import SessionPhase as Phase
from envs.blackbird.config import BlackbirdConfig, ObstacleRow
from envs.blackbird.dice import (
    ROLL_OFF_OUTCOMES,
    Roll,
    RollOff,
    pass_probability,
    read_faces,
    roll_distribution,
    sample_roll,
    sample_roll_off,
)
from envs.blackbird.observation import SESSION_OBS_SIZE, session_observation
from envs.blackbird.rules import (
    Character,
    Pool,
    award_perk,
    base_difficulty,
    build_pool,
    condition_modifier,
    contest_condition_penalty,
    contest_win_chance,
    contest_winner,
    create_character,
    effective_difficulty,
    field_lesson,
    forbidden_tags,
    help_offered,
    joint_successes,
    learn_from_field,
    net_successes,
    passes,
    perk_eligible,
    reset_pool_at_session_end,
    settle_help,
    settle_pool,
    spend_experience,
    spendable,
    starting_pool,
    trait_applies,
)
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State

OBS_SIZE = SESSION_OBS_SIZE

# Hot-path aliases: in Python 3.11 every ``Phase.SPEND``-style member lookup is a descriptor call.
DRAW, TRAIT, HELP, SPEND, ROLL = Phase.DRAW, Phase.TRAIT, Phase.HELP, Phase.SPEND, Phase.ROLL
JOINT, OPPOSE, ROLL_OFF, RETRY = Phase.JOINT, Phase.OPPOSE, Phase.ROLL_OFF, Phase.RETRY
ACCEPT_HELP, DECLINE_HELP = int(SessionAct.ACCEPT_HELP), int(SessionAct.DECLINE_HELP)
RETRY_ACT, GIVE_UP, NO_TRAIT = int(SessionAct.RETRY), int(SessionAct.GIVE_UP), int(SessionAct.NO_TRAIT)
HELP_ACTIONS = (ACCEPT_HELP, DECLINE_HELP)
RETRY_ACTIONS = (RETRY_ACT, GIVE_UP)
PLAYER = {ph: (0 if ph in SESSION_DECISIONS else CHANCE) for ph in Phase}
"""Who moves in each phase: the character at a decision, else chance."""


class _Readings:
    """What the session reads off one obstacle, the conditions and the sheet: pools, odds, slots.

    Each is a function of the config, the obstacle, the conditions and the sheet only, so one set of
    readings serves every game of a config (and every clone) that meets the same obstacle with the same
    conditions and sheet (:func:`_readings`); each entry is filled the first time it is read.
    """

    __slots__ = (
        "base_pools",
        "pools",
        "pass_chances",
        "difficulty",
        "opposed_penalty",
        "condition_modifier",
        "trait_actions",
        "obstacle_view",
    )

    def __init__(self) -> None:
        self.base_pools: dict[int | None, Pool] = {}
        self.pools: dict[tuple[int | None, int, int], Pool] = {}
        self.pass_chances: dict[tuple[int | None, int, int], float] = {}
        self.difficulty: int | None = None
        self.opposed_penalty: int | None = None
        self.condition_modifier: int | None = None
        self.trait_actions: tuple[int, ...] | None = None
        self.obstacle_view: np.ndarray | None = None


class _SessionSetup:
    """What a new session reads from its config, worked out once per config object (the config is frozen).

    The starting sheet (shared by every new session until play changes it), the obstacle draw table, the
    readings met so far, the sheets met (by id) and the steps Rule 9 takes from them, and the config values
    read on every step, resolved into plain attributes (no model attribute chains on hot paths).
    """

    def __init__(self, cfg: BlackbirdConfig) -> None:
        s = cfg.session
        self.character = create_character(s.character)
        total_w = sum(o.weight for o in s.obstacles)
        self.draw = tuple((i, o.weight / total_w) for i, o in enumerate(s.obstacles))
        self.cum = tuple(np.cumsum([p for _, p in self.draw]).tolist())
        self.readings: dict[Hashable, _Readings] = {}
        self.sheets: dict[Hashable, int] = {}  # a sheet's key -> a small id (the readings' key holds the id)
        self._next_sheet = 0
        self.sheet_keys: dict[int, Hashable] = {}  # sheet id -> the sheet's Character.key()
        self.start_sheet = self.sheet_id(self.character)
        self.spend_actions: dict[int, tuple[int, ...]] = {}  # pool held -> the legal "spend k" ids
        self.advances: dict[int, tuple[Character, tuple[str, ...], int]] = {}  # sheet id -> Rule 9 at session end
        self.xp_per_session = s.xp_per_session
        self.obstacles = tuple(s.obstacles)
        self.success_on = cfg.dice.success_on
        self.pool_rules = cfg.pool
        self.pool_enabled = cfg.pool.enabled
        self.cap = cfg.pool.cap
        self.helper_pool = s.helper_pool
        self.has_helper = s.helper_pool > 0
        self.helper_scale = max(1, s.helper_pool)
        self.joint_dice = s.helper_joint_dice
        self.dice_per_helper = cfg.help.dice_per_helper
        self.help_returned = cfg.help.returned_on_failure
        self.learn_tag = cfg.field.learn_tag
        self.sessions = s.sessions
        self.per_session = s.obstacles_per_session
        self.retries = s.retries
        self.stakes = tuple(s.critical_value if o.stake == "critical" else s.ordinary_value for o in s.obstacles)
        # Rule 12: the helper rolls along on a joint obstacle (when there is a helper with dice to roll)
        self.joins = tuple(o.joint and self.has_helper and self.joint_dice > 0 for o in s.obstacles)

    def sheet_id(self, char: Character) -> int:
        """A small id of what the sheet holds now (traits, flags, levels, tags in sheet order, perks, XP).

        The tags are read in their order on the sheet, because Rule 9 breaks ties by sheet order.
        """
        key = (
            tuple(char.traits),
            char.flags,
            tuple(char.trait_levels),
            tuple(tuple(t.items()) for t in char.tags),
            tuple(sorted(char.perks.items())),
            char.xp,
        )
        found = self.sheets.get(key)
        if found is None:
            if len(self.sheets) >= _READINGS_LIMIT:
                self.sheets.clear()  # ids are never reused: a state holding an old one still names its own sheet
                self.sheet_keys.clear()
            found = self.sheets[key] = self._next_sheet
            self.sheet_keys[found] = char.key()
            self._next_sheet += 1
        return found


_SETUPS: dict[int, tuple[BlackbirdConfig, _SessionSetup]] = {}
_READINGS_LIMIT = 2048  # readings kept per config before the table starts afresh (a few KB each)
_CONFIGS_LIMIT = 8  # configs whose setup is kept (a sweep plays many configs one after another)


def _setup(cfg: BlackbirdConfig) -> _SessionSetup:
    """The setup of ``cfg``, from the cache (keyed by identity; the entry keeps the config alive)."""
    hit = _SETUPS.get(id(cfg))
    if hit is None or hit[0] is not cfg:
        if len(_SETUPS) >= _CONFIGS_LIMIT:
            _SETUPS.clear()
        hit = _SETUPS[id(cfg)] = (cfg, _SessionSetup(cfg))
    return hit[1]


def _readings(setup: _SessionSetup, obstacle: int | None, conditions: tuple[str, ...], sheet: int) -> _Readings:
    """The readings of a config's setup for an obstacle, conditions and sheet (its :meth:`_SessionSetup.sheet_id`)."""
    table = setup.readings
    key = (obstacle, conditions, sheet)
    found = table.get(key)
    if found is None:
        if len(table) >= _READINGS_LIMIT:
            table.clear()
        found = table[key] = _Readings()
    return found


class SessionState(State):
    """A Blackbird character meeting a run of obstacles over ``session.sessions`` sessions."""

    legal_sorted = True  # every legal tuple lists its ids in increasing order (``rulebreaker check`` verifies it)

    def __init__(self, cfg: BlackbirdConfig) -> None:
        super().__init__(1)
        self.cfg = cfg
        self.setup = setup = _setup(cfg)
        self.char: Character = setup.character  # shared until play changes it (copy on write: _own_sheet)
        self.pool = starting_pool(cfg.pool)
        self.helper_pool = setup.helper_pool
        self.conditions: tuple[str, ...] = ()
        self.session_no = 0
        self.obstacle_no = 0  # within the session
        self.obstacle: int | None = None  # index into the obstacle table (None: none drawn)
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
        self._sheet = setup.start_sheet
        self._invalidate()
        if self.narrating:
            self.narrate("session", f"Session 1 begins. {self.char.name} has {self.pool} pool dice.", 0)

    # -- the position, read through the rules -----------------------------------------------------------
    @property
    def ob(self) -> ObstacleRow:
        """The obstacle being faced."""
        assert self.obstacle is not None, "no obstacle has been drawn"
        return self.setup.obstacles[self.obstacle]

    def _invalidate(self) -> None:
        """Take the readings of the obstacle, the conditions and the sheet now held (any of them changed)."""
        self._r = _readings(self.setup, self.obstacle, self.conditions, self._sheet)

    def _own_sheet(self) -> Character:
        """The sheet, made this state's own copy before play changes it (clones share one until then)."""
        self.char = self.char.copy()
        return self.char

    def obstacle_view(self, encode: Callable[[SessionState], np.ndarray]) -> np.ndarray:
        """The observation slots read off the obstacle, conditions and sheet, encoded once while they hold."""
        r = self._r
        if r.obstacle_view is None:
            r.obstacle_view = encode(self)
        return r.obstacle_view

    def stake_value(self, ob: ObstacleRow) -> float:
        """What winning an obstacle's stake is worth (the scenario's scoring)."""
        s = self.cfg.session
        return s.critical_value if ob.stake == "critical" else s.ordinary_value

    def has_helper(self) -> bool:
        """Whether the session has a fellow player who can help (``session.helper_pool`` > 0)."""
        return self.setup.has_helper

    def difficulty(self) -> int:
        """Rule 4/7: the current obstacle's difficulty with the character's conditions."""
        r = self._r
        if r.difficulty is None:
            base = base_difficulty(self.ob.difficulty, self.cfg.difficulty.default)
            r.difficulty = effective_difficulty(self.cfg, base, self.conditions)
        return r.difficulty

    def opposed_penalty(self) -> int:
        """Rule 7 in a contested roll: conditions take successes off the character's side."""
        r = self._r
        if r.opposed_penalty is None:
            r.opposed_penalty = contest_condition_penalty(self.cfg.conditions, self.conditions)
        return r.opposed_penalty

    def condition_modifier(self) -> int:
        """Rule 7: what the character's conditions add to a difficulty (read once while they hold)."""
        r = self._r
        if r.condition_modifier is None:
            r.condition_modifier = condition_modifier(self.cfg.conditions, self.conditions)
        return r.condition_modifier

    def pool_for(self, trait: int | None, spend: int = 0, help_dice: int = 0) -> Pool:
        """Rule 2: the dice for the current obstacle on a trait (or none), with pool and help dice."""
        r = self._r
        base = r.base_pools.get(trait)
        if base is None:
            ob = self.ob
            forbidden = forbidden_tags(self.cfg.conditions, self.conditions)
            base = build_pool(self.cfg, self.char, trait, ob.traits, ob.tags, ob.flag, ob.name, forbidden)
            r.base_pools[trait] = base
        if not (spend or help_dice):
            return base
        key = (trait, spend, help_dice)
        pool = r.pools.get(key)
        if pool is None:
            pool = Pool(base.base, base.trait, base.tags, base.flag, base.perks, spend, help_dice, base.maneuver)
            r.pools[key] = pool
        return pool

    def spendable(self) -> int:
        """Rule 5: the pool dice that can go on this roll."""
        return spendable(self.pool, self.setup.pool_rules)

    def pass_chance(self, spend: int, trait: int | None = -1, help_dice: int = -1) -> float:
        """Exact P(pass) of the current obstacle for a choice of spend (and trait / help, default: as chosen)."""
        t = self.trait if trait == -1 else trait
        h = self.help_given if help_dice == -1 else help_dice
        key = (t, spend, h)
        chances = self._r.pass_chances
        known = chances.get(key)
        if known is None:
            known = chances[key] = self._pass_chance(t, spend, h)
        return known

    def _pass_chance(self, t: int | None, spend: int, h: int) -> float:
        n = self.pool_for(t).total + spend + h
        ob, so = self.setup.obstacles[self.obstacle], self.setup.success_on  # type: ignore[index]  # (self.ob)
        if ob.joint and self.has_helper():
            n += self.setup.joint_dice
        if ob.opposition:
            return contest_win_chance(n, ob.opposition, so, self.opposed_penalty(), self.cfg.contest)
        return pass_probability(n, so, self.difficulty())

    # -- protocol -------------------------------------------------------------------------------------
    def current_player(self) -> int:
        if self._outcome is not None:
            return TERMINAL
        return PLAYER[self.phase]

    def decision_context(self) -> str:
        if self.phase is SPEND:
            return spend_context(self.ob.stake)
        return SESSION_CONTEXTS.get(self.phase, CHANCE_CONTEXT)

    def legal_actions(self) -> list[int]:
        return list(self.legal_tuple())

    def legal_tuple(self) -> tuple[int, ...]:
        """The phase's legal ids: kept tuples of the setup or the module (nobody can change them)."""
        if self._outcome is not None:
            return ()
        ph = self.phase
        if ph is SPEND:
            return self._spend_actions()
        if ph is TRAIT:
            return self._traits_that_apply()
        if ph is HELP:
            return HELP_ACTIONS
        if ph is RETRY:
            return RETRY_ACTIONS
        return ()

    def _spend_actions(self) -> tuple[int, ...]:
        """Rule 5: the "spend k pool dice" ids open now, k = 0 up to the pool dice that can be spent."""
        table = self.setup.spend_actions
        acts = table.get(self.pool)
        if acts is None:
            acts = table[self.pool] = tuple(range(SESSION_SPEND_0, SESSION_SPEND_0 + self.spendable() + 1))
        return acts

    def _traits_that_apply(self) -> tuple[int, ...]:
        """Rule 2: the trait actions open for the current obstacle (traits that apply), then "no trait"."""
        r = self._r
        if r.trait_actions is None:
            ob = self.ob
            acts = [
                SessionAct.TRAIT_0 + i
                for i in range(len(self.char.traits))
                if trait_applies(self.char, i, ob.traits, ob.tags)
            ]
            r.trait_actions = (*acts, NO_TRAIT)
        return r.trait_actions

    def action_label(self, action: int) -> str:
        return session_label(action, self.char.traits)

    def option_of(self, action: int) -> str | None:
        return session_option(action, self.spendable())

    def apply_action(self, action: int) -> None:
        ph = self.phase
        if self._outcome is None:
            if ph is SPEND:
                if action in self._spend_actions():
                    self._spend(action - SESSION_SPEND_0)
                    return
            elif ph is TRAIT:
                if action in self._traits_that_apply():
                    self._choose_trait(action)
                    return
            elif ph is HELP:
                if action in HELP_ACTIONS:
                    self._choose_help(action == ACCEPT_HELP)
                    return
            elif ph is RETRY and action in RETRY_ACTIONS:
                self._retry_or_give_up(action == RETRY_ACT)
                return
        raise IllegalActionError(f"illegal action {action} ({self.action_label(action)}) in phase {ph.name}")

    # -- decisions --------------------------------------------------------------------------------------
    def _choose_trait(self, action: int) -> None:
        """Rule 2: the one trait the pool is built on; then Rule 6's help, if a helper can give a die."""
        self.trait = None if action == NO_TRAIT else action - SessionAct.TRAIT_0
        if self.narrating:
            who = self.char.short
            text = (
                f"{who} goes without a trait."
                if self.trait is None
                else f"{who} builds the pool on {self.char.traits[self.trait]}."
            )
            self.narrate("trait", text, 0)
        self.help_given = 0
        k = self.setup
        offered = k.has_helper and help_offered(
            self.helper_pool,
            k.dice_per_helper,
            k.pool_enabled,
            k.obstacles[self.obstacle].joint,  # type: ignore[index]
        )
        self.phase = HELP if offered else SPEND

    def _choose_help(self, accept: bool) -> None:
        """Rule 6: take the helper's die (or not)."""
        if accept:
            self.help_given = self.setup.dice_per_helper
            if self.narrating:
                self.narrate("help", f"The helper gives {self.char.short} a die from their pool (Rule 6).", 0)
        self.phase = SPEND

    def _spend(self, k: int) -> None:
        """Rule 5: add k pool dice; the pool is built (Rule 2) and rolled."""
        self.spent = k
        self.breakdown = self.pool_for(self.trait, k, self.help_given)
        if self.narrating:
            ob = self.ob
            target = f"{ob.opposition} opposing dice" if ob.opposition else f"difficulty {self.difficulty()}"
            self.narrate(
                "pool",
                f"{self.char.short} rolls {dice_phrase(self.breakdown.total)} ({self.breakdown.description}) "
                f"against {target}.",
                0,
                spent=k,
            )
        self.phase = ROLL

    def _retry_or_give_up(self, retry: bool) -> None:
        """Rule 4: after a failure the character may try again."""
        if retry:
            self.attempt += 1
            if self.narrating:
                self.narrate("retry", f"{self.char.short} tries again.", 0)
            self.phase = TRAIT
        else:
            if self.narrating:
                self.narrate("give_up", f"{self.char.short} lets '{self.ob.name}' go.", 0)
            self._next_obstacle()

    # -- chance -----------------------------------------------------------------------------------------
    def _dice_now(self) -> int:
        if self.phase is ROLL:
            return self.breakdown.total
        if self.phase is JOINT:
            return self.setup.joint_dice
        return self.ob.opposition

    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        if self.phase is DRAW:
            return list(self.setup.draw)
        if self.phase is ROLL_OFF:
            return list(ROLL_OFF_OUTCOMES)
        if self.phase in (Phase.ROLL, Phase.JOINT, Phase.OPPOSE):
            return list(roll_distribution(self._dice_now(), self.setup.success_on))
        raise ValueError("not a chance node")

    def sample_chance(self, rng: Rng) -> Hashable:
        ph = self.phase
        if ph is ROLL:
            return sample_roll(rng, self.breakdown.total, self.setup.success_on)
        if ph is DRAW:
            cum = self.setup.cum
            i = bisect_right(cum, rng.random())  # the first obstacle whose cumulative weight exceeds the draw
            return i if i < len(cum) else len(cum) - 1
        if ph is ROLL_OFF:
            return sample_roll_off(rng)
        return sample_roll(rng, self._dice_now(), self.setup.success_on)

    def force_faces(self, faces: tuple[int, ...] | list[int]) -> None:
        """Apply a roll given as d6 faces (golden tests read like the rulebook's examples)."""
        if self.phase is ROLL_OFF:
            a, b = faces
            self.apply_chance(RollOff(0) if a > b else RollOff(1) if b > a else RollOff(None))
        else:
            if len(faces) != self._dice_now():
                raise ValueError(f"expected {self._dice_now()} faces, got {len(faces)}")
            self.apply_chance(read_faces(faces, self.setup.success_on))

    def apply_chance(self, outcome: Hashable) -> None:
        ph = self.phase
        if ph is ROLL:
            self._own_roll(outcome if type(outcome) is Roll else Roll(*outcome))  # type: ignore[misc]
        elif ph is DRAW:
            self._draw_obstacle(int(outcome))  # type: ignore[call-overload]
        elif ph is JOINT:
            self.partner = Roll(*outcome).successes  # type: ignore[misc]
            if self.narrating:
                self.narrate("joint", f"The helper joins in: {successes_phrase(self.partner)} (Rule 12).", 0)
            if self.ob.opposition:
                self.phase = OPPOSE
            else:
                self._resolve_fixed()
        elif ph is OPPOSE:
            self.opposition = Roll(*outcome).successes  # type: ignore[misc]
            self._resolve_contest()
        elif ph is ROLL_OFF:
            ro = outcome if isinstance(outcome, RollOff) else RollOff(outcome)  # type: ignore[arg-type]
            if ro.winner is None:
                self.narrate("roll_off", "The roll-off is tied; roll again.", 0)
                return
            if self.narrating:
                winner = "The character" if ro.winner == 0 else "The opposition"
                self.narrate("roll_off", f"{winner} wins the roll-off.", 0)
            self._resolve(ro.winner == 0, None)
        else:
            raise ValueError("not a chance node")

    def _draw_obstacle(self, index: int) -> None:
        self.obstacle = index
        self._invalidate()
        self.attempt = 0
        self.trait = None
        self.at_stake += self.setup.stakes[index]
        if self.narrating:
            ob = self.ob
            kind = "opposed" if ob.opposition else f"difficulty {self.difficulty()}"
            self.narrate("obstacle", f"Obstacle: {ob.name} ({kind}, {ob.stake} stake).", 0, obstacle=ob.name)
        self.phase = TRAIT

    def _own_roll(self, roll: Roll) -> None:
        """The character's dice are in; the helper's (Rule 12) or the opposition's (Rule 11) may follow."""
        self.own = roll
        if self.narrating:
            sixes = f"{roll.sixes} {'six' if roll.sixes == 1 else 'sixes'}"
            self.narrate("roll", f"{self.char.short} rolls {successes_phrase(roll.successes)} ({sixes}).", 0)
        i = self.obstacle
        assert i is not None
        if self.setup.joins[i]:
            self.phase = JOINT
        elif self.setup.obstacles[i].opposition:
            self.phase = OPPOSE
        else:
            self._resolve_fixed()

    # -- resolution -----------------------------------------------------------------------------------
    def _total_successes(self) -> int:
        """Rules 3 and 12: the character's successes, plus the helper's in a joint action."""
        assert self.own is not None
        mine = net_successes(self.own, 0)
        joint = self.setup.obstacles[self.obstacle].joint  # type: ignore[index]  # self.ob, without the property call
        return joint_successes((mine, self.partner)) if joint else mine

    def _resolve_fixed(self) -> None:
        """Rule 4: against a difficulty."""
        d = self.difficulty()
        self._resolve(passes(self._total_successes(), d), d)

    def _resolve_contest(self) -> None:
        """Rule 11: against the opposition's successes; a tie rolls off (or fails, without the roll-off)."""
        mine = max(0, self._total_successes() - self.opposed_penalty())
        if self.narrating:
            self.narrate("oppose", f"The opposition rolls {successes_phrase(self.opposition)} against {mine}.", 0)
        w = contest_winner(mine, self.opposition)
        if w is None:
            if self.cfg.contest.rolloff_on_tie:
                self.phase = ROLL_OFF
                return
            self._resolve(False, None)
            return
        self._resolve(w == 0, None)

    def _resolve(self, passed: bool, difficulty: int | None) -> None:
        """Rules 5, 6, 7, 8, 10: what a passed or failed roll does to the pool, the helper, the sheet."""
        k, talk = self.setup, self.narrating
        ob = k.obstacles[self.obstacle]  # type: ignore[index]  # self.ob, without the property call (a roll is in)
        assert self.own is not None
        roll = self.own
        # the roll is spent: clear it so that positions after it share one key (exact solvers)
        self.own, self.partner, self.opposition = None, 0, 0
        before = self.pool
        if k.pool_enabled:
            self.pool = settle_pool(self.pool, self.spent, passed, k.pool_rules)
        if self.help_given:
            self.helper_pool = settle_help(self.helper_pool, self.help_given, passed, k.help_returned)
        if passed:
            self.passed_count += 1
            self.won += k.stakes[self.obstacle]  # type: ignore[index]
            if talk:
                lost = f"; the {self.spent} pool dice are lost" if self.spent and k.pool_enabled else ""
                self.narrate(
                    "pass",
                    f"Pass — {self.char.short} overcomes '{ob.name}'{lost} (pool {before} → {self.pool}).",
                    0,
                    passed=True,
                    spent=self.spent,
                )
            sheet_changed = False
            if (
                difficulty is not None
                and perk_eligible(roll, difficulty)
                and award_perk(self._own_sheet(), ob.name, self.cfg)
            ):
                sheet_changed = True
                if talk:
                    self.narrate(
                        "perk",
                        f"{roll.sixes} sixes against difficulty {difficulty}: "
                        f"{self.char.short} earns a perk for '{ob.name}' (Rule 10).",
                        0,
                    )
            if k.learn_tag and field_lesson(self.char, self.breakdown, True, ob.traits, ob.tags):
                tag = learn_from_field(self._own_sheet(), self.breakdown, True, ob.traits, ob.tags)
                if tag:
                    sheet_changed = True
                    if talk:
                        self.narrate(
                            "field",
                            f"{self.char.short} passed without trait or tag dice and learns the tag '{tag}' (Rule 8).",
                            0,
                        )
            if sheet_changed:
                self._sheet = k.sheet_id(self.char)  # _next_obstacle takes the new readings
            self._next_obstacle()
            return
        self.failed_count += 1
        if talk:
            self.narrate(
                "fail",
                f"Fail — {self.char.short} keeps the pool dice and gains {self.pool - before} "
                f"(pool {before} → {self.pool}).",
                0,
                passed=False,
                spent=self.spent,
            )
        if ob.condition_on_failure and ob.condition_on_failure not in self.conditions:
            self.conditions = tuple(sorted((*self.conditions, ob.condition_on_failure)))
            self._invalidate()
            if talk:
                self.narrate("condition", f"{self.char.short} is now {ob.condition_on_failure} (Rule 7).", 0)
        self.spent = self.help_given = 0
        self.trait = None
        if self.attempt < k.retries:
            self.phase = RETRY
        else:
            self._next_obstacle()

    def _next_obstacle(self) -> None:
        self.obstacle_no += 1
        self.spent = self.help_given = 0
        self.trait = None
        self.obstacle = None
        if self.obstacle_no >= self.setup.per_session:
            self._end_session()
            return
        self._invalidate()
        self.phase = DRAW

    def _end_session(self) -> None:
        """Rules 5, 7, 9: the pool resets, conditions clear, XP is earned and spent."""
        k = self.setup
        self.session_no += 1
        self.obstacle_no = 0
        if k.pool_enabled:
            self.pool = reset_pool_at_session_end(k.pool_rules)
        self.helper_pool = k.helper_pool
        self.conditions = ()
        bought = self._advance()
        self._invalidate()
        if self.narrating:
            extra = f" Advances: {', '.join(bought)}." if bought else ""
            self.narrate("session", f"Session {self.session_no} ends; the pool returns to {self.pool}.{extra}", 0)
        if self.session_no >= k.sessions:
            share = self.won / self.at_stake if self.at_stake else 0.0
            winner = 0 if share > 0.5 else None  # the scenario's "more than half won"
            self.phase = Phase.OVER
            self.finish(
                winner,
                EndReason.COMPLETED,
                [share],
                f"{self.char.short} won {self.won:g} of {self.at_stake:g} at stake "
                f"({self.passed_count} passes, {self.failed_count} failures)",
            )
            return
        if self.narrating:
            self.narrate("session", f"Session {self.session_no + 1} begins.", 0)
        self.phase = DRAW

    def _advance(self) -> list[str]:
        """Rule 9 at a session's end: the XP earned, and what it buys (returned, for the narration).

        The sheet after it follows from the sheet before it alone, so the setup keeps each such step: the
        sheet after it (shared by every state that takes the step; any later change copies it first), what
        was bought, and the new sheet's id.
        """
        k = self.setup
        step = k.advances.get(self._sheet)
        if step is None:
            char = self.char.copy()
            char.xp += k.xp_per_session
            bought = tuple(spend_experience(char, self.cfg.advancement))
            if len(k.advances) >= _READINGS_LIMIT:
                k.advances.clear()
            step = k.advances[self._sheet] = (char, bought, k.sheet_id(char))
        self.char, taken, self._sheet = step
        return list(taken)

    # -- analysis ------------------------------------------------------------------------------------
    def resources(self, seat: int) -> dict[str, float]:
        return {"pool": float(self.pool), "helper_pool": float(self.helper_pool)}

    def key(self) -> Hashable:
        return (
            self.phase,
            self.session_no,
            self.obstacle_no,
            self.obstacle,
            self.attempt,
            self.pool,
            self.helper_pool,
            self.conditions,
            self.trait,
            self.help_given,
            self.spent,
            self.own,
            self.partner,
            self.opposition,
            self.won,
            self.at_stake,
            self.setup.sheet_keys.get(self._sheet) or self.char.key(),
            self._outcome,
        )

    def clone(self) -> SessionState:
        # shallow: the config and the logged events are immutable; the caches may be shared, because every
        # change to what they are read from (obstacle, conditions, sheet) replaces them (see _invalidate);
        # the sheet too is shared until play changes it (copy on write: _own_sheet)
        cls = self.__class__
        new = cls.__new__(cls)
        # attribute by attribute, not ``new.__dict__.update(...)``: a clone filled that way read its attributes through
        # CPython's generic lookup, ~18k instructions a step more than a state built by __init__ (by callgrind)
        for name, value in self.__dict__.items():
            setattr(new, name, value)
        new.log = list(self.log)
        return new

    def observation(self, seat: int) -> np.ndarray:
        return session_observation(self)


def new_session(cfg: BaseModel) -> SessionState:
    """The scenario's deterministic start (setup randomness comes through chance nodes)."""
    if not isinstance(cfg, BlackbirdConfig):
        raise TypeError(f"expected a BlackbirdConfig, got {type(cfg).__name__}")
    return SessionState(cfg)


__all__ = ["OBS_SIZE", "Phase", "SessionState", "new_session"]

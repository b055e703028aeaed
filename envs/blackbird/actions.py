"""Blackbird action tables: the action ids of both scenarios, their phases, labels and option groups.

Each scenario's named actions have fixed ids from 0 (:class:`SessionAct`, :class:`Maneuver`); after them
comes the range "spend k pool dice on this roll" (Rule 5), k = 0..``pool.cap``, so its length follows the
resolved config: a variant with a bigger cap gets a longer range and every named action keeps its id.
Nothing here decides a rule.
"""

from __future__ import annotations

import enum

from pydantic import BaseModel

from envs.blackbird.config import MAX_TRAITS, BlackbirdConfig


class SessionAct(enum.IntEnum):
    """The session's named actions; the spend range follows them (from :data:`SESSION_SPEND_0`)."""

    TRAIT_0 = 0  # TRAIT_0 + i: build the pool on trait i (Rule 2), i < MAX_TRAITS
    NO_TRAIT = MAX_TRAITS  # roll without a trait (base die, flag, perks, pool only)
    ACCEPT_HELP = NO_TRAIT + 1  # Rule 6
    DECLINE_HELP = NO_TRAIT + 2
    RETRY = NO_TRAIT + 3  # Rule 4: try again after a failure
    GIVE_UP = NO_TRAIT + 4


SESSION_SPEND_0 = int(SessionAct.GIVE_UP) + 1
"""Session action ``SESSION_SPEND_0 + k`` means "spend k pool dice on this roll"."""


class Maneuver(enum.IntEnum):
    """Rule 13/14: the maneuvers of a combat turn; the spend range follows them (from :data:`DUEL_SPEND_0`)."""

    ATTACK = 0
    CALLED_SHOT = 1
    AIM = 2
    ALL_OUT_ATTACK = 3
    ALL_OUT_DEFENSE = 4
    MOVE_ATTACK = 5
    MOVE = 6
    READY = 7
    COVER = 8


DUEL_SPEND_0 = int(Maneuver.COVER) + 1
"""Duel action ``DUEL_SPEND_0 + k`` means "spend k pool dice on this roll"."""
ATTACKS = frozenset({Maneuver.ATTACK, Maneuver.CALLED_SHOT, Maneuver.ALL_OUT_ATTACK, Maneuver.MOVE_ATTACK})
"""The maneuvers that open an attack (Rule 13)."""


def session_spend(k: int) -> int:
    """The session's action id of "spend k pool dice"."""
    return SESSION_SPEND_0 + k


def duel_spend(k: int) -> int:
    """The duel's action id of "spend k pool dice"."""
    return DUEL_SPEND_0 + k


def spend_range(cfg: BaseModel) -> int:
    """Rule 5: how many "spend k" ids the rules need — k = 0 up to ``pool.cap``, the most a pool can hold."""
    if not isinstance(cfg, BlackbirdConfig):
        raise TypeError(f"expected a BlackbirdConfig, got {type(cfg).__name__}")
    return cfg.pool.cap + 1


def session_action_count(cfg: BaseModel) -> int:
    """Size of the session's action table under ``cfg`` (the named actions, then the spend range)."""
    return SESSION_SPEND_0 + spend_range(cfg)


def duel_action_count(cfg: BaseModel) -> int:
    """Size of the duel's action table under ``cfg`` (the maneuvers, then the spend range)."""
    return DUEL_SPEND_0 + spend_range(cfg)


class SessionPhase(enum.IntEnum):
    """Where a session stands: a decision of the character or a chance node."""

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


SESSION_DECISIONS = (SessionPhase.TRAIT, SessionPhase.HELP, SessionPhase.SPEND, SessionPhase.RETRY)
"""The session's decision phases, in observation order."""


class DuelPhase(enum.IntEnum):
    """Where a duel stands: a fighter's decision or a chance node."""

    MANEUVER = 0
    ATTACK_SPEND = 1
    DEFENSE_SPEND = 2
    CHECK_SPEND = 3
    ATTACK_ROLL = 4  # chance
    DEFENSE_ROLL = 5  # chance
    ROLL_OFF = 6  # chance (only if combat.tie_misses is off)
    CHECK_ROLL = 7  # chance
    OVER = 8


DUEL_DECISIONS = (DuelPhase.MANEUVER, DuelPhase.ATTACK_SPEND, DuelPhase.DEFENSE_SPEND, DuelPhase.CHECK_SPEND)
"""The duel's decision phases, in observation order."""
SPEND_PHASES = frozenset({DuelPhase.ATTACK_SPEND, DuelPhase.DEFENSE_SPEND, DuelPhase.CHECK_SPEND})
"""The duel phases whose decision is how many pool dice to spend."""

# -- decision contexts ---------------------------------------------------------------------------------
SESSION_CONTEXTS = {SessionPhase.TRAIT: "trait", SessionPhase.HELP: "help", SessionPhase.RETRY: "retry"}
"""Decision contexts of the session's non-spend phases (the spend context names the stake)."""
DUEL_CONTEXTS = {
    DuelPhase.MANEUVER: "maneuver",
    DuelPhase.ATTACK_SPEND: "attack_spend",
    DuelPhase.DEFENSE_SPEND: "defense_spend",
    DuelPhase.CHECK_SPEND: "consciousness_spend",
}
"""Decision contexts of the duel's phases."""
CHANCE_CONTEXT = "chance"


def spend_context(stake: str) -> str:
    """The session's spend decision, named by the obstacle's stake ("spend_ordinary", "spend_critical")."""
    return f"spend_{stake}"


# -- labels and option groups ----------------------------------------------------------------------------
def spend_label(k: int) -> str:
    """The label of "spend k pool dice"."""
    return f"spend {k} pool {'die' if k == 1 else 'dice'}"


def spend_option(k: int, available: int) -> str:
    """Option group of a spend action: none, some, or all of the pool dice that can be spent."""
    if k == 0:
        return "spend_0_pool"
    return "spend_all_pool" if k >= available else "spend_some_pool"


def session_label(action: int, traits: list[str]) -> str:
    """The label of a session action (``traits``: the character's trait names)."""
    if action >= SESSION_SPEND_0:
        return spend_label(action - SESSION_SPEND_0)
    if SessionAct.TRAIT_0 <= action < SessionAct.NO_TRAIT:
        i = action - SessionAct.TRAIT_0
        return f"use {traits[i]}" if i < len(traits) else f"trait slot {i}"
    return SessionAct(action).name.lower().replace("_", " ")


SESSION_OPTIONS = {
    SessionAct.NO_TRAIT: "no_trait",
    SessionAct.ACCEPT_HELP: "accept_help",
    SessionAct.DECLINE_HELP: "decline_help",
    SessionAct.RETRY: "retry",
    SessionAct.GIVE_UP: "give_up",
}
"""Option groups of the session's named actions (a trait action is "use_trait")."""


def session_option(action: int, spendable: int) -> str | None:
    """The option group of a session action (``spendable``: pool dice that can be spent now)."""
    if action >= SESSION_SPEND_0:
        return spend_option(action - SESSION_SPEND_0, spendable)
    if SessionAct.TRAIT_0 <= action < SessionAct.NO_TRAIT:
        return "use_trait"
    return SESSION_OPTIONS.get(SessionAct(action))


def maneuver_label(action: int) -> str:
    """The label of a duel action."""
    if action >= DUEL_SPEND_0:
        return spend_label(action - DUEL_SPEND_0)
    return Maneuver(action).name.lower().replace("_", " ")


def maneuver_option(action: int, spendable: int) -> str:
    """The option group of a duel action (``spendable``: pool dice the decider can spend now)."""
    if action >= DUEL_SPEND_0:
        return spend_option(action - DUEL_SPEND_0, spendable)
    return Maneuver(action).name.lower()


ATTACK_VERBS = {
    Maneuver.ATTACK: "attacks",
    Maneuver.CALLED_SHOT: "makes a called shot",
    Maneuver.ALL_OUT_ATTACK: "attacks all-out",
    Maneuver.MOVE_ATTACK: "attacks on the move",
}
"""How the narration names each attack."""


def dice_phrase(n: int) -> str:
    """Say a number of dice: "1 die", "3 dice"."""
    return f"{n} {'die' if n == 1 else 'dice'}"


def successes_phrase(n: int) -> str:
    """Say a number of successes: "1 success", "2 successes"."""
    return f"{n} success{'' if n == 1 else 'es'}"

"""In a Wicked Age machine stages: where a chapter is, and how a pending consequence is being settled.

Shared by the state machine (``conflict.py``) and the observation encoder (``observation.py``), which reads
the stage and the terms without importing the machine.
"""

from __future__ import annotations

import enum


class Stage(enum.IntEnum):
    """Where the chapter is."""

    BUILD = 0  # Rules 1-2: the sheets are being built
    DRAW = 1  # Rule 4: the forms that fit each PC's action are drawn
    PICK = 2  # Rule 4: forms (and strengths) are picked
    WINDOW = 3  # Rule 17: offers before a round's roll
    OPEN = 4  # Rule 7: the opening rolls
    TIE = 5  # Rule 8: opening ties
    TURN = 6  # Rules 9-13: moves and answers
    END = 7
    SETTLE = 8  # Rule 12 ("advantage_wins"): advantages left after the last round win


class Terms(enum.Enum):
    """Rules 14-17: the settling of a pending consequence."""

    ASK = "ask"  # the loser may offer a negotiated outcome instead of the default
    OFFERED = "offered"  # an offer (``terms_offer``) of ``terms_by`` awaits the other side's answer
    DEFAULT = "default"  # the winner picks exhausted or injured (or, once, proposes an offer of its own)
    AGREED = "agreed"  # the offer ``terms_offer`` was agreed: apply it

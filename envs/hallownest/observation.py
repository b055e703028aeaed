"""Hallownest observation: the flat, normalised view of the duel from one seat (every entry in [-1, 1]).

30 features of the seat's own bug, 30 of the opponent's, 20 shared. Each raw number is divided by a
scale (the most it usually reaches) and the vector is clipped to [-1, 1].
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.hallownest import rules as R
from envs.hallownest.actions import Phase
from envs.hallownest.rules import AttackKind

if TYPE_CHECKING:
    from envs.hallownest.duel import Bug, DuelState

BUG_FEATURES = 30
SHARED_FEATURES = 20
OBSERVATION_SIZE = 2 * BUG_FEATURES + SHARED_FEATURES
#: the decision contexts, one-hot in the shared features
CONTEXTS = (Phase.TURN, Phase.DEFENSE, Phase.HEART_ZERO, Phase.PROVOKED, Phase.DODGE_MOVE, Phase.RESIST)

# scales: the most each raw number usually reaches
POOL = 7.0  # Rule 5: characteristics and pools are capped at 7
HEART = 20.0
POOL_TEN = 10.0  # Rule 18: status pools stack up to 10 (delayed damage and successes share the scale)
PENALTY = 3.0
WEAPON_DAMAGE = 5.0
WEAPON_WEIGHT = 3.0
REROLLS = 2.0
ATTACKS = 4.0
SPEED = 10.0
FREE_MOVE = 4.0
QUARTERS = 4.0  # Rule 19
ATTACK_DICE = 14.0
PENDING_ATTACK_FEATURES = 9


def _bug_features(st: DuelState, b: Bug, seat: int) -> list[float]:
    p = b.p
    w = p.weapon
    return [
        b.heart / max(1, p.heart),
        p.heart / HEART,
        b.stamina / POOL,
        p.stamina / POOL,
        b.imbalance / max(1, st.cfg.imbalance.max),
        b.soul / POOL,
        b.focus_pending / POOL,
        float(b.at_dd),
        float(b.unconscious),
        float(b.dd_used),
        b.delayed / POOL_TEN,
        b.status / POOL_TEN,
        b.next_roll_penalty / PENALTY,
        float(b.grappled),
        float(b.holds),
        p.might / POOL,
        p.grace / POOL,
        p.shell / POOL,
        w.damage / WEAPON_DAMAGE,
        w.weight / WEAPON_WEIGHT,
        float(w.ranged),
        w.rerolls / REROLLS,
        b.attacks_made / ATTACKS,
        b.speed_left / SPEED,
        float(R.pogo_allowed(b.jumped, b.over_target, st.cfg.pogo.needs_pass_over, w)),
        b.free_move / FREE_MOVE,
        b.x / max(1, st.width - 1),
        b.y / max(1, st.height - 1),
        st.cover.get(b.pos, 0) / QUARTERS,
        float(st.order[0] == seat),
    ]


def encode_observation(st: DuelState, seat: int) -> np.ndarray:
    """The flat, normalised view of ``seat`` (its own bug first); every entry in [-1, 1]."""
    me, foe = st.bugs[seat], st.bugs[1 - seat]
    span = max(1, st.width - 1, st.height - 1)
    shared = [
        (foe.x - me.x) / span,
        (foe.y - me.y) / span,
        R.chebyshev(me.pos, foe.pos) / span,
        st.round / max(1, st.cfg.duel.max_rounds),
        float(st.active == seat),
    ]
    shared += [float(st.phase == c) for c in CONTEXTS]
    atk = st.atk
    if atk is not None:
        aw = st.bugs[atk.attacker].p.weapon
        shared += [
            atk.att_succ / POOL_TEN,
            atk.invested / POOL,
            atk.dice / ATTACK_DICE,
            aw.weight / WEAPON_WEIGHT,
            float(aw.ranged),
            float(atk.kind == AttackKind.POGO),
            float(atk.kind == AttackKind.GRAPPLE),
            float(atk.attacker == seat),
            float(atk.att_rolled),
        ]
    else:
        shared += [0.0] * PENDING_ATTACK_FEATURES
    vec = np.array(_bug_features(st, me, seat) + _bug_features(st, foe, 1 - seat) + shared, dtype=np.float32)
    np.clip(vec, -1.0, 1.0, out=vec)
    return vec

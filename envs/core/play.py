"""The one loop that moves a game forward: chance from an rng, seats from policies.

The Gymnasium adapter and every experiment driver use :func:`advance`, so there is exactly one
place where a game is stepped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from envs.core.dice import Rng
from envs.core.game import CHANCE, State
from envs.core.policy import Policy, UniformRandom, legal_mask

StepHook = Callable[[State, int, int], None]
"""Called as ``hook(state_before, seat, action)`` before each seat action is applied."""

ANY_SEAT = -3
"""``stop_at=ANY_SEAT``: stop at the first decision of any seat (only chance is played)."""


_PROMISES: dict[type[State], tuple[bool, bool, bool]] = {}
"""By state class: (player_kept, legal_sorted, legal_sorted and legal_kept), as :func:`advance` reads them."""


def _promises(cls: type[State]) -> tuple[bool, bool, bool]:
    out = _PROMISES[cls] = (bool(cls.player_kept), bool(cls.legal_sorted), bool(cls.legal_sorted and cls.legal_kept))
    return out


def advance(
    state: State,
    rng: Rng,
    policies: Sequence[Policy | None],
    num_actions: int,
    stop_at: int | None = None,
    policy_rngs: Sequence[Rng] | None = None,
    hook: StepHook | None = None,
    max_steps: int = 1_000_000,
) -> int:
    """Play chance and policy moves until ``stop_at`` is to move or the game ends.

    ``stop_at`` is a seat, ``ANY_SEAT`` (stop at every decision: the multi-agent adapter plays only
    chance here) or ``None`` (play to the end). ``policies[seat]`` may be ``None`` only for a seat
    where the loop stops. Returns the number of seat decisions made.
    """
    decisions = 0
    any_seat = stop_at == ANY_SEAT
    uniform = UniformRandom
    # the state class's promises, read once per class (three class-attribute reads through the instance cost more):
    # kept, its current_player() in _player (read, no method call per loop); presorted, its legal tuples in increasing
    # order (a uniform pick needs no sort); read, both that and its legal tuple kept in _legal (read, no call, no sort)
    cls = type(state)
    promises = _PROMISES.get(cls) or _promises(cls)
    kept, presorted, read = promises
    while True:
        player = state._player if kept else state.current_player()
        if player < 0:  # CHANCE or TERMINAL, the two players that are not seats (one test for both on a seat's turn)
            if player != CHANCE:
                return decisions
            state.apply_chance(state.sample_chance(rng))
            continue
        if player == stop_at or any_seat:
            return decisions
        if decisions >= max_steps:
            raise RuntimeError(f"game did not end within {max_steps} decisions")
        policy = policies[player]
        prng = policy_rngs[player] if policy_rngs else rng
        if type(policy) is uniform:  # exactly it (a subclass may pick otherwise): no mask needed
            # UniformRandom.act_legal, inlined (one call less per opponent decision): the same draw from the same ids
            ids = state._legal if read else state.legal_tuple() if presorted else sorted(state.legal_tuple())  # type: ignore[attr-defined]  # kept where legal_kept promises it
            action = ids[int(prng.random() * len(ids))]
        elif policy is None:
            raise ValueError(f"no policy for seat {player}")
        else:
            action = policy.act(state, legal_mask(state, num_actions), prng)
        if hook is not None:
            hook(state, player, action)
        state.apply_action(action)
        decisions += 1

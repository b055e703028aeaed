"""The core Rng: its draws, and copies that draw their own stream."""

import copy
import pickle
import random

from envs.core.dice import Rng


def test_draws_are_the_generators():
    rng, ref = Rng(42), random.Random(42)
    assert [rng.random() for _ in range(5)] == [ref.random() for _ in range(5)]
    assert rng.uniform() == ref.random()
    assert rng.d(6) == int(ref.random() * 6) + 1


def test_copies_continue_the_stream_on_their_own():
    """A deep copy or an unpickled Rng draws what the original draws next, without advancing the original."""
    for make in (copy.deepcopy, lambda r: pickle.loads(pickle.dumps(r))):
        rng = Rng(7)
        rng.random()
        twin = make(rng)
        ahead = [twin.random() for _ in range(3)]
        assert [rng.random() for _ in range(3)] == ahead
        assert twin.random is not rng.random

"""Reading and comparing In a Wicked Age rolls (pure functions; rule numbers cite docs/rules/wicked_age.md).

A roll is the faces of the form/strength dice plus the *sum* of its advantage d6s. Its reading
(:class:`Roll`) sorts the faces high to low and adds the advantage to the highest one only (Rule 6).
"""

from __future__ import annotations

import bisect
import enum
import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from envs.core.dice import Rng

KEY_LENGTH = 4
"""Roll tuples are padded with 0 to this length (Rule 6: shorter tuples are padded with 0)."""


class Result(enum.IntEnum):
    """Rule 11: the four results of an answer, from the answerer's side."""

    ABSOLUTE_LOSS = 0
    LOSES_ADVANTAGE = 1
    WINS_ADVANTAGE = 2
    ABSOLUTE_WIN = 3

    def made_absolute(self) -> Result:
        """Rule 12: in the last round an advantage result becomes absolute."""
        if self is _LOSES_ADVANTAGE:
            return _ABSOLUTE_LOSS
        if self is _WINS_ADVANTAGE:
            return _ABSOLUTE_WIN
        return self

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def is_absolute(self) -> bool:
        return self in (Result.ABSOLUTE_LOSS, Result.ABSOLUTE_WIN)


# Reading an enum member (``Result.ABSOLUTE_LOSS``) costs about as much as a whole small function call in Python 3.11
# (the enum type's attribute lookup), a module global next to nothing: the comparisons of every answer read these.
_ABSOLUTE_LOSS = Result.ABSOLUTE_LOSS
_LOSES_ADVANTAGE = Result.LOSES_ADVANTAGE
_WINS_ADVANTAGE = Result.WINS_ADVANTAGE
_ABSOLUTE_WIN = Result.ABSOLUTE_WIN


@dataclass(frozen=True, slots=True, init=False)
class Roll:
    """Rule 6: a read roll. ``faces`` as rolled (one per die), ``advantage`` the advantage dice's sum."""

    faces: tuple[int, ...]
    advantage: int
    key: tuple[int, ...] = field(compare=False, repr=False)
    """The tuple compared lexicographically: (high + advantage, 2nd, 3rd, …), padded with 0."""

    def __init__(self, faces: tuple[int, ...], advantage: int = 0) -> None:
        # a frozen record: the fields are set once, here, through their slot descriptors (one call instead of
        # the generated __init__ and a __post_init__, and cheaper than object.__setattr__: rolls are made at
        # every chance node of a playout)
        _SET_FACES(self, faces)
        _SET_ADVANTAGE(self, advantage)
        _SET_KEY(self, read_roll(faces, advantage))

    @property
    def high(self) -> int:
        return self.key[0]

    def text(self) -> str:
        """The rulebook's way of saying a roll: "9+1=10 and 1", "10 and 3"."""
        s = sorted(self.faces, reverse=True)
        if not s:
            return f"0+{self.advantage}={self.advantage}" if self.advantage else "nothing"
        head = f"{s[0]}+{self.advantage}={s[0] + self.advantage}" if self.advantage else str(s[0])
        return " and ".join([head, *(str(f) for f in s[1:])])


_SET_FACES = Roll.__dict__["faces"].__set__
_SET_ADVANTAGE = Roll.__dict__["advantage"].__set__
_SET_KEY = Roll.__dict__["key"].__set__


def read_roll(faces: Sequence[int], advantage: int = 0) -> tuple[int, ...]:
    """Rule 6: sort high to low, add all advantage to the highest die, pad with 0."""
    n = len(faces)
    if n == 2:  # KEY_LENGTH 4: the common rolls (a PC's two forms, an NPC's form) without a sort
        a, b = faces
        return (a + advantage, b, 0, 0) if a >= b else (b + advantage, a, 0, 0)
    if n == 1:
        return (faces[0] + advantage, 0, 0, 0)
    s = sorted(faces, reverse=True)
    if s:
        s[0] += advantage
    else:
        s = [advantage]
    if len(s) < KEY_LENGTH:
        s += _PADDING[len(s)]
    return tuple(s)


_PADDING = tuple((0,) * (KEY_LENGTH - n) for n in range(KEY_LENGTH))
"""The zeros that pad a reading of ``n`` dice to ``KEY_LENGTH`` (Rule 6)."""


def compare_answer(
    answer: tuple[int, ...], standing: tuple[int, ...], round_no: int, max_rounds: int, multiple: int = 2
) -> Result:
    """Rules 11 and 12: an answer against the standing (challenge) roll, from the answerer's side.

    Half or less of the standing high die loses outright; a lower roll loses the advantage;
    ``multiple`` times (double) or more wins outright; anything else, ties included, wins the
    advantage. In the last round an advantage result becomes absolute.
    """
    a, c = answer[0], standing[0]
    if multiple * a <= c:
        return _ABSOLUTE_LOSS
    if answer < standing:
        result = _LOSES_ADVANTAGE
    elif a >= multiple * c:
        return _ABSOLUTE_WIN
    else:
        result = _WINS_ADVANTAGE
    return result.made_absolute() if round_no >= max_rounds else result


_SIZE_KEYS: dict[tuple[int, ...], tuple[int, ...]] = {}
"""Rule 18: :func:`size_key` of each tuple of sizes already asked (the few rolls there are recur at every owe-list
check; cleared at :data:`_SIZE_KEYS_LIMIT`)."""
_SIZE_KEYS_LIMIT = 1 << 12


def size_key(sizes: Sequence[int]) -> tuple[int, ...]:
    """Rule 18: dice sizes largest first, padded with 0, for the "lesser dice" comparison.

    A tuple's key is kept in :data:`_SIZE_KEYS` (other sequences are read afresh: they may change).
    """
    if type(sizes) is tuple:  # exactly a tuple (a named tuple may compare otherwise)
        hit = _SIZE_KEYS.get(sizes)
        if hit is None:
            if len(_SIZE_KEYS) >= _SIZE_KEYS_LIMIT:
                _SIZE_KEYS.clear()
            hit = _SIZE_KEYS[sizes] = _size_key(sizes)
        return hit
    return _size_key(sizes)


def _size_key(sizes: Sequence[int]) -> tuple[int, ...]:
    s = sorted([x for x in sizes if x > 0], reverse=True)
    if len(s) < KEY_LENGTH:
        s += _PADDING[len(s)]
    return tuple(s)


def rolled_lesser_dice(mine: Sequence[int], theirs: Sequence[int]) -> bool:
    """Rule 18: compare die *sizes*, largest first, then the next: (d10,d8) is lesser than (d12,d4)."""
    return size_key(mine) < size_key(theirs)


def step_down(size: int, ladder: Sequence[int]) -> int:
    """Rule 3: lose one die size along the ladder (d12→d10→d8→d6→d4→0)."""
    if size <= 0:
        return 0
    for s in ladder:
        if s < size:
            return s
    return 0


# -- exact odds ----------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def advantage_sum_distribution(count: int, sides: int = 6) -> tuple[tuple[int, Fraction], ...]:
    """The distribution of the sum of ``count`` advantage dice with ``sides`` faces (Rule 13)."""
    dist: dict[int, Fraction] = {0: Fraction(1)}
    p = Fraction(1, sides)
    for _ in range(count):
        nxt: dict[int, Fraction] = {}
        for total, q in dist.items():
            for f in range(1, sides + 1):
                nxt[total + f] = nxt.get(total + f, Fraction(0)) + q * p
        dist = nxt
    return tuple(sorted(dist.items()))


@lru_cache(maxsize=256)
def roll_distribution(
    dice: tuple[int, ...], advantage: int = 0, sides: int = 6
) -> tuple[tuple[tuple[int, ...], Fraction], ...]:
    """The exact distribution of a roll's reading (Rule 6) for dice ``dice`` plus ``advantage`` dice."""
    live = tuple(d for d in dice if d > 0)
    counts: Counter[tuple[int, ...]] = Counter()
    for faces in itertools.product(*(range(1, d + 1) for d in live)):
        counts[tuple(sorted(faces, reverse=True))] += 1
    total = 1
    for d in live:
        total *= d
    out: dict[tuple[int, ...], Fraction] = {}
    for faces, n in counts.items():
        for adv, q in advantage_sum_distribution(advantage, sides):
            key = read_roll(faces, adv)
            out[key] = out.get(key, Fraction(0)) + Fraction(n, total) * q
    return tuple(sorted(out.items()))


def comparison_odds(
    answer_dice: Sequence[int],
    standing_dice: Sequence[int],
    answer_advantage: int = 0,
    standing_advantage: int = 0,
    advantage_sides: int = 6,
    last_round: bool = False,
    multiple: int = 2,
) -> dict[Result, Fraction]:
    """Exact probability of each Rule 11 result of an answer against a standing roll, both rolled.

    ``answer_dice``/``standing_dice`` are die sizes (e.g. ``(12, 10)``), each side adding its number
    of advantage dice (d``advantage_sides``). ``last_round`` applies Rule 12.
    """
    da = roll_distribution(tuple(answer_dice), answer_advantage, advantage_sides)
    dc = roll_distribution(tuple(standing_dice), standing_advantage, advantage_sides)
    rounds = (1, 1) if last_round else (1, 2)
    out = {r: Fraction(0) for r in Result}
    for kc, pc in dc:
        for ka, pa in da:
            out[compare_answer(ka, kc, rounds[0], rounds[1], multiple)] += pa * pc
    return out


RollOutcome = tuple[tuple[int, ...], int]
"""A roll as rolled: the faces of the form/strength dice (in the order of the dice) and the advantage dice's sum."""


@lru_cache(maxsize=32)
def roll_outcomes(dice: tuple[int, ...], advantage: int, sides: int = 6) -> tuple[tuple[RollOutcome, float], ...]:
    """Rules 6 and 13: every ``(faces, advantage_sum)`` a roll can show, with its probability.

    ``dice`` are the form/strength dice, ``advantage`` the number of advantage dice. This is the engine's
    ``chance_outcomes`` at a roll, cached: playouts meet the same rolls again and again.
    """
    total = 1
    for d in dice:
        total *= d
    advd = [(adv, float(q)) for adv, q in advantage_sum_distribution(advantage, sides)]
    return tuple(
        ((faces, adv), q / total) for faces in itertools.product(*(range(1, d + 1) for d in dice)) for adv, q in advd
    )


def roll_with_advantage(rng: Rng, dice: Sequence[int], advantage: int, sides: int = 6) -> tuple[tuple[int, ...], int]:
    """Rules 6 and 13: roll the form/strength dice, then the advantage dice; the faces and the advantage sum."""
    rnd = rng.random  # the draws of rng.roll_dice(dice) then rng.roll(advantage, sides), without their calls (and
    # the bound generator method itself, read from its slot: ``rng.uniform`` is a property, a frame per roll)
    n = len(dice)
    if n == 2:  # the common rolls (two forms, or a form and a strength), drawn in order without a comprehension
        d0, d1 = dice
        faces: tuple[int, ...] = (int(rnd() * d0) + 1, int(rnd() * d1) + 1)
    elif n == 3:  # noqa: PLR2004  (and with a strength's die)
        d0, d1, d2 = dice
        faces = (int(rnd() * d0) + 1, int(rnd() * d1) + 1, int(rnd() * d2) + 1)
    else:
        faces = tuple([int(rnd() * d) + 1 for d in dice])
    total = 0
    for _ in range(advantage):
        total += int(rnd() * sides) + 1
    return faces, total


def comparison_table(
    answer_dice: Sequence[int],
    standing_dice: Sequence[int],
    answer_advantage: int = 0,
    standing_advantage: int = 0,
    advantage_sides: int = 6,
    last_round: bool = False,
    multiple: int = 2,
) -> dict[Result, Fraction]:
    """:func:`comparison_odds` for pools of any size: the same exact table, by cumulative sums.

    With ``multiple >= 2`` the results nest (an absolute loss is a lower reading, an absolute win a higher
    or equal one), so for each answer reading three counts over the sorted standing readings decide it:
    the weight whose high die is at least ``multiple`` x its own, the weight above it, and the weight
    whose high die is at most its own divided by ``multiple``. Smaller multiples compare every pair.
    """
    da = roll_distribution(tuple(answer_dice), answer_advantage, advantage_sides)
    dc = roll_distribution(tuple(standing_dice), standing_advantage, advantage_sides)
    out = {r: Fraction(0) for r in Result}
    if multiple < 2:  # "double or more": below it the results no longer nest
        rounds = (1, 1) if last_round else (1, 2)
        for kc, pc in dc:
            for ka, pa in da:
                out[compare_answer(ka, kc, rounds[0], rounds[1], multiple)] += pa * pc
        return out
    keys = [k for k, _ in dc]  # sorted ascending
    cum = [Fraction(0)]
    for _, p in dc:
        cum.append(cum[-1] + p)
    high = max(k[0] for k in keys)
    at_most = [Fraction(0)] * (high + 2)  # at_most[x]: weight of standing readings whose high die is <= x
    for k, p in dc:
        at_most[k[0]] += p
    for x in range(1, high + 2):
        at_most[x] += at_most[x - 1]
    for ka, pa in da:
        a = ka[0]
        loss = 1 - at_most[min(multiple * a - 1, high + 1)]  # standing high >= multiple x a
        greater = 1 - cum[bisect.bisect_right(keys, ka)]  # standing reading above the answer's
        win = at_most[min(a // multiple, high + 1)]  # a >= multiple x standing high
        out[Result.ABSOLUTE_LOSS] += pa * loss
        out[Result.LOSES_ADVANTAGE] += pa * (greater - loss)
        out[Result.ABSOLUTE_WIN] += pa * win
        out[Result.WINS_ADVANTAGE] += pa * (1 - greater - win)
    if last_round:
        out[Result.ABSOLUTE_LOSS] += out[Result.LOSES_ADVANTAGE]
        out[Result.ABSOLUTE_WIN] += out[Result.WINS_ADVANTAGE]
        out[Result.LOSES_ADVANTAGE] = out[Result.WINS_ADVANTAGE] = Fraction(0)
    return out

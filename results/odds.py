"""Exact odds of each ruleset's core mechanic, their rendering, and the engine cross-check.

Every table is computed here by exact enumeration in integer arithmetic (multinomial counts over a
common denominator), so it is exact in :class:`~fractions.Fraction` and fast (well under 10 ms for
pools of 20 dice). The enumeration is written independently of the engines' own exact functions;
the tests check both against brute force. ``--simulate`` compares a table with frequencies sampled by
an engine's own roll code (the sampler is passed in, so this module never imports an engine).

A table's ``probabilities`` are an ordered mapping outcome -> probability. Outcomes listed in
``partition`` are mutually exclusive and sum to 1; the others (``pass``, ``crossroads_double``…) are
events beside them.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations_with_replacement, product
from math import comb, factorial
from pathlib import Path
from typing import Any

from envs.core.dice import Rng
from envs.core.errors import UserError

SIGMA_FLAG = 4.0
"""A simulated frequency more than this many standard errors from the exact value is flagged."""

MAX_POOL = 60
"""The largest pool the odds commands accept (exact tables stay fast far beyond any real pool)."""


@dataclass
class Simulation:
    """Frequencies of ``n`` rolls made by an engine's own roll code, beside an exact table."""

    n: int
    seed: int
    counts: dict[str, int]
    z: dict[str, float]  # (frequency - p) / standard error; inf when an impossible outcome occurred
    flagged: list[str]

    def frequency(self, outcome: str) -> float:
        return self.counts.get(outcome, 0) / self.n


@dataclass
class OddsTable:
    ruleset: str
    query: dict[str, Any]
    probabilities: dict[str, Fraction]
    partition: list[str]
    title: str = ""
    notes: list[str] = field(default_factory=list)
    simulation: Simulation | None = None

    @property
    def events(self) -> list[str]:
        return [o for o in self.probabilities if o not in self.partition]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ruleset": self.ruleset,
            "query": self.query,
            "probabilities": {o: float(p) for o, p in self.probabilities.items()},
            "fractions": {o: f"{p.numerator}/{p.denominator}" for o, p in self.probabilities.items()},
            "partition": list(self.partition),
            "events": self.events,
        }
        if self.notes:
            out["notes"] = list(self.notes)
        if self.simulation is not None:
            s = self.simulation
            out["simulation"] = {
                "n": s.n, "seed": s.seed, "sigma_flag": SIGMA_FLAG,
                "frequencies": {o: s.frequency(o) for o in self.probabilities},
                "z": {o: (None if math.isinf(s.z[o]) else s.z[o]) for o in self.probabilities},
                "flagged": list(s.flagged),
            }
        return out


# ------------------------------------------------------------------------------------------------
# Argument checks (each problem is one UserError line; the CLI exits 2)
# ------------------------------------------------------------------------------------------------
def check_range(name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise UserError(f"{name} must be between {low} and {high}, got {value}")


def parse_dice(text: str, allowed: Sequence[int], option: str) -> tuple[int, ...]:
    """``"d12,d10"`` -> ``(12, 10)``; unknown dice are one clear error naming the allowed ones."""
    valid = ", ".join(f"d{s}" for s in sorted(allowed, reverse=True))
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise UserError(f"{option} needs at least one die (e.g. d12,d10); allowed dice: {valid}")
    out = []
    for p in parts:
        t = p.lower().removeprefix("d")
        if not t.isdigit() or int(t) not in allowed:
            raise UserError(f"unknown die '{p}' in {option}; allowed dice: {valid}")
        out.append(int(t))
    return tuple(out)


def parse_ints(text: str, count: int, option: str, example: str) -> tuple[int, ...]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != count or not all(p.lstrip("-").isdigit() for p in parts):
        raise UserError(f"{option} needs {count} comma-separated integers (e.g. {example}), got '{text}'")
    return tuple(int(p) for p in parts)


# ------------------------------------------------------------------------------------------------
# storyteller: d10 pool against a difficulty, rule of one, botch, Willpower
# ------------------------------------------------------------------------------------------------
def storyteller_odds(pool: int, difficulty: int, willpower: bool = False, *, willpower_successes: int = 1,
                     willpower_prevents_botch: bool = True) -> OddsTable:
    """Storyteller Rules 3-5 and 8: outcomes ``botch``, ``0``, ``1``..``N`` (+ Willpower successes).

    A die succeeds on ``difficulty`` or more (a 10 always does); each 1 cancels a success; a botch is
    no successes and at least one 1. Willpower adds uncancellable successes and (as written) prevents
    the botch. Counts per (successes s, ones o): N!/(s! o! b!) x (success faces)^s x (blank faces)^b.
    """
    n, d = pool, difficulty
    wp = willpower_successes if willpower else 0
    succ_faces = 10 - max(d, 2) + 1 if d <= 10 else 1  # faces d..10 (a 1 never succeeds; a 10 always)
    blank_faces = 10 - 1 - succ_faces
    counts: dict[int, int] = {}
    nf = factorial(n)
    for s in range(n + 1):
        ws = succ_faces**s
        for o in range(n - s + 1):
            b = n - s - o
            if b and not blank_faces:
                continue
            c = nf // (factorial(s) * factorial(o) * factorial(b)) * ws * blank_faces**b
            k = -1 if s == 0 and o > 0 and not (wp > 0 and willpower_prevents_botch) else max(0, s - o) + wp
            counts[k] = counts.get(k, 0) + c
    total = 10**n
    labels = ["botch", *(str(k) for k in range(n + wp + 1))]
    probs = {lab: Fraction(counts.get(-1 if lab == "botch" else int(lab), 0), total) for lab in labels}
    notes = [f"net successes = max(0, successes - ones){' + ' + str(wp) + ' Willpower' if wp else ''}; "
             f"botch = no successes and at least one 1" + (" (impossible with Willpower)" if wp and
                                                           willpower_prevents_botch else "")]
    return OddsTable("storyteller", {"pool": n, "difficulty": d, "willpower": willpower}, probs, labels,
                     f"{n}d10 at difficulty {d}" + (" + Willpower" if willpower else ""), notes)


# ------------------------------------------------------------------------------------------------
# blackbird: N d6, success on 4+ (configurable), pass against a difficulty
# ------------------------------------------------------------------------------------------------
def blackbird_odds(dice: int, difficulty: int | None = None, *, success_on: int = 4) -> OddsTable:
    """Blackbird Rules 3-4: ``0``..``N`` successes (a d6 showing ``success_on``+), ``pass`` iff >= D."""
    good = 7 - success_on
    bad = 6 - good
    total = 6**dice
    counts = [comb(dice, s) * good**s * bad ** (dice - s) for s in range(dice + 1)]
    labels = [str(s) for s in range(dice + 1)]
    probs = {lab: Fraction(c, total) for lab, c in zip(labels, counts, strict=True)}
    query: dict[str, Any] = {"dice": dice, "success_on": success_on}
    title = f"{dice}d6, success on {success_on}+"
    if difficulty is not None:
        probs["pass"] = Fraction(sum(counts[difficulty:]), total)
        query["difficulty"] = difficulty
        title += f", pass at {difficulty}+ successes"
    return OddsTable("blackbird", query, probs, labels, title)


# ------------------------------------------------------------------------------------------------
# hallownest: N d6, success on 5+, rerolls of failed dice
# ------------------------------------------------------------------------------------------------
def hallownest_odds(dice: int, rerolls: int = 0, *, success_on: int = 5) -> OddsTable:
    """Hallownest Rules 1-2: ``0``..``N`` successes; up to K failed dice are rerolled (better kept).

    A failed die is always worth rerolling, so the rerolls go to min(K, failures) dice, and a reroll
    counts iff it succeeds. Common denominator 6^(N + min(K, N)).
    """
    good = 7 - success_on
    bad = 6 - good
    k_max = min(rerolls, dice)
    counts = [0] * (dice + 1)
    for s1 in range(dice + 1):
        c1 = comb(dice, s1) * good**s1 * bad ** (dice - s1)
        r = min(k_max, dice - s1)
        pad = 6 ** (k_max - r)
        for s2 in range(r + 1):
            counts[s1 + s2] += c1 * comb(r, s2) * good**s2 * bad ** (r - s2) * pad
    total = 6 ** (dice + k_max)
    labels = [str(s) for s in range(dice + 1)]
    probs = {lab: Fraction(c, total) for lab, c in zip(labels, counts, strict=True)}
    return OddsTable("hallownest", {"dice": dice, "rerolls": rerolls, "success_on": success_on}, probs, labels,
                     f"{dice}d6, success on {success_on}+, {rerolls} reroll{'s' if rerolls != 1 else ''} "
                     "of failed dice")


# ------------------------------------------------------------------------------------------------
# crossroads: 3d10 roll-under, one die per stat under the best assignment; doubles and triples
# ------------------------------------------------------------------------------------------------
def _best_matching(sorted_dice: tuple[int, ...], sorted_stats: tuple[int, ...]) -> int:
    """Most dice that can be matched one-to-one to stats with die <= stat (greedy over sorted lists)."""
    i = 0
    for s in sorted_stats:
        if i < len(sorted_dice) and sorted_dice[i] <= s:
            i += 1
    return i


_MULTISETS_3D10: list[tuple[tuple[int, ...], int]] = []
for _m in combinations_with_replacement(range(1, 11), 3):
    _w = 6
    for _v in set(_m):
        _w //= factorial(_m.count(_v))
    _MULTISETS_3D10.append((_m, _w))


def crossroads_odds(stats: Sequence[int] | None = None, *, influence: int | None = None) -> OddsTable:
    """Crossroads Rules 3-5 (or 4 with ``influence``): ``0``..``3`` successes of 3d10 roll-under, plus
    ``crossroads_double`` (exactly two dice equal) and ``crossroads_triple`` (all three equal).

    A stat check assigns one die to each of G, KH, M; the table is for the assignment with the most
    successes. A faction check counts every die at or under the Influence.
    """
    targets = tuple(sorted(stats)) if stats is not None else None
    counts = [0, 0, 0, 0]
    double = triple = 0
    for m, w in _MULTISETS_3D10:
        k = _best_matching(m, targets) if targets is not None else sum(1 for x in m if x <= (influence or 0))
        counts[k] += w
        distinct = len(set(m))
        if distinct == 1:
            triple += w
        elif distinct == 2:
            double += w
    labels = ["0", "1", "2", "3"]
    probs = {lab: Fraction(c, 1000) for lab, c in zip(labels, counts, strict=True)}
    probs["crossroads_double"] = Fraction(double, 1000)
    probs["crossroads_triple"] = Fraction(triple, 1000)
    if stats is not None:
        query: dict[str, Any] = {"stats": dict(zip(("G", "KH", "M"), stats, strict=True))}
        title = "3d10 stat check G={} KH={} M={} (best assignment)".format(*stats)
    else:
        query = {"influence": influence}
        title = f"3d10 faction check at Influence {influence}"
    return OddsTable("crossroads", query, probs, labels, title)


# ------------------------------------------------------------------------------------------------
# wicked_age: an answer against a standing roll
# ------------------------------------------------------------------------------------------------
WICKED_RESULTS = ("absolute_loss", "loses_advantage", "wins_advantage", "absolute_win")


def _reading_counts(dice: Sequence[int], advantage: int, adv_sides: int) -> dict[tuple[int, ...], int]:
    """Integer weights of every roll reading (Rule 6): sorted faces, advantage sum on the highest."""
    faces: dict[tuple[int, ...], int] = {}
    for f in product(*(range(1, d + 1) for d in dice)):
        t = tuple(sorted(f, reverse=True))
        faces[t] = faces.get(t, 0) + 1
    adv: dict[int, int] = {0: 1}
    for _ in range(advantage):
        nxt: dict[int, int] = {}
        for total, c in adv.items():
            for x in range(1, adv_sides + 1):
                nxt[total + x] = nxt.get(total + x, 0) + c
        adv = nxt
    width = max(len(dice), 1)
    out: dict[tuple[int, ...], int] = {}
    for t, c in faces.items():
        for a, ca in adv.items():
            key = (t[0] + a, *t[1:]) + (0,) * (width - len(t))
            out[key] = out.get(key, 0) + c * ca
    return out


def wicked_age_odds(dice: Sequence[int], vs: Sequence[int], advantage: int = 0, vs_advantage: int = 0, *,
                    last_round: bool = False, adv_sides: int = 6, multiple: int = 2) -> OddsTable:
    """In a Wicked Age Rules 6, 11, 12: the answerer's result against a standing roll, both rolled.

    ``absolute_loss`` iff multiple x a <= c (a, c the high dice with advantage); otherwise
    ``loses_advantage`` iff the answer's reading is lower; ``absolute_win`` iff a >= multiple x c;
    else ``wins_advantage`` (ties included). In the last round the advantage results become absolute.
    """
    width = max(len(dice), len(vs))
    a_counts = _reading_counts(dice, advantage, adv_sides)
    c_counts = _reading_counts(vs, vs_advantage, adv_sides)
    pad_a = {k + (0,) * (width - len(k)): v for k, v in a_counts.items()}
    pad_c = {k + (0,) * (width - len(k)): v for k, v in c_counts.items()}
    wa = sum(pad_a.values())
    wc = sum(pad_c.values())
    out = dict.fromkeys(WICKED_RESULTS, 0)
    if multiple >= 2:
        ckeys = sorted(pad_c)
        cum = [0]
        for k in ckeys:
            cum.append(cum[-1] + pad_c[k])
        high = max(k[0] for k in ckeys)
        by_first = [0] * (high + 2)
        for k, v in pad_c.items():
            by_first[k[0]] += v
        le_first = [0] * (high + 2)  # le_first[x] = weight with C[0] <= x
        acc = 0
        for x in range(high + 2):
            acc += by_first[x]
            le_first[x] = acc
        for ka, w in pad_a.items():
            a = ka[0]
            n_loss = wc - le_first[min(multiple * a - 1, high + 1)] if multiple * a - 1 >= 0 else wc
            n_greater = wc - cum[bisect.bisect_right(ckeys, ka)]
            n_win = le_first[min(a // multiple, high + 1)]
            out["absolute_loss"] += w * n_loss
            out["loses_advantage"] += w * (n_greater - n_loss)
            out["absolute_win"] += w * n_win
            out["wins_advantage"] += w * (wc - n_greater - n_win)
    else:  # a multiple below 2 breaks the nesting the fast path relies on: compare every pair
        for ka, w in pad_a.items():
            for kc, v in pad_c.items():
                a, c = ka[0], kc[0]
                if multiple * a <= c:
                    r = "absolute_loss"
                elif ka < kc:
                    r = "loses_advantage"
                elif a >= multiple * c:
                    r = "absolute_win"
                else:
                    r = "wins_advantage"
                out[r] += w * v
    if last_round:
        out["absolute_loss"] += out.pop("loses_advantage")
        out["absolute_win"] += out.pop("wins_advantage")
        out = {r: out.get(r, 0) for r in WICKED_RESULTS}
    total = wa * wc
    probs = {r: Fraction(out[r], total) for r in WICKED_RESULTS}
    text = ",".join(f"d{d}" for d in dice) + (f"+{advantage} adv" if advantage else "")
    vtext = ",".join(f"d{d}" for d in vs) + (f"+{vs_advantage} adv" if vs_advantage else "")
    query = {"dice": [f"d{d}" for d in dice], "vs": [f"d{d}" for d in vs], "advantage": advantage,
             "vs_advantage": vs_advantage, "last_round": last_round}
    return OddsTable("wicked_age", query, probs, list(WICKED_RESULTS),
                     f"answer {text} against a standing {vtext}" + (" (round 3)" if last_round else ""))


# ------------------------------------------------------------------------------------------------
# Cross-check with an engine's own roll code
# ------------------------------------------------------------------------------------------------
Sampler = Callable[[Rng], Iterable[str]]
"""One roll by an engine's code -> the outcome labels it falls into (its partition label + events)."""


def simulate(table: OddsTable, sampler: Sampler, n: int, seed: int = 0) -> Simulation:
    """Sample ``n`` rolls, compare each outcome's frequency with the exact probability, flag > 4 SE."""
    if n < 1:
        raise UserError(f"--simulate needs at least 1 roll, got {n}")
    rng = Rng(seed)
    counts = dict.fromkeys(table.probabilities, 0)
    for _ in range(n):
        for lab in sampler(rng):
            if lab not in counts:
                counts[lab] = 0
            counts[lab] += 1
    z: dict[str, float] = {}
    flagged: list[str] = []
    for lab, c in counts.items():
        p = float(table.probabilities.get(lab, 0))
        freq = c / n
        se = math.sqrt(p * (1 - p) / n)
        if se == 0.0:
            z[lab] = 0.0 if freq == p else math.inf
        else:
            z[lab] = (freq - p) / se
        if abs(z[lab]) > SIGMA_FLAG:
            flagged.append(lab)
    sim = Simulation(n, seed, counts, z, flagged)
    table.simulation = sim
    return sim


# ------------------------------------------------------------------------------------------------
# Rendering
# ------------------------------------------------------------------------------------------------
def _fraction_text(p: Fraction) -> str:
    if p == 0:
        return "0"
    if p == 1:
        return "1"
    text = f"{p.numerator}/{p.denominator}"
    return text if len(text) <= 13 else "…"  # exact in --json; too long to be useful here


def bar(p: float, scale: float, width: int = 32) -> str:
    """A horizontal bar of ``width`` eighth-block cells for ``p`` relative to ``scale``."""
    if scale <= 0:
        return ""
    eighths = round(p / scale * width * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + ("" if rest == 0 else " ▏▎▍▌▋▊▉"[rest])


def render(table: OddsTable, console: Any) -> None:
    """Print the table as percentages with exact fractions and a bar chart (and the simulation)."""
    from rich.table import Table

    sim = table.simulation
    t = Table(title=f"{table.ruleset}: {table.title}")
    t.add_column("outcome", no_wrap=True)
    t.add_column("exact", justify="right", no_wrap=True)
    t.add_column("fraction", justify="right", no_wrap=True)
    t.add_column("", no_wrap=True)
    if sim is not None:
        t.add_column("engine", justify="right", no_wrap=True)
        t.add_column("z", justify="right", no_wrap=True)
    scale = max((float(p) for p in table.probabilities.values()), default=1.0)
    first_event = table.events[0] if table.events else None
    for lab, p in table.probabilities.items():
        if lab == first_event:
            t.add_section()
        row = [lab, f"{100 * float(p):.3f}%", _fraction_text(p), bar(float(p), scale, 16 if sim else 24)]
        if sim is not None:
            z = sim.z.get(lab, 0.0)
            flag = lab in sim.flagged
            row += [f"{100 * sim.frequency(lab):.3f}%", ("[bold red]" if flag else "") + (
                "inf" if math.isinf(z) else f"{z:+.2f}") + (" FLAG[/bold red]" if flag else "")]
        t.add_row(*row)
    console.print(t)
    total = sum(table.probabilities[o] for o in table.partition)
    console.print(f"outcomes {', '.join(table.partition[:1])}…{table.partition[-1]} sum to {float(total):.6f}"
                  + (f"; {', '.join(table.events)} are events beside them" if table.events else ""), highlight=False)
    for note in table.notes:
        console.print(note, highlight=False)
    if sim is not None:
        if sim.flagged:
            console.print(f"[bold red]engine disagrees:[/bold red] in {sim.n:,} rolls with the engine's code, "
                          f"{', '.join(sim.flagged)} more than {SIGMA_FLAG:g} standard errors from the exact "
                          f"value (seed {sim.seed})")
        else:
            console.print(f"engine agrees: {sim.n:,} rolls with the engine's code, every outcome within "
                          f"{SIGMA_FLAG:g} standard errors (seed {sim.seed})")


def plot(table: OddsTable, path: Path) -> Path:
    """A bar chart PNG of the table (and the simulated frequencies as markers)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(table.probabilities)
    ps = [float(p) for p in table.probabilities.values()]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.45 * len(labels) + 2), 3.6))
    colours = ["tab:blue" if lab in table.partition else "tab:orange" for lab in labels]
    ax.bar(range(len(labels)), ps, color=colours, label="exact")
    if table.simulation is not None:
        sim = table.simulation
        ax.plot(range(len(labels)), [sim.frequency(lab) for lab in labels], "k_", markersize=14, mew=2,
                label=f"engine, n={sim.n:,}")
        ax.legend()
    ax.set_xticks(range(len(labels)), labels, rotation=45 if len(labels) > 8 else 0, ha="right" if len(labels) > 8
                  else "center")
    ax.set_ylabel("probability")
    ax.set_title(f"{table.ruleset}: {table.title}", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ------------------------------------------------------------------------------------------------
# Benchmarks (registered by training/bench.py)
# ------------------------------------------------------------------------------------------------
def odds_benchmarks() -> dict[str, Callable[[], object]]:
    """Named callables, each computing one exact table from scratch (no caches are involved)."""
    return {
        "odds.storyteller.pool20_d6": lambda: storyteller_odds(20, 6),
        "odds.storyteller.pool20_d8_willpower": lambda: storyteller_odds(20, 8, True),
        "odds.blackbird.dice20_d5": lambda: blackbird_odds(20, 5),
        "odds.hallownest.dice20_rerolls5": lambda: hallownest_odds(20, 5),
        "odds.crossroads.stats_3_4_5": lambda: crossroads_odds((3, 4, 5)),
        "odds.wicked_age.d12d10d8_adv2_vs_d12d8_adv1": lambda: wicked_age_odds((12, 10, 8), (12, 8), 2, 1),
    }


def time_benchmarks(repeat: int = 20) -> dict[str, float]:
    """Median milliseconds per table of each benchmark."""
    out = {}
    for name, fn in odds_benchmarks().items():
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        times.sort()
        out[name] = 1000 * times[len(times) // 2]
    return out

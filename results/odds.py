"""Exact odds of each ruleset's core mechanic, their rendering, and the engine cross-check.

The exact values come from the engines' own ``dice.py`` (the one source of the product's odds; each is
exact in :class:`~fractions.Fraction`); this module turns them into an :class:`OddsTable` with its labels,
checks the odds command's arguments, renders and plots tables. The tests check every table against an
independent brute-force enumeration and icepool. ``--simulate`` compares a table with frequencies of rolls
made by the engine's own roll code (the ``*_sampler`` functions).

A table's ``probabilities`` are an ordered mapping outcome -> probability. Outcomes listed in
``partition`` are mutually exclusive and sum to 1; the others (``pass``, ``crossroads_double``…) are
events beside them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from rich.table import Table

from envs.blackbird import dice as blackbird_dice
from envs.blackbird import rules as blackbird_rules
from envs.core.dice import Rng
from envs.core.errors import UserError
from envs.crossroads import dice as crossroads_dice
from envs.hallownest import dice as hallownest_dice
from envs.storyteller import dice as storyteller_dice
from envs.wicked_age import dice as wicked_age_dice
from results.stats import quantile

Sampler = Callable[[Rng], Iterable[str]]
"""One roll by an engine's code -> the outcome labels it falls into (its partition label + events)."""

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
                "n": s.n,
                "seed": s.seed,
                "sigma_flag": SIGMA_FLAG,
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
def storyteller_odds(
    pool: int,
    difficulty: int,
    willpower: bool = False,
    *,
    willpower_successes: int = 1,
    willpower_prevents_botch: bool = True,
) -> OddsTable:
    """Storyteller Rules 3-5 and 8: outcomes ``botch``, ``0``, ``1``..``N`` (+ Willpower successes).

    A die succeeds on ``difficulty`` or more (a 10 always does); each 1 cancels a success; a botch is
    no successes and at least one 1. Willpower adds uncancellable successes and (as written) prevents
    the botch. The table is the engine's (:func:`envs.storyteller.dice.outcome_distribution`).
    """
    n, d = pool, difficulty
    wp = willpower_successes if willpower else 0
    exact = storyteller_dice.outcome_distribution(
        n, d, willpower, willpower_successes=willpower_successes, prevents_botch=willpower_prevents_botch
    )
    labels = ["botch", *(str(k) for k in range(n + wp + 1))]
    probs = {lab: exact.get(storyteller_dice.BOTCH if lab == "botch" else int(lab), Fraction(0)) for lab in labels}
    notes = [
        f"net successes = max(0, successes - ones){' + ' + str(wp) + ' Willpower' if wp else ''}; "
        f"botch = no successes and at least one 1"
        + (" (impossible with Willpower)" if wp and willpower_prevents_botch else "")
    ]
    return OddsTable(
        "storyteller",
        {"pool": n, "difficulty": d, "willpower": willpower},
        probs,
        labels,
        f"{n}d10 at difficulty {d}" + (" + Willpower" if willpower else ""),
        notes,
    )


def storyteller_sampler(pool: int, difficulty: int, willpower_successes: int, prevents_botch: bool) -> Sampler:
    """One roll as the engine's chance nodes draw it (:func:`envs.storyteller.dice.sample_outcome`)."""

    def sampler(rng: Rng) -> Iterable[str]:
        k = storyteller_dice.sample_outcome(rng, pool, difficulty, willpower_successes, prevents_botch, False)
        return ("botch",) if k == storyteller_dice.BOTCH else (str(k),)

    return sampler


# ------------------------------------------------------------------------------------------------
# blackbird: N d6, success on 4+ (configurable), pass against a difficulty
# ------------------------------------------------------------------------------------------------
def blackbird_odds(dice: int, difficulty: int | None = None, *, success_on: int = 4) -> OddsTable:
    """Blackbird Rules 3-4: ``0``..``N`` successes (a d6 showing ``success_on``+), ``pass`` iff >= D.

    The table is the engine's (:func:`envs.blackbird.dice.exact_success_distribution`).
    """
    dist = blackbird_dice.exact_success_distribution(dice, success_on)
    labels = [str(s) for s in range(dice + 1)]
    probs = dict(zip(labels, dist, strict=True))
    query: dict[str, Any] = {"dice": dice, "success_on": success_on}
    title = f"{dice}d6, success on {success_on}+"
    if difficulty is not None:
        probs["pass"] = sum(dist[difficulty:], Fraction(0))
        query["difficulty"] = difficulty
        title += f", pass at {difficulty}+ successes"
    return OddsTable("blackbird", query, probs, labels, title)


def blackbird_sampler(dice: int, difficulty: int | None, success_on: int) -> Sampler:
    """One roll with the engine's roll code (:func:`envs.blackbird.dice.sample_roll`) and its Rule 4 pass."""

    def sampler(rng: Rng) -> Iterable[str]:
        roll = blackbird_dice.sample_roll(rng, dice, success_on)
        labels = [str(roll.successes)]
        if difficulty is not None and blackbird_rules.passes(roll.successes, difficulty):
            labels.append("pass")
        return labels

    return sampler


# ------------------------------------------------------------------------------------------------
# hallownest: N d6, success on 5+, rerolls of failed dice
# ------------------------------------------------------------------------------------------------
def hallownest_odds(dice: int, rerolls: int = 0, *, success_on: int = 5) -> OddsTable:
    """Hallownest Rules 1-2: ``0``..``N`` successes; up to K failed dice are rerolled (better kept).

    The table is the engine's (:func:`envs.hallownest.dice.success_distribution`).
    """
    exact = hallownest_dice.success_distribution(dice, rerolls, success_on)
    labels = [str(s) for s in range(dice + 1)]
    probs = {lab: exact.get(int(lab), Fraction(0)) for lab in labels}
    return OddsTable(
        "hallownest",
        {"dice": dice, "rerolls": rerolls, "success_on": success_on},
        probs,
        labels,
        f"{dice}d6, success on {success_on}+, {rerolls} reroll{'s' if rerolls != 1 else ''} of failed dice",
    )


def hallownest_sampler(dice: int, rerolls: int, success_on: int) -> Sampler:
    """One roll with the engine's roll code (:func:`envs.hallownest.dice.sample_successes`)."""

    def sampler(rng: Rng) -> Iterable[str]:
        return (str(hallownest_dice.sample_successes(rng, dice, rerolls, success_on)),)

    return sampler


# ------------------------------------------------------------------------------------------------
# crossroads: 3d10 roll-under, one die per stat under the best assignment; doubles and triples
# ------------------------------------------------------------------------------------------------
def crossroads_odds(stats: Sequence[int] | None = None, *, influence: int | None = None) -> OddsTable:
    """Crossroads Rules 3-5 (or 4 with ``influence``): ``0``..``3`` successes of 3d10 roll-under, plus
    ``crossroads_double`` (exactly two dice equal) and ``crossroads_triple`` (all three equal).

    A stat check assigns one die to each of G, KH, M; the table is for the assignment with the most
    successes. A faction check counts every die at or under the Influence. The tables are the engine's
    (:func:`envs.crossroads.dice.odds`, :func:`envs.crossroads.dice.faction_odds`).
    """
    if stats is not None:
        probs = crossroads_dice.odds(stats)
        query: dict[str, Any] = {"stats": dict(zip(("G", "KH", "M"), stats, strict=True))}
        title = "3d10 stat check G={} KH={} M={} (best assignment)".format(*stats)
    else:
        probs = crossroads_dice.faction_odds(influence or 0)
        query = {"influence": influence}
        title = f"3d10 faction check at Influence {influence}"
    return OddsTable("crossroads", query, probs, ["0", "1", "2", "3"], title)


def crossroads_sampler(stats: Sequence[int] | None, influence: int | None) -> Sampler:
    """One check with the engine's dice functions (:mod:`envs.crossroads.dice`)."""

    def sampler(rng: Rng) -> Iterable[str]:
        faces = crossroads_dice.roll_check_dice(rng)
        k = (
            crossroads_dice.max_successes(faces, stats)
            if stats is not None
            else crossroads_dice.faction_successes(faces, influence or 0)
        )
        labels = [str(k)]
        cr = crossroads_dice.crossroads_of(faces)
        if cr is crossroads_dice.Crossroads.DOUBLE:
            labels.append("crossroads_double")
        elif cr is crossroads_dice.Crossroads.TRIPLE:
            labels.append("crossroads_triple")
        return labels

    return sampler


# ------------------------------------------------------------------------------------------------
# wicked_age: an answer against a standing roll
# ------------------------------------------------------------------------------------------------
WICKED_RESULTS = ("absolute_loss", "loses_advantage", "wins_advantage", "absolute_win")


def wicked_age_odds(
    dice: Sequence[int],
    vs: Sequence[int],
    advantage: int = 0,
    vs_advantage: int = 0,
    *,
    last_round: bool = False,
    adv_sides: int = 6,
    multiple: int = 2,
) -> OddsTable:
    """In a Wicked Age Rules 6, 11, 12: the answerer's result against a standing roll, both rolled.

    ``absolute_loss`` iff multiple x a <= c (a, c the high dice with advantage); otherwise
    ``loses_advantage`` iff the answer's reading is lower; ``absolute_win`` iff a >= multiple x c;
    else ``wins_advantage`` (ties included). In the last round the advantage results become absolute.
    The table is the engine's (:func:`envs.wicked_age.dice.comparison_table`).
    """
    exact = wicked_age_dice.comparison_table(dice, vs, advantage, vs_advantage, adv_sides, last_round, multiple)
    probs = {r.label: exact[r] for r in wicked_age_dice.Result}
    text = ",".join(f"d{d}" for d in dice) + (f"+{advantage} adv" if advantage else "")
    vtext = ",".join(f"d{d}" for d in vs) + (f"+{vs_advantage} adv" if vs_advantage else "")
    query = {
        "dice": [f"d{d}" for d in dice],
        "vs": [f"d{d}" for d in vs],
        "advantage": advantage,
        "vs_advantage": vs_advantage,
        "last_round": last_round,
    }
    return OddsTable(
        "wicked_age",
        query,
        probs,
        list(WICKED_RESULTS),
        f"answer {text} against a standing {vtext}" + (" (round 3)" if last_round else ""),
    )


def wicked_age_sampler(
    dice: Sequence[int],
    vs: Sequence[int],
    advantage: int,
    vs_advantage: int,
    last_round: bool,
    adv_sides: int,
    multiple: int,
) -> Sampler:
    """The standing roll, then the answer, rolled and compared with the engine's dice functions."""
    rounds = (3, 3) if last_round else (1, 3)

    def reading(rng: Rng, d: Sequence[int], k: int) -> tuple[int, ...]:
        faces, adv = wicked_age_dice.roll_with_advantage(rng, d, k, adv_sides)
        return wicked_age_dice.read_roll(faces, adv)

    def sampler(rng: Rng) -> Iterable[str]:
        standing = reading(rng, vs, vs_advantage)
        answer = reading(rng, dice, advantage)
        return (wicked_age_dice.compare_answer(answer, standing, rounds[0], rounds[1], multiple).label,)

    return sampler


# ------------------------------------------------------------------------------------------------
# Cross-check with an engine's own roll code
# ------------------------------------------------------------------------------------------------
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
            row += [
                f"{100 * sim.frequency(lab):.3f}%",
                ("[bold red]" if flag else "")
                + ("inf" if math.isinf(z) else f"{z:+.2f}")
                + (" FLAG[/bold red]" if flag else ""),
            ]
        t.add_row(*row)
    console.print(t)
    total = sum(table.probabilities[o] for o in table.partition)
    console.print(
        f"outcomes {', '.join(table.partition[:1])}…{table.partition[-1]} sum to {float(total):.6f}"
        + (f"; {', '.join(table.events)} are events beside them" if table.events else ""),
        highlight=False,
    )
    for note in table.notes:
        console.print(note, highlight=False)
    if sim is not None:
        if sim.flagged:
            console.print(
                f"[bold red]engine disagrees:[/bold red] in {sim.n:,} rolls with the engine's code, "
                f"{', '.join(sim.flagged)} more than {SIGMA_FLAG:g} standard errors from the exact "
                f"value (seed {sim.seed})"
            )
        else:
            console.print(
                f"engine agrees: {sim.n:,} rolls with the engine's code, every outcome within "
                f"{SIGMA_FLAG:g} standard errors (seed {sim.seed})"
            )


def plot(table: OddsTable, path: Path) -> Path:
    """A bar chart PNG of the table (and the simulated frequencies as markers)."""
    import matplotlib  # lazy: matplotlib takes a good part of a second to import; only --plot needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(table.probabilities)
    ps = [float(p) for p in table.probabilities.values()]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.45 * len(labels) + 2), 3.6))
    colours = ["tab:blue" if lab in table.partition else "tab:orange" for lab in labels]
    ax.bar(range(len(labels)), ps, color=colours, label="exact")
    if table.simulation is not None:
        sim = table.simulation
        ax.plot(
            range(len(labels)),
            [sim.frequency(lab) for lab in labels],
            "k_",
            markersize=14,
            mew=2,
            label=f"engine, n={sim.n:,}",
        )
        ax.legend()
    ax.set_xticks(
        range(len(labels)), labels, rotation=45 if len(labels) > 8 else 0, ha="right" if len(labels) > 8 else "center"
    )
    ax.set_ylabel("probability")
    ax.set_title(f"{table.ruleset}: {table.title}", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ------------------------------------------------------------------------------------------------
# Benchmarks (registered by training/bench/odds.py)
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
        out[name] = 1000 * quantile(times, 0.5)
    return out

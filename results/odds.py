"""Exact odds of each ruleset's core mechanic, their rendering, and the engine cross-check.

A ruleset shows its core mechanic through its odds provider (``Ruleset.odds``, :mod:`envs.core.odds`; the
five shipped ones in ``envs/<ruleset>/odds.py``, over the engines' own ``dice.py``, each exact in
:class:`~fractions.Fraction`); this module turns a provider's answer into an :class:`OddsTable`, renders and
plots tables. The tests check every table against an independent brute-force enumeration and icepool.
``--simulate`` compares a table with frequencies of rolls made by the engine's own roll code (the
provider's sampler), at most :data:`MAX_SIMULATE` rolls in constant memory.

A table's ``probabilities`` are an ordered mapping outcome -> probability. Outcomes listed in
``partition`` are mutually exclusive and sum to 1; the others (``pass``, ``crossroads_double``…) are
events beside them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from rich.table import Table

from envs.blackbird import odds as blackbird_odds_mod
from envs.core.dice import Rng
from envs.core.errors import UserError
from envs.core.odds import Odds, OddsProvider, Sampler, check_range, parse_dice, parse_ints
from envs.crossroads import odds as crossroads_odds_mod
from envs.hallownest import odds as hallownest_odds_mod
from envs.storyteller import odds as storyteller_odds_mod
from envs.wicked_age import odds as wicked_age_odds_mod
from results.stats import quantile

__all__ = ["OddsTable", "Sampler", "check_range", "parse_dice", "parse_ints", "query_odds", "simulate", "table_of"]

SIGMA_FLAG = 4.0
"""A simulated frequency more than this many standard errors from the exact value is flagged."""

MAX_SIMULATE = 10_000_000
"""The most rolls ``--simulate`` makes (about a minute with the slowest engine; far past any useful precision)."""


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
# The tables of a ruleset's odds provider (envs.core.odds), and the five shipped ones by name
# ------------------------------------------------------------------------------------------------
def table_of(ruleset: str, odds: Odds) -> OddsTable:
    """An :class:`OddsTable` of a provider's :class:`~envs.core.odds.Odds` (the sampler stays with the odds)."""
    return OddsTable(ruleset, dict(odds.query), dict(odds.probabilities), list(odds.partition), odds.title,
                     list(odds.notes))  # fmt: skip


def query_odds(ruleset: str, provider: OddsProvider, config: Any, args: dict[str, Any]) -> tuple[OddsTable, Sampler]:
    """The table and the engine's sampler for ``args`` under ``config`` (bad arguments: a :class:`UserError`)."""
    odds = provider.odds(config, args)
    return table_of(ruleset, odds), odds.sampler


def storyteller_odds(
    pool: int,
    difficulty: int,
    willpower: bool = False,
    *,
    willpower_successes: int = 1,
    willpower_prevents_botch: bool = True,
) -> OddsTable:
    """Storyteller Rules 3-5 and 8 (:func:`envs.storyteller.odds.storyteller_odds`)."""
    return table_of("storyteller", storyteller_odds_mod.storyteller_odds(
        pool, difficulty, willpower, willpower_successes=willpower_successes,
        willpower_prevents_botch=willpower_prevents_botch))  # fmt: skip


def blackbird_odds(dice: int, difficulty: int | None = None, *, success_on: int = 4) -> OddsTable:
    """Blackbird Rules 3-4 (:func:`envs.blackbird.odds.blackbird_odds`)."""
    return table_of("blackbird", blackbird_odds_mod.blackbird_odds(dice, difficulty, success_on=success_on))


def hallownest_odds(dice: int, rerolls: int = 0, *, success_on: int = 5) -> OddsTable:
    """Hallownest Rules 1-2 (:func:`envs.hallownest.odds.hallownest_odds`)."""
    return table_of("hallownest", hallownest_odds_mod.hallownest_odds(dice, rerolls, success_on=success_on))


def crossroads_odds(stats: Sequence[int] | None = None, *, influence: int | None = None) -> OddsTable:
    """Crossroads Rules 3-5 (:func:`envs.crossroads.odds.crossroads_odds`)."""
    return table_of("crossroads", crossroads_odds_mod.crossroads_odds(stats, influence=influence))


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
    """In a Wicked Age Rules 6, 11, 12 (:func:`envs.wicked_age.odds.wicked_age_odds`)."""
    return table_of("wicked_age", wicked_age_odds_mod.wicked_age_odds(
        dice, vs, advantage, vs_advantage, last_round=last_round, adv_sides=adv_sides, multiple=multiple))  # fmt: skip


# ------------------------------------------------------------------------------------------------
# Cross-check with an engine's own roll code
# ------------------------------------------------------------------------------------------------
def simulate(table: OddsTable, sampler: Sampler, n: int, seed: int = 0) -> Simulation:
    """Sample ``n`` rolls, compare each outcome's frequency with the exact probability, flag > 4 SE."""
    if n < 1:
        raise UserError(f"--simulate needs at least 1 roll, got {n}")
    if n > MAX_SIMULATE:
        raise UserError(
            f"--simulate {n:,} is too many rolls: at most {MAX_SIMULATE:,} (4 standard errors at that size are "
            f"already below 0.13 percentage points)"
        )
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
    fig.savefig(path, dpi=110, format="png")
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

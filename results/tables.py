"""Rich tables for evaluation metrics.

Agent names and titles are user strings (an ``rl:`` path may hold ``[/bold]``): they are shown as plain
``Text``, never read as rich markup.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


def _pct(x: float, ci: list[float]) -> str:
    return f"{100 * x:5.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def print_evaluation(console: Console, m: dict[str, Any], agents: list[str], title: str) -> None:
    if "agents" in m:
        t = Table(title=Text(title))
        for c in ("agent", "games", "mean return [95% CI]", "success rate [95% CI]"):
            t.add_column(c)
        for a, r in m["agents"].items():
            ci = r["return_ci"]
            t.add_row(
                Text(a),
                str(r["games"]),
                f"{r['mean_return']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]",
                _pct(r["success_rate"], r["success_ci"]),
            )
        console.print(t)
    else:
        t = Table(title=Text(title + " — win rate of row vs column"))
        t.add_column("row \\ col")
        for b in agents:
            t.add_column(Text(b))
        for a in agents:
            row: list[str | Text] = [Text(a)]
            for b in agents:
                cell = m["matrix"].get(a, {}).get(b)
                row.append("—" if cell is None else _pct(cell["win_rate"], cell["win_ci"]))
            t.add_row(*row)
        console.print(t)
        sa = m["seat_advantage"]
        seats = ", ".join(f"seat {s}: {_pct(v['win_rate'], v['win_ci'])}" for s, v in sa["seats"].items())
        console.print(
            f"seat advantage (fair share {100 * sa['fair_share']:.0f}%): {seats}; draws {100 * sa['draw_rate']:.1f}%"
        )
    gl = m["game_length"]
    console.print(
        f"game length (decisions): mean {gl['mean']:.1f}, median {gl['median']:.0f}, "
        f"p90 {gl['p90']:.0f}, range {gl['min']}–{gl['max']}"
    )
    console.print("why games ended: " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in m["end_reasons"].items()))

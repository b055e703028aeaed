"""The summary table of ``rulebreaker bench``: one row per figure, with the goal of issue 16 where it has one."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

TABLE_BENCHMARKS: tuple[str, ...] = ("envs", "search", "games", "train", "inference", "odds")
"""What a bare ``rulebreaker bench`` runs: the figures of the summary table."""

ENV_GOAL = 3.0  # every env >= 3x Blackjack-v1
CLONE_GOAL = 3.0  # clone() <= the cost of 3 env steps
TRAIN_GOAL = 1.0  # MaskablePPO >= 1.0x SB3 PPO on Blackjack-v1
INFERENCE_GOAL = 10.0  # trained agent >= 10x SB3 predict, one observation at a time
WORKERS_GOAL = 1.8  # evaluate --workers 2 >= 1.8x --workers 1


@dataclass(frozen=True)
class Row:
    figure: str
    value: str
    goal: str = ""
    met: bool | None = None  # None: a figure without a goal


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _rounds(values: list[float] | None) -> str:
    """``"; rounds 1.71, 1.80"`` for the per-round figures behind a median (nothing when there are none)."""
    return f"; rounds {', '.join(f'{x:.2f}' for x in values)}" if values else ""


def summary_rows(results: dict[str, Any]) -> list[Row]:
    """The table's rows from the results of :func:`training.bench.run_benchmarks` (absent benchmarks skipped)."""
    rows: list[Row] = []
    envs = results.get("envs")
    if envs:
        ref = envs["reference_steps_per_s"]
        rows.append(Row("Blackjack-v1 steps/s (reference, same run)", _fmt(ref)))
        for env_id, e in envs["envs"].items():
            rows.append(
                Row(
                    f"{env_id} steps/s ÷ Blackjack-v1",
                    f"{e['ratio']:.2f}× ({_fmt(e['steps_per_s'])}/s; rounds {e['ratio_min']:.2f}–{e['ratio_max']:.2f})",
                    f"≥ {ENV_GOAL:g}×",
                    e["ratio"] >= ENV_GOAL,
                )
            )
        floor = envs.get("adapter_floor")
        if floor:
            rows.append(
                Row(
                    "  adapter floor: a trivial engine through GameEnv and gym's wrappers ÷ Blackjack-v1",
                    f"{floor['ratio']:.2f}× ({_fmt(floor['steps_per_s'])}/s; rounds "
                    f"{floor['ratio_min']:.2f}–{floor['ratio_max']:.2f})",
                )
            )
        for env_id, e in envs["envs"].items():
            rows.append(
                Row(
                    f"{env_id} clone() in env steps",
                    f"{e['clone_in_steps']:.2f} ({_fmt(e['clones_per_s'])} clones/s)",
                    f"≤ {CLONE_GOAL:g}",
                    e["clone_in_steps"] <= CLONE_GOAL,
                )
            )
    search = results.get("search")
    if search:
        for name, s in search["scenarios"].items():
            rows.append(Row(f"{search['spec']} decisions/s, {name}", _fmt(s["decisions_per_s"])))
    games = results.get("games")
    if games:
        for name, g in games["scenarios"].items():
            rows.append(Row(f"persona games/s on one core, {name}", _fmt(g["games_per_s"])))
        rows.append(
            Row(
                "run_games --workers 2 ÷ --workers 1 (every scenario's persona jobs)",
                f"{games['workers_2_speedup']:.2f}× ({_fmt(games['workers_1_games_per_s'])} → "
                f"{_fmt(games['workers_2_games_per_s'])} games/s"
                f"{'; provisional, the cores were shared' if games.get('provisional') else ''})",
                f"≥ {WORKERS_GOAL:g}×",
                games["workers_2_speedup"] >= WORKERS_GOAL,
            )
        )
        if "machine_capacity_2" in games:
            load = games.get("load_average_before_after") or [[], []]
            note = " — provisional: other work shared the cores" if games.get("provisional") else ""
            rows.append(
                Row(
                    "  the machine's own 2-process speed-up at the time (a CPU burner, 1 vs 2 processes)",
                    f"{games['machine_capacity_2']:.2f}× (before/after "
                    f"{' / '.join(f'{c:.2f}' for c in games['machine_capacity_2_before_after'])}; load "
                    f"{_load_text(load[0])} → {_load_text(load[-1])}{note})",
                )
            )
            rows.append(
                Row(
                    "  --workers 2 speed-up ÷ the machine's 2-process speed-up (1.0: no overhead of its own)",
                    f"{games['workers_2_efficiency']:.2f} (batch {games['workers_jobs']} games, "
                    f"{games['workers_batch_serial_s']:.1f} s on one core; pool start {games['pool_start_s']:.2f} s)",
                    f"≥ {WORKERS_GOAL / 2:g} (= {WORKERS_GOAL:g}× on 2 free cores)",
                    games["workers_2_efficiency"] >= WORKERS_GOAL / 2,
                )
            )
        rows.append(
            Row(
                "  the same, CPU-bound estimate (2 × serial CPU ÷ CPU of the 2-worker run)",
                f"{games['workers_2_speedup_cpu_bound']:.2f}× ({games['serial_cpu_s']:.2f} s vs "
                f"{games['workers_2_cpu_s']:.2f} s CPU{_rounds(games.get('workers_2_speedup_cpu_bound_rounds'))})",
                f"≥ {WORKERS_GOAL:g}× with free cores",
                games["workers_2_speedup_cpu_bound"] >= WORKERS_GOAL,
            )
        )
        if "plain_2_speedup" in games:
            rows.append(
                Row(
                    "  the same games in two plain forked processes (no pool): speed-up; their CPU ÷ serial; "
                    "run_games CPU ÷ theirs",
                    f"{games['plain_2_speedup']:.2f}×; {games['plain_2_cpu_over_serial']:.2f}; "
                    f"{games['workers_2_cpu_over_plain_2']:.2f} (parent {games['workers_2_parent_cpu_s']:.2f} s CPU)",
                )
            )
    train = results.get("train")
    if train:
        rows.append(
            Row(
                f"MaskablePPO steps/s on {train['scenario']} ÷ SB3 PPO on Blackjack-v1 "
                f"(n_envs {train['n_envs']}, n_steps {train['n_steps']})",
                f"{train['ratio']:.2f}× ({_fmt(train['steps_per_s'])} vs {_fmt(train['reference_steps_per_s'])}/s)",
                f"≥ {TRAIN_GOAL:g}×",
                train["ratio"] >= TRAIN_GOAL,
            )
        )
    inf = results.get("inference")
    if inf:
        rows.append(
            Row(
                f"trained agent (numpy rl:) decisions/s on {inf['scenario']} ÷ SB3 predict, one at a time",
                f"{inf['ratio']:.1f}× ({_fmt(inf['fast_decisions_per_s'])} vs {_fmt(inf['predict_decisions_per_s'])}/s;"
                f" same actions {inf['same_actions_as_predict']:.0%})",
                f"≥ {INFERENCE_GOAL:g}×",
                inf["ratio"] >= INFERENCE_GOAL,
            )
        )
    odds = results.get("odds")
    if odds:
        table = odds["median_ms_per_table"]
        worst = max(table, key=lambda k: table[k]) if table else ""
        rows.append(
            Row(
                f"odds tables: {len(table)} tables, total median ms (slowest: {worst})",
                f"{sum(table.values()):.1f} ms ({table.get(worst, 0.0):.1f} ms)",
            )
        )
    return rows


def _load_text(load: list[float]) -> str:
    return "/".join(f"{x:g}" for x in load) if load else "?"


def rows_as_dicts(rows: list[Row]) -> list[dict[str, Any]]:
    return [asdict(r) for r in rows]


def markdown_table(rows: list[Row]) -> str:
    """The rows as a Markdown table (the form docs/performance.md keeps)."""
    lines = ["| figure | value | goal | met |", "|---|---|---|---|"]
    for r in rows:
        met = "" if r.met is None else ("met" if r.met else "**missed**")
        lines.append(f"| {r.figure} | {r.value} | {r.goal} | {met} |")
    return "\n".join(lines)


def machine_info() -> dict[str, Any]:
    """Date (UTC), cores, CPU model and load average at the time: the context every figure needs."""
    import datetime
    import os
    import platform

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {
        "date_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": model,
        "load_average": load,
        "python": platform.python_version(),
    }

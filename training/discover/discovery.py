"""The state of one discovery run: its settings, the games it recorded for replay, its findings and sections.

The stages (:mod:`training.discover.stages`, :mod:`~training.discover.rl`, :mod:`~training.discover.exact`)
play games through :meth:`Discovery.play` and return numbers; the findings those numbers support come from
the pure functions of :mod:`results.findings`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from envs.core.config import config_dict, config_hash, validate_config
from envs.core.game import Ruleset
from results.findings import Finding, Thresholds
from results.records import GameRecord
from results.stats import Interval, wilson
from training.discover.budgets import Budget
from training.evaluate import Evaluation, evaluation_metrics
from training.runner import GameJob, run_games

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class Discovery:
    ruleset: Ruleset
    scenario: str
    config: BaseModel
    base_config: BaseModel  # the rules as written
    variant: Path | None
    budget: Budget
    seed: int
    workers: int
    thresholds: Thresholds
    out_dir: Path
    progress: Progress | None = None
    rl: bool = True
    num_players: int = 0
    games: dict[str, dict[str, Any]] = field(default_factory=dict)  # game id -> job (replayable)
    findings: list[Finding] = field(default_factory=list)
    sections: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    rl_agents: dict[str, str] = field(default_factory=dict)  # label -> agent spec "rl:<path>"
    whole: Any = None  # the verdict stage's WholeGame (exact values) on a game that solves, else None
    written_records: list[GameRecord] | None = None  # the round-robin replayed under the rules as written
    verdict_records: list[GameRecord] | None = None  # the unrestricted search subject's games (verdict stage)

    def __post_init__(self) -> None:
        self.num_players = self.ruleset.scenario(self.scenario).players(self.config)

    # -- playing -------------------------------------------------------------------------------------
    def play(self, stage: str, jobs: list[GameJob]) -> list[GameRecord]:
        jobs = [replace(j, index=i) for i, j in enumerate(jobs)]
        done = [0]

        def tick(n: int) -> None:
            done[0] += n
            if self.progress:
                self.progress(stage, done[0], len(jobs))

        return run_games(jobs, workers=self.workers, progress=tick)

    def game_id(self, stage: str, job: GameJob, index: int | None = None) -> str:
        """Record a game for replay; ``index`` is its position in the stage's batch."""
        gid = f"{stage}-{job.index if index is None else index}"
        self.games[gid] = {
            "ruleset": job.ruleset,
            "scenario": job.scenario,
            "agents": list(job.agents),
            "seed": job.seed,
            "forbid": [list(f) for f in job.forbid],
            "rules_hash": config_hash(
                self.config if job.config == config_dict(self.config) else _model(self.ruleset, dict(job.config))
            ),
            "config": job.config,
        }
        return gid

    def add(self, f: Finding) -> None:
        self.findings.append(f)

    def add_all(self, findings: list[Finding]) -> None:
        self.findings.extend(findings)


def _model(ruleset: Ruleset, cfg: dict[str, Any]) -> BaseModel:
    return validate_config(ruleset.config_model, cfg, "config")


# -- values ------------------------------------------------------------------------------------------


def agent_values(ev: Evaluation) -> dict[str, Interval]:
    """An agent's value: mean return alone (one seat), or its mean win rate against the field."""
    m = evaluation_metrics(ev)
    out: dict[str, Interval] = {}
    if ev.num_players == 1:
        for a, r in m["agents"].items():
            out[a] = Interval(r["mean_return"], r["return_ci"][0], r["return_ci"][1])
        return out
    for a in ev.agents:
        wins = games = 0
        for (fa, fb, seat), rec in zip(ev.matchups, ev.records, strict=True):
            if fa == a:
                games += 1
                wins += rec.winner == seat
            elif ev.num_players == 2 and fb == a and fa != fb:
                games += 1
                wins += rec.winner == 1 - seat
        out[a] = wilson(wins, games)
    return out


def interval_dict(iv: Interval) -> dict[str, float]:
    """An interval as the sections and findings store it: ``{value, low, high}`` rounded to 6 places."""
    return {"value": round(iv.value, 6), "low": round(iv.low, 6), "high": round(iv.high, 6)}

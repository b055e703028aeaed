"""Findings: what discovery reports, and the thresholds that decide them.

``findings.json``: ``{ruleset, scenario, rules_hash, seed, budget, findings: [{kind, subject, severity,
metric, value, threshold, ci, evidence}]}``. A finding is reported only when its whole 95% interval
clears its threshold.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Kind(StrEnum):
    DOMINANT_STRATEGY = "dominant_strategy"
    DEAD_OPTION = "dead_option"
    DEAD_RULE = "dead_rule"
    FRAGILE_RULE = "fragile_rule"
    SEAT_ADVANTAGE = "seat_advantage"
    RESOURCE_RUNAWAY = "resource_runaway"
    NON_TERMINATION = "non_termination"
    SNOWBALL = "snowball"
    EXPLOIT = "exploit"


class Severity(StrEnum):
    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return ["info", "low", "medium", "high"].index(self.value)


@dataclass
class Finding:
    kind: Kind
    subject: str
    severity: Severity
    metric: str
    value: float
    threshold: float
    ci: tuple[float, float]
    evidence: str  # an example game id, replayable with `rulebreaker play --replay`
    summary: str  # the finding in plain words, with its number and interval
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["kind"] = self.kind.value
        d["severity"] = self.severity.value
        d["value"] = round(self.value, 6)
        d["threshold"] = round(self.threshold, 6)
        d["ci"] = [round(self.ci[0], 6), round(self.ci[1], 6)]
        return d


class Thresholds(BaseModel):
    """Decision thresholds of discovery (all on the scale of win rates / normalised returns)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dominant_loss: float = Field(0.05, gt=0, description="value lost when a strongly used option is forbidden")
    dominant_usage: float = Field(0.6, gt=0, le=1, description="share of its decisions strong play gives the option")
    dead_option_band: float = Field(0.01, gt=0, description="forbidding the option moves value less than this")
    dead_rule_band: float = Field(0.01, gt=0, description="a knob moving no metric more than this is dead")
    fragile_move: float = Field(0.10, gt=0, description="a knob moving a win rate / return more than this is fragile")
    seat_advantage: float = Field(0.05, gt=0, description="a seat's win rate beyond its fair share by this much")
    time_limit_share: float = Field(0.10, gt=0, le=1, description="share of games ending at a time/step limit")
    runaway_rise: float = Field(0.10, gt=0, description="relative rise of a resource above its starting level")
    snowball_rate: float = Field(0.80, gt=0.5, le=1, description="the halfway leader wins at least this often")
    exploit_gap: float = Field(0.05, gt=0, description="RL/variant-specialist value over the best persona")
    severity_high: float = Field(0.20, gt=0, description="an effect this large is high severity")
    severity_medium: float = Field(0.10, gt=0, description="an effect this large is medium severity")


def severity_of(effect: float, t: Thresholds) -> Severity:
    e = abs(effect)
    if e >= t.severity_high:
        return Severity.HIGH
    if e >= t.severity_medium:
        return Severity.MEDIUM
    return Severity.LOW

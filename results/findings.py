"""Findings: what discovery reports, and the thresholds that decide them.

``findings.json``: ``{ruleset, scenario, rules_hash, seed, budget, findings: [{id, kind, subject, severity,
metric, value, threshold, ci, evidence, summary, details}], strength, builds?}``. A finding's ``id``
(:func:`finding_id`, e.g. ``F-3fa9c1``) is stable: the same ruleset, scenario, kind and subject give the
same id in every run, so ``balance --fix ID`` can name it. A finding is reported only when its whole 95% interval
clears its threshold.

Detection is here too, as pure functions over the numbers the discovery stages (``training.discover``)
return: each takes a stage's numbers and the :class:`Thresholds` and returns the findings they support.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from results.fingerprint import is_primary
from results.stats import Interval


class Kind(StrEnum):
    DOMINANT_STRATEGY = "dominant_strategy"
    DEAD_OPTION = "dead_option"
    DOMINATED_OPTION = "dominated_option"
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
    id: str = ""  # :func:`finding_id`, set by the pipeline once the finding's ruleset and scenario are known

    def to_json(self) -> dict[str, Any]:
        d = {"id": self.id, **asdict(self)}
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
    dominated_usage: float = Field(
        0.1, gt=0, le=1, description="a dominated option is one the re-optimizing subject chooses less often than this"
    )
    severity_high: float = Field(0.20, gt=0, description="an effect this large is high severity")
    severity_medium: float = Field(0.10, gt=0, description="an effect this large is medium severity")


def severity_of(effect: float, t: Thresholds) -> Severity:
    e = abs(effect)
    if e >= t.severity_high:
        return Severity.HIGH
    if e >= t.severity_medium:
        return Severity.MEDIUM
    return Severity.LOW


def finding_id(ruleset: str, scenario: str, kind: Kind | str, subject: str) -> str:
    """A finding's stable id: ``F-`` and 6 hex digits of the SHA-1 of ``ruleset/scenario/kind/subject``."""
    text = f"{ruleset}/{scenario}/{Kind(kind).value}/{subject}"
    return "F-" + hashlib.sha1(text.encode()).hexdigest()[:6]


def assign_ids(ruleset: str, scenario: str, findings: list[Finding]) -> None:
    """Give every finding its :func:`finding_id`; a second finding with the same kind and subject (rare: two
    stages reporting on one key) gets ``-2``, ``-3``, … in the order given (the pipeline's sorted order)."""
    seen: dict[str, int] = {}
    for f in findings:
        base = finding_id(ruleset, scenario, f.kind, f.subject)
        seen[base] = seen.get(base, 0) + 1
        f.id = base if seen[base] == 1 else f"{base}-{seen[base]}"


def finding_by_id(result: dict[str, Any], fid: str) -> dict[str, Any] | None:
    """The finding of a ``findings.json`` document with this id (None when there is none)."""
    return next((f for f in result.get("findings", []) if f.get("id") == fid), None)


# -- detection: pure functions over the numbers a discovery stage returns ----------------------------
# Each takes the stage's numbers (intervals as dicts ``{value, low, high}`` or :class:`Interval`) and the
# thresholds, and returns the findings they support (often none). Evidence is the id of an example game
# the stage recorded; where a stage records its example only when there is a finding, the finding comes
# back without evidence and the stage fills it in.


def _moves(v: dict[str, float] | None, threshold: float) -> int:
    """-1 when the whole interval is below -threshold, +1 above +threshold, 0 otherwise."""
    if v is None:
        return 0
    if v["high"] < -threshold:
        return -1
    if v["low"] > threshold:
        return 1
    return 0


def _within(v: dict[str, float] | None, band: float) -> bool:
    """Whether the whole interval lies inside ±band (an unplayed restriction counts as no change)."""
    return v is None or (abs(v["low"]) < band and abs(v["high"]) < band)


def verdict_of(row: dict[str, Any], t: Thresholds) -> str:
    """One option group's verdict from a re-optimizing subject's forbid and force rows.

    ``row``: ``{available, chosen, usage_in_context, forbid: {value, low, high} | None, force: … | None}``
    (``None``: that restriction was not played, because it cannot change what the subject does — forbidding
    an option it never chose, forcing one it always chose when legal). Verdicts: ``never_legal``,
    ``essential`` (forbidding it costs, whole interval beyond ``dominant_loss``), ``dominated`` (forcing it
    costs and the subject rarely chooses it), ``dead`` (both intervals inside ``dead_option_band``),
    ``not_played`` (a restriction the budget's cap left out, and nothing else decides), ``not_met`` (never
    chosen, and forcing it never made the subject take it: it was not legal for the subject in those games,
    so nothing was measured), ``inconclusive``
    (no interval clears a threshold at this budget), ``matters`` (some restriction moves
    value, but not in a way that makes it essential or dominated).
    """
    if not row.get("available", False):
        return "never_legal"
    fb, fc = row.get("forbid"), row.get("force")
    if fb is None and fc is not None and row.get("forced_uses") == 0 and not row.get("chosen"):
        return "not_met"  # never chosen, and never legal for the subject even when forced: nothing was measured
    if _moves(fb, t.dominant_loss) < 0:
        return "essential"
    if _moves(fc, t.dominant_loss) < 0 and row.get("usage_in_context", 0.0) < t.dominated_usage:
        return "dominated"
    if "budget" in (row.get("forbid_skip"), row.get("force_skip")):
        return "not_played"
    if _within(fb, t.dead_option_band) and _within(fc, t.dead_option_band):
        return "dead"
    if _moves(fb, t.dominant_loss) or _moves(fc, t.dominant_loss):
        return "matters"
    return "inconclusive"


def verdict_findings(section: dict[str, Any], t: Thresholds, core: tuple[str, ...] = ()) -> list[Finding]:
    """Restricted play with a re-optimizing subject (the search agent): dominant, dominated and dead options.

    ``section`` is the verdict stage's: ``{"subject": spec, "deals": n, "simulations": s, "options": {group:
    row}}`` with the rows of :func:`verdict_of` plus ``example`` (a game id). Options in ``core`` (the
    scenario's declared core mechanics) keep their finding at severity ``info``.
    """
    out: list[Finding] = []
    who = section["subject"]
    basis = f"{section['deals']} paired games per restriction, {section['simulations']} simulations per decision"
    for grp, r in section["options"].items():
        verdict = r["verdict"]
        fb, fc = r.get("forbid"), r.get("force")
        usage = r.get("usage_in_context", 0.0)
        f: Finding | None = None
        if verdict == "essential" and fb is not None and usage >= t.dominant_usage:
            loss = -fb["value"]
            f = Finding(
                Kind.DOMINANT_STRATEGY,
                grp,
                severity_of(loss, t),
                f"value lost by {who} re-optimizing without it",
                -loss,
                t.dominant_loss,
                (fb["low"], fb["high"]),
                r.get("example_forbid", ""),
                f"'{grp}' dominates: {who} chooses it in {100 * usage:.0f}% of its decisions of that kind, and "
                f"forbidding it costs {loss:.3f} [{-fb['high']:.3f}, {-fb['low']:.3f}] per game even though the "
                f"subject re-optimizes under the ban ({basis}).",
                {"usage_in_context": usage, "verdict": verdict},
            )
        elif verdict == "dominated" and fc is not None:
            loss = -fc["value"]
            f = Finding(
                Kind.DOMINATED_OPTION,
                grp,
                severity_of(loss, t),
                f"value lost by {who} when forced to use it where legal",
                -loss,
                t.dominant_loss,
                (fc["low"], fc["high"]),
                r.get("example_force", ""),
                f"'{grp}' is dominated: forcing {who} to use it whenever it is legal costs {loss:.3f} "
                f"[{-fc['high']:.3f}, {-fc['low']:.3f}] per game, and the subject chooses it in only "
                f"{100 * usage:.0f}% of its decisions of that kind ({basis}).",
                {"usage_in_context": usage, "verdict": verdict},
            )
        elif verdict == "dead":
            vals = [v for v in (fb, fc) if v is not None]
            biggest = max(vals, key=lambda v: abs(v["value"]))
            f = Finding(
                Kind.DEAD_OPTION,
                grp,
                Severity.LOW,
                f"largest value change of {who} when it is forbidden or forced",
                abs(biggest["value"]),
                t.dead_option_band,
                (biggest["low"], biggest["high"]),
                r.get("example_force") or r.get("example_forbid", ""),
                f"'{grp}' is a dead option: with {who} re-optimizing, forbidding it moves value by "
                + (f"{fb['value']:+.4f} [{fb['low']:+.4f}, {fb['high']:+.4f}]" if fb else "nothing (never chosen)")
                + " and forcing it where legal by "
                + (f"{fc['value']:+.4f} [{fc['low']:+.4f}, {fc['high']:+.4f}]" if fc else "nothing (always chosen)")
                + f", both inside ±{t.dead_option_band:.3f} ({basis}).",
                {"verdict": verdict},
            )
        if f is not None:
            if grp in core:
                f.severity = Severity.INFO
                f.summary += " (a declared core mechanic of the scenario: expected.)"
                f.details["core"] = True
            out.append(f)
    return out


STRENGTH_KINDS = (Kind.DOMINANT_STRATEGY, Kind.DOMINATED_OPTION, Kind.DEAD_OPTION, Kind.EXPLOIT)
"""Finding kinds that rest on the strength of the player measured (the search subject, a trained agent)."""


def rests_on_strength(f: Finding) -> bool:
    """Whether a finding's verdict depends on how well its player plays: restricted-play verdicts, exploits,
    and a rule found fragile or dead through the adapting subject's return."""
    return f.kind in STRENGTH_KINDS or "adapting]" in f.metric


def provisional(findings: list[Finding], strength: dict[str, Any] | None) -> list[Finding]:
    """Severity honesty: with a strength certificate that is not converged, every finding that rests on the
    player's strength says it is provisional and by how much, and none of them stays ``high`` (capped at
    ``medium``). With a converged certificate the findings come back unchanged."""
    if not strength or strength.get("converged"):
        return list(findings)
    by = float(strength.get("provisional_by") or 0.0)
    out: list[Finding] = []
    for f in findings:
        if not rests_on_strength(f):
            out.append(f)
            continue
        details = {**f.details, "provisional_by": round(by, 6)}
        severity = f.severity
        if severity == Severity.HIGH:
            severity = Severity.MEDIUM
            details["severity_uncapped"] = Severity.HIGH.value
        note = f" Provisional by {by:.3f} of value per game: the strength certificate is not converged"
        note += " (severity capped at medium)." if severity != f.severity else "."
        out.append(replace(f, severity=severity, summary=f.summary + note, details=details))
    return out


def _amount(metric: str, w: dict[str, float]) -> str:
    """A metric's change in words: win rates and shares in points, returns per game."""
    if metric.startswith("return["):
        return f"{w['change']:+.3f} [{w['low']:+.3f}, {w['high']:+.3f}] per game"
    return f"{100 * w['change']:+.1f} points [{100 * w['low']:+.1f}, {100 * w['high']:+.1f}]"


def sensitivity_findings(knob_rows: list[dict[str, Any]], t: Thresholds) -> list[Finding]:
    """Rule sensitivity: a key no perturbation moves is dead; one that moves a primary metric is fragile.

    ``knob_rows``: one row per perturbation, ``{key, value, was, description, metrics: {metric: {change,
    low, high}}, example}``.
    """
    out: list[Finding] = []
    by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in knob_rows:
        by_key[row["key"]].append(row)
    for key, rows in by_key.items():
        moved = []
        for row in rows:
            prim = {m: r for m, r in row["metrics"].items() if is_primary(m)}
            if not prim:
                continue
            worst_m, worst = max(prim.items(), key=lambda kv: max(abs(kv[1]["low"]), abs(kv[1]["high"])))
            moved.append((row, worst_m, worst))
        if not moved:
            continue
        # dead: no perturbation of this key moves any primary metric beyond the band
        if all(max(abs(w["low"]), abs(w["high"])) < t.dead_rule_band for _, _, w in moved):
            row, m, w = max(moved, key=lambda x: abs(x[2]["change"]))
            out.append(
                Finding(
                    Kind.DEAD_RULE,
                    key,
                    Severity.MEDIUM,
                    f"largest change of {m}",
                    w["change"],
                    t.dead_rule_band,
                    (w["low"], w["high"]),
                    row["example"],
                    f"'{key}' changes nothing: setting it to {', '.join(json.dumps(r['value']) for r in rows)} "
                    f"(as written: {json.dumps(rows[0]['was'])}) moves no win rate or return by more than "
                    f"{100 * t.dead_rule_band:.1f} points (largest: {100 * w['change']:+.2f} "
                    f"[{100 * w['low']:+.2f}, {100 * w['high']:+.2f}] on {m}).",
                )
            )
            continue
        for row, m, w in moved:
            if w["low"] > t.fragile_move or w["high"] < -t.fragile_move:
                out.append(
                    Finding(
                        Kind.FRAGILE_RULE,
                        key,
                        severity_of(w["change"], t),
                        m,
                        w["change"],
                        t.fragile_move,
                        (w["low"], w["high"]),
                        row["example"],
                        f"'{key}' is fragile: changing it from {json.dumps(row['was'])} to {json.dumps(row['value'])} "
                        f"({row['description']}) moves {m} by {_amount(m, w)}"
                        + (f" (over {w['games']} paired games)." if "games" in w else "."),
                    )
                )
                break
    return out


def variant_findings(
    metrics: dict[str, dict[str, float]], subject: str, num_players: int, example: str, t: Thresholds
) -> list[Finding]:
    """A variant against the rules as written (paired): a primary metric moved (a windfall when every
    one-seat agent gains), or one style rewarded far above the others."""
    out: list[Finding] = []
    prim = {m: r for m, r in metrics.items() if is_primary(m)}
    beyond = {m: r for m, r in prim.items() if r["low"] > t.fragile_move or r["high"] < -t.fragile_move}
    if beyond:
        m, w = max(beyond.items(), key=lambda kv: abs(kv[1]["change"]))
        ups = [k for k, r in prim.items() if r["low"] > 0]
        everyone = num_players == 1 and len(ups) == len(prim)
        out.append(
            Finding(
                Kind.FRAGILE_RULE,
                subject,
                severity_of(w["change"], t),
                m,
                w["change"],
                t.fragile_move,
                (w["low"], w["high"]),
                example,
                f"The variant's change to {subject} moves {m} by {100 * w['change']:+.1f} points "
                f"[{100 * w['low']:+.1f}, {100 * w['high']:+.1f}] against the rules as written"
                + (" — a windfall: every agent's return rises." if everyone else "."),
                {"windfall": everyone, "moved": sorted(beyond)},
            )
        )
    if len(prim) >= 3:  # a variant that rewards one style: one agent's gain far above the others'
        gains = {m: r["change"] for m, r in prim.items()}
        for m, r in prim.items():
            others = [g for k, g in gains.items() if k != m]
            med = statistics.median(others)
            if r["low"] - max(med, 0.0) > t.exploit_gap:
                out.append(
                    Finding(
                        Kind.EXPLOIT,
                        f"{subject} rewards {m}",
                        severity_of(r["change"] - med, t),
                        m,
                        r["change"] - med,
                        t.exploit_gap,
                        (r["low"] - med, r["high"] - med),
                        example,
                        f"The variant rewards one style: {m} gains {100 * r['change']:+.1f} points "
                        f"[{100 * r['low']:+.1f}, {100 * r['high']:+.1f}] while the median of the others gains "
                        f"{100 * med:+.1f}.",
                    )
                )
    return out


def exploit_findings(gap: dict[str, float] | None, best_persona: str, example: str, t: Thresholds) -> list[Finding]:
    """A trained agent's value over the best persona (``gap``: ``{value, low, high}``) beyond the threshold."""
    if not gap or gap["low"] <= t.exploit_gap:
        return []
    return [
        Finding(
            Kind.EXPLOIT,
            "trained agent",
            severity_of(gap["value"], t),
            f"value over {best_persona}",
            gap["value"],
            t.exploit_gap,
            (gap["low"], gap["high"]),
            example,
            f"A trained agent finds play the personas miss: it scores {gap['value']:+.3f} "
            f"[{gap['low']:+.3f}, {gap['high']:+.3f}] over the best persona ({best_persona}).",
        )
    ]


def transplant_findings(gap: Interval, example: str, t: Thresholds) -> list[Finding]:
    """Under a variant: its own trained policy over the policy trained on the rules as written."""
    if gap.low <= t.exploit_gap:
        return []
    return [
        Finding(
            Kind.EXPLOIT,
            "variant rewards new behaviour",
            severity_of(gap.value, t),
            "variant-trained policy over the policy trained on the rules as written, under the variant",
            gap.value,
            t.exploit_gap,
            (gap.low, gap.high),
            example,
            f"Transplant gap: under the variant, its own trained policy beats the policy trained on the rules "
            f"as written by {gap.value:+.3f} [{gap.low:+.3f}, {gap.high:+.3f}] — the variant rewards behaviour "
            "the rules as written do not.",
        )
    ]


def seat_advantage_findings(
    seat: int, won: Interval, num_players: int, decisive: int, example: str, t: Thresholds
) -> list[Finding]:
    """A seat winning its share of ``decisive`` games beyond the fair share by more than the threshold."""
    fair = 1 / num_players
    if not decisive or won.low <= fair + t.seat_advantage:
        return []
    return [
        Finding(
            Kind.SEAT_ADVANTAGE,
            f"seat {seat}",
            severity_of(won.value - fair, t),
            "share of decisive games won",
            won.value - fair,
            t.seat_advantage,
            (won.low - fair, won.high - fair),
            example,
            f"Seat {seat} wins {100 * won.value:.1f}% [{100 * won.low:.1f}, {100 * won.high:.1f}] of decisive games "
            f"against a fair share of {100 * fair:.1f}%.",
        )
    ]


def non_termination_findings(at_limit: Interval, t: Thresholds) -> list[Finding]:
    """Games ending at a time or step limit instead of by the rules (evidence left for the stage to fill)."""
    if at_limit.low <= t.time_limit_share:
        return []
    return [
        Finding(
            Kind.NON_TERMINATION,
            "time limit",
            severity_of(at_limit.value, t),
            "share of games ending at a limit",
            at_limit.value,
            t.time_limit_share,
            (at_limit.low, at_limit.high),
            "",
            f"{100 * at_limit.value:.1f}% [{100 * at_limit.low:.1f}, {100 * at_limit.high:.1f}] of round-robin games "
            "end at the time or step limit instead of by the rules.",
        )
    ]


def runaway_findings(
    resource: str, rise: Interval, compared_to_written: bool, what: str, t: Thresholds
) -> list[Finding]:
    """A resource rising (or, with a variant, rising beyond the rules as written) by more than the threshold."""
    if rise.low <= t.runaway_rise:
        return []
    summary = (
        f"'{resource}' runs away under the variant: it rises {100 * rise.value:.0f}% [{100 * rise.low:.0f}, "
        f"{100 * rise.high:.0f}] more over a game than under the rules as written."
        if compared_to_written
        else f"'{resource}' runs away under strong play: it ends {100 * rise.value:.0f}% [{100 * rise.low:.0f}, "
        f"{100 * rise.high:.0f}] above where it started."
    )
    return [
        Finding(
            Kind.RESOURCE_RUNAWAY,
            resource,
            severity_of(rise.value, t),
            what,
            rise.value,
            t.runaway_rise,
            (rise.low, rise.high),
            "",
            summary,
        )
    ]


def snowball_findings(resource: str, leader_wins: Interval, t: Thresholds) -> list[Finding]:
    """The halfway leader in ``resource`` winning at least the threshold's share of decisive games."""
    if leader_wins.low <= t.snowball_rate:
        return []
    iv = leader_wins
    return [
        Finding(
            Kind.SNOWBALL,
            resource,
            severity_of(iv.value - 0.5, t),
            f"games won by the halfway leader in {resource}",
            iv.value,
            t.snowball_rate,
            (iv.low, iv.high),
            "",
            f"The game snowballs: whoever leads in {resource} at the halfway point wins {100 * iv.value:.0f}% "
            f"[{100 * iv.low:.0f}, {100 * iv.high:.0f}] of the time.",
        )
    ]

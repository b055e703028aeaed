"""Discovery reports: one self-contained ``report.html`` (Jinja2 templates, every picture embedded) and ``report.md``.

The page a designer reads, in this order:

1. **What to look at**: the few findings that matter most (severity and surprise first, declared core mechanics
   last), each in plain words, naming the rule it concerns with its number from ``docs/rules/<ruleset>.md``
   (config keys carry their rule number as a comment in ``envs/<ruleset>/rules.toml``; option groups name
   theirs in ``Scenario.option_rules``), its number and interval, how sure the harness is (the strength
   certificate) and what to try (knob changes from the sensitivity data, as TOML ready to paste).
2. **Games to watch**: each verdict's example game as a narrated step-through replay (plain JS in the page),
   from the traces :mod:`training.replays` writes (``replays/<game id>.json``).
3. **Details**: matchups, restricted play, usage, sensitivity, builds, seats and lengths, resources, learning
   curves — each chart with a one-line reading.

Everything here reads records; nothing plays a game (``results`` never imports ``training``).
"""

from __future__ import annotations

import base64
import json
import math
import re
import shutil
import subprocess
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from results.records import atomic_write_text

TEMPLATES = Path(__file__).with_name("templates")
TOP_FINDINGS = 5
"""How many findings "What to look at" shows (the rest are in the details)."""
SURPRISE = {
    "exploit": 6,
    "dominant_strategy": 5,
    "dominated_option": 4,
    "fragile_rule": 4,
    "seat_advantage": 3,
    "snowball": 3,
    "resource_runaway": 3,
    "non_termination": 3,
    "dead_rule": 2,
    "dead_option": 1,
}
"""How surprising a kind of finding is to a designer, at equal severity (higher: shown first)."""
VERDICT_KINDS = ("dominant_strategy", "dominated_option", "dead_option")
"""Findings measured on the re-optimizing search player: its strength certificate says how sure they are."""
SEVERITY_RANK = {"high": 3, "medium": 2, "low": 1, "info": 0}
DASH = "—"


# -- templates ---------------------------------------------------------------------------------------------


def _png_uri(path: str | Path) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode()


def _signed(x: Any, digits: int = 3) -> str:
    return DASH if x is None else f"{float(x):+.{digits}f}"


def _fixed(x: Any, digits: int = 3) -> str:
    return DASH if x is None else f"{float(x):.{digits}f}"


def _interval(iv: Mapping[str, Any] | None, digits: int = 3) -> str:
    if not iv:
        return DASH
    return f"{_signed(iv['value'], digits)} [{_signed(iv['low'], digits)}, {_signed(iv['high'], digits)}]"


def _plain(iv: Mapping[str, Any]) -> str:
    """An unsigned value with its interval (win rates, values)."""
    return f"{iv['value']:.3f} [{iv['low']:.3f}, {iv['high']:.3f}]"


def _tojson_script(data: Any) -> str:
    """JSON safe inside a ``<script type="application/json">`` element."""
    return json.dumps(data, default=str).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def environment() -> jinja2.Environment:
    """The Jinja2 environment of every report page (HTML autoescaped; markdown templates end in ``.md.j2``)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        capitalize_first=lambda t: t[:1].upper() + t[1:],
        png=_png_uri,
        signed=_signed,
        fixed=_fixed,
        interval=_interval,
        script_json=_tojson_script,
        pct=_pct,
    )
    return env


def render(template: str, **context: Any) -> str:
    """Render one template of ``results/templates`` with ``context``."""
    return environment().get_template(template).render(**context)


# -- the rulebook: rule numbers, titles, words ------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One numbered rule of ``docs/rules/<ruleset>.md``."""

    number: str
    title: str
    text: str

    def quote(self, subject: str) -> str:
        """The sentence of the rule that best matches ``subject`` (an option group or a config key)."""
        sentences = split_sentences(self.text)
        if not sentences:
            return self.title
        key = subject.strip("'")
        for s in sentences:  # a config key is named in backticks by the rules file
            if f"`{key}`" in s:
                return plain_text(s)
        words = _stems(key)

        def score(s: str) -> tuple[int, int, int]:
            opening = _stems(" ".join(re.findall(r"[A-Za-z]+", s)[:4]))
            return (len(words & opening), len(words & _stems(s)), -sentences.index(s))

        best = max(sentences, key=score)
        return plain_text(best if words & _stems(best) else sentences[0])


def split_sentences(text: str) -> list[str]:
    """The sentences of a rule: split after ". " or "; " before a capital or an emphasis, never inside brackets."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch in ".;" and depth == 0 and text[i + 1 : i + 2] == " " and re.match(r"[A-Z*[]", text[i + 2 : i + 3]):
            out.append(text[start : i + 1].strip())
            start = i + 2
        elif ch == "-" and depth == 0 and text[i - 1 : i] == " " and text[i + 1 : i + 3] == " *":  # a list bullet
            out.append(text[start:i].strip())
            start = i + 2
    out.append(text[start:].strip())
    return [s for s in out if s]


def plain_text(markdown_text: str) -> str:
    """A rules-file sentence without its markdown marks (emphasis, code spans, bold)."""
    return re.sub(r"\*\*?([^*]+)\*\*?", r"\1", markdown_text).replace("`", "")


def _stems(text: str) -> set[str]:
    """Word stems (first 5 letters, lower case) of a text or an identifier ("all_out_defense" ~ "All-out defence")."""
    return {w[:5] for w in re.findall(r"[a-z]+", text.lower().replace("_", " ")) if len(w) > 2}


_NUMBERED = re.compile(r"^(\d+)\.\s+\*\*(.+?)\*\*\s*(.*)$")
_HEADED = re.compile(r"^#{2,3}\s+(\d+)\.\s+(.+?)\s*$")


def parse_rulebook(text: str) -> dict[str, Rule]:
    """The numbered rules of a rules file: ``N. **Title.** text…`` list items or ``## N. Title`` sections."""
    rules: dict[str, Rule] = {}
    current: tuple[str, str, list[str]] | None = None
    in_section = False

    def close() -> None:
        if current is not None and current[0] not in rules:
            number, title, lines = current
            rules[number] = Rule(number, title.rstrip(".").strip(), " ".join(" ".join(lines).split()))

    for line in text.splitlines():
        head = _HEADED.match(line)
        item = _NUMBERED.match(line)
        if head:
            close()
            current, in_section = (head.group(1), head.group(2), []), True
        elif line.startswith("#"):
            close()
            current, in_section = None, False
        elif item and not in_section:
            close()
            current = (item.group(1), item.group(2), [item.group(3)])
        elif current is not None and line.strip():
            if in_section or line.startswith((" ", "\t")):
                current[2].append(line.strip())
            else:  # a paragraph after the list ends its last item
                close()
                current = None
    close()
    return rules


_RULE_NO = re.compile(r"\bRules?\s+(\d+)")
_SECTION = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-\"]+?)\s*\]\]?")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]+\")\s*=")


def parse_knob_rules(toml_text: str) -> dict[str, str]:
    """Dotted config key -> the rule number its comment in ``rules.toml`` cites ("# Rule 14: …").

    A key without a number of its own takes the number of the comment just above its table, if any.
    """
    out: dict[str, str] = {}
    section = ""
    section_rule: str | None = None
    pending: str | None = None  # the rule number of the comment lines just read
    for line in toml_text.splitlines():
        code, _, comment = line.partition("#")
        cited = _RULE_NO.search(comment)
        if not code.strip():
            pending = cited.group(1) if cited else (pending if comment.strip() else None)
            continue
        s = _SECTION.match(code)
        if s:
            section = s.group(1).replace('"', "")
            section_rule = cited.group(1) if cited else pending
            pending = None
            continue
        k = _KEY.match(code)
        if k:
            key = f"{section}.{k.group(1).strip(chr(34))}" if section else k.group(1).strip('"')
            number = cited.group(1) if cited else section_rule
            if number:
                out[key] = number
    return out


def rules_doc_path(ruleset: str) -> Path:
    """``docs/rules/<ruleset>.md`` of this checkout."""
    return Path(__file__).resolve().parent.parent / "docs" / "rules" / f"{ruleset}.md"


@dataclass
class RuleRefs:
    """What a report needs to name the rule behind a finding: the rulebook, the knobs' and options' numbers."""

    ruleset: str = ""
    rules: dict[str, Rule] = field(default_factory=dict)
    knobs: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    config_model: Any = None
    rules_path: Path | None = None

    @classmethod
    def load(cls, ruleset: str, scenario: str | None = None) -> RuleRefs:
        """The references of a registered ruleset (an unknown one gives empty references, not an error)."""
        refs = cls(ruleset)
        doc = rules_doc_path(ruleset)
        if doc.exists():
            refs.rules = parse_rulebook(doc.read_text(encoding="utf-8"))
        try:
            from envs.core.registry import get_ruleset

            rs = get_ruleset(ruleset)
        except Exception:  # a run of a ruleset this install does not have: the report still renders
            return refs
        refs.config_model = rs.config_model
        refs.rules_path = Path(rs.rules_path)
        if refs.rules_path.exists():
            refs.knobs = parse_knob_rules(refs.rules_path.read_text(encoding="utf-8"))
        if scenario and scenario in rs.scenarios:
            refs.options = dict(getattr(rs.scenarios[scenario], "option_rules", {}) or {})
        return refs

    def rule_for(self, subject: str) -> Rule | None:
        """The rule a finding's subject (an option group, a config key, "a, b" keys of a variant) concerns."""
        number = self.options.get(subject) or self.knobs.get(subject)
        if number is None:
            for part in (p.strip() for p in subject.split(",")):
                number = self.options.get(part) or self.knobs.get(part)
                if number:
                    break
        if number is None:
            return None
        return self.rules.get(number) or Rule(number, f"Rule {number}", "")

    def number_of(self, key: str) -> str | None:
        return self.knobs.get(key)


# -- findings in plain words ---------------------------------------------------------------------------


def _words(option: str) -> str:
    return option.replace("_", " ")


def _pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:.{digits}f}%"


_WIN = re.compile(r"^win\[(.+) vs (.+)\]$")
_RETURN = re.compile(r"^return\[(.+?)( adapting)?\]$")


def metric_words(metric: str) -> str:
    """A metric's name in words: ``win[a vs b]`` is a's win rate against b, ``return[x adapting]`` x's value."""
    if m := _WIN.match(metric):
        return f"{m.group(1)}'s win rate against {m.group(2)}"
    if m := _RETURN.match(metric):
        return f"the adapting player {m.group(1)}'s value" if m.group(2) else f"{m.group(1)}'s return"
    return metric.replace("_", " ")


def knob_row_of(f: Mapping[str, Any], sections: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The sensitivity row a fragile- or dead-rule finding was read from (same key, metric and change)."""
    rows = [r for r in (sections.get("sensitivity") or {}).get("knobs") or [] if r["key"] == f["subject"]]
    for r in rows:
        m = r["metrics"].get(f.get("metric") or "")
        if m and abs(float(m["change"]) - float(f["value"])) < 1e-6:
            return r
    return rows[0] if rows else None


def _metric_of(f: Mapping[str, Any]) -> str:
    """The metric a finding's number is on (``"largest change of win[a vs b]"`` reads as ``win[a vs b]``)."""
    m = str(f.get("metric") or "")
    found = re.search(r"(\w+\[.*\])$", m)
    return found.group(1) if found else m


def plain_words(f: Mapping[str, Any], who: str, row: Mapping[str, Any] | None = None) -> str:
    """One or two sentences a designer reads, with the finding's number (``row``: its sensitivity row)."""
    kind, subj = f["kind"], f["subject"]
    d = f.get("details") or {}
    lo, hi = f["ci"]
    usage = d.get("usage_in_context")
    if kind == "dominant_strategy":
        share = f" (it chooses it in {_pct(usage)} of such decisions)" if usage is not None else ""
        return (
            f"Players should almost always choose '{_words(subj)}': banning it costs the strongest player ({who}) "
            f"{-f['value']:.3f} of value per game [{-hi:.3f}, {-lo:.3f}], even after it re-plans around the ban{share}."
        )
    if kind == "dominated_option":
        share = (
            f" and the strongest player ({who}) picks it in only {_pct(usage)} of its chances"
            if usage is not None
            else ""
        )
        return (
            f"'{_words(subj).capitalize()}' is a trap: playing it whenever it is allowed costs {-f['value']:.3f} of "
            f"value per game [{-hi:.3f}, {-lo:.3f}]{share}."
        )
    if kind == "dead_option":
        return (
            f"'{_words(subj).capitalize()}' makes no difference: banning it or forcing it moves the strongest "
            f"player's value by at most {abs(f['value']):.3f} [{lo:+.3f}, {hi:+.3f}], inside ±{f['threshold']:.3f}."
        )
    if kind == "dead_rule":
        return (
            f"Changing {subj} changes nothing a player can feel: no win rate or return moves by more than "
            f"{f['threshold']:.2f} (largest: {metric_words(_metric_of(f))} by "
            f"{metric_change(_metric_of(f), {'change': f['value'], 'low': lo, 'high': hi})})."
        )
    if kind == "fragile_rule":
        change = metric_change(f["metric"], {"change": f["value"], "low": lo, "high": hi})
        if row is not None:
            return (
                f"The game is very sensitive to {subj}: changing it from {json.dumps(row['was'])} to "
                f"{json.dumps(row['value'])} ({row['description']}) moves {metric_words(f['metric'])} by {change}."
            )
        return f"The game is very sensitive to {subj}: a change moves {metric_words(f['metric'])} by {change}."
    return str(f.get("summary") or f"{kind.replace('_', ' ')}: {subj}")


def headline(f: Mapping[str, Any]) -> str:
    kind, subj = f["kind"], _words(f["subject"])
    return {
        "dominant_strategy": f"'{subj}' dominates",
        "dominated_option": f"'{subj}' is a trap",
        "dead_option": f"'{subj}' does nothing",
        "dead_rule": f"{f['subject']} changes nothing",
        "fragile_rule": f"{f['subject']} is fragile",
        "seat_advantage": f"{subj} has the advantage",
        "resource_runaway": f"{subj} runs away",
        "non_termination": "games run into the limit",
        "snowball": f"the {subj} leader snowballs",
        "exploit": f"an exploit: {subj}",
    }.get(kind, f"{kind.replace('_', ' ')}: {subj}")


FEW_GAMES = 10
"""Fewer paired games than this behind a number: the report calls it provisional whatever its interval."""


def certainty(f: Mapping[str, Any], strength: Mapping[str, Any] | None, games: int | None = None) -> dict[str, str]:
    """How sure the harness is of one finding: the interval's margin over its threshold, the number of games
    behind it and the strength certificate of the player it was measured on."""
    sure = _certainty(f, strength)
    if games is not None and games < FEW_GAMES:
        sure = {
            "level": "provisional",
            "text": f"Provisional: only {games} paired games stand behind this number; "
            + sure["text"].split(": ", 1)[-1],
        }
    return sure


def _certainty(f: Mapping[str, Any], strength: Mapping[str, Any] | None) -> dict[str, str]:
    lo, hi = f["ci"]
    thr = float(f.get("threshold") or 0.0)
    margin = min(abs(lo), abs(hi)) if lo * hi > 0 else 0.0
    interval = f"the whole 95% interval [{lo:+.3f}, {hi:+.3f}] clears the threshold {thr:.3f}"
    if f["kind"] in ("dead_option", "dead_rule"):
        interval = f"the whole 95% interval [{lo:+.3f}, {hi:+.3f}] lies inside ±{thr:.3f}"
    st = strength or {}
    if f["kind"] not in VERDICT_KINDS and "adapting" not in str(f.get("metric", "")):
        return {
            "level": "firm" if margin > 0 or f["kind"] == "dead_rule" else "likely",
            "text": f"Measured on the persona games: {interval}. The search player's certificate does not bear on it.",
        }
    if not st.get("agent"):
        return {"level": "unchecked", "text": f"{interval.capitalize()}; no strength certificate for this run."}
    agent = st["agent"]
    delta = st.get("budget_doubling_delta")
    gap = st.get("exact_gap")
    bits = []
    if delta is not None:
        bits.append(f"doubling {agent}'s search moves its value by {float(delta):+.3f}")
    if gap is not None:
        bits.append(f"it is {float(gap):.3f} short of the exact optimum")
    edge = st.get("best_response_edge")
    if edge is not None:
        bits.append(f"a trained exploiter gains {float(edge):+.3f} on it")
    cert = "; ".join(bits) or "no certificate figures"
    if st.get("converged"):
        return {"level": "firm", "text": f"Firm: {interval}; the player is stable ({cert})."}
    by = st.get("provisional_by")
    by_txt = f" by up to {float(by):.3f} per game" if by is not None else ""
    sure = "Provisional" if margin <= (float(by) if by is not None else math.inf) else "Likely"
    return {
        "level": sure.lower(),
        "text": f"{sure}: {interval}, but the player is not converged ({cert}), so this may move{by_txt}.",
    }


def order_findings(findings: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Severity, then surprise, then effect size; info (declared core mechanics) last."""

    def key(f: Mapping[str, Any]) -> tuple[Any, ...]:
        core = f["severity"] == "info" or bool((f.get("details") or {}).get("core"))
        return (core, -SEVERITY_RANK.get(f["severity"], 0), -SURPRISE.get(f["kind"], 0), -abs(f["value"]))

    return sorted(findings, key=key)


# -- what to try: knob changes from the sensitivity data, as TOML -------------------------------------


def toml_value(v: Any) -> str:
    """A TOML literal for a config value (bool, number, string, list, inline table)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML literal for {v!r}")


def toml_change(changes: Mapping[str, Any], comment: str = "") -> str:
    """A variant file body that sets each dotted key (grouped by table), ready to paste into a rules file."""
    tables: dict[str, list[str]] = {}
    for key, value in changes.items():
        table, _, name = key.rpartition(".")
        tables.setdefault(table, []).append(f"{name} = {toml_value(value)}")
    lines = [f"# {comment}"] if comment else []
    for table, rows in sorted(tables.items(), key=lambda kv: kv[0] != ""):  # top-level keys before any table
        if table:
            lines.append(f"[{table}]")
        lines.extend(rows)
    return "\n".join(lines) + "\n"


def _primary(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The personas' win rates and returns (the adapting search player's return is apart: see _adapting)."""
    return {m: r for m, r in metrics.items() if m.startswith(("win[", "return[")) and "adapting" not in m}


def metric_change(m: str, r: Mapping[str, Any]) -> str:
    """A metric's change with its interval: win rates in points, returns and the rest as values."""
    if m.startswith(("win[", "ended[", "seat")):
        return f"{100 * r['change']:+.1f} points [{100 * r['low']:+.1f}, {100 * r['high']:+.1f}]"
    return f"{r['change']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}]"


def _adapting(metrics: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    for m, r in metrics.items():
        if "adapting" in m:
            return m, r
    return None


def what_to_try(
    f: Mapping[str, Any],
    sections: Mapping[str, Any],
    refs: RuleRefs,
    ruleset: str,
    scenario: str,
    run_dir: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Knob changes that may shrink or remove the finding, each with what the sensitivity data measured.

    A fragile key: the tried values that moved the game least (or, if every one moved it, the value as
    written is the one to keep). A dead key: the tried value that moved most (and the advice to drop or
    sharpen the rule). An option: the knobs of the same rule (by rule number), with their measured effect
    on the adapting player. Always last: the ``rulebreaker balance`` command that searches for the fix.
    """
    knobs = (sections.get("sensitivity") or {}).get("knobs") or []
    out: list[dict[str, Any]] = []

    def row_reading(row: Mapping[str, Any], adapting_first: bool = False) -> str:
        prim = _primary(row["metrics"])
        ad = _adapting(row["metrics"])
        persona = None
        if prim:
            m, r = max(prim.items(), key=lambda kv: abs(kv[1]["change"]))
            persona = f"{metric_words(m)} by {metric_change(m, r)}"
        adapt = f"the adapting player's value by {metric_change(*ad)}" if ad else None
        parts = [p for p in ((adapt, persona) if adapting_first else (persona, adapt)) if p]
        return ("moves " + " and ".join(parts)) if parts else "moves nothing measured"

    def biggest(row: Mapping[str, Any]) -> float:
        prim = _primary(row["metrics"])
        return max((max(abs(r["low"]), abs(r["high"])) for r in prim.values()), default=0.0)

    subj = f["subject"]
    if f["kind"] == "fragile_rule":
        rows = [r for r in knobs if r["key"] == subj]
        calm = sorted(rows, key=biggest)
        for r in calm[:2]:
            out.append(
                {
                    "toml": toml_change({subj: r["value"]}, f"{subj} = {json.dumps(r['value'])}: {r['description']}"),
                    "reading": f"Measured: {subj} = {json.dumps(r['value'])} {row_reading(r)}.",
                    "measured": True,
                }
            )
        if rows:
            out.append(
                {
                    "toml": toml_change({subj: rows[0]["was"]}, "as written: the value to keep"),
                    "reading": f"Keep {subj} at {json.dumps(rows[0]['was'])} unless the change above is wanted.",
                    "measured": True,
                }
            )
    elif f["kind"] == "dead_rule":
        rows = sorted((r for r in knobs if r["key"] == subj), key=biggest, reverse=True)
        for r in rows[:1]:
            out.append(
                {
                    "toml": toml_change({subj: r["value"]}, f"{subj} = {json.dumps(r['value'])}: {r['description']}"),
                    "reading": f"Measured: even {subj} = {json.dumps(r['value'])} {row_reading(r)}: "
                    "drop the rule, or change what it does rather than its number.",
                    "measured": True,
                }
            )
    else:
        rule = refs.rule_for(subj)
        related = [r for r in knobs if rule is not None and refs.number_of(r["key"]) == rule.number]
        scored = []
        for r in related:
            ad = _adapting(r["metrics"])
            effect = abs(ad[1]["change"]) if ad else biggest(r)
            scored.append((effect, r))
        scored.sort(key=lambda x: -x[0])
        for _, r in scored[:2]:
            out.append(
                {
                    "toml": toml_change(
                        {r["key"]: r["value"]}, f"{r['key']} = {json.dumps(r['value'])}: {r['description']}"
                    ),
                    "reading": f"Measured: {r['key']} = {json.dumps(r['value'])} {row_reading(r, True)}"
                    + (f" (same rule {rule.number})" if rule else "")
                    + "; whether it removes this finding is for balance to check.",
                    "measured": True,
                }
            )
    fix = f"{f['kind']}:{subj}"
    if f.get("id"):  # a stable finding id: balance reads the finding from the run's findings.json
        fix = f"{f['id']}" + (f" --from {run_dir}" if run_dir else "")
    rule = refs.rule_for(subj)
    keys = sorted({r["key"] for r in knobs if rule is not None and refs.number_of(r["key"]) == rule.number})
    if f["kind"] in ("fragile_rule", "dead_rule"):
        keys = [subj]
    out.append(
        {
            "toml": "",
            "reading": "Search for the smallest change that removes it:",
            "command": f"rulebreaker balance {ruleset} {scenario} --fix "
            + (fix if f.get("id") else f"'{fix}'")
            + (f" --knobs {','.join(keys)}" if keys else ""),
            "measured": False,
        }
    )
    return out


GAME_WIDE = ("seat_advantage", "resource_runaway", "non_termination", "snowball", "exploit")
"""Kinds of finding about the game as a whole rather than one rule."""


def rule_label(f: Mapping[str, Any], rule: Rule | None) -> str:
    """ "Rule 14: Maneuvers", or why no rule is named."""
    if rule is not None:  # without docs/rules (an installed wheel) only the number is known
        return f"Rule {rule.number}" + (f": {rule.title}" if rule.title != f"Rule {rule.number}" else "")
    if f["kind"] in GAME_WIDE:
        return "no single rule: the game as a whole"
    return "no rule number declared for it (rules.toml comment or Scenario.option_rules)"


def _games_of(f: Mapping[str, Any], sections: Mapping[str, Any]) -> tuple[str, int | None]:
    """On how many games the finding's number stands, in words and as a count (the paired games, if known)."""
    if f["kind"] in ("fragile_rule", "dead_rule"):
        row = knob_row_of(f, sections)
        m = (row or {}).get("metrics", {}).get(f.get("metric") or "", {})
        if m.get("games"):
            return f"{m['games']} paired games", int(m["games"])
        games = (sections.get("sensitivity") or {}).get("games_per_matchup")
        return (f"{games} games per matchup", None) if games else ("", None)
    if f["kind"] in VERDICT_KINDS:
        v = sections.get("verdicts") or {}
        return (f"{v['deals']} paired games per restriction", int(v["deals"])) if v.get("deals") else ("", None)
    rr = sections.get("round_robin") or {}
    if rr.get("games_per_matchup"):
        return f"the round-robin's {rr['games_per_matchup']} games per matchup", None
    return "", None


def verdict_cards(
    result: Mapping[str, Any],
    sections: Mapping[str, Any],
    refs: RuleRefs,
    replay_ids: set[str],
    limit: int = TOP_FINDINGS,
    run_dir: str | Path | None = None,
) -> list[dict[str, Any]]:
    """The "What to look at" cards: the first ``limit`` findings in :func:`order_findings` order."""
    strength = result.get("strength")
    who = (strength or {}).get("agent") or sections.get("strong_agent") or "the strongest player"
    cards = []
    for f in order_findings(result.get("findings", []))[:limit]:
        rule = refs.rule_for(f["subject"])
        games_text, games = _games_of(f, sections)
        sure = certainty(f, strength, games)
        ev = f.get("evidence") or ""
        cards.append(
            {
                "id": f.get("id") or f"{f['kind']}:{f['subject']}",
                "severity": f["severity"],
                "kind": f["kind"].replace("_", " "),
                "headline": headline(f),
                "rule": rule,
                "rule_label": rule_label(f, rule),
                "quote": rule.quote(f["subject"]) if rule else "",
                "words": plain_words(f, who, knob_row_of(f, sections)),
                "number": f"{f['value']:+.3f} [{f['ci'][0]:+.3f}, {f['ci'][1]:+.3f}]",
                "metric": metric_words(f.get("metric") or f["kind"]),
                "games": games_text,
                "threshold": f.get("threshold"),
                "sure": sure,
                "tries": (tries := what_to_try(f, sections, refs, result["ruleset"], result["scenario"], run_dir)),
                "try_summary": " · ".join(
                    [t["toml"].splitlines()[0].lstrip("# ").split(":")[0] for t in tries if t["toml"]]
                    + ["a balance search"]
                ),
                "evidence": ev,
                "has_replay": ev in replay_ids,
                "core": f["severity"] == "info" or bool((f.get("details") or {}).get("core")),
            }
        )
    return cards


# -- charts -------------------------------------------------------------------------------------------------


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend."""
    # lazy: matplotlib takes a good part of a second to import; the CLI loads it only to draw a report
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> Path:
    plt = _pyplot()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_matchups(rr: Mapping[str, Any], path: Path) -> Path | None:
    m = rr["metrics"]
    agents = rr["agents"]
    if "matrix" in m:
        grid = np.full((len(agents), len(agents)), np.nan)
        for i, a in enumerate(agents):
            for j, b in enumerate(agents):
                cell = m["matrix"].get(a, {}).get(b)
                if cell:
                    grid[i, j] = 100 * cell["win_rate"]
        fig, ax = _pyplot().subplots(figsize=(1.2 * len(agents) + 2.5, 1.0 * len(agents) + 1.5))
        im = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=100)
        ax.set_xticks(range(len(agents)), agents, rotation=30, ha="right")
        ax.set_yticks(range(len(agents)), agents)
        for i in range(len(agents)):
            for j in range(len(agents)):
                if not np.isnan(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=9)
        ax.set_title("win rate of row against column (%)")
        fig.colorbar(im, ax=ax)
        return _save(fig, path)
    vals = rr["values"]
    if not vals:
        return None
    fig, ax = _pyplot().subplots(figsize=(6, 0.5 * len(vals) + 1.5))
    names = list(vals)
    means = [vals[a]["value"] for a in names]
    errs = [[vals[a]["value"] - vals[a]["low"] for a in names], [vals[a]["high"] - vals[a]["value"] for a in names]]
    ax.barh(names, means, xerr=errs, color="#4c78a8")
    ax.set_xlabel("mean return (95% CI)")
    ax.set_title("agents on the same deals")
    return _save(fig, path)


def plot_bars(
    rows: list[tuple[str, float, float, float]], title: str, xlabel: str, path: Path, band: float | None = None
) -> Path | None:
    if not rows:
        return None
    fig, ax = _pyplot().subplots(figsize=(7, 0.38 * len(rows) + 1.6))
    names = [r[0] for r in rows]
    vals = [r[1] for r in rows]
    errs = [[r[1] - r[2] for r in rows], [r[3] - r[1] for r in rows]]
    colors = ["#e45756" if r[3] < 0 else "#54a24b" if r[2] > 0 else "#9d9d9d" for r in rows]
    ax.barh(names, vals, xerr=errs, color=colors)
    ax.axvline(0, color="black", lw=0.8)
    if band:
        ax.axvspan(-band, band, color="#dddddd", alpha=0.5, zorder=0)
    ax.invert_yaxis()
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    return _save(fig, path)


def plot_usage(usage: Mapping[str, Mapping[str, float]], path: Path) -> Path | None:
    rows = [(f"{ctx}: {opt}", share) for ctx, opts in usage.items() for opt, share in list(opts.items())[:8]]
    if not rows:
        return None
    fig, ax = _pyplot().subplots(figsize=(7, 0.3 * len(rows) + 1.5))
    ax.barh([r[0] for r in rows], [100 * r[1] for r in rows], color="#72b7b2")
    ax.invert_yaxis()
    ax.set_xlabel("share of decisions in its context (%)")
    ax.set_title("choices per decision context")
    return _save(fig, path)


def plot_resources(resources: Mapping[str, Any], path: Path) -> Path | None:
    curves = {k: v["curve"] for k, v in resources.items() if any(x is not None for x in v.get("curve", []))}
    if not curves:
        return None
    fig, axes = _pyplot().subplots(1, len(curves), figsize=(3.2 * len(curves) + 0.5, 2.8), squeeze=False)
    for ax, (k, c) in zip(axes[0], curves.items(), strict=True):
        xs = [10 * i for i, v in enumerate(c) if v is not None]
        ax.plot(xs, [v for v in c if v is not None], marker="o")
        ax.set_title(k)
        ax.set_xlabel("% of game")
    fig.suptitle("resource levels over the game (round-robin, best persona)")
    return _save(fig, path)


@dataclass
class Chart:
    """A picture of the details with its one-line reading."""

    title: str
    path: Path
    reading: str


def _largest_sensitivity(k: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    prim = _primary(k["metrics"])
    if not prim:
        return None
    return max(prim.items(), key=lambda kv: abs(kv[1]["change"]))


def charts(out_dir: Path, result: Mapping[str, Any], sections: Mapping[str, Any]) -> dict[str, Chart]:
    """Draw every chart the sections support; each with its reading."""
    out: dict[str, Chart] = {}
    rr = sections.get("round_robin")
    if rr:
        p = plot_matchups(rr, out_dir / "matchups.png")
        vals = rr.get("values") or {}
        if p and vals:
            best = max(vals, key=lambda a: vals[a]["value"])
            worst = min(vals, key=lambda a: vals[a]["value"])
            out["matchups"] = Chart(
                "Matchups",
                p,
                f"Strongest persona: {best} ({_plain(vals[best])}); weakest: {worst} ({_plain(vals[worst])}).",
            )
    usage = sections.get("usage") or {}
    p = plot_usage(usage, out_dir / "usage.png")
    if p:
        tops = [
            (ctx, *max(opts.items(), key=lambda kv: kv[1]))
            for ctx, opts in usage.items()
            if opts  # a context with no decision has no favourite
        ]
        reading = "; ".join(f"in '{c}' it mostly chooses {o} ({_pct(s)})" for c, o, s in tops[:3])
        out["usage"] = Chart("Option usage", p, (reading[:1].upper() + reading[1:] + ".") if reading else DASH)
    verdicts = sections.get("verdicts")
    restricted = sections.get("restricted")
    rows = []
    skipped: dict[str, int] = {}
    subject = ""
    if verdicts:
        subject = verdicts["subject"]
        for g, r in verdicts["options"].items():
            for mode in ("forbid", "force"):
                iv = r.get(mode)
                if iv:
                    rows.append((f"{mode} {g}", iv["value"], iv["low"], iv["high"]))
                else:
                    why = r.get(f"{mode}_skip") or "never legal"
                    skipped[why] = skipped.get(why, 0) + 1
    elif restricted:
        subject = restricted["strong"]
        for g, r in restricted["agents"][subject]["options"].items():
            if r.get("replayed", True):
                v = r["value_change"]
                rows.append((f"forbid {g}", v["value"], v["low"], v["high"]))
            else:
                skipped["never chosen or never legal"] = skipped.get("never chosen or never legal", 0) + 1
    p = plot_bars(
        rows,
        "value change when an option is forbidden / forced",
        f"value change of {subject} per game (95% CI)",
        out_dir / "restricted.png",
        result["thresholds"]["dead_option_band"],
    )
    if p:
        g, v, lo, hi = min(rows, key=lambda r: r[1])
        why_words = {
            "budget": "left out by the budget's cap",
            "never chosen": "of options never chosen (nothing to forbid)",
            "always chosen": "of options always chosen (nothing to force)",
            "never legal": "of options never legal",
        }
        left = ", ".join(f"{n} {why_words.get(why, why)}" for why, n in sorted(skipped.items()))
        out["restricted"] = Chart(
            "Restricted play",
            p,
            f"The costliest restriction: {g}, {v:+.3f} [{lo:+.3f}, {hi:+.3f}] per game"
            + (f"; restrictions not played: {left}." if left else "."),
        )
    knobs = (sections.get("sensitivity") or {}).get("knobs") or []
    rows = []
    for k in knobs:
        big = _largest_sensitivity(k)
        if big:
            rows.append((f"{k['key']}={json.dumps(k['value'])}", big[1]["change"], big[1]["low"], big[1]["high"]))
    band = result["thresholds"]["dead_rule_band"]
    p = plot_bars(
        rows, "largest win-rate / return change per rule change", "change (95% CI)", out_dir / "sensitivity.png"
    )
    if p:
        name, v, lo, hi = max(rows, key=lambda r: abs(r[1]))
        calm = sum(1 for r in rows if abs(r[2]) < band and abs(r[3]) < band)
        out["sensitivity"] = Chart(
            "Rule sensitivity",
            p,
            f"The biggest mover is {name}: {100 * v:+.1f} points [{100 * lo:+.1f}, {100 * hi:+.1f}]; "
            f"{calm} of {len(rows)} perturbations stay inside ±{100 * band:.0f} points.",
        )
    res = (sections.get("structure") or {}).get("resources") or {}
    p = plot_resources(res, out_dir / "resources.png")
    if p:
        bits = []
        for k, v in res.items():
            rr_ = v.get("relative_rise")
            if rr_:
                bits.append(f"{k} {100 * rr_['value']:+.0f}%")
        out["resources"] = Chart(
            "Resource trajectories",
            p,
            "Change from the first to the last decision: " + (", ".join(bits) or "none measured") + ".",
        )
    rl = sections.get("rl") or {}
    curve = rl.get("learning_curve_png")
    if curve:  # the run folder's own copy when the recorded path no longer resolves (a moved or copied run)
        path = next((c for c in (Path(curve), out_dir / Path(curve).name) if c.exists()), None)
        if path is not None:
            out["learning"] = Chart("Learning curve", path, rl.get("summary") or "The trained agent's evaluations.")
    return out


# -- replays ------------------------------------------------------------------------------------------------


def load_replays(out_dir: Path) -> list[dict[str, Any]]:
    """The step-through traces :mod:`training.replays` wrote in ``out_dir/replays`` (in its index's order)."""
    folder = out_dir / "replays"
    index = folder / "index.json"
    if not index.exists():
        return []
    try:
        ids = json.loads(index.read_text(encoding="utf-8"))
        return [json.loads((folder / f"{gid}.json").read_text(encoding="utf-8")) for gid in ids]
    except (OSError, json.JSONDecodeError, TypeError):
        return []


def replays_from_examples(examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Step-through replays from narrated logs alone (one line a step; no resources): the fallback."""
    out = []
    for ex in examples:
        steps = [
            {"n": i, "who": "", "action": "", "events": [{"text": t, "dice": False}]} for i, t in enumerate(ex["log"])
        ]
        out.append({"id": ex["id"], "title": ex["title"], "replay": ex["replay"], "players": [], "steps": steps})
    return out


# -- the page -------------------------------------------------------------------------------------------------


def _verdict_rows(sections: Mapping[str, Any]) -> list[dict[str, str]]:
    v = sections.get("verdicts")
    if not v:
        return []
    core = set(v.get("core_options", []))
    rows = []
    for g, r in sorted(v["options"].items(), key=lambda kv: (kv[0] in core, kv[1]["verdict"] == "never_legal", kv[0])):
        fb, fc = r.get("forbid"), r.get("force")
        rows.append(
            {
                "option": g + (" (core)" if g in core else ""),
                "verdict": r["verdict"].replace("_", " "),
                "chosen": f"{r['chosen']} ({_pct(r['usage_in_context'])})",
                "forbid": _interval(fb) if fb else f"not played ({r.get('forbid_skip') or 'never legal'})",
                "force": _interval(fc) if fc else f"not played ({r.get('force_skip') or 'never legal'})",
            }
        )
    return rows


def _sensitivity_rows(sections: Mapping[str, Any]) -> list[dict[str, str]]:
    rows = []
    for k in (sections.get("sensitivity") or {}).get("knobs") or []:
        big = _largest_sensitivity(k)
        ad = _adapting(k["metrics"])
        ln = k["metrics"].get("length")
        rows.append(
            {
                "knob": k["key"],
                "value": f"{json.dumps(k['value'])} (as written {json.dumps(k['was'])})",
                "change": f"{big[0]}: {metric_change(*big)}" if big else DASH,
                "adapting": _interval(ad[1] and {"value": ad[1]["change"], "low": ad[1]["low"], "high": ad[1]["high"]})
                if ad
                else "not measured",
                "length": f"{ln['change']:+.2f}" if ln else DASH,
            }
        )
    return rows


def _structure_lines(sections: Mapping[str, Any]) -> list[str]:
    st = sections.get("structure") or {}
    lines = []
    if "seats" in st:
        lines.append(
            "Share of decisive games won per seat: "
            + ", ".join(
                f"seat {k} {100 * v['value']:.1f}% [{100 * v['low']:.1f}, {100 * v['high']:.1f}]"
                for k, v in st["seats"].items()
            )
            + "."
        )
    ln = st.get("length")
    if ln:
        lines.append(
            f"Game length: mean {ln['mean']:.1f}, median {ln['median']}, max {ln['max']} decisions; ended by: "
            + ", ".join(f"{k} {v}" for k, v in ln["reasons"].items())
            + "."
        )
    for k, v in (st.get("resources") or {}).items():
        r = v.get("relative_rise")
        if r:
            lines.append(
                f"{k}: relative change first→last decision {100 * r['value']:+.1f}% "
                f"[{100 * r['low']:+.1f}, {100 * r['high']:+.1f}]."
            )
    return lines


def _strength_text(strength: Mapping[str, Any] | None) -> dict[str, str] | None:
    st = strength or {}
    if not st.get("agent"):
        return None
    gap = "not solvable here" if st.get("exact_gap") is None else f"{st['exact_gap']:+.4f}"
    delta = st.get("budget_doubling_delta")
    lo, hi = st.get("budget_doubling_ci") or [delta, delta]
    edge = st.get("best_response_edge")
    edge_txt = f"{edge:+.4f}" if edge is not None else f"n/a ({st.get('best_response_note') or 'not trained'})"
    text = (
        f"Every verdict is measured on {st['agent']}. Doubling its simulations changes its value by "
        f"{_signed(delta, 4)} [{_signed(lo, 4)}, {_signed(hi, 4)}]"
        + (f" on the same {st['deals']} deals" if st.get("deals") else "")
        + f"; exact gap {gap}; best-response edge {edge_txt}."
    )
    rx = st.get("restricted_exact") or {}
    if rx:
        within = sum(1 for r in rx.values() if r.get("within"))
        worst = max((abs(r.get("off") or 0.0) for r in rx.values()), default=0.0)
        text += (
            f" Restricted play against the exact restricted optima: {within} of {len(rx)} changes within their "
            f"interval or 0.02 (largest distance {worst:.3f})."
        )
    gain = st.get("restricted_gain")
    if gain:
        how = "forbidding" if gain["mode"] == "forbid" else "forcing"
        text += (
            f" Restricted play beats it: {how} {gain['option'].replace('_', ' ')} raises its value by "
            f"{_signed(gain['value'], 3)} [{_signed(gain['low'], 3)}, {_signed(gain['high'], 3)}], so it misses "
            f"better play by at least {gain['low']:.3f}."
        )
    if st.get("converged"):
        return {"level": "firm", "text": text + " Converged at this budget: the verdicts below are firm."}
    by = st.get("provisional_by")
    return {
        "level": "provisional",
        "text": text
        + " Not converged: the findings are provisional"
        + (f", by up to {by:.3f} of value per game" if by is not None else "")
        + " (a larger budget may move them).",
    }


def page_context(
    out_dir: Path,
    result: Mapping[str, Any],
    sections: Mapping[str, Any],
    examples: list[dict[str, Any]],
    timings: Mapping[str, float],
    replays: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Everything the discovery templates show, computed from the records."""
    refs = RuleRefs.load(result["ruleset"], result["scenario"])
    if replays is None:
        replays = load_replays(out_dir) or replays_from_examples(examples)
    ids = {r["id"] for r in replays}
    ordered = order_findings(result.get("findings", []))
    rr = sections.get("round_robin") or {}
    builds = sections.get("builds")
    exact = sections.get("exact")
    vw = sections.get("variant_vs_written")
    return {
        "result": result,
        "title": f"{result['ruleset']} / {result['scenario']}",
        "run_dir": str(out_dir),
        "variant": result.get("variant"),
        "timings": dict(timings),
        "total_seconds": float(timings.get("total", 0.0)),
        "strength": _strength_text(result.get("strength")),
        "cards": verdict_cards(result, sections, refs, ids, run_dir=out_dir),
        "all_findings": [
            {
                "severity": f["severity"],
                "kind": f["kind"].replace("_", " "),
                "subject": f["subject"],
                "rule": rule_label(f, refs.rule_for(f["subject"])),
                "summary": f.get("summary") or DASH,
                "evidence": f.get("evidence") or "",
            }
            for f in ordered
        ],
        "replays": replays,
        "replay_ids": ids,
        "replay_by_id": {r["id"]: r for r in replays},
        "charts": charts(out_dir, result, sections),
        "values": [
            {"agent": a, "value": f"{v['value']:.3f}", "ci": f"[{v['low']:.3f}, {v['high']:.3f}]"}
            for a, v in (rr.get("values") or {}).items()
        ],
        "games_per_matchup": rr.get("games_per_matchup", 0),
        "verdicts": sections.get("verdicts"),
        "verdict_rows": _verdict_rows(sections),
        "sensitivity_rows": _sensitivity_rows(sections),
        "structure_lines": _structure_lines(sections),
        "builds": builds,
        "exact": exact,
        "variant_vs_written": vw,
        "rl_summary": (sections.get("rl") or {}).get("summary"),
    }


def build_report(
    out_dir: Path,
    result: dict[str, Any],
    sections: dict[str, Any],
    examples: list[dict[str, Any]],
    timings: dict[str, float],
    *,
    replays: list[dict[str, Any]] | None = None,
) -> tuple[Path, Path]:
    """Write ``report.md`` and the self-contained ``report.html`` (plus the PNGs) into ``out_dir``.

    ``replays``: the step-through traces to show (default: those in ``out_dir/replays``, else the narrated
    ``examples`` one line per step).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    ctx = page_context(out_dir, result, sections, examples, timings, replays)
    html_path = out_dir / "report.html"
    atomic_write_text(html_path, render("report.html.j2", **ctx))
    md_path = out_dir / "report.md"
    atomic_write_text(md_path, render("report.md.j2", **ctx))
    return md_path, html_path


def check_toml(text: str, config_model: Any, rules_path: Path) -> Any:
    """Validate a "what to try" snippet as a variant of the rules file (used by tests and by ``report``)."""
    from envs.core.config import deep_merge, read_toml, validate_config

    return validate_config(config_model, deep_merge(read_toml(rules_path), tomllib.loads(text)), "what to try")


# -- the browser check ----------------------------------------------------------------------------------------

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def find_chromium() -> str | None:
    """A headless-capable Chromium on this machine, or ``None``."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def screenshot(html: Path, png: Path, width: int = 1280, height: int = 900, timeout: float = 120) -> Path | None:
    """The first screen of a page as a PNG (``None`` without Chromium or when it fails)."""
    exe = find_chromium()
    if exe is None:
        return None
    profile = png.parent / ".chromium-profile"
    try:
        subprocess.run(
            [
                exe,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                f"--screenshot={png.resolve()}",
                f"--window-size={width},{height}",
                html.resolve().as_uri(),
            ],
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return png if png.exists() and png.stat().st_size > 0 else None


def browser_check(html: Path, timeout: float = 120) -> dict[str, Any]:
    """Load a page in headless Chromium; return its self-check (``data-check`` of ``<html>``) and console errors.

    Every report page runs a small script on load that counts broken images, empty table cells and script
    errors and writes the verdict into ``<html data-check="…">`` (``ok`` when there is none).
    """
    exe = find_chromium()
    if exe is None:
        raise FileNotFoundError("no Chromium on this machine")
    profile = Path(html).parent / ".chromium-check"
    try:
        r = subprocess.run(
            [
                exe,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                "--virtual-time-budget=5000",
                "--dump-dom",
                Path(html).resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    m = re.search(r'<html[^>]*\bdata-check="([^"]*)"', r.stdout)
    console = [ln for ln in r.stderr.splitlines() if "CONSOLE" in ln and ("ERROR" in ln.upper() or "Uncaught" in ln)]
    return {"check": m.group(1) if m else None, "console_errors": console, "dom": r.stdout}

"""The report pages render from records: verdicts first, rules named, no empty cell, every picture embedded.

The discovery records are those of ``rulebreaker discover blackbird duel --budget quick --seed 0 --no-rl``
(trimmed: three win rates per knob), plus two findings added here to check the order (a declared core
mechanic comes last whatever its size).
"""

import copy
import json
import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from results.regress_report import build_regress_report
from results.report import build_report, order_findings
from results.sweep_report import build_sweep_report

DATA = json.loads((Path(__file__).parent / "data" / "blackbird_duel_quick.json").read_text(encoding="utf-8"))


class Cells(HTMLParser):
    """Collects the text of every table cell, the src of every image and the text of every code span."""

    def __init__(self):
        super().__init__()
        self.cells, self.imgs, self.codes, self.headings = [], [], [], []
        self._stack = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.imgs.append(dict(attrs).get("src", ""))
        if tag in ("td", "th", "code", "h2"):
            self._stack.append([tag, ""])

    def handle_endtag(self, tag):
        if self._stack and self._stack[-1][0] == tag:
            t, text = self._stack.pop()
            {"td": self.cells, "th": self.cells, "code": self.codes, "h2": self.headings}[t].append(text.strip())
            if self._stack:
                self._stack[-1][1] += text

    def handle_data(self, data):
        if self._stack:
            self._stack[-1][1] += data


def parse(path: Path) -> Cells:
    p = Cells()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def _result_with_extra_findings():
    result = copy.deepcopy(DATA["findings"])
    base = result["findings"][0]
    core = dict(base, kind="dominant_strategy", subject="attack", severity="info", value=-0.9, details={"core": True})
    dead = dict(base, kind="dead_rule", subject="pool.cap", severity="medium", value=0.004, ci=[-0.006, 0.008])
    result["findings"] = [core, *result["findings"], dead]
    return result


@pytest.fixture(scope="module")
def discovery_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("discovery")
    result = _result_with_extra_findings()
    examples = [
        {"id": "verdict-110", "title": "aim forced", "replay": "rulebreaker play --replay x", "log": ["a", "b"]}
    ]
    md, html = build_report(out, result, copy.deepcopy(DATA["sections"]), examples, {"total": 227.0, "verdicts": 90.0})
    return out, md, html


def test_the_order_is_severity_then_surprise_and_core_last():
    result = _result_with_extra_findings()
    kinds = [(f["severity"], f["kind"], f["subject"]) for f in order_findings(result["findings"])]
    assert kinds[0][0] == "high" and kinds[-1] == ("info", "dominant_strategy", "attack")
    # at equal (medium) severity the seat advantage (more surprising) comes before the dead rule
    assert kinds.index(("medium", "seat_advantage", "seat 0")) < kinds.index(("medium", "dead_rule", "pool.cap"))


def test_the_page_leads_with_what_to_look_at(discovery_page):
    _, _, html = discovery_page
    p = parse(html)
    assert p.headings[:3] == ["What to look at", "Games to watch", "Details"]
    text = html.read_text(encoding="utf-8")
    first_card = unescape(text[text.index("<article") : text.index("</article>")])
    assert "'aim' is a trap" in first_card and "Rule 14: Maneuvers" in first_card
    assert "Aim/Concentrate" in first_card  # the rulebook's words
    assert "-1.200 [-1.840, -0.560]" in first_card  # its number and interval
    assert "Provisional" in first_card  # the certificate is not converged in this run
    assert "aim_max = " in first_card  # what to try, as TOML
    assert "Watch the example game (verdict-110)" in first_card  # the replay, inline in the card


def test_no_empty_cell_no_empty_code_and_every_picture_embedded(discovery_page):
    _, _, html = discovery_page
    p = parse(html)
    assert p.cells and all(c for c in p.cells), [i for i, c in enumerate(p.cells) if not c]
    assert all(c for c in p.codes)
    assert len(p.imgs) >= 4 and all(s.startswith("data:image/png;base64,") for s in p.imgs)


def test_markdown_twin_and_fallback_replays(discovery_page):
    _, md, html = discovery_page
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# blackbird / duel") and "## What to look at" in text and "```toml" in text
    # without traces the narrated example is still a step-through (one line a step)
    assert 'id="game-verdict-110"' in html.read_text(encoding="utf-8")


def test_the_replay_data_cannot_close_its_script_element(tmp_path):
    result = copy.deepcopy(DATA["findings"])
    examples = [{"id": "g", "title": "t", "replay": "r", "log": ["</script><b>x</b>"]}]
    _, html = build_report(tmp_path, result, copy.deepcopy(DATA["sections"]), examples, {})
    text = html.read_text(encoding="utf-8")
    assert "</script><b>" not in text


def regress_data():
    def metric(name, kind, primary, base, var, lo, hi, verdict):
        return {
            "metric": name,
            "description": f"the {name}",
            "kind": kind,
            "primary": primary,
            "games": 200,
            "baseline": base,
            "variant": var,
            "change": var - base,
            "ci": [lo, hi],
            "threshold": 0.03,
            "verdict": verdict,
            "discordance": 0.4,
        }

    sc = {
        "ruleset": "blackbird",
        "scenario": "duel",
        "baseline_rules_hash": "aaaa",
        "variant_rules_hash": "bbbb",
        "games_played": 200,
        "games_available": 400,
        "stopped_early": True,
        "verdict": "changed",
        "exit_code": 1,
        "changed": ["win[greedy vs random]"],
        "metrics": [
            metric("win[greedy vs random]", "rate", True, 0.7, 0.5, -0.26, -0.14, "changed"),
            metric("win[farmer vs random]", "rate", True, 0.6, 0.61, -0.02, 0.04, "unchanged"),
            metric("length", "value", False, 30.0, 31.0, 0.2, 1.8, "undecided"),
        ],
    }
    return {"exit_code": 1, "scenarios": [sc]}


def sweep_data(tmp_path):
    summary = {"ruleset": "blackbird", "job": "regress", "backend": "local", "seed": 0, "exit_codes": {}}
    records = [
        {"name": "a", "variant": "a.toml", "variant_meta": {"kind": "control"}, "exit_code": 0, "summary": {"x": 1.0}},
        {
            "name": "b",
            "variant": "b.toml",
            "variant_meta": {},
            "exit_code": 1,
            "summary": {"x": 2.0, "y": 3},
            "findings": ["win moved"],
        },
        {"name": "c", "variant": "c.toml", "variant_meta": {}, "exit_code": 2, "summary": {}, "error": "bad key"},
    ]
    return summary, records


def test_regress_page(tmp_path):
    md, html = build_regress_report(tmp_path, regress_data())
    p = parse(html)
    text = html.read_text(encoding="utf-8")
    assert "Did the rule change move the balance? Yes" in text
    assert "the win[greedy vs random] fell from 70.0% to 50.0% (-20.0 points [-26.0, -14.0])" in text
    assert all(p.cells) and p.imgs and all(s.startswith("data:image/png;base64,") for s in p.imgs)
    assert "fell from 70.0%" in md.read_text(encoding="utf-8")


def test_sweep_page(tmp_path):
    summary, records = sweep_data(tmp_path)
    md, html = build_sweep_report(tmp_path, summary, records)
    p = parse(html)
    text = html.read_text(encoding="utf-8")
    assert "1 of 3 variant(s) changed the game (b); 1 failed to run (c)." in text
    assert all(p.cells), p.cells  # the variant without a metric shows a dash, not an empty cell
    assert len(p.imgs) == 2 and all(s.startswith("data:image/png;base64,") for s in p.imgs)
    assert re.search(r"Highest: b \(2\); lowest: a \(1\)", text)
    assert "| b | — | 1 | 2 | 3 |" in md.read_text(encoding="utf-8")


def test_every_what_to_try_of_the_recorded_run_loads_as_a_blackbird_variant():
    import tomllib

    from envs.core.registry import get_ruleset
    from results.report import RuleRefs, check_toml, verdict_cards

    rs = get_ruleset("blackbird")
    cards = verdict_cards(_result_with_extra_findings(), DATA["sections"], RuleRefs.load("blackbird", "duel"), set())
    snippets = [t["toml"] for c in cards for t in c["tries"] if t["toml"]]
    assert snippets
    for text in snippets:
        assert tomllib.loads(text)
        check_toml(text, rs.config_model, rs.rules_path)


def test_every_chart_has_its_reading(discovery_page):
    _, _, html = discovery_page
    text = html.read_text(encoding="utf-8")
    captions = re.findall(r"<figcaption><strong>([^<]+)</strong>([^<]*)</figcaption>", text)
    assert {t for t, _ in captions} >= {
        "Matchups.",
        "Restricted play.",
        "Option usage.",
        "Rule sensitivity.",
        "Resource trajectories.",
    }
    assert all(len(reading.strip()) > 20 for _, reading in captions), captions
    assert text.count("<figure>") == len(captions)

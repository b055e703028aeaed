"""Every report page renders in headless Chromium: no console error, no broken image, no empty cell.

Chromium is a system package (`apt-get install chromium`; `.ci/run` installs it). Where it is absent the
browser tests are skipped with that reason; the pages themselves are still checked by test_report_render.
Each page runs a small self-check on load (broken images, empty table cells, script errors) and writes
its verdict into ``<html data-check>``; the DOM Chromium dumps carries it.
"""

import sys

import pytest

from results.regress_report import build_regress_report
from results.report import browser_check, find_chromium
from results.sweep_report import build_sweep_report
from tests.results.test_report_render import regress_data, sweep_data

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed on this machine")


def cli(*args: str) -> None:
    from training.cli import main

    old = sys.argv
    sys.argv = ["rulebreaker", *args]
    try:
        main()
    except SystemExit as e:
        assert e.code in (0, None)
    finally:
        sys.argv = old


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    cli("discover", "toy_pig", "race", "--out", str(out), "--no-rl", "--workers", "1")
    html = (out / "report.html").read_text(encoding="utf-8")
    WRITTEN_BY_DISCOVER.update(
        replays=(out / "replays" / "index.json").exists(),
        stepper='class="replay"' in html and '"resources"' in html,
        screenshot=(out / "report_screenshot.png").exists(),
    )
    cli("report", str(out), "--screenshot")  # re-render from the records, tracing the example games
    return out


WRITTEN_BY_DISCOVER: dict[str, bool] = {}


def test_discover_itself_writes_the_replays_and_the_step_through_page(run_dir):
    assert WRITTEN_BY_DISCOVER["replays"] and WRITTEN_BY_DISCOVER["stepper"]
    if CHROMIUM is not None:
        assert WRITTEN_BY_DISCOVER["screenshot"]


def test_report_rerenders_from_records_with_replays(run_dir):
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert (run_dir / "replays" / "index.json").exists()
    assert 'class="replay"' in html and '"steps"' in html
    assert html.index("What to look at") < html.index("Games to watch") < html.index("Details")


def test_play_replay_still_works_on_the_replayed_game(run_dir, capsys):
    import json

    gid = json.loads((run_dir / "replays" / "index.json").read_text(encoding="utf-8"))[0]
    cli("play", "--replay", str(run_dir / gid))
    trace = json.loads((run_dir / "replays" / f"{gid}.json").read_text(encoding="utf-8"))
    printed = capsys.readouterr().out
    for step in trace["steps"][:5]:
        for e in step["events"]:
            assert e["text"] in printed


@needs_chromium
def test_discover_page_in_chromium_and_its_screenshot(run_dir):
    shot = run_dir / "report_screenshot.png"
    assert shot.exists() and shot.stat().st_size > 10_000
    r = browser_check(run_dir / "report.html")
    assert not r["console_errors"], r["console_errors"]
    assert r["check"] == "ok", r["check"]
    assert "step 1 of" in r["dom"]  # the replay script ran and drew its first step


@needs_chromium
def test_regress_and_sweep_pages_in_chromium(tmp_path):
    _, regress_html = build_regress_report(tmp_path / "regress", regress_data())
    summary, records = sweep_data(tmp_path)
    _, sweep_html = build_sweep_report(tmp_path / "sweep", summary, records)
    for page in (regress_html, sweep_html):
        r = browser_check(page)
        assert not r["console_errors"] and r["check"] == "ok", (page, r["check"], r["console_errors"])


@needs_chromium
def test_the_check_sees_broken_images_empty_cells_and_script_errors(tmp_path):
    from results.report import render

    page = tmp_path / "bad.html"
    base = render("base.html.j2")
    bad = (
        "<table><tr><td></td><td>x</td></tr></table><img src='data:image/png;base64,AAAA' alt='broken'>"
        "<script>undefinedFunction()</script>"
    )
    page.write_text(base.replace("<main>", "<main>" + bad), encoding="utf-8")
    r = browser_check(page)
    assert r["check"] is not None
    assert "broken-images:1" in r["check"] and "empty-cells:1" in r["check"] and "script-errors:1" in r["check"]


def test_report_refuses_a_folder_without_records(tmp_path):
    from training.cli import main

    old = sys.argv
    sys.argv = ["rulebreaker", "report", str(tmp_path)]
    try:
        with pytest.raises(SystemExit) as e:
            main()
        assert e.value.code == 2
    finally:
        sys.argv = old

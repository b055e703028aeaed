"""``rulebreaker regress``: a verdict on a rule change with an exit code (0 no change, 1 changed, 2 bad input)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from agents.registry import agent_names
from envs.core.config import load_config
from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from training.cli.common import SEED_MAX, check_finite, check_out_dir, check_out_file, clamp_workers, err, out, say
from training.cli.progress import progress_bar
from training.evaluate import MAX_GAMES
from training.regress import (
    BASELINE_KIND,
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_GAMES,
    DEFAULT_MIN_EFFECT,
    RegressResult,
    baseline_path,
    load_baseline,
    make_baseline,
    regress,
    save_baseline,
    write_regress_run,
)

MAX_BASELINE_BYTES = 512 * 2**20
"""A baseline file larger than this is refused before it is read."""


def register(app: typer.Typer) -> None:
    app.command("regress")(regress_cmd)


def regress_cmd(
    ruleset: str,
    rules: Annotated[
        Path | None, typer.Option("--rules", help="The variant TOML to check (required unless --update-baseline).")
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option("--baseline", help="Baseline file; default results/baselines/<ruleset>-<scenario>.json."),
    ] = None,
    scenario: Annotated[
        str | None, typer.Option("--scenario", help="One scenario; default every scenario of the ruleset.")
    ] = None,
    alpha: Annotated[
        float, typer.Option("--alpha", min=1e-6, max=0.5, help="False-alarm rate of the SPRT.")
    ] = DEFAULT_ALPHA,
    beta: Annotated[float, typer.Option("--beta", min=1e-6, max=0.5, help="Miss rate of the SPRT.")] = DEFAULT_BETA,
    min_effect: Annotated[
        float,
        typer.Option(
            "--min-effect",
            min=1e-4,
            help="Smallest change worth reporting: absolute for rates and returns (0.03 = 3 points), relative for other values.",
        ),
    ] = DEFAULT_MIN_EFFECT,
    max_games: Annotated[
        int | None, typer.Option("--max-games", min=1, help="Cap on variant games per scenario.")
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Worker processes (at most the cores).")] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
    update_baseline: Annotated[
        bool,
        typer.Option(
            "--update-baseline", help="Write the baseline from --rules (default: the rules as written) and exit."
        ),
    ] = False,
    games: Annotated[
        int, typer.Option("--games", min=10, help="Games per matchup when writing a baseline.")
    ] = DEFAULT_GAMES,
    seed: Annotated[int, typer.Option("--seed", min=0, max=SEED_MAX, help="Seed when writing a baseline.")] = 20261129,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Also write regress.json and the comparison page regress.html here.")
    ] = None,
) -> None:
    """Did this rule change move the balance? Exit 0 no significant change, 1 significant change, 2 bad input."""
    for name, value in (("--alpha", alpha), ("--beta", beta), ("--min-effect", min_effect)):
        check_finite(name, value)
    rs = get_ruleset(ruleset)
    scenarios = [rs.scenario(scenario).name] if scenario else list(rs.scenarios)
    if baseline is not None and len(scenarios) > 1:
        raise UserError("--baseline names one file: give --scenario too")
    if not update_baseline and rules is None:
        raise UserError("--rules VARIANT.toml is required (or --update-baseline to write the baseline)")
    config = load_config(rs, rules)
    workers = clamp_workers(workers)
    if out_dir is not None and not update_baseline:
        out_dir = check_out_dir(out_dir, "regress")
    if update_baseline:
        names = agent_names(rs.name)
        total = len(names) * (len(names) - 1) * games  # upper bound for the bar
        if total > MAX_GAMES:
            raise UserError(
                f"--games {games} asks for up to {total:,} baseline games per scenario; at most {MAX_GAMES:,}"
            )
        paths = {sc: check_out_file(baseline or baseline_path(rs.name, sc), "--baseline") for sc in scenarios}
        for p in paths.values():
            _refuse_foreign(p)
        for sc in scenarios:
            path = paths[sc]
            with progress_bar(total, f"baseline {rs.name} {sc}") as adv:
                b = make_baseline(rs, sc, config, names, games, seed, workers=workers, progress=adv)
            try:
                save_baseline(b, path)
            except OSError as e:
                say(err, f"baseline of {rs.name} {sc}: {len(b.jobs)} games, rules {b.rules_hash} (not written)")
                raise UserError(f"the baseline could not be written to {path}: {e.strerror or e}") from None
            say(err, f"baseline written: {path} ({len(b.jobs)} games, rules {b.rules_hash})")
        return
    results: list[RegressResult] = []
    for sc in scenarios:
        path = baseline or baseline_path(rs.name, sc)
        if path.is_dir():
            raise UserError(f"--baseline {path} is a folder; give the baseline's .json file")
        if path.exists() and not path.is_file():
            raise UserError(f"--baseline {path} is not a regular file (a device, FIFO or socket)")
        if path.exists() and path.stat().st_size > MAX_BASELINE_BYTES:
            raise UserError(f"--baseline {path} is larger than {MAX_BASELINE_BYTES // 2**20} MiB: not a baseline")
        b = load_baseline(path, rs, sc)
        with progress_bar(max_games or len(b.jobs), f"regress {rs.name} {sc}") as adv:
            results.append(regress(rs, sc, config, b, alpha, beta, min_effect, max_games, workers, adv))
    code = max(r.exit_code for r in results)
    if as_json:
        print(json.dumps({"exit_code": code, "scenarios": [r.to_json() for r in results]}, indent=2))
    else:
        for r in results:
            _print(r)
    if out_dir is not None:  # after the verdict is printed: a failed write loses nothing
        try:
            page = write_regress_run(out_dir, results)[1]
        except OSError as e:
            raise UserError(f"the comparison page could not be written to {out_dir}: {e.strerror or e}") from None
        say(err, f"report: {page}")
    sys.exit(code)


def _refuse_foreign(path: Path) -> None:
    """Refuse to overwrite an existing file that is not a baseline (a run record, a rules file…)."""
    if not path.exists():
        return
    try:
        kind = json.loads(path.read_text(encoding="utf-8")).get("kind") if path.stat().st_size < 2**28 else None
    except (OSError, ValueError, AttributeError):
        kind = None
    if kind != BASELINE_KIND:
        raise UserError(f"--baseline {path} exists and is not a baseline; regress will not overwrite it")


def _print(r: RegressResult) -> None:
    head = (
        f"{r.ruleset} {r.scenario}: rules {r.variant_hash} vs baseline {r.baseline_hash}, "
        f"{r.games_played}/{r.games_available} paired games" + (" (SPRT stopped early)" if r.stopped_early else "")
    )
    out.rule(escape(head))
    if r.changed:
        out.print(f"[bold red]{len(r.changed)} significant change(s):[/bold red]")
        for m in r.changed:
            out.print(f"  • {escape(m.sentence())}", highlight=False)
    else:
        out.print("[bold green]No significant change[/bold green] beyond the minimum effect.")
    t = Table(show_lines=False)
    for c in ("metric", "baseline", "variant", "change", "95% CI", "verdict"):
        t.add_column(c)
    for m in r.metrics:
        if m.kind == "rate":
            f = lambda x: f"{100 * x:.1f}%"  # noqa: E731
            d = lambda x: f"{100 * x:+.1f}"  # noqa: E731
        else:
            f = lambda x: f"{x:.3g}"  # noqa: E731
            d = lambda x: f"{x:+.3g}"  # noqa: E731
        style = {"changed": "red", "undecided": "yellow", "unchanged": "green"}[m.verdict.value]
        t.add_row(
            escape(m.metric) + (" *" if m.primary else ""),
            f(m.baseline),
            f(m.variant),
            d(m.change),
            f"[{d(m.ci[0])}, {d(m.ci[1])}]",
            f"[{style}]{m.verdict.value}[/{style}]",
        )
    out.print(t)
    out.print("* primary metric (paired SPRT); others: paired 95% intervals, Bonferroni-corrected.")

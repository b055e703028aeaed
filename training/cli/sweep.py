"""``rulebreaker sweep`` (one job over many rule variants) and ``rulebreaker balance`` (the smallest fixing change).

Front-ends only: the jobs are :func:`training.sweep.sweep` and :func:`training.balance.balance`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from results.records import new_run_dir
from results.sweep_report import build_sweep_report
from training.backends import TASK_RETRIES, local_cpus
from training.cli.common import err, out
from training.cli.progress import progress_bar
from training.sweep import BACKENDS, JOBS, sweep, variant_paths

BackendOpt = Annotated[str, typer.Option("--backend", help="local (processes) or ray (Ray tasks).")]
AddressOpt = Annotated[
    str | None,
    typer.Option(
        "--address", help="Ray cluster address (e.g. ray://head:10001 or auto); default a local 127.0.0.1 one."
    ),
]


RetriesOpt = Annotated[
    int, typer.Option("--retries", min=0, max=10, help="Reruns of a task whose worker died (Ray's max_retries).")
]


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep_cmd)
    app.command("balance")(balance_cmd)


def _check_backend(backend: str, workers: int | None = None, address: str | None = None) -> None:
    if backend not in BACKENDS:
        raise UserError(f"unknown backend '{backend}'; valid: {', '.join(BACKENDS)}")
    if workers is not None and not address and local_cpus(workers) < workers:
        err.print(f"note: --workers {workers} clamped to this machine's {local_cpus(workers)} core(s)")


def sweep_cmd(
    ruleset: str,
    variants: Annotated[
        str | None, typer.Option("--variants", help="A folder of variant TOMLs or a glob; default the shipped ones.")
    ] = None,
    job: Annotated[str, typer.Option("--job", help="regress, evaluate or discover.")] = "regress",
    backend: BackendOpt = "local",
    address: AddressOpt = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Processes / Ray CPUs for a local cluster.")] = 2,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Sweep folder (resumable); default runs/<stamp>-<ruleset>-sweep.")
    ] = None,
    scenario: Annotated[str | None, typer.Option("--scenario", help="One scenario; default every one.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="The seed every variant is played with.")] = 0,
    games: Annotated[int, typer.Option("--games", min=1, help="evaluate: games per matchup.")] = 40,
    max_games: Annotated[int, typer.Option("--max-games", min=1, help="regress: paired games per scenario.")] = 200,
    budget: Annotated[str, typer.Option("--budget", help="discover: the budget (no RL in a sweep).")] = "quick",
    retries: RetriesOpt = TASK_RETRIES,
    as_json: Annotated[bool, typer.Option("--json", help="Print the records' exit codes as JSON.")] = False,
) -> None:
    """Run one job for every variant; keep every record; write one comparison report. Exit: the worst exit code."""
    if job not in JOBS:
        raise UserError(f"unknown job '{job}'; valid: {', '.join(JOBS)}")
    _check_backend(backend, workers, address)
    paths = variant_paths(ruleset, variants)
    root = out_dir or new_run_dir(ruleset, "variants", kind="sweep")
    with progress_bar(len(paths), f"sweep {ruleset} {job} ({backend})") as adv:
        res = sweep(
            ruleset, paths, job, Path(root), backend, workers, address, scenario, seed, games, max_games, budget, adv,
            retries=retries,
        )  # fmt: skip
    summary = json.loads((Path(root) / "sweep.json").read_text(encoding="utf-8"))
    md, html = build_sweep_report(Path(root), summary, res.records)
    if as_json:
        print(json.dumps({"exit_code": res.exit_code, "exit_codes": summary["exit_codes"], "out": str(root)}, indent=2))
    else:
        t = Table(title=escape(f"{ruleset} · {job} · {len(paths)} variant(s) · {res.seconds:.1f} s"))
        for c in ("variant", "exit", "findings / error"):
            t.add_column(c)
        for r in res.records:
            note = r["error"] or "; ".join(r["findings"][:3]) or "—"
            t.add_row(escape(r["name"]), str(r["exit_code"]), escape(note))
        out.print(t)
        if res.reused:
            out.print(f"resumed: {len(res.reused)} variant(s) already done ({', '.join(res.reused)})")
        out.print(f"records: {Path(root) / 'records'}  ·  report: {md}  ·  {html}")
    sys.exit(res.exit_code)


def balance_cmd(
    ruleset: str,
    scenario: str,
    fix: Annotated[
        str,
        typer.Option(
            "--fix",
            help="The finding to remove: its id (F-3fa9c1, looked up in --from RUN_DIR's findings.json, default "
            "the newest discover run for RULESET SCENARIO under runs/), KIND:SUBJECT, or KIND alone.",
        ),
    ],
    from_dir: Annotated[
        Path | None,
        typer.Option("--from", help="The discover run folder whose findings.json names the --fix id."),
    ] = None,
    rules: Annotated[
        Path | None, typer.Option("--rules", help="The variant with the finding; default the rules as written.")
    ] = None,
    knobs: Annotated[
        str | None, typer.Option("--knobs", help="Comma-separated dotted keys; default the ruleset's knobs.")
    ] = None,
    trials: Annotated[int, typer.Option("--trials", min=1, help="Candidate rule changes to evaluate.")] = 12,
    games: Annotated[int, typer.Option("--games", min=4, help="Games per matchup per evaluation.")] = 40,
    seed: Annotated[int, typer.Option("--seed", help="Game seed (common random numbers) and sampler seed.")] = 0,
    top: Annotated[int, typer.Option("--top", min=1, help="How many changes to print and write.")] = 3,
    backend: BackendOpt = "local",
    address: AddressOpt = None,
    workers: Annotated[int, typer.Option("--workers", min=1)] = 2,
    retries: RetriesOpt = TASK_RETRIES,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Folder for the proposed variants (on Ray, rerun with it to resume the trials)."),
    ] = None,
) -> None:
    """Search the declared knobs for the smallest rule changes that remove a finding and move the rest least."""
    from training.balance import balance, proposal_toml, resolve_fix

    _check_backend(backend, workers, address)
    get_ruleset(ruleset).scenario(scenario)
    target = resolve_fix(fix, ruleset, scenario, from_dir)
    if target != fix:
        err.print(escape(f"--fix {fix} is {target}"), highlight=False)
    key_list = [k.strip() for k in knobs.split(",") if k.strip()] if knobs else None
    root = Path(out_dir or new_run_dir(ruleset, scenario, kind="balance"))
    with progress_bar(trials + 1, f"balance {ruleset} {scenario}") as adv:
        res = balance(
            ruleset, scenario, rules, target, key_list, trials, games, seed, backend, workers, address, root, top, adv,
            retries=retries,
        )  # fmt: skip
    out.rule(escape(f"{ruleset} {scenario}: fixing {res.target_label}"))
    out.print(res.before_line, highlight=False, markup=False, soft_wrap=True)
    if not res.proposals:
        out.print("[bold yellow]No tried change removed the finding.[/bold yellow] Try more --trials or --knobs.")
    for i, p in enumerate(res.proposals, 1):
        out.print(f"[bold]change {i}[/bold] → {escape(str(res.paths.get(p.number, '')))}")
        out.print(proposal_toml(res, p), highlight=False, markup=False, soft_wrap=True)
    err.print(f"{len(res.trials)} trial(s) in {res.seconds:.1f} s; all trials: {root / 'balance.json'}")
    sys.exit(0 if res.proposals else 1)

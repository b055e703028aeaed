"""The ``rulebreaker`` command line (typer + rich).

Bad input (unknown ruleset/agent, invalid rules file, bad argument) prints one readable line and
exits with code 2; it never shows a stack trace.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from envs.core.errors import UserError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Find dominant strategies and broken rules in tabletop RPG rulesets.")
rules_app = typer.Typer(no_args_is_help=True, help="Inspect rules configs.")
app.add_typer(rules_app, name="rules")

out = Console()
err = Console(stderr=True)

RulesOpt = Annotated[Path | None, typer.Option("--rules", help="A variant TOML overriding rules.toml.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Base seed; the same seed gives the same games.")]


def _ruleset(name: str):  # type: ignore[no-untyped-def]
    from envs import get_ruleset

    return get_ruleset(name)


def _config(ruleset: Any, rules: Path | None):  # type: ignore[no-untyped-def]
    from envs.core.config import load_config

    return load_config(ruleset, rules)


@app.command()
def rulesets() -> None:
    """List rulesets, their scenarios, env ids and personas."""
    from agents.registry import describe
    from envs import all_rulesets

    table = Table(title="rulesets")
    for col in ("ruleset", "scenario", "env id", "players"):
        table.add_column(col, overflow="fold")
    for name, rs in sorted(all_rulesets().items()):
        cfg = rs.default_config()
        for sname, sc in rs.scenarios.items():
            table.add_row(name, sname, rs.env_id(sname), str(sc.players(cfg)))
    out.print(table)
    for name in sorted(all_rulesets()):
        out.print(f"[bold]{name}[/bold] agents:")
        for agent, doc in describe(name).items():
            out.print(f"  {agent}: {doc}", highlight=False)


@rules_app.command("show")
def rules_show(ruleset: str, rules: RulesOpt = None,
               as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Print the resolved rules config of RULESET (with a variant's overrides) and its hash."""
    from envs.core.config import config_dict, config_hash, flat_items

    rs = _ruleset(ruleset)
    cfg = _config(rs, rules)
    if as_json:
        print(json.dumps({"ruleset": rs.name, "rules_hash": config_hash(cfg), "config": config_dict(cfg)}, indent=2))
        return
    table = Table(title=f"{rs.name} rules ({rules or rs.rules_path.name}) hash {config_hash(cfg)}")
    table.add_column("key")
    table.add_column("value")
    for k, v in flat_items(config_dict(cfg)):
        table.add_row(k, json.dumps(v))
    out.print(table)


@app.command()
def play(ruleset: Annotated[str | None, typer.Argument(help="Ruleset name.")] = None,
         scenario: Annotated[str | None, typer.Argument(help="Scenario name.")] = None,
         agents: Annotated[str, typer.Option("--agents", help="Comma-separated agent per seat.")] = "random",
         seed: SeedOpt = 0, rules: RulesOpt = None,
         replay: Annotated[str | None, typer.Option("--replay", help="RUN_DIR/GAME_ID of a game a run recorded.")] = None,
         ) -> None:
    """Play one narrated game, turn by turn (or replay a recorded game with --replay)."""
    from agents.registry import parse_agents
    from envs.core.config import config_dict
    from training.runner import GameJob, play_game

    if replay is not None:
        job = _replay_job(replay)
        rec = play_game(job)
        names = list(job.agents)
        out.rule(f"replay {replay}: {job.ruleset} {job.scenario} — seed {job.seed} — " + " vs ".join(names))
    else:
        if ruleset is None or scenario is None:
            raise UserError("play needs RULESET SCENARIO (or --replay RUN_DIR/GAME_ID)")
        rs = _ruleset(ruleset)
        cfg = _config(rs, rules)
        sc = rs.scenario(scenario)
        n = sc.players(cfg)
        names = [a.strip() for a in agents.split(",") if a.strip()]
        if len(names) == 1:
            names = names * n
        if len(names) != n:
            raise UserError(f"{scenario} has {n} seats; --agents names {len(names)} ({agents})")
        policies = parse_agents(rs.name, ",".join(names), scenario)
        job = GameJob(rs.name, scenario, config_dict(cfg), tuple(names), seed, narrate=True)
        rec = play_game(job, policies)
        out.rule(f"{rs.name} {scenario} — seed {seed} — " + " vs ".join(names))
    for line in rec.log:
        out.print(line, highlight=False, markup=False)
    winner = "nobody" if rec.winner is None else f"seat {rec.winner} ({names[rec.winner]})"
    out.rule(f"winner: {winner}; ended by {rec.reason} after {rec.length} decisions; returns {list(rec.returns)}")


def _replay_job(replay: str):  # type: ignore[no-untyped-def]
    from dataclasses import replace as dc_replace

    from training.runner import GameJob

    path = Path(replay)
    games_file, gid = path.parent / "games.json", path.name
    if not games_file.exists():
        raise UserError(f"no recorded games at {games_file} (expected RUN_DIR/GAME_ID)")
    try:
        games = json.loads(games_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{games_file} is corrupt: {e}") from None
    if gid not in games:
        raise UserError(f"no game '{gid}' in {games_file}; recorded: {', '.join(list(games)[:10])}…")
    g = games[gid]
    _ruleset(g["ruleset"])
    job = GameJob(g["ruleset"], g["scenario"], g["config"], tuple(g["agents"]), int(g["seed"]),
                  forbid=tuple((int(s), str(o)) for s, o in g.get("forbid", [])))
    return dc_replace(job, narrate=True)


@app.command()
def evaluate(ruleset: str, scenario: str,
             agents: Annotated[str | None, typer.Option("--agents", help="Comma-separated agents; default all.")] = None,
             games: Annotated[int, typer.Option("--games", min=1, help="Games per matchup.")] = 200,
             seed: SeedOpt = 0, rules: RulesOpt = None,
             workers: Annotated[int, typer.Option("--workers", min=1, help="Worker processes.")] = 1,
             as_json: Annotated[bool, typer.Option("--json", help="Print metrics as JSON.")] = False,
             out_dir: Annotated[Path | None, typer.Option("--out", help="Run directory for the record.")] = None,
             ) -> None:
    """Matchup matrix with Wilson 95% intervals, seat advantage, game lengths, reasons games ended."""
    from agents.registry import agent_names, make_agent
    from envs.core.config import config_dict, config_hash
    from results.records import new_run_dir, write_record
    from training.evaluate import evaluate as run_eval
    from training.progress import progress_bar

    rs = _ruleset(ruleset)
    cfg = _config(rs, rules)
    rs.scenario(scenario)
    names = [a.strip() for a in agents.split(",")] if agents else agent_names(rs.name)
    for n in names:
        make_agent(rs.name, n, scenario)  # validates names before any game is played
    from training.evaluate import matchup_jobs

    total = len(matchup_jobs(rs, scenario, cfg, names, games, seed)[0])
    with progress_bar(total, f"{rs.name} {scenario}") as advance:
        ev = run_eval(rs, scenario, cfg, names, games, seed, workers=workers, progress=advance)
    metrics = ev.metrics()
    run_dir = out_dir or new_run_dir(rs.name, scenario, kind="evaluate")
    path = write_record(Path(run_dir), command="evaluate", ruleset=rs.name, scenario=scenario,
                        config=config_dict(cfg), rules_hash=config_hash(cfg), seed=seed, metrics=metrics,
                        extra={"agents": names, "games": games, "games_detail": [r.to_dict() for r in ev.records]})
    if as_json:
        print(json.dumps({"ruleset": rs.name, "scenario": scenario, "rules_hash": config_hash(cfg), "seed": seed,
                          "agents": names, "games": games, "metrics": metrics}, indent=2, sort_keys=True))
        err.print(f"record: {path}")
        return
    from results.tables import print_evaluation

    print_evaluation(out, metrics, names, title=f"{rs.name} {scenario} (rules {config_hash(cfg)}, seed {seed})")
    out.print(f"record: {path}")


@app.command()
def demo(ruleset: Annotated[str, typer.Argument(help="Ruleset to examine.")] = "blackbird",
         budget: Annotated[str, typer.Option("--budget", help="quick | standard | deep")] = "quick",
         out_dir: Annotated[Path | None, typer.Option("--out", help="Output folder.")] = None) -> None:
    """The main job on its default: `discover blackbird --budget quick` (findings, report, example games)."""
    _load_command_modules()
    from training.cli_discover import discover_cmd

    out.print(f"[bold]rulebreaker demo[/bold]: discovering what breaks in '{ruleset}' (budget {budget}); "
              "this trains RL agents and replays thousands of games, a few minutes per scenario.")
    discover_cmd(ruleset, None, rules=None, budget=budget, out_dir=out_dir, fail_on=None, seed=0, workers=2,
                 no_rl=False)


# Commands that live in their own modules register themselves on ``app`` when imported.
_COMMAND_MODULES = ("training.cli_train", "training.cli_odds", "training.cli_solve", "training.cli_regress",
                    "training.cli_discover", "training.cli_bench")


def _load_command_modules() -> None:
    import importlib

    for name in _COMMAND_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:  # that command is not written yet
            if e.name != name:
                raise


def main() -> None:
    """Entry point: click/typer report usage errors (exit 2) themselves; a :class:`UserError` raised
    by a command becomes one ``error:`` line and exit 2."""
    _load_command_modules()
    try:
        app()
    except UserError as e:
        from rich.markup import escape

        err.print(f"[bold red]error:[/bold red] {escape(str(e))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err.print("aborted")
        sys.exit(130)


if __name__ == "__main__":
    main()

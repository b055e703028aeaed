"""``rulebreaker rulesets`` and ``rulebreaker rules show``: what ships, and the resolved rules config."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from agents.registry import describe
from envs.core.config import config_dict, config_hash, flat_items
from envs.core.registry import all_rulesets
from training.cli.common import RulesOpt, out, ruleset_and_config

rules_app = typer.Typer(no_args_is_help=True, help="Inspect rules configs.")


def register(app: typer.Typer) -> None:
    app.command()(rulesets)
    app.add_typer(rules_app, name="rules")


def rulesets() -> None:
    """List rulesets, their scenarios, env ids and personas."""
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
            out.print(escape(f"  {agent}: {doc}"), highlight=False)


@rules_app.command("show")
def rules_show(
    ruleset: str, rules: RulesOpt = None, as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False
) -> None:
    """Print the resolved rules config of RULESET (with a variant's overrides) and its hash."""
    rs, cfg = ruleset_and_config(ruleset, rules)
    if as_json:
        print(json.dumps({"ruleset": rs.name, "rules_hash": config_hash(cfg), "config": config_dict(cfg)}, indent=2))
        return
    table = Table(title=escape(f"{rs.name} rules ({rules or rs.rules_path.name}) hash {config_hash(cfg)}"))
    table.add_column("key")
    table.add_column("value")
    for k, v in flat_items(config_dict(cfg)):
        table.add_row(escape(k), escape(json.dumps(v)))
    out.print(table)

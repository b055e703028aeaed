"""``rulebreaker odds <ruleset> …``: exact probability tables of each ruleset's core mechanic.

One subcommand per registered ruleset that provides an odds mechanic (``Ruleset.odds``, an
:class:`envs.core.odds.OddsProvider`: the five shipped rulesets and any plugin that declares one), with the
provider's own options beside the common ones. ``--simulate N`` rolls N times (at most
:data:`results.odds.MAX_SIMULATE`) with the *engine's own* roll code (the provider's sampler) and flags any
outcome more than 4 standard errors from the exact value (exit code 1 if any is flagged). ``--rules FILE``
applies a variant (e.g. another success face). Bad arguments print one line and exit 2; a ``--plot`` path that
cannot be written prints the results anyway, then one line naming the path, and exits 2.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from envs.core.config import load_config
from envs.core.odds import OddsParam, OddsProvider
from envs.core.registry import all_rulesets, get_ruleset
from results import odds as O  # noqa: N812
from training.cli.common import err, out

odds_app = typer.Typer(no_args_is_help=True, help="Exact odds of each ruleset's core dice mechanic.")


_ADDED: set[str] = set()


def register(app: typer.Typer) -> None:
    add_odds_commands()
    app.add_typer(odds_app, name="odds")


def add_odds_commands() -> list[str]:
    """Add ``odds <name>`` for every registered ruleset with an odds provider not added yet; their names."""
    new = []
    for name, rs in sorted(all_rulesets().items()):
        if name not in _ADDED and isinstance(rs.odds, OddsProvider):
            odds_app.command(name, help=rs.odds.summary)(_command(name, rs.odds))
            _ADDED.add(name)
            new.append(name)
    return new


SimulateOpt = Annotated[
    int | None,
    typer.Option("--simulate", help=f"Also roll N times (at most {O.MAX_SIMULATE:,}) with the engine's own code."),
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the --simulate rolls.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON: {ruleset, query, probabilities, …}.")]
PlotOpt = Annotated[Path | None, typer.Option("--plot", help="Write a bar chart PNG to FILE.")]
RulesOpt = Annotated[Path | None, typer.Option("--rules", help="A variant TOML overriding rules.toml.")]
COMMON = {"simulate": (SimulateOpt, None), "seed": (SeedOpt, 0), "as_json": (JsonOpt, False),
          "plot_path": (PlotOpt, None), "rules": (RulesOpt, None)}  # fmt: skip


def _option(p: OddsParam) -> tuple[Any, Any]:
    """The typer annotation and default of a provider's option."""
    if p.kind is bool:
        return Annotated[bool, typer.Option(p.option, help=p.help)], bool(p.default)
    kind: Any = p.kind if p.required else (p.kind | None)
    default = ... if p.required else p.default
    return Annotated[kind, typer.Option(p.option, help=p.help)], default


def _command(name: str, provider: OddsProvider) -> Callable[..., None]:
    """A typer command for ``odds <name>``: the provider's options, then the common ones."""

    def command(**kw: Any) -> None:
        common = {k: kw.pop(k) for k in COMMON}
        config = load_config(get_ruleset(name), common["rules"])
        table, sampler = O.query_odds(name, provider, config, kw)
        _finish(table, sampler, common["simulate"], common["seed"], common["as_json"], common["plot_path"])

    params = []
    for p in provider.params:
        annotation, default = _option(p)
        params.append(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default))
    for key, (annotation, default) in COMMON.items():
        params.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default))
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {}
    command.__name__ = f"odds_{name}"
    command.__doc__ = provider.summary
    return command


def _finish(
    table: O.OddsTable, sampler: O.Sampler, simulate: int | None, seed: int, as_json: bool, plot_path: Path | None
) -> None:
    if simulate is not None:
        O.simulate(table, sampler, simulate, seed)
    plot_error: str | None = None
    if plot_path is not None:
        try:
            O.plot(table, plot_path)
        except OSError as e:  # a folder, a file in the way, no permission: the results are printed all the same
            plot_error = f"--plot {plot_path}: cannot write the chart there ({e.strerror or type(e).__name__})"
    if as_json:
        print(json.dumps(table.to_json(), indent=2))
    else:
        O.render(table, out)
        if plot_path is not None and plot_error is None:
            out.print(f"plot: {escape(str(plot_path))}", highlight=False)
    if plot_error is not None:
        err.print(f"[bold red]error:[/bold red] {escape(plot_error)}", highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    if table.simulation is not None and table.simulation.flagged:
        raise typer.Exit(1)


__all__ = ["odds_app", "register"]

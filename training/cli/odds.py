"""``rulebreaker odds <ruleset> …``: exact probability tables of each ruleset's core mechanic.

The exact tables come from the engines' ``dice.py`` through :mod:`results.odds`; ``--simulate N`` rolls
N times with the *engine's own* roll code (the functions its chance nodes use) and flags any outcome more than 4 standard errors from
the exact value (exit code 1 if any is flagged). ``--rules FILE`` applies a variant (e.g. another
success face). Bad arguments print one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from envs.core.config import load_config
from envs.core.errors import UserError
from envs.core.registry import all_rulesets
from results import odds as O  # noqa: N812
from training.cli.common import out

odds_app = typer.Typer(no_args_is_help=True, help="Exact odds of each ruleset's core dice mechanic.")


def register(app: typer.Typer) -> None:
    app.add_typer(odds_app, name="odds")


SimulateOpt = Annotated[int | None, typer.Option("--simulate", help="Also roll N times with the engine's own code.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the --simulate rolls.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON: {ruleset, query, probabilities, …}.")]
PlotOpt = Annotated[Path | None, typer.Option("--plot", help="Write a bar chart PNG to FILE.")]
RulesOpt = Annotated[Path | None, typer.Option("--rules", help="A variant TOML overriding rules.toml.")]


def _config(ruleset: str, rules: Path | None) -> Any:
    """The ruleset's resolved config, or ``None`` when the ruleset is not installed (defaults apply)."""
    rs = all_rulesets().get(ruleset)
    if rs is None:
        if rules is not None:
            raise UserError(f"ruleset '{ruleset}' is not installed, so --rules cannot be applied")
        return None
    return load_config(rs, rules)


def _get(cfg: Any, dotted: str, default: Any) -> Any:
    node = cfg
    for part in dotted.split("."):
        if node is None or not hasattr(node, part):
            return default
        node = getattr(node, part)
    return node


def _finish(
    table: O.OddsTable, sampler: O.Sampler, simulate: int | None, seed: int, as_json: bool, plot_path: Path | None
) -> None:
    if simulate is not None:
        O.simulate(table, sampler, simulate, seed)
    if plot_path is not None:
        O.plot(table, plot_path)
    if as_json:
        print(json.dumps(table.to_json(), indent=2))
    else:
        O.render(table, out)
        if plot_path is not None:
            out.print(f"plot: {plot_path}")
    if table.simulation is not None and table.simulation.flagged:
        raise typer.Exit(1)


# ------------------------------------------------------------------------------------------------
@odds_app.command("storyteller")
def odds_storyteller(
    pool: Annotated[int, typer.Option("--pool", help="Dice in the pool (Attribute + Ability).")],
    difficulty: Annotated[int | None, typer.Option("--difficulty", help="Difficulty 2-10 (default: rules).")] = None,
    willpower: Annotated[bool, typer.Option("--willpower", help="Spend a Willpower point (+1 auto success).")] = False,
    simulate: SimulateOpt = None,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    plot_path: PlotOpt = None,
    rules: RulesOpt = None,
) -> None:
    """botch, 0, 1..N net successes of a d10 pool (rule of one, Willpower)."""
    cfg = _config("storyteller", rules)
    lo, hi = _get(cfg, "dice.min_difficulty", 2), _get(cfg, "dice.max_difficulty", 10)
    d = difficulty if difficulty is not None else _get(cfg, "dice.default_difficulty", 6)
    O.check_range("--pool", pool, 1, O.MAX_POOL)
    O.check_range("--difficulty", d, lo, hi)
    wp_succ = _get(cfg, "willpower.successes", 1)
    prevents = _get(cfg, "willpower.prevents_botch", True)
    table = O.storyteller_odds(pool, d, willpower, willpower_successes=wp_succ, willpower_prevents_botch=prevents)
    sampler = O.storyteller_sampler(pool, d, wp_succ if willpower else 0, prevents)
    _finish(table, sampler, simulate, seed, as_json, plot_path)


@odds_app.command("blackbird")
def odds_blackbird(
    dice: Annotated[int, typer.Option("--dice", help="Dice in the pool.")],
    difficulty: Annotated[int | None, typer.Option("--difficulty", help="Successes needed to pass (1-20).")] = None,
    simulate: SimulateOpt = None,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    plot_path: PlotOpt = None,
    rules: RulesOpt = None,
) -> None:
    """0..N successes of N d6 (4+ as written), and the chance to pass a difficulty."""
    cfg = _config("blackbird", rules)
    O.check_range("--dice", dice, 1, O.MAX_POOL)
    if difficulty is not None:
        O.check_range("--difficulty", difficulty, 1, 20)
    success_on = _get(cfg, "dice.success_on", 4)
    table = O.blackbird_odds(dice, difficulty, success_on=success_on)
    _finish(table, O.blackbird_sampler(dice, difficulty, success_on), simulate, seed, as_json, plot_path)


@odds_app.command("hallownest")
def odds_hallownest(
    dice: Annotated[int, typer.Option("--dice", help="Dice in the pool.")],
    rerolls: Annotated[int, typer.Option("--rerolls", help="Failed dice that may be rerolled.")] = 0,
    success_on: Annotated[int | None, typer.Option("--success-on", help="Success face (default: rules, 5).")] = None,
    simulate: SimulateOpt = None,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    plot_path: PlotOpt = None,
    rules: RulesOpt = None,
) -> None:
    """0..N successes of N d6 at 5+, with rerolls of failed dice."""
    cfg = _config("hallownest", rules)
    O.check_range("--dice", dice, 1, O.MAX_POOL)
    O.check_range("--rerolls", rerolls, 0, O.MAX_POOL)
    face = success_on if success_on is not None else _get(cfg, "dice.success_on", 5)
    O.check_range("--success-on", face, 2, 6)
    table = O.hallownest_odds(dice, rerolls, success_on=face)
    _finish(table, O.hallownest_sampler(dice, rerolls, face), simulate, seed, as_json, plot_path)


@odds_app.command("crossroads")
def odds_crossroads(
    stats: Annotated[str | None, typer.Option("--stats", help="G,KH,M for a stat check, e.g. 4,4,4.")] = None,
    influence: Annotated[int | None, typer.Option("--influence", help="A faction check at this Influence.")] = None,
    simulate: SimulateOpt = None,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    plot_path: PlotOpt = None,
    rules: RulesOpt = None,
) -> None:
    """0..3 successes of 3d10 roll-under (best assignment), crossroads doubles and triples."""
    cfg = _config("crossroads", rules)
    if (stats is None) == (influence is None):
        raise UserError("give exactly one of --stats G,KH,M (a stat check) or --influence I (a faction check)")
    cap = _get(cfg, "character.stat_cap", 10)
    parsed: tuple[int, ...] | None = None
    if stats is not None:
        parsed = O.parse_ints(stats, 3, "--stats", "4,4,4")
        for name, v in zip(("G", "KH", "M"), parsed, strict=True):
            O.check_range(f"--stats {name}", v, 1, cap)
    else:
        assert influence is not None
        O.check_range("--influence", influence, 1, 10)
    table = O.crossroads_odds(parsed, influence=influence)
    _finish(table, O.crossroads_sampler(parsed, influence), simulate, seed, as_json, plot_path)


@odds_app.command("wicked_age")
def odds_wicked_age(
    dice: Annotated[str, typer.Option("--dice", help="The answerer's dice, e.g. d12,d10.")],
    vs: Annotated[str, typer.Option("--vs", help="The standing roll's dice, e.g. d10,d8.")],
    advantage: Annotated[int, typer.Option("--advantage", help="The answerer's advantage d6s.")] = 0,
    vs_advantage: Annotated[int, typer.Option("--vs-advantage", help="The standing side's advantage d6s.")] = 0,
    last_round: Annotated[bool, typer.Option("--last-round", help="Round 3: advantage results are absolute.")] = False,
    simulate: SimulateOpt = None,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    plot_path: PlotOpt = None,
    rules: RulesOpt = None,
) -> None:
    """The answerer's result against a standing roll: absolute_loss, loses/wins_advantage, absolute_win."""
    cfg = _config("wicked_age", rules)
    ladder = tuple(x for x in _get(cfg, "forms.ladder", [12, 10, 8, 6, 4]) if x > 0)
    a_dice = O.parse_dice(dice, ladder, "--dice")
    c_dice = O.parse_dice(vs, ladder, "--vs")
    O.check_range("--dice (number of dice)", len(a_dice), 1, 4)
    O.check_range("--vs (number of dice)", len(c_dice), 1, 4)
    O.check_range("--advantage", advantage, 0, 8)
    O.check_range("--vs-advantage", vs_advantage, 0, 8)
    sides = _get(cfg, "advantage.die_sides", 6)
    multiple = _get(cfg, "contest.absolute_multiple", 2)
    table = O.wicked_age_odds(
        a_dice, c_dice, advantage, vs_advantage, last_round=last_round, adv_sides=sides, multiple=multiple
    )
    sampler = O.wicked_age_sampler(a_dice, c_dice, advantage, vs_advantage, last_round, sides, multiple)
    _finish(table, sampler, simulate, seed, as_json, plot_path)

"""``rulebreaker train``: train an RL agent on a scenario, checkpoint, resume (the job: training.train)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from envs.core.errors import UserError
from training.cli.common import TRAIN_SEED_MAX, check_out_dir, clamp_workers, err, out, say
from training.train import DEFAULT_VEC, TrainConfig, parse_hp_overrides
from training.train import train as run_train


def register(app: typer.Typer) -> None:
    app.command()(train)


def train(
    ruleset: Annotated[str, typer.Argument(help="Ruleset name (ignored with --resume).")] = "",
    scenario: Annotated[str, typer.Argument(help="Scenario name (ignored with --resume).")] = "",
    algo: Annotated[str, typer.Option("--algo", help="maskable-ppo | ppo | dqn | a2c.")] = "maskable-ppo",
    steps: Annotated[
        int | None,
        typer.Option(
            "--steps",
            help="Total timesteps (default: n_timesteps of the "
            "hyperparameter file). A run ends at the first whole rollout >= N.",
        ),
    ] = None,
    opponent: Annotated[
        str,
        typer.Option(
            "--opponent",
            help="random | a persona | self (pool of the learner's past snapshots) | mix (snapshots and personas).",
        ),
    ] = "random",
    seed: Annotated[int, typer.Option("--seed", min=0, max=TRAIN_SEED_MAX, help="Seed of the run (0..2**31-1).")] = 0,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Run directory (default runs/<time>-R-S-train).")
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            help="Continue a run directory to its total steps. "
            "This unpickles the saved model (runs code): only resume run "
            "directories you created.",
        ),
    ] = None,
    n_envs: Annotated[
        int | None,
        typer.Option(
            "--n-envs", min=1, max=64, help="Vectorised envs, 1..64 (default from the hyperparameter file: 4)."
        ),
    ] = None,
    vec: Annotated[
        str, typer.Option("--vec", help="dummy (in-process, the measured default) | subproc.")
    ] = DEFAULT_VEC,
    hp: Annotated[
        list[str] | None,
        typer.Option(
            "--hp",
            help="Hyperparameter override key=value (YAML value), repeatable; see training/hyperparams/<algo>.yaml.",
        ),
    ] = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="A variant TOML overriding rules.toml.")] = None,
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Processes for the final evaluation (at most the cores).")
    ] = 1,
    no_final_eval: Annotated[bool, typer.Option("--no-final-eval", help="Skip the final persona evaluation.")] = False,
) -> None:
    """Train an RL agent (MaskablePPO by default) on a scenario; Ctrl-C / SIGTERM save a checkpoint.

    Run dir: model.zip, checkpoints/, tb/ (TensorBoard), curves.json/.csv/.png, record.json.

    Trained agents play as rl:<run dir> (weights only, no pickle).

    --resume loads the full SB3 model, which unpickles code: only resume your own run dirs.
    """
    if resume is None and (not ruleset or not scenario):
        raise UserError("train needs RULESET and SCENARIO (or --resume DIR)")
    if resume is not None and (out_dir is not None and Path(out_dir) != Path(resume)):
        raise UserError("--resume continues the run in its own directory; drop --out")
    if resume is not None:
        given = [
            flag
            for flag, value, default in (
                ("--algo", algo, "maskable-ppo"),
                ("--opponent", opponent, "random"),
                ("--seed", seed, 0),
                ("--n-envs", n_envs, None),
                ("--vec", vec, DEFAULT_VEC),
                ("--hp", hp, None),
                ("--rules", rules, None),
                ("RULESET SCENARIO", ruleset or scenario, ""),
            )
            if value != default
        ]
        if given:
            say(err, f"note: {', '.join(given)} ignored: --resume continues the run with its stored settings")
    if out_dir is not None and resume is None:
        check_out_dir(out_dir, "train")
    if resume is not None and Path(resume).is_dir():
        check_out_dir(resume, "train", "--resume")
    workers = clamp_workers(workers)
    tty = sys.stderr.isatty() and not os.environ.get("CI")
    cfg = TrainConfig(
        ruleset=ruleset,
        scenario=scenario,
        algo=algo,
        steps=steps,
        opponent=opponent,
        seed=seed,
        out=out_dir,
        resume=resume,
        n_envs=n_envs,
        vec=vec,
        hp=parse_hp_overrides(hp),
        rules=rules,
        progress_bar=tty,
        final_eval=not no_final_eval,
        workers=workers,
        log=lambda s: say(err, s),
    )
    try:
        result = run_train(cfg)
    except OSError as e:  # the disk filled up, the folder went away…: name the file, exit 2
        where = e.filename or out_dir or resume or "the run folder"
        raise UserError(f"training stopped: cannot write {where}: {e.strerror or e}") from None
    m = result.metrics
    if result.status == "interrupted":
        say(
            err,
            f"interrupted ({m.get('interrupted_by')}) at {result.num_timesteps}/{result.target} timesteps; "
            f"checkpoint and record saved. Continue with: rulebreaker train --resume {result.run_dir}",
        )
        by = m.get("interrupted_by", "SIGINT")
        # 128 + signal number, the shell's convention (sys.exit works whatever click's standalone mode).
        sys.exit(128 + int(getattr(signal, by, signal.SIGINT)))
    out.print(f"trained {result.num_timesteps} timesteps ({m.get('steps_per_second')} steps/s this session)")
    fe = m.get("final_evaluation")
    if fe:
        table = Table(title=f"final evaluation, {fe['games']} games per persona (seed {fe['seed']})")
        if fe["num_players"] == 1:
            for col in ("persona", "agent mean return [95%]", "persona mean return [95%]", "beats"):
                table.add_column(col)
            for name, v in fe["vs"].items():
                table.add_row(
                    name,
                    f"{v['agent_mean_return']:+.3f} {_ci(v['agent_return_ci'])}",
                    f"{v['persona_mean_return']:+.3f} {_ci(v['persona_return_ci'])}",
                    "yes" if v["beats"] else "no",
                )
        else:
            for col in ("persona", "win rate [Wilson 95%]", "fair share", "draws", "return edge [95%]", "beats"):
                table.add_column(col)
            for name, v in fe["vs"].items():
                table.add_row(
                    name,
                    f"{v['win_rate']:.3f} {_ci(v['win_ci'])}",
                    f"{v['fair_share']:.3f}",
                    f"{v['draw_rate']:.2f}",
                    f"{v['return_edge']:+.3f} {_ci(v['return_edge_ci'])}",
                    "yes" if v["beats"] else "no",
                )
        out.print(table)
        say(out, "beats every persona" if fe["beats_all"] else f"does not beat: {', '.join(fe['not_beaten'])}")
    say(out, f"run: {result.run_dir}")
    if result.write_error:
        raise UserError(f"the results above could not all be written: {result.write_error}")


def _ci(ci: list[float]) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"

"""Bad inputs across commands (issue 21): each row is a command line, the exit code it must give and the words
its message must hold. Exit 2 comes with exactly one ``error:`` line; no row may end in a traceback or hang.

The rows run in-process (tests/cli_helpers.py's way) on toy Pig and tiny trained models, so the whole table
takes well under a minute. ``python -m tests.training.test_bad_inputs`` prints the count table
(inputs tried, exit 2 with one line, tracebacks, hangs).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sys
import traceback
import warnings
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.cli_helpers import CliResult
from training.cli import main

ROW_SECONDS = 30
"""A row that runs longer is a hang."""

TINY_TRAIN = [
    "--steps",
    "64",
    "--n-envs",
    "2",
    "--seed",
    "1",
    "--hp",
    "n_steps=16",
    "--hp",
    "batch_size=16",
    "--hp",
    "policy_kwargs={net_arch: [8]}",
    "--hp",
    "eval_freq=64",
    "--hp",
    "eval_episodes=2",
    "--hp",
    "checkpoint_freq=32",
    "--hp",
    "final_eval_games=4",
]
"""A training run of two 32-step rollouts with a checkpoint at each, a final evaluation of 4 games per persona."""


@dataclass
class Row:
    id: str
    args: list[str]  # "{d}" is the folder of the prepared files
    code: int
    words: list[str] = field(default_factory=list)  # in stderr (stdout for exit 0 unless noted)
    absent: list[str] = field(default_factory=list)  # must not appear anywhere
    out_words: list[str] = field(default_factory=list)  # in stdout
    patch: Callable[[pytest.MonkeyPatch], None] | None = None
    check: Callable[[Path], None] | None = None  # a post-condition on the files
    xfail: str | None = None  # reason (strict): a row another lane's fix will make pass


# -- files the rows read -------------------------------------------------------------------------------
def _cli(*args: str) -> CliResult:
    """Run the CLI in-process, capturing its output; a traceback or a hang becomes code -1 / -2."""
    old_argv = sys.argv
    sys.argv = ["rulebreaker", *args]
    out, err = io.StringIO(), io.StringIO()
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    code: int = 0

    def on_alarm(signum: int, frame: Any) -> None:
        raise TimeoutError(f"hang: more than {ROW_SECONDS} s")

    from training.cli.common import err as err_console
    from training.cli.common import out as out_console

    widths = out_console.width, err_console.width
    out_console.width = err_console.width = 400  # no wrapping inside a path the rows look for
    old_alarm = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(ROW_SECONDS)
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # a warning is printed to stderr in real use: it counts as a line
            main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except TimeoutError:
        code = -2
        err.write(traceback.format_exc())
    except BaseException:  # noqa: BLE001 - a traceback is what the table must never show
        code = -1
        err.write("Traceback (most recent call last):\n" + traceback.format_exc())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old_alarm)
        for w in caught:
            err.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno))
        sys.argv = old_argv
        sys.stdout, sys.stderr = old_out, old_err
        out_console.width, err_console.width = widths
    return CliResult(code, out.getvalue(), err.getvalue())


def _zip_with(src: Path, dst: Path, meta: Callable[[dict], dict] | None = None, policy: bytes | None = None) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.namelist():
            data = zin.read(item)
            if item == "rulebreaker.json" and meta is not None:
                data = json.dumps(meta(json.loads(data))).encode()
            if item == "policy.pth" and policy is not None:
                data = policy
            zout.writestr(item, data)


def _prepare(d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / "afile").write_text("a file, not a folder\n")
    (d / "folder").mkdir()
    toml = {
        "bb_tags.toml": '[[session.character.traits]]\nname = "Mercenary"\nlevel = 1\n'
        'tags = { "fist-fighting" = 1000000000, "strongman" = 1, "intimidate" = 1 }\n',
        "bb_negative.toml": '[[session.character.traits]]\nname = "Mercenary"\nlevel = 1\n'
        'tags = { "fist-fighting" = -5, "strongman" = 1, "intimidate" = 1 }\n',
        "bb_weight.toml": '[[session.obstacles]]\nname = "brawl"\nweight = inf\ntraits = ["Mercenary"]\n'
        'tags = ["fist-fighting"]\n',
        "bb_pool.toml": "[pool]\nstart = true\n",
        "cr_players.toml": '[episode]\nplayers = "3"\n',
        "hn_dir.toml": f'[data]\ntemplates = "{d / "folder"}"\n',
        "hn_zero.toml": '[data]\nweapons = "/dev/zero"\n',
        "hn_pyproject.toml": f'[data]\nweapons = "{Path(__file__).resolve().parents[2] / "pyproject.toml"}"\n',
    }
    for name, text in toml.items():
        (d / name).write_text(text)
    (d / "[red]r[").mkdir()  # so that "{d}/[red]r[/bold].toml" is a valid rules file
    (d / "[red]r[" / "bold].toml").write_text("[game]\ntarget = 20\n")
    # Recorded games for --replay.
    good = {
        "ruleset": "toy_pig",
        "scenario": "race",
        "config": {"game": {"target": 20, "die_sides": 6, "max_turns": 60}},
        "agents": ["random", "random"],
        "seed": 3,
        "forbid": [],
    }
    games = {
        "ok": good,
        "nokey": {k: v for k, v in good.items() if k != "seed"},
        "alist": [1, 2, 3],
        "strseed": {**good, "seed": "3"},
        "forbid": {**good, "forbid": [[0, "teleport"]]},
        "bigseed": {**good, "seed": 2**70},
    }
    (d / "run").mkdir()
    (d / "run" / "games.json").write_text(json.dumps(games))
    (d / "listrun").mkdir()
    (d / "listrun" / "games.json").write_text("[]")
    # A finished evaluate run.
    r = _cli("evaluate", "toy_pig", "race", "--games", "2", "--out", str(d / "evalrun"))
    assert r.code == 0, r.err
    # A finished training run (with its final evaluation), copied for the rows that damage it.
    r = _cli("train", "toy_pig", "race", *TINY_TRAIN, "--out", str(d / "trained"))
    assert r.code == 0, r.err
    for name in ("nomodel", "nothing", "keepfe", "evalinto", "badtarget", "ckfile", "bomb"):
        shutil.copytree(d / "trained", d / name)
    (d / "nomodel" / "model.zip").unlink()
    (d / "nothing" / "model.zip").unlink()
    state = json.loads((d / "badtarget" / "train_state.json").read_text())
    (d / "badtarget" / "train_state.json").write_text(json.dumps({**state, "target": "abc"}))
    shutil.rmtree(d / "ckfile" / "checkpoints")
    (d / "ckfile" / "checkpoints").write_text("a file where the run keeps its checkpoints\n")
    (d / "[red]m[").mkdir()
    shutil.copytree(d / "trained", d / "[red]m[" / "bold]")  # an rl: agent named rl:{d}/[red]m[/bold]
    (d / "training").mkdir()  # a run in progress: no record yet
    shutil.copy(d / "trained" / "train_state.json", d / "training" / "train_state.json")
    shutil.rmtree(d / "nothing" / "checkpoints")
    # Crafted model zips.
    model = d / "trained" / "model.zip"
    _zip_with(model, d / "noscenario.zip", meta=lambda m: {k: v for k, v in m.items() if k != "scenario"})
    _zip_with(
        model, d / "activation.zip", meta=lambda m: {**m, "architecture": {**m["architecture"], "activation": "gelu"}}
    )
    _zip_with(model, d / "garbage.zip", policy=b"\x80\x04 not a torch file at all" * 10)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, toy: Any) -> Iterator[Path]:
    d = tmp_path_factory.mktemp("bad-inputs")
    cwd = os.getcwd()
    os.chdir(d)  # runs/ of the rows that write a default run folder go here
    try:
        _prepare(d)
        yield d
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def toy() -> Any:  # module scope: the conftest one is per test
    from envs.core.registry import register_ruleset
    from tests.toy import RULESET

    register_ruleset(RULESET)
    return RULESET


# -- post-conditions and patches ---------------------------------------------------------------------
def _final_eval_kept(d: Path) -> None:
    rec = json.loads((d / "keepfe" / "record.json").read_text())
    assert rec["command"] == "train" and rec["metrics"].get("final_evaluation"), "the final evaluation was dropped"


def _train_record_intact(d: Path) -> None:
    assert json.loads((d / "evalinto" / "record.json").read_text())["command"] == "train"


def _resumed_from_checkpoint(d: Path) -> None:
    assert (d / "nomodel" / "model.zip").exists()
    state = json.loads((d / "nomodel" / "train_state.json").read_text())
    assert state["num_timesteps"] == 64 and state["status"] == "completed"


def _interrupted_record(d: Path) -> None:
    rec = json.loads((d / "cut" / "record.json").read_text())
    assert rec["metrics"]["interrupted"] is True and rec["metrics"]["games_played"] == 3
    assert len(rec["games_detail"]) == 3


def _strict_json_record(d: Path) -> None:
    def refuse(name: str) -> None:
        raise AssertionError(f"record.json holds {name}, not standard JSON")

    rec = json.loads((d / "solo-cut" / "record.json").read_text(), parse_constant=refuse)
    assert rec["metrics"]["games_played"] == 3 and set(rec["metrics"]["agents"]) == {"random"}


def _write_fails(mp: pytest.MonkeyPatch) -> None:
    def fail(run_dir: Path, **kw: Any) -> Path:
        raise PermissionError(13, "Permission denied", str(run_dir / "record.json"))

    mp.setattr("training.cli.evaluate.write_record", fail)


def _sigterm_after_3(mp: pytest.MonkeyPatch) -> None:
    import training.runner as runner

    real = runner.play_game
    played = [0]

    def play(job: Any, policies: Any = None) -> Any:
        if played[0] == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        played[0] += 1
        return real(job, policies)

    mp.setattr(runner, "play_game", play)


def _sigterm_record(d: Path) -> None:
    rec = json.loads((d / "term" / "record.json").read_text())
    assert rec["metrics"]["interrupted"] is True and rec["metrics"]["games_played"] == 3


def _tiny_zip_limit(mp: pytest.MonkeyPatch) -> None:
    mp.setattr("agents.rl.MAX_ZIP_BYTES", 1000)  # the model zip now "unpacks to more than a model"


def _plot_fails(mp: pytest.MonkeyPatch) -> None:
    def fail(run_dir: Path, *a: Any, **kw: Any) -> None:
        raise PermissionError(13, "Permission denied", str(run_dir / "curves.png"))

    mp.setattr("training.train.run.plot_curves", fail)


def _ctrl_c_after_3(mp: pytest.MonkeyPatch) -> None:
    import training.runner as runner

    real = runner.play_game
    played = [0]

    def play(job: Any, policies: Any = None) -> Any:
        if played[0] == 3:
            raise KeyboardInterrupt
        played[0] += 1
        return real(job, policies)

    mp.setattr(runner, "play_game", play)


E = ["toy_pig", "race", "--games", "2"]
# Config bounds (lane RELIABILITY-CONFIG): exit 2 and the key's name, from the validator every command uses.
RULES_ROWS = [
    Row("bb tag level 10**9", ["rules", "show", "blackbird", "--rules", "{d}/bb_tags.toml"], 2, ["fist-fighting"]),
    Row(
        "bb negative tag level", ["rules", "show", "blackbird", "--rules", "{d}/bb_negative.toml"], 2, ["fist-fighting"]
    ),
    Row("bb weight = inf", ["rules", "show", "blackbird", "--rules", "{d}/bb_weight.toml"], 2, ["weight"]),
    Row("bb pool.start = true", ["rules", "show", "blackbird", "--rules", "{d}/bb_pool.toml"], 2, ["pool.start"]),
    Row("crossroads players = '3'", ["rules", "show", "crossroads", "--rules", "{d}/cr_players.toml"], 2, ["players"]),
    Row("hn data path a folder", ["rules", "show", "hallownest", "--rules", "{d}/hn_dir.toml"], 2, ["templates"]),
    Row("hn data path /dev/zero", ["rules", "show", "hallownest", "--rules", "{d}/hn_zero.toml"], 2, ["weapons"]),
    Row("hn data path elsewhere", ["rules", "show", "hallownest", "--rules", "{d}/hn_pyproject.toml"], 2, ["weapons"]),
    Row(
        "play with tag level 10**9",
        ["play", "blackbird", "session", "--rules", "{d}/bb_tags.toml"],
        2,
        ["fist-fighting"],
    ),
]
ROWS = [
    # 4: train --resume with model.zip missing
    Row(
        "resume: no model.zip, a checkpoint",
        ["train", "--resume", "{d}/nomodel", "--no-final-eval"],
        0,
        ["newest valid checkpoint"],
        check=_resumed_from_checkpoint,
    ),
    Row("resume: no model.zip, no checkpoint", ["train", "--resume", "{d}/nothing"], 2, ["model.zip", "missing"]),
    Row("resume: a damaged train_state.json", ["train", "--resume", "{d}/badtarget"], 2, ["target", "damaged"]),
    Row("resume: checkpoints/ is a file", ["train", "--resume", "{d}/ckfile"], 2, ["checkpoints", "is a file"]),
    Row("resume: not a run", ["train", "--resume", "{d}/folder"], 2, ["train_state.json"]),
    # 5: never another command's record
    Row(
        "evaluate --out a training run",
        ["evaluate", *E, "--out", "{d}/evalinto"],
        2,
        ["train", "record.json"],
        check=_train_record_intact,
    ),
    Row("evaluate --out a run being trained", ["evaluate", *E, "--out", "{d}/training"], 2, ["train"]),
    Row("train --out an evaluate run", ["train", "toy_pig", "race", "--out", "{d}/evalrun"], 2, ["evaluate"]),
    Row(
        "resume a finished run --no-final-eval",
        ["train", "--resume", "{d}/keepfe", "--no-final-eval"],
        0,
        check=_final_eval_kept,
    ),
    # 6: output locations, failed writes, Ctrl-C
    Row("evaluate --out a file", ["evaluate", *E, "--out", "{d}/afile"], 2, ["afile", "file"]),
    Row("evaluate --out under a file", ["evaluate", *E, "--out", "{d}/afile/sub"], 2, ["cannot be written"]),
    Row("evaluate --out in /proc", ["evaluate", *E, "--out", "/proc/rulebreaker-out"], 2, ["cannot be written"]),
    Row("train --out a file", ["train", "toy_pig", "race", "--out", "{d}/afile"], 2, ["afile", "file"]),
    Row("discover --out a file", ["discover", "toy_pig", "--no-rl", "--out", "{d}/afile"], 2, ["afile", "file"]),
    Row(
        "regress --update-baseline under a file",
        ["regress", "toy_pig", "--scenario", "race", "--update-baseline", "--baseline", "{d}/afile/b.json"],
        2,
        ["cannot be written"],
    ),
    Row(
        "regress --update-baseline over a run record",
        ["regress", "toy_pig", "--scenario", "race", "--update-baseline", "--baseline", "{d}/evalrun/record.json"],
        2,
        ["not a baseline"],
    ),
    Row(
        "regress --update-baseline a folder",
        ["regress", "toy_pig", "--scenario", "race", "--update-baseline", "--baseline", "{d}/folder"],
        2,
        ["folder"],
    ),
    Row(
        "evaluate: the record cannot be written",
        ["evaluate", *E, "--out", "{d}/unwritten"],
        2,
        ["could not be written", "record.json"],
        out_words=["win rate"],
        patch=_write_fails,
    ),
    Row(
        "evaluate: SIGTERM after 3 games",
        ["evaluate", "toy_pig", "race", "--agents", "random", "--games", "10", "--out", "{d}/term"],
        143,
        ["interrupted", "3 of 10"],
        patch=_sigterm_after_3,
        check=_sigterm_record,
    ),
    Row(
        "evaluate one seat: Ctrl-C before the 2nd agent plays",
        ["evaluate", "blackbird", "session", "--agents", "random,greedy", "--games", "5", "--out", "{d}/solo-cut"],
        130,
        ["3 of 10"],
        patch=_ctrl_c_after_3,
        check=_strict_json_record,
    ),
    Row(
        "train: the curves cannot be written at the end",
        ["train", "--resume", "{d}/keepfe", "--no-final-eval"],
        2,
        ["could not all be written", "curves.png"],
        out_words=["run:"],
        patch=_plot_fails,
    ),
    Row(
        "evaluate: Ctrl-C after 3 games",
        ["evaluate", "toy_pig", "race", "--agents", "random", "--games", "10", "--out", "{d}/cut"],
        130,
        ["interrupted", "3 of 10"],
        out_words=["interrupted after 3/10"],
        patch=_ctrl_c_after_3,
        check=_interrupted_record,
    ),
    # 7: rich markup in user strings
    Row(
        "evaluate --out with [red] and [/bold]",
        ["evaluate", *E, "--out", "{d}/[red]x[/bold]"],
        0,
        out_words=["[red]x[/bold]"],
    ),
    Row(
        "rl: agent path with [red] and [/bold]",
        ["evaluate", *E, "--agents", "rl:{d}/[red]m[/bold],random", "--out", "{d}/mk"],
        0,
        out_words=["rl:{d}/[red]m[/bold]"],
    ),
    Row(
        "play --rules missing with [/bold]",
        ["play", "toy_pig", "race", "--rules", "{d}/[/bold]no.toml"],
        2,
        ["[/bold]no.toml"],
    ),
    Row(
        "rules show --rules with [red]",
        ["rules", "show", "toy_pig", "--rules", "{d}/[red]r[/bold].toml"],
        0,
        out_words=["[red]r[/bold].toml"],
    ),
    Row("unknown agent [/bold]", ["evaluate", *E, "--agents", "random,[/bold]"], 2, ["[/bold]"]),
    # 8: bounds on work
    Row("evaluate --games 10**9", ["evaluate", "toy_pig", "race", "--games", "1000000000"], 2, ["100,000", "--games"]),
    Row("evaluate --workers 999", ["evaluate", *E, "--workers", "999", "--out", "{d}/w999"], 0, ["lowered"]),
    Row(
        "regress --update-baseline --games 10**9",
        [
            "regress",
            "toy_pig",
            "--scenario",
            "race",
            "--update-baseline",
            "--games",
            "1000000000",
            "--baseline",
            "{d}/b.json",
        ],
        2,
        ["--games"],
    ),
    Row("solve --max-states 10**12", ["solve", "toy_pig", "race", "--max-states", str(10**12)], 2, ["--max-states"]),
    Row("train --n-envs 1000", ["train", "toy_pig", "race", "--n-envs", "1000"], 2, ["--n-envs"]),
    Row("check --steps 10**12", ["check", "toy_pig", "--steps", str(10**12)], 2, ["--steps"]),
    Row("search budget 10**9", ["evaluate", *E, "--agents", "search@1000000000,random"], 2, ["10,000"]),
    Row("search c=nan", ["evaluate", *E, "--agents", "search#c=nan,random"], 2, ["c="]),
    Row(
        "regress --baseline /dev/zero",
        ["regress", "toy_pig", "--scenario", "race", "--rules", "{d}/[red]r[/bold].toml", "--baseline", "/dev/zero"],
        2,
        ["regular file"],
    ),
    Row("train --hp n_steps=10**9", ["train", "toy_pig", "race", "--hp", "n_steps=1000000000"], 2, ["n_steps"]),
    # 9: crafted or stale files
    Row("rl zip without scenario", ["evaluate", *E, "--agents", "rl:{d}/noscenario.zip,random"], 2, ["scenario"]),
    Row(
        "rl zip unknown activation",
        ["evaluate", *E, "--agents", "rl:{d}/activation.zip,random"],
        2,
        ["activation", "gelu"],
    ),
    Row(
        "rl zip garbage policy.pth",
        ["evaluate", *E, "--agents", "rl:{d}/garbage.zip,random"],
        2,
        ["policy.pth"],
        absent=["weights_only", "Traceback"],
    ),
    Row(
        "rl zip unpacking too large",
        ["evaluate", *E, "--agents", "rl:{d}/bomb,random"],
        2,
        ["unpacks to"],
        patch=_tiny_zip_limit,
    ),
    Row("rl: a folder without a model", ["evaluate", *E, "--agents", "rl:{d}/folder,random"], 2, ["no trained model"]),
    Row("replay: a good game", ["play", "--replay", "{d}/run/ok"], 0, out_words=["winner"]),
    Row("replay: missing key", ["play", "--replay", "{d}/run/nokey"], 2, ["lacks", "seed"]),
    Row("replay: a list", ["play", "--replay", "{d}/run/alist"], 2, ["list"]),
    Row("replay: a string seed", ["play", "--replay", "{d}/run/strseed"], 2, ["seed", "string"]),
    Row("replay: seed 2**70", ["play", "--replay", "{d}/run/bigseed"], 2, ["seed"]),
    Row("replay: unknown forbid option", ["play", "--replay", "{d}/run/forbid"], 2, ["teleport", "option group"]),
    Row("replay: games.json a list", ["play", "--replay", "{d}/listrun/x"], 2, ["list"]),
    Row("replay: no games.json", ["play", "--replay", "{d}/folder/x"], 2, ["games.json"]),
    Row(
        "regress --baseline a folder",
        ["regress", "toy_pig", "--scenario", "race", "--rules", "{d}/[red]r[/bold].toml", "--baseline", "{d}/folder"],
        2,
        ["folder"],
    ),
    # 10: lenient or aliased inputs
    Row("evaluate --agents twice", ["evaluate", *E, "--agents", "random,random"], 2, ["random", "once"]),
    Row(
        "resume with --hp (ignored)",
        ["train", "--resume", "{d}/keepfe", "--no-final-eval", "--hp", "n_steps=32"],
        0,
        ["--hp ignored"],
    ),
    Row("evaluate --seed 2**64", ["evaluate", *E, "--seed", str(2**64)], 2, ["--seed"]),
    Row("evaluate --seed -1", ["evaluate", *E, "--seed", "-1"], 2, ["--seed"]),
    Row("play --seed 2**70", ["play", "toy_pig", "race", "--seed", str(2**70)], 2, ["--seed"]),
    Row("play --seed 2**64-1", ["play", "toy_pig", "race", "--seed", str(2**64 - 1)], 0, out_words=["winner"]),
    Row("train --seed 2**40", ["train", "toy_pig", "race", "--seed", str(2**40)], 2, ["--seed"]),
    Row("discover --seed 2**40 with RL", ["discover", "toy_pig", "--seed", str(2**40)], 2, ["--seed", "--no-rl"]),
    Row("regress --seed -1", ["regress", "toy_pig", "--update-baseline", "--seed", "-1"], 2, ["--seed"]),
    Row("evaluate --agents ''", ["evaluate", *E, "--agents", ""], 2, ["--agents", "empty"]),
    Row("play --agents 'random,'", ["play", "toy_pig", "race", "--agents", "random,"], 2, ["--agents", "empty"]),
    Row(
        "play --agents three for two seats",
        ["play", "toy_pig", "race", "--agents", "random,random,random"],
        2,
        ["seats"],
    ),
    Row("solve --seat 5 --estimate", ["solve", "toy_pig", "race", "--seat", "5", "--estimate"], 2, ["--seat"]),
    Row("solve --seat 5", ["solve", "toy_pig", "race", "--seat", "5"], 2, ["--seat"]),
    Row("train --hp n_steps=0", ["train", "toy_pig", "race", "--hp", "n_steps=0"], 2, ["n_steps"]),
    Row(
        "train --hp learning_rate=abc", ["train", "toy_pig", "race", "--hp", "learning_rate=abc"], 2, ["learning_rate"]
    ),
    Row("train --hp batch_size=0", ["train", "toy_pig", "race", "--hp", "batch_size=0"], 2, ["batch_size"]),
    Row(
        "train --hp zero-width network",
        ["train", "toy_pig", "race", "--hp", "policy_kwargs={net_arch: [0]}"],
        2,
        ["net_arch"],
    ),
    Row("train --hp gamma=5", ["train", "toy_pig", "race", "--hp", "gamma=5"], 2, ["gamma"]),
    Row(
        "train --hp checkpoint_freq=x",
        ["train", "toy_pig", "race", "--hp", "checkpoint_freq=x"],
        2,
        ["checkpoint_freq"],
    ),
    Row("train --hp no '='", ["train", "toy_pig", "race", "--hp", "n_steps"], 2, ["key=value"]),
    Row(
        "regress --min-effect inf",
        ["regress", "toy_pig", "--rules", "{d}/[red]r[/bold].toml", "--min-effect", "inf"],
        2,
        ["--min-effect"],
    ),
    Row(
        "regress --alpha nan",
        ["regress", "toy_pig", "--rules", "{d}/[red]r[/bold].toml", "--alpha", "nan"],
        2,
        ["--alpha"],
    ),
    Row("evaluate --games 0", ["evaluate", "toy_pig", "race", "--games", "0"], 2, ["--games"]),
    Row("unknown option", ["evaluate", *E, "--bogus"], 2, ["--bogus"]),
    Row("missing argument", ["evaluate", "toy_pig"], 2, ["scenario"]),
    *RULES_ROWS,
]


def _fill(args: list[str], d: Path) -> list[str]:
    return [a.replace("{d}", str(d)) for a in args]


def _params() -> list[Any]:
    out = []
    for row in ROWS:
        marks = [pytest.mark.xfail(strict=True, reason=row.xfail)] if row.xfail else []
        out.append(pytest.param(row, id=row.id, marks=marks))
    return out


def run_row(row: Row, d: Path, mp: pytest.MonkeyPatch) -> CliResult:
    if row.patch is not None:
        row.patch(mp)
    try:
        return _cli(*_fill(row.args, d))
    finally:
        mp.undo()


def verdict(row: Row, r: CliResult, d: Path) -> list[str]:
    """What is wrong with the result of ``row`` (empty: the row passes)."""
    problems = []
    text = r.out + r.err
    if r.code == -1 or "Traceback" in text:
        problems.append("traceback")
    if r.code == -2:
        problems.append("hang")
    if r.code != row.code:
        problems.append(f"exit {r.code}, expected {row.code}")
    lines = [ln for ln in r.err.strip().splitlines() if ln.strip()]
    if row.code == 2 and (len(lines) != 1 or not lines[0].startswith("error:")):
        problems.append(f"{len(lines)} stderr lines, expected one 'error:' line")
    for w in row.words:
        if w not in (r.err if row.code != 0 else text):
            problems.append(f"no {w!r} in the message")
    squeezed = "".join(r.out.split())  # a table may wrap a long path
    for w in row.out_words:
        w = w.replace("{d}", str(d))
        if "".join(w.split()) not in squeezed:
            problems.append(f"no {w!r} in stdout")
    for w in row.absent:
        if w in text:
            problems.append(f"{w!r} shown")
    if row.check is not None and not problems:
        try:
            row.check(d)
        except AssertionError as e:
            problems.append(f"post-condition: {e}")
    return problems


@pytest.mark.parametrize("row", _params())
def test_bad_input(row: Row, files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = run_row(row, files, monkeypatch)
    problems = verdict(row, r, files)
    assert not problems, f"{' '.join(row.args)}: {'; '.join(problems)}\nstdout: {r.out[-800:]}\nstderr: {r.err[-1500:]}"


# -- the env (item 11) and signals (item 12) ---------------------------------------------------------------
@pytest.mark.parametrize("action", [23.9, "0", True, float("nan"), None, 1.0, np.float32(0.0), -1, 2])
def test_env_non_integral_or_illegal_action_ends_the_episode_and_step_then_raises(toy: Any, action: Any) -> None:
    from envs.core.gym_adapter import GameEnv

    env = GameEnv(toy, "race")
    env.reset(seed=1)
    _obs, reward, terminated, _trunc, info = env.step(action)
    assert terminated and info["illegal_action"] and reward == env.illegal_action_penalty
    with pytest.raises(Exception):  # noqa: B017 - any error: stepping an ended episode is refused
        env.step(0)
    env.reset(seed=1)
    _obs, _r, _t, _tr, info = env.step(np.int64(0))
    assert not info["illegal_action"]


def test_a_second_sigterm_abandons_a_stuck_step() -> None:
    from training.train.checkpoints import StopFlag, graceful_signals

    flag = StopFlag()
    with graceful_signals(flag):
        os.kill(os.getpid(), signal.SIGTERM)
        assert flag.signal == signal.SIGTERM  # the first one asks the run to stop at the next step
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10**8):  # a step that would not end on its own
                pass


def test_records_are_standard_json_without_nan_or_infinity(tmp_path: Path) -> None:
    from results.records import atomic_write_json

    atomic_write_json(tmp_path / "r.json", {"a": float("nan"), "b": [1.5, float("inf"), (float("-inf"), 2)], "c": "x"})
    text = (tmp_path / "r.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"a": None, "b": [1.5, None, [None, 2]], "c": "x"}


def count_table(d: Path) -> dict[str, int]:
    """Run every row once; the closing note's counts."""
    mp = pytest.MonkeyPatch()
    counts = {"inputs tried": 0, "exit 2 with one line": 0, "other expected exit": 0, "tracebacks": 0, "hangs": 0}
    failed = []
    for row in ROWS:
        r = run_row(row, d, mp)
        problems = verdict(row, r, d)
        counts["inputs tried"] += 1
        lines = [ln for ln in r.err.strip().splitlines() if ln.strip()]
        if r.code == 2 and len(lines) == 1 and lines[0].startswith("error:"):
            counts["exit 2 with one line"] += 1
        elif not problems:
            counts["other expected exit"] += 1
        counts["tracebacks"] += "traceback" in problems
        counts["hangs"] += "hang" in problems
        if problems:
            failed.append(f"{row.id}: {'; '.join(problems)}")
    for line in failed:
        print("FAILED", line)
    return counts


if __name__ == "__main__":
    import tempfile

    from envs.core.registry import register_ruleset
    from tests.toy import RULESET

    register_ruleset(RULESET)
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        _prepare(Path(tmp) / "files")
        for k, v in count_table(Path(tmp) / "files").items():
            print(f"| {k} | {v} |")

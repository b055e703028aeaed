"""rulebreaker train: a real tiny training run, interruption and resume, refusal of bad checkpoints, the CLI."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from stable_baselines3.common.callbacks import BaseCallback

from envs.core.errors import UserError
from results.records import read_record
from results.stats import wilson
from tests.cli_helpers import run_cli
from training.train import TrainConfig, expected_total, rollout_size, train

# Small and quick: a rollout is 4 envs x 128 steps = 512 timesteps.
FAST_HP = {
    "n_steps": 128,
    "batch_size": 128,
    "policy_kwargs": {"net_arch": [64, 64]},
    "eval_freq": 2048,
    "eval_episodes": 16,
    "checkpoint_freq": 1024,
    "final_eval_games": 40,
}


def _cfg(tmp_path: Path, name: str, steps: int, **kw) -> TrainConfig:
    hp = {**FAST_HP, **kw.pop("hp", {})}
    return TrainConfig("toy_pig", "race", steps=steps, seed=kw.pop("seed", 1), out=tmp_path / name, hp=hp, **kw)


@pytest.mark.training
def test_tiny_maskable_ppo_run_beats_random_significantly(tmp_path, toy):
    """A real (tiny) MaskablePPO run on toy Pig; the agent beats random with a Wilson interval above 1/2."""
    from training.evaluate import evaluate

    res = train(_cfg(tmp_path, "run", 6144, seed=0, final_eval=False))  # seed 0: the untrained policy loses
    assert res.status == "completed" and res.num_timesteps == 6144
    ev = evaluate(toy, "race", toy.default_config(), [f"rl:{res.run_dir}", "random"], games=400, seed=2024)
    view = ev.metrics()["matrix"][f"rl:{res.run_dir}"]["random"]
    wins = round(view["win_rate"] * view["games"])
    interval = wilson(wins, view["games"])
    assert view["games"] == 400
    assert interval.low > 0.5, f"trained agent vs random: {interval.fmt_pct()}"
    # The run directory holds what it promises.
    run = res.run_dir
    for name in ("model.zip", "train_state.json", "record.json", "curves.json", "curves.csv", "curves.png"):
        assert (run / name).exists(), name
    assert (run / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    points = json.loads((run / "curves.json").read_text())["points"]
    assert [p["step"] for p in points] == [0, 2048, 4096, 6144]
    assert set(points[-1]["vs"]) == {"random"} and 0 <= points[-1]["vs"]["random"]["win_rate"] <= 1
    # It was learned: the untrained policy of this seed (the step-0 evaluation) loses to random.
    assert points[0]["vs"]["random"]["win_rate"] < 0.5 < points[-1]["vs"]["random"]["win_rate"]
    assert (run / "curves.csv").read_text().splitlines()[0].startswith("step,opponent,episodes,mean_return")
    assert any((run / "tb").rglob("events.out.tfevents.*"))
    rec = read_record(run)
    assert rec["command"] == "train" and rec["metrics"]["status"] == "completed"
    assert rec["metrics"]["num_timesteps"] == 6144


class InterruptAt(BaseCallback):
    """Simulates Ctrl-C: raises KeyboardInterrupt once the run passes ``at`` timesteps."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.at:
            raise KeyboardInterrupt
        return True


def test_interrupt_then_resume_reaches_the_same_total_and_a_valid_model(tmp_path, toy):
    from sb3_contrib import MaskablePPO

    target = 2500  # not a multiple of the 512-step rollout: both runs must end at 2560
    straight = train(_cfg(tmp_path, "straight", target, final_eval=False))
    assert straight.num_timesteps == expected_total(target, rollout_size(FAST_HP, 4, "maskable-ppo")) == 2560

    cut = train(_cfg(tmp_path, "cut", target, final_eval=False, callbacks=[InterruptAt(1300)]))
    assert cut.status == "interrupted"
    assert cut.num_timesteps == 1024  # the last rollout that was trained on, not the partial one
    rec = read_record(cut.run_dir)
    assert rec["metrics"]["status"] == "interrupted" and rec["metrics"]["interrupted_by"] == "SIGINT"
    state = json.loads((cut.run_dir / "train_state.json").read_text())
    assert state["status"] == "interrupted" and state["num_timesteps"] == 1024
    assert MaskablePPO.load(cut.run_dir / "model.zip", device="cpu").num_timesteps == 1024

    resumed = train(TrainConfig("", "", resume=cut.run_dir, final_eval=False))
    assert resumed.status == "completed"
    assert resumed.num_timesteps == straight.num_timesteps == 2560
    model = MaskablePPO.load(resumed.run_dir / "model.zip", device="cpu")
    assert model.num_timesteps == 2560
    assert read_record(resumed.run_dir)["metrics"]["timesteps_this_session"] == 2560 - 1024
    # Resuming a finished run does nothing more.
    again = train(TrainConfig("", "", resume=cut.run_dir, final_eval=False))
    assert again.num_timesteps == 2560 and again.metrics["timesteps_this_session"] == 0


def test_resume_refuses_a_truncated_checkpoint(tmp_path, toy):
    res = train(_cfg(tmp_path, "run", 512, final_eval=False))
    data = (res.run_dir / "model.zip").read_bytes()
    (res.run_dir / "model.zip").write_bytes(data[: len(data) - 300])
    with pytest.raises(UserError, match="truncated or corrupt|not a valid model zip"):
        train(TrainConfig("", "", resume=res.run_dir))


def test_resume_refuses_a_foreign_checkpoint(tmp_path, toy):
    """A model zip whose metadata names another scenario (e.g. copied between runs) is refused."""
    res = train(_cfg(tmp_path, "run", 512, final_eval=False))
    path = res.run_dir / "model.zip"
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.namelist():
            data = src.read(item)
            if item == "rulebreaker.json":
                meta = json.loads(data)
                meta["scenario"] = "marathon"
                data = json.dumps(meta).encode()
            dst.writestr(item, data)
    path.write_bytes(buf.getvalue())
    with pytest.raises(UserError, match="scenario 'marathon', not 'race'"):
        train(TrainConfig("", "", resume=res.run_dir))


def test_resume_refuses_a_plain_directory(tmp_path):
    with pytest.raises(UserError, match="not a training run directory"):
        train(TrainConfig("", "", resume=tmp_path))


def test_resume_without_model_zip_continues_from_the_newest_valid_checkpoint(tmp_path, toy):
    """Issue 21 item 4: model.zip gone and the newest checkpoint damaged: the run continues from the newest valid
    one, its later curve points and checkpoints dropped (one model's history), and ends at the same total."""
    from sb3_contrib import MaskablePPO

    hp = {"eval_freq": 512, "checkpoint_freq": 512, "keep_checkpoints": 4}
    res = train(_cfg(tmp_path, "run", 2048, final_eval=False, hp=hp))
    run = res.run_dir
    assert json.loads((run / "train_state.json").read_text())["checkpoints"] == [
        "step_512.zip",
        "step_1024.zip",
        "step_1536.zip",
        "step_2048.zip",
    ]
    state = json.loads((run / "train_state.json").read_text())
    state["target"] = 2560  # one more rollout to train after the resume
    (run / "train_state.json").write_text(json.dumps(state))
    (run / "model.zip").unlink()
    (run / "checkpoints" / "step_2048.zip").write_bytes(b"damaged")
    notes: list[str] = []
    again = train(TrainConfig("", "", resume=run, final_eval=False, log=notes.append))
    assert any("step_2048.zip" in n and "skipping" in n for n in notes)
    assert any("newest valid checkpoint" in n and "step_1536.zip" in n for n in notes)
    assert again.status == "completed" and again.num_timesteps == 2560
    assert again.metrics["timesteps_this_session"] == 2560 - 1536
    steps = [p["step"] for p in json.loads((run / "curves.json").read_text())["points"]]
    assert steps == [0, 512, 1024, 1536, 2048, 2560]
    assert any(n.startswith("eval at 2048 steps") for n in notes)  # the lost model's point replaced, not kept
    assert MaskablePPO.load(run / "model.zip", device="cpu").num_timesteps == 2560


def test_resume_without_any_model_is_refused_naming_the_missing_file(tmp_path, toy):
    import shutil

    res = train(_cfg(tmp_path, "run", 512, final_eval=False))
    (res.run_dir / "model.zip").unlink()
    shutil.rmtree(res.run_dir / "checkpoints")
    with pytest.raises(UserError, match=r"model\.zip is missing"):
        train(TrainConfig("", "", resume=res.run_dir))


def test_resuming_a_finished_run_without_final_evaluation_keeps_the_old_one(tmp_path, toy):
    res = train(_cfg(tmp_path, "run", 512))
    before = read_record(res.run_dir)["metrics"]["final_evaluation"]
    assert before["games"] == FAST_HP["final_eval_games"]
    train(TrainConfig("", "", resume=res.run_dir, final_eval=False))
    assert read_record(res.run_dir)["metrics"]["final_evaluation"] == before


def test_out_dir_holding_a_run_is_not_overwritten(tmp_path, toy):
    train(_cfg(tmp_path, "run", 512, final_eval=False))
    with pytest.raises(UserError, match="--resume"):
        train(_cfg(tmp_path, "run", 512, final_eval=False))


def test_hp_override_reaches_the_model_and_unknown_keys_are_refused(tmp_path, toy):
    from sb3_contrib import MaskablePPO

    res = train(_cfg(tmp_path, "run", 512, final_eval=False, hp={"gamma": 0.9, "learning_rate": 0.001}))
    model = MaskablePPO.load(res.run_dir / "model.zip", device="cpu")
    assert model.gamma == 0.9 and model.learning_rate == 0.001
    with pytest.raises(UserError, match="unknown hyperparameter.*gammma"):
        train(_cfg(tmp_path, "bad", 512, hp={"gammma": 0.9}))


@pytest.mark.parametrize("algo", ["ppo", "a2c", "dqn"])
def test_other_algorithms_train_and_play_as_rl_agents(tmp_path, toy, algo):
    from agents.registry import make_agent
    from training.evaluate import evaluate

    hp = {"eval_freq": 10**6, "eval_episodes": 4, "checkpoint_freq": 10**6, "policy_kwargs": {"net_arch": [32]}}
    if algo == "dqn":
        hp |= {"learning_starts": 100, "buffer_size": 2000}
    else:
        hp |= {"n_steps": 64} | ({"batch_size": 64} if algo == "ppo" else {})
    res = train(TrainConfig("toy_pig", "race", algo=algo, steps=1024, out=tmp_path / algo, hp=hp, final_eval=False))
    assert res.status == "completed" and res.num_timesteps >= 1024
    assert make_agent("toy_pig", f"rl:{res.run_dir}", "race").name.startswith("rl:")
    ev = evaluate(toy, "race", toy.default_config(), [f"rl:{res.run_dir}", "random"], games=10, seed=0)
    assert len(ev.records) == 10  # plays legal moves only (an illegal one would raise)


def test_cli_train_and_errors(capsys, tmp_path, toy):
    out = tmp_path / "cli"
    r = run_cli(
        capsys,
        "train",
        "toy_pig",
        "race",
        "--steps",
        "512",
        "--out",
        str(out),
        "--seed",
        "3",
        "--hp",
        "n_steps=128",
        "--hp",
        "batch_size=128",
        "--hp",
        "final_eval_games=20",
        "--hp",
        "eval_episodes=8",
    )
    assert r.code == 0, r.err
    assert "final evaluation" in r.out and "random" in r.out and f"run: {out}" in r.out.replace("\n", "")
    r = run_cli(capsys, "train", "toy_pig", "race", "--hp", "warp=9", "--out", str(tmp_path / "x"))
    assert r.code == 2 and "warp" in r.err and "Traceback" not in r.err
    r = run_cli(capsys, "train", "toy_pig", "race", "--algo", "sarsa", "--out", str(tmp_path / "y"))
    assert r.code == 2 and "maskable-ppo" in r.err
    r = run_cli(capsys, "train", "toy_pig", "race", "--opponent", "wizard", "--out", str(tmp_path / "z"))
    assert r.code == 2 and "wizard" in r.err and "self" in r.err
    (out / "model.zip").write_bytes(b"PK\x03\x04 not really a zip")
    r = run_cli(capsys, "train", "--resume", str(out))
    assert r.code == 2 and "model.zip" in r.err and "Traceback" not in r.err
    r = run_cli(capsys, "train", "--help")
    assert "pickle" in r.out


def test_hyperparameter_files_cover_every_design_id():
    import yaml

    from training.train import HP_DIR, load_hyperparams

    ids = [
        "rulebreaker/WickedAgeDuel-v0",
        "rulebreaker/WickedAgeMelee-v0",
        "rulebreaker/StorytellerHeist-v0",
        "rulebreaker/StorytellerDuel-v0",
        "rulebreaker/BlackbirdSession-v0",
        "rulebreaker/BlackbirdDuel-v0",
        "rulebreaker/CrossroadsEpisode-v0",
        "rulebreaker/HallownestDuel-v0",
    ]
    for algo in ("maskable-ppo", "ppo", "a2c", "dqn"):
        table = yaml.safe_load((HP_DIR / f"{algo}.yaml").read_text())
        assert "default" in table
        assert set(ids) <= set(table), algo
        for env_id in ids:
            hp = load_hyperparams(algo, env_id)  # every key is valid for the algorithm
            assert hp["policy"] == "MlpPolicy"
    assert load_hyperparams("maskable-ppo", "rulebreaker/WickedAgeMelee-v0")["pool_size"] == 20
    assert load_hyperparams("maskable-ppo", "rulebreaker/WickedAgeMelee-v0", {"pool_size": 3})["pool_size"] == 3


@pytest.mark.slow  # worker processes import torch: tens of seconds on a loaded 2-core box
def test_subprocess_vec_env_trains(tmp_path, toy):
    hp = {"n_steps": 64, "batch_size": 64, "policy_kwargs": {"net_arch": [16]}, "eval_freq": 10**6, "eval_episodes": 2}
    res = train(
        TrainConfig(
            "toy_pig", "race", steps=256, n_envs=2, vec="subproc", out=tmp_path / "sub", hp=hp, final_eval=False
        )
    )
    assert res.status == "completed" and res.num_timesteps == 256
    assert json.loads((res.run_dir / "train_state.json").read_text())["vec"] == "subproc"

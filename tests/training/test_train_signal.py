"""SIGTERM to a real `rulebreaker train` process: checkpoint and record written, resume completes the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys
from envs.core.registry import register_ruleset
from tests.toy import RULESET
register_ruleset(RULESET)
from training.cli import main
sys.argv = ["rulebreaker", *sys.argv[1:]]
main()
"""


def _cli(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CI": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
@pytest.mark.training
def test_sigterm_saves_and_resume_finishes(tmp_path):
    run = tmp_path / "run"
    hp = [
        "--hp",
        "n_steps=64",
        "--hp",
        "batch_size=64",
        "--hp",
        "checkpoint_freq=256",
        "--hp",
        "eval_freq=100000",
        "--hp",
        "final_eval_games=10",
        "--hp",
        "policy_kwargs={net_arch: [32]}",
    ]
    proc = _cli("train", "toy_pig", "race", "--steps", "2000000", "--out", str(run), *hp)
    state_file = run / "train_state.json"
    deadline = time.time() + 120
    while time.time() < deadline:  # wait for the first periodic checkpoint: training is under way
        if state_file.exists() and json.loads(state_file.read_text()).get("num_timesteps", 0) > 0:
            break
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("training never checkpointed: " + proc.communicate()[1][-2000:])
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "interrupted (SIGTERM)" in err and "--resume" in err
    state = json.loads(state_file.read_text())
    record = json.loads((run / "record.json").read_text())
    assert state["status"] == "interrupted" == record["metrics"]["status"]
    done = state["num_timesteps"]
    assert done > 0 and done % 256 == 0  # a whole rollout (4 envs x 64 steps)
    # Shrink the target so the resumed run is short, then resume to it.
    state["target"] = done + 512
    state_file.write_text(json.dumps(state))
    proc = _cli("train", "--resume", str(run))
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    final = json.loads(state_file.read_text())
    assert final["status"] == "completed" and final["num_timesteps"] == done + 512

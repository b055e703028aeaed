"""Usage sees every decision of a trained (RL) subject (issue 17: "with a trained agent as subject the trace
is blind"). The hallownest duel: the RL agent's usage, as discovery's RL stage computes it from its games
against every persona, must hold every decision it made — investments, defences (parry, dodge) and Death's
Door — counted independently by a spy that wraps the agent's policy and watches each call it answers.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from agents.registry import agent_names, make_agent
from envs.core.dice import Rng
from envs.core.game import State
from envs.core.registry import get_ruleset
from training.discover import rl as rl_mod
from training.discover.budgets import Budget
from training.discover.pipeline import make_discovery
from training.discover.stages import stage_round_robin
from training.runner import _agent, play_game
from training.train import TrainConfig, train


class Spy:
    """Wraps a policy; counts (context, option) of every decision it answers, changing nothing."""

    def __init__(self, inner, counts: Counter) -> None:
        self.inner = inner
        self.name = inner.name
        self.counts = counts

    def act(self, state: State, mask: np.ndarray, rng: Rng) -> int:
        a = self.inner.act(state, mask, rng)
        self.counts[(state.decision_context(), state.option_of(a) or state.action_label(a))] += 1
        return a


def test_rl_subject_usage_covers_every_decision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rs = get_ruleset("hallownest")
    run = train(
        TrainConfig(
            "hallownest",
            "duel",
            steps=128,
            seed=0,
            out=tmp_path / "rl" / "seed0",
            n_envs=1,
            hp={"n_steps": 128, "batch_size": 64, "n_epochs": 1},
            final_eval=False,
        )
    ).run_dir
    agent = f"rl:{run}"
    monkeypatch.setattr(rl_mod, "train_runs", lambda d, exploit=None: {"seed0": str(run)})
    budget = Budget(
        name="test",
        round_robin_games=4,
        sensitivity_games=0,
        rl_steps=128,
        rl_eval_games=6,
        rl_seeds=1,
        build_candidates=0,
        build_games=0,
    )
    d = make_discovery(rs, "duel", None, budget, 0, 1, tmp_path, rl=True)
    personas = agent_names("hallownest")
    stage_round_robin(d, personas)
    out = rl_mod.rl_stage(d, personas)
    assert out is not None and out["agent"] == agent
    usage = out["usage"]
    # the independent count: every evaluation game replayed with a spy around the RL agent's policy
    counts: Counter = Counter()
    ev_jobs, meta = rl_mod.eval_jobs(d, agent, personas, d.config)
    for job, m in zip(ev_jobs, meta, strict=True):
        seat = m[2]
        pols = [_agent(job.ruleset, job.scenario, a) for a in job.agents]
        pols[seat] = Spy(make_agent("hallownest", agent, "duel"), counts)
        play_game(job, pols)
    total = sum(counts.values())
    seen: dict[str, Counter] = {}
    for (ctx, opt), c in counts.items():
        seen.setdefault(ctx, Counter())[opt] += c
    assert set(usage) == set(seen), (sorted(usage), sorted(seen))
    for ctx, cnt in seen.items():
        n = sum(cnt.values())
        assert usage[ctx] == pytest.approx({o: c / n for o, c in cnt.items()}, abs=1e-6), ctx
    assert total > 100
    # what issue 17 found missing: the agent's investments, its defences and its Death's Door decisions
    assert any(o.startswith("invest_") for o in usage["turn"]), usage["turn"]
    assert usage["defense"] and set(usage["defense"]) <= {"no_defense", "parry", "dodge"}, usage["defense"]
    assert usage["heart_zero"] and set(usage["heart_zero"]) <= {"deaths_door", "unconscious"}

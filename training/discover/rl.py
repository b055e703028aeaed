"""The RL stages of discovery: train (two runs in parallel, one per core), evaluate against every
persona, and — with a variant — the transplant test.

Without a variant the runs are ``budget.rl_seeds`` seeds on the rules under study (self-play mixed with
personas); the best one plays on. With a variant, one run learns the variant and one the rules as written,
so the transplant gap (the variant's own policy against the policy trained on the rules as written, both
under the variant) measures how much *new* behaviour the variant rewards.

In a multi-seat scenario one more run, the **best-response exploiter**, trains in the same pool against a
fixed opponent: the best persona at every other seat (the search subject's base: a cheap opponent to
learn the game against for the budget's RL steps). That exploiter is then **fine-tuned against the
subject itself** (:func:`finetune_against`): warm-started from its weights, it trains :func:`subject_steps`
more steps with the search subject at every other seat inside the env (the subject decides ~50 times a
second, so only a slice of the budget's RL steps fits), and :func:`~training.discover.verdicts.best_response`
plays it against the subject on the verdict deals, paired with the subject in self-play on the same deals:
the certificate's ``best_response_edge``.
"""

from __future__ import annotations

import glob
import os
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from envs.core.config import config_dict
from results.findings import transplant_findings
from results.records import GameRecord
from results.stats import Interval, mean_interval, wilson
from training.discover.discovery import Discovery, interval_dict
from training.discover.verdicts import usage_of
from training.evaluate import matchup_jobs
from training.runner import GameJob
from training.train import TrainConfig, set_torch_threads, train

EXPLOITER = "exploiter"
"""The label (and run folder under ``rl/``) of the best-response exploiter."""
EXPLOITER_SEED = 2
SUBJECT_RUN = "exploiter_subject"
"""The run folder under ``rl/`` of the exploiter fine-tuned against the subject."""
SUBJECT_SHARE = {"quick": 0.1, "standard": 0.1, "deep": 0.02}
"""Share of the budget's RL steps the exploiter fine-tunes against the subject (other budgets: quick's)."""
SUBJECT_ENVS = 2
"""Envs of the fine-tune (in two processes with ``--workers`` ≥ 2: the subject's search is the cost)."""
SUBJECT_N_STEPS = 128
"""Steps per env per PPO rollout in the fine-tune: a 256-step rollout, one minibatch of 256."""
MIN_SUBJECT_ROLLOUTS = 2
"""Fewer rollouts than this fit the work cap: no fine-tune (one PPO update on one rollout teaches little)."""


def _train_one(args: tuple[str, str, str | None, int, int, str, str]) -> str:
    ruleset, scenario, rules, steps, seed, out, opponent = args
    set_torch_threads(1)  # two runs in parallel, one per core
    if (Path(out) / "train_state.json").exists():  # a rerun into the same folder continues (or reuses) that run
        res = train(TrainConfig(ruleset=ruleset, scenario=scenario, resume=Path(out), final_eval=False, workers=1))
    else:
        res = train(
            TrainConfig(
                ruleset=ruleset,
                scenario=scenario,
                steps=steps,
                opponent=opponent,
                seed=seed,
                out=Path(out),
                rules=Path(rules) if rules else None,
                final_eval=False,
                workers=1,
                n_envs=None,
            )
        )
    return str(res.run_dir)


def _opponent_mode(d: Discovery) -> str:
    return "mix" if d.num_players >= 2 else "random"


def train_runs(d: Discovery, exploit: str | None = None) -> dict[str, str]:
    """Label -> run dir, trained in parallel processes (one per worker).

    ``exploit``: a persona; in a multi-seat scenario the best-response exploiter (label :data:`EXPLOITER`)
    trains against it at every other seat, beside the other runs.
    """
    steps = d.budget.rl_steps
    rl_dir = d.out_dir / "rl"
    mode = _opponent_mode(d)
    rules = str(d.variant) if d.variant is not None else None
    plan: dict[str, tuple[str | None, int, str]]
    if d.variant is not None:
        plan = {"variant": (rules, d.seed, mode), "as_written": (None, d.seed, mode)}
    else:
        plan = {f"seed{i}": (None, d.seed + i, mode) for i in range(max(1, d.budget.rl_seeds))}
    if exploit is not None and d.num_players > 1:
        plan[EXPLOITER] = (rules, d.seed + EXPLOITER_SEED, exploit)
    args = [
        (d.ruleset.name, d.scenario, rules_, steps, seed, str(rl_dir / label), opponent)
        for label, (rules_, seed, opponent) in plan.items()
    ]
    if d.progress:
        d.progress("training RL agents", 0, len(args))
    workers = min(len(args), max(1, d.workers))
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            dirs = list(pool.map(_train_one, args))
    else:
        dirs = [_train_one(a) for a in args]
    if d.progress:
        d.progress("training RL agents", len(args), len(args))
    return dict(zip(plan, dirs, strict=True))


def eval_jobs(d: Discovery, agent: str, personas: list[str], config: Any) -> tuple[list[GameJob], list]:
    """The RL agent's evaluation games (one seat: alone; else against every persona, seats rotated) and their
    matchup rows ``(agent, opponent, agent's seat)``."""
    jobs: list[GameJob] = []
    meta: list[tuple[str, str, int]] = []
    games = d.budget.rl_eval_games
    if d.num_players == 1:
        j, m = matchup_jobs(d.ruleset, d.scenario, config, [agent], games, d.seed, trace=True)
        jobs += j
        meta += m
    else:
        for p in personas:
            j, m = matchup_jobs(d.ruleset, d.scenario, config, [agent, p], games, d.seed, trace=True)
            keep = [(jj, mm) for jj, mm in zip(j, m, strict=True) if mm[0] == agent]
            jobs += [x[0] for x in keep]
            meta += [x[1] for x in keep]
    return jobs, meta


def _vs_personas(d: Discovery, agent: str, personas: list[str], config: Any) -> tuple[list[GameRecord], list]:
    jobs, meta = eval_jobs(d, agent, personas, config)
    recs = d.play(f"rl_eval:{agent.split('/')[-1]}", jobs)
    return recs, meta


def _value(d: Discovery, recs: list[GameRecord], meta: list) -> Interval:
    if d.num_players == 1:
        return mean_interval([r.returns[0] for r in recs])
    return wilson(sum(1 for r, m in zip(recs, meta, strict=True) if r.winner == m[2]), len(recs))


def rl_stage(d: Discovery, personas: list[str]) -> dict[str, Any] | None:
    rr_vals = d.sections["round_robin"]["values"]
    best = max((a for a in personas if a != "random"), key=lambda a: rr_vals[a]["value"], default="random")
    runs = train_runs(d, exploit=best)
    agents = {label: f"rl:{path}" for label, path in runs.items()}
    d.rl_agents.update(agents)
    evals: dict[str, Any] = {}
    for label, agent in agents.items():
        if label in ("as_written", EXPLOITER):
            continue
        recs, meta = _vs_personas(d, agent, personas, d.config)
        per: dict[str, Any] = {}
        for p in personas:
            sel = [(r, m) for r, m in zip(recs, meta, strict=True) if m[1] == p or d.num_players == 1]
            per[p] = interval_dict(_value(d, [r for r, _ in sel], [m for _, m in sel]))
        evals[label] = {
            "agent": agent,
            "value": interval_dict(_value(d, recs, meta)),
            "vs": per,
            "records": recs,
            "meta": meta,
        }
    chosen = "variant" if "variant" in evals else max(evals, key=lambda k: evals[k]["value"]["value"])
    ev = evals[chosen]
    agent = ev["agent"]
    # gap over the best persona
    if d.num_players == 1:
        jobs, _ = matchup_jobs(d.ruleset, d.scenario, d.config, [best], d.budget.rl_eval_games, d.seed)
        best_recs = d.play("rl_gap", jobs)
        diffs = [a.returns[0] - b.returns[0] for a, b in zip(ev["records"], best_recs, strict=True)]
        gap = mean_interval(diffs)
    else:
        v = ev["vs"].get(best)
        fair = 1 / d.num_players
        gap = Interval(v["value"] - fair, v["low"] - fair, v["high"] - fair) if v else Interval(0, 0, 0)
    curve_png = next(iter(glob.glob(os.path.join(runs[chosen], "curves.png"))), None)
    if curve_png:  # keep the report folder self-contained
        shutil.copyfile(curve_png, d.out_dir / "learning_curve.png")
        curve_png = str(d.out_dir / "learning_curve.png")
    per_persona = (
        ""
        if d.num_players == 1
        else " Win rate per persona: " + ", ".join(f"{p} {v['value']:.3f}" for p, v in ev["vs"].items()) + "."
    )
    out: dict[str, Any] = {
        "agent": agent,
        "runs": runs,
        "steps": d.budget.rl_steps,
        "chosen": chosen,
        "value": ev["value"],
        "vs": ev["vs"],
        "gap_vs_best_persona": interval_dict(gap),
        "best_persona": best,
        "learning_curve_png": curve_png,
        "summary": (
            f"MaskablePPO trained {d.budget.rl_steps} steps ({_opponent_mode(d)} opponents), run "
            f"`{runs[chosen]}`; value {ev['value']['value']:.3f} [{ev['value']['low']:.3f}, "
            f"{ev['value']['high']:.3f}]; against the best persona ({best}) "
            f"{gap.value:+.3f} [{gap.low:+.3f}, {gap.high:+.3f}]." + per_persona
        ),
    }
    if "as_written" in runs:
        out["transplant"] = transplant(d, agents["variant"], agents["as_written"])
    if EXPLOITER in agents:
        out["exploiter"] = {"agent": agents[EXPLOITER], "opponent": best, "steps": d.budget.rl_steps}
    out["usage"] = usage_of(ev["records"], [m[2] if d.num_players > 1 else 0 for m in ev["meta"]])
    return out


def transplant(d: Discovery, variant_agent: str, written_agent: str) -> dict[str, Any]:
    """Under the variant: the variant's own policy against the one trained on the rules as written."""
    games = d.budget.rl_eval_games
    if d.num_players == 1:
        ja, _ = matchup_jobs(d.ruleset, d.scenario, d.config, [variant_agent], games, d.seed)
        jb, _ = matchup_jobs(d.ruleset, d.scenario, d.config, [written_agent], games, d.seed)
        ra, rb = d.play("transplant", ja), d.play("transplant_written", jb)
        gap = mean_interval([a.returns[0] - b.returns[0] for a, b in zip(ra, rb, strict=True)])
        example = d.game_id("transplant", ja[0])
    else:
        j, m = matchup_jobs(d.ruleset, d.scenario, d.config, [variant_agent, written_agent], games, d.seed)
        recs = d.play("transplant", j)
        wins = sum(1 for r, mm in zip(recs, m, strict=True) if r.winner == mm[2] and mm[0] == variant_agent)
        n = sum(1 for mm in m if mm[0] == variant_agent)
        iv = wilson(wins, n)
        fair = 1 / d.num_players
        gap = Interval(iv.value - fair, iv.low - fair, iv.high - fair)
        example = d.game_id("transplant", j[0])
    d.add_all(transplant_findings(gap, example, d.thresholds))
    return {"gap": interval_dict(gap), "config": config_dict(d.config) == config_dict(d.base_config)}


def subject_steps(d: Discovery) -> tuple[int, str]:
    """The exploiter's fine-tune against the subject: its steps (0: none) and why that many.

    ``SUBJECT_SHARE`` of the budget's RL steps, capped where ``search_work`` runs out: a fine-tune step costs
    the subject's decisions until the learner's next one, about ``(n - 1) × length`` units of
    :attr:`Budget.search_work` (a search game with one search seat costs ``length² / n``, with ``length / n``
    learner steps), so the cap is ``search_work / ((n - 1) × length)``. Rounded down to whole 256-step
    rollouts; fewer than :data:`MIN_SUBJECT_ROLLOUTS` is none.
    """
    n = d.num_players
    rollout = SUBJECT_ENVS * SUBJECT_N_STEPS
    want = int(SUBJECT_SHARE.get(d.budget.name, SUBJECT_SHARE["quick"]) * d.budget.rl_steps)
    why = f"{SUBJECT_SHARE.get(d.budget.name, SUBJECT_SHARE['quick']):.0%} of the budget's {d.budget.rl_steps} RL steps"
    length = (d.sections.get("round_robin") or {}).get("mean_length")
    if d.budget.search_work is not None and length and n > 1:
        fit = int(d.budget.search_work / ((n - 1) * float(length)))
        if fit < want:
            want, why = fit, f"the search work cap ({d.budget.search_work:,.0f} / ((n-1) x mean length {length}))"
    steps = (want // rollout) * rollout
    if steps < MIN_SUBJECT_ROLLOUTS * rollout:
        return 0, f"{why} is under {MIN_SUBJECT_ROLLOUTS} rollouts of {rollout} steps: no fine-tune at this budget"
    return steps, why


def finetune_against(d: Discovery, warm: str, opponent: str, steps: int, label: str = SUBJECT_RUN) -> dict[str, Any]:
    """Train the model of run ``warm`` (``rl:<dir>``) ``steps`` more steps with ``opponent`` at every other seat.

    The learner's seat rotates (as in training); PPO keeps the warm run's hyperparameters but rolls out
    :data:`SUBJECT_ENVS` × :data:`SUBJECT_N_STEPS` steps at a time. Deterministic for the discovery's seed
    (in one process or two). Returns ``{"agent": "rl:<dir>", "steps", "opponent", "warm_start", "seconds"}``.
    """
    from agents.registry import make_agent
    from agents.rl import MODEL_NAME, algo_class, model_path, read_meta
    from training.train.checkpoints import save_model
    from training.train.vec import make_vec_env

    t0 = time.perf_counter()
    set_torch_threads(1)
    source = model_path(warm.removeprefix("rl:"))
    meta = {k: v for k, v in read_meta(source).items() if k not in ("num_timesteps", "architecture", "meta_version")}
    meta["opponent"] = opponent
    out = d.out_dir / "rl" / label
    out.mkdir(parents=True, exist_ok=True)
    opponents = [make_agent(d.ruleset.name, opponent, d.scenario) for _ in range(SUBJECT_ENVS)]
    vec = make_vec_env(d.ruleset.name, d.scenario, d.config, opponents, "subproc" if d.workers > 1 else "dummy")
    try:
        model = algo_class(meta.get("algo", "maskable-ppo")).load(
            source,
            env=vec,
            device="cpu",
            n_steps=SUBJECT_N_STEPS,
            batch_size=SUBJECT_ENVS * SUBJECT_N_STEPS,
            tensorboard_log=None,
        )
        model.set_random_seed(d.seed + EXPLOITER_SEED + 1)
        model.learn(total_timesteps=steps, reset_num_timesteps=True)
        save_model(model, out / MODEL_NAME, meta)
    finally:
        vec.close()
    return {
        "agent": f"rl:{out}",
        "steps": int(model.num_timesteps),
        "opponent": opponent,
        "warm_start": warm,
        "seconds": round(time.perf_counter() - t0, 1),
    }

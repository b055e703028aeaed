"""Evaluations of a training run: periodic ones against each persona (the learning curves) and the final one.

Periodic: SB3's (maskable) ``evaluate_policy`` against every persona on the same deals and seats each time,
written to ``curves.json``/``.csv``/``.png``. Final: the trained agent as an ``rl:`` agent through the
numpy fast path, paired seeds, against every persona (:func:`final_evaluation`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.registry import agent_names, make_agent
from envs.core.registry import get_ruleset
from results.records import atomic_write_json, atomic_write_text
from results.stats import mean_interval, paired_difference, wilson
from training.evaluate import evaluate
from training.runner import forget_agent
from training.train.vec import make_vec_env


def _ci(values: list[float]) -> tuple[float, list[float]]:
    mi = mean_interval(values)
    return round(mi.value, 6), [round(mi.low, 6), round(mi.high, 6)]


def _evaluate_policy(masked: bool) -> Callable[..., Any]:
    """SB3's ``evaluate_policy``, or sb3-contrib's maskable one (which passes the action masks)."""
    # lazy: SB3 (and torch) load only when a model is evaluated
    if masked:
        from sb3_contrib.common.maskable.evaluation import evaluate_policy as maskable_evaluate_policy

        return maskable_evaluate_policy
    from stable_baselines3.common.evaluation import evaluate_policy

    return evaluate_policy


class PersonaEvaluator:
    """Plays the current model against each persona with SB3's (maskable) ``evaluate_policy``."""

    def __init__(self, ruleset: str, scenario: str, config: Any, episodes: int, seed: int, masked: bool) -> None:
        self.num_players = get_ruleset(ruleset).scenario(scenario).players(config)
        self.names = agent_names(ruleset)
        self.episodes = episodes
        self.seed = seed
        self.masked = masked
        n_eval = max(1, min(8, episodes))
        self.envs: dict[str, Any] = {}
        if self.num_players == 1:
            self.names = ["solo"]
            self.envs["solo"] = make_vec_env(ruleset, scenario, config, [None] * n_eval)
        else:
            for name in self.names:
                opps = [make_agent(ruleset, name, scenario) for _ in range(n_eval)]
                self.envs[name] = make_vec_env(ruleset, scenario, config, opps)

    def __call__(self, model: Any) -> dict[str, Any]:
        evaluate_policy = _evaluate_policy(self.masked)
        out: dict[str, Any] = {}
        for name, env in self.envs.items():
            env.seed(self.seed)  # the same deals and seats at every evaluation: curves compare like with like
            for i in range(env.num_envs):
                env.env_method("restart_rotation", i, indices=[i])
            wins = [0]

            def count(loc: dict[str, Any], _glob: dict[str, Any], wins: list[int] = wins) -> None:
                info = loc["info"]
                if loc["done"] and "outcome" in info and info["outcome"]["winner"] == info.get("learner_seat"):
                    wins[0] += 1

            rewards, _lengths = evaluate_policy(
                model,
                env,
                n_eval_episodes=self.episodes,
                deterministic=True,
                return_episode_rewards=True,
                callback=count,
            )
            mean, ci = _ci([float(r) for r in rewards])
            wi = wilson(wins[0], len(rewards))
            out[name] = {
                "episodes": len(rewards),
                "mean_return": mean,
                "return_ci": ci,
                "win_rate": round(wi.value, 6),
                "win_ci": wi.as_list(),
            }
        return out

    def close(self) -> None:
        for env in self.envs.values():
            env.close()


# -- learning curves --------------------------------------------------------------------------------
def read_curves(run_dir: Path) -> list[dict[str, Any]]:
    p = run_dir / "curves.json"
    if not p.exists():
        return []
    try:
        return list(json.loads(p.read_text())["points"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def write_curves(run_dir: Path, points: list[dict[str, Any]]) -> None:
    atomic_write_json(run_dir / "curves.json", {"points": points})
    rows = ["step,opponent,episodes,mean_return,return_low,return_high,win_rate,win_low,win_high"]
    for pt in points:
        for name, m in pt["vs"].items():
            rows.append(
                ",".join(
                    str(x)
                    for x in (
                        pt["step"],
                        name,
                        m["episodes"],
                        m["mean_return"],
                        *m["return_ci"],
                        m["win_rate"],
                        *m["win_ci"],
                    )
                )
            )
    atomic_write_text(run_dir / "curves.csv", "\n".join(rows) + "\n")


def plot_curves(run_dir: Path, title: str, baselines: dict[str, float] | None = None) -> Path | None:
    """curves.png: mean return (and, with opponents, win rate) against each opponent over timesteps."""
    points = read_curves(run_dir)
    if not points:
        return None
    import matplotlib  # lazy: matplotlib takes a good part of a second to import

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(points[0]["vs"])
    solo = names == ["solo"]
    fig, axes = plt.subplots(1, 1 if solo else 2, figsize=(6 if solo else 11, 4), squeeze=False)
    steps = [p["step"] for p in points]
    ax = axes[0][0]
    for name in names:
        ys = [p["vs"][name]["mean_return"] for p in points]
        lo = [p["vs"][name]["return_ci"][0] for p in points]
        hi = [p["vs"][name]["return_ci"][1] for p in points]
        line = ax.plot(steps, ys, marker="o", ms=3, label="agent" if solo else f"vs {name}")[0]
        ax.fill_between(steps, lo, hi, alpha=0.15, color=line.get_color())
    for i, (name, value) in enumerate((baselines or {}).items()):
        ax.axhline(value, ls="--", lw=1, label=f"{name} (persona alone)", color=f"C{(i + 1) % 10}")
    ax.set_xlabel("timesteps")
    ax.set_ylabel("mean return")
    ax.set_title("reward")
    ax.legend(fontsize=7)
    if not solo:
        ax = axes[0][1]
        for name in names:
            ys = [p["vs"][name]["win_rate"] for p in points]
            lo = [p["vs"][name]["win_ci"][0] for p in points]
            hi = [p["vs"][name]["win_ci"][1] for p in points]
            line = ax.plot(steps, ys, marker="o", ms=3, label=f"vs {name}")[0]
            ax.fill_between(steps, lo, hi, alpha=0.15, color=line.get_color())
        ax.set_xlabel("timesteps")
        ax.set_ylabel("win rate (Wilson 95%)")
        ax.set_ylim(0, 1)
        ax.set_title("win rate")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    out = run_dir / "curves.png"
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


# -- final evaluation (fast numpy path, paired seeds) --------------------------------------------------
def final_evaluation(
    run_dir: Path, ruleset: str, scenario: str, config: Any, games: int, seed: int, workers: int = 1
) -> dict[str, Any]:
    """The trained agent against every persona; "beats" needs the interval to clear parity.

    Two or more seats: win rate against a field of the persona, Wilson 95% low end above the fair share
    (1/seats); also the return edge (agent's return minus the persona seats' mean, 95% interval), which
    matters where games often end without a single winner. One seat: the agent's mean-return interval
    lies wholly above the persona's (also reported: the paired edge over the same deal seeds).
    """
    rs = get_ruleset(ruleset)
    n = rs.scenario(scenario).players(config)
    me = f"rl:{run_dir}"
    # the runner caches agents by name; a run resumed in this process must not be judged by its old weights.
    forget_agent(ruleset, scenario, me)
    out: dict[str, Any] = {"games": games, "seed": seed, "num_players": n, "vs": {}}
    if n == 1:
        ev = evaluate(rs, scenario, config, [me, *agent_names(ruleset)], games, seed, workers=workers)
        per = ev.metrics()["agents"]
        mine = per[me]
        out["agent"] = mine
        by_agent: dict[str, list[float]] = {}
        for r in ev.records:  # in job order: game g of every agent is played on the same deal seed
            by_agent.setdefault(r.agents[0], []).append(r.returns[0])
        for name in agent_names(ruleset):
            other = per[name]
            edge = paired_difference(by_agent[name], by_agent[me])
            out["vs"][name] = {
                "agent_mean_return": mine["mean_return"],
                "agent_return_ci": mine["return_ci"],
                "persona_mean_return": other["mean_return"],
                "persona_return_ci": other["return_ci"],
                "beats": mine["return_ci"][0] > other["return_ci"][1],
                "paired_edge": round(edge.value, 6),
                "paired_edge_ci": edge.as_list(),
            }
    else:
        fair = 1.0 / n
        for name in agent_names(ruleset):
            ev = evaluate(rs, scenario, config, [me, name], games, seed, workers=workers)
            m = ev.metrics()["matrix"][me][name]
            # Return edge: per game, the agent's return minus the mean return of the persona seats.
            edges = [
                r.returns[seat] - sum(x for k, x in enumerate(r.returns) if k != seat) / (n - 1)
                for r, (fa, _fb, seat) in zip(ev.records, ev.matchups, strict=True)
                if fa == me
            ]
            edge_mean, edge_ci = _ci(edges)
            out["vs"][name] = {
                **m,
                "fair_share": round(fair, 6),
                "beats": m["win_ci"][0] > fair,
                "return_edge": edge_mean,
                "return_edge_ci": edge_ci,
                "beats_on_return": edge_ci[0] > 0,
            }
    out["beats_all"] = all(v["beats"] for v in out["vs"].values())
    out["not_beaten"] = [k for k, v in out["vs"].items() if not v["beats"]]
    return out

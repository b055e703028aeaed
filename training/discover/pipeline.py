"""The discovery pipeline: the stages in order, then the findings sorted and the result as findings.json holds it.

Stages (all on common random numbers so that comparisons are paired):
1. persona round-robin;
2. RL training and evaluation of the RL agent against every persona (when the budget allows); in a
   multi-seat scenario a best-response exploiter trains beside it, against the best persona (fine-tuned
   against the search subject after the verdicts);
3-4. verdicts (:mod:`~training.discover.verdicts`): the search agent over the best persona is the subject
   (``search:<best persona>@<n>#rollout``; ``#rollout#exact`` where the game solves in 20,000 states);
   its usage per decision context; restricted play (Jaffe et al., AIIDE 2012) with each option group
   forbidden and forced, the subject re-optimizing under the restriction, paired by deal; the strength
   certificate's budget-doubling games;
5. rule sensitivity: each declared knob perturbed, the same games replayed by the personas and by the
   adapting search subject;
   with a variant: the variant against the rules as written (windfalls show here);
6. transplant (variant + RL): the policy trained on the rules as written against the variant's own;
7. seat advantage, game length and end reasons, resource trajectories, snowballing;
8. the exact optimum where tractable (multi-seat: each seat's best response to the base; each restriction's
   exact restricted optimum), the strength certificate (with the exploiter's edge over the subject),
   findings resting on the subject's strength marked provisional when it is not converged, and whole builds
   where a build phase exists.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.registry import agent_names
from envs.core.config import config_hash, load_config, variant_meta
from envs.core.game import Ruleset
from results.findings import Thresholds, assign_ids, exploit_findings, provisional
from training.discover.budgets import Budget
from training.discover.discovery import Discovery, Progress, agent_values
from training.discover.exact import exact_stage
from training.discover.stages import (
    stage_round_robin,
    stage_sensitivity,
    stage_structure,
    stage_variant_vs_written,
)
from training.discover.verdicts import best_response, stage_builds, stage_verdicts, strength_certificate

RlStage = Callable[[Discovery, list[str]], dict[str, Any] | None]
"""The RL stage (:func:`training.discover.rl.rl_stage`), passed in so a run without RL never trains."""


def run_discovery(d: Discovery, rl_stage: RlStage | None = None) -> dict[str, Any]:
    t_start = time.perf_counter()
    personas = agent_names(d.ruleset.name)
    rr = stage_round_robin(d, personas)
    values = agent_values(rr)
    best_persona = max((a for a in personas if a != "random"), key=lambda a: values[a].value, default="random")
    strong = best_persona
    agents = list(personas)
    if rl_stage is not None and d.rl and d.budget.rl_steps > 0:
        t0 = time.perf_counter()
        rl = rl_stage(d, personas)
        d.timings["rl"] = time.perf_counter() - t0
        if rl and rl.get("agent"):
            d.sections["rl"] = rl
            if rl["value"]["value"] >= values[best_persona].value:
                strong = rl["agent"]
            d.add_all(
                exploit_findings(rl.get("gap_vs_best_persona"), best_persona, rl.get("example", ""), d.thresholds)
            )
            agents = [*personas, rl["agent"]]
    d.sections["strongest_before_search"] = strong
    d.sections["best_persona"] = best_persona
    verdicts = stage_verdicts(d, best_persona)  # the search subject over the best persona: every verdict's player
    d.sections["strong_agent"] = verdicts["subject"]
    best_response(d)  # multi-seat with RL: the exploiter fine-tuned against the subject, played against it
    stage_sensitivity(d, personas, rr)
    stage_variant_vs_written(d, personas, rr)
    strong_recs = [r for r in rr.records if best_persona in r.agents] or rr.records
    stage_structure(d, rr, strong_recs, d.written_records)
    t0 = time.perf_counter()
    exact_stage(d, agents)
    d.timings["exact"] = time.perf_counter() - t0
    strength = strength_certificate(d)
    d.findings = provisional(d.findings, strength)  # not converged: no strength-resting finding stays high
    stage_builds(d, best_persona)
    d.timings["total"] = time.perf_counter() - t_start
    d.findings.sort(key=lambda f: (-f.severity.rank, f.kind.value, f.subject))
    assign_ids(d.ruleset.name, d.scenario, d.findings)
    return result_json(d)


def result_json(d: Discovery) -> dict[str, Any]:
    meta = variant_meta(d.variant) if d.variant else {}
    return {
        "ruleset": d.ruleset.name,
        "scenario": d.scenario,
        "rules_hash": config_hash(d.config),
        "seed": d.seed,
        "budget": d.budget.name,
        "variant": str(d.variant) if d.variant else None,
        "variant_meta": meta,
        "thresholds": d.thresholds.model_dump(),
        "findings": [f.to_json() for f in d.findings],
        "strength": d.sections.get("strength"),
        **(
            {"builds": {"best": d.sections["builds"]["best"], "worst": d.sections["builds"]["worst"]}}
            if d.sections.get("builds")
            else {}
        ),
    }


def make_discovery(
    ruleset: Ruleset,
    scenario: str,
    variant: Path | None,
    budget: Budget,
    seed: int,
    workers: int,
    out_dir: Path,
    thresholds: Thresholds | None = None,
    progress: Progress | None = None,
    rl: bool = True,
) -> Discovery:
    config = load_config(ruleset, variant)
    base = load_config(ruleset)
    return Discovery(
        ruleset,
        scenario,
        config,
        base,
        variant,
        budget,
        seed,
        workers,
        thresholds or Thresholds(),
        out_dir,
        progress,
        rl,
    )

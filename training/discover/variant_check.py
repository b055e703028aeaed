"""Does discovery catch the planted variants? Recall and false alarms over ``envs/*/variants/*.toml``.

A planted variant (``kind = "windfall" | "exploit"``) counts as caught when discovery under the variant
reports a new finding — one that discovery under the rules as written (same seed, same budget) does not
report for the same subject — of a kind that catches its sort of break: for a windfall, rule sensitivity
or resource trajectories (``fragile_rule``, ``resource_runaway``); for a distinctive exploit, usage,
restricted play or the transplant gap (``exploit``, ``dominant_strategy``); or of a kind its own
``expect`` list names. A control variant raises a false alarm when it gets a
high-severity finding that the rules as written do not also get.

    python -m training.discover.variant_check [RULESET ...] [--budget quick] [--no-rl] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from envs.core.config import variant_meta
from envs.core.game import Ruleset
from envs.core.registry import all_rulesets
from training.discover.budgets import BUDGETS, Budget
from training.discover.pipeline import make_discovery, run_discovery
from training.discover.rl import rl_stage

_Key = tuple[str, str]
CATCHES = {"windfall": {"fragile_rule", "resource_runaway"}, "exploit": {"exploit", "dominant_strategy"}}


def variant_files(ruleset: Ruleset) -> list[Path]:
    d = ruleset.variants_dir
    return sorted(d.glob("*.toml")) if d and d.exists() else []


def _findings(
    ruleset: Ruleset, scenario: str, variant: Path | None, budget: Budget, seed: int, workers: int, rl: bool
) -> list[dict[str, Any]]:
    with TemporaryDirectory() as tmp:
        d = make_discovery(ruleset, scenario, variant, budget, seed, workers, Path(tmp), rl=rl)
        findings: list[dict[str, Any]] = run_discovery(d, rl_stage if rl else None)["findings"]
        return findings


def check_ruleset(
    ruleset: Ruleset, budget: Budget, seed: int = 0, workers: int = 2, rl: bool = False, log: Any = print
) -> list[dict[str, Any]]:
    results = []
    defaults: dict[str, set[_Key]] = {}
    for path in variant_files(ruleset):
        meta = variant_meta(path)
        kind = meta.get("kind", "control")
        expect = set(meta.get("expect", []))
        scenarios = meta.get("scenarios") or list(ruleset.scenarios)
        t0 = time.perf_counter()
        new_all: list[dict[str, Any]] = []
        for sc in scenarios:
            if sc not in defaults:
                defaults[sc] = {
                    (f["kind"], f["subject"]) for f in _findings(ruleset, sc, None, budget, seed, workers, rl)
                }
            for f in _findings(ruleset, sc, path, budget, seed, workers, rl):
                if (f["kind"], f["subject"]) not in defaults[sc]:
                    new_all.append({**f, "scenario": sc})
        new_kinds = {f["kind"] for f in new_all}
        if kind == "control":
            alarms = [f for f in new_all if f["severity"] == "high"]
            ok = not alarms
        else:
            alarms = []
            ok = bool((expect | CATCHES.get(kind, set())) & new_kinds)
        row = {
            "ruleset": ruleset.name,
            "variant": path.name,
            "kind": kind,
            "expect": sorted(expect),
            "new_findings": sorted({f"{f['scenario']}:{f['kind']}:{f['subject']}" for f in new_all}),
            "caught" if kind != "control" else "clean": ok,
            "false_alarms": [f"{f['scenario']}:{f['kind']}:{f['subject']}" for f in alarms],
            "seconds": round(time.perf_counter() - t0, 1),
        }
        log(json.dumps(row))
        results.append(row)
    return results


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    planted = [r for r in rows if r["kind"] != "control"]
    controls = [r for r in rows if r["kind"] == "control"]
    return {
        "planted": len(planted),
        "caught": sum(r["caught"] for r in planted),
        "controls": len(controls),
        "false_alarms": sum(not r["clean"] for r in controls),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rulesets", nargs="*")
    ap.add_argument("--budget", default="quick", choices=list(BUDGETS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-rl", action="store_true")
    args = ap.parse_args(argv)
    rss = all_rulesets()
    names = args.rulesets or [n for n in sorted(rss) if variant_files(rss[n])]
    rows: list[dict[str, Any]] = []
    for n in names:
        rows += check_ruleset(rss[n], BUDGETS[args.budget], args.seed, args.workers, rl=not args.no_rl)
    print(json.dumps({"summary": summary(rows), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

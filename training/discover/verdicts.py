"""Verdicts from a re-optimizing subject (issue 17 items 2-6): restricted play, adapting sensitivity, strength, builds.

The subject of every restriction is the search agent (:mod:`agents.search`) over the strongest persona,
``search:<base>@<simulations>``, with the restriction passed to the search (``#forbid=<group>`` /
``#force=<group>``) so that it re-plans under the mask inside its simulations; a persona's fallback is
never measured. (The base is the strongest *persona*, not a trained RL policy: the search's rollouts
play the base thousands of times per decision, and a torch policy there costs about a hundred times a
persona's move; the search over the persona is itself the stronger agent, as the certificate measures.)

In a multi-seat scenario the subject sits at seat ``g mod n`` of deal ``g`` and the other seats play the
base; its value is its own return. Every restricted game is paired with the unrestricted subject on the
same deal (common random numbers: the engine's chance stream does not depend on the policies).

* **Restricted play**: each option group the subject met as legal is forbidden (when the subject chose it
  at least once: forbidding an option it never chose leaves its choices alone) and forced where legal
  (unless the subject already chose it in nearly every decision where it came up). The verdicts are
  :func:`results.findings.verdict_of`'s: essential/dominant, dominated, dead, inconclusive at this budget.
* **Strength certificate**: the subject at double the simulations on the same deals (the change is the
  budget-doubling delta), the exact gap where the exact stage solved the scenario (multi-seat: against the
  best response to the base) and each restricted change against the exact restricted-optimum change, the
  best-response edge in a multi-seat scenario (:func:`best_response`: an RL exploiter fine-tuned against the
  subject, played against it, paired by deal with the subject in self-play), the subject's edge over its
  base, and whether the findings can be called converged (every one of these within ``dominant_loss``).
* **Adapting sensitivity** (:func:`adapting_rows`): the subject replays a sample of the deals under each
  perturbed rule, so a rule that matters once a player adapts shows.
* **Builds** (:func:`stage_builds`): where a scenario has a build phase (decisions in context ``build``),
  whole builds are tried as complete assignments on common deals.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from envs.core.config import config_dict
from envs.core.dice import Rng, seed_for
from envs.core.game import CHANCE, TERMINAL
from results.findings import verdict_findings, verdict_of
from results.records import GameRecord
from results.stats import Interval, mean_interval
from training.discover.discovery import Discovery, interval_dict
from training.discover.exact import fits_exactly
from training.discover.whole import WholeGame
from training.runner import GameJob, play_game, seeds

FORCE_SKIP_USAGE = 0.95
"""Forcing is not played for an option the subject already chooses in this share of its decisions of that kind."""
VERDICT_SEED = 104_729


def subject_spec(base: str, simulations: int, restriction: str | None = None, *, exact: bool = False) -> str:
    """The search subject's agent spec, e.g. ``search:flurry@16#forbid=dodge#rollout``: rollout policy
    improvement over the base (agents/rollout.py; docs/search.md "Rollout mode" for its measured reach), and
    where the game is small enough (:func:`training.discover.exact.fits_exactly`) two steps of policy iteration
    from the base computed exactly over the whole game (``#rollout#exact#whole#steps=2``: every decision exact,
    whatever the budget, so restricted play re-optimizes even where the base's fallback is useless)."""
    spec = f"search:{base}@{simulations}"
    mode = "#rollout#exact#whole#steps=2" if exact else "#rollout"
    return (f"{spec}#{restriction}" if restriction else spec) + mode


def _iv(values: list[float], span: float = 1.0) -> Interval:
    """Mean paired change with its 95% interval; never zero-width from a handful of identical pairs.

    When every pair changed by the same amount (most often: not at all), the normal interval has no width,
    yet a change that happens in fewer than 3 games in ``n`` goes unseen with 95% odds (the rule of three):
    the interval is then the mean ± ``span`` × 3/n, ``span`` being the range of the seat's returns.
    """
    if not values:
        return mean_interval(values)
    m = sum(values) / len(values)
    if any(v != values[0] for v in values):
        return mean_interval(values)
    half = span * min(1.0, 3 / len(values))
    return Interval(m, m - half, m + half)


def _seat(g: int, n: int) -> int:
    return g % n


def _jobs(d: Discovery, agent: str, base: str, deals: list[int], config: dict[str, Any] | None = None) -> list[GameJob]:
    n = d.num_players
    cfg = config if config is not None else config_dict(d.config)
    out = []
    for g, s in enumerate(deals):
        agents = [base] * n
        agents[_seat(g, n)] = agent
        out.append(GameJob(d.ruleset.name, d.scenario, cfg, tuple(agents), s, trace=True))
    return out


def _value(rec: GameRecord, g: int, n: int) -> float:
    return float(rec.returns[_seat(g, n)])


def _usage(records: list[GameRecord], n: int) -> dict[str, dict[str, float]]:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for g, r in enumerate(records):
        for seat, ctx, opt in r.decisions:
            if seat == _seat(g, n):
                counts[ctx][opt] += 1
    return {
        ctx: {o: round(c / sum(cnt.values()), 6) for o, c in sorted(cnt.items(), key=lambda kv: (-kv[1], kv[0]))}
        for ctx, cnt in sorted(counts.items())
    }


def _paired(base: list[GameRecord], other: list[GameRecord], n: int) -> tuple[Interval, list[float]]:
    diffs = [_value(o, g, n) - _value(b, g, n) for g, (b, o) in enumerate(zip(base, other, strict=True))]
    seen = [_value(r, g, n) for recs in (base, other) for g, r in enumerate(recs)]
    span = (max(seen) - min(seen)) if seen else 0.0
    return _iv(diffs, span if span > 0 else 1.0), diffs


def game_work(d: Discovery) -> float | None:
    """A search game's cost in :attr:`Budget.search_work` units: mean length² / seats, from the round-robin.

    A search decision simulates to the end of the game, so a game costs about (its length) × (the subject's
    share of its decisions); measured on the 2-core box this tracks the search game's seconds within a
    factor of ~3 across the eight shipped scenarios. None before the round-robin has run.
    """
    length = (d.sections.get("round_robin") or {}).get("mean_length")
    return float(length) ** 2 / max(1, d.num_players) if length else None


def verdict_work(d: Discovery) -> float | None:
    """The work restricted play may spend: :attr:`Budget.verdict_work`, else :attr:`Budget.search_work`."""
    return d.budget.verdict_work if d.budget.verdict_work is not None else d.budget.search_work


def deal_count(d: Discovery) -> int:
    """Paired games per restriction: ``search_deals``, fewer (never below ``min_search_deals``) where the
    verdict work (:func:`verdict_work`) cannot pay for ``planned_restrictions`` restrictions of that many games
    (at least ``min_restrictions``): on a long scenario more work then buys more options played, not only
    narrower intervals on the first few."""
    w, work = game_work(d), verdict_work(d)
    full = d.budget.search_deals
    if work is None or not w:
        return full
    planned = max(d.budget.min_restrictions, min(d.budget.planned_restrictions, d.budget.max_restrictions))
    fit = int(work / (w * (3 + planned)))
    return max(min(full, d.budget.min_search_deals), min(full, fit))


def restriction_cap(d: Discovery, deals: int) -> int:
    """How many forbid/force replays the budget allows: ``max_restrictions``, fewer where the verdict work
    runs out on a long scenario (never fewer than ``min_restrictions``)."""
    cap = d.budget.max_restrictions
    w, work = game_work(d), verdict_work(d)
    if work is None or not w:
        return cap
    games = work / (w * max(1, deals))  # verdict games per deal the work allows
    fit = int(games) - 3  # the plain subject and the doubled one (twice the simulations) come first
    return max(min(cap, d.budget.min_restrictions), min(cap, fit))


def stage_verdicts(d: Discovery, base: str, groups: Sequence[str] | None = None) -> dict[str, Any]:
    """Restricted play (forbid and force) and the strength figures, with the search subject over ``base``.

    ``groups``: the option groups to restrict (default: every group of the scenario; tests pass a few).
    """
    t0 = time.perf_counter()
    sc = d.ruleset.scenario(d.scenario)
    n = d.num_players
    sims = d.budget.search_simulations
    exact = fits_exactly(d, base)
    subject = subject_spec(base, sims, exact=exact)
    deals = seeds(d.seed + VERDICT_SEED, deal_count(d))
    whole = WholeGame(d) if exact else None  # values computed exactly, games played here (training/discover/whole.py)
    d.whole = whole
    play = whole.play if whole is not None else d.play
    plain = _jobs(d, subject, base, deals)
    alone = _jobs(d, base, base, deals)
    k = len(deals)
    if whole is None:
        doubled = _jobs(d, subject_spec(base, 2 * sims, exact=exact), base, deals)
        recs = d.play("verdict_base", plain + doubled + alone)
        base_recs, dbl_recs, alone_recs = recs[:k], recs[k : 2 * k], recs[2 * k :]
    else:  # the whole-game subject does not depend on its budget: no doubled games
        recs = play("verdict_base", plain + alone)
        base_recs, alone_recs = recs[:k], recs[k:]
        dbl_recs = base_recs
    usage = _usage(base_recs, n)
    chosen: Counter[str] = Counter()
    for g, r in enumerate(base_recs):
        chosen.update(opt for seat, _, opt in r.decisions if seat == _seat(g, n))
    available: set[str] = set()
    for r in base_recs:  # ``available`` is per game, every seat: a legal option of any seat was met
        available |= r.available
    ctx_share: dict[str, float] = {}
    wanted = tuple(groups) if groups is not None else tuple(sc.option_groups)
    forbids: list[str] = []
    forces: list[str] = []
    for grp in wanted:
        ctx_share[grp] = max((u.get(grp, 0.0) for u in usage.values()), default=0.0)
        if grp not in available:
            continue
        if chosen[grp] > 0:
            forbids.append(grp)
        if ctx_share[grp] < FORCE_SKIP_USAGE:
            forces.append(grp)
    # within the budget's cap: the most-chosen options forbidden and the least-chosen forced first, alternating
    forbids.sort(key=lambda g: (-chosen[g], g))
    forces.sort(key=lambda g: (ctx_share[g], g))
    plan: list[tuple[str, str]] = []
    for i in range(max(len(forbids), len(forces))):
        if i < len(forbids):
            plan.append((forbids[i], "forbid"))
        if i < len(forces):
            plan.append((forces[i], "force"))
    cap = restriction_cap(d, k)
    dropped = plan[cap:]
    plan = plan[:cap]
    jobs: list[GameJob] = []
    for grp, mode in plan:
        jobs.extend(_jobs(d, subject_spec(base, sims, f"{mode}={grp}", exact=exact), base, deals))
    restricted = play("verdict_restricted", jobs)
    options: dict[str, Any] = {}
    for grp in wanted:
        options[grp] = {
            "available": grp in available,
            "chosen": chosen[grp],
            "usage_in_context": round(ctx_share[grp], 6),
            "forbid": None,
            "force": None,
            "forbid_skip": "never chosen" if chosen[grp] == 0 else None,
            "force_skip": "always chosen" if ctx_share[grp] >= FORCE_SKIP_USAGE else None,
        }
    for grp, mode in dropped:
        options[grp][f"{mode}_skip"] = "budget"
    for p, (grp, mode) in enumerate(plan):
        chunk = restricted[p * k : (p + 1) * k]
        iv, diffs = _paired(base_recs, chunk, n)
        row = options[grp]
        exact_iv = whole.change(subject_spec(base, sims, f"{mode}={grp}", exact=exact), subject, k) if whole else None
        if exact_iv is not None:  # the exact change of the subject's own play (the games give usage and examples)
            row[f"{mode}_sampled"] = interval_dict(iv)
            iv = exact_iv
        row[mode] = interval_dict(iv)
        worst = min(range(k), key=lambda g: diffs[g])
        row[f"example_{mode}"] = d.game_id("verdict", jobs[p * k + worst], p * k + worst)
        if mode == "force":  # how often the forced option came up for the subject (0: forcing measured nothing)
            row["forced_uses"] = sum(
                1 for g, r in enumerate(chunk) for seat, _, opt in r.decisions if seat == _seat(g, n) and opt == grp
            )
        if mode == "forbid":  # what the subject does instead, in the contexts where it used the option
            ctxs = [c for c, u in usage.items() if u.get(grp, 0.0) > 0]
            under = _usage(chunk, n)
            row["instead"] = {c: under.get(c, {}) for c in ctxs}
    for row in options.values():
        row["verdict"] = verdict_of(row, d.thresholds)
    base_iv = mean_interval([_value(r, g, n) for g, r in enumerate(base_recs)])
    dbl, _ = _paired(base_recs, dbl_recs, n)
    over_base, _ = _paired(alone_recs, base_recs, n)
    values = "sampled"
    if whole is not None:
        v, vb = whole.value(subject, k), whole.value(subject, k, base=True)
        if v is not None and vb is not None:
            values = "exact"
            base_iv, dbl = v, Interval(0.0, 0.0, 0.0)
            over_base = Interval(v.value - vb.value, v.value - vb.value, v.value - vb.value)
    sec = {
        "subject": subject,
        "base": base,
        "simulations": sims,
        "deals": k,
        "restrictions": {"played": len(plan), "cap": cap, "left_out": len(dropped)},
        "games": len(recs) + len(restricted),
        "value": interval_dict(base_iv),
        "usage": usage,
        "options": options,
        "doubling": interval_dict(dbl),
        "values": values,  # "exact": every value and change above is the subject's exact expectation
        "over_base": interval_dict(over_base),
        "core_options": list(sc.core_options),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    d.sections["verdicts"] = sec
    d.sections["usage"] = usage
    d.sections["restricted"] = {  # the report's restricted-play table and chart, now from the search subject
        "strong": subject,
        "groups": list(sc.option_groups),
        "agents": {
            subject: {
                "usage": usage,
                "options": {
                    g: {
                        "value_change": r["forbid"] or {"value": 0.0, "low": 0.0, "high": 0.0},
                        "usage_in_context": r["usage_in_context"],
                        "usage_overall": round(r["chosen"] / max(1, sum(chosen.values())), 6),
                        "example": r.get("example_forbid", ""),
                        "replayed": r["forbid"] is not None,
                        "available": r["available"],
                    }
                    for g, r in options.items()
                },
            }
        },
    }
    d.timings["verdicts"] = time.perf_counter() - t0
    d.add_all(verdict_findings(sec, d.thresholds, tuple(sc.core_options)))
    d.verdict_records = base_recs
    return sec


RESTRICTED_SLACK = 0.02
"""A measured restricted-play change within this of the exact one counts as matching it (``within``), as in
the exact-reach tests; ``converged`` asks every one to lie within ``dominant_loss``."""


def restricted_exact(d: Discovery) -> dict[str, dict[str, Any]]:
    """Each restricted-play change the verdict stage measured, beside the exact restricted-optimum change.

    ``{"<mode>=<group>": {"measured", "ci", "exact", "off", "within"}}`` for every restriction the exact stage
    solved (``exact``: restricted optimum minus optimum on the verdict stage's seat schedule; ``off``:
    ``|measured - exact|``; ``within``: the exact change lies in the interval or within :data:`RESTRICTED_SLACK`).
    """
    sec = d.sections.get("verdicts") or {}
    ex = d.sections.get("exact") or {}
    out: dict[str, dict[str, Any]] = {}
    for spec, row in (ex.get("restricted") or {}).items() if ex.get("tractable") else ():
        mode, _, grp = spec.partition("=")
        iv = ((sec.get("options") or {}).get(grp) or {}).get(mode)
        if iv is None:
            continue
        off = abs(iv["value"] - row["change"])
        out[spec] = {
            "measured": iv["value"],
            "ci": [iv["low"], iv["high"]],
            "exact": row["change"],
            "off": round(off, 6),
            "within": bool(iv["low"] - 1e-9 <= row["change"] <= iv["high"] + 1e-9 or off <= RESTRICTED_SLACK),
        }
    return out


def _exploiter_note(d: Discovery, br: dict[str, Any] | None) -> str:
    if br:
        trained = br.get("trained") or [{"opponent": br.get("opponent"), "steps": br.get("steps")}]
        legs = " then ".join(f"{t['steps']} steps against {t['opponent']}" for t in trained)
        ft = br.get("finetune") or {}
        extra = "" if ft.get("steps") else f"; not fine-tuned against the subject ({ft.get('why', 'no RL model')})"
        return (
            f"a MaskablePPO exploiter trained {legs} at every other seat{extra}; played against the subject on "
            f"the same {br['games']} deals, paired with the subject in self-play"
        )
    if d.num_players == 1:
        return "one seat: no opponent to exploit"
    return "no exploiter trained (--no-rl or a budget without RL steps)"


def restricted_gain(sec: Mapping[str, Any]) -> dict[str, Any] | None:
    """The restriction under which the subject did best, where that beats the unrestricted subject beyond doubt.

    A restricted subject plays a subset of the unrestricted one's policies, so a paired change whose whole 95%
    interval is above 0 shows the subject missing better play (the low end is a lower bound on how much): in the
    hallownest duel at standard, forbidding dodge raised the subject's value by +0.22 [+0.01, +0.43]. ``None``
    when no forbid or force change is significantly positive. The largest low end wins.
    """
    best: dict[str, Any] | None = None
    for option, row in (sec.get("options") or {}).items():
        for mode in ("forbid", "force"):
            r = row.get(mode)
            if not r or r.get("low") is None or r["low"] <= 0:
                continue
            if best is None or r["low"] > best["low"]:
                best = {"option": option, "mode": mode, "value": r["value"], "low": r["low"], "high": r["high"]}
    return best


def strength_certificate(d: Discovery) -> dict[str, Any]:
    """``{agent, exact_gap, budget_doubling_delta, best_response_edge, converged, …}`` for findings.json.

    ``exact_gap``: the exact optimum (multi-seat: the best response to the base, on the verdict seat schedule)
    minus the subject's sampled value; ``restricted_exact``: :func:`restricted_exact`; ``best_response_edge``:
    :func:`best_response`'s; ``restricted_gain``: :func:`restricted_gain`. Converged when the doubling interval,
    the exact gap, every restricted change's distance to the exact one, the exploiter interval's upper end and
    the restricted gain's lower end are all within ``dominant_loss``; ``provisional_by`` is the largest of them.
    """
    sec = d.sections.get("verdicts")
    if not sec:
        return {
            "agent": None,
            "exact_gap": None,
            "budget_doubling_delta": None,
            "best_response_edge": None,
            "converged": False,
        }
    t = d.thresholds
    ex = d.sections.get("exact") or {}
    exact_gap = None
    if ex.get("tractable"):
        exact_gap = round(ex["optimal_value"] - sec["value"]["value"], 6)
    restricted = restricted_exact(d)
    restricted_off = max((r["off"] for r in restricted.values()), default=0.0)
    dbl = sec["doubling"]
    off = max(abs(dbl["low"]), abs(dbl["high"]))
    br = d.sections.get("best_response")
    edge = br["edge"] if br else None
    edge_off = max(0.0, edge["high"]) if edge else 0.0  # how much the exploiter may gain over the subject
    gain = restricted_gain(sec)
    gain_off = gain["low"] if gain else 0.0  # the subject is at least this far from its best play
    converged = (
        off <= t.dominant_loss
        and (exact_gap is None or exact_gap <= t.dominant_loss)
        and restricted_off <= t.dominant_loss
        and (edge is None or edge_off <= t.dominant_loss)
        and gain_off <= t.dominant_loss
    )
    out = {
        "agent": sec["subject"],
        "exact_gap": exact_gap,
        "restricted_exact": restricted if ex.get("tractable") else None,
        "budget_doubling_delta": dbl["value"],
        "budget_doubling_ci": [dbl["low"], dbl["high"]],
        "best_response_edge": edge["value"] if edge else None,
        "best_response_ci": [edge["low"], edge["high"]] if edge else None,
        "best_response_trained": br.get("trained") if br else None,
        "best_response_note": _exploiter_note(d, br),
        "over_base": sec["over_base"],
        "restricted_gain": gain,
        "converged": converged,
        "provisional_by": round(max(off, exact_gap or 0.0, restricted_off, edge_off, gain_off), 6),
        "games": sec["games"],
        "simulations": sec["simulations"],
        "deals": sec["deals"],
    }
    d.sections["strength"] = out
    return out


def usage_of(records: list[GameRecord], seats: list[int]) -> dict[str, dict[str, float]]:
    """What the player at ``seats[i]`` of game ``records[i]`` chose, per decision context (shares)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for rec, seat in zip(records, seats, strict=True):
        for s, ctx, opt in rec.decisions:
            if s == seat:
                counts[ctx][opt] += 1
    return {
        ctx: {o: round(c / sum(cnt.values()), 6) for o, c in sorted(cnt.items(), key=lambda kv: (-kv[1], kv[0]))}
        for ctx, cnt in sorted(counts.items())
    }


def best_response(d: Discovery) -> dict[str, Any] | None:
    """A best-response exploiter trained on the subject, played against it (issue 17 item 6).

    The exploiter of the RL stage (trained against the base at every other seat) is fine-tuned against the
    subject itself (:func:`training.discover.rl.finetune_against`, :func:`~training.discover.rl.subject_steps`
    steps with the subject at every other seat; none where the budget's work cannot pay for it). Then, on the
    verdict deals, it plays seat ``g mod n`` of deal ``g`` with the subject at every other seat, paired by deal
    with the subject in that seat (the subject in self-play): its return minus the subject's is the edge (> 0:
    the subject can be exploited). None without an exploiter, verdicts or a second seat.
    """
    ex = (d.sections.get("rl") or {}).get("exploiter")
    sec = d.sections.get("verdicts")
    if not ex or not sec or d.verdict_records is None or d.num_players < 2:
        return None
    t0 = time.perf_counter()
    n = d.num_players
    subject = sec["subject"]
    agent = ex["agent"]
    trained = [{"opponent": ex["opponent"], "steps": ex["steps"]}]
    finetune: dict[str, Any] = {"steps": 0}
    if agent.startswith("rl:"):
        from training.discover.rl import finetune_against, subject_steps  # rl imports this module: late

        steps, why = subject_steps(d)
        finetune = {"steps": steps, "why": why}
        if steps > 0:
            ft = finetune_against(d, agent, subject, steps)
            agent = ft["agent"]
            trained.append({"opponent": subject, "steps": ft["steps"]})
            finetune = {**finetune, **ft}
            d.timings["best_response_finetune"] = ft["seconds"]
    deals = seeds(d.seed + VERDICT_SEED, sec["deals"])
    jobs = _jobs(d, agent, subject, deals)  # the exploiter in the subject's seat, the subject everywhere else
    self_play = _jobs(d, subject, subject, deals)
    k = len(deals)
    recs = d.play("best_response", jobs + self_play)
    iv, diffs = _paired(recs[k:], recs[:k], n)
    sampled = None
    if sec.get("values") == "exact" and isinstance(d.whole, WholeGame):  # a game that solves: the exact edge
        exact_edge = d.whole.edge(agent, subject, k)
        if exact_edge is not None:
            sampled, iv = interval_dict(iv), exact_edge
    top = max(range(k), key=lambda g: diffs[g])  # the deal where the exploiter gains most
    out = {
        "agent": agent,
        "opponent": subject,  # whom it plays here; whom it trained against: ``trained``
        "steps": sum(int(t["steps"]) for t in trained),
        "warm_start": ex["agent"],
        "trained": trained,
        "finetune": finetune,
        "against": f"{subject} at every other seat, paired with {subject} in self-play on the same deals",
        "subject": subject,
        "edge": interval_dict(iv),
        **({"values": "exact", "edge_sampled": sampled} if sampled is not None else {}),
        "games": k,
        "example": d.game_id("best_response", jobs[top], top),
        "usage": usage_of(recs[:k], [_seat(g, n) for g in range(k)]),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    d.sections["best_response"] = out
    d.timings["best_response"] = time.perf_counter() - t0
    return out


# -- rule sensitivity with the adapting subject ---------------------------------------------------------


def adapting_rows(d: Discovery, configs: list[BaseModel]) -> list[dict[str, dict[str, float]]]:
    """For each perturbed config: the subject's return change on the first deals of the verdict stage.

    Each row rests on ``sensitivity_search_games`` games, fewer where ``search_work`` runs short on a long
    scenario, never fewer than ``min_search_deals`` (a pair of games that both flip gives a zero-width
    interval, i.e. a confident verdict out of two games). When the work cannot pay for that many games per
    perturbed rule, only the first configs that fit are replayed; the others get no adapting row.
    """
    sec = d.sections.get("verdicts")
    base_recs = d.verdict_records
    if not sec or base_recs is None or not configs:
        return [{} for _ in configs]
    n = d.num_players
    k = min(d.budget.sensitivity_search_games, len(base_recs))
    played = len(configs)
    w = game_work(d)
    if d.budget.search_work is not None and w:  # long scenarios: fewer adapting games, then fewer rules
        floor = min(k, d.budget.min_search_deals)
        share = d.budget.search_work / (4 * w)  # adapting games the work pays for, in all
        k = max(floor, min(k, int(share / len(configs))))
        played = min(len(configs), int(share // k))
    if played == 0:
        return [{} for _ in configs]
    if sec.get("values") == "exact" and isinstance(d.whole, WholeGame):
        return _exact_adapting_rows(d, d.whole, configs, played, k)
    deals = seeds(d.seed + VERDICT_SEED, sec["deals"])[:k]
    jobs: list[GameJob] = []
    for cfg in configs[:played]:
        jobs.extend(_jobs(d, sec["subject"], sec["base"], deals, config_dict(cfg)))
    recs = d.play("sensitivity_adapting", jobs)
    out: list[dict[str, dict[str, float]]] = []
    name = f"return[{sec['subject']} adapting]"
    for p in range(played):
        chunk = recs[p * k : (p + 1) * k]
        iv, _ = _paired(base_recs[:k], chunk, n)
        b = sum(_value(r, g, n) for g, r in enumerate(base_recs[:k])) / k
        out.append(
            {
                name: {
                    "baseline": round(b, 6),
                    "change": round(iv.value, 6),
                    "low": round(iv.low, 6),
                    "high": round(iv.high, 6),
                    "relative": round(iv.value / abs(b), 6) if b else 0.0,
                    "games": k,
                }
            }
        )
    return out + [{} for _ in configs[played:]]


def _exact_adapting_rows(
    d: Discovery, whole: WholeGame, configs: list[BaseModel], played: int, k: int
) -> list[dict[str, dict[str, float]]]:
    """Adapting rows of the whole-game subject (a game that solves): each perturbed rule's exact change of the
    subject's return on the seat schedule of ``k`` deals, where the perturbed game solves too (else no row: the
    whole-game subject on a game beyond the probe would explore all of it at its first decision)."""
    sec = d.sections["verdicts"]
    subject, base = sec["subject"], sec["base"]
    ref = whole.value(subject, k)
    name = f"return[{subject} adapting]"
    out: list[dict[str, dict[str, float]]] = []
    for cfg in configs[:played]:
        other = WholeGame(d, cfg) if ref is not None and fits_exactly(d, base, cfg) else None
        v = other.value(subject, k) if other is not None else None
        if ref is None or v is None:
            out.append({})
            continue
        c = v.value - ref.value
        b = ref.value
        row = {"baseline": b, "change": c, "low": c, "high": c, "relative": c / abs(b) if b else 0.0, "games": k}
        out.append({name: {key: round(x, 6) for key, x in row.items()} | {"exact": True}})
    return out + [{} for _ in configs[played:]]


# -- builds ------------------------------------------------------------------------------------------

_BUILT = re.compile(r" is built: (.*)\.$")
_PAIR = re.compile(r"([^,]+?) (d\d+(?:\+d\d+)*)")


def _build_prefix(d: Discovery, rng: Rng, seat: int) -> tuple[int, ...] | None:
    """One random whole build of ``seat``: its actions at its decisions in context ``build`` (None: no build)."""
    sc = d.ruleset.scenario(d.scenario)
    st = sc.new_game(d.config)
    chance = Rng(seed_for(d.seed, 17))
    actions: list[int] = []
    for _ in range(10_000):
        p = st.current_player()
        if p == TERMINAL:
            break
        if p == CHANCE:
            st.apply_chance(st.sample_chance(chance))
            continue
        if st.decision_context() != "build":
            break
        legal = st.legal_actions()
        a = legal[int(rng.random() * len(legal))]
        if p == seat:
            actions.append(a)
        st.apply_action(a)
    return tuple(actions) or None


def _build_labels(d: Discovery, build: tuple[int, ...]) -> list[str]:
    """The action labels of seat 0's build decisions (what a designer reads: "+1 Might", not the option group)."""
    st = d.ruleset.scenario(d.scenario).new_game(d.config)
    chance = Rng(seed_for(d.seed, 17))
    out: list[str] = []
    for _ in range(10_000):
        p = st.current_player()
        if p == TERMINAL or len(out) == len(build):
            break
        if p == CHANCE:
            st.apply_chance(st.sample_chance(chance))
            continue
        if st.decision_context() != "build":
            break
        legal = st.legal_actions()
        a = build[len(out)] if p == 0 else legal[0]
        if a not in legal:
            break
        if p == 0:
            out.append(st.action_label(a))
        st.apply_action(a)
    return out


def _build_dict(log: list[str], labels: list[str]) -> dict[str, str]:
    for line in log:
        m = _BUILT.search(line)
        if m:
            return {f.strip(): die for f, die in _PAIR.findall(m.group(1))}
    return {f"decision {i + 1}": lab for i, lab in enumerate(labels)}


def stage_builds(d: Discovery, base: str) -> dict[str, Any] | None:
    """Whole builds of seat 0 on common deals; the best and worst found and what the best share.

    Seat 0 plays the build, then ``base`` plays the rest of the game (at the quick budget: a persona's
    play after the build is a fixed player; the build values are comparisons of builds under that play).
    """
    sc = d.ruleset.scenario(d.scenario)
    probe = sc.new_game(d.config)
    while probe.current_player() == CHANCE:
        probe.apply_chance(probe.sample_chance(Rng(seed_for(d.seed, 17))))
    if probe.current_player() < 0 or probe.decision_context() != "build" or d.budget.build_candidates <= 0:
        return None
    t0 = time.perf_counter()
    rng = Rng(seed_for(d.seed, 23))
    cands: list[tuple[int, ...]] = []
    for _ in range(50 * d.budget.build_candidates):
        b = _build_prefix(d, rng, 0)
        if b is not None and b not in cands:
            cands.append(b)
        if len(cands) >= d.budget.build_candidates:
            break
    deals = seeds(d.seed + VERDICT_SEED + 1, d.budget.build_games)
    n = d.num_players
    cfg = config_dict(d.config)
    jobs = [
        GameJob(d.ruleset.name, d.scenario, cfg, (base,) * n, s, trace=True, build=b, build_seat=0)
        for b in cands
        for s in deals
    ]
    recs = d.play("builds", jobs)
    k = len(deals)
    rows: list[dict[str, Any]] = []
    for i in range(len(cands)):
        chunk = recs[i * k : (i + 1) * k]
        iv = mean_interval([float(r.returns[0]) for r in chunk])
        labels = [opt for seat, ctx, opt in chunk[0].decisions if seat == 0 and ctx == "build"]
        named = _build_labels(d, cands[i])
        if len(named) == len(labels):
            labels = named
        narrated = replace(jobs[i * k], narrate=True, trace=False)
        log = play_game(narrated).log  # one narrated game per build, for its sheet
        rows.append(
            {
                "build": _build_dict(log, labels),
                "value": round(iv.value, 6),
                "ci": [round(iv.low, 6), round(iv.high, 6)],
            }
        )
    rows.sort(key=lambda r: (-r["value"], sorted(r["build"].items())))
    top = max(1, min(3, len(rows) // 3))
    best, worst = rows[:top], rows[-top:][::-1]
    out = {
        "best": best,
        "worst": worst,
        "tried": len(rows),
        "games_per_build": k,
        "player": f"seat 0 builds, then {base} plays (opponents: {base})",
        "shared": _shared(best),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    d.sections["builds"] = out
    d.timings["builds"] = time.perf_counter() - t0
    return out


def _shared(best: list[dict[str, Any]]) -> str:
    """What the best builds have in common: the forms that carry the same die in all of them."""
    if not best:
        return ""
    forms = set(best[0]["build"])
    same = sorted(f for f in forms if all(r["build"].get(f) == best[0]["build"][f] for r in best))
    if not same:
        return "the best builds share no form's die"
    return "all of the best builds put " + ", ".join(f"{best[0]['build'][f]} on {f}" for f in same)

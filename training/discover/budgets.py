"""Discovery budgets: how many games and training steps each stage gets.

quick ≤ 3 minutes wall per scenario on a 2-core machine, standard ≤ 15, deep unbounded. The search agent
(the re-optimizing subject of restricted play, of rule sensitivity with adapting players and of the strength
certificate) is what costs: its games are counted separately.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    round_robin_games: int = Field(description="games per matchup in the persona round-robin")
    sensitivity_games: int = Field(description="games per matchup per knob value in rule sensitivity")
    rl_steps: int = Field(description="training steps per RL run (0: no RL)")
    rl_eval_games: int = Field(description="games per matchup for the RL agent against each persona")
    rl_seeds: int = Field(2, ge=1, description="RL runs on the rules under study (the best plays on)")
    search_simulations: int = Field(16, description="simulations per decision of the search subject")
    search_deals: int = Field(30, description="paired games per restriction (forbid/force) with the search subject")
    max_restrictions: int = Field(60, description="forbid/force replays at most (most-chosen forbidden first)")
    search_work: float | None = Field(
        None,
        description="cap on the search subject's work (games x mean length^2 / seats): fewer restrictions and "
        "adapting games on long scenarios (None: no cap)",
    )
    verdict_work: float | None = Field(
        None,
        description="cap on restricted play's search work alone (deals x restrictions; None: search_work): "
        "standard gives the verdicts more than the exploiter's fine-tune and the adapting sensitivity",
    )
    min_restrictions: int = Field(4, description="restrictions played even when search_work is spent")
    planned_restrictions: int = Field(
        8,
        description="restrictions the deal count leaves work for: deals shrink (never below min_search_deals) "
        "until this many restrictions fit, so more work buys more options played as well as more deals",
    )
    min_search_deals: int = Field(6, description="paired games per restriction even when search_work is spent")
    sensitivity_search_games: int = Field(16, description="games per knob value with the search subject adapting")
    build_candidates: int = Field(12, description="whole builds tried where a scenario has a build phase")
    build_games: int = Field(24, description="games per build tried")
    example_games: int = Field(3, description="narrated example games in the report")
    wall_seconds: float | None = Field(None, description="target wall time per scenario (informative)")


BUDGETS: dict[str, Budget] = {
    "quick": Budget(
        name="quick",
        round_robin_games=100,
        sensitivity_games=30,
        rl_steps=20_000,
        rl_eval_games=50,
        rl_seeds=1,
        search_simulations=16,
        search_deals=10,
        max_restrictions=12,
        sensitivity_search_games=8,
        search_work=60_000,
        build_candidates=8,
        build_games=12,
        wall_seconds=180,
    ),
    "standard": Budget(
        name="standard",
        round_robin_games=400,
        sensitivity_games=200,
        rl_steps=150_000,
        rl_eval_games=400,
        search_simulations=32,
        search_deals=100,
        max_restrictions=60,
        sensitivity_search_games=60,
        search_work=150_000,
        verdict_work=300_000,
        build_candidates=40,
        build_games=80,
        wall_seconds=900,
    ),
    "deep": Budget(
        name="deep",
        round_robin_games=1500,
        sensitivity_games=800,
        rl_steps=3_000_000,
        rl_eval_games=1500,
        search_simulations=64,
        search_deals=400,
        max_restrictions=200,
        sensitivity_search_games=200,
        build_candidates=120,
        build_games=200,
        wall_seconds=None,
    ),
}

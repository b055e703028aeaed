"""The report's strength sentence names how restricted play compared with the exact restricted optima."""

from __future__ import annotations

from results.report import _strength_text


def _cert(**extra: object) -> dict[str, object]:
    return {
        "agent": "search:greedy@16#rollout#exact",
        "exact_gap": 0.01,
        "budget_doubling_delta": 0.0,
        "budget_doubling_ci": [-0.1, 0.1],
        "best_response_edge": None,
        "deals": 10,
        "converged": False,
        "provisional_by": 0.1,
        **extra,
    }


def test_restricted_exact_is_counted_with_its_largest_distance() -> None:
    rx = {
        "forbid=a": {"measured": -0.1, "ci": [-0.2, 0.0], "exact": -0.12, "off": 0.02, "within": True},
        "force=b": {"measured": 0.0, "ci": [-0.05, 0.05], "exact": -0.3, "off": 0.3, "within": False},
    }
    out = _strength_text(_cert(restricted_exact=rx))
    assert out is not None and out["level"] == "provisional"
    assert "1 of 2 changes within" in out["text"] and "largest distance 0.300" in out["text"]


def test_no_restricted_exact_no_sentence() -> None:
    out = _strength_text(_cert())
    assert out is not None and "exact restricted optima" not in out["text"]

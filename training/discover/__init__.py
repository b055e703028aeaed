"""Discovery: find dominant strategies and degenerate rules, with numbers, intervals and example games.

:mod:`~training.discover.pipeline` runs the stages in order (:mod:`~training.discover.stages` for the
persona stages, :mod:`~training.discover.rl` for RL training and the transplant test,
:mod:`~training.discover.exact` for the exact optimum); :mod:`results.findings` turns their numbers into
findings. :mod:`~training.discover.variant_check` measures recall on the planted variants.
"""

from training.discover.budgets import BUDGETS, Budget
from training.discover.discovery import Discovery, Progress, agent_values, interval_dict
from training.discover.pipeline import make_discovery, result_json, run_discovery
from training.discover.rl import rl_stage

__all__ = [
    "BUDGETS",
    "Budget",
    "Discovery",
    "Progress",
    "agent_values",
    "interval_dict",
    "make_discovery",
    "result_json",
    "rl_stage",
    "run_discovery",
]

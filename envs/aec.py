"""PettingZoo AEC environments of every scenario: ``envs.aec.env("blackbird", "duel", rules=...)``.

``env`` wraps the adapter as PettingZoo's classic games are (illegal move → the game ends with a
penalty for its maker; order enforced); ``raw_env`` is the bare :class:`~envs.core.aec_adapter.GameAEC`.
The config, seed and rules-file handling are the Gymnasium adapter's.
"""

from __future__ import annotations

from envs.core.aec_adapter import GameAEC, make_aec

env = make_aec
raw_env = GameAEC

__all__ = ["GameAEC", "env", "raw_env"]

"""A config that reaches a fresh process unpickled (no validation there) still reads each data file as its kind."""

from __future__ import annotations

import pickle

import envs
from envs.hallownest import config as hconfig


def test_unpickled_config_reads_templates_as_templates() -> None:
    rs = envs.get_ruleset("hallownest")
    cfg = pickle.loads(pickle.dumps(rs.default_config()))
    hconfig._KIND_OF.clear()  # a worker process: nothing validated a config there
    hconfig._load.cache_clear()
    sc = rs.scenario("duel")
    assert sc.action_count(cfg) == 82  # the table of the rules as written
    assert not sc.new_game(cfg).is_terminal()

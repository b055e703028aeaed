"""The batch loop's fast paths change no game: narration off, no action list, the config found by identity."""

import pickle
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envs.core.config import config_dict
from envs.core.registry import get_ruleset
from results.records import GameRecord
from training.evaluate import matchup_jobs
from training.runner import _SHAPE, GameJob, _config, _pack, _unpack, chunk_sizes, run_games


def _outcomes(records):
    return [(r.index, r.winner, r.reason, r.returns, r.length, r.decisions, r.resources) for r in records]


@pytest.mark.parametrize(("ruleset", "scenario"), [("wicked_age", "duel"), ("crossroads", "episode")])
def test_quiet_games_are_the_narrated_games_without_their_log(ruleset, scenario):
    rs = get_ruleset(ruleset)
    personas = [a for a in ("random", "highest", "brute", "builder", "attacker") if a in _names(ruleset)]
    jobs, _ = matchup_jobs(rs, scenario, rs.default_config(), personas, 2, 5)
    jobs = [replace(j, index=k, trace=k % 2 == 0) for k, j in enumerate(jobs)]
    quiet = run_games(jobs)
    loud = run_games([replace(j, narrate=True) for j in jobs])
    assert _outcomes(quiet) == _outcomes(loud)
    assert [r.actions for r in quiet] == [r.actions for r in loud]
    assert all(r.log == [] for r in quiet) and all(r.log for r in loud)
    lean = run_games([replace(j, keep_actions=False) for j in jobs])
    assert _outcomes(lean) == _outcomes(quiet)
    assert all(r.actions == [] for r in lean) and all(r.actions for r in quiet)


def _names(ruleset):
    from agents.registry import agent_names

    return agent_names(ruleset)


def test_a_job_config_changed_in_place_is_read_again(toy):
    cfg = config_dict(toy.default_config())
    job = GameJob(toy.name, "race", cfg, ("random", "random"), seed=3)
    first = _config(job)
    assert _config(job) is first  # the same unchanged object: the model found without serialising it
    cfg["game"]["target"] = first.game.target + 5
    changed = _config(job)
    assert changed.game.target == first.game.target + 5
    equal = GameJob(toy.name, "race", config_dict(toy.default_config()), ("random", "random"), seed=3)
    assert _config(equal).game.target == first.game.target  # another object: read from its own items


def test_an_equal_config_object_is_read_without_a_copy_and_its_changes_are_still_seen(toy):
    # a worker unpickles a new (equal) config object with every chunk: its model comes from the items already read
    first_cfg = config_dict(toy.default_config())
    first = _config(GameJob(toy.name, "race", first_cfg, ("random", "random"), seed=3))
    cfg = config_dict(toy.default_config())
    job = GameJob(toy.name, "race", cfg, ("random", "random"), seed=3)
    assert _config(job) is first
    cfg["game"]["target"] = first.game.target + 7  # changed in place after it was read
    assert _config(job).game.target == first.game.target + 7
    assert first_cfg["game"]["target"] == first.game.target  # the other object (and the items kept) untouched
    assert _config(GameJob(toy.name, "race", first_cfg, ("random", "random"), seed=3)) is first


def test_records_are_the_same_for_any_number_of_workers():
    jobs = []
    for ruleset, scenario in (("wicked_age", "duel"), ("blackbird", "session"), ("storyteller", "duel")):
        rs = get_ruleset(ruleset)
        personas = [a for a in _names(ruleset) if a != "random"][:3]
        jobs += matchup_jobs(rs, scenario, rs.default_config(), personas, 4, 11)[0]
    jobs = [replace(j, index=k, trace=k % 3 == 0, keep_actions=k % 2 == 0) for k, j in enumerate(jobs)]
    serial = run_games(jobs, workers=1)
    for workers, chunk in ((2, 32), (2, 3)):
        parallel = run_games(jobs, workers=workers, chunk=chunk)
        assert parallel == serial  # every field: outcome, length, actions, decisions, resources, options seen
    assert any(r.decisions for r in serial) and any(r.actions for r in serial) and any(not r.actions for r in serial)


@given(st.integers(1, 20_000), st.integers(2, 8), st.integers(1, 512))
def test_chunks_cover_the_batch_in_order_and_shrink(jobs, workers, cap):
    sizes = chunk_sizes(jobs, workers, cap)
    assert sum(sizes) == jobs and all(1 <= s <= cap for s in sizes)
    assert sizes == sorted(sizes, reverse=True)  # the tail is the smallest: workers finish together
    assert len(sizes) >= min(jobs, 2 * workers)  # every worker gets work, even from a short batch


def test_a_chunk_travels_as_one_job_per_matchup_and_seeds_and_comes_back_whole():
    rs = get_ruleset("storyteller")
    personas = [a for a in _names("storyteller") if a != "random"][:3]
    jobs, _ = matchup_jobs(rs, "duel", rs.default_config(), personas, 20, 2)
    jobs = [replace(j, index=k, trace=k == 4) for k, j in enumerate(jobs)]
    packed = _pack(jobs)
    assert _unpack(packed) == jobs  # every field, in order
    firsts, picks = packed
    assert len(firsts) == 7  # three pairs x two lineups, and the traced game apart
    assert len({_SHAPE(j) == _SHAPE(firsts[k]) for j, (k, _, _) in zip(jobs, picks, strict=True)}) == 1
    assert len(pickle.dumps(packed)) < 0.6 * len(pickle.dumps(jobs))  # the config once either way (memo)


def test_a_record_pickles_to_an_equal_record_traced_or_not():
    rs = get_ruleset("wicked_age")
    jobs, _ = matchup_jobs(rs, "duel", rs.default_config(), ["brute", "owe_farmer"], 1, 4)
    traced = run_games([replace(j, trace=True, narrate=True) for j in jobs[:1]])[0]
    lean = run_games([replace(j, keep_actions=False) for j in jobs[:1]])[0]
    assert traced.decisions and traced.actions and traced.log and traced.available and not lean.actions
    for rec in (traced, lean):
        back = pickle.loads(pickle.dumps(rec))
        assert back == rec and type(back) is GameRecord
        back.actions.append((0, 0))
        assert rec.actions != back.actions  # fresh lists, not shared defaults
    assert len(pickle.dumps(lean)) < len(pickle.dumps(traced))


def test_parallel_progress_counts_every_game_once():
    rs = get_ruleset("blackbird")
    jobs, _ = matchup_jobs(rs, "session", rs.default_config(), ["greedy", "defender"], 40, 3)
    jobs = [replace(j, index=k, keep_actions=False) for k, j in enumerate(jobs)]
    calls: list[int] = []
    records = run_games(jobs, workers=2, progress=calls.append)
    assert sum(calls) == len(jobs) == len(records)
    assert len(calls) == len(chunk_sizes(len(jobs), 2)) and max(calls) > 1  # one call per chunk, as dealt
    assert [r.index for r in records] == list(range(len(jobs)))
    assert records == run_games(jobs, workers=1)

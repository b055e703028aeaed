import json

import pytest

from results.records import CorruptRecordError, read_record, write_record


def test_round_trip(tmp_path):
    write_record(
        tmp_path, command="x", ruleset="r", scenario="s", config={"a": 1}, rules_hash="h", seed=1, metrics={"m": 2}
    )
    assert read_record(tmp_path)["metrics"] == {"m": 2}
    assert not list(tmp_path.glob("*.tmp"))


def test_corrupt_record_is_refused_clearly(tmp_path):
    (tmp_path / "record.json").write_text("{not json")
    with pytest.raises(CorruptRecordError, match="corrupt"):
        read_record(tmp_path)
    (tmp_path / "record.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(CorruptRecordError, match="not a rulebreaker run record"):
        read_record(tmp_path)

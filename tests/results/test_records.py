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


def test_evaluation_tables_show_agent_names_as_written():
    """An rl: path may hold rich markup ([/bold], [red]): the table prints it as it is and never raises."""
    import io

    from rich.console import Console

    from results.tables import print_evaluation

    names = ["rl:runs/[/bold]x", "rl:runs/[red]y"]
    cell = {"win_rate": 0.5, "win_ci": [0.4, 0.6]}
    metrics = {
        "matrix": {a: {b: cell for b in names if b != a} for a in names},
        "seat_advantage": {"fair_share": 0.5, "draw_rate": 0.0, "seats": {"0": cell, "1": cell}},
        "game_length": {"mean": 3.0, "median": 3, "p90": 4, "min": 1, "max": 5},
        "end_reasons": {"knockout": 1.0},
    }
    buf = io.StringIO()
    print_evaluation(Console(file=buf, width=200), metrics, names, title="[bold]t")
    text = buf.getvalue()
    assert all(n in text for n in names) and "[bold]t" in text

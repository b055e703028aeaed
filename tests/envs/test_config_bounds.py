"""Issue 21 items 1-4 and 10 (config side): every bad rules value is one ConfigError line naming the key.

Each row is a variant file (a few TOML lines) loaded over a ruleset's ``rules.toml`` through the loader
the CLI uses (:func:`envs.core.config.load_config`), and the words its one error line must contain. The
bounds asserted here come from docs/rules/<ruleset>.md (or are the [decision]s named in the field
descriptions), never from the engine.
"""

from __future__ import annotations

import json
import os
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import envs
from envs.core.config import MAX_FILE_BYTES, config_dict, load_config, with_override
from envs.core.errors import ConfigError

RULESETS = ("blackbird", "storyteller", "hallownest", "wicked_age", "crossroads")

_NAOMI_TRAITS = """
[session.character]
name = "Naomi Bishop"
flags = ["Loyal to Lady Blackbird"]
relationship = "Loyal to Lady Blackbird"
[[session.character.traits]]
name = "Mercenary"
tags = {{ "fist-fighting" = {level}, "strongman" = 1, "intimidate" = 1 }}
[[session.character.traits]]
name = "Zen monk"
tags = {{ "kung fu" = 1, "meditation" = 1, "agile" = 1 }}
[[session.character.traits]]
name = "Scoundrel"
tags = {{ "sneak" = 1, "lie" = 1, "cheat" = 1, "locks" = 1 }}
"""

# (ruleset, variant text, words the one error line must contain)
BAD_VALUES: list[tuple[str, str, list[str]]] = [
    # item 1: unbounded or negative numbers
    (
        "blackbird",
        _NAOMI_TRAITS.format(level=1_000_000_000),
        ["session.character.traits.0.tags.fist-fighting", "1000000000", "≤ 10"],
    ),
    ("blackbird", _NAOMI_TRAITS.format(level=-5), ["tags.fist-fighting", "-5", "≥ 1"]),
    ("blackbird", _NAOMI_TRAITS.format(level=0), ["tags.fist-fighting", "≥ 1"]),
    ("blackbird", "[pool]\ncap = 1000000000\n", ["pool.cap", "1000000000", "≤ 100"]),
    ("blackbird", "[pool]\nstart = -1\n", ["pool.start", "-1", "≥ 0"]),
    ("blackbird", "[pool]\nsession_reset = 101\n", ["pool.session_reset", "≤ 100"]),
    ("blackbird", "[session]\nhelper_pool = 1000000000\n", ["session.helper_pool", "≤ 100"]),
    ("storyteller", "[heist.character]\nstrength = 1000000000\n", ["heist.character.strength", "≤ 10"]),
    ("storyteller", "[heist.character]\nwits = -1\n", ["heist.character.wits", "-1", "≥ 0"]),
    ("wicked_age", "[forms]\npc_dice = [12, 10, 8, 6, 6, 1000000000]\n", ["forms.pc_dice.5", "≤ 30"]),
    ("wicked_age", "[forms]\nnpc_pairs = [[12, 8], [10, -6], [6, 4]]\n", ["forms.npc_pairs.1.1", "≥ 1"]),
    # Rule 1: every form starts with a real die (0 is only the ladder's "no die"); found by the fuzz test
    ("wicked_age", "[forms]\npc_dice = [12, 10, 8, 6, 6, 0]\n", ["forms.pc_dice.5", "0", "≥ 1"]),
    ("wicked_age", "[forms]\nladder = [12, 10, 8, 6, 4, 0]\n", ["forms.ladder.5", "≥ 1"]),
    ("wicked_age", "[roll]\nmax_tie_rerolls = 1000000000\n", ["roll.max_tie_rerolls", "≤ 1000"]),
    ("hallownest", "[arena]\nstart = [[1, 0], [1000000000, 0]]\n", ["arena.start.1.0", "≤ 12"]),
    ("hallownest", "[duel]\nmax_rounds = 0\n", ["duel.max_rounds", "≥ 1"]),
    ("crossroads", "[episode]\nmax_scenes = 1000000000\n", ["episode.max_scenes", "≤ 200"]),
    # item 2: non-finite and overflowing floats
    (
        "blackbird",
        '[[session.obstacles]]\nname = "a"\nweight = inf\n[[session.obstacles]]\nname = "b"\n',
        ["session.obstacles.0.weight", "inf", "finite"],
    ),
    ("blackbird", '[[session.obstacles]]\nname = "a"\nweight = nan\n', ["session.obstacles.0.weight", "nan"]),
    (
        "blackbird",
        '[[session.obstacles]]\nname = "a"\nweight = 1e308\n[[session.obstacles]]\nname = "b"\nweight = 1e308\n',
        ["session.obstacles.0.weight", "1e+308", "≤ 1000000.0"],
    ),
    ("blackbird", "[session]\ncritical_value = -inf\n", ["session.critical_value", "-inf"]),
    ("crossroads", "[reward]\ngoal = nan\n", ["reward.goal", "nan", "finite"]),
    ("wicked_age", "[owe_list]\nend_value = inf\n", ["owe_list.end_value", "inf"]),
    ("hallownest", "[dice]\nmax_characteristic = inf\n", ["dice.max_characteristic", "inf"]),
    ("hallownest", "[duel]\nmax_rounds = 1e400\n", ["duel.max_rounds", "inf", "int"]),
    # item 10: lenient or aliased inputs (strict types)
    ("blackbird", "[pool]\nstart = true\n", ["pool.start", "True", "valid integer"]),
    ("blackbird", '[pool]\nstart = "3"\n', ["pool.start", "'3'", "valid integer"]),
    ("blackbird", "[pool]\nstart = 3.0\n", ["pool.start", "3.0", "valid integer"]),
    ("blackbird", '[pool]\nenabled = "yes"\n', ["pool.enabled", "'yes'", "bool"]),
    ("blackbird", "[pool]\nenabled = 1\n", ["pool.enabled", "1", "bool"]),
    ("crossroads", '[episode]\nplayers = "3"\n', ["episode.players", "'3'", "valid integer", "≤ 12"]),
    ("crossroads", "[episode]\nplayers = true\n", ["episode.players", "True"]),
    ("storyteller", "[heist.character]\nstrength = true\n", ["heist.character.strength", "True"]),
    ("storyteller", '[willpower]\npoints = "3"\n', ["willpower.points", "'3'"]),
    ("wicked_age", '[melee]\nparties = "3"\n', ["melee.parties", "'3'"]),
    ("hallownest", "[grapple]\nenabled = 0\n", ["grapple.enabled", "0", "bool"]),
    ("hallownest", '[[duel.bugs]]\nmight = "3"\n[[duel.bugs]]\n', ["duel.bugs.0.might", "'3'"]),
    # issue 21: bounds from the rules, not from an action table
    ("hallownest", "[parry]\nmax_shield_investment = 11\n", ["parry.max_shield_investment", "11", "≤ 10"]),
    ("hallownest", "[dodge]\nmax_investment = 11\n", ["dodge.max_investment", "11", "≤ 10"]),
    ("hallownest", "[grapple]\nmax_investment = 11\n", ["grapple.max_investment", "11", "≤ 10"]),
    ("hallownest", "[grapple]\nmax_escape_investment = 11\n", ["grapple.max_escape_investment", "11", "≤ 10"]),
    ("hallownest", "[grapple]\nmax_resist_investment = 11\n", ["grapple.max_resist_investment", "11", "≤ 10"]),
    ("hallownest", "[pogo]\nmax_investment = 11\n", ["pogo.max_investment", "11", "≤ 10"]),
    ("storyteller", "[multiple_actions]\nmax_actions = 11\n", ["multiple_actions.max_actions", "11", "≤ 10"]),
    (
        "storyteller",
        "[multiple_actions]\nmax_actions = 10\n[duel]\nmax_actions = 11\n",
        ["duel.max_actions", "11", "≤ 10"],
    ),
    ("storyteller", "[duel]\nmax_actions = 4\n", ["duel.max_actions = 4", "multiple_actions.max_actions = 3"]),
    ("wicked_age", "[melee]\nparties = 9\n", ["melee.parties", "9", "≤ 8"]),
]


def _load(ruleset: str, path: Path) -> BaseModel:
    return load_config(envs.get_ruleset(ruleset), path)


def _error(ruleset: str, path: Path) -> str:
    with pytest.raises(ConfigError) as e:
        _load(ruleset, path)
    msg = str(e.value)
    assert "\n" not in msg, msg
    assert "Traceback" not in msg
    return msg


@pytest.mark.parametrize(("ruleset", "text", "words"), BAD_VALUES)
def test_bad_value_is_one_line_naming_key_value_and_range(
    ruleset: str, text: str, words: list[str], tmp_path: Path
) -> None:
    variant = tmp_path / "variant.toml"
    variant.write_text(text)
    msg = _error(ruleset, variant)
    assert str(variant) in msg
    for w in words:
        assert w in msg, msg


@pytest.mark.parametrize(
    ("ruleset", "text", "check"),
    [
        ("blackbird", "[pool]\ncap = 40\n", lambda c: c.pool.cap == 40),  # issue 15 item 14: must stay valid
        ("blackbird", "[pool]\ncap = 100\nstart = 100\nsession_reset = 100\n", lambda c: c.pool.start == 100),
        ("blackbird", _NAOMI_TRAITS.format(level=10), lambda c: c.session.character.traits[0].tags["fist-fighting"]),
        ("blackbird", '[[session.obstacles]]\nname = "a"\nweight = 1\n', lambda c: c.session.obstacles[0].weight == 1),
        ("storyteller", "[heist.character]\nstrength = 10\nwits = 0\n", lambda c: c.heist.character["strength"] == 10),
        ("wicked_age", "[forms]\npc_dice = [30, 20, 12, 10, 8, 1]\n", lambda c: c.forms.pc_dice[0] == 30),
        ("crossroads", "[episode]\nplayers = 5\n", lambda c: c.episode.players == 5),
        ("hallownest", "[dice]\nmax_characteristic = 7.5\n", lambda c: c.dice.max_characteristic == 7.5),
        (
            "hallownest",
            "[parry]\nmax_shield_investment = 10\n[dodge]\nmax_investment = 10\n",
            lambda c: c.parry.max_shield_investment == 10 and c.dodge.max_investment == 10,
        ),
        (
            "hallownest",
            "[grapple]\nmax_investment = 10\nmax_escape_investment = 10\nmax_resist_investment = 10\n"
            "[pogo]\nmax_investment = 10\n",
            lambda c: (
                c.grapple.max_investment == c.grapple.max_escape_investment == 10
                and c.grapple.max_resist_investment == c.pogo.max_investment == 10
            ),
        ),
        ("storyteller", "[multiple_actions]\nmax_actions = 10\n", lambda c: c.multiple_actions.max_actions == 10),
        (
            "storyteller",
            "[extended]\none_roll_per_task = false\n[multiple_actions]\nmax_actions = 10\n[duel]\nmax_actions = 10\n",
            lambda c: c.duel.max_actions == 10,
        ),
    ],
)
def test_values_the_rules_allow_load(ruleset: str, text: str, check: Any, tmp_path: Path) -> None:
    variant = tmp_path / "variant.toml"
    variant.write_text(text)
    assert check(_load(ruleset, variant))


# -- item 1: every number of every model is bounded on both sides ------------------------------------
def _numbers(ann: Any, meta: list[Any], path: str, seen: frozenset[type]) -> list[tuple[str, list[Any]]]:
    """Every int/float leaf of a model's annotations, with the constraints that apply to it."""
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(ann)
        flat = [x for m in extra for x in (*getattr(m, "metadata", ()), m)]
        return _numbers(base, [*meta, *flat], path, seen)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        if ann in seen:
            return []
        return [
            leaf
            for name, f in ann.model_fields.items()
            for leaf in _numbers(f.annotation, list(f.metadata), f"{path}.{name}".lstrip("."), seen | {ann})
        ]
    if origin in (list, tuple, dict):
        item = typing.get_args(ann)[-1]
        return _numbers(item, [], path + "[]", seen)
    if origin in (typing.Union, __import__("types").UnionType):
        return [leaf for a in typing.get_args(ann) if a is not type(None) for leaf in _numbers(a, meta, path, seen)]
    if ann in (int, float):
        return [(path, meta)]
    return []


def _has(meta: list[Any], *attrs: str) -> bool:
    return any(getattr(m, a, None) is not None for m in meta for a in attrs)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_number_has_both_bounds(ruleset: str) -> None:
    model = envs.get_ruleset(ruleset).config_model
    leaves = _numbers(model, [], "", frozenset())
    assert leaves
    unbounded = [p for p, meta in leaves if not (_has(meta, "ge", "gt") and _has(meta, "le", "lt"))]
    assert unbounded == []


@pytest.mark.parametrize("ruleset", RULESETS)
def test_defaults_are_plain_json(ruleset: str) -> None:
    """Item 2: a resolved config never holds a non-finite float, so record.json never holds Infinity."""
    cfg = envs.get_ruleset(ruleset).default_config()
    json.dumps(config_dict(cfg), allow_nan=False)


def test_dotted_override_is_strict() -> None:
    cfg = envs.get_ruleset("crossroads").default_config()
    with pytest.raises(ConfigError, match=r"episode\.players.*'3'"):
        with_override(cfg, "episode.players", "3")
    with pytest.raises(ConfigError, match=r"pool\.start.*True"):
        with_override(envs.get_ruleset("blackbird").default_config(), "pool.start", True)
    assert with_override(cfg, "episode.players", 4).episode.players == 4  # type: ignore[attr-defined]


# -- item 4 for the rules file itself: devices, folders, huge files ------------------------------------
def test_rules_file_that_is_a_directory(tmp_path: Path) -> None:
    msg = _error("blackbird", tmp_path)
    assert "directory" in msg and str(tmp_path) in msg


def test_rules_file_that_is_a_device() -> None:
    msg = _error("blackbird", Path("/dev/zero"))
    assert "not a regular file" in msg and "/dev/zero" in msg


def test_rules_file_too_large(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * MAX_FILE_BYTES + "\n")
    msg = _error("blackbird", big)
    assert "bytes" in msg and str(MAX_FILE_BYTES) in msg


def test_rules_file_not_utf8(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"[pool]\nstart = 3 # \xff\xfe\n")
    assert "UTF-8" in _error("blackbird", bad)


def test_long_bad_value_is_cut(tmp_path: Path) -> None:
    variant = tmp_path / "variant.toml"
    variant.write_text(f'[pool]\nstart = "{"x" * 5000}"\n')
    msg = _error("blackbird", variant)
    assert "pool.start" in msg and len(msg) < 600


# -- item 3: data paths in rules files (hallownest [data]) -------------------------------------------
WEAPONS = "[nail]\ndamage = 3\nweight = 1\nrerolls = 1\n[great_nail]\ndamage = 4\nweight = 2\ntwo_handed = true\n"


def _variant(folder: Path, weapons: str) -> Path:
    v = folder / "variant.toml"
    v.write_text(f"[data]\nweapons = {json.dumps(weapons)}\n")
    return v


@pytest.mark.parametrize(
    ("weapons", "words"),
    [
        ("/dev/zero", ["data.weapons", "/dev/zero", "allowed", "envs/hallownest/data"]),
        ("data", ["data.weapons", "directory"]),
        (".", ["data.weapons", "directory"]),
        ("../../../../../../../../etc/passwd", ["data.weapons", "allowed"]),
        ("data/../../../pyproject.toml", ["data.weapons", "allowed"]),
        ("/etc/hostname", ["data.weapons", "allowed"]),
        ("nope.toml", ["data.weapons", "nope.toml", "allowed"]),
        ("data/nope.toml", ["data.weapons", "not found"]),
        ("", ["data.weapons"]),
    ],
)
def test_bad_data_path(weapons: str, words: list[str], tmp_path: Path) -> None:
    msg = _error("hallownest", _variant(tmp_path, weapons))
    for w in words:
        assert w in msg, msg


def test_data_file_next_to_the_rules_file_loads(tmp_path: Path) -> None:
    (tmp_path / "my_weapons.toml").write_text(WEAPONS)
    cfg = _load("hallownest", _variant(tmp_path, "my_weapons.toml"))
    assert cfg.data.weapons == str((tmp_path / "my_weapons.toml").resolve())  # type: ignore[attr-defined]
    # the resolved config validates again (overrides, workers of this process, records)
    again = with_override(cfg, "duel.max_rounds", 5)
    assert again.data.weapons == cfg.data.weapons  # type: ignore[attr-defined]


def test_templates_without_bug_weight_next_to_the_rules_file(tmp_path: Path) -> None:
    """The supported form of tests/envs/hallownest/test_rules.py::test_templates_need_no_bug_weight."""
    from envs.hallownest.duel import DuelState

    (tmp_path / "templates.toml").write_text(
        "[medium]\nmight = 3\ngrace = 3\nshell = 3\ninsight = 3\nheart = 7\nstamina = 3\nsoul = 3\nspeed = 6\n"
    )
    v = tmp_path / "variant.toml"
    v.write_text('[data]\ntemplates = "templates.toml"\n')
    st = DuelState(_load("hallownest", v))  # type: ignore[arg-type]
    assert [b.p.heart for b in st.bugs] == [7, 7]


def test_data_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    inner = tmp_path / "variant_dir"
    inner.mkdir()
    (tmp_path / "outside.toml").write_text(WEAPONS)
    os.symlink(tmp_path / "outside.toml", inner / "link.toml")
    msg = _error("hallownest", _variant(inner, "link.toml"))
    assert "data.weapons" in msg and "allowed" in msg


def test_data_file_too_large(tmp_path: Path) -> None:
    (tmp_path / "w.toml").write_text(WEAPONS + "# " + "x" * MAX_FILE_BYTES + "\n")
    msg = _error("hallownest", _variant(tmp_path, "w.toml"))
    assert "data.weapons" in msg and "bytes" in msg


def test_data_file_that_is_no_table_echoes_nothing_of_it(tmp_path: Path) -> None:
    """A readable file that is no weapon table: the error names the key and our fields, never its keys/values."""
    (tmp_path / "pp.toml").write_text('[build-system]\nrequires = ["secret-token-123"]\n[project]\nname = "x"\n')
    msg = _error("hallownest", _variant(tmp_path, "pp.toml"))
    assert "data.weapons" in msg and "row 1" in msg
    for leaked in ("build-system", "requires", "secret-token-123", "project"):
        assert leaked not in msg, msg


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ("damage = 1000000000\nweight = 1\n", ["row 1", "damage", "≤ 20"]),
        ("damage = 3\nweight = -1\n", ["row 1", "weight", "≥ 0"]),
        ('damage = "3"\nweight = 1\n', ["row 1", "damage"]),
        ("damage = 3\nweight = 1\nrange = inf\n", ["row 1", "range"]),
        ("weight = 1\n", ["row 1", "damage"]),
        ("damage = 3\nweight = 1\ncolour = 2\n", ["row 1", "not one of"]),
    ],
)
def test_bad_weapon_row(row: str, words: list[str], tmp_path: Path) -> None:
    (tmp_path / "w.toml").write_text(f"[nail]\n{row}")
    msg = _error("hallownest", _variant(tmp_path, "w.toml"))
    assert "data.weapons" in msg
    for w in words:
        assert w in msg, msg
    assert "colour" not in msg


def test_bad_template_row(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(
        "[medium]\nmight = 3\ngrace = 3\nshell = 3\ninsight = 3\nheart = 1000000000\nstamina = 3\nsoul = 3\nspeed = 6\n"
    )
    v = tmp_path / "variant.toml"
    v.write_text('[data]\ntemplates = "t.toml"\n')
    msg = _error("hallownest", v)
    assert "data.templates" in msg and "heart" in msg and "≤ 30" in msg


def test_data_path_next_to_a_variant_inside_the_ruleset_stays_relative(tmp_path: Path) -> None:
    """A variant's own data file inside the ruleset folder is kept relative to it: the hash is checkout-free."""
    from envs.core.config import resolve_data_path

    home = tmp_path / "ruleset"
    (home / "data").mkdir(parents=True)
    (home / "variants").mkdir()
    (home / "variants" / "w.toml").write_text(WEAPONS)
    got = resolve_data_path("data.weapons", "w.toml", home, home / "data", home / "variants")
    assert got == "variants/w.toml"
    assert resolve_data_path("data.weapons", got, home, home / "data", None) == got  # validates again
    with pytest.raises(ConfigError, match="data.weapons"):
        resolve_data_path("data.weapons", "../../etc/hostname", home, home / "data", home / "variants")

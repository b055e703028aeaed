from pathlib import Path

import pytest

from envs.core.config import config_hash, load_config, with_override
from envs.core.errors import ConfigError

HERE = Path(__file__).parent


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "variant.toml"
    p.write_text(text)
    return p


def test_defaults_load(toy):
    cfg = load_config(toy)
    assert cfg.game.target == 20


def test_variant_overrides_only_its_keys(toy, tmp_path):
    cfg = load_config(toy, write(tmp_path, "[game]\ntarget = 30\n"))
    assert cfg.game.target == 30 and cfg.game.die_sides == 6


def test_variant_meta_table_is_not_a_rule(toy, tmp_path):
    cfg = load_config(toy, write(tmp_path, '[variant]\ndescription = "x"\n[game]\ntarget = 30\n'))
    assert cfg.game.target == 30


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("[game]\ntargte = 3\n", ["unknown key", "game.targte", "target"]),
        ('[game]\ntarget = "twenty"\n', ["game.target", "'twenty'", "int"]),
        ("[game]\ntarget = 1\n", ["game.target", "1", "≥ 2"]),
        ("[gmae]\ntarget = 3\n", ["unknown key", "gmae"]),
        ("[game\n", ["not valid TOML"]),
    ],
)
def test_bad_rules_file_names_key_value_and_allowed(toy, tmp_path, text, needles):
    with pytest.raises(ConfigError) as e:
        load_config(toy, write(tmp_path, text))
    msg = str(e.value)
    assert "\n" not in msg
    for n in needles:
        assert n in msg, msg


def test_missing_rules_file(toy, tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(toy, tmp_path / "nope.toml")


def test_hash_is_stable_and_sensitive(toy, tmp_path):
    a = load_config(toy)
    b = load_config(toy, write(tmp_path, "[game]\nmax_turns = 60\ntarget = 20\n"))
    c = load_config(toy, write(tmp_path, "[game]\ntarget = 21\n"))
    assert config_hash(a) == config_hash(b)
    assert config_hash(a) != config_hash(c)
    assert len(config_hash(a)) == 12


def test_with_override_validates(toy):
    cfg = load_config(toy)
    assert with_override(cfg, "game.target", 25).game.target == 25
    with pytest.raises(ConfigError):
        with_override(cfg, "game.target", 0)
    with pytest.raises(ConfigError):
        with_override(cfg, "game.nope", 1)

"""Issue 20: a designer's ruleset as a separate package (entry points, new-ruleset, check on it)."""

from __future__ import annotations

import importlib
import itertools
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Iterator
from fractions import Fraction
from importlib.metadata import EntryPoint
from pathlib import Path

import gymnasium as gym
import pytest

import envs
from agents.registry import make_agent, personas
from envs.core import registry
from envs.core.check import assert_checks
from envs.core.dice import Rng
from envs.core.errors import UserError
from envs.core.game import TERMINAL
from envs.core.policy import legal_mask
from tests.cli_helpers import run_cli
from training.cli.new_ruleset import title_of, write_template
from training.cli.odds import add_odds_commands
from training.sweep import sweep, variant_paths

REPO = Path(__file__).resolve().parents[2]
VENV_PYTHON = REPO / ".venv" / "bin" / "python"


def _forget(name: str) -> None:
    """Undo a test's registration: the ruleset, its env ids and its modules."""
    rs = registry._RULESETS.pop(name, None)
    registry.PLUGIN_ERRORS.pop(name, None)
    if rs is not None:
        for scenario in rs.scenarios:
            gym.registry.pop(rs.env_id(scenario), None)
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The template written for a fresh name, importable through sys.path and registered in-process."""
    name = "tmpl_inproc"
    root = tmp_path / name
    write_template(name, root)
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(name)
        envs.register_ruleset(module.RULESET)
        yield name, root
    finally:
        sys.path.remove(str(root))
        _forget(name)


# -- new-ruleset --------------------------------------------------------------------------------------
def test_new_ruleset_writes_the_one_shape_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "pkg"
    r = run_cli(capsys, "new-ruleset", "my_game", "--dir", str(target))
    assert r.code == 0, r.err
    files = {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()}
    for rel in (
        "pyproject.toml",
        "my_game/__init__.py",
        "my_game/rules.py",
        "my_game/actions.py",
        "my_game/observation.py",
        "my_game/dice.py",
        "my_game/config.py",
        "my_game/rules.toml",
        "my_game/contest.py",
        "my_game/scenarios.py",
        "my_game/personas.py",
        "tests/test_my_game.py",
    ):
        assert rel in files, rel
    assert any(f.startswith("my_game/variants/") and f.endswith(".toml") for f in files)
    assert not [f for f in files if f.endswith(".tmpl")]
    text = (target / "pyproject.toml").read_text()
    assert '[project.entry-points."rulebreaker.rulesets"]' in text and 'my_game = "my_game:RULESET"' in text
    assert '"rulebreaker"' in text
    card = (target / "my_game" / "contest.py").read_text()
    for section in ("Description", "Actions", "Observation", "Rewards", "Episode end", "Arguments"):
        assert f"## {section}\n" in card
    assert "__NAME__" not in card and "__TITLE__" not in (target / "my_game" / "config.py").read_text()


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("storyteller", "already taken"),
        ("9lives", "not a lower-case Python identifier"),
        ("My-Game", "not a lower-case Python identifier"),
        ("class", "not a lower-case Python identifier"),
        ("json", "importable Python module"),
    ],
)
def test_new_ruleset_refuses_bad_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, fragment: str
) -> None:
    r = run_cli(capsys, "new-ruleset", name, "--dir", str(tmp_path / "x"))
    assert r.code == 2
    assert fragment in r.err and len(r.err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_new_ruleset_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    r = run_cli(capsys, "new-ruleset", "fresh_game", "--dir", str(target))
    assert r.code == 2 and "already exists" in r.err
    assert [p.name for p in target.iterdir()] == ["keep.txt"] and (target / "keep.txt").read_text() == "mine"


# -- the template in-process (fast) ------------------------------------------------------------------
def test_generated_template_passes_the_contract_kit_in_process(generated: tuple[str, Path]) -> None:
    name, _ = generated
    results = assert_checks(name, steps=1000)
    assert {r.check for r in results} >= {"config", "env_checkers", "determinism", "random_play", "clone", "chance",
                                          "odds"}  # fmt: skip


def test_generated_template_personas_env_ids_and_cli(
    generated: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    name, _ = generated
    assert set(personas(name)) == {"bruiser", "careful"}
    env = gym.make(f"rulebreaker/{title_of(name)}Contest-v0")
    obs, _ = env.reset(seed=1)
    assert obs.shape == (10,)
    rs = envs.get_ruleset(name)
    cfg = rs.default_config()
    state = rs.new_game(cfg, "contest")
    bots = [make_agent(name, "bruiser"), make_agent(name, "careful")]
    rng = Rng(3)
    while state.current_player() != TERMINAL:
        if state.is_chance():
            state.apply_chance(state.sample_chance(rng))
        else:
            seat = state.current_player()
            state.apply_action(bots[seat].act(state, legal_mask(state, 6), rng))
    assert state.outcome() is not None
    r = run_cli(capsys, "play", name, "contest", "--agents", "bruiser,careful", "--seed", "2")
    assert r.code == 0 and "Game over" in r.out
    r = run_cli(capsys, "check", name, "--steps", "300", "--scenario", "contest")
    assert r.code == 0 and "all" in r.out and "passed" in r.out


def test_generated_template_own_tests_pass(generated: tuple[str, Path]) -> None:
    _, root = generated
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(
        # the contract-kit test is the in-process test above; the slow install test runs them all
        [
            str(VENV_PYTHON),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "not contract_kit",
            str(root / "tests"),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_generated_template_odds_and_sweep_in_process(
    generated: tuple[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`odds` shows the plugin's own mechanic (its provider, exact against a brute force here) and `sweep`
    runs a job over its variants."""
    name, root = generated
    assert name in add_odds_commands()
    r = run_cli(capsys, "odds", name, "--dice", "2", "--simulate", "20000", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["ruleset"] == name and data["query"] == {"dice": 2, "sides": 6, "hit_on": 4}
    faces = list(itertools.product(range(1, 7), repeat=2))  # the rules as written: d6, a hit on 4+
    for k in range(3):
        brute = Fraction(sum(1 for f in faces if sum(x >= 4 for x in f) == k), len(faces))
        assert Fraction(data["fractions"][str(k)]) == brute
    assert data["simulation"]["flagged"] == []
    r = run_cli(capsys, "odds", name, "--dice", "0")
    assert r.code == 2 and "--dice must be between 1 and 20" in r.err
    res = sweep(name, variant_paths(name, None), "evaluate", tmp_path / "sweep", "local", 1, games=4)
    assert [rec["exit_code"] for rec in res.records] == [0] * len(res.records) and len(res.records) >= 2
    assert all(rec["summary"] for rec in res.records)


# -- broken plugins -------------------------------------------------------------------------------------
BROKEN = {
    "plug_import": "raise ImportError('no module named dragons')\n",
    "plug_notruleset": "RULESET = 42\n",
    "plug_clash": """
        from tests.toy import RULESET as TOY
        import dataclasses
        RULESET = dataclasses.replace(TOY, name="storyteller")
    """,
    "plug_missing": """
        import dataclasses
        from envs.core.game import State
        from tests.toy import RULESET as TOY
        class Half(State):  # forgot legal_actions, apply_action, observation...
            def current_player(self):
                return 0
        def _new(cfg):
            return Half(2)
        RULESET = dataclasses.replace(
            TOY, name="plug_missing", scenarios={"race": dataclasses.replace(TOY.scenarios["race"], new_game=_new)}
        )
    """,
    "plug_badodds": """
        import dataclasses
        from tests.toy import RULESET as TOY
        RULESET = dataclasses.replace(TOY, name="plug_badodds", odds=lambda config, args: None)
    """,
    "plug_shape": """
        import dataclasses
        from tests.toy import RULESET as TOY
        RULESET = dataclasses.replace(
            TOY, name="plug_shape", scenarios={"race": dataclasses.replace(TOY.scenarios["race"], observation_size=7)}
        )
    """,
}


def test_broken_plugins_each_give_one_line_and_leave_the_shipped_rulesets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for mod, body in BROKEN.items():
        (tmp_path / f"{mod}.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [EntryPoint(m, f"{m}:RULESET", registry.ENTRY_POINT_GROUP) for m in BROKEN]
    points.append(EntryPoint("plug_clash_name", "plug_clash:RULESET", registry.ENTRY_POINT_GROUP))
    monkeypatch.setattr(registry, "entry_points", lambda group: points if group == registry.ENTRY_POINT_GROUP else [])
    capsys.readouterr()
    try:
        registry.load_plugin_rulesets()
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == len(points)
        for ep, line in zip(points, lines, strict=True):
            assert f"plugin '{ep.name} = {ep.value}'" in line and "rulebreaker.rulesets" in line
        by_name = dict(registry.PLUGIN_ERRORS)
        assert "failed to import" in by_name["plug_import"] and "dragons" in by_name["plug_import"]
        assert "is not a Ruleset" in by_name["plug_notruleset"]
        assert "clashes with a shipped ruleset" in by_name["plug_clash_name"]
        assert "cannot start a game" in by_name["plug_missing"] and "abstract" in by_name["plug_missing"]
        assert "shape (4,), expected (7,)" in by_name["plug_shape"]
        assert "odds is not an envs.core.odds.OddsProvider" in by_name["plug_badodds"]
        assert set(registry.RULESET_NAMES) <= set(envs.all_rulesets())
        assert envs.get_ruleset("storyteller").name == "storyteller"
        with pytest.raises(UserError, match="plug_shape"):
            envs.get_ruleset("plug_shape")
        r = run_cli(capsys, "play", "plug_import", "x")
        assert r.code == 2 and "failed to import" in r.err and len(r.err.strip().splitlines()) == 1
    finally:
        for m in [*BROKEN, "plug_clash_name"]:
            _forget(m)


def test_entry_point_may_name_a_module_or_a_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plug_factory.py").write_text(
        "import dataclasses\nfrom tests.toy import RULESET as TOY\n"
        "def make():\n    return dataclasses.replace(TOY, name='plug_factory', title='PlugFactory')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [EntryPoint("plug_factory", "plug_factory:make", registry.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(registry, "entry_points", lambda group: points)
    try:
        registry.load_plugin_rulesets()
        assert envs.get_ruleset("plug_factory").title == "PlugFactory"
        assert "rulebreaker/PlugFactoryRace-v0" in gym.registry
    finally:
        _forget("plug_factory")


# -- MUST SHOW: generate, install editable, run the CLI, uninstall -------------------------------------
def _overlay_venv(root: Path) -> Path:
    """A throw-away venv that sees the project venv's packages (so nothing is downloaded) but installs into
    itself: the editable install never touches the shared ``.venv``."""
    subprocess.run([str(VENV_PYTHON), "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = root / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    main_site = sysconfig.get_path("purelib")
    Path(site, "rulebreaker_project_venv.pth").write_text(f"import site; site.addsitedir({main_site!r})\n")
    return python


@pytest.mark.slow  # ~75 s on a quiet 2-core machine (discover dominates); the in-process tests above are the fast twin
def test_template_installed_editable_runs_every_command(tmp_path: Path) -> None:
    name = "tmpl_installed"
    pkg = tmp_path / "src" / name
    write_template(name, pkg)
    work = tmp_path / "work"  # not the project's parent: `python -c` puts the cwd first on sys.path
    work.mkdir()
    python = _overlay_venv(tmp_path / "venv")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), *args], cwd=work, capture_output=True, text=True, timeout=600, env=dict(os.environ)
        )

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run("-c", "import sys; from training.cli import main; sys.argv[0] = 'rulebreaker'; main()", *args)

    pip = run("-m", "pip", "install", "-q", "-e", str(pkg), "--no-deps", "--no-build-isolation")
    assert pip.returncode == 0, pip.stderr[-2000:]
    try:
        found = run(
            "-c",
            "import importlib.metadata as m; print([e.value for e in m.entry_points(group='rulebreaker.rulesets')])",
        )
        assert f"{name}:RULESET" in found.stdout
        listed = cli("rulesets")
        assert listed.returncode == 0 and name in listed.stdout
        checked = cli("check", name, "--steps", "2000")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "all 8 checks passed" in checked.stdout  # the 7 per scenario and odds
        played = cli("play", name, "contest", "--agents", "bruiser,careful", "--seed", "4")
        assert played.returncode == 0 and "Game over" in played.stdout, played.stderr
        evaluated = cli("evaluate", name, "contest", "--games", "20", "--json", "--out", str(tmp_path / "eval"))
        assert evaluated.returncode == 0, evaluated.stderr[-2000:]
        assert (tmp_path / "eval" / "record.json").exists()
        discovered = cli("discover", name, "contest", "--budget", "quick", "--no-rl", "--out", str(tmp_path / "disc"))
        assert discovered.returncode == 0, discovered.stderr[-2000:]
        assert (tmp_path / "disc" / "report.md").exists()
        odds = cli("odds", name, "--dice", "3", "--simulate", "20000", "--json")
        assert odds.returncode == 0 and json.loads(odds.stdout)["simulation"]["flagged"] == [], odds.stderr[-2000:]
        swept = cli("sweep", name, "--job", "evaluate", "--games", "4", "--out", str(tmp_path / "sweep"))
        assert swept.returncode == 0, swept.stderr[-2000:]
        assert len(list((tmp_path / "sweep" / "records").glob("*.json"))) >= 2
        own = subprocess.run(
            [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
            cwd=pkg,
            capture_output=True,
            text=True,
        )
        assert own.returncode == 0, own.stdout[-2000:]
    finally:
        gone = run("-m", "pip", "uninstall", "-y", "-q", f"rulebreaker-{name}")
        assert gone.returncode == 0, gone.stderr
    after = run("-c", "import importlib.metadata as m; print(len(m.entry_points(group='rulebreaker.rulesets')))")
    assert after.stdout.strip() == "0"

"""``rulebreaker odds``: every exact table against an independent brute-force enumeration written
here (every face of every die, every assignment), plus the engines' own exact functions, the seed's
worked values, the CLI's JSON/plot output and its one-line errors."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from results import odds as O  # noqa: N812
from tests.cli_helpers import run_cli

# ------------------------------------------------------------------------------------------------
# Brute-force oracles: enumerate faces, apply the rules text literally
# ------------------------------------------------------------------------------------------------


def brute_storyteller(pool: int, difficulty: int, willpower: bool) -> dict[str, Fraction]:
    """Rules 3-5, 8 of docs/rules/storyteller.md over all 10^pool faces."""
    c: Counter[str] = Counter()
    for faces in itertools.product(range(1, 11), repeat=pool):
        s = sum(1 for f in faces if f >= difficulty or f == 10)
        o = faces.count(1)
        if s == 0 and o >= 1 and not willpower:
            c["botch"] += 1
        else:
            c[str(max(0, s - o) + (1 if willpower else 0))] += 1
    return {k: Fraction(v, 10**pool) for k, v in c.items()}


def brute_blackbird(dice: int, success_on: int, difficulty: int | None) -> dict[str, Fraction]:
    c: Counter[str] = Counter()
    for faces in itertools.product(range(1, 7), repeat=dice):
        s = sum(1 for f in faces if f >= success_on)
        c[str(s)] += 1
        if difficulty is not None and s >= difficulty:
            c["pass"] += 1
    return {k: Fraction(v, 6**dice) for k, v in c.items()}


def brute_hallownest(dice: int, rerolls: int, success_on: int) -> dict[str, Fraction]:
    """Roll every face; reroll the first ``rerolls`` failed dice with every face; keep the better."""
    c: Counter[str] = Counter()
    for faces in itertools.product(range(1, 7), repeat=dice):
        for new in itertools.product(range(1, 7), repeat=rerolls):
            out = list(faces)
            used = 0
            for i, f in enumerate(out):
                if used < rerolls and f < success_on:
                    out[i] = max(f, new[used])
                    used += 1
            c[str(sum(1 for f in out if f >= success_on))] += 1
    return {k: Fraction(v, 6 ** (dice + rerolls)) for k, v in c.items()}


def brute_crossroads(stats: tuple[int, int, int] | None, influence: int | None = None) -> dict[str, Fraction]:
    """Every ordered 3d10 roll, every one-die-per-stat assignment; keep the best; doubles/triples."""
    c: Counter[str] = Counter()
    for roll in itertools.product(range(1, 11), repeat=3):
        if stats is not None:
            best = max(
                sum(1 for die, st in zip(perm, stats, strict=True) if die <= st)
                for perm in itertools.permutations(roll)
            )
        else:
            best = sum(1 for die in roll if die <= influence)  # type: ignore[operator]
        c[str(best)] += 1
        distinct = len(set(roll))
        if distinct == 2:
            c["crossroads_double"] += 1
        if distinct == 1:
            c["crossroads_triple"] += 1
    return {k: Fraction(v, 1000) for k, v in c.items()}


def brute_wicked(
    dice: tuple[int, ...], vs: tuple[int, ...], adv: int, vs_adv: int, last_round: bool = False
) -> dict[str, Fraction]:
    """Rules 6, 11, 12 of docs/rules/wicked_age.md over every face of both rolls and advantage dice."""

    def readings(ds: tuple[int, ...], k: int) -> Counter[tuple[int, ...]]:
        out: Counter[tuple[int, ...]] = Counter()
        for faces in itertools.product(*(range(1, d + 1) for d in ds)):
            for advs in itertools.product(range(1, 7), repeat=k):
                s = sorted(faces, reverse=True)
                s[0] += sum(advs)
                out[tuple(s + [0] * (4 - len(s)))] += 1
        return out

    ra, rc = readings(dice, adv), readings(vs, vs_adv)
    c: Counter[str] = Counter()
    for a_t, na in ra.items():
        for c_t, nc in rc.items():
            a, ch = a_t[0], c_t[0]
            if 2 * a <= ch:
                r = "absolute_loss"
            elif a_t < c_t:
                r = "absolute_loss" if last_round else "loses_advantage"
            elif a >= 2 * ch:
                r = "absolute_win"
            else:
                r = "absolute_win" if last_round else "wins_advantage"
            c[r] += na * nc
    total = sum(ra.values()) * sum(rc.values())
    return {k: Fraction(v, total) for k, v in c.items()}


def same(table: O.OddsTable, oracle: dict[str, Fraction]) -> None:
    for k, v in oracle.items():
        assert table.probabilities[k] == v, k
    for k, v in table.probabilities.items():
        assert oracle.get(k, Fraction(0)) == v, k
    assert sum(table.probabilities[o] for o in table.partition) == 1


# ------------------------------------------------------------------------------------------------
# The package's tables against the brute force, on a grid of parameters
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pool", [1, 2, 3, 4])
@pytest.mark.parametrize("willpower", [False, True])
def test_storyteller_table_matches_brute_force(pool: int, willpower: bool) -> None:
    for d in range(2, 11):
        same(O.storyteller_odds(pool, d, willpower), brute_storyteller(pool, d, willpower))


def test_storyteller_seed_values_5d10_at_6() -> None:
    """docs/rules/storyteller.md: botch 2.101%, failure 13.499%, 1-5: 19.65/26.0/23.125/12.5/3.125%."""
    p = O.storyteller_odds(5, 6).probabilities
    assert p == brute_storyteller(5, 6, False)
    expect = {"botch": 2.101, "0": 13.499, "1": 19.65, "2": 26.0, "3": 23.125, "4": 12.5, "5": 3.125}
    for k, v in expect.items():
        assert 100 * float(p[k]) == pytest.approx(v, abs=0.0006)


@pytest.mark.parametrize("success_on", [3, 4, 5, 6])
def test_blackbird_table_matches_brute_force(success_on: int) -> None:
    for dice in range(1, 7):
        for difficulty in (None, 1, 2, 3, dice, dice + 1):
            same(
                O.blackbird_odds(dice, difficulty, success_on=success_on), brute_blackbird(dice, success_on, difficulty)
            )


def test_blackbird_seed_value() -> None:
    """docs/rules/blackbird.md: 5d6 counting 4+, P(at least 3 successes) = 1/2."""
    assert O.blackbird_odds(5, 3).probabilities["pass"] == Fraction(1, 2)


@pytest.mark.parametrize(("dice", "rerolls"), [(d, k) for d in range(1, 5) for k in range(0, 5) if d + k <= 6])
def test_hallownest_table_matches_brute_force(dice: int, rerolls: int) -> None:
    for success_on in (4, 5, 6):
        same(O.hallownest_odds(dice, rerolls, success_on=success_on), brute_hallownest(dice, rerolls, success_on))


def test_crossroads_table_matches_brute_force() -> None:
    rng = random.Random(3)
    grid = {(1, 1, 1), (10, 10, 10), (1, 5, 10), (4, 4, 4), (9, 1, 2), (3, 3, 8)}
    while len(grid) < 16:
        grid.add((rng.randint(1, 10), rng.randint(1, 10), rng.randint(1, 10)))
    for stats in sorted(grid):
        same(O.crossroads_odds(stats), brute_crossroads(stats))
    for influence in (1, 4, 8, 10):
        same(O.crossroads_odds(None, influence=influence), brute_crossroads(None, influence))


@pytest.mark.parametrize(
    ("dice", "vs", "adv", "vs_adv"),
    [
        ((12, 10), (10, 8), 0, 0),
        ((12, 10), (10, 8), 1, 0),
        ((10, 8), (12, 10), 0, 1),
        ((8,), (6, 4), 2, 0),
        ((6, 6), (6, 6), 1, 1),
        ((12, 8, 4), (10, 6), 0, 0),
        ((4,), (12,), 0, 2),
    ],
)
def test_wicked_age_table_matches_brute_force(dice, vs, adv, vs_adv) -> None:  # type: ignore[no-untyped-def]
    for last in (False, True):
        same(O.wicked_age_odds(dice, vs, adv, vs_adv, last_round=last), brute_wicked(dice, vs, adv, vs_adv, last))


def test_wicked_age_worked_example_reads_as_the_rules() -> None:
    """Example B: Amek's (10,3) stands, Mekha answers (5,4): 2 x 5 <= 10 is an absolute loss — so with
    d10 vs d10 a roll of exactly half is a loss: the table must give absolute_loss > 0 for d10 vs d10."""
    t = O.wicked_age_odds((10,), (10,))
    # P(2a <= c) for two d10: sum over c of floor(c/2) / 100 = (0+1+1+2+2+3+3+4+4+5)/100
    assert t.probabilities["absolute_loss"] == Fraction(25, 100)


# ------------------------------------------------------------------------------------------------
# The engines' own exact functions against the same brute force (cross-checks of the rulesets)
# ------------------------------------------------------------------------------------------------
def test_engine_exact_tables_agree_with_brute_force() -> None:
    st = pytest.importorskip("envs.storyteller.dice")
    for pool in (1, 2, 3):
        for d in (2, 6, 10):
            for wp in (False, True):
                e = {("botch" if k == st.BOTCH else str(k)): v for k, v in st.outcome_distribution(pool, d, wp).items()}
                assert {k: v for k, v in e.items() if v} == brute_storyteller(pool, d, wp)
    hn = pytest.importorskip("envs.hallownest.dice")
    for dice, k in ((3, 0), (3, 2), (4, 1)):
        e2 = {str(s): v for s, v in hn.success_distribution(dice, k).items() if v}
        assert e2 == brute_hallownest(dice, k, 5)
    cr = pytest.importorskip("envs.crossroads.dice")
    for stats in ((4, 4, 4), (1, 5, 10)):
        assert {k: v for k, v in cr.odds(stats).items() if v} == brute_crossroads(stats)
    wa = pytest.importorskip("envs.wicked_age.dice")
    got = {r.label: v for r, v in wa.comparison_odds((12, 10), (10, 8), 1, 0).items() if v}
    assert got == brute_wicked((12, 10), (10, 8), 1, 0)
    bb = pytest.importorskip("envs.blackbird.dice")
    for dice in (1, 4):
        dist = bb.success_distribution(dice, 4)
        oracle = brute_blackbird(dice, 4, None)
        assert [pytest.approx(float(oracle[str(s)]), abs=1e-12) for s in range(dice + 1)] == list(dist)


# ------------------------------------------------------------------------------------------------
# The CLI: --simulate with the engines' roll code, --json, --plot, errors
# ------------------------------------------------------------------------------------------------
SIM_CASES = [
    ("storyteller", ["--pool", "6", "--difficulty", "7"]),
    ("storyteller", ["--pool", "4", "--difficulty", "6", "--willpower"]),
    ("blackbird", ["--dice", "5", "--difficulty", "3"]),
    ("hallownest", ["--dice", "4", "--rerolls", "2"]),
    ("crossroads", ["--stats", "3,4,5"]),
    ("crossroads", ["--influence", "4"]),
    ("wicked_age", ["--dice", "d12,d10", "--vs", "d10,d8", "--advantage", "1"]),
    ("wicked_age", ["--dice", "d8,d6", "--vs", "d12", "--vs-advantage", "1", "--last-round"]),
]


@pytest.mark.parametrize(("ruleset", "args"), SIM_CASES)
def test_simulate_agrees_with_exact_table(capsys, ruleset: str, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip(f"envs.{ruleset}.dice")
    n = 20_000
    r = run_cli(capsys, "odds", ruleset, *args, "--simulate", str(n), "--seed", "11", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    sim = data["simulation"]
    assert sim["n"] == n and sim["flagged"] == []
    for o, p in data["probabilities"].items():
        se = (p * (1 - p) / n) ** 0.5
        assert abs(sim["frequencies"][o] - p) <= 4 * se + 1e-12, o
    assert sum(data["probabilities"][o] for o in data["partition"]) == pytest.approx(1.0)


def test_simulate_flags_a_wrong_engine() -> None:
    """A sampler with a planted bug (a 1 counted as a success) is caught."""
    from envs.core.dice import Rng

    table = O.blackbird_odds(3)

    def buggy(rng: Rng) -> list[str]:
        faces = rng.roll(3, 6)
        return [str(sum(1 for f in faces if f >= 4 or f == 1))]

    sim = O.simulate(table, buggy, 20_000, seed=1)
    assert sim.flagged and "0" in sim.flagged


def test_json_shape(capsys) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(capsys, "odds", "storyteller", "--pool", "3", "--difficulty", "6", "--json")
    assert r.code == 0
    data = json.loads(r.out)
    assert data["ruleset"] == "storyteller"
    assert data["query"] == {"pool": 3, "difficulty": 6, "willpower": False}
    assert list(data["probabilities"]) == ["botch", "0", "1", "2", "3"]
    assert Fraction(data["fractions"]["3"]) == Fraction(1, 8)  # (5/10)^3
    assert data["probabilities"]["3"] == 0.125


def test_blackbird_json_has_pass(capsys) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(capsys, "odds", "blackbird", "--dice", "5", "--difficulty", "3", "--json")
    data = json.loads(r.out)
    assert list(data["probabilities"]) == ["0", "1", "2", "3", "4", "5", "pass"]
    assert data["probabilities"]["pass"] == 0.5 and data["events"] == ["pass"]


def test_terminal_table_and_plot(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    png = tmp_path / "odds.png"
    r = run_cli(capsys, "odds", "crossroads", "--stats", "4,4,4", "--plot", str(png))
    assert r.code == 0, r.err
    assert "crossroads_triple" in r.out and "1.000%" in r.out and "█" in r.out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rules_variant_changes_the_success_face(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("envs.blackbird")
    v = tmp_path / "five.toml"
    v.write_text("[dice]\nsuccess_on = 5\n")
    r = run_cli(capsys, "odds", "blackbird", "--dice", "2", "--rules", str(v), "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["probabilities"]["2"] == pytest.approx(1 / 9)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["storyteller", "--pool", "0", "--difficulty", "6"], "--pool must be between 1"),
        (["storyteller", "--pool", "5", "--difficulty", "11"], "--difficulty must be between 2 and 10"),
        (["storyteller", "--pool", "5", "--difficulty", "1"], "--difficulty must be between 2 and 10"),
        (["blackbird", "--dice", "0"], "--dice must be between 1"),
        (["blackbird", "--dice", "3", "--difficulty", "21"], "--difficulty must be between 1 and 20"),
        (["hallownest", "--dice", "3", "--rerolls", "-1"], "--rerolls must be between 0"),
        (["hallownest", "--dice", "-2"], "--dice must be between 1"),
        (["crossroads", "--stats", "3,4"], "--stats needs 3 comma-separated integers"),
        (["crossroads", "--stats", "3,4,11"], "--stats M must be between 1 and 10"),
        (["crossroads"], "give exactly one of --stats"),
        (["wicked_age", "--dice", "d7,d10", "--vs", "d8"], "unknown die 'd7' in --dice"),
        (["wicked_age", "--dice", "d12", "--vs", "x"], "unknown die 'x' in --vs"),
        (["wicked_age", "--dice", "d12", "--vs", "d8", "--advantage", "-1"], "--advantage must be between 0"),
        (["blackbird", "--dice", "3", "--simulate", "0"], "--simulate needs at least 1 roll"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, args: list[str], fragment: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(capsys, "odds", *args)
    assert r.code == 2
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1, r.err
    assert fragment in lines[0] and lines[0].startswith("error:")
    assert r.out == ""


def test_benchmarks_are_named_callables_returning_tables() -> None:
    benches = O.odds_benchmarks()
    assert len(benches) >= 5
    for name, fn in benches.items():
        t = fn()
        assert isinstance(t, O.OddsTable) and name.startswith(f"odds.{t.ruleset}.")


# ------------------------------------------------------------------------------------------------
# The protocol: every shipped ruleset provides its mechanic; bounded work; an unwritable --plot
# ------------------------------------------------------------------------------------------------
def test_every_shipped_ruleset_provides_its_odds_through_the_protocol() -> None:
    from envs.core.odds import OddsProvider
    from envs.core.registry import RULESET_NAMES, get_ruleset

    for name in RULESET_NAMES:
        provider = get_ruleset(name).odds
        assert isinstance(provider, OddsProvider), name
        assert provider.summary and any(p.required or p.kind is str for p in provider.params), name


def test_simulate_is_bounded(capsys) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(capsys, "odds", "blackbird", "--dice", "3", "--simulate", str(10**12))
    assert r.code == 2 and r.out == ""
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--simulate" in lines[0] and f"{O.MAX_SIMULATE:,}" in lines[0]


@pytest.mark.parametrize("where", ["folder", "under_a_file"])
def test_unwritable_plot_prints_the_results_and_exits_2_naming_the_path(capsys, tmp_path: Path, where: str) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    target = tmp_path if where == "folder" else blocker / "odds.png"
    r = run_cli(capsys, "odds", "blackbird", "--dice", "5", "--difficulty", "3", "--plot", str(target), "--json")
    assert r.code == 2
    assert json.loads(r.out)["probabilities"]["pass"] == 0.5  # the results are printed all the same
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(target) in lines[0].replace("\n", "") and lines[0].startswith("error:")
    assert blocker.read_text() == "x"


def test_the_contract_kit_cross_checks_every_shipped_odds_provider_and_catches_a_wrong_sampler() -> None:
    import dataclasses

    from envs.core.check import CheckFailure, check_odds
    from envs.core.dice import Rng
    from envs.core.odds import Odds
    from envs.core.registry import RULESET_NAMES, get_ruleset

    for name in RULESET_NAMES:
        rs = get_ruleset(name)
        assert rs.odds.examples, name
        assert "example queries" in check_odds(rs, rs.default_config()), name
    bb = get_ruleset("blackbird")

    def buggy(config, args):  # type: ignore[no-untyped-def]
        right = bb.odds.odds(config, args)

        def sampler(rng: Rng) -> list[str]:  # a 1 counted as a success
            return [str(sum(1 for f in rng.roll(args["dice"], 6) if f >= 4 or f == 1))]

        return Odds(right.probabilities, right.partition, right.title, right.query, sampler)

    wrong = dataclasses.replace(bb, odds=dataclasses.replace(bb.odds, odds=buggy, examples=({"dice": 3},)))
    with pytest.raises(CheckFailure, match="does not follow the exact table"):
        check_odds(wrong, bb.default_config())

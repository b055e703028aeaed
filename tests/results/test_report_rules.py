"""The report names the rule behind a finding: rule numbers from the rules files, words from the rulebook.

Oracles: the rule numbers and titles as ``docs/rules/<ruleset>.md`` states them (read by a person: rule 14 of
blackbird is "Maneuvers" and describes aiming), and the cross-check that a knob's rule, found through the
comment of ``rules.toml``, is the rule whose text names that key.
"""

import tomllib

import pytest

from envs.core.registry import get_ruleset
from results.report import RuleRefs, check_toml, parse_knob_rules, parse_rulebook, plain_text, toml_change, what_to_try

RULESETS = ("blackbird", "hallownest", "storyteller", "wicked_age", "crossroads")


def test_numbered_items_and_headed_sections_both_parse():
    text = "\n".join(
        [
            "# Title",
            "## Part",
            "1. **Dice.** Roll d6;",
            "   a 4+ succeeds.",
            "2. **Pool.** Spend dice.",
            "Closing paragraph.",
            "## 3. Faction",
            "A faction starts at 4.",
            "1. sub-step inside the section",
        ]
    )
    rules = parse_rulebook(text)
    assert [r for r in rules] == ["1", "2", "3"]
    assert rules["1"].title == "Dice" and rules["1"].text == "Roll d6; a 4+ succeeds."
    assert "Closing" not in rules["2"].text
    assert rules["3"].title == "Faction" and "sub-step" in rules["3"].text


def test_blackbird_rule_titles_as_the_rulebook_states_them():
    rules = RuleRefs.load("blackbird", "duel").rules
    assert rules["5"].title == "Pool dice"
    assert rules["14"].title == "Maneuvers"
    assert rules["13"].title == "Attack"
    assert len(rules) == 18


def test_knob_numbers_from_rules_toml_comments():
    toml = "\n".join(
        [
            "[pool]",
            "cap = 10   # Rule 5: the pool never exceeds 10",
            "start = 7",
            "# Rule 16: the damage table",
            "[[combat.wounds]]",
            'name = "light"',
            "[combat]",
            "aim_max = 3  # Rule 14 [decision]: at most 3",
        ]
    )
    k = parse_knob_rules(toml)
    assert k == {"pool.cap": "5", "combat.wounds.name": "16", "combat.aim_max": "14"}


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_declared_knob_resolves_to_a_rule_of_the_rulebook(ruleset):
    rs = get_ruleset(ruleset)
    refs = RuleRefs.load(ruleset)
    for knob in rs.knobs:
        rule = refs.rule_for(knob.key)
        assert rule is not None, knob.key
        assert rule.number in refs.rules, (knob.key, rule.number)


@pytest.mark.parametrize("ruleset", ["blackbird", "storyteller"])
def test_a_knobs_rule_is_the_rule_whose_text_names_it(ruleset):
    refs = RuleRefs.load(ruleset)
    for knob in get_ruleset(ruleset).knobs:
        rule = refs.rule_for(knob.key)
        assert rule is not None and f"`{knob.key}`" in rule.text, (knob.key, rule)


@pytest.mark.parametrize("scenario", ["duel", "session"])
def test_every_blackbird_option_names_its_rule_and_the_rule_speaks_of_it(scenario):
    sc = get_ruleset("blackbird").scenario(scenario)
    refs = RuleRefs.load("blackbird", scenario)
    assert set(sc.option_rules) == set(sc.option_groups)
    for group in sc.option_groups:
        rule = refs.rule_for(group)
        assert rule is not None and rule.text, group
    # the rulebook's own words for the options of rule 14 (docs/rules/blackbird.md)
    if scenario == "duel":
        assert refs.rule_for("aim").quote("aim").startswith("Aim/Concentrate")
        assert refs.rule_for("all_out_defense").quote("all_out_defense").startswith("All-out defence")
        assert refs.rule_for("called_shot").quote("called_shot").startswith("A called shot")


def test_plain_text_drops_markdown_marks():
    assert (
        plain_text("*All-out defence*: +`combat.x` die, **no** attack.") == "All-out defence: +combat.x die, no attack."
    )


def _knob_row(key, value, was, win_change, adapting_change):
    return {
        "key": key,
        "value": value,
        "was": was,
        "description": f"{key} changed",
        "example": "sensitivity-0",
        "metrics": {
            "win[a vs b]": {"change": win_change, "low": win_change - 0.05, "high": win_change + 0.05},
            "return[search:greedy@16 adapting]": {
                "change": adapting_change,
                "low": adapting_change - 0.1,
                "high": adapting_change + 0.1,
            },
            "length": {"change": 1.0, "low": 0.5, "high": 1.5},
        },
    }


def _finding(kind, subject, value=-0.3, ci=(-0.5, -0.1)):
    return {
        "kind": kind,
        "subject": subject,
        "severity": "high",
        "metric": "m",
        "value": value,
        "threshold": 0.05,
        "ci": list(ci),
        "evidence": "",
        "summary": "s",
        "details": {"usage_in_context": 0.05},
    }


SECTIONS = {
    "sensitivity": {
        "knobs": [
            _knob_row("combat.aim_max", 1, 3, -0.01, 0.0),
            _knob_row("combat.aim_max", 5, 3, 0.02, 0.4),
            _knob_row("pool.cap", 7, 10, 0.30, -0.2),
            _knob_row("pool.cap", 15, 10, 0.02, 0.1),
            _knob_row("help.returned_on_failure", False, True, 0.0, 0.0),
        ]
    }
}


@pytest.mark.parametrize(
    "finding",
    [
        _finding("dominated_option", "aim"),
        _finding("fragile_rule", "pool.cap", 0.3, (0.25, 0.35)),
        _finding("dead_rule", "help.returned_on_failure", 0.0, (-0.005, 0.005)),
        _finding("seat_advantage", "seat 0", 0.1, (0.08, 0.12)),
    ],
)
def test_what_to_try_is_toml_the_rules_accept(finding):
    rs = get_ruleset("blackbird")
    refs = RuleRefs.load("blackbird", "duel")
    tries = what_to_try(finding, SECTIONS, refs, "blackbird", "duel")
    assert tries[-1]["reading"].startswith("Search for the smallest change")
    assert f"--fix '{finding['kind']}:{finding['subject']}'" in tries[-1]["command"]
    for t in tries:
        if t["toml"]:
            data = tomllib.loads(t["toml"])
            assert data, t["toml"]
            check_toml(t["toml"], rs.config_model, rs.rules_path)  # raises on a key or value the rules refuse


def test_what_to_try_for_an_option_uses_the_knobs_of_its_rule():
    refs = RuleRefs.load("blackbird", "duel")
    tries = what_to_try(_finding("dominated_option", "aim"), SECTIONS, refs, "blackbird", "duel")
    pasted = [tomllib.loads(t["toml"]) for t in tries if t["toml"]]
    # rule 14's knob, the perturbation that moved the adapting player most first; pool.cap (rule 5) is not offered
    assert pasted == [{"combat": {"aim_max": 5}}, {"combat": {"aim_max": 1}}]
    assert "--knobs combat.aim_max" in tries[-1]["command"]


def test_what_to_try_for_a_fragile_rule_offers_the_calm_value_and_the_written_one():
    refs = RuleRefs.load("blackbird", "duel")
    tries = what_to_try(_finding("fragile_rule", "pool.cap", 0.3, (0.25, 0.35)), SECTIONS, refs, "blackbird", "duel")
    pasted = [tomllib.loads(t["toml"]) for t in tries if t["toml"]]
    assert pasted[0] == {"pool": {"cap": 15}}  # moved win rates least
    assert pasted[-1] == {"pool": {"cap": 10}}  # as written


def test_toml_change_groups_keys_by_table_and_quotes_values():
    text = toml_change({"a.b.c": True, "a.b.d": "x y", "e": [1, 2]}, "comment")
    assert tomllib.loads(text) == {"e": [1, 2], "a": {"b": {"c": True, "d": "x y"}}}
    assert text.startswith("# comment\n")


def _scenarios():
    for name in RULESETS:
        rs = get_ruleset(name)
        for sc in rs.scenarios.values():
            yield name, sc


@pytest.mark.parametrize(("ruleset", "scenario"), [(r, sc.name) for r, sc in _scenarios()])
def test_every_shipped_option_group_names_a_rule_of_the_rulebook(ruleset, scenario):
    sc = get_ruleset(ruleset).scenario(scenario)
    refs = RuleRefs.load(ruleset, scenario)
    missing = [g for g in sc.option_groups if g not in sc.option_rules]
    assert not missing, missing
    unknown = {g: n for g, n in sc.option_rules.items() if n not in refs.rules}
    assert not unknown, unknown


def test_a_finding_with_an_id_is_fixed_by_its_id_from_its_run():
    refs = RuleRefs.load("blackbird", "duel")
    f = dict(_finding("dominated_option", "aim"), id="F-3fa9c1")
    tries = what_to_try(f, SECTIONS, refs, "blackbird", "duel", "runs/x")
    assert (
        "rulebreaker balance blackbird duel --fix F-3fa9c1 --from runs/x --knobs combat.aim_max" in tries[-1]["command"]
    )


def test_hallownest_defences_quote_their_own_bullet():
    refs = RuleRefs.load("hallownest", "duel")
    assert refs.rule_for("parry").quote("parry").startswith("Parry: Might + shield Quality")
    assert refs.rule_for("dodge").quote("dodge").startswith("Dodge: Grace + invested")
    assert refs.rule_for("deaths_door").quote("deaths_door").startswith("A player bug or important NPC chooses")


def test_plain_words_of_a_dead_rule_name_its_metric_in_words():
    from results.report import plain_words

    f = {
        "kind": "dead_rule",
        "subject": "pool.cap",
        "value": 0.004,
        "ci": [-0.006, 0.008],
        "threshold": 0.01,
        "metric": "largest change of win[a vs b]",
    }
    assert plain_words(f, "x").endswith("(largest: a's win rate against b by +0.4 points [-0.6, +0.8]).")


def test_without_the_rulebook_only_the_number_is_named():
    from results.report import Rule, rule_label

    f = _finding("dominated_option", "aim")
    assert rule_label(f, Rule("14", "Rule 14", "")) == "Rule 14"
    assert rule_label(f, Rule("14", "Maneuvers", "…")) == "Rule 14: Maneuvers"
    assert rule_label(dict(f, kind="seat_advantage"), None) == "no single rule: the game as a whole"
    assert rule_label(f, None).startswith("no rule number declared")

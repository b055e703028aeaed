"""wicked_age personas: only legal actions, and one behavioural property each."""

from __future__ import annotations

import pytest

from agents.personas.wicked_age import PERSONAS
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL
from envs.core.policy import legal_mask
from envs.wicked_age import RULESET
from envs.wicked_age.actions import NUM_ACTIONS, Act, Ctx
from envs.wicked_age.dice import rolled_lesser_dice
from tests.envs.wicked_age.helpers import config


def play(cfg, scenario, agents, seed, hook=None):
    state = RULESET.new_game(cfg, scenario)
    rng = Rng(seed)
    while state.current_player() != TERMINAL:
        p = state.current_player()
        if p == CHANCE:
            state.apply_chance(state.sample_chance(rng))
            continue
        mask = legal_mask(state, NUM_ACTIONS)
        a = agents[p].act(state, mask, rng)
        assert mask[a], f"{agents[p].name} chose illegal {a} at {state.decision_context()}"
        if hook:
            hook(state, p, a)
        state.apply_action(a)
    return state


@pytest.mark.parametrize("name", sorted(PERSONAS))
@pytest.mark.parametrize("scenario", ["duel", "melee"])
def test_personas_play_only_legal_actions(name, scenario):
    cfg = config(duel={"build_phase": True, "opponent": "npc", "forms_available": 3}, melee={"parties": 4})
    for seed in range(8):
        others = [PERSONAS[n]() for n in sorted(PERSONAS)]
        agents = [PERSONAS[name]()] + others
        play(cfg, scenario, agents[: RULESET.scenario(scenario).players(cfg)], seed)
        assert PERSONAS[name].__doc__ and PERSONAS[name].name == name


def test_highest_always_rolls_its_two_biggest_dice():
    seen = []

    def hook(state, p, a):
        if p == 0 and state.node in (Ctx.PICK_FORM, Ctx.PICK_SECOND_FORM):
            avail = [f for f in state.available[0] if f not in state.picks[0][:1] or state.node == Ctx.PICK_FORM]
            seen.append(state.chars[0].dice[a] == max(state.chars[0].dice[f] for f in avail))

    agents = [PERSONAS["highest"](), PERSONAS["brute"]()]
    for seed in range(5):
        play(config(duel={"forms_available": 3}), "duel", agents, seed, hook)
    assert seen and all(seen)


def test_owe_farmer_rolls_lesser_dice_to_get_on_the_owe_list_then_cashes():
    farming: dict[int, bool] = {}
    checked, cashed = [], 0

    def hook(state, p, a):
        nonlocal cashed
        if p == 0 and state.node == Ctx.PICK_FORM:
            farming[state.conflict_no] = 0 not in state.owe
        if state.node == Ctx.WINDOW and state.round_no == 1 and p == 0 and farming.get(state.conflict_no):
            checked.append(rolled_lesser_dice(state.roll_dice[0], state.roll_dice[1]))
        if p == 0 and a == Act.CASH_OWE:
            cashed += 1

    agents = [PERSONAS["owe_farmer"](), PERSONAS["highest"]()]
    entries = 0
    for seed in range(10):
        state = play(config(duel={"forms_available": 6}), "duel", agents, seed, hook)  # a lesser pair always fits
        entries += sum(1 for e in state.log if e.kind == "owe" and e.seat == 0)
    assert checked and all(checked)  # while farming, its dice are lesser than the opponent's
    assert entries > 0 and cashed > 0


def test_pacifist_offers_before_the_first_roll():
    offers = []

    def hook(state, p, a):
        if p == 1 and state.node == Ctx.WINDOW and state.round_no == 1:
            offers.append(a)

    play(RULESET.default_config(), "duel", [PERSONAS["brute"](), PERSONAS["pacifist"]()], 1, hook)
    assert offers and all(a == Act.OFFER_CONCEDE_STAKE for a in offers)


def test_brute_never_negotiates_and_always_exhausts():
    choices = []

    def hook(state, p, a):
        if p == 0:
            choices.append((state.node, a))

    for seed in range(6):
        play(RULESET.default_config(), "duel", [PERSONAS["brute"](), PERSONAS["pacifist"]()], seed, hook)
    assert not [
        a
        for _, a in choices
        if a in (Act.OFFER_LOSER_CHOICE, Act.OFFER_WINNER_CHOICE, Act.OFFER_CONCEDE_STAKE, Act.ACCEPT)
    ]
    defaults = [a for n, a in choices if n == Ctx.CONSEQ_DEFAULT]
    assert defaults and all(a == Act.EXHAUST for a in defaults)


BUILDS = {  # (covertly, directly, for_myself, for_others, with_love, with_violence), as each docstring says
    "highest": [6, 10, 8, 4, 6, 12],
    "brute": [8, 10, 6, 6, 4, 12],
    "owe_farmer": [6, 8, 12, 4, 10, 6],
    "pacifist": [10, 12, 6, 6, 4, 8],
}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_each_persona_builds_its_documented_sheet(name):
    state = RULESET.new_game(config(duel={"opponent": "npc"}), "duel")
    persona = PERSONAS[name]()
    rng = Rng(0)
    while state.decision_context() == "build":
        state.apply_action(persona.act(state, legal_mask(state, NUM_ACTIONS), rng))
    assert state.chars[0].dice == BUILDS[name]
    npc = [12, 8, 6, 4, 10, 6] if name != "pacifist" else [12, 8, 10, 6, 6, 4]  # Action, Maneuvering, Self-prot.
    assert state.chars[1].dice == npc

"""storyteller personas: only legal actions in both scenarios, and one behavioural property each."""

from __future__ import annotations

import numpy as np
import pytest

from agents.personas.storyteller import PERSONAS
from envs.core.dice import Rng
from envs.core.game import CHANCE
from envs.core.policy import legal_mask
from envs.storyteller import RULESET
from envs.storyteller.actions import Act, DAct, DPhase, Phase, Status
from tests.envs.storyteller.helpers import make_cfg


def play(name: str, agents: list, seed: int, cfg=None, hook=None):
    sc = RULESET.scenarios[name]
    state = sc.new_game(cfg or make_cfg())
    rng = Rng(seed)
    while not state.is_terminal():
        p = state.current_player()
        if p == CHANCE:
            state.apply_chance(state.sample_chance(rng))
            continue
        mask = legal_mask(state, sc.action_count(state.cfg))
        a = agents[p].act(state, mask, rng)
        assert mask[a], f"{agents[p].name} chose illegal {a}"
        if hook:
            hook(state, p, a)
        state.apply_action(a)
    return state


@pytest.mark.parametrize("persona", sorted(PERSONAS))
def test_only_legal_actions_in_both_scenarios(persona):
    cls = PERSONAS[persona]
    assert cls.name == persona and cls.__doc__ and cls.__doc__.strip().count(". ") == 0
    for seed in range(40):
        play("heist", [cls()], seed)
        play("duel", [cls(), PERSONAS["steady"]()], seed)
        play("duel", [PERSONAS["splitter"](), cls()], seed)


def _record(state, seat, action, log):
    log.append((type(state).__name__, state.phase, seat, action, state.clone()))


def test_steady_takes_one_action_and_spends_willpower_only_when_behind():
    log: list = []
    for seed in range(30):
        play(
            "duel",
            [PERSONAS["steady"](), PERSONAS["spender"]()],
            seed,
            hook=lambda s, p, a: _record(s, p, a, log) if p == 0 else None,
        )
    assert all(a == DAct.ONE_ACTION for _, ph, _, a, _ in log if ph == DPhase.COUNT)
    wp = [(a, st) for _, ph, _, a, st in log if ph == DPhase.WILLPOWER]
    assert any(a == DAct.WILLPOWER for a, _ in wp)
    for a, st in wp:
        assert (a == DAct.WILLPOWER) == (st.progress[0] < st.progress[1])


def test_splitter_always_declares_two_actions():
    counts: list[int] = []
    for seed in range(20):
        play(
            "heist",
            [PERSONAS["splitter"]()],
            seed,
            hook=lambda s, p, a: counts.append(a) if s.phase == Phase.COUNT else None,
        )
        play(
            "duel",
            [PERSONAS["splitter"](), PERSONAS["steady"]()],
            seed,
            hook=lambda s, p, a: counts.append(("d", a)) if p == 0 and s.phase == DPhase.COUNT else None,
        )
    heist = [a for a in counts if not isinstance(a, tuple)]
    duel = [a for _, a in (c for c in counts if isinstance(c, tuple))]
    assert heist and duel
    assert all(a == DAct.TWO_ACTIONS for a in duel)
    assert sum(a == Act.TWO_ACTIONS for a in heist) / len(heist) > 0.9  # unless only one task is left


def test_spender_spends_willpower_every_turn_while_it_lasts():
    cfg = make_cfg(willpower__points=4)
    for seed in range(10):
        spent: list[int] = []

        def hook(s, p, a, spent=spent):
            if s.phase == Phase.WILLPOWER and a >= Act.WILLPOWER:
                spent.append(s.turn)

        state = play("heist", [PERSONAS["spender"]()], seed, cfg=cfg, hook=hook)
        turns = min(state.turn, 4)
        assert spent[:turns] == list(range(turns))  # the first turns, one point each
        d = play("duel", [PERSONAS["spender"](), PERSONAS["steady"]()], seed, cfg=cfg)
        assert d.willpower[0] == max(0, 4 - d.turn - 1)  # one point on every turn played


def test_retrier_always_retries_and_hammers_the_first_unfinished_task():
    retries: list[int] = []
    picks: list[tuple[int, int]] = []

    def hook(s, p, a):
        if s.phase == Phase.RETRY:
            retries.append(a)
        if s.phase == Phase.PICK:
            first = min(i for i, t in enumerate(s.tasks) if t.status == Status.ACTIVE)
            picks.append((first, (a - Act.ROLL) // 2))

    for seed in range(60):
        play("heist", [PERSONAS["retrier"]()], seed, hook=hook)
    assert retries and all(a == Act.RETRY for a in retries)
    assert picks and all(f == s for f, s in picks)
    attacks: list[int] = []
    for seed in range(10):
        play(
            "duel",
            [PERSONAS["retrier"](), PERSONAS["steady"]()],
            seed,
            hook=lambda s, p, a: attacks.append(a) if p == 0 and s.phase == DPhase.PICK else None,
        )
    assert set(attacks) == {DAct.ATTACK_ALT}


def test_steady_beats_retrier_in_the_heist():
    """Not a rule: a sanity check that the personas' styles matter (mean completed fraction)."""

    def mean(persona):
        return np.mean([play("heist", [PERSONAS[persona]()], s).returns()[0] for s in range(300)])

    assert mean("steady") > mean("retrier") + 0.1


def test_steady_takes_the_automatic_success_that_finishes_a_calm_task():
    from envs.storyteller.heist import HeistState

    s = HeistState(make_cfg(heist__tasks=["autopsy"], heist__draw=0, heist__ally_pool=0))
    s.tasks[0].progress = 14  # one success short of 15
    s.apply_action(Act.ONE_ACTION)
    sc = RULESET.scenarios["heist"]
    assert PERSONAS["steady"]().act(s, legal_mask(s, sc.action_count(s.cfg)), Rng(0)) == Act.AUTO + 0
    s.tasks[0].progress = 0  # far from done: 6 dice at 6 are worth more than one sure success
    assert PERSONAS["steady"]().act(s, legal_mask(s, sc.action_count(s.cfg)), Rng(0)) == Act.ROLL + 0


def test_personas_send_the_ally_to_the_simple_task_they_roll_on():
    """Rule 14 (teamwork.simple_tasks = add): the ally's successes add to a short roll on a simple task."""
    from envs.storyteller.heist import HeistState

    sc = RULESET.scenarios["heist"]
    s = HeistState(make_cfg(heist__tasks=["house", "tree"], heist__draw=0, willpower__points=0))
    s.apply_action(Act.ONE_ACTION)
    s.apply_action(Act.ROLL + 2)  # the fallen tree (slot 1), a simple task
    assert s.phase == Phase.ALLY
    for name in ("steady", "splitter", "spender"):
        assert PERSONAS[name]().act(s, legal_mask(s, sc.action_count(s.cfg)), Rng(0)) == Act.ALLY + 1
    apart = HeistState(
        make_cfg(heist__tasks=["house", "tree"], heist__draw=0, willpower__points=0, teamwork__simple_tasks="separate")
    )
    apart.apply_action(Act.ONE_ACTION)
    apart.apply_action(Act.ROLL + 2)
    assert (
        PERSONAS["steady"]().act(apart, legal_mask(apart, sc.action_count(apart.cfg)), Rng(0)) == Act.ALLY + 0
    )  # the house


def test_steady_decides_willpower_per_roll_after_an_earlier_botch():
    """Rule 8 (willpower.declared = before_each_roll): a botch on roll 1 puts the job behind; Willpower on roll 2."""
    from envs.storyteller.dice import BOTCH
    from envs.storyteller.heist import HeistState

    sc = RULESET.scenarios["heist"]
    s = HeistState(make_cfg(heist__tasks=["documents", "virus"], heist__draw=0, heist__turns=2, heist__ally_pool=0))
    s.tasks[0].progress, s.tasks[1].progress = 11, 9  # one success short on each
    s.apply_action(Act.TWO_ACTIONS)
    s.apply_action(Act.ROLL + 0)
    s.apply_action(Act.ROLL + 2)
    steady = PERSONAS["steady"]()
    assert s.phase == Phase.WILLPOWER
    assert steady.act(s, legal_mask(s, sc.action_count(s.cfg)), Rng(0)) == Act.NO_WILLPOWER  # on schedule
    s.apply_action(Act.NO_WILLPOWER)
    s.apply_chance(BOTCH)  # the documents are wiped: 13 successes needed with one turn left
    assert s.phase == Phase.WILLPOWER
    assert steady.act(s, legal_mask(s, sc.action_count(s.cfg)), Rng(0)) == Act.WILLPOWER + 1

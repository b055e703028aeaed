"""A golden episode opening with forced dice, step by step as the seed tells it (Rules 7-12)."""

from __future__ import annotations

from envs.crossroads.actions import Act, Phase
from envs.crossroads.episode import CrossroadsState

from .helpers import assign_action, build, config, faction_id, roll


def texts(st: CrossroadsState, kind: str) -> list[str]:
    return [e.text for e in st.log if e.kind == kind]


def test_golden_setup_deal_and_confrontation():
    st = CrossroadsState(config())
    # "Each player creates one character (12 points over G | KH | M)" - player 1 goes first.
    build(st, 6, 3)  # Ash: G 6 | KH 3 | M 3
    # "Introduce your character. Roll 3d10 and assign them over G | KH | M. Equal or lower is a success."
    roll(st, (2, 3, 7))
    st.apply_action(assign_action((2, 0, 1)))  # G <- 7 (fail), KH <- 2, M <- 3: two successes
    assert st.succ == 2
    st.apply_action(Act.STAT_UP_G)  # "+1 to a stat"
    st.apply_action(Act.GAIN_PLUS_C)  # "gain a +C"
    assert st.chars[0].stats == [7, 3, 3] and st.chars[0].plus == 1
    # "Pass to the player on the left."
    assert st.actor == 1
    build(st, 2, 5)  # Bran: G 2 | KH 5 | M 5
    roll(st, (5, 5, 9))  # a double: crossroads
    st.apply_action(assign_action((2, 0, 1)))  # G 9 fail, KH 5, M 5
    assert st.succ == 2 and texts(st, "crossroads") == ["Crossroads! Bran rolled a double."]
    st.apply_action(Act.GAIN_PLUS_C)
    st.apply_action(Act.GAIN_PLUS_C)
    build(st, 4, 4)  # Cora
    roll(st, (8, 9, 10))
    st.apply_action(Act.ASSIGN_0)  # no success, nothing to spend
    # "Present your factions (Influence 4 at the start). Roll 3d10, spend on +C or -C."
    roll(st, (1, 5, 6))  # the Guild: one success
    st.apply_action(Act.GAIN_PLUS_C)
    roll(st, (7, 8, 9))  # the Watch: none
    roll(st, (4, 4, 10))  # the Syndicate: two (and a crossroads)
    st.apply_action(Act.PASS)
    assert [f.plus for f in st.factions] == [1, 0, 0]
    # "Now the first player becomes the first Admin and chooses a scene type."
    assert st.phase == Phase.ADMIN_SCENE and st.admin == 0
    # Deal: Ash strikes a job deal with the Watch against Cora; the Watch gets +1 Influence.
    st.apply_action(Act.SCENE_DEAL)
    st.apply_action(Act.TARGET_0 + faction_id(1))
    st.apply_action(Act.TARGET_0 + 2)
    assert st.factions[1].influence == 5
    roll(st, (1, 9, 10))
    st.apply_action(assign_action((0, 1, 2)))  # G <- 1
    st.apply_action(Act.STAT_UP_G + 1)  # KH 3 -> 4
    assert texts(st, "deal") == ["Ash strikes a deal with the Watch against Cora."]
    # The Admin role passes left: Bran's player confronts Ash with Bran.
    assert st.admin == 1
    st.apply_action(Act.SCENE_CONFRONT)
    st.apply_action(Act.TARGET_0 + 0)  # Ash
    st.apply_action(Act.TARGET_0 + 1)  # opposed by Bran
    st.apply_action(Act.ADD_WOUNDED)  # Admin's aim: give Ash the -C "wounded" (the buyer names it)
    st.apply_action(Act.MARK_G)  # Ash's aim: mark its G box
    # "Before the roll each may remove a +C to get 1 more success."
    st.apply_action(Act.BURN)  # Bran burns one of its two +C
    st.apply_action(Act.PASS)
    st.apply_action(Act.PASS)  # Ash keeps its +C
    roll(st, (6, 7, 8))  # Bran
    roll(st, (2, 5, 9))  # Ash
    # "After the roll you may remove a +C to reroll everything."
    st.apply_action(Act.BURN)  # Bran rerolls
    roll(st, (1, 4, 6))
    st.apply_action(Act.PASS)
    st.apply_action(Act.PASS)  # Ash keeps its dice
    st.apply_action(assign_action((1, 0, 2)))  # Bran: G 2 <- 4 fail, KH 5 <- 1, M 5 <- 6 fail: 1 + 1 burnt = 2
    st.apply_action(assign_action((1, 0, 2)))  # Ash: G 7 <- 5, KH 4 <- 2, M 3 <- 9 fail: 2
    # "Winners: most successes; a tie is a shared win."
    assert texts(st, "result") == ["A tie: a shared win (degree 0)."]
    # both get their scene goal free: Ash takes a -C "wounded"; Ash marks G (its G die succeeded)
    ash = st.chars[0]
    assert ash.wounded and ash.minus == 1 and ash.goals == [True, False, False]
    assert st.chars[1].plus == 0
    assert st.admin == 2 and st.phase == Phase.ADMIN_SCENE
    # Cora's player confronts Bran with the Syndicate; the Syndicate wins 3-0.
    st.apply_action(Act.SCENE_CONFRONT)
    st.apply_action(Act.TARGET_0 + 1)
    st.apply_action(Act.TARGET_0 + faction_id(2))
    st.apply_action(Act.ADD_WOUNDED)  # the Syndicate's aim: Bran "wounded"
    st.apply_action(Act.GAIN_PLUS_C)
    st.apply_action(Act.PASS)
    st.apply_action(Act.PASS)
    roll(st, (1, 2, 3))  # the Syndicate: 3 successes (Influence 4)
    roll(st, (9, 9, 10))  # Bran: none
    st.apply_action(Act.PASS)
    st.apply_action(Act.PASS)
    st.apply_action(assign_action((0, 1, 2)))
    assert texts(st, "result")[-1] == "the Syndicate wins with degree 3."
    assert st.factions[2].advantage  # a faction that wins earns an Advantage
    # Bran cannot remove a -C from the Syndicate: it has none
    assert st.legal_actions() == [Act.PASS]
    st.apply_action(Act.PASS)
    st.apply_action(Act.ADD_DYING)  # "dying" too (the free goal gave "wounded")
    st.apply_action(Act.KILL)  # "an outcome spent to kill it"
    b = st.chars[1]
    assert not b.alive and b.exit == "killed" and st.exits == 1
    assert texts(st, "exit") == ["Bran is written off: killed (exit 1)."]
    # the third degree: nothing left to do to Bran, so the Syndicate buys itself +1 Influence
    assert Act.HARM_G not in st.legal_actions()
    st.apply_action(Act.INFLUENCE_UP)
    assert st.factions[2].influence == 5
    assert st.admin == 0 and st.phase == Phase.ADMIN_SCENE

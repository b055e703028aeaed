"""The fifteenth wave's fused transitions against the rules as written (issue 16: no behaviour change).

Where a hot transition now does inline what a helper did (a spend's follow-up, the end-of-episode check of Rule 13,
the spend menu's memo lookup), each is compared here with the plain sequence of rule calls, at every node of seeded
random games of several configs, clones that play on differently included.
"""

from __future__ import annotations

from itertools import product

import pytest

from envs.core.dice import Rng
from envs.core.game import TERMINAL
from envs.crossroads import rules
from envs.crossroads.actions import Act, Phase, Purpose
from envs.crossroads.episode import _LEGAL_OF, CrossroadsState

from .helpers import config, diverge, step

VARIANTS = [
    {},
    {"episode__players": 2},
    {"episode__players": 5, "episode__exits_to_end": 5},
    {"episode__max_scenes": 6},
    {"confrontation__reroll_repeatable": False},
    {"crossroads__effect": "gain_minus_c"},
    {"crossroads__effect": "goal_box_on_miss"},
    {"spend__double_step": "opposite_sign", "spend__outcomes_per_success": 2},
    {"check__assignment": "in_order", "setup__first_player": "roll"},
    {"episode__players": 2, "episode__max_characters": 3, "episode__max_factions": 3},
]
IDS = [",".join(f"{k}={v}" for k, v in o.items()) or "rules" for o in VARIANTS]


def plain_spend(st: CrossroadsState, a: int) -> None:
    """Rule 6's spend as the helpers compose it: the spend, then another or the check's end (``_check_done``)."""
    if a == Act.PASS:
        st.left = 0
    else:
        st.apply_self_op(st.entity(st.chk_eid), a)
        st.left -= 1
    if st.left > 0 and st.entity(st.chk_eid).alive:
        st.phase = Phase.SPEND
        st.actor = st.chk_seat
    else:
        st._check_done()
    st._legal = None


def plain_confront_roll(st: CrossroadsState, dice: tuple[int, ...]) -> None:
    """Rule 11.3's roll of a confrontation side as the helpers compose it (``_confront_next_roll``)."""
    s = st.sides[st.side_i]
    s.dice = dice
    s.obs = None
    st._confront_next_roll()
    st._legal = None


def check_node(st: CrossroadsState) -> None:
    """A menu kept by a transition is the phase's menu; a spend's menu is the plain one and every spend moves like
    the plain sequence, as does a confrontation roll; Rule 13 holds."""
    ss = st.settings
    if st._legal is not None:  # kept where the machine stopped (an assignment's six ids)
        assert list(st._legal) == list(_LEGAL_OF[st.phase](st))
    if st.phase == Phase.ROLL and st.purpose == Purpose.CONFRONT:
        fast, slow = st.clone(), st.clone()
        dice = fast.sample_chance(Rng(len(st.obs_changes)))
        fast.apply_chance(dice)
        plain_confront_roll(slow, dice)
        assert fast.full_key() == slow.full_key() and fast.sides[fast.side_i].obs is None
    if st.phase == Phase.SPEND:
        e = st.entity(st.chk_eid)
        assert st.legal_actions() == st._plain_own_options(e, None, True)
        for a in st.legal_actions():
            fast, slow = st.clone(), st.clone()
            fast.apply_action(a)
            plain_spend(slow, a)
            assert fast.full_key() == slow.full_key()
            assert fast.obs_changes == slow.obs_changes and fast.returns() == slow.returns()
    if st.phase == Phase.BURN_AFTER:  # Rule 11.3's reroll menu as rules.may_reroll reads it
        s = st.sides[st.side_i]
        ok = rules.may_reroll(st.entity(s.eid).plus, ss.reroll_repeatable, s.rerolls)
        assert st.legal_actions() == ([Act.BURN, Act.PASS] if ok else [Act.PASS])
    if st.phase == Phase.BURN_BEFORE:  # either side's burn or pass moves like the plain helpers
        for a in st.legal_actions():
            fast, slow = st.clone(), st.clone()
            fast.apply_action(a)
            if a == Act.BURN:
                slow.burn_before(slow.sides[slow.side_i])
            else:
                slow._next_burn_before()
            assert fast.full_key() == slow.full_key()
    if st.phase == Phase.ADMIN_SCENE:  # this scene was allowed to start (Rule 13)
        assert rules.episode_end(st.exits, ss.exits_to_end, st.scene_no - 1, ss.max_scenes) is None
    if st.current_player() == TERMINAL:
        end = rules.episode_end(st.exits, ss.exits_to_end, st.scene_no, ss.max_scenes)
        assert end is not None and st._outcome is not None and st._outcome.reason is end


@pytest.mark.parametrize("overrides", VARIANTS, ids=IDS)
def test_fused_transitions_move_like_the_plain_rule_calls(overrides):
    """Also a scene's end (``_end_scene`` starts the next scene inline): checked by Rule 13 at each scene's start and
    at the end, and by the spends, whose last one ends a scene."""
    rng = Rng(23)
    for seed in range(4):
        st = CrossroadsState(config(**overrides))
        if seed % 2:
            st.narrating = False
        play = Rng(seed)
        while st.current_player() != TERMINAL:
            check_node(st)
            if rng.random() < 0.03:  # a clone plays on differently: both move by the rules
                diverge(st, rng, 30, check_node)
            step(st, play)
        check_node(st)


@pytest.mark.parametrize("overrides", [{}, {"confrontation__reroll_repeatable": False}])
def test_a_scene_end_starts_the_next_scene_like_start_scene(overrides):
    """``_end_scene`` (no goal check pending) rotates the Admin and starts the next scene as ``_start_scene`` does."""
    rng = Rng(31)
    for seed in range(6):
        st = CrossroadsState(config(**overrides))
        play = Rng(seed)
        while st.current_player() != TERMINAL:
            if st.scene != 0 and not st.goal_pending:  # after setup (Scene.SETUP is 0)
                fast, slow = st.clone(), st.clone()
                fast._end_scene()
                slow.admin = slow._next_admins[slow.admin]
                slow._start_scene()
                assert fast.full_key() == slow.full_key() and fast.obs_markers == slow.obs_markers
                assert fast.obs_progress == slow.obs_progress and fast._outcome == slow._outcome
            step(st, play)
            if rng.random() < 0.01:
                break


@pytest.mark.parametrize("exits_to_end", [1, 3, 5])
@pytest.mark.parametrize("max_scenes", [1, 4, 40])
def test_the_end_of_episode_pre_check_is_rule_13(exits_to_end, max_scenes):
    """``_start_scene`` asks ``rules.episode_end`` only at or above a limit: below both it is None."""
    for exits in range(8):
        for scene_no in range(45):
            may_end = exits >= exits_to_end or scene_no >= max_scenes
            assert may_end == (rules.episode_end(exits, exits_to_end, scene_no, max_scenes) is not None)


def test_the_inlined_reroll_check_is_rule_11_3():
    for plus, repeatable, rerolls in product(range(4), (False, True), range(3)):
        ok = plus > 0 and (repeatable or rerolls == 0)
        assert ok == rules.may_reroll(plus, repeatable, rerolls)

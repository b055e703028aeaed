"""The slot copier behind the engines' ``clone()``."""

from __future__ import annotations

import pytest

from envs.core.slots import slot_copier


class _Slotted:
    __slots__ = ("counts", "name", "seen", "table")


def test_a_copier_assigns_every_slot_and_copies_only_the_named_containers():
    copy = slot_copier(_Slotted.__slots__, copied=("counts", "seen"))
    old = _Slotted()
    old.counts, old.name, old.seen, old.table = [1, 2], "x", {3}, {"k": [4]}
    new = object.__new__(_Slotted)
    copy(new, old)
    assert (new.counts, new.name, new.seen, new.table) == ([1, 2], "x", {3}, {"k": [4]})
    assert new.counts is not old.counts and new.seen is not old.seen  # copied
    assert new.table is old.table and new.name is old.name  # shared
    new.counts.append(5)
    assert old.counts == [1, 2]


def test_a_copier_refuses_names_it_cannot_copy():
    with pytest.raises(ValueError, match="not in fields"):
        slot_copier(("a", "b"), copied=("c",))
    with pytest.raises(ValueError, match="identifiers"):
        slot_copier(("a", "b; import os"))

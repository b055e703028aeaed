"""Copying a slotted state: the one mechanism behind the engines' ``clone()``.

Python 3.11 shares an instance dict's keys with the class only up to 30 keys, and an unshared dict defeats the
specialisation of every attribute read and ``self.method()`` call, so the larger engine states keep their
attributes in ``__slots__``. A slotted object has no ``__dict__`` to copy in one call, and a ``setattr`` per slot
costs several times a plain attribute store; :func:`slot_copier` therefore writes, once per class, the one
function that copies every slot in a single multi-target assignment.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

SlotCopier = Callable[[Any, Any], None]
"""``copy(new, old)``: every slot of ``old`` onto ``new``."""


def slot_copier(fields: Sequence[str], copied: Collection[str] = ()) -> SlotCopier:
    """A function ``copy(new, old)`` that assigns every slot of ``fields`` from ``old`` onto ``new``.

    The slots named in ``copied`` (lists, dicts, sets the engine changes in place) get ``old.<slot>.copy()``; every
    other value is shared. The function is generated from the names, so it names each slot exactly once: one
    specialised load and store per slot, no Python call per slot. Names must be identifiers (they are slots).
    """
    unknown = set(copied) - set(fields)
    if unknown:
        raise ValueError(f"copied slots not in fields: {sorted(unknown)}")
    if not all(name.isidentifier() for name in fields):
        raise ValueError(f"slot names must be identifiers: {list(fields)}")
    targets = ", ".join(f"new.{name}" for name in fields)
    values = ", ".join(f"old.{name}.copy()" if name in copied else f"old.{name}" for name in fields)
    namespace: dict[str, Any] = {}
    exec(f"def copy_slots(new, old):\n    {targets} = {values}\n", namespace)  # noqa: S102 - built from slot names only
    copier: SlotCopier = namespace["copy_slots"]
    return copier

from __future__ import annotations

import pytest

from envs.core.registry import register_ruleset
from tests.toy import RULESET as TOY

register_ruleset(TOY)


@pytest.fixture(scope="session", autouse=True)
def _toy_registered():
    register_ruleset(TOY)
    yield


@pytest.fixture
def toy():
    register_ruleset(TOY)
    return TOY

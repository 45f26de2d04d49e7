"""Fixtures for the auth tests: ``auth_server``, a local authorization server (:mod:`tests.auth.local_as`)
started for the test and stopped after it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.auth.local_as import LocalAS


@pytest.fixture
async def auth_server() -> AsyncIterator[LocalAS]:
    local = LocalAS()
    await local.start()
    yield local
    await local.stop()

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from tests.scale._services import redis_server


@pytest.fixture(scope="session")
def redis_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def redis_url(redis_service: str) -> str:
    """The session's redis-server, emptied for this test."""
    client = redis.Redis.from_url(redis_service)
    client.flushall()
    client.close()
    return redis_service

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from croupier.server.app import Croupier, create_server
from croupier.server.match import Clocks
from tests.server.botclient import ADMIN_TOKEN, Admin


@pytest.fixture
async def referee(tmp_path: Path) -> AsyncIterator[Croupier]:
    """A real referee on a free port, with a fresh data directory."""
    croupier = await create_server("127.0.0.1:0", tmp_path / "data", admin_token=ADMIN_TOKEN, clocks=Clocks())
    yield croupier
    await croupier.stop(grace=None)


@pytest.fixture
async def channel(referee: Croupier) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as chan:
        yield chan


@pytest.fixture
def admin(channel: grpc.aio.Channel) -> Admin:
    return Admin(channel)

from __future__ import annotations

import errno
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc
import pytest

from croupier.server import datafiles
from croupier.server.app import Croupier, create_server
from croupier.server.clocks import Clocks
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


class Disk:
    """The referee's data files as on a disk that can be made full: while ``full``, every write puts
    down part of its bytes and fails with ENOSPC, as a disk filling up mid-write does."""

    def __init__(self, write: Callable[[int, bytes], None]) -> None:
        self.full = False
        self.refused = 0
        """Writes that failed."""
        self._write = write

    def write_bytes(self, fd: int, data: bytes) -> None:
        if not self.full:
            self._write(fd, data)
            return
        self.refused += 1
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Disk:
    """The seam every data file is written through (``datafiles.write_bytes``), made fillable."""
    disk = Disk(datafiles.write_bytes)
    monkeypatch.setattr(datafiles, "write_bytes", disk.write_bytes)
    return disk

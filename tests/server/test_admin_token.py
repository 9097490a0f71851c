"""The admin token: never empty or short, its file written whole, and a referee that will not start
on an unusable one says in one line how to fix it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from croupier.server.app import CannotStart, create_server
from croupier.v1 import admin_pb2, admin_pb2_grpc
from tests.server.conftest import Disk

ROOT = Path(__file__).resolve().parents[2]


def serve(data: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``croupier serve`` as a user runs it, expected to refuse to start."""
    command = [sys.executable, "-m", "croupier.server.cli", "--address", "127.0.0.1:0", "--data", str(data)]
    return subprocess.run(
        [*command, "--metrics-address", "off", *flags], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("content", ["", "\n", "admin_short\n", "has spaces in it, sixteen+\n"])
def test_a_referee_will_not_start_on_an_unusable_token_file(tmp_path: Path, content: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "admin-token").write_text(content)  # a kill or a full disk between creating and writing
    refused = serve(data)
    assert refused.returncode == 1
    assert refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"croupier serve: {data / 'admin-token'} ")
    assert "delete it and a new token is made, or write a token of 16 to 200 printable" in line


def test_a_short_admin_token_given_is_refused(tmp_path: Path) -> None:
    refused = serve(tmp_path / "data", "--admin-token", "letmein")
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        "croupier serve: the admin token given is 7 characters long, not 16 to 200: give one of 16 to 200 "
        "printable ASCII characters without spaces"
    ]


async def test_a_first_start_on_a_full_disk_leaves_no_token_file_and_the_next_one_makes_it(
    tmp_path: Path, disk: Disk
) -> None:
    data = tmp_path / "data"
    disk.full = True
    with pytest.raises(CannotStart, match=r"cannot write .*admin-token \(No space left on device\)"):
        await create_server("127.0.0.1:0", data)
    assert list(data.iterdir()) == []  # no empty token, no temporary file
    disk.full = False
    croupier = await create_server("127.0.0.1:0", data)
    try:
        assert (data / "admin-token").read_text() == croupier.admin_token + "\n"
        assert len(croupier.admin_token) >= 24
        async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as channel:
            stub = admin_pb2_grpc.AdminServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as empty:
                await stub.ListBots(admin_pb2.ListBotsRequest(), metadata=[("croupier-token", "")])
            assert empty.value.code() == grpc.StatusCode.PERMISSION_DENIED
            await stub.ListBots(
                admin_pb2.ListBotsRequest(), metadata=[("croupier-token", croupier.admin_token)]
            )
    finally:
        await croupier.stop(grace=None)

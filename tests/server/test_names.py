"""One rule for names (croupier.wire.names), held wherever a name enters: the referee's
RegisterBot, ``croupier register``, a tournament file (tests/clients/tournament/test_config.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from croupier.v1 import admin_pb2
from tests.server.botclient import ADMIN, Admin

REFUSED = [
    "<script>x</script>",
    "a b",
    "-lead",
    ".hidden",
    "x" * 41,
    "caf\u00e9",
    "bot#",
    "bot#12345",
    "../x",
    "\u202eevil",
]
TAKEN = ["mybot", "heuristic-1", "v1.2_b", "x" * 40, "random-2#3"]


@pytest.mark.parametrize("name", REFUSED)
async def test_register_bot_refuses_a_name_outside_the_rule(admin: Admin, name: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name=name), metadata=ADMIN)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.details() == (
        f"bot name {name!r}: use letters, digits, '.', '_' or '-', starting with a letter or digit (up to 40)"
    )
    listed = await admin.stub.ListBots(admin_pb2.ListBotsRequest(), metadata=ADMIN)
    assert [bot.name for bot in listed.bots] == []  # nothing was registered


async def test_register_bot_takes_names_and_instances_of_them(admin: Admin) -> None:
    for name in TAKEN:
        await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name=name), metadata=ADMIN)
    listed = await admin.stub.ListBots(admin_pb2.ListBotsRequest(), metadata=ADMIN)
    assert sorted(bot.name for bot in listed.bots) == sorted(TAKEN)


def test_croupier_register_refuses_such_a_name_before_asking_any_referee(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "croupier.clients.cli", "register", "<script>x</script>", "--server", "x:1"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        "croupier register: bot name '<script>x</script>': use letters, digits, '.', '_' or '-', "
        "starting with a letter or digit (up to 40)\n"
    )

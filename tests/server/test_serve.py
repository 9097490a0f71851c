"""``croupier serve`` starting and stopping as a user and a load balancer see it: a taken port is
one line saying which and what to do; SIGTERM turns health NOT_SERVING while the listener stays up
for a short drain."""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from croupier.server.cli import DEFAULT_METRICS
from croupier.v1 import bots_pb2, bots_pb2_grpc, spectator_pb2, spectator_pb2_grpc
from tests.server.botclient import ADMIN, token
from tests.server.test_restart import ROOT, RefereeProcess

Serving = health_pb2.HealthCheckResponse.ServingStatus


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


def serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "croupier.server.cli", "--data", str(tmp_path / "data"), *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)


def test_a_taken_grpc_port_is_one_line_saying_which_and_what_to_do(tmp_path: Path, taken_port: int) -> None:
    done = serve(tmp_path, "--address", f"127.0.0.1:{taken_port}", "--metrics-address", "127.0.0.1:0")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"croupier serve: cannot listen on 127.0.0.1:{taken_port} for gRPC (Address already in use): "
        "stop what uses it, or pass another --address (port 0 picks a free one)\n"
    )


def test_a_second_referee_is_told_of_the_grpc_port_it_clashes_on_before_its_metrics_port(
    tmp_path: Path, taken_port: int
) -> None:
    taken = f"127.0.0.1:{taken_port}"  # both taken, as by a referee already serving on them
    done = serve(tmp_path, "--address", taken, "--metrics-address", taken)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"croupier serve: cannot listen on {taken} for gRPC (Address already in use): "
        "stop what uses it, or pass another --address (port 0 picks a free one)"
    ]


def test_a_taken_metrics_port_is_one_line_offering_another_or_off(tmp_path: Path, taken_port: int) -> None:
    done = serve(tmp_path, "--address", "127.0.0.1:0", "--metrics-address", f"127.0.0.1:{taken_port}")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"croupier serve: cannot serve metrics on 127.0.0.1:{taken_port} (Address already in use): pass "
        "another --metrics-address (port 0 picks a free one), or --metrics-address off for none\n"
    )


def test_a_second_referee_serves_its_metrics_on_a_free_port_when_the_default_one_is_taken(
    tmp_path: Path,
) -> None:
    """A second ``croupier serve`` on one machine (another --address) finds the default metrics port
    taken by the first: no flag asked for it, so another port does, said on the line that gives it."""
    with contextlib.ExitStack() as stack:
        first = stack.enter_context(socket.socket())
        with contextlib.suppress(OSError):  # else something has it already, as a first referee would
            first.bind(("127.0.0.1", int(DEFAULT_METRICS.rpartition(":")[2])))
            first.listen()
        second = subprocess.Popen(
            [sys.executable, "-m", "croupier.server.cli", "--address", "127.0.0.1:0",
             "--data", str(tmp_path / "data")],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        stack.callback(second.kill)
        assert second.stdout is not None
        lines = [second.stdout.readline() for _ in range(2)]
        second.terminate()
        _, errors = second.communicate(timeout=60)
    assert lines[0].startswith("croupier: serving on 127.0.0.1:"), lines[0] + errors
    found = re.fullmatch(
        r"croupier: metrics on http://127\.0\.0\.1:(\d+)/metrics \(port 9464 is taken; "
        r"--metrics-address HOST:PORT picks one\)\n",
        lines[1],
    )
    assert found and found.group(1) != "9464", lines[1] + errors


async def health(port: int) -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        return int(reply.status)


async def test_sigterm_reports_not_serving_first_and_keeps_the_listener_up_to_drain(tmp_path: Path) -> None:
    referee = RefereeProcess(tmp_path / "data", tmp_path / "referee.log", "--drain-seconds", "600")
    try:
        port = await referee.port()
        assert await health(port) == Serving.SERVING
        referee.process.send_signal(15)
        assert referee.process.stdout is not None
        line = await asyncio.to_thread(referee.process.stdout.readline)
        assert line == "croupier: stopping: NOT_SERVING, draining for 600 s\n"
        # a new connection is still taken, and told not to send more
        assert await health(port) == Serving.NOT_SERVING
        assert referee.stop() == 0  # a second signal ends the drain
        assert referee.process.stdout.read() == "croupier: stopped\n"
    finally:
        referee.kill()


async def refused_stream(port: int, moves: int) -> str:
    """A stream with an unknown token that writes its Hello and ``moves`` moves before reading."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = bots_pb2_grpc.BotServiceStub(channel).Play(metadata=token("bot_not-a-token-of-this-referee"))
        try:
            await call.write(bots_pb2.BotMessage(hello=bots_pb2.Hello(protocol_version=1)))
            for _ in range(moves):
                await call.write(bots_pb2.BotMessage(move=bots_pb2.Move(match_id="m", text="7h" * 2000)))
            await call.read()
        except grpc.aio.AioRpcError as exc:
            return f"{exc.code().name}: {exc.details()}"
        except asyncio.InvalidStateError:  # a write after the call ended: its status is kept
            return f"{(await call.code()).name}: {await call.details()}"
        return "not refused"


async def test_streams_with_an_unknown_token_always_get_unauthenticated(tmp_path: Path) -> None:
    """grpc's client reports INTERNAL for a write the server's end overtook: 4 of 40 such streams
    did when the referee refused a stream at once, without letting the bot finish writing."""
    referee = RefereeProcess(tmp_path / "data", tmp_path / "referee.log", "--drain-seconds", "0")
    try:
        port = await referee.port()
        answers = await asyncio.gather(*(refused_stream(port, moves) for moves in [1] * 40 + [100] * 20))
        unknown = "UNAUTHENTICATED: unknown token (a seat token expires when its match ends)"
        assert Counter(answers) == {unknown: 60}
    finally:
        referee.kill()


async def test_spectators_off_on_croupier_serve_shows_matches_to_the_admin_alone(tmp_path: Path) -> None:
    referee = RefereeProcess(tmp_path / "data", tmp_path / "referee.log", "--spectators", "off")
    try:
        port = await referee.port()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.ListMatches(spectator_pb2.ListMatchesRequest())
            assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert (
                refused.value.details()
                == "this referee shows its matches to the admin only (--spectators off)"
            )
            assert not (await stub.ListMatches(spectator_pb2.ListMatchesRequest(), metadata=ADMIN)).matches
    finally:
        referee.kill()

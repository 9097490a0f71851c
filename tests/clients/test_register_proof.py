"""``croupier register`` sends the admin token it reads from a data directory only to the referee
of that directory: an impostor listening on the port (the referee being down) receives nothing
secret, even if it relays the challenge to the real referee listening elsewhere: on another port,
or on the same port of the other loopback address ([::1] and 127.0.0.1)."""

from __future__ import annotations

import asyncio
import secrets
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import pytest

from croupier.clients import register as register_cli
from croupier.clients.tournament.admin_token import NoAdminToken, find_admin_token
from croupier.server.app import Croupier, create_server
from croupier.v1 import admin_pb2, admin_pb2_grpc

Answer = Callable[[bytes], Awaitable[bytes]]


class Impostor(grpc.GenericRpcHandler):
    """Answers every method at its port, keeping what each call carried (metadata and bytes)."""

    def __init__(self, prove: Answer) -> None:
        self.prove = prove
        self.received: list[tuple[str, str, bytes]] = []

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        method = details.method
        metadata = repr(details.invocation_metadata)

        async def answer(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
            self.received.append((method, metadata, request))
            if method.endswith("/ProveReferee"):
                return await self.prove(request)
            return admin_pb2.RegisterBotResponse(bot_id="b-fake", token="bot_fake").SerializeToString()

        return grpc.unary_unary_rpc_method_handler(answer)  # bytes in, bytes out


@pytest.fixture
async def genuine(tmp_path: Path) -> AsyncIterator[Croupier]:
    """The referee of tmp_path/data, on a port of its own."""
    croupier = await create_server("127.0.0.1:0", tmp_path / "data")
    yield croupier
    await croupier.stop(grace=None)


async def impostor_on_a_port(impostor: Impostor) -> tuple[grpc.aio.Server, int]:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((impostor,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


async def register(port: int, data: Path, host: str = "127.0.0.1") -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "croupier.clients.cli", "register", "mybot"),
        *("--server", f"{host}:{port}", "--data", str(data)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def garbage(request: bytes) -> bytes:
    return admin_pb2.ProveRefereeResponse(proof=secrets.token_bytes(32)).SerializeToString()


@pytest.mark.parametrize("how", ["a made-up proof", "the real referee's proof, relayed"])
async def test_an_impostor_on_the_port_receives_no_admin_token(
    tmp_path: Path, genuine: Croupier, how: str
) -> None:
    async def relayed(request: bytes) -> bytes:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{genuine.port}") as channel:
            stub = admin_pb2_grpc.AdminServiceStub(channel)
            try:  # the referee proves nothing for the impostor's address: it answers what it has
                reply = await stub.ProveReferee(admin_pb2.ProveRefereeRequest.FromString(request))
            except grpc.aio.AioRpcError:
                reply = admin_pb2.ProveRefereeResponse()
        return reply.SerializeToString()

    impostor = Impostor(garbage if how == "a made-up proof" else relayed)
    server, port = await impostor_on_a_port(impostor)
    try:
        code, out, err = await register(port, tmp_path / "data")
    finally:
        await server.stop(None)
    assert (code, out) == (1, "")
    assert err == (
        f"croupier register: what answers at 127.0.0.1:{port} did not prove it is the referee of "
        f"{tmp_path / 'data'} (a wrong proof), so its admin token was not sent: is that referee running "
        "there? (another one: give --admin-token)\n"
    )
    assert [method for method, _, _ in impostor.received] == ["/croupier.v1.AdminService/ProveReferee"]
    sent = repr(impostor.received)
    assert genuine.admin_token not in sent


async def test_the_referee_of_the_data_directory_proves_itself_and_registers(
    tmp_path: Path, genuine: Croupier
) -> None:
    code, out, err = await register(genuine.port, tmp_path / "data")
    assert code == 0, err
    assert out.startswith("bot_") and "registered mybot as b-" in err


async def test_a_nonce_of_the_wrong_size_is_refused(genuine: Croupier) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{genuine.port}") as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.ProveReferee(
                admin_pb2.ProveRefereeRequest(nonce=b"short", address=f"127.0.0.1:{genuine.port}")
            )
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT


class Relay(grpc.GenericRpcHandler):
    """A squatter that forwards every call, its metadata and bytes, to ``target`` and its answer
    back, keeping what each call carried."""

    def __init__(self, target: str) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        self.received: list[tuple[str, str, bytes]] = []

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        method = details.method
        metadata = tuple(details.invocation_metadata or ())
        forward = self.channel.unary_unary(method)  # no (de)serializers: bytes through

        async def answer(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
            self.received.append((method, repr(metadata), request))
            try:
                return await forward(request, metadata=metadata)
            except grpc.aio.AioRpcError as exc:
                await context.abort(exc.code(), exc.details() or "")
                raise

        return grpc.unary_unary_rpc_method_handler(answer)


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.fixture
async def relay(genuine: Croupier) -> AsyncIterator[Relay]:
    """A relay on [::1] at the port of the referee, which listens on 127.0.0.1 only."""
    if not ipv6_loopback():
        pytest.skip("no IPv6 loopback here: no [::1] to squat")
    relay = Relay(f"127.0.0.1:{genuine.port}")
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((relay,))
    assert server.add_insecure_port(f"[::1]:{genuine.port}") == genuine.port
    await server.start()
    yield relay
    await server.stop(None)
    await relay.channel.close()


async def test_a_relay_on_the_other_loopback_address_gets_no_proof_and_no_token(
    tmp_path: Path, genuine: Croupier, relay: Relay
) -> None:
    code, out, err = await register(genuine.port, tmp_path / "data", host="[::1]")
    assert (code, out) == (1, "")
    assert err == (
        f"croupier register: what answers at [::1]:{genuine.port} did not prove it is the referee of "
        f"{tmp_path / 'data'} (FAILED_PRECONDITION: this referee does not listen at '[::1]:{genuine.port}'), "
        "so its admin token was not sent: is that referee running there? (another one: give --admin-token)\n"
    )
    assert [method for method, _, _ in relay.received] == ["/croupier.v1.AdminService/ProveReferee"]
    assert genuine.admin_token not in repr(relay.received)


async def test_localhost_resolving_to_the_relay_first_sends_the_token_to_the_referee_only(
    tmp_path: Path, genuine: Croupier, relay: Relay, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``localhost`` giving [::1] first (as many hosts files do; this machine's may not): the relay
    there proves nothing, the referee at 127.0.0.1 does, and is the only one sent the token."""
    resolve = socket.getaddrinfo

    def loopbacks_v6_first(host: str, *args: object, **kwargs: object) -> list[object]:
        if host != "localhost":
            return resolve(host, *args, **kwargs)  # type: ignore[arg-type]
        return [*resolve("::1", *args, **kwargs), *resolve("127.0.0.1", *args, **kwargs)]  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", loopbacks_v6_first)
    data = tmp_path / "data"
    server = f"localhost:{genuine.port}"
    admin_token, _, proven = await asyncio.to_thread(find_admin_token, server, None, data)
    assert proven == f"127.0.0.1:{genuine.port}"
    assert await register_cli._register(proven, admin_token, str(data), "mybot") == 0
    assert [method for method, _, _ in relay.received] == ["/croupier.v1.AdminService/ProveReferee"]
    assert genuine.admin_token not in repr(relay.received)
    assert [bot.name for bot in genuine.referee.bots.values()] == ["mybot"]


async def test_a_referee_proves_itself_only_at_an_address_it_listens_at(genuine: Croupier) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{genuine.port}") as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        nonce = secrets.token_bytes(16)
        for elsewhere in (
            f"[::1]:{genuine.port}",
            f"127.0.0.1:{genuine.port + 1}",
            f"localhost:{genuine.port}",
        ):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await stub.ProveReferee(admin_pb2.ProveRefereeRequest(nonce=nonce, address=elsewhere))
            assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.ProveReferee(admin_pb2.ProveRefereeRequest(nonce=nonce))  # a v1 caller: no address
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        await stub.ProveReferee(
            admin_pb2.ProveRefereeRequest(nonce=nonce, address=f"127.0.0.1:{genuine.port}")
        )


def test_no_referee_at_localhost_says_so(tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(NoAdminToken, match="no referee"):
        find_admin_token(f"localhost:{port}", None, tmp_path)

"""``croupier register`` sends the admin token it reads from a data directory only to the referee
of that directory: an impostor listening on the port (the referee being down) receives nothing
secret, even if it relays the challenge to the real referee listening elsewhere."""

from __future__ import annotations

import asyncio
import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import pytest

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


async def register(port: int, data: Path) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "croupier.clients.cli", "register", "mybot"),
        *("--server", f"127.0.0.1:{port}", "--data", str(data)),
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
            reply = await stub.ProveReferee(admin_pb2.ProveRefereeRequest.FromString(request))
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
            await stub.ProveReferee(admin_pb2.ProveRefereeRequest(nonce=b"short"))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT

"""The standard services and the plumbing around the referee: health, reflection, metrics, TLS."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from croupier.server import cli
from croupier.server.app import Tls, create_server
from tests.server.botclient import ADMIN_TOKEN, Admin, Bot
from tests.toolchains import need

SERVICES = ["croupier.v1.AdminService", "croupier.v1.BotService", "croupier.v1.SpectatorService"]


async def test_health_checking_answers_serving_for_every_service(channel: grpc.aio.Channel) -> None:
    stub = health_pb2_grpc.HealthStub(channel)
    for service in ["", *SERVICES]:
        response = await stub.Check(health_pb2.HealthCheckRequest(service=service))
        assert response.status == health_pb2.HealthCheckResponse.SERVING, service


async def test_reflection_lists_the_services_and_serves_their_protos(channel: grpc.aio.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)

    async def ask(**request: str) -> reflection_pb2.ServerReflectionResponse:
        async def requests() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
            yield reflection_pb2.ServerReflectionRequest(**request)

        async for response in stub.ServerReflectionInfo(requests()):
            return response
        raise AssertionError("no reflection response")

    listed = await ask(list_services="")
    names = {s.name for s in listed.list_services_response.service}
    assert set(SERVICES) | {"grpc.health.v1.Health"} <= names
    found = await ask(file_containing_symbol="croupier.v1.BotService")
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in found.file_descriptor_response.file_descriptor_proto
    ]
    bots = next(f for f in files if f.name == "croupier/v1/bots.proto")
    assert [m.name for m in bots.service[0].method] == ["Play"]


async def test_metrics_are_served_on_their_own_port(tmp_path: Path) -> None:
    croupier = await create_server(
        "127.0.0.1:0", tmp_path / "data", admin_token=ADMIN_TOKEN, metrics_address="127.0.0.1:0"
    )
    try:
        assert croupier.metrics_port not in (None, croupier.port)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as channel:
            admin = Admin(channel)
            created = await admin.create("chinese_ten", 2, {"target": 100})
            bots = [Bot(channel, t) for t in created.seat_tokens]
            for bot in bots:
                await bot.hello()
            decision = (await bots[1].expect("decision")).decision
            await bots[1].move(match_id=decision.match_id, decision_id=decision.decision_id, text="nonsense")
            await bots[1].expect("action_result")
            await bots[1].move(match_id=decision.match_id, decision_id=decision.decision_id, index=0)
            await asyncio.gather(*(bot.play() for bot in bots))
            await admin.wait(created.match.match_id)
        url = f"http://127.0.0.1:{croupier.metrics_port}/metrics"
        text = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read().decode())
    finally:
        await croupier.stop(grace=None)
    samples = {line.split(" ")[0]: float(line.split(" ")[1]) for line in text.splitlines() if line[:1] != "#"}
    game = '{game="chinese_ten"}'
    assert samples[f"croupier_active_matches{game}"] == 0
    assert samples[f"croupier_matches_finished_total{game}"] == 1
    assert samples[f"croupier_refused_actions_total{game}"] == 1
    assert samples[f"croupier_decisions_total{game}"] > 0
    assert samples[f"croupier_decision_seconds_count{game}"] == samples[f"croupier_decisions_total{game}"]
    assert samples[f"croupier_timeouts_total{game}"] == 0


async def test_tls_by_flags_serves_only_tls(tmp_path: Path) -> None:
    need("openssl", "the TLS test makes its certificate with it")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    croupier = await create_server(
        "127.0.0.1:0", tmp_path / "data", admin_token=ADMIN_TOKEN, tls=Tls(cert, key)
    )
    try:
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        async with grpc.aio.secure_channel(f"localhost:{croupier.port}", credentials) as channel:
            response = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert response.status == health_pb2.HealthCheckResponse.SERVING
        async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as plain:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await health_pb2_grpc.HealthStub(plain).Check(health_pb2.HealthCheckRequest(), timeout=5)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await croupier.stop(grace=None)


def test_serve_binds_loopback_and_keeps_data_in_croupier_data_by_default() -> None:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args([])
    assert (args.address, args.data) == ("127.0.0.1:50051", Path("croupier-data"))
    assert args.metrics_address is None and cli.DEFAULT_METRICS.startswith("127.0.0.1:")

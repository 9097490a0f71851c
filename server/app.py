"""Building and running a referee: ``create_server`` and the graceful stop."""

from __future__ import annotations

import errno
import secrets
import socket
import stat
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import structlog
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.internal import api_implementation
from google.protobuf.message_factory import GetMessageClass
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from croupier.engine.games import GAMES
from croupier.server import forks, logs, openfiles
from croupier.server.admin import AdminService
from croupier.server.audience import Limits
from croupier.server.bot_streams import BotService
from croupier.server.clocks import Clocks
from croupier.server.datafiles import FILE_MODE, OUT_OF_ROOM, private_folder, replace_file
from croupier.server.group import Siblings
from croupier.server.metrics import Metrics
from croupier.server.referee import MAX_TOKEN, MIN_ADMIN_TOKEN, Referee, token_problem
from croupier.server.registration import OpenRegistration
from croupier.server.spectator import SpectatorService
from croupier.v1 import admin_pb2, bots_pb2, spectator_pb2
from croupier.wire import convert, native
from croupier.wire.errors import lenient_parser, server_stream, unary

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_DATA = Path("croupier-data")
MAX_MESSAGE_BYTES = 1 << 20
"""Bots send small messages; a megabyte is far beyond any legitimate one."""

SERVICES: tuple[ServiceDescriptor, ...] = (
    bots_pb2.DESCRIPTOR.services_by_name["BotService"],
    spectator_pb2.DESCRIPTOR.services_by_name["SpectatorService"],
    admin_pb2.DESCRIPTOR.services_by_name["AdminService"],
)

log = structlog.get_logger("croupier")


@dataclass(frozen=True)
class Tls:
    """PEM files: the server's certificate chain and key, and optionally a CA that client certificates
    must be signed by (mutual TLS)."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        client_ca = self.client_ca.read_bytes() if self.client_ca else None
        return grpc.ssl_server_credentials(
            [(self.key.read_bytes(), self.cert.read_bytes())],
            root_certificates=client_ca,
            require_client_auth=client_ca is not None,
        )


@dataclass
class Croupier:
    """A running referee."""

    server: grpc.aio.Server
    port: int
    referee: Referee
    health: Any  # grpc_health's asyncio HealthServicer (untyped: grpc-stubs describe only the sync one)
    metrics: Metrics
    metrics_port: int | None
    admin_token: str

    async def stop(self, grace: float | None = 5.0, drain: Awaitable[object] | None = None) -> None:
        """Report NOT_SERVING and go on serving until ``drain`` is done (a load balancer notices
        before any connection is refused), then stop taking calls, give running calls ``grace``
        seconds, and stop every match's actor (their journals stay resumable)."""
        await self.health.enter_graceful_shutdown()
        if drain is not None:
            await drain
        await self.server.stop(grace)
        await self.referee.close()
        self.metrics.stop()


async def create_server(
    address: str = DEFAULT_ADDRESS,
    data_dir: Path = DEFAULT_DATA,
    *,
    admin_token: str | None = None,
    clocks: Clocks | None = None,
    metrics_address: str | None = None,
    any_metrics_port: bool = False,
    tls: Tls | None = None,
    advertise: str | None = None,
    spectators: Limits | None = None,
    unix_socket: Path | None = None,
    group: Path | None = None,
    open_registration: OpenRegistration | None = None,
) -> Croupier:
    """Start a referee on ``address`` (port 0 picks a free port: see ``Croupier.port``).

    Unfinished matches found in ``data_dir`` are resumed before the first call is taken.
    ``metrics_address`` ("host:port") serves Prometheus metrics; None serves none. With
    ``any_metrics_port``, a free port if its port is taken (the default's, which a second referee finds so).
    ``advertise`` ("host:port") is where callers reach this referee (``GetReferee``); by
    default the listening address. ``spectators``: who may watch, and how much at once.
    ``unix_socket`` is a path to listen on as well (grpc's ``unix:`` address), which bots in
    containers without a network reach through a mount. ``group`` is the --data of the
    ``croupier serve --workers`` this referee is one worker of (``server.group``).
    ``open_registration``: RegisterBot without a token, within these limits (None: admin only).
    """
    logs.configure()
    if not address.rpartition(":")[2].isdigit():
        raise CannotStart(f"--address {address!r} is not HOST:PORT (port 0 picks a free one)")
    if api_implementation.Type() != "upb":
        log.warning(
            "protobuf is not on its upb backend: expect a much slower referee",
            backend=api_implementation.Type(),
        )
    convert.all_codecs()  # a game whose proto disagrees with its engine fails here, not mid-match
    open_files = openfiles.raise_soft_limit()
    try:
        private_folder(data_dir)
    except OSError as exc:
        raise cannot_use(data_dir, exc) from None
    admin_token = checked_admin_token(admin_token) if admin_token else kept_admin_token(data_dir)
    busy = bind_error(address)  # asked first: grpc's own failure is a log line and no reason
    if busy is not None:  # and before metrics: a second referee clashes here, on the port bots dial
        raise _cannot_listen(address, busy)
    metrics = Metrics(GAMES)
    metrics_port = None
    if metrics_address is not None:
        metrics_port = _serve_metrics(metrics, metrics_address, any_metrics_port)
    siblings = Siblings(group, data_dir) if group is not None else None
    referee = Referee(data_dir, admin_token, clocks or Clocks(), metrics, siblings)
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.keepalive_timeout_ms", 10_000),
            ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
            ("grpc.keepalive_permit_without_calls", 1),
        ]
    )
    implementations: list[object] = [
        BotService(referee),
        SpectatorService(referee, spectators),
        AdminService(referee, open_registration),
    ]
    for service, implementation in zip(SERVICES, implementations, strict=True):
        handlers = method_handlers(service, implementation)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
    health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]  # missing from grpc-stubs
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = [s.full_name for s in SERVICES]
    reflection.enable_server_reflection([*names, health.SERVICE_NAME, reflection.SERVICE_NAME], server)
    binding = address
    try:
        port = (
            server.add_secure_port(address, tls.credentials()) if tls else server.add_insecure_port(address)
        )
        if unix_socket is not None:
            # no TLS on it: only this machine reaches it, through its folder's permissions
            binding = f"unix:{unix_socket}"
            server.add_insecure_port(binding)
    except RuntimeError as exc:  # taken meanwhile, or the Unix socket's
        metrics.stop()
        await server.stop(None)
        raise _cannot_listen(binding, str(exc)) from None
    referee.address = advertise or listening_address(address, port)
    referee.port = port
    referee.bound_host = address.rpartition(":")[0]
    try:
        referee.load()
        forks.expire_journals(referee)
    except OSError as exc:
        metrics.stop()
        await server.stop(None)
        raise cannot_use(data_dir, exc) from None
    await server.start()
    if unix_socket is not None:
        unix_socket.chmod(0o666)  # connecting takes write permission; a bot token is still required
    for name in ("", *names):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    log.info(
        "referee started",
        port=port,
        advertise=referee.address,
        data=str(data_dir),
        metrics_port=metrics_port,
        tls=tls is not None,
        unix_socket=str(unix_socket) if unix_socket else None,
        open_files_limit=open_files[0] if open_files else None,
        hot_path=native.build(),
    )
    return Croupier(server, port, referee, health_servicer, metrics, metrics_port, admin_token)


def _cannot_listen(binding: str, why: str) -> CannotStart:
    return CannotStart(
        f"cannot listen on {binding} for gRPC ({why}): stop what uses it, or pass "
        "another --address (port 0 picks a free one)"
    )


def _serve_metrics(metrics: Metrics, address: str, any_port: bool) -> int:
    """Serve metrics on ``address`` ("host:port", port 0 picks one; ``any_port``: so does a taken
    port); the port it got."""
    host, _, port = address.rpartition(":")
    if not port.isdigit() or int(port) > 65535:
        raise CannotStart(f"--metrics-address {address!r} is not HOST:PORT (or 'off' for no metrics)")
    try:
        return metrics.serve(host or "127.0.0.1", int(port))
    except OSError as exc:
        if any_port and exc.errno == errno.EADDRINUSE:
            return metrics.serve(host or "127.0.0.1", 0)
        raise CannotStart(
            f"cannot serve metrics on {address} ({exc.strerror}): pass another --metrics-address "
            "(port 0 picks a free one), or --metrics-address off for none"
        ) from None


def bind_error(address: str) -> str | None:
    """Why ``address`` cannot be bound, as the OS says it ("Address already in use"), or None."""
    host, _, port = address.rpartition(":")
    if not port.isdigit() or int(port) == 0:
        return None
    try:
        infos = socket.getaddrinfo(host.strip("[]") or None, int(port), type=socket.SOCK_STREAM)
        family, kind, proto, _name, where = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as grpc binds
            probe.bind(where)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


Handlers = dict[str, "grpc.RpcMethodHandler[Any, Any]"]  # generic only in grpc-stubs


def method_handlers(service: ServiceDescriptor, implementation: object) -> Handlers:
    """The service's handlers, from its descriptor: lenient parsing (garbage gets INVALID_ARGUMENT,
    not a crashed call) and the one mapping of domain errors to status codes."""
    handlers: Handlers = {}
    for method in service.methods:
        parse = lenient_parser(GetMessageClass(method.input_type))
        serialize: Callable[[Any], bytes] = GetMessageClass(method.output_type).SerializeToString
        behaviour = getattr(implementation, method.name)
        if method.client_streaming and method.server_streaming:
            handler = grpc.stream_stream_rpc_method_handler(behaviour, parse, written_or(serialize))
        elif method.server_streaming:
            handler = grpc.unary_stream_rpc_method_handler(server_stream(behaviour), parse, serialize)
        elif not method.client_streaming:
            handler = grpc.unary_unary_rpc_method_handler(unary(behaviour), parse, serialize)
        else:
            raise TypeError(f"{method.full_name}: client streaming alone is not served")
        handlers[method.name] = handler
    return handlers


def written_or(serialize: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """``serialize``, letting bytes already written (a bot stream's commonest messages and
    Batches: framing.py) pass as they are."""

    def serialized(message: Any) -> bytes:
        return message if type(message) is bytes else serialize(message)

    return serialized


def listening_address(address: str, port: int) -> str:
    """``address`` with the port it got; a wildcard host (every interface) becomes this machine's
    name, which others can dial."""
    host = address.rpartition(":")[0]
    if host in ("", "0.0.0.0", "[::]"):
        host = socket.gethostname()
    return f"{host}:{port}"


class CannotStart(Exception):
    """The referee must not start: the message says why and what to do about it, in one line."""


def cannot_use(data_dir: Path, exc: OSError) -> CannotStart:
    """Why the data directory cannot be used, and what to do about it."""
    what = f"cannot use {exc.filename or data_dir} ({exc.strerror})"
    if exc.errno in OUT_OF_ROOM:
        return CannotStart(f"{what}: free space or raise the open-files limit, then start again")
    return CannotStart(f"{what}: give the referee's user the data directory and its files")


HOW_TO_TOKEN = f"{MIN_ADMIN_TOKEN} to {MAX_TOKEN} printable ASCII characters without spaces"


def checked_admin_token(token: str) -> str:
    problem = token_problem(token, MIN_ADMIN_TOKEN)
    if problem:
        raise CannotStart(f"the admin token given {problem}: give one of {HOW_TO_TOKEN}")
    return token


def kept_admin_token(data_dir: Path) -> str:
    """The admin token kept in the data directory: made on first start (written whole, readable by
    its owner only), refused if it is not a sound token (an empty one must never be admin)."""
    path = data_dir / "admin-token"
    if not path.exists():
        token = "admin_" + secrets.token_urlsafe(24)
        try:
            replace_file(path, (token + "\n").encode())
        except OSError as exc:
            why = f"cannot write {path} ({exc.strerror})"
            raise CannotStart(f"{why}: free space there, or give --admin-token") from None
        return token
    try:
        token = path.read_text(encoding="utf-8").strip()
        if stat.S_IMODE(path.stat().st_mode) & 0o077:
            path.chmod(FILE_MODE)
    except (OSError, UnicodeDecodeError) as exc:
        why = f"cannot read {path} ({exc})"
        raise CannotStart(f"{why}: make it the referee's, or give --admin-token") from None
    problem = token_problem(token, MIN_ADMIN_TOKEN)
    if problem:
        raise CannotStart(
            f"{path} {problem}: delete it and a new token is made, or write a token of {HOW_TO_TOKEN} in it"
        )
    return token

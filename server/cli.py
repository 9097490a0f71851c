"""``croupier serve``: run a referee until SIGINT or SIGTERM.

Bots, spectators and admins connect over gRPC at --address (default
127.0.0.1:50051; port 0 picks a free port and prints it). Every match's
journal lives under --data (default ./croupier-data): a referee restarted on
the same directory resumes every unfinished match, and its bots reconnect.
Health checking and server reflection are on; metrics on --metrics-address.
With --workers N, N referee processes share the machine's cores, each on an
address of its own (docs/operations.md, "Every core").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING

from croupier.server.registration import DEFAULT_PER_ADDRESS, DEFAULT_PER_HOUR, OpenRegistration, limits_of

if TYPE_CHECKING:  # imported in run(): `croupier --help` stays quick
    from croupier.server.app import Croupier, Tls
    from croupier.server.clocks import Clocks

DEFAULT_METRICS = "127.0.0.1:9464"
"""Where metrics are served unless --metrics-address says; a free port instead if that one is taken
(a second referee on the machine finds it so), where a port asked for by name is kept to."""
UNIX_PATH_MAX = 107
"""The longest path a Unix socket can be bound to (sun_path holds 108 bytes with its NUL)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--address", default="127.0.0.1:50051", help="HOST:PORT; port 0 picks a free port")
    parser.add_argument("--data", type=Path, default=Path("croupier-data"), help="journals, bots and tokens")
    parser.add_argument(
        "--workers",
        metavar="N",
        help="run N referee processes (auto: one per core), worker I on --address's port + I (port 0: "
        "each picks one) with its journals in DATA/worker-I and metrics on --metrics-address's port + I; "
        "a tournament given any one address spreads over all (default: one referee in this process)",
    )
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)  # set by --workers' parent
    parser.add_argument(
        "--advertise",
        metavar="HOST:PORT",
        default=os.environ.get("CROUPIER_ADVERTISE"),
        help="where callers reach this referee, told to tournament runners that spread matches over "
        "several referees (default: $CROUPIER_ADVERTISE, else --address with its port; "
        "this machine's name for 0.0.0.0)",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("CROUPIER_ADMIN_TOKEN"),
        help="the admin token (default: $CROUPIER_ADMIN_TOKEN, else the one kept in DATA/admin-token)",
    )
    parser.add_argument(
        "--metrics-address",
        help="HOST:PORT for Prometheus metrics (port 0 picks one; 'off' for none; default: "
        f"{DEFAULT_METRICS}, or a free port if another process has that one)",
    )
    parser.add_argument(
        "--drain-seconds",
        type=float,
        default=2.0,
        help="on SIGTERM, seconds to report NOT_SERVING while still serving, so a load balancer "
        "stops sending calls before connections are refused (default 2; a second signal ends it)",
    )
    parser.add_argument(
        "--spectators",
        choices=("anonymous", "token", "off"),
        default="anonymous",
        help="who may list, watch and replay matches: anyone (default), callers with a bot, seat or "
        "admin token, or the admin alone",
    )
    parser.add_argument(
        "--feeds-per-client",
        "--feeds-per-connection",
        type=int,
        default=16,
        help="live WatchMatch streams one client (one address, whatever connections it opens) may "
        "hold, the admin's and the organiser's aside (default 16)",
    )
    parser.add_argument(
        "--anonymous-feeds",
        type=int,
        default=32,
        help="live WatchMatch streams all anonymous callers may hold together (default 32): each "
        "costs the referee a stream write per frame",
    )
    parser.add_argument(
        "--open-registration",
        nargs="?",
        const=f"{DEFAULT_PER_ADDRESS},{DEFAULT_PER_HOUR}",
        metavar="PER_ADDRESS,PER_HOUR",
        help="let anyone register a bot without the admin token (croupier register NAME --open), so "
        "many an hour from one address and so many in all (default when given: %(const)s; with "
        "--workers, each worker counts its own)",
    )
    parser.add_argument(
        "--unix-socket",
        type=Path,
        metavar="PATH",
        help="listen on this Unix socket as well (no TLS), e.g. for tournament bots in containers "
        "without a network: give it a folder of its own, which the runner mounts into them",
    )
    parser.add_argument("--tls-cert", type=Path, help="PEM certificate chain: serve TLS (with --tls-key)")
    parser.add_argument("--tls-key", type=Path, help="PEM private key of --tls-cert")
    parser.add_argument("--tls-client-ca", type=Path, help="PEM CA: require client certificates it signed")
    clocks = parser.add_argument_group("default clocks of new matches (CreateMatch may set its own)")
    clocks.add_argument("--decision-ms", type=int, default=5000, help="time per decision (default 5000)")
    clocks.add_argument(
        "--bank-ms", type=int, default=30000, help="each seat's time bank per match (default 30000)"
    )
    clocks.add_argument(
        "--max-timeouts", type=int, default=3, help="timeouts before a seat is forfeited (default 3)"
    )
    clocks.add_argument(
        "--max-refusals",
        type=int,
        default=100,
        help="refused moves before a seat is forfeited (default 100; 0: never)",
    )
    clocks.add_argument(
        "--grace-ms",
        type=int,
        default=10000,
        help="reconnect grace before a seat is forfeited (default 10000)",
    )


def run(args: argparse.Namespace) -> int:
    from croupier.server.app import CannotStart, Tls
    from croupier.server.clocks import Clocks
    from croupier.wire.errors import InvalidArgument

    if (args.tls_cert is None) != (args.tls_key is None):
        raise SystemExit("croupier serve: --tls-cert and --tls-key go together")
    tls = Tls(args.tls_cert, args.tls_key, args.tls_client_ca) if args.tls_cert else None
    try:
        clocks = Clocks(
            args.decision_ms / 1000,
            args.bank_ms / 1000,
            args.max_timeouts,
            args.grace_ms / 1000,
            args.max_refusals,
        )
    except InvalidArgument as exc:
        raise SystemExit(f"croupier serve: {exc}") from None
    any_metrics_port = args.metrics_address is None
    args.metrics_address = args.metrics_address or DEFAULT_METRICS
    metrics = None if args.metrics_address == "off" else args.metrics_address
    if not 0 <= args.drain_seconds <= 3600:
        raise SystemExit("croupier serve: --drain-seconds must be 0 to 3600")
    for flag in ("feeds_per_client", "anonymous_feeds"):
        if not 0 <= getattr(args, flag) <= 100_000:
            raise SystemExit(f"croupier serve: --{flag.replace('_', '-')} must be 0 to 100000")
    try:
        registration = None if args.open_registration is None else limits_of(args.open_registration)
    except ValueError as exc:
        raise SystemExit(f"croupier serve: --open-registration {exc}") from None
    if args.unix_socket is not None and len(os.fsencode(args.unix_socket.absolute())) > UNIX_PATH_MAX:
        raise SystemExit(f"croupier serve: --unix-socket: a path of at most {UNIX_PATH_MAX} bytes, please")
    try:
        if args.workers is not None and args.worker is None:
            from croupier.server.workers import serve_workers

            return serve_workers(args)
        asyncio.run(_serve(args, clocks, metrics, tls, registration, any_metrics_port))
    except CannotStart as exc:
        raise SystemExit(f"croupier serve: {exc}") from None
    return 0


async def _serve(
    args: argparse.Namespace,
    clocks: Clocks,
    metrics: str | None,
    tls: Tls | None,
    registration: OpenRegistration | None,
    any_metrics_port: bool,
) -> None:
    import structlog

    from croupier.server.app import create_server
    from croupier.server.audience import Access, Limits

    if args.worker is not None:
        structlog.contextvars.bind_contextvars(worker=args.worker)
    referee = await create_server(
        args.address,
        args.data,
        admin_token=args.admin_token,
        clocks=clocks,
        metrics_address=metrics,
        any_metrics_port=any_metrics_port,
        tls=tls,
        advertise=args.advertise,
        unix_socket=args.unix_socket,
        spectators=Limits(
            access=Access(args.spectators),
            feeds_per_client=args.feeds_per_client,
            anonymous_feeds=args.anonymous_feeds,
        ),
        group=args.data.parent if args.worker is not None else None,
        open_registration=registration,
    )
    signals = asyncio.Queue[int]()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, signals.put_nowait, signum)
    for damage in referee.referee.damaged:
        print(f"croupier: damaged: {damage}", flush=True)
    if args.worker is not None:
        _tell_parent(referee.port, referee.referee.address, referee.metrics_port)
        threading.Thread(target=_stop_when_orphaned, args=(loop, signals), daemon=True).start()
    else:
        _say_where(args, referee, metrics)
    await signals.get()
    print(f"croupier: stopping: NOT_SERVING, draining for {args.drain_seconds:g} s", flush=True)
    drain = asyncio.wait_for(signals.get(), args.drain_seconds)  # a second signal cuts it short
    await referee.stop(grace=5.0, drain=_quietly(drain))
    print("croupier: stopped", flush=True)


def _tell_parent(port: int, advertised: str, metrics_port: int | None) -> None:
    from croupier.server.group import READY

    ready = {"port": port, "advertise": advertised, "metrics_port": metrics_port}
    print(READY + json.dumps(ready), flush=True)


def _stop_when_orphaned(loop: asyncio.AbstractEventLoop, signals: asyncio.Queue[int]) -> None:
    """A worker's stdin is a pipe its parent holds and never writes: its end of file means the
    parent is gone (even killed with SIGKILL), and the worker stops as on SIGTERM."""
    with contextlib.suppress(OSError):
        while os.read(sys.stdin.fileno(), 4096):
            pass
    loop.call_soon_threadsafe(signals.put_nowait, signal.SIGTERM)


def _say_where(args: argparse.Namespace, referee: Croupier, metrics: str | None) -> None:
    host = args.address.rpartition(":")[0] or "127.0.0.1"
    print(f"croupier: serving on {host}:{referee.port}", flush=True)
    if referee.referee.address != f"{host}:{referee.port}":
        print(f"croupier: advertised as {referee.referee.address}", flush=True)
    if args.unix_socket is not None:
        print(f"croupier: serving on unix:{args.unix_socket}", flush=True)
    if metrics is not None:
        metrics_host, _, asked = metrics.rpartition(":")
        where = f"http://{metrics_host or '127.0.0.1'}:{referee.metrics_port}/metrics"
        if asked not in ("0", str(referee.metrics_port)):
            where += f" (port {asked} is taken; --metrics-address HOST:PORT picks one)"
        print(f"croupier: metrics on {where}", flush=True)
    if args.admin_token is None:
        print(f"croupier: admin token in {args.data / 'admin-token'}", flush=True)


async def _quietly(waiting: Awaitable[object]) -> None:
    with contextlib.suppress(TimeoutError):
        await waiting


def main() -> int:
    """``python -m croupier.server.cli``: the same as ``croupier serve``."""
    parser = argparse.ArgumentParser(prog="croupier serve", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())

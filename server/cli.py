"""``croupier serve``: run a referee until SIGINT or SIGTERM.

Bots, spectators and admins connect over gRPC at --address (default
127.0.0.1:50051; port 0 picks a free port and prints it). Every match's
journal lives under --data (default ./croupier-data): a referee restarted on
the same directory resumes every unfinished match, and its bots reconnect.
Health checking and server reflection are on; metrics on --metrics-address.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported in run(): `croupier --help` stays quick
    from croupier.server.app import Tls
    from croupier.server.match import Clocks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--address", default="127.0.0.1:50051", help="HOST:PORT; port 0 picks a free port")
    parser.add_argument("--data", type=Path, default=Path("croupier-data"), help="journals, bots and tokens")
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
        default="127.0.0.1:9464",
        help="HOST:PORT for Prometheus metrics (port 0 picks one; 'off' for none)",
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
    from croupier.server.errors import InvalidArgument
    from croupier.server.match import Clocks

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
    metrics = None if args.metrics_address == "off" else args.metrics_address
    try:
        asyncio.run(_serve(args.address, args.data, args.admin_token, clocks, metrics, tls, args.advertise))
    except CannotStart as exc:
        raise SystemExit(f"croupier serve: {exc}") from None
    return 0


async def _serve(
    address: str,
    data: Path,
    admin_token: str | None,
    clocks: Clocks,
    metrics: str | None,
    tls: Tls | None,
    advertise: str | None,
) -> None:
    from croupier.server.app import create_server

    referee = await create_server(
        address,
        data,
        admin_token=admin_token,
        clocks=clocks,
        metrics_address=metrics,
        tls=tls,
        advertise=advertise,
    )
    host = address.rpartition(":")[0] or "127.0.0.1"
    for damage in referee.referee.damaged:
        print(f"croupier: damaged: {damage}", flush=True)
    print(f"croupier: serving on {host}:{referee.port}", flush=True)
    if referee.referee.address != f"{host}:{referee.port}":
        print(f"croupier: advertised as {referee.referee.address}", flush=True)
    if metrics is not None:
        metrics_host = metrics.rpartition(":")[0] or "127.0.0.1"
        print(f"croupier: metrics on http://{metrics_host}:{referee.metrics_port}/metrics", flush=True)
    if admin_token is None:
        print(f"croupier: admin token in {data / 'admin-token'}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    print("croupier: stopping", flush=True)
    await referee.stop(grace=5.0)


def main() -> int:
    """``python -m croupier.server.cli``: the same as ``croupier serve``."""
    parser = argparse.ArgumentParser(prog="croupier serve", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())

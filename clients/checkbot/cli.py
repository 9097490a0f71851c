"""``croupier check-bot -- COMMAND...``: take a bot in any language through the protocol's corner cases.

    croupier check-bot -- node clients/node/bot.js
    croupier check-bot --only refused-move -- ./mybot
    croupier check-bot --protocol-1 -- python mybot.py

An embedded referee starts on loopback, and the bot is run once per check with $CROUPIER_SERVER,
$CROUPIER_TOKEN (a registered bot's token) and $CROUPIER_BOT_NAME set, as the tournament runner
runs it. Between the bot and the referee sits a tap that records every message and, in some
checks, tampers: it turns a move into one the referee refuses, holds back a decision until a newer
one replaces it, or drops the stream. The opponents are the bundled Python bots. A table says what
passed and what went wrong, with the last error the bot's own output reported; a check fails at the
bot's first timeout, without waiting for its match to end. The exit code is 1 when any check failed.

The bot is checked on the stream options its Hello asks for (quiet acceptance, deferred updates,
batches), as the referee grants them in tournaments; the hello check's row says which. With
--protocol-1 the tap takes them out of the Hello, so the same bot is checked on protocol 1 as it
began: run both to see the bot handle either.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import secrets
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from croupier.clients.checkbot.checks import CHECKS
from croupier.clients.checkbot.tap import Tamper, Tap
from croupier.clients.checkbot.trial import Failed, Trial
from croupier.clients.isolation.policy import MODES, IsolationError
from croupier.v1 import admin_pb2_grpc


@dataclass(frozen=True)
class Verdict:
    name: str
    passed: bool
    detail: str


async def check(
    command: Sequence[str],
    names: Sequence[str],
    seconds: float,
    protocol_1: bool = False,
    isolation: str = "off",
) -> list[Verdict]:
    """Run the checks ``names`` on the bot ``command``, each with a fresh process, on the stream options
    it asks for (``protocol_1``: none), jailed as ``croupier match`` jails it (``isolation``,
    isolation.MODES); their verdicts. An IsolationError when "required" cannot be had."""
    from croupier.clients.isolation.policy import choose
    from croupier.server import logs
    from croupier.server.app import create_server

    logs.configure(level=logging.CRITICAL)  # the embedded referee keeps quiet
    logging.getLogger("croupier.bot").setLevel(logging.CRITICAL)  # and so do the opponents
    admin_token = "admin_" + secrets.token_urlsafe(24)  # the referee is on loopback, but not alone there
    verdicts = []
    with (
        tempfile.TemporaryDirectory(prefix="croupier-check-") as data,
        tempfile.TemporaryDirectory(prefix="croupier-check-sock-") as sockets,
    ):
        Path(sockets).chmod(0o755)  # a jailed bot's user is not ours
        socket = Path(sockets) / "tap.sock"
        referee = await create_server("127.0.0.1:0", Path(data), admin_token=admin_token)
        address = f"127.0.0.1:{referee.port}"
        tap = Tap(address, protocol_1)
        tap_port = await tap.start(socket)
        jail, line = await asyncio.to_thread(choose, isolation, [Path(data)], "--isolation required", socket)
        if line is not None:
            print(line, flush=True)
        channel = grpc.aio.insecure_channel(address)
        admin = _Admin(admin_pb2_grpc.AdminServiceStub(channel), [("croupier-token", admin_token)])
        try:
            for name in names:
                tap.tamper = Tamper()
                trial = Trial(name, command, tap, address, admin, jail)
                try:
                    await trial.start(tap_port)
                    detail = await asyncio.wait_for(CHECKS[name][1](trial), seconds)
                    verdicts.append(Verdict(name, True, detail))
                except Failed as failed:
                    verdicts.append(Verdict(name, False, _with_error(str(failed), trial)))
                except TimeoutError:
                    verdicts.append(
                        Verdict(name, False, _with_error(f"not done within {seconds:g} s", trial))
                    )
                except OSError as exc:
                    verdicts.append(Verdict(name, False, f"cannot run the bot: {exc}"))
                finally:
                    await trial.close()
                print(_row(verdicts[-1]), flush=True)
        finally:
            await channel.close(None)
            await tap.stop()
            await referee.stop(grace=1)
    return verdicts


def _with_error(detail: str, trial: Trial) -> str:
    """A failure's words, with the last error the bot's own output reported (often the real cause)."""
    error = trial.last_error()
    if error is None or error[-160:] in detail:
        return detail
    return f'{detail}; the bot\'s last error: "{error[-160:]}"'


async def _stopped_by_signals(checking: Awaitable[list[Verdict]]) -> list[Verdict]:
    """SIGTERM and SIGINT cancel the checks, so that the bot's process is stopped on the way out."""
    task = asyncio.ensure_future(checking)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, task.cancel)
    return await task


class _Admin:
    """The admin stub with the admin token on every call."""

    def __init__(self, stub: admin_pb2_grpc.AdminServiceStub, metadata: list[tuple[str, str]]) -> None:
        self._stub, self._metadata = stub, metadata

    def __getattr__(self, method: str) -> Callable[[Any], Any]:
        call = getattr(self._stub, method)
        return lambda request: call(request, metadata=self._metadata)


WIDTH = max(len(name) for name in CHECKS)


def _row(verdict: Verdict) -> str:
    return f"{verdict.name:<{WIDTH}}  {'pass' if verdict.passed else 'FAIL':<6}  {verdict.detail}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--only",
        action="append",
        choices=list(CHECKS),
        metavar="CHECK",
        help=f"run only this check (repeatable): {', '.join(CHECKS)}",
    )
    parser.add_argument("--list", action="store_true", help="list the checks, saying what each one checks")
    parser.add_argument(
        "--protocol-1",
        action="store_true",
        help="take the stream options out of the bot's Hello, so that it is checked on protocol 1 as it "
        "began (by default it is checked on the options it asks for, as tournaments play it)",
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds a check may take (default: %(default)s)"
    )
    parser.add_argument(
        "--isolation",
        choices=MODES,
        default="auto",
        help="auto: as root, run the bot in the jail croupier match runs it in (its own user, no "
        "network but the referee's socket, its limits), else say so; required: refuse to check where "
        "it cannot; off: run it as you (default: %(default)s)",
    )
    parser.add_argument("bot", nargs=argparse.REMAINDER, help="-- and the command that runs the bot")


def run(args: argparse.Namespace) -> int:
    if args.list:
        for name, (what, _) in CHECKS.items():
            print(f"{name:<{WIDTH}}  {what}")
        return 0
    command = args.bot[1:] if args.bot[:1] == ["--"] else args.bot
    if not command:
        print(
            "croupier check-bot: give the bot's command after --: croupier check-bot -- ./mybot",
            file=sys.stderr,
        )
        return 2
    names = args.only or list(CHECKS)
    on = "protocol 1 (--protocol-1)" if args.protocol_1 else "the stream options it asks for"
    print(f"checking {' '.join(command)} on {on}")
    print(f"{'check':<{WIDTH}}  result  what went on")
    try:
        verdicts = asyncio.run(
            _stopped_by_signals(check(command, names, args.timeout, args.protocol_1, args.isolation))
        )
    except IsolationError as exc:
        print(f"croupier check-bot: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("croupier check-bot: interrupted (the bot was stopped)", file=sys.stderr)
        return 130
    failed = [v.name for v in verdicts if not v.passed]
    print(
        f"{len(verdicts) - len(failed)} passed, {len(failed)} failed"
        + (f": {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0

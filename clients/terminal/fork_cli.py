"""``croupier replay MATCH --fork STEP --bot SPEC ...``: play a finished match on from one of its
steps ("what if, from here, ...?"), with the same deal and history, and new bots from there
(or you: ``--human``, or ``--bot human`` for the seat of your choice, played in the browser).

The match comes from its journal (a file, or its id under --data), forked on a referee embedded
here (its journals under DATA/referee/matches, as ``croupier match``'s), or from a running
referee (``--server``), which forks it itself (``SpectatorService.ForkMatch``: anyone its
spectators' setting lets in may fork a finished match). One --bot per seat, as ``croupier match``
takes them: a bundled strategy, or a shell command run with the seat's server and token in
$CROUPIER_SERVER and $CROUPIER_TOKEN. The fork is never rated; it ends with its result and how
to replay it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from rich.console import Console

from croupier.clients.web.seat import BANK_MS, DECISION_MS
from croupier.v1 import match_pb2, spectator_pb2, spectator_pb2_grpc

BUNDLED = ("random", "heuristic", "boss-1", "boss-2")
"""Strategies played in this process (any other SPEC is a shell command, but ``HUMAN``)."""
HUMAN = "human"
"""The SPEC of the person's seat, played in the browser (``--human``: the first seat)."""
LAUNCHERS = frozenset({"python", "python3", "node", "sh", "bash", "exec", "croupier", "bot", "env"})
"""Words of a command that name the interpreter, not the bot."""
Wrap = Callable[[list[str]], list[str]]
"""How a bot command is launched: through the tournament runner's jail as root, else as it is."""
BOT_SECONDS = 30.0
"""How long a bot command may take to stop once the fork is over."""


async def fork(args: argparse.Namespace, console: Console, journal: Path | None) -> int:
    """Fork the match of ``journal`` (else ``args.sources[0]`` on ``args.server``) at ``args.fork``;
    play it with ``args.bot``; the exit code."""
    import grpc

    from croupier.wire.errors import ServiceError

    def say(text: str) -> None:
        console.print(text, soft_wrap=True)  # lines a script may read: never wrapped

    source = journal.stem if journal is not None else args.sources[0]
    specs: list[str] = ([HUMAN] if args.human else []) + (args.bot or [])
    if not specs:
        say(
            "croupier replay: --fork takes one --bot per seat: random, heuristic, boss-1, boss-2, human "
            "or a command"
        )
        return 2
    if specs.count(HUMAN) > 1:
        say("croupier replay: one person plays a fork: --human (or --bot human) once")
        return 2
    names = [_name(spec, seat) for seat, spec in enumerate(specs)]  # the referee counts them
    clocks = match_pb2.Clocks(decision_ms=DECISION_MS, bank_ms=BANK_MS) if HUMAN in specs else None
    wrap: Wrap = list
    if any(spec not in (*BUNDLED, HUMAN) for spec in specs):  # a command: isolated as the runner isolates it
        from croupier.clients.isolation.policy import choose

        jail, note = await asyncio.to_thread(choose, "auto", [args.data.absolute()])
        if jail is not None:
            wrap = jail.wrap
        if note:
            say(f"croupier replay: {note}")
    try:
        async with _forked(args, journal, source, names, clocks) as (target, fork_info, tokens):
            fork_id = fork_info.match_id
            say(f"forked {source} at step {args.fork} as {fork_id}: {', '.join(names)} play on")
            logs = args.data / "logs"
            players = [
                asyncio.ensure_future(
                    _seat_person(target, token, args.data, say)
                    if spec == HUMAN
                    else _play(spec, target, token, logs / f"{fork_id}-{seat}.log", wrap)
                )
                for seat, (spec, token) in enumerate(zip(specs, tokens, strict=True))
            ]
            try:
                info = await _ended(target, fork_id)
            finally:
                for player in players:
                    player.cancel()
                await asyncio.gather(*players, return_exceptions=True)
    except (grpc.aio.AioRpcError, ServiceError, LookupError, ValueError) as exc:
        details = exc.details() if isinstance(exc, grpc.aio.AioRpcError) else str(exc)
        say(f"croupier replay: cannot fork {source} at step {args.fork}: {details}")
        return 1
    if info.status != match_pb2.MATCH_STATUS_FINISHED:
        say(f"fork {fork_id} did not finish ({match_pb2.MatchStatus.Name(info.status)})")
        return 1
    result = ", ".join(f"{s.name}: place {s.place}, {s.score}" for s in info.result.seats)
    say(f"fork {fork_id} over (never rated): {result}")
    where = f" --data {args.data}" if journal is not None else f" --server {target}"
    say(f"replay it: croupier replay {fork_id}{where}")
    return 0


@contextlib.asynccontextmanager
async def _forked(
    args: argparse.Namespace,
    journal: Path | None,
    source: str,
    names: Sequence[str],
    clocks: match_pb2.Clocks | None = None,
) -> AsyncIterator[tuple[str, match_pb2.MatchInfo, list[str]]]:
    """The referee the fork plays on (embedded here for a journal, else ``--server``), the fork
    (with ``clocks``' times, where set) and its seat tokens; an embedded referee stops after the block."""
    import grpc

    if journal is None:
        if not args.server:
            raise LookupError(f"no journal {source!r} in {args.data}; give --server to ask a referee")
        async with grpc.aio.insecure_channel(args.server) as channel:
            stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
            request = spectator_pb2.ForkMatchRequest(
                match_id=source, step=args.fork, names=names, clocks=clocks
            )
            response = await stub.ForkMatch(request)
        yield args.server, response.match, list(response.seat_tokens)
        return
    from croupier.server import forks, logs
    from croupier.server.app import create_server

    records = await asyncio.to_thread(forks.finished_records, journal, source)
    log_dir = args.data / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    logs.configure(json=True)
    with logs.to_file(log_dir / "referee.log"):
        croupier = await create_server("127.0.0.1:0", args.data / "referee")
        try:
            match, tokens = await forks.fork_records(croupier.referee, records, args.fork, names, clocks)
            yield f"127.0.0.1:{croupier.port}", match.info(), tokens
        finally:
            await croupier.stop(grace=1.0)


async def _play(spec: str, target: str, token: str, log: Path, wrap: Wrap) -> None:
    """One seat's bot until the fork is over (cancelled then): a bundled strategy played here, or
    a shell command run with the seat's server and token in $CROUPIER_SERVER and $CROUPIER_TOKEN
    (every bundled bot and starter reads them), its output in ``log``."""
    if spec in BUNDLED:
        from croupier.clients.bots import strategy
        from croupier.clients.sdk import Client

        await Client(strategy(spec), target, [token], name=spec, stop_after=1).run()
        return
    from croupier.clients.tournament.launch import bot_environment

    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as output:
        process = await asyncio.create_subprocess_exec(
            *wrap(["/bin/sh", "-c", spec]),
            env=bot_environment(log.stem, target, token),
            stdout=output,
            stderr=output,
            start_new_session=True,  # signalled as a group: the shell, the jail and the bot
        )
        try:
            await process.wait()
        finally:
            if process.returncode is None:
                _signal(process.pid, signal.SIGTERM)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), BOT_SECONDS)
                if process.returncode is None:
                    _signal(process.pid, signal.SIGKILL)
                    await process.wait()


async def _seat_person(target: str, token: str, data: Path, say: Callable[[str], None]) -> None:
    """The person's seat until the fork is over: a web viewer of the fork's referee on this machine
    holds it (clients/web/seat.py), its one-time link printed (and opened where a display is)."""
    from croupier.clients.tournament.viewer import offer_seat
    from croupier.clients.web.app import start_web
    from croupier.clients.web.seat import HumanSeat

    seat = HumanSeat(target, hints=True)  # a fork is never rated
    viewer = await start_web(target, "127.0.0.1:0", data, seat=seat)
    try:
        seat.take([token], matches=1)
        offer_seat(viewer, say)
        await seat.wait()
    finally:
        await viewer.stop()


def _signal(group: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signum)


def _name(spec: str, seat: int) -> str:
    """A seat's player name: the strategy, the person's (you), or the program its command runs
    (``python mybot.py``: mybot)."""
    if spec == HUMAN:
        return "you"
    if spec in BUNDLED:
        return spec
    words = [w for w in spec.split() if not w.startswith("-") and Path(w).name not in LAUNCHERS]
    return (Path(words[0]).stem if words else "")[:40] or f"seat {seat}"


async def _ended(target: str, match_id: str) -> match_pb2.MatchInfo:
    """The fork's info once it is over, watched as a spectator (the last frame carries it)."""
    import grpc

    info = match_pb2.MatchInfo()
    async with grpc.aio.insecure_channel(target) as channel:
        stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        async for frame in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
            if frame.HasField("info"):
                info = frame.info
    return info

"""``croupier check-bot -- COMMAND...``: take a bot in any language through the protocol's corner cases.

    croupier check-bot -- node clients/node/bot.js
    croupier check-bot --only refused-move -- ./mybot

An embedded referee starts on loopback, and the bot is run once per check with $CROUPIER_SERVER,
$CROUPIER_TOKEN (a registered bot's token) and $CROUPIER_BOT_NAME set, as the tournament runner
runs it. Between the bot and the referee sits a tap that records every message and, in some
checks, tampers: it turns a move into one the referee refuses, holds back a decision until a newer
one replaces it, or drops the stream. The opponents are the bundled Python bots. A table says what
passed and what went wrong; the exit code is 1 when any check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import tempfile
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc

from croupier.clients.wire import Stream, Tamper, Tap
from croupier.v1 import admin_pb2, admin_pb2_grpc, bots_pb2, match_pb2

T = TypeVar("T")
STARTUP_SECONDS = 30.0
"""Time for the bot's process to start and say Hello (a cold Python or a JVM takes a while)."""
CLOCKS = {"decision_ms": 2000, "bank_ms": 4000, "max_timeouts": 1, "grace_ms": 10000}
"""Every check's clocks but the clock's own: a bot that does not answer is forfeited in seconds."""
SHORT: dict[str, dict[str, Any]] = {
    "chinese_ten": {"players": 2, "target": 50},
    "spoil_five": {"players": 3, "deals": 2},
    "platinum_fish": {"players": 3},
    "pair_battle": {"players": 2, "countdown_tick": 0.0},
}
"""A short match of each game."""
OUT_OF_RANGE = 10_000
"""The index the refused-move check puts in the bot's move: no decision lists that many actions."""
Result = bots_pb2.ActionResult


class Failed(Exception):
    """A check failed; the message says what went wrong, for the bot's author."""


@dataclass(frozen=True)
class Verdict:
    name: str
    passed: bool
    detail: str


class Trial:
    """One check: a newly registered bot, its process, the opponents and the matches."""

    def __init__(self, name: str, command: Sequence[str], tap: Tap, referee: str, admin: Any) -> None:
        self.name, self.command, self.tap, self.referee, self.admin = name, command, tap, referee, admin
        self.bot_id = ""
        self.process: asyncio.subprocess.Process | None = None
        self.output: deque[str] = deque(maxlen=20)
        self.games: dict[str, str] = {}
        """The trial's matches: id -> game."""
        self.opponents: list[Any] = []
        self.tasks: list[asyncio.Task[Any]] = []
        self.first_stream = len(tap.streams)

    @property
    def streams(self) -> list[Stream]:
        """The streams this trial's bot opened, in order."""
        return self.tap.streams[self.first_stream :]

    async def start(self, tap_port: int) -> None:
        registered = await self.admin.RegisterBot(admin_pb2.RegisterBotRequest(name=f"checked-{self.name}"))
        self.bot_id = registered.bot_id
        env = {
            **os.environ,
            "CROUPIER_SERVER": f"127.0.0.1:{tap_port}",
            "CROUPIER_TOKEN": registered.token,
            "CROUPIER_BOT_NAME": "check-bot",
        }
        self.process = await asyncio.create_subprocess_exec(
            *self.command, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self.tasks.append(asyncio.create_task(self._collect_output()))

    async def _collect_output(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        async for line in self.process.stdout:
            self.output.append(line.decode(errors="replace").rstrip())

    async def close(self) -> None:
        for match_id in self.games:
            with contextlib.suppress(grpc.RpcError):
                await self.admin.CancelMatch(
                    admin_pb2.CancelMatchRequest(match_id=match_id, reason="check-bot: the check is over")
                )
        for opponent in self.opponents:
            opponent.stop()
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                await self.process.wait()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, grpc.RpcError):
                await asyncio.wait_for(task, 5)

    def exited(self) -> str | None:
        """How the bot's process ended, with its last words; None while it runs."""
        if self.process is None or self.process.returncode is None:
            return None
        last = next((line for line in reversed(self.output) if line.strip()), "")
        return f"the bot exited with code {self.process.returncode}" + (f' ("{last[-160:]}")' if last else "")

    async def until(self, what: str, found: Callable[[], T | None], seconds: float = 60.0) -> T:
        """Wait for ``found()`` to return something; a failure naming ``what`` if the bot exits first
        or ``seconds`` pass."""
        deadline = time.monotonic() + seconds
        while True:
            value = found()
            if value:
                return value
            if (exited := self.exited()) is not None:
                await asyncio.sleep(0.2)  # its last messages may still be on their way
                if value := found():
                    return value
                raise Failed(f"{exited} while check-bot waited for {what}")
            if time.monotonic() > deadline:
                raise Failed(f"no {what} within {seconds:g} s")
            await asyncio.sleep(0.02)

    async def match(
        self,
        game: str,
        options: dict[str, Any] | None = None,
        opponent: Callable[[Any], Any] | None = None,
        seed: int | None = None,
        **clocks: int,
    ) -> str:
        """Create a match with the bot in seat 0 and bundled bots (or ``opponent``) in the others."""
        from croupier.clients.bots import HeuristicBot
        from croupier.clients.sdk import Client
        from croupier.server import convert

        values = {**SHORT[game], **(options or {})}
        codec = convert.codec(game)
        seats = [admin_pb2.SeatSpec(bot_id=self.bot_id)]
        seats += [admin_pb2.SeatSpec(name=f"opponent {i}") for i in range(1, values["players"])]
        created = await self.admin.CreateMatch(
            admin_pb2.CreateMatchRequest(
                options=codec.options(codec.spec.options(values)),
                seats=seats,
                seed=seed,
                clocks=match_pb2.Clocks(**{**CLOCKS, **clocks}),
            )
        )
        match_id: str = created.match.match_id
        self.games[match_id] = game
        for token in created.seat_tokens[1:]:
            client = Client(opponent or HeuristicBot, self.referee, [token], stop_after=1)
            self.opponents.append(client)
            self.tasks.append(asyncio.create_task(client.run()))
        return match_id

    async def finished(self, match_id: str, refusals: int = 0) -> match_pb2.SeatResult:
        """Wait for the match to finish; the bot's result, a failure if its seat was forfeited, timed
        out, or had more than ``refusals`` moves refused."""
        waiting = asyncio.ensure_future(self.admin.WaitMatch(admin_pb2.GetMatchRequest(match_id=match_id)))
        self.tasks.append(waiting)
        info: match_pb2.MatchInfo = await self.until(
            f"the end of the {self.games[match_id]} match", lambda: waiting.done() and waiting.result()
        )
        if info.status != match_pb2.MATCH_STATUS_FINISHED:
            raise Failed(f"the {info.game} match did not finish ({match_pb2.MatchStatus.Name(info.status)})")
        seat = info.result.seats[0]
        where = f"in the {info.game} match"
        refused = self.received("action_result", match_id, lambda r: r.status == Result.REFUSED)
        timed_out = self.received("action_result", match_id, lambda r: r.status == Result.TIMED_OUT)
        if seat.timeouts or seat.forfeited:
            why = f"decision {timed_out[0].decision_id} timed out" if timed_out else "it was not answered"
            errors = [m for s in self.streams for _, m in s.of_kind("error")]
            if errors:  # what the referee made of the bot's last mistaken message, if any
                why += f'; the referee\'s last Error to the bot: "{errors[-1].message}"'
            raise Failed(f"{where} the bot's seat was forfeited ({seat.forfeited or 'timeouts'}): {why}")
        if seat.refusals > refusals:
            reason = f': "{refused[refusals].reason}"' if len(refused) > refusals else ""
            raise Failed(f"{where} the referee refused {seat.refusals} of the bot's moves{reason}")
        return seat

    def received(self, kind: str, match_id: str, which: Callable[[Any], bool] = bool) -> list[Any]:
        """What the bot was sent of ``kind`` about ``match_id`` on all its streams, in order."""
        return [m for s in self.streams for _, m in s.of_kind(kind, match_id) if which(m)]


# --- the checks ----------------------------------------------------------------------------------


async def hello(trial: Trial) -> str:
    stream = await trial.until(
        "Hello", lambda: next((s for s in trial.streams if s.sent), None), STARTUP_SECONDS
    )
    _, first = stream.sent[0]
    kind = first.WhichOneof("message") if first is not None else None
    if kind != "hello" or first is None:
        said = "unreadable bytes" if first is None else f"a {kind or 'BotMessage with nothing set'}"
        raise Failed(f"the bot's first message was {said}, not a Hello{await _ending(trial, stream)}")
    if first.hello.protocol_version != 1:
        raise Failed(
            f"Hello.protocol_version was {first.hello.protocol_version}, the referee speaks 1"
            f"{await _ending(trial, stream)}"
        )
    await trial.until("Welcome", lambda: stream.of_kind("welcome") or stream.ended)
    if not stream.of_kind("welcome"):
        raise Failed(f"the referee sent no Welcome: the stream ended ({stream.ended})")
    await trial.finished(await trial.match("chinese_ten"))
    return (
        f"Hello (protocol 1, name {first.hello.name!r}, max_matches {first.hello.max_matches}), "
        "Welcome, then a match played"
    )


async def _ending(trial: Trial, stream: Stream) -> str:
    with contextlib.suppress(Failed):
        await trial.until("the end of the stream", lambda: stream.ended, 5)
    return f" (the referee ended the stream: {stream.ended})" if stream.ended else ""


async def several_matches(trial: Trial) -> str:
    matches = [await trial.match("chinese_ten", seed=seed) for seed in (1, 2, 3)]
    for match_id in matches:
        await trial.finished(match_id)
    played_on = [s.number for s in trial.streams if any(s.moves(m) for m in matches)]
    if len(played_on) != 1:
        ends = "; ".join(f"stream {s.number}: {s.ended or 'open'}" for s in trial.streams)
        raise Failed(f"the bot needed {len(trial.streams)} streams for 3 matches ({ends}): keep one open")
    at_once = most = 0
    for _, message in trial.streams[0].received:
        kind = message.WhichOneof("message")
        at_once += {"match_started": 1, "match_ended": -1}.get(kind or "", 0)
        most = max(most, at_once)
    return f"3 matches on one stream, {most} at once at most"


class RefuseFirstMove(Tamper):
    """Turns the bot's first move into an index out of range, which the referee refuses."""

    def __init__(self) -> None:
        self.decision_id: int | None = None

    def to_referee(self, stream: Stream, message: bots_pb2.BotMessage) -> bots_pb2.BotMessage:
        if self.decision_id is not None or message.WhichOneof("message") != "move":
            return message
        self.decision_id = message.move.decision_id
        changed = bots_pb2.BotMessage()
        changed.CopyFrom(message)
        changed.move.index = OUT_OF_RANGE
        return changed


async def refused_move(trial: Trial) -> str:
    tamper = trial.tap.tamper = RefuseFirstMove()
    match_id = await trial.match("chinese_ten")
    refusal = await trial.until(
        "refusal of the bot's first move",
        lambda: next(
            iter(trial.received("action_result", match_id, lambda r: r.status == Result.REFUSED)), None
        ),
    )
    decision = tamper.decision_id
    answer = await trial.until(
        f"answer to decision {decision} after its refusal",
        lambda: next(
            iter(
                trial.received(
                    "action_result",
                    match_id,
                    lambda r: r.decision_id == decision and r.status in (Result.ACCEPTED, Result.TIMED_OUT),
                )
            ),
            None,
        ),
    )
    if answer.status == Result.TIMED_OUT:
        raise Failed(
            f'decision {decision} was refused ("{refusal.reason}") and the bot sent no other move for it: '
            "the decision stays open after a refusal, but its clock ran out"
        )
    await trial.finished(match_id, refusals=1)
    return f'decision {decision} refused ("{refusal.reason[:40]}..."), answered again and accepted'


class HoldFirstDecision(Tamper):
    """Holds the bot's first decision back until a newer one replaces it, then sends both."""

    def __init__(self) -> None:
        self.held: bots_pb2.ServerMessage | None = None
        self.replaced: tuple[int, int] | None = None

    def to_bot(self, stream: Stream, message: bots_pb2.ServerMessage) -> list[bots_pb2.ServerMessage]:
        if self.replaced is not None or message.WhichOneof("message") != "decision":
            return [message]
        if self.held is None:
            self.held = message
            return []
        if message.decision.decision_id == self.held.decision.decision_id:
            return []
        self.replaced = (self.held.decision.decision_id, message.decision.decision_id)
        return [self.held, message]


def replacing_deal() -> tuple[int, str]:
    """A two-player real-time Pair Battle seed, and a first play of seat 1's that changes seat 0's
    legal plays (a triplet on a rank seat 0 holds the fourth of): the referee replaces seat 0's decision."""
    from croupier.engine.games import get_game
    from croupier.engine.rng import Rng

    spec = get_game("pair_battle")
    options = spec.options(SHORT["pair_battle"])
    for seed in range(10_000):
        legal = spec.new_game(options, Rng(seed)).legal_actions(0)
        for play in spec.new_game(options, Rng(seed)).legal_actions(1):
            state = spec.new_game(options, Rng(seed))
            state.apply(1, play, 0.0)
            if legal and state.legal_actions(0) != legal:
                return seed, str(play)
    raise AssertionError("no Pair Battle deal replaces a decision")


async def replaced_decision(trial: Trial) -> str:
    from croupier.clients.sdk import Bot

    seed, opening = replacing_deal()

    class Opener(Bot):
        """Lays ``opening`` first, then nothing: the bot's decisions change only when it plays."""

        def choose(self, view: Any, legal: list[Any]) -> str | None:
            first, self.opened = not getattr(self, "opened", False), True
            return opening if first else None

    tamper = trial.tap.tamper = HoldFirstDecision()
    match_id = await trial.match("pair_battle", opponent=Opener, seed=seed, max_timeouts=100)
    old, new = await trial.until("replacement of the bot's first decision", lambda: tamper.replaced, 30)
    answer = await trial.until(
        f"answer to decision {new}, which replaced decision {old}",
        lambda: next(
            iter(
                trial.received(
                    "action_result",
                    match_id,
                    lambda r: r.status in (Result.ACCEPTED, Result.TIMED_OUT) and r.decision_id != old,
                )
            ),
            None,
        ),
    )
    if answer.status == Result.TIMED_OUT:
        stale = [m for s in trial.streams for _, m in s.moves(match_id) if m.decision_id == old]
        how = " (it answered the replaced one, and waited)" if stale else ""
        raise Failed(
            f"decision {old} was replaced by {new}; the bot never answered {new}{how}: its clock ran out"
        )
    answered_old = any(m.decision_id == old for s in trial.streams for _, m in s.moves(match_id))
    return (
        f"decision {old} replaced by {new}: "
        + ("answered the stale one (refused as not open), then " if answered_old else "")
        + "played on, accepted"
    )


class DropMidMatch(Tamper):
    """Drops the stream right after the referee accepted the bot's second move."""

    def __init__(self) -> None:
        self.accepted = 0
        self.dropped_at: float | None = None

    def to_bot(self, stream: Stream, message: bots_pb2.ServerMessage) -> list[bots_pb2.ServerMessage]:
        kind = message.WhichOneof("message")
        if (
            self.dropped_at is None
            and kind == "action_result"
            and message.action_result.status == Result.ACCEPTED
        ):
            self.accepted += 1
            if self.accepted == 2:
                self.dropped_at = time.monotonic()
                stream.drop.set()
        return [message]


async def _drop_and_return(trial: Trial) -> tuple[str, Stream, float]:
    """A match whose stream the tap drops; the match, the bot's new stream, and the seconds it took."""
    tamper = trial.tap.tamper = DropMidMatch()
    match_id = await trial.match("chinese_ten", seed=4)
    await trial.until("second accepted move (the stream is dropped after it)", lambda: tamper.dropped_at)
    grace = CLOCKS["grace_ms"] / 1000

    def second_stream() -> Stream | None:
        return trial.streams[1] if len(trial.streams) > 1 and trial.streams[1].sent else None

    back = await trial.until(
        "new stream after the referee dropped the first (reconnect, with backoff)", second_stream, grace
    )
    assert tamper.dropped_at is not None
    return match_id, back, back.sent[0][0] - tamper.dropped_at


async def dropped_stream(trial: Trial) -> str:
    _, back, seconds = await _drop_and_return(trial)
    first = back.sent[0][1]
    if first is None or first.WhichOneof("message") != "hello":
        raise Failed("the bot reconnected but its new stream did not start with a Hello")
    await trial.until("Welcome on the new stream", lambda: back.of_kind("welcome") or back.ended)
    if not back.of_kind("welcome"):
        raise Failed(f"the bot reconnected, but the referee ended its new stream: {back.ended}")
    return f"stream dropped mid-match; back {seconds:.1f} s later with a Hello"


async def resumed_match(trial: Trial) -> str:
    match_id, back, _ = await _drop_and_return(trial)
    started = await trial.until(
        "MatchStarted(resumed) on the new stream",
        lambda: [m for _, m in back.of_kind("match_started", match_id) if m.resumed],
    )
    pending = [m for _, m in back.of_kind("decision", match_id)]
    try:
        seat = await trial.finished(match_id)
    except Failed as failed:
        raise Failed(f"after MatchStarted(resumed): {failed}") from None
    return (
        f"MatchStarted(resumed) in seat {started[0].seat}"
        + (f" with decision {pending[0].decision_id} pending" if pending else "")
        + f"; played on to the end (place {seat.place})"
    )


async def forfeit_and_end(trial: Trial) -> str:
    doomed = await trial.match("chinese_ten", decision_ms=0, bank_ms=0, max_timeouts=1)
    forfeited = await trial.until("SeatForfeited", lambda: trial.received("seat_forfeited", doomed))
    later = await trial.match("chinese_ten", seed=5)
    try:
        await trial.finished(later)
        await trial.until("MatchEnded", lambda: trial.received("match_ended", later))
        await trial.finished(await trial.match("chinese_ten", seed=6))
    except Failed as failed:
        raise Failed(f"after SeatForfeited ({forfeited[0].reason}): {failed}") from None
    return f"SeatForfeited ({forfeited[0].reason}), then a match to its MatchEnded, then another"


async def clock(trial: Trial) -> str:
    decision_ms, bank_ms = 1000, 2000
    match_id = await trial.match("chinese_ten", {"target": 100}, decision_ms=decision_ms, bank_ms=bank_ms)
    try:
        await trial.finished(match_id)
    except Failed as failed:
        requests = {d.decision_id: d for d in trial.received("decision", match_id)}
        late = trial.received("action_result", match_id, lambda r: r.status == Result.TIMED_OUT)
        if not late or late[0].decision_id not in requests:
            raise
        asked = requests[late[0].decision_id]
        raise Failed(
            f"decision {asked.decision_id} timed out: its deadline_ms was {asked.deadline_ms} "
            f"({decision_ms} per decision + {asked.time_bank_ms} of bank left), and the bot took longer"
        ) from failed
    accepted = trial.received("action_result", match_id, lambda r: r.status == Result.ACCEPTED)
    asked = trial.received("decision", match_id)
    slowest = max((r.think_ms for r in accepted), default=0)
    bank = asked[-1].time_bank_ms if asked else bank_ms
    return (
        f"{len(accepted)} decisions of {decision_ms} ms + {bank_ms} ms bank, slowest {slowest} ms; "
        f"{bank} ms of bank left"
    )


async def every_game(trial: Trial) -> str:
    games: list[tuple[str, dict[str, Any]]] = [(game, {}) for game in SHORT]
    games.append(("pair_battle", {"timing": "lockstep"}))
    matches = [(game, options, await trial.match(game, options)) for game, options in games]
    places = []
    for game, options, match_id in matches:
        seat = await trial.finished(match_id)
        places.append(f"{game}{' lockstep' if options else ''} {seat.place}")
    return "places: " + ", ".join(places)


Check = Callable[[Trial], Awaitable[str]]
CHECKS: dict[str, tuple[str, Check]] = {
    "hello": ("Hello first, protocol 1; Welcome; then plays", hello),
    "several-matches": ("several matches on one stream", several_matches),
    "refused-move": ("a refused move is answered with another", refused_move),
    "replaced-decision": ("a decision replaced by a newer one (Pair Battle)", replaced_decision),
    "dropped-stream": ("a stream the referee drops: reconnect", dropped_stream),
    "resumed-match": ("MatchStarted(resumed): play on", resumed_match),
    "forfeit-and-end": ("SeatForfeited, then MatchEnded: go on", forfeit_and_end),
    "clock": ("answer within deadline_ms (clock and bank)", clock),
    "every-game": ("a full match of every game", every_game),
}


# --- running them ---------------------------------------------------------------------------------


async def check(command: Sequence[str], names: Sequence[str], seconds: float) -> list[Verdict]:
    """Run the checks ``names`` on the bot ``command``, each with a fresh process; their verdicts."""
    from croupier.server import logs
    from croupier.server.app import create_server

    logs.configure(level=logging.CRITICAL)  # the embedded referee keeps quiet
    logging.getLogger("croupier.bot").setLevel(logging.CRITICAL)  # and so do the opponents
    admin_token = "check-bot-admin"
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="croupier-check-") as data:
        referee = await create_server("127.0.0.1:0", Path(data), admin_token=admin_token)
        address = f"127.0.0.1:{referee.port}"
        tap = Tap(address)
        tap_port = await tap.start()
        channel = grpc.aio.insecure_channel(address)
        admin = _Admin(admin_pb2_grpc.AdminServiceStub(channel), [("croupier-token", admin_token)])
        try:
            for name in names:
                tap.tamper = Tamper()
                trial = Trial(name, command, tap, address, admin)
                try:
                    await trial.start(tap_port)
                    detail = await asyncio.wait_for(CHECKS[name][1](trial), seconds)
                    verdicts.append(Verdict(name, True, detail))
                except Failed as failed:
                    verdicts.append(Verdict(name, False, str(failed)))
                except TimeoutError:
                    verdicts.append(Verdict(name, False, f"not done within {seconds:g} s"))
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
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds a check may take (default: %(default)s)"
    )
    parser.add_argument("bot", nargs=argparse.REMAINDER, help="-- and the command that runs the bot")


def run(args: argparse.Namespace) -> int:
    command = args.bot[1:] if args.bot[:1] == ["--"] else args.bot
    if not command:
        print(
            "croupier check-bot: give the bot's command after --: croupier check-bot -- ./mybot",
            file=sys.stderr,
        )
        return 2
    names = args.only or list(CHECKS)
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # gRPC's own notes on streams the checks end
    print(f"checking {' '.join(command)}")
    print(f"{'check':<{WIDTH}}  result  what went on")
    verdicts = asyncio.run(check(command, names, args.timeout))
    failed = [v.name for v in verdicts if not v.passed]
    print(
        f"{len(verdicts) - len(failed)} passed, {len(failed)} failed"
        + (f": {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0

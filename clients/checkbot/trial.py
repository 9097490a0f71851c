"""One check of ``croupier check-bot``: a newly registered bot run as a process, its opponents (the
bundled Python bots) and its matches, with the waits a check is made of. A failed wait raises
``Failed`` with words for the bot's author."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import re
import shutil
import signal
import statistics
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import grpc

from croupier.clients.checkbot.tap import Stream, Tap
from croupier.clients.isolation.policy import Jail
from croupier.clients.tournament.launch import bot_environment
from croupier.v1 import admin_pb2, bots_pb2, match_pb2

T = TypeVar("T")
STARTUP_SECONDS = 30.0
"""Time for the bot's process to start and say Hello (a cold Python or a JVM takes a while)."""
EXPLANATION_SECONDS = 2.0
"""How long a timeout's diagnosis waits for what may explain it (``Trial._diagnosis``)."""
SLOW_SHARE = 0.5
"""A bot whose moves typically come later than this share of a decision's time is too slow for the
checks (a bot's own thinking aside, an answer takes milliseconds)."""
CLOCKS = {"decision_ms": 1000, "bank_ms": 1000, "max_timeouts": 1, "grace_ms": 10000}
"""Every check's clocks but the clock's own: a bot that does not answer is forfeited in 2 s."""
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
ERROR = re.compile(r"\b[\w.]*(Error|Exception)\b|\b(ERROR|FATAL|CRITICAL|panic)\b|\berror:")
"""A line of a bot's output that reports an error: an exception's last line ("IndexError: ..."), a
logger's ERROR, a panic, a compiler-style "error:"."""


class Failed(Exception):
    """A check failed; the message says what went wrong, for the bot's author."""


class Trial:
    """One check: a newly registered bot, its process, the opponents and the matches."""

    def __init__(
        self, name: str, command: Sequence[str], tap: Tap, referee: str, admin: Any, jail: Jail | None = None
    ) -> None:
        self.name, self.command, self.tap, self.referee, self.admin = name, command, tap, referee, admin
        self.jail = jail
        """The bot's jail, as a match's (None: it runs as the checker's user)."""
        self.bot_id = ""
        self.process: asyncio.subprocess.Process | None = None
        self.output: deque[str] = deque(maxlen=200)
        self.games: dict[str, str] = {}
        """The trial's matches: id -> game."""
        self.doomed: set[str] = set()
        """Matches the bot is meant to time out in; in the others a timeout fails the check at once."""
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
        # as `croupier match` runs a command: this Python's scripts first on PATH, so that the bot's
        # `python` is the one with croupier installed; jailed, through the referee's Unix socket
        server = self.jail.server if self.jail is not None else None
        env = bot_environment("check-bot", server or f"127.0.0.1:{tap_port}", registered.token)
        if self.jail is not None:
            # inside the jail a missing program is only an exit code: say it here, as a plain run would
            program = self.command[0]
            if (os.sep in program and not os.path.isfile(program)) or not shutil.which(
                program, path=env.get("PATH")
            ):
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        command = self.jail.wrap(list(self.command)) if self.jail is not None else self.command
        self.process = await asyncio.create_subprocess_exec(
            *command, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
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

    def last_error(self) -> str | None:
        """The last line of the bot's output that reports an error, or None."""
        return next((line.strip() for line in reversed(self.output) if ERROR.search(line)), None)

    async def until(self, what: str, found: Callable[[], T | None], seconds: float = 60.0) -> T:
        """Wait for ``found()`` to return something; a failure naming ``what`` if the bot exits first,
        times out in one of its matches (see ``doomed``) or ``seconds`` pass."""
        deadline = time.monotonic() + seconds
        while True:
            value = found()
            if value:
                return value
            during = f", while check-bot waited for {what}"
            late = next((m for m in self.games if m not in self.doomed and self._late(m, during)), None)
            if late is not None:
                raise Failed(await self._diagnosis(late, during) or "")
            if (exited := self.exited()) is not None:
                await asyncio.sleep(0.2)  # its last messages may still be on their way
                if value := found():
                    return value
                raise Failed(f"{exited} while check-bot waited for {what}")
            if time.monotonic() > deadline:
                raise Failed(f"no {what} within {seconds:g} s")
            await asyncio.sleep(0.02)

    async def welcomed(self) -> None:
        """Wait for the referee to welcome one of the bot's streams; a failure, at once, if the referee
        ended one before its Welcome (no Hello, a wrong version, a bad token: the hello check says which)."""

        def connected() -> str | None:
            if any(s.of_kind("welcome") for s in self.streams):
                return "welcomed"
            refused = [s.ended for s in self.streams if s.ended and s.ended != "the bot closed it"]
            return refused[0] if refused else None

        how = await self.until("Welcome (the bot connecting and saying Hello)", connected, STARTUP_SECONDS)
        if how != "welcomed":
            raise Failed(f"the bot never got a Welcome: the referee ended its stream ({how})")

    async def match(
        self,
        game: str,
        options: dict[str, Any] | None = None,
        opponent: Callable[[Any], Any] | None = None,
        seed: int | None = None,
        doomed: bool = False,
        **clocks: int,
    ) -> str:
        """Create a match with the bot in seat 0 and bundled bots (or ``opponent``) in the others, once
        the bot is connected; ``doomed``: one the bot is meant to time out in."""
        from croupier.clients.bots import HeuristicBot
        from croupier.clients.sdk import Client
        from croupier.wire import convert

        await self.welcomed()
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
        if doomed:
            self.doomed.add(match_id)
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
        what = f"end of the {self.games[match_id]} match"
        info: match_pb2.MatchInfo = await self.until(what, lambda: waiting.done() and waiting.result())
        if info.status != match_pb2.MATCH_STATUS_FINISHED:
            raise Failed(f"the {info.game} match did not finish ({match_pb2.MatchStatus.Name(info.status)})")
        seat = info.result.seats[0]
        where = f"in the {info.game} match"
        refused = self.received("action_result", match_id, lambda r: r.status == Result.REFUSED)
        if seat.timeouts or seat.forfeited:
            if seat.forfeited == "disconnected":
                why = f"{where} no stream of the bot's held its seat for {CLOCKS['grace_ms'] / 1000:g} s"
            else:
                # the same words whether the timeout or the match's end is seen first
                why = (
                    await self._diagnosis(match_id, f", while check-bot waited for {what}")
                    or f"{where} a decision timed out"
                )
            raise Failed(f"{why} (the seat was forfeited: {seat.forfeited or 'timeouts'})")
        if seat.refusals > refusals:
            reason = f': "{refused[refusals].reason}"' if len(refused) > refusals else ""
            raise Failed(f"{where} the referee refused {seat.refusals} of the bot's moves{reason}")
        return seat

    async def _diagnosis(self, match_id: str, during: str) -> str | None:
        """``_late``'s words once what explains the timeout has had a moment to arrive: the
        referee's Error about a mistaken message, or the bot's own error line, may still be on its
        way when the timeout is seen (on a loaded machine)."""
        deadline = time.monotonic() + EXPLANATION_SECONDS
        while time.monotonic() < deadline and not self._explained():
            await asyncio.sleep(0.05)
        return self._late(match_id, during)

    def _explained(self) -> bool:
        return (
            self.last_error() is not None
            or self.slowness() is not None
            or any(True for s in self.streams for _ in s.of_kind("error"))
        )

    async def slow(self) -> str | None:
        """``slowness``, once the bot's late moves have had a moment to arrive."""
        deadline = time.monotonic() + EXPLANATION_SECONDS
        while time.monotonic() < deadline and self.slowness() is None:
            await asyncio.sleep(0.05)
        return self.slowness()

    def slowness(self) -> str | None:
        """Words saying the bot is too slow for the checks' clocks, if its moves typically came more
        than ``SLOW_SHARE`` of a decision's time after their decisions; else None. A slow bot's
        timeouts are that, whatever else the check was looking at when they came."""
        delays = [seconds for match_id in self.games for seconds in self.thinking(match_id).values()]
        decision = CLOCKS["decision_ms"] / 1000
        if not delays or statistics.median(delays) <= SLOW_SHARE * decision:
            return None
        typical = f" (the median of {len(delays)})" if len(delays) > 1 else ""
        return (
            f"the bot is too slow for these checks: its moves came {statistics.median(delays):.1f} s after "
            f"their decisions{typical}, and a decision has {decision:g} s here (the clock row says more)"
        )

    def _late(self, match_id: str, during: str = "") -> str | None:
        """The bot's first timeout in ``match_id``, in words for its author (``during`` says what was
        awaited); None if it had none."""
        timed_out = self.first("action_result", match_id, lambda r: r.status == Result.TIMED_OUT)
        if timed_out is None:
            return None
        late = timed_out.decision_id
        why = f"in the {self.games[match_id]} match decision {late} timed out"
        if (slow := self.slowness()) is not None:  # then batches, refusals and the rest are beside the point
            return f"{why}{during}: {slow}"
        why += self._hint(match_id, late) + during
        errors = [m for s in self.streams for _, m in s.of_kind("error")]
        if errors:  # what the referee made of the bot's last mistaken message, if any
            why += f'; the referee\'s last Error to the bot: "{errors[-1].message}"'
        return why

    def _hint(self, match_id: str, decision_id: int) -> str:
        """What a stream option may have to do with the bot's missing a decision, in words, or "": a
        guess, so none when the bot reported an error of its own (check-bot shows that instead), and
        none about batches once the bot answered a decision that came in one."""
        if self.last_error() is not None:
            return ""
        batched = set().union(*(s.batched for s in self.streams))
        answered = {(m.match_id, m.decision_id) for s in self.streams for m in s.all_moves()}
        if (match_id, decision_id) in batched and not batched & answered:
            return " (it came inside a Batch: read each of batch.messages as if it came alone)"
        answered_it = any(m.decision_id == decision_id for s in self.streams for _, m in s.moves(match_id))
        if not answered_it and any(s.granted.quiet_acceptance for s in self.streams):
            return (
                " and the bot sent no move for it (with quiet acceptance no ACCEPTED ActionResult comes: "
                "the next message's `accepted` count is the acceptance)"
            )
        return ""

    def thinking(self, match_id: str) -> dict[int, float]:
        """Seconds from each decision reaching the bot to its first move answering it, by decision, as
        the tap saw them (the referee's think_ms comes in ActionResults, which quiet acceptance leaves
        out)."""
        thinking = {}
        for stream in self.streams:
            asked = {d.decision_id: at for at, d in stream.of_kind("decision", match_id)}
            for at, move in stream.moves(match_id):
                if move.decision_id in asked and move.decision_id not in thinking:
                    thinking[move.decision_id] = at - asked[move.decision_id]
        return thinking

    def received(self, kind: str, match_id: str, which: Callable[[Any], bool] | None = None) -> list[Any]:
        """What the bot was sent of ``kind`` about ``match_id`` on all its streams (those ``which``
        picks), in order."""
        found = [m for s in self.streams for _, m in s.of_kind(kind, match_id)]
        return found if which is None else [m for m in found if which(m)]

    def first(self, kind: str, match_id: str, which: Callable[[Any], bool]) -> Any:
        """The first message ``received`` would list, or None."""
        return next(iter(self.received(kind, match_id, which)), None)

    def settled(self, match_id: str, decision_id: int) -> int | None:
        """How the bot's decision was settled, as the referee told the bot: ``Result.ACCEPTED``,
        ``Result.TIMED_OUT``, or None while it is open (or once replaced). Under protocol 1 an
        ActionResult says it; under quiet acceptance only a timeout does, and an accepted move shows
        as a rise of the seat's ``accepted`` count by the seat's next decision (which carries it) or,
        for its last, a ViewUpdate or the match's MatchEnded (a finished match settled it)."""
        for result in self.received("action_result", match_id, lambda r: r.decision_id == decision_id):
            if result.status == Result.TIMED_OUT:
                return Result.TIMED_OUT
            if result.status in (Result.ACCEPTED, Result.DUPLICATE):  # a duplicate was applied before
                return Result.ACCEPTED
        for stream in self.streams:
            if not stream.granted.quiet_acceptance:
                continue
            asked = [
                (i, m.decision)
                for i, (_, m) in enumerate(stream.received)
                if m.WhichOneof("message") == "decision" and m.decision.match_id == match_id
            ]
            n = next((n for n in reversed(range(len(asked))) if asked[n][1].decision_id == decision_id), None)
            if n is None:
                continue
            upto = asked[n + 1][0] + 1 if n + 1 < len(asked) else None  # up to the next decision, with it
            if stream.accepted(match_id, upto) > asked[n][1].accepted:
                return Result.ACCEPTED
            ended = stream.of_kind("match_ended", match_id)
            if upto is None and ended and ended[0][1].status == match_pb2.MATCH_STATUS_FINISHED:
                return Result.ACCEPTED
        return None

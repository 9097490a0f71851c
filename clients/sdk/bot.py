"""The Python bot SDK: a bot author writes ``choose(view, legal)``; the SDK does the rest.

    import random
    from croupier.clients.sdk import Bot, main

    class RandomBot(Bot):
        def choose(self, view, legal):
            return random.randrange(len(legal))

    if __name__ == "__main__":
        main(RandomBot)

The bot sees engine objects, never protobuf: ``view`` is the game's view
dataclass (``croupier.engine.games.<game>``, documented in ``docs/games/``) and
``legal`` the list of the game's action objects; ``choose`` returns an index
into ``legal`` (or an action, or an action's text form). One ``Bot`` object is
made per match and seat, so a bot keeps what it remembers of a match in
``self``; ``self.match`` says which game, options and seat.

A bot for one game may say so, and a type checker then knows its views and actions:
``class MyBot(Bot[ChineseTenView, ChineseTenAction])``. A plain ``Bot`` is ``Bot[Any, Any]``.

The SDK keeps one stream to the referee, plays any number of matches on it at
once, reconnects with a growing delay when the stream breaks (the referee
gives a reconnected bot its seats back), skips decisions already replaced by
newer ones, and stops cleanly on SIGINT/SIGTERM. What it says on the stream is
decided in ``protocol`` (no I/O there); this module runs the stream.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import inspect
import logging
import os
import random
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Generic, TypeVar

import grpc

from croupier.clients.connection import add_connection_arguments
from croupier.clients.sdk.protocol import (
    MAX_RETRIES,
    PROTOCOL_VERSION,
    RESEND_SECONDS,
    ActionT,
    Commented,
    Match,
    Resend,
    Result,
    Step,
    StreamProtocol,
    Thinking,
    Unsolicited,
    Updates,
    ViewT,
    describe,
)
from croupier.engine.core import Action, Event, GameSpec, IllegalAction, Outcome
from croupier.engine.rng import Rng
from croupier.v1 import bots_pb2, bots_pb2_grpc
from croupier.wire.errors import no_referee

__all__ = [
    "MAX_RETRIES",
    "PROTOCOL_VERSION",
    "RESEND_SECONDS",
    "ActionT",
    "Bot",
    "BotFactory",
    "Choice",
    "Client",
    "Commented",
    "Match",
    "Result",
    "ViewT",
    "default_options",
    "main",
    "play_offline",
    "run_client",
]

FIRST_DELAY, MAX_DELAY = 0.5, 30.0
"""Reconnection delays in seconds: doubling from the first to the longest, with jitter."""
FATAL = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.UNIMPLEMENTED,
    }
)
"""Stream endings that another try would only repeat (bad token, wrong protocol version)."""
log = logging.getLogger("croupier.bot")

T = TypeVar("T")
Choice = int | Action | str | Commented[Any]
"""What ``choose`` returns: an index into ``legal``, one of its actions, or an action's text form;
or one of those with a comment for the bot's author, ``Commented(choice, "why")``."""


class Bot(Generic[ViewT, ActionT]):
    """Subclass it and write ``choose``; the other hooks are optional.

    The SDK makes one object per match and seat (``factory(match)``), so per-match
    memory lives in ``self``. ``choose`` may be ``async def`` for a bot that thinks at length
    (``await asyncio.to_thread(...)``): the matches' calls are awaited side by side. A plain ``def``
    runs on the bot's own thread, one call at a time for all matches (docs/bots.md says more).
    ``Bot[View, Action]`` types a bot for one game: ``choose`` gets that game's view and actions.
    """

    def __init__(self, match: Match) -> None:
        self.match = match
        self._send: Callable[[Unsolicited], None] | None = None

    def choose(
        self, view: ViewT, legal: list[ActionT]
    ) -> (
        ActionT
        | int
        | str
        | Commented[ActionT]
        | Awaitable[ActionT | int | str | Commented[ActionT] | None]
        | None
    ):
        """Your move: return an index into ``legal`` (or one of its actions), or
        ``Commented(choice, "why")`` to leave its author a note beside the move in the replay.

        None answers nothing: in a real-time game you may stay silent (or have
        sent your plays with ``play``); in a turn-based game the clock runs on.
        """
        raise NotImplementedError("write choose(view, legal) in your Bot subclass")

    def update(self, view: ViewT, events: list[Event]) -> None:
        """Your view changed while you were not asked to move (others played, time passed).

        Your own move brings no update: its events come with your next update or request."""

    def ended(self, result: Result[ViewT]) -> None:
        """The match is over."""

    @classmethod
    def setup(cls) -> None:
        """Called once as the bot's process starts, before it connects (``main``, ``croupier bot``):
        load here what every match needs (a model's weights), and raise if it cannot be had. The bot
        then stops at once with your words (exit 2) instead of leaving each match to the clock."""

    def play(self, action: ActionT | str | Commented[ActionT]) -> None:
        """Send an action without a decision request: Pair Battle's real-time plays.

        Called from ``choose``, it goes out right after choose's answer, so a
        bot can lay several sets at once. The referee judges each play when it
        arrives (one no longer legal is refused, and in Pair Battle costs the
        penalty); until every such play is answered, the SDK holds back new
        decision requests of this seat, whose views would not show them yet.
        """
        if self._send is None:
            raise RuntimeError("play() works once the match has started (from update or choose)")
        self._send(action)


BotFactory = Callable[[Match], Bot[Any, Any]]
"""What the SDK makes a bot with, once per match and seat: a ``Bot`` subclass, or any such callable."""


# --- one stream ------------------------------------------------------------------------


def default_options(factory: BotFactory) -> bots_pb2.StreamOptions:
    """What the SDK asks of a referee unless told otherwise: quiet acceptance and batches, which no
    bot can tell from protocol 1 (the SDK reads both and calls the bot exactly as before), and
    deferred updates only for a ``Bot`` class that keeps ``Bot.update`` as it is, since a
    ViewUpdate reaches nothing but ``update`` (a factory of another kind might override it)."""
    keeps_update = isinstance(factory, type) and issubclass(factory, Bot) and factory.update is Bot.update
    return bots_pb2.StreamOptions(
        quiet_acceptance=True,
        updates=Updates.UPDATES_WITH_NEXT if keeps_update else Updates.UPDATES_EVERY,
        batches=True,
    )


class Client:
    """Plays on one referee until stopped, reconnecting when the stream breaks: the stream's I/O
    around a ``StreamProtocol``, which decides what to send."""

    def __init__(
        self,
        factory: BotFactory,
        server: str,
        tokens: Sequence[str],
        *,
        name: str = "bot",
        max_matches: int = 1,
        stop_after: int | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        options: bots_pb2.StreamOptions | None = None,
    ) -> None:
        """``options``: what to ask of the referee (default: ``default_options(factory)``;
        ``bots_pb2.StreamOptions()`` asks for nothing, protocol 1 as it began)."""
        if not tokens:
            raise ValueError("a bot needs a token (--token or $CROUPIER_TOKEN)")
        self.protocol = StreamProtocol(
            factory,
            name=name,
            max_matches=max_matches,
            options=default_options(factory) if options is None else options,
        )
        self.server = server
        self.tokens = list(tokens)
        self.name = name
        self.stop_after = stop_after
        self.credentials = credentials
        self._stop = asyncio.Event()
        self._inbox: asyncio.Queue[bots_pb2.ServerMessage | None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        """Async ``choose`` calls under way and answers being resent: they end with their stream."""
        self._thread: concurrent.futures.ThreadPoolExecutor | None = None
        """The bot's own thread, for a bot whose ``choose`` is a plain ``def`` (see ``run``)."""

    @property
    def finished(self) -> int:
        """Matches seen to their end, or to this bot's forfeit in them."""
        return self.protocol.finished

    @property
    def seats(self) -> dict[tuple[str, int], Any]:
        """The seats being played, by (match id, seat)."""
        return self.protocol.seats

    def stop(self) -> None:
        """End the stream and return from ``run`` (safe from a signal handler)."""
        self._stop.set()
        if self._inbox is not None:
            self._inbox.put_nowait(None)

    async def run(self) -> int:
        """Play until stopped (0), until ``stop_after`` matches ended (0), or a fatal refusal (2).

        A bot whose ``choose`` is a plain ``def`` is called on a thread of its own (one for all its
        matches: one call at a time, in the order the referee's messages came), so that the stream
        goes on meanwhile; an ``async def choose`` is awaited on the stream's loop, many at once."""
        if not _thinks_async(self.protocol.factory):
            self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="croupier-bot")
        try:
            return await self._play()
        finally:
            if self._thread is not None:
                self._thread.shutdown(wait=False)
                self._thread = None

    async def _play(self) -> int:
        delay = FIRST_DELAY
        asked = False  # whether the referee is running at all, said once while nothing answers
        while not self._stop.is_set():
            welcomed = False
            try:
                welcomed = await self._stream()
            except grpc.aio.AioRpcError as exc:
                if exc.code() in FATAL:
                    log.error("the referee refused this bot: %s: %s", exc.code().name, exc.details())
                    return 2
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    log.warning("connection to %s lost: %s: %s", self.server, exc.code().name, exc.details())
                elif not asked:
                    log.warning("%s; retrying until one does", no_referee(self.server))
                    asked = True
            if self._stop.is_set():
                break
            if welcomed:
                delay = FIRST_DELAY  # it was working: come back quickly
                asked = False
            wait = delay * random.uniform(0.8, 1.2)
            log.log(logging.DEBUG if asked else logging.INFO, "reconnecting in %.1f s", wait)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), wait)
            delay = min(MAX_DELAY, delay * 2)
        return 0

    async def _stream(self) -> bool:
        """One stream, until it ends or the client stops; True if the referee welcomed it."""
        protocol = self.protocol
        outbox: asyncio.Queue[bots_pb2.BotMessage] = asyncio.Queue()
        outbox.put_nowait(await self._call(protocol.hello))
        inbox: asyncio.Queue[bots_pb2.ServerMessage | None] = asyncio.Queue()
        self._inbox = inbox
        metadata = tuple(("croupier-token", token) for token in self.tokens)
        async with self._channel() as channel:
            # no request iterator: we write ourselves (grpc-stubs miss this form)
            call = bots_pb2_grpc.BotServiceStub(channel).Play(metadata=metadata)  # type: ignore[call-arg]
            reader = asyncio.create_task(self._read(call, inbox))
            writer = asyncio.create_task(self._write(call, outbox))
            moves: list[bots_pb2.Move] = []
            try:
                while not self._stop.is_set():
                    messages, ended = await _all_read(inbox)
                    steps = await self._call(_receive_all, protocol, messages)
                    if ended:
                        if reader.done():
                            reader.result()  # raises the stream's error, if it ended with one
                        break
                    moves += self._launch(steps, outbox)
                    if any(message.HasField("welcome") for message in messages):
                        name = protocol.welcome.bot_name if protocol.welcome else ""
                        granted = describe(protocol.granted)
                        log.info(
                            "connected to %s as %s, stream options: %s",
                            self.server,
                            name or self.name,
                            granted,
                        )
                    if protocol.granted.batches and not inbox.empty():
                        continue  # more was read meanwhile: answer it all in one message
                    for out in protocol.outgoing(moves):
                        outbox.put_nowait(out)
                    moves = []
                    if self.stop_after is not None and self.finished >= self.stop_after:
                        self.stop()
            finally:
                self._inbox = None
                call.cancel()
                for task in (reader, writer, *self._tasks):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                        await task
        return protocol.welcome is not None

    async def _call(self, function: Callable[..., T], *args: Any) -> T:
        """Call into the protocol, and through it into the bot: on the bot's thread if it has one."""
        if self._thread is None:
            return function(*args)
        return await asyncio.get_running_loop().run_in_executor(self._thread, function, *args)

    def _launch(
        self, steps: Sequence[Step], outbox: asyncio.Queue[bots_pb2.BotMessage]
    ) -> list[bots_pb2.Move]:
        """The moves of ``steps`` to send now; each ``Thinking`` awaited on its own, each ``Resend`` timed."""
        moves: list[bots_pb2.Move] = []
        for step in steps:
            if isinstance(step, Thinking):
                self._spawn(self._think(step, outbox))
            elif isinstance(step, Resend):
                asyncio.get_running_loop().call_later(step.seconds, self._resend, step, self._inbox, outbox)
            else:
                moves.append(step)
        return moves

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` beside the stream, until it is done or the stream ends."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _think(self, thinking: Thinking, outbox: asyncio.Queue[bots_pb2.BotMessage]) -> None:
        """An async ``choose`` awaited while the stream goes on: its answer sent as soon as it comes."""
        choice, error = None, None
        try:
            choice = await thinking.choice
        except Exception as exc:
            error = exc
        await self._send(outbox, self.protocol.chose, thinking, choice, error)

    def _resend(
        self,
        resend: Resend,
        inbox: asyncio.Queue[bots_pb2.ServerMessage | None] | None,
        outbox: asyncio.Queue[bots_pb2.BotMessage],
    ) -> None:
        """A ``Resend`` whose time came: sent on the stream that asked for it, if that still runs."""
        if self._inbox is inbox:
            self._spawn(self._send(outbox, self.protocol.resend, resend))

    async def _send(
        self, outbox: asyncio.Queue[bots_pb2.BotMessage], function: Callable[..., Sequence[Step]], *args: Any
    ) -> None:
        """Send the moves of the steps that ``function(*args)``, a call into the protocol, returns."""
        steps = await self._call(function, *args)
        for out in self.protocol.outgoing(self._launch(steps, outbox)):
            outbox.put_nowait(out)

    def _channel(self) -> grpc.aio.Channel:
        options = [("grpc.keepalive_time_ms", 20_000), ("grpc.keepalive_timeout_ms", 10_000)]
        if self.credentials is not None:
            return grpc.aio.secure_channel(self.server, self.credentials, options=options)
        return grpc.aio.insecure_channel(self.server, options=options)

    async def _read(self, call: Any, inbox: asyncio.Queue[bots_pb2.ServerMessage | None]) -> None:
        """Read ahead of the handler, noting each seat's newest decision so stale ones are skipped."""
        try:
            async for message in call:
                for each in self.protocol.arrived(message):
                    inbox.put_nowait(each)
        finally:
            inbox.put_nowait(None)

    async def _write(self, call: Any, outbox: asyncio.Queue[bots_pb2.BotMessage]) -> None:
        while True:
            message = await outbox.get()
            try:
                await call.write(message)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                return  # the stream is gone: the reader reports why


def _thinks_async(factory: Callable[..., Any]) -> bool:
    """Whether the bots ``factory`` makes have an ``async def choose`` (a factory that is not a class
    is taken to make plain ones)."""
    return inspect.iscoroutinefunction(getattr(factory, "choose", None))


async def _all_read(
    inbox: asyncio.Queue[bots_pb2.ServerMessage | None],
) -> tuple[list[bots_pb2.ServerMessage], bool]:
    """Every message read so far (waiting for one), to hand to the bot in one call, and whether the
    stream ended after them."""
    messages: list[bots_pb2.ServerMessage] = []
    message = await inbox.get()
    while message is not None:
        messages.append(message)
        if inbox.empty():
            return messages, False
        message = inbox.get_nowait()
    return messages, True


def _receive_all(protocol: StreamProtocol, messages: list[bots_pb2.ServerMessage]) -> list[Step]:
    """The steps ``protocol`` takes for ``messages``, in order."""
    return [step for message in messages for step in protocol.receive(message)]


# --- offline play: the engine, no referee ---------------------------------------------------

REALTIME_STEP = 0.01
"""Offline real-time games: referee seconds each action takes."""


def play_offline(spec: GameSpec[Any], options: Any, factories: Sequence[BotFactory], seed: int) -> Outcome:
    """Play one match in-process through the engine, one bot per seat: for testing bots fast.

    Each step one seat among those able to act moves (in real-time games a
    random one, drawn from ``seed``: every bot equally quick). Plays a bot makes
    with ``play`` go in right after its answer, as they would reach a referee;
    one the rules refuse costs what the referee would make it cost. A step a bot
    lets pass without acting is played for it with the first legal action, as a
    referee's clock would. ``choose`` must be a plain function here (not ``async``).
    The same seed and bots play the same match:

    >>> from croupier.engine.games import get_game
    >>> class FirstLegal(Bot):
    ...     def choose(self, view, legal):
    ...         return 0
    >>> spec = get_game("chinese_ten")
    >>> play_offline(spec, spec.options({"players": 2, "target": 50}), [FirstLegal, FirstLegal], seed=1)
    Outcome(scores=(128, 112), places=(1, 2), winners=frozenset({0}))
    """
    state = spec.new_game(options, Rng(seed))
    order = random.Random(seed)
    names = tuple(f"seat {i}" for i in range(len(factories)))
    bots = [
        factory(Match(f"offline-{seed}", spec.name, options, seat, names, 0, 0))
        for seat, factory in enumerate(factories)
    ]
    sent: list[Unsolicited] = []
    for bot in bots:
        bot._send = sent.append
    now = 0.0
    while not state.is_over():
        seats = sorted(state.to_act())
        if not seats:
            now, _ = state.wait_for_clock(now)
            continue
        seat = order.choice(seats)
        legal = state.legal_actions(seat)
        choice = bots[seat].choose(state.view(seat), legal)
        if choice is None and not sent:
            choice = 0
        if isinstance(choice, Commented):  # offline there is no journal to keep it in
            choice = choice.choice
        actions = ([] if choice is None else [legal[choice] if isinstance(choice, int) else choice]) + sent
        sent.clear()
        for action in actions:
            if state.is_over():
                break
            if isinstance(action, Commented):
                action = action.choice
            try:
                state.apply(seat, spec.parse_action(action) if isinstance(action, str) else action, now)
            except IllegalAction as exc:
                state.penalize(seat, str(exc), now)
            now += REALTIME_STEP
    return state.outcome()


# --- the command line ---------------------------------------------------------------------


def run_client(factory: BotFactory, args: argparse.Namespace, default_name: str) -> int:
    """Run a bot with parsed connection arguments until it stops; the exit code."""
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("asyncio").setLevel(logging.WARNING)
    tokens = args.token or [t for t in os.environ.get("CROUPIER_TOKEN", "").split(",") if t]
    if not tokens:
        print("croupier bot: give a token: --token TOKEN or $CROUPIER_TOKEN", file=sys.stderr)
        return 2
    if args.max_matches < 1:
        print("croupier bot: --max-matches must be at least 1", file=sys.stderr)
        return 2
    setup = getattr(factory, "setup", None)
    if callable(setup):
        try:
            setup()
        except Exception as exc:
            print(f"the bot cannot start: {exc}", file=sys.stderr)
            return 2
    credentials = grpc.ssl_channel_credentials(args.tls_ca.read_bytes()) if args.tls_ca else None
    client = Client(
        factory,
        args.server,
        tokens,
        name=args.name or default_name,
        max_matches=args.max_matches,
        stop_after=args.matches,
        credentials=credentials,
        options=bots_pb2.StreamOptions() if args.no_stream_options else None,
    )
    return asyncio.run(_run_until_signal(client))


async def _run_until_signal(client: Client) -> int:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, client.stop)
    code = await client.run()
    log.info("stopped after %d match(es)", client.finished)
    return code


def main(factory: BotFactory, argv: Sequence[str] | None = None) -> None:
    """Run a bot from the command line: ``python mybot.py --server HOST:PORT --token T``."""
    parser = argparse.ArgumentParser(description=f"the {getattr(factory, '__name__', 'bot')} Croupier bot")
    add_connection_arguments(parser)
    args = parser.parse_args(argv)
    sys.exit(run_client(factory, args, getattr(factory, "__name__", "bot")))

"""The runner's side of a referee: its AdminService, over gRPC."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import grpc
from croupier.v1 import admin_pb2, admin_pb2_grpc, match_pb2

from engine.games import get_game
from server.convert import codec
from server.tournament.config import GameConfig
from server.tournament.store import SeatResult

TOKEN_METADATA = "croupier-token"
T = TypeVar("T")
RECONNECT_SECONDS = 120.0
"""How long calls made while matches are played wait for a referee that went away (a restart
resumes its matches from their journals), before the tournament stops."""
RECONNECT_PAUSE = 0.5


class RefereeError(Exception):
    """The referee refused a call or cannot be reached; the message says which and why."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class BotStatus:
    bot_id: str
    name: str
    streams: int
    matches: int
    max_matches: int | None
    """What its streams declared they play at once (None: not known)."""


class Referee:
    """Admin calls with the admin token; errors become ``RefereeError`` with the referee's reason."""

    def __init__(self, address: str, admin_token: str) -> None:
        self.address = address
        self._channel = grpc.aio.insecure_channel(address)
        self._stub = admin_pb2_grpc.AdminServiceStub(self._channel)
        self._metadata = ((TOKEN_METADATA, admin_token),)

    async def close(self) -> None:
        await self._channel.close(None)

    async def register_bot(self, name: str) -> tuple[str, str]:
        """A new bot id and its token."""
        request = admin_pb2.RegisterBotRequest(name=name)
        reply = await self._call("RegisterBot", self._stub.RegisterBot(request, metadata=self._metadata))
        return reply.bot_id, reply.token

    async def bots(self) -> dict[str, BotStatus]:
        request = admin_pb2.ListBotsRequest()
        reply = await self._call("ListBots", self._stub.ListBots(request, metadata=self._metadata))
        return {
            bot.bot_id: BotStatus(
                bot.bot_id,
                bot.name,
                bot.streams,
                bot.matches,
                bot.max_matches or None,
            )
            for bot in reply.bots
        }

    async def create_match(
        self, game: GameConfig, seed: int, seats: Sequence[tuple[str, str]]
    ) -> match_pb2.MatchInfo:
        """A match of ``game`` with ``seats`` = (name, bot id) in seat order, dealt from ``seed``."""
        options = codec(game.game).options(get_game(game.game).options(game.options))
        request = admin_pb2.CreateMatchRequest(
            options=options,
            seats=[admin_pb2.SeatSpec(name=name, bot_id=bot_id) for name, bot_id in seats],
            seed=seed,
            clocks=match_pb2.Clocks(**game.clock.as_dict()),
        )
        # Retried when the referee is down: if it died after creating the match, the first one is an
        # orphan the bots play out unrecorded; the store records the match id of the one that answered.
        reply = await self._patient_call(
            "CreateMatch", lambda: self._stub.CreateMatch(request, metadata=self._metadata)
        )
        return reply.match

    async def get_match(self, match_id: str) -> match_pb2.MatchInfo | None:
        """The match, or None if this referee does not know it."""
        request = admin_pb2.GetMatchRequest(match_id=match_id)
        try:
            return await self._patient_call(
                "GetMatch", lambda: self._stub.GetMatch(request, metadata=self._metadata)
            )
        except RefereeError as exc:
            if exc.code == grpc.StatusCode.NOT_FOUND:
                return None
            raise

    async def cancel_match(self, match_id: str, reason: str) -> match_pb2.MatchInfo | None:
        """Call the match off (a finished one keeps its result); None if this referee does not know it."""
        request = admin_pb2.CancelMatchRequest(match_id=match_id, reason=reason)
        try:
            return await self._patient_call(
                "CancelMatch", lambda: self._stub.CancelMatch(request, metadata=self._metadata)
            )
        except RefereeError as exc:
            if exc.code == grpc.StatusCode.NOT_FOUND:
                return None
            raise

    async def wait_match(self, match_id: str) -> match_pb2.MatchInfo:
        request = admin_pb2.GetMatchRequest(match_id=match_id)
        return await self._patient_call(
            "WaitMatch", lambda: self._stub.WaitMatch(request, metadata=self._metadata)
        )

    async def _patient_call(self, method: str, make_call: Callable[[], Awaitable[T]]) -> T:
        """``make_call()``, made again while the referee is unreachable, for up to RECONNECT_SECONDS."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + RECONNECT_SECONDS
        while True:
            try:
                return await self._call(method, make_call())
            except RefereeError as exc:
                if exc.code != grpc.StatusCode.UNAVAILABLE or loop.time() >= give_up:
                    raise
            await asyncio.sleep(RECONNECT_PAUSE)

    async def _call(self, method: str, call: Awaitable[T]) -> T:
        try:
            return await call
        except grpc.aio.AioRpcError as exc:
            raise RefereeError(
                f"referee at {self.address}: {method}: {exc.code().name}: {exc.details()}", exc.code()
            ) from None


def seat_results(info: match_pb2.MatchInfo, bots: Sequence[str]) -> list[SeatResult]:
    """The finished match's result, one line per seat, under the tournament's bot names."""
    return [
        SeatResult(
            seat=seat.seat,
            bot=bots[seat.seat],
            score=seat.score,
            place=seat.place,
            timeouts=seat.timeouts,
            refusals=seat.refusals,
            forfeited=bool(seat.forfeited),
            note=seat.forfeited,
        )
        for seat in sorted(info.result.seats, key=lambda s: s.seat)
    ]

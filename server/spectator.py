"""SpectatorService: listing, watching live and replaying matches.

A spectator sees public facts only until a match is over; the admin token
sees everything at any time. A sealed match (its deal is a live twin's) shows
nothing but its listing, except to the admin and, live and public facts only,
to the organiser's token (the runner's own viewer). Past frames are rebuilt by re-running the engine
from the journal, so live frames and replayed ones are made by the same code;
that re-run takes turns with the matches on the event loop, a slice at a time,
and who may ask for how much is the audience's to say.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc

import croupier.server.session as sessions
from croupier.engine.games import get_game
from croupier.server import forks
from croupier.server.audience import Audience, Limits
from croupier.server.journal import CLOSING, Cancel, Header, read_private, read_records
from croupier.server.messages import replay_frames
from croupier.server.referee import ListKey, Referee
from croupier.v1 import match_pb2, spectator_pb2
from croupier.wire.errors import Context, FailedPrecondition, InvalidArgument, abort

PAGE_SIZE, MAX_PAGE_SIZE = 100, 1000


class SpectatorService:
    def __init__(self, referee: Referee, limits: Limits | None = None) -> None:
        self.referee = referee
        self.audience = Audience(referee, limits or Limits())

    async def ListMatches(
        self, request: spectator_pb2.ListMatchesRequest, context: Context
    ) -> spectator_pb2.ListMatchesResponse:
        caller = self.audience.admit(context)
        if request.page_size < 0:
            raise InvalidArgument(f"page_size must be 0 (the default, {PAGE_SIZE}) or more")
        size = min(request.page_size or PAGE_SIZE, MAX_PAGE_SIZE)
        after = _read_page_token(request.page_token) if request.page_token else None

        def page() -> tuple[list[match_pb2.MatchInfo], ListKey | None]:
            """One page as the caller may see it, sealed in the same instant it is listed."""
            infos, last = self.referee.list_page(request.status, request.game, after, size)
            return [self.referee.shown(info, caller.admin) for info in infos], last

        with self.audience.heavy_read(caller):
            infos, last = await self.audience.in_turn(page)
        return spectator_pb2.ListMatchesResponse(
            matches=infos, next_page_token=_page_token(last) if last is not None else ""
        )

    async def WatchMatch(
        self, request: spectator_pb2.WatchMatchRequest, context: Context
    ) -> AsyncIterator[spectator_pb2.MatchFrame]:
        caller = self.audience.admit(context)
        match = self.referee.matches.get(request.match_id)
        live = match is not None and not match.done.is_set()
        # the organiser may watch a sealed match as it runs: public frames, nothing revealed at its end
        self.referee.check_unsealed(request.match_id, caller.admin or (live and caller.organiser))
        if match is None or not live:
            with self.audience.heavy_read(caller):
                frames = await self._past_frames(request.match_id, caller.admin)
                async for frame in self.audience.in_slices(frames):
                    yield frame
            return
        with self.audience.feed(caller):
            subscription, backlog = match.subscribe(caller.admin, request.from_start)
            try:
                if backlog:
                    with self.audience.heavy_read(caller):
                        async for frame in self.audience.in_slices(
                            match.replay_frames(backlog, caller.admin)
                        ):
                            yield frame
                while (change := await subscription.frames.get()) is not None:
                    # a twin dealt since
                    self.referee.check_unsealed(request.match_id, caller.admin or caller.organiser)
                    yield change
                if subscription.overrun:
                    await abort(
                        context,
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"{sessions.MAX_QUEUED} frames were waiting for you to read them: read as you go "
                        "(watch again for a snapshot, or replay the match when it is over)",
                    )
            finally:
                match.unsubscribe(subscription)

    async def GetRecord(
        self, request: spectator_pb2.GetRecordRequest, context: Context
    ) -> spectator_pb2.MatchRecord:
        caller = self.audience.admit(context)
        self.referee.check_unsealed(request.match_id, caller.admin)
        match = self.referee.matches.get(request.match_id)
        with self.audience.heavy_read(caller):
            if match is not None and not match.done.is_set():
                if not caller.admin:
                    raise FailedPrecondition(f"match {request.match_id} is not over: watch it instead")
                info, frames = match.info(), match.replay_frames(list(match.records), admin=True)
            else:
                info = self.referee.shown(self.referee.info(request.match_id), caller.admin)
                frames = await self._past_frames(request.match_id, caller.admin)
            return spectator_pb2.MatchRecord(
                info=info, frames=[f async for f in self.audience.in_slices(frames)]
            )

    async def ForkMatch(
        self, request: spectator_pb2.ForkMatchRequest, context: Context
    ) -> spectator_pb2.ForkMatchResponse:
        """A new match from a step of a finished match whose record the caller may read
        (server/forks.py)."""
        caller = self.audience.admit(context)
        with self.audience.heavy_read(caller):  # it reads and re-runs a journal
            match, tokens = await forks.fork_match(
                self.referee,
                request.match_id,
                request.step,
                list(request.names),
                caller.admin,
                request.clocks if request.HasField("clocks") else None,
                caller.client,
            )
        return spectator_pb2.ForkMatchResponse(match=match.info(), seat_tokens=tokens)

    async def _past_frames(self, match_id: str, admin: bool) -> Iterator[spectator_pb2.MatchFrame]:
        """A match's whole record from its journal (read in a worker thread: it is file I/O):
        hands included once it finished; a cancelled match's hands only to the admin (its seed
        is not revealed: it may be dealt again)."""
        path: Path = self.referee.journal_path(match_id)
        info = self.referee.info(match_id)
        if info.status == match_pb2.MATCH_STATUS_DAMAGED:
            raise FailedPrecondition(f"match {match_id} is damaged ({info.damage}): it has no record to show")
        records = await asyncio.to_thread(read_records, path)
        if not records or not isinstance(records[-1], CLOSING):  # damaged since the referee started
            raise FailedPrecondition(f"match {match_id}'s journal is damaged: it has no record to show")
        header, end = records[0], records[-1]
        assert isinstance(header, Header)
        spec = get_game(header.game)
        if isinstance(end, Cancel):
            secret = path.with_suffix(".secret")
            if not secret.exists():
                raise FailedPrecondition(f"match {match_id} was cancelled and its seed file is lost")
            seed, reveal = read_private(secret)["seed"], admin
        else:
            seed, reveal = end.seed, True
        return replay_frames(spec, spec.options(header.options), seed, records, reveal, lambda: info)


def _page_token(key: ListKey) -> str:
    return base64.urlsafe_b64encode(f"{key[0]}:{key[1]}".encode()).decode()


def _read_page_token(token: str) -> ListKey:
    try:
        created, _, match_id = base64.urlsafe_b64decode(token.encode()).decode().partition(":")
        return int(created), match_id
    except (binascii.Error, UnicodeError, ValueError):
        raise InvalidArgument(
            "page_token is not one this referee gave: pass next_page_token as it came"
        ) from None

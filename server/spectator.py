"""SpectatorService: listing, watching live and replaying matches.

A spectator sees public facts only until a match is over; the admin token
sees everything at any time. Past frames are rebuilt by re-running the engine
from the journal, so live frames and replayed ones are made by the same code.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc

import croupier.server.session as sessions
from croupier.engine.games import get_game
from croupier.server.errors import Context, FailedPrecondition, abort
from croupier.server.journal import read_private, read_records
from croupier.server.match import replay_frames
from croupier.server.referee import Referee, tokens_of
from croupier.v1 import match_pb2, spectator_pb2


class SpectatorService:
    def __init__(self, referee: Referee) -> None:
        self.referee = referee

    async def ListMatches(
        self, request: spectator_pb2.ListMatchesRequest, context: Context
    ) -> spectator_pb2.ListMatchesResponse:
        return spectator_pb2.ListMatchesResponse(
            matches=self.referee.list_infos(request.status, request.game)
        )

    async def WatchMatch(
        self, request: spectator_pb2.WatchMatchRequest, context: Context
    ) -> AsyncIterator[spectator_pb2.MatchFrame]:
        admin = self.referee.is_admin(tokens_of(context))
        match = self.referee.matches.get(request.match_id)
        if match is None or match.done.is_set():
            for frame in self._past_frames(request.match_id, admin):
                yield frame
            return
        subscription, backlog = match.subscribe(admin, request.from_start)
        try:
            for frame in match.replay_frames(backlog, admin):
                yield frame
            while (live := await subscription.frames.get()) is not None:
                yield live
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
        admin = self.referee.is_admin(tokens_of(context))
        match = self.referee.matches.get(request.match_id)
        if match is not None and not match.done.is_set():
            if not admin:
                raise FailedPrecondition(f"match {request.match_id} is not over: watch it instead")
            return spectator_pb2.MatchRecord(
                info=match.info(), frames=list(match.replay_frames(list(match.records), admin=True))
            )
        return spectator_pb2.MatchRecord(
            info=self.referee.info(request.match_id), frames=list(self._past_frames(request.match_id, admin))
        )

    def _past_frames(self, match_id: str, admin: bool) -> Iterator[spectator_pb2.MatchFrame]:
        """A match's whole record from its journal: hands included once it finished; a cancelled
        match's hands only to the admin (its seed is not revealed: it may be dealt again)."""
        path: Path = self.referee.journal_path(match_id)
        info = self.referee.info(match_id)
        if info.status == match_pb2.MATCH_STATUS_DAMAGED:
            raise FailedPrecondition(f"match {match_id} is damaged ({info.damage}): it has no record to show")
        records = read_records(path)
        header, end = records[0], records[-1]
        if end["t"] not in ("end", "cancel"):  # damaged since the referee started
            raise FailedPrecondition(f"match {match_id}'s journal is damaged: it has no record to show")
        spec = get_game(header["game"])
        if end["t"] == "cancel":
            secret = path.with_suffix(".secret")
            if not secret.exists():
                raise FailedPrecondition(f"match {match_id} was cancelled and its seed file is lost")
            seed, reveal = read_private(secret)["seed"], admin
        else:
            seed, reveal = end["seed"], True
        return replay_frames(spec, spec.options(header["options"]), seed, records, reveal, lambda: info)

"""The replay page's "play on from here": the viewer forks a finished match at the step shown
(``SpectatorService.ForkMatch``, asked as the spectator it is) and plays the fork with bundled
bots in this process, one per seat; the page then follows the fork live like any match. Asked
with ``"you": SEAT``, that seat is a person's, played on the seat page (clients/web/play.py) by the
browser that asked, with a person's clocks; one person at a time per viewer.

A fork is a match on the referee, so a browser may ask for one only with the header a page of
ours sends (``X-Croupier-Fork``): another site's page cannot send it without the browser asking
this server first (CORS), which it never allows, so no site can make a viewer fork matches.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
from aiohttp import web

from croupier.clients.web.hub import Busy, Hub, check_id
from croupier.clients.web.play import SEATS
from croupier.clients.web.seat import BANK_MS, DECISION_MS, HumanSeat
from croupier.v1 import match_pb2, spectator_pb2
from croupier.wire.errors import ServiceError

HEADER = "X-Croupier-Fork"
"""The header a fork request must carry (any value): only our page's script sends it."""
PLAYING = 4
"""Forks this viewer's bots play at once (the referee bounds everyone's forks too)."""
STRATEGIES = ("heuristic", "random", "boss-1", "boss-2")
STATUSES = {
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 503,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 403,
}


async def fork(request: web.Request, hub: Hub) -> web.StreamResponse:
    """POST /api/matches/{match_id}/fork, ``{"step": N, "bots": "heuristic"}``: the fork's id."""
    if HEADER not in request.headers:
        return web.json_response(
            {"error": f"a fork is asked for by the replay page (the {HEADER} header)"}, status=403
        )
    match_id = request.match_info["match_id"]
    check_id(match_id)
    try:
        asked: Any = json.loads(await request.text() or "{}")
        step, bots = int(asked["step"]), str(asked.get("bots", "heuristic"))
        you = asked.get("you")  # the seat a person plays in the browser, if one does
        if you is not None and (isinstance(you, bool) or not isinstance(you, int) or you < 0):
            raise ValueError(you)
    except (ValueError, KeyError, TypeError):
        return web.json_response(
            {
                "error": 'send {"step": N, "bots": "heuristic", "random", "boss-1" or "boss-2", '
                '"you": SEAT or null}'
            },
            status=400,
        )
    if bots not in STRATEGIES:
        return web.json_response({"error": f"bots are one of {', '.join(STRATEGIES)}"}, status=400)
    playing = [task for task in hub.tasks if task.get_name().startswith("fork ")]
    if len(playing) >= PLAYING:
        raise Busy(f"{PLAYING} forks are being played from this viewer: try again when one is over")
    seats = request.app[SEATS]
    if you is not None and not seats.free():
        raise Busy("a person plays at this viewer already: one seat at a time, try again when it is over")
    players = await _seats_of(hub, match_id)
    if you is not None and you >= players:
        return web.json_response({"error": f"the match has seats 0 to {players - 1}"}, status=400)
    # the fork's own players, named after what plays them (the original's names would be wrong)
    names = ["you" if seat == you else bots for seat in range(players)]
    clocks = match_pb2.Clocks(decision_ms=DECISION_MS, bank_ms=BANK_MS) if you is not None else None
    try:
        target, answer = await _fork_where_known(hub, match_id, step, names, clocks)
    except grpc.aio.AioRpcError as exc:
        status = {grpc.StatusCode.NOT_FOUND: 404, grpc.StatusCode.RESOURCE_EXHAUSTED: 503}.get(
            exc.code(), 409
        )
        if exc.code() in (grpc.StatusCode.INVALID_ARGUMENT,):
            status = 400
        return web.json_response({"error": f"the referee says: {exc.details()}"}, status=status)
    except ServiceError as exc:  # the embedded referee's refusal, as the viewer's would say it
        return web.json_response({"error": f"the referee says: {exc}"}, status=STATUSES.get(exc.code, 409))
    forked = answer.match.match_id
    tokens = list(answer.seat_tokens)
    shown: dict[str, Any] = {"match_id": forked, "forked_from": answer.match.forked_from}
    credentials = _credentials(hub) if target == hub.server else None
    if you is not None:  # the person's seat is this viewer's; only the asking page gets its link
        seat = seats.seat = HumanSeat(target, "you", credentials, hints=True)
        seat.take([tokens.pop(you)], matches=1)
        shown["seat"] = f"/seat/{seat.new_link()}"
    task = asyncio.ensure_future(_play(target, credentials, bots, tokens))
    task.set_name(f"fork {forked}")
    hub.tasks.add(task)
    task.add_done_callback(hub.tasks.discard)
    return web.json_response(shown)


async def _fork_where_known(
    hub: Hub, match_id: str, step: int, names: list[str], clocks: match_pb2.Clocks | None
) -> tuple[str, spectator_pb2.ForkMatchResponse]:
    """Fork the match on the referee that knows it: the viewer's, else (a journal on disk that it
    does not know, or no referee at all: ``make run``'s or ``croupier match``'s) the referee this
    viewer embeds for such forks, as ``croupier replay --fork`` does. Where it plays, and the fork."""
    request = spectator_pb2.ForkMatchRequest(match_id=match_id, step=step, names=names, clocks=clocks)
    try:
        return hub.server, await hub.stub.ForkMatch(request, timeout=30)
    except grpc.aio.AioRpcError as exc:
        journal = hub.journal(match_id)
        if exc.code() not in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNAVAILABLE) or journal is None:
            raise
    from croupier.server import forks

    address = await hub.forks_address()
    assert hub.forks_referee is not None
    records = await asyncio.to_thread(forks.finished_records, journal, match_id)
    match, tokens = await forks.fork_records(hub.forks_referee.referee, records, step, names, clocks)
    hub.on_forks_referee.add(match.id)
    return address, spectator_pb2.ForkMatchResponse(match=match.info(), seat_tokens=tokens)


async def _seats_of(hub: Hub, match_id: str) -> int:
    """How many seats the finished match has (its replay, which the fork needs read anyway)."""
    text = await hub.record(match_id)
    if text is None:
        return 0  # still running: the referee refuses the fork and says why
    return len(json.loads(text)["header"]["players"])


def _credentials(hub: Hub) -> grpc.ChannelCredentials | None:
    return grpc.ssl_channel_credentials(hub.tls_ca.read_bytes()) if hub.tls_ca else None


async def _play(
    server: str, credentials: grpc.ChannelCredentials | None, strategy_name: str, tokens: list[str]
) -> None:
    """Every seat of a fork, played by a bundled bot here until the fork is over."""
    from croupier.clients.bots import strategy
    from croupier.clients.sdk import Client

    clients = [
        Client(
            strategy(strategy_name),
            server,
            [token],
            name=strategy_name,
            stop_after=1,
            credentials=credentials,
        )
        for token in tokens
    ]
    await asyncio.gather(*(client.run() for client in clients))

"""The seat page's HTTP side: the one-time link that hands a browser the seat's cookie, the seat's
own feed (server-sent events, as the live match's), its moves, and the result screen's buttons
(the next match, a rematch, leave: clients/web/seat.py).

Protected as docs/spectator.md says ("A seat at the table"): the link's key works once and is
exchanged at once for an HttpOnly, SameSite=Strict cookie, so what stays in the browser's history
and in any log is a spent key; the feed and the moves need the cookie; a move also needs our
header, so another site's page cannot send one without a preflight this server never allows,
and one whose Origin is not this server's is refused whatever it carries.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from croupier.clients.web.seat import COOKIE, HEADER, HumanSeat, Refused


@dataclass
class Seats:
    """The person's seat of this viewer, if it has one: given as it starts (``croupier match
    --human``), or made for a fork the replay page asks a person to play (clients/web/fork_play.py).
    One at a time: a person plays one match."""

    seat: HumanSeat | None = None

    def free(self) -> bool:
        return self.seat is None or self.seat.done


SEATS = web.AppKey("seats", Seats)
KEEPALIVE_SECONDS = 15.0
NO_SEAT = "this browser holds no seat here: a seat is taken by opening its link, once"


async def claim(request: web.Request) -> web.StreamResponse:
    """GET /seat/{key}: the seat's cookie for the first browser with the link, then the seat page."""
    seat = request.app[SEATS].seat
    secret = None if seat is None else seat.claim(request.match_info["key"])
    if secret is None:
        return web.Response(
            status=403,
            text="This seat link was used already, or is not this seat's: a seat link works once, "
            "in the first browser that opens it. Everyone else may watch the match from the lobby (/).\n",
        )
    response = web.HTTPSeeOther("/play")
    response.set_cookie(COOKIE, secret, path="/", httponly=True, samesite="Strict")
    raise response


def _held(request: web.Request) -> HumanSeat:
    seat = request.app[SEATS].seat
    if seat is None or not seat.holds(request.cookies.get(COOKIE)):
        raise web.HTTPForbidden(text=json.dumps({"error": NO_SEAT}), content_type="application/json")
    return seat


def _from_page(request: web.Request, what: str) -> web.Response | None:
    """A 403 unless the request came from the seat page's script: our header, and no Origin but
    this server's (another site's page cannot send the header without a preflight)."""
    origin = request.headers.get("Origin")
    if HEADER not in request.headers or (
        origin is not None and origin != f"{request.scheme}://{request.host}"
    ):
        return web.json_response(
            {"error": f"{what} is sent by the seat page (the {HEADER} header)"}, status=403
        )
    return None


async def move(request: web.Request) -> web.StreamResponse:
    """POST /api/seat/move: the person's choice, sent to the referee; its fate comes on the feed."""
    seat = _held(request)
    if (refusal := _from_page(request, "a move")) is not None:
        return refusal
    try:
        asked = json.loads(await request.text() or "null")
    except ValueError:
        return web.json_response({"error": "a move is JSON"}, status=400)
    try:
        seat.move(asked)
    except Refused as exc:
        return web.json_response({"error": str(exc)}, status=400)
    return web.json_response({"sent": True}, status=202)


def _between(say: Callable[[HumanSeat], None], what: str) -> Handler:
    """A POST of the result screen's buttons: the next match, a rematch, leave."""

    async def handle(request: web.Request) -> web.StreamResponse:
        seat = _held(request)
        if (refusal := _from_page(request, what)) is not None:
            return refusal
        try:
            say(seat)
        except Refused as exc:
            return web.json_response({"error": str(exc)}, status=409)
        return web.json_response({"sent": True}, status=202)

    return handle


async def hint(request: web.Request) -> web.StreamResponse:
    """POST /api/seat/hint: what boss-1 would play now (a fork's seat only: clients/web/seat.py)."""
    seat = _held(request)
    if HEADER not in request.headers:
        return web.json_response(
            {"error": f"a hint is asked by the seat page (the {HEADER} header)"}, status=403
        )
    try:
        return web.json_response(await seat.hint())
    except Refused as exc:
        return web.json_response({"error": str(exc)}, status=400)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def add_routes(app: web.Application, seat: HumanSeat | None, page: Handler, event_stream: Handler) -> None:
    """The seat's routes on the viewer's ``app`` (its person's ``seat`` from the start, if given):
    ``page`` serves the seat page, ``event_stream`` begins a feed (app.py's, with its headers)."""

    async def live(request: web.Request) -> web.StreamResponse:
        """GET /api/seat/live: the seat's page state now, then again at every change."""
        held = _held(request)
        response = await event_stream(request)
        seen = 0
        held.feeds += 1  # a page is there: after the run, the seat waits for its person's answer
        try:
            with contextlib.suppress(ConnectionResetError):
                while held.holds(request.cookies.get(COOKIE)):
                    try:
                        seen, text = await asyncio.wait_for(held.next_state(seen), KEEPALIVE_SECONDS)
                        await response.write(f"data: {text}\n\n".encode())
                    except TimeoutError:
                        await response.write(b": keep-alive\n\n")
        finally:
            held.feeds -= 1
        return response

    app[SEATS] = Seats(seat)
    app.router.add_get("/seat/{key}", claim)
    app.router.add_get("/play", page)
    app.router.add_get("/api/seat/live", live)
    app.router.add_post("/api/seat/move", move)
    app.router.add_post("/api/seat/hint", hint)
    app.router.add_post("/api/seat/next", _between(HumanSeat.go_on, "the next match"))
    app.router.add_post("/api/seat/rematch", _between(lambda seat: seat.after_run(True), "a rematch"))
    app.router.add_post("/api/seat/leave", _between(lambda seat: seat.after_run(False), "leaving"))

"""The web viewer's HTTP side (aiohttp): the pages, their JSON, and live frames as server-sent
events, served from the event loop grpc.aio runs on.

aiohttp rather than Starlette with uvicorn: one package that is both the server and the client
the bench and tests use, and an ``AppRunner`` that starts on an event loop already running, so
``croupier web`` can sit beside an embedded referee (``make run``) in one loop, where uvicorn
wants to own the loop and the signals. Server-sent events rather than WebSocket: the feed only
flows one way, the browser's ``EventSource`` reconnects by itself and says the last message it
had (``Last-Event-ID``), so a reconnecting page catches up without code of ours.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from croupier.clients.web import STATIC, ladders, play
from croupier.clients.web import fork_play as forks
from croupier.clients.web.hub import FEEDS, Busy, Hub, Sealed, Unknown
from croupier.clients.web.seat import HumanSeat
from croupier.clients.web.tournaments import NoDatabase, Ratings, tournament_page

KEEPALIVE_SECONDS = 15.0
"""A comment line on idle event streams, so proxies and browsers keep them open."""
SECURITY = {
    # Pages run only our scripts and talk only to this server; nothing the referee sends (a bot's
    # name) can become markup, as the scripts write text, never HTML.
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
LOCAL_NAMES = frozenset({"localhost"})
"""Names a browser only ever resolves to this machine's loopback (no DNS answer can move them)."""
HUB = web.AppKey("hub", Hub)
RATINGS = web.AppKey("ratings", Ratings)
HOST_NAMES = web.AppKey("host_names", frozenset[str])

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def host_served(header: str, names: frozenset[str]) -> bool:
    """Whether a request's ``Host`` is one this viewer serves: an IP (nothing to rebind), or one
    of ``names``. A page of another name whose DNS answer was switched to this address (DNS
    rebinding) sends its own name, and gets nothing."""
    bracketed = header.startswith("[")  # an IPv6 address, then maybe a port
    host = (header[1:].partition("]")[0] if bracketed else header.partition(":")[0]).lower().rstrip(".")
    if host in names:
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@web.middleware
async def served_hosts(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Answer only requests for a name this viewer serves (``--allow-host``): 421 otherwise."""
    header = request.headers.get("Host", "")
    if not host_served(header, request.app[HOST_NAMES]):
        return web.Response(
            status=421,
            text=f"this viewer does not serve {header[:80]!r}: start it with --allow-host NAME to serve "
            "that name\n",
            headers=SECURITY,
        )
    return await handler(request)


@web.middleware
async def headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        response = await handler(request)
    except (Unknown, NoDatabase) as exc:
        response = web.json_response({"error": str(exc)}, status=404)
    except Busy as exc:
        response = web.json_response({"error": str(exc)}, status=503)
    except Sealed as exc:
        response = web.json_response({"sealed": True, "error": str(exc)}, status=409)
    if not response.prepared:
        response.headers.update(SECURITY)
        if request.path.startswith("/api/"):
            response.headers["Cache-Control"] = "no-store"
    return response


def page(name: str) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / name, headers={"Cache-Control": "no-cache"})

    return handler


ICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    '<text y="14" font-size="14">\N{BLACK SPADE SUIT}</text></svg>'
)
"""The pages' icon, which every browser asks for as /favicon.ico (a 404 in its console otherwise)."""


async def icon(request: web.Request) -> web.StreamResponse:
    return web.Response(text=ICON, content_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


async def lobby(request: web.Request) -> web.StreamResponse:
    return web.Response(text=request.app[HUB].lobby_text, content_type="application/json")


async def lobby_live(request: web.Request) -> web.StreamResponse:
    hub = request.app[HUB]
    response = await _event_stream(request)
    seen: str | None = None
    with contextlib.suppress(ConnectionResetError):
        while True:
            try:
                seen = await asyncio.wait_for(hub.next_lobby(seen), KEEPALIVE_SECONDS)
                await response.write(f"data: {seen}\n\n".encode())
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
    return response


async def record(request: web.Request) -> web.StreamResponse:
    text = await request.app[HUB].record(request.match_info["match_id"])
    if text is None:
        return web.json_response({"live": True, "error": "the match is still running"}, status=409)
    return web.Response(text=text, content_type="application/json")


async def live(request: web.Request) -> web.StreamResponse:
    """A live match's frames: a snapshot of now (or, reconnecting, what was missed), then every
    change, then an ``end`` event (its data: an error, if the referee gave one), or a ``sealed``
    event if a twin was dealt meanwhile."""
    hub = request.app[HUB]
    client = request.remote or ""
    match = hub.watch(request.match_info["match_id"], client)
    last = request.headers.get("Last-Event-ID", "")
    listener, backlog = match.join(int(last) if last.isdigit() else None, client)
    response = await _event_stream(request)
    try:
        with contextlib.suppress(ConnectionResetError):
            pending = backlog
            while True:
                ended = None in pending
                events = "".join(e for e in pending if e is not None)
                if events:
                    await response.write(events.encode())
                if ended:
                    break
                try:
                    async with asyncio.timeout(KEEPALIVE_SECONDS):  # no task per message, as wait_for
                        pending = [await listener.queue.get()]
                except TimeoutError:
                    await response.write(b": keep-alive\n\n")
                    pending = []
                while not listener.queue.empty():  # all that is waiting, in one write
                    pending.append(listener.queue.get_nowait())
            if not listener.dropped and match.sealed:
                await response.write(b"event: sealed\ndata: \n\n")
            elif not listener.dropped:
                error = (match.error or "").replace("\n", " ")
                await response.write(f"event: end\ndata: {error}\n\n".encode())
    finally:
        hub.leave(match, listener)
    return response


async def fork(request: web.Request) -> web.StreamResponse:
    """The replay page's "play on from here" (clients/web/fork_play.py)."""
    return await forks.fork(request, request.app[HUB])


async def tournament(request: web.Request) -> web.StreamResponse:
    """A tournament's tables, without its ratings (``tournament_ratings``: they take longer)."""
    db, tournament_id = _tournament_of(request)
    return web.json_response(await asyncio.to_thread(tournament_page, db, tournament_id))


async def tournament_ratings(request: web.Request) -> web.StreamResponse:
    """Each game's ratings table: {"games": {game: rows}}."""
    db, tournament_id = _tournament_of(request)
    tables = await asyncio.to_thread(request.app[RATINGS].of, db, tournament_id)
    return web.json_response({"games": tables})


def _tournament_of(request: web.Request) -> tuple[Path, int]:
    data = request.app[HUB].data
    if data is None:
        raise NoDatabase("this viewer was started without --data: no tournaments")
    try:
        return data / "results.db", int(request.match_info["tournament_id"])
    except ValueError:
        raise NoDatabase(f"not a tournament number: {request.match_info['tournament_id'][:40]!r}") from None


async def _event_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={
            **SECURITY,
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
        }
    )
    await response.prepare(request)
    return response


def make_app(hub: Hub, seat: HumanSeat | None = None, hosts: Iterable[str] = ()) -> web.Application:
    """The viewer's routes, served for the names in ``hosts``, localhost and any IP."""
    app = web.Application(middlewares=[served_hosts, headers])
    app[HOST_NAMES] = LOCAL_NAMES | {name.lower().rstrip(".") for name in hosts}
    play.add_routes(app, seat, page("play.html"), _event_stream)  # a person's seat, if one plays here
    app[HUB] = hub
    app[RATINGS] = Ratings()
    app.router.add_get("/", page("lobby.html"))
    app.router.add_get("/favicon.ico", icon)
    app.router.add_get("/match/{match_id}", page("match.html"))
    app.router.add_get("/tournament/{tournament_id}", page("tournament.html"))
    app.router.add_get("/follow", page("follow.html"))
    app.router.add_get("/api/lobby", lobby)
    app.router.add_get("/api/lobby/live", lobby_live)
    app.router.add_get("/api/matches/{match_id}/record", record)
    app.router.add_get("/api/matches/{match_id}/live", live)
    app.router.add_post("/api/matches/{match_id}/fork", fork)
    app.router.add_get("/api/tournaments/{tournament_id}", tournament)
    app.router.add_get("/api/tournaments/{tournament_id}/ratings", tournament_ratings)
    ladders.add_routes(app, lambda request: request.app[HUB].data)
    app.router.add_static("/static/", STATIC)
    return app


@dataclass
class WebViewer:
    """A running ``croupier web``."""

    hub: Hub
    runner: web.AppRunner
    url: str
    seat: HumanSeat | None = None

    def seat_link(self) -> str:
        """A one-time link to the person's seat (any earlier one is void)."""
        assert self.seat is not None
        return f"{self.url}seat/{self.seat.new_link()}"

    async def stop(self) -> None:
        seat = self.runner.app[play.SEATS].seat if self.runner.app is not None else None
        if seat is not None:  # the one it began with, or a fork's
            await seat.stop()
        await self.runner.cleanup()
        await self.hub.close()


async def start_web(
    server: str,
    address: str = "127.0.0.1:8080",
    data: Path | None = None,
    tls_ca: Path | None = None,
    token: str | None = None,
    seat: HumanSeat | None = None,
    hosts: Iterable[str] = (),
    feeds: int = FEEDS,
) -> WebViewer:
    """Serve the viewer of the referee at ``server`` on ``address`` (port 0: a free one); with
    ``token`` (the organiser's: ``referee.organiser_token``), sealed matches are shown live too, to
    whoever reaches ``address``; with ``seat``, a person plays it here (``WebViewer.seat_link``):
    never give such a viewer the organiser's token, which would show them the sealed twins.
    Requests naming another host than ``address``'s, localhost, an IP or one of ``hosts`` get 421.
    ``feeds``: the live feeds the referee grants this viewer (its --feeds-per-client)."""
    if seat is not None and token is not None:
        raise ValueError("a viewer with a person's seat must not hold the organiser's token")
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    listening = socket.create_server((host, int(port)), family=_family(host), reuse_port=False)
    hub = Hub(server, data, tls_ca, token, feeds)
    app = make_app(hub, seat, [*hosts, host])
    runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    await web.SockSite(runner, listening).start()
    await hub.refresh_lobby()
    hub.start()
    bound = listening.getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    return WebViewer(hub, runner, f"http://{shown}:{bound[1]}/", seat)


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET

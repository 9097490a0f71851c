"""The runner's side of the referees: their AdminService, over gRPC.

A tournament plays on one referee (a plain ``HOST:PORT``) or spreads its
matches over several replicas (a gRPC target naming them: ``ipv4:`` or
``ipv6:`` lists, or a ``dns:`` name such as a Kubernetes headless Service);
a plain ``HOST:PORT`` of one worker of ``croupier serve --workers N`` spreads
over all N, which that worker names. A match lives on one replica, so only
CreateMatch goes through the channel that balances calls round robin over the
target; the replica that answers says who it is, and every later call about
that match goes straight to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import grpc

from croupier.clients.results.store import SeatResult
from croupier.clients.tournament.config import GameConfig
from croupier.engine.games import get_game
from croupier.v1 import admin_pb2, admin_pb2_grpc, match_pb2, spectator_pb2, spectator_pb2_grpc

if TYPE_CHECKING:
    from croupier.server.app import Croupier
    from croupier.server.registration import OpenRegistration
from croupier.wire.convert import codec
from croupier.wire.errors import no_referee

TOKEN_METADATA = "croupier-token"
T = TypeVar("T")
RECONNECT_SECONDS = 120.0
"""How long calls wait for a referee that went away (a restart resumes its matches from their
journals, and keeps its bots), before the tournament stops: during play, and from the first
answer of the start-up on."""
FIRST_CONTACT_SECONDS = 10.0
"""How long the first call waits for a referee that is not there: one restarting at that moment
comes back within it, and a mistyped address is told soon."""
RECONNECT_PAUSE, MAX_PAUSE = 0.25, 4.0
"""The first pause before a call is made again, doubled each time up to the second."""
SHUTDOWNS = 10
"""Referee shutdowns a wait for a match rides out (each cancels the wait: asked again)."""
SPREAD_SCHEMES = ("ipv4:", "ipv6:", "dns:")
LIST_PAGE = 1000
"""Matches per ListMatches page (the most a referee gives)."""
"""Targets naming several referee replicas; anything else is one referee, dialled as given."""
DEFAULT_PORT = 443
"""gRPC's port for a target that names none."""


class TargetError(ValueError):
    """A referee target that names no replica; the message says why."""


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
    """Admin calls with the admin token; errors become ``RefereeError`` with the referee's reason.
    With ``round_robin``, each call goes to the next replica the address resolves to."""

    def __init__(self, address: str, admin_token: str, *, round_robin: bool = False) -> None:
        self.address = address
        options = [("grpc.lb_policy_name", "round_robin")] if round_robin else []
        self._channel = grpc.aio.insecure_channel(address, options=options)
        self._stub = admin_pb2_grpc.AdminServiceStub(self._channel)
        self._spectator = spectator_pb2_grpc.SpectatorServiceStub(self._channel)
        self._metadata = ((TOKEN_METADATA, admin_token),) if admin_token else ()
        """No admin token: an open registration (the only call a referee takes without one)."""
        self.outages = 0
        """Times a call found this referee down or shutting down: a match waited on across one
        lived through a restart (the ladder voids a set a bot left then: the arena's fault)."""

    async def close(self) -> None:
        await self._channel.close(None)

    async def register_bot(
        self,
        name: str,
        bot_id: str = "",
        token: str = "",
        patience: float = RECONNECT_SECONDS,
        *,
        claim: bool = False,
        owner_token: str = "",
    ) -> tuple[str, str]:
        """A new bot id and its token; or the bot ``bot_id`` with ``token``, as another replica has it.
        Made again while the referee restarts (for ``patience`` seconds): a registration whose
        answer was lost leaves an unused bot behind, nothing worse. ``claim``: the name is its owner's
        from now on; ``owner_token``: a live claimed version's token, for a new version of one."""
        request = admin_pb2.RegisterBotRequest(
            name=name, bot_id=bot_id, token=token, claim=claim, owner_token=owner_token
        )
        reply = await self._patient_call(
            "RegisterBot", lambda: self._stub.RegisterBot(request, metadata=self._metadata), patience
        )
        return reply.bot_id, reply.token

    async def describe(self, patience: float = RECONNECT_SECONDS) -> admin_pb2.RefereeInfo:
        """The address this referee says it is reached at, and which run of which referee it is."""
        request = admin_pb2.GetRefereeRequest()
        return await self._patient_call(
            "GetReferee", lambda: self._stub.GetReferee(request, metadata=self._metadata), patience
        )

    async def bots(self, patient: bool = True) -> dict[str, BotStatus]:
        """Its registered bots; not ``patient``: at once, or UNAVAILABLE."""
        request = admin_pb2.ListBotsRequest()
        reply = await self._patient_call(
            "ListBots",
            lambda: self._stub.ListBots(request, metadata=self._metadata),
            RECONNECT_SECONDS if patient else 0.0,
        )
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
    ) -> admin_pb2.CreateMatchResponse:
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
        return await self._patient_call(
            "CreateMatch", lambda: self._stub.CreateMatch(request, metadata=self._metadata)
        )

    async def get_match(self, match_id: str) -> match_pb2.MatchInfo | None:
        """The match, or None if this referee does not know it."""
        request = admin_pb2.GetMatchRequest(match_id=match_id)
        return await self._unless_not_found(
            "GetMatch", lambda: self._stub.GetMatch(request, metadata=self._metadata)
        )

    async def live_matches(self) -> list[match_pb2.MatchInfo]:
        """Its waiting and running matches, as the admin sees them (seed hashes included)."""
        found: list[match_pb2.MatchInfo] = []
        for status in (match_pb2.MATCH_STATUS_WAITING, match_pb2.MATCH_STATUS_RUNNING):
            token = ""
            while True:
                reply = await self._list_page(status, token)
                found += reply.matches
                token = reply.next_page_token
                if not token:
                    break
        return found

    async def _list_page(
        self, status: match_pb2.MatchStatus.ValueType, token: str
    ) -> spectator_pb2.ListMatchesResponse:
        request = spectator_pb2.ListMatchesRequest(status=status, page_size=LIST_PAGE, page_token=token)
        return await self._patient_call(
            "ListMatches", lambda: self._spectator.ListMatches(request, metadata=self._metadata)
        )

    async def cancel_match(self, match_id: str, reason: str) -> match_pb2.MatchInfo | None:
        """Call the match off (a finished one keeps its result); None if this referee does not know it."""
        request = admin_pb2.CancelMatchRequest(match_id=match_id, reason=reason)
        return await self._unless_not_found(
            "CancelMatch", lambda: self._stub.CancelMatch(request, metadata=self._metadata)
        )

    async def wait_match(self, match_id: str) -> match_pb2.MatchInfo:
        """The match once it is over. A referee shutting down cancels the calls it holds (a
        restart resumes the match from its journal): asked again, patiently, as when it is down."""
        request = admin_pb2.GetMatchRequest(match_id=match_id)
        for _ in range(SHUTDOWNS):
            try:
                return await self._patient_call(
                    "WaitMatch", lambda: self._stub.WaitMatch(request, metadata=self._metadata)
                )
            except RefereeError as exc:
                if exc.code != grpc.StatusCode.CANCELLED:
                    raise
                self.outages += 1
                await asyncio.sleep(RECONNECT_PAUSE)
        return await self._patient_call(
            "WaitMatch", lambda: self._stub.WaitMatch(request, metadata=self._metadata)
        )

    async def _patient_call(
        self, method: str, make_call: Callable[[], Awaitable[T]], patience: float = RECONNECT_SECONDS
    ) -> T:
        """``make_call()``, made again while the referee is unreachable, for up to ``patience``
        seconds, with growing pauses."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + patience
        pause = RECONNECT_PAUSE
        while True:
            try:
                return await self._call(method, make_call())
            except RefereeError as exc:
                if exc.code != grpc.StatusCode.UNAVAILABLE or loop.time() >= give_up:
                    raise
                self.outages += 1
            await asyncio.sleep(min(pause, max(0.0, give_up - loop.time())))
            pause = min(MAX_PAUSE, pause * 2)

    async def _unless_not_found(self, method: str, make_call: Callable[[], Awaitable[T]]) -> T | None:
        """A patient call about a match; None when this referee does not know the match."""
        try:
            return await self._patient_call(method, make_call)
        except RefereeError as exc:
            if exc.code == grpc.StatusCode.NOT_FOUND:
                return None
            raise

    async def _call(self, method: str, call: Awaitable[T]) -> T:
        try:
            return await call
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNAVAILABLE and "connect" in (exc.details() or ""):
                raise RefereeError(no_referee(self.address), exc.code()) from None
            raise RefereeError(
                f"referee at {self.address}: {method}: {exc.code().name}: {exc.details()}", exc.code()
            ) from None


class Replicas:
    """The referees a tournament plays on, each under the name it advertises: one direct channel
    each, and for several replicas one more that balances CreateMatch over them round robin."""

    def __init__(self, referees: dict[str, Referee], balanced: Referee | None = None) -> None:
        self.referees = referees
        self._balanced = balanced

    @classmethod
    async def connect(cls, target: str, admin_token: str) -> Replicas:
        """The referee at a plain ``HOST:PORT`` (named so), or every replica a spreading target names,
        or every worker of the ``croupier serve --workers`` that a plain ``HOST:PORT`` is one of."""
        if not target.startswith(SPREAD_SCHEMES):
            workers = await _workers_of(target, admin_token)
            if len(workers) < 2:
                return cls({target: Referee(target, admin_token)})
            target = await _balancing_target(workers)
        referees: dict[str, Referee] = {}
        found_at: dict[str, str] = {}  # where each replica, by name, was found
        instances: set[str] = set()
        try:
            for address in await resolve(target):
                referee = Referee(address, admin_token)
                try:
                    info = await referee.describe(FIRST_CONTACT_SECONDS)
                finally:
                    await referee.close()
                if info.instance in instances:
                    continue  # the same replica under another address
                if info.address in referees:
                    raise RefereeError(
                        f"the referees at {found_at[info.address]} and {address} both advertise "
                        f"themselves as {info.address}: give each replica its own --advertise"
                    )
                instances.add(info.instance)
                found_at[info.address] = address
                referees[info.address] = await _reach(info, address, admin_token)
        except BaseException:
            await asyncio.gather(*(referee.close() for referee in referees.values()))
            raise
        return cls(referees, Referee(target, admin_token, round_robin=True))

    @property
    def names(self) -> list[str]:
        return list(self.referees)

    async def close(self) -> None:
        balanced = [self._balanced] if self._balanced is not None else []
        await asyncio.gather(*(referee.close() for referee in [*self.referees.values(), *balanced]))

    async def register_bot(self, name: str) -> tuple[str, str]:
        """A bot id and token every replica knows: the first picks them, the others take them."""
        first, *others = self.referees.values()
        bot_id, token = await first.register_bot(name)
        for referee in others:
            await referee.register_bot(name, bot_id, token)
        return bot_id, token

    async def bots(self, *, skip_unreachable: bool = False) -> dict[str, dict[str, BotStatus]]:
        """Each replica's registered bots, by bot id. With ``skip_unreachable``, only the replicas
        that answer: one restarting says nothing of its bots (its matches wait for it)."""
        names = self.names
        found = await asyncio.gather(
            *(self.referees[name].bots(patient=not skip_unreachable) for name in names),
            return_exceptions=skip_unreachable,
        )
        status = {}
        for name, bots in zip(names, found, strict=True):
            if isinstance(bots, BaseException):
                if isinstance(bots, RefereeError) and bots.code == grpc.StatusCode.UNAVAILABLE:
                    continue
                raise bots
            status[name] = bots
        return status

    async def registered_bot(self, name: str) -> tuple[str, bool]:
        """The id of the bot registered as ``name`` (``croupier register NAME``), which plays with its
        own token, and whether it is connected to every replica: one bot of that name on each, the
        connected one if several have it. A ``RefereeError`` says what is missing."""
        found: list[BotStatus] = []
        for replica, bots in (await self.bots()).items():
            named = [bot for bot in bots.values() if bot.name == name]
            if not named:
                register = f"croupier register {name} --server {replica}"
                raise RefereeError(f"no bot is registered as {name} on {replica}: {register}")
            connected = [bot for bot in named if bot.streams]
            if len(named) > 1 and len(connected) != 1:
                raise RefereeError(
                    f"{len(named)} bots are registered as {name} on {replica}, and {len(connected)} of them "
                    "connected: connect the one that should play, alone"
                )
            found.append((connected or named)[0])
        if len({bot.bot_id for bot in found}) > 1:
            raise RefereeError(
                f"bot {name} is registered under other ids on other referees: give it one referee"
            )
        return found[0].bot_id, all(bot.streams for bot in found)

    async def create_match(
        self, game: GameConfig, seed: int, seats: Sequence[tuple[str, str]], replica: str | None = None
    ) -> tuple[str, admin_pb2.CreateMatchResponse]:
        """The replica holding the new match, and its answer (the match, where its journal is):
        ``replica``, or the one the balancing picks."""
        if replica is not None or self._balanced is None:
            name = replica if replica is not None else self.names[0]
            return name, await self.referees[name].create_match(game, seed, seats)
        try:
            reply = await self._balanced.create_match(game, seed, seats)
        except RefereeError as exc:
            if exc.code != grpc.StatusCode.NOT_FOUND:
                raise
            raise RefereeError(
                f"{exc} (a replica that came after the tournament started knows none of its bots: "
                "run the same command again to take it in)",
                exc.code,
            ) from None
        if reply.referee not in self.referees:
            raise RefereeError(
                f"match {reply.match.match_id} was created by a replica advertising {reply.referee!r}, "
                f"not one of {', '.join(self.names)}: give each replica one --advertise address for good"
            )
        return reply.referee, reply

    async def wait_match(self, replica: str, match_id: str) -> match_pb2.MatchInfo:
        return await self.referees[replica].wait_match(match_id)

    async def live_matches(self) -> dict[str, list[match_pb2.MatchInfo]]:
        """Each replica's waiting and running matches."""
        found = await asyncio.gather(*(referee.live_matches() for referee in self.referees.values()))
        return dict(zip(self.referees, found, strict=True))

    async def cancel_match(self, replica: str, match_id: str, reason: str) -> None:
        """Call the match off on its replica; on every replica if which one is not known."""
        known = self.referees.get(replica)
        for referee in [known] if known is not None else self.referees.values():
            await referee.cancel_match(match_id, reason)


async def _workers_of(address: str, admin_token: str) -> list[str]:
    """The workers of the group the referee at ``address`` is one of; none for a referee on its own
    (or one that refuses to say: the calls that follow say why). The first call of a start-up:
    it waits FIRST_CONTACT_SECONDS for a referee that is not there (restarting)."""
    referee = Referee(address, admin_token)
    try:
        return list((await referee.describe(FIRST_CONTACT_SECONDS)).workers)
    except RefereeError as exc:
        if exc.code == grpc.StatusCode.UNAVAILABLE:
            raise
        return []
    finally:
        await referee.close()


async def _balancing_target(addresses: Sequence[str]) -> str:
    """An ``ipv4:`` (else ``ipv6:``) target of ``addresses``, their names resolved: what gRPC's
    round_robin balances over."""
    found = [ip for address in addresses for ip in await resolve(f"dns:{address}")]
    ipv4 = [ip for ip in found if not ip.startswith("[")]
    return "ipv4:" + ",".join(ipv4) if ipv4 else "ipv6:" + ",".join(found)


async def _reach(info: admin_pb2.RefereeInfo, address: str, admin_token: str) -> Referee:
    """A channel to the replica found at ``address`` by the name it advertises, checked to reach
    that very replica."""
    name = info.address
    referee = Referee(name, admin_token)
    try:  # at once: the replica answered a moment ago, at another address
        answer = await referee.describe(patience=0.0)
    except RefereeError as exc:
        await referee.close()
        raise RefereeError(
            f"the referee at {address} advertises itself as {name}, which does not answer here ({exc}); "
            "start it with an --advertise address this runner can reach",
            exc.code,
        ) from None
    if answer.instance != info.instance:
        await referee.close()
        raise RefereeError(
            f"the referee at {address} advertises itself as {name}, but another referee answers there: "
            "give each replica an --advertise address of its own"
        )
    return referee


async def resolve(target: str) -> list[str]:
    """Every referee replica a gRPC target names, as HOST:PORT (IPv6 in brackets): the addresses
    of an ``ipv4:`` or ``ipv6:`` list, every address of a ``dns:`` name, or a plain target itself."""
    scheme, _, rest = target.partition(":")
    if scheme in ("ipv4", "ipv6"):
        addresses = [_address(scheme, part, target) for part in rest.split(",")]
        return list(dict.fromkeys(addresses))
    if scheme != "dns":
        return [target]
    if rest.startswith("//"):  # dns://AUTHORITY/NAME: the DNS server to ask; ours is the system's
        rest = rest[2:].partition("/")[2]
    host, port = _host_port(rest, target)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise TargetError(f"{target}: cannot resolve {host}: {exc}") from None
    addresses = [_join(str(sockaddr[0]), port) for *_, sockaddr in found]
    return list(dict.fromkeys(addresses))


def _address(scheme: str, part: str, target: str) -> str:
    """One address of an ``ipv4:``/``ipv6:`` list, checked and with its port."""
    if scheme == "ipv6" and not part.startswith("["):
        host, port = part, DEFAULT_PORT  # a bare IPv6 address has no room for a port
    else:
        host, port = _host_port(part, target)
    kind = ipaddress.IPv4Address if scheme == "ipv4" else ipaddress.IPv6Address
    try:
        kind(host)
    except ValueError:
        raise TargetError(f"{target}: {part!r} is not an {scheme} address") from None
    return _join(host, port)


def _host_port(text: str, target: str) -> tuple[str, int]:
    if text.startswith("["):
        host, bracket, after = text[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise TargetError(f"{target}: {text!r} is not [IPV6]:PORT")
        port_text = after[1:]
    else:
        host, colon, port_text = text.partition(":")
        if colon and not port_text:
            raise TargetError(f"{target}: {text!r} has no port after its colon")
    if not host:
        raise TargetError(f"{target}: no host in {text!r}")
    if not port_text:
        return host, DEFAULT_PORT
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise TargetError(f"{target}: {port_text!r} is not a port")
    return host, int(port_text)


def _join(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def seat_results(
    info: match_pb2.MatchInfo, bots: Sequence[str], versions: Sequence[str] | None = None
) -> list[SeatResult]:
    """The finished match's result, one line per seat, under the tournament's bot names (and
    versions, seat by seat)."""
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
            version=versions[seat.seat] if versions else "",
        )
        for seat in sorted(info.result.seats, key=lambda s: s.seat)
    ]


@contextlib.asynccontextmanager
async def embedded(
    listen: str,
    data: Path,
    logs: Path,
    unix_socket: Path | None = None,
    open_registration: OpenRegistration | None = None,
) -> AsyncIterator[Croupier]:
    """A referee in this process on ``listen``, its data in ``data``, logging to
    LOGS/referee.log: not over the live display; ``open_registration`` as ``create_server``
    takes it. It claims the process's one logging configuration (later calls do nothing), then
    points it at the file before anything logs."""
    from croupier.server import logs as referee_logs
    from croupier.server.app import create_server

    logs.mkdir(parents=True, exist_ok=True)
    referee_logs.configure(json=True)
    with referee_logs.to_file(logs / "referee.log"):
        croupier = await create_server(
            listen, data, unix_socket=unix_socket, open_registration=open_registration
        )
        try:
            yield croupier
        finally:
            await croupier.stop(grace=1.0)

"""Whom a command may send the referee's admin token: the one given, or for a referee on this
machine the one its data directory keeps, sent only to the exact address where that referee
proved it holds it (``croupier register``, ``match``, ``tournament`` and ``ladder`` alike)."""

from __future__ import annotations

import asyncio
import hmac
import secrets
from pathlib import Path

import grpc

from croupier.v1 import admin_pb2, admin_pb2_grpc
from croupier.wire.errors import no_referee
from croupier.wire.proof import admin_key, dialled_addresses, referee_proof

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "0.0.0.0"})
"""Hosts of a referee on this machine, whose admin token is in its data directory."""
PROVE_SECONDS = 10.0


class NoAdminToken(Exception):
    """No admin token was given or found, or none may be sent; the message says why in one line,
    ``code`` is the exit status (2: give one, 1: what answers is not the referee)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def find_admin_token(server: str, given: str | None, data: Path) -> tuple[str, str, str]:
    """The admin token for the referee at ``server``, where it came from, and the address to send
    it to: ``given`` (--admin-token, $CROUPIER_ADMIN_TOKEN) for ``server``, else for a referee on
    this machine the one ``croupier serve --data DATA`` keeps in DATA/admin-token, for the exact
    address (an IP, a port) where that referee proved it holds it: ``localhost`` may resolve to
    ``[::1]`` and ``127.0.0.1``, and whatever answers at the one that did not prove itself must
    not receive the token. When no referee runs there, ``NoAdminToken`` says so, not that the
    token file is missing."""
    if given:
        return given, "--admin-token or $CROUPIER_ADMIN_TOKEN", server
    if server.rpartition(":")[0] not in LOCAL_HOSTS:
        raise NoAdminToken(
            f"give the admin token of the referee at {server}: --admin-token or $CROUPIER_ADMIN_TOKEN"
        )
    if not server.rpartition(":")[2].isdigit():
        raise NoAdminToken(f"--server {server}: HOST:PORT, please")
    try:
        addresses = dialled_addresses(server)
    except OSError as exc:
        raise NoAdminToken(f"--server {server}: {exc.strerror or exc}") from None
    path = data / "admin-token"
    try:
        admin_token = path.read_text().strip()
    except OSError:
        if asyncio.run(_proven_at(server, addresses, "", path))[1] == no_referee(server):  # anyone there?
            raise NoAdminToken(no_referee(server)) from None
        raise NoAdminToken(
            f"no admin token at {path}: give the --data of `croupier serve` (or --admin-token)"
        ) from None
    proven, unproven = asyncio.run(_proven_at(server, addresses, admin_token, path))
    if proven is None:
        raise NoAdminToken(unproven, 1)
    return admin_token, str(path), proven


async def _proven_at(
    server: str, addresses: list[str], admin_token: str, path: Path
) -> tuple[str | None, str]:
    """The first of ``addresses`` (``server`` resolved) whose referee proved it holds the admin
    token read from ``path``, or None and why none did."""
    refusals = []
    for address in addresses:
        unproven = await _unproven(address, admin_token, path)
        if unproven is None:
            return address, ""
        if unproven != no_referee(address):
            refusals.append(unproven)
    return None, refusals[0] if refusals else no_referee(server)


async def _unproven(address: str, admin_token: str, path: Path) -> str | None:
    """Why the admin token read from ``path`` must not go to the exact ``address`` (None: the
    referee there proved it holds that token, for that address)."""
    nonce = secrets.token_bytes(32)
    request = admin_pb2.ProveRefereeRequest(nonce=nonce, address=address)
    async with grpc.aio.insecure_channel(address) as channel:
        try:  # no token in this call's metadata: it is the question whom to send one to
            reply = await admin_pb2_grpc.AdminServiceStub(channel).ProveReferee(
                request, timeout=PROVE_SECONDS
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNAVAILABLE:
                return no_referee(address)
            why = f"{exc.code().name}: {exc.details()}"
        else:
            if hmac.compare_digest(reply.proof, referee_proof(admin_key(admin_token), address, nonce)):
                return None
            why = "a wrong proof"
    return (
        f"what answers at {address} did not prove it is the referee of {path.parent} ({why}), so its "
        "admin token was not sent: is that referee running there? (another one: give --admin-token)"
    )

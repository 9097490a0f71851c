"""A referee's proof that it holds the admin token, without the token being sent (ProveReferee).

``croupier register`` reads the admin token from a data directory and would send it to whatever
answers at ``--server``: a local user listening on the port while the referee is down would
receive it. So it first sends a fresh nonce and the exact address it dialled (an IP and a port),
and sends the token only if the answer is this proof, which only a holder of the token (the
referee of that data directory) can make, and that referee makes only for an address it listens
on. A port alone would not do: an impostor on ``[::1]:P`` relaying the nonce to the referee on
``127.0.0.1:P`` would receive a proof for ``P``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket

DOMAIN = b"croupier-referee-proof/v2"
"""Keeps these MACs apart from any other use of the key: they prove this and nothing else
(v2: they name the address, v1 named the port only)."""
NONCE_BYTES = (16, 64)
WILDCARDS = frozenset({"", "0.0.0.0", "::"})
"""Hosts grpc binds on every address of both families (it makes a dual-stack socket)."""


def admin_key(admin_token: str) -> str:
    """The key of the proofs: the admin token's SHA-256, hex (what the referee keeps of it)."""
    return hashlib.sha256(admin_token.encode()).hexdigest()


def referee_proof(key: str, address: str, nonce: bytes) -> bytes:
    """The proof of the referee listening at ``address`` (``exact_address``) holding the token
    whose ``admin_key`` is ``key``."""
    return hmac.new(key.encode(), b"\0".join([DOMAIN, address.encode(), nonce]), hashlib.sha256).digest()


def exact_address(ip: str, port: int) -> str:
    """An IP and a port as the proofs name them: ``127.0.0.1:50051``, ``[::1]:50051`` (ValueError
    for a host that is not an IP)."""
    parsed = ipaddress.ip_address(ip.strip("[]"))
    return f"[{parsed}]:{port}" if parsed.version == 6 else f"{parsed}:{port}"


def dialled_addresses(server: str) -> list[str]:
    """The exact addresses a client reaches ``HOST:PORT`` at, in the order it tries them (a name
    such as ``localhost`` may give ``[::1]`` and ``127.0.0.1``; a wildcard is this machine's
    loopback, as the kernel takes it). OSError if the name does not resolve."""
    host, _, port = server.rpartition(":")
    bare = host.strip("[]")
    if bare in WILDCARDS:
        return [exact_address("::1" if ":" in bare else "127.0.0.1", int(port))]
    found = socket.getaddrinfo(bare, int(port), type=socket.SOCK_STREAM)
    return list(dict.fromkeys(exact_address(str(where[0]), int(port)) for *_, where in found))


def listens_at(bound_host: str, port: int, address: str) -> bool:
    """Whether a referee that bound ``bound_host`` on ``port`` is what answers at the exact
    ``address``: a wildcard is every address; a name, the first address it resolves to (the one
    ``croupier serve`` checked was free before binding it; another may be someone else's)."""
    try:
        host, _, dialled_port = address.rpartition(":")
        if exact_address(host, int(dialled_port)) != address or int(dialled_port) != port:
            return False
        bare = bound_host.strip("[]")
        if bare in WILDCARDS:
            return True
        try:
            return exact_address(bare, port) == address
        except ValueError:  # a name
            return dialled_addresses(f"{bound_host}:{port}")[:1] == [address]
    except (ValueError, OSError):
        return False

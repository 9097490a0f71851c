"""A referee's proof that it holds the admin token, without the token being sent (ProveReferee).

``croupier register`` reads the admin token from a data directory and would send it to whatever
answers at ``--server``: a local user listening on the port while the referee is down would
receive it. So it first sends a fresh nonce, and sends the token only if the answer is this
proof, which only a holder of the token (the referee of that data directory) can make. The port
the proof names is the one the referee listens on, so a referee elsewhere that an impostor relays
the nonce to proves nothing about the impostor's port.
"""

from __future__ import annotations

import hashlib
import hmac

DOMAIN = b"croupier-referee-proof/v1"
"""Keeps these MACs apart from any other use of the key: they prove this and nothing else."""
NONCE_BYTES = (16, 64)


def admin_key(admin_token: str) -> str:
    """The key of the proofs: the admin token's SHA-256, hex (what the referee keeps of it)."""
    return hashlib.sha256(admin_token.encode()).hexdigest()


def referee_proof(key: str, port: int, nonce: bytes) -> bytes:
    """The proof of the referee listening on ``port`` holding the token whose ``admin_key`` is ``key``."""
    return hmac.new(key.encode(), b"\0".join([DOMAIN, str(port).encode(), nonce]), hashlib.sha256).digest()

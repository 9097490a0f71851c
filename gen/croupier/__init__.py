"""Croupier: a referee service for card-game bots.

The rules are ``croupier.engine``, what the referee and its clients share ``croupier.wire``, the
referee ``croupier.server``, the SDK, bundled bots, tournaments, spectators and CLI
``croupier.clients``; ``croupier.v1`` holds the generated gRPC stubs. This folder (gen/croupier) is
the namespace: the four are links to the top-level folders, and only v1/ is generated.
"""

# First of all: it picks the compiled build of the hot path or its pure Python.
from croupier.wire import native as _native  # noqa: F401

"""Real referees on free ports, as in tests/server (the same fixtures)."""

from tests.server.conftest import admin, channel, referee

__all__ = ["admin", "channel", "referee"]

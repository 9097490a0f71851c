"""The referee fixtures of tests/server: a real referee on a free port, its channel, its admin."""

from tests.server.conftest import admin, channel, referee

__all__ = ["admin", "channel", "referee"]

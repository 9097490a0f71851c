"""Bots that misbehave on purpose, for the tournament tests, written with the SDK. From the
repository root (``python -m`` puts it on the module path):

    python -m croupier.clients.cli bot --strategy tests.e2e.misbehaving:CrashingBot
    python -m croupier.clients.cli bot --strategy tests.e2e.misbehaving:LateBot
"""

from __future__ import annotations

import asyncio
import os
import random
from typing import Any, ClassVar

from croupier.clients.sdk import Bot

CRASH_AT = 4
"""The decision, counted over every match of the process, at which the crashing bot dies."""
LATE_SECONDS = 1.0
"""How late the late bot answers: past the tests' 300 ms decision time (their bank is 0)."""


class CrashingBot(Bot):
    """Plays at random, and dies abruptly (no goodbye on the stream) at its fourth decision of
    every life: the tournament runner must restart it, and the referee give it back its seats."""

    decisions: ClassVar[int] = 0

    def choose(self, view: Any, legal: list[Any]) -> int:
        CrashingBot.decisions += 1
        if CrashingBot.decisions == CRASH_AT:
            os._exit(3)
        return random.randrange(len(legal))


class LateBot(Bot):
    """Always answers after its deadline: every decision times out, then the seat is forfeited."""

    async def choose(self, view: Any, legal: list[Any]) -> int:
        await asyncio.sleep(LATE_SECONDS)
        return 0

"""Open registration: RegisterBot without the admin token, so that strangers join an arena without
its organiser typing a command for each. The operator switches it on (``croupier serve
--open-registration``, a ladder file's ``[registration]``); each caller's address may register so
many bots in any hour, and all callers together so many, so that no one fills the registry."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from croupier.wire.errors import ResourceExhausted

HOUR = 3600.0
DEFAULT_PER_ADDRESS = 5
DEFAULT_PER_HOUR = 100


@dataclass(frozen=True)
class OpenRegistration:
    """How many open registrations the referee takes in any hour."""

    per_address: int = DEFAULT_PER_ADDRESS
    """From one caller's address (its IP: every port of one machine is one address)."""
    per_hour: int = DEFAULT_PER_HOUR
    """From all callers together."""


def limits_of(text: str) -> OpenRegistration:
    """``PER_ADDRESS,PER_HOUR`` (``croupier serve --open-registration``); ValueError saying why not."""
    parts = text.split(",")
    if len(parts) != 2 or not all(part.strip().isdigit() and int(part) > 0 for part in parts):
        raise ValueError(f"{text!r}: PER_ADDRESS,PER_HOUR, two whole numbers of at least 1 (as 5,100)")
    return OpenRegistration(int(parts[0]), int(parts[1]))


class Admissions:
    """The open registrations of the last hour, each with its caller's address."""

    def __init__(self, limits: OpenRegistration, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._recent: deque[tuple[float, str]] = deque()
        """(when, address) of each registration of the last hour, oldest first; at most
        ``per_hour`` of them, so a flood costs no memory."""

    def check(self, address: str) -> None:
        """ResourceExhausted, saying when to try again, if ``address`` may not register now."""
        now = self._clock()
        while self._recent and self._recent[0][0] <= now - HOUR:
            self._recent.popleft()
        mine = [when for when, who in self._recent if who == address]
        if len(mine) >= self.limits.per_address:
            raise ResourceExhausted(
                f"your address has made {len(mine)} open registrations in the last hour, the most "
                f"this referee takes: try again in {_minutes(mine[0] + HOUR - now)}"
            )
        if len(self._recent) >= self.limits.per_hour:
            raise ResourceExhausted(
                f"this referee has taken {len(self._recent)} open registrations in the last hour, "
                f"the most it takes: try again in {_minutes(self._recent[0][0] + HOUR - now)}"
            )

    def count(self, address: str) -> None:
        """One registration from ``address`` made (once ``check`` let it, and it succeeded)."""
        self._recent.append((self._clock(), address))


def _minutes(seconds: float) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return "1 minute" if minutes == 1 else f"{minutes} minutes"

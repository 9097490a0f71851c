"""The time a match's actor reads and schedules on, injected: the event loop's in production, a
hand-driven fake in tests (tests/server/fakes.py), so the actor is tested without sleeping.

(Not to be confused with clocks.py: the time limits a match's seats play under.)
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Protocol


class Handle(Protocol):
    """A scheduled callback."""

    def cancel(self) -> None: ...


class ActorClock(Protocol):
    """Monotonic seconds, callbacks at a time, and blocking work done off the actor."""

    def time(self) -> float: ...

    def call_soon(self, callback: Callable[[], None], context: contextvars.Context) -> Handle: ...

    def call_at(self, when: float, callback: Callable[[], None], context: contextvars.Context) -> Handle: ...

    def off_loop(self, work: Callable[[], None]) -> None:
        """Run ``work`` (an fsync, say) where it does not hold up the actor."""


class LoopClock:
    """The running event loop's clock (looked up on each call: a match may be built before it runs)."""

    def time(self) -> float:
        return asyncio.get_running_loop().time()

    def call_soon(self, callback: Callable[[], None], context: contextvars.Context) -> Handle:
        return asyncio.get_running_loop().call_soon(callback, context=context)

    def call_at(self, when: float, callback: Callable[[], None], context: contextvars.Context) -> Handle:
        return asyncio.get_running_loop().call_at(when, callback, context=context)

    def off_loop(self, work: Callable[[], None]) -> None:
        asyncio.get_running_loop().run_in_executor(None, work)

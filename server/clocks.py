"""A match's time limits: per decision, a bank, the timeouts and refusals a seat may have, and
a reconnect grace. What a match does when they run out is in timekeeping.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from croupier.v1 import match_pb2
from croupier.wire.errors import InvalidArgument


@dataclass(frozen=True)
class Clocks:
    """A match's clocks, in seconds."""

    decision: float = 5.0
    bank: float = 30.0
    max_timeouts: int = 3
    grace: float = 10.0
    max_refusals: int = 100
    """Refused moves after which a seat is forfeited (0: never). A bot that keeps sending what the
    rules refuse is broken, and each refusal costs a journal record and a frame for everyone."""

    def __post_init__(self) -> None:
        for name in ("decision", "bank", "grace"):
            if not 0 <= getattr(self, name) <= 86_400:
                raise InvalidArgument(f"clock {name} must be 0 to 86400 s, not {getattr(self, name)}")
        if not 1 <= self.max_timeouts <= 1_000:
            raise InvalidArgument(f"max_timeouts must be 1 to 1000, not {self.max_timeouts}")
        if not 0 <= self.max_refusals <= 100_000:
            raise InvalidArgument(f"max_refusals must be 0 (never) to 100000, not {self.max_refusals}")

    def merged(self, pb: match_pb2.Clocks) -> Clocks:
        """These clocks with the fields set in ``pb`` (milliseconds) replacing ours."""
        changes: dict[str, Any] = {}
        for name, proto_name in (("decision", "decision_ms"), ("bank", "bank_ms"), ("grace", "grace_ms")):
            if pb.HasField(proto_name):  # type: ignore[arg-type]  # the stubs type the names as literals
                changes[name] = getattr(pb, proto_name) / 1000
        for name in ("max_timeouts", "max_refusals"):
            if pb.HasField(name):  # type: ignore[arg-type]
                changes[name] = getattr(pb, name)
        return dataclasses.replace(self, **changes)

    def to_proto(self) -> match_pb2.Clocks:
        return match_pb2.Clocks(
            decision_ms=round(self.decision * 1000),
            bank_ms=round(self.bank * 1000),
            max_timeouts=self.max_timeouts,
            grace_ms=round(self.grace * 1000),
            max_refusals=self.max_refusals,
        )

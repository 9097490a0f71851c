"""Several duplicate sets to one task where sets are short: a cluster's cost of a task (a few
milliseconds between client, scheduler and worker, more on a loaded machine) is as large as a set
of fast bots, and batching them keeps the workers playing rather than waiting for their next set.

inprocess_run.play_sets hands its executor batches (``play_batch``): one set a task until a set has
been timed, then as many as fill ``seconds`` of play at the pace the latest batch was played at
(``Sizes``). Each set of a batch keeps its own result, so the results are those of sets played one
a task: a batch the cluster loses with its worker is played again whole (one task, one result),
and each of its sets is recorded once. A set that fails stops its batch there: the sets before it
are handed back with it, and the run's one line names that set.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")


@dataclass(frozen=True, slots=True)
class Batch(Generic[Result]):
    """What a batch's task hands back: each set's result, in the batch's order, up to the set that
    failed (``failure``, the batch's next set) if one did."""

    played: tuple[Result, ...]
    seconds: float
    """The worker's time on the sets played."""
    failure: Exception | None = None


def play_batch(player: Callable[[Job], Result], jobs: Sequence[Job]) -> Batch[Result]:
    """On a worker: play the batch's sets one after another with ``player``, timed; stop at one that
    fails, its error kept for the set it belongs to."""
    played: list[Result] = []
    start = time.perf_counter()
    for job in jobs:
        try:
            played.append(player(job))
        except Exception as exc:
            return Batch(tuple(played), time.perf_counter() - start, exc)
    return Batch(tuple(played), time.perf_counter() - start)


MOST = 100
"""Sets a batch carries at most, however fast: what a worker's loss or a decided test throws away
stays small (at 2 ms a set of trivial bots, a task still carries a fifth of a second)."""


class Sizes:
    """How many sets the next batch carries: enough for ``seconds`` of play at the pace of the latest
    batch, MOST at most; one a batch with ``seconds`` 0 (as the local pool plays them) and until a
    set has been timed. The latest pace, not the mean: a worker's first set also loads the bots."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.pace = 0.0
        """Seconds a set in the latest batch timed: 0 before any."""

    def measured(self, batch: Batch[Any]) -> None:
        if batch.played and batch.failure is None:
            self.pace = batch.seconds / len(batch.played)

    def next(self) -> int:
        if self.seconds <= 0 or self.pace <= 0:
            return 1
        return max(1, min(MOST, math.ceil(self.seconds / self.pace)))

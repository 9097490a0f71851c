"""What choosing a ladder's next set costs, in CPU, with many bots connected.

Usage: python -m bench.matchmaking_speed [--bots N ...] [--sets N] [--choices N] [--seats N]

N bots of spread strengths (every tenth one new, with no result yet), a history of ``--sets``
two-rotation sets between random pairs (won as their strengths say), rated at their true
strengths: a ladder fits in a worker process (clients/ladder/arena.py's FitWorker), not when
it chooses (and a fit of a thousand bots is the ratings issue's: it needs tens of GiB today).
Twice: with the provisional rule (most bots are still provisional here, the widest is seated
first), and with the criterion alone (every group weighed).
Then ``--choices`` choices in a row, each seated and added as a ladder does (its result counted
at the fit's strengths), every bot free. The figure is CPU seconds per choice
(time.process_time), the median and the worst, with the machine's load. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from croupier.clients.ladder.matchmaking import Fit, Matchmaker
from croupier.clients.results.ratings import RatedSet


def duel(rng: random.Random, a: str, b: str, strength: dict[str, float]) -> RatedSet:
    p = 1.0 / (1.0 + 10 ** ((strength[b] - strength[a]) / 400.0))
    matches = tuple({a: 1, b: 2} if rng.random() < p else {a: 2, b: 1} for _ in range(2))
    return RatedSet("bench", tuple(sorted((a, b))), matches)


def run(bots: int, sets: int, choices: int, seats: int, seed: int, width: float) -> tuple[float, float]:
    """The median and worst CPU seconds of a choice."""
    rng = random.Random(seed)
    names = [f"bot{i:04d}" for i in range(bots)]
    strength = {name: rng.gauss(1500, 200) for name in names}
    veterans = [name for i, name in enumerate(names) if i % 10]
    history = [duel(rng, *rng.sample(veterans, 2), strength) for _ in range(sets)]
    maker = Matchmaker(seats, seats if seats == 2 else 6, provisional_width=width, fits_itself=False)
    maker.reset(history)
    maker.fitted(Fit(strength, {}, 0))
    maker.information()  # the history counted at those strengths, as a fit in the worker does
    spent = []
    for _ in range(choices):
        started = time.process_time()
        group = maker.choose(names, present=names)
        assert group is not None
        maker.seated(group, names, present=names)
        spent.append(time.process_time() - started)
        if seats == 2:
            maker.add(duel(rng, *group, strength))
    return statistics.median(spent), max(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--bots", type=int, action="append", help="(repeatable; default: 100 and 1000)")
    parser.add_argument("--sets", type=int, default=5000, help="sets in the history (default: %(default)s)")
    parser.add_argument("--choices", type=int, default=50, help="choices timed (default: %(default)s)")
    parser.add_argument("--seats", type=int, default=2, help="seats per set (default: %(default)s)")
    args = parser.parse_args()
    print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    for bots in args.bots or [100, 1000]:
        for rule, width in (("provisional rule", 400.0), ("criterion alone", 1e9)):
            median, worst = run(bots, args.sets, args.choices, args.seats, bots, width)
            print(
                f"{bots} bots connected, {args.sets} sets, {args.seats} seats, {rule}: a choice takes "
                f"{median * 1e3:.2f} ms of CPU (median of {args.choices}; worst {worst * 1e3:.2f} ms)"
            )
    print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())} after")


if __name__ == "__main__":
    main()

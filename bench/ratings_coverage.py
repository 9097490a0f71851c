"""Do the bootstrap's 95% intervals cover the truth? Known-strength pools, rated both ways.

Usage: python -m bench.ratings_coverage [--bots 64] [--pools 30] [--samples 300] [--sets-per-bot 8]

Each pool draws its bots' strengths and results as bench/ratings_speed.py does (three-seat sets,
6 rotations each, strengths 174 Elo apart in standard deviation), then rates them with the
bootstrap that refits every sample (``refit``) and with the one that takes one Newton step from
the full fit (``one-step``, the default beyond ``ratings.REFIT_BOTS`` bots). Printed per method:
the share of the bots' 95% intervals (largest group) that hold the true rating, anchored as the
fit is (``ratings.Anchor``), and their mean width. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from bench import ratings_speed
from bench.harness import machine
from croupier.clients.results import ratings


def pool(bots: int, sets_per_bot: float, seed: int) -> tuple[list[ratings.RatedSet], dict[str, float]]:
    """The sets of one pool and its bots' true ratings on the anchored Elo scale."""
    rng = random.Random(seed)
    names = [f"bot{number:04d}" for number in range(bots)]
    strength = {name: rng.gauss(0.0, ratings_speed.SPREAD) for name in names}
    sets = []
    for _ in range(max(1, round(bots * sets_per_bot / ratings_speed.SEATS))):
        group = tuple(sorted(rng.sample(names, ratings_speed.SEATS)))
        matches = tuple(ratings_speed.ranking(group, strength, rng) for _ in range(ratings_speed.ROTATIONS))
        sets.append(ratings.RatedSet("pool", group, matches))
    seen = sorted({bot for rated in sets for bot in rated.group})
    anchored = ratings.Anchor(seen, sets)(np.array([[strength[bot] for bot in seen]]))[0]
    return sets, {bot: ratings.ANCHOR + ratings.SCALE * anchored[i] for i, bot in enumerate(seen)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bots", type=int, default=64)
    parser.add_argument("--pools", type=int, default=30)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--sets-per-bot", type=float, default=8.0)
    args = parser.parse_args()
    print(f"# {machine()}")
    covered: dict[ratings.Bootstrap, list[bool]] = {method: [] for method in ratings.Bootstrap}
    widths: dict[ratings.Bootstrap, list[float]] = {method: [] for method in ratings.Bootstrap}
    seconds = dict.fromkeys(ratings.Bootstrap, 0.0)
    for number in range(args.pools):
        sets, truth = pool(args.bots, args.sets_per_bot, 7919 * number + args.bots)
        for method in ratings.Bootstrap:
            started = time.process_time()
            table = ratings.rate(sets, samples=args.samples, method=method)
            seconds[method] += time.process_time() - started
            for row in table:
                if row.group == 0 and row.low is not None and row.high is not None:
                    covered[method].append(row.low <= truth[row.bot] <= row.high)
                    widths[method].append(row.high - row.low)
    for method in ratings.Bootstrap:
        print(
            f"{args.bots} bots, {args.sets_per_bot:g} sets a bot, {args.pools} pools, {method}: "
            f"95% intervals cover {np.mean(covered[method]):.3f} of {len(covered[method])}, "
            f"mean width {np.mean(widths[method]):.0f} Elo, {seconds[method]:.1f} CPU s"
        )


if __name__ == "__main__":
    main()

"""Whether the ladder's scheduling biases its board: a known-truth simulation.

Usage: python -m bench.ladder_honesty [--seeds N] [--first-seed N] [--sets 100,200,400] [--samples N]

Eight bots 80 Elo apart (true ratings 1220 to 1780, mean 1500) play two-seat duplicate sets of two
rotations, each match won by Bradley-Terry odds at the true gap (no draws; the rotations of a set
are independent here, where real cards tie them). One ladder seats the pair the project's
scheduler picks (clients/ladder/matchmaking.py's ``Matchmaker``, choosing on its own fits, the
floor as the ladder sets it), the other cycles through every pair in a shuffled round robin. After
each count of sets the board is rated as ``croupier ratings`` rates it (``ratings.rate``: the
Plackett-Luce fit, the anchored scale, the set bootstrap) and two figures are kept:

- neighbour-gap bias: the fitted gap between each bot and the next one down the true order, minus
  the true 80, averaged over the 7 pairs and the seeds (a ± of two standard errors over seeds);
- coverage: the share of (bot, seed) whose 95% interval holds its true rating, on the board's own
  scale (``ratings.Anchor``'s: the established bots average 1500; the truth is moved the same way).

And, at the last count, where the sets went: the share between true neighbours, and the gap error
of the neighbour pairs that got at most their seed's median of sets against those that got more
(a scheduler that leaves a pair once its gap looks large would leave the gaps too wide by chance).

Figures are printed, nothing is asserted (docs/tournaments.md keeps them), with the machine's load.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import statistics
import time
from collections import Counter

import numpy as np

from croupier.clients.ladder.matchmaking import Matchmaker
from croupier.clients.results.ratings import ANCHOR, SCALE, Anchor, RatedSet, rate

BOTS = 8
GAP = 80.0
ROTATIONS = 2
NAMES = tuple(f"b{i}" for i in range(BOTS))
TRUTH = {name: ANCHOR + GAP * ((BOTS - 1) / 2 - i) for i, name in enumerate(NAMES)}
"""True ratings, best first: 1780 down to 1220."""
SCHEDULERS = ("matchmaker", "uniform")


def play_set(group: tuple[str, ...], rng: random.Random) -> RatedSet:
    a, b = group
    p = 1.0 / (1.0 + 10.0 ** ((TRUTH[b] - TRUTH[a]) / 400.0))
    matches = tuple({a: 1, b: 2} if rng.random() < p else {a: 2, b: 1} for _ in range(ROTATIONS))
    return RatedSet("bench", group, matches)


Figures = dict[int, tuple[list[float], list[bool], list[int]]]


def ladder(how: str, seed: int, checkpoints: list[int], samples: int) -> Figures:
    """At each checkpoint: the 7 neighbour-gap errors, whether each bot's interval covers its
    truth, and the sets each neighbour pair played."""
    rng = random.Random(f"{how}/{seed}")
    maker = Matchmaker(seats=2, rotations=ROTATIONS)
    pairs = list(itertools.combinations(NAMES, 2))
    random.Random(seed).shuffle(pairs)
    sets: list[RatedSet] = []
    out = {}
    for number in range(max(checkpoints)):
        if how == "matchmaker":
            group = maker.choose(NAMES)
            assert group is not None
            maker.seated(group, NAMES)
        else:
            group = tuple(sorted(pairs[number % len(pairs)]))
        rated = play_set(group, rng)
        sets.append(rated)
        maker.add(rated)
        if number + 1 in checkpoints:
            table = {rating.bot: rating for rating in rate(sets, samples=samples)}
            truth = Anchor(NAMES, sets)(np.array([[(TRUTH[bot] - ANCHOR) / SCALE for bot in NAMES]]))[0]
            true_elo = {bot: ANCHOR + SCALE * float(truth[i]) for i, bot in enumerate(NAMES)}
            errors = [table[a].elo - table[b].elo - GAP for a, b in itertools.pairwise(NAMES)]
            covered = [
                table[bot].low is not None
                and table[bot].low <= true_elo[bot] <= (table[bot].high or math.nan)
                for bot in NAMES
            ]
            played = Counter(rated.group for rated in sets)
            out[number + 1] = (errors, covered, [played[a, b] for a, b in itertools.pairwise(sorted(NAMES))])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="ladders per scheduler (default: %(default)s)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--sets", default="100,200,400", help="checkpoints (default: %(default)s)")
    parser.add_argument("--samples", type=int, default=1000, help="bootstrap samples (default: %(default)s)")
    args = parser.parse_args()
    checkpoints = sorted(int(n) for n in args.sets.split(","))
    print(f"load before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(
        f"{BOTS} bots {GAP:g} Elo apart, two-seat sets of {ROTATIONS} rotations, seeds "
        f"{args.first_seed}-{args.first_seed + args.seeds - 1}, {args.samples} bootstrap samples"
    )
    print("| scheduling | sets | neighbour-gap bias (Elo, ±2 SE) | 95% interval coverage | seconds |")
    print("|---|---|---|---|---|")
    figures: dict[str, list[Figures]] = {}
    for how in SCHEDULERS:
        started = time.perf_counter()
        runs = [
            ladder(how, seed, checkpoints, args.samples)
            for seed in range(args.first_seed, args.first_seed + args.seeds)
        ]
        seconds = time.perf_counter() - started
        figures[how] = runs
        for n in checkpoints:
            per_seed = [statistics.fmean(run[n][0]) for run in runs]
            bias = statistics.fmean(per_seed)
            se = statistics.stdev(per_seed) / math.sqrt(len(per_seed)) if len(per_seed) > 1 else math.nan
            covered = [hit for run in runs for hit in run[n][1]]
            print(
                f"| {how} | {n} | {bias:+.1f} ± {2 * se:.1f} | {100 * sum(covered) / len(covered):.1f}% "
                f"of {len(covered)} | {seconds:.0f} (all counts) |"
            )
    print(f"\nat {checkpoints[-1]} sets: sets between true neighbours; gap error of neighbour pairs with")
    print("at most the seed's median of their sets | with more")
    for how, runs in figures.items():
        last = [run[checkpoints[-1]] for run in runs]
        share = statistics.fmean(sum(played) / checkpoints[-1] for _, _, played in last)
        few, many = [], []
        for errors, _, played in last:
            median = statistics.median(played)
            for error, count in zip(errors, played, strict=True):
                (few if count <= median else many).append(error)
        print(
            f"{how}: {100 * share:.0f}%; {statistics.fmean(few):+.1f} Elo ({len(few)} pairs) | "
            + (f"{statistics.fmean(many):+.1f} Elo ({len(many)} pairs)" if many else "none")
        )
    print(f"load after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

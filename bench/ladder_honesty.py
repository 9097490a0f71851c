"""Whether the ladder's scheduling biases its board: a known-truth simulation.

Usage: python -m bench.ladder_honesty [--seeds N] [--first-seed N] [--sets 100,200,400] [--samples N]
       [--truth spread|twins ...]

Two truths, eight bots each. ``spread``: 80 Elo apart (true ratings 1780 down to 1220, mean 1500).
``twins``: seven bots 80 Elo apart and a twin of the fourth, ``b3t``, which draws every match
against it (two identical deterministic bots on duplicate deals) and plays the others at its true
odds. Two-seat duplicate sets of two rotations, each match won by Bradley-Terry odds at the true
gap (no other draws; the rotations of a set are independent here, where real cards tie them).
One ladder seats the pair the project's scheduler picks (clients/ladder/matchmaking.py's
``Matchmaker``, choosing on its own fits, the floor as the ladder sets it, a known tie left
alone), the other cycles through every pair in a shuffled round robin. After each count of sets
the board is rated as ``croupier ratings`` rates it (``ratings.rate``: the Plackett-Luce fit, the
anchored scale, the set bootstrap) and its claims are checked against the truth:

- neighbour-gap bias: the fitted gap between each bot and the next one down the true order, minus
  the true gap, averaged over the 7 pairs and the seeds (a ± of two standard errors over seeds);
- coverage: the share of (bot, seed) whose 95% interval holds its true rating, on the board's own
  scale (``ratings.Anchor``'s: the established bots average 1500; the truth is moved the same way);
- LOS claims: every bot the board puts ahead of the next one down by LOS >= 95% (but a pair the
  ladder knows tied, which its board shows as tied), and the share of those claims that are false
  (the lower one is truly as good or better); with twins, the share of boards claiming LOS >= 95%
  between them, and their share of the sets.

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
from dataclasses import dataclass

import numpy as np

from croupier.clients.ladder.matchmaking import Matchmaker
from croupier.clients.results.ratings import ANCHOR, SCALE, Anchor, RatedSet, rate
from croupier.clients.results.sets import ties_known

BOTS = 8
GAP = 80.0
ROTATIONS = 2
LOS = 0.95
SPREAD = {f"b{i}": ANCHOR + GAP * ((BOTS - 1) / 2 - i) for i in range(BOTS)}
"""True ratings, best first: 1780 down to 1220."""
TWIN = ("b3", "b3t")
TWINS = {f"b{i}": ANCHOR + GAP * (3 - i) for i in range(BOTS - 1)} | {"b3t": ANCHOR}
"""Seven bots 80 apart and a twin of the fourth."""
TRUTHS = {"spread": SPREAD, "twins": TWINS}
SCHEDULERS = ("matchmaker", "uniform")


def play_set(truth: dict[str, float], group: tuple[str, ...], rng: random.Random) -> RatedSet:
    a, b = group
    if {a, b} == set(TWIN):  # identical deterministic bots: every match a draw
        return RatedSet("bench", group, tuple({a: 1, b: 1} for _ in range(ROTATIONS)))
    p = 1.0 / (1.0 + 10.0 ** ((truth[b] - truth[a]) / 400.0))
    matches = tuple({a: 1, b: 2} if rng.random() < p else {a: 2, b: 1} for _ in range(ROTATIONS))
    return RatedSet("bench", group, matches)


@dataclass
class Board:
    """One board's claims against the truth."""

    errors: list[float]
    """Fitted minus true gap of each pair of true neighbours."""
    covered: list[bool]
    claims: int
    """Bots put ahead of the next one down by LOS >= 95%..."""
    false_claims: int
    """...of which the lower one is truly as good or better."""
    twins_claimed: bool
    played: list[int]
    """Sets each pair of true neighbours played."""
    twin_sets: int


def ladder(
    truth: dict[str, float], how: str, seed: int, checkpoints: list[int], samples: int
) -> dict[int, Board]:
    names = sorted(truth, key=lambda bot: (-truth[bot], bot))
    rng = random.Random(f"{how}/{seed}")
    maker = Matchmaker(seats=2, rotations=ROTATIONS)
    pairs = list(itertools.combinations(sorted(names), 2))
    random.Random(seed).shuffle(pairs)
    sets: list[RatedSet] = []
    out = {}
    for number in range(max(checkpoints)):
        if how == "matchmaker":
            group = maker.choose(names)
            assert group is not None
            maker.seated(group, names)
        else:
            group = tuple(sorted(pairs[number % len(pairs)]))
        rated = play_set(truth, group, rng)
        sets.append(rated)
        maker.add(rated)
        if number + 1 in checkpoints:
            out[number + 1] = judge(truth, names, sets, samples)
    return out


def judge(truth: dict[str, float], names: list[str], sets: list[RatedSet], samples: int) -> Board:
    ratings = rate(sets, samples=samples)
    table = {rating.bot: rating for rating in ratings}
    moved = Anchor(names, sets)(np.array([[(truth[bot] - ANCHOR) / SCALE for bot in names]]))[0]
    true_elo = {bot: ANCHOR + SCALE * float(moved[i]) for i, bot in enumerate(names)}
    claims = false = 0
    twins_claimed = False
    ties = ties_known(sets)  # the ladder's board says "tied" for these, not an LOS
    for upper, lower in itertools.pairwise(ratings):
        tied = tuple(sorted((upper.bot, lower.bot))) in ties
        if upper.los_next is not None and upper.los_next >= LOS and not tied:
            claims += 1
            false += truth[upper.bot] <= truth[lower.bot]
            twins_claimed |= {upper.bot, lower.bot} == set(TWIN)
    played = Counter(rated.group for rated in sets)
    return Board(
        [table[a].elo - table[b].elo - (truth[a] - truth[b]) for a, b in itertools.pairwise(names)],
        [
            table[bot].low is not None and table[bot].low <= true_elo[bot] <= (table[bot].high or math.nan)
            for bot in names
        ],
        claims,
        false,
        twins_claimed,
        [played[tuple(sorted((a, b)))] for a, b in itertools.pairwise(names)],
        played[TWIN],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="ladders per scheduler (default: %(default)s)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--sets", default="100,200,400", help="checkpoints (default: %(default)s)")
    parser.add_argument("--samples", type=int, default=1000, help="bootstrap samples (default: %(default)s)")
    parser.add_argument(
        "--truth", action="append", choices=sorted(TRUTHS), help="(repeatable; default: both)"
    )
    args = parser.parse_args()
    checkpoints = sorted(int(n) for n in args.sets.split(","))
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(f"load before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(
        f"{BOTS} bots, two-seat sets of {ROTATIONS} rotations, seeds {seeds.start}-{seeds.stop - 1}, "
        f"{args.samples} bootstrap samples"
    )
    for name in args.truth or list(TRUTHS):
        truth = TRUTHS[name]
        print(f"\ntruth {name}")
        print(
            "| scheduling | sets | neighbour-gap bias (Elo, ±2 SE) | 95% interval coverage | "
            "LOS >= 95% claims, "
            "false | twins: claimed, share of sets | seconds |"
        )
        print("|---|---|---|---|---|---|---|")
        figures: dict[str, list[dict[int, Board]]] = {}
        for how in SCHEDULERS:
            started = time.perf_counter()
            runs = [ladder(truth, how, seed, checkpoints, args.samples) for seed in seeds]
            seconds = time.perf_counter() - started
            figures[how] = runs
            for n in checkpoints:
                boards = [run[n] for run in runs]
                per_seed = [statistics.fmean(board.errors) for board in boards]
                bias = statistics.fmean(per_seed)
                se = statistics.stdev(per_seed) / math.sqrt(len(per_seed)) if len(per_seed) > 1 else math.nan
                covered = [hit for board in boards for hit in board.covered]
                claims = sum(board.claims for board in boards)
                false = sum(board.false_claims for board in boards)
                twins = (
                    f"{sum(board.twins_claimed for board in boards)} of {len(boards)}, "
                    f"{100 * statistics.fmean(board.twin_sets / n for board in boards):.0f}%"
                    if name == "twins"
                    else "-"
                )
                print(
                    f"| {how} | {n} | {bias:+.1f} ± {2 * se:.1f} | {100 * sum(covered) / len(covered):.1f}% "
                    f"of {len(covered)} | {claims}, {100 * false / max(claims, 1):.1f}% | {twins} | "
                    f"{seconds:.0f} (all counts) |"
                )
        print(f"\nat {checkpoints[-1]} sets: sets between true neighbours; gap error of neighbour pairs with")
        print("at most the seed's median of their sets | with more")
        for how, runs in figures.items():
            last = [run[checkpoints[-1]] for run in runs]
            share = statistics.fmean(sum(board.played) / checkpoints[-1] for board in last)
            few, many = [], []
            for board in last:
                median = statistics.median(board.played)
                for error, count in zip(board.errors, board.played, strict=True):
                    (few if count <= median else many).append(error)
            print(
                f"{how}: {100 * share:.0f}%; {statistics.fmean(few):+.1f} Elo ({len(few)} pairs) | "
                + (f"{statistics.fmean(many):+.1f} Elo ({len(many)} pairs)" if many else "none")
            )
    print(f"\nload after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

"""How many games a ladder needs to order its bots, by how it deals: duplicate sets (the luck
cancelled, but a bot holds every seat of a deal: insecure with bots that connect by themselves),
deal pools (one deal at two tables of different bots) and fresh deals (every match its own).

Usage: python -m bench.ladder_deals [--runs N] [--first-seed N] [--max-sets N] [--luck S ...]

A simulation: eight bots of known strength, 100 Elo apart; a deal gives seat 0 an edge L, drawn
from a normal law of deviation S (logits, ``--luck``), and seat 0 wins with probability
logistic(r0 - r1 + L). Everything else is the ladder's own: it schedules by information
(clients/ladder/matchmaking.py: a pool's second table is the best group of the bots not at the
first), and rates what ``sets.evidence`` makes of each set (each table's places) as ``croupier
ratings`` does (Plackett-Luce, set bootstrap of 200
samples), after every ``--every`` sets, until its table shows the true order with every neighbour
ahead of the next by LOS >= 95%. The figure is the games (matches) played then. Printed, nothing
asserted (docs/tournaments.md keeps them).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time

from croupier.clients.ladder.matchmaking import Matchmaker
from croupier.clients.results.ratings import SCALE, RatedSet, rate
from croupier.clients.results.sets import Table, evidence

BOTS = 8
GAP = 100.0
"""Elo between neighbours."""
NAMES = tuple(f"b{k}" for k in range(BOTS))
"""b0 the strongest: the true order."""
STRENGTH = {name: -k * GAP / SCALE for k, name in enumerate(NAMES)}
LOS = 0.95
SAMPLES = 200
DEALINGS = ("duplicate", "pool", "fresh")


def places(rng: random.Random, seats: tuple[str, str], luck: float) -> dict[str, int]:
    """One game of the two: seat 0 wins with logistic(r0 - r1 + luck)."""
    edge = STRENGTH[seats[0]] - STRENGTH[seats[1]] + luck
    first_wins = rng.random() < 1.0 / (1.0 + math.exp(-edge))
    return {seats[0]: 1 if first_wins else 2, seats[1]: 2 if first_wins else 1}


def deal_set(
    rng: random.Random, dealing: str, groups: tuple[tuple[str, ...], ...], spread: float
) -> RatedSet:
    """One set: a duplicate set or fresh pair of games of the one group, or a pool's two tables."""
    deal = rng.getrandbits(63)
    tables = []
    if dealing == "pool":
        luck = rng.gauss(0.0, spread)
        for number, group in enumerate(groups):
            seats = (group[0], group[1]) if number % 2 == 0 else (group[1], group[0])
            tables.append(Table(deal, seats, places(rng, seats, luck)))
    else:
        (group,) = groups
        luck = rng.gauss(0.0, spread)
        for seats in [(group[0], group[1]), (group[1], group[0])]:
            if dealing == "fresh":  # a deal of its own; a duplicate's second seating holds the same cards
                luck, deal = rng.gauss(0.0, spread), deal + 1
            tables.append(Table(deal, seats, places(rng, seats, luck)))
    bots = tuple(sorted({bot for table in tables for bot in table.seats}))
    return RatedSet("bench", bots, evidence(tables))


def separated(sets: list[RatedSet], seed: int) -> bool:
    table = rate(sets, samples=SAMPLES, seed=seed)
    if [rating.bot for rating in table] != list(NAMES):
        return False
    return all(rating.los_next is not None and rating.los_next >= LOS for rating in table[:-1])


def run(dealing: str, seed: int, spread: float, max_sets: int, every: int) -> int | None:
    """Games to a separated true order (None: not within ``max_sets``)."""
    rng = random.Random(f"{seed}/{dealing}/{spread}")
    maker = Matchmaker(seats=2, rotations=1 if dealing == "pool" else 2)
    sets: list[RatedSet] = []
    games = 0
    for number in range(max_sets):
        if dealing == "pool":
            groups = maker.choose_tables(NAMES, 2)
            assert groups is not None
        else:
            group = maker.choose(NAMES)
            assert group is not None
            maker.seated(group, NAMES)
            groups = (group,)
        rated = deal_set(rng, dealing, groups, spread)
        sets.append(rated)
        maker.add(rated)
        games += 2
        if (number + 1) % every == 0 and separated(sets, seed):
            return games
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="seeds per dealing (default: %(default)s)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--max-sets", type=int, default=1500, help="give up after this many sets")
    parser.add_argument("--every", type=int, default=8, help="rate after every N sets (default: %(default)s)")
    parser.add_argument(
        "--luck",
        type=float,
        action="append",
        help="the deal's deviation, logits (repeatable; default 1 and 2)",
    )
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; bots {', '.join(NAMES)}, {GAP:g} Elo apart")
    rows = []
    for spread in args.luck or [1.0, 2.0]:
        medians = {}
        for dealing in DEALINGS:
            started = time.perf_counter()
            seeds = range(args.first_seed, args.first_seed + args.runs)
            found = [run(dealing, seed, spread, args.max_sets, args.every) for seed in seeds]
            shown = ", ".join(str(g) if g is not None else f">{2 * args.max_sets}" for g in found)
            medians[dealing] = statistics.median(g if g is not None else math.inf for g in found)
            print(
                f"luck {spread:g} {dealing:9}: games {shown}; median {medians[dealing]:g} "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
        rows.append(
            f"| {spread:g} | {medians['duplicate']:g} | {medians['pool']:g} | {medians['fresh']:g} | "
            f"{medians['pool'] / medians['duplicate']:.2f} | {medians['fresh'] / medians['duplicate']:.2f} |"
        )
    print("\n| luck (logits) | duplicate | pool | fresh | pool / duplicate | fresh / duplicate |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()

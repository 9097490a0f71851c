"""How many games a ladder needs to order its bots, by how it deals: duplicate sets (the luck
cancelled, but a bot holds every seat of a deal: insecure with bots that connect by themselves),
deal pools (one deal at two tables of different bots) and fresh deals (every match its own).

Usage: python -m bench.ladder_deals [--runs N] [--first-seed N] [--max-sets N] [--luck S ...]
       [--dealing D ...] [--seen F]

A simulation: eight bots of known strength, 100 Elo apart; a deal gives seat 0 an edge L, drawn
from a normal law of deviation S (logits, ``--luck``), and seat 0 wins with probability
logistic(r0 - r1 + L). Everything else is the ladder's own: it schedules by information
(clients/ladder/matchmaking.py: a pool's second table is the best group of the bots not at the
first), and rates what ``sets.evidence`` makes of each set (each table's places) as ``croupier
ratings`` does (Plackett-Luce, set bootstrap of 200
samples), after every ``--every`` sets, until its table shows the true order with every neighbour
ahead of the next by LOS >= 95%. The figure is the games (matches) played then. Printed, nothing
asserted (docs/tournaments.md keeps them).

``pool-luck`` and ``fresh-luck`` deal as ``pool`` and ``fresh`` and rate each match's points less
the deal's luck, as a ladder with ``luck = true`` does (ratings.set_choices, pairwise): the luck is
V(the deal) - E[V], V the chance seat 0 wins between equal bots given the share ``--seen`` of the
edge's variance that V can read (the rest, unseen, blurs it: logistic(seen / sqrt(1 + pi
var(unseen) / 8))); E[V] is 1/2, the edge's law being symmetric. Unbiased for any share.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time

from croupier.clients.ladder.matchmaking import Matchmaker
from croupier.clients.results.ratings import SCALE, Model, RatedSet, rate
from croupier.clients.results.sets import Table, evidence

BOTS = 8
GAP = 100.0
"""Elo between neighbours."""
NAMES = tuple(f"b{k}" for k in range(BOTS))
"""b0 the strongest: the true order."""
STRENGTH = {name: -k * GAP / SCALE for k, name in enumerate(NAMES)}
LOS = 0.95
SAMPLES = 200
DEALINGS = ("duplicate", "pool", "fresh", "pool-luck", "fresh-luck")


def places(rng: random.Random, seats: tuple[str, str], luck: float) -> dict[str, int]:
    """One game of the two: seat 0 wins with logistic(r0 - r1 + luck)."""
    edge = STRENGTH[seats[0]] - STRENGTH[seats[1]] + luck
    first_wins = rng.random() < 1.0 / (1.0 + math.exp(-edge))
    return {seats[0]: 1 if first_wins else 2, seats[1]: 2 if first_wins else 1}


def deal_set(
    rng: random.Random, dealing: str, groups: tuple[tuple[str, ...], ...], spread: float, seen: float = 1.0
) -> RatedSet:
    """One set: a duplicate set or fresh pair of games of the one group, or a pool's two tables;
    with ``-luck``, each match's luck as V reads the share ``seen`` of its deal's edge."""
    deal = rng.getrandbits(63)
    tables = []
    lucks = []
    pool = dealing.startswith("pool")

    def edge() -> tuple[float, float]:
        """A deal's edge to seat 0, and the luck V reads in it (seat 0's, against seat 1)."""
        visible = rng.gauss(0.0, spread * math.sqrt(seen))
        hidden = rng.gauss(0.0, spread * math.sqrt(1.0 - seen)) if seen < 1 else 0.0  # the old draws
        blur = math.sqrt(1.0 + math.pi * spread**2 * (1.0 - seen) / 8.0)
        return visible + hidden, 1.0 / (1.0 + math.exp(-visible / blur)) - 0.5

    luck, read = edge()
    if pool:
        seatings = [(g[0], g[1]) if number % 2 == 0 else (g[1], g[0]) for number, g in enumerate(groups)]
    else:
        ((first, second),) = groups
        seatings = [(first, second), (second, first)]
    for seats in seatings:
        if dealing.startswith("fresh"):  # a deal of its own; a duplicate's twin holds the same cards
            (luck, read), deal = edge(), deal + 1
        tables.append(Table(deal, seats, places(rng, seats, luck)))
        lucks.append({seats[0]: read, seats[1]: -read})
    bots = tuple(sorted({bot for table in tables for bot in table.seats}))
    return RatedSet("bench", bots, evidence(tables), tuple(lucks) if dealing.endswith("-luck") else ())


def separated(sets: list[RatedSet], seed: int, model: Model) -> bool:
    table = rate(sets, samples=SAMPLES, seed=seed, model=model)
    if [rating.bot for rating in table] != list(NAMES):
        return False
    return all(rating.los_next is not None and rating.los_next >= LOS for rating in table[:-1])


def run(dealing: str, seed: int, spread: float, max_sets: int, every: int, seen: float = 1.0) -> int | None:
    """Games to a separated true order (None: not within ``max_sets``)."""
    rng = random.Random(f"{seed}/{dealing.removesuffix('-luck')}/{spread}")  # -luck: the same games
    model = Model.PAIRWISE if dealing.endswith("-luck") else Model.PLACKETT_LUCE  # as a ladder's
    pool = dealing.startswith("pool")
    maker = Matchmaker(seats=2, rotations=1 if pool else 2, model=model)
    sets: list[RatedSet] = []
    games = 0
    for number in range(max_sets):
        if pool:
            groups = maker.choose_tables(NAMES, 2)
            assert groups is not None
        else:
            group = maker.choose(NAMES)
            assert group is not None
            maker.seated(group, NAMES)
            groups = (group,)
        rated = deal_set(rng, dealing, groups, spread, seen)
        sets.append(rated)
        maker.add(rated)
        games += 2
        if (number + 1) % every == 0 and separated(sets, seed, model):
            return games
    return None


def ratings_at(
    dealing: str, seed: int, spread: float, sets: int, seen: float = 1.0
) -> tuple[dict[str, float], dict[str, float]]:
    """The ladder's ratings after ``sets`` sets (centred), read plain (Plackett-Luce) and less the
    deal's luck (pairwise) from the same games (scheduled on the plain reading), so the two differ by
    the reading alone."""
    from croupier.clients.ladder.matchmaking import refit

    rng = random.Random(f"{seed}/{dealing}/{spread}")
    pool = dealing.startswith("pool")
    maker = Matchmaker(seats=2, rotations=1 if pool else 2)
    lucky: list[RatedSet] = []
    for _ in range(sets):
        if pool:
            groups = maker.choose_tables(NAMES, 2)
            assert groups is not None
        else:
            group = maker.choose(NAMES)
            assert group is not None
            maker.seated(group, NAMES)
            groups = (group,)
        rated = deal_set(rng, f"{dealing}-luck", groups, spread, seen)
        lucky.append(rated)
        maker.add(RatedSet(rated.tournament, rated.group, rated.matches))

    def centred(elo: dict[str, float]) -> dict[str, float]:
        mean = statistics.fmean(elo[n] for n in NAMES)
        return {n: elo[n] - mean for n in NAMES}

    return centred(refit(maker.sets).elo), centred(refit(lucky, model=Model.PAIRWISE).elo)


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
    parser.add_argument("--dealing", action="append", choices=DEALINGS, help="(repeatable; default all)")
    parser.add_argument("--seen", type=float, default=1.0, help="-luck: the share of the edge V reads")
    parser.add_argument(
        "--at",
        type=int,
        help="instead: the ratings' RMS error after N sets, plain and less luck (pool, fresh)",
    )
    parser.add_argument("--accuracy", type=float, default=25.0, help="with --at: the spread aimed at, Elo")
    args = parser.parse_args()
    if args.at:
        return errors(args)
    dealings = args.dealing or list(DEALINGS)
    print(f"load average {os.getloadavg()[0]:.2f}; bots {', '.join(NAMES)}, {GAP:g} Elo apart; {args}")
    rows = []
    for spread in args.luck or [1.0, 2.0]:
        medians = {}
        for dealing in dealings:
            started = time.perf_counter()
            seeds = range(args.first_seed, args.first_seed + args.runs)
            found = [run(dealing, seed, spread, args.max_sets, args.every, args.seen) for seed in seeds]
            shown = ", ".join(str(g) if g is not None else f">{2 * args.max_sets}" for g in found)
            medians[dealing] = statistics.median(g if g is not None else math.inf for g in found)
            print(
                f"luck {spread:g} {dealing:10}: games {shown}; median {medians[dealing]:g} "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
        rows.append(f"| {spread:g} | " + " | ".join(f"{medians[d]:g}" for d in dealings) + " |")
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    print("| luck (logits) | " + " | ".join(dealings) + " |")
    print("|---|" + "---|" * len(dealings))
    print("\n".join(rows))


def errors(args: argparse.Namespace) -> None:
    """The ratings' spread after ``--at`` sets over the seeds (each bot's standard deviation, the
    root of their mean square: what an interval's width follows; the deal's luck also pulls both
    readings' gaps in alike, which is not counted), plain and less luck on the same games; the sets
    to a spread of ``--accuracy`` follow (it falls as one over the root of the sets)."""
    dealings = [d for d in args.dealing or ("pool", "fresh") if not d.endswith("-luck")]
    print(f"load average {os.getloadavg()[0]:.2f}; {args}")
    head = f"spread after {args.at} sets, Elo | sets to {args.accuracy:g} Elo"
    print(f"| luck (logits) | dealing | reading | {head} |\n|---|---|---|---|---|")
    for spread in args.luck or [1.0, 2.0]:
        for dealing in dealings:
            seeds = range(args.first_seed, args.first_seed + args.runs)
            found = [ratings_at(dealing, seed, spread, args.at, args.seen) for seed in seeds]
            for number, reading in enumerate(("plain", "less luck")):
                runs = [pair[number] for pair in found]
                each = [statistics.variance([run[name] for run in runs]) for name in NAMES]
                sd = math.sqrt(statistics.fmean(each))
                sets = args.at * (sd / args.accuracy) ** 2
                print(f"| {spread:g} | {dealing} | {reading} | {sd:.1f} | {sets:.0f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

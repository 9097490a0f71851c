"""How many games a ladder needs to rank its bots, scheduled by information or uniformly.

Usage: python -m bench.ladder_scheduling [--game NAME ...] [--runs N] [--first-seed N] [--max-sets N]
       [--every N]

Eight bots of known order: the bundled heuristic playing a share q of its moves at random, q from
0 to 1 in equal steps (bench/sprt_calibration.py's ``Mixed``); a larger share is a weaker bot.
Two ladders play duplicate sets of two seats on the same deals (the k-th set of each is dealt
from the same secret and deal number): one seats the group the ladder's matchmaking
(clients/ladder/matchmaking.py) picks, the other cycles uniformly through every pair, in a
round robin. After every ``--every`` sets each is rated as ``croupier ratings`` rates (Plackett-
Luce, set bootstrap, here 200 samples) and the figure is the games (matches) played when the
ladder first holds its order decided, by what it knows alone: every bot of its table ahead of the
next one down by LOS >= 95%, or known tied with it (the matchmaker's ``known_ties``). Whether that
order is the true one is checked after, not used to stop. Also the slowest bot's share of sets
against the mean (1: even; the starvation floor keeps it from 0).

Sets are played in-process (clients/author/inprocess.py), one after another, rather than over gRPC: the
scheduling is what is measured, and a referee would only make it slower. The real ladder chooses
a set whenever a bot is free, several at once; here every set's result is known before the next
is chosen. Figures are printed, nothing is asserted (docs/tournaments.md keeps them).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence

from bench.sprt_calibration import OPTIONS, mixed
from croupier.clients.author.inprocess import play
from croupier.clients.ladder.matchmaking import Matchmaker, fair_share
from croupier.clients.results.ratings import RatedSet, rate
from croupier.clients.results.schedule import Rotations, duplicate_set, rotation_count
from croupier.engine.games import get_game

BOTS = 8
SHARES = tuple(round(k / (BOTS - 1), 3) for k in range(BOTS))
"""Each bot's share of random moves: bot 0 the plain heuristic, bot 7 random."""
NAMES = tuple(f"q{share:.2f}" for share in SHARES)
LOS = 0.95
SAMPLES = 200
Chooser = Callable[[int], tuple[str, ...]]


def decided(sets: Sequence[RatedSet], seed: int, ties: set[tuple[str, str]]) -> list[str] | None:
    """The table's order if the ladder holds it decided: every bot ahead of the next one down by
    LOS >= 95% or known tied with it (``ties``), all of them rated; else None."""
    table = rate(sets, samples=SAMPLES, seed=seed)
    if len(table) < len(NAMES):
        return None
    for upper, lower in itertools.pairwise(table):
        sure = upper.los_next is not None and upper.los_next >= LOS
        if not sure and tuple(sorted((upper.bot, lower.bot))) not in ties:
            return None
    return [rating.bot for rating in table]


Outcome = tuple[int | None, bool, float, float]


def run(game: str, how: str, seed: int, max_sets: int, every: int) -> Outcome:
    """Games to an order the ladder holds decided (None: not within ``max_sets``), whether it is the
    true one, the slowest bot's share of sets against the mean, and seconds spent choosing."""
    spec = get_game(game)
    options = spec.options(OPTIONS[game])
    rotations = rotation_count(2, Rotations.WILLIAMS)
    factories = {name: mixed(share, f"{seed}/{name}") for name, share in zip(NAMES, SHARES, strict=True)}
    secret = random.Random(seed).randbytes(32)
    maker = Matchmaker(seats=2, rotations=rotations)
    pairs = list(itertools.combinations(NAMES, 2))
    random.Random(seed).shuffle(pairs)
    sets: list[RatedSet] = []
    counts: Counter[str] = Counter(dict.fromkeys(NAMES, 0))
    choosing = 0.0
    for number in range(max_sets):
        started = time.perf_counter()
        if how == "information":
            group = maker.choose(NAMES)
            assert group is not None
            maker.seated(group, NAMES)
        else:
            group = tuple(sorted(pairs[number % len(pairs)]))
        choosing += time.perf_counter() - started
        duplicate = duplicate_set(game, group, 0, 0, number, seed=seed, secret=secret)
        places = []
        for match in duplicate.matches:
            played = play(
                spec, options, match.seed, [factories[bot] for bot in match.seats], names=match.seats
            )
            places.append(dict(zip(match.seats, played.places, strict=True)))
        rated = RatedSet("bench", group, tuple(places))
        sets.append(rated)
        maker.add(rated)
        counts.update(group)
        if (number + 1) % every == 0 and (order := decided(sets, seed, maker.known_ties())) is not None:
            return (number + 1) * rotations, order == list(NAMES), fair_share(counts), choosing
    return None, False, fair_share(counts), choosing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--game", action="append", choices=sorted(OPTIONS), help="(repeatable; default: all)")
    parser.add_argument(
        "--runs", type=int, default=3, help="seeds per game and scheduler (default: %(default)s)"
    )
    parser.add_argument("--first-seed", type=int, default=0, help="seeds from this one on (default: 0)")
    parser.add_argument("--max-sets", type=int, default=1500, help="give up after this many sets")
    parser.add_argument("--every", type=int, default=8, help="rate after every N sets (default: %(default)s)")
    args = parser.parse_args()
    print(f"load before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"bots: {', '.join(NAMES)} (share of random moves; the true order)")
    lines = []
    for game in args.game or ["platinum_fish"]:
        figures: dict[str, list[Outcome]] = {}
        for how in ("information", "uniform"):
            seeds = range(args.first_seed, args.first_seed + args.runs)
            figures[how] = [run(game, how, seed, args.max_sets, args.every) for seed in seeds]
            for seed, (games, right, share, choosing) in zip(seeds, figures[how], strict=True):
                reached = (
                    f"{games} games, the {'true' if right else 'WRONG'} order"
                    if games is not None
                    else f"not within {args.max_sets} sets"
                )
                print(
                    f"{game} {how:11} seed {seed}: {reached}; slowest bot {share:.2f} of the mean; "
                    f"choosing took {choosing:.1f} s"
                )
        medians = {
            how: statistics.median(g if g is not None else float("inf") for g, _, _, _ in runs)
            for how, runs in figures.items()
        }
        ratio = medians["information"] / medians["uniform"] if medians["uniform"] else float("nan")
        slowest = {how: min(share for _, _, share, _ in runs) for how, runs in figures.items()}
        wrong = {
            how: sum(g is not None and not right for g, right, _, _ in runs) for how, runs in figures.items()
        }
        lines.append(
            f"| {game} | {medians['information']:g} | {medians['uniform']:g} | {ratio:.2f} | "
            f"{slowest['information']:.2f} | {slowest['uniform']:.2f} | "
            f"{wrong['information']} | {wrong['uniform']} |"
        )
    print(
        "\n| game | games, information (median) | games, uniform (median) | ratio | slowest share, "
        "information | slowest share, uniform | wrong orders, information | wrong orders, uniform |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(lines))
    print(f"load after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

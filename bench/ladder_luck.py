"""How many sets a ladder needs to pin two bots' gap within a given accuracy, with and without the
luck correction, dealing as a ladder does (pools, fresh deals) and as duplicate would (insecure).

Usage: python -m bench.ladder_luck [--game G] [--deals N] [--q Q] [--elo E] [--seed S] [--workers W]

Played in-process: the heuristic (A) against the heuristic playing a share ``q`` of its moves at
random (B), on N deals. On a ladder no bot sees a deal twice, so a pair plays each deal in one
seating: a pool's table (one match of the pair per set; the other table is another pair) and a
fresh set's rotation (each on a deal of its own: two matches of the pair per set) are the same unit,
a match on a deal of its own, A's seat alternating. Its luck is measured as the ladder measures it
(results/luck.py's LuckMeter with the game's default V, the deal counted as chance: ladder/epoch.py's
``luck_deal``), and the same deal is also played in both seatings, plain: the duplicate set a
ladder may not deal. Printed, per reading, the spread of a match's pair points (a duplicate set's,
per match), the correction's mean (zero for any V) with its standard error, and the matches and
sets (a pool's holds one match of the pair, a fresh or duplicate set two) a pair needs for a 95%
interval of ±E Elo on its gap: n = (1.96 σ · 400 / (ln 10 · s(1 − s) · E))²
at A's score s. Nothing is asserted (docs/tournaments.md keeps the figures).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass

from bench.sprt_calibration import OPTIONS, mixed
from croupier.clients.author.inprocess import play, pool
from croupier.clients.results.luck import LuckMeter, default_evaluator
from croupier.clients.results.luck_journal import MEASURED
from croupier.clients.results.sets import pair_points
from croupier.engine.games import get_game


@dataclass(frozen=True)
class Deal:
    single: float
    """A's pair points in its match on the deal, in seat ``deal % 2``."""
    luck: float
    """The luck chance gave A in that match, the deal included."""
    duplicate: float
    """A's mean points over both seatings of the deal (plain)."""


def one_deal(game: str, seed: int, number: int, q: float) -> Deal:
    spec = get_game(game)
    options = spec.options(OPTIONS[game])
    deal = random.Random(f"{seed}/{number}").getrandbits(63)
    evaluator = default_evaluator(game)  # the ladder's: what an epoch commits to
    points = []
    single = luck = 0.0
    for a in (0, 1):  # A's seat
        factories = [mixed(0.0 if seat == a else q, f"{seed}/{number}/{a}/{seat}") for seat in range(2)]
        measured = a == number % 2
        meter = LuckMeter(evaluator, [(a, 1 - a)], fresh=True) if measured else None
        played = play(spec, options, deal, factories, luck=meter)
        points.append(pair_points(played.places[a], played.places[1 - a]))
        if meter is not None:
            single, luck = points[-1], meter.luck[(a, 1 - a)]
    return Deal(single, luck, sum(points) / 2)


def _run(job: tuple[str, int, int, float]) -> Deal:
    return one_deal(*job)


def needed(sd: float, score: float, elo: float) -> float:
    """Matches (or sets, given a set's spread) for a 95% interval of ±``elo`` on the gap."""
    slope = math.log(10) * score * (1 - score) / 400  # d score / d Elo
    return (1.96 * sd / (slope * elo)) ** 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ladder_luck", description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="chinese_ten", choices=sorted(MEASURED))
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--q", type=float, default=0.5, help="B's share of random moves")
    parser.add_argument("--elo", type=float, default=50.0, help="the accuracy: half the 95%% interval, Elo")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {args}", flush=True)
    started = time.monotonic()
    with pool(args.workers) as executor:
        deals = list(
            executor.map(_run, [(args.game, args.seed, n, args.q) for n in range(args.deals)], chunksize=8)
        )
    print(
        f"{len(deals)} deals in {time.monotonic() - started:.0f} s; load {os.getloadavg()[0]:.1f}", flush=True
    )
    single = [d.single for d in deals]
    corrected = [d.single - d.luck for d in deals]
    duplicate = [d.duplicate for d in deals]
    luck = [d.luck for d in deals]
    score = statistics.fmean(single)
    n = len(deals)
    print(
        f"A's score {score:.4f} (duplicate {statistics.fmean(duplicate):.4f}, corrected "
        f"{statistics.fmean(corrected):.4f}); the correction's mean {statistics.fmean(luck):+.4f} ± "
        f"{statistics.stdev(luck) / n**0.5:.4f}"
    )
    score = min(max(score, 0.05), 0.95)
    plain_sd, corrected_sd = statistics.stdev(single), statistics.stdev(corrected)
    readings = [  # a reading, a match's spread, the pair's matches in one set
        ("duplicate (insecure), plain", statistics.stdev(duplicate) * math.sqrt(2), 2),
        ("pool, plain", plain_sd, 1),
        ("pool, less luck", corrected_sd, 1),
        ("fresh, plain", plain_sd, 2),
        ("fresh, less luck", corrected_sd, 2),
    ]
    print(f"\n| {args.game}, q {args.q:g}, ±{args.elo:g} Elo | sd of a match | a pair's matches | its sets |")
    print("|---|---|---|---|")
    for name, sd, per_set in readings:
        matches = needed(sd, score, args.elo)
        print(f"| {name} | {sd:.3f} | {matches:.0f} | {matches / per_set:.0f} |")
    ratio = statistics.variance(corrected) / statistics.variance(single)
    print(f"\n{args.game}: less luck / plain, per match on a deal of its own: variance ratio {ratio:.3f}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

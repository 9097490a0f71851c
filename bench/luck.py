"""What the luck correction (clients/results/luck.py) does to a duplicate set's score, played in-process.

Usage: python -m bench.luck --game NAME [--matches N] [--fresh] [--poor] [--q Q] [--outcomes K]

Two seats: the heuristic (A) against the heuristic playing a share ``q`` of its moves at random (B).
N matches are N / 2 duplicate sets, each one deal in both rotations; its plain score is A's mean
pair points, its corrected score the mean of the pair points less the luck the evaluator measured.
``--decisions``: B tells the meter its policy before each move (AIVAT's decision terms). Printed: the
variance ratio (corrected / plain), the correction's mean (its bias: zero for any V, ``--poor``
reads the scores backwards) with its standard error, and the correction's share of the CPU.
``--fresh`` plays each rotation on a deal of its own with the deal's term as well, and compares its
corrected scores' variance with the plain duplicate scores'. Last line, as issue #46 states it:
``G: variance ratio R (corrected / plain set score), bias B ± SE over N matches`` (with ``--fresh``,
the same for fresh deals against plain duplicate, the duplicate line above it). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from bench.sprt_calibration import OPTIONS, Mixed, mixed
from croupier.clients.author.inprocess import play, pool
from croupier.clients.bots import HeuristicBot
from croupier.clients.results.luck import LuckMeter, default_evaluator
from croupier.clients.results.sets import grid, pair_points
from croupier.clients.results.sprt import NormalProgress, Progress, Sprt, Verdict, elo_of, score_of
from croupier.engine.games import get_game


class Declaring(Mixed):
    """``Mixed``, telling the meter its policy before each move (its random moves uniform, the rest
    the heuristic's), drawing as ``Mixed`` does: the same moves."""

    def __init__(self, match: Any, q: float, rng: random.Random, meter: LuckMeter) -> None:
        super().__init__(match, q, rng)
        self.meter = meter

    def choose(self, view: Any, legal: list[Any]) -> int:
        best = HeuristicBot.choose(self, view, legal)
        share = self.q / len(legal)
        self.meter.declared[self.match.seat] = [share + (1 - self.q) * (i == best) for i in range(len(legal))]
        if self.q and self.rng.random() < self.q:
            return self.rng.randrange(len(legal))
        return best


@dataclass(frozen=True)
class SetResult:
    plain: float
    corrected: float
    fresh_plain: float
    fresh_corrected: float
    seconds: float
    """CPU of the duplicate matches played with the correction."""
    plain_seconds: float
    """CPU of the same matches played again without it."""


def one_set(
    game: str,
    seed: int,
    q: float,
    fresh: bool,
    poor: bool,
    outcomes: int,
    scale: float | None,
    decisions: bool,
) -> SetResult:
    spec = get_game(game)
    options = spec.options(OPTIONS[game])
    tuned = {} if scale is None else {"scale": scale}
    evaluator = default_evaluator(game, poor=poor, outcomes=outcomes, seed=seed, **tuned)
    deals = random.Random(seed)
    duplicate, fresh_deals = deals.getrandbits(63), (deals.getrandbits(63), deals.getrandbits(63))
    plain = corrected = fresh_plain = fresh_corrected = seconds = plain_seconds = 0.0
    for rotation in range(2):
        a = rotation  # A's seat
        runs = [(False, duplicate)] + ([(True, fresh_deals[rotation])] if fresh else [])
        for is_fresh, deal in runs:
            meter = LuckMeter(evaluator, [(a, 1 - a)], fresh=is_fresh)
            factories = [mixed(0.0 if seat == a else q, f"{seed}/{rotation}/{seat}") for seat in range(2)]
            if decisions:  # B tells its policy: AIVAT's decision terms
                factories[1 - a] = _declaring(q, f"{seed}/{rotation}/{1 - a}", meter)
            started = time.process_time()
            played = play(spec, options, deal, factories, luck=meter)
            if not is_fresh:  # the same match again without the correction: what it costs
                seconds += time.process_time() - started
                factories = [mixed(0.0 if seat == a else q, f"{seed}/{rotation}/{seat}") for seat in range(2)]
                started = time.process_time()
                again = play(spec, options, deal, factories)
                plain_seconds += time.process_time() - started
                assert again.places == played.places
            points = pair_points(played.places[a], played.places[1 - a])
            if is_fresh:
                fresh_plain += points / 2
                fresh_corrected += (points - meter.luck[(a, 1 - a)]) / 2
            else:
                plain += points / 2
                corrected += (points - meter.luck[(a, 1 - a)]) / 2
    return SetResult(plain, corrected, fresh_plain, fresh_corrected, seconds, plain_seconds)


def _declaring(q: float, seed: str, meter: LuckMeter) -> Any:
    rng = random.Random(seed)
    return lambda match: Declaring(match, q, rng, meter)


def _run(args: tuple[str, int, float, bool, bool, int, float | None, bool]) -> SetResult:
    return one_set(*args)


def sets_to_decide(
    plain: list[float], corrected: list[float], runs: int, seed: int
) -> tuple[Sprt, list[tuple[str, float, float, float]]]:
    """Sequential tests resampled from the sets played (drawn with replacement, in random order),
    elo1 the plain sets' own Elo and elo0 = elo1 − 20. Per reading of the sets: the median number
    of sets to a decision and the share accepting H1 with the sets as played (the truth at elo1:
    the power), and the share accepting H1 with the sets moved down to elo0's mean (a false H1:
    plain sets a grid step down at random, corrected ones shifted).
    The corrected sets are moved to the plain sets' mean first (they differ by the correction's
    noise), so that both readings have the same truth."""
    truth = elo_of(statistics.fmean(plain))
    test = Sprt(elo0=truth - 20, elo1=truth)
    corrected = [score + statistics.fmean(plain) - statistics.fmean(corrected) for score in corrected]
    down = score_of(test.elo0) - statistics.fmean(plain)
    rng = random.Random(seed)
    rows = []
    readings: list[tuple[str, list[float], Any]] = [
        ("plain sets, pentanomial GSPRT (today's)", plain, lambda: Progress(test, grid(2))),
        ("plain sets, normal GSPRT", plain, lambda: NormalProgress(test)),
        ("corrected sets, normal GSPRT", corrected, lambda: NormalProgress(test)),
    ]
    for name, scores, start in readings:
        lengths, power, false = [], 0, 0
        for shift in (0.0, down):
            moved = [score + shift for score in scores]
            if shift and scores is plain:  # on the grid still, for both of its readings
                moved = _on_the_grid(scores, score_of(test.elo0), rng)
            for _ in range(runs):
                progress = start()
                while progress.status.verdict is Verdict.CONTINUE and progress.status.sets < 20_000:
                    progress.add(moved[rng.randrange(len(moved))])
                h1 = progress.status.verdict is Verdict.H1
                if shift:
                    false += h1
                else:
                    lengths.append(progress.status.sets)
                    power += h1
        rows.append((name, statistics.median(lengths), power / runs, false / runs))
    return test, rows


def _on_the_grid(scores: list[float], mean: float, rng: random.Random) -> list[float]:
    """Grid scores with the given mean: a set above it moved down one step of the grid, at random,
    until the mean is reached (a shift would leave the grid the pentanomial test reads)."""
    moved = sorted(scores)
    step = 0.25
    target = mean * len(moved)
    total = sum(moved)
    while total - target > step / 2:
        index = rng.randrange(len(moved))
        if moved[index] >= step:
            moved[index] -= step
            total -= step
    return moved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.luck", description=__doc__.split("\n")[0])
    parser.add_argument("--game", required=True, choices=sorted(OPTIONS))
    parser.add_argument("--matches", type=int, default=400, help="matches: duplicate sets of 2")
    parser.add_argument("--fresh", action="store_true", help="also fresh deals with the deal's term")
    parser.add_argument("--poor", action="store_true", help="a deliberately poor V (scores read backwards)")
    parser.add_argument("--q", type=float, default=0.5, help="B's share of random moves")
    parser.add_argument("--outcomes", type=int, default=36, help="chance outcomes averaged at most per event")
    parser.add_argument("--scale", type=float, help="V's spread (default: the game's, luck.SCALES)")
    parser.add_argument(
        "--decisions", action="store_true", help="AIVAT's decision terms for B, whose policy is known exactly"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--resample", type=int, default=0, help="sequential tests resampled from the sets")
    args = parser.parse_args(argv)
    print(f"load {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f}; {args}", flush=True)
    jobs = [
        (
            args.game,
            args.seed * 1_000_003 + i,
            args.q,
            args.fresh,
            args.poor,
            args.outcomes,
            args.scale,
            args.decisions,
        )
        for i in range(max(2, args.matches) // 2)
    ]
    started = time.monotonic()
    with pool(args.workers) as executor:
        results = list(executor.map(_run, jobs, chunksize=8))
    n = len(results)
    plain = [r.plain for r in results]
    corrected = [r.corrected for r in results]
    luck = [p - c for p, c in zip(plain, corrected, strict=True)]
    cpu = sum(r.seconds for r in results)
    cost = cpu - sum(r.plain_seconds for r in results)
    print(f"{n} sets in {time.monotonic() - started:.0f} s; load {os.getloadavg()[0]:.1f}", flush=True)
    if args.fresh:
        spreads = (
            statistics.stdev(r.fresh_plain for r in results),
            statistics.stdev(r.fresh_corrected for r in results),
        )
        print("fresh: plain sd {:.4f}, corrected sd {:.4f}".format(*spreads))
    print(f"plain: mean {statistics.fmean(plain):.4f} sd {statistics.stdev(plain):.4f}")
    print(f"corrected: mean {statistics.fmean(corrected):.4f} sd {statistics.stdev(corrected):.4f}")
    per_match = 1000 / (2 * n)
    print(f"CPU per match: {(cpu - cost) * per_match:.1f} ms, the correction {cost * per_match:.1f} ms")
    print(f"correction's CPU: {cost / (cpu - cost):+.1%} of a match's without it (the same matches, again)")
    if args.resample:
        test, rows = sets_to_decide(plain, corrected, args.resample, args.seed)
        print(f"{args.resample} tests resampled, elo0 {test.elo0:+.1f} elo1 {test.elo1:+.1f} (the truth):")
        for name, median, power, false in rows:
            print(f"  {name}: median {median:.0f} sets, H1 {power:.1%} at elo1, {false:.1%} at elo0")
    ratio = statistics.variance(corrected) / statistics.variance(plain)
    print(
        f"{args.game}: variance ratio {ratio:.3f} (corrected / plain set score), "
        f"bias {statistics.fmean(luck):+.4f} ± {statistics.stdev(luck) / n**0.5:.4f} over {2 * n} matches"
    )
    if args.fresh:
        fresh_plain = [r.fresh_plain for r in results]
        fresh_corrected = [r.fresh_corrected for r in results]
        fresh_luck = [p - c for p, c in zip(fresh_plain, fresh_corrected, strict=True)]
        bias = f"{statistics.fmean(fresh_luck):+.4f} ± {statistics.stdev(fresh_luck) / n**0.5:.4f}"
        ratio = statistics.variance(fresh_corrected) / statistics.variance(plain)
        print(
            f"{args.game}: fresh variance ratio {ratio:.3f} (fresh corrected / plain duplicate set score), "
            f"bias {bias} over {2 * n} matches"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The verdict's Elo estimate of ``croupier match --sprt`` against a known truth: the Brownian
reading (``Sprt.brownian``, fishtest's) beside the simulated one (what the verdict line prints:
clients/results/sprt_estimate.py).

Usage: python -m bench.sprt_estimate [--game NAME:SEATS]... [--tests N] [--truth ELO]... [--pool SETS]
       [--pool-file PATH] [--cap SETS] [--elo0 E0] [--elo1 E1]

Per game (default: five-seat Spoil Five and three-seat Chinese Ten, the multi-seat games issue #46
found the Brownian reading low in), a pool of duplicate sets played in-process as
bench/sprt_calibration.py plays it (the heuristic against the heuristic playing a tenth of its
moves at random, the other seats the heuristic; ``--pool-file`` keeps it for the next run), then
per true Elo N GSPRT tests drawn from the pool's distribution moved to that Elo's mean
(bench/sprt_resampled.py, each to its verdict or the cap), and for each estimate over those tests:
the share below the truth (goal: half), the median estimate, the share of 95% intervals that hold
the truth (goal: 95%), and the CPU seconds the simulated estimate took (median, max), with the load.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import time
from pathlib import Path

from bench import sprt_calibration, sprt_resampled
from croupier.clients.author.inprocess import pool, workers
from croupier.clients.results.schedule import Rotations, design
from croupier.clients.results.sets import grid
from croupier.clients.results.sprt import Sprt, Stopped, elo_of
from croupier.clients.results.sprt_estimate import simulated

Estimate = tuple[Stopped, Stopped, float]
"""The Brownian reading, the simulated one, the CPU seconds of the simulated one."""


def both(job: tuple[Sprt, tuple[float, ...], tuple[int, ...]]) -> Estimate:
    """Both estimates of one stopped test (in a worker process)."""
    test, values, counts = job
    began = time.process_time()
    read = simulated(test, counts, values)
    return test.brownian(counts, values), read, time.process_time() - began


def summary(name: str, read: list[Stopped], truth: float) -> str:
    below = sum(s.elo < truth for s in read)
    held = sum(s.low <= truth <= s.high for s in read)
    return (
        f"{name}: below {below}/{len(read)}, median {statistics.median(s.elo for s in read):+.1f}, "
        f"interval holds it {held}/{len(read)}"
    )


def pool_scores(
    executor: concurrent.futures.Executor, game: str, seats: int, sets: int, path: Path | None
) -> list[float]:
    """The pool's set scores: read from ``path`` if it holds this game's, else played (and kept)."""
    kept = json.loads(path.read_text()) if path and path.exists() else {}
    key = f"{game}:{seats}:{sets}"
    if key not in kept:
        jobs = [(game, seats, 0.1, 50_000 + i) for i in range(sets)]
        chunk = max(1, len(jobs) // (8 * workers()))
        kept[key] = list(executor.map(sprt_calibration.pool_set, jobs, chunksize=chunk))
        if path:
            path.write_text(json.dumps(kept))
    return list(kept[key])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--game", action="append", metavar="NAME:SEATS", help="default: spoil_five:5 and chinese_ten:3"
    )
    parser.add_argument("--tests", type=int, default=100, help="tests per truth (default: %(default)s)")
    parser.add_argument(
        "--truth", type=float, action="append", help="true Elo (repeatable; default: 0, 10, 20.5, 29.5)"
    )
    parser.add_argument("--pool", type=int, default=200, help="sets in a pool (default: %(default)s)")
    parser.add_argument("--pool-file", type=Path, help="keep the pools' set scores here, for the next run")
    parser.add_argument("--cap", type=int, default=2000, help="a test's cap in sets (default: %(default)s)")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=10.0)
    args = parser.parse_args()
    test = Sprt(args.elo0, args.elo1)
    truths = args.truth or [0.0, 10.0, 20.5, 29.5]
    print(
        f"tests elo0={test.elo0:g} elo1={test.elo1:g}, α=β=0.05; {workers()} worker processes; load {load()}"
    )
    with pool() as executor:
        for chosen in args.game or ["spoil_five:5", "chinese_ten:3"]:
            game, _, seats_text = chosen.partition(":")
            seats = int(seats_text or 2)
            scores = pool_scores(executor, game, seats, args.pool, args.pool_file)
            values = grid(len(design(seats, Rotations.WILLIAMS)))
            counts = [sum(abs(s - v) < 1e-9 for s in scores) for v in values]
            mean = statistics.fmean(scores)
            print(
                f"{game}, {seats} seats: pool of {len(scores)} sets, mean {mean:.3f} ({elo_of(mean):+.1f} "
                f"Elo), spread {statistics.pstdev(scores):.3f}",
                flush=True,
            )
            for truth in truths:
                began = time.monotonic()
                q = sprt_resampled.at_elo(values, counts, truth)
                runs = sprt_resampled.run("gsprt", test, values, q, args.tests, args.cap, seed=11)
                jobs = [(test, values, tuple(int(c) for c in row)) for row in runs.counts]
                got = list(executor.map(both, jobs))
                cost = [c for _, _, c in got]
                print(
                    f"  truth {truth:+g}: median {statistics.median(runs.sets.tolist()):.0f} sets, "
                    f"{int((runs.verdicts == 0).sum())} undecided at the cap\n"
                    f"    {summary('Brownian (old)', [b for b, _, _ in got], truth)}\n"
                    f"    {summary('simulated (new)', [s for _, s, _ in got], truth)}; "
                    f"{statistics.median(cost):.2f} s CPU an estimate (max {max(cost):.2f})\n"
                    f"    ({time.monotonic() - began:.0f} s, load {load()})",
                    flush=True,
                )


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()

"""Duplicate sets a second through the local pool against the same cores through a Dask cluster
(clients/author/cluster.py), and a fixed test's wall time as Dask workers are added.

Usage: python -m bench.cluster [--game NAME] [--sets N] [--rounds R] [--most K] [--batch-seconds S]

The paths play the same sets (the heuristic against itself, two seats, dealt from one seed) as
``croupier match --sprt --in-process`` does: inprocess.play_set on every set, in batches
(batches.py), twice as many batches in flight as there are workers, each result taken as it
comes. The local pool has one process per core and one set a batch; the cluster is a Dask
scheduler on this machine (in this process, as LocalCluster runs it) with as many worker processes
of one thread, played one set a task ("Dask, 1 a task": before batching) and in batches of
``--batch-seconds`` of play ("Dask, batched": what ``--cluster`` does). The paths are measured in
turns, ``--rounds`` times, so all see the same moments of a shared machine; the load average is
printed with each turn. The goal: the cluster keeps at least 0.85 of the local pool's rate. Then
the same ``--sets`` on 1 to ``--most`` workers, batched: the wall time falls with each worker up to
the cores there are, and no further here (on N machines of C cores, N·C workers). Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import os
import statistics
import time
from collections.abc import Iterator

from croupier.clients.author.batches import Batch, Sizes, play_batch
from croupier.clients.author.cluster import BATCH_SECONDS, Sets
from croupier.clients.author.inprocess import SetJob, play_set, pool, workers
from croupier.clients.results.schedule import Rotations, rotation_count

OPTIONS = {"chinese_ten": {"target": 100}, "pair_battle": {"timing": "lockstep"}}
"""Options that keep a game's matches short (two seats in every game)."""


def sets(game: str, count: int, first: int = 0) -> list[SetJob]:
    """``count`` duplicate sets of the heuristic against itself, set i dealt from seed i."""
    rotations = rotation_count(2, Rotations.WILLIAMS)
    seatings = [("a", "b"), ("b", "a")][:rotations]
    options = {"players": 2, **OPTIONS.get(game, {})}
    return [
        SetJob(game, options, tuple((i * 2 + r, i, seats) for r, seats in enumerate(seatings)), SPECS)
        for i in range(first, first + count)
    ]


SPECS = {"a": "heuristic", "b": "heuristic"}


def play_all(
    executor: concurrent.futures.Executor, jobs: list[SetJob], in_flight: int, batch_seconds: float = 0.0
) -> float:
    """Seconds of wall time to play ``jobs`` with at most ``in_flight`` batches of about
    ``batch_seconds`` of play submitted at once, as inprocess_run.play_sets feeds its executor."""
    start = time.perf_counter()
    waiting = iter(jobs)
    sizes = Sizes(batch_seconds)
    running: set[concurrent.futures.Future[Batch[object]]] = set()
    while True:
        while len(running) < in_flight and (batch := list(itertools.islice(waiting, sizes.next()))):
            running.add(executor.submit(play_batch, play_set, batch))
        if not running:
            return time.perf_counter() - start
        done, running = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
        for future in done:
            played = future.result()
            if played.failure is not None:
                raise played.failure
            sizes.measured(played)


def side_by_side(
    paths: dict[str, tuple[concurrent.futures.Executor, float]],
    batches: Iterator[list[SetJob]],
    rounds: int,
    in_flight: int,
) -> Iterator[dict[str, float]]:
    """Per round, each path's sets a second on sets of its own, the paths (an executor and the
    seconds of play a task carries) in turns."""
    for _ in range(rounds):
        rates = {}
        for name, (executor, batch_seconds) in paths.items():
            jobs = next(batches)
            rates[name] = len(jobs) / play_all(executor, jobs, in_flight, batch_seconds)
        yield rates


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def dealt(game: str, size: int) -> Iterator[list[SetJob]]:
    """Batches of ``size`` fresh sets, each batch dealt anew (no path replays another's deals)."""
    first = 0
    while True:
        yield sets(game, size, first)
        first += size


def main() -> None:
    from distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="platinum_fish")
    parser.add_argument("--sets", type=int, default=200, help="sets per turn (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3, help="turns of each path (default: %(default)s)")
    parser.add_argument(
        "--most", type=int, default=4, help="most Dask workers, 0 for none (default: %(default)s)"
    )
    parser.add_argument(
        "--batch-seconds",
        type=float,
        default=BATCH_SECONDS,
        help="play a batched task carries (default: %(default)s, as --cluster)",
    )
    args = parser.parse_args()
    cores = workers()
    print(f"{args.game}, heuristic against itself, sets of 2 games; {cores} cores; load {load()}", flush=True)
    batches = dealt(args.game, args.sets)
    with (
        pool(cores) as local,
        LocalCluster(n_workers=cores, threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        dask = Sets(client)
        warm = next(batches)[: 2 * cores]
        play_all(local, warm, 2 * cores)
        play_all(dask, warm, 2 * cores)
        paths = {"local": (local, 0.0), "single": (dask, 0.0), "batched": (dask, args.batch_seconds)}
        print(f"\nbatched: about {args.batch_seconds:g} s of play a task")
        print("\n| turn | local pool sets/s | Dask, 1 a task | / local | Dask, batched | / local | load |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        ratios: dict[str, list[float]] = {"single": [], "batched": []}
        for turn, rates in enumerate(side_by_side(paths, batches, args.rounds, 2 * cores), start=1):
            here = rates["local"]
            cells = []
            for name, kept in ratios.items():
                kept.append(rates[name] / here)
                cells += [f"{rates[name]:.1f}", f"{rates[name] / here:.2f}"]
            print(f"| {turn} | {here:.1f} | {' | '.join(cells)} | {load()} |", flush=True)
        print(f"\nDask / local pool, median of {args.rounds} turns (goal: at least 0.85): ", end="")
        print(", ".join(f"{name} {statistics.median(kept):.2f}" for name, kept in ratios.items()))

        print("\n| Dask workers | wall time, s | sets/s | load (1, 5, 15 min) |")
        print("| --- | --- | --- | --- |")
        for count in range(1, args.most + 1):
            cluster.scale(count)
            client.wait_for_workers(count, timeout=60)
            while len(client.nthreads()) > count:  # scaled down: wait for the others to go
                time.sleep(0.1)
            seconds = play_all(dask, next(batches), 2 * count, args.batch_seconds)
            print(f"| {count} | {seconds:.2f} | {args.sets / seconds:.1f} | {load()} |", flush=True)


if __name__ == "__main__":
    main()

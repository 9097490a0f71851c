"""Duplicate sets a second through the local pool against the same cores through a Dask cluster
(clients/author/cluster.py), and a fixed test's wall time as Dask workers are added.

Usage: python -m bench.cluster [--game NAME] [--sets N] [--rounds R] [--most K]

Both paths play the same sets (the heuristic against itself, two seats, dealt from one seed) as
``croupier match --sprt --in-process`` does: inprocess.play_set on every set, twice as many sets in
flight as there are workers, each result taken as it comes. The local pool has one process per
core; the cluster is a Dask scheduler on this machine (in this process, as LocalCluster runs it)
with as many worker processes of one thread. The two are measured in turns, ``--rounds`` times, so
both see the same moments of a shared machine; the load average is printed with each turn. The
goal: the cluster keeps at least 0.85 of the local pool's rate. Then the same ``--sets`` on 1 to
``--most`` workers: the wall time falls with each worker up to the cores there are, and no
further here (on N machines of C cores, N·C workers). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import statistics
import time
from collections.abc import Iterator

from croupier.clients.author.cluster import Sets
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


def play_all(executor: concurrent.futures.Executor, jobs: list[SetJob], in_flight: int) -> float:
    """Seconds of wall time to play ``jobs`` with at most ``in_flight`` submitted at once, as
    inprocess.play_plan feeds its executor."""
    start = time.perf_counter()
    waiting = iter(jobs)
    running: set[concurrent.futures.Future[object]] = set()
    for job in waiting:
        running.add(executor.submit(play_set, job))
        if len(running) >= in_flight:
            done, running = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                future.result()
    for future in concurrent.futures.as_completed(running):
        future.result()
    return time.perf_counter() - start


def side_by_side(
    paths: dict[str, concurrent.futures.Executor],
    batches: Iterator[list[SetJob]],
    rounds: int,
    in_flight: int,
) -> Iterator[dict[str, float]]:
    """Per round, each path's sets a second on a batch of its own, the paths in turns."""
    for _ in range(rounds):
        rates = {}
        for name, executor in paths.items():
            jobs = next(batches)
            rates[name] = len(jobs) / play_all(executor, jobs, in_flight)
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
    parser.add_argument("--most", type=int, default=4, help="most Dask workers (default: %(default)s)")
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
        print("\n| turn | local pool sets/s | Dask sets/s | Dask / local | load (1, 5, 15 min) |")
        print("| --- | --- | --- | --- | --- |")
        ratios = []
        paths = {"local": local, "dask": dask}
        for turn, rates in enumerate(side_by_side(paths, batches, args.rounds, 2 * cores), start=1):
            here, there = rates["local"], rates["dask"]
            ratios.append(there / here)
            print(f"| {turn} | {here:.1f} | {there:.1f} | {there / here:.2f} | {load()} |", flush=True)
        ratio = statistics.median(ratios)
        print(f"\nDask / local pool, median of {args.rounds} turns: {ratio:.2f} (goal: at least 0.85)")

        print("\n| Dask workers | wall time, s | sets/s | load (1, 5, 15 min) |")
        print("| --- | --- | --- | --- |")
        for count in range(1, args.most + 1):
            cluster.scale(count)
            client.wait_for_workers(count, timeout=60)
            while len(client.nthreads()) > count:  # scaled down: wait for the others to go
                time.sleep(0.1)
            seconds = play_all(dask, next(batches), 2 * count)
            print(f"| {count} | {seconds:.2f} | {args.sets / seconds:.1f} | {load()} |", flush=True)


if __name__ == "__main__":
    main()

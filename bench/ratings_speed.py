"""How long a ratings table takes as the pool grows: matches in proportion to bots.

Usage: python -m bench.ratings_speed [--bots 4,16,64,256,1000] [--samples 1000] [--module PATH]

Per size N: one three-seat game, 8 duplicate sets a bot (N * 8 / 3 sets of 3 bots drawn at random,
6 Williams rotations each: the shape of a tournament's or a ladder's results), the rankings drawn
reproducibly from Plackett-Luce with strengths spread like a real pool's (1 natural-log unit,
174 Elo, standard deviation) and a shared place one time in ten. Timed: ``rate`` as the CLI calls
it (Plackett-Luce, a bootstrap of ``--samples`` resamples of the sets, the default prior), which
is what the runner, ``croupier ratings``, the web standings and the ladder wait for. One line a
size: ``N bots, R results: S s`` (R the matches), then the point fit's share of it.

``--module PATH`` times another copy of ratings.py instead (main's, from a temporary worktree: the
before figures) and prints how far its table is from this tree's. The machine's load is printed
first and last: run the two side by side. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.harness import machine
from croupier.clients.results import ratings

SETS_PER_BOT = 8
SEATS = 3
ROTATIONS = 6
SPREAD = 1.0
"""Standard deviation of the bots' natural-log strengths."""


def results(bots: int, module: ModuleType) -> list[Any]:
    """The duplicate sets of a pool of ``bots``, as ``module.RatedSet``s."""
    rng = random.Random(2026 + bots)
    names = [f"bot{number:04d}" for number in range(bots)]
    strength = {name: rng.gauss(0.0, SPREAD) for name in names}
    sets = []
    for _ in range(max(1, round(bots * SETS_PER_BOT / SEATS))):
        group = tuple(sorted(rng.sample(names, min(SEATS, bots))))
        matches = tuple(ranking(group, strength, rng) for _ in range(ROTATIONS))
        sets.append(module.RatedSet("bench", group, matches))
    return sets


def ranking(bots: tuple[str, ...], strength: dict[str, float], rng: random.Random) -> dict[str, int]:
    """Places drawn from Plackett-Luce; one time in ten two neighbours share a place."""
    left, order = list(bots), []
    while left:
        weights = [math.exp(strength[bot]) for bot in left]
        order.append(left.pop(rng.choices(range(len(left)), weights)[0]))
    places = {bot: place for place, bot in enumerate(order, 1)}
    if rng.random() < 0.1:
        k = rng.randrange(len(order) - 1)
        places[order[k + 1]] = places[order[k]]
    return places


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("ratings_under_test", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def timed(call: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call(*args, **kwargs)
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bots", default="4,16,64,256,1000", help="pool sizes (default %(default)s)")
    parser.add_argument("--samples", type=int, default=ratings.DEFAULT_SAMPLES, help="default %(default)s")
    parser.add_argument("--module", type=Path, help="time this ratings.py instead (e.g. main's)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.bots.split(",")]
    module = load(args.module) if args.module else ratings
    print(f"# {machine()}")
    print(f"# {module.__file__}: Plackett-Luce, {args.samples} bootstrap samples over sets, default prior")
    for bots in sizes:
        sets = results(bots, module)
        matches = sum(len(rated.matches) for rated in sets)
        evidence = module.merged(
            module.choices(places, module.DEFAULT_MODEL) for rated in sets for places in rated.matches
        )
        fit_s, _ = timed(module.fit, evidence)
        seconds, table = timed(module.rate, sets, samples=args.samples, seed=0)
        versus = ""
        if module is not ratings:
            ours = {r.bot: r for r in ratings.rate(results(bots, ratings), samples=args.samples, seed=0)}
            gap = max(
                max(abs(row.elo - ours[row.bot].elo), abs(row.low - ours[row.bot].low)) for row in table
            )
            versus = f"; max |Elo or bound - this tree's| {gap:.1e}"
        load_now = " ".join(f"{value:.1f}" for value in os.getloadavg())
        figures = f"point fit {fit_s:.3f} s; load {load_now}"
        print(f"{bots} bots, {matches} results: {seconds:.2f} s ({figures}){versus}", flush=True)


if __name__ == "__main__":
    main()

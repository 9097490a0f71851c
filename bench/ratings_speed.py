"""How long the ratings take where users wait for them: the demo's results, and 10x them.

Usage: python -m bench.ratings_speed [--scale 1 10] [--samples 1000] [--module PATH]

The results have the shape of `make run`'s (tournaments/demo.toml): 4 bots, 4 games, 192
matches: three games at 3 seats (every group of 3 of the 4 bots, 2 rounds, 6 Williams rotations a
deal: 48 matches) and Pair Battle at 2 (every pair, 2 rounds of 2 deals, 2 rotations: 48). The
rankings are drawn, reproducibly, from Plackett-Luce with the heuristic bots ~350 Elo above the
random ones and a shared place now and then: the ratings' cost depends on the shape, not on
who won. ``--scale 10`` plays 10x the rounds (1,920 matches).

Per scale it prints the seconds, over the four games, of the point fits (``fit``), of the
bootstrap (``bootstrap``, ``--samples`` of them) and of the whole table (``rate``: both, and what
the runner prints). ``--module PATH`` times another copy of ratings.py instead (main's, checked out
in a temporary worktree: the before figures), and prints how far its tables are from this one's.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.harness import machine
from croupier.clients.results import ratings
from croupier.clients.results.schedule import game_schedule

BOTS = ("heuristic-1", "heuristic-2", "random-1", "random-2")
DEMO = (("chinese_ten", 3, 1), ("spoil_five", 3, 1), ("platinum_fish", 3, 1), ("pair_battle", 2, 2))
"""(game, seats, deals a round), as tournaments/demo.toml."""
ROUNDS = 2
STRENGTH = {"heuristic-1": 2.0, "heuristic-2": 2.0, "random-1": 0.0, "random-2": 0.0}
"""Natural-log strengths: 2 is 347 Elo."""


def demo_results(scale: int, module: ModuleType) -> dict[str, list[Any]]:
    """Per game, its duplicate sets as ``module.RatedSet``s."""
    rng = random.Random(2026)
    out: dict[str, list[Any]] = {}
    for game, seats, deals in DEMO:
        schedule = game_schedule(game, BOTS, seats, ROUNDS * scale, deals, seed=2026, secret=bytes(32))
        out[game] = [
            module.RatedSet(
                "demo", tuple(sorted(duplicate.bots)), tuple(ranking(m.seats, rng) for m in duplicate.matches)
            )
            for duplicate in schedule
        ]
    return out


def ranking(bots: tuple[str, ...], rng: random.Random) -> dict[str, int]:
    """Places drawn from Plackett-Luce; one time in ten two neighbours share a place."""
    left, order = list(bots), []
    while left:
        weights = [2.718281828 ** STRENGTH[bot] for bot in left]
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


def timed(call: Any, *args: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call(*args)
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--scale", type=int, nargs="+", default=[1, 10], help="x the demo (default %(default)s)"
    )
    parser.add_argument("--samples", type=int, default=ratings.DEFAULT_SAMPLES, help="default %(default)s")
    parser.add_argument("--module", type=Path, help="time this ratings.py instead (e.g. main's)")
    args = parser.parse_args()
    module = load(args.module) if args.module else ratings
    print(f"# {machine()}")
    print(f"# {module.__file__}, {args.samples} bootstrap samples, prior 1 (the old default) throughout")
    print("scale matches  fit (s)  bootstrap (s)  rate (s)  max |Elo - this tree's|")
    for scale in args.scale:
        games = demo_results(scale, module)
        fit_s = boot_s = rate_s = 0.0
        gap = 0.0
        for sets in games.values():
            evidence = module.merged(
                module.choices(places, module.DEFAULT_MODEL) for rated in sets for places in rated.matches
            )
            seconds, _ = timed(module.fit, evidence, 1.0)
            fit_s += seconds
            seconds, _ = timed(module.bootstrap, sets, 1.0, args.samples)
            boot_s += seconds
            seconds, table = timed(module.rate, sets, 1.0, args.samples)
            rate_s += seconds
            if module is not ratings:
                same = [ratings.RatedSet(s.tournament, s.group, s.matches) for s in sets]
                ours = {r.bot: r for r in ratings.rate(same, 1.0, args.samples)}
                for row in table:
                    mine = ours[row.bot]
                    gap = max(
                        gap, abs(row.elo - mine.elo), abs(row.low - mine.low), abs(row.high - mine.high)
                    )
        matches = sum(len(rated.matches) for sets in games.values() for rated in sets)
        versus = f"{gap:.1e} (Elo, 95% bounds)" if module is not ratings else "-"
        print(f"{scale:5d} {matches:7d} {fit_s:8.3f} {boot_s:14.2f} {rate_s:9.2f}  {versus}", flush=True)


if __name__ == "__main__":
    main()

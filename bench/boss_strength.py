"""The bosses' strength: each level against the level below, per game, by the project's own SPRT.

Usage: python -m bench.boss_strength [--game NAME]... [--pair NEW:OLD]... [--max-games N] [--minutes M]

Two seats, in-process (clients/author/inprocess.py), on duplicate sets (one deal played in both
rotations, as ``croupier match --sprt`` plays them), the test elo0=0 elo1=100 with α = β = 0.05,
played to its decision or to the cap in games or minutes, whichever comes first: a row's games
say how far it got. One process, one core (the machine is shared). Prints the load before and
after and the table docs/bots.md shows; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from typing import Any

from croupier.clients.author.inprocess import play
from croupier.clients.bots import strategy
from croupier.clients.results.sets import grid, pair_points
from croupier.clients.results.sprt import Progress, Sprt
from croupier.engine.games import get_game

OPTIONS: dict[str, dict[str, Any]] = {
    "chinese_ten": {"players": 2, "target": 100},
    "pair_battle": {"players": 2, "timing": "lockstep"},
    "pair_battle_realtime": {"players": 2},
    "platinum_fish": {"players": 2},
    "spoil_five": {"players": 2},
}
"""Each row's options: two seats, the calibration bench's short matches (bench/sprt_calibration.py)."""
TEST = Sprt(elo0=0, elo1=100, alpha=0.05, beta=0.05)
PAIRS = ("boss-1:heuristic", "boss-2:boss-1")


def measure(row: str, new: str, old: str, max_games: int, seconds: float, seed: int) -> str:
    """One table row: the SPRT of ``new`` against ``old`` in ``row``'s game, to its decision or cap."""
    game = row.removesuffix("_realtime")
    spec = get_game(game)
    options = spec.options(OPTIONS[row])
    progress = Progress(TEST, grid(2))
    rng = random.Random(seed)
    began, games = time.monotonic(), 0
    factories = {"new": strategy(new, seed), "old": strategy(old, seed)}
    while progress.status.verdict.name == "CONTINUE" and games < max_games:
        if time.monotonic() - began > seconds:
            break
        deal = rng.getrandbits(63)
        points = 0.0
        for order in (("new", "old"), ("old", "new")):
            played = play(
                spec, options, deal, [factories[who] for who in order], match_id=f"{deal}-{order[0]}"
            )
            mine = order.index("new")
            points += pair_points(played.places[mine], played.places[1 - mine])
            games += 1
        progress.add(points / 2)
    status = progress.status
    verdict = {"H1": "H1 (≥ +100)", "H0": "H0 (< +100)"}.get(status.verdict.name, "undecided")
    minutes = (time.monotonic() - began) / 60
    return (
        f"| {row} | {new} vs {old} | {status.elo:+.0f} [{status.low:+.0f}, {status.high:+.0f}] "
        f"| {games} | {verdict} | {minutes:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", choices=sorted(OPTIONS), help="a row (default: every one)")
    parser.add_argument("--pair", action="append", help=f"NEW:OLD (default: {', '.join(PAIRS)})")
    parser.add_argument("--max-games", type=int, default=400, help="games a row plays at most")
    parser.add_argument("--minutes", type=float, default=10.0, help="minutes a row plays at most")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    print("| game | test | Elo [95%] | games | SPRT (elo0=0, elo1=100) | minutes |")
    print("| --- | --- | ---: | ---: | --- | ---: |", flush=True)
    for pair in args.pair or PAIRS:
        new, _, old = pair.partition(":")
        for row in args.game or sorted(OPTIONS):
            print(measure(row, new, old, args.max_games, args.minutes * 60, args.seed), flush=True)
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

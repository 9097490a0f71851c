"""In-process play (clients/inprocess.py) against the engine's own random playouts, per game.

Usage: python -m bench.inprocess_playouts [--seconds S] [--game NAME]

Both play whole matches of random moves with each game's default options on one core, in this
process and this build of the engine (``croupier --version`` says which): the engine's loop of
bench/engine_playouts.py, and inprocess.play with the bundled RandomBot in every seat, which
builds each seat's view and asks its bot. The ratio is the share of the engine's speed that
in-process play keeps (its target: at least 0.5). Rates are per CPU second.
"""

from __future__ import annotations

import argparse
import time

from bench.engine_playouts import play_one
from croupier.clients.bots import RandomBot
from croupier.clients.inprocess import play
from croupier.engine.games import GAMES
from croupier.wire import native


def rate(one: object, seconds: float) -> float:
    """Matches per CPU second of ``one(seed)``."""
    start, matches = time.process_time(), 0
    while (elapsed := time.process_time() - start) < seconds:
        one(matches)  # type: ignore[operator]
        matches += 1
    return matches / elapsed


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--seconds", type=float, default=3.0, help="per game and path (default: %(default)s)")
    parser.add_argument("--game", action="append", choices=sorted(GAMES))
    args = parser.parse_args()
    print(f"engine: {native.build()}")
    print("| game | engine matches/s | in-process matches/s | in-process / engine |")
    print("| --- | --- | --- | --- |")
    for name in args.game or sorted(GAMES):
        spec = GAMES[name]
        options = spec.options()
        bots = [RandomBot] * options.players
        engine = rate(lambda seed, name=name: play_one(name, seed), args.seconds)
        inprocess = rate(lambda seed, s=spec, o=options, b=bots: play(s, o, seed, b), args.seconds)
        print(f"| {name} | {engine:.0f} | {inprocess:.0f} | {inprocess / engine:.2f} |", flush=True)


if __name__ == "__main__":
    main()

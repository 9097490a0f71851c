"""In-process play (clients/author/inprocess.py) against the engine's own random playouts, per game.

Usage: python -m bench.inprocess_playouts [--seconds S] [--game NAME]

Both play whole matches of random moves with each game's default options on one core, in this
process and this build of the engine (``croupier --version`` says which): the engine's loop of
bench/engine_playouts.py, and inprocess.play with the bundled RandomBot in every seat, which
builds each seat's view and asks its bot. The ratio is the share of the engine's speed that
in-process play keeps (its target: at least 0.5). Rates are per CPU second. Last, what building
the mover's view costs, the best of 15 passes over 3,000 positions.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable
from typing import Any

from bench.engine_playouts import play_one
from bench.harness import machine
from croupier.clients.author.inprocess import play
from croupier.clients.bots import RandomBot
from croupier.engine.games import GAMES
from croupier.engine.rng import Rng
from croupier.wire import native

SLICE = 0.2
"""CPU seconds each path plays before the other's turn: taken in turns, both see the same moments
of a shared machine, and their ratio moves far less than two rates measured one after the other."""


def rates(paths: list[Callable[[int], object]], seconds: float) -> list[float]:
    """Matches per CPU second of each ``path(seed)``, each path playing ``seconds`` in all, in turns
    of ``SLICE`` (match i dealt from seed i on every path)."""
    spent = [0.0] * len(paths)
    played = [0] * len(paths)
    while min(spent) < seconds:
        for index, path in enumerate(paths):
            start = time.process_time()
            while (elapsed := time.process_time() - start) < SLICE:
                path(played[index])
                played[index] += 1
            spent[index] += elapsed
    return [matches / cpu for matches, cpu in zip(played, spent, strict=True)]


def view_cost(name: str, positions: int = 3000, passes: int = 15) -> float:
    """µs to build the mover's view (what in-process play adds to each decision), the best of
    ``passes`` over ``positions`` positions of random playouts."""
    spec = GAMES[name]
    states: list[tuple[Any, int]] = []
    seed = 0
    while len(states) < positions:
        state, chooser, now = spec.new_game(spec.options(), Rng(seed)), random.Random(seed), 0.0
        while not state.is_over() and len(states) < positions:
            seats = sorted(state.to_act())
            if not seats:
                now, _ = state.wait_for_clock(now)
                continue
            states.append((state.copy(), seats[0]))
            state.apply(seats[0], chooser.choice(state.legal_actions(seats[0])), now)
            now += 0.01
        seed += 1
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        for position, seat in states:
            position.view(seat)
        best = min(best, (time.perf_counter() - start) / len(states))
    return best * 1e6


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--seconds", type=float, default=3.0, help="per game and path (default: %(default)s)")
    parser.add_argument("--game", action="append", choices=sorted(GAMES))
    args = parser.parse_args()
    print(machine())
    print(f"engine: {native.build()}; the two paths in turns of {SLICE} CPU s")
    print(
        "| game | engine matches/s | in-process matches/s | in-process / engine | a view, µs | load average |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name in args.game or sorted(GAMES):
        spec = GAMES[name]
        options = spec.options()
        bots = [RandomBot] * options.players
        engine, inprocess = rates(
            [
                lambda seed, name=name: play_one(name, seed),
                lambda seed, s=spec, o=options, b=bots: play(s, o, seed, b),
            ],
            args.seconds,
        )
        ratio, view = inprocess / engine, view_cost(name)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"| {name} | {engine:.0f} | {inprocess:.0f} | {ratio:.2f} | {view:.2f} | {load} |", flush=True)


if __name__ == "__main__":
    main()

"""Random playouts per second of every registered game, on one core.

Usage: python -m bench.engine_playouts [--seconds S] [--game NAME]
Each game plays whole matches with its default options and random legal
choices (the same loop as the conformance harness, without its checks).
Games with clocks get 20 ms of referee time between actions. Games of several
deals (Chinese Ten, Spoil Five) number them in ``state.deal``: their deals/s is
printed too.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from typing import Any

from croupier.engine.games import GAMES
from croupier.engine.rng import Rng

CLOCK_STEP = 0.02


def play_one(name: str, seed: int, options: Any = None) -> tuple[int, int]:
    """Play one random match (default options unless given); return the actions it took and its
    deals (1 for one-deal games)."""
    spec = GAMES[name]
    state = spec.new_game(spec.options() if options is None else options, Rng(seed))
    chooser = random.Random(seed)
    now, actions = 0.0, 0
    while not state.is_over():
        now += CLOCK_STEP
        wake = state.wake_at()
        if wake is not None and (wake <= now or not state.to_act()):
            now = max(now, wake)
            state.advance(now)
            continue
        seat = chooser.choice(sorted(state.to_act()))
        state.apply(seat, chooser.choice(state.legal_actions(seat)), now)
        actions += 1
    return actions, getattr(state, "deal", 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per game (default 3)")
    parser.add_argument("--game", choices=sorted(GAMES), help="one game only")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, one core, default options")
    print(f"{'game':<15} {'matches/s':>10} {'deals/s':>10} {'actions/s':>10} {'actions/match':>14}")
    for name in [args.game] if args.game else sorted(GAMES):
        matches = actions = deals = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < args.seconds:
            match_actions, match_deals = play_one(name, matches)
            actions += match_actions
            deals += match_deals
            matches += 1
        print(
            f"{name:<15} {matches / elapsed:>10.1f} {deals / elapsed:>10.1f}"
            f" {actions / elapsed:>10.0f} {actions / matches:>14.1f}"
        )


if __name__ == "__main__":
    main()

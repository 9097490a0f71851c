"""What inference changes in the bosses' choices: Spoil Five's revealed voids (``Level.infer``).

Usage: python -m bench.boss_inference [--deals N] [--players K]... [--level boss-1]

Heuristic matches of Spoil Five (``--deals`` seeds, each a whole match), and at each decision of
more than one legal action: whether another seat has shown a void, and whether the boss's choice
with inference differs from its choice without. Prints the counts and the load; nothing asserted.
A choice that never changes cannot win anything; strength itself is bench/boss_strength.py's
``--pair boss-1/infer:boss-1``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os

from croupier.clients.bots import spoil_five
from croupier.clients.bots.boss import LEVELS, decide
from croupier.clients.bots.worlds import voids
from croupier.engine.games import get_game
from croupier.engine.rng import Rng


def count(players: int, deals: int, level: str) -> tuple[int, int, int]:
    """(decisions, those with another seat's void shown, those where inference changed the choice)."""
    spec = get_game("spoil_five")
    options = spec.options({"players": players})
    plain = LEVELS[level]
    inferring = dataclasses.replace(plain, infer=True)
    decisions = shown = changed = 0
    for seed in range(deals):
        state = spec.new_game(options, Rng(seed))
        while not state.is_over():
            (seat,) = state.to_act()
            view, legal = state.view(seat), state.legal_actions(seat)
            if len(legal) > 1:
                decisions += 1
                if any(s != seat for s in voids(view)):
                    shown += 1
                    changed += decide("spoil_five", view, legal, options, inferring) != decide(
                        "spoil_five", view, legal, options, plain
                    )
            state.apply(seat, legal[spoil_five.choose(view, legal, options) if len(legal) > 1 else 0])
    return decisions, shown, changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=3, help="matches (seeds) per seat count")
    parser.add_argument("--players", type=int, action="append", help="seats (default: 2 and 4)")
    parser.add_argument("--level", default="boss-1", choices=sorted(LEVELS))
    args = parser.parse_args()
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for players in args.players or (2, 4):
        decisions, shown, changed = count(players, args.deals, args.level)
        print(
            f"{players} seats, {args.deals} matches: {decisions} decisions, {shown} with another seat's "
            f"void shown, {changed} changed by inference ({args.level})",
            flush=True,
        )
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

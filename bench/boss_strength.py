"""The bosses' strength: each level against the level below, per game, by the project's own SPRT.

Usage: python -m bench.boss_strength [--game NAME]... [--pair NEW:OLD]... [--max-games N] [--minutes M]
       [--ismcts-simulations N]

Two seats, in-process (clients/author/inprocess.py), on duplicate sets (one deal played in both
rotations, as ``croupier match --sprt`` plays them), the test elo0=0 elo1=100 with α = β = 0.05,
played to its decision or to the cap in games or minutes, whichever comes first: a row's games
say how far it got. One process, one core (the machine is shared). Prints the load before and
after and the table docs/bots.md shows; nothing is asserted.

The independent reference is OpenSpiel's ISMCTS through the bridge (``ismcts`` as a NEW or OLD:
clients/openspiel/searchers.py, random rollouts to the match's end) at the same time per move as
the boss it meets: before its row, both are timed (CPU seconds, median) on the same positions of
a heuristic match, and ISMCTS is given the simulations that take it that long, printed (and
fixed by ``--ismcts-simulations`` to replay a row).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import statistics
import time
from typing import Any

from croupier.clients.author.inprocess import play
from croupier.clients.bots import strategy
from croupier.clients.results.sets import grid, pair_points
from croupier.clients.results.sprt import Progress, Sprt
from croupier.clients.sdk import BotFactory, Match
from croupier.engine.games import get_game
from croupier.engine.rng import Rng

OPTIONS: dict[str, dict[str, Any]] = {
    "chinese_ten": {"players": 2, "target": 100},
    "chinese_ten_300": {"players": 2, "target": 300},
    "pair_battle": {"players": 2, "timing": "lockstep"},
    "pair_battle_realtime": {"players": 2},
    "platinum_fish": {"players": 2},
    "spoil_five": {"players": 2},
}
"""Each row's options: two seats, the calibration bench's short matches (bench/sprt_calibration.py);
Chinese Ten to 300 too (three deals or so: to 100 it is about one deal, and a duplicate set splits)."""


def game_of(row: str) -> str:
    """A row's game: its name less the variant's suffix."""
    return row.removesuffix("_realtime").removesuffix("_300")


TEST = Sprt(elo0=0, elo1=100, alpha=0.05, beta=0.05)
PAIRS = ("boss-1:heuristic", "boss-2:boss-1", "boss-2:ismcts")
PROBE = 20
"""ISMCTS simulations a timed move, from which its cost per simulation is found."""


def positions(row: str, count: int, seed: int) -> list[tuple[Any, int, list[Any]]]:
    """(state, seat, legal) at ``count`` searched decisions of a heuristic match of ``row``."""
    from croupier.clients.bots import boss
    from croupier.clients.bots.worlds import searchable

    game = game_of(row)
    spec = get_game(game)
    options = spec.options(OPTIONS[row])
    state, found = spec.new_game(options, Rng(seed)), []
    play = boss.policy(game)
    while not state.is_over() and len(found) < count * 3:
        for seat in sorted(state.to_act()):
            view, legal = state.view(seat), state.legal_actions(seat)
            if len(legal) > 1 and searchable(game, view):
                found.append((state.copy(), seat, legal))
            state.apply(seat, legal[play(view, legal, options) if len(legal) > 1 else 0])
        if not state.to_act():
            break  # a real-time game waits on its clock: never searched
    return found[::3][:count]


def cpu_per_move(factory: BotFactory, row: str, found: list[tuple[Any, int, list[Any]]]) -> float:
    """The median CPU seconds ``factory``'s bot takes over a decision of ``found``."""
    game = game_of(row)
    options = get_game(game).options(OPTIONS[row])
    times = []
    for state, seat, legal in found:
        bot = factory(Match("timing", game, options, seat, ("a", "b"), 5_000, 30_000))
        began = time.process_time()
        bot.choose(state.view(seat), legal)
        times.append(time.process_time() - began)
    return statistics.median(times)


def bot(name: str, seed: int) -> BotFactory:
    """A bundled strategy, or a boss's variant: ``boss-N/infer`` with inference (its worlds keep the
    voids the others' plays revealed: ``Level.infer``), ``boss-N/randomK`` with random playouts,
    K times as many (``Level.random_rollouts``; K the times cheaper they are)."""
    base, _, variant = name.partition("/")
    if not variant:
        return strategy(name, seed)
    from croupier.clients.bots import boss_level
    from croupier.clients.bots.boss import Boss1, Boss2

    level = boss_level(base)
    if variant == "infer":
        level = dataclasses.replace(level, infer=True)
    elif variant.startswith("random"):
        level = dataclasses.replace(
            level.scaled(float(variant.removeprefix("random") or 1)), random_rollouts=True
        )
    else:
        raise ValueError(f"unknown variant {variant!r} of {base}: infer or randomK")
    kind = Boss1 if base == "boss-1" else Boss2
    return lambda match: kind(match, seed, level)


def ismcts(simulations: int, seed: int) -> BotFactory:
    from croupier.clients.openspiel.searchers import Ismcts  # OpenSpiel only where it plays

    return lambda match: Ismcts(match, seed, simulations)


def same_time(boss: str, row: str, seed: int) -> int:
    """ISMCTS's simulations a move that cost it what ``boss`` spends a move, on the same positions."""
    found = positions(row, 8, seed)
    if not found:
        return PROBE  # nothing is searched (real time): any budget plays the heuristic
    spent = cpu_per_move(bot(boss, seed), row, found)
    probe = cpu_per_move(ismcts(PROBE, seed), row, found)
    simulations = max(1, round(PROBE * spent / probe))
    print(
        f"{row}: {boss} {spent * 1000:.0f} ms a move (median CPU), ISMCTS {probe / PROBE * 1000:.1f} ms a "
        f"simulation: {simulations} simulations (load {os.getloadavg()[0]:.1f})",
        flush=True,
    )
    return simulations


def measure(
    row: str, new: str, old: str, max_games: int, seconds: float, seed: int, simulations: int | None = None
) -> str:
    """One table row: the SPRT of ``new`` against ``old`` in ``row``'s game, to its decision or cap
    (``ismcts`` at ``simulations`` a move, else at the other's time)."""
    game = game_of(row)
    spec = get_game(game)
    options = spec.options(OPTIONS[row])
    progress = Progress(TEST, grid(2))
    rng = random.Random(seed)
    began, games = time.monotonic(), 0
    factories = {}
    for key, name, other in (("new", new, old), ("old", old, new)):
        if name == "ismcts":
            factories[key] = ismcts(simulations or same_time(other, row, seed), seed)
        else:
            factories[key] = bot(name, seed)
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
    parser.add_argument(
        "--ismcts-simulations", type=int, help="ISMCTS's simulations a move (default: its boss's time a move)"
    )
    args = parser.parse_args()
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    print("| game | test | Elo [95%] | games | SPRT (elo0=0, elo1=100) | minutes |")
    print("| --- | --- | ---: | ---: | --- | ---: |", flush=True)
    for pair in args.pair or PAIRS:
        new, _, old = pair.partition(":")
        for row in args.game or sorted(OPTIONS):
            print(
                measure(row, new, old, args.max_games, args.minutes * 60, args.seed, args.ismcts_simulations),
                flush=True,
            )
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

"""What the bosses' search costs: decision times per level and the clone-and-apply path under them.

Usage: python -m bench.boss_speed [--game NAME]... [--decisions N] [--level NAME]... [--seconds S]

Per game (two seats, bench/boss_strength.py's options; Pair Battle in lockstep, the variant that
is searched), the positions of heuristic matches where a boss searches (more than one legal
action), and then:

- the clone-and-apply path: worlds drawn from a view a CPU second (``worlds.world``: the state
  built from the view and re-dealt by ``resample_hidden``), copies of a state a CPU second, and
  playouts a CPU second (copy, one action, the heuristic to the end of the deal: the search's
  unit of work), and the same at random (``Level.random_rollouts``);
- each level's decision times over ``--decisions`` positions: median, p95 and the longest, in CPU
  seconds of this process (time.process_time: the machine is shared, and wall time there measures
  the neighbours), against the budget (boss-1 100 ms, boss-2 1 s at p95).

Prints the build (compiled or pure) and the load before and after. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from croupier.clients.bots import boss
from croupier.clients.bots.worlds import searchable, world
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.wire import native

OPTIONS: dict[str, dict[str, Any]] = {
    "chinese_ten": {"players": 2, "target": 100},
    "pair_battle": {"players": 2, "timing": "lockstep"},
    "platinum_fish": {"players": 2},
    "spoil_five": {"players": 2},
}
BUDGET_MS = {"boss-1": 100, "boss-2": 1000}


def positions(game: str, count: int, seed: int) -> list[tuple[Any, Any, list[Any]]]:
    """(state, view, legal) at searched decisions of heuristic matches, ``count`` of them spread
    over as many matches as it takes."""
    spec = get_game(game)
    options = spec.options(OPTIONS[game])
    found: list[tuple[Any, Any, list[Any]]] = []
    rng = random.Random(seed)
    while len(found) < count:
        state = spec.new_game(options, Rng(rng.getrandbits(63)))
        play_ = boss.policy(game)  # the heuristic in every seat
        while not state.is_over() and len(found) < count * 4:
            for seat in sorted(state.to_act()):
                view, legal = state.view(seat), state.legal_actions(seat)
                if len(legal) > 1 and searchable(game, view):
                    found.append((state.copy(), view, legal))
                state.apply(seat, legal[play_(view, legal, options)])
    rng.shuffle(found)
    return found[:count]


def rate(work: Any, seconds: float) -> float:
    """Calls of ``work`` a CPU second, over about ``seconds`` of CPU."""
    began, calls = time.process_time(), 0
    while time.process_time() - began < seconds:
        work()
        calls += 1
    return calls / (time.process_time() - began)


def clone_and_apply(game: str, found: list[tuple[Any, Any, list[Any]]], seconds: float) -> str:
    options = get_game(game).options(OPTIONS[game])
    rng = Rng(1)
    cycle = iter(lambda: found[rng.randint(0, len(found) - 1)], None)
    play_ = boss.policy(game)

    def draw() -> None:
        _, view, legal = next(cycle)
        world(game, view, options, legal, rng)

    def clone() -> None:
        state, _, _ = next(cycle)
        state.copy()

    def playout(policy: boss.Policy) -> Callable[[], None]:
        def one() -> None:
            state, view, legal = next(cycle)
            twin = state.copy()
            twin.apply(view.seat, legal[0])
            boss.playout(game, twin, view.seat, policy, options, boss.horizon(game, len(view.hand_sizes)))

        return one

    at_random = boss.random_policy(rng)  # what Level.random_rollouts plays
    return (
        f"{game}: {rate(draw, seconds):,.0f} worlds/s, {rate(clone, seconds):,.0f} copies/s, "
        f"{rate(playout(play_), seconds):,.0f} playouts/s, {rate(playout(at_random), seconds):,.0f} "
        "random playouts/s (CPU seconds)"
    )


def decision_times(game: str, level: str, found: list[tuple[Any, Any, list[Any]]]) -> str:
    options = get_game(game).options(OPTIONS[game])
    times = []
    for seed, (_, view, legal) in enumerate(found):
        began = time.process_time()
        boss.decide(game, view, legal, options, boss.LEVELS[level], seed)
        times.append(time.process_time() - began)
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    verdict = "within" if p95 * 1000 <= BUDGET_MS[level] else "OVER"
    return (
        f"| {game} | {level} | {len(times)} | {statistics.median(times) * 1000:.0f} | {p95 * 1000:.0f} "
        f"| {times[-1] * 1000:.0f} | {verdict} {BUDGET_MS[level]} ms |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", choices=sorted(OPTIONS))
    parser.add_argument("--level", action="append", choices=sorted(boss.LEVELS))
    parser.add_argument("--decisions", type=int, default=60, help="positions timed per game and level")
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per clone-and-apply figure")
    args = parser.parse_args()
    print(f"{native.build()}; load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    games = args.game or sorted(OPTIONS)
    found = {game: positions(game, args.decisions, 1) for game in games}
    for game in games:
        print(clone_and_apply(game, found[game], args.seconds), flush=True)
    print("| game | level | decisions | median ms | p95 ms | longest ms | budget |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |", flush=True)
    for level in args.level or sorted(boss.LEVELS):
        for game in games:
            print(decision_times(game, level, found[game]), flush=True)
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

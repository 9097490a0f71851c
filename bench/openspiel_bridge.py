"""The OpenSpiel bridge (clients/openspiel) measured: what a transition costs through it against the
engine's own, outcome-sampling MCCFR's iterations a second on a small two-seat variant, and
OpenSpiel's ISMCTS against Croupier's random and heuristic bots on duplicate sets.

Usage: python -m bench.openspiel_bridge [--seconds S] [--sets N] [--simulations K] [--game NAME]

- transitions: random matches of each game with its default options (Pair Battle in lockstep),
  the engine's loop (bench/engine_playouts.py) and the same through OpenSpiel's API (chance nodes
  included), taken in turns of 0.2 CPU seconds so both see the same moments of a shared machine;
  µs per decision each, and the bridge's cost as a multiple of the engine's.
- mccfr: ``outcome_sampling_mccfr`` iterations a CPU second on two-seat Spoil Five of one deal.
- ismcts: OpenSpiel's Python ISMCTS (``--simulations`` a decision, random rollouts) against each
  bundled bot, two-seat, on ``--sets`` duplicate sets (each deal played from both seats); its
  mean set score (returns 1 win .. -1 loss, as 0..1), the Elo of that score and a 95% interval.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts, outcome_sampling_mccfr

from bench.engine_playouts import play_one
from bench.harness import machine
from bench.inprocess_playouts import SLICE
from croupier.clients.openspiel import duel
from croupier.clients.results.sprt import elo_of
from croupier.engine.games import GAMES
from croupier.wire import native

TWO_SEATS = {
    "chinese_ten": {"players": 2, "target": 150},
    "pair_battle": {"players": 2},
    "platinum_fish": {"players": 2},
    "spoil_five": {"players": 2, "deals": 2},
}
"""The ISMCTS matches' variants: two seats, and short (a Chinese Ten to 150 points, two deals of
Spoil Five) so that a set's search fits in seconds."""


def bridge_match(game: Any, seed: int) -> int:
    """One random match through OpenSpiel's API; its decisions."""
    rng = np.random.RandomState(seed)
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(int(rng.randint(len(state.chance_outcomes()))))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.randint(len(legal))])
            decisions += 1
    return decisions


def per_decision(paths: list[Callable[[int], int]], seconds: float) -> list[float]:
    """µs of CPU per decision of each ``path(seed)`` (a whole match, returning its decisions), each
    path playing ``seconds`` in all, in turns of ``SLICE`` (match i dealt from seed i on every path)."""
    spent, decisions, played = [0.0] * len(paths), [0] * len(paths), [0] * len(paths)
    while min(spent) < seconds:
        for index, path in enumerate(paths):
            start = time.process_time()
            while (elapsed := time.process_time() - start) < SLICE:
                decisions[index] += path(played[index])
                played[index] += 1
            spent[index] += elapsed
    return [1e6 * cpu / count for cpu, count in zip(spent, decisions, strict=True)]


def transitions(names: list[str], seconds: float) -> None:
    print("| game | engine µs/decision | bridge µs/decision | bridge / engine |")
    print("| --- | --- | --- | --- |")
    for name in names:
        game = pyspiel.load_game(f"croupier_{name}")
        engine_us, bridge_us = per_decision(
            [
                lambda seed, name=name, options=game.options: play_one(name, seed, options)[0],
                lambda seed, game=game: bridge_match(game, seed),
            ],
            seconds,
        )
        print(f"| {name} | {engine_us:.1f} | {bridge_us:.1f} | {bridge_us / engine_us:.1f} |", flush=True)


def mccfr(seconds: float) -> None:
    game = pyspiel.load_game("croupier_spoil_five", {"players": 2, "deals": 1})
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    iterations, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        solver.iteration()
        iterations += 1
    rate = iterations / (time.process_time() - start)
    print(f"mccfr: outcome sampling on two-seat Spoil Five of one deal: {rate:.0f} iterations a CPU second")


def ismcts_duels(names: list[str], sets: int, simulations: int) -> None:
    print(f"| game | opponent | ISMCTS ({simulations} simulations) mean set score | Elo | 95% | sets |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in names:
        game = pyspiel.load_game(f"croupier_{name}", TWO_SEATS[name])
        module = __import__(f"croupier.clients.bots.{name}", fromlist=["choose"])
        opponents = {"random": duel.random_player(7), "heuristic": duel.croupier_player(module.choose)}
        for opponent, player in opponents.items():
            evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(1))
            bot = ismcts.ISMCTSBot(
                game, evaluator, uct_c=2.0, max_simulations=simulations, random_state=np.random.RandomState(2)
            )
            scores = [
                (duel.duplicate_set(game, duel.openspiel_player(bot), player, deal) + 1) / 2
                for deal in range(sets)
            ]
            mean = statistics.fmean(scores)
            half = 1.96 * statistics.stdev(scores) / math.sqrt(len(scores)) if len(scores) > 1 else math.inf
            low, high = elo_of(max(mean - half, 0.0)), elo_of(min(mean + half, 1.0))
            interval = f"{low:+.0f} to {high:+.0f}"
            print(
                f"| {name} | {opponent} | {mean:.3f} | {elo_of(mean):+.0f} | {interval} | {sets} |",
                flush=True,
            )


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--seconds", type=float, default=3.0, help="per game and path (default: %(default)s)")
    parser.add_argument(
        "--sets", type=int, default=20, help="duplicate sets per pairing (default: %(default)s)"
    )
    parser.add_argument("--simulations", type=int, default=100, help="ISMCTS simulations a decision")
    parser.add_argument("--game", action="append", choices=sorted(GAMES))
    parser.add_argument("--only", choices=("transitions", "mccfr", "ismcts"))
    args = parser.parse_args()
    names = args.game or sorted(GAMES)
    print(f"{machine()}; engine: {native.build()}")
    if args.only in (None, "transitions"):
        transitions(names, args.seconds)
    if args.only in (None, "mccfr"):
        mccfr(args.seconds)
    if args.only in (None, "ismcts"):
        ismcts_duels(names, args.sets, args.simulations)
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

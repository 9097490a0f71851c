"""PettingZoo environment steps per second of every game, beside the engine's own playout speed.

Usage: python -m bench.env_steps [--seconds S] [--game NAME] [--rounds N]
Both loops play whole matches with random legal choices and the environment's
options (defaults; Pair Battle in lockstep, as the environment plays it). An
environment step is ``last()`` (the observation and action mask) then ``step``;
an engine action is ``legal_actions`` then ``apply`` (bench/engine_playouts.py's
loop). The ratio is the environment's cost per action over the engine's; the two loops take
turns (--rounds each), so that a change of the machine's load falls on both.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from bench.engine_playouts import play_one
from bench.harness import machine
from croupier.clients.pettingzoo import CroupierEnv, env
from croupier.engine.games import GAMES


def engine_match(name: str, options: Any, seed: int) -> int:
    """One random match through the engine alone; returns its actions."""
    return play_one(name, seed, options)[0]


def env_match(aec: CroupierEnv, chooser: random.Random, seed: int) -> int:
    """One random episode; returns the steps that acted."""
    aec.reset(seed=seed)
    steps = 0
    for _ in aec.agent_iter():
        obs, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.step(None)
            continue
        aec.step(int(chooser.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    return steps


def interleaved(plays: dict[str, Callable[[int], int]], seconds: float, rounds: int) -> dict[str, float]:
    """Actions per CPU second of each ``play(match_number) -> actions``, over ``seconds`` of CPU
    time each, taken in ``rounds`` turns that alternate between them: a machine others share
    slows both alike (CPU time, not wall time, keeps the ratio fair as well)."""
    actions = dict.fromkeys(plays, 0)
    matches = dict.fromkeys(plays, 0)
    spent = dict.fromkeys(plays, 0.0)
    for _ in range(rounds):
        for name, play in plays.items():
            start = time.process_time()
            while (elapsed := time.process_time() - start) < seconds / rounds:
                actions[name] += play(matches[name])
                matches[name] += 1
            spent[name] += elapsed
    return {name: actions[name] / spent[name] for name in plays}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per game and loop (default 3)")
    parser.add_argument("--game", choices=sorted(GAMES), help="one game only")
    parser.add_argument(
        "--rounds", type=int, default=6, help="turns each loop takes, alternating (default 6)"
    )
    args = parser.parse_args()
    print(f"{machine()}; one core, default options")
    print(
        f"the engine and the environment alternating, {args.rounds} turns each; load average {load_average()}"
    )
    print(f"{'game':<15} {'engine actions/s':>17} {'env steps/s':>12} {'env cost':>9}  load average")
    for name in [args.game] if args.game else sorted(GAMES):
        aec = env(name)
        options = aec.table.options
        chooser = random.Random(0)
        plays = {"engine": partial(engine_match, name, options), "env": partial(env_match, aec, chooser)}
        rates = interleaved(plays, args.seconds, args.rounds)
        engine, steps = rates["engine"], rates["env"]
        print(
            f"{name:<15} {engine:>17.0f} {steps:>12.0f} {engine / steps:>8.2f}x  {load_average()}", flush=True
        )
    print(f"load average after: {load_average()}")


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()

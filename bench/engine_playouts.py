"""Random playouts per second of every registered game, on one core, pure Python and compiled.

Usage: python -m bench.engine_playouts [--seconds S] [--game NAME]
Each game plays whole matches with its default options and random legal
choices (the same loop as the conformance harness, without its checks).
Games with clocks get 20 ms of referee time between actions. Games of several
deals (Chinese Ten, Spoil Five) number them in ``state.deal``: their deals/s is
printed too. Rates are per CPU second of the process (a busy machine's waits for
a core do not count). Each game runs on each path in turn, each in its own process: the
pure Python (CROUPIER_PURE=1), then the build compiled by mypyc (make compiled),
and the compiled row says how many times faster it is.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from typing import Any

from bench.harness import machine
from croupier.engine.games import GAMES
from croupier.engine.rng import Rng
from croupier.server import native

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


def measure(name: str, seconds: float) -> dict[str, float]:
    """Play ``name`` for ``seconds`` of CPU in this process: matches, deals and actions per CPU second."""
    matches = actions = deals = 0
    start = time.process_time()  # CPU seconds: on a shared machine, time waiting for a core is not counted
    while (elapsed := time.process_time() - start) < seconds:
        match_actions, match_deals = play_one(name, matches)
        actions += match_actions
        deals += match_deals
        matches += 1
    return {
        "matches": matches / elapsed,
        "deals": deals / elapsed,
        "actions": actions / elapsed,
        "per": actions / matches,
    }


def on_path(name: str, seconds: float, pure: bool) -> tuple[dict[str, float], str]:
    """``measure`` in a process of its own on one path; its figures and the path it really ran."""
    env = {**os.environ, native.PURE: "1" if pure else ""}
    command = [
        sys.executable,
        "-m",
        "bench.engine_playouts",
        "--game",
        name,
        "--seconds",
        str(seconds),
        "--here",
    ]
    printed = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    figures = json.loads(printed)
    return figures["figures"], figures["build"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="CPU seconds per game and path (default 3)"
    )
    parser.add_argument("--game", choices=sorted(GAMES), help="one game only")
    parser.add_argument("--here", action="store_true", help="one game, this process's path only, as JSON")
    args = parser.parse_args()
    if args.here:
        print(json.dumps({"figures": measure(args.game, args.seconds), "build": native.build()}))
        return
    print(machine())
    print("per CPU second of one process, default options")
    print(
        f"{'game':<15} {'path':<9} {'matches/s':>10} {'deals/s':>10} {'actions/s':>10} {'actions/match':>14}"
    )
    for name in [args.game] if args.game else sorted(GAMES):
        pure, _ = on_path(name, args.seconds, pure=True)
        rows = [("pure", pure, "")]
        compiled, build = on_path(name, args.seconds, pure=False)
        if build.startswith("compiled"):
            rows.append(("compiled", compiled, f"  {compiled['actions'] / pure['actions']:.2f}x"))
        for path, f, speedup in rows:
            print(
                f"{name:<15} {path:<9} {f['matches']:>10.1f} {f['deals']:>10.1f}"
                f" {f['actions']:>10.0f} {f['per']:>14.1f}{speedup}"
            )
    if not build.startswith("compiled"):
        print(f"no compiled rows: the hot path runs {build}")


if __name__ == "__main__":
    main()

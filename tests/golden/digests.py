"""The engine's event stream and outcome for every test variant of every game, as SHA-256 digests.

A journal stores actions as text and regenerates deals from the seed, so the action texts, the order
of the random draws and what each action does are all part of the journal format: this pins them.
``python -m tests.golden.digests`` rewrites ``digests.json`` (see README.md for when that is right).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from croupier.engine.core import Action, Event, GameSpec, options_to_dict
from croupier.engine.games import GAMES
from croupier.engine.rng import Rng

FILE = Path(__file__).with_name("digests.json")
SEED = 20261201
STEP = 0.25
"""Referee seconds between two plays (time matters to real-time Pair Battle)."""
MAX_STEPS = 200_000

Policy = Callable[[list[int], list[Action], random.Random], tuple[int, int]]
"""Which of the seats that can act, and which of its legal actions (as indexes)."""

POLICIES: dict[str, Policy] = {
    "first": lambda seats, legal, chooser: (0, 0),
    "random": lambda seats, legal, chooser: (chooser.randrange(len(seats)), chooser.randrange(len(legal))),
}


def variants() -> Iterable[tuple[str, GameSpec[Any], Any]]:
    """Every game's test variants, named ``game/index``."""
    for name, spec in GAMES.items():
        for index, options in enumerate(spec.test_variants):
            yield f"{name}/{index}", spec, options


def play(spec: GameSpec[Any], options: Any, seed: int, policy: Policy) -> dict[str, str]:
    """One whole match: the digest of its stream (each action as the journal writes it, each clock
    tick, each event) and of its outcome."""
    stream = hashlib.sha256()

    def told(events: Iterable[Event]) -> None:
        for event in events:
            stream.update(f"{event!r}\n".encode())

    state = spec.new_game(options, Rng(seed))
    chooser = random.Random(seed)
    told(state.opening)
    now = 0.0
    for _ in range(MAX_STEPS):
        if state.is_over():
            break
        now += STEP
        wake = state.wake_at()
        if not state.to_act() and wake is not None:
            now = max(now, wake)
        if wake is not None and wake <= now:
            stream.update(f"clock {now!r}\n".encode())
            told(state.advance(now))
            continue
        seats = sorted(seat for seat in state.to_act() if state.legal_actions(seat))
        if not seats:
            continue
        which, choice = policy(seats, state.legal_actions(seats[0]), chooser)
        seat = seats[which]
        legal = state.legal_actions(seat)
        action = legal[min(choice, len(legal) - 1)]
        stream.update(f"{now!r} {seat} {action}\n".encode())
        told(state.apply(seat, action, now))
    else:
        raise AssertionError(f"{spec.name} {options} did not end in {MAX_STEPS} steps")
    outcome = state.outcome()
    played = json.dumps({"scores": list(outcome.scores), "places": list(outcome.places)})
    return {"stream": stream.hexdigest(), "outcome": hashlib.sha256(played.encode()).hexdigest()}


def compute() -> dict[str, Any]:
    return {
        name: {
            "options": options_to_dict(options),
            **{policy: play(spec, options, SEED, chooser) for policy, chooser in POLICIES.items()},
        }
        for name, spec, options in variants()
    }


if __name__ == "__main__":
    FILE.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FILE}")

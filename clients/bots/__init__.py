"""The bundled bots: ``random`` for every game, and ``heuristic``, one module of pure functions per game.

Each game module exposes ``choose(view, legal, options) -> int`` (an index into
``legal``), testable without a server; ``HeuristicBot`` plays them through the SDK.
"""

from __future__ import annotations

import importlib
import os
import random
import sys
from collections.abc import Callable
from typing import Any

from croupier.clients.sdk import Bot, BotFactory, Match

__all__ = [
    "HEURISTICS",
    "STRATEGIES",
    "HeuristicBot",
    "RandomBot",
    "strategy",
]

HEURISTICS = ("chinese_ten", "pair_battle", "platinum_fish", "spoil_five")
"""Games with a heuristic module here (every registered game)."""


class RandomBot(Bot):
    """A uniformly random legal action, in every game."""

    def __init__(self, match: Match, rng: random.Random | None = None) -> None:
        super().__init__(match)
        self.rng = rng or random.Random()

    def choose(self, view: Any, legal: list[Any]) -> int:
        return self.rng.randrange(len(legal))


class HeuristicBot(Bot):
    """The game's heuristic (``clients/bots/<game>.py``)."""

    def __init__(self, match: Match) -> None:
        super().__init__(match)
        module = importlib.import_module(f"croupier.clients.bots.{match.game}")
        self.policy: Callable[[Any, list[Any], Any], int] = module.choose
        self.follow_ups: Callable[[Any], list[Any]] | None = getattr(module, "follow_ups", None)

    def choose(self, view: Any, legal: list[Any]) -> int:
        choice = self.policy(view, legal, self.match.options)
        if self.follow_ups is not None:
            for action in self.follow_ups(view):  # real-time plays that need no request
                self.play(action)
        return choice


def strategy(name: str, seed: int | None = None) -> BotFactory:
    """A bundled strategy by name, or ``package.module:Class`` for any Bot subclass on the path."""
    if name == "random":
        if seed is None:
            return RandomBot
        return lambda match: RandomBot(match, random.Random(f"{seed}/{match.id}/{match.seat}"))
    if name == "heuristic":
        return HeuristicBot
    module_name, colon, attribute = name.partition(":")
    if not colon:
        raise ValueError(f"unknown strategy {name!r}: use random, heuristic or package.module:BotClass")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # a bot module beside you, as `python -m` would find it
    factory: BotFactory = getattr(importlib.import_module(module_name), attribute)
    return factory


STRATEGIES = {"random": "a random legal action", "heuristic": "the game's heuristic (clients/bots/<game>.py)"}

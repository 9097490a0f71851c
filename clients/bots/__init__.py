"""The bundled bots: ``random`` for every game, and ``heuristic``, one module of pure functions per game.

Each game module exposes ``choose(view, legal, options) -> int`` (an index into
``legal``), testable without a server; ``HeuristicBot`` plays them through the SDK.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
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
    """A bundled strategy by name, ``package.module:Class`` for any Bot subclass on the path, or
    ``FILE.py`` (``FILE.py:Class``) for the one a file of yours defines."""
    if name == "random":
        if seed is None:
            return RandomBot
        return lambda match: RandomBot(match, random.Random(f"{seed}/{match.id}/{match.seat}"))
    if name == "heuristic":
        return HeuristicBot
    module_name, colon, attribute = name.partition(":")
    if module_name.endswith(".py"):
        return _from_file(Path(module_name), attribute)
    if not colon:
        raise ValueError(
            f"unknown strategy {name!r}: use random, heuristic, package.module:BotClass or FILE.py"
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # a bot module beside you, as `python -m` would find it
    factory: BotFactory = getattr(importlib.import_module(module_name), attribute)
    return factory


def _from_file(path: Path, attribute: str) -> BotFactory:
    """The Bot subclass a file defines (``FILE.py:Class`` when it defines several), loaded as the
    module ``python FILE.py`` would run, without running its ``__main__`` part."""
    if not path.is_file():
        raise ValueError(f"no bot file {path}")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"croupier_bot_{re.sub(r'[^A-Za-z0-9_]', '_', path.stem)}_{digest}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ValueError(f"{path} is not a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look classes up by module
        if str(path.resolve().parent) not in sys.path:
            sys.path.insert(0, str(path.resolve().parent))  # its own imports, as `python FILE.py` finds them
        spec.loader.exec_module(module)
    if attribute:
        factory: BotFactory = getattr(module, attribute)
        return factory
    found = [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Bot) and value.__module__ == name
    ]
    if len(found) != 1:
        classes = ", ".join(sorted(cls.__name__ for cls in found)) or "none"
        raise ValueError(f"{path} defines {len(found)} Bot subclasses ({classes}): name one, {path}:CLASS")
    return found[0]


STRATEGIES = {"random": "a random legal action", "heuristic": "the game's heuristic (clients/bots/<game>.py)"}
